// Black-box tests of /version, legacy discovery (/api, /apis, resource lists) and the OpenAPI documents, over real HTTP.
import t from 'tap'
import { createHash } from 'node:crypto'
import { startServer, type TestServer } from '../helpers/server.js'

let s: TestServer

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']

/** base64 (std, padded) of the first 8 bytes of sha256("<group>/<version>/<kind>"). */
const svHash = (g: string, v: string, k: string) => createHash('sha256').update(`${g}/${v}/${k}`).digest().subarray(0, 8).toString('base64')

const SERVED_GROUPS: Record<string, string> = {
  apps: 'v1', batch: 'v1', policy: 'v1', autoscaling: 'v2',
  'networking.orch.io': 'v1', 'rbac.authorization.orch.io': 'v1', 'flowcontrol.apiserver.orch.io': 'v1',
  'admissionregistration.orch.io': 'v1', 'coordination.orch.io': 'v1', 'discovery.orch.io': 'v1',
  'events.orch.io': 'v1', 'certificates.orch.io': 'v1', 'scheduling.orch.io': 'v1', 'node.orch.io': 'v1',
  'storage.orch.io': 'v1', 'apiextensions.orch.io': 'v1',
}

t.test('/version has exactly the nine keys, all strings', async (t) => {
  const r = await s.request('GET', '/version')
  t.equal(r.status, 200)
  t.match(String(r.headers['content-type']), /^application\/json/)
  t.same(Object.keys(r.json).sort(), ['buildDate', 'compiler', 'gitCommit', 'gitTreeState', 'gitVersion', 'goVersion', 'major', 'minor', 'platform'])
  for (const [k, v] of Object.entries(r.json)) t.type(v, 'string', k)
  t.equal(r.json.major, '1')
  const m = /^v(\d+)\.(\d+)\.(\d+)([+-].*)?$/.exec(r.json.gitVersion)
  t.ok(m, `gitVersion ${r.json.gitVersion} is semver with a v`)
  t.equal(m?.[1], r.json.major, 'major matches gitVersion')
  t.equal(m?.[2], r.json.minor, 'minor matches gitVersion')
  t.match(r.json.platform, /^[a-z0-9]+\/[a-z0-9]+$/)
  t.ok(['clean', 'dirty'].includes(r.json.gitTreeState))
  t.ok(!Number.isNaN(Date.parse(r.json.buildDate)), 'buildDate is a time')
  // /version/ is the same document.
  const r2 = await s.request('GET', '/version/')
  t.equal(r2.status, 200)
  t.same(r2.json, r.json)
})

t.test('/api is APIVersions with v1 and a server address', async (t) => {
  const r = await s.request('GET', '/api')
  t.equal(r.status, 200)
  t.match(String(r.headers['content-type']), /^application\/json/)
  t.equal(r.json.kind, 'APIVersions')
  t.same(r.json.versions, ['v1'])
  t.ok(Array.isArray(r.json.serverAddressByClientCIDRs) && r.json.serverAddressByClientCIDRs.length >= 1)
  t.equal(r.json.serverAddressByClientCIDRs[0].clientCIDR, '0.0.0.0/0')
  t.match(r.json.serverAddressByClientCIDRs[0].serverAddress, /^[^:]+:\d+$/)
})

t.test('/apis is APIGroupList without the core group', async (t) => {
  const r = await s.request('GET', '/apis')
  t.equal(r.status, 200)
  t.equal(r.json.kind, 'APIGroupList')
  t.equal(r.json.apiVersion, 'v1')
  const groups: any[] = r.json.groups
  const names = groups.map((g) => g.name)
  t.notOk(names.includes(''), 'no core group')
  t.notOk(names.includes('v1'), 'no core group by version')
  t.equal(new Set(names).size, names.length, 'no duplicate groups')
  for (const [g, v] of Object.entries(SERVED_GROUPS)) {
    const e = groups.find((x) => x.name === g)
    t.ok(e, `has ${g}`)
    if (!e) continue
    t.ok(e.versions.some((x: any) => x.groupVersion === `${g}/${v}` && x.version === v), `${g} serves ${v}`)
    t.same(e.preferredVersion, { groupVersion: `${g}/${v}`, version: v }, `${g} prefers ${v}`)
  }
  for (const n of names) t.notMatch(n, /k8s\.io$/, `${n} is rebranded`)
  for (const e of groups) t.ok(e.versions.some((v: any) => v.groupVersion === e.preferredVersion.groupVersion), `${e.name} preferred is served`)
  const apps = groups.find((x) => x.name === 'apps')
  t.same(apps, { name: 'apps', versions: [{ groupVersion: 'apps/v1', version: 'v1' }], preferredVersion: { groupVersion: 'apps/v1', version: 'v1' } })
})

