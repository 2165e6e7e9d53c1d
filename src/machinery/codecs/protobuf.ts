// The protobuf media type: the `k8s\0` + runtime.Unknown envelope, objects and lists to and from their JSON shape, watch frames; driven by protobuf-messages.json.
import { existsSync, readFileSync } from 'node:fs'
import { REJECT, scanNumber, scanString, skipValue, stringFlags, stringValue, numberValue, numberIsIntLiteral } from './json-scan.js'

type Obj = Record<string, any>

// ---------------------------------------------------------------------------------------------------------------
// The message table (src/machinery/codecs/protobuf-messages.json, written by scripts/gen-protobuf.mjs).

interface Table {
  kinds: Record<string, string>
  anyVersionKinds: Record<string, string>
  messages: Record<string, { special?: string; fields: [number, string, string, string, string][] }>
}

// Field kinds.
const STRING = 0
const BYTES = 1
const BOOL = 2
const INT32 = 3
const INT64 = 4
const DOUBLE = 5
const MSG = 6
const MAP = 7

// Presence: how a zero value read from the wire (or found in the object) is treated.
const OMIT = 0 // omitempty: zero values are dropped
const KEEP = 1 // Go pointer or no omitempty: kept when present, zero included

// Messages whose JSON form is not an object of their fields.
const S_NONE = 0
const S_TIME = 1
const S_MICROTIME = 2
const S_FIELDSV1 = 3
const S_QUANTITY = 4
const S_INTORSTRING = 5
const S_RAWEXTENSION = 6
const S_JSON = 7
const S_PROPS_OR_ARRAY = 8
const S_PROPS_OR_BOOL = 9
const S_PROPS_OR_STRINGS = 10
const S_STRINGLIST = 11
const SPECIALS: Record<string, number> = {
  time: S_TIME, microtime: S_MICROTIME, fieldsv1: S_FIELDSV1, quantity: S_QUANTITY, intorstring: S_INTORSTRING,
  rawextension: S_RAWEXTENSION, json: S_JSON, propsorarray: S_PROPS_OR_ARRAY, propsorbool: S_PROPS_OR_BOOL,
  propsorstringarray: S_PROPS_OR_STRINGS, stringlist: S_STRINGLIST,
}
/** Fixed property names for the fields of the either-or messages (by field number), used only inside this module. */
const SPECIAL_FIELD_NAMES: Record<number, Record<number, string>> = {
  [S_PROPS_OR_ARRAY]: { 1: 'schema', 2: 'items' },
  [S_PROPS_OR_BOOL]: { 1: 'allows', 2: 'schema' },
  [S_PROPS_OR_STRINGS]: { 1: 'schema', 2: 'items' },
  [S_STRINGLIST]: { 1: 'items' },
}

const SCALAR_KINDS: Record<string, number> = { string: STRING, bytes: BYTES, bool: BOOL, int32: INT32, int64: INT64, double: DOUBLE }
const WIRE_OF_KIND = [2, 2, 0, 0, 0, 1, 2, 2]

class Field {
  readonly no: number
  readonly json: string
  readonly kind: number
  readonly wire: number
  readonly tag: number
  readonly repeated: boolean
  readonly presence: number
  readonly inline: boolean
  msg: Msg | null = null
  /** For maps: the value's kind and message. */
  valueKind = STRING
  valueMsg: Msg | null = null
  readonly typeName: string
  /** The JSON name's bytes (ASCII), for matching keys in JSON text. */
  readonly jsonBytes: Buffer
  /** Stamp of the JSON object being encoded in which this field was last seen (duplicate keys). */
  seen = 0

  constructor(no: number, json: string, type: string, label: string, flags: string) {
    this.no = no
    this.json = json
    this.typeName = type
    this.repeated = label === 'repeated'
    this.inline = flags.includes('I')
    this.presence = flags.includes('P') || flags.includes('A') ? KEEP : OMIT
    this.kind = label === 'map' ? MAP : SCALAR_KINDS[type] ?? MSG
    this.wire = WIRE_OF_KIND[this.kind]
    this.tag = (no << 3) | this.wire
    this.jsonBytes = Buffer.from(json, 'latin1')
  }
}

