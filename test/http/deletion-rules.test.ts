// Black-box: deletion rules as upstream keeps them — protected namespaces, no bulk delete across namespaces, the
// NamespaceTerminating cause, Jobs and ReplicationControllers orphaning their pods by default, finalizer names,
// deletion fields no body may change, and DeleteOptions/dryRun decoding.
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'

let s: TestServer
const MERGE = { 'content-type': 'application/merge-patch+json' }
const cm = (name: string, metadata: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...metadata } })
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

t.test('default, orch-system and orch-public may not be deleted', async (t) => {
  for (const ns of ['default', 'orch-system', 'orch-public']) {
    const r = await s.request('DELETE', `/api/v1/namespaces/${ns}`)
    t.equal(r.status, 403, r.text)
    t.equal(r.json?.message, `namespaces "${ns}" is forbidden: this namespace may not be deleted`)
    const g = await s.request('GET', `/api/v1/namespaces/${ns}`)
    t.equal(g.status, 200)
    t.notOk(g.json.metadata.deletionTimestamp, `${ns} is not terminating`)
  }
})

t.test('a namespaced kind is not bulk-deleted through its all-namespaces path', async (t) => {
  let r = await s.request('POST', '/api/v1/namespaces/default/configmaps', cm('keepme'))
  t.equal(r.status, 201, r.text)
  for (const path of ['/api/v1/configmaps', '/api/v1/pods?dryRun=All', '/apis/apps/v1/deployments']) {
    r = await s.request('DELETE', path)
    t.equal(r.status, 405, `${path}: ${r.text}`)
    t.equal(r.json?.message, 'the server does not allow this method on the requested resource')
  }
  t.equal((await s.request('GET', '/api/v1/namespaces/default/configmaps/keepme')).status, 200, 'nothing was deleted')
})

t.test('creating in a terminating namespace: 403 with the NamespaceTerminating cause, named as the request named it', async (t) => {
  let r = await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'going' } })
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', '/api/v1/namespaces/going/configmaps', cm('held', { finalizers: ['example.com/hold'] }))
  t.equal(r.status, 201, r.text)
  r = await s.request('DELETE', '/api/v1/namespaces/going')
  t.equal(r.status, 200, r.text)
  r = await s.request('POST', '/api/v1/namespaces/going/configmaps', cm('new'))
  t.equal(r.status, 403, r.text)
  t.equal(r.json.message, 'configmaps "new" is forbidden: unable to create new content in namespace going because it is being terminated')
  t.same(r.json.details.causes, [{ reason: 'NamespaceTerminating', message: 'namespace going is being terminated', field: 'metadata.namespace' }])
  r = await s.request('POST', '/api/v1/namespaces/going/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'gen-' } })
  t.equal(r.status, 403, r.text)
  t.equal(r.json.message, 'configmaps "gen-" is forbidden: unable to create new content in namespace going because it is being terminated')
  r = await s.request('POST', '/api/v1/namespaces/going/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'BAD_NAME' } })
  t.equal(r.status, 403, 'the namespace is checked before the object is validated')
  r = await s.request('PATCH', '/api/v1/namespaces/going/configmaps/held', { metadata: { finalizers: null } }, MERGE)
  t.equal(r.status, 200, r.text)
})

