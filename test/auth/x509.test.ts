// Unit tests of src/auth/x509.ts: CA bundles, chain verification, the certificate user, the request-header user and their order.
import t from 'tap'
import { X509Certificate } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  parseCaBundle, loadCaBundle, verifyChain, certificateUser, requestHeaderUser, clearRequestHeaders, authenticatePeer,
  PeerCertificate, CaBundleError, certAuthnData, requestHeaderWarnings, type RequestHeaderConfig, type CertAuthnConfig,
} from '../../src/auth/x509.js'
import { issue, makeCa, fingerprint } from '../helpers/certs.js'

const x = (pem: string): X509Certificate => new X509Certificate(pem)
const HOUR = 3600_000
const ca = makeCa('ca')
const other = makeCa('other')
const bundle = parseCaBundle('client-ca-bundle', '/ca.pem', ca.certPem)

t.test('CA bundles: every CERTIFICATE block; upstream texts for an empty, certificate-less or missing file', async (t) => {
  const two = parseCaBundle('client-ca-bundle', '/x', `junk\n${ca.certPem}${ca.keyPem}${other.certPem}`)
  t.equal(two.roots.length, 2)
  t.equal(two.name, 'client-ca-bundle::/x')
  t.throws(() => parseCaBundle('client-ca-bundle', '/x', ''), new CaBundleError('missing content for CA bundle "client-ca-bundle::/x"'))
  t.throws(() => parseCaBundle('request-header', '/x', ca.keyPem), new CaBundleError('error loading CA bundle for "request-header::/x": data does not contain any valid RSA or ECDSA certificates'))
  t.throws(() => parseCaBundle('request-header', '/x', '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'), /^error loading CA bundle for "request-header::\/x": /)
  t.throws(() => loadCaBundle('client-ca-bundle', '/nonexistent/ca.pem'), new CaBundleError('open /nonexistent/ca.pem: no such file or directory'))
  const dir = mkdtempSync(join(tmpdir(), 'x509-unit-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'ca.pem'), ca.certPem)
  t.equal(loadCaBundle('client-ca-bundle', join(dir, 'ca.pem')).roots.length, 1)
  t.equal(certAuthnData({ clientCaFile: '', requestheaderClientCaFile: '', requestheaderAllowedNames: [], requestheaderUsernameHeaders: [], requestheaderUidHeaders: [], requestheaderGroupHeaders: [], requestheaderExtraHeadersPrefix: [], featureGates: {} }), undefined)
  t.throws(() => certAuthnData({ clientCaFile: join(dir, 'none.pem'), requestheaderClientCaFile: '', requestheaderAllowedNames: [], requestheaderUsernameHeaders: [], requestheaderUidHeaders: [], requestheaderGroupHeaders: [], requestheaderExtraHeadersPrefix: [], featureGates: {} }),
    new CaBundleError(`--client-ca-file: open ${join(dir, 'none.pem')}: no such file or directory`))
  const d = certAuthnData({ clientCaFile: '', requestheaderClientCaFile: join(dir, 'ca.pem'), requestheaderAllowedNames: ['p'], requestheaderUsernameHeaders: [' X-Remote-User'], requestheaderUidHeaders: [], requestheaderGroupHeaders: ['X-Remote-Group'], requestheaderExtraHeadersPrefix: ['X-Remote-Extra-'], featureGates: {} })!
  t.same(d.requestHeader!.usernameHeaders, ['x-remote-user'], 'header names trimmed and lower-cased')
  t.same(d.caPems, [ca.certPem])
})

t.test('chain verification as Go does it with KeyUsages [ClientAuth]', async (t) => {
  const now = Date.now()
  const leaf = issue(ca, { cn: 'a' })
  const ok = verifyChain(x(leaf.certPem), [], bundle.roots, now)
  t.equal(ok.ok, true)
  t.same(verifyChain(x(issue(other, { cn: 'a' }).certPem), [], bundle.roots, now), { ok: false, error: 'x509: certificate signed by unknown authority' })
  const expired = issue(ca, { cn: 'a', notBefore: new Date(now - 3 * HOUR), notAfter: new Date(now - HOUR) })
  const e = verifyChain(x(expired.certPem), [], bundle.roots, now)
  t.equal(e.ok, false)
  t.match((e as { error: string }).error, /^x509: certificate has expired or is not yet valid: current time \S+Z is after \S+Z$/)
  t.same(verifyChain(x(issue(ca, { cn: 'a', eku: 'server' }).certPem), [], bundle.roots, now), { ok: false, error: 'x509: certificate specifies an incompatible key usage' })
  t.equal(verifyChain(x(issue(ca, { cn: 'a', eku: 'none' }).certPem), [], bundle.roots, now).ok, true, 'no EKU: any use')
  // Intermediates: only those the peer sent, and only CA certificates; their EKUs constrain the chain too.
  const inter = issue(ca, { cn: 'inter', ca: true })
  const viaInter = issue(inter, { cn: 'b' })
  t.equal(verifyChain(x(viaInter.certPem), [x(inter.certPem)], bundle.roots, now).ok, true)
  t.equal(verifyChain(x(viaInter.certPem), [], bundle.roots, now).ok, false)
  const notCa = issue(ca, { cn: 'not-a-ca' })
  const underNotCa = issue(notCa, { cn: 'c' })
  t.equal(verifyChain(x(underNotCa.certPem), [x(notCa.certPem)], bundle.roots, now).ok, false, 'an intermediate must be a CA')
  const expiredInter = issue(ca, { cn: 'old-inter', ca: true, notBefore: new Date(now - 3 * HOUR), notAfter: new Date(now - HOUR) })
  t.equal(verifyChain(x(issue(expiredInter, { cn: 'd' }).certPem), [x(expiredInter.certPem)], bundle.roots, now).ok, false, 'every certificate in its validity window')
  // The validity window of a verified chain is the intersection.
  const v = verifyChain(x(viaInter.certPem), [x(inter.certPem)], bundle.roots, now)
  t.ok(v.ok && v.validUntil <= Date.parse(x(viaInter.certPem).validTo))
  // A peer keeps its verdict per bundle while valid.
  const peer = new PeerCertificate(x(leaf.certPem), [])
  t.equal(peer.verify(bundle, now), peer.verify(bundle, now + 1000))
  t.equal(peer.verify(bundle, Date.parse(x(leaf.certPem).validTo) + 1000).ok, false, 're-checked past the end of its validity')
})

t.test('the certificate user: CN, every O in order, the UID element, the credential id', async (t) => {
  const c = issue(ca, { cn: 'alice', orgs: ['b-team', 'a-team'], oids: [['1.3.6.1.4.1.57683.2', 'u-1']] })
  const p = new PeerCertificate(x(c.certPem), [])
  t.same(certificateUser(p, true), { user: { username: 'alice', uid: 'u-1', groups: ['b-team', 'a-team'], extra: { 'authentication.orch.io/credential-id': [`X509SHA256=${fingerprint(c.certPem)}`] } } })
  t.equal(certificateUser(p, false).user!.uid, '', 'the gate off: no UID')
  t.same(certificateUser(new PeerCertificate(x(issue(ca, { orgs: ['x'] }).certPem), []), true), {}, 'no CN: not authenticated, no error')
  const two = new PeerCertificate(x(issue(ca, { cn: 'b', oids: [['1.3.6.1.4.1.57683.2', 'u1'], ['1.3.6.1.4.1.57683.2', 'u2']] }).certPem), [])
  t.same(certificateUser(two, true), { error: 'expected 1 UID, but found multiple: [u1 u2]' })
})

const rh: RequestHeaderConfig = {
  ca: parseCaBundle('request-header', '/p.pem', other.certPem), allowedNames: ['front-proxy'],
  usernameHeaders: ['x-remote-user', 'x-user'], uidHeaders: ['x-remote-uid'], groupHeaders: ['x-remote-group', 'x-group'], extraPrefixes: ['x-remote-extra-', 'x-extra-'],
}

t.test('the request-header user: first non-empty user header, every group line, extra keys lower-cased and percent-decoded', async (t) => {
  const u = requestHeaderUser(rh, [
    'X-Remote-User', '', 'X-User', 'bob', 'X-User', 'ignored', 'X-Remote-Uid', 'u-bob',
    'X-Remote-Group', 'a, b', 'X-Group', 'c', 'X-Remote-Group', '', 'X-Remote-Group', 'd',
    'X-Remote-Extra-Example.com%2FScope', 'one', 'x-remote-extra-example.com%2fscope', 'two', 'X-Extra-Bad%zz', 'v', 'X-Extra-%E2%9C%93', 'check',
    'Other', 'x',
  ])
  t.same(u, { username: 'bob', uid: 'u-bob', groups: ['a, b', 'd', 'c'], extra: { 'example.com/scope': ['one', 'two'], 'bad%zz': ['v'], '✓': ['check'] } })
  t.equal(requestHeaderUser(rh, ['X-Remote-Group', 'g']), undefined, 'no user: nothing')
  t.same(requestHeaderUser(rh, ['x-remote-user', 'eve']), { username: 'eve', uid: '', groups: [] })
  const headers: Record<string, string> = { 'x-remote-user': 'bob', 'x-user': 'b', 'x-remote-group': 'a', 'x-remote-extra-k': 'v', 'x-extra-k2': 'v', 'x-remote-uid': 'u', accept: 'a' }
  clearRequestHeaders(rh, headers)
  t.same(headers, { accept: 'a' })
})

t.test('authenticatePeer: the proxy first, then the certificate; errors kept only when nothing authenticates', async (t) => {
  const now = Date.now()
  const proxy = new PeerCertificate(x(issue(other, { cn: 'front-proxy' }).certPem), [])
  const stray = new PeerCertificate(x(issue(other, { cn: 'stray' }).certPem), [])
  const client = new PeerCertificate(x(issue(ca, { cn: 'alice', orgs: ['dev'] }).certPem), [])
  const noCn = new PeerCertificate(x(issue(ca, { orgs: ['dev'] }).certPem), [])
  const both: CertAuthnConfig = { clientCA: bundle, requestHeader: rh, uidFromCert: true }
  const clientOnly: CertAuthnConfig = { clientCA: bundle, uidFromCert: true }
  const hdrs = ['X-Remote-User', 'bob']
  const h = (): Record<string, string> => ({ 'x-remote-user': 'bob' })
  const viaProxy = h()
  t.same(authenticatePeer(both, { cert: proxy, rawHeaders: hdrs }, viaProxy, now), { user: { username: 'bob', uid: '', groups: [] } })
  t.same(viaProxy, {}, 'the identity headers are removed after use')
  t.equal(authenticatePeer(both, { cert: client, rawHeaders: hdrs }, h(), now).user!.username, 'alice', 'a client certificate: its own user, the headers ignored')
  t.same(authenticatePeer(both, { cert: stray, rawHeaders: hdrs }, h(), now).error,
    `[x509: subject with cn=stray is not in the allowed list, verifying certificate ${stray.identifier} failed: x509: certificate signed by unknown authority]`)
  t.same(authenticatePeer({ ...both, requestHeader: { ...rh, allowedNames: [] } }, { cert: stray, rawHeaders: hdrs }, h(), now).user?.username, 'bob', 'no allowed names: any certificate of the CA')
  t.same(authenticatePeer(clientOnly, { cert: noCn, rawHeaders: [] }, {}, now), {}, 'no CN and no request-header CA: nothing, no error (anonymous or a token may follow)')
  t.match(authenticatePeer(both, { cert: noCn, rawHeaders: [] }, {}, now).error, 'x509: certificate signed by unknown authority', 'the request-header CA refuses it: an error')
  t.same(authenticatePeer(clientOnly, { cert: proxy, rawHeaders: hdrs }, h(), now).error, `verifying certificate ${proxy.identifier} failed: x509: certificate signed by unknown authority`)
})

t.test('start-up warnings when a header list leaves out the standard name', async (t) => {
  t.same(requestHeaderWarnings({ requestheaderUsernameHeaders: ['X-Remote-User'], requestheaderGroupHeaders: ['x-remote-group'], requestheaderExtraHeadersPrefix: ['X-Remote-Extra-'] }), [])
  t.same(requestHeaderWarnings({ requestheaderUsernameHeaders: ['X-User'], requestheaderGroupHeaders: ['X-Groups'], requestheaderExtraHeadersPrefix: ['X-Extra-'] }), [
    '--requestheader-username-headers is set without specifying the standard X-Remote-User header - API aggregation will not work',
    '--requestheader-group-headers is set without specifying the standard X-Remote-Group header - API aggregation will not work',
    '--requestheader-extra-headers-prefix is set without specifying the standard X-Remote-Extra- header prefix - API aggregation will not work',
  ])
})
