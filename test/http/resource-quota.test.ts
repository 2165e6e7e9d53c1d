// Black-box: ResourceQuota enforcement. The quota controller keeps status.hard and status.used; admission refuses what
// would exceed a quota (upstream's 403 texts, as kubectl prints them), counts objects, compute resources and claims,
// honours scopes, and charges status.used before it admits, so concurrent creates cannot overrun a quota.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runKubectl } from '../helpers/kubectl.js'
import { startServer, type TestServer } from '../helpers/server.js'

type Test = import('tap').Test
let s: TestServer
const home = mkdtempSync(join(tmpdir(), 'orch-resource-quota-home-'))
const kubectl = (args: string[], stdin?: string) => runKubectl(s.kubeconfig, home, args, { stdin })
const MERGE = { 'content-type': 'application/merge-patch+json' }

t.before(async () => { s = await startServer({ secure: true }) })
t.teardown(async () => {
  await s?.stop()
  rmSync(home, { recursive: true, force: true })
})

const quota = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name }, spec })
const pod = (name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'i' }], ...spec } })
const podWith = (name: string, resources: Record<string, unknown>, spec: Record<string, unknown> = {}) => pod(name, { containers: [{ name: 'c', image: 'i', resources }], ...spec })

async function namespace(t: Test, name: string): Promise<string> {
  const r = await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } })
  t.equal(r.status, 201, r.text)
  // Every namespace gets the root CA ConfigMap (upstream's kube-root-ca.crt), which quotas count as upstream's do: the
  // tests start once it is there.
  for (let i = 0; i < 200 && (await s.request('GET', `/api/v1/namespaces/${name}/configmaps/orch-root-ca.crt`)).status !== 200; i++) await new Promise((res) => setTimeout(res, 50))
  return `/api/v1/namespaces/${name}`
}

/** Polls a quota until its status satisfies `ok` (the controller works in the background). */
async function statusOf(base: string, name: string, ok: (st: any) => boolean): Promise<any> {
  let last: any
  for (let i = 0; i < 300; i++) {
    const g = await s.request('GET', `${base}/resourcequotas/${name}`)
    last = g.json
    if (g.status === 200 && g.json.status && ok(g.json.status)) return g.json.status
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`quota ${name} never reached the expected status: ${JSON.stringify(last?.status)}`)
}

/** Creates a quota and waits until the controller has computed its usage. */
async function createQuota(t: Test, base: string, body: any): Promise<any> {
  const r = await s.request('POST', `${base}/resourcequotas`, body)
  t.equal(r.status, 201, r.text)
  return statusOf(base, body.metadata.name, (st) => st.used !== undefined && Object.keys(body.spec.hard).every((k) => k in st.used))
}

/** A 403 with upstream's whole Status body, and nothing stored. `resource` is `<resource>[.<group>]`. */
async function refused(t: Test, path: string, body: any, resource: string, message: string): Promise<void> {
  const r = await s.request('POST', path, body)
  t.equal(r.status, 403, r.text)
  const dot = resource.indexOf('.')
  const details = dot < 0 ? { name: body.metadata.name, kind: resource } : { name: body.metadata.name, group: resource.slice(dot + 1), kind: resource.slice(0, dot) }
  t.same(r.json, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `${resource} "${body.metadata.name}" is forbidden: ${message}`,
    reason: 'Forbidden', details, code: 403,
  })
  t.equal((await s.request('GET', `${path}/${body.metadata.name}`)).status, 404, 'nothing stored')
}

async function created(t: Test, path: string, body: any): Promise<any> {
  const r = await s.request('POST', path, body)
  t.equal(r.status, 201, r.text)
  return r.json
}

