// The protobuf writer: wire primitives into one module-level scratch buffer, the `k8s\0` + runtime.Unknown envelope
// around a message, watch frames.
//
// One growing scratch buffer (module state, for speed: the encoders call these functions, never touch the buffer).
// A length-delimited value gets a one-byte length placeholder; the rare value of 128 bytes or more is moved up by the
// extra length bytes once its size is known.
import { MAGIC } from './tables.js'

const KEEP_SCRATCH = 1 << 20
let out: Buffer = Buffer.allocUnsafe(64 * 1024)
let p = 0

function grow(n: number): void {
  let size = out.length * 2
  while (size < p + n) size *= 2
  const next = Buffer.allocUnsafe(size)
  out.copy(next, 0, 0, p)
  out = next
}

export function wVarint(v: number): void {
  if (p + 10 > out.length) grow(10)
  while (v > 127) {
    out[p++] = (v & 127) | 128
    v = v > 0xffffffff ? Math.floor(v / 128) : v >>> 7
  }
  out[p++] = v
}

/** A signed integer: negative values are the ten-byte two's complement form (int32 and int64 alike). */
export function wInt(v: number): void {
  if (v >= 0) { wVarint(v); return }
  if (p + 10 > out.length) grow(10)
  let lo = v >>> 0
  let hi = Math.floor(v / 4294967296) >>> 0
  while (hi !== 0) {
    out[p++] = (lo & 127) | 128
    lo = ((lo >>> 7) | (hi << 25)) >>> 0
    hi >>>= 7
  }
  while (lo > 127) {
    out[p++] = (lo & 127) | 128
    lo >>>= 7
  }
  out[p++] = lo
}

export function wTag(tag: number): void {
  if (tag < 128) {
    if (p + 1 > out.length) grow(1)
    out[p++] = tag
  } else {
    wVarint(tag)
  }
}

export function beginLen(): number {
  if (p + 1 > out.length) grow(1)
  return p++
}

export function endLen(at: number): void {
  const len = p - at - 1
  if (len < 128) { out[at] = len; return }
  const n = len < 16384 ? 2 : len < 2097152 ? 3 : len < 268435456 ? 4 : 5
  if (p + n - 1 > out.length) grow(n - 1)
  out.copyWithin(at + n, at + 1, p)
  p += n - 1
  let v = len
  let q = at
  while (v > 127) {
    out[q++] = (v & 127) | 128
    v >>>= 7
  }
  out[q] = v
}

/** A length-delimited UTF-8 string (lone surrogates become U+FFFD, as Buffer.from does). */
export function wString(s: string): void {
  const n = s.length
  if (n < 64) {
    if (p + n * 3 + 2 > out.length) grow(n * 3 + 2)
    const at = p++
    for (let i = 0; i < n; i++) {
      let c = s.charCodeAt(i)
      if (c < 0x80) {
        out[p++] = c
      } else if (c < 0x800) {
        out[p++] = 0xc0 | (c >> 6)
        out[p++] = 0x80 | (c & 63)
      } else if (c >= 0xd800 && c < 0xe000) {
        const c2 = i + 1 < n ? s.charCodeAt(i + 1) : 0
        if (c < 0xdc00 && c2 >= 0xdc00 && c2 < 0xe000) {
          i++
          c = 0x10000 + ((c & 0x3ff) << 10) + (c2 & 0x3ff)
          out[p++] = 0xf0 | (c >> 18)
          out[p++] = 0x80 | ((c >> 12) & 63)
          out[p++] = 0x80 | ((c >> 6) & 63)
          out[p++] = 0x80 | (c & 63)
        } else {
          out[p++] = 0xef
          out[p++] = 0xbf
          out[p++] = 0xbd
        }
      } else {
        out[p++] = 0xe0 | (c >> 12)
        out[p++] = 0x80 | ((c >> 6) & 63)
        out[p++] = 0x80 | (c & 63)
      }
    }
    endLen(at)
    return
  }
  const len = Buffer.byteLength(s, 'utf8')
  wVarint(len)
  if (p + len > out.length) grow(len)
  p += out.write(s, p, len, 'utf8')
}

/** A base64 string as length-delimited bytes. */
export function wBase64(s: string): void {
  const max = Math.ceil(s.length / 4) * 3 + 3
  if (p + max + 1 > out.length) grow(max + 1)
  const at = p++
  p += out.write(s, p, max, 'base64')
  endLen(at)
}

export function wBool(v: boolean): void {
  if (p + 1 > out.length) grow(1)
  out[p++] = v ? 1 : 0
}

/** A double, little-endian (wire type 1). */
export function wDouble(v: number): void {
  if (p + 8 > out.length) grow(8)
  out.writeDoubleLE(v, p)
  p += 8
}

/** Copies from[start, end) as a length-delimited value. */
export function wRaw(from: Buffer, start: number, end: number): void {
  const len = end - start
  wVarint(len)
  if (p + len > out.length) grow(len)
  if (len < 64) {
    // Buffer#copy costs more than a short loop.
    const o = out
    let w = p
    for (let i = start; i < end; i++) o[w++] = from[i]
    p = w
    return
  }
  from.copy(out, p, start, end)
  p += len
}

