// The protobuf media type: the `k8s\0` + runtime.Unknown envelope, objects and lists to and from their JSON shape, watch frames; driven by protobuf-messages.json.
//
// The codec lives in protobuf/, one file a job: tables.ts (the message descriptors and shared constants), writer.ts
// (the scratch-buffer writer, the envelope, watch frames), encode.ts (parsed objects -> protobuf), transcode.ts
// (stored JSON text -> protobuf without JSON.parse), decode.ts (protobuf -> objects), time.ts (Time and MicroTime).
export { encodeObject, encodeList } from './protobuf/encode.js'
export { encodeObjectJson, encodeListJson, JsonListEncoder, jsonPathStats } from './protobuf/transcode.js'
export { encodeWatchEvent } from './protobuf/writer.js'
export { decodeObject } from './protobuf/decode.js'