t.test('a pod count: the controller fills the status, admission refuses the third pod, deletion frees the slot', async (t) => {
  const base = await namespace(t, 'rq-pods')
  const st = await createQuota(t, base, quota('pods-q', { hard: { pods: '2' } }))
  t.same(st, { hard: { pods: '2' }, used: { pods: '0' } })
  await created(t, `${base}/pods`, pod('p1'))
  // A dry run is checked but charges nothing.
  const dry = await s.request('POST', `${base}/pods?dryRun=All`, pod('dry'))
  t.equal(dry.status, 201, dry.text)
  t.same((await s.request('GET', `${base}/resourcequotas/pods-q`)).json.status.used, { pods: '1' })
  await created(t, `${base}/pods`, pod('p2'))
  t.same((await s.request('GET', `${base}/resourcequotas/pods-q`)).json.status, { hard: { pods: '2' }, used: { pods: '2' } }, 'admission charged both')
  await refused(t, `${base}/pods`, pod('p3'), 'pods', 'exceeded quota: pods-q, requested: pods=1, used: pods=2, limited: pods=2')
  const dryFull = await s.request('POST', `${base}/pods?dryRun=All`, pod('dry'))
  t.equal(dryFull.status, 403, dryFull.text)
  // kubectl prints the refusal.
  const yaml = ['apiVersion: v1', 'kind: Pod', 'metadata:', '  name: p4', '  namespace: rq-pods', 'spec:', '  containers:', '  - name: c', '    image: i', ''].join('\n')
  const k = await kubectl(['create', '-f', '-'], yaml)
  t.equal(k.code, 1)
  t.equal(k.stderr, 'Error from server (Forbidden): error when creating "STDIN": pods "p4" is forbidden: exceeded quota: pods-q, requested: pods=1, used: pods=2, limited: pods=2\n')
  const run = await kubectl(['run', 'p5', '-n', 'rq-pods', '--image=i', '--restart=Never'])
  t.equal(run.code, 1)
  t.equal(run.stderr, 'Error from server (Forbidden): pods "p5" is forbidden: exceeded quota: pods-q, requested: pods=1, used: pods=2, limited: pods=2\n')
  // kubectl describe shows used against hard.
  const d = await kubectl(['describe', 'quota', 'pods-q', '-n', 'rq-pods'])
  t.equal(d.code, 0, d.stderr)
  t.match(d.stdout, /^Name:\s+pods-q$/m)
  t.match(d.stdout, /^Namespace:\s+rq-pods$/m)
  t.match(d.stdout, /^Resource\s+Used\s+Hard$/m)
  t.match(d.stdout, /^pods\s+2\s+2$/m)
  // An update of a counted pod charges nothing more.
  const upd = await s.request('PATCH', `${base}/pods/p1`, { metadata: { labels: { a: 'b' } } }, MERGE)
  t.equal(upd.status, 200, upd.text)
  // Deleting a pod frees its slot once the controller has recounted.
  t.equal((await s.request('DELETE', `${base}/pods/p1`)).status, 200)
  t.same(await statusOf(base, 'pods-q', (x) => x.used.pods === '1'), { hard: { pods: '2' }, used: { pods: '1' } })
  await created(t, `${base}/pods`, pod('p3'))
  // A pod that finished counts no more.
  const fin = await s.request('PATCH', `${base}/pods/p2/status`, { status: { phase: 'Succeeded' } }, MERGE)
  t.equal(fin.status, 200, fin.text)
  await statusOf(base, 'pods-q', (x) => x.used.pods === '1')
  // Raising the hard limit: status.hard follows spec.hard.
  const up = await s.request('PATCH', `${base}/resourcequotas/pods-q`, { spec: { hard: { pods: '5', 'count/configmaps': '3' } } }, MERGE)
  t.equal(up.status, 200, up.text)
  t.same(await statusOf(base, 'pods-q', (x) => x.hard.pods === '5' && x.used['count/configmaps'] !== undefined),
    { hard: { 'count/configmaps': '3', pods: '5' }, used: { 'count/configmaps': '1', pods: '1' } })
  const d2 = await kubectl(['describe', 'quota', 'pods-q', '-n', 'rq-pods'])
  t.match(d2.stdout, /^count\/configmaps\s+1\s+3$/m)
  t.match(d2.stdout, /^pods\s+1\s+5$/m)
})

