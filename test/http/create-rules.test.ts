// Black-box: what a create gets from the server rather than the body — a dry-run create meets an existing name as the
// real one would, and a CertificateSigningRequest records who asked for it.
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'

let s: TestServer
const CSR_PEM_B64 = 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIUE1IWUNBUUF3RkRFU01CQUdBMVVFQXd3SlkzSjFaQzEwWlhOME1Ga3dFd1lIS29aSXpqMENBUVlJS29aSQp6ajBEQVFjRFFnQUVtaGhBTUt3b0dTUnVvK3h4WVNtN1ZONWVBdEoxcTQrYnh2cXlMeURrKzFqQWtyVmh3ekpMCkl2MlF0Q2drMVZKcUdDM1htY21zN0tnMWVxVm5yYVhKUHFBQU1Bb0dDQ3FHU000OUJBTUNBMGtBTUVZQ0lRRG4KR2pta3ErS1FjdXVRZk9wNjBxUlcwTk1vNnRYMjNDNkt1Ti9sTWVSaEl3SWhBT1lSSlp1RVBUeXNKa2VtaTVyVwp6b1J5SEd2YzJkelBQTGxKOFlWZ3preE0KLS0tLS1FTkQgQ0VSVElGSUNBVEUgUkVRVUVTVC0tLS0tCg=='

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

t.test('a dry-run create of a name that exists is 409 AlreadyExists, as the real create', async (t) => {
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'there' }, data: { a: '1' } }
  let r = await s.request('POST', '/api/v1/namespaces/default/configmaps', cm)
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { ...cm, data: { a: '2' } })
  t.equal(r.status, 409, r.text)
  t.equal(r.json?.reason, 'AlreadyExists')
  t.equal(r.json?.message, 'configmaps "there" already exists')
  r = await s.request('POST', '/api/v1/namespaces?dryRun=All', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } })
  t.equal(r.status, 409, r.text)
  r = await s.request('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { ...cm, metadata: { name: 'not-there' } })
  t.equal(r.status, 201, 'a new name is fine')
  t.equal((await s.request('GET', '/api/v1/namespaces/default/configmaps/not-there')).status, 404, 'and was not stored')
})

t.test('a CSR records the requesting user; the body cannot name another', async (t) => {
  const r = await s.request('POST', '/apis/certificates.orch.io/v1/certificatesigningrequests', {
    apiVersion: 'certificates.orch.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'who' },
    spec: { request: CSR_PEM_B64, signerName: 'example.com/signer', usages: ['client auth'], username: 'mallory', uid: 'x', groups: ['system:masters'], extra: { a: ['b'] } },
  })
  t.equal(r.status, 201, r.text)
  t.equal(r.json.spec.username, 'orch-admin', 'the admin made it')
  t.ok(r.json.spec.groups.includes('system:masters') && r.json.spec.groups.includes('system:authenticated'), 'with the admin groups')
  t.not(r.json.spec.uid, 'x')
  t.notOk(r.json.spec.extra, 'no extra from the body')
  const got = await s.request('GET', '/apis/certificates.orch.io/v1/certificatesigningrequests/who')
  t.equal(got.json.spec.username, 'orch-admin', 'stored')
  const plain = await s.request('POST', '/apis/certificates.orch.io/v1/certificatesigningrequests', {
    apiVersion: 'certificates.orch.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'who2' },
    spec: { request: CSR_PEM_B64, signerName: 'example.com/signer', usages: ['client auth'] },
  })
  t.equal(plain.status, 201, plain.text)
  t.equal(plain.json.spec.username, 'orch-admin')
  t.notMatch(JSON.stringify(plain.json.metadata.managedFields), /f:username/, 'set by the server, owned by no manager')
})
