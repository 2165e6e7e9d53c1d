// The structural schema of a custom resource version: ajv validation with upstream's texts and paths (kube-openapi's
// messages, apiextensions' field error types), string formats, defaults, and embedded resources.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import type { Obj } from './define.js'
import type { SchemaNode } from './schema.js'
import { GoValue, fieldInvalid, type FieldError } from '../machinery/errors.js'
import { re2RegExp } from '../machinery/re2.js'

export const OBJECT_META = '#/definitions/io.orch.apimachinery.pkg.apis.meta.v1.ObjectMeta'

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

// ---- schema → ajv ----

/** A structural schema as JSON Schema for ajv: our extensions, descriptions, defaults and formats left out; nullable as a null type. */
function toAjv(n: unknown): unknown {
  if (Array.isArray(n)) return n.map(toAjv)
  if (!isObj(n)) return n
  if (n['x-orch-int-or-string'] === true) {
    const out: Obj = { type: ['integer', 'string'] }
    return out
  }
  const out: Obj = {}
  for (const [k, v] of Object.entries(n)) {
    if (k.startsWith('x-') || k === 'description' || k === 'default' || k === 'example' || k === 'externalDocs' || k === 'nullable' || k === 'title' || k === '$schema' || k === 'id') continue
    // Formats upstream checks on strings (others are left unchecked, as its StripUnsupportedFormats does).
    if (k === 'format') { if (typeof v === 'string' && FORMAT_NAMES.has(v) && n.type === 'string') out.orchFormat = v; continue }
    if (k === 'properties' || k === 'patternProperties' || k === 'definitions') {
      out[k] = isObj(v) ? Object.fromEntries(Object.entries(v).map(([pk, pv]) => [pk, toAjv(pv)])) : v
    } else out[k] = toAjv(v)
  }
  // A type outside OpenAPI's (kept by a CRD stored before it was refused) matches nothing, as kube-openapi's check.
  if (typeof out.type === 'string' && !JSON_TYPES.has(out.type)) { out.orchType = out.type; delete out.type }
  if (n.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null']
  if (n.nullable === true && Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null]
  return out
}

const JSON_TYPES = new Set(['array', 'boolean', 'integer', 'number', 'object', 'string', 'null'])

function jsonTypeName(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'array'
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number'
  return typeof v
}

/** `/spec/items/0/name` → `spec.items[0].name`. */
function pathOf(obj: unknown, instancePath: string): { path: string; value: unknown } {
  let out = ''
  let cur: any = obj
  if (instancePath === '') return { path: '', value: obj }
  for (const raw of instancePath.split('/').slice(1)) {
    const s = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    if (Array.isArray(cur)) out += `[${s}]`
    else out += out === '' ? s : `.${s}`
    cur = cur?.[s]
  }
  return { path: out, value: cur }
}

function join(path: string, child: string): string { return path === '' ? child : `${path}.${child}` }

/** Go's %v of a JSON number (an integer prints without a fraction). */
function num(v: unknown): string { return String(v) }

/** One ajv error as upstream's field error of a custom resource (kube-openapi's texts, apiextensions' field types). */
export function toFieldError(obj: unknown, e: ErrorObject): FieldError | undefined {
  const { path, value } = pathOf(obj, e.instancePath)
  const p = e.params as Record<string, any>
  const at = path === '' ? '' : path
  switch (e.keyword) {
    case 'type': {
      const want = ([] as string[]).concat(p.type).filter((t) => t !== 'null').join(',')
      const actual = jsonTypeName(value)
      return { type: 'FieldValueTypeInvalid', field: at, value: actual, detail: `${at} in body must be of type ${want}: ${JSON.stringify(actual)}` }
    }
    case 'required': {
      const field = join(at, String(p.missingProperty))
      return { type: 'FieldValueRequired', field, detail: '' }
    }
    case 'enum':
      return { type: 'FieldValueNotSupported', field: at, value, supported: (p.allowedValues as unknown[]).map((x) => (typeof x === 'string' ? x : JSON.stringify(x))) }
    case 'pattern':
      return fieldInvalid(at, value, `${at} in body should match '${p.pattern}'`)
    case 'maximum': return fieldInvalid(at, value, `${at} in body should be less than or equal to ${num(p.limit)}`)
    case 'exclusiveMaximum': return fieldInvalid(at, value, `${at} in body should be less than ${num(p.limit)}`)
    case 'minimum': return fieldInvalid(at, value, `${at} in body should be greater than or equal to ${num(p.limit)}`)
    case 'exclusiveMinimum': return fieldInvalid(at, value, `${at} in body should be greater than ${num(p.limit)}`)
    case 'multipleOf': return fieldInvalid(at, value, `${at} in body should be a multiple of ${num(p.multipleOf)}`)
    case 'maxLength': return { type: 'FieldValueTooLong', field: at, value, max: p.limit }
    case 'minLength': return fieldInvalid(at, value, `${at} in body should be at least ${p.limit} chars long`)
    case 'maxItems': return { type: 'FieldValueTooMany', field: at, value: Array.isArray(value) ? value.length : 0, max: p.limit }
    case 'minItems': return fieldInvalid(at, Array.isArray(value) ? value.length : value, `${at} in body should have at least ${p.limit} items`)
    case 'uniqueItems': return { type: 'FieldValueDuplicate', field: at, value: Array.isArray(value) ? value[p.j] : value }
    case 'maxProperties': return { type: 'FieldValueTooMany', field: at, value: isObj(value) ? Object.keys(value).length : 0, max: p.limit }
    case 'minProperties': return fieldInvalid(at, isObj(value) ? Object.keys(value).length : value, `${at} in body should have at least ${p.limit} properties`)
    case 'anyOf': case 'oneOf': case 'allOf': case 'not': case 'if': return undefined
    case 'orchType': {
      const actual = jsonTypeName(value)
      return { type: 'FieldValueTypeInvalid', field: at, value: actual, detail: `${at} in body must be of type ${String(p.type)}: ${JSON.stringify(actual)}` }
    }
    case 'orchFormat': {
      const f = String((e.params as { format?: string }).format ?? '')
      return { type: 'FieldValueTypeInvalid', field: at, value, detail: `${at} in body must be of type ${f}: ${JSON.stringify(value)}` }
    }
    default: return fieldInvalid(at, value, e.message ?? e.keyword)
  }
}

// Patterns are Go (RE2) regular expressions, matched through their JS translation (never a throw on a pattern JS lacks).
const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false, code: { regExp: re2RegExp } })

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/
function isIPv6(s: string): boolean {
  if (!/^[0-9a-fA-F:.]+$/.test(s) || !s.includes(':')) return false
  const parts = s.split('::')
  if (parts.length > 2) return false
  const groups = (x: string) => (x === '' ? [] : x.split(':'))
  const all = [...groups(parts[0]), ...(parts.length === 2 ? groups(parts[1]) : [])]
  let count = all.length
  if (all.length > 0 && all[all.length - 1].includes('.')) { if (!IPV4.test(all[all.length - 1])) return false; count++ ; all.pop() }
  if (!all.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return false
  return parts.length === 2 ? count < 8 : count === 8
}
/** The string formats checked, by name (strfmt's default registry, as upstream's CRD validation keeps it). */
const FORMATS: Record<string, (s: string) => boolean> = {
  'date-time': (s) => /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(s) && !Number.isNaN(Date.parse(s.replace(' ', 'T'))),
  datetime: (s) => FORMATS['date-time'](s),
  date: (s) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)),
  uuid: (s) => /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/.test(s),
  byte: (s) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s),
  ipv4: (s) => IPV4.test(s),
  ipv6: isIPv6,
  cidr: (s) => { const [ip, bits, more] = s.split('/'); if (bits === undefined || more !== undefined || !/^\d{1,3}$/.test(bits)) return false; return IPV4.test(ip) ? Number(bits) <= 32 : isIPv6(ip) && Number(bits) <= 128 },
  mac: (s) => /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$/.test(s),
  hostname: (s) => s.length <= 255 && /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/.test(s),
  email: (s) => /^[^\s@]+@[^\s@]+$/.test(s),
}
const FORMAT_NAMES = new Set(Object.keys(FORMATS))
ajv.addKeyword({
  keyword: 'orchFormat', type: 'string', errors: true, schemaType: 'string',
  validate: function check(format: string, data: string): boolean {
    const ok = FORMATS[format]?.(data) ?? true
    if (!ok) (check as unknown as { errors: unknown[] }).errors = [{ keyword: 'orchFormat', message: format, params: { format } }]
    return ok
  },
})

