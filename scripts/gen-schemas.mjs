#!/usr/bin/env node
// Derives the project's schema data from the upstream OpenAPI v2 document.
//
//   node scripts/gen-schemas.mjs [path/to/upstream-1.36-swagger.json]
//
// Writes (relative to the repository root):
//   src/registry/schemas/definitions.json  { definitions: { ... } }: the definitions reachable from the served
//                                           kinds, their lists and a few meta types, renamed to the orch brand
//   src/registry/schemas/resources.json    one entry per served resource, derived from the swagger `paths`
//
// Renames: definition names `io.k8s.` -> `io.orch.` (keys and $refs); every `x-kubernetes-*` key -> `x-orch-*`;
// groups `*.k8s.io` -> `*.orch.io` inside `x-orch-group-version-kind` and in resources.json.
// Output is deterministic: object keys are sorted at every level (array order is kept).
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const input = resolve(process.argv[2] ?? resolve(root, '../shared/reference/openapi/upstream-1.36-swagger.json'))
const outDir = resolve(root, 'src/registry/schemas')

/** Served types: upstream group, version, resources. */
const SERVED = [
  ['', 'v1', ['namespaces', 'configmaps', 'secrets', 'serviceaccounts', 'services', 'endpoints', 'pods', 'nodes', 'events',
    'limitranges', 'resourcequotas', 'persistentvolumes', 'persistentvolumeclaims', 'podtemplates', 'replicationcontrollers']],
  ['apps', 'v1', ['deployments', 'replicasets', 'statefulsets', 'daemonsets', 'controllerrevisions']],
  ['batch', 'v1', ['jobs', 'cronjobs']],
  ['policy', 'v1', ['poddisruptionbudgets']],
  ['autoscaling', 'v1', ['horizontalpodautoscalers']],
  ['autoscaling', 'v2', ['horizontalpodautoscalers']],
  ['networking.k8s.io', 'v1', ['networkpolicies', 'ingresses', 'ingressclasses']],
  ['rbac.authorization.k8s.io', 'v1', ['roles', 'rolebindings', 'clusterroles', 'clusterrolebindings']],
  ['flowcontrol.apiserver.k8s.io', 'v1', ['flowschemas', 'prioritylevelconfigurations']],
  ['admissionregistration.k8s.io', 'v1', ['validatingadmissionpolicies', 'validatingadmissionpolicybindings',
    'validatingwebhookconfigurations', 'mutatingwebhookconfigurations']],
  ['coordination.k8s.io', 'v1', ['leases']],
  ['discovery.k8s.io', 'v1', ['endpointslices']],
  ['events.k8s.io', 'v1', ['events']],
  ['certificates.k8s.io', 'v1', ['certificatesigningrequests']],
  ['scheduling.k8s.io', 'v1', ['priorityclasses']],
  ['node.k8s.io', 'v1', ['runtimeclasses']],
  ['storage.k8s.io', 'v1', ['storageclasses', 'csidrivers', 'csinodes', 'volumeattachments', 'csistoragecapacities']],
  ['apiextensions.k8s.io', 'v1', ['customresourcedefinitions']],
]

/** Further roots besides the served kinds and their lists. */
const EXTRA_ROOTS = [
  'io.k8s.apimachinery.pkg.apis.meta.v1.Status',
  'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions',
  'io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList',
  'io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList',
  'io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions',
  'io.k8s.api.autoscaling.v1.Scale',
  // Virtual kinds (created and answered, never stored) and the TokenRequest of serviceaccounts/token.
  'io.k8s.api.authentication.v1.SelfSubjectReview',
  'io.k8s.api.authentication.v1.TokenReview',
  'io.k8s.api.authentication.v1.TokenRequest',
  'io.k8s.api.authorization.v1.SelfSubjectAccessReview',
  'io.k8s.api.authorization.v1.SelfSubjectRulesReview',
  'io.k8s.api.authorization.v1.SubjectAccessReview',
  'io.k8s.api.authorization.v1.LocalSubjectAccessReview',
]

/**
 * String fields named `description`. The reference document has no `description` keys at all (the prose is left out),
 * and with the prose went these fields of the API (the protobuf messages have them: PriorityClass field 4,
 * JSONSchemaProps 4, ExternalDocumentation 1, CustomResourceColumnDefinition 4). They are put back as plain strings.
 */
const DESCRIPTION_FIELDS = [
  'io.k8s.api.scheduling.v1.PriorityClass',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ExternalDocumentation',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceColumnDefinition',
]

const DEF_PREFIX = '#/definitions/'
const renameGroup = (g) => (g.endsWith('.k8s.io') ? g.slice(0, -'.k8s.io'.length) + '.orch.io' : g)
const renameDef = (n) => (n.startsWith('io.k8s.') ? 'io.orch.' + n.slice('io.k8s.'.length) : n)
const renameKey = (k) => (k.startsWith('x-kubernetes-') ? 'x-orch-' + k.slice('x-kubernetes-'.length) : k)
const refName = (ref) => {
  if (typeof ref !== 'string' || !ref.startsWith(DEF_PREFIX)) throw new Error(`unexpected $ref ${ref}`)
  return ref.slice(DEF_PREFIX.length)
}

