// Black-box: upstream's validation of CertificateSigningRequests (the PKCS#10 request and its signature, usages,
// signerName, expirationSeconds, conditions, the issued certificate), the names it allows, condition timestamps,
// and the main resource leaving spec and status as stored.
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'
import { csrRequest, rsaCsrRequest } from '../helpers/csr.js'
import { issue } from '../helpers/certs.js'

type Obj = Record<string, any>
const CSRS = '/apis/certificates.orch.io/v1/certificatesigningrequests'
const KIND = 'CertificateSigningRequest.certificates.orch.io'

let s: TestServer
t.before(async () => { s = await startServer() })
t.teardown(() => s.stop())

const body = (name: string, spec: Obj) => ({ apiVersion: 'certificates.orch.io/v1', kind: 'CertificateSigningRequest', metadata: { name }, spec })
const good = (name: string, extra: Obj = {}) => body(name, { request: csrRequest(name), signerName: 'example.com/signer', usages: ['client auth'], ...extra })
const causes = (r: { json: any }) => (r.json.details?.causes ?? []).map((c: Obj) => `${c.field}: ${c.message}`)
const b64 = (text: string) => Buffer.from(text).toString('base64')
const goBytes = (b: Buffer) => `[]byte{${[...b].map((x) => `0x${x.toString(16)}`).join(', ')}}`

t.test('the request must be a PEM CERTIFICATE REQUEST whose signature verifies', async (t) => {
  let r = await s.request('POST', CSRS, good('junk', { request: b64('hello') }))
  t.equal(r.status, 422, r.text)
  t.same(causes(r), [`spec.request: Invalid value: ${goBytes(Buffer.from('hello'))}: PEM block type must be CERTIFICATE REQUEST`])
  t.equal(r.json.message, `${KIND} "junk" is invalid: spec.request: Invalid value: ${goBytes(Buffer.from('hello'))}: PEM block type must be CERTIFICATE REQUEST`)
  r = await s.request('POST', CSRS, good('key', { request: b64('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n') }))
  t.match(causes(r), [/^spec\.request: Invalid value: \[\]byte\{0x2d, .*\}: PEM block type must be CERTIFICATE REQUEST$/])
  r = await s.request('POST', CSRS, good('truncated', { request: b64('-----BEGIN CERTIFICATE REQUEST-----\nMIIBAAAA\n-----END CERTIFICATE REQUEST-----\n') }))
  t.match(causes(r), [/^spec\.request: Invalid value: .*: x509: malformed certificate request$/])
  r = await s.request('POST', CSRS, good('forged', { request: csrRequest('forged', [], true) }))
  t.equal(r.status, 422, r.text)
  t.match(causes(r), [/^spec\.request: Invalid value: .*: x509: EC verification failure$/], 'a request whose signature does not verify')
  r = await s.request('POST', CSRS, good('missing', { request: undefined }))
  t.same(causes(r), ['spec.request: Invalid value: []byte(nil): PEM block type must be CERTIFICATE REQUEST'])
  t.equal((await s.request('GET', `${CSRS}/junk`)).status, 404, 'nothing stored')
  // Text around the block is allowed; RSA and ECDSA signatures verify.
  const text = Buffer.concat([Buffer.from('a note\n'), Buffer.from(csrRequest('texted'), 'base64')]).toString('base64')
  r = await s.request('POST', CSRS, good('texted', { request: text }))
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', CSRS, good('rsa', { request: rsaCsrRequest('rsa') }))
  t.equal(r.status, 201, r.text)
})

t.test('usages, signerName and expirationSeconds', async (t) => {
  let r = await s.request('POST', CSRS, good('bare', { usages: undefined, signerName: undefined }))
  t.equal(r.status, 422, r.text)
  t.same(causes(r), ['spec.usages: Required value', 'spec.signerName: Required value'])
  r = await s.request('POST', CSRS, good('usages', { usages: ['client auth', 'bogus', 'client auth'] }))
  t.same(causes(r), [
    'spec.usages[1]: Unsupported value: "bogus": supported values: "any", "cert sign", "client auth", "code signing", "content commitment", "crl sign", "data encipherment", "decipher only", "digital signature", "email protection", "encipher only", "ipsec end system", "ipsec tunnel", "ipsec user", "key agreement", "key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", "s/mime", "server auth", "signing", "timestamping"',
    'spec.usages[2]: Duplicate value: "client auth"',
  ])
  r = await s.request('POST', CSRS, good('signer1', { signerName: 'signer' }))
  t.same(causes(r), [`spec.signerName: Invalid value: "signer": must be a fully qualified domain and path of the form 'example.com/signer-name'`])
  r = await s.request('POST', CSRS, good('signer2', { signerName: 'example/Signer' }))
  t.equal(r.status, 422, r.text)
  t.equal(causes(r)[0], 'spec.signerName: Invalid value: "example": should be a domain with at least two segments separated by dots')
  t.match(causes(r)[1], /^spec\.signerName: Invalid value: "Signer": validating label "Signer": a lowercase RFC 1123 subdomain must consist of/)
  r = await s.request('POST', CSRS, good('legacy', { signerName: 'orch.io/legacy-unknown' }))
  t.same(causes(r), ['spec.signerName: Invalid value: "orch.io/legacy-unknown": the legacy signerName is not allowed via this API version'])
  r = await s.request('POST', CSRS, good('short', { expirationSeconds: 599 }))
  t.same(causes(r), ['spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)'])
  r = await s.request('POST', CSRS, good('long-enough', { expirationSeconds: 600 }))
  t.equal(r.status, 201, r.text)
})

