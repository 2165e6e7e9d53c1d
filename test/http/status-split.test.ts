// Black-box: a patch of status alone through the status endpoint (the kubelet's pod status patch, a controller's status
// patch) is applied to the stored object without its spec, which is kept as stored text (src/pipeline/status-split.ts).
// What it stores and answers must be what the whole-object path gives: the same object as a PUT of the same status,
// the stored spec byte for byte, field selectors on spec (stored attributes) for lists and watches, managedFields, no-op
// detection, dry run, admission that reads the spec, and the fall-backs (a body naming spec, deletion in progress).
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type TestServer, type Reply } from '../helpers/server.js'

// The kubelet of ss-n1 (NodeRestriction reads the stored pod's spec.nodeName on its status writes).
const tokenDir = mkdtempSync(join(tmpdir(), 'orch-status-split-'))
t.teardown(() => rmSync(tokenDir, { recursive: true, force: true }))
const tokens = join(tokenDir, 'tokens.csv')
writeFileSync(tokens, 'ss-n1-token,system:node:ss-n1,u-n1,"system:nodes"\n')

const PODS = '/api/v1/namespaces/default/pods'
const SMP = { 'content-type': 'application/strategic-merge-patch+json' }
const MERGE = { 'content-type': 'application/merge-patch+json' }
const sel = (s: string): string => `fieldSelector=${encodeURIComponent(s)}`

let s: TestServer
t.before(async () => {
  s = await startServer({ args: ['--token-auth-file', tokens] })
  for (const n of ['ss-n1', 'ss-n2']) {
    const r = await s.request('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: n } })
    if (r.status !== 201) throw new Error(r.text)
  }
})
t.teardown(() => s.stop())

/** A pod whose metadata holds text that looks like the members around it. */
function podBody(name: string, node: string): any {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, labels: { app: 'ss' }, annotations: { spec: 'x,"spec":{"a":[1,"}"]},"status":{', q: 'a\\"b\\', status: '}' } },
    spec: { nodeName: node, containers: [{ name: 'c', image: 'registry.local/ss:1', ports: [{ containerPort: 80 }] }] },
  }
}

async function create(t: Test, name: string, node = 'ss-n1'): Promise<Reply> {
  const r = await s.request('POST', PODS, podBody(name, node))
  t.equal(r.status, 201, r.text)
  return r
}

const readyStatus = (status: 'True' | 'False'): object => ({
  phase: 'Running', conditions: [{ type: 'Ready', status, lastProbeTime: null, lastTransitionTime: '2026-11-28T08:05:50Z' }],
})

/** The stored text of the object's spec, cut out of the stored JSON as the server printed it. */
function specText(text: string): string {
  const o = JSON.parse(text)
  return JSON.stringify(o.spec)
}

/**
 * An object with what differs between two pods of the same content masked (managedFields in one order: entries of one
 * second sort by manager, of two seconds by time).
 */
function masked(o: any, name: string): string {
  const mf = [...(o.metadata.managedFields ?? [])].sort((a: any, b: any) => `${a.manager}/${a.subresource}`.localeCompare(`${b.manager}/${b.subresource}`))
  const c = { ...o, metadata: { ...o.metadata, managedFields: mf } }
  return JSON.stringify(c).split(o.metadata.name).join(name)
    .replace(/"(uid|resourceVersion|creationTimestamp|time)":"[^"]*"/g, '"$1":"X"')
    .replace(/kube-api-access-[a-z0-9]+/g, 'kube-api-access-X')
}

