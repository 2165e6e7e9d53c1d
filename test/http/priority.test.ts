// Black-box: PriorityClass validation, the built-in system classes, and the Priority admission plugin on pods.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type TestServer } from '../helpers/server.js'

type Test = import('tap').Test
let s: TestServer
// A data dir of our own: the last test restarts the server on it.
const dataDir = mkdtempSync(join(tmpdir(), 'orch-priority-'))
const PCS = '/apis/scheduling.orch.io/v1/priorityclasses'
const PODS = '/api/v1/namespaces/default/pods'
const MERGE = { 'content-type': 'application/merge-patch+json' }

t.before(async () => { s = await startServer({ dataDir }) })
t.teardown(async () => { await s?.stop(); rmSync(dataDir, { recursive: true, force: true }) })

const pc = (name: string, value: number, extra: Record<string, unknown> = {}) => ({ apiVersion: 'scheduling.orch.io/v1', kind: 'PriorityClass', metadata: { name }, value, ...extra })
const pod = (name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'i' }], ...spec } })

async function invalidPc(t: Test, body: unknown, field: string, message: string, method = 'POST', path = PCS, headers?: Record<string, string>): Promise<void> {
  const r = await s.request(method, path, body, headers)
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.reason, 'Invalid')
  t.equal(r.json?.details?.causes?.[0]?.field, field)
  t.equal(r.json?.message, message)
}

t.test('the system classes are there after start', async (t) => {
  for (const [name, value] of [['system-node-critical', 2000001000], ['system-cluster-critical', 2000000000]] as const) {
    const r = await s.request('GET', `${PCS}/${name}`)
    t.equal(r.status, 200, r.text)
    t.equal(r.json.value, value)
    t.equal(r.json.globalDefault ?? false, false)
    t.equal(r.json.preemptionPolicy, 'PreemptLowerPriority')
    t.type(r.json.description, 'string')
  }
})

t.test('PriorityClass validation', async (t) => {
  await invalidPc(t, pc('system-mine', 10), 'metadata.name',
    `PriorityClass.scheduling.orch.io "system-mine" is invalid: metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class`)
  await invalidPc(t, pc('too-high', 1000000001), 'value',
    'PriorityClass.scheduling.orch.io "too-high" is invalid: value: Forbidden: maximum allowed value of a user defined priority is 1000000000')
  await invalidPc(t, pc('bad-policy', 5, { preemptionPolicy: 'Sometimes' }), 'preemptionPolicy',
    'PriorityClass.scheduling.orch.io "bad-policy" is invalid: preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"')
  for (const name of ['system-mine', 'too-high', 'bad-policy']) t.equal((await s.request('GET', `${PCS}/${name}`)).status, 404, `${name} not stored`)

  let r = await s.request('POST', PCS, pc('top-user', 1000000000))
  t.equal(r.status, 201, r.text)
  t.equal(r.json.preemptionPolicy, 'PreemptLowerPriority', 'defaulted')
  await invalidPc(t, { value: 7 }, 'value', 'PriorityClass.scheduling.orch.io "top-user" is invalid: value: Forbidden: may not be changed in an update.', 'PATCH', `${PCS}/top-user`, MERGE)
  await invalidPc(t, { preemptionPolicy: 'Never' }, 'preemptionPolicy', 'PriorityClass.scheduling.orch.io "top-user" is invalid: preemptionPolicy: Invalid value: "Never": field is immutable', 'PATCH', `${PCS}/top-user`, MERGE)
  r = await s.request('PATCH', `${PCS}/top-user`, { description: 'changed' }, MERGE)
  t.equal(r.status, 200, 'description may change')
  t.equal(r.json.value, 1000000000)
  // A system class keeps its value too, and a second one of its name with another value is refused.
  await invalidPc(t, { value: 5 }, 'metadata.name', `PriorityClass.scheduling.orch.io "system-node-critical" is invalid: [metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: value of system-node-critical PriorityClass must be 2000001000, value: Forbidden: may not be changed in an update.]`, 'PATCH', `${PCS}/system-node-critical`, MERGE)
})

