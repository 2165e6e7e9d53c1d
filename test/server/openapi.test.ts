// Discovery and OpenAPI documents: the shapes kubectl 1.32 reads (see the discovery-and-openapi reference).
import t from 'tap'
import { createHash } from 'node:crypto'
import { Registry } from '../../src/registry/index.js'
import { loadDefinitions } from '../../src/registry/schema.js'
import {
  apiGroup, apiGroupList, apiResourceList, apiVersions, storageVersionHash, versionInfo,
} from '../../src/server/discovery.js'
import { buildOpenAPIV3, openapiV2, openapiV3Index, PATCH_CONTENT_TYPES } from '../../src/server/openapi.js'

type Node = Record<string, any>

const registry = new Registry()
const defs = loadDefinitions()
const v3 = buildOpenAPIV3(registry, defs)
const doc = (key: string): Node => JSON.parse((v3.docs.get(key) as { json: string }).json) as Node
const core = doc('api/v1')
const apps = doc('apis/apps/v1')

/** Every string `$ref` anywhere in the tree (JSONSchemaProps has a field named `$ref`, whose value is a schema). */
function collectRefs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) { for (const x of node) collectRefs(x, out); return out }
  if (node === null || typeof node !== 'object') return out
  for (const [k, v] of Object.entries(node as Node)) {
    if (k === '$ref' && typeof v === 'string') out.push(v)
    else collectRefs(v, out)
  }
  return out
}

/** [path to the object, object] for every object that has some `x-orch-*` key. */
function withOrchExtensions(node: unknown, at = '', out: Array<[string, Node]> = []): Array<[string, Node]> {
  if (Array.isArray(node)) { node.forEach((x, i) => withOrchExtensions(x, `${at}[${i}]`, out)); return out }
  if (node === null || typeof node !== 'object') return out
  if (Object.keys(node).some((k) => k.startsWith('x-orch-'))) out.push([at, node as Node])
  for (const [k, v] of Object.entries(node as Node)) {
    if (k === 'properties' && v !== null && typeof v === 'object') {
      // Keys of a properties map are field names (JSONSchemaProps has fields named x-…): only walk their schemas.
      for (const [pk, pv] of Object.entries(v as Node)) withOrchExtensions(pv, `${at}.properties.${pk}`, out)
    } else if (!k.startsWith('x-')) withOrchExtensions(v, `${at}.${k}`, out)
  }
  return out
}

t.test('/version has all nine keys', async (t) => {
  const v = versionInfo()
  t.same(Object.keys(v).sort(), ['buildDate', 'compiler', 'gitCommit', 'gitTreeState', 'gitVersion', 'goVersion', 'major', 'minor', 'platform'])
  t.equal(v.major, '1')
  t.equal(v.minor, '32')
  t.equal(v.gitVersion, 'v1.32.0+orch')
  t.equal(v.compiler, 'gc')
  t.match(v.platform, /^[a-z0-9]+\/[a-z0-9]+$/)
  if (process.arch === 'x64') t.equal(v.platform, `${process.platform}/amd64`)
  for (const [k, val] of Object.entries(v)) t.type(val, 'string', k)
})

t.test('/api and /apis', async (t) => {
  t.same(apiVersions('10.0.0.1:6443'), {
    kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '10.0.0.1:6443' }],
  })
  const list = apiGroupList(registry)
  t.equal(list.kind, 'APIGroupList')
  t.equal(list.apiVersion, 'v1')
  t.notOk(list.groups.some((g) => g.name === ''), 'the core group is not listed')
  const appsGroup = list.groups.find((g) => g.name === 'apps')
  t.same(appsGroup, { name: 'apps', versions: [{ groupVersion: 'apps/v1', version: 'v1' }], preferredVersion: { groupVersion: 'apps/v1', version: 'v1' } })
  t.ok(list.groups.some((g) => g.name === 'rbac.authorization.orch.io'), 'our group names')
  t.notOk(list.groups.some((g) => g.name.endsWith('.k8s.io')), 'no upstream group names')
  for (const g of list.groups) t.same(g.preferredVersion, g.versions[0], `${g.name} prefers its first version`)
  t.same(apiGroup(registry, 'apps'), { kind: 'APIGroup', apiVersion: 'v1', ...appsGroup })
  t.equal(apiGroup(registry, ''), undefined)
  t.equal(apiGroup(registry, 'nope.example.com'), undefined)
})

