// Custom resource types: the ResolvedDefinitions of an Established CustomResourceDefinition (one per served version),
// with its structural schema as the type tree (pruning, apply), an ajv validator whose errors read as upstream's, the
// schema's defaults, printer columns, selectable fields and the status / scale sub-resources.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import { ALL_VERBS, resolveDefinition, type Obj, type ResolvedDefinition, type TableColumn, type CustomInfo } from './define.js'
import type { SchemaNode } from './schema.js'
import { loadDefinitions } from './schema.js'
import { typeFromSchema } from '../machinery/patch/schema-walk.js'
import { fieldInvalid, type FieldError } from '../machinery/errors.js'
import { evalJsonPath, parseJsonPath } from './jsonpath.js'
import { NAME_DESCRIPTION, parseTime, since } from './resources/_printers.js'
import { blockingNote, hasRules, validateRules } from './custom-cel.js'

export const CRD_GROUP = 'apiextensions.orch.io'
export const CRD_RESOURCE = 'customresourcedefinitions'
/** upstream's customresourcecleanup.apiextensions.k8s.io, in our brand. */
export const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.orch.io'

const OBJECT_META = '#/definitions/io.orch.apimachinery.pkg.apis.meta.v1.ObjectMeta'

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

export function conditionOf(crd: Obj, type: string): Obj | undefined {
  const cs = crd.status?.conditions
  return Array.isArray(cs) ? cs.find((c: Obj) => isObj(c) && c.type === type) : undefined
}

export function conditionTrue(crd: Obj, type: string): boolean { return conditionOf(crd, type)?.status === 'True' }

/**
 * upstream's SetCRDCondition: a condition of a new status replaces the old one; lastTransitionTime moves only when
 * the status does.
 */
export function setCondition(status: Obj, c: { type: string; status: string; reason: string; message: string }, now: string): boolean {
  const list: Obj[] = Array.isArray(status.conditions) ? status.conditions : (status.conditions = [])
  const old = list.find((x) => isObj(x) && x.type === c.type)
  if (old === undefined) {
    list.push({ type: c.type, status: c.status, lastTransitionTime: now, reason: c.reason, message: c.message })
    return true
  }
  if (old.status === c.status && old.reason === c.reason && old.message === c.message) return false
  if (old.status !== c.status) old.lastTransitionTime = now
  old.status = c.status
  old.reason = c.reason
  old.message = c.message
  return true
}

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
  if (n.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null']
  if (n.nullable === true && Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null]
  return out
}

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
function toFieldError(obj: unknown, e: ErrorObject): FieldError | undefined {
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
    case 'orchFormat': {
      const f = String((e.params as { format?: string }).format ?? '')
      return { type: 'FieldValueTypeInvalid', field: at, value, detail: `${at} in body must be of type ${f}: ${JSON.stringify(value)}` }
    }
    default: return fieldInvalid(at, value, e.message ?? e.keyword)
  }
}

const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false })

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

