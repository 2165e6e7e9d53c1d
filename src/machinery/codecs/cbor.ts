// The CBOR media type (RFC 8949): JSON value trees out as self-described CBOR (cbor-x), and a strict reader for request bodies.
//
// The codec lives in cbor/: encode.ts (through JSON.parse and cbor-x: the reference), transcode.ts (stored JSON text
// to the same bytes without JSON.parse: objects, lists, watch events), decode.ts (the strict reader).
export { SELF_DESCRIBED, cborFromParsedJson, type BytePath, type ByteFields } from './cbor/encode.js'
export { cborFromJson, cborList, cborWatchEvent, cborJsonStats, CborListEncoder } from './cbor/transcode.js'
export { CborError, decodeCbor, cborTypeOf } from './cbor/decode.js'
