// Black-box: deletion lifecycle (finalizers, grace periods, DeleteOptions) and garbage collection through ownerReferences.
import t from 'tap'
import { startServer, type TestServer, type Reply } from '../helpers/server.js'
import { created, eventually } from '../helpers/poll.js'

let s: TestServer
t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

const NS = 'default'
const cmPath = (name = '', ns = NS) => `/api/v1/namespaces/${ns}/configmaps${name ? '/' + name : ''}`
const secretPath = (name = '', ns = NS) => `/api/v1/namespaces/${ns}/secrets${name ? '/' + name : ''}`
const podPath = (name = '', ns = NS) => `/api/v1/namespaces/${ns}/pods${name ? '/' + name : ''}`

function cm(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...extra }, data: { k: 'v' } }
}

function pod(name: string, nodeName?: string): Record<string, unknown> {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name },
    spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', image: 'busybox:1.36' }] },
  }
}

const gone = (path: string) => async () => (await s.request('GET', path)).status === 404

function ownerRef(o: any, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'v1', kind: o.kind, name: o.metadata.name, uid: o.metadata.uid, ...extra }
}

t.test('finalizer lifecycle: DELETE marks, PUT removing the finalizer removes the object', async (t) => {
  const o = await created(await s.request('POST', cmPath(), cm('fin-1', { finalizers: ['example.com/hold'] })), 'fin-1')
  t.same(o.metadata.finalizers, ['example.com/hold'])
  const d = await s.request('DELETE', cmPath('fin-1'))
  t.equal(d.status, 200, 'DELETE with a finalizer is 200')
  t.equal(d.json?.kind, 'ConfigMap', 'the body is the object, not a Status')
  t.equal(d.json?.metadata?.name, 'fin-1')
  t.equal(d.json?.metadata?.uid, o.metadata.uid)
  t.type(d.json?.metadata?.deletionTimestamp, 'string', 'deletionTimestamp is set')
  t.match(d.json?.metadata?.deletionTimestamp ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'RFC 3339 seconds')
  t.equal(d.json?.metadata?.deletionGracePeriodSeconds, 0)
  t.same(d.json?.metadata?.finalizers, ['example.com/hold'])
  t.not(d.json?.metadata?.resourceVersion, o.metadata.resourceVersion, 'the mark is a write')

  const g = await s.request('GET', cmPath('fin-1'))
  t.equal(g.status, 200, 'still readable while finalizing')
  t.equal(g.json?.metadata?.deletionTimestamp, d.json?.metadata?.deletionTimestamp)
  t.same(g.json?.metadata?.finalizers, ['example.com/hold'])

  // A repeated DELETE is harmless and returns the object again.
  const d2 = await s.request('DELETE', cmPath('fin-1'))
  t.equal(d2.status, 200)
  t.equal(d2.json?.kind, 'ConfigMap')
  t.equal(d2.json?.metadata?.deletionTimestamp, d.json?.metadata?.deletionTimestamp, 'deletionTimestamp unchanged by a second DELETE')

  // Adding another finalizer while deleting is refused.
  const add = structuredClone(g.json)
  add.metadata.finalizers = ['example.com/hold', 'example.com/new']
  const r422 = await s.request('PUT', cmPath('fin-1'), add)
  t.equal(r422.status, 422, 'new finalizer while deleting is 422')
  t.equal(r422.json?.reason, 'Invalid')
  t.equal(r422.json?.details?.kind, 'ConfigMap')
  t.equal(r422.json?.details?.causes?.[0]?.field, 'metadata.finalizers')
  t.match(r422.json?.message ?? '', /no new finalizers can be added if the object is being deleted/)
  t.equal((await s.request('GET', cmPath('fin-1'))).json?.metadata?.finalizers?.length, 1, 'the refused update changed nothing')

  const rm = structuredClone(g.json)
  rm.metadata.finalizers = []
  const u = await s.request('PUT', cmPath('fin-1'), rm)
  t.equal(u.status, 200, 'PUT that removes the last finalizer is 200')
  const after = await s.request('GET', cmPath('fin-1'))
  t.equal(after.status, 404, 'gone once the last finalizer is removed')
  t.equal(after.json?.message, 'configmaps "fin-1" not found')
})

