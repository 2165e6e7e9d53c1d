// The protobuf codec's message descriptors, built from src/machinery/codecs/protobuf-messages.json (written by
// scripts/gen-protobuf.mjs), the look-up of a kind's message, and the codec's shared constants (field kinds,
// presence, special messages, the envelope's magic).
import { existsSync, readFileSync } from 'node:fs'

export type Obj = Record<string, any>

/** The envelope's magic bytes, `k8s\0`. */
export const MAGIC = [0x6b, 0x38, 0x73, 0x00]

interface Table {
  kinds: Record<string, string>
  anyVersionKinds: Record<string, string>
  messages: Record<string, { special?: string; fields: [number, string, string, string, string][] }>
}

// Field kinds.
export const STRING = 0
export const BYTES = 1
export const BOOL = 2
export const INT32 = 3
export const INT64 = 4
export const DOUBLE = 5
export const MSG = 6
export const MAP = 7

// Presence: how a zero value read from the wire (or found in the object) is treated.
export const OMIT = 0 // omitempty: zero values are dropped
export const KEEP = 1 // Go pointer or no omitempty: kept when present, zero included

// Messages whose JSON form is not an object of their fields.
export const S_NONE = 0
export const S_TIME = 1
export const S_MICROTIME = 2
export const S_FIELDSV1 = 3
export const S_QUANTITY = 4
export const S_INTORSTRING = 5
export const S_RAWEXTENSION = 6
export const S_JSON = 7
export const S_PROPS_OR_ARRAY = 8
export const S_PROPS_OR_BOOL = 9
export const S_PROPS_OR_STRINGS = 10
export const S_STRINGLIST = 11
const SPECIALS: Record<string, number> = {
  time: S_TIME, microtime: S_MICROTIME, fieldsv1: S_FIELDSV1, quantity: S_QUANTITY, intorstring: S_INTORSTRING,
  rawextension: S_RAWEXTENSION, json: S_JSON, propsorarray: S_PROPS_OR_ARRAY, propsorbool: S_PROPS_OR_BOOL,
  propsorstringarray: S_PROPS_OR_STRINGS, stringlist: S_STRINGLIST,
}
/** Fixed property names for the fields of the either-or messages (by field number), used only inside the codec. */
const SPECIAL_FIELD_NAMES: Record<number, Record<number, string>> = {
  [S_PROPS_OR_ARRAY]: { 1: 'schema', 2: 'items' },
  [S_PROPS_OR_BOOL]: { 1: 'allows', 2: 'schema' },
  [S_PROPS_OR_STRINGS]: { 1: 'schema', 2: 'items' },
  [S_STRINGLIST]: { 1: 'items' },
}

const SCALAR_KINDS: Record<string, number> = { string: STRING, bytes: BYTES, bool: BOOL, int32: INT32, int64: INT64, double: DOUBLE }
export const WIRE_OF_KIND = [2, 2, 0, 0, 0, 1, 2, 2]

export class Field {
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

export class Msg {
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
  // Next to this module's folder when run from source; from dist/, the source tree holds the data.
  const here = new URL('../protobuf-messages.json', import.meta.url)
  const url = existsSync(here) ? here : new URL('../../../../../src/machinery/codecs/protobuf-messages.json', import.meta.url)
  return JSON.parse(readFileSync(url, 'utf8')) as Table
}

const messages = new Map<string, Msg>()
const kinds = new Map<string, Msg>()
export const anyVersionKinds = new Map<string, Msg>()

/** Builds the descriptors on first use (processes that never see protobuf never read the table). */
export function init(): void {
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
export function toOrchApiVersion(apiVersion: string): string {
  const slash = apiVersion.indexOf('/')
  if (slash < 0) return apiVersion
  const group = apiVersion.slice(0, slash)
  return group.endsWith('.k8s.io') ? `${group.slice(0, -'.k8s.io'.length)}.orch.io${apiVersion.slice(slash)}` : apiVersion
}

export function messageFor(apiVersion: string, kind: string): Msg {
  init()
  const m = kinds.get(`${toOrchApiVersion(apiVersion)}/${kind}`) ?? anyVersionKinds.get(kind)
  if (!m) throw new Error(`protobuf: no protobuf message for ${apiVersion || '(no apiVersion)'} ${kind || '(no kind)'}`)
  return m
}

/** A list kind's message, its metadata field (1) and its items' message (field 2); throws when the kind is not a list. */
export function listMessage(apiVersion: string, kind: string): { list: Msg; meta: Field; itemMsg: Msg } {
  const m = messageFor(apiVersion, kind)
  const meta = m.byNo[1]
  const itemsField = m.byNo[2]
  if (!kind.endsWith('List') || !meta || meta.json !== 'metadata' || !itemsField || itemsField.json !== 'items' || !itemsField.msg) {
    throw new Error(`protobuf: ${apiVersion} ${kind} is not a list`)
  }
  return { list: m, meta, itemMsg: itemsField.msg }
}