ajv.addKeyword({
  keyword: 'orchType', errors: true, schemaType: 'string',
  validate: function check(type: string): boolean {
    (check as unknown as { errors: unknown[] }).errors = [{ keyword: 'orchType', message: type, params: { type } }]
    return false
  },
})

export function compile(schema: SchemaNode, root = true): ValidateFunction | undefined {
  const s = toAjv(schema) as Obj
  if (!root) return compileOnce(s)
  // metadata is ObjectMeta whatever the schema says (upstream checks it as for every type); apiVersion and kind too.
  if (isObj(s.properties)) {
    s.properties = { ...s.properties }
    delete s.properties.metadata
    delete s.properties.apiVersion
    delete s.properties.kind
  }
  if (Array.isArray(s.required)) s.required = s.required.filter((r: unknown) => r !== 'metadata' && r !== 'apiVersion' && r !== 'kind')
  return compileOnce(s)
}

/** A validator of its own: ajv forgets the schema at once (its cache would otherwise keep every CRD version ever seen). */
function compileOnce(s: Obj): ValidateFunction | undefined {
  try {
    return ajv.compile(s)
  } catch {
    return undefined
  } finally {
    ajv.removeSchema(s)
  }
}

// ---- defaults ----

/** Structural defaulting: a property with a `default` the object lacks is set, recursively, in objects and list items. */
export function applyDefaults(v: unknown, s: SchemaNode | undefined): void {
  if (!isObj(s)) return
  if (Array.isArray(v)) {
    if (isObj(s.items)) for (const x of v) applyDefaults(x, s.items)
    return
  }
  if (!isObj(v)) return
  if (isObj(s.properties)) {
    for (const [k, ps] of Object.entries(s.properties as Record<string, SchemaNode>)) {
      if (!isObj(ps)) continue
      if ((v[k] === undefined || (v[k] === null && ps.nullable !== true)) && ps.default !== undefined) v[k] = structuredClone(ps.default)
      if (v[k] !== undefined) applyDefaults(v[k], ps)
    }
  }
  if (isObj(s.additionalProperties)) for (const k of Object.keys(v)) if (!isObj(s.properties) || !(k in s.properties)) applyDefaults(v[k], s.additionalProperties)
}

