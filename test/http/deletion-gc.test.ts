// Black-box: deletion as upstream's generic store, namespace controller and garbage collector run it — the namespace
// deletion conditions, a cluster-scoped dependent of a namespaced owner left alone, Background for a foreground
// owner's leaf dependents, the intermediate write of an immediate pod delete, generation on deletion, GC finalizers
// re-applied by a repeated delete, a deletecollection page, the body winning over the query, and the legacy 202.
import t from 'tap'
import { startServer, type TestServer, type Reply } from '../helpers/server.js'
import { created, eventually } from '../helpers/poll.js'

let s: TestServer
t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

const MERGE = { 'content-type': 'application/merge-patch+json' }
const HOLD = 'example.com/hold'
const cmPath = (name = '', ns = 'default') => `/api/v1/namespaces/${ns}/configmaps${name ? '/' + name : ''}`
const secretPath = (name = '', ns = 'default') => `/api/v1/namespaces/${ns}/secrets${name ? '/' + name : ''}`
const podPath = (name = '', ns = 'default') => `/api/v1/namespaces/${ns}/pods${name ? '/' + name : ''}`
const crPath = (name = '') => `/apis/rbac.authorization.orch.io/v1/clusterroles${name ? '/' + name : ''}`

function cm(name: string, metadata: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...metadata }, data: { k: 'v' } }
}

const gone = (path: string) => async () => (await s.request('GET', path)).status === 404
const release = (path: string) => s.request('PATCH', path, { metadata: { finalizers: null } }, MERGE)
const ref = (o: any) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, uid: o.metadata.uid })

/** The events of a watch from `rv` that ends after `seconds`: type, and the object's metadata. */
async function events(path: string, rv: string, seconds = 2): Promise<Array<{ type: string; metadata: any }>> {
  const r = await s.request('GET', `${path}${path.includes('?') ? '&' : '?'}watch=1&resourceVersion=${rv}&timeoutSeconds=${seconds}`)
  if (r.status !== 200) throw new Error(`watch ${path}: ${r.status} ${r.text}`)
  return r.text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l)).filter((e) => e.type !== 'BOOKMARK').map((e) => ({ type: e.type, metadata: e.object.metadata }))
}

t.test('a terminating namespace reports its deletion conditions; its delete sets no grace period', async (t) => {
  await created(await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'cond' } }), 'cond')
  await created(await s.request('POST', cmPath('', 'cond'), cm('held', { finalizers: [HOLD] })), 'held')
  await created(await s.request('POST', cmPath('', 'cond'), cm('free')), 'free')
  const d = await s.request('DELETE', '/api/v1/namespaces/cond')
  t.equal(d.status, 200, d.text)
  t.type(d.json.metadata.deletionTimestamp, 'string')
  t.equal(d.json.metadata.deletionGracePeriodSeconds, undefined, 'a namespace delete sets only the timestamp')
  t.equal(d.json.status.phase, 'Terminating')

  let conditions: any[] = []
  const want = (type: string) => conditions.find((c) => c.type === type)
  t.ok(await eventually(async () => {
    conditions = (await s.request('GET', '/api/v1/namespaces/cond')).json?.status?.conditions ?? []
    return want('NamespaceFinalizersRemaining')?.status === 'True' && (await s.request('GET', cmPath('free', 'cond'))).status === 404
  }), 'conditions written')
  t.same(conditions.map((c) => c.type), ['NamespaceDeletionDiscoveryFailure', 'NamespaceDeletionGroupVersionParsingFailure', 'NamespaceDeletionContentFailure', 'NamespaceContentRemaining', 'NamespaceFinalizersRemaining'])
  t.match(want('NamespaceDeletionDiscoveryFailure'), { status: 'False', reason: 'ResourcesDiscovered', message: 'All resources successfully discovered' })
  t.match(want('NamespaceDeletionGroupVersionParsingFailure'), { status: 'False', reason: 'ParsedGroupVersions', message: 'All legacy kube types successfully parsed' })
  t.match(want('NamespaceDeletionContentFailure'), { status: 'False', reason: 'ContentDeleted', message: 'All content successfully deleted, may be waiting on finalization' })
  t.match(want('NamespaceContentRemaining'), { status: 'True', reason: 'SomeResourcesRemain', message: 'Some resources are remaining: configmaps. has 1 resource instances' })
  t.match(want('NamespaceFinalizersRemaining'), { status: 'True', reason: 'SomeFinalizersRemain', message: `Some content in the namespace has finalizers remaining: ${HOLD} in 1 resource instances` })
  for (const c of conditions) t.match(c.lastTransitionTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)

  t.equal((await release(cmPath('held', 'cond'))).status, 200)
  t.ok(await eventually(gone('/api/v1/namespaces/cond')), 'the namespace goes once its content is gone')
})

