// Black-box: StorageClass validation (upstream ValidateStorageClass and ValidateStorageClassUpdate).
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'
import { expectRefused } from '../helpers/refused.js'

let s: TestServer
const SC = '/apis/storage.orch.io/v1/storageclasses'
const K = 'StorageClass.storage.orch.io'

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

type Obj = Record<string, any>
const sc = (name: string, extra: Obj = {}) => ({ apiVersion: 'storage.orch.io/v1', kind: 'StorageClass', metadata: { name }, provisioner: 'ebs.csi.example.com', ...extra })

t.test('a CSI class is created with its defaults', async (t) => {
  const r = await s.request('POST', SC, sc('fast', { parameters: { type: 'gp3' }, volumeBindingMode: 'WaitForFirstConsumer', allowVolumeExpansion: true }))
  t.equal(r.status, 201, r.text)
  t.equal(r.json.reclaimPolicy, 'Delete')
})

t.test('provisioner, reclaimPolicy, volumeBindingMode', async (t) => {
  await expectRefused(t, s, SC, sc('none', { provisioner: undefined }), K, [{ field: 'provisioner', reason: 'FieldValueRequired', message: 'Required value' }])
  await expectRefused(t, s, SC, sc('bad-prov', { provisioner: 'example.com/a/b' }), K, [{
    field: 'provisioner', reason: 'FieldValueInvalid',
    message: 'Invalid value: "example.com/a/b": a qualified name must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\') with an optional DNS subdomain prefix and \'/\' (e.g. \'example.com/MyName\')',
  }])
  await expectRefused(t, s, SC, sc('recycle', { reclaimPolicy: 'Recycle' }), K, [{ field: 'reclaimPolicy', reason: 'FieldValueNotSupported', message: 'Unsupported value: "Recycle": supported values: "Delete", "Retain"' }])
  await expectRefused(t, s, SC, sc('late', { volumeBindingMode: 'Late' }), K, [{ field: 'volumeBindingMode', reason: 'FieldValueNotSupported', message: 'Unsupported value: "Late": supported values: "Immediate", "WaitForFirstConsumer"' }])
})

t.test('parameters, provisioner, reclaimPolicy and volumeBindingMode are fixed', async (t) => {
  const MERGE = { 'content-type': 'application/merge-patch+json' }
  let r = await s.request('PATCH', `${SC}/fast`, { parameters: { type: 'io2' }, provisioner: 'other.example.com' }, MERGE)
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.message, `${K} "fast" is invalid: [parameters: Forbidden: updates to parameters are forbidden., provisioner: Forbidden: updates to provisioner are forbidden.]`)
  r = await s.request('PATCH', `${SC}/fast`, { reclaimPolicy: 'Retain', volumeBindingMode: 'Immediate' }, MERGE)
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.message, `${K} "fast" is invalid: [reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden., volumeBindingMode: Invalid value: "Immediate": field is immutable]`)
  r = await s.request('PATCH', `${SC}/fast`, { allowVolumeExpansion: false, metadata: { labels: { tier: 'gold' } } }, MERGE)
  t.equal(r.status, 200, r.text)
  t.same((await s.request('GET', `${SC}/fast`)).json.parameters, { type: 'gp3' })
})
