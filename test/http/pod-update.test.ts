// Black-box: what an update may change in a Pod (upstream ValidatePodUpdate), through raw HTTP and kubectl 1.32.
import t from 'tap'
import { runKubectl } from '../helpers/kubectl.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type Reply, type TestServer } from '../helpers/server.js'

let s: TestServer
const home = mkdtempSync(join(tmpdir(), 'orch-pod-update-home-'))
const PODS = '/api/v1/namespaces/default/pods'
const MERGE = { 'content-type': 'application/merge-patch+json' }
const JSONP = { 'content-type': 'application/json-patch+json' }
const FIRST_LINE = 'Pod "p" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)'

// Without the ServiceAccount plugin: its token mounts would make every merge patch of containers here a change of
// volumeMounts (as upstream; admission-plugins.test.ts and service-account-admission.test.ts cover the plugin).
t.before(async () => { s = await startServer({ secure: true, args: ['--disable-admission-plugins=ServiceAccount'] }) })
t.teardown(async () => {
  await s?.stop()
  rmSync(home, { recursive: true, force: true })
})

const merge = (name: string, patch: unknown): Promise<Reply> => s.request('PATCH', `${PODS}/${name}`, patch, MERGE)

async function pod(name: string, spec: Record<string, unknown>): Promise<void> {
  const r = await s.request('POST', PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'i' }], ...spec } })
  if (r.status !== 201) throw new Error(`create ${name}: ${r.status} ${r.text}`)
}

t.test('images, labels and status may change; the rest of spec may not', async (t) => {
  await pod('p', { tolerations: [{ key: 'a', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }] })
  let r = await merge('p', { spec: { containers: [{ name: 'c', image: 'i2' }] } })
  t.equal(r.status, 200, r.text)
  t.equal(r.json.spec.containers[0].image, 'i2')
  r = await merge('p', { metadata: { labels: { x: 'y' } } })
  t.equal(r.status, 200, 'metadata changes')
  r = await merge('p', { spec: { restartPolicy: 'Never' } })
  t.equal(r.status, 422, r.text)
  t.equal(String(r.json?.message).split('\n')[0], FIRST_LINE)
  t.match(r.json?.message, 'spec.restartPolicy: "Always" -> "Never"', 'the message names what changed')
  t.equal(r.json?.details?.causes?.[0]?.field, 'spec')
  r = await s.request('PATCH', `${PODS}/p`, [{ op: 'add', path: '/spec/nodeName', value: 'n1' }], JSONP)
  t.equal(r.status, 422, 'nodeName is set by binding, not by update')
  r = await s.request('PATCH', `${PODS}/p`, [{ op: 'add', path: '/spec/containers/-', value: { name: 'd', image: 'i' } }], JSONP)
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.message, 'Pod "p" is invalid: spec.containers: Forbidden: pod updates may not add or remove containers')
  const st = await s.request('GET', `${PODS}/p`)
  const put = await s.request('PUT', `${PODS}/p/status`, { ...st.json, status: { ...st.json.status, phase: 'Running' } })
  t.equal(put.status, 200, 'status writes are not spec updates')
  t.equal((await s.request('GET', `${PODS}/p`)).json.spec.restartPolicy, 'Always', 'refused updates stored nothing')
})

t.test('tolerations may only be added (a NoExecute one may shorten its seconds)', async (t) => {
  const base = { key: 'a', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }
  let r = await merge('p', { spec: { tolerations: [base, { key: 'b', operator: 'Exists' }] } })
  t.equal(r.status, 200, `added: ${r.text}`)
  r = await merge('p', { spec: { tolerations: [{ ...base, tolerationSeconds: 10 }, { key: 'b', operator: 'Exists' }] } })
  t.equal(r.status, 200, `shortened: ${r.text}`)
  r = await merge('p', { spec: { tolerations: [{ ...base, tolerationSeconds: 10 }] } })
  t.equal(r.status, 422, 'removed')
  r = await merge('p', { spec: { tolerations: [{ ...base, tolerationSeconds: 60 }, { key: 'b', operator: 'Exists' }] } })
  t.equal(r.status, 422, 'lengthened')
})

