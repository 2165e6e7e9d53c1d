// OpenAPI documents (/openapi/v2 as JSON, the /openapi/v3 index and per-group-version documents) built as plain data from the Registry and the schema data.
import { createHash } from 'node:crypto'
import type { ResolvedDefinition } from '../registry/define.js'
import { loadDefinitions, type SchemaNode } from '../registry/schema.js'
import { groupVersions, type RegistryView } from './discovery.js'

type Defs = Record<string, SchemaNode>

export interface GVK { group: string; version: string; kind: string }

const TITLE = 'Orch'
const API_VERSION = 'v1.32.0'
const DEF_V2 = '#/definitions/'
const DEF_V3 = '#/components/schemas/'
const ORCH_EXT = 'x-orch-'
const UPSTREAM_EXT = 'x-kubernetes-'

const META = 'io.orch.apimachinery.pkg.apis.meta.v1'
const STATUS = `${META}.Status`
const DELETE_OPTIONS = `${META}.DeleteOptions`
const PATCH = `${META}.Patch`
const API_RESOURCE_LIST = `${META}.APIResourceList`
const API_GROUP = `${META}.APIGroup`
const API_GROUP_LIST = `${META}.APIGroupList`
const API_VERSIONS = `${META}.APIVersions`
const SCALE = 'io.orch.api.autoscaling.v1.Scale'
const SCALE_GVK: GVK = { group: 'autoscaling', version: 'v1', kind: 'Scale' }

/** Definitions the generated schema data does not carry (upstream has them; they have no fields). */
const SYNTHETIC: Defs = {
  [PATCH]: {
    description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.',
    type: 'object',
  },
}

/** The content types a PATCH accepts, in upstream order. */
export const PATCH_CONTENT_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
]
/** What a custom resource's PATCH accepts (upstream's CRD handler: no strategic merge patch). */
const CUSTOM_PATCH_CONTENT_TYPES = PATCH_CONTENT_TYPES.filter((t) => t !== 'application/strategic-merge-patch+json')
const BODY_CONTENT_TYPES = ['application/json', 'application/yaml']
const PRODUCES = ['application/json', 'application/yaml']
const PRODUCES_LIST = ['application/json', 'application/yaml', 'application/json;stream=watch']

// ---------------------------------------------------------------------------------------------------------------
// The operation model shared by the v2 and v3 renderings.

type Method = 'get' | 'put' | 'post' | 'delete' | 'patch'
const METHOD_ORDER: Method[] = ['get', 'put', 'post', 'delete', 'patch']

interface Param { name: string; in: 'path' | 'query'; type: 'string' | 'integer' | 'boolean'; required?: boolean; description?: string }

interface Op {
  method: Method
  operationId: string
  action: string
  tag: string
  gvk?: GVK
  params: Param[]
  body?: { ref: string; required: boolean; types: string[] }
  responses: Array<{ code: string; ref?: string }>
  produces: string[]
}

interface PathItem { params: Param[]; ops: Op[] }

const q = (name: string, type: Param['type'], description?: string): Param => (description ? { name, in: 'query', type, description } : { name, in: 'query', type })

const P = {
  name: (kind: string): Param => ({ name: 'name', in: 'path', type: 'string', required: true, description: `name of the ${kind}` }),
  namespace: { name: 'namespace', in: 'path', type: 'string', required: true, description: 'object name and auth scope, such as for teams and projects' } as Param,
  pretty: q('pretty', 'string', "If 'true', then the output is pretty printed."),
  allowWatchBookmarks: q('allowWatchBookmarks', 'boolean'),
  continue: q('continue', 'string'),
  dryRun: q('dryRun', 'string', 'When present, indicates that modifications should not be persisted. Valid values are: - All: all dry run stages will be processed'),
  fieldManager: q('fieldManager', 'string', 'fieldManager is a name associated with the actor or entity that is making these changes.'),
  fieldSelector: q('fieldSelector', 'string'),
  fieldValidation: q('fieldValidation', 'string',
    'fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: Ignore, Warn, Strict.'),
  force: q('force', 'boolean', 'Force is going to "force" Apply requests. It means user will re-acquire conflicting fields owned by other people. Force flag must be unset for non-apply patch requests.'),
  gracePeriodSeconds: q('gracePeriodSeconds', 'integer'),
  labelSelector: q('labelSelector', 'string'),
  limit: q('limit', 'integer'),
  orphanDependents: q('orphanDependents', 'boolean'),
  propagationPolicy: q('propagationPolicy', 'string'),
  resourceVersion: q('resourceVersion', 'string'),
  resourceVersionMatch: q('resourceVersionMatch', 'string'),
  sendInitialEvents: q('sendInitialEvents', 'boolean'),
  timeoutSeconds: q('timeoutSeconds', 'integer'),
  watch: q('watch', 'boolean'),
}