function compile(schema: SchemaNode, root = true): ValidateFunction | undefined {
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
function withEmbedded(n: unknown): any {
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

function hasEmbedded(s: unknown): boolean {
  if (Array.isArray(s)) return s.some(hasEmbedded)
  if (!isObj(s)) return false
  if (s['x-orch-embedded-resource'] === true) return true
  return Object.entries(s).some(([k, v]) => k !== 'default' && k !== 'example' && k !== 'enum' && typeof v === 'object' && hasEmbedded(v))
}

/** upstream's embedded resource checks: apiVersion and kind must be there (metadata may be left out). */
function embeddedErrors(s: unknown, v: unknown, path: string, errs: FieldError[]): void {
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
function hasDefaults(s: unknown): boolean {
  if (Array.isArray(s)) return s.some(hasDefaults)
  if (!isObj(s)) return false
  if (s.default !== undefined) return true
  return Object.entries(s).some(([k, v]) => k !== 'default' && k !== 'example' && k !== 'enum' && typeof v === 'object' && hasDefaults(v))
}

// ---- printer columns ----

const COLUMN_TYPES = new Set(['string', 'integer', 'number', 'boolean', 'date'])

function columnsOf(version: Obj): TableColumn[] {
  const cols: TableColumn[] = [{ name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, cell: (o) => o.metadata?.name ?? '' }]
  const given: Obj[] = Array.isArray(version.additionalPrinterColumns) ? version.additionalPrinterColumns.filter(isObj) : []
  const defs = given.length > 0 ? given : [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }]
  for (const c of defs) {
    const type = COLUMN_TYPES.has(c.type) ? c.type : 'string'
    const path = typeof c.jsonPath === 'string' ? c.jsonPath : ''
    const compiled = parseJsonPath(path)
    cols.push({
      name: String(c.name ?? ''), type, format: typeof c.format === 'string' ? c.format : '',
      description: typeof c.description === 'string' && c.description !== '' ? c.description : `Custom resource definition column (in JSONPath format): ${path}`,
      priority: typeof c.priority === 'number' ? c.priority : 0,
      printerColumn: true,
      cell: (o, now) => cellOf(type, compiled ? evalJsonPath(compiled, o) : [], now),
    })
  }
  return cols
}

/** A cell as upstream's table convertor makes it: the first result, as text for string columns, typed otherwise. */
function cellOf(type: string, results: unknown[], now: number): unknown {
  if (results.length === 0 || results[0] === undefined) return null
  const v = results[0]
  switch (type) {
    case 'string': return typeof v === 'string' ? v : typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)
    case 'integer': return typeof v === 'number' ? Math.trunc(v) : null
    case 'number': return typeof v === 'number' ? v : null
    case 'boolean': return typeof v === 'boolean' ? v : null
    // upstream's ConvertToHumanReadableDateType: the age, `<invalid>` for what is not a time.
    case 'date': return typeof v === 'string' ? (parseTime(v) === undefined ? '<invalid>' : since(v, now)) : null
  }
  return null
}

// ---- OpenAPI ----

/** upstream's definition name of a custom resource: the group reversed, the version, the kind (`com.example.stable.v1.CronTab`). */
function schemaName(group: string, version: string, kind: string): string {
  return `${group.split('.').reverse().join('.')}.${version}.${kind}`
}

const LIST_META = '#/definitions/io.orch.apimachinery.pkg.apis.meta.v1.ListMeta'
const API_VERSION_DESCRIPTION = 'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources'
const KIND_DESCRIPTION = 'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds'

/** The OpenAPI definitions of custom resource types (each kind and its list), to add to the built-in ones. */
export function customDefinitions(defs: ResolvedDefinition[]): Record<string, SchemaNode> {
  const out: Record<string, SchemaNode> = {}
  for (const d of defs) {
    if (d.custom === undefined) continue
    const schema = d.custom.schema
    out[d.schemaRef] = {
      ...schema,
      type: 'object',
      properties: {
        apiVersion: { description: API_VERSION_DESCRIPTION, type: 'string' },
        kind: { description: KIND_DESCRIPTION, type: 'string' },
        metadata: { $ref: OBJECT_META },
        ...(isObj(schema.properties) ? Object.fromEntries(Object.entries(schema.properties).filter(([k]) => k !== 'apiVersion' && k !== 'kind' && k !== 'metadata')) : {}),
      },
    }
    out[`${d.schemaRef}List`] = {
      description: `${d.kind}List is a list of ${d.kind}`,
      type: 'object', required: ['items'],
      properties: {
        apiVersion: { description: API_VERSION_DESCRIPTION, type: 'string' },
        items: { description: `List of ${d.resource}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`, type: 'array', items: { $ref: `#/definitions/${d.schemaRef}` } },
        kind: { description: KIND_DESCRIPTION, type: 'string' },
        metadata: { $ref: LIST_META },
      },
      'x-orch-group-version-kind': [{ group: d.group, kind: d.listKind, version: d.version }],
    }
  }
  return out
}

// ---- the definitions ----

function stripDot(p: unknown): string { return typeof p === 'string' ? p.replace(/^\./, '') : '' }

/** The served versions of an Established CRD as ResolvedDefinitions (none while it is not Established). */
export function definitionsOf(crd: Obj): ResolvedDefinition[] {
  if (!conditionTrue(crd, 'Established')) return []
  const spec = crd.spec
  if (!isObj(spec) || typeof spec.group !== 'string') return []
  const names = isObj(crd.status?.acceptedNames) ? crd.status.acceptedNames : {}
  if (typeof names.plural !== 'string' || names.plural === '' || typeof names.kind !== 'string' || names.kind === '') return []
  const versions: Obj[] = Array.isArray(spec.versions) ? spec.versions.filter(isObj) : []
  const storage = versions.find((v) => v.storage === true)?.name ?? ''
  const terminating = conditionTrue(crd, 'Terminating')
  const out: ResolvedDefinition[] = []
  for (const v of versions) {
    if (v.served !== true || typeof v.name !== 'string') continue
    out.push(versionDefinition(crd, spec, names, v, storage, terminating))
  }
  return out
}

function versionDefinition(crd: Obj, spec: Obj, names: Obj, v: Obj, storage: string, terminating: boolean): ResolvedDefinition {
  const schema: SchemaNode = isObj(v.schema?.openAPIV3Schema) ? v.schema.openAPIV3Schema : { type: 'object', 'x-orch-preserve-unknown-fields': true }
  const rootProps = isObj(schema.properties) ? schema.properties : {}
  // The root as the pipeline walks it: apiVersion, kind and metadata (ObjectMeta) always declared.
  const root: SchemaNode = {
    ...schema, type: 'object',
    properties: { ...withEmbedded(rootProps), apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { $ref: OBJECT_META } },
  }
  const embedded = hasEmbedded(schema)
  const tree = typeFromSchema(root, loadDefinitions())
  const validator = compile(schema)
  const subs: Obj = isObj(v.subresources) ? v.subresources : {}
  const hasStatus = isObj(subs.status)
  const scaleSpec = isObj(subs.scale) ? subs.scale : undefined
  const subresources: Array<'status' | 'scale'> = []
  if (hasStatus) subresources.push('status')
  if (scaleSpec) subresources.push('scale')
  const fieldSelectors: Record<string, (o: Obj) => string> = {}
  for (const f of Array.isArray(v.selectableFields) ? v.selectableFields : []) {
    if (!isObj(f) || typeof f.jsonPath !== 'string') continue
    const parsed = parseJsonPath(f.jsonPath)
    fieldSelectors[stripDot(f.jsonPath)] = (o) => {
      const r = parsed ? evalJsonPath(parsed, o)[0] : undefined
      return r === undefined || r === null || typeof r === 'object' ? '' : String(r)
    }
  }
  const rules = hasRules(schema)
  // The status sub-resource checks status against its own schema, paths under `status` (upstream's statusSchemaValidator).
  const statusSchema = hasStatus && isObj(schema.properties) && isObj(schema.properties.status) ? schema.properties.status : undefined
  const statusValidator = statusSchema ? compile(statusSchema, false) : undefined
  const validateStatus = (o: Obj, old: Obj): FieldError[] => {
    const errs: FieldError[] = []
    if (statusValidator && o.status !== undefined && !statusValidator(o.status)) {
      for (const e of statusValidator.errors ?? []) {
        const fe = toFieldError(o.status, e)
        if (fe) { fe.field = fe.field === '' ? 'status' : fe.field.startsWith('[') ? `status${fe.field}` : `status.${fe.field}`; errs.push(fe) }
      }
    }
    if (scaleSpec) errs.push(...scaleErrors(o, scaleSpec, true))
    if (rules) {
      const note = blockingNote(errs)
      if (note) errs.push(note)
      else validateRules(schema, o, old, '', errs)
    }
    return errs
  }
  const validate = (o: Obj, old?: Obj): FieldError[] => {
    const errs: FieldError[] = []
    if (validator && !validator(o)) {
      for (const e of validator.errors ?? []) {
        const fe = toFieldError(o, e)
        if (fe) errs.push(fe)
      }
    }
    if (scaleSpec) errs.push(...scaleErrors(o, scaleSpec))
    if (embedded) embeddedErrors(schema, o, '', errs)
    if (rules) {
      const note = blockingNote(errs)
      if (note) errs.push(note)
      else validateRules(schema, o, old, '', errs)
    }
    return errs
  }
  const custom: CustomInfo = { crdName: String(crd.metadata?.name ?? ''), storageVersion: storage, tree, terminating, schema }
  if (hasDefaults(schema)) custom.readDefaults = (json) => {
    let o: unknown
    try { o = JSON.parse(json) } catch { return json }
    // Only objects of the kind (not PartialObjectMetadata, Status or a bookmark's stub).
    if (!isObj(o) || o.kind !== names.kind || !isObj(o.metadata) || o.metadata.uid === undefined) return json
    const before = json.length
    applyDefaults(o, schema)
    const out = JSON.stringify(o)
    return out.length === before ? json : out
  }
  if (v.deprecated === true) custom.warning = typeof v.deprecationWarning === 'string' ? v.deprecationWarning : deprecationWarning(v.name, spec)
  return resolveDefinition({
    group: spec.group, version: v.name, kind: names.kind, resource: names.plural,
    singular: typeof names.singular === 'string' && names.singular !== '' ? names.singular : names.kind.toLowerCase(),
    scope: spec.scope === 'Cluster' ? 'Cluster' : 'Namespaced',
    verbs: ALL_VERBS,
    shortNames: Array.isArray(names.shortNames) ? names.shortNames : undefined,
    categories: Array.isArray(names.categories) ? names.categories : undefined,
    subresources,
    scale: scaleSpec ? { specReplicasPath: stripDot(scaleSpec.specReplicasPath), statusReplicasPath: stripDot(scaleSpec.statusReplicasPath), labelSelectorPath: scaleSpec.labelSelectorPath ? stripDot(scaleSpec.labelSelectorPath) : undefined } : undefined,
    schemaRef: schemaName(spec.group, v.name, names.kind),
    strategy: {
      default: (o) => applyDefaults(o, schema),
      prepareForCreate: hasStatus ? (o) => { delete o.status } : undefined,
      prepareForUpdate: hasStatus ? (o, old) => { if (old.status === undefined) delete o.status; else o.status = old.status } : undefined,
      validate,
      validateUpdate: (o, old) => validate(o, old),
      allowUnconditionalUpdate: false,
      nameRule: 'subdomain',
      hasGeneration: true,
    },
    status: hasStatus ? {
      prepareForUpdate: (o: Obj, old: Obj) => {
        const status = o.status
        for (const k of Object.keys(o)) if (k !== 'metadata') delete o[k]
        for (const k of Object.keys(old)) if (k !== 'metadata') o[k] = structuredClone(old[k])
        if (status === undefined) delete o.status
        else o.status = status
        applyDefaults(o, schema)
      },
      validateUpdate: validateStatus,
    } : undefined,
    table: columnsOf(v),
    fieldSelectors: Object.keys(fieldSelectors).length > 0 ? fieldSelectors : undefined,
    custom,
  })
}

/** Go's %v of a decoded JSON value. */
function goText(v: unknown): string {
  if (v === null) return '<nil>'
  if (Array.isArray(v)) return `[${v.map(goText).join(' ')}]`
  if (isObj(v)) return `map[${Object.keys(v).sort().map((k) => `${k}:${goText(v[k])}`).join(' ')}]`
  return String(v)
}

/** Go's %T of a decoded JSON value. */
function goTypeName(v: unknown): string {
  if (v === null) return '<nil>'
  if (Array.isArray(v)) return '[]interface {}'
  if (isObj(v)) return 'map[string]interface {}'
  if (typeof v === 'number') return 'float64'
  if (typeof v === 'boolean') return 'bool'
  return 'string'
}

/** upstream's kube-aware version order (v1 > v1beta2 > v1beta1 > v1alpha1 > other names, alphabetically): negative when a < b. */
export function compareKubeVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number] | undefined => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v)
    if (!m) return undefined
    return [m[2] === undefined ? 2 : m[2] === 'beta' ? 1 : 0, Number(m[1]), m[3] === undefined ? 0 : Number(m[3])]
  }
  const x = rank(a)
  const y = rank(b)
  if (x === undefined && y === undefined) return a < b ? 1 : a > b ? -1 : 0
  if (x === undefined) return -1
  if (y === undefined) return 1
  if (x[0] !== y[0]) return x[0] - y[0]
  if (x[1] !== y[1]) return x[1] - y[1]
  return x[2] - y[2]
}

