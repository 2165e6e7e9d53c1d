// The protobuf reader: a body (`k8s\0` + runtime.Unknown) to the object in its JSON shape, by the descriptors in
// tables.ts. The body being read and the position in it are module state.
import {
  type Field, type Msg, type Obj, anyVersionKinds, init, MAGIC, messageFor, toOrchApiVersion, WIRE_OF_KIND,
  STRING, BYTES, BOOL, INT32, INT64, MSG, MAP, KEEP,
  S_NONE, S_TIME, S_MICROTIME, S_FIELDSV1, S_QUANTITY, S_INTORSTRING, S_RAWEXTENSION, S_JSON,
  S_PROPS_OR_ARRAY, S_PROPS_OR_BOOL, S_PROPS_OR_STRINGS, S_STRINGLIST,
} from './tables.js'
import { formatMicroTime, formatTime } from './time.js'

let b: Buffer = Buffer.alloc(0)
let pos = 0
/** High 32 bits of the last varint read. */
let hi = 0

function truncated(): never {
  throw new Error('protobuf: malformed body: truncated or overlong value')
}

/** Reads a varint: returns its low 32 bits (unsigned) and leaves the high ones in `hi`. */
function rVarint(): number {
  let c = b[pos++]
  hi = 0
  if (c < 128) return c
  let lo = c & 127
  c = b[pos++]; lo |= (c & 127) << 7; if (c < 128) return lo
  c = b[pos++]; lo |= (c & 127) << 14; if (c < 128) return lo
  c = b[pos++]; lo |= (c & 127) << 21; if (c < 128) return lo
  c = b[pos++]; lo = (lo | ((c & 15) << 28)) >>> 0; hi = (c & 127) >> 4; if (c < 128) return lo
  c = b[pos++]; hi |= (c & 127) << 3; if (c < 128) return lo
  c = b[pos++]; hi |= (c & 127) << 10; if (c < 128) return lo
  c = b[pos++]; hi |= (c & 127) << 17; if (c < 128) return lo
  c = b[pos++]; hi |= (c & 127) << 24; if (c < 128) return lo
  c = b[pos++]; hi = (hi | ((c & 1) << 31)) >>> 0; if (c < 128) return lo
  if (c === undefined) truncated()
  throw new Error('protobuf: malformed body: varint longer than 10 bytes')
}

function rInt64(): number {
  const lo = rVarint()
  return hi === 0 ? lo : (hi | 0) * 4294967296 + lo
}

function rLen(end: number): number {
  const len = rVarint()
  if (hi !== 0 || pos + len > end) truncated()
  return len
}

/** Buffer's own UTF-8 slice (undocumented but long-standing; protobufjs reads strings with it too). */
const fastUtf8 = typeof (Buffer.prototype as unknown as { utf8Slice?: unknown }).utf8Slice === 'function'

function rString(len: number): string {
  const start = pos
  pos += len
  return fastUtf8 ? (b as unknown as { utf8Slice(s: number, e: number): string }).utf8Slice(start, pos) : b.toString('utf8', start, pos)
}

function skip(wire: number, end: number): void {
  switch (wire) {
    case 0: rVarint(); break
    case 1: pos += 8; break
    case 2: { const len = rLen(end); pos += len; break }
    case 5: pos += 4; break
    default: throw new Error(`protobuf: malformed body: wire type ${wire}`)
  }
  if (pos > end) truncated()
}

function wrongWire(m: Msg, f: Field, wire: number): never {
  throw new Error(`protobuf: malformed body: ${m.name}.${f.json || f.typeName}: wire type ${wire}, expected ${f.wire}`)
}

/** A scalar from the wire (its wire type checked by the caller). */
function rScalar(kind: number, end: number): any {
  switch (kind) {
    case STRING: return rString(rLen(end))
    case BYTES: { const len = rLen(end); const s = b.toString('base64', pos, pos + len); pos += len; return s }
    case BOOL: { const lo = rVarint(); return lo !== 0 || hi !== 0 }
    case INT32: return rVarint() | 0
    case INT64: return rInt64()
    default: {
      if (pos + 8 > end) truncated()
      const v = b.readDoubleLE(pos)
      pos += 8
      return v
    }
  }
}

function isZero(v: any): boolean {
  return v === '' || v === 0 || v === false
}

/** One field of a message by its tag: decoded when the table knows its number, skipped otherwise. */
function decTagged(m: Msg, byNo: Msg['byNo'], tag: number, end: number, o: Obj): void {
  const no = tag >>> 3
  const f = no < byNo.length ? byNo[no] : undefined
  if (f === undefined) skip(tag & 7, end)
  else decField(m, f, tag & 7, end, o)
}

function decMessage(m: Msg, end: number, o: Obj): Obj {
  const byNo = m.byNo
  while (pos < end) {
    decTagged(m, byNo, rVarint(), end, o)
    if (pos > end) truncated()
  }
  if (pos !== end) truncated()
  return o
}

