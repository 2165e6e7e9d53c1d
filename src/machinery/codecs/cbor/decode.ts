// The strict CBOR reader for request bodies. cbor-x decodes leniently (duplicate keys overwrite, any key type is turned into a string), so
// request bodies are read here, with upstream's rules: well-formed, one data item, map keys text (or byte) strings
// with no duplicates, valid UTF-8, only false/true/null as simple values, no NaN or infinities, nesting at most 64.
import { TAG_BASE16, TAG_BASE64, TAG_BASE64URL } from './encode.js'

export class CborError extends Error {}

const MAX_DEPTH = 64
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

const MAJOR_NAMES = ['an unsigned integer', 'a negative integer', 'a byte string', 'a text string', 'an array', 'a map', 'a tag', 'a simple value or float']
const MAJOR_TYPES = ['unsigned integer', 'negative integer', 'byte string', 'text string', 'array', 'map', 'tag', 'simple value or float']

class Reader {
  pos = 0
  readonly view: DataView
  constructor(readonly buf: Uint8Array) { this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength) }

  fail(msg: string, at = this.pos): never { throw new CborError(`${msg} at byte ${at}`) }

  need(n: number): void { if (this.pos + n > this.buf.length) this.fail('unexpected end of data') }

  /** The argument of a head; -1 for indefinite length. */
  arg(ai: number, major: number, at: number): number {
    if (ai < 24) return ai
    switch (ai) {
      case 24: this.need(1); return this.buf[this.pos++]
      case 25: { this.need(2); const v = this.view.getUint16(this.pos); this.pos += 2; return v }
      case 26: { this.need(4); const v = this.view.getUint32(this.pos); this.pos += 4; return v }
      case 27: {
        this.need(8)
        const v = this.view.getBigUint64(this.pos)
        this.pos += 8
        // Lengths that large never fit the body; integer values lose precision as they would in JSON.
        return Number(v)
      }
      case 31:
        if (major >= 2 && major <= 5) return -1
        return this.fail(`indefinite length is not allowed for ${MAJOR_NAMES[major]}`, at)
      default: return this.fail(`reserved additional information ${ai}`, at)
    }
  }

  /** The bytes of a byte or text string (definite, or indefinite made of definite chunks of the same type). */
  stringBytes(major: number, len: number, at: number): Uint8Array {
    if (len >= 0) {
      this.need(len)
      const b = this.buf.subarray(this.pos, this.pos + len)
      this.pos += len
      return b
    }
    const chunks: Uint8Array[] = []
    for (;;) {
      this.need(1)
      const ib = this.buf[this.pos]
      if (ib === 0xff) { this.pos++; break }
      const cat = this.pos++
      if (ib >> 5 !== major || (ib & 31) === 31) this.fail(`a chunk of an indefinite-length ${MAJOR_TYPES[major]} must be a definite-length ${MAJOR_TYPES[major]}`, cat)
      chunks.push(this.stringBytes(major, this.arg(ib & 31, major, cat), cat))
    }
    void at
    return Buffer.concat(chunks)
  }

  text(bytes: Uint8Array, at: number): string {
    try { return utf8.decode(bytes) } catch { return this.fail('invalid UTF-8 in a string', at) }
  }

  /** A map key: a text string, or a byte string holding UTF-8 (upstream's encoders write keys as byte strings). */
  key(): string {
    const at = this.pos
    this.need(1)
    const ib = this.buf[this.pos++]
    const major = ib >> 5
    if (major !== 2 && major !== 3) this.fail(`map keys must be text strings, found ${MAJOR_NAMES[major]}`, at)
    return this.text(this.stringBytes(major, this.arg(ib & 31, major, at), at), at)
  }

  value(depth: number): unknown {
    const at = this.pos
    this.need(1)
    const ib = this.buf[this.pos++]
    const major = ib >> 5
    const ai = ib & 31
    if (major === 7) return this.simple(ai, at)
    const n = this.arg(ai, major, at)
    switch (major) {
      case 0: return n
      case 1: return -1 - n
      case 2: return this.text(this.stringBytes(2, n, at), at)
      case 3: return this.text(this.stringBytes(3, n, at), at)
      case 4: {
        if (depth >= MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH}`, at)
        if (n > this.buf.length - this.pos) this.fail('array length beyond the end of data', at)
        const out: unknown[] = []
        if (n >= 0) { for (let i = 0; i < n; i++) out.push(this.value(depth + 1)) } else {
          while (!this.atBreak()) out.push(this.value(depth + 1))
        }
        return out
      }
      case 5: {
        if (depth >= MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH}`, at)
        if (n > this.buf.length - this.pos) this.fail('map length beyond the end of data', at)
        const out: Record<string, unknown> = {}
        for (let i = 0; n < 0 ? !this.atBreak() : i < n; i++) {
          const kat = this.pos
          const k = this.key()
          if (Object.hasOwn(out, k)) this.fail(`duplicate map key ${JSON.stringify(k)}`, kat)
          const v = this.value(depth + 1)
          // As JSON.parse does: "__proto__" is an own property, never the prototype.
          if (k === '__proto__') Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true })
          else out[k] = v
        }
        return out
      }
      default: return this.tag(n, depth, at)
    }
  }

  atBreak(): boolean {
    this.need(1)
    if (this.buf[this.pos] !== 0xff) return false
    this.pos++
    return true
  }

  /** Tags: 55799 (self-described) is transparent, 0 (date text) gives its text, 21/22/23 turn bytes into their text encoding. */
  tag(n: number, depth: number, at: number): unknown {
    if (n === 55799) return this.value(depth)
    if (n === 0) {
      const v = this.value(depth)
      if (typeof v !== 'string') this.fail('tag 0 (date/time) must enclose a text string', at)
      return v
    }
    if (n === TAG_BASE64URL || n === TAG_BASE64 || n === TAG_BASE16) {
      const sat = this.pos
      this.need(1)
      const ib = this.buf[this.pos++]
      if (ib >> 5 !== 2) this.fail(`tag ${n} must enclose a byte string`, at)
      const b = Buffer.from(this.stringBytes(2, this.arg(ib & 31, 2, sat), sat))
      return b.toString(n === TAG_BASE64 ? 'base64' : n === TAG_BASE64URL ? 'base64url' : 'hex')
    }
    return this.fail(`unsupported tag ${n}`, at)
  }

  simple(ai: number, at: number): unknown {
    switch (ai) {
      case 20: return false
      case 21: return true
      case 22: return null
      case 25: { this.need(2); const v = halfFloat(this.view.getUint16(this.pos)); this.pos += 2; return this.finite(v, at) }
      case 26: { this.need(4); const v = this.view.getFloat32(this.pos); this.pos += 4; return this.finite(v, at) }
      case 27: { this.need(8); const v = this.view.getFloat64(this.pos); this.pos += 8; return this.finite(v, at) }
      case 31: return this.fail('unexpected break', at)
      case 23: return this.fail('the simple value undefined has no JSON equivalent', at)
      case 24: { this.need(1); const sv = this.buf[this.pos++]; return this.fail(`unsupported simple value ${sv}`, at) }
      default: return this.fail(ai >= 28 ? `reserved additional information ${ai}` : `unsupported simple value ${ai}`, at)
    }
  }

  finite(v: number, at: number): number {
    if (!Number.isFinite(v)) this.fail(`${Number.isNaN(v) ? 'NaN' : 'an infinite float'} has no JSON equivalent`, at)
    return v
  }
}

function halfFloat(h: number): number {
  const s = h & 0x8000 ? -1 : 1
  const e = (h >> 10) & 0x1f
  const f = h & 0x3ff
  if (e === 0) return s * f * 2 ** -24
  if (e === 31) return f === 0 ? s * Infinity : NaN
  return s * (1024 + f) * 2 ** (e - 25)
}

/** One CBOR data item (optionally self-described) as a JSON value tree; anything but exactly one valid item throws CborError. */
export function decodeCbor(bytes: Uint8Array): unknown {
  if (bytes.length === 0) throw new CborError('empty body')
  const r = new Reader(bytes)
  const v = r.value(0)
  if (r.pos !== bytes.length) r.fail('unexpected data after the data item')
  return v
}

/** What the top of a CBOR body is, for messages ("an array", "a text string"). */
export function cborTypeOf(bytes: Uint8Array): string {
  let i = 0
  while (bytes.length >= i + 3 && bytes[i] === 0xd9 && bytes[i + 1] === 0xd9 && bytes[i + 2] === 0xf7) i += 3
  return i < bytes.length ? MAJOR_NAMES[bytes[i] >> 5] : 'nothing'
}