/** upstream's defaultDeprecationWarning: the newest served version that is not deprecated, when there is a newer one. */
function deprecationWarning(version: string, spec: Obj): string {
  const msg = `${spec.group}/${version} ${spec.names?.kind} is deprecated`
  const newer = (Array.isArray(spec.versions) ? spec.versions : [])
    .filter((x: Obj) => isObj(x) && x.served === true && x.deprecated !== true && typeof x.name === 'string' && compareKubeVersions(version, x.name) < 0)
    .map((x: Obj) => x.name as string)
    .sort((a: string, b: string) => compareKubeVersions(b, a))
  return newer.length === 0 ? msg : `${msg}; use ${spec.group}/${newer[0]} ${spec.names?.kind}`
}

/** upstream's ValidateScaleSpec / ValidateScaleStatus: the replicas are non-negative int32s where present. */
function scaleErrors(o: Obj, scale: Obj, statusOnly = false): FieldError[] {
  const errs: FieldError[] = []
  for (const p of statusOnly ? [scale.statusReplicasPath] : [scale.specReplicasPath, scale.statusReplicasPath]) {
    if (typeof p !== 'string') continue
    let cur: any = o
    for (const s of stripDot(p).split('.')) cur = isObj(cur) ? cur[s] : undefined
    if (cur === undefined) continue
    if (typeof cur !== 'number' || !Number.isInteger(cur)) {
      errs.push(fieldInvalid(p, 0, `.${stripDot(p)} accessor error: ${goText(cur)} is of the type ${goTypeName(cur)}, expected int64`))
    } else if (cur < 0) errs.push(fieldInvalid(p, cur, 'should be a non-negative integer'))
    else if (cur > 2147483647) errs.push(fieldInvalid(p, cur, 'should be less than or equal to 2147483647'))
  }
  return errs
}
