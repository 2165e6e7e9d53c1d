// Stored JSON text to protobuf: objects and list items straight from their JSON bytes, without JSON.parse. Stored
// objects are JSON.stringify output, so the text is walked once: keys are matched to fields by hash, strings without
// escapes are copied as they are, FieldsV1 and RawExtension values (which protobuf carries as JSON) are copied as the
// canonical text they already are. Whatever this path does not handle exactly as encMessage would (an escaped key,
// whitespace, a value of the wrong type, a duplicate key, anything malformed) abandons the item, which is then parsed
// and encoded by encMessage: the output is the same bytes either way, and errors are encMessage's.
import { REJECT, scanNumber, scanString, skipValue, stringFlags, stringValue, numberValue } from '../json-scan.js'
import {
  type Field, type Msg, listMessage, messageFor, WIRE_OF_KIND,
  STRING, BYTES, BOOL, INT32, INT64, DOUBLE, MSG, MAP, OMIT, KEEP,
  S_NONE, S_TIME, S_MICROTIME, S_FIELDSV1, S_QUANTITY, S_INTORSTRING, S_RAWEXTENSION, S_JSON,
} from './tables.js'
import {
  beginLen, encodeEnvelope, endLen, envelopeBody, envelopeRoom, position, rewind, type Slot, wBase64, wBool, wDouble,
  wInt, writeInto, wRaw, wString, wTag, wVarint,
} from './writer.js'
import { encField, encMessage, encNull, encodeObject, encValue, fail, isObject } from './encode.js'
import { parseMicroTime, parsedNanos, parsedSeconds, parseTime } from './time.js'

/** Thrown to abandon the JSON path for an item (no stack: it is not an error). */
const BAIL = Object.freeze({ bail: true })
function bail(): never { throw BAIL }

const NO_BYTES = Buffer.alloc(0)
/** The JSON text being encoded and the read position in it. */
let src: Buffer = NO_BYTES
let q = 0
/** Stamps of JSON objects, for duplicate keys (Field.seen). */
let stamp = 0

/** How many list items took the JSON path and how many were parsed (for tests and profiling). */
export const jsonPathStats = { fast: 0, parsed: 0 }

/** The field of m whose JSON name is the key at [ks, ke) with hash h. */
function fieldOfKey(m: Msg, h: number, ks: number, ke: number): Field | undefined {
  const mask = m.mask
  const slots = m.slotField
  let slot = h & mask
  for (;;) {
    const f = slots[slot]
    if (f === undefined) return undefined
    if (m.slotHash[slot] === h) {
      const name = f.jsonBytes
      const len = ke - ks
      if (name.length === len) {
        let i = 0
        while (i < len && name[i] === src[ks + i]) i++
        if (i === len) return f
      }
    }
    slot = (slot + 1) & mask
  }
}

let keyStart = 0
let keyEnd = 0

/**
 * A key at q: its hash (tables.ts keyHash of its bytes, as the field slots are hashed); keyStart/keyEnd delimit its
 * bytes; q moves past the colon. Escaped keys are abandoned.
 */
function jKey(): number {
  const b = src
  const n = b.length
  if (b[q] !== 0x22) bail()
  let i = q + 1
  let h = 0
  for (;;) {
    if (i >= n) bail()
    const c = b[i]
    if (c === 0x22) break
    if (c === 0x5c || c < 0x20) bail()
    h = (Math.imul(h, 31) + c) | 0
    i++
  }
  keyStart = q + 1
  keyEnd = i
  if (b[i + 1] !== 0x3a) bail()
  q = i + 2
  return h
}

function jNull(): boolean {
  const b = src
  if (b[q] !== 0x6e) return false
  if (b[q + 1] !== 0x75 || b[q + 2] !== 0x6c || b[q + 3] !== 0x6c) bail()
  q += 4
  return true
}