t.test('APIResourceList', async (t) => {
  const l = apiResourceList(registry, 'apps', 'v1')
  if (!l) throw new Error('apps/v1 not served')
  t.equal(l.kind, 'APIResourceList')
  t.equal(l.apiVersion, 'v1')
  t.equal(l.groupVersion, 'apps/v1')
  const names = l.resources.map((r) => r.name)
  t.same(names, [...names].sort(), 'sorted by name')
  const by = (n: string) => l.resources.find((r) => r.name === n)
  t.match(by('deployments'), {
    name: 'deployments', singularName: 'deployment', namespaced: true, kind: 'Deployment',
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'], shortNames: ['deploy'], categories: ['all'],
  })
  // Upstream's value for apps/v1 Deployment (same group name here).
  t.equal(by('deployments')?.storageVersionHash, '8aSe+NMegvE=')
  t.same(by('deployments/status'), { name: 'deployments/status', singularName: '', namespaced: true, kind: 'Deployment', verbs: ['get', 'patch', 'update'] })
  t.same(by('deployments/scale'), {
    name: 'deployments/scale', singularName: '', namespaced: true, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'],
  })

  const c = apiResourceList(registry, '', 'v1')
  if (!c) throw new Error('v1 not served')
  t.equal(c.groupVersion, 'v1')
  t.notOk('apiVersion' in c, 'upstream omits apiVersion on /api/v1')
  const cm = c.resources.find((r) => r.name === 'configmaps')
  t.match(cm, { singularName: 'configmap', namespaced: true, kind: 'ConfigMap', shortNames: ['cm'] })
  t.equal(cm?.storageVersionHash, 'qFsyl6wFWjQ=', 'upstream value for /v1/ConfigMap')
  t.equal(cm?.storageVersionHash, storageVersionHash('', 'v1', 'ConfigMap'))
  t.notOk(c.resources.some((r) => 'shortNames' in r && r.shortNames?.length === 0), 'no empty shortNames')
  for (const r of [...c.resources, ...l.resources]) t.same(r.verbs, [...r.verbs].sort(), `${r.name} verbs sorted`)

  t.equal(apiResourceList(registry, 'apps', 'v9'), undefined)
})

t.test('OpenAPI v3 index', async (t) => {
  const index = JSON.parse(v3.index) as { paths: Record<string, { serverRelativeURL: string }> }
  t.same(openapiV3Index(registry, defs), index)
  const keys = Object.keys(index.paths)
  t.ok(keys.includes('api/v1'))
  t.ok(keys.includes('apis/apps/v1'))
  t.ok(keys.includes('apis/rbac.authorization.orch.io/v1'))
  t.notOk(keys.some((k) => k.startsWith('/')), 'keys have no leading slash')
  t.same(keys.sort(), [...v3.docs.keys()].sort(), 'one document per index entry')
  for (const [key, { serverRelativeURL }] of Object.entries(index.paths)) {
    const d = v3.docs.get(key) as { json: string; hash: string }
    const hash = createHash('sha512').update(d.json).digest('hex').toUpperCase()
    t.equal(d.hash, hash, `${key}: hash is the SHA-512 of the served JSON`)
    t.match(hash, /^[0-9A-F]{128}$/)
    t.equal(serverRelativeURL, `/openapi/v3/${key}?hash=${hash}`)
  }
  t.equal(buildOpenAPIV3(registry, defs).docs.get('api/v1')?.hash, v3.docs.get('api/v1')?.hash, 'deterministic')
})

