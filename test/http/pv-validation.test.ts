// Black-box: PersistentVolume and PersistentVolumeClaim validation (upstream ValidatePersistentVolumeSpec,
// ValidatePersistentVolumeClaimSpec and the claim's update rules).
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'
import { expectRefused } from '../helpers/refused.js'

let s: TestServer
const PV = '/api/v1/persistentvolumes'
const PVC = '/api/v1/namespaces/default/persistentvolumeclaims'
const MERGE = { 'content-type': 'application/merge-patch+json' }

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

type Obj = Record<string, any>
const pv = (name: string, spec: Obj) => ({ apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name }, spec: { capacity: { storage: '10Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/data' }, ...spec } })
const pvc = (name: string, spec: Obj = {}) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec } })

t.test('a hostPath volume, a CSI volume and a 1Gi claim are created', async (t) => {
  let r = await s.request('POST', PV, pv('data', {}))
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', PV, pv('csi', { hostPath: undefined, csi: { driver: 'ebs.csi.example.com', volumeHandle: 'vol-1' }, storageClassName: 'fast', persistentVolumeReclaimPolicy: 'Delete' }))
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', PVC, pvc('claim', { storageClassName: 'standard' }))
  t.equal(r.status, 201, r.text)
})

t.test('PersistentVolume', async (t) => {
  const K = 'PersistentVolume'
  await expectRefused(t, s, PV, pv('no-cap', { capacity: undefined }), K, [
    { field: 'spec.capacity', reason: 'FieldValueRequired', message: 'Required value' },
    { field: 'spec.capacity', reason: 'FieldValueNotSupported', message: 'Unsupported value: core.ResourceList(nil): supported values: "storage"' },
  ])
  await expectRefused(t, s, PV, pv('zero', { capacity: { storage: '0' } }), K, [{ field: 'spec.capacity[storage]', reason: 'FieldValueInvalid', message: 'Invalid value: "0": must be greater than zero' }])
  await expectRefused(t, s, PV, pv('modes', { accessModes: ['ReadWriteOnce', 'ReadWriteAll'] }), K, [
    { field: 'spec.accessModes', reason: 'FieldValueNotSupported', message: 'Unsupported value: "ReadWriteAll": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"' },
  ])
  await expectRefused(t, s, PV, pv('no-modes', { accessModes: [] }), K, [{ field: 'spec.accessModes', reason: 'FieldValueRequired', message: 'Required value' }])
  await expectRefused(t, s, PV, pv('rwop', { accessModes: ['ReadWriteOncePod', 'ReadOnlyMany'] }), K, [{ field: 'spec.accessModes', reason: 'FieldValueForbidden', message: 'Forbidden: may not use ReadWriteOncePod with other access modes' }])
  await expectRefused(t, s, PV, pv('policy', { persistentVolumeReclaimPolicy: 'Keep' }), K, [{ field: 'spec.persistentVolumeReclaimPolicy', reason: 'FieldValueNotSupported', message: 'Unsupported value: "Keep": supported values: "Delete", "Recycle", "Retain"' }])
  await expectRefused(t, s, PV, pv('no-source', { hostPath: undefined }), K, [{ field: 'spec', reason: 'FieldValueRequired', message: 'Required value: must specify a volume type' }])
  await expectRefused(t, s, PV, pv('two-sources', { nfs: { server: 'nfs.example.com', path: '/exports' } }), K, [{ field: 'spec.nfs', reason: 'FieldValueForbidden', message: 'Forbidden: may not specify more than 1 volume type' }])
  await expectRefused(t, s, PV, pv('csi-bare', { hostPath: undefined, csi: {} }), K, [
    { field: 'spec.csi.driver', reason: 'FieldValueRequired', message: 'Required value' },
    { field: 'spec.csi.volumeHandle', reason: 'FieldValueRequired', message: 'Required value' },
  ])
  await expectRefused(t, s, PV, pv('mode', { volumeMode: 'Raw' }), K, [{ field: 'spec.volumeMode', reason: 'FieldValueNotSupported', message: 'Unsupported value: "Raw": supported values: "Block", "Filesystem"' }])
})

t.test('PersistentVolumeClaim', async (t) => {
  const K = 'PersistentVolumeClaim'
  await expectRefused(t, s, PVC, pvc('no-modes', { accessModes: undefined }), K, [{ field: 'spec.accessModes', reason: 'FieldValueRequired', message: 'Required value: at least 1 access mode is required' }])
  await expectRefused(t, s, PVC, pvc('no-size', { resources: {} }), K, [{ field: 'spec.resources[storage]', reason: 'FieldValueRequired', message: 'Required value' }])
  await expectRefused(t, s, PVC, pvc('zero', { resources: { requests: { storage: '0' } } }), K, [{ field: 'spec.resources[storage]', reason: 'FieldValueInvalid', message: 'Invalid value: "0": must be greater than zero' }])
  await expectRefused(t, s, PVC, pvc('bad-mode', { accessModes: ['RWO'] }), K, [
    { field: 'spec.accessModes', reason: 'FieldValueNotSupported', message: 'Unsupported value: "RWO": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"' },
  ])
})

t.test('a claim is immutable after creation but for volumeName (once) and a bound claim\'s size', async (t) => {
  let r = await s.request('PATCH', `${PVC}/claim`, { spec: { accessModes: ['ReadWriteMany'] } }, MERGE)
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.message, 'PersistentVolumeClaim "claim" is invalid: spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims')
  r = await s.request('PATCH', `${PVC}/claim`, { spec: { resources: { requests: { storage: '2Gi' } } } }, MERGE)
  t.equal(r.status, 422, 'an unbound claim cannot be resized')
  r = await s.request('PATCH', `${PVC}/claim`, { spec: { volumeName: 'data' } }, MERGE)
  t.equal(r.status, 200, r.text)
  r = await s.request('PATCH', `${PVC}/claim/status`, { status: { phase: 'Bound', capacity: { storage: '1Gi' } } }, MERGE)
  t.equal(r.status, 200, r.text)
  // PersistentVolumeClaimResize (on by default) lets a claim grow only when its class allows volume expansion.
  r = await s.request('POST', '/apis/storage.orch.io/v1/storageclasses', { apiVersion: 'storage.orch.io/v1', kind: 'StorageClass', metadata: { name: 'standard' }, provisioner: 'example.com/p', allowVolumeExpansion: true })
  t.equal(r.status, 201, r.text)
  r = await s.request('PATCH', `${PVC}/claim`, { spec: { resources: { requests: { storage: '5Gi' } } } }, MERGE)
  t.equal(r.status, 200, `a bound claim grows: ${r.text}`)
  r = await s.request('PATCH', `${PVC}/claim`, { spec: { resources: { requests: { storage: '1Gi' } } } }, MERGE)
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.message, 'PersistentVolumeClaim "claim" is invalid: spec.resources.requests.storage: Forbidden: field can not be less than status.capacity')
  r = await s.request('PATCH', `${PVC}/claim`, { spec: { volumeName: 'other' } }, MERGE)
  t.equal(r.status, 422, 'volumeName is set once')
  t.equal((await s.request('GET', `${PVC}/claim`)).json.spec.resources.requests.storage, '5Gi')
})