/** The end of the value at q (whatever it is), or abandon when it is not JSON. */
function jSkip(): number {
  const e = skipValue(src, q)
  if (e === REJECT) bail()
  return e
}

/** The string at q as JSON.parse reads it; q moves past it. */
function jString(): string {
  const b = src
  if (b[q] !== 0x22) bail()
  const start = q
  const e = scanString(b, q)
  if (e === REJECT) bail()
  q = e
  return stringValue(b, start, e, stringFlags)
}

/** The number at q; q moves past it. */
function jNumber(): number {
  const start = q
  const e = scanNumber(src, q)
  if (e === REJECT) bail()
  q = e
  return numberValue(src, start, e)
}

function isNumberStart(c: number): boolean {
  return c === 0x2d || (c >= 0x30 && c <= 0x39)
}

/** A message's JSON object at q (as encMessage writes it). */
function jMessage(m: Msg): void {
  const b = src
  if (b[q] !== 0x7b) bail()
  if (m.hasInline) { jMessageInline(m); return }
  q++
  if (b[q] === 0x7d) { q++; return }
  const s = ++stamp
  for (;;) {
    const h = jKey()
    const f = fieldOfKey(m, h, keyStart, keyEnd)
    if (f === undefined) {
      q = jSkip()
    } else {
      if (f.seen === s) bail()
      f.seen = s
      if (!jNull()) jField(f)
    }
    const c = b[q++]
    if (c === 0x2c) continue
    if (c === 0x7d) return
    bail()
  }
}

/**
 * A message with inlined structs: encMessage writes its fields in field order, each inlined struct from the same
 * object. The members are indexed first (key hash, key bytes, value position), then written field by field.
 */
function jMessageInline(m: Msg): void {
  const b = src
  q++
  const members: number[] = []
  if (b[q] === 0x7d) {
    q++
  } else {
    for (;;) {
      const h = jKey()
      members.push(h, keyStart, keyEnd, q)
      q = jSkip()
      const c = b[q++]
      if (c === 0x2c) continue
      if (c === 0x7d) break
      bail()
    }
  }
  const end = q
  // A duplicate key: JSON.parse keeps the last value, at the first key's place.
  for (let i = 0; i < members.length; i += 4) {
    for (let j = i + 4; j < members.length; j += 4) {
      if (members[i] === members[j] && sameKey(members[i + 1], members[i + 2], members[j + 1], members[j + 2])) bail()
    }
  }
  jInlineFields(m, members)
  q = end
}

function sameKey(as: number, ae: number, bs: number, be: number): boolean {
  if (ae - as !== be - bs) return false
  for (let i = 0; i < ae - as; i++) if (src[as + i] !== src[bs + i]) return false
  return true
}

function jInlineFields(m: Msg, members: number[]): void {
  const fields = m.fields
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]
    if (f.inline) {
      wTag(f.tag)
      const at = beginLen()
      const sub = f.msg!
      if (sub.hasInline) {
        jInlineFields(sub, members)
      } else {
        for (let k = 0; k < members.length; k += 4) {
          const g = fieldOfKey(sub, members[k], members[k + 1], members[k + 2])
          if (g === undefined) continue
          q = members[k + 3]
          if (!jNull()) jField(g)
        }
      }
      endLen(at)
    } else {
      const name = f.jsonBytes
      for (let k = 0; k < members.length; k += 4) {
        const ks = members[k + 1]
        if (members[k + 2] - ks !== name.length) continue
        let j = 0
        while (j < name.length && name[j] === src[ks + j]) j++
        if (j !== name.length) continue
        q = members[k + 3]
        if (!jNull()) jField(f)
        break
      }
    }
  }
}