t.test('a status patch stores what a PUT of the same status stores, the spec byte for byte', async (t) => {
  const a = await create(t, 'ss-a')
  const b = await create(t, 'ss-b')
  const uid = a.json.metadata.uid
  const p = await s.request('PATCH', `${PODS}/ss-a/status`, JSON.stringify({
    metadata: { uid },
    status: { '$setElementOrder/conditions': [{ type: 'Ready' }], ...readyStatus('True') },
  }), { ...SMP, 'user-agent': 'kubelet/v1.32.0' })
  t.equal(p.status, 200, p.text)
  const put = { ...b.json, status: { ...b.json.status, ...readyStatus('True') } }
  const q = await s.request('PUT', `${PODS}/ss-b/status`, put, { 'user-agent': 'kubelet/v1.32.0' })
  t.equal(q.status, 200, q.text)
  const [x, y] = [masked(p.json, 'N'), masked(q.json, 'N')]
  let at = 0
  while (at < x.length && x[at] === y[at]) at++
  t.equal(x, y, `the patch answers the object the PUT answers (first difference: ${x.slice(at - 80, at + 80)} | ${y.slice(at - 80, at + 80)})`)
  const ga = await s.request('GET', `${PODS}/ss-a`)
  const gb = await s.request('GET', `${PODS}/ss-b`)
  t.equal(masked(ga.json, 'N'), masked(gb.json, 'N'), 'and stores it')
  t.equal(specText(ga.text), specText(a.text), 'the spec is the stored one')
  t.same(ga.json.metadata.annotations, podBody('x', 'y').metadata.annotations, 'metadata text that looks like members is intact')
  t.same(ga.json.status.conditions.map((c: any) => [c.type, c.status]), [['Ready', 'True']])
  const mf = ga.json.metadata.managedFields.find((e: any) => e.manager === 'kubelet')
  t.equal(mf?.subresource, 'status')
  t.ok(mf?.fieldsV1?.['f:status']?.['f:conditions'], 'the writer owns the conditions it wrote')
  t.notOk(mf?.fieldsV1?.['f:spec'], 'and nothing of spec')
  t.equal(Object.keys(ga.json).join(','), 'kind,apiVersion,metadata,spec,status', 'members in the stored order')
})

t.test('lists and watches by spec.nodeName see the patched pod (its stored attributes keep the spec)', async (t) => {
  const c = await create(t, 'ss-c', 'ss-n2')
  const rv = c.json.metadata.resourceVersion
  const watch = s.request('GET', `/api/v1/pods?watch=1&timeoutSeconds=2&resourceVersion=${rv}&${sel('spec.nodeName=ss-n2')}`)
  const other = s.request('GET', `/api/v1/pods?watch=1&timeoutSeconds=2&resourceVersion=${rv}&${sel('spec.nodeName=ss-n1')}`)
  await new Promise((r) => setTimeout(r, 300))
  const p = await s.request('PATCH', `${PODS}/ss-c/status`, JSON.stringify({ status: readyStatus('False') }), MERGE)
  t.equal(p.status, 200, p.text)
  const events = (await watch).text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l))
  t.same(events.map((e) => [e.type, e.object.metadata.name, e.object.status.conditions?.[0]?.status]), [['MODIFIED', 'ss-c', 'False']], 'the node\'s watch gets the change')
  t.equal(specText(JSON.stringify(events[0].object)), specText(c.text), 'with the stored spec')
  const others = (await other).text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l))
  t.same(others.filter((e) => e.object?.metadata?.name === 'ss-c'), [], 'another node\'s watch does not')
  const l2 = await s.request('GET', `${PODS}?${sel('spec.nodeName=ss-n2')}`)
  t.same(l2.json.items.map((i: any) => i.metadata.name), ['ss-c'])
  const lp = await s.request('GET', `${PODS}?${sel('status.phase=Running,spec.nodeName=ss-n2')}`)
  t.same(lp.json.items.map((i: any) => i.metadata.name), ['ss-c'], 'a selector on status sees the new phase')
  const ls = await s.request('GET', `${PODS}?${sel('spec.serviceAccountName=default,metadata.name=ss-c')}`)
  t.same(ls.json.items.map((i: any) => i.metadata.name), ['ss-c'])
})

t.test('an unchanged status is a no-op; a dry run answers without storing', async (t) => {
  await create(t, 'ss-d')
  const first = await s.request('PATCH', `${PODS}/ss-d/status`, JSON.stringify({ status: readyStatus('True') }), MERGE)
  t.equal(first.status, 200)
  const again = await s.request('PATCH', `${PODS}/ss-d/status`, JSON.stringify({ status: readyStatus('True') }), MERGE)
  t.equal(again.json.metadata.resourceVersion, first.json.metadata.resourceVersion, 'same resourceVersion')
  const dry = await s.request('PATCH', `${PODS}/ss-d/status?dryRun=All`, JSON.stringify({ status: readyStatus('False') }), MERGE)
  t.equal(dry.status, 200)
  t.equal(dry.json.status.conditions[0].status, 'False')
  t.equal(specText(dry.text), specText(first.text), 'the dry run answers the whole object')
  const g = await s.request('GET', `${PODS}/ss-d`)
  t.equal(g.json.status.conditions[0].status, 'True', 'nothing stored')
})