t.test('compute resources: what the pod must declare, sums, and the exceeded amounts', async (t) => {
  const base = await namespace(t, 'rq-compute')
  await createQuota(t, base, quota('compute', { hard: { 'requests.cpu': '1', 'limits.memory': '1Gi', 'requests.ephemeral-storage': '1Gi' } }))
  await refused(t, `${base}/pods`, pod('bare', { containers: [{ name: 'b', image: 'i' }, { name: 'a', image: 'i', resources: { requests: { cpu: '100m' } } }], initContainers: [{ name: 'i', image: 'i' }] }), 'pods',
    'failed quota: compute: must specify limits.memory for: a,b,i; requests.cpu for: b,i')
  await created(t, `${base}/pods`, podWith('w1', { requests: { cpu: '600m' }, limits: { memory: '512Mi' } }))
  t.same(await statusOf(base, 'compute', (x) => x.used['requests.cpu'] === '600m'),
    { hard: { 'limits.memory': '1Gi', 'requests.cpu': '1', 'requests.ephemeral-storage': '1Gi' }, used: { 'limits.memory': '512Mi', 'requests.cpu': '600m', 'requests.ephemeral-storage': '0' } })
  await refused(t, `${base}/pods`, podWith('w2', { requests: { cpu: '600m' }, limits: { memory: '512Mi' } }), 'pods',
    'exceeded quota: compute, requested: requests.cpu=600m, used: requests.cpu=600m, limited: requests.cpu=1')
  await refused(t, `${base}/pods`, podWith('w3', { requests: { cpu: '500m', 'ephemeral-storage': '2Gi' }, limits: { memory: '1Gi' } }), 'pods',
    'exceeded quota: compute, requested: limits.memory=1Gi,requests.cpu=500m,requests.ephemeral-storage=2Gi, used: limits.memory=512Mi,requests.cpu=600m,requests.ephemeral-storage=0, limited: limits.memory=1Gi,requests.cpu=1,requests.ephemeral-storage=1Gi')
  await created(t, `${base}/pods`, podWith('w4', { requests: { cpu: '400m' }, limits: { memory: '512Mi' } }))
  t.same((await s.request('GET', `${base}/resourcequotas/compute`)).json.status.used, { 'limits.memory': '1Gi', 'requests.cpu': '1', 'requests.ephemeral-storage': '0' })
})

t.test('scopes: BestEffort, NotBestEffort, Terminating, NotTerminating and a PriorityClass selector', async (t) => {
  const base = await namespace(t, 'rq-scopes')
  await createQuota(t, base, quota('best-effort', { hard: { pods: '1' }, scopes: ['BestEffort'] }))
  await createQuota(t, base, quota('not-best-effort', { hard: { pods: '1' }, scopes: ['NotBestEffort'] }))
  await created(t, `${base}/pods`, pod('be1'))
  await refused(t, `${base}/pods`, pod('be2'), 'pods', 'exceeded quota: best-effort, requested: pods=1, used: pods=1, limited: pods=1')
  await created(t, `${base}/pods`, podWith('bu1', { requests: { cpu: '10m' } }))
  await refused(t, `${base}/pods`, podWith('bu2', { requests: { cpu: '10m' } }), 'pods', 'exceeded quota: not-best-effort, requested: pods=1, used: pods=1, limited: pods=1')

  const term = await namespace(t, 'rq-terminating')
  await createQuota(t, term, quota('terminating', { hard: { pods: '1', 'limits.cpu': '1' }, scopes: ['Terminating'] }))
  await createQuota(t, term, quota('long-running', { hard: { pods: '1' }, scopes: ['NotTerminating'] }))
  await created(t, `${term}/pods`, podWith('job1', { limits: { cpu: '500m' } }, { activeDeadlineSeconds: 60 }))
  await refused(t, `${term}/pods`, podWith('job2', { limits: { cpu: '500m' } }, { activeDeadlineSeconds: 60 }), 'pods', 'exceeded quota: terminating, requested: pods=1, used: pods=1, limited: pods=1')
  await created(t, `${term}/pods`, podWith('svc1', { limits: { cpu: '500m' } }))
  await refused(t, `${term}/pods`, pod('svc2'), 'pods', 'exceeded quota: long-running, requested: pods=1, used: pods=1, limited: pods=1')
  // An update that moves a pod into a quota's scopes is charged in full there.
  const move = await s.request('PATCH', `${term}/pods/svc1`, { spec: { activeDeadlineSeconds: 30 } }, MERGE)
  t.equal(move.status, 403, move.text)
  t.equal(move.json.message, 'pods "svc1" is forbidden: exceeded quota: terminating, requested: pods=1, used: pods=1, limited: pods=1')

  const pc = await s.request('POST', '/apis/scheduling.orch.io/v1/priorityclasses', { apiVersion: 'scheduling.orch.io/v1', kind: 'PriorityClass', metadata: { name: 'rq-high' }, value: 1000 })
  t.equal(pc.status, 201, pc.text)
  const prio = await namespace(t, 'rq-priority')
  await createQuota(t, prio, quota('high', { hard: { pods: '1' }, scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['rq-high'] }] } }))
  await created(t, `${prio}/pods`, pod('h1', { priorityClassName: 'rq-high' }))
  await refused(t, `${prio}/pods`, pod('h2', { priorityClassName: 'rq-high' }), 'pods', 'exceeded quota: high, requested: pods=1, used: pods=1, limited: pods=1')
  await created(t, `${prio}/pods`, pod('plain'))
  t.same(await statusOf(prio, 'high', (x) => x.used.pods === '1'), { hard: { pods: '1' }, used: { pods: '1' } }, 'the controller counts only the pods in scope')
})