/** A field's non-null JSON value at q (as encField writes it). */
function jField(f: Field): void {
  const b = src
  if (f.repeated) {
    if (b[q] !== 0x5b) bail()
    q++
    if (b[q] === 0x5d) { q++; return }
    for (;;) {
      if (jNull()) encNull(f)
      else jValue(f.kind, f.msg, f.tag, KEEP)
      const c = b[q++]
      if (c === 0x2c) continue
      if (c === 0x5d) return
      bail()
    }
  }
  if (f.kind === MAP) { jMap(f); return }
  jValue(f.kind, f.msg, f.tag, f.presence)
}

/** A map: entries sorted by key, as encField writes them. */
function jMap(f: Field): void {
  const b = src
  if (b[q] !== 0x7b) bail()
  q++
  if (b[q] === 0x7d) { q++; return }
  const keys: string[] = []
  const values: number[] = []
  for (;;) {
    keys.push(jString())
    if (b[q] !== 0x3a) bail()
    q++
    values.push(q)
    q = jSkip()
    const c = b[q++]
    if (c === 0x2c) continue
    if (c === 0x7d) break
    bail()
  }
  const end = q
  let order: number[] | undefined
  if (keys.length > 1) {
    order = keys.map((_, i) => i)
    order.sort((x, y) => (keys[x] < keys[y] ? -1 : keys[x] > keys[y] ? 1 : 0))
    for (let i = 1; i < order.length; i++) if (keys[order[i]] === keys[order[i - 1]]) bail()
  }
  const vtag = f.valueKind === MSG ? 0x12 : 0x10 | WIRE_OF_KIND[f.valueKind]
  for (let i = 0; i < keys.length; i++) {
    const j = order === undefined ? i : order[i]
    wTag(f.tag)
    const at = beginLen()
    wTag(0x0a)
    wString(keys[j])
    q = values[j]
    if (!jNull()) jValue(f.valueKind, f.valueMsg, vtag, KEEP)
    endLen(at)
  }
  q = end
}

/** One non-null value of a field at q (as encValue writes it). */
function jValue(kind: number, sub: Msg | null, tag: number, presence: number): void {
  const b = src
  switch (kind) {
    case STRING: {
      if (b[q] !== 0x22) bail()
      const start = q
      const e = scanString(b, q)
      if (e === REJECT) bail()
      q = e
      if (e - start === 2) {
        if (presence === OMIT) return
        wTag(tag)
        wVarint(0)
        return
      }
      wTag(tag)
      if (stringFlags === 0) wRaw(b, start + 1, e - 1)
      else wString(stringValue(b, start, e, stringFlags))
      return
    }
    case INT32:
    case INT64: {
      if (!isNumberStart(b[q])) bail()
      const v = jNumber()
      if (!Number.isInteger(v)) bail()
      if (presence === OMIT && v === 0) return
      wTag(tag)
      wInt(v)
      return
    }
    case BOOL: {
      let v: boolean
      if (b[q] === 0x74 && b[q + 1] === 0x72 && b[q + 2] === 0x75 && b[q + 3] === 0x65) { v = true; q += 4 }
      else if (b[q] === 0x66 && b[q + 1] === 0x61 && b[q + 2] === 0x6c && b[q + 3] === 0x73 && b[q + 4] === 0x65) { v = false; q += 5 }
      else bail()
      if (presence === OMIT && !v) return
      wTag(tag)
      wBool(v)
      return
    }
    case DOUBLE: {
      if (!isNumberStart(b[q])) bail()
      const v = jNumber()
      if (presence === OMIT && v === 0) return
      wTag(tag)
      wDouble(v)
      return
    }
    case BYTES: {
      const v = jString()
      if (presence === OMIT && v === '') return
      wTag(tag)
      wBase64(v)
      return
    }
    default:
      jMessageValue(sub!, tag, presence)
  }
}

