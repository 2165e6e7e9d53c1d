// Black-box: the admission plugins upstream has off by default, turned on with --enable-admission-plugins:
// AlwaysAdmit, AlwaysDeny, NamespaceExists, AlwaysPullImages, PodNodeSelector, PodTolerationRestriction.
import t from 'tap'
import { startServer } from '../helpers/server.js'

type Obj = Record<string, any>
const PODS = '/api/v1/namespaces/default/pods'
const MERGE = { 'content-type': 'application/merge-patch+json' }
const pod = (name: string, spec: Obj = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'i' }], ...spec } })
const ns = (name: string, annotations: Obj) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, annotations } })
const NOT_READY = { key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }
const UNREACHABLE = { key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }

t.test('off by default', async (t) => {
  const s = await startServer({ args: ['--disable-admission-plugins=NamespaceLifecycle'] })
  t.teardown(() => s.stop())
  let r = await s.request('POST', PODS, pod('p', { containers: [{ name: 'c', image: 'i:1', imagePullPolicy: 'Never' }] }))
  t.equal(r.json.spec.containers[0].imagePullPolicy, 'Never', 'AlwaysPullImages off')
  r = await s.request('POST', '/api/v1/namespaces', ns('sel', { 'scheduler.alpha.orch.io/node-selector': 'zone=a', 'scheduler.alpha.orch.io/defaultTolerations': '[{"key":"k","operator":"Exists"}]' }))
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', '/api/v1/namespaces/sel/pods', pod('p'))
  t.notOk(r.json.spec.nodeSelector, 'PodNodeSelector off')
  t.same(r.json.spec.tolerations, [NOT_READY, UNREACHABLE], 'PodTolerationRestriction off')
  r = await s.request('POST', '/api/v1/namespaces/nowhere/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } })
  t.equal(r.status, 201, 'NamespaceExists off')
})

t.test('AlwaysPullImages, PodNodeSelector, PodTolerationRestriction, NamespaceExists, AlwaysAdmit', async (t) => {
  const s = await startServer({ args: ['--enable-admission-plugins=AlwaysAdmit,NamespaceExists,AlwaysPullImages,PodNodeSelector,PodTolerationRestriction', '--disable-admission-plugins=NamespaceLifecycle'] })
  t.teardown(() => s.stop())
  // AlwaysPullImages: every container, on create and on an update that brings a new image.
  let r = await s.request('POST', PODS, pod('pull', {
    initContainers: [{ name: 'init', image: 'init:1', imagePullPolicy: 'IfNotPresent' }],
    containers: [{ name: 'c', image: 'i:1', imagePullPolicy: 'Never' }],
  }))
  t.equal(r.status, 201, r.text)
  t.equal(r.json.spec.initContainers[0].imagePullPolicy, 'Always')
  t.equal(r.json.spec.containers[0].imagePullPolicy, 'Always')
  r = await s.request('PATCH', `${PODS}/pull`, { spec: { containers: [{ name: 'c', image: 'i:2' }] } }, { 'content-type': 'application/strategic-merge-patch+json' })
  t.equal(r.status, 200, r.text)
  t.equal(r.json.spec.containers[0].imagePullPolicy, 'Always')

  // PodNodeSelector: the namespace's selector merged in; a conflict refused.
  r = await s.request('POST', '/api/v1/namespaces', ns('sel', { 'scheduler.alpha.orch.io/node-selector': 'zone=a,disk=ssd' }))
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', '/api/v1/namespaces/sel/pods', pod('p', { nodeSelector: { gpu: 'yes', disk: 'ssd' } }))
  t.equal(r.status, 201, r.text)
  t.same(r.json.spec.nodeSelector, { zone: 'a', disk: 'ssd', gpu: 'yes' })
  r = await s.request('POST', '/api/v1/namespaces/sel/pods', pod('conflict', { nodeSelector: { zone: 'b' } }))
  t.equal(r.status, 403, r.text)
  t.equal(r.json.message, 'pods "conflict" is forbidden: pod node label selector conflicts with its namespace node label selector')
  // The upstream spelling of the annotation is read too.
  r = await s.request('POST', '/api/v1/namespaces', ns('upstream', { 'scheduler.alpha.kubernetes.io/node-selector': 'zone=b' }))
  r = await s.request('POST', '/api/v1/namespaces/upstream/pods', pod('p'))
  t.same(r.json.spec.nodeSelector, { zone: 'b' })

  // PodTolerationRestriction: the namespace's defaults merged in on create; memory pressure for a pod with requests;
  // the whitelist enforced.
  r = await s.request('POST', '/api/v1/namespaces', ns('tol', {
    'scheduler.alpha.orch.io/defaultTolerations': '[{"key":"dedicated","operator":"Equal","value":"team-a","effect":"NoSchedule"}]',
    'scheduler.alpha.orch.io/tolerationsWhitelist': '[{"key":"dedicated","operator":"Exists"},{"key":"node.orch.io/not-ready","operator":"Exists"},{"key":"node.orch.io/unreachable","operator":"Exists"},{"key":"node.orch.io/memory-pressure","operator":"Exists"}]',
  }))
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', '/api/v1/namespaces/tol/pods', pod('best-effort'))
  t.equal(r.status, 201, r.text)
  t.same(r.json.spec.tolerations, [NOT_READY, UNREACHABLE, { key: 'dedicated', operator: 'Equal', value: 'team-a', effect: 'NoSchedule' }])
  r = await s.request('POST', '/api/v1/namespaces/tol/pods', pod('burstable', { containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: '100m' } } }] }))
  t.equal(r.status, 201, r.text)
  t.same(r.json.spec.tolerations.at(-1), { key: 'node.orch.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' })
  r = await s.request('POST', '/api/v1/namespaces/tol/pods', pod('outside', { tolerations: [{ key: 'gpu', operator: 'Exists' }] }))
  t.equal(r.status, 403, r.text)
  t.equal(r.json.message, 'pods "outside" is forbidden: pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist')
  r = await s.request('POST', '/api/v1/namespaces', ns('bad', { 'scheduler.alpha.orch.io/defaultTolerations': '{not json' }))
  r = await s.request('POST', '/api/v1/namespaces/bad/pods', pod('p'))
  t.equal(r.status, 403, `an annotation that is not a list of tolerations: ${r.text}`)

  // NamespaceExists: a namespaced write needs its namespace (404, as upstream).
  r = await s.request('POST', '/api/v1/namespaces/nowhere/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } })
  t.equal(r.status, 404, r.text)
  t.equal(r.json.message, 'namespaces "nowhere" not found')
  r = await s.request('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } })
  t.equal(r.status, 201, r.text)
})