t.test('a body that names spec takes the whole object, and its spec is ignored as before', async (t) => {
  const e = await create(t, 'ss-e')
  const p = await s.request('PATCH', `${PODS}/ss-e/status`, JSON.stringify({ spec: { nodeName: 'ss-n2', activeDeadlineSeconds: 5 }, status: readyStatus('True') }), MERGE)
  t.equal(p.status, 200, p.text)
  t.equal(specText(p.text), specText(e.text), 'spec unchanged')
  t.equal(p.json.status.phase, 'Running')
  // A type error in the status part is refused (as a body that does not decode).
  const bad = await s.request('PATCH', `${PODS}/ss-e/status`, JSON.stringify({ status: { conditions: 'nope' } }), MERGE)
  t.equal(bad.status, 400, bad.text)
  t.match(bad.json.message, /status\.conditions/)
  const g = await s.request('GET', `${PODS}/ss-e`)
  t.equal(g.json.metadata.resourceVersion, p.json.metadata.resourceVersion, 'the refused write changed nothing')
})

t.test('a pod being deleted (with a finalizer) takes the whole object', async (t) => {
  const body = podBody('ss-f', 'ss-n1') as any
  body.metadata.finalizers = ['example.orch.io/hold']
  const c = await s.request('POST', PODS, body)
  t.equal(c.status, 201, c.text)
  const d = await s.request('DELETE', `${PODS}/ss-f`)
  t.equal(d.status, 200, d.text)
  const p = await s.request('PATCH', `${PODS}/ss-f/status`, JSON.stringify({ status: readyStatus('False') }), MERGE)
  t.equal(p.status, 200, p.text)
  t.ok(p.json.metadata.deletionTimestamp)
  t.equal(specText(p.text), specText(c.text))
  const f = await s.request('PATCH', `${PODS}/ss-f`, JSON.stringify({ metadata: { finalizers: null } }), MERGE)
  t.equal(f.status, 200, f.text)
})

t.test('a deployment status patch keeps spec and generation', async (t) => {
  const D = '/apis/apps/v1/namespaces/default/deployments'
  const c = await s.request('POST', D, {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'ss-dep' },
    spec: { replicas: 2, selector: { matchLabels: { app: 'ss' } }, template: { metadata: { labels: { app: 'ss' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
  })
  t.equal(c.status, 201, c.text)
  const p = await s.request('PATCH', `${D}/ss-dep/status`, JSON.stringify({ status: { observedGeneration: 1, replicas: 2, readyReplicas: 1 } }), MERGE)
  t.equal(p.status, 200, p.text)
  t.equal(p.json.metadata.generation, 1)
  t.equal(JSON.stringify(p.json.spec), JSON.stringify(c.json.spec))
  t.equal(p.json.status.readyReplicas, 1)
})

t.test('NodeRestriction sees the stored spec: a kubelet writes the status of its own pods only', async (t) => {
  await create(t, 'ss-g', 'ss-n1')
  await create(t, 'ss-h', 'ss-n2')
  const own = await s.requestAs('ss-n1-token', 'PATCH', `${PODS}/ss-g/status`, JSON.stringify({ status: readyStatus('True') }), SMP)
  t.equal(own.status, 200, own.text)
  const other = await s.requestAs('ss-n1-token', 'PATCH', `${PODS}/ss-h/status`, JSON.stringify({ status: readyStatus('True') }), SMP)
  t.equal(other.status, 403, other.text)
  t.match(other.json.message, 'node "ss-n1" can only update pod status for pods with spec.nodeName set to itself')
  const labels = await s.requestAs('ss-n1-token', 'PATCH', `${PODS}/ss-g/status`, JSON.stringify({ metadata: { labels: { app: 'other' } }, status: readyStatus('False') }), SMP)
  t.equal(labels.status, 200, labels.text)
  t.same(labels.json.metadata.labels, { app: 'ss' }, 'the status endpoint keeps the stored labels')
})
