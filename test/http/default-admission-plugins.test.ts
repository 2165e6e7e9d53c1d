// Black-box: the admission plugins upstream runs by default (DefaultTolerationSeconds, TaintNodesByCondition,
// DefaultStorageClass, StorageObjectInUseProtection, PersistentVolumeClaimResize, RuntimeClass, DefaultIngressClass):
// what each does, what it refuses, and that --disable-admission-plugins turns it off.
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'

type Obj = Record<string, any>
const PODS = '/api/v1/namespaces/default/pods'
const PVCS = '/api/v1/namespaces/default/persistentvolumeclaims'
const PVS = '/api/v1/persistentvolumes'
const SCS = '/apis/storage.orch.io/v1/storageclasses'
const ICS = '/apis/networking.orch.io/v1/ingressclasses'
const INGS = '/apis/networking.orch.io/v1/namespaces/default/ingresses'
const RCS = '/apis/node.orch.io/v1/runtimeclasses'
const MERGE = { 'content-type': 'application/merge-patch+json' }

const pod = (name: string, spec: Obj = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'i' }], ...spec } })
const node = (name: string, spec: Obj = {}) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name }, spec })
const pvc = (name: string, spec: Obj = {}, meta: Obj = {}) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, ...meta }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec } })
const pv = (name: string) => ({ apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name }, spec: { capacity: { storage: '10Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/data' } } })
const sc = (name: string, isDefault: boolean, extra: Obj = {}) => ({
  apiVersion: 'storage.orch.io/v1', kind: 'StorageClass', provisioner: 'example.com/p', ...extra,
  metadata: { name, ...(isDefault ? { annotations: { 'storageclass.orch.io/is-default-class': 'true' } } : {}) },
})
const ic = (name: string, annotations?: Obj) => ({ apiVersion: 'networking.orch.io/v1', kind: 'IngressClass', metadata: { name, ...(annotations ? { annotations } : {}) }, spec: { controller: 'example.com/c' } })
const ingress = (name: string, spec: Obj = {}, meta: Obj = {}) => ({
  apiVersion: 'networking.orch.io/v1', kind: 'Ingress', metadata: { name, ...meta },
  spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } }, ...spec },
})

const NOT_READY = { key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }
const UNREACHABLE = { key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }

async function sleep(ms: number): Promise<void> { await new Promise((r) => setTimeout(r, ms)) }

async function gone(s: TestServer, path: string): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if ((await s.request('GET', path)).status === 404) return true
    await sleep(50)
  }
  return false
}