/** The write position, to go back to with rewind (what was written after it is dropped). */
export function position(): number {
  return p
}

export function rewind(at: number): void {
  p = at
}

/** A buffer of its own and the write position in it: output built in slices while other encodes run between them. */
export interface Slot {
  buf: Buffer
  p: number
}

/** Runs fn with the slot's buffer as the writer's; the slot gets the buffer (it may have grown) and position back. */
export function writeInto(slot: Slot, fn: () => void): void {
  const savedOut = out
  const savedP = p
  out = slot.buf
  p = slot.p
  try {
    fn()
  } finally {
    slot.buf = out
    slot.p = p
    out = savedOut
    p = savedP
  }
}

/** The finished bytes: a copy when small (the scratch buffer is reused), else the scratch itself (a new one next time). */
function take(start: number): Buffer {
  const n = p - start
  let result: Buffer
  if (n <= KEEP_SCRATCH / 4) {
    result = Buffer.allocUnsafe(n)
    out.copy(result, 0, start, p)
  } else {
    result = out.subarray(start, p)
    out = Buffer.allocUnsafe(64 * 1024)
  }
  if (out.length > KEEP_SCRATCH) out = Buffer.allocUnsafe(64 * 1024)
  p = 0
  return result
}

/** `k8s\0` + runtime.Unknown{typeMeta{apiVersion, kind}, raw: what writeRaw writes}. */
export function encodeEnvelope(apiVersion: string, kind: string, writeRaw: () => void): Buffer {
  // The object's message goes after room for the header, which is written in front of it once its length is known.
  const room = envelopeRoom(apiVersion, kind)
  p = 0
  if (room + 1024 > out.length) grow(room + 1024)
  p = room
  try {
    writeRaw()
  } catch (err) {
    p = 0
    throw err
  }
  const start = writeEnvelopeHeader(apiVersion, kind, room)
  return take(start)
}

/** Room for the envelope's header in front of the raw message. */
export function envelopeRoom(apiVersion: string, kind: string): number {
  return 4 + 1 + 5 + 1 + 5 + Buffer.byteLength(apiVersion, 'utf8') + 1 + 5 + Buffer.byteLength(kind, 'utf8') + 1 + 5
}

/**
 * Inside writeInto: the envelope's header written in front of the raw message at [room, p) (room from envelopeRoom),
 * and the finished body (a view of the slot's buffer).
 */
export function envelopeBody(apiVersion: string, kind: string, room: number): Buffer {
  return out.subarray(writeEnvelopeHeader(apiVersion, kind, room), p)
}

/** Writes the header in front of the raw message at [room, p) and returns where the body starts; p is left as it was. */
function writeEnvelopeHeader(apiVersion: string, kind: string, room: number): number {
  const avLen = Buffer.byteLength(apiVersion, 'utf8')
  const kindLen = Buffer.byteLength(kind, 'utf8')
  const rawLen = p - room
  const tmLen = 1 + varintSize(avLen) + avLen + 1 + varintSize(kindLen) + kindLen
  const start = room - (4 + 1 + varintSize(tmLen) + tmLen + 1 + varintSize(rawLen))
  const end = p
  p = start
  for (const c of MAGIC) out[p++] = c
  out[p++] = 0x0a
  wVarint(tmLen)
  out[p++] = 0x0a
  wVarint(avLen)
  p += out.write(apiVersion, p, avLen, 'utf8')
  out[p++] = 0x12
  wVarint(kindLen)
  p += out.write(kind, p, kindLen, 'utf8')
  out[p++] = 0x12
  wVarint(rawLen)
  if (p !== room) throw new Error('protobuf: internal error: header size')
  p = end
  return start
}

function varintSize(v: number): number {
  return v < 128 ? 1 : v < 16384 ? 2 : v < 2097152 ? 3 : v < 268435456 ? 4 : 5
}

/** One watch frame: 4-byte big-endian length + meta.v1.WatchEvent{type, object: RawExtension{raw: objectBody}}. */
export function encodeWatchEvent(type: string, objectBody: Uint8Array): Buffer {
  const typeLen = Buffer.byteLength(type, 'utf8')
  const rawExt = 1 + varintSize(objectBody.length) + objectBody.length
  const event = 1 + varintSize(typeLen) + typeLen + 1 + varintSize(rawExt) + rawExt
  const frame = Buffer.allocUnsafe(4 + event)
  frame.writeUInt32BE(event, 0)
  let q = 4
  const varint = (v: number): void => {
    while (v > 127) { frame[q++] = (v & 127) | 128; v >>>= 7 }
    frame[q++] = v
  }
  frame[q++] = 0x0a
  varint(typeLen)
  q += frame.write(type, q, typeLen, 'utf8')
  frame[q++] = 0x12
  varint(rawExt)
  frame[q++] = 0x0a
  varint(objectBody.length)
  frame.set(objectBody, q)
  return frame
}
