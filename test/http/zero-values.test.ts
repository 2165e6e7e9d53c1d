// Black-box: objects come back with the zero values upstream's JSON always carries (its Go types hold value structs,
// which omitempty never drops, and counters without omitempty): `"status":{}` right after a create, a PDB's four
// counters, `"spec":{}` when none was posted, a Service's `status.loadBalancer`, a Node's nodeInfo, and so on. The same
// in the create answer, a GET, a list and a watch event; a status write that leaves a counter out stores its zero.
import t, { type Test } from 'tap'
import http from 'node:http'
import { startServer, type TestServer } from '../helpers/server.js'

type Obj = Record<string, any>

let s: TestServer
// A certificate request for CN=crud-test (the one test/http/create-rules.test.ts posts).
const CSR_PEM_B64 = 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIUE1IWUNBUUF3RkRFU01CQUdBMVVFQXd3SlkzSjFaQzEwWlhOME1Ga3dFd1lIS29aSXpqMENBUVlJS29aSQp6ajBEQVFjRFFnQUVtaGhBTUt3b0dTUnVvK3h4WVNtN1ZONWVBdEoxcTQrYnh2cXlMeURrKzFqQWtyVmh3ekpMCkl2MlF0Q2drMVZKcUdDM1htY21zN0tnMWVxVm5yYVhKUHFBQU1Bb0dDQ3FHU000OUJBTUNBMGtBTUVZQ0lRRG4KR2pta3ErS1FjdXVRZk9wNjBxUlcwTk1vNnRYMjNDNkt1Ti9sTWVSaEl3SWhBT1lSSlp1RVBUeXNKa2VtaTVyVwp6b1J5SEd2YzJkelBQTGxKOFlWZ3preE0KLS0tLS1FTkQgQ0VSVElGSUNBVEUgUkVRVUVTVC0tLS0tCg=='

// No disruption controller: the PodDisruptionBudget cases write status themselves.
t.before(async () => { s = await startServer({ args: ['--controllers=*,-disruption'] }) })
t.teardown(async () => { await s?.stop() })

const NS = '/namespaces/default'
const selector = { matchLabels: { app: 'a' } }
const template = { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'i' }] } }

interface Case {
  name: string
  /** the collection path */
  path: string
  body: Obj
  /** dotted path → the exact value expected there */
  expect: Record<string, unknown>
  /** paths a controller may write after the create: checked in the create answer only */
  answerOnly?: string[]
}

