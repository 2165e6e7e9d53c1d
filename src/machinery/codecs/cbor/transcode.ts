// Stored JSON text to CBOR without JSON.parse: objects, list items (CborListEncoder) and watch events. Each item's text is transcoded to CBOR as cbor-x would write the
// value JSON.parse reads from it (after prepare: wide integers, byte fields). Stored objects are JSON.stringify
// output; whatever the transcoder does not handle exactly as prepare + cbor-x would (whitespace, integer-like keys,
// duplicate keys, an integral number written with a fraction or exponent beyond 32 bits, anything malformed)
// abandons the item, which then goes through item() (encode.ts): the bytes are the same either way. The transcoder's
// output buffer and read position are module state (for speed); lists swap their own buffer in.
import { REJECT, scanNumber, scanString, stringFlags, stringValue, numberValue, numberIsIntLiteral } from '../json-scan.js'
import { type BytePath, type ByteFields, SELF_DESCRIBED, TAG_BASE64, cborFromParsedJson, encoder, head, isCanonicalBase64, item } from './encode.js'

const BAIL = Object.freeze({ bail: true })
function bail(): never { throw BAIL }

const NO_BYTES = Buffer.alloc(0)
let src: Buffer = NO_BYTES
let q = 0
let out: Buffer = NO_BYTES
let o = 0

/** How many list items were transcoded and how many went through item() (for tests and profiling). */
export const cborJsonStats = { fast: 0, parsed: 0 }

function room(n: number): void {
  if (o + n <= out.length) return
  let size = Math.max(out.length * 2, 64 * 1024)
  while (size < o + n) size *= 2
  const next = Buffer.allocUnsafe(size)
  out.copy(next, 0, 0, o)
  out = next
}

/** A head (major type, argument) in its shortest form. */
function wHead(major: number, n: number): void {
  room(9)
  const m = major << 5
  if (n < 24) out[o++] = m | n
  else if (n < 0x100) { out[o++] = m | 24; out[o++] = n }
  else if (n < 0x10000) { out[o++] = m | 25; out[o++] = n >> 8; out[o++] = n & 0xff }
  else { out[o++] = m | 26; out.writeUInt32BE(n, o); o += 4 }
}

/** Replaces the one-byte placeholder at `at` by the head of a map or array of n entries, moving the entries up if needed. */
function patchCount(at: number, major: number, n: number): void {
  const m = major << 5
  if (n < 24) { out[at] = m | n; return }
  const extra = n < 0x100 ? 1 : n < 0x10000 ? 2 : 4
  room(extra)
  out.copyWithin(at + 1 + extra, at + 1, o)
  o += extra
  if (extra === 1) { out[at] = m | 24; out[at + 1] = n }
  else if (extra === 2) { out[at] = m | 25; out[at + 1] = n >> 8; out[at + 2] = n & 0xff }
  else { out[at] = m | 26; out.writeUInt32BE(n, at + 1) }
}

/** A JS string as cbor-x writes it: short strings by its own loop (lone surrogates as three bytes), long ones as Buffer writes UTF-8. */
function jsString(s: string): void {
  const n = s.length
  room(n * 3 + 5)
  if (n < 0x40) {
    // Written after room for a two-byte head, moved down when one byte is enough.
    const t = out
    const at = o
    let w = at + 2
    for (let i = 0; i < n; i++) {
      let c1 = s.charCodeAt(i)
      let c2: number
      if (c1 < 0x80) {
        t[w++] = c1
      } else if (c1 < 0x800) {
        t[w++] = (c1 >> 6) | 0xc0
        t[w++] = (c1 & 0x3f) | 0x80
      } else if ((c1 & 0xfc00) === 0xd800 && ((c2 = s.charCodeAt(i + 1)) & 0xfc00) === 0xdc00) {
        c1 = 0x10000 + ((c1 & 0x03ff) << 10) + (c2 & 0x03ff)
        i++
        t[w++] = (c1 >> 18) | 0xf0
        t[w++] = ((c1 >> 12) & 0x3f) | 0x80
        t[w++] = ((c1 >> 6) & 0x3f) | 0x80
        t[w++] = (c1 & 0x3f) | 0x80
      } else {
        t[w++] = (c1 >> 12) | 0xe0
        t[w++] = ((c1 >> 6) & 0x3f) | 0x80
        t[w++] = (c1 & 0x3f) | 0x80
      }
    }
    const len = w - at - 2
    if (len < 24) {
      t.copyWithin(at + 1, at + 2, w)
      t[at] = 0x60 | len
      o = w - 1
    } else {
      t[at] = 0x78
      t[at + 1] = len
      o = w
    }
    return
  }
  const len = Buffer.byteLength(s, 'utf8')
  wHead(3, len)
  o += out.write(s, o, len, 'utf8')
}