function decField(m: Msg, f: Field, wire: number, end: number, o: Obj): void {
  if (wire !== f.wire) {
    if (f.repeated && wire === 2 && f.wire !== 2) { decPacked(f, end, o); return }
    wrongWire(m, f, wire)
  }
  switch (f.kind) {
    case MSG: {
      const len = rLen(end)
      const e = pos + len
      if (f.inline) {
        decMessage(f.msg!, e, o)
      } else {
        const v = decMessageValue(f.msg!, e)
        if (f.repeated) (o[f.json] ??= []).push(v === undefined ? null : v)
        else if (v !== undefined && v !== null) o[f.json] = v
      }
      pos = e
      return
    }
    case MAP: {
      const len = rLen(end)
      decMapEntry(m, f, pos + len, (o[f.json] ??= {}))
      return
    }
    default: {
      const v = rScalar(f.kind, end)
      if (f.repeated) (o[f.json] ??= []).push(v)
      else if (f.presence === KEEP || !isZero(v)) o[f.json] = v
    }
  }
}

/** A list: like decMessage, but each item starts with the apiVersion and kind our JSON lists carry on items. */
function decList(m: Msg, end: number, o: Obj, items: Field): Obj {
  const apiVersion = o.apiVersion
  const kind = (o.kind as string).slice(0, -'List'.length)
  const arr: Obj[] = (o.items = [])
  const byNo = m.byNo
  while (pos < end) {
    const tag = rVarint()
    if (tag === 0x12) {
      const len = rLen(end)
      const e = pos + len
      arr.push(decMessage(items.msg!, e, { apiVersion, kind }))
      pos = e
    } else {
      decTagged(m, byNo, tag, end, o)
    }
    if (pos > end) truncated()
  }
  if (pos !== end) truncated()
  return o
}

function decPacked(f: Field, end: number, o: Obj): void {
  const len = rLen(end)
  const e = pos + len
  const arr: any[] = (o[f.json] ??= [])
  while (pos < e) arr.push(rScalar(f.kind, e))
  if (pos !== e) truncated()
}

function decMapEntry(m: Msg, f: Field, end: number, into: Obj): void {
  let key = ''
  let value: any
  while (pos < end) {
    const tag = rVarint()
    if (tag === 0x0a) {
      key = rString(rLen(end))
    } else if (tag >>> 3 === 2) {
      const wire = tag & 7
      if (wire !== WIRE_OF_KIND[f.valueKind]) wrongWire(m, f, wire)
      if (f.valueKind === MSG) {
        const len = rLen(end)
        const e = pos + len
        value = decMessageValue(f.valueMsg!, e)
        pos = e
      } else {
        value = rScalar(f.valueKind, end)
      }
    } else {
      skip(tag & 7, end)
    }
    if (pos > end) truncated()
  }
  if (pos !== end) truncated()
  if (value === undefined) value = zeroValue(f.valueKind, f.valueMsg)
  if (key === '__proto__') Object.defineProperty(into, key, { value, enumerable: true, writable: true, configurable: true })
  else into[key] = value
}

function zeroValue(kind: number, m: Msg | null): any {
  switch (kind) {
    case STRING: case BYTES: return ''
    case BOOL: return false
    case MSG: { const e = pos; return decMessageValue(m!, e) ?? null }
    default: return 0
  }
}

/** A message-typed value from pos to end in its JSON shape; undefined when JSON would have nothing (a zero time). */
function decMessageValue(m: Msg, end: number): any {
  switch (m.special) {
    case S_NONE:
      return decMessage(m, end, {})
    case S_TIME:
    case S_MICROTIME: {
      if (pos === end) return undefined
      let seconds = 0
      let nanos = 0
      while (pos < end) {
        const tag = rVarint()
        if (tag === 0x08) seconds = rInt64()
        else if (tag === 0x10) nanos = rVarint() | 0
        else skip(tag & 7, end)
      }
      if (pos !== end) truncated()
      return m.special === S_TIME ? formatTime(seconds) : formatMicroTime(seconds, nanos)
    }
    case S_QUANTITY: {
      let q = ''
      while (pos < end) {
        const tag = rVarint()
        if (tag === 0x0a) q = rString(rLen(end))
        else skip(tag & 7, end)
      }
      if (pos !== end) truncated()
      return q || '0'
    }
    case S_INTORSTRING: {
      let type = 0
      let intVal = 0
      let strVal = ''
      while (pos < end) {
        const tag = rVarint()
        if (tag === 0x08) type = rInt64()
        else if (tag === 0x10) intVal = rVarint() | 0
        else if (tag === 0x1a) strVal = rString(rLen(end))
        else skip(tag & 7, end)
      }
      if (pos !== end) truncated()
      return type === 1 ? strVal : intVal
    }
    case S_RAWEXTENSION:
    case S_FIELDSV1:
    case S_JSON:
      return decRawJson(m, end)
    case S_PROPS_OR_ARRAY: {
      const v = decMessage(m, end, {})
      return v.items?.length ? v.items : v.schema
    }
    case S_PROPS_OR_BOOL: {
      const v = decMessage(m, end, {})
      return v.schema ?? v.allows === true
    }
    case S_PROPS_OR_STRINGS: {
      const v = decMessage(m, end, {})
      return v.items?.length ? v.items : v.schema
    }
    case S_STRINGLIST: {
      const v = decMessage(m, end, {})
      return v.items ?? []
    }
  }
  return undefined
}