t.test('NamespaceAutoProvision', async (t) => {
  const s = await startServer({ args: ['--enable-admission-plugins=NamespaceAutoProvision'] })
  t.teardown(() => s.stop())
  // Dry run: refused as before (NamespaceLifecycle), nothing made.
  let r = await s.request('POST', '/api/v1/namespaces/made/configmaps?dryRun=All', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } })
  t.equal(r.status, 404, r.text)
  t.equal((await s.request('GET', '/api/v1/namespaces/made')).status, 404)
  r = await s.request('POST', '/api/v1/namespaces/made/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } })
  t.equal(r.status, 201, r.text)
  r = await s.request('GET', '/api/v1/namespaces/made')
  t.equal(r.status, 200, r.text)
  t.equal(r.json.status.phase, 'Active')
  // A pod in a new namespace: made, and the pod admitted as in any namespace.
  r = await s.request('POST', '/api/v1/namespaces/made-too/pods', pod('p'))
  t.equal(r.status, 201, r.text)
  // A cluster-scoped write makes nothing.
  r = await s.request('POST', '/api/v1/namespaces/nowhere/persistentvolumes', { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv' } })
  t.equal((await s.request('GET', '/api/v1/namespaces/nowhere')).status, 404)
})

t.test('AlwaysDeny', async (t) => {
  const s = await startServer({ args: ['--enable-admission-plugins=AlwaysDeny'] })
  t.teardown(() => s.stop())
  let r = await s.request('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } })
  t.equal(r.status, 403, r.text)
  t.equal(r.json.message, 'configmaps "cm" is forbidden: admission control is denying all modifications')
  // Before validation, as upstream's mutating phase: an invalid object is refused by it too.
  r = await s.request('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Not_Valid' } })
  t.equal(r.status, 403, r.text)
  r = await s.request('DELETE', '/api/v1/namespaces/default/serviceaccounts/default')
  t.equal(r.status, 403, r.text)
  t.equal(r.json.message, 'serviceaccounts "default" is forbidden: admission control is denying all modifications')
  r = await s.request('PATCH', '/api/v1/namespaces/default', { metadata: { labels: { a: 'b' } } }, MERGE)
  t.equal(r.status, 403, r.text)
  r = await s.request('GET', '/api/v1/namespaces/default/configmaps')
  t.equal(r.status, 200, 'reads are not admitted')
})