t.test('a Job or ReplicationController deleted without options keeps its pods (the orphan policy); a Job says so', async (t) => {
  const pod = (name: string, owner: { apiVersion: string; kind: string; name: string; uid: string }) => ({
    apiVersion: 'v1', kind: 'Pod', metadata: { name, ownerReferences: [{ ...owner, controller: true }] }, spec: { containers: [{ name: 'c', image: 'i' }] },
  })
  let r = await s.request('POST', '/apis/batch/v1/namespaces/default/jobs', {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'i' }] } } },
  })
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', '/api/v1/namespaces/default/pods', pod('jobpod', { apiVersion: 'batch/v1', kind: 'Job', name: 'j', uid: r.json.metadata.uid }))
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', '/api/v1/namespaces/default/replicationcontrollers', {
    apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'rc' },
    spec: { replicas: 0, selector: { app: 'rc' }, template: { metadata: { labels: { app: 'rc' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
  })
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', '/api/v1/namespaces/default/pods', pod('rcpod', { apiVersion: 'v1', kind: 'ReplicationController', name: 'rc', uid: r.json.metadata.uid }))
  t.equal(r.status, 201, r.text)

  r = await s.request('DELETE', '/apis/batch/v1/namespaces/default/jobs/j')
  t.equal(r.status, 200, r.text)
  t.match(r.headers['warning'], /^299 - "child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning"$/)
  t.same(r.json.metadata?.finalizers, ['orphan'], 'the job waits for its pods to be orphaned')
  r = await s.request('DELETE', '/api/v1/namespaces/default/replicationcontrollers/rc')
  t.equal(r.status, 200, r.text)
  t.notOk(r.headers['warning'], 'no warning for a ReplicationController')
  for (let i = 0; i < 100; i++) {
    const a = await s.request('GET', '/apis/batch/v1/namespaces/default/jobs/j')
    const b = await s.request('GET', '/api/v1/namespaces/default/replicationcontrollers/rc')
    if (a.status === 404 && b.status === 404) break
    await sleep(50)
  }
  for (const name of ['jobpod', 'rcpod']) {
    const p = await s.request('GET', `/api/v1/namespaces/default/pods/${name}`)
    t.equal(p.status, 200, `${name} is kept`)
    t.notOk(p.json?.metadata?.ownerReferences, `${name} no longer names its owner`)
  }
  r = await s.request('DELETE', '/apis/batch/v1/namespaces/default/jobs/none-such', { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' })
  t.notOk(r.headers['warning'], 'no warning when the client chose a policy')
})

t.test('finalizer names: standard, or fully qualified; never orphan and foregroundDeletion together', async (t) => {
  let r = await s.request('POST', '/api/v1/namespaces/default/configmaps', cm('fin1', { finalizers: ['bogus'] }))
  t.equal(r.status, 422, r.text)
  t.equal(r.json.message, 'ConfigMap "fin1" is invalid: metadata.finalizers[0]: Invalid value: "bogus": name is neither a standard finalizer name nor is it fully qualified')
  r = await s.request('POST', '/api/v1/namespaces/default/configmaps', cm('fin2', { finalizers: ['orphan', 'foregroundDeletion'] }))
  t.equal(r.status, 422, r.text)
  t.match(r.json.message, /metadata\.finalizers: Invalid value: .*: finalizer orphan and foregroundDeletion cannot be both set/)
  r = await s.request('POST', '/api/v1/namespaces/default/configmaps', cm('fin3', { finalizers: ['example.com/x', 'orphan'] }))
  t.equal(r.status, 201, r.text)
  t.equal((await s.request('GET', '/api/v1/namespaces/default/configmaps/fin1')).status, 404, 'nothing refused was stored')
  r = await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fz' } })
  t.equal(r.status, 201, r.text)
  r = await s.request('PUT', '/api/v1/namespaces/fz/finalize', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fz' }, spec: { finalizers: ['bogus'] } })
  t.equal(r.status, 422, r.text)
  t.equal(r.json.message, 'Namespace "fz" is invalid: spec.finalizers[0]: Invalid value: "bogus": name is neither a standard finalizer name nor is it fully qualified')
})

t.test('no body sets a deletion timestamp or changes the grace period; one already set is kept', async (t) => {
  let r = await s.request('POST', '/api/v1/namespaces/default/configmaps', cm('live'))
  t.equal(r.status, 201, r.text)
  r = await s.request('PATCH', '/api/v1/namespaces/default/configmaps/live', { metadata: { deletionTimestamp: '2020-01-01T00:00:00Z' } }, MERGE)
  t.equal(r.status, 422, r.text)
  t.match(r.json.message, /^ConfigMap "live" is invalid: metadata\.deletionTimestamp: Invalid value: .*: field is immutable$/)
  r = await s.request('POST', '/api/v1/namespaces/default/configmaps', cm('dying', { finalizers: ['example.com/x'] }))
  t.equal(r.status, 201, r.text)
  r = await s.request('DELETE', '/api/v1/namespaces/default/configmaps/dying')
  const ts = r.json.metadata.deletionTimestamp
  t.ok(ts)
  r = await s.request('PATCH', '/api/v1/namespaces/default/configmaps/dying', { metadata: { deletionGracePeriodSeconds: 5 } }, MERGE)
  t.equal(r.status, 422, r.text)
  t.equal(r.json.message, 'ConfigMap "dying" is invalid: metadata.deletionGracePeriodSeconds: Invalid value: 5: field is immutable')
  r = await s.request('PATCH', '/api/v1/namespaces/default/configmaps/dying', { metadata: { deletionTimestamp: '2020-01-01T00:00:00Z', labels: { a: 'b' } } }, MERGE)
  t.equal(r.status, 200, r.text)
  t.equal(r.json.metadata.deletionTimestamp, ts, 'the stored deletion timestamp is kept')
  r = await s.request('PATCH', '/api/v1/namespaces/default/configmaps/dying', { metadata: { finalizers: null } }, MERGE)
  t.equal(r.status, 200, r.text)
})

t.test('DeleteOptions and dryRun decoding', async (t) => {
  await s.request('POST', '/api/v1/namespaces/default/configmaps', cm('o1'))
  let r = await s.request('DELETE', '/api/v1/namespaces/default/configmaps/o1?dryRun=Foo')
  t.equal(r.status, 422, r.text)
  t.match(r.json.message, /^DeleteOptions\.meta\.orch\.io "" is invalid: dryRun: Unsupported value: .*"Foo".*: supported values: "All"$/)
  r = await s.request('POST', '/api/v1/namespaces/default/configmaps?dryRun=Foo', cm('o2'))
  t.equal(r.status, 422, r.text)
  t.match(r.json.message, /^CreateOptions\.meta\.orch\.io "" is invalid: dryRun: Unsupported value/)
  r = await s.request('DELETE', '/api/v1/namespaces/default/configmaps/o1', { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Sideways' })
  t.equal(r.status, 422, r.text)
  t.equal(r.json.message, 'DeleteOptions.meta.orch.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"')
  r = await s.request('DELETE', '/api/v1/namespaces/default/configmaps/o1', { kind: 'DeleteOptions', apiVersion: 'nowhere.example.com/v9' })
  t.equal(r.status, 400, 'a group version the server does not serve')
  r = await s.request('DELETE', '/api/v1/namespaces/default/configmaps/o1', { kind: 'DeleteOptions', apiVersion: 'apps/v1', propagationPolicy: 'Background' })
  t.equal(r.status, 200, `DeleteOptions decodes in any served group version: ${r.text}`)
  t.equal((await s.request('GET', '/api/v1/namespaces/default/configmaps/o1')).status, 404)
})

t.test('discovery lists namespaces/finalize', async (t) => {
  const r = await s.request('GET', '/api/v1')
  const fin = r.json.resources.find((x: any) => x.name === 'namespaces/finalize')
  t.ok(fin, 'listed')
  t.same(fin?.verbs, ['update'])
  t.equal(fin?.kind, 'Namespace')
})