const cases: Case[] = [
  {
    name: 'PodDisruptionBudget without spec', path: `/apis/policy/v1${NS}/poddisruptionbudgets`,
    body: { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'pdb' } },
    expect: { spec: {}, status: { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 } },
  },
  {
    name: 'Job', path: `/apis/batch/v1${NS}/jobs`,
    body: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'job' }, spec: { template: { spec: { containers: [{ name: 'c', image: 'i' }], restartPolicy: 'Never' } } } },
    expect: { status: {} },
  },
  {
    name: 'CronJob', path: `/apis/batch/v1${NS}/cronjobs`,
    body: { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'cj' }, spec: { schedule: '* * * * *', jobTemplate: { spec: { template: { spec: { containers: [{ name: 'c', image: 'i' }], restartPolicy: 'Never' } } } } } },
    expect: { status: {}, 'spec.jobTemplate.metadata': {}, 'spec.jobTemplate.spec.template.metadata': {} },
  },
  {
    name: 'Deployment', path: `/apis/apps/v1${NS}/deployments`,
    body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'dep' }, spec: { selector, template } },
    expect: { status: {}, 'spec.template.spec.containers.0.resources': {} },
  },
  {
    name: 'ReplicaSet', path: `/apis/apps/v1${NS}/replicasets`,
    body: { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'rs' }, spec: { selector, template } },
    expect: { status: { replicas: 0 } },
  },
  {
    name: 'StatefulSet', path: `/apis/apps/v1${NS}/statefulsets`,
    body: { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'sts' }, spec: { selector, template } },
    expect: { status: { replicas: 0, availableReplicas: 0 }, 'spec.serviceName': '' },
  },
  {
    name: 'DaemonSet', path: `/apis/apps/v1${NS}/daemonsets`,
    body: { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'ds' }, spec: { selector, template } },
    expect: { status: { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 } },
  },
  {
    name: 'ReplicationController', path: `/api/v1${NS}/replicationcontrollers`,
    body: { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'rc' }, spec: { selector: { app: 'a' }, template } },
    expect: { status: { replicas: 0 } },
  },
  {
    name: 'ControllerRevision without revision', path: `/apis/apps/v1${NS}/controllerrevisions`,
    body: { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'cr' }, data: {} },
    expect: { revision: 0 },
  },
  {
    name: 'HorizontalPodAutoscaler', path: `/apis/autoscaling/v2${NS}/horizontalpodautoscalers`,
    body: { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'hpa' }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'dep' }, maxReplicas: 3 } },
    expect: { status: { desiredReplicas: 0 } },
  },
  {
    name: 'Pod', path: `/api/v1${NS}/pods`,
    body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'pod' }, spec: { containers: [{ name: 'c', image: 'i' }], initContainers: [{ name: 'i', image: 'i' }] } },
    expect: { 'spec.containers.0.resources': {}, 'spec.initContainers.0.resources': {} },
  },
  {
    name: 'Service', path: `/api/v1${NS}/services`,
    body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc' }, spec: { ports: [{ port: 80 }] } },
    expect: { status: { loadBalancer: {} } },
  },
  {
    name: 'ResourceQuota without spec', path: `/api/v1${NS}/resourcequotas`,
    body: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'rq' } },
    expect: { spec: {}, status: {} }, answerOnly: ['status'],
  },
  {
    name: 'Node', path: '/api/v1/nodes',
    body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-zero' } },
    expect: {
      // The spec the body left out is there, with the taint TaintNodesByCondition (on by default) adds at creation.
      spec: { taints: [{ key: 'node.orch.io/not-ready', effect: 'NoSchedule' }] },
      status: {
        daemonEndpoints: { kubeletEndpoint: { Port: 0 } },
        nodeInfo: { machineID: '', systemUUID: '', bootID: '', kernelVersion: '', osImage: '', containerRuntimeVersion: '', kubeletVersion: '', kubeProxyVersion: '', operatingSystem: '', architecture: '' },
      },
    },
  },
  {
    name: 'core Event', path: `/api/v1${NS}/events`,
    body: { apiVersion: 'v1', kind: 'Event', metadata: { name: 'ev' }, involvedObject: { kind: 'Pod', name: 'pod', namespace: 'default' }, reason: 'R', message: 'm' },
    expect: { source: {}, reportingComponent: '', reportingInstance: '' },
  },
  {
    name: 'Ingress', path: `/apis/networking.orch.io/v1${NS}/ingresses`,
    body: { apiVersion: 'networking.orch.io/v1', kind: 'Ingress', metadata: { name: 'ing' }, spec: { defaultBackend: { service: { name: 'svc', port: { number: 80 } } } } },
    expect: { status: { loadBalancer: {} } },
  },
  {
    name: 'Lease without spec', path: `/apis/coordination.orch.io/v1${NS}/leases`,
    body: { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'lease' } },
    expect: { spec: {} },
  },
  {
    name: 'PriorityClass without value', path: '/apis/scheduling.orch.io/v1/priorityclasses',
    body: { apiVersion: 'scheduling.orch.io/v1', kind: 'PriorityClass', metadata: { name: 'pc-zero' } },
    expect: { value: 0 },
  },
  {
    name: 'VolumeAttachment', path: '/apis/storage.orch.io/v1/volumeattachments',
    body: { apiVersion: 'storage.orch.io/v1', kind: 'VolumeAttachment', metadata: { name: 'va' }, spec: { attacher: 'csi.example.com', nodeName: 'n', source: { persistentVolumeName: 'pv' } } },
    expect: { status: { attached: false } },
  },
  {
    name: 'CertificateSigningRequest', path: '/apis/certificates.orch.io/v1/certificatesigningrequests',
    body: {
      apiVersion: 'certificates.orch.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'csr' },
      spec: { signerName: 'example.com/s', usages: ['digital signature'], request: CSR_PEM_B64 },
    },
    expect: { status: {} },
  },
  {
    name: 'FlowSchema', path: '/apis/flowcontrol.apiserver.orch.io/v1/flowschemas',
    body: { apiVersion: 'flowcontrol.apiserver.orch.io/v1', kind: 'FlowSchema', metadata: { name: 'fs-zero' }, spec: { priorityLevelConfiguration: { name: 'global-default' } } },
    expect: { status: {} }, answerOnly: ['status'],
  },
  {
    name: 'PriorityLevelConfiguration', path: '/apis/flowcontrol.apiserver.orch.io/v1/prioritylevelconfigurations',
    body: { apiVersion: 'flowcontrol.apiserver.orch.io/v1', kind: 'PriorityLevelConfiguration', metadata: { name: 'plc-zero' }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Reject' } } } },
    expect: { status: {} }, answerOnly: ['status'],
  },
  {
    name: 'ValidatingAdmissionPolicy', path: '/apis/admissionregistration.orch.io/v1/validatingadmissionpolicies',
    body: {
      apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name: 'vap-zero' },
      spec: { matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }] }, validations: [{ expression: 'true' }] },
    },
    expect: { status: {} }, answerOnly: ['status'],
  },
]

function at(o: Obj, path: string): unknown {
  let v: any = o
  for (const k of path.split('.')) v = v?.[k]
  return v
}