t.test('DELETE without finalizers: ConfigMap answers the Success Status exactly', async (t) => {
  const o = await created(await s.request('POST', cmPath(), cm('plain-1')), 'plain-1')
  const d = await s.request('DELETE', cmPath('plain-1'))
  t.equal(d.status, 200)
  t.same(d.json, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success',
    details: { name: 'plain-1', kind: 'configmaps', uid: o.metadata.uid },
  }, 'exact Success Status')
  t.notOk('code' in (d.json ?? {}), 'no code field')
  t.equal((await s.request('GET', cmPath('plain-1'))).status, 404)
  const again = await s.request('DELETE', cmPath('plain-1'))
  t.equal(again.status, 404)
  t.equal(again.json?.message, 'configmaps "plain-1" not found')
})

t.test('DELETE of a grouped resource without finalizers: Success Status carries group', async (t) => {
  const body = { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', metadata: { name: 'role-1' }, rules: [] }
  const o = await created(await s.request('POST', `/apis/rbac.authorization.orch.io/v1/namespaces/${NS}/roles`, body), 'role-1')
  const d = await s.request('DELETE', `/apis/rbac.authorization.orch.io/v1/namespaces/${NS}/roles/role-1`)
  t.equal(d.status, 200)
  t.same(d.json, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success',
    details: { name: 'role-1', group: 'rbac.authorization.orch.io', kind: 'roles', uid: o.metadata.uid },
  })
})

t.test('DELETE of a pod without nodeName: removed at once, body is the final object', async (t) => {
  const o = await created(await s.request('POST', podPath(), pod('pod-unsched')), 'pod-unsched')
  const d = await s.request('DELETE', podPath('pod-unsched'))
  t.equal(d.status, 200)
  t.equal(d.json?.kind, 'Pod', 'pods return the deleted object')
  t.equal(d.json?.apiVersion, 'v1')
  t.equal(d.json?.metadata?.name, 'pod-unsched')
  t.equal(d.json?.metadata?.uid, o.metadata.uid)
  t.equal(d.json?.spec?.containers?.[0]?.image, 'busybox:1.36')
  t.equal((await s.request('GET', podPath('pod-unsched'))).status, 404, 'removed at once')
})

t.test('graceful pod deletion: default 30 s grace, then gracePeriodSeconds=0 removes it', async (t) => {
  const o = await created(await s.request('POST', podPath(), pod('pod-bound', 'node-a')), 'pod-bound')
  t.equal(o.spec.nodeName, 'node-a')
  const before = Date.now()
  const d = await s.request('DELETE', podPath('pod-bound'))
  t.equal(d.status, 200)
  t.equal(d.json?.kind, 'Pod')
  t.equal(d.json?.metadata?.deletionGracePeriodSeconds, 30, 'deletionGracePeriodSeconds is 30')
  const ts = Date.parse(d.json?.metadata?.deletionTimestamp ?? '')
  t.ok(Number.isFinite(ts), 'deletionTimestamp set')
  // Upstream sets deletionTimestamp = now + grace.
  t.ok(ts >= Math.floor(before / 1000) * 1000 + 29_000 && ts <= Date.now() + 31_000, `deletionTimestamp ≈ now + 30 s (${d.json?.metadata?.deletionTimestamp})`)

  const g = await s.request('GET', podPath('pod-bound'))
  t.equal(g.status, 200, 'the pod lingers during its grace period')
  t.equal(g.json?.metadata?.deletionGracePeriodSeconds, 30)

  // Adding a finalizer to a pod being deleted is refused.
  const add = structuredClone(g.json)
  add.metadata.finalizers = ['example.com/late']
  const r422 = await s.request('PUT', podPath('pod-bound'), add)
  t.equal(r422.status, 422, 'no new finalizers while deleting')

  const d0 = await s.request('DELETE', podPath('pod-bound') + '?gracePeriodSeconds=0')
  t.equal(d0.status, 200)
  t.equal(d0.json?.kind, 'Pod')
  t.equal(d0.json?.metadata?.uid, o.metadata.uid)
  t.equal((await s.request('GET', podPath('pod-bound'))).status, 404, 'grace 0 removes the pod')
})

