// Custom resource types: the ResolvedDefinitions of an Established CustomResourceDefinition (one per served version),
// with its structural schema as the type tree (pruning, apply), an ajv validator whose errors read as upstream's, the
// schema's defaults, printer columns, selectable fields and the status / scale sub-resources.
import { ALL_VERBS, resolveDefinition, type Obj, type ResolvedDefinition, type TableColumn, type CustomInfo } from './define.js'
import type { SchemaNode } from './schema.js'
import { loadDefinitions } from './schema.js'
import { typeFromSchema } from '../machinery/patch/schema-walk.js'
import { fieldInvalid, type FieldError } from '../machinery/errors.js'
import { OBJECT_META, applyDefaults, compile, embeddedErrors, hasDefaults, hasEmbedded, hasListSetsOrMaps, listErrors, toFieldError, withEmbedded } from './custom-schema.js'
import { evalJsonPath, parseJsonPath } from './jsonpath.js'
import { NAME_DESCRIPTION, parseTime, since } from './resources/_printers.js'
import { blockingNote, hasRules, validateRules } from './custom-cel.js'

export const CRD_GROUP = 'apiextensions.orch.io'
export const CRD_RESOURCE = 'customresourcedefinitions'
/** upstream's customresourcecleanup.apiextensions.k8s.io, in our brand. */
export const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.orch.io'


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
  // Conversion Webhook with a storage version that is not served: its definition is kept for the served ones to convert
  // to and from (src/pipeline/crd-convert.ts); it is not in the registry.
  const sv = versions.find((v) => v.storage === true)
  if (isObj(spec.conversion) && spec.conversion.strategy === 'Webhook' && sv !== undefined && sv.served !== true && typeof sv.name === 'string') {
    const stored = versionDefinition(crd, spec, names, sv, storage, terminating)
    for (const d of out) d.custom!.unservedStorage = stored
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
  const listTypes = hasListSetsOrMaps(schema)
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
  /** The checks after the schema's own (scale paths, embedded objects, list types, then the CEL rules unless blocked). */
  const rest = (o: Obj, old: Obj | undefined, errs: FieldError[], statusOnly: boolean): FieldError[] => {
    if (scaleSpec) errs.push(...scaleErrors(o, scaleSpec, statusOnly))
    if (embedded) embeddedErrors(schema, o, '', errs)
    if (listTypes) listErrors(schema, o, '', errs)
    if (rules) {
      const note = blockingNote(errs)
      if (note) errs.push(note)
      else validateRules(schema, o, old, '', errs)
    }
    return errs
  }
  const validateStatus = (o: Obj, old: Obj): FieldError[] => {
    const errs: FieldError[] = []
    if (statusValidator && o.status !== undefined && !statusValidator(o.status)) {
      for (const e of statusValidator.errors ?? []) {
        const fe = toFieldError(o.status, e)
        if (fe) { fe.field = fe.field === '' ? 'status' : fe.field.startsWith('[') ? `status${fe.field}` : `status.${fe.field}`; errs.push(fe) }
      }
    }
    return rest(o, old, errs, true)
  }
  const validate = (o: Obj, old?: Obj): FieldError[] => {
    const errs: FieldError[] = []
    if (validator && !validator(o)) {
      for (const e of validator.errors ?? []) {
        const fe = toFieldError(o, e)
        if (fe) errs.push(fe)
      }
    }
    return rest(o, old, errs, false)
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
  if (isObj(spec.conversion) && spec.conversion.strategy === 'Webhook') custom.webhookSpec = spec
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