function check(t: Test, c: Case, o: Obj, where: string, answer: boolean): void {
  for (const [path, want] of Object.entries(c.expect)) {
    if (!answer && c.answerOnly?.includes(path)) { t.type(at(o, path), 'object', `${c.name}: ${path} (${where})`); continue }
    t.same(at(o, path), want, `${c.name}: ${path} (${where})`)
  }
}

/** The events of a watch from `rv` that ends after `timeoutSeconds`. */
function watchEvents(path: string, rv: string, timeoutSeconds = 1): Promise<Array<{ type: string; object: Obj }>> {
  return new Promise((resolve, reject) => {
    const url = new URL(`${s.url}${path}?watch=1&resourceVersion=${rv}&timeoutSeconds=${timeoutSeconds}`)
    const req = http.request(url, { headers: { authorization: `Bearer ${s.adminToken}` } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => { text += d })
      res.on('end', () => resolve(text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l))))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

t.test('a create answers the zero values; a GET, a list and a watch event carry them too', async (t) => {
  const listRvs: string[] = []
  for (const c of cases) {
    const l = await s.request('GET', c.path)
    t.equal(l.status, 200, `${c.name}: list ${l.text}`)
    listRvs.push(l.json.metadata.resourceVersion)
    const r = await s.request('POST', c.path, c.body)
    t.equal(r.status, 201, `${c.name}: ${r.text}`)
    if (r.status !== 201) continue
    check(t, c, r.json, 'create', true)
    const g = await s.request('GET', `${c.path}/${c.body.metadata.name}`)
    check(t, c, g.json, 'get', false)
    const all = await s.request('GET', c.path)
    const item = all.json.items.find((i: Obj) => i.metadata.name === c.body.metadata.name)
    check(t, c, item, 'list', false)
  }
  const watched = await Promise.all(cases.map((c, i) => watchEvents(c.path, listRvs[i])))
  cases.forEach((c, i) => {
    const ev = watched[i].find((e) => e.type === 'ADDED' && e.object.metadata.name === c.body.metadata.name)
    t.ok(ev, `${c.name}: an ADDED event`)
    if (ev) check(t, c, ev.object, 'watch', true)
  })
})

t.test('a status write that leaves counters out stores their zeros; a main-resource write keeps status', async (t) => {
  const path = `/apis/policy/v1${NS}/poddisruptionbudgets`
  let r = await s.request('POST', path, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'pdb2' }, spec: { minAvailable: 1 } })
  t.equal(r.status, 201, r.text)
  r = await s.request('PATCH', `${path}/pdb2/status`, { status: { currentHealthy: 2, expectedPods: 3 } }, { 'content-type': 'application/merge-patch+json' })
  t.equal(r.status, 200, r.text)
  t.same(r.json.status, { currentHealthy: 2, expectedPods: 3, disruptionsAllowed: 0, desiredHealthy: 0 })
  r = await s.request('PATCH', `${path}/pdb2/status`, [{ op: 'remove', path: '/status/currentHealthy' }], { 'content-type': 'application/json-patch+json' })
  t.equal(r.status, 200, r.text)
  t.equal(r.json.status.currentHealthy, 0, 'a removed counter is zero again')
  r = await s.request('PUT', `${path}/pdb2/status`, { ...r.json, status: null })
  t.equal(r.status, 200, r.text)
  t.same(r.json.status, { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 }, 'a null status is the zero status')
  r = await s.request('PUT', `${path}/pdb2`, { ...r.json, spec: { minAvailable: 2 }, status: undefined })
  t.equal(r.status, 200, r.text)
  t.same(r.json.status, { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 }, 'the main resource keeps the stored status')
  t.equal(r.json.metadata.generation, 2)

  // A job's main-resource update without status still answers `status: {}`.
  const jobs = `/apis/batch/v1${NS}/jobs`
  const g = await s.request('GET', `${jobs}/job`)
  const { status: _omit, ...rest } = g.json
  rest.metadata.labels = { ...rest.metadata.labels, x: 'y' }
  r = await s.request('PUT', `${jobs}/job`, rest)
  t.equal(r.status, 200, r.text)
  t.same(r.json.status, {})
})

t.test('the zero status belongs to no manager; server-side apply creates with it', async (t) => {
  const path = `/apis/policy/v1${NS}/poddisruptionbudgets`
  const r = await s.request('PATCH', `${path}/pdb3?fieldManager=me`, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'pdb3' }, spec: { maxUnavailable: 1 } }, { 'content-type': 'application/apply-patch+yaml' })
  t.equal(r.status, 201, r.text)
  t.same(r.json.status, { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 })
  t.same(r.json.metadata.managedFields.map((m: Obj) => Object.keys(m.fieldsV1)), [['f:spec']], 'only spec is owned')
  const c = await s.request('GET', `${path}/pdb2`)
  for (const m of c.json.metadata.managedFields) t.notOk('f:status' in m.fieldsV1 && m.subresource === undefined, 'no main-resource manager owns status')
})