const LIST_PARAMS = [P.allowWatchBookmarks, P.continue, P.fieldSelector, P.labelSelector, P.limit, P.resourceVersion,
  P.resourceVersionMatch, P.sendInitialEvents, P.timeoutSeconds, P.watch]
const WRITE_PARAMS = [P.dryRun, P.fieldManager, P.fieldValidation]
const PATCH_PARAMS = [P.dryRun, P.fieldManager, P.fieldValidation, P.force]
const DELETE_PARAMS = [P.dryRun, P.gracePeriodSeconds, P.orphanDependents, P.propagationPolicy]
const DELETECOLLECTION_PARAMS = [P.continue, P.dryRun, P.fieldSelector, P.gracePeriodSeconds, P.labelSelector, P.limit,
  P.orphanDependents, P.propagationPolicy, P.resourceVersion, P.resourceVersionMatch, P.sendInitialEvents, P.timeoutSeconds]

const RESPONSE_DESCRIPTION: Record<string, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted', 401: 'Unauthorized' }

const upperFirst = (s: string) => (s === '' ? s : s[0].toUpperCase() + s.slice(1))

/** `rbac.authorization.orch.io` → `rbacAuthorization` (upstream's tag/operation-id spelling, brand suffix dropped). */
function groupWord(group: string): string {
  if (group === '') return 'core'
  const base = group.endsWith('.orch.io') ? group.slice(0, -'.orch.io'.length) : group
  const parts = base.split(/[.-]/).filter((p) => p !== '')
  return parts.map((p, i) => (i === 0 ? p : upperFirst(p))).join('')
}

function ensureDef(defs: Defs, name: string, what: string): void {
  if (!(name in defs) && !(name in SYNTHETIC)) throw new Error(`openapi: definition ${name} (${what}) is not in the schema data`)
}

