// Object graphs (objects in their JSON shape, parsed) to protobuf: one message after another, by the descriptors in
// tables.ts, through the writer.
import {
  type Field, type Msg, type Obj, messageFor, listMessage, WIRE_OF_KIND,
  STRING, BYTES, BOOL, INT32, INT64, DOUBLE, MSG, MAP, OMIT, KEEP,
  S_NONE, S_TIME, S_MICROTIME, S_FIELDSV1, S_QUANTITY, S_INTORSTRING, S_RAWEXTENSION, S_JSON,
  S_PROPS_OR_ARRAY, S_PROPS_OR_BOOL, S_PROPS_OR_STRINGS, S_STRINGLIST,
} from './tables.js'
import { beginLen, encodeEnvelope, endLen, wBase64, wBool, wDouble, wInt, wString, wTag, wVarint } from './writer.js'
import { parseMicroTime, parsedNanos, parsedSeconds, parseTime } from './time.js'

export function fail(m: Msg, json: string, what: string): never {
  throw new Error(`protobuf: ${m.name}.${json}: ${what}`)
}

export function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** One value of a field (a singular field, an element of a repeated one, or a map value). */
export function encValue(m: Msg, json: string, kind: number, sub: Msg | null, tag: number, presence: number, v: any): void {
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
      wBool(v)
      return
    case DOUBLE:
      if (typeof v !== 'number') fail(m, json, `expected a number, got ${typeof v}`)
      if (presence === OMIT && v === 0) return
      wTag(tag)
      wDouble(v)
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

export function encMessage(m: Msg, o: Obj): void {
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

export function encField(m: Msg, f: Field, v: any): void {
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
export function encNull(f: Field): void {
  wTag(f.tag)
  if (f.wire === 2) { wVarint(0); return }
  if (f.kind === DOUBLE) wDouble(0)
  else wVarint(0)
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
 * The iterable must not itself encode protobuf while it is read (one scratch buffer).
 */
export function encodeList(apiVersion: string, kind: string, metadata: Record<string, any> | undefined, items: Iterable<Record<string, any>>): Buffer {
  const { list: m, meta, itemMsg } = listMessage(apiVersion, kind)
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
