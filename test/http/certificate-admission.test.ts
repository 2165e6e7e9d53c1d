// Black-box: CertificateApproval, CertificateSigning and CertificateSubjectRestriction (on by default), the
// certificatesigningrequests/approval sub-resource they guard, and --disable-admission-plugins.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type TestServer } from '../helpers/server.js'
import { csrRequest } from '../helpers/csr.js'
import { issue } from '../helpers/certs.js'

type Obj = Record<string, any>
const CSRS = '/apis/certificates.orch.io/v1/certificatesigningrequests'
const RBAC = '/apis/rbac.authorization.orch.io/v1'

const csr = (name: string, signerName: string, request = csrRequest(name, [])) => ({
  apiVersion: 'certificates.orch.io/v1', kind: 'CertificateSigningRequest', metadata: { name },
  spec: { request, signerName, usages: ['client auth'] },
})
const APPROVED = [{ type: 'Approved', status: 'True', reason: 'OK', message: 'fine' }]

async function setup(t: any, args: string[] = []): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'orch-csr-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const tokens = join(dir, 'tokens.csv')
  writeFileSync(tokens, 'alice-token,alice,u-alice\nbob-token,bob,u-bob\n')
  const s = await startServer({ args: ['--token-auth-file', tokens, ...args] })
  t.teardown(() => s.stop())
  const role = (name: string, rules: Obj[]) => s.request('POST', `${RBAC}/clusterroles`, { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'ClusterRole', metadata: { name }, rules })
  const bind = (name: string, user: string) => s.request('POST', `${RBAC}/clusterrolebindings`, {
    apiVersion: 'rbac.authorization.orch.io/v1', kind: 'ClusterRoleBinding', metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'ClusterRole', name }, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.orch.io', name: user }],
  })
  const G = 'certificates.orch.io'
  t.equal((await role('approver', [
    { apiGroups: [G], resources: ['certificatesigningrequests'], verbs: ['get'] },
    { apiGroups: [G], resources: ['certificatesigningrequests/approval'], verbs: ['update', 'patch'] },
    { apiGroups: [G], resources: ['signers'], verbs: ['approve'], resourceNames: ['example.com/allowed', 'wild.example.com/*'] },
  ])).status, 201)
  t.equal((await bind('approver', 'alice')).status, 201)
  t.equal((await role('signer', [
    { apiGroups: [G], resources: ['certificatesigningrequests'], verbs: ['get'] },
    { apiGroups: [G], resources: ['certificatesigningrequests/status'], verbs: ['update', 'patch'] },
    { apiGroups: [G], resources: ['signers'], verbs: ['sign'], resourceNames: ['example.com/allowed'] },
  ])).status, 201)
  t.equal((await bind('signer', 'bob')).status, 201)
  for (const [name, signer] of [['allowed', 'example.com/allowed'], ['denied', 'example.com/denied'], ['wild', 'wild.example.com/anything']]) {
    const r = await s.request('POST', CSRS, csr(name, signer))
    t.equal(r.status, 201, r.text)
  }
  return s
}

async function approve(s: TestServer, token: string, name: string, extra: Obj = {}) {
  const cur = (await s.request('GET', `${CSRS}/${name}`)).json
  return s.requestAs(token, 'PUT', `${CSRS}/${name}/approval`, { ...cur, ...extra, status: { ...cur.status, conditions: APPROVED } })
}
async function sign(s: TestServer, token: string, name: string) {
  const cur = (await s.request('GET', `${CSRS}/${name}`)).json
  return s.requestAs(token, 'PUT', `${CSRS}/${name}/status`, { ...cur, status: { ...cur.status, certificate: Buffer.from(issue(null, { cn: name }).certPem).toString('base64') } })
}

t.test('CertificateApproval and the approval sub-resource', async (t) => {
  const s = await setup(t)
  let r = await approve(s, 'alice-token', 'allowed', { spec: { request: 'Zm9v', signerName: 'example.com/other', usages: ['server auth'] } })
  t.equal(r.status, 200, r.text)
  t.equal(r.json.status.conditions[0].type, 'Approved')
  t.equal(r.json.spec.signerName, 'example.com/allowed', 'the approval changes the conditions only')
  t.same(r.json.spec.usages, ['client auth'])
  r = await approve(s, 'alice-token', 'wild')
  t.equal(r.status, 200, `the signer's domain with /*: ${r.text}`)
  r = await approve(s, 'alice-token', 'denied')
  t.equal(r.status, 403, r.text)
  t.equal(r.json.message, 'certificatesigningrequests.certificates.orch.io "denied" is forbidden: user not permitted to approve requests with signerName "example.com/denied"')
  r = await s.requestAs('alice-token', 'PATCH', `${CSRS}/denied/approval?dryRun=All`, { status: { conditions: APPROVED } }, { 'content-type': 'application/merge-patch+json' })
  t.equal(r.status, 403, 'a dry run is refused alike')
  t.notOk((await s.request('GET', `${CSRS}/denied`)).json.status.conditions, 'nothing stored')
  r = await s.request('GET', `${CSRS}/allowed/approval`)
  t.equal(r.status, 200, 'approval: get')
  // The admin (system:masters) may approve anything.
  r = await approve(s, s.adminToken, 'denied')
  t.equal(r.status, 200, r.text)
  const disc = await s.request('GET', '/apis/certificates.orch.io/v1')
  t.ok(disc.json.resources.some((x: Obj) => x.name === 'certificatesigningrequests/approval'), 'in discovery')
})