/** The paths of one group/version and the definitions its operations refer to. */
function groupVersionPaths(registry: RegistryView, defs: Defs, group: string, version: string): { paths: Map<string, PathItem>; roots: Set<string> } {
  const prefix = group === '' ? `/api/${version}` : `/apis/${group}/${version}`
  const tag = `${groupWord(group)}_${version}`
  const idGV = `${upperFirst(groupWord(group))}${upperFirst(version)}`
  const paths = new Map<string, PathItem>()
  const roots = new Set<string>([STATUS, DELETE_OPTIONS, PATCH, API_RESOURCE_LIST])

  paths.set(`${prefix}/`, {
    params: [],
    ops: [{ method: 'get', operationId: `get${idGV}APIResources`, action: '', tag, params: [], responses: [{ code: '200', ref: API_RESOURCE_LIST }, { code: '401' }], produces: PRODUCES }],
  })

  for (const d of registry.inGroupVersion(group, version)) {
    // Custom resources take no strategic merge patch: their PATCH operations do not list it (kubectl then merge-patches).
    const patchTypes = d.custom !== undefined ? CUSTOM_PATCH_CONTENT_TYPES : PATCH_CONTENT_TYPES
    ensureDef(defs, d.schemaRef, `kind ${d.kind}`)
    roots.add(d.schemaRef)
    const listRef = `${d.schemaRef}List` in defs ? `${d.schemaRef}List` : undefined
    if (listRef) roots.add(listRef)
    const gvk: GVK = { group: d.group, version: d.version, kind: d.kind }
    const ns = d.scope === 'Namespaced'
    const nsWord = ns ? 'Namespaced' : ''
    const has = (v: string) => (d.verbs as string[]).includes(v)
    const base = ns ? `${prefix}/namespaces/{namespace}/${d.resource}` : `${prefix}/${d.resource}`
    const scopeParams = ns ? [P.namespace, P.pretty] : [P.pretty]
    const op = (o: Omit<Op, 'tag' | 'produces'> & { produces?: string[] }): Op => ({ tag, produces: PRODUCES, ...o })

    const collection: Op[] = []
    if (has('list')) {
      collection.push(op({ method: 'get', operationId: `list${idGV}${nsWord}${d.kind}`, action: 'list', gvk, params: LIST_PARAMS,
        responses: [{ code: '200', ref: listRef }, { code: '401' }], produces: PRODUCES_LIST }))
    }
    if (has('create')) {
      collection.push(op({ method: 'post', operationId: `create${idGV}${nsWord}${d.kind}`, action: 'post', gvk, params: WRITE_PARAMS,
        body: { ref: d.schemaRef, required: true, types: BODY_CONTENT_TYPES },
        responses: [{ code: '200', ref: d.schemaRef }, { code: '201', ref: d.schemaRef }, { code: '202', ref: d.schemaRef }, { code: '401' }] }))
    }
    if (has('deletecollection')) {
      collection.push(op({ method: 'delete', operationId: `delete${idGV}Collection${nsWord}${d.kind}`, action: 'deletecollection', gvk, params: DELETECOLLECTION_PARAMS,
        body: { ref: DELETE_OPTIONS, required: false, types: BODY_CONTENT_TYPES },
        responses: [{ code: '200', ref: STATUS }, { code: '401' }] }))
    }
    if (collection.length > 0) paths.set(base, { params: scopeParams, ops: collection })

    if (ns && has('list')) {
      paths.set(`${prefix}/${d.resource}`, {
        params: [...LIST_PARAMS, P.pretty].sort((a, b) => (a.name < b.name ? -1 : 1)),
        ops: [op({ method: 'get', operationId: `list${idGV}${d.kind}ForAllNamespaces`, action: 'list', gvk, params: [],
          responses: [{ code: '200', ref: listRef }, { code: '401' }], produces: PRODUCES_LIST })],
      })
    }

    const itemParams = [P.name(d.kind), ...scopeParams]
    const item: Op[] = []
    if (has('get')) {
      item.push(op({ method: 'get', operationId: `read${idGV}${nsWord}${d.kind}`, action: 'get', gvk, params: [],
        responses: [{ code: '200', ref: d.schemaRef }, { code: '401' }] }))
    }
    if (has('update')) {
      item.push(op({ method: 'put', operationId: `replace${idGV}${nsWord}${d.kind}`, action: 'put', gvk, params: WRITE_PARAMS,
        body: { ref: d.schemaRef, required: true, types: BODY_CONTENT_TYPES },
        responses: [{ code: '200', ref: d.schemaRef }, { code: '201', ref: d.schemaRef }, { code: '401' }] }))
    }
    if (has('delete')) {
      const ref = d.strategy.returnDeletedObject ? d.schemaRef : STATUS
      item.push(op({ method: 'delete', operationId: `delete${idGV}${nsWord}${d.kind}`, action: 'delete', gvk, params: DELETE_PARAMS,
        body: { ref: DELETE_OPTIONS, required: false, types: BODY_CONTENT_TYPES },
        responses: [{ code: '200', ref }, { code: '202', ref }, { code: '401' }] }))
    }
    if (has('patch')) {
      item.push(op({ method: 'patch', operationId: `patch${idGV}${nsWord}${d.kind}`, action: 'patch', gvk, params: PATCH_PARAMS,
        body: { ref: PATCH, required: true, types: patchTypes },
        responses: [{ code: '200', ref: d.schemaRef }, { code: '201', ref: d.schemaRef }, { code: '401' }] }))
    }
    if (item.length > 0) paths.set(`${base}/{name}`, { params: itemParams, ops: item })

    for (const sub of d.subresources ?? []) {
      const [subGvk, ref, word] = sub === 'scale' ? [SCALE_GVK, SCALE, 'Scale'] : [gvk, d.schemaRef, 'Status']
      if (sub === 'scale') ensureDef(defs, SCALE, 'autoscaling/v1 Scale')
      roots.add(ref)
      paths.set(`${base}/{name}/${sub}`, {
        params: [{ ...P.name(sub === 'scale' ? 'Scale' : d.kind) }, ...scopeParams],
        ops: [
          op({ method: 'get', operationId: `read${idGV}${nsWord}${d.kind}${word}`, action: 'get', gvk: subGvk, params: [],
            responses: [{ code: '200', ref }, { code: '401' }] }),
          op({ method: 'put', operationId: `replace${idGV}${nsWord}${d.kind}${word}`, action: 'put', gvk: subGvk, params: WRITE_PARAMS,
            body: { ref, required: true, types: BODY_CONTENT_TYPES },
            responses: [{ code: '200', ref }, { code: '201', ref }, { code: '401' }] }),
          op({ method: 'patch', operationId: `patch${idGV}${nsWord}${d.kind}${word}`, action: 'patch', gvk: subGvk, params: PATCH_PARAMS,
            body: { ref: PATCH, required: true, types: patchTypes },
            responses: [{ code: '200', ref }, { code: '201', ref }, { code: '401' }] }),
        ],
      })
    }
  }
  return { paths, roots }
}