/** The hash of a key in JSON text (its bytes) and of a field's JSON name. */
function keyHash(b: Uint8Array, start: number, end: number): number {
  let h = 0
  for (let i = start; i < end; i++) h = (Math.imul(h, 31) + b[i]) | 0
  return h
}

class Msg {
  readonly name: string
  readonly special: number
  fields: Field[] = []
  /** Fields by JSON name (inlined structs excluded). */
  byJson = new Map<string, Field>()
  hasInline = false
  /** Fields by number (holes where a number is not used). */
  byNo: (Field | undefined)[] = []
  /** Fields by key hash (open addressing, inlined structs excluded), for encoding from JSON text. */
  slotHash = new Int32Array(0)
  slotField: (Field | undefined)[] = []
  mask = 0
  constructor(name: string, special: number) {
    this.name = name
    this.special = special
  }
}

function loadTable(): Table {
  // Next to this module when run from source; from dist/, the source tree holds the data.
  const here = new URL('./protobuf-messages.json', import.meta.url)
  const url = existsSync(here) ? here : new URL('../../../../src/machinery/codecs/protobuf-messages.json', import.meta.url)
  return JSON.parse(readFileSync(url, 'utf8')) as Table
}

const messages = new Map<string, Msg>()
const kinds = new Map<string, Msg>()
const anyVersionKinds = new Map<string, Msg>()

/** Builds the descriptors on first use (processes that never see protobuf never read the table). */
function init(): void {
  if (messages.size > 0) return
  const table = loadTable()
  for (const [name, m] of Object.entries(table.messages)) {
    const special = m.special ? SPECIALS[m.special] : S_NONE
    if (special === undefined) throw new Error(`protobuf-messages.json: unknown special ${m.special}`)
    messages.set(name, new Msg(name, special))
  }
  for (const [name, m] of Object.entries(table.messages)) {
    const msg = messages.get(name)!
    const rename = SPECIAL_FIELD_NAMES[msg.special]
    msg.byNo = new Array<Field | undefined>(m.fields.reduce((n, f) => Math.max(n, f[0]), 0) + 1).fill(undefined)
    for (const [no, json, type, label, flags] of m.fields) {
      const f = new Field(no, rename?.[no] ?? json, type, label, flags)
      if (f.kind === MSG) {
        f.msg = messages.get(type) ?? null
        if (!f.msg) throw new Error(`protobuf-messages.json: ${name}.${json}: unknown message ${type}`)
      } else if (f.kind === MAP) {
        const value = type.slice('map<string,'.length, -1)
        f.valueKind = SCALAR_KINDS[value] ?? MSG
        if (f.valueKind === MSG) {
          f.valueMsg = messages.get(value) ?? null
          if (!f.valueMsg) throw new Error(`protobuf-messages.json: ${name}.${json}: unknown message ${value}`)
        }
      }
      msg.fields.push(f)
      msg.byNo[no] = f
      if (f.inline) msg.hasInline = true
      else msg.byJson.set(f.json, f)
    }
    let size = 8
    while (size < msg.byJson.size * 2) size *= 2
    msg.mask = size - 1
    msg.slotHash = new Int32Array(size)
    msg.slotField = new Array<Field | undefined>(size).fill(undefined)
    for (const f of msg.byJson.values()) {
      const h = keyHash(f.jsonBytes, 0, f.jsonBytes.length)
      let slot = h & msg.mask
      while (msg.slotField[slot] !== undefined) slot = (slot + 1) & msg.mask
      msg.slotHash[slot] = h
      msg.slotField[slot] = f
    }
  }
  for (const [k, v] of Object.entries(table.kinds)) kinds.set(k, messages.get(v)!)
  for (const [k, v] of Object.entries(table.anyVersionKinds)) anyVersionKinds.set(k, messages.get(v)!)
}