/** Deep copy with the renames applied and keys sorted. */
function transform(v, key) {
  if (Array.isArray(v)) {
    if (key === 'x-kubernetes-group-version-kind') {
      return v.map((gvk) => transform({ ...gvk, group: renameGroup(gvk.group) }))
    }
    return v.map((x) => transform(x))
  }
  if (v !== null && typeof v === 'object') {
    const out = {}
    for (const k of Object.keys(v).sort((a, b) => cmp(renameKey(a), renameKey(b)))) {
      const val = v[k]
      out[renameKey(k)] = k === '$ref' && typeof val === 'string' ? DEF_PREFIX + renameDef(refName(val)) : transform(val, k)
    }
    return out
  }
  return v
}

function cmp(a, b) { return a < b ? -1 : a > b ? 1 : 0 }

function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys)
  if (v !== null && typeof v === 'object') {
    const out = {}
    for (const k of Object.keys(v).sort(cmp)) out[k] = sortKeys(v[k])
    return out
  }
  return v
}

function collectRefs(v, into) {
  if (Array.isArray(v)) { for (const x of v) collectRefs(x, into); return }
  if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (k === '$ref' && typeof x === 'string') into.push(refName(x))
      else collectRefs(x, into)
    }
  }
}

const swagger = JSON.parse(readFileSync(input, 'utf8'))
const defs = swagger.definitions
const paths = swagger.paths

const ACTION_VERB = {
  get: 'get', list: 'list', watch: 'watch', watchlist: 'watch', post: 'create', put: 'update',
  patch: 'patch', delete: 'delete', deletecollection: 'deletecollection',
}
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options']

const problems = []
const roots = new Set(EXTRA_ROOTS)
const resources = []

for (const [group, version, names] of SERVED) {
  const prefix = group === '' ? `/api/${version}` : `/apis/${group}/${version}`
  for (const resource of names) {
    const nsColl = `${prefix}/namespaces/{namespace}/${resource}`
    const clColl = `${prefix}/${resource}`
    const namespaced = nsColl in paths
    const coll = namespaced ? nsColl : clColl
    const item = `${coll}/{name}`
    if (!(item in paths) && !(coll in paths)) { problems.push(`${group}/${version} ${resource}: no paths`); continue }
    const main = [coll, item, clColl, `${prefix}/watch/${resource}`, `${prefix}/watch/${resource}/{name}`]
    if (namespaced) main.push(`${prefix}/watch/namespaces/{namespace}/${resource}`, `${prefix}/watch/namespaces/{namespace}/${resource}/{name}`)
    const verbs = new Set()
    let getOp
    let listOp
    let deleteOp
    for (const p of main) {
      const ops = paths[p]
      if (!ops) continue
      for (const m of METHODS) {
        const op = ops[m]
        if (!op) continue
        const action = op['x-kubernetes-action']
        const verb = ACTION_VERB[action]
        if (verb === undefined) { problems.push(`${p} ${m}: unknown action ${action}`); continue }
        verbs.add(verb)
        if (p === item && action === 'get') getOp = op
        if (p === coll && action === 'list') listOp = op
        if (p === item && action === 'delete') deleteOp = op
      }
    }
    const subresources = new Set()
    const subPrefix = `${item}/`
    for (const p of Object.keys(paths)) {
      if (p.startsWith(subPrefix)) subresources.add(p.slice(subPrefix.length).split('/')[0])
    }
    if (!getOp) { problems.push(`${group}/${version} ${resource}: no get operation`); continue }
    const gvk = getOp['x-kubernetes-group-version-kind']
    const schema = refName(getOp.responses['200'].schema.$ref)
    roots.add(schema)
    if (listOp) roots.add(refName(listOp.responses['200'].schema.$ref))
    const delRef = deleteOp?.responses?.['200']?.schema?.$ref
    resources.push({
      group: renameGroup(group),
      version,
      kind: gvk.kind,
      resource,
      scope: namespaced ? 'Namespaced' : 'Cluster',
      verbs: [...verbs].sort(cmp),
      subresources: [...subresources].sort(cmp),
      schemaRef: renameDef(schema),
      listSchemaRef: listOp ? renameDef(refName(listOp.responses['200'].schema.$ref)) : undefined,
      returnsDeletedObject: delRef !== undefined && refName(delRef) === schema,
    })
  }
}

// Transitive closure over $ref.
const keep = new Set()
const queue = [...roots]
while (queue.length > 0) {
  const name = queue.pop()
  if (keep.has(name)) continue
  if (!(name in defs)) { problems.push(`missing definition ${name}`); continue }
  keep.add(name)
  const refs = []
  collectRefs(defs[name], refs)
  queue.push(...refs)
}

const outDefs = {}
for (const name of [...keep].sort(cmp)) outDefs[renameDef(name)] = transform(defs[name])
for (const name of DESCRIPTION_FIELDS) {
  const d = outDefs[renameDef(name)]
  if (d === undefined) { problems.push(`missing definition ${name} (description field)`); continue }
  d.properties = { ...(d.properties ?? {}), description: { type: 'string' } }
}

resources.sort((a, b) => cmp(a.group, b.group) || cmp(a.version, b.version) || cmp(a.resource, b.resource))

mkdirSync(outDir, { recursive: true })
writeFileSync(resolve(outDir, 'definitions.json'), JSON.stringify(sortKeys({ definitions: outDefs }), null, 1) + '\n')
writeFileSync(resolve(outDir, 'resources.json'), JSON.stringify(resources.map(sortKeys), null, 1) + '\n')

for (const p of problems) console.error(`gen-schemas: ${p}`)
console.log(`gen-schemas: ${Object.keys(outDefs).length} definitions, ${resources.length} resources -> ${outDir}`)
if (problems.length > 0) process.exitCode = 1