/** A message-typed non-null value at q, with its tag and length (as encValue and encMessageValue write it). */
function jMessageValue(m: Msg, tag: number, presence: number): void {
  const b = src
  switch (m.special) {
    case S_NONE: {
      if (b[q] !== 0x7b) bail()
      wTag(tag)
      const at = beginLen()
      jMessage(m)
      endLen(at)
      return
    }
    case S_TIME: {
      const seconds = parseTime(jString())
      if (Number.isNaN(seconds)) bail()
      wTag(tag)
      const at = beginLen()
      wTag(0x08)
      wInt(seconds)
      endLen(at)
      return
    }
    case S_MICROTIME: {
      if (!parseMicroTime(jString())) bail()
      wTag(tag)
      const at = beginLen()
      wTag(0x08)
      wInt(parsedSeconds)
      if (parsedNanos !== 0) { wTag(0x10); wInt(parsedNanos) }
      endLen(at)
      return
    }
    case S_QUANTITY: {
      const c = b[q]
      const v = c === 0x22 ? jString() : isNumberStart(c) ? String(jNumber()) : bail()
      wTag(tag)
      const at = beginLen()
      wTag(0x0a)
      wString(v)
      endLen(at)
      return
    }
    case S_INTORSTRING: {
      const c = b[q]
      wTag(tag)
      const at = beginLen()
      if (c === 0x22) {
        const v = jString()
        wTag(0x08)
        wVarint(1)
        wTag(0x1a)
        wString(v)
      } else if (isNumberStart(c)) {
        const v = jNumber()
        if (!Number.isInteger(v)) bail()
        wTag(0x10)
        wInt(v)
      } else {
        bail()
      }
      endLen(at)
      return
    }
    case S_RAWEXTENSION:
    case S_FIELDSV1:
    case S_JSON: {
      // JSON.stringify of the parsed value: the text itself when it is canonical, as stored objects are.
      wTag(tag)
      const at = beginLen()
      wTag(0x0a)
      const start = q
      const e = skipValue(b, q, true)
      if (e !== REJECT) {
        wRaw(b, start, e)
        q = e
      } else {
        q = jSkip()
        wString(JSON.stringify(JSON.parse(b.toString('utf8', start, q))))
      }
      endLen(at)
      return
    }
    default: {
      // The either-or schema messages, string lists: rare in lists; parsed and written by encValue.
      const start = q
      q = jSkip()
      encValue(m, '', MSG, m, tag, presence, JSON.parse(b.toString('utf8', start, q)))
    }
  }
}

/** One list item from its JSON text (the JSON path, else parsed and written by encMessage). */
function encodeItemJson(list: Msg, itemMsg: Msg, item: Uint8Array | string): void {
  const start = position()
  try {
    src = typeof item === 'string' ? Buffer.from(item, 'utf8') : Buffer.isBuffer(item) ? item : Buffer.from(item.buffer, item.byteOffset, item.byteLength)
    q = 0
    wTag(0x12)
    const at = beginLen()
    jMessage(itemMsg)
    if (q !== src.length) bail()
    endLen(at)
    jsonPathStats.fast++
  } catch {
    rewind(start)
    jsonPathStats.parsed++
    const o = JSON.parse(typeof item === 'string' ? item : Buffer.from(item.buffer, item.byteOffset, item.byteLength).toString('utf8')) as unknown
    if (!isObject(o)) fail(list, 'items', 'expected an object')
    wTag(0x12)
    const at = beginLen()
    encMessage(itemMsg, o)
    endLen(at)
  } finally {
    src = NO_BYTES
  }
}

/**
 * A list from its items' JSON text (stored objects), added in slices: the list keeps its own buffer, so other
 * encodes may run between slices (a large list need not hold the event loop). The bytes are those of encodeList
 * (and encodeObject) of the parsed items.
 */
export class JsonListEncoder {
  /** The list's own buffer and write position. */
  readonly #slot: Slot
  readonly #room: number
  readonly #list: Msg
  readonly #itemMsg: Msg