t.test('/apis/<group> is one APIGroup', async (t) => {
  const r = await s.request('GET', '/apis/rbac.authorization.orch.io')
  t.equal(r.status, 200)
  t.same(r.json, {
    kind: 'APIGroup', apiVersion: 'v1', name: 'rbac.authorization.orch.io',
    versions: [{ groupVersion: 'rbac.authorization.orch.io/v1', version: 'v1' }],
    preferredVersion: { groupVersion: 'rbac.authorization.orch.io/v1', version: 'v1' },
  })
})

t.test('/api/v1 APIResourceList: configmaps, nodes, subresources', async (t) => {
  const r = await s.request('GET', '/api/v1')
  t.equal(r.status, 200)
  t.equal(r.json.kind, 'APIResourceList')
  t.equal(r.json.groupVersion, 'v1')
  const res: any[] = r.json.resources
  const cm = res.find((x) => x.name === 'configmaps')
  t.same(cm, {
    name: 'configmaps', singularName: 'configmap', namespaced: true, kind: 'ConfigMap',
    verbs: ALL_VERBS, shortNames: ['cm'], storageVersionHash: svHash('', 'v1', 'ConfigMap'),
  })
  t.equal(cm.storageVersionHash, 'qFsyl6wFWjQ=', 'the upstream hash for /v1/ConfigMap')
  const nodes = res.find((x) => x.name === 'nodes')
  t.equal(nodes.namespaced, false)
  t.equal(nodes.kind, 'Node')
  t.same(nodes.shortNames, ['no'])
  const ns = res.find((x) => x.name === 'namespaces')
  t.equal(ns.namespaced, false)
  t.same(ns.shortNames, ['ns'])
  const nodeStatus = res.find((x) => x.name === 'nodes/status')
  t.same(nodeStatus, { name: 'nodes/status', singularName: '', namespaced: false, kind: 'Node', verbs: ['get', 'patch', 'update'] })
  for (const e of res) {
    for (const k of ['name', 'singularName', 'namespaced', 'kind', 'verbs']) t.ok(k in e, `${e.name} has ${k}`)
    t.same([...e.verbs].sort(), e.verbs, `${e.name} verbs are sorted`)
  }
  const names = res.map((x) => x.name)
  t.equal(new Set(names).size, names.length, 'no duplicate resources')
})

t.test('/apis/apps/v1 APIResourceList: deployments and deployments/scale', async (t) => {
  const r = await s.request('GET', '/apis/apps/v1')
  t.equal(r.status, 200)
  t.equal(r.json.kind, 'APIResourceList')
  t.equal(r.json.apiVersion, 'v1')
  t.equal(r.json.groupVersion, 'apps/v1')
  const res: any[] = r.json.resources
  const d = res.find((x) => x.name === 'deployments')
  t.same(d, {
    name: 'deployments', singularName: 'deployment', namespaced: true, kind: 'Deployment', verbs: ALL_VERBS,
    shortNames: ['deploy'], categories: ['all'], storageVersionHash: svHash('apps', 'v1', 'Deployment'),
  })
  const scale = res.find((x) => x.name === 'deployments/scale')
  t.same(scale, { name: 'deployments/scale', singularName: '', namespaced: true, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] })
  const status = res.find((x) => x.name === 'deployments/status')
  t.same(status, { name: 'deployments/status', singularName: '', namespaced: true, kind: 'Deployment', verbs: ['get', 'patch', 'update'] })
})