t.test('one global default', async (t) => {
  let r = await s.request('POST', PCS, pc('default-a', 100, { globalDefault: true, preemptionPolicy: 'Never' }))
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', PCS, pc('default-b', 200, { globalDefault: true }))
  t.equal(r.status, 403, r.text)
  t.same(r.json, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Forbidden', code: 403,
    message: 'priorityclasses.scheduling.orch.io "default-b" is forbidden: PriorityClass default-a is already marked as default. Only one default can exist',
    details: { name: 'default-b', group: 'scheduling.orch.io', kind: 'priorityclasses' },
  })
  t.equal((await s.request('GET', `${PCS}/default-b`)).status, 404, 'not stored')
  r = await s.request('POST', PCS, pc('plain', 200))
  t.equal(r.status, 201, r.text)
  r = await s.request('PATCH', `${PCS}/plain`, { globalDefault: true }, MERGE)
  t.equal(r.status, 403, 'an update may not make a second default')
  t.equal((await s.request('GET', `${PCS}/plain`)).json.globalDefault ?? false, false)
  r = await s.request('PATCH', `${PCS}/default-a`, { description: 'still the default' }, MERGE)
  t.equal(r.status, 200, 'the default itself may be updated')

  // Pods without a class get the default's name, value and policy.
  r = await s.request('POST', PODS, pod('p-default'))
  t.equal(r.status, 201, r.text)
  t.equal(r.json.spec.priorityClassName, 'default-a')
  t.equal(r.json.spec.priority, 100)
  t.equal(r.json.spec.preemptionPolicy, 'Never')

  r = await s.request('DELETE', `${PCS}/default-a`)
  t.equal(r.status, 200, r.text)
  r = await s.request('POST', PODS, pod('p-nodefault'))
  t.equal(r.status, 201, r.text)
  t.equal(r.json.spec.priorityClassName, undefined)
  t.equal(r.json.spec.priority, 0)
  t.equal(r.json.spec.preemptionPolicy, 'PreemptLowerPriority')
})

t.test('pods get their priority from their class', async (t) => {
  let r = await s.request('POST', PCS, pc('high', 1000, { preemptionPolicy: 'Never' }))
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', PODS, pod('p-high', { priorityClassName: 'high' }))
  t.equal(r.status, 201, r.text)
  t.equal(r.json.spec.priority, 1000)
  t.equal(r.json.spec.preemptionPolicy, 'Never')
  r = await s.request('POST', PODS, pod('p-same', { priorityClassName: 'high', priority: 1000, preemptionPolicy: 'Never' }))
  t.equal(r.status, 201, 'the computed values may be given')

  r = await s.request('POST', PODS, pod('p-missing', { priorityClassName: 'nope' }))
  t.equal(r.status, 403, r.text)
  t.same(r.json, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Forbidden', code: 403,
    message: 'pods "p-missing" is forbidden: no PriorityClass with name nope was found',
    details: { name: 'p-missing', kind: 'pods' },
  })
  r = await s.request('POST', PODS, pod('p-prio', { priorityClassName: 'high', priority: 5 }))
  t.equal(r.status, 403, r.text)
  t.equal(r.json.message, 'pods "p-prio" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name')
  r = await s.request('POST', PODS, pod('p-policy', { priorityClassName: 'high', preemptionPolicy: 'PreemptLowerPriority' }))
  t.equal(r.status, 403, r.text)
  t.equal(r.json.message, 'pods "p-policy" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name')
  for (const name of ['p-missing', 'p-prio', 'p-policy']) t.equal((await s.request('GET', `${PODS}/${name}`)).status, 404, `${name} not stored`)

  // The system classes may be used in any namespace (upstream dropped the kube-system restriction).
  r = await s.request('POST', PODS, pod('p-critical', { priorityClassName: 'system-node-critical' }))
  t.equal(r.status, 201, r.text)
  t.equal(r.json.spec.priority, 2000001000)

  // A class created just before is seen by the next pod.
  r = await s.request('POST', PCS, pc('fresh', 42))
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', PODS, pod('p-fresh', { priorityClassName: 'fresh' }))
  t.equal(r.status, 201, r.text)
  t.equal(r.json.spec.priority, 42)
})

t.test('a pod update keeps the priority; it may not change it', async (t) => {
  let r = await s.request('GET', `${PODS}/p-high`)
  const body = r.json
  delete body.spec.priority
  delete body.spec.preemptionPolicy
  body.metadata.labels = { x: 'y' }
  r = await s.request('PUT', `${PODS}/p-high`, body)
  t.equal(r.status, 200, r.text)
  t.equal(r.json.spec.priority, 1000, 'carried over')
  t.equal(r.json.spec.preemptionPolicy, 'Never', 'carried over')
  r = await s.request('PATCH', `${PODS}/p-high`, { spec: { priority: 7 } }, MERGE)
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.details?.causes?.[0]?.field, 'spec')
  t.match(r.json?.message, /pod updates may not change fields other than/)
  r = await s.request('PATCH', `${PODS}/p-high`, { spec: { priorityClassName: 'fresh' } }, MERGE)
  t.equal(r.status, 422, r.text)
  t.equal((await s.request('GET', `${PODS}/p-high`)).json.spec.priority, 1000)
})

t.test('a deleted system class is back after a restart', async (t) => {
  let r = await s.request('DELETE', `${PCS}/system-cluster-critical`)
  t.equal(r.status, 200, r.text)
  t.equal((await s.request('GET', `${PCS}/system-cluster-critical`)).status, 404)
  await s.stop()
  s = await startServer({ dataDir })
  r = await s.request('GET', `${PCS}/system-cluster-critical`)
  t.equal(r.status, 200, r.text)
  t.equal(r.json.value, 2000000000)
  t.equal((await s.request('GET', `${PCS}/high`)).json.value, 1000, 'user classes are kept')
})
