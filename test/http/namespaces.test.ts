// Black-box: bootstrap namespaces and the namespace lifecycle (Terminating, content removal, finalization).
import t from 'tap'
import { startServer, type TestServer, type Reply } from '../helpers/server.js'
import { eventually } from '../helpers/poll.js'

let s: TestServer
t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

const nsPath = (name = '') => `/api/v1/namespaces${name ? '/' + name : ''}`
const core = (ns: string, res: string, name = '') => `/api/v1/namespaces/${ns}/${res}${name ? '/' + name : ''}`
const grouped = (gv: string, ns: string, res: string, name = '') => `/apis/${gv}/namespaces/${ns}/${res}${name ? '/' + name : ''}`

function must(r: Reply, what: string, status = 201): any {
  if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status} ${r.text}`)
  return r.json
}

/** Creates a namespace holding objects of several types; returns their paths. */
async function populate(ns: string): Promise<string[]> {
  must(await s.request('POST', nsPath(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { team: 'a' } } }), `namespace ${ns}`)
  const paths: string[] = []
  for (const name of ['cm-1', 'cm-2', 'cm-3']) {
    must(await s.request('POST', core(ns, 'configmaps'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: name } }), name)
    paths.push(core(ns, 'configmaps', name))
  }
  must(await s.request('POST', core(ns, 'secrets'), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sec-1' }, stringData: { p: 'w' } }), 'secret')
  paths.push(core(ns, 'secrets', 'sec-1'))
  must(await s.request('POST', core(ns, 'serviceaccounts'), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa-1' } }), 'serviceaccount')
  paths.push(core(ns, 'serviceaccounts', 'sa-1'))
  must(await s.request('POST', core(ns, 'pods'), { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'pod-1' }, spec: { containers: [{ name: 'c', image: 'busybox:1.36' }] } }), 'pod')
  paths.push(core(ns, 'pods', 'pod-1'))
  must(await s.request('POST', grouped('rbac.authorization.orch.io/v1', ns, 'roles'), {
    apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', metadata: { name: 'role-1' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
  }), 'role')
  paths.push(grouped('rbac.authorization.orch.io/v1', ns, 'roles', 'role-1'))
  must(await s.request('POST', grouped('apps/v1', ns, 'deployments'), {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'dep-1' },
    spec: { replicas: 1, selector: { matchLabels: { app: 'x' } }, template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'busybox:1.36' }] } } },
  }), 'deployment')
  paths.push(grouped('apps/v1', ns, 'deployments', 'dep-1'))
  for (const p of paths) must(await s.request('GET', p), `GET ${p}`, 200)
  return paths
}

t.test('bootstrap namespaces exist and are Active', async (t) => {
  for (const name of ['default', 'orch-system', 'orch-public', 'orch-node-lease']) {
    const r = await s.request('GET', nsPath(name))
    t.equal(r.status, 200, `${name} exists`)
    t.equal(r.json?.kind, 'Namespace')
    t.equal(r.json?.apiVersion, 'v1')
    t.equal(r.json?.metadata?.name, name)
    t.equal(r.json?.status?.phase, 'Active', `${name} is Active`)
    t.equal(r.json?.metadata?.labels?.['orch.io/metadata.name'], name, 'name label')
    t.equal(r.json?.metadata?.deletionTimestamp, undefined)
  }
  const l = await s.request('GET', nsPath())
  t.equal(l.status, 200)
  t.equal(l.json?.kind, 'NamespaceList')
  const names = (l.json?.items ?? []).map((i: any) => i.metadata.name)
  for (const name of ['default', 'orch-system', 'orch-public', 'orch-node-lease']) t.ok(names.includes(name), `${name} listed`)
})

t.test('creating in a missing namespace is 404 namespaces "x" not found', async (t) => {
  const r = await s.request('POST', core('no-such-ns', 'configmaps'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } })
  t.equal(r.status, 404)
  t.equal(r.json?.message, 'namespaces "no-such-ns" not found')
})

t.test('a namespace state remembered by a create follows every namespace write at once', async (t) => {
  const ns = 'ns-remembered'
  const cm = (name: string, finalizers?: string[]) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, finalizers } })
  for (let i = 0; i < 3; i++) t.equal((await s.request('POST', core(ns, 'configmaps'), cm(`early-${i}`))).status, 404, 'missing, asked again')
  must(await s.request('POST', nsPath(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }), 'namespace')
  must(await s.request('POST', core(ns, 'configmaps'), cm('first', ['example.com/hold'])), 'create right after the namespace')
  for (let i = 0; i < 3; i++) must(await s.request('POST', core(ns, 'configmaps'), cm(`more-${i}`)), `create ${i}`)
  t.equal((await s.request('DELETE', nsPath(ns))).status, 200)
  const c = await s.request('POST', core(ns, 'configmaps'), cm('late'))
  t.equal(c.status, 403, 'refused right after the delete was acknowledged')
  must(await s.request('PATCH', core(ns, 'configmaps', 'first'), { metadata: { finalizers: null } }, { 'content-type': 'application/merge-patch+json' }), 'release', 200)
})

t.test('deleting a namespace: Terminating, 403 on new content, contents removed, then the namespace', async (t) => {
  const ns = 'ns-life'
  t.equal((await s.request('GET', nsPath(ns))).status, 404, 'not there yet')
  const paths = await populate(ns)
  const before = must(await s.request('GET', nsPath(ns)), 'get ns', 200)
  t.equal(before.status?.phase, 'Active')

  // Block finalization for a moment with a finalizer so the Terminating state is observable for sure.
  must(await s.request('POST', core(ns, 'configmaps'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'holder', finalizers: ['example.com/hold'] } }), 'holder')

  const d = await s.request('DELETE', nsPath(ns))
  t.equal(d.status, 200, 'DELETE of a namespace is 200')
  t.equal(d.json?.kind, 'Namespace', 'the body is the namespace')
  t.equal(d.json?.status?.phase, 'Terminating', 'phase Terminating in the DELETE answer')
  t.type(d.json?.metadata?.deletionTimestamp, 'string', 'deletionTimestamp in the DELETE answer')

  const g = await s.request('GET', nsPath(ns))
  t.equal(g.status, 200, 'still readable')
  t.equal(g.json?.status?.phase, 'Terminating')
  t.type(g.json?.metadata?.deletionTimestamp, 'string')
  t.equal(g.json?.metadata?.uid, before.metadata.uid)

  const sel = await s.request('GET', nsPath() + '?fieldSelector=status.phase%3DTerminating')
  t.equal(sel.status, 200)
  t.ok((sel.json?.items ?? []).some((i: any) => i.metadata.name === ns), 'field selector status.phase=Terminating finds it')

  const c = await s.request('POST', core(ns, 'configmaps'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } })
  t.equal(c.status, 403, 'create in a terminating namespace is 403')
  t.equal(c.json?.kind, 'Status')
  t.equal(c.json?.reason, 'Forbidden')
  t.equal(c.json?.code, 403)
  t.equal(c.json?.message, `configmaps "x" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`)
  t.same(c.json?.details, { name: 'x', kind: 'configmaps', causes: [{ reason: 'NamespaceTerminating', message: `namespace ${ns} is being terminated`, field: 'metadata.namespace' }] })
  const c2 = await s.request('POST', core(ns, 'secrets'), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'y' } })
  t.equal(c2.status, 403)
  t.equal(c2.json?.message, `secrets "y" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`)

  t.ok(await eventually(async () => {
    for (const p of paths) if ((await s.request('GET', p)).status !== 404) return false
    return true
  }, 15_000), 'all contents deleted')

  const holder = await s.request('GET', core(ns, 'configmaps', 'holder'))
  t.equal(holder.status, 200, 'the object with a finalizer is still there')
  t.type(holder.json?.metadata?.deletionTimestamp, 'string', 'and is being deleted')
  const still = await s.request('GET', nsPath(ns))
  t.equal(still.status, 200, 'namespace blocked by the finalizer')
  t.equal(still.json?.status?.phase, 'Terminating')

  holder.json.metadata.finalizers = []
  t.equal((await s.request('PUT', core(ns, 'configmaps', 'holder'), holder.json)).status, 200, 'updates in a terminating namespace are allowed')
  t.ok(await eventually(async () => (await s.request('GET', nsPath(ns))).status === 404, 15_000), 'namespace disappears')
  const gone = await s.request('GET', nsPath(ns))
  t.equal(gone.json?.message, `namespaces "${ns}" not found`)

  // The name can be used again, and the new namespace is empty and Active.
  must(await s.request('POST', nsPath(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }), 'recreate')
  const again = must(await s.request('GET', nsPath(ns)), 'get', 200)
  t.equal(again.status?.phase, 'Active')
  t.not(again.metadata.uid, before.metadata.uid)
  const cms = must(await s.request('GET', core(ns, 'configmaps')), 'list', 200)
  t.same(cms.items, [], 'no leftovers in the re-created namespace')
  t.equal((await s.request('DELETE', nsPath(ns))).status, 200)
})

t.test('an unblocked namespace goes away by itself with all its content', async (t) => {
  const ns = 'ns-quick'
  const paths = await populate(ns)
  const d = await s.request('DELETE', nsPath(ns))
  t.equal(d.status, 200)
  t.equal(d.json?.status?.phase, 'Terminating')
  t.ok(await eventually(async () => (await s.request('GET', nsPath(ns))).status === 404, 15_000), 'namespace gone within 15 s')
  for (const p of paths) t.equal((await s.request('GET', p)).status, 404, `${p} gone`)
})

t.test('a namespace blocked by a finalizer stays Terminating until it is removed', async (t) => {
  const ns = 'ns-blocked'
  must(await s.request('POST', nsPath(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }), 'ns')
  must(await s.request('POST', core(ns, 'secrets'), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'blocker', finalizers: ['example.com/block'] } }), 'blocker')
  must(await s.request('POST', core(ns, 'configmaps'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'free' } }), 'free')
  t.equal((await s.request('DELETE', nsPath(ns))).status, 200)

  t.ok(await eventually(async () => (await s.request('GET', core(ns, 'configmaps', 'free'))).status === 404, 15_000), 'unblocked content removed')
  t.ok(await eventually(async () => typeof (await s.request('GET', core(ns, 'secrets', 'blocker'))).json?.metadata?.deletionTimestamp === 'string', 15_000), 'blocker marked for deletion')
  // Several controller retry periods later the namespace is still there.
  await new Promise((r) => setTimeout(r, 2500))
  const mid = await s.request('GET', nsPath(ns))
  t.equal(mid.status, 200, 'namespace still exists')
  t.equal(mid.json?.status?.phase, 'Terminating', 'still Terminating')
  t.equal((await s.request('GET', core(ns, 'secrets', 'blocker'))).status, 200, 'blocker still there')

  const b = must(await s.request('GET', core(ns, 'secrets', 'blocker')), 'blocker', 200)
  b.metadata.finalizers = []
  t.equal((await s.request('PUT', core(ns, 'secrets', 'blocker'), b)).status, 200)
  t.ok(await eventually(async () => (await s.request('GET', nsPath(ns))).status === 404, 15_000), 'namespace finalized after the finalizer is removed')
})