t.test('every served group-version has an APIResourceList; unknown ones are 404', async (t) => {
  for (const [g, v] of Object.entries(SERVED_GROUPS)) {
    const r = await s.request('GET', `/apis/${g}/${v}`)
    t.equal(r.status, 200, `${g}/${v}`)
    t.equal(r.json?.groupVersion, `${g}/${v}`)
    t.ok(r.json?.resources?.length > 0, `${g}/${v} has resources`)
  }
  const rbac = await s.request('GET', '/apis/rbac.authorization.orch.io/v1')
  const roles = rbac.json.resources.find((x: any) => x.name === 'roles')
  t.same(roles?.verbs, ALL_VERBS)
  t.equal(roles?.namespaced, true)
  t.equal(rbac.json.resources.find((x: any) => x.name === 'clusterroles')?.namespaced, false)
  const none = await s.request('GET', '/apis/nope.orch.io/v1')
  t.equal(none.status, 404)
  t.equal(none.text.trim(), '404 page not found')
  const badV = await s.request('GET', '/apis/apps/v9')
  t.equal(badV.status, 404)
})

t.test('/openapi/v2 as JSON', async (t) => {
  const r = await s.request('GET', '/openapi/v2', undefined, { accept: 'application/json' })
  t.equal(r.status, 200)
  t.match(String(r.headers['content-type']), /^application\/json/)
  t.equal(r.json.swagger, '2.0')
  t.ok(Object.keys(r.json.paths).length > 0, 'has paths')
  const cmKey = Object.keys(r.json.definitions).find((k) => /\.api\.core\.v1\.ConfigMap$/.test(k))
  t.ok(cmKey, 'has a ConfigMap definition')
  t.same(r.json.definitions[cmKey!]['x-kubernetes-group-version-kind'], [{ group: '', kind: 'ConfigMap', version: 'v1' }])
  const dKey = Object.keys(r.json.definitions).find((k) => /\.api\.apps\.v1\.Deployment$/.test(k))
  t.same(r.json.definitions[dKey!]['x-kubernetes-group-version-kind'], [{ group: 'apps', kind: 'Deployment', version: 'v1' }])
  // No Accept at all is JSON too.
  const r2 = await s.request('GET', '/openapi/v2')
  t.equal(r2.status, 200)
  t.equal(r2.json?.swagger, '2.0')
})