t.test('activeDeadlineSeconds may be set and lowered, not raised or removed', async (t) => {
  let r = await merge('p', { spec: { activeDeadlineSeconds: 100 } })
  t.equal(r.status, 200, r.text)
  r = await merge('p', { spec: { activeDeadlineSeconds: 200 } })
  t.equal(r.status, 422)
  t.equal(r.json?.message, 'Pod "p" is invalid: spec.activeDeadlineSeconds: Invalid value: 200: must be less than or equal to previous value')
  r = await merge('p', { spec: { activeDeadlineSeconds: 50 } })
  t.equal(r.status, 200, r.text)
  r = await merge('p', { spec: { activeDeadlineSeconds: null } })
  t.equal(r.status, 422)
  t.match(r.json?.message, 'must not update from a positive integer to nil value')
})

t.test('scheduling gates may only be removed; while gated, node selectors may be added', async (t) => {
  await pod('g', { schedulingGates: [{ name: 'example.com/wait' }, { name: 'example.com/also' }] })
  let r = await merge('g', { spec: { nodeSelector: { zone: 'a' } } })
  t.equal(r.status, 200, r.text)
  r = await s.request('PATCH', `${PODS}/g`, [{ op: 'add', path: '/spec/schedulingGates/-', value: { name: 'example.com/new' } }], JSONP)
  t.equal(r.status, 422, 'a new gate')
  r = await merge('g', { spec: { schedulingGates: [] } })
  t.equal(r.status, 200, r.text)
  r = await merge('g', { spec: { nodeSelector: { zone: 'b' } } })
  t.equal(r.status, 422, 'not gated any more')
})

t.test('kubectl patch shows the upstream refusal', async (t) => {
  const out = await runKubectl(s.kubeconfig, home, ['patch', 'pod', 'p', '-p', '{"spec":{"restartPolicy":"Never"}}'])
  t.equal(out.code, 1)
  t.match(out.stderr, 'The Pod "p" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`')
})

t.test('pods/binding assigns a node once (a scheduler\'s way; an update may not)', async (t) => {
  await pod('b1', {})
  const bind = (body: unknown) => s.request('POST', `${PODS}/b1/binding`, body)
  let r = await bind({ apiVersion: 'v1', kind: 'Binding', metadata: { name: 'other' }, target: { kind: 'Node', name: 'n1' } })
  t.equal(r.status, 400, 'the name of the URL')
  r = await bind({ apiVersion: 'v1', kind: 'Binding', metadata: { name: 'b1' }, target: { kind: 'Node' } })
  t.equal(r.status, 422, 'a target name is required')
  r = await bind({ apiVersion: 'v1', kind: 'Binding', metadata: { name: 'b1', annotations: { a: 'b' } }, target: { kind: 'Node', name: 'n1' } })
  t.equal(r.status, 201, r.text)
  t.same(r.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 })
  const got = (await s.request('GET', `${PODS}/b1`)).json
  t.equal(got.spec.nodeName, 'n1')
  t.equal(got.metadata.annotations.a, 'b')
  t.equal(got.status.conditions.find((c: any) => c.type === 'PodScheduled')?.status, 'True')
  r = await bind({ apiVersion: 'v1', kind: 'Binding', metadata: { name: 'b1' }, target: { kind: 'Node', name: 'n2' } })
  t.equal(r.status, 409)
  t.equal(r.json?.message, 'Operation cannot be fulfilled on pods/binding "b1": pod b1 is already assigned to node "n1"')
  const disc = await s.request('GET', '/api/v1')
  t.same(disc.json.resources.find((x: any) => x.name === 'pods/binding'), { name: 'pods/binding', singularName: '', namespaced: true, kind: 'Binding', verbs: ['create'] }, 'in discovery')
})
