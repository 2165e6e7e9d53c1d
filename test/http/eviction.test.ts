// Black-box: the pods/eviction sub-resource and the disruption controller, as upstream's EvictionREST and disruption
// controller behave: discovery and authorization, the budget's status (expected, healthy, desired pods, disruptions
// allowed, condition DisruptionAllowed; percentages through the owners' replicas; SyncFailed), evictions allowed (the
// budget decremented, the pod in disruptedPods and marked DisruptionTarget) and refused (the 429 bodies), pods that
// skip the budget (pending, no budget), unhealthy pods under both policies, dry run, the error answers, and
// `kubectl drain` (v1.32) evicting a node's pods, or blocked by the budget until its timeout.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runKubectl } from '../helpers/kubectl.js'
import { created, eventually } from '../helpers/poll.js'
import { startServer, type Reply, type TestServer } from '../helpers/server.js'

type Obj = Record<string, any>

const work = mkdtempSync(join(tmpdir(), 'orch-evict-'))
const home = join(work, 'home')
const tokenFile = join(work, 'tokens.csv')
writeFileSync(tokenFile, ['evictor-token,evictor,u-evictor', 'nobody-token,nobody,u-nobody', 'node-token,system:node:kn1,u-kn1,system:nodes', ''].join('\n'))

let s: TestServer
t.before(async () => { s = await startServer({ secure: true, args: ['--token-auth-file', tokenFile] }) })
t.teardown(async () => {
  await s?.stop()
  rmSync(work, { recursive: true, force: true })
})

const MERGE = { 'content-type': 'application/merge-patch+json' }
const VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."
const podPath = (ns: string, name = '') => `/api/v1/namespaces/${ns}/pods${name ? '/' + name : ''}`
const pdbPath = (ns: string, name = '') => `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets${name ? '/' + name : ''}`

async function namespace(name: string): Promise<void> {
  await created(await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }), name)
}

interface PodOpts { labels?: Record<string, string>; ready?: boolean; phase?: string; node?: string; grace?: number; owner?: Obj }

/** A pod, then its status as a kubelet would write it (Running and Ready unless told otherwise). */
async function pod(ns: string, name: string, o: PodOpts = {}): Promise<Obj> {
  const metadata: Obj = { name, labels: o.labels ?? { app: 'web' } }
  if (o.owner) metadata.ownerReferences = [{ apiVersion: o.owner.apiVersion, kind: o.owner.kind, name: o.owner.metadata.name, uid: o.owner.metadata.uid, controller: true }]
  const spec: Obj = { containers: [{ name: 'c', image: 'nginx' }], terminationGracePeriodSeconds: o.grace ?? 0 }
  if (o.node !== undefined) spec.nodeName = o.node
  const p = await created(await s.request('POST', podPath(ns), { apiVersion: 'v1', kind: 'Pod', metadata, spec }), name)
  const phase = o.phase ?? 'Running'
  if (phase === 'Pending') return p
  const r = await s.request('PATCH', `${podPath(ns, name)}/status`, {
    status: { phase, conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True', lastTransitionTime: '2024-01-01T00:00:00Z' }] },
  }, MERGE)
  if (r.status !== 200) throw new Error(`pod status ${name}: ${r.status} ${r.text}`)
  return r.json
}

async function pdb(ns: string, name: string, spec: Obj): Promise<Obj> {
  return created(await s.request('POST', pdbPath(ns), { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name }, spec: { selector: { matchLabels: { app: 'web' } }, ...spec } }), name)
}

async function replicaSet(ns: string, name: string, replicas: number, owner?: Obj): Promise<Obj> {
  const metadata: Obj = { name }
  if (owner) metadata.ownerReferences = [{ apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid, controller: true }]
  const labels = { app: 'web' }
  return created(await s.request('POST', `/apis/apps/v1/namespaces/${ns}/replicasets`, {
    apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata,
    spec: { replicas, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
  }), name)
}

/** The budget's status once `want` holds (undefined when it never did). */
async function statusWhen(ns: string, name: string, want: (st: Obj) => boolean): Promise<Obj | undefined> {
  let st: Obj | undefined
  const ok = await eventually(async () => {
    st = (await s.request('GET', pdbPath(ns, name))).json?.status
    return st !== undefined && want(st)
  })
  return ok ? st : undefined
}

/** The budget's status fields the controller computes (the condition by its meaning). */
function summary(st: Obj): Obj {
  const c = (st.conditions ?? []).find((x: Obj) => x.type === 'DisruptionAllowed')
  return {
    observedGeneration: st.observedGeneration, expectedPods: st.expectedPods, currentHealthy: st.currentHealthy, desiredHealthy: st.desiredHealthy,
    disruptionsAllowed: st.disruptionsAllowed, disruptedPods: st.disruptedPods, condition: c && { status: c.status, reason: c.reason, message: c.message },
  }
}

function eviction(name: string, extra: Obj = {}): Obj {
  return { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name }, ...extra }
}