t.test('/openapi/v2 protobuf Accept is 406, never JSON', async (t) => {
  const r = await s.request('GET', '/openapi/v2', undefined, { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' })
  t.equal(r.status, 406)
  t.equal(r.json?.kind, 'Status')
  t.equal(r.json?.apiVersion, 'v1')
  t.equal(r.json?.status, 'Failure')
  t.equal(r.json?.reason, 'NotAcceptable')
  t.equal(r.json?.code, 406)
  t.equal(r.json?.swagger, undefined, 'not the document')
})

t.test('/openapi/v3 index', async (t) => {
  const r = await s.request('GET', '/openapi/v3')
  t.equal(r.status, 200)
  t.match(String(r.headers['content-type']), /^application\/json/)
  const paths: Record<string, { serverRelativeURL: string }> = r.json.paths
  t.same(Object.keys(r.json), ['paths'])
  t.ok(paths['api/v1'], 'has api/v1')
  t.ok(paths['apis/apps/v1'], 'has apis/apps/v1')
  for (const [g, v] of Object.entries(SERVED_GROUPS)) t.ok(paths[`apis/${g}/${v}`], `has apis/${g}/${v}`)
  for (const [k, v] of Object.entries(paths)) {
    t.notOk(k.startsWith('/'), `${k} has no leading slash`)
    t.match(v.serverRelativeURL, new RegExp(`^/openapi/v3/${k.replace(/\./g, '\\.')}\\?hash=[0-9A-F]{128}$`), `${k} URL`)
  }
})

t.test('/openapi/v3 per group-version document: hash, ETag, caching, redirect', async (t) => {
  const idx = await s.request('GET', '/openapi/v3')
  for (const key of ['api/v1', 'apis/apps/v1']) {
    const url: string = idx.json.paths[key].serverRelativeURL
    const hash = url.slice(url.indexOf('hash=') + 5)
    const r = await s.request('GET', url, undefined, { accept: 'application/json' })
    t.equal(r.status, 200, `${key} status`)
    t.match(String(r.headers['content-type']), /^application\/json/)
    t.equal(r.json.openapi.split('.')[0], '3', `${key} is OpenAPI 3`)
    t.equal(createHash('sha512').update(r.text).digest('hex').toUpperCase(), hash, `${key} hash is the SHA-512 of the body`)
    t.equal(r.headers['etag'], `"${hash}"`, `${key} ETag`)
    t.equal(r.headers['cache-control'], 'public, immutable', `${key} Cache-Control with a matching hash`)
    const exp = Date.parse(String(r.headers['expires']))
    t.ok(exp - Date.now() > 360 * 86400_000, `${key} Expires about a year ahead`)
    // Without the hash: same body, still an ETag.
    const plain = await s.request('GET', `/openapi/v3/${key}`)
    t.equal(plain.status, 200)
    t.equal(plain.text, r.text)
    t.equal(plain.headers['etag'], `"${hash}"`)
    // A stale hash redirects to the current URL.
    const stale = await s.request('GET', `/openapi/v3/${key}?hash=0000`)
    t.equal(stale.status, 301, `${key} stale hash`)
    t.equal(stale.headers['location'], url)
  }
  const unknown = await s.request('GET', '/openapi/v3/apis/nope.orch.io/v1')
  t.equal(unknown.status, 404)
})

t.test('/openapi/v3 core document has what kubectl reads', async (t) => {
  const r = await s.request('GET', '/openapi/v3/api/v1')
  const p = r.json.paths['/api/v1/namespaces/{namespace}/configmaps/{name}']
  t.ok(p?.patch, 'configmap PATCH operation')
  t.same(p.patch['x-kubernetes-group-version-kind'], { group: '', kind: 'ConfigMap', version: 'v1' })
  const params: any[] = [...(p.patch.parameters ?? []), ...(p.parameters ?? [])]
  t.ok(params.some((x) => x.name === 'fieldValidation' && x.in === 'query'), 'fieldValidation parameter')
  t.ok('application/strategic-merge-patch+json' in p.patch.requestBody.content, 'SMP content type')
  t.ok('application/apply-patch+yaml' in p.patch.requestBody.content, 'apply content type')
  const schemaKey = Object.keys(r.json.components.schemas).find((k) => /\.api\.core\.v1\.ConfigMap$/.test(k))
  t.same(r.json.components.schemas[schemaKey!]['x-kubernetes-group-version-kind'], [{ group: '', kind: 'ConfigMap', version: 'v1' }])
})

t.test('/openapi/v3 document refuses an Accept it cannot serve', async (t) => {
  const r = await s.request('GET', '/openapi/v3/api/v1', undefined, { accept: 'application/xml' })
  t.equal(r.status, 406)
})

t.test('/openapi/v3 and its documents answer If-None-Match with 304 (ETag on both)', async (t) => {
  const doc = await s.request('GET', '/openapi/v3/apis/apps/v1')
  const etag = String(doc.headers['etag'] ?? '')
  t.match(etag, /^"[0-9A-F]{128}"$/, 'the document has an ETag')
  t.equal(doc.headers['vary'], 'Accept')
  const again = await s.request('GET', '/openapi/v3/apis/apps/v1', undefined, { 'if-none-match': etag })
  t.equal(again.status, 304, 'not modified')
  t.equal(again.text, '', 'no body')
  const index = await s.request('GET', '/openapi/v3')
  const ie = String(index.headers['etag'] ?? '')
  t.match(ie, /^"[0-9A-F]{128}"$/, 'the index has an ETag')
  t.equal((await s.request('GET', '/openapi/v3', undefined, { 'if-none-match': ie })).status, 304)
  t.equal((await s.request('GET', '/openapi/v3', undefined, { 'if-none-match': '"other"' })).status, 200, 'another version: the document')
})