t.test('object counts, services, claims and quotas', async (t) => {
  const base = await namespace(t, 'rq-objects')
  await createQuota(t, base, quota('objects', {
    hard: {
      configmaps: '2', 'count/secrets': '1', services: '3', 'services.nodeports': '1', 'services.loadbalancers': '0',
      'count/deployments.apps': '1', persistentvolumeclaims: '1', 'requests.storage': '5Gi', 'gold.storageclass.storage.k8s.io/requests.storage': '1Gi',
      replicationcontrollers: '1',
    },
  }))
  await created(t, `${base}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm1' } })
  await refused(t, `${base}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm2' } }, 'configmaps',
    'exceeded quota: objects, requested: configmaps=1, used: configmaps=2, limited: configmaps=2')
  await created(t, `${base}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1' } })
  await refused(t, `${base}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's2' } }, 'secrets',
    'exceeded quota: objects, requested: count/secrets=1, used: count/secrets=1, limited: count/secrets=1')

  const svc = (name: string, type: string, ports: number) => ({
    apiVersion: 'v1', kind: 'Service', metadata: { name },
    spec: { type, selector: { app: 'a' }, ports: Array.from({ length: ports }, (_, i) => ({ name: `p${i}`, port: 80 + i })) },
  })
  await created(t, `${base}/services`, svc('plain', 'ClusterIP', 2))
  await refused(t, `${base}/services`, svc('np', 'NodePort', 2), 'services',
    'exceeded quota: objects, requested: services.nodeports=2, used: services.nodeports=0, limited: services.nodeports=1')
  await refused(t, `${base}/services`, svc('lb', 'LoadBalancer', 1), 'services',
    'exceeded quota: objects, requested: services.loadbalancers=1, used: services.loadbalancers=0, limited: services.loadbalancers=0')
  await created(t, `${base}/services`, svc('np1', 'NodePort', 1))
  // Service updates are charged what they add: a type change takes node ports.
  const retype = await s.request('PATCH', `${base}/services/plain`, { spec: { type: 'NodePort' } }, MERGE)
  t.equal(retype.status, 403, retype.text)
  t.equal(retype.json.message, 'services "plain" is forbidden: exceeded quota: objects, requested: services.nodeports=2, used: services.nodeports=1, limited: services.nodeports=1')
  // Without node port allocation, a load balancer takes only the node ports given explicitly (and none here fits).
  const lbNoPorts = { ...svc('lb0', 'LoadBalancer', 2), spec: { ...svc('lb0', 'LoadBalancer', 2).spec, allocateLoadBalancerNodePorts: false } }
  await refused(t, `${base}/services`, lbNoPorts, 'services',
    'exceeded quota: objects, requested: services.loadbalancers=1, used: services.loadbalancers=0, limited: services.loadbalancers=0')
  t.same((await s.request('GET', `${base}/resourcequotas/objects`)).json.status.used,
    {
      configmaps: '2', 'count/deployments.apps': '0', 'count/secrets': '1', 'gold.storageclass.storage.k8s.io/requests.storage': '0',
      persistentvolumeclaims: '0', 'replicationcontrollers': '0', 'requests.storage': '0', services: '2', 'services.loadbalancers': '0', 'services.nodeports': '1',
    })
  const rc = (name: string) => ({
    apiVersion: 'v1', kind: 'ReplicationController', metadata: { name },
    spec: { replicas: 0, selector: { app: name }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
  })
  await created(t, `${base}/replicationcontrollers`, rc('rc1'))
  await refused(t, `${base}/replicationcontrollers`, rc('rc2'), 'replicationcontrollers',
    'exceeded quota: objects, requested: replicationcontrollers=1, used: replicationcontrollers=1, limited: replicationcontrollers=1')

  const deploy = (name: string) => ({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
    spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
  })
  await created(t, `/apis/apps/v1/namespaces/rq-objects/deployments`, deploy('d1'))
  await refused(t, `/apis/apps/v1/namespaces/rq-objects/deployments`, deploy('d2'), 'deployments.apps',
    'exceeded quota: objects, requested: count/deployments.apps=1, used: count/deployments.apps=1, limited: count/deployments.apps=1')

  const claim = (name: string, storage: string, storageClassName?: string) => ({
    apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } }, ...(storageClassName ? { storageClassName } : {}) },
  })
  await refused(t, `${base}/persistentvolumeclaims`, claim('gold', '2Gi', 'gold'), 'persistentvolumeclaims',
    'exceeded quota: objects, requested: gold.storageclass.storage.k8s.io/requests.storage=2Gi, used: gold.storageclass.storage.k8s.io/requests.storage=0, limited: gold.storageclass.storage.k8s.io/requests.storage=1Gi')
  await created(t, `${base}/persistentvolumeclaims`, claim('c1', '3Gi'))
  await refused(t, `${base}/persistentvolumeclaims`, claim('c2', '3Gi'), 'persistentvolumeclaims',
    'exceeded quota: objects, requested: persistentvolumeclaims=1,requests.storage=3Gi, used: persistentvolumeclaims=1,requests.storage=3Gi, limited: persistentvolumeclaims=1,requests.storage=5Gi')

  // A quota on quotas counts itself.
  const qs = await namespace(t, 'rq-quotas')
  t.same(await createQuota(t, qs, quota('one', { hard: { resourcequotas: '1' } })), { hard: { resourcequotas: '1' }, used: { resourcequotas: '1' } })
  await refused(t, `${qs}/resourcequotas`, quota('two', { hard: { pods: '1' } }), 'resourcequotas',
    'exceeded quota: one, requested: resourcequotas=1, used: resourcequotas=1, limited: resourcequotas=1')

  // Deleting counted objects frees them.
  t.equal((await s.request('DELETE', `${base}/configmaps/cm1`)).status, 200)
  t.equal((await s.request('DELETE', `${base}/persistentvolumeclaims/c1`)).status, 200)
  await statusOf(base, 'objects', (x) => x.used.configmaps === '1' && x.used.persistentvolumeclaims === '0' && x.used['requests.storage'] === '0')
  await created(t, `${base}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm2' } })
})

t.test('20 concurrent creates against pods: 5 admit exactly 5', async (t) => {
  const base = await namespace(t, 'rq-race')
  await createQuota(t, base, quota('five', { hard: { pods: '5', 'count/configmaps': '6' } }))
  const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => s.request('POST', `${base}/pods`, pod(`r${i}`))))
  const codes = replies.map((r) => r.status)
  t.equal(codes.filter((c) => c === 201).length, 5, `created: ${codes.join(',')}`)
  t.equal(codes.filter((c) => c === 403).length, 15)
  for (const r of replies.filter((x) => x.status === 403)) t.match(r.json.message, /is forbidden: exceeded quota: five, requested: pods=1, used: pods=5, limited: pods=5$/)
  t.equal((await s.request('GET', `${base}/pods`)).json.items.length, 5)
  t.same((await s.request('GET', `${base}/resourcequotas/five`)).json.status.used, { 'count/configmaps': '1', pods: '5' })
  // An object count the same way.
  const many = await Promise.all(Array.from({ length: 10 }, (_, i) => s.request('POST', `${base}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm${i}` } })))
  t.equal(many.filter((r) => r.status === 201).length, 5)
  t.equal((await s.request('GET', `${base}/configmaps`)).json.items.length, 6, 'five and the root CA ConfigMap')
})

t.test('several front-ends race for one quota: the conditional status writes still admit exactly the limit', async (t) => {
  // Each front-end batches its own writes; across front-ends the quota's resourceVersion decides, and the losers retry.
  const s2 = await startServer({ args: ['--frontends', '3'] })
  t.teardown(() => s2.stop())
  const ns = await s2.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'race' } })
  t.equal(ns.status, 201, ns.text)
  const base = '/api/v1/namespaces/race'
  t.equal((await s2.request('POST', `${base}/resourcequotas`, quota('ten', { hard: { pods: '10' } }))).status, 201)
  for (let i = 0; ; i++) {
    const g = await s2.request('GET', `${base}/resourcequotas/ten`)
    if (g.json.status?.used?.pods === '0') break
    if (i > 300) throw new Error(`no status: ${g.text}`)
    await new Promise((r) => setTimeout(r, 50))
  }
  const replies = await Promise.all(Array.from({ length: 60 }, (_, i) => s2.request('POST', `${base}/pods`, pod(`r${i}`))))
  const codes = replies.map((r) => r.status)
  t.equal(codes.filter((c) => c === 201).length, 10, `created: ${codes.join(',')}`)
  t.equal(codes.filter((c) => c === 403).length, 50)
  t.equal((await s2.request('GET', `${base}/pods`)).json.items.length, 10)
  t.same((await s2.request('GET', `${base}/resourcequotas/ten`)).json.status.used, { pods: '10' })
})

t.test('a write that a ValidatingAdmissionPolicy refuses charges no quota (ResourceQuota runs last)', async (t) => {
  const base = await namespace(t, 'rq-policy')
  await createQuota(t, base, quota('q', { hard: { secrets: '2' } }))
  const G = 'admissionregistration.orch.io'
  const p = await s.request('POST', `/apis/${G}/v1/validatingadmissionpolicies`, {
    apiVersion: `${G}/v1`, kind: 'ValidatingAdmissionPolicy', metadata: { name: 'no-denied-secrets' },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['secrets'] }] },
      validations: [{ expression: "!has(object.metadata.labels) || !('deny' in object.metadata.labels)", message: 'denied' }],
    },
  })
  t.equal(p.status, 201, p.text)
  const b = await s.request('POST', `/apis/${G}/v1/validatingadmissionpolicybindings`, {
    apiVersion: `${G}/v1`, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'no-denied-secrets' },
    spec: { policyName: 'no-denied-secrets', validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: { 'orch.io/metadata.name': 'rq-policy' } } } },
  })
  t.equal(b.status, 201, b.text)
  for (let i = 0; i < 3; i++) {
    const r = await s.request('POST', `${base}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: `d${i}`, labels: { deny: 'yes' } } })
    t.equal(r.status, 422, r.text)
  }
  for (let i = 0; i < 2; i++) {
    const r = await s.request('POST', `${base}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: `ok${i}` } })
    t.equal(r.status, 201, r.text)
  }
  const g = await s.request('GET', `${base}/resourcequotas/q`)
  t.equal(g.json.status.used.secrets, '2')
  await s.request('DELETE', `/apis/${G}/v1/validatingadmissionpolicybindings/no-denied-secrets`)
  await s.request('DELETE', `/apis/${G}/v1/validatingadmissionpolicies/no-denied-secrets`)
})