t.test('OpenAPI v3 configmap operations', async (t) => {
  t.equal(core.openapi, '3.0.0')
  t.same(core.info, { title: 'Orch', version: 'v1.32.0' })
  const gvk = { group: '', version: 'v1', kind: 'ConfigMap' }
  const item = core.paths['/api/v1/namespaces/{namespace}/configmaps/{name}']
  t.ok(item, 'item path')
  t.same(item.parameters.filter((p: Node) => p.in === 'path').map((p: Node) => p.name).sort(), ['name', 'namespace'])
  t.ok(item.parameters.some((p: Node) => p.name === 'pretty' && p.in === 'query'))

  const patch = item.patch
  t.same(patch['x-kubernetes-group-version-kind'], gvk, 'GVK is a single object')
  t.same(patch['x-orch-group-version-kind'], gvk)
  t.equal(patch['x-kubernetes-action'], 'patch')
  t.ok(patch.parameters.some((p: Node) => p.name === 'fieldValidation' && p.in === 'query'), 'fieldValidation on PATCH')
  for (const n of ['dryRun', 'fieldManager', 'force']) t.ok(patch.parameters.some((p: Node) => p.name === n && p.in === 'query'), n)
  t.same(Object.keys(patch.requestBody.content).sort(), [...PATCH_CONTENT_TYPES].sort())
  t.ok(patch.requestBody.content['application/strategic-merge-patch+json'])
  t.same(patch.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/io.orch.api.core.v1.ConfigMap' })
  t.ok(patch.responses['201'])

  t.same(item.put['x-kubernetes-group-version-kind'], gvk)
  t.same(item.get['x-kubernetes-group-version-kind'], gvk)
  t.same(item.delete['x-kubernetes-group-version-kind'], gvk)
  t.equal(item.put['x-kubernetes-action'], 'put')
  t.same(Object.keys(item.put.requestBody.content).sort(), ['application/json', 'application/yaml'])
  t.same(item.put.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/io.orch.api.core.v1.ConfigMap' })

  const coll = core.paths['/api/v1/namespaces/{namespace}/configmaps']
  t.equal(coll.get['x-kubernetes-action'], 'list')
  t.equal(coll.post['x-kubernetes-action'], 'post')
  t.equal(coll.delete['x-kubernetes-action'], 'deletecollection')
  for (const n of ['fieldValidation', 'dryRun', 'fieldManager']) t.ok(coll.post.parameters.some((p: Node) => p.name === n && p.in === 'query'), `post ${n}`)
  t.same(Object.keys(coll.post.requestBody.content).sort(), ['application/json', 'application/yaml'])
  t.same(coll.post.responses['201'].content['application/json'].schema, { $ref: '#/components/schemas/io.orch.api.core.v1.ConfigMap' })
  t.same(coll.get.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/io.orch.api.core.v1.ConfigMapList' })
  t.same(core.paths['/api/v1/configmaps'].get['x-kubernetes-group-version-kind'], gvk, 'all-namespaces list path')

  const ns = core.paths['/api/v1/namespaces/{name}']
  t.ok(ns?.patch, 'cluster-scoped item path')
  t.notOk(ns.parameters.some((p: Node) => p.name === 'namespace'))
})

t.test('OpenAPI v3 schemas', async (t) => {
  const cm = core.components.schemas['io.orch.api.core.v1.ConfigMap']
  const gvk = { group: '', kind: 'ConfigMap', version: 'v1' }
  t.same(cm['x-kubernetes-group-version-kind'], [gvk], 'GVK array')
  t.same(cm['x-orch-group-version-kind'], [gvk])
  t.ok(cm.properties.data, 'data field')

  for (const [key, { json }] of v3.docs) {
    const d = JSON.parse(json) as Node
    const refs = collectRefs(d)
    t.notOk(refs.some((r) => !r.startsWith('#/components/schemas/')), `${key}: only component refs`)
    const missing = refs.filter((r) => !(r.slice('#/components/schemas/'.length) in d.components.schemas))
    t.same([...new Set(missing)], [], `${key}: every ref resolves`)
    const untwinned = withOrchExtensions(d).flatMap(([at, o]) => Object.keys(o)
      .filter((k) => k.startsWith('x-orch-'))
      .filter((k) => JSON.stringify(o[`x-kubernetes-${k.slice('x-orch-'.length)}`]) !== JSON.stringify(o[k]))
      .map((k) => `${at}.${k}`))
    t.same(untwinned, [], `${key}: every x-orch-* extension has its x-kubernetes-* twin`)
  }

  // Patch metadata kubectl uses for strategic merge patches.
  const spec = apps.components.schemas['io.orch.api.apps.v1.DeploymentSpec']
  t.equal(spec.properties.strategy['x-kubernetes-patch-strategy'], 'retainKeys')
  t.same(spec.properties.strategy.allOf, [{ $ref: '#/components/schemas/io.orch.api.apps.v1.DeploymentStrategy' }], '$ref with siblings wrapped in allOf')
  t.equal(spec.properties.replicas.type, 'integer')
  const podSpec = apps.components.schemas['io.orch.api.core.v1.PodSpec']
  t.equal(podSpec.properties.containers['x-kubernetes-patch-merge-key'], 'name')
  t.equal(podSpec.properties.containers['x-kubernetes-patch-strategy'], 'merge')
  t.equal(podSpec.properties.containers['x-kubernetes-list-type'], 'map')
  t.same(podSpec.properties.containers['x-kubernetes-list-map-keys'], ['name'])

  // Our group names stay in GVKs.
  const rbac = doc('apis/rbac.authorization.orch.io/v1')
  t.same(rbac.components.schemas['io.orch.api.rbac.v1.Role']['x-kubernetes-group-version-kind'], [{ group: 'rbac.authorization.orch.io', kind: 'Role', version: 'v1' }])
  t.same(rbac.paths['/apis/rbac.authorization.orch.io/v1/namespaces/{namespace}/roles/{name}'].patch['x-kubernetes-group-version-kind'],
    { group: 'rbac.authorization.orch.io', version: 'v1', kind: 'Role' })
})

t.test('OpenAPI v3 sub-resources', async (t) => {
  const scale = apps.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale']
  t.same(scale.patch['x-kubernetes-group-version-kind'], { group: 'autoscaling', version: 'v1', kind: 'Scale' })
  t.same(scale.put.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/io.orch.api.autoscaling.v1.Scale' })
  t.same(apps.components.schemas['io.orch.api.autoscaling.v1.Scale']['x-kubernetes-group-version-kind'], [{ group: 'autoscaling', kind: 'Scale', version: 'v1' }])
  const status = apps.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}/status']
  t.same(status.patch['x-kubernetes-group-version-kind'], { group: 'apps', version: 'v1', kind: 'Deployment' })
  t.ok(status.patch.parameters.some((p: Node) => p.name === 'fieldValidation'))
  t.ok(status.get && status.put)
})

t.test('kubectl look-ups succeed for every served type', async (t) => {
  for (const d of registry.all) {
    const key = d.group === '' ? `api/${d.version}` : `apis/${d.group}/${d.version}`
    const gv = doc(key)
    const gvk = { group: d.group, version: d.version, kind: d.kind }
    // kubectl explain (plaintext template): GVK from an operation on one of four paths, then the schema whose GVK array holds it.
    const prefix = d.group === '' ? '/api' : `/apis/${d.group}`
    const search = [`${prefix}/${d.version}/${d.resource}`, `${prefix}/${d.version}/${d.resource}/{name}`,
      `${prefix}/${d.version}/namespaces/{namespace}/${d.resource}`, `${prefix}/${d.version}/namespaces/{namespace}/${d.resource}/{name}`]
    let found: unknown
    for (const p of search) {
      for (const m of ['get', 'post', 'put', 'patch', 'delete']) {
        found ??= gv.paths[p]?.[m]?.['x-kubernetes-group-version-kind']
      }
    }
    t.same(found, gvk, `${d.resource}: explain finds the GVK`)
    const schemas = Object.values(gv.components.schemas as Record<string, Node>)
      .filter((s) => (s['x-kubernetes-group-version-kind'] ?? []).some((x: unknown) => JSON.stringify(Object.entries(x as Node).sort()) === JSON.stringify(Object.entries(gvk).sort())))
    t.equal(schemas.length, 1, `${d.resource}: exactly one schema carries the GVK`)
    // Field-validation probe: a PATCH operation with this GVK lists fieldValidation.
    if ((d.verbs as string[]).includes('patch')) {
      const patches = Object.values(gv.paths as Record<string, Node>).map((p) => p.patch).filter((o) => o && JSON.stringify(o['x-kubernetes-group-version-kind']) !== undefined &&
        o['x-kubernetes-group-version-kind'].group === d.group && o['x-kubernetes-group-version-kind'].version === d.version && o['x-kubernetes-group-version-kind'].kind === d.kind)
      t.ok(patches.length > 0, `${d.resource}: has a PATCH operation`)
      t.ok(patches.every((o) => o.parameters.some((p: Node) => p.name === 'fieldValidation' && p.in === 'query')), `${d.resource}: PATCH lists fieldValidation`)
      t.ok(patches.every((o) => 'application/strategic-merge-patch+json' in o.requestBody.content), `${d.resource}: PATCH accepts SMP`)
    }
  }
})

t.test('OpenAPI v2', async (t) => {
  const v2 = openapiV2(registry, defs)
  t.equal(v2.swagger, '2.0')
  t.same(v2.info, { title: 'Orch', version: 'v1.32.0' })
  const cm = v2.definitions['io.orch.api.core.v1.ConfigMap']
  t.same(cm['x-kubernetes-group-version-kind'], [{ group: '', kind: 'ConfigMap', version: 'v1' }])
  t.same(cm['x-orch-group-version-kind'], cm['x-kubernetes-group-version-kind'])
  t.equal(cm.properties.metadata.$ref, '#/definitions/io.orch.apimachinery.pkg.apis.meta.v1.ObjectMeta')
  const refs = collectRefs(v2)
  t.notOk(refs.some((r) => !r.startsWith('#/definitions/')), 'only definition refs')
  t.same([...new Set(refs.filter((r) => !(r.slice('#/definitions/'.length) in v2.definitions)))], [], 'every ref resolves')
  const used = new Set(refs.map((r) => r.slice('#/definitions/'.length)))
  t.same(Object.keys(v2.definitions).filter((n) => !used.has(n)), [], 'only the definitions in use')
  const patch = v2.paths['/api/v1/namespaces/{namespace}/configmaps/{name}'].patch
  t.same(patch['x-kubernetes-group-version-kind'], { group: '', version: 'v1', kind: 'ConfigMap' })
  t.ok(patch.consumes.includes('application/strategic-merge-patch+json'))
  t.ok(patch.parameters.some((p: Node) => p.name === 'fieldValidation' && p.in === 'query'))
  t.ok(patch.parameters.some((p: Node) => p.in === 'body' && p.schema.$ref === '#/definitions/io.orch.apimachinery.pkg.apis.meta.v1.Patch'))
  const untwinned = withOrchExtensions(v2).flatMap(([at, o]) => Object.keys(o)
    .filter((k) => k.startsWith('x-orch-') && JSON.stringify(o[`x-kubernetes-${k.slice('x-orch-'.length)}`]) !== JSON.stringify(o[k])).map((k) => `${at}.${k}`))
  t.same(untwinned, [], 'every x-orch-* extension has its x-kubernetes-* twin')
  t.ok(v2.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale'], 'sub-resource paths')
})