/** The discovery paths of the v2 document (upstream lists them too). */
function discoveryPaths(registry: RegistryView): { paths: Map<string, PathItem>; roots: Set<string> } {
  const paths = new Map<string, PathItem>()
  const get = (operationId: string, tag: string, ref: string): PathItem => ({
    params: [], ops: [{ method: 'get', operationId, action: '', tag, params: [], responses: [{ code: '200', ref }, { code: '401' }], produces: PRODUCES }],
  })
  paths.set('/api/', get('getCoreAPIVersions', 'core', API_VERSIONS))
  paths.set('/apis/', get('getAPIVersions', 'apis', API_GROUP_LIST))
  for (const g of registry.groups.keys()) {
    if (g === '') continue
    const w = groupWord(g)
    paths.set(`/apis/${g}/`, get(`get${upperFirst(w)}APIGroup`, w, API_GROUP))
  }
  return { paths, roots: new Set([API_VERSIONS, API_GROUP_LIST, API_GROUP]) }
}

// ---------------------------------------------------------------------------------------------------------------
// Schemas: reachability, extension twins, v3 reference form.

/** The definition names a schema refers to (property names are field names, not keywords: `$ref` and `x-*` fields exist). */
function collectRefs(node: unknown, out: string[]): void {
  if (Array.isArray(node)) { for (const x of node) collectRefs(x, out); return }
  if (node === null || typeof node !== 'object') return
  for (const [k, v] of Object.entries(node as SchemaNode)) {
    if (k === '$ref' && typeof v === 'string' && v.startsWith(DEF_V2)) out.push(v.slice(DEF_V2.length))
    else if (k === 'properties' && v !== null && typeof v === 'object') for (const pv of Object.values(v as SchemaNode)) collectRefs(pv, out)
    else if (!k.startsWith('x-')) collectRefs(v, out)
  }
}

/** Names of the definitions reachable from the roots, sorted. */
function reachable(defs: Defs, roots: Iterable<string>): string[] {
  const seen = new Set<string>()
  const stack = [...roots]
  while (stack.length > 0) {
    const name = stack.pop() as string
    if (seen.has(name)) continue
    const def = defs[name] ?? SYNTHETIC[name]
    if (!def) throw new Error(`openapi: $ref to unknown definition ${name}`)
    seen.add(name)
    const refs: string[] = []
    collectRefs(def, refs)
    stack.push(...refs)
  }
  return [...seen].sort()
}

const clone = <T>(v: T): T => (v === undefined ? v : JSON.parse(JSON.stringify(v)) as T)

