import t from 'tap'
import { evaluatorFor, checkRequest, quotaState, type QuotaRequest } from '../../src/admission/resource-quota.js'
import { resourceMap, addLists, resourceList } from '../../src/admission/resource-lists.js'

const NOW = Date.parse('2026-01-01T00:00:00Z')
const pods = evaluatorFor('', 'pods')!
const usage = (o: any) => resourceMap(pods.usage(o, NOW))

t.test('sums keep upstream\'s format rule: the first non-zero amount decides', async (t) => {
  t.same(resourceMap(addLists(resourceList({ a: '0', b: '500m', c: '1Gi', d: '1Gi' }), resourceList({ a: '1Gi', b: '1', c: '512Mi', d: '500M' }))),
    { a: '1Gi', b: '1500m', c: '1536Mi', d: '1573741824' })
})

t.test('pod usage: sidecars, init containers, overhead, pod-level resources, extended resources', async (t) => {
  const spec = {
    initContainers: [
      { name: 'side', restartPolicy: 'Always', resources: { requests: { cpu: '100m' }, limits: { cpu: '200m' } } },
      { name: 'init', resources: { requests: { cpu: '2', memory: '1Gi' } } },
    ],
    containers: [
      { name: 'a', resources: { requests: { cpu: '500m', memory: '256Mi', 'example.com/gpu': '1', 'hugepages-2Mi': '4Mi' }, limits: { cpu: '1', memory: '512Mi' } } },
      { name: 'b', resources: { requests: { cpu: '250m' } } },
    ],
    overhead: { cpu: '10m', memory: '1Mi' },
  }
  // requests: containers 750m + sidecar 100m = 850m; the init container needs 2 + 100m; overhead adds 10m.
  t.same(usage({ spec }), {
    cpu: '2110m', 'count/pods': '1', 'hugepages-2Mi': '4Mi', 'limits.cpu': '1210m', 'limits.memory': '513Mi', memory: '1025Mi', pods: '1',
    'requests.cpu': '2110m', 'requests.example.com/gpu': '1', 'requests.hugepages-2Mi': '4Mi', 'requests.memory': '1025Mi',
  })
  t.same(usage({ spec: { containers: [{ name: 'a', resources: { requests: { cpu: '100m' } } }], resources: { requests: { cpu: '2' } } } }),
    { cpu: '2', 'count/pods': '1', pods: '1', 'requests.cpu': '2' }, 'pod-level requests stand for the containers')
  t.same(usage({ spec: { containers: [{ name: 'a' }] }, status: { phase: 'Succeeded' } }), { 'count/pods': '1' }, 'a finished pod counts as an object only')
  t.same(usage({ metadata: { deletionTimestamp: '2025-12-31T23:59:00Z', deletionGracePeriodSeconds: 30 }, spec: { containers: [{ name: 'a' }] } }),
    { 'count/pods': '1' }, 'past its grace period a deleted pod no longer counts')
})

t.test('claims: whole bytes, by storage class under both spellings, the larger allocation', async (t) => {
  const claims = evaluatorFor('', 'persistentvolumeclaims')!
  t.same(resourceMap(claims.usage({ spec: { storageClassName: 'gold', resources: { requests: { storage: '1.5' } } }, status: { allocatedResources: { storage: '1Gi' } } }, NOW)), {
    'count/persistentvolumeclaims': '1', 'gold.storageclass.storage.k8s.io/persistentvolumeclaims': '1', 'gold.storageclass.storage.k8s.io/requests.storage': '1Gi',
    'gold.storageclass.storage.orch.io/persistentvolumeclaims': '1', 'gold.storageclass.storage.orch.io/requests.storage': '1Gi', persistentvolumeclaims: '1', 'requests.storage': '1Gi',
  })
  t.same(resourceMap(claims.usage({ spec: { resources: { requests: { storage: '1500m' } } } }, NOW))['requests.storage'], '2')
})

t.test('object counts: the brand\'s group and upstream\'s spelling of it', async (t) => {
  t.same(evaluatorFor('networking.orch.io', 'ingresses')!.matchingResources(['count/ingresses.networking.k8s.io', 'count/ingresses.networking.orch.io', 'pods']),
    ['count/ingresses.networking.k8s.io', 'count/ingresses.networking.orch.io'])
  t.same(evaluatorFor('', 'configmaps')!.matchingResources(['configmaps', 'count/configmaps']), ['configmaps', 'count/configmaps'])
  t.equal(evaluatorFor('', 'events'), undefined, 'events are not counted')
})

t.test('checkRequest: zero amounts charge nothing; a quota already over its limit still admits what adds nothing there', async (t) => {
  const q = quotaState({ metadata: { name: 'q' }, spec: { hard: { services: '5', 'services.loadbalancers': '0' } }, status: { hard: { services: '5', 'services.loadbalancers': '0' }, used: { services: '1', 'services.loadbalancers': '1' } } }, 7)
  const req: QuotaRequest = { ev: evaluatorFor('', 'services')!, operation: 'CREATE', object: { spec: { type: 'ClusterIP', ports: [{ port: 80 }] } }, oldObject: undefined, gr: { group: '', resource: 'services' }, name: 's' }
  const out = checkRequest([q], req, NOW)
  t.ok(Array.isArray(out), 'admitted')
  t.same(resourceMap((out as any)[0].used), { services: '2', 'services.loadbalancers': '1' })
})

t.test('claim usage by storage class: the beta annotation in either spelling wins over spec.storageClassName', async (t) => {
  const claims = evaluatorFor('', 'persistentvolumeclaims')!
  const claim = (annotations: Record<string, string>) => ({ metadata: { annotations }, spec: { storageClassName: 'plain', resources: { requests: { storage: '1Gi' } } } })
  for (const key of ['volume.beta.orch.io/storage-class', 'volume.beta.kubernetes.io/storage-class']) {
    const u = resourceMap(claims.usage(claim({ [key]: 'gold' }), NOW))
    t.equal(u['gold.storageclass.storage.orch.io/requests.storage'] ?? u['gold.storageclass.storage.k8s.io/requests.storage'], '1Gi', key)
    t.notOk(Object.keys(u).some((k) => k.startsWith('plain.')), `${key}: not counted under spec.storageClassName`)
  }
})
