// CBOR through JSON.parse and cbor-x: a JSON text's value (wide integers, byte fields tagged) as cbor-x writes it. The
// reference that the transcoder (transcode.ts) must match and falls back to; the CBOR vocabulary the codec shares.
import { Encoder, Tag } from 'cbor-x'

/** Tag 55799 (self-described CBOR): every encoded data item starts with these bytes, as upstream's encoder writes them. */
export const SELF_DESCRIBED = Buffer.from([0xd9, 0xd9, 0xf7])

/** A path to a field holding bytes (schema `format: byte`); `*` steps into every map value or list item. */
export type BytePath = readonly string[]
/** The byte fields of a kind, by the object's apiVersion and kind (undefined: none). */
export type ByteFields = (apiVersion: string, kind: string) => readonly BytePath[] | undefined

/** Tag 22: "expected conversion to base64" (RFC 8949 3.4.5.2); 21 is base64url, 23 base16. */
export const TAG_BASE64URL = 21
export const TAG_BASE64 = 22
export const TAG_BASE16 = 23

// Text-string keys, maps of their own size (preferred serialization), plain CBOR maps and byte strings: nothing
// cbor-x-specific (records, tag 259, tag 64) that other decoders would not read.
export const encoder = new Encoder({
  useRecords: false, mapsAsObjects: true, variableMapSize: true, tagUint8Array: false, useTag259ForMaps: false,
  largeBigIntToFloat: false, pack: false, structuredClone: false,
} as ConstructorParameters<typeof Encoder>[0])

/**
 * Whether compact JSON text may hold an integer of 10 or more digits (>= 2^32), which cbor-x writes as a float unless
 * it is a BigInt. A float or a digit run inside a string only costs a needless walk; kept simple, it scans fast.
 */
const LONG_INTEGER = /[:,[]-?\d{10}/

/**
 * Integers beyond 32 bits (and within int64, as upstream's integers are) become BigInts so they are written as CBOR
 * integers: cbor-x writes larger numbers as float64. Larger integral values (1e300) stay floats.
 */
function widenIntegers(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) && (v >= 2 ** 32 || v < -(2 ** 32)) && v < 2 ** 63 && v >= -(2 ** 63) ? BigInt(v) : v
  if (Array.isArray(v)) { for (let i = 0; i < v.length; i++) v[i] = widenIntegers(v[i]); return v }
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>
    for (const k of Object.keys(o)) o[k] = widenIntegers(o[k])
  }
  return v
}

export function isCanonicalBase64(s: string): boolean {
  return s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s) && Buffer.from(s, 'base64').toString('base64') === s
}

/** Byte fields as tag 22 around the raw bytes (what upstream writes for []byte); a value that is not canonical base64 stays text. */
function tagBytes(v: unknown, path: BytePath, at: number): unknown {
  if (at === path.length) return typeof v === 'string' && isCanonicalBase64(v) ? new Tag(Buffer.from(v, 'base64'), TAG_BASE64) : v
  if (v === null || typeof v !== 'object') return v
  const step = path[at]
  if (Array.isArray(v)) {
    if (step === '*') for (let i = 0; i < v.length; i++) v[i] = tagBytes(v[i], path, at + 1)
    return v
  }
  const o = v as Record<string, unknown>
  if (step === '*') { for (const k of Object.keys(o)) o[k] = tagBytes(o[k], path, at + 1) } else if (Object.hasOwn(o, step)) o[step] = tagBytes(o[step], path, at + 1)
  return v
}

/** The value of a JSON text made ready for cbor-x: wide integers, byte fields. */
function prepare(json: string, bytes: ByteFields | undefined): unknown {
  let v = JSON.parse(json) as unknown
  if (LONG_INTEGER.test(json)) v = widenIntegers(v)
  if (bytes && v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>
    const paths = typeof o.apiVersion === 'string' && typeof o.kind === 'string' ? bytes(o.apiVersion, o.kind) : undefined
    if (paths) for (const p of paths) tagBytes(o, p, 0)
  }
  return v
}

/** One data item, without the self-described tag. */
export function item(json: string, bytes: ByteFields | undefined): Buffer { return encoder.encode(prepare(json, bytes)) }

/** cborFromJson through JSON.parse and cbor-x only: what the transcoder must match (and falls back to). */
export function cborFromParsedJson(json: string, bytes?: ByteFields): Buffer {
  return Buffer.concat([SELF_DESCRIBED, item(json, bytes)])
}

/** The head of a definite-length array or map (major type 4 or 5). */
export function head(major: number, n: number): Buffer {
  const m = major << 5
  if (n < 24) return Buffer.from([m | n])
  if (n < 0x100) return Buffer.from([m | 24, n])
  if (n < 0x10000) return Buffer.from([m | 25, n >> 8, n & 0xff])
  const b = Buffer.alloc(5)
  b[0] = m | 26
  b.writeUInt32BE(n, 1)
  return b
}