/** Each `x-orch-*` extension also under its upstream `x-kubernetes-*` name (clients hard-code those). */
function addTwins(out: SchemaNode, key: string, value: unknown): void {
  out[key] = clone(value)
  if (key.startsWith(ORCH_EXT)) {
    const upstream = UPSTREAM_EXT + key.slice(ORCH_EXT.length)
    out[upstream] = clone(value)
  }
}

/** A schema in the served form: extension twins, and for v3 `#/components/schemas/` references (with siblings wrapped in allOf). */
function convertSchema(node: SchemaNode, v3: boolean): SchemaNode {
  const out: SchemaNode = {}
  for (const [k, v] of Object.entries(node)) {
    if (k.startsWith('x-')) {
      if (k.startsWith(UPSTREAM_EXT) && (ORCH_EXT + k.slice(UPSTREAM_EXT.length)) in node) continue
      addTwins(out, k, v)
    } else if (k === '$ref' && typeof v === 'string') {
      out.$ref = v3 && v.startsWith(DEF_V2) ? DEF_V3 + v.slice(DEF_V2.length) : v
    } else if (k === 'properties' && v !== null && typeof v === 'object') {
      out.properties = Object.fromEntries(Object.entries(v as SchemaNode).map(([pk, pv]) => [pk, convertSchema(pv as SchemaNode, v3)]))
    } else if ((k === 'items' || k === 'additionalProperties' || k === 'not') && v !== null && typeof v === 'object' && !Array.isArray(v)) {
      out[k] = convertSchema(v as SchemaNode, v3)
    } else if ((k === 'allOf' || k === 'anyOf' || k === 'oneOf') && Array.isArray(v)) {
      out[k] = v.map((x) => convertSchema(x as SchemaNode, v3))
    } else {
      out[k] = clone(v)
    }
  }
  if (v3 && typeof out.$ref === 'string' && Object.keys(out).length > 1) {
    // OpenAPI 3.0 ignores the siblings of $ref; upstream wraps the reference (kubectl reads both forms).
    const { $ref, ...rest } = out
    return { allOf: [{ $ref }], ...rest }
  }
  return out
}

const sameGVK = (a: unknown, b: GVK) => a !== null && typeof a === 'object' &&
  (a as GVK).group === b.group && (a as GVK).version === b.version && (a as GVK).kind === b.kind

/** The served definitions: converted, and each served kind's GVK guaranteed in its GVK array. */
function definitionsFor(defs: Defs, names: string[], served: Map<string, GVK[]>, v3: boolean): Record<string, SchemaNode> {
  const out: Record<string, SchemaNode> = {}
  for (const name of names) {
    const src = defs[name] ?? SYNTHETIC[name]
    let node = src
    const want = served.get(name)
    if (want) {
      const have = Array.isArray(src['x-orch-group-version-kind']) ? (src['x-orch-group-version-kind'] as unknown[]) : []
      const missing = want.filter((g) => !have.some((h) => sameGVK(h, g)))
      if (missing.length > 0) {
        node = { ...src, 'x-orch-group-version-kind': [...have, ...missing.map((g) => ({ group: g.group, kind: g.kind, version: g.version }))] }
      }
    }
    out[name] = convertSchema(node, v3)
    // v3 says what these two really decode from (v2 has no oneOf): kubectl explain then names them by type.
    if (v3 && name.endsWith('.util.intstr.IntOrString')) out[name] = { format: 'int-or-string', oneOf: [{ type: 'integer' }, { type: 'string' }] }
    if (v3 && name.endsWith('.api.resource.Quantity')) out[name] = { oneOf: [{ type: 'string' }, { type: 'number' }] }
  }
  return out
}

function servedKinds(defs: ResolvedDefinition[]): Map<string, GVK[]> {
  const m = new Map<string, GVK[]>()
  const add = (name: string, g: GVK) => {
    const l = m.get(name) ?? []
    if (!l.some((x) => sameGVK(x, g))) l.push(g)
    m.set(name, l)
  }
  for (const d of defs) {
    add(d.schemaRef, { group: d.group, version: d.version, kind: d.kind })
    if (d.subresources?.includes('scale')) add(SCALE, SCALE_GVK)
  }
  return m
}