// ---- x-orch-embedded-resource ----

/**
 * The schema as the type tree walks it: an embedded resource declares apiVersion, kind and metadata (ObjectMeta)
 * whatever its properties say, so they are kept and its metadata is pruned as any object's.
 */
export function withEmbedded(n: unknown): any {
  if (Array.isArray(n)) return n.map(withEmbedded)
  if (!isObj(n)) return n
  const out: Obj = {}
  for (const [k, v] of Object.entries(n)) {
    out[k] = k === 'properties' && isObj(v) ? Object.fromEntries(Object.entries(v).map(([pk, pv]) => [pk, withEmbedded(pv)])) : k === 'default' || k === 'enum' || k === 'example' ? v : withEmbedded(v)
  }
  if (n['x-orch-embedded-resource'] === true) {
    out.type = 'object'
    out.properties = { ...(isObj(out.properties) ? out.properties : {}), apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { $ref: OBJECT_META } }
  }
  return out
}

export function hasEmbedded(s: unknown): boolean {
  if (Array.isArray(s)) return s.some(hasEmbedded)
  if (!isObj(s)) return false
  if (s['x-orch-embedded-resource'] === true) return true
  return Object.entries(s).some(([k, v]) => k !== 'default' && k !== 'example' && k !== 'enum' && typeof v === 'object' && hasEmbedded(v))
}