function evict(ns: string, name: string, body: Obj = eviction(name), query = '', token?: string | null): Promise<Reply> {
  return s.request('POST', `${podPath(ns, name)}/eviction${query}`, body, undefined, token === undefined ? undefined : { token })
}

const SUCCESS = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }
const gone = (ns: string, name: string) => async () => (await s.request('GET', podPath(ns, name))).status === 404

/** The watch events of a path from `rv` for `seconds` (history replay): their objects. */
async function watched(path: string, rv: string, seconds = 1): Promise<Obj[]> {
  const r = await s.request('GET', `${path}?watch=1&resourceVersion=${rv}&timeoutSeconds=${seconds}`)
  if (r.status !== 200) throw new Error(`watch ${path}: ${r.status} ${r.text}`)
  return r.text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l)).filter((e) => e.type !== 'BOOKMARK').map((e) => e.object)
}

t.test('discovery lists pods/eviction as policy/v1 Eviction, create only; other verbs are refused', async (t) => {
  const r = await s.request('GET', '/api/v1')
  t.same(r.json.resources.find((x: Obj) => x.name === 'pods/eviction'), { name: 'pods/eviction', singularName: '', namespaced: true, group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] })
  await namespace('ev-verbs')
  await pod('ev-verbs', 'p')
  for (const method of ['GET', 'PUT', 'DELETE']) {
    const g = await s.request(method, `${podPath('ev-verbs', 'p')}/eviction`, method === 'PUT' ? eviction('p') : undefined)
    t.equal(g.status, 405, g.text)
    t.same(g.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server does not allow this method on the requested resource', reason: 'MethodNotAllowed', details: {}, code: 405 }, `${method}: upstream's route-level 405`)
  }
})

t.test('the controller computes the status: an integer minAvailable counts the matching pods', async (t) => {
  await namespace('ev-status')
  for (const n of ['a', 'b', 'c']) await pod('ev-status', n)
  await pod('ev-status', 'other', { labels: { app: 'db' } })
  await pdb('ev-status', 'budget', { minAvailable: 2 })
  const st = await statusWhen('ev-status', 'budget', (x) => x.currentHealthy === 3)
  t.ok(st, 'status written')
  t.same(summary(st!), { observedGeneration: 1, expectedPods: 3, currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 1, disruptedPods: undefined, condition: { status: 'True', reason: 'SufficientPods', message: '' } })
  const cond = st!.conditions.find((x: Obj) => x.type === 'DisruptionAllowed')
  t.equal(cond.observedGeneration, 1)
  t.match(cond.lastTransitionTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)

  // One pod turns unready: no disruption is allowed any more.
  await s.request('PATCH', `${podPath('ev-status', 'a')}/status`, { status: { conditions: [{ type: 'Ready', status: 'False' }] } }, MERGE)
  const after = await statusWhen('ev-status', 'budget', (x) => x.currentHealthy === 2)
  t.same(summary(after!), { observedGeneration: 1, expectedPods: 3, currentHealthy: 2, desiredHealthy: 2, disruptionsAllowed: 0, disruptedPods: undefined, condition: { status: 'False', reason: 'InsufficientPods', message: '' } })

  // A pod whose labels leave the selector leaves the budget; a new matching one joins it.
  await s.request('PATCH', podPath('ev-status', 'b'), { metadata: { labels: { app: 'gone' } } }, MERGE)
  t.ok(await statusWhen('ev-status', 'budget', (x) => x.expectedPods === 2 && x.currentHealthy === 1), 'a relabelled pod leaves')
  await pod('ev-status', 'd')
  t.ok(await statusWhen('ev-status', 'budget', (x) => x.expectedPods === 3 && x.currentHealthy === 2), 'a new pod joins')

  // A spec change moves the generation; the controller catches up.
  const p = await s.request('PATCH', pdbPath('ev-status', 'budget'), { spec: { minAvailable: 1 } }, MERGE)
  t.equal(p.json.metadata.generation, 2)
  t.ok(await statusWhen('ev-status', 'budget', (x) => x.observedGeneration === 2 && x.disruptionsAllowed === 1 && x.desiredHealthy === 1), 'generation 2 observed')
})

t.test('percentages and maxUnavailable count the replicas of the pods\' controllers', async (t) => {
  await namespace('ev-scale')
  const rs = await replicaSet('ev-scale', 'rs', 4)
  for (const n of ['a', 'b', 'c']) await pod('ev-scale', n, { owner: rs })
  await pdb('ev-scale', 'half', { minAvailable: '50%' })
  const half = await statusWhen('ev-scale', 'half', (x) => x.expectedPods === 4)
  t.same(summary(half!), { observedGeneration: 1, expectedPods: 4, currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 1, disruptedPods: undefined, condition: { status: 'True', reason: 'SufficientPods', message: '' } })
  await s.request('DELETE', pdbPath('ev-scale', 'half'))

  await pdb('ev-scale', 'one', { maxUnavailable: 1 })
  const one = await statusWhen('ev-scale', 'one', (x) => x.expectedPods === 4)
  t.same(summary(one!), { observedGeneration: 1, expectedPods: 4, currentHealthy: 3, desiredHealthy: 3, disruptionsAllowed: 0, disruptedPods: undefined, condition: { status: 'False', reason: 'InsufficientPods', message: '' } })
  await s.request('DELETE', pdbPath('ev-scale', 'one'))

  // A ReplicaSet of a Deployment: the Deployment's replicas count.
  await namespace('ev-deploy')
  const d = await created(await s.request('POST', '/apis/apps/v1/namespaces/ev-deploy/deployments', {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' },
    spec: { replicas: 6, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
  }), 'd')
  const owned = await replicaSet('ev-deploy', 'd-1', 2, d)
  for (const n of ['a', 'b']) await pod('ev-deploy', n, { owner: owned })
  await pdb('ev-deploy', 'pct', { maxUnavailable: '50%' })
  const pct = await statusWhen('ev-deploy', 'pct', (x) => x.expectedPods === 6)
  t.same(summary(pct!), { observedGeneration: 1, expectedPods: 6, currentHealthy: 2, desiredHealthy: 3, disruptionsAllowed: 0, disruptedPods: undefined, condition: { status: 'False', reason: 'InsufficientPods', message: '' } })
})

t.test('an owner without a scale fails the sync: SyncFailed, and evictions wait for the budget', async (t) => {
  await namespace('ev-fail')
  const cm = await created(await s.request('POST', '/api/v1/namespaces/ev-fail/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner' } }), 'owner')
  await pod('ev-fail', 'a', { owner: cm })
  await pdb('ev-fail', 'budget', { maxUnavailable: 1 })
  const st = await statusWhen('ev-fail', 'budget', (x) => (x.conditions ?? []).length > 0)
  t.ok(st, 'condition written')
  t.same(summary(st!), { observedGeneration: undefined, expectedPods: 0, currentHealthy: 0, desiredHealthy: 0, disruptionsAllowed: 0, disruptedPods: undefined, condition: { status: 'False', reason: 'SyncFailed', message: 'configmaps does not implement the scale subresource' } })
  // observedGeneration never caught up with the generation: the eviction is told to come back.
  const r = await evict('ev-fail', 'a')
  t.equal(r.status, 429, r.text)
  t.same(r.json, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: VIOLATION, reason: 'TooManyRequests',
    details: { causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget budget is still being processed by the server.' }], retryAfterSeconds: 10 }, code: 429,
  })
  t.equal(r.headers['retry-after'], '10')
  t.equal((await s.request('GET', podPath('ev-fail', 'a'))).status, 200, 'the pod stays')
})

t.test('an allowed eviction takes a disruption, marks the pod and deletes it', async (t) => {
  await namespace('ev-allow')
  // A grace period keeps the evicted pod (Terminating) so that its condition can be seen.
  await pod('ev-allow', 'a', { node: 'n1', grace: 30 })
  for (const n of ['b', 'c']) await pod('ev-allow', n)
  const budget = await pdb('ev-allow', 'budget', { minAvailable: 2 })
  const st = await statusWhen('ev-allow', 'budget', (x) => x.disruptionsAllowed === 1)
  t.ok(st, 'one disruption allowed')
  const rv = (await s.request('GET', pdbPath('ev-allow', 'budget'))).json.metadata.resourceVersion

  const r = await evict('ev-allow', 'a')
  t.equal(r.status, 201, r.text)
  t.same(r.json, SUCCESS)

  // The eviction's own write of the budget: one disruption fewer, the pod in disruptedPods, the condition False.
  const events = await watched(pdbPath('ev-allow', 'budget'), rv)
  const taken = events.find((o) => o.status?.disruptedPods?.a !== undefined)
  t.ok(taken, 'the budget was written with the pod in disruptedPods')
  t.equal(taken!.status.disruptionsAllowed, 0)
  t.match(taken!.status.disruptedPods.a, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
  t.match(taken!.status.conditions.find((c: Obj) => c.type === 'DisruptionAllowed'), { status: 'False', reason: 'InsufficientPods', message: '' })
  t.equal(taken!.metadata.generation, budget.metadata.generation, 'a status write')
  t.ok(taken!.metadata.managedFields.some((f: Obj) => f.manager === 'orch-apiserver' && f.subresource === 'status'), 'written by the server')

  const p = await s.request('GET', podPath('ev-allow', 'a'))
  t.equal(p.status, 200, 'the pod is in its grace period')
  t.type(p.json.metadata.deletionTimestamp, 'string')
  t.equal(p.json.metadata.deletionGracePeriodSeconds, 30)
  const target = p.json.status.conditions.find((c: Obj) => c.type === 'DisruptionTarget')
  t.match(target, { type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting' })
  t.match(target.lastTransitionTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)

  // The controller sees the pod going: it leaves disruptedPods and counts as unhealthy.
  const after = await statusWhen('ev-allow', 'budget', (x) => x.disruptedPods === undefined && x.currentHealthy === 2)
  t.same(summary(after!), { observedGeneration: 1, expectedPods: 3, currentHealthy: 2, desiredHealthy: 2, disruptionsAllowed: 0, disruptedPods: undefined, condition: { status: 'False', reason: 'InsufficientPods', message: '' } })

  // The budget is spent: the next eviction is refused with upstream's 429.
  const no = await evict('ev-allow', 'b')
  t.equal(no.status, 429, no.text)
  t.same(no.json, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: VIOLATION, reason: 'TooManyRequests',
    details: { causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget budget needs 2 healthy pods and has 2 currently' }] }, code: 429,
  })
  t.equal(no.headers['retry-after'], undefined, 'no Retry-After')
  const b = await s.request('GET', podPath('ev-allow', 'b'))
  t.equal(b.status, 200)
  t.equal(b.json.metadata.deletionTimestamp, undefined, 'the refused pod is untouched')
  t.notOk((b.json.status.conditions ?? []).some((c: Obj) => c.type === 'DisruptionTarget'))
})

t.test('an immediate eviction removes the pod; the budget counts it out', async (t) => {
  await namespace('ev-now')
  for (const n of ['a', 'b', 'c']) await pod('ev-now', n)
  await pdb('ev-now', 'budget', { maxUnavailable: 2 })
  // maxUnavailable needs controllers: the pods here have none, so their expected count is 0 and nothing is allowed.
  t.ok(await statusWhen('ev-now', 'budget', (x) => x.observedGeneration === 1 && x.expectedPods === 0 && x.disruptionsAllowed === 0), 'unmanaged pods count nothing')
  await s.request('DELETE', pdbPath('ev-now', 'budget'))
  await pdb('ev-now', 'ints', { minAvailable: 1 })
  t.ok(await statusWhen('ev-now', 'ints', (x) => x.disruptionsAllowed === 2), 'two allowed')
  t.same((await evict('ev-now', 'a')).json, SUCCESS)
  t.ok(await eventually(gone('ev-now', 'a')), 'a is gone')
  const st = await statusWhen('ev-now', 'ints', (x) => x.expectedPods === 2)
  t.same(summary(st!), { observedGeneration: 1, expectedPods: 2, currentHealthy: 2, desiredHealthy: 1, disruptionsAllowed: 1, disruptedPods: undefined, condition: { status: 'True', reason: 'SufficientPods', message: '' } })
})

t.test('pods that skip the budget: pending, finished, and pods no budget covers', async (t) => {
  await namespace('ev-skip')
  await pod('ev-skip', 'ready')
  await pod('ev-skip', 'pending', { phase: 'Pending' })
  await pod('ev-skip', 'done', { phase: 'Succeeded', ready: false })
  await pod('ev-skip', 'loose', { labels: { app: 'other' } })
  await pdb('ev-skip', 'budget', { minAvailable: 5 })
  t.ok(await statusWhen('ev-skip', 'budget', (x) => x.observedGeneration === 1 && x.disruptionsAllowed === 0), 'nothing allowed')
  for (const n of ['pending', 'done', 'loose']) {
    const r = await evict('ev-skip', n)
    t.equal(r.status, 201, `${n}: ${r.text}`)
    t.same(r.json, SUCCESS)
    t.ok(await eventually(gone('ev-skip', n)), `${n} is gone`)
  }
  t.equal((await evict('ev-skip', 'ready')).status, 429, 'the covered running pod stays')
})

t.test('unhealthy pods: IfHealthyBudget lets them go while the budget holds; AlwaysAllow always', async (t) => {
  await namespace('ev-unhealthy')
  for (const n of ['a', 'b']) await pod('ev-unhealthy', n)
  for (const n of ['sick1', 'sick2']) await pod('ev-unhealthy', n, { ready: false })
  await pdb('ev-unhealthy', 'budget', { minAvailable: 2 })
  t.ok(await statusWhen('ev-unhealthy', 'budget', (x) => x.currentHealthy === 2 && x.desiredHealthy === 2), 'healthy as desired')
  const r = await evict('ev-unhealthy', 'sick1')
  t.same(r.json, SUCCESS, 'an unhealthy pod goes while currentHealthy >= desiredHealthy')
  t.ok(await eventually(gone('ev-unhealthy', 'sick1')))
  const st = (await s.request('GET', pdbPath('ev-unhealthy', 'budget'))).json.status
  t.equal(st.disruptedPods, undefined, 'no disruption taken')

  // The budget no longer holds: the unhealthy pod is refused, unless the policy always allows it.
  await s.request('PATCH', pdbPath('ev-unhealthy', 'budget'), { spec: { minAvailable: 3 } }, MERGE)
  t.ok(await statusWhen('ev-unhealthy', 'budget', (x) => x.observedGeneration === 2 && x.desiredHealthy === 3), 'desired 3')
  const no = await evict('ev-unhealthy', 'sick2')
  t.equal(no.status, 429, no.text)
  t.equal(no.json.details.causes[0].message, 'The disruption budget budget needs 3 healthy pods and has 2 currently')
  await s.request('PATCH', pdbPath('ev-unhealthy', 'budget'), { spec: { unhealthyPodEvictionPolicy: 'AlwaysAllow' } }, MERGE)
  t.ok(await statusWhen('ev-unhealthy', 'budget', (x) => x.observedGeneration === 3), 'generation 3 observed')
  t.same((await evict('ev-unhealthy', 'sick2')).json, SUCCESS, 'AlwaysAllow lets the unhealthy pod go')
  t.ok(await eventually(gone('ev-unhealthy', 'sick2')))
  t.equal((await evict('ev-unhealthy', 'a')).status, 429, 'a healthy pod is still held by the budget')
})

t.test('dry run checks the budget and changes nothing; policy/v1beta1 bodies are taken', async (t) => {
  await namespace('ev-dry')
  for (const n of ['a', 'b']) await pod('ev-dry', n)
  await pdb('ev-dry', 'budget', { minAvailable: 1 })
  t.ok(await statusWhen('ev-dry', 'budget', (x) => x.disruptionsAllowed === 1))
  const before = (await s.request('GET', pdbPath('ev-dry', 'budget'))).json
  t.same((await evict('ev-dry', 'a', eviction('a'), '?dryRun=All')).json, SUCCESS)
  t.same((await evict('ev-dry', 'a', eviction('a', { deleteOptions: { dryRun: ['All'] } }))).json, SUCCESS)
  const p = await s.request('GET', podPath('ev-dry', 'a'))
  t.equal(p.status, 200)
  t.equal(p.json.metadata.deletionTimestamp, undefined)
  t.notOk((p.json.status.conditions ?? []).some((c: Obj) => c.type === 'DisruptionTarget'), 'no condition in a dry run')
  t.equal((await s.request('GET', pdbPath('ev-dry', 'budget'))).json.metadata.resourceVersion, before.metadata.resourceVersion, 'the budget is not written')

  const bad = await evict('ev-dry', 'a', eviction('a', { deleteOptions: { dryRun: ['All', 'All'] } }), '?dryRun=All')
  t.equal(bad.status, 500, bad.text)
  t.same(bad.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Non-matching dry-run options in request and content: [All] and [All All]', reason: 'Unknown', code: 500 })

  const beta = await evict('ev-dry', 'a', { apiVersion: 'policy/v1beta1', kind: 'Eviction', metadata: { name: 'a' } })
  t.same(beta.json, SUCCESS)
  t.ok(await eventually(gone('ev-dry', 'a')))
})

t.test('error answers: name mismatch, two budgets, a missing pod, bad bodies', async (t) => {
  await namespace('ev-err')
  await pod('ev-err', 'a')
  const st = (code: number, reason: string, message: string, details?: Obj) => {
    const o: Obj = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason }
    if (details) o.details = details
    o.code = code
    return o
  }
  const mismatch = await evict('ev-err', 'a', eviction('b'))
  t.equal(mismatch.status, 400)
  t.same(mismatch.json, st(400, 'BadRequest', 'name in URL does not match name in Eviction object'))
  const ns = await evict('ev-err', 'a', { ...eviction('a'), metadata: { name: 'a', namespace: 'elsewhere' } })
  t.equal(ns.status, 400)
  t.same(ns.json, st(400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request'))
  const kind = await evict('ev-err', 'a', { apiVersion: 'policy/v1', kind: 'Pod', metadata: { name: 'a' } })
  t.equal(kind.status, 400, kind.text)
  const missing = await evict('ev-err', 'nope')
  t.equal(missing.status, 404)
  t.same(missing.json, st(404, 'NotFound', 'pods "nope" not found', { name: 'nope', kind: 'pods' }))

  await pdb('ev-err', 'one', { minAvailable: 0 })
  await pdb('ev-err', 'two', { minAvailable: 0 })
  const two = await evict('ev-err', 'a')
  t.equal(two.status, 500, two.text)
  t.same(two.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.', code: 500 })
  t.equal((await s.request('GET', podPath('ev-err', 'a'))).status, 200, 'the pod stays')
})

t.test('eviction is authorized as create on pods/eviction', async (t) => {
  await namespace('ev-authz')
  await pod('ev-authz', 'a')
  await created(await s.request('POST', '/apis/rbac.authorization.orch.io/v1/namespaces/ev-authz/roles', {
    apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', metadata: { name: 'evict' }, rules: [{ apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] }],
  }), 'role')
  await created(await s.request('POST', '/apis/rbac.authorization.orch.io/v1/namespaces/ev-authz/rolebindings', {
    apiVersion: 'rbac.authorization.orch.io/v1', kind: 'RoleBinding', metadata: { name: 'evict' },
    roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'Role', name: 'evict' }, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.orch.io', name: 'evictor' }],
  }), 'binding')
  const no = await evict('ev-authz', 'a', eviction('a'), '', 'nobody-token')
  t.equal(no.status, 403)
  t.equal(no.json.message, 'pods "a" is forbidden: User "nobody" cannot create resource "pods/eviction" in API group "" in the namespace "ev-authz"')
  const yes = await evict('ev-authz', 'a', eviction('a'), '', 'evictor-token')
  t.same(yes.json, SUCCESS, 'create pods/eviction is enough (no delete pods)')
  t.ok(await eventually(gone('ev-authz', 'a')))

  // A node evicts the pods bound to it, and only those (NodeRestriction); its eviction's writes pass no admission again.
  await pod('ev-authz', 'mine', { node: 'kn1' })
  await pod('ev-authz', 'theirs', { node: 'kn2' })
  await pdb('ev-authz', 'budget', { minAvailable: 0 })
  t.ok(await statusWhen('ev-authz', 'budget', (x) => x.disruptionsAllowed === 2), 'two allowed')
  const other = await evict('ev-authz', 'theirs', eviction('theirs'), '', 'node-token')
  t.equal(other.status, 403, other.text)
  t.equal(other.json.message, 'pods "theirs" is forbidden: node kn1 can only evict pods with spec.nodeName set to itself')
  const own = await evict('ev-authz', 'mine', eviction('mine'), '', 'node-token')
  t.same(own.json, SUCCESS, own.text)
  t.ok(await eventually(gone('ev-authz', 'mine')))
})

t.test('kubectl drain evicts a node\'s pods its budget allows, and waits on one that forbids it', async (t) => {
  await namespace('ev-drain')
  const kubectl = (args: string[], timeoutMs = 60_000) => runKubectl(s.kubeconfig, home, args, { timeoutMs })
  for (const n of ['dn1', 'dn2', 'dn3']) await created(await s.request('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: n } }), n)
  const rs = await replicaSet('ev-drain', 'web', 3)
  await pod('ev-drain', 'web-1', { node: 'dn1', owner: rs })
  await pod('ev-drain', 'web-2', { node: 'dn1', owner: rs })
  await pod('ev-drain', 'web-3', { node: 'dn2', owner: rs })
  await pdb('ev-drain', 'web', { minAvailable: 1 })
  t.ok(await statusWhen('ev-drain', 'web', (x) => x.disruptionsAllowed === 2), 'two disruptions allowed')

  const ok = await kubectl(['drain', 'dn1', '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=30s'])
  t.equal(ok.code, 0, `${ok.stdout}\n${ok.stderr}`)
  t.match(ok.stdout, /node\/dn1 cordoned/)
  t.match(ok.stdout, /pod\/web-1 evicted/)
  t.match(ok.stdout, /pod\/web-2 evicted/)
  t.match(ok.stdout, /node\/dn1 drained/)
  t.equal((await s.request('GET', '/api/v1/nodes/dn1')).json.spec.unschedulable, true)
  for (const n of ['web-1', 'web-2']) t.equal((await s.request('GET', podPath('ev-drain', n))).status, 404, `${n} is gone`)
  t.ok(await statusWhen('ev-drain', 'web', (x) => x.currentHealthy === 1 && x.disruptionsAllowed === 0), 'the budget is spent')

  // The budget forbids the last pod's eviction: drain retries, then gives up at its timeout.
  await pod('ev-drain', 'web-4', { node: 'dn3', owner: rs })
  await s.request('PATCH', pdbPath('ev-drain', 'web'), { spec: { minAvailable: 2 } }, MERGE)
  t.ok(await statusWhen('ev-drain', 'web', (x) => x.observedGeneration === 2 && x.currentHealthy === 2 && x.disruptionsAllowed === 0), 'nothing allowed')
  const started = Date.now()
  const blocked = await kubectl(['drain', 'dn3', '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=8s'])
  t.not(blocked.code, 0, 'drain fails')
  t.ok(Date.now() - started >= 7000, 'after its timeout')
  const out = `${blocked.stdout}\n${blocked.stderr}`
  t.match(out, /error when evicting pods\/"web-4" -n "ev-drain" \(will retry after 5s\): Cannot evict pod as it would violate the pod's disruption budget\./)
  t.match(out, /global timeout reached: 8s/)
  t.equal((await s.request('GET', podPath('ev-drain', 'web-4'))).status, 200, 'the pod stays')
})

t.test('a ValidatingAdmissionPolicy sees an eviction as the create of a policy/v1 Eviction on pods/eviction', async (t) => {
  await namespace('ev-policy')
  await pod('ev-policy', 'kept')
  const G = 'admissionregistration.orch.io'
  await created(await s.request('POST', `/apis/${G}/v1/validatingadmissionpolicies`, {
    apiVersion: `${G}/v1`, kind: 'ValidatingAdmissionPolicy', metadata: { name: 'no-evictions' },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods/eviction'] }] },
      validations: [{ expression: "!(request.kind.group == 'policy' && request.kind.kind == 'Eviction' && request.subResource == 'eviction' && object.kind == 'Eviction')", message: 'evictions are off' }],
    },
  }), 'policy')
  await created(await s.request('POST', `/apis/${G}/v1/validatingadmissionpolicybindings`, {
    apiVersion: `${G}/v1`, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'no-evictions' },
    spec: { policyName: 'no-evictions', validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: { 'orch.io/metadata.name': 'ev-policy' } } } },
  }), 'binding')
  const r = await evict('ev-policy', 'kept')
  t.equal(r.status, 422, r.text)
  t.match(r.json?.message, /ValidatingAdmissionPolicy 'no-evictions' with binding 'no-evictions' denied request: evictions are off/)
  t.equal((await s.request('GET', podPath('ev-policy', 'kept'))).status, 200, 'the pod stays')
  await s.request('DELETE', `/apis/${G}/v1/validatingadmissionpolicybindings/no-evictions`)
  await s.request('DELETE', `/apis/${G}/v1/validatingadmissionpolicies/no-evictions`)
})