// ---------------------------------------------------------------------------------------------------------------
// Rendering.

/** `x-kubernetes-*` and `x-orch-*` operation extensions: action and the GVK as a single object. */
function opExtensions(op: Op): SchemaNode {
  const ext: SchemaNode = {}
  if (op.action !== '') {
    ext['x-kubernetes-action'] = op.action
    ext['x-orch-action'] = op.action
  }
  if (op.gvk) {
    ext['x-kubernetes-group-version-kind'] = { group: op.gvk.group, kind: op.gvk.kind, version: op.gvk.version }
    ext['x-orch-group-version-kind'] = { group: op.gvk.group, kind: op.gvk.kind, version: op.gvk.version }
  }
  return ext
}

function paramV2(p: Param): SchemaNode {
  const o: SchemaNode = {}
  if (p.description) o.description = p.description
  o.in = p.in
  o.name = p.name
  if (p.required) o.required = true
  o.type = p.type
  o.uniqueItems = true
  return o
}

function paramV3(p: Param): SchemaNode {
  const o: SchemaNode = {}
  if (p.description) o.description = p.description
  o.in = p.in
  o.name = p.name
  if (p.required) o.required = true
  o.schema = { type: p.type, uniqueItems: true }
  return o
}

function renderV2Op(op: Op): SchemaNode {
  const params: SchemaNode[] = []
  if (op.body) {
    const b: SchemaNode = { in: 'body', name: 'body' }
    if (op.body.required) b.required = true
    b.schema = { $ref: DEF_V2 + op.body.ref }
    params.push(b)
  }
  params.push(...op.params.map(paramV2))
  const responses: SchemaNode = {}
  for (const r of op.responses) {
    responses[r.code] = r.ref ? { description: RESPONSE_DESCRIPTION[r.code], schema: { $ref: DEF_V2 + r.ref } } : { description: RESPONSE_DESCRIPTION[r.code] }
  }
  const o: SchemaNode = { consumes: op.method === 'patch' ? [...(op.body?.types ?? PATCH_CONTENT_TYPES)] : ['*/*'], operationId: op.operationId }
  if (params.length > 0) o.parameters = params
  o.produces = [...op.produces]
  o.responses = responses
  o.schemes = ['https']
  o.tags = [op.tag]
  return { ...o, ...opExtensions(op) }
}

function renderV3Op(op: Op): SchemaNode {
  const o: SchemaNode = { operationId: op.operationId }
  if (op.params.length > 0) o.parameters = op.params.map(paramV3)
  if (op.body) {
    const content: SchemaNode = {}
    for (const t of op.body.types) content[t] = { schema: { $ref: DEF_V3 + op.body.ref } }
    o.requestBody = op.body.required ? { content, required: true } : { content }
  }
  const responses: SchemaNode = {}
  for (const r of op.responses) {
    if (!r.ref) { responses[r.code] = { description: RESPONSE_DESCRIPTION[r.code] }; continue }
    const content: SchemaNode = {}
    for (const t of op.produces) content[t] = { schema: { $ref: DEF_V3 + r.ref } }
    responses[r.code] = { content, description: RESPONSE_DESCRIPTION[r.code] }
  }
  o.responses = responses
  o.tags = [op.tag]
  return { ...o, ...opExtensions(op) }
}

function renderPaths(paths: Map<string, PathItem>, v3: boolean): Record<string, SchemaNode> {
  const out: Record<string, SchemaNode> = {}
  for (const key of [...paths.keys()].sort()) {
    const item = paths.get(key) as PathItem
    const o: SchemaNode = {}
    for (const m of METHOD_ORDER) {
      const op = item.ops.find((x) => x.method === m)
      if (op) o[m] = v3 ? renderV3Op(op) : renderV2Op(op)
    }
    if (item.params.length > 0) o.parameters = item.params.map(v3 ? paramV3 : paramV2)
    out[key] = o
  }
  return out
}

// ---------------------------------------------------------------------------------------------------------------
// Public builders.