t.test('any name a path segment can carry, as the kubelet makes them', async (t) => {
  const r = await s.request('POST', CSRS, good('node-csr-Ab3_x-Y9zQ'))
  t.equal(r.status, 201, r.text)
  t.equal((await s.request('GET', `${CSRS}/node-csr-Ab3_x-Y9zQ`)).status, 200)
})

t.test('conditions: status values, duplicates, Approved with Denied; timestamps filled in', async (t) => {
  let r = await s.request('POST', CSRS, good('conds'))
  t.equal(r.status, 201, r.text)
  const cur = r.json
  const approval = (conditions: Obj[]) => s.request('PUT', `${CSRS}/conds/approval`, { ...cur, status: { conditions } })
  r = await approval([{ type: 'Approved', status: 'False' }, { type: 'Failed', status: 'Maybe' }, { type: 'Failed', status: 'True' }, { type: 'Denied', status: 'True' }, { type: '' }])
  t.equal(r.status, 422, r.text)
  t.same(causes(r), [
    'status.conditions[0].status: Unsupported value: "False": supported values: "True"',
    'status.conditions[1].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"',
    'status.conditions[2].type: Duplicate value: "Failed"',
    'status.conditions[3].type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive',
    'status.conditions[4].type: Required value',
    'status.conditions[4].status: Required value',
  ])
  r = await approval([{ type: 'Approved', status: 'True', reason: 'OK' }])
  t.equal(r.status, 200, r.text)
  const c = r.json.status.conditions[0]
  t.match(c.lastUpdateTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'lastUpdateTime set')
  t.equal(c.lastTransitionTime, c.lastUpdateTime, 'lastTransitionTime set')
  // A status write that keeps the condition keeps its transition time.
  const got = (await s.request('GET', `${CSRS}/conds`)).json
  r = await s.request('PUT', `${CSRS}/conds/status`, { ...got, status: { ...got.status, conditions: [{ type: 'Approved', status: 'True', reason: 'OK' }, { type: 'Failed', status: 'False', reason: 'Fine' }] } })
  t.equal(r.status, 200, r.text)
  t.equal(r.json.status.conditions[0].lastTransitionTime, c.lastTransitionTime)
  t.ok(r.json.status.conditions[1].lastUpdateTime, 'a new condition gets times too')
})

t.test('the issued certificate must be PEM CERTIFICATE blocks', async (t) => {
  let r = await s.request('POST', CSRS, good('issue'))
  t.equal(r.status, 201, r.text)
  const cur = r.json
  const setCert = (text: string) => s.request('PUT', `${CSRS}/issue/status`, { ...cur, status: { certificate: b64(text) } })
  const cert = issue(null, { cn: 'issue' }).certPem.replace(/\r\n/g, '\n')
  const invalidCert = (detail: string) => [`status.certificate: Invalid value: "<certificate data>": ${detail}`]
  r = await setCert('no pem here')
  t.equal(r.status, 422, r.text)
  t.same(causes(r), invalidCert('must contain at least one CERTIFICATE PEM block'))
  r = await setCert(cert.replace(/CERTIFICATE/g, 'CERTIFICATE1'))
  t.same(causes(r), invalidCert('only CERTIFICATE PEM blocks are allowed, found "CERTIFICATE1"'))
  r = await setCert(cert.replace('-----\n', '-----\nProc-Type: 4,ENCRYPTED\n\n'))
  t.same(causes(r), invalidCert('no PEM block headers are permitted'))
  r = await setCert('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n')
  t.same(causes(r), invalidCert('x509: malformed certificate'))
  t.notOk((await s.request('GET', `${CSRS}/issue`)).json.status?.certificate, 'nothing stored')
  // A chain, with text around it.
  r = await setCert(`issued by example\n${cert}${issue(null, { cn: 'ca' }).certPem}`)
  t.equal(r.status, 200, r.text)
})

t.test('the main resource keeps the stored spec and status', async (t) => {
  let r = await s.request('POST', CSRS, good('immutable'))
  t.equal(r.status, 201, r.text)
  const cur = r.json
  r = await s.request('PUT', `${CSRS}/immutable`, { ...cur, metadata: { ...cur.metadata, labels: { a: 'b' } }, spec: { ...cur.spec, usages: ['server auth'], signerName: 'example.com/other', request: 'Zm9v' }, status: { certificate: 'Zm9v' } })
  t.equal(r.status, 200, r.text)
  t.same(r.json.metadata.labels, { a: 'b' }, 'metadata changes')
  t.same(r.json.spec, cur.spec, 'spec as stored')
  t.notOk(r.json.status?.certificate, 'status as stored')
})