/** `<x>.k8s.io/<v>` (the upstream spelling clients send) -> `<x>.orch.io/<v>`; anything else unchanged. */
function toOrchApiVersion(apiVersion: string): string {
  const slash = apiVersion.indexOf('/')
  if (slash < 0) return apiVersion
  const group = apiVersion.slice(0, slash)
  return group.endsWith('.k8s.io') ? `${group.slice(0, -'.k8s.io'.length)}.orch.io${apiVersion.slice(slash)}` : apiVersion
}

function messageFor(apiVersion: string, kind: string): Msg {
  init()
  const m = kinds.get(`${toOrchApiVersion(apiVersion)}/${kind}`) ?? anyVersionKinds.get(kind)
  if (!m) throw new Error(`protobuf: no protobuf message for ${apiVersion || '(no apiVersion)'} ${kind || '(no kind)'}`)
  return m
}

// ---------------------------------------------------------------------------------------------------------------
// Writer: one growing scratch buffer. A length-delimited value gets a one-byte length placeholder; the rare value
// of 128 bytes or more is moved up by the extra length bytes once its size is known.

const MAGIC = [0x6b, 0x38, 0x73, 0x00]
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

function wVarint(v: number): void {
  if (p + 10 > out.length) grow(10)
  while (v > 127) {
    out[p++] = (v & 127) | 128
    v = v > 0xffffffff ? Math.floor(v / 128) : v >>> 7
  }
  out[p++] = v
}