t.test('DefaultTolerationSeconds', async (t) => {
  const s = await startServer({ args: ['--default-unreachable-toleration-seconds', '60'] })
  t.teardown(() => s.stop())
  let r = await s.request('POST', PODS, pod('plain'))
  t.equal(r.status, 201, r.text)
  t.same(r.json.spec.tolerations, [NOT_READY, { ...UNREACHABLE, tolerationSeconds: 60 }], 'both added, the flag sets the seconds')
  // A pod that tolerates one of them already gets only the other; its own toleration stays as it is.
  const own = { key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 }
  r = await s.request('POST', PODS, pod('own', { tolerations: [own] }))
  t.equal(r.status, 201, r.text)
  t.same(r.json.spec.tolerations, [own, { ...UNREACHABLE, tolerationSeconds: 60 }])
  // An empty effect tolerates NoExecute too; an empty key (Exists) tolerates every taint.
  r = await s.request('POST', PODS, pod('any-effect', { tolerations: [{ key: 'node.orch.io/unreachable', operator: 'Exists' }] }))
  t.same(r.json.spec.tolerations, [{ key: 'node.orch.io/unreachable', operator: 'Exists' }, NOT_READY])
  r = await s.request('POST', PODS, pod('all', { tolerations: [{ operator: 'Exists' }] }))
  t.same(r.json.spec.tolerations, [{ operator: 'Exists' }])
  // Another effect does not count.
  r = await s.request('POST', PODS, pod('no-schedule', { tolerations: [{ key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoSchedule' }] }))
  t.same(r.json.spec.tolerations, [{ key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoSchedule' }, NOT_READY, { ...UNREACHABLE, tolerationSeconds: 60 }])
  // Dry run: the answer has them, nothing is stored.
  r = await s.request('POST', `${PODS}?dryRun=All`, pod('dry'))
  t.equal(r.status, 201, r.text)
  t.same(r.json.spec.tolerations, [NOT_READY, { ...UNREACHABLE, tolerationSeconds: 60 }])
  t.equal((await s.request('GET', `${PODS}/dry`)).status, 404)
  // An update that leaves them out gets them back (upstream runs the plugin on updates too).
  r = await s.request('GET', `${PODS}/plain`)
  const p = r.json
  p.spec.tolerations = []
  p.metadata.labels = { a: 'b' }
  r = await s.request('PUT', `${PODS}/plain`, p)
  t.equal(r.status, 200, r.text)
  t.same(r.json.spec.tolerations, [NOT_READY, { ...UNREACHABLE, tolerationSeconds: 60 }])
})

t.test('TaintNodesByCondition', async (t) => {
  const s = await startServer()
  t.teardown(() => s.stop())
  let r = await s.request('POST', '/api/v1/nodes', node('n1'))
  t.equal(r.status, 201, r.text)
  t.same(r.json.spec.taints, [{ key: 'node.orch.io/not-ready', effect: 'NoSchedule' }])
  // Its own taints are kept; one of the same key and effect is not added twice.
  r = await s.request('POST', '/api/v1/nodes', node('n2', { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] }))
  t.same(r.json.spec.taints, [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }, { key: 'node.orch.io/not-ready', effect: 'NoSchedule' }])
  r = await s.request('POST', '/api/v1/nodes', node('n3', { taints: [{ key: 'node.orch.io/not-ready', value: 'x', effect: 'NoSchedule' }] }))
  t.same(r.json.spec.taints, [{ key: 'node.orch.io/not-ready', value: 'x', effect: 'NoSchedule' }])
  // Only at creation: the controller that takes it off may.
  r = await s.request('PATCH', '/api/v1/nodes/n1', { spec: { taints: null } }, MERGE)
  t.equal(r.status, 200, r.text)
  t.notOk(r.json.spec.taints, 'an update may remove it')
})

t.test('DefaultStorageClass, StorageObjectInUseProtection and its controllers', async (t) => {
  const s = await startServer()
  t.teardown(() => s.stop())
  let r = await s.request('POST', PVCS, pvc('before'))
  t.equal(r.status, 201, r.text)
  t.notOk(r.json.spec.storageClassName, 'no default class yet')
  t.same(r.json.metadata.finalizers, ['orch.io/pvc-protection'])
  for (const c of [sc('a-old', true), sc('plain', false)]) t.equal((await s.request('POST', SCS, c)).status, 201)
  r = await s.request('POST', PVCS, pvc('one'))
  t.equal(r.json.spec.storageClassName, 'a-old')
  // Two defaults: the newest wins (a second later).
  await sleep(1100)
  t.equal((await s.request('POST', SCS, sc('z-new', true))).status, 201)
  r = await s.request('POST', PVCS, pvc('two'))
  t.equal(r.json.spec.storageClassName, 'z-new')
  // Created in the same second: the first by name.
  t.equal((await s.request('POST', SCS, sc('b-same', true))).status, 201)
  t.equal((await s.request('POST', SCS, sc('c-same', true))).status, 201)
  r = await s.request('POST', PVCS, pvc('three'))
  t.ok(['b-same', 'z-new'].includes(r.json.spec.storageClassName), r.json.spec.storageClassName)
  // A claim that names a class, or "" (no class), or has the beta annotation keeps it.
  r = await s.request('POST', PVCS, pvc('named', { storageClassName: 'plain' }))
  t.equal(r.json.spec.storageClassName, 'plain')
  r = await s.request('POST', PVCS, pvc('none', { storageClassName: '' }))
  t.equal(r.json.spec.storageClassName, '')
  r = await s.request('POST', PVCS, pvc('beta', {}, { annotations: { 'volume.beta.orch.io/storage-class': 'plain' } }))
  t.notOk(r.json.spec.storageClassName)
  // Dry run: defaulted and protected in the answer only.
  r = await s.request('POST', `${PVCS}?dryRun=All`, pvc('dry'))
  t.equal(r.status, 201, r.text)
  t.ok(r.json.spec.storageClassName)
  t.same(r.json.metadata.finalizers, ['orch.io/pvc-protection'])
  t.equal((await s.request('GET', `${PVCS}/dry`)).status, 404)
  // A finalizer of its own is kept, the protection one added once.
  r = await s.request('POST', PVCS, pvc('fins', {}, { finalizers: ['example.com/x', 'orch.io/pvc-protection'] }))
  t.same(r.json.metadata.finalizers, ['example.com/x', 'orch.io/pvc-protection'])
  r = await s.request('POST', PVS, pv('vol'))
  t.equal(r.status, 201, r.text)
  t.same(r.json.metadata.finalizers, ['orch.io/pv-protection'])

  // The PVC protection controller: a claim in use by a scheduled pod stays until the pod is gone; one a pod that is not
  // scheduled names is not in use (as upstream's controller: no kubelet started it).
  r = await s.request('POST', PODS, pod('user', { nodeName: 'node-1', volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'one' } }] }))
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', PODS, pod('unscheduled', { volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'two' } }] }))
  t.equal(r.status, 201, r.text)
  r = await s.request('DELETE', `${PVCS}/one`)
  t.equal(r.status, 200, r.text)
  t.ok(r.json.metadata.deletionTimestamp)
  r = await s.request('DELETE', `${PVCS}/two`)
  t.ok(await gone(s, `${PVCS}/two`), 'a claim no scheduled pod uses goes at once')
  await sleep(300)
  r = await s.request('GET', `${PVCS}/one`)
  t.equal(r.status, 200, 'still used')
  t.equal((await s.request('DELETE', `${PODS}/user?gracePeriodSeconds=0`)).status, 200)
  t.ok(await gone(s, `${PVCS}/one`), 'gone once its pod is')
  // The PV protection controller: a bound volume stays until it is not bound.
  r = await s.request('PATCH', `${PVS}/vol/status`, { status: { phase: 'Bound' } }, MERGE)
  t.equal(r.status, 200, r.text)
  t.equal((await s.request('DELETE', `${PVS}/vol`)).status, 200)
  await sleep(300)
  t.equal((await s.request('GET', `${PVS}/vol`)).status, 200, 'bound: kept')
  r = await s.request('PATCH', `${PVS}/vol/status`, { status: { phase: 'Released' } }, MERGE)
  t.equal(r.status, 200, r.text)
  t.ok(await gone(s, `${PVS}/vol`), 'released: removed')
})

t.test('PersistentVolumeClaimResize', async (t) => {
  const s = await startServer()
  t.teardown(() => s.stop())
  t.equal((await s.request('POST', SCS, sc('fixed', false))).status, 201)
  t.equal((await s.request('POST', SCS, sc('grows', false, { allowVolumeExpansion: true }))).status, 201)
  for (const [name, cls] of [['fixed-claim', 'fixed'], ['grows-claim', 'grows'], ['no-class', '']]) {
    let r = await s.request('POST', PVCS, pvc(name, { storageClassName: cls }))
    t.equal(r.status, 201, r.text)
    r = await s.request('PATCH', `${PVCS}/${name}/status`, { status: { phase: 'Bound', capacity: { storage: '1Gi' } } }, MERGE)
    t.equal(r.status, 200, r.text)
  }
  const grow = (name: string, q = '') => s.request('PATCH', `${PVCS}/${name}${q}`, { spec: { resources: { requests: { storage: '2Gi' } } } }, MERGE)
  const msg = 'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize'
  for (const name of ['fixed-claim', 'no-class']) {
    const r = await grow(name)
    t.equal(r.status, 403, r.text)
    t.equal(r.json.message, `persistentvolumeclaims "${name}" is forbidden: ${msg}`)
    t.equal(r.json.reason, 'Forbidden')
  }
  let r = await grow('fixed-claim', '?dryRun=All')
  t.equal(r.status, 403, 'dry run is refused alike')
  r = await grow('grows-claim')
  t.equal(r.status, 200, r.text)
  t.equal(r.json.spec.resources.requests.storage, '2Gi')
})

t.test('RuntimeClass', async (t) => {
  const s = await startServer()
  t.teardown(() => s.stop())
  let r = await s.request('POST', RCS, {
    apiVersion: 'node.orch.io/v1', kind: 'RuntimeClass', metadata: { name: 'kata' }, handler: 'kata',
    overhead: { podFixed: { cpu: '250m', memory: '120Mi' } },
    scheduling: { nodeSelector: { sandbox: 'yes' }, tolerations: [{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }] },
  })
  t.equal(r.status, 201, r.text)
  t.equal((await s.request('POST', RCS, { apiVersion: 'node.orch.io/v1', kind: 'RuntimeClass', metadata: { name: 'plain' }, handler: 'runc' })).status, 201)
  r = await s.request('POST', PODS, pod('sandboxed', { runtimeClassName: 'kata', nodeSelector: { zone: 'a' } }))
  t.equal(r.status, 201, r.text)
  t.same(r.json.spec.overhead, { cpu: '250m', memory: '120Mi' })
  t.same(r.json.spec.nodeSelector, { zone: 'a', sandbox: 'yes' })
  t.same(r.json.spec.tolerations, [NOT_READY, UNREACHABLE, { key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }])
  // The same overhead written by the pod is fine; another is refused.
  r = await s.request('POST', PODS, pod('same-overhead', { runtimeClassName: 'kata', overhead: { cpu: '0.25', memory: '120Mi' } }))
  t.equal(r.status, 201, r.text)
  const refusals: Array<[Obj, string]> = [
    [pod('missing', { runtimeClassName: 'nope' }), 'pods "missing" is forbidden: pod rejected: RuntimeClass "nope" not found'],
    [pod('other-overhead', { runtimeClassName: 'kata', overhead: { cpu: '1' } }), 'pods "other-overhead" is forbidden: pod rejected: Pod\'s Overhead doesn\'t match RuntimeClass\'s defined Overhead'],
    [pod('conflict', { runtimeClassName: 'kata', nodeSelector: { sandbox: 'no' } }), 'pods "conflict" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = yes; pod.spec.nodeSelector[sandbox] = no'],
    [pod('overhead-no-class', { overhead: { cpu: '1' } }), 'pods "overhead-no-class" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead'],
    [pod('overhead-plain', { runtimeClassName: 'plain', overhead: { cpu: '1' } }), 'pods "overhead-plain" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead'],
  ]
  for (const [body, message] of refusals) {
    r = await s.request('POST', PODS, body)
    t.equal(r.status, 403, r.text)
    t.equal(r.json.message, message)
  }
  r = await s.request('POST', `${PODS}?dryRun=All`, pod('dry', { runtimeClassName: 'nope' }))
  t.equal(r.status, 403, 'dry run refused alike')
  r = await s.request('POST', `${PODS}?dryRun=All`, pod('dry', { runtimeClassName: 'kata' }))
  t.equal(r.status, 201, r.text)
  t.same(r.json.spec.overhead, { cpu: '250m', memory: '120Mi' })
})

t.test('DefaultIngressClass', async (t) => {
  const s = await startServer()
  t.teardown(() => s.stop())
  let r = await s.request('POST', INGS, ingress('before'))
  t.equal(r.status, 201, r.text)
  t.notOk(r.json.spec.ingressClassName)
  t.equal((await s.request('POST', ICS, ic('nginx', { 'ingressclass.orch.io/is-default-class': 'true' }))).status, 201)
  t.equal((await s.request('POST', ICS, ic('other'))).status, 201)
  r = await s.request('POST', INGS, ingress('after'))
  t.equal(r.json.spec.ingressClassName, 'nginx')
  await sleep(1100)
  // The upstream spelling of the annotation counts too; the newest default wins.
  t.equal((await s.request('POST', ICS, ic('newer', { 'ingressclass.kubernetes.io/is-default-class': 'true' }))).status, 201)
  r = await s.request('POST', INGS, ingress('newest'))
  t.equal(r.json.spec.ingressClassName, 'newer')
  r = await s.request('POST', INGS, ingress('named', { ingressClassName: 'other' }))
  t.equal(r.json.spec.ingressClassName, 'other')
  r = await s.request('POST', INGS, ingress('annotated', {}, { annotations: { 'orch.io/ingress.class': 'other' } }))
  t.notOk(r.json.spec.ingressClassName, 'the class annotation counts as a class')
})

t.test('--disable-admission-plugins turns each off', async (t) => {
  const s = await startServer({
    args: ['--disable-admission-plugins=DefaultTolerationSeconds,TaintNodesByCondition,DefaultStorageClass,StorageObjectInUseProtection,PersistentVolumeClaimResize,RuntimeClass,DefaultIngressClass'],
  })
  t.teardown(() => s.stop())
  let r = await s.request('POST', PODS, pod('plain'))
  t.notOk(r.json.spec.tolerations, 'no tolerations')
  r = await s.request('POST', '/api/v1/nodes', node('n1'))
  t.notOk(r.json.spec.taints, 'no taint')
  t.equal((await s.request('POST', SCS, sc('def', true))).status, 201)
  r = await s.request('POST', PVCS, pvc('claim', { storageClassName: 'def' }))
  t.notOk(r.json.metadata.finalizers, 'no finalizer')
  r = await s.request('POST', PVCS, pvc('unnamed'))
  t.notOk(r.json.spec.storageClassName, 'no default class')
  r = await s.request('POST', PVS, pv('vol'))
  t.notOk(r.json.metadata.finalizers)
  r = await s.request('PATCH', `${PVCS}/claim/status`, { status: { phase: 'Bound', capacity: { storage: '1Gi' } } }, MERGE)
  r = await s.request('PATCH', `${PVCS}/claim`, { spec: { resources: { requests: { storage: '2Gi' } } } }, MERGE)
  t.equal(r.status, 200, `resize not checked: ${r.text}`)
  r = await s.request('POST', PODS, pod('missing-class', { runtimeClassName: 'nope', overhead: { cpu: '1' } }))
  t.equal(r.status, 201, `RuntimeClass not looked up: ${r.text}`)
  t.equal((await s.request('POST', ICS, ic('nginx', { 'ingressclass.orch.io/is-default-class': 'true' }))).status, 201)
  r = await s.request('POST', INGS, ingress('i'))
  t.notOk(r.json.spec.ingressClassName)
})