t.test('the GC leaves a cluster-scoped object that names a namespaced owner', async (t) => {
  const owner = await created(await s.request('POST', cmPath(), cm('ns-owner')), 'ns-owner')
  const cr = (name: string, owners: unknown[]) => ({ apiVersion: 'rbac.authorization.orch.io/v1', kind: 'ClusterRole', metadata: { name, ownerReferences: owners }, rules: [] })
  await created(await s.request('POST', crPath(), cr('gc-invalid-live', [ref(owner)])), 'gc-invalid-live')
  await created(await s.request('POST', crPath(), cr('gc-invalid-missing', [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'nowhere', uid: '00000000-0000-0000-0000-00000000beef' }])), 'gc-invalid-missing')
  // A control the collector does delete: its cluster-scoped owner does not exist.
  await created(await s.request('POST', crPath(), cr('gc-control', [{ apiVersion: 'rbac.authorization.orch.io/v1', kind: 'ClusterRole', name: 'nowhere', uid: '00000000-0000-0000-0000-00000000cafe' }])), 'gc-control')
  t.ok(await eventually(gone(crPath('gc-control'))), 'the control is collected')
  await new Promise((r) => setTimeout(r, 500))
  t.equal((await s.request('GET', crPath('gc-invalid-live'))).status, 200, 'a namespaced owner that exists elsewhere: kept')
  t.equal((await s.request('GET', crPath('gc-invalid-missing'))).status, 200, 'a namespaced owner that exists nowhere: kept too')
})

t.test('foreground deletion: leaf dependents go with Background, dependents with dependents with Foreground', async (t) => {
  const owner = await created(await s.request('POST', cmPath(), cm('fg-owner')), 'fg-owner')
  const leaf = await created(await s.request('POST', secretPath(), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'fg-leaf', finalizers: [HOLD], ownerReferences: [ref(owner)] } }), 'fg-leaf')
  const mid = await created(await s.request('POST', cmPath(), cm('fg-mid', { finalizers: [HOLD], ownerReferences: [ref(owner)] })), 'fg-mid')
  await created(await s.request('POST', secretPath(), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'fg-midleaf', finalizers: [HOLD], ownerReferences: [ref(mid)] } }), 'fg-midleaf')
  const d = await s.request('DELETE', cmPath('fg-owner'), { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' })
  t.equal(d.status, 200, d.text)
  t.same(d.json.metadata.finalizers, ['foregroundDeletion'])
  const meta = async (path: string) => (await s.request('GET', path)).json?.metadata
  t.ok(await eventually(async () => !!(await meta(secretPath('fg-leaf')))?.deletionTimestamp && !!(await meta(cmPath('fg-mid')))?.deletionTimestamp && !!(await meta(secretPath('fg-midleaf')))?.deletionTimestamp), 'dependents are being deleted')
  t.same((await meta(secretPath('fg-leaf'))).finalizers, [HOLD], 'a leaf dependent is deleted with Background')
  // Not even for a moment: no version of the leaf ever carried foregroundDeletion.
  const leafEvents = await events(`${secretPath()}?fieldSelector=metadata.name%3Dfg-leaf`, leaf.metadata.resourceVersion, 1)
  t.ok(leafEvents.length > 0)
  t.same(leafEvents.filter((e) => (e.metadata.finalizers ?? []).includes('foregroundDeletion')), [], 'the leaf never had foregroundDeletion')
  t.same((await meta(cmPath('fg-mid'))).finalizers, [HOLD, 'foregroundDeletion'], 'a dependent with dependents is deleted with Foreground')
  t.same((await meta(secretPath('fg-midleaf'))).finalizers, [HOLD], 'its own leaf with Background')
  for (const p of [secretPath('fg-leaf'), secretPath('fg-midleaf'), cmPath('fg-mid')]) t.equal((await release(p)).status, 200)
  t.ok(await eventually(gone(cmPath('fg-owner'))), 'the owner goes once its dependents are gone')
})

t.test('an immediate pod delete writes the deletion first (MODIFIED), then removes it; other kinds are removed at once', async (t) => {
  const p = await created(await s.request('POST', podPath(), { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'imm' }, spec: { containers: [{ name: 'c', image: 'i' }] } }), 'imm')
  const d = await s.request('DELETE', podPath('imm'))
  t.equal(d.status, 200, d.text)
  t.equal(d.json.kind, 'Pod')
  t.type(d.json.metadata.deletionTimestamp, 'string', 'the answer carries the deletion timestamp')
  t.equal(d.json.metadata.deletionGracePeriodSeconds, 0, 'and a grace period of 0')
  const evs = await events(`${podPath()}?fieldSelector=metadata.name%3Dimm`, p.metadata.resourceVersion, 1)
  t.same(evs.map((e) => e.type), ['MODIFIED', 'DELETED'])
  t.equal(evs[0].metadata.deletionGracePeriodSeconds, 0)
  t.type(evs[0].metadata.deletionTimestamp, 'string')

  const c = await created(await s.request('POST', cmPath(), cm('imm-cm')), 'imm-cm')
  t.equal((await s.request('DELETE', cmPath('imm-cm'))).status, 200)
  const cevs = await events(`${cmPath()}?fieldSelector=metadata.name%3Dimm-cm`, c.metadata.resourceVersion, 1)
  t.same(cevs.map((e) => e.type), ['DELETED'], 'a configmap has no graceful deletion: no intermediate write')
})