/** The byte a one-character escape stands for, by the character after the backslash (0: not one of those). */
const UNESCAPE = new Uint8Array(128)
UNESCAPE[0x22] = 0x22
UNESCAPE[0x5c] = 0x5c
UNESCAPE[0x62] = 0x08
UNESCAPE[0x66] = 0x0c
UNESCAPE[0x6e] = 0x0a
UNESCAPE[0x72] = 0x0d
UNESCAPE[0x74] = 0x09

/** The string at q: ASCII (one-character escapes included) is copied as it is scanned; anything else goes through the JS string. */
function cString(): void {
  const b = src
  const start = q + 1
  room(64)
  let t = out
  const at = o
  let w = at + 1
  let limit = Math.min(b.length, start + (t.length - w - 8))
  let i = start
  for (;;) {
    if (i >= limit) {
      if (limit >= b.length) bail()
      o = w
      room(4096)
      t = out
      limit = Math.min(b.length, i + (t.length - w - 8))
      continue
    }
    const c = b[i]
    if (c === 0x22) break
    if (c === 0x5c) {
      const e = b[i + 1]
      const u = e < 0x80 ? UNESCAPE[e] : 0
      if (u === 0) { o = at; cStringDecoded(); return }
      t[w++] = u
      i += 2
      continue
    }
    if (c < 0x20) bail()
    if (c >= 0x80) { o = at; cStringDecoded(); return }
    t[w++] = c
    i++
  }
  o = w
  patchCount(at, 3, w - at - 1)
  q = i + 1
}

/** The string at q decoded as JSON.parse reads it, written as cbor-x writes the JS string. */
function cStringDecoded(): void {
  jsString(cStringValue())
}

/** The string at q as JSON.parse reads it (for byte fields and the item's apiVersion and kind). */
function cStringValue(): string {
  const b = src
  if (b[q] !== 0x22) bail()
  const start = q
  const e = scanString(b, q)
  if (e === REJECT) bail()
  q = e
  return stringValue(b, start, e, stringFlags)
}

const TWO_32 = 4294967296
const TWO_63 = 9223372036854775808

/** A number as prepare + cbor-x write it: integers beyond 32 bits (within int64) as 64-bit integers, else cbor-x's choice. */
function cNumber(): void {
  const start = q
  const e = scanNumber(src, q)
  if (e === REJECT) bail()
  q = e
  const v = numberValue(src, start, e)
  room(9)
  if ((v >= TWO_32 || v < -TWO_32) && v < TWO_63 && v >= -TWO_63 && Number.isInteger(v)) {
    // prepare widens these only when the text has a run of ten digits after `:`, `,` or `[`: an integer literal here.
    if (!numberIsIntLiteral) bail()
    const w = v >= 0 ? v : -v
    let hi = Math.floor(w / TWO_32)
    let lo = w - hi * TWO_32
    if (v < 0) {
      // -1 - v, as cbor-x writes a negative BigInt
      if (lo === 0) { lo = 0xffffffff; hi -= 1 } else lo -= 1
    }
    out[o++] = v >= 0 ? 0x1b : 0x3b
    out.writeUInt32BE(hi, o)
    out.writeUInt32BE(lo, o + 4)
    o += 8
    return
  }
  if (v >>> 0 === v) {
    if (v < 0x18) out[o++] = v
    else if (v < 0x100) { out[o++] = 0x18; out[o++] = v }
    else if (v < 0x10000) { out[o++] = 0x19; out[o++] = v >> 8; out[o++] = v & 0xff }
    else { out[o++] = 0x1a; out.writeUInt32BE(v, o); o += 4 }
  } else if (v >> 0 === v) {
    if (v >= -0x18) out[o++] = 0x1f - v
    else if (v >= -0x100) { out[o++] = 0x38; out[o++] = ~v }
    else if (v >= -0x10000) { out[o++] = 0x39; out.writeUInt16BE(~v, o); o += 2 }
    else { out[o++] = 0x3a; out.writeUInt32BE(~v, o); o += 4 }
  } else if (v < 0 && v >= -TWO_32 && Math.floor(v) === v) {
    out[o++] = 0x3a
    out.writeUInt32BE(-1 - v, o)
    o += 4
  } else {
    out[o++] = 0xfb
    out.writeDoubleBE(v, o)
    o += 8
  }
}