  /** `sizeHint`: the items' total JSON size, if known (the buffer starts at about the size of the answer). */
  constructor(readonly apiVersion: string, readonly kind: string, metadata: Record<string, any> | undefined, sizeHint = 0) {
    const { list: m, meta, itemMsg } = listMessage(apiVersion, kind)
    this.#list = m
    this.#itemMsg = itemMsg
    this.#room = envelopeRoom(apiVersion, kind)
    this.#slot = { buf: Buffer.allocUnsafe(this.#room + 1024 + Math.ceil(sizeHint * 0.8)), p: this.#room }
    writeInto(this.#slot, () => { if (metadata !== undefined && metadata !== null) encField(m, meta, metadata) })
  }

  /** Appends items[from, to). */
  add(items: ReadonlyArray<Uint8Array | string>, from = 0, to = items.length): void {
    const list = this.#list
    const itemMsg = this.#itemMsg
    writeInto(this.#slot, () => { for (let i = from; i < to; i++) encodeItemJson(list, itemMsg, items[i]) })
  }

  /** The finished body (the encoder is done with after this). */
  finish(): Buffer {
    let result: Buffer = NO_BYTES
    writeInto(this.#slot, () => { result = envelopeBody(this.apiVersion, this.kind, this.#room) })
    this.#slot.buf = NO_BYTES
    return result
  }
}

/** A list from its items' JSON text in one go (see JsonListEncoder). */
export function encodeListJson(apiVersion: string, kind: string, metadata: Record<string, any> | undefined, items: ReadonlyArray<Uint8Array | string>): Buffer {
  let size = 0
  for (const it of items) size += it.length
  const enc = new JsonListEncoder(apiVersion, kind, metadata, size)
  enc.add(items)
  return enc.finish()
}

const API_VERSION_KEY = Buffer.from('"apiVersion"')
const KIND_KEY = Buffer.from('"kind"')

/** The object's apiVersion and kind when they are its first two members (as in stored objects), else null. */
function typeMetaOf(b: Buffer): [string, string] | null {
  if (b[0] !== 0x7b) return null
  let apiVersion: string | null = null
  let kind: string | null = null
  let i = 1
  for (let n = 0; n < 2; n++) {
    const ks = i
    const ke = scanString(b, i)
    if (ke === REJECT || b[ke] !== 0x3a || b[ke + 1] !== 0x22) return null
    const ve = scanString(b, ke + 1)
    if (ve === REJECT || (b[ve] !== 0x2c && b[ve] !== 0x7d)) return null
    const v = stringValue(b, ke + 1, ve, stringFlags)
    if (ke - ks === API_VERSION_KEY.length && b.compare(API_VERSION_KEY, 0, API_VERSION_KEY.length, ks, ke) === 0 && apiVersion === null) apiVersion = v
    else if (ke - ks === KIND_KEY.length && b.compare(KIND_KEY, 0, KIND_KEY.length, ks, ke) === 0 && kind === null) kind = v
    else return null
    i = ve + 1
  }
  return [apiVersion!, kind!]
}

/**
 * An object from its JSON text (a stored object): the bytes of encodeObject of the parsed object, without parsing
 * when its apiVersion and kind come first and the JSON path takes it.
 */
export function encodeObjectJson(json: Uint8Array | string): Buffer {
  const bytes = typeof json === 'string' ? Buffer.from(json, 'utf8') : Buffer.isBuffer(json) ? json : Buffer.from(json.buffer, json.byteOffset, json.byteLength)
  const tm = typeMetaOf(bytes)
  if (tm !== null) {
    try {
      const m = messageFor(tm[0], tm[1])
      const body = encodeEnvelope(tm[0], tm[1], () => {
        src = bytes
        q = 0
        jMessage(m)
        if (q !== src.length) bail()
      })
      jsonPathStats.fast++
      return body
    } catch {
      // parsed below: encodeObject's bytes or its error
    } finally {
      src = NO_BYTES
    }
  }
  jsonPathStats.parsed++
  return encodeObject(JSON.parse(typeof json === 'string' ? json : bytes.toString('utf8')) as Record<string, any>)
}