/** RawExtension, FieldsV1 and apiextensions JSON: field 1 holds JSON (or, in a RawExtension, an enveloped object). */
function decRawJson(m: Msg, end: number): any {
  let start = -1
  let len = 0
  while (pos < end) {
    const tag = rVarint()
    if (tag === 0x0a) {
      len = rLen(end)
      start = pos
      pos += len
    } else {
      skip(tag & 7, end)
    }
  }
  if (pos !== end) truncated()
  if (start < 0 || len === 0) return m.special === S_JSON ? null : undefined
  if (len >= 4 && b[start] === MAGIC[0] && b[start + 1] === MAGIC[1] && b[start + 2] === MAGIC[2] && b[start + 3] === MAGIC[3]) {
    return decodeObject(b.subarray(start, start + len))
  }
  try {
    return JSON.parse(b.toString('utf8', start, start + len))
  } catch {
    throw new Error(`protobuf: malformed body: ${m.name} does not hold JSON`)
  }
}

/**
 * A protobuf body (`k8s\0` + runtime.Unknown) -> the object in its JSON shape. The envelope's apiVersion and kind
 * pick the message (`<x>.k8s.io` is read as our `<x>.orch.io`); `expected` fills them in when the envelope has none
 * and must agree with them when it has.
 */
export function decodeObject(body: Uint8Array, expected?: { apiVersion: string; kind: string }): Record<string, any> {
  const savedB = b
  const savedPos = pos
  try {
    return decodeEnvelope(body, expected)
  } finally {
    b = savedB
    pos = savedPos
  }
}

function decodeEnvelope(body: Uint8Array, expected?: { apiVersion: string; kind: string }): Obj {
  init()
  if (body.length < 4 || body[0] !== MAGIC[0] || body[1] !== MAGIC[1] || body[2] !== MAGIC[2] || body[3] !== MAGIC[3]) {
    throw new Error('protobuf: the body does not start with the protobuf envelope magic (6b 38 73 00)')
  }
  b = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  pos = 4
  const end = b.length
  let apiVersion = ''
  let kind = ''
  let contentEncoding = ''
  let rawStart = -1
  let rawEnd = -1
  while (pos < end) {
    const tag = rVarint()
    switch (tag) {
      case 0x0a: { // typeMeta
        const len = rLen(end)
        const e = pos + len
        while (pos < e) {
          const t = rVarint()
          if (t === 0x0a) apiVersion = rString(rLen(e))
          else if (t === 0x12) kind = rString(rLen(e))
          else skip(t & 7, e)
        }
        if (pos !== e) truncated()
        break
      }
      case 0x12: { // raw
        const len = rLen(end)
        rawStart = pos
        rawEnd = pos + len
        pos = rawEnd
        break
      }
      case 0x1a: contentEncoding = rString(rLen(end)); break
      case 0x22: rString(rLen(end)); break // contentType: always the protobuf media type here
      default: skip(tag & 7, end)
    }
    if (pos > end) truncated()
  }
  if (contentEncoding !== '') throw new Error(`protobuf: content encoding ${JSON.stringify(contentEncoding)} is not supported`)
  if (expected) {
    if (kind === '') kind = expected.kind
    if (apiVersion === '') apiVersion = expected.apiVersion
    if (kind !== expected.kind) throw new Error(`protobuf: the body holds a ${kind}, expected a ${expected.kind}`)
    if (!anyVersionKinds.has(kind) && toOrchApiVersion(apiVersion) !== toOrchApiVersion(expected.apiVersion)) {
      throw new Error(`protobuf: the body holds ${apiVersion} ${kind}, expected ${expected.apiVersion}`)
    }
  }
  apiVersion = toOrchApiVersion(apiVersion)
  const m = messageFor(apiVersion, kind)
  const o: Obj = { apiVersion, kind }
  const items = kind.endsWith('List') ? m.byNo[2] : undefined
  if (items !== undefined && (items.json !== 'items' || !items.repeated || items.msg === null)) throw new Error(`protobuf: ${m.name} is not a list`)
  if (rawStart < 0) {
    if (items) o.items = []
    return o
  }
  pos = rawStart
  return items ? decList(m, rawEnd, o, items) : decMessage(m, rawEnd, o)
}