/** Keys of the objects being transcoded (hash, start, end in src), for duplicates. */
let keyHash = new Int32Array(256)
let keyPos = new Int32Array(512)
let keyTop = 0

/**
 * A key at q: written as a text string (copied as it is scanned), checked against the object's earlier keys (from
 * `first`); q moves past the colon. Non-ASCII keys and `\u` escapes (rare) send the item through item().
 */
function cKey(first: number): void {
  const b = src
  if (b[q] !== 0x22) bail()
  const start = q + 1
  room(64)
  let t = out
  const at = o
  let w = at + 1
  // Each byte read writes at most one: no room check per byte below `limit`.
  let limit = Math.min(b.length, start + (t.length - w - 8))
  let i = start
  let h = 0
  for (;;) {
    if (i >= limit) {
      if (limit >= b.length) bail()
      o = w
      room(4096)
      t = out
      limit = Math.min(b.length, i + (t.length - w - 8))
      continue
    }
    const c = b[i]
    if (c === 0x22) break
    if (c === 0x5c) {
      // One-character escapes have one spelling, so equal keys still have equal bytes (FieldsV1: `k:{\"name\":\"x\"}`).
      const e = b[i + 1]
      const u = e < 0x80 ? UNESCAPE[e] : 0
      if (u === 0) bail()
      h = (Math.imul(h, 31) + c) | 0
      h = (Math.imul(h, 31) + e) | 0
      t[w++] = u
      i += 2
      continue
    }
    if (c < 0x20 || c >= 0x80) bail()
    h = (Math.imul(h, 31) + c) | 0
    t[w++] = c
    i++
  }
  o = w
  patchCount(at, 3, w - at - 1)
  // An integer-like key comes first in a parsed object: an array index (0 to 2^32 - 2) without leading zeros.
  const c0 = b[start]
  if (c0 >= 0x30 && c0 <= 0x39 && isArrayIndex(start, i)) bail()
  for (let k = first; k < keyTop; k++) {
    if (keyHash[k] === h && sameBytes(keyPos[2 * k], keyPos[2 * k + 1], start, i)) bail()
  }
  if (keyTop === keyHash.length) {
    const hs = new Int32Array(keyHash.length * 2); hs.set(keyHash); keyHash = hs
    const ps = new Int32Array(keyPos.length * 2); ps.set(keyPos); keyPos = ps
  }
  keyHash[keyTop] = h
  keyPos[2 * keyTop] = start
  keyPos[2 * keyTop + 1] = i
  keyTop++
  if (b[i + 1] !== 0x3a) bail()
  q = i + 2
}

function isArrayIndex(start: number, end: number): boolean {
  const b = src
  if (end - start > 10) return false
  if (b[start] === 0x30 && end - start > 1) return false
  let v = 0
  for (let i = start; i < end; i++) {
    const c = b[i]
    if (c < 0x30 || c > 0x39) return false
    v = v * 10 + (c - 0x30)
  }
  return v <= 4294967294
}

function sameBytes(as: number, ae: number, bs: number, be: number): boolean {
  if (ae - as !== be - bs) return false
  const b = src
  for (let i = 0; i < ae - as; i++) if (b[as + i] !== b[bs + i]) return false
  return true
}

/** Whether the last key read (at keyTop - 1) is `name`. */
function lastKeyIs(name: Buffer): boolean {
  const k = keyTop - 1
  const s = keyPos[2 * k]
  const e = keyPos[2 * k + 1]
  if (e - s !== name.length) return false
  for (let i = 0; i < name.length; i++) if (src[s + i] !== name[i]) return false
  return true
}

function lastKeyString(): string {
  const k = keyTop - 1
  return src.toString('latin1', keyPos[2 * k], keyPos[2 * k + 1])
}

/** Byte-field paths still being followed, each with how far it has matched. */
type Paths = ReadonlyArray<readonly [BytePath, number]> | null

/** The paths that go on into the member `key` (or into an array element, key null). */
function step(paths: Paths, key: string | null): Paths {
  if (paths === null) return null
  let next: Array<readonly [BytePath, number]> | null = null
  for (const [path, at] of paths) {
    if (at >= path.length) continue
    const s = path[at]
    if (s === '*' || (key !== null && s === key)) (next ??= []).push([path, at + 1])
  }
  return next
}