/** `api/v1` or `apis/<group>/<version>`: the v3 index key and the URL tail after `/openapi/v3/`. */
export function v3PathKey(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`
}

/** The OpenAPI v2 (Swagger 2.0) document of every served type, with only the definitions in use. */
export function openapiV2(registry: RegistryView, defs: Defs = loadDefinitions()): SchemaNode {
  const paths = new Map<string, PathItem>()
  const roots = new Set<string>()
  const disc = discoveryPaths(registry)
  for (const [k, v] of disc.paths) paths.set(k, v)
  for (const r of disc.roots) roots.add(r)
  for (const [g, v] of groupVersions(registry)) {
    const gv = groupVersionPaths(registry, defs, g, v)
    for (const [k, item] of gv.paths) paths.set(k, item)
    for (const r of gv.roots) roots.add(r)
  }
  return {
    swagger: '2.0',
    info: { title: TITLE, version: API_VERSION },
    paths: renderPaths(paths, false),
    // Types served over another's storage (autoscaling/v1) are not in `all` (it lists what is stored).
    definitions: definitionsFor(defs, reachable(defs, roots), servedKinds([...registry.all, ...groupVersions(registry).flatMap(([g, v]) => registry.inGroupVersion(g, v).filter((d) => d.sharedStorage !== undefined))]), false),
    securityDefinitions: { BearerToken: { description: 'Bearer Token authentication', in: 'header', name: 'authorization', type: 'apiKey' } },
    security: [{ BearerToken: [] }],
  }
}

/** The OpenAPI v3 document of one served group/version, or undefined when it is not served. */
export function openapiV3Document(registry: RegistryView, defs: Defs, group: string, version: string): SchemaNode | undefined {
  if (!(registry.groups.get(group)?.includes(version) ?? false)) return undefined
  const { paths, roots } = groupVersionPaths(registry, defs, group, version)
  return {
    openapi: '3.0.0',
    info: { title: TITLE, version: API_VERSION },
    paths: renderPaths(paths, true),
    components: { schemas: definitionsFor(defs, reachable(defs, roots), servedKinds(registry.inGroupVersion(group, version)), true) },
  }
}

export interface OpenAPIV3Doc { json: string; hash: string }

export interface OpenAPIV3Set {
  /** The `/openapi/v3` body (JSON). */
  index: string
  /** Its ETag value (quoted), for conditional requests. */
  indexEtag: string
  /** Keyed `api/v1` or `apis/<group>/<version>` (the URL after `/openapi/v3/`). */
  docs: Map<string, OpenAPIV3Doc>
}

/** Upstream's hash of a v3 document: uppercase hex SHA-512 of its JSON. */
export function v3Hash(json: string): string {
  return createHash('sha512').update(json).digest('hex').toUpperCase()
}

/** Every v3 document serialised once, their hashes, and the index that points at them. */
export function buildOpenAPIV3(registry: RegistryView, defs: Defs = loadDefinitions()): OpenAPIV3Set {
  const docs = new Map<string, OpenAPIV3Doc>()
  const paths: Record<string, { serverRelativeURL: string }> = {}
  for (const [g, v] of groupVersions(registry)) {
    const doc = openapiV3Document(registry, defs, g, v)
    if (!doc) continue
    const key = v3PathKey(g, v)
    const json = JSON.stringify(doc)
    const hash = v3Hash(json)
    docs.set(key, { json, hash })
    paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hash}` }
  }
  const index = JSON.stringify({ paths })
  return { index, indexEtag: `"${v3Hash(index)}"`, docs }
}

/** The `/openapi/v3` index as an object (builds the documents to hash them; prefer buildOpenAPIV3 to do it once). */
export function openapiV3Index(registry: RegistryView, defs: Defs = loadDefinitions()): { paths: Record<string, { serverRelativeURL: string }> } {
  return JSON.parse(buildOpenAPIV3(registry, defs).index) as { paths: Record<string, { serverRelativeURL: string }> }
}

/** Alias of buildOpenAPIV3. */
export const buildOpenapiV3 = buildOpenAPIV3