t.test('graceful pod deletion: a shorter grace in the body shortens it', async (t) => {
  await created(await s.request('POST', podPath(), pod('pod-bound-2', 'node-a')), 'pod-bound-2')
  const d = await s.request('DELETE', podPath('pod-bound-2'), { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 10 })
  t.equal(d.status, 200)
  t.equal(d.json?.metadata?.deletionGracePeriodSeconds, 10, 'grace from the body')
  const d2 = await s.request('DELETE', podPath('pod-bound-2'), { gracePeriodSeconds: 20 })
  t.equal(d2.status, 200)
  t.equal(d2.json?.metadata?.deletionGracePeriodSeconds, 10, 'a longer grace does not extend the period')
  const d0 = await s.request('DELETE', podPath('pod-bound-2'), { gracePeriodSeconds: 0 })
  t.equal(d0.status, 200)
  t.equal((await s.request('GET', podPath('pod-bound-2'))).status, 404)
})

t.test('DeleteOptions: body and query forms, dryRun, preconditions, invalid policy', async (t) => {
  const a = await created(await s.request('POST', cmPath(), cm('opt-a')), 'opt-a')

  // dryRun=All as query: nothing is deleted, the answer looks like the real one.
  const dq = await s.request('DELETE', cmPath('opt-a') + '?dryRun=All')
  t.equal(dq.status, 200)
  t.equal(dq.json?.kind, 'Status')
  t.equal(dq.json?.status, 'Success')
  t.equal(dq.json?.details?.uid, a.metadata.uid)
  const still = await s.request('GET', cmPath('opt-a'))
  t.equal(still.status, 200, 'dryRun (query) deleted nothing')
  t.equal(still.json?.metadata?.resourceVersion, a.metadata.resourceVersion, 'and wrote nothing')

  // dryRun in the body.
  const db = await s.request('DELETE', cmPath('opt-a'), { kind: 'DeleteOptions', apiVersion: 'v1', dryRun: ['All'] })
  t.equal(db.status, 200)
  t.equal((await s.request('GET', cmPath('opt-a'))).status, 200, 'dryRun (body) deleted nothing')

  // dryRun on an object with a finalizer: no deletionTimestamp is stored.
  await created(await s.request('POST', cmPath(), cm('opt-fin', { finalizers: ['example.com/x'] })), 'opt-fin')
  const dfin = await s.request('DELETE', cmPath('opt-fin') + '?dryRun=All')
  t.equal(dfin.status, 200)
  t.type(dfin.json?.metadata?.deletionTimestamp, 'string', 'dry-run answer shows the deletion')
  t.equal((await s.request('GET', cmPath('opt-fin'))).json?.metadata?.deletionTimestamp, undefined, 'but nothing was stored')

  // Bad dryRun value.
  const dbad = await s.request('DELETE', cmPath('opt-a') + '?dryRun=Some')
  t.equal(dbad.status, 422, 'upstream\'s ValidateDeleteOptions: Invalid')

  // Invalid propagationPolicy, query and body.
  const pq = await s.request('DELETE', cmPath('opt-a') + '?propagationPolicy=Sideways')
  t.equal(pq.status, 422, 'bad propagationPolicy (query) is 422')
  t.equal(pq.json?.reason, 'Invalid')
  t.equal(pq.json?.details?.causes?.[0]?.field, 'propagationPolicy')
  t.equal(pq.json?.details?.causes?.[0]?.reason, 'FieldValueNotSupported')
  t.match(pq.json?.message ?? '', 'Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan"')
  const pb = await s.request('DELETE', cmPath('opt-a'), { propagationPolicy: 'Sideways' })
  t.equal(pb.status, 422, 'bad propagationPolicy (body) is 422')
  t.equal((await s.request('GET', cmPath('opt-a'))).status, 200, 'invalid options deleted nothing')

  // Preconditions in the body: wrong uid is 409 with the exact text, right uid deletes.
  const pw = await s.request('DELETE', cmPath('opt-a'), { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'not-the-uid' } })
  t.equal(pw.status, 409)
  t.equal(pw.json?.reason, 'Conflict')
  t.equal(pw.json?.message, `Operation cannot be fulfilled on ConfigMap "opt-a": the UID in the precondition (not-the-uid) does not match the UID in record (${a.metadata.uid}). The object might have been deleted and then recreated`)
  const prv = await s.request('DELETE', cmPath('opt-a'), { preconditions: { resourceVersion: '1' } })
  t.equal(prv.status, 409)
  t.equal(prv.json?.message, `Operation cannot be fulfilled on ConfigMap "opt-a": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${a.metadata.resourceVersion}). The object might have been modified`)
  const pr = await s.request('DELETE', cmPath('opt-a'), { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background', preconditions: { uid: a.metadata.uid, resourceVersion: a.metadata.resourceVersion } })
  t.equal(pr.status, 200)
  t.equal(pr.json?.details?.uid, a.metadata.uid)
  t.equal((await s.request('GET', cmPath('opt-a'))).status, 404)

  // Empty body with a content type is fine.
  await created(await s.request('POST', cmPath(), cm('opt-b')), 'opt-b')
  const eb = await s.request('DELETE', cmPath('opt-b'), '', { 'content-type': 'application/json' })
  t.equal(eb.status, 200)
  t.equal(eb.json?.status, 'Success')

  // Cleanup of the finalizer object.
  const g = (await s.request('GET', cmPath('opt-fin'))).json
  g.metadata.finalizers = []
  await s.request('PUT', cmPath('opt-fin'), g)
  await s.request('DELETE', cmPath('opt-fin'))
})

t.test('GC Background (default): owner gone at once, dependents collected', async (t) => {
  const owner = await created(await s.request('POST', cmPath(), cm('gc-bg-owner')), 'owner')
  await created(await s.request('POST', cmPath(), cm('gc-bg-dep1', { ownerReferences: [ownerRef(owner)] })), 'dep1')
  await created(await s.request('POST', secretPath(), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'gc-bg-dep2', ownerReferences: [ownerRef(owner, { controller: true, blockOwnerDeletion: true })] }, stringData: { a: 'b' } }), 'dep2')
  const d = await s.request('DELETE', cmPath('gc-bg-owner'))
  t.equal(d.status, 200)
  t.equal(d.json?.kind, 'Status', 'background delete of an owner removes it immediately')
  t.equal((await s.request('GET', cmPath('gc-bg-owner'))).status, 404, 'owner gone at once')
  t.ok(await eventually(gone(cmPath('gc-bg-dep1'))), 'ConfigMap dependent collected within 10 s')
  t.ok(await eventually(gone(secretPath('gc-bg-dep2'))), 'Secret dependent collected within 10 s')
})