/** A value at q; `paths` are the byte-field paths that reach it. */
function cValue(paths: Paths): void {
  const b = src
  const c = b[q]
  switch (c) {
    case 0x22:
      if (paths !== null && paths.some(([path, at]) => at === path.length)) { byteField(cStringValue()); return }
      cString()
      return
    case 0x7b: cObject(paths); return
    case 0x5b: cArray(paths); return
    case 0x74:
      if (b[q + 1] !== 0x72 || b[q + 2] !== 0x75 || b[q + 3] !== 0x65) bail()
      q += 4
      room(1)
      out[o++] = 0xf5
      return
    case 0x66:
      if (b[q + 1] !== 0x61 || b[q + 2] !== 0x6c || b[q + 3] !== 0x73 || b[q + 4] !== 0x65) bail()
      q += 5
      room(1)
      out[o++] = 0xf4
      return
    case 0x6e:
      if (b[q + 1] !== 0x75 || b[q + 2] !== 0x6c || b[q + 3] !== 0x6c) bail()
      q += 4
      room(1)
      out[o++] = 0xf6
      return
    default:
      if (c !== 0x2d && (c < 0x30 || c > 0x39)) bail()
      cNumber()
  }
}

/** A byte field's string: tag 22 around its bytes when it is canonical base64, else text (as tagBytes decides). */
function byteField(s: string): void {
  if (!isCanonicalBase64(s)) { jsString(s); return }
  const bytes = Buffer.from(s, 'base64')
  room(1)
  out[o++] = 0xc0 | TAG_BASE64
  wHead(2, bytes.length)
  room(bytes.length)
  bytes.copy(out, o)
  o += bytes.length
}

function cObject(paths: Paths): void {
  const b = src
  q++
  room(1)
  const at = o++
  if (b[q] === 0x7d) { q++; out[at] = 0xa0; return }
  const first = keyTop
  let n = 0
  try {
    for (;;) {
      cKey(first)
      cValue(paths === null ? null : step(paths, lastKeyString()))
      n++
      const c = b[q++]
      if (c === 0x2c) continue
      if (c === 0x7d) break
      bail()
    }
  } finally {
    keyTop = first
  }
  patchCount(at, 5, n)
}

function cArray(paths: Paths): void {
  const b = src
  q++
  room(1)
  const at = o++
  if (b[q] === 0x5d) { q++; out[at] = 0x80; return }
  const inner = paths === null ? null : step(paths, null)
  let n = 0
  for (;;) {
    cValue(inner)
    n++
    const c = b[q++]
    if (c === 0x2c) continue
    if (c === 0x5d) break
    bail()
  }
  patchCount(at, 4, n)
}

const API_VERSION = Buffer.from('apiVersion')
const KIND = Buffer.from('kind')

/**
 * An item (a JSON object) at q. Its byte fields depend on its own apiVersion and kind, which come first in stored
 * objects (any other member before them sends the item through item()).
 */
function cItem(bytes: ByteFields | undefined): void {
  const b = src
  if (b[q] !== 0x7b) bail()
  q++
  room(1)
  const at = o++
  if (b[q] === 0x7d) { q++; out[at] = 0xa0; return }
  let apiVersion: string | undefined
  let kind: string | undefined
  let paths: Paths = null
  let known = bytes === undefined
  const first = keyTop
  let n = 0
  try {
    for (;;) {
      cKey(first)
      if (!known) {
        // Members before apiVersion and kind are both known: only those two.
        const isApiVersion = lastKeyIs(API_VERSION)
        if (!isApiVersion && !lastKeyIs(KIND)) bail()
        if (b[q] === 0x22) {
          const start = q
          const v = cStringValue()
          q = start
          if (isApiVersion) apiVersion = v
          else kind = v
          if (apiVersion !== undefined && kind !== undefined) {
            known = true
            const ps = bytes!(apiVersion, kind)
            paths = ps && ps.length > 0 ? ps.map((path) => [path, 0] as const) : null
          }
        }
      }
      cValue(paths === null ? null : step(paths, lastKeyString()))
      n++
      const c = b[q++]
      if (c === 0x2c) continue
      if (c === 0x7d) break
      bail()
    }
  } finally {
    keyTop = first
  }
  patchCount(at, 5, n)
}

/** One list item from its JSON text (transcoded, else through item()). */
function itemFromJson(text: Buffer | string, bytes: ByteFields | undefined): void {
  if (transcode(text, bytes)) return
  const b = item(typeof text === 'string' ? text : text.toString('utf8'), bytes)
  room(b.length)
  b.copy(out, o)
  o += b.length
}