t.test('CertificateSigning', async (t) => {
  const s = await setup(t)
  let r = await sign(s, 'bob-token', 'allowed')
  t.equal(r.status, 200, r.text)
  t.ok(r.json.status.certificate)
  r = await sign(s, 'bob-token', 'denied')
  t.equal(r.status, 403, r.text)
  t.equal(r.json.message, 'certificatesigningrequests.certificates.orch.io "denied" is forbidden: user not permitted to sign requests with signerName "example.com/denied"')
  // A status write that changes neither the certificate nor the conditions needs no signer permission.
  const cur = (await s.request('GET', `${CSRS}/denied`)).json
  r = await s.requestAs('bob-token', 'PUT', `${CSRS}/denied/status`, cur)
  t.equal(r.status, 200, r.text)
})

t.test('through /status no Approved or Denied condition is added, removed or changed, nor an issued certificate replaced; through /approval none is removed', async (t) => {
  const s = await setup(t)
  const get = async () => (await s.request('GET', `${CSRS}/allowed`)).json
  const put = (sub: string, body: Obj) => s.request('PUT', `${CSRS}/allowed/${sub}`, body)
  const invalid = (r: { status: number; json: any }, field: string, detail: string) => {
    t.equal(r.status, 422, JSON.stringify(r.json))
    t.equal(r.json.message, `CertificateSigningRequest.certificates.orch.io "allowed" is invalid: ${field}: Forbidden: ${detail}`)
    t.same(r.json.details?.causes, [{ reason: 'FieldValueForbidden', message: `Forbidden: ${detail}`, field }])
  }
  let cur = await get()
  invalid(await put('status', { ...cur, status: { conditions: APPROVED } }), 'status.conditions', 'updates may not add a condition of type "Approved"')
  invalid(await put('status', { ...cur, status: { conditions: [{ type: 'Denied', status: 'True' }] } }), 'status.conditions', 'updates may not add a condition of type "Denied"')
  t.notOk((await get()).status?.conditions, 'nothing stored')
  let r = await approve(s, s.adminToken, 'allowed')
  t.equal(r.status, 200, r.text)
  // A changed Approved condition is put back as stored; a Failed one may be added.
  cur = await get()
  r = await put('status', { ...cur, status: { conditions: [{ ...APPROVED[0], reason: 'Changed', message: 'changed' }, { type: 'Failed', status: 'True', reason: 'Oops' }] } })
  t.equal(r.status, 200, r.text)
  t.same(r.json.status.conditions.map((c: Obj) => [c.type, c.reason]), [['Approved', 'OK'], ['Failed', 'Oops']])
  cur = await get()
  invalid(await put('status', { ...cur, status: { conditions: [cur.status.conditions[1]] } }), 'status.conditions', 'updates may not remove a condition of type "Approved"')
  invalid(await put('approval', { ...cur, status: { conditions: [cur.status.conditions[0]] } }), 'status.conditions', 'updates may not remove a condition of type "Failed"')
  t.equal((await get()).status.conditions.length, 2, 'both conditions kept')
  // The certificate is set once.
  r = await sign(s, s.adminToken, 'allowed')
  t.equal(r.status, 200, r.text)
  cur = await get()
  invalid(await put('status', { ...cur, status: { ...cur.status, certificate: Buffer.from(issue(null, { cn: 'other' }).certPem).toString('base64') } }), 'status.certificate', 'updates may not modify existing certificate content')
  t.equal((await get()).status.certificate, cur.status.certificate, 'the certificate kept')
})

t.test('CertificateSubjectRestriction', async (t) => {
  const s = await startServer()
  t.teardown(() => s.stop())
  const signer = 'orch.io/kube-apiserver-client'
  let r = await s.request('POST', CSRS, csr('masters', signer, csrRequest('root', ['dev', 'system:masters'])))
  t.equal(r.status, 403, r.text)
  t.equal(r.json.message, 'certificatesigningrequests.certificates.orch.io "masters" is forbidden: use of orch.io/kube-apiserver-client signer with system:masters group is not allowed')
  r = await s.request('POST', `${CSRS}?dryRun=All`, csr('masters', signer, csrRequest('root', ['system:masters'])))
  t.equal(r.status, 403, 'dry run alike')
  r = await s.request('POST', CSRS, csr('dev', signer, csrRequest('jane', ['dev'])))
  t.equal(r.status, 201, r.text)
  // Another signer may carry the group.
  r = await s.request('POST', CSRS, csr('other-signer', 'example.com/x', csrRequest('root', ['system:masters'])))
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', CSRS, csr('junk', signer, Buffer.from('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n').toString('base64')))
  // The request's own validation comes first (upstream's order: the strategy's checks, then validating admission).
  t.equal(r.status, 422, r.text)
  t.match(r.json.message, /^CertificateSigningRequest\.certificates\.orch\.io "junk" is invalid: spec\.request: Invalid value: \[\]byte\{0x2d, .*\}: PEM block type must be CERTIFICATE REQUEST$/)
})

t.test('--disable-admission-plugins=CertificateApproval,CertificateSigning,CertificateSubjectRestriction', async (t) => {
  const s = await setup(t, ['--disable-admission-plugins=CertificateApproval,CertificateSigning,CertificateSubjectRestriction'])
  let r = await approve(s, 'alice-token', 'denied')
  t.equal(r.status, 200, r.text)
  r = await sign(s, 'bob-token', 'denied')
  t.equal(r.status, 200, r.text)
  r = await s.request('POST', CSRS, csr('masters', 'orch.io/kube-apiserver-client', csrRequest('root', ['system:masters'])))
  t.equal(r.status, 201, r.text)
})