/** A signed integer: negative values are the ten-byte two's complement form (int32 and int64 alike). */
function wInt(v: number): void {
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

function wTag(tag: number): void {
  if (tag < 128) {
    if (p + 1 > out.length) grow(1)
    out[p++] = tag
  } else {
    wVarint(tag)
  }
}

function beginLen(): number {
  if (p + 1 > out.length) grow(1)
  return p++
}

function endLen(at: number): void {
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
function wString(s: string): void {
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
function wBase64(s: string): void {
  const max = Math.ceil(s.length / 4) * 3 + 3
  if (p + max + 1 > out.length) grow(max + 1)
  const at = p++
  p += out.write(s, p, max, 'base64')
  endLen(at)
}

function fail(m: Msg, json: string, what: string): never {
  throw new Error(`protobuf: ${m.name}.${json}: ${what}`)
}

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** One value of a field (a singular field, an element of a repeated one, or a map value). */
function encValue(m: Msg, json: string, kind: number, sub: Msg | null, tag: number, presence: number, v: any): void {
  switch (kind) {
    case STRING:
      if (typeof v !== 'string') fail(m, json, `expected a string, got ${typeof v}`)
      if (presence === OMIT && v === '') return
      wTag(tag)
      wString(v)
      return
    case INT32:
    case INT64:
      if (typeof v !== 'number' || !Number.isInteger(v)) fail(m, json, `expected an integer, got ${JSON.stringify(v)}`)
      if (presence === OMIT && v === 0) return
      wTag(tag)
      wInt(v)
      return
    case BOOL:
      if (typeof v !== 'boolean') fail(m, json, `expected a boolean, got ${typeof v}`)
      if (presence === OMIT && !v) return
      wTag(tag)
      if (p + 1 > out.length) grow(1)
      out[p++] = v ? 1 : 0
      return
    case DOUBLE:
      if (typeof v !== 'number') fail(m, json, `expected a number, got ${typeof v}`)
      if (presence === OMIT && v === 0) return
      wTag(tag)
      if (p + 8 > out.length) grow(8)
      out.writeDoubleLE(v, p)
      p += 8
      return
    case BYTES:
      if (typeof v !== 'string') fail(m, json, `expected a base64 string, got ${typeof v}`)
      if (presence === OMIT && v === '') return
      wTag(tag)
      wBase64(v)
      return
    default: {
      wTag(tag)
      const at = beginLen()
      encMessageValue(sub!, json, v)
      endLen(at)
    }
  }
}

/** The body of a message-typed value (without tag and length). */
function encMessageValue(m: Msg, json: string, v: any): void {
  switch (m.special) {
    case S_NONE:
      if (!isObject(v)) fail(m, json, `expected an object, got ${Array.isArray(v) ? 'an array' : typeof v}`)
      encMessage(m, v)
      return
    case S_TIME: {
      const seconds = typeof v === 'string' ? parseTime(v) : NaN
      if (Number.isNaN(seconds)) fail(m, json, `expected an RFC 3339 time, got ${JSON.stringify(v)}`)
      wTag(0x08)
      wInt(seconds)
      return
    }
    case S_MICROTIME: {
      if (typeof v !== 'string' || !parseMicroTime(v)) fail(m, json, `expected an RFC 3339 time, got ${JSON.stringify(v)}`)
      wTag(0x08)
      wInt(parsedSeconds)
      if (parsedNanos !== 0) { wTag(0x10); wInt(parsedNanos) }
      return
    }
    case S_QUANTITY:
      if (typeof v !== 'string' && typeof v !== 'number') fail(m, json, `expected a quantity, got ${typeof v}`)
      wTag(0x0a)
      wString(String(v))
      return
    case S_INTORSTRING:
      if (typeof v === 'number') {
        if (!Number.isInteger(v)) fail(m, json, `expected an integer or a string, got ${v}`)
        wTag(0x10)
        wInt(v)
      } else if (typeof v === 'string') {
        wTag(0x08)
        wVarint(1)
        wTag(0x1a)
        wString(v)
      } else {
        fail(m, json, `expected an integer or a string, got ${typeof v}`)
      }
      return
    case S_RAWEXTENSION:
    case S_FIELDSV1:
    case S_JSON:
      if (v === null && m.special === S_JSON) return // JSON{} marshals as null
      wTag(0x0a)
      wString(JSON.stringify(v))
      return
    case S_PROPS_OR_ARRAY:
      if (Array.isArray(v)) encMessage(m, { items: v })
      else if (isObject(v)) encMessage(m, { schema: v })
      else fail(m, json, 'expected a schema or an array of schemas')
      return
    case S_PROPS_OR_BOOL:
      if (typeof v === 'boolean') encMessage(m, { allows: v })
      else if (isObject(v)) encMessage(m, { allows: true, schema: v })
      else fail(m, json, 'expected a schema or a boolean')
      return
    case S_PROPS_OR_STRINGS:
      if (Array.isArray(v)) encMessage(m, { items: v })
      else if (isObject(v)) encMessage(m, { schema: v })
      else fail(m, json, 'expected a schema or an array of strings')
      return
    case S_STRINGLIST:
      if (!Array.isArray(v)) fail(m, json, 'expected an array of strings')
      encMessage(m, { items: v })
      return
  }
}

function encMessage(m: Msg, o: Obj): void {
  if (m.hasInline) {
    // Field order: the inlined struct's properties sit in the same object.
    const fields = m.fields
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i]
      if (f.inline) {
        wTag(f.tag)
        const at = beginLen()
        encMessage(f.msg!, o)
        endLen(at)
      } else {
        const v = o[f.json]
        if (v !== undefined && v !== null) encField(m, f, v)
      }
    }
    return
  }
  // Key order: cheaper than probing every field of wide messages (PodSpec, Container) for the few that are set.
  const byJson = m.byJson
  for (const k in o) {
    const f = byJson.get(k)
    if (f === undefined) continue
    const v = o[k]
    if (v !== undefined && v !== null) encField(m, f, v)
  }
}

function encField(m: Msg, f: Field, v: any): void {
  if (f.repeated) {
    if (!Array.isArray(v)) fail(m, f.json, `expected an array, got ${typeof v}`)
    for (let j = 0; j < v.length; j++) {
      const x = v[j]
      if (x === null || x === undefined) encNull(f)
      else encValue(m, f.json, f.kind, f.msg, f.tag, KEEP, x)
    }
  } else if (f.kind === MAP) {
    if (!isObject(v)) fail(m, f.json, `expected an object, got ${Array.isArray(v) ? 'an array' : typeof v}`)
    const keys = Object.keys(v)
    if (keys.length > 1) keys.sort()
    const vtag = f.valueKind === MSG ? 0x12 : 0x10 | WIRE_OF_KIND[f.valueKind]
    for (let j = 0; j < keys.length; j++) {
      const x = v[keys[j]]
      if (x === undefined) continue
      wTag(f.tag)
      const at = beginLen()
      wTag(0x0a)
      wString(keys[j])
      if (x !== null) encValue(m, f.json, f.valueKind, f.valueMsg, vtag, KEEP, x)
      endLen(at)
    }
  } else {
    encValue(m, f.json, f.kind, f.msg, f.tag, f.presence, v)
  }
}

/** A null element of a repeated field: the zero value (an empty message: JSON null for apiextensions JSON). */
function encNull(f: Field): void {
  wTag(f.tag)
  if (f.wire === 2) { wVarint(0); return }
  if (f.kind === DOUBLE) {
    if (p + 8 > out.length) grow(8)
    out.writeDoubleLE(0, p)
    p += 8
    return
  }
  wVarint(0)
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

/**
 * An object in its JSON shape (its `apiVersion` and `kind` pick the message; upstream `<x>.k8s.io` spellings are
 * accepted and written as they are) -> the full protobuf body: `k8s\0` + runtime.Unknown{typeMeta, raw}.
 */
export function encodeObject(obj: Record<string, any>): Buffer {
  const apiVersion = obj?.apiVersion
  const kind = obj?.kind
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') throw new Error('protobuf: the object has no apiVersion or kind')
  const m = messageFor(apiVersion, kind)
  return encodeEnvelope(apiVersion, kind, () => encMessage(m, obj))
}

/**
 * A list from its metadata and its items one at a time (for example each parsed from stored JSON as it is
 * reached, so that a large list never exists as one object graph): the same bytes as encodeObject of the list.
 * The iterable must not itself encode with this module while it is read (one scratch buffer).
 */
export function encodeList(apiVersion: string, kind: string, metadata: Record<string, any> | undefined, items: Iterable<Record<string, any>>): Buffer {
  const m = messageFor(apiVersion, kind)
  const meta = m.byNo[1]
  const itemsField = m.byNo[2]
  if (!kind.endsWith('List') || !meta || meta.json !== 'metadata' || !itemsField || itemsField.json !== 'items' || !itemsField.msg) {
    throw new Error(`protobuf: ${apiVersion} ${kind} is not a list`)
  }
  const itemMsg = itemsField.msg
  return encodeEnvelope(apiVersion, kind, () => {
    if (metadata !== undefined && metadata !== null) encField(m, meta, metadata)
    for (const item of items) {
      if (!isObject(item)) fail(m, 'items', 'expected an object')
      wTag(0x12)
      const at = beginLen()
      encMessage(itemMsg, item)
      endLen(at)
    }
  })
}

// ---------------------------------------------------------------------------------------------------------------
// Encoding from JSON text: list items straight from their stored JSON bytes, without JSON.parse. Stored objects are
// JSON.stringify output, so the text is walked once: keys are matched to fields by hash, strings without escapes
// are copied as they are, FieldsV1 and RawExtension values (which protobuf carries as JSON) are copied as the
// canonical text they already are. Whatever this path does not handle exactly as encMessage would (an escaped key,
// whitespace, a value of the wrong type, a duplicate key, anything malformed) abandons the item, which is then parsed
// and encoded by encMessage: the output is the same bytes either way, and errors are encMessage's.

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

/** A key at q: its hash; keyStart/keyEnd delimit its bytes; q moves past the colon. Escaped keys are abandoned. */
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

/** Copies src[start, end) as a length-delimited value. */
function wRaw(start: number, end: number): void {
  const len = end - start
  wVarint(len)
  if (p + len > out.length) grow(len)
  if (len < 64) {
    // Buffer#copy costs more than a short loop.
    const o = out
    const b = src
    let w = p
    for (let i = start; i < end; i++) o[w++] = b[i]
    p = w
    return
  }
  src.copy(out, p, start, end)
  p += len
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
      if (stringFlags === 0) wRaw(start + 1, e - 1)
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
      if (p + 1 > out.length) grow(1)
      out[p++] = v ? 1 : 0
      return
    }
    case DOUBLE: {
      if (!isNumberStart(b[q])) bail()
      const v = jNumber()
      if (presence === OMIT && v === 0) return
      wTag(tag)
      if (p + 8 > out.length) grow(8)
      out.writeDoubleLE(v, p)
      p += 8
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
        wRaw(start, e)
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
  const start = p
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
    p = start
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
  #buf: Buffer
  #p: number
  readonly #room: number
  readonly #list: Msg
  readonly #itemMsg: Msg

  /** `sizeHint`: the items' total JSON size, if known (the buffer starts at about the size of the answer). */
  constructor(readonly apiVersion: string, readonly kind: string, metadata: Record<string, any> | undefined, sizeHint = 0) {
    const m = messageFor(apiVersion, kind)
    const meta = m.byNo[1]
    const itemsField = m.byNo[2]
    if (!kind.endsWith('List') || !meta || meta.json !== 'metadata' || !itemsField || itemsField.json !== 'items' || !itemsField.msg) {
      throw new Error(`protobuf: ${apiVersion} ${kind} is not a list`)
    }
    this.#list = m
    this.#itemMsg = itemsField.msg
    this.#room = envelopeRoom(apiVersion, kind)
    this.#buf = Buffer.allocUnsafe(this.#room + 1024 + Math.ceil(sizeHint * 0.8))
    this.#p = this.#room
    this.#run(() => { if (metadata !== undefined && metadata !== null) encField(m, meta, metadata) })
  }

  /** Runs fn with the list's buffer as the writer's. */
  #run(fn: () => void): void {
    const savedOut = out
    const savedP = p
    out = this.#buf
    p = this.#p
    try {
      fn()
    } finally {
      this.#buf = out
      this.#p = p
      out = savedOut
      p = savedP
    }
  }

  /** Appends items[from, to). */
  add(items: ReadonlyArray<Uint8Array | string>, from = 0, to = items.length): void {
    const list = this.#list
    const itemMsg = this.#itemMsg
    this.#run(() => { for (let i = from; i < to; i++) encodeItemJson(list, itemMsg, items[i]) })
  }

  /** The finished body (the encoder is done with after this). */
  finish(): Buffer {
    let result: Buffer = NO_BYTES
    this.#run(() => { result = out.subarray(writeEnvelopeHeader(this.apiVersion, this.kind, this.#room), p) })
    this.#buf = NO_BYTES
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

/** `k8s\0` + runtime.Unknown{typeMeta{apiVersion, kind}, raw: what writeRaw writes}. */
function encodeEnvelope(apiVersion: string, kind: string, writeRaw: () => void): Buffer {
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
function envelopeRoom(apiVersion: string, kind: string): number {
  return 4 + 1 + 5 + 1 + 5 + Buffer.byteLength(apiVersion, 'utf8') + 1 + 5 + Buffer.byteLength(kind, 'utf8') + 1 + 5
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

// ---------------------------------------------------------------------------------------------------------------
// Reader.

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

// ---------------------------------------------------------------------------------------------------------------
// Times: meta.v1.Time is whole seconds (`2006-01-02T15:04:05Z`), MicroTime keeps microseconds (`….000000Z`).

const DIGITS2: string[] = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'))

/** `YYYY-MM-DDTHH:MM:SS` (UTC) of seconds since the epoch, for years 0000-9999 (calendar arithmetic, no Date). */
function formatSeconds(seconds: number): string {
  const days = Math.floor(seconds / 86400)
  let rem = seconds - days * 86400
  const hh = Math.floor(rem / 3600)
  rem -= hh * 3600
  const mm = Math.floor(rem / 60)
  const ss = rem - mm * 60
  // days -> civil date (H. Hinnant's algorithm).
  const z = days + 719468
  const era = Math.floor(z / 146097)
  const doe = z - era * 146097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1
  const m = mp < 10 ? mp + 3 : mp - 9
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0)
  if (y < 0 || y > 9999) {
    const iso = new Date(seconds * 1000).toISOString()
    return iso.slice(0, iso.length - 5)
  }
  return `${DIGITS2[Math.floor(y / 100)]}${DIGITS2[y % 100]}-${DIGITS2[m]}-${DIGITS2[d]}T${DIGITS2[hh]}:${DIGITS2[mm]}:${DIGITS2[ss]}`
}

let lastSeconds = NaN
let lastTime = ''

function formatTime(seconds: number): string {
  if (seconds !== lastSeconds) {
    lastTime = formatSeconds(seconds) + 'Z'
    lastSeconds = seconds
  }
  return lastTime
}

function formatMicroTime(seconds: number, nanos: number): string {
  return `${formatSeconds(seconds)}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`
}

const TIME_RE = /^(\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?([Zz]|[+-]\d\d:\d\d)$/

function digit(s: string, i: number): number {
  const c = s.charCodeAt(i) - 48
  return c >= 0 && c <= 9 ? c : NaN
}

/** Seconds since the epoch of `YYYY-MM-DDTHH:MM:SS` at the start of s (NaN when it is not that). */
function civilSeconds(s: string): number {
  if (s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58) return NaN
  const t = s.charCodeAt(10)
  if (t !== 84 && t !== 116) return NaN
  let y = digit(s, 0) * 1000 + digit(s, 1) * 100 + digit(s, 2) * 10 + digit(s, 3)
  const m = digit(s, 5) * 10 + digit(s, 6)
  const d = digit(s, 8) * 10 + digit(s, 9)
  const hh = digit(s, 11) * 10 + digit(s, 12)
  const mm = digit(s, 14) * 10 + digit(s, 15)
  const ss = digit(s, 17) * 10 + digit(s, 18)
  if (!(m >= 1 && m <= 12 && d >= 1 && d <= 31 && hh <= 23 && mm <= 59 && ss <= 59)) return NaN
  // civil date -> days (H. Hinnant's algorithm).
  if (m <= 2) y -= 1
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return (era * 146097 + doe - 719468) * 86400 + hh * 3600 + mm * 60 + ss
}

/** Seconds since the epoch of an RFC 3339 time, fractions dropped (NaN when it is not one). */
function parseTime(s: string): number {
  if (s.length === 20 && (s.charCodeAt(19) === 90 || s.charCodeAt(19) === 122)) return civilSeconds(s)
  const m = TIME_RE.exec(s)
  if (!m) return NaN
  return Math.floor(Date.parse(m[1] + m[3]) / 1000)
}

let parsedSeconds = 0
let parsedNanos = 0

function parseMicroTime(s: string): boolean {
  const m = TIME_RE.exec(s)
  if (!m) return false
  const sec = m[3] === 'Z' || m[3] === 'z' ? civilSeconds(m[1]) : Math.floor(Date.parse(m[1] + m[3]) / 1000)
  if (Number.isNaN(sec)) return false
  parsedSeconds = sec
  parsedNanos = m[2] ? Number(m[2].padEnd(9, '0')) : 0
  return true
}
