// Black-box: VolumeAttachment validation (upstream ValidateVolumeAttachment, ValidateVolumeAttachmentV1 on create,
// ValidateVolumeAttachmentUpdate) — refused objects are 422 with upstream's causes and store nothing; an attachment as
// the attach/detach controller writes it is created, and its status is written through /status.
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'
import { expectRefused } from '../helpers/refused.js'

let s: TestServer
const VA = '/apis/storage.orch.io/v1/volumeattachments'
const K = 'VolumeAttachment.storage.orch.io'
const SUB = 'a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')'

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

type Obj = Record<string, any>
const va = (name: string, spec: Obj): Obj => ({ apiVersion: 'storage.orch.io/v1', kind: 'VolumeAttachment', metadata: { name }, spec })
const good = (name: string) => va(name, { attacher: 'ebs.csi.aws.com', nodeName: 'worker-1', source: { persistentVolumeName: 'pvc-0b1c2d3e' } })

t.test('an attachment as the attach/detach controller writes it is created; the CSI attacher sets its status', async (t) => {
  let r = await s.request('POST', VA, good('csi-0a1b2c'))
  t.equal(r.status, 201, r.text)
  r = await s.request('PUT', `${VA}/csi-0a1b2c/status`, { ...r.json, status: { attached: true, attachmentMetadata: { devicePath: '/dev/xvdba' } } })
  t.equal(r.status, 200, r.text)
  t.equal(r.json.status.attached, true)
})

t.test('attacher, source and nodeName', async (t) => {
  await expectRefused(t, s, VA, va('empty', { source: {} }), K, [
    { field: 'spec.attacher', reason: 'FieldValueRequired', message: 'Required value' },
    { field: 'spec.source', reason: 'FieldValueRequired', message: 'Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName' },
    { field: 'spec.nodeName', reason: 'FieldValueInvalid', message: `Invalid value: "": ${SUB}` },
    { field: 'spec.attacher', reason: 'FieldValueRequired', message: 'Required value' },
    { field: 'spec.attacher', reason: 'FieldValueInvalid', message: `Invalid value: "": ${SUB}` },
  ])
  await expectRefused(t, s, VA, va('both', { attacher: 'Ebs_CSI', nodeName: 'worker-1', source: { persistentVolumeName: 'PV 1', inlineVolumeSpec: { csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-1' } } } }), K, [
    { field: 'spec.source', reason: 'FieldValueForbidden', message: 'Forbidden: must specify exactly one of inlineVolumeSpec and persistentVolumeName' },
    { field: 'spec.attacher', reason: 'FieldValueInvalid', message: `Invalid value: "Ebs_CSI": ${SUB}` },
    { field: 'spec.source.persistentVolumeName', reason: 'FieldValueInvalid', message: `Invalid value: "PV 1": ${SUB}` },
  ])
  await expectRefused(t, s, VA, va('empty-pv', { attacher: 'a'.repeat(64), nodeName: 'worker-1', source: { persistentVolumeName: '' } }), K, [
    { field: 'spec.source.persistentVolumeName', reason: 'FieldValueRequired', message: 'Required value: must specify non empty persistentVolumeName' },
    { field: 'spec.attacher', reason: 'FieldValueTooLong', message: 'Too long: may not be more than 63 bytes' },
    { field: 'spec.source.persistentVolumeName', reason: 'FieldValueInvalid', message: `Invalid value: "": ${SUB}` },
  ])
})

t.test('spec is immutable; status errors are checked', async (t) => {
  let r = await s.request('POST', VA, good('csi-imm'))
  t.equal(r.status, 201, r.text)
  const moved = structuredClone(r.json)
  moved.spec.nodeName = 'worker-2'
  r = await s.request('PUT', `${VA}/csi-imm`, moved)
  t.equal(r.status, 422, r.text)
  t.same(r.json.details.causes, [{ reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(moved.spec)}: field is immutable`, field: 'spec' }])
  r = await s.request('GET', `${VA}/csi-imm`)
  t.equal(r.json.spec.nodeName, 'worker-1', 'unchanged')
  r = await s.request('PUT', `${VA}/csi-imm/status`, { ...r.json, status: { attached: false, attachError: { message: 'x'.repeat(1025), errorCode: -1 } } })
  t.equal(r.status, 422, r.text)
  const causes = [
    { reason: 'FieldValueTooLong', message: 'Too long: may not be more than 262144 bytes', field: 'status.attachError.message' },
    { reason: 'FieldValueInvalid', message: 'Invalid value: -1: must be between 0 and 2147483647, inclusive', field: 'status.attachError.errorCode' },
  ]
  t.same(r.json.details.causes, [...causes, ...causes], 'reported twice, as upstream')
})