t.test('GC Background (explicit, query): dependents collected', async (t) => {
  const owner = await created(await s.request('POST', cmPath(), cm('gc-bgq-owner')), 'owner')
  await created(await s.request('POST', cmPath(), cm('gc-bgq-dep', { ownerReferences: [ownerRef(owner)] })), 'dep')
  const d = await s.request('DELETE', cmPath('gc-bgq-owner') + '?propagationPolicy=Background')
  t.equal(d.status, 200)
  t.equal((await s.request('GET', cmPath('gc-bgq-owner'))).status, 404)
  t.ok(await eventually(gone(cmPath('gc-bgq-dep'))), 'dependent collected')
})

t.test('GC: a dependent keeps living while another owner exists', async (t) => {
  const o1 = await created(await s.request('POST', cmPath(), cm('gc-two-o1')), 'o1')
  const o2 = await created(await s.request('POST', cmPath(), cm('gc-two-o2')), 'o2')
  await created(await s.request('POST', cmPath(), cm('gc-two-dep', { ownerReferences: [ownerRef(o1), ownerRef(o2)] })), 'dep')
  await s.request('DELETE', cmPath('gc-two-o1'))
  // give the collector a chance; the dependent must survive (polled on something that should happen: o1 gone)
  t.equal((await s.request('GET', cmPath('gc-two-o1'))).status, 404)
  await new Promise((r) => setTimeout(r, 1500))
  t.equal((await s.request('GET', cmPath('gc-two-dep'))).status, 200, 'one live owner keeps the dependent')
  await s.request('DELETE', cmPath('gc-two-o2'))
  t.ok(await eventually(gone(cmPath('gc-two-dep'))), 'collected once the last owner is gone')
})