t.test('generation moves once when deletion starts, for a kind that tracks it', async (t) => {
  const dep = await created(await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'gen', finalizers: [HOLD] },
    spec: { selector: { matchLabels: { app: 'gen' } }, template: { metadata: { labels: { app: 'gen' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
  }), 'gen')
  t.equal(dep.metadata.generation, 1)
  let d = await s.request('DELETE', '/apis/apps/v1/namespaces/default/deployments/gen')
  t.equal(d.status, 200, d.text)
  t.equal(d.json.metadata.generation, 2, 'the first delete bumps it')
  d = await s.request('DELETE', '/apis/apps/v1/namespaces/default/deployments/gen')
  t.equal(d.json.metadata.generation, 2, 'a repeated delete does not')
  t.equal((await release('/apis/apps/v1/namespaces/default/deployments/gen')).status, 200)
})

t.test('a repeated delete of an object held by finalizers re-applies the GC finalizers of its policy', async (t) => {
  await created(await s.request('POST', cmPath(), cm('repol', { finalizers: [HOLD] })), 'repol')
  let d = await s.request('DELETE', cmPath('repol'))
  t.same(d.json.metadata.finalizers, [HOLD])
  d = await s.request('DELETE', cmPath('repol'), { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' })
  t.equal(d.status, 200, d.text)
  t.same(d.json.metadata.finalizers, [HOLD, 'foregroundDeletion'], 'Foreground adds foregroundDeletion')
  d = await s.request('DELETE', cmPath('repol'), { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Orphan' })
  t.same(d.json.metadata.finalizers, [HOLD, 'orphan'], 'Orphan swaps it for orphan')
  t.equal((await release(cmPath('repol'))).status, 200)
})

t.test('deletecollection with limit deletes one page and answers its continue token', async (t) => {
  for (const n of ['pg-1', 'pg-2', 'pg-3']) await created(await s.request('POST', cmPath(), cm(n, { labels: { page: 'yes' } })), n)
  const d = await s.request('DELETE', `${cmPath()}?labelSelector=page%3Dyes&limit=2`)
  t.equal(d.status, 200, d.text)
  t.equal(d.json.kind, 'ConfigMapList')
  t.same(d.json.items.map((i: any) => i.metadata.name), ['pg-1', 'pg-2'])
  t.type(d.json.metadata.continue, 'string', 'a continue token')
  t.equal((await s.request('GET', cmPath('pg-3'))).status, 200, 'the next page is still there')
  const d2 = await s.request('DELETE', `${cmPath()}?labelSelector=page%3Dyes&continue=${encodeURIComponent(d.json.metadata.continue)}`)
  t.equal(d2.status, 200, d2.text)
  t.same(d2.json.items.map((i: any) => i.metadata.name), ['pg-3'])
  t.equal(d2.json.metadata.continue, undefined)
  t.equal((await s.request('GET', cmPath('pg-3'))).status, 404)
})

t.test('a DELETE with a body ignores its query parameters', async (t) => {
  await created(await s.request('POST', podPath(), { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bodywins' }, spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'i' }] } }), 'bodywins')
  const d = await s.request('DELETE', `${podPath('bodywins')}?gracePeriodSeconds=7`, { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 3 })
  t.equal(d.status, 200, d.text)
  t.equal(d.json.metadata.deletionGracePeriodSeconds, 3)
  t.equal((await s.request('DELETE', podPath('bodywins'), { gracePeriodSeconds: 0 })).status, 200)
})

t.test('orphanDependents=false on a delete that does not finish at once is 202', async (t) => {
  await created(await s.request('POST', cmPath(), cm('legacy', { finalizers: [HOLD] })), 'legacy')
  const d = await s.request('DELETE', cmPath('legacy'), { kind: 'DeleteOptions', apiVersion: 'v1', orphanDependents: false })
  t.equal(d.status, 202, d.text)
  t.equal(d.json.kind, 'ConfigMap')
  t.equal((await release(cmPath('legacy'))).status, 200)
  await created(await s.request('POST', cmPath(), cm('legacy-2')), 'legacy-2')
  const d2 = await s.request('DELETE', cmPath('legacy-2'), { kind: 'DeleteOptions', apiVersion: 'v1', orphanDependents: false })
  t.equal(d2.status, 200, 'removed at once: 200')
  t.equal(d2.json.kind, 'Status')
})