/** upstream's embedded resource checks: apiVersion and kind must be there (metadata may be left out). */
export function embeddedErrors(s: unknown, v: unknown, path: string, errs: FieldError[]): void {
  if (!isObj(s) || v === undefined || v === null) return
  if (s['x-orch-embedded-resource'] === true && isObj(v)) {
    for (const k of ['apiVersion', 'kind']) {
      const field = join(path, k)
      if (v[k] === undefined) errs.push({ type: 'FieldValueRequired', field, detail: 'must not be empty' })
      else if (typeof v[k] !== 'string') errs.push(fieldInvalid(field, v[k], 'must be a string'))
      else if (v[k] === '') errs.push(fieldInvalid(field, '', 'must not be empty'))
    }
  }
  if (Array.isArray(v)) {
    if (isObj(s.items)) v.forEach((x, i) => embeddedErrors(s.items, x, `${path}[${i}]`, errs))
    return
  }
  if (!isObj(v)) return
  if (isObj(s.properties)) for (const [k, ps] of Object.entries(s.properties)) if (v[k] !== undefined) embeddedErrors(ps, v[k], join(path, k), errs)
  if (isObj(s.additionalProperties)) for (const k of Object.keys(v)) if (!isObj(s.properties) || !(k in s.properties)) embeddedErrors(s.additionalProperties, v[k], `${path}[${k}]`, errs)
}

/** Whether any node of the schema has a default. */
export function hasDefaults(s: unknown): boolean {
  if (Array.isArray(s)) return s.some(hasDefaults)
  if (!isObj(s)) return false
  if (s.default !== undefined) return true
  return Object.entries(s).some(([k, v]) => k !== 'default' && k !== 'example' && k !== 'enum' && typeof v === 'object' && hasDefaults(v))
}


// ---- list sets and maps ----

/** Whether any node of the schema is a set or a map list (only then is an object walked for duplicates). */
export function hasListSetsOrMaps(s: unknown): boolean {
  if (Array.isArray(s)) return s.some(hasListSetsOrMaps)
  if (!isObj(s)) return false
  if (s['x-orch-list-type'] === 'set' || s['x-orch-list-type'] === 'map') return true
  return Object.entries(s).some(([k, v]) => k !== 'default' && k !== 'example' && k !== 'enum' && typeof v === 'object' && hasListSetsOrMaps(v))
}

/** Go's %#v of a decoded JSON scalar or key map (int64 for integers, as unstructured data holds them). */
export function goSharp(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v)
  if (v === null || v === undefined) return 'interface {}(nil)'
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(v)
  if (typeof v === 'boolean') return String(v)
  if (Array.isArray(v)) return `[]interface {}{${v.map(goSharp).join(', ')}}`
  return `map[string]interface {}{${Object.keys(v as Obj).sort().map((k) => `${JSON.stringify(k)}:${goSharp((v as Obj)[k])}`).join(', ')}}`
}

/** upstream's ValidateListSetsAndMaps: a set holds no value twice, a map list no key tuple twice. */
export function listErrors(s: unknown, v: unknown, path: string, errs: FieldError[]): void {
  if (!isObj(s) || v === undefined || v === null) return
  if (Array.isArray(v)) {
    const lt = s['x-orch-list-type']
    if (lt === 'set' || lt === 'map') {
      const keys: string[] = lt === 'map' && Array.isArray(s['x-orch-list-map-keys']) ? s['x-orch-list-map-keys'] : []
      const seen = new Set<string>()
      v.forEach((x, i) => {
        let id: unknown = x
        if (lt === 'map') {
          if (!isObj(x)) return
          const k: Obj = {}
          for (const key of keys) if (x[key] !== undefined) k[key] = x[key]
          id = k
        }
        const text = goSharp(id)
        if (seen.has(text)) errs.push({ type: 'FieldValueDuplicate', field: `${path}[${i}]`, value: new GoValue(text) })
        else seen.add(text)
      })
    }
    if (isObj(s.items)) v.forEach((x, i) => listErrors(s.items, x, `${path}[${i}]`, errs))
    return
  }
  if (!isObj(v)) return
  if (isObj(s.properties)) for (const [k, ps] of Object.entries(s.properties)) if (v[k] !== undefined) listErrors(ps, v[k], join(path, k), errs)
  if (isObj(s.additionalProperties)) for (const k of Object.keys(v)) if (!isObj(s.properties) || !(k in s.properties)) listErrors(s.additionalProperties, v[k], `${path}[${k}]`, errs)
}