t.test('GC Foreground: owner waits with foregroundDeletion until dependents are gone', async (t) => {
  const owner = await created(await s.request('POST', cmPath(), cm('gc-fg-owner')), 'owner')
  await created(await s.request('POST', cmPath(), cm('gc-fg-dep1', { ownerReferences: [ownerRef(owner, { blockOwnerDeletion: true })] })), 'dep1')
  // dep2 carries a finalizer so the owner must visibly wait
  await created(await s.request('POST', secretPath(), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'gc-fg-dep2', finalizers: ['example.com/hold'], ownerReferences: [ownerRef(owner, { blockOwnerDeletion: true })] } }), 'dep2')
  const d = await s.request('DELETE', cmPath('gc-fg-owner'), { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' })
  t.equal(d.status, 200)
  t.equal(d.json?.kind, 'ConfigMap', 'foreground delete returns the object')
  t.same(d.json?.metadata?.finalizers, ['foregroundDeletion'])
  t.type(d.json?.metadata?.deletionTimestamp, 'string')

  const g = await s.request('GET', cmPath('gc-fg-owner'))
  t.equal(g.status, 200, 'owner still exists')
  t.same(g.json?.metadata?.finalizers, ['foregroundDeletion'])
  t.type(g.json?.metadata?.deletionTimestamp, 'string')

  t.ok(await eventually(gone(cmPath('gc-fg-dep1'))), 'dep1 deleted by the collector')
  t.ok(await eventually(async () => {
    const r = await s.request('GET', secretPath('gc-fg-dep2'))
    return r.status === 200 && typeof r.json?.metadata?.deletionTimestamp === 'string'
  }), 'dep2 is being deleted')
  const mid = await s.request('GET', cmPath('gc-fg-owner'))
  t.equal(mid.status, 200, 'owner waits while a dependent still exists')
  t.same(mid.json?.metadata?.finalizers, ['foregroundDeletion'])

  const dep2 = (await s.request('GET', secretPath('gc-fg-dep2'))).json
  dep2.metadata.finalizers = []
  t.equal((await s.request('PUT', secretPath('gc-fg-dep2'), dep2)).status, 200)
  t.ok(await eventually(gone(secretPath('gc-fg-dep2'))), 'dep2 gone after its finalizer is removed')
  t.ok(await eventually(gone(cmPath('gc-fg-owner'))), 'owner disappears after its dependents')
})

t.test('GC Foreground without dependents: owner removed by the collector', async (t) => {
  await created(await s.request('POST', cmPath(), cm('gc-fg-lonely')), 'owner')
  const d = await s.request('DELETE', cmPath('gc-fg-lonely') + '?propagationPolicy=Foreground')
  t.equal(d.status, 200)
  t.same(d.json?.metadata?.finalizers, ['foregroundDeletion'])
  t.ok(await eventually(gone(cmPath('gc-fg-lonely'))), 'removed')
})

t.test('GC Orphan: owner goes, dependents stay and lose the ownerReference', async (t) => {
  const owner = await created(await s.request('POST', cmPath(), cm('gc-or-owner')), 'owner')
  await created(await s.request('POST', cmPath(), cm('gc-or-dep1', { ownerReferences: [ownerRef(owner)] })), 'dep1')
  await created(await s.request('POST', secretPath(), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'gc-or-dep2', ownerReferences: [ownerRef(owner)] } }), 'dep2')
  // dep3 also has a second, live owner: only the deleted owner's reference is dropped
  const other = await created(await s.request('POST', cmPath(), cm('gc-or-other')), 'other')
  await created(await s.request('POST', cmPath(), cm('gc-or-dep3', { ownerReferences: [ownerRef(owner), ownerRef(other)] })), 'dep3')

  const d = await s.request('DELETE', cmPath('gc-or-owner') + '?propagationPolicy=Orphan')
  t.equal(d.status, 200)
  t.equal(d.json?.kind, 'ConfigMap', 'orphan delete returns the object (orphan finalizer)')
  t.same(d.json?.metadata?.finalizers, ['orphan'])
  t.ok(await eventually(gone(cmPath('gc-or-owner'))), 'owner goes')
  t.ok(await eventually(async () => {
    const r = await s.request('GET', cmPath('gc-or-dep1'))
    return r.status === 200 && r.json?.metadata?.ownerReferences === undefined
  }), 'dep1 lost its ownerReferences')
  const d1 = await s.request('GET', cmPath('gc-or-dep1'))
  t.equal(d1.status, 200, 'dep1 stays')
  t.equal(d1.json?.metadata?.ownerReferences, undefined)
  const d2 = await s.request('GET', secretPath('gc-or-dep2'))
  t.equal(d2.status, 200, 'dep2 stays')
  t.equal(d2.json?.metadata?.ownerReferences, undefined)
  const d3 = await s.request('GET', cmPath('gc-or-dep3'))
  t.equal(d3.status, 200, 'dep3 stays')
  t.same(d3.json?.metadata?.ownerReferences, [ownerRef(other)], 'only the deleted owner is dropped')
  // a bit later, they are still there (not collected)
  await new Promise((r) => setTimeout(r, 1000))
  t.equal((await s.request('GET', cmPath('gc-or-dep1'))).status, 200)
  t.equal((await s.request('GET', secretPath('gc-or-dep2'))).status, 200)
})