/** Transcodes one JSON text at o; false (o unchanged) when it must go through item(). */
function transcode(text: Buffer | string, bytes: ByteFields | undefined): boolean {
  const start = o
  try {
    src = typeof text === 'string' ? Buffer.from(text, 'utf8') : text
    q = 0
    keyTop = 0
    cItem(bytes)
    if (q !== src.length) bail()
    cborJsonStats.fast++
    return true
  } catch {
    o = start
    keyTop = 0
    cborJsonStats.parsed++
    return false
  } finally {
    src = NO_BYTES
  }
}

/** The writer's buffer for single objects (lists bring their own). */
let scratch: Buffer = Buffer.allocUnsafe(64 * 1024)

/** One JSON object text transcoded after `prefix` (item()'s bytes after it), or null when it must be parsed. */
function objectFromJson(json: Buffer | string, bytes: ByteFields | undefined, prefix: Buffer): Buffer | null {
  const savedOut = out
  const savedO = o
  out = scratch
  o = 0
  try {
    room(prefix.length)
    prefix.copy(out, o)
    o += prefix.length
    if (!transcode(json, bytes)) return null
    const result = Buffer.allocUnsafe(o)
    out.copy(result, 0, 0, o)
    return result
  } finally {
    scratch = out.length > 1 << 20 ? Buffer.allocUnsafe(64 * 1024) : out
    out = savedOut
    o = savedO
  }
}

/**
 * A CBOR list `{kind, apiVersion, metadata, items}` built in slices from its items' JSON text: it keeps its own
 * buffer, so other encodes may run between slices.
 */
export class CborListEncoder {
  #buf: Buffer
  #o = 0
  #left: number

  constructor(kind: string, apiVersion: string, meta: Record<string, unknown>, count: number, readonly bytes?: ByteFields, sizeHint = 0) {
    this.#buf = Buffer.allocUnsafe(1024 + Math.ceil(sizeHint * 0.85))
    this.#left = count
    const parts: Buffer[] = [SELF_DESCRIBED, head(5, 4), encoder.encode('kind'), encoder.encode(kind), encoder.encode('apiVersion'), encoder.encode(apiVersion),
      encoder.encode('metadata'), item(JSON.stringify(meta), undefined), encoder.encode('items')]
    this.#run(() => {
      for (const b of parts) { room(b.length); b.copy(out, o); o += b.length }
      wHead(4, count)
    })
  }

  #run(fn: () => void): void {
    const savedOut = out
    const savedO = o
    out = this.#buf
    o = this.#o
    try {
      fn()
    } finally {
      this.#buf = out
      this.#o = o
      out = savedOut
      o = savedO
    }
  }

  /** Appends items[from, to) (the constructor was told how many items there are in all). */
  add(items: ReadonlyArray<Buffer | string>, from = 0, to = items.length): void {
    if (to - from > this.#left) throw new Error('cbor: more list items than announced')
    this.#left -= to - from
    const bytes = this.bytes
    this.#run(() => { for (let i = from; i < to; i++) itemFromJson(items[i], bytes) })
  }

  finish(): Buffer {
    if (this.#left !== 0) throw new Error('cbor: fewer list items than announced')
    const result = this.#buf.subarray(0, this.#o)
    this.#buf = NO_BYTES
    return result
  }
}

/** The value of a JSON text as one self-described CBOR data item. */
export function cborFromJson(json: string, bytes?: ByteFields): Buffer {
  // Objects (stored ones, Status) are transcoded from the text; anything else, or what the transcoder leaves, is parsed.
  if (json.charCodeAt(0) === 0x7b) {
    const b = objectFromJson(json, bytes, SELF_DESCRIBED)
    if (b !== null) return b
  }
  return cborFromParsedJson(json, bytes)
}

/** A list `{kind, apiVersion, metadata, items}` from its items' JSON, encoded item by item (same key order as the JSON list). */
export function cborList(kind: string, apiVersion: string, meta: Record<string, unknown>, items: ReadonlyArray<Buffer | string>, bytes?: ByteFields): Buffer {
  let size = 0
  for (const it of items) size += it.length
  const enc = new CborListEncoder(kind, apiVersion, meta, items.length, bytes, size)
  enc.add(items)
  return enc.finish()
}

/** One watch event `{type, object}` as a self-described data item: one element of an `application/cbor-seq` stream. */
export function cborWatchEvent(type: string, objectJson: string, bytes?: ByteFields): Buffer {
  const prefix = Buffer.concat([SELF_DESCRIBED, head(5, 2), encoder.encode('type'), encoder.encode(type), encoder.encode('object')])
  return objectFromJson(objectJson, bytes, prefix) ?? Buffer.concat([prefix, item(objectJson, bytes)])
}