t.test('GC Orphan via legacy orphanDependents=true (query)', async (t) => {
  const owner = await created(await s.request('POST', cmPath(), cm('gc-ol-owner')), 'owner')
  await created(await s.request('POST', cmPath(), cm('gc-ol-dep', { ownerReferences: [ownerRef(owner)] })), 'dep')
  const d = await s.request('DELETE', cmPath('gc-ol-owner') + '?orphanDependents=true')
  t.equal(d.status, 200)
  t.ok(await eventually(gone(cmPath('gc-ol-owner'))), 'owner goes')
  const r = await s.request('GET', cmPath('gc-ol-dep'))
  t.equal(r.status, 200, 'dependent stays')
  t.equal(r.json?.metadata?.ownerReferences, undefined, 'and lost its ownerReference')
})

t.test('GC: a dependent pointing at a nonexistent owner uid is collected', async (t) => {
  // owner name exists but with a different uid
  await created(await s.request('POST', cmPath(), cm('gc-real')), 'real')
  await created(await s.request('POST', cmPath(), cm('gc-dangling-1', {
    ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'gc-real', uid: '11111111-2222-3333-4444-555555555555' }],
  })), 'dangling-1')
  // owner not there at all
  await created(await s.request('POST', secretPath(), {
    apiVersion: 'v1', kind: 'Secret', metadata: {
      name: 'gc-dangling-2', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'no-such-owner', uid: '99999999-2222-3333-4444-555555555555' }],
    },
  }), 'dangling-2')
  t.ok(await eventually(gone(cmPath('gc-dangling-1'))), 'owner name exists but uid differs: collected')
  t.ok(await eventually(gone(secretPath('gc-dangling-2'))), 'owner missing: collected')
  t.equal((await s.request('GET', cmPath('gc-real'))).status, 200, 'the same-named object is untouched')
})

t.test('DeleteOptions that do not decode are 400 and delete nothing; invalid ones are 422 in the meta group', async (t) => {
  await created(await s.request('POST', cmPath(), cm('opt-bad')), 'opt-bad')
  let r = await s.request('DELETE', cmPath('opt-bad') + '?gracePeriodSeconds=abc')
  t.equal(r.status, 400, r.text)
  t.equal(r.json?.message, 'strconv.ParseInt: parsing "abc": invalid syntax')
  r = await s.request('DELETE', cmPath('opt-bad') + '?orphanDependents=maybe')
  t.equal(r.status, 400, r.text)
  t.equal(r.json?.message, 'strconv.ParseBool: parsing "maybe": invalid syntax')
  r = await s.request('DELETE', cmPath('opt-bad'), { gracePeriodSeconds: 'x' })
  t.equal(r.status, 400, r.text)
  t.equal(r.json?.message, 'json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64')
  r = await s.request('DELETE', cmPath('opt-bad'), { kind: 'Pod', apiVersion: 'v1' })
  t.equal(r.status, 400, `another kind as the body: ${r.text}`)
  r = await s.request('DELETE', cmPath() + '?gracePeriodSeconds=1.5')
  t.equal(r.status, 400, `deletecollection too: ${r.text}`)
  r = await s.request('DELETE', cmPath('opt-bad'), { orphanDependents: true, propagationPolicy: 'Background' })
  t.equal(r.status, 422, r.text)
  t.match(r.json?.message, /^DeleteOptions\.meta\.orch\.io "" is invalid: propagationPolicy: /)
  t.equal(r.json?.details?.group, 'meta.orch.io')
  t.equal(r.json?.details?.kind, 'DeleteOptions')
  t.equal((await s.request('GET', cmPath('opt-bad'))).status, 200, 'nothing was deleted')
  r = await s.request('DELETE', cmPath('opt-bad') + '?gracePeriodSeconds=0&orphanDependents=false', { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1' })
  t.equal(r.status, 200, r.text)
})
