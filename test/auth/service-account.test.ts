import t from 'tap'
import { generateKeyPairSync, createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { decodeProtectedHeader } from 'jose'
import {
  issueToken, issueLegacyToken, verifyToken, loadServiceAccountKeys, parseSigningKeyPem, parseVerificationKeysPem,
  signingKeyFrom, keyId, publicJwks, serviceAccountUserInfo, splitServiceAccountUsername, unverifiedIssuer,
  type ServiceAccountLookups, type SigningKey,
} from '../../src/auth/service-account.js'

const ISS = 'https://orch.example'
const API = [ISS]
const NOW = Date.UTC(2025, 0, 1, 12, 0, 0)
const nowS = NOW / 1000

const rsa = signingKeyFrom(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey)
const ec = signingKeyFrom(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey)
const ec384 = signingKeyFrom(generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey)
const other = signingKeyFrom(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey)
const pub = (k: SigningKey) => ({ alg: k.alg, kid: k.kid, publicKey: k.publicKey })

const store: Record<string, any> = {
  'sa/ns/builder': { metadata: { name: 'builder', namespace: 'ns', uid: 'sa-uid' } },
  'pod/ns/p1': { metadata: { name: 'p1', namespace: 'ns', uid: 'pod-uid' } },
  'secret/ns/s1': { metadata: { name: 's1', namespace: 'ns', uid: 'secret-uid' } },
  'node//n1': { metadata: { name: 'n1', uid: 'node-uid' } },
}
const lookups: ServiceAccountLookups = {
  getServiceAccount: (ns, n) => store[`sa/${ns}/${n}`],
  getSecret: (ns, n) => store[`secret/${ns}/${n}`],
  getPod: (ns, n) => store[`pod/${ns}/${n}`],
  getNode: (n) => store[`node//${n}`],
}
const base = { key: rsa, issuer: ISS, namespace: 'ns', name: 'builder', uid: 'sa-uid', audiences: API, expirationSeconds: 3600, now: NOW }
const verifyOpts = { issuers: [ISS], audiences: API, keys: [pub(rsa), pub(ec)], lookups, now: NOW + 1000 }

t.test('bound token claims and header', async (t) => {
  const { token, claims, expirationTimestamp } = await issueToken({ ...base, jti: 'j-1', boundObjectRef: { kind: 'Pod', name: 'p1', uid: 'pod-uid' }, node: { name: 'n1', uid: 'node-uid' } })
  const [h, p] = token.split('.')
  t.same(JSON.parse(Buffer.from(h, 'base64url').toString()), { alg: 'RS256', kid: rsa.kid })
  t.equal(Buffer.from(h, 'base64url').toString(), `{"alg":"RS256","kid":"${rsa.kid}"}`)
  const payloadText = Buffer.from(p, 'base64url').toString()
  t.same(JSON.parse(payloadText), {
    aud: [ISS], exp: nowS + 3600, iat: nowS, iss: ISS, jti: 'j-1', nbf: nowS, sub: 'system:serviceaccount:ns:builder',
    'orch.io': { namespace: 'ns', node: { name: 'n1', uid: 'node-uid' }, pod: { name: 'p1', uid: 'pod-uid' }, serviceaccount: { name: 'builder', uid: 'sa-uid' } },
  })
  t.same(Object.keys(JSON.parse(payloadText)), ['aud', 'exp', 'iat', 'iss', 'jti', 'nbf', 'orch.io', 'sub'], 'claims sorted like go-jose')
  t.same(claims.sub, 'system:serviceaccount:ns:builder')
  t.equal(expirationTimestamp.getTime(), NOW + 3600 * 1000)
  // kid = base64url(sha256(SPKI DER))
  t.equal(rsa.kid, createHash('sha256').update(rsa.publicKey.export({ type: 'spki', format: 'der' })).digest('base64url'))
  t.equal(keyId(rsa.publicKey), rsa.kid)
  const ecTok = await issueToken({ ...base, key: ec })
  t.equal(decodeProtectedHeader(ecTok.token).alg, 'ES256')
  t.equal(decodeProtectedHeader((await issueToken({ ...base, key: ec384 })).token).alg, 'ES384')
  t.match((await issueToken({ ...base })).claims.jti, /^[0-9a-f-]{36}$/, 'random UUID jti by default')
  const w = await issueToken({ ...base, warnAfterSeconds: 3607, boundObjectRef: { kind: 'Secret', name: 's1', uid: 'secret-uid' } })
  t.same(w.claims['orch.io'], { namespace: 'ns', serviceaccount: { name: 'builder', uid: 'sa-uid' }, secret: { name: 's1', uid: 'secret-uid' }, warnafter: nowS + 3607 })
  await t.rejects(issueToken({ ...base, boundObjectRef: { kind: 'ConfigMap', name: 'x' } }))
})

t.test('verify bound tokens', async (t) => {
  const { token } = await issueToken({ ...base, jti: 'j-1', boundObjectRef: { kind: 'Pod', name: 'p1', uid: 'pod-uid' }, node: { name: 'n1', uid: 'node-uid' } })
  const r = await verifyToken(token, verifyOpts)
  t.same(r, {
    ok: true, audiences: [ISS],
    user: {
      username: 'system:serviceaccount:ns:builder', uid: 'sa-uid', groups: ['system:serviceaccounts', 'system:serviceaccounts:ns'],
      extra: {
        'authentication.orch.io/pod-name': ['p1'], 'authentication.orch.io/pod-uid': ['pod-uid'],
        'authentication.orch.io/credential-id': ['JTI=j-1'],
        'authentication.orch.io/node-name': ['n1'], 'authentication.orch.io/node-uid': ['node-uid'],
      },
    },
  })
  // an EC-signed token verifies too; a token without a kid tries every key
  t.equal((await verifyToken((await issueToken({ ...base, key: ec })).token, verifyOpts)).ok, true)
  const plain = await issueToken({ ...base })
  t.same((await verifyToken(plain.token, verifyOpts) as any).user.extra, { 'authentication.orch.io/credential-id': [`JTI=${plain.claims.jti}`] })
})

t.test('rejections', async (t) => {
  const ok = (await issueToken({ ...base })).token
  t.same(await verifyToken('not-a-jwt', verifyOpts), { ok: false }, 'garbage: abstain')
  t.same(await verifyToken((await issueToken({ ...base, issuer: 'https://other' })).token, verifyOpts), { ok: false }, 'foreign issuer: abstain')
  const bad = await verifyToken((await issueToken({ ...base, key: other })).token, verifyOpts)
  t.equal(bad.ok, false)
  t.ok(!bad.ok && bad.error, 'wrong key: an error')
  // tampered payload
  const [h, , s] = ok.split('.')
  const forged = Buffer.from(JSON.stringify({ iss: ISS, sub: 'system:serviceaccount:ns:admin', aud: API })).toString('base64url')
  const f = await verifyToken(`${h}.${forged}.${s}`, verifyOpts)
  t.ok(!f.ok && f.error)
  // alg confusion: an HS256 token with the public key as secret is refused
  const hs = Buffer.from(JSON.stringify({ alg: 'HS256', kid: rsa.kid })).toString('base64url')
  t.ok(!(await verifyToken(`${hs}.${ok.split('.')[1]}.abc`, verifyOpts)).ok)
  // audiences
  const aud = await verifyToken((await issueToken({ ...base, audiences: ['vault'] })).token, verifyOpts)
  t.same(aud, { ok: false, error: `token audiences ["vault"] is invalid for the target audiences ["${ISS}"]` })
  const aud2 = await verifyToken((await issueToken({ ...base, audiences: ['vault', 'x'] })).token, { ...verifyOpts, requestedAudiences: ['vault'] })
  t.same(aud2.ok && aud2.audiences, ['vault'])
  // time: exp, nbf, iat with a minute of leeway
  const exp = (await issueToken({ ...base, expirationSeconds: 600 })).token
  t.equal((await verifyToken(exp, { ...verifyOpts, now: NOW + 659_000 })).ok, true, 'within leeway')
  t.same(await verifyToken(exp, { ...verifyOpts, now: NOW + 661_000 }), { ok: false, error: 'service account token has expired' })
  t.same(await verifyToken(exp, { ...verifyOpts, now: NOW - 61_000 }), { ok: false, error: 'service account token is not valid yet' })
  // live objects
  const gone = await verifyToken((await issueToken({ ...base, name: 'ghost' })).token, verifyOpts)
  t.same(gone, { ok: false, error: 'serviceaccounts "ghost" not found' })
  const uid = await verifyToken((await issueToken({ ...base, uid: 'old-uid' })).token, verifyOpts)
  t.same(uid, { ok: false, error: 'service account UID (sa-uid) does not match claim (old-uid)' })
  const pod = await verifyToken((await issueToken({ ...base, boundObjectRef: { kind: 'Pod', name: 'p1', uid: 'stale' } })).token, verifyOpts)
  t.same(pod, { ok: false, error: 'pod UID (pod-uid) does not match service account pod ref claim (stale)' })
  const podGone = await verifyToken((await issueToken({ ...base, boundObjectRef: { kind: 'Pod', name: 'p9', uid: 'x' } })).token, verifyOpts)
  t.same(podGone, { ok: false, error: 'service account token has been invalidated' }, 'a bound pod that is gone invalidates the token, without naming the lookup (upstream podValidate)')
  const sec = await verifyToken((await issueToken({ ...base, boundObjectRef: { kind: 'Secret', name: 's1', uid: 'stale' } })).token, verifyOpts)
  t.same(sec, { ok: false, error: 'secret UID (secret-uid) does not match service account secret ref claim (stale)' })
  const node = await verifyToken((await issueToken({ ...base, boundObjectRef: { kind: 'Node', name: 'n1', uid: 'stale' } })).token, verifyOpts)
  t.same(node, { ok: false, error: 'node UID (node-uid) does not match service account node ref claim (stale)' })
  const nodeOk = await verifyToken((await issueToken({ ...base, boundObjectRef: { kind: 'Node', name: 'n1', uid: 'node-uid' } })).token, verifyOpts)
  t.same(nodeOk.ok && nodeOk.user.extra?.['authentication.orch.io/node-name'], ['n1'])
  // deleted more than the leeway ago
  store['sa/ns/dying'] = { metadata: { name: 'dying', uid: 'd', deletionTimestamp: new Date(NOW - 120_000).toISOString() } }
  t.same(await verifyToken((await issueToken({ ...base, name: 'dying', uid: 'd' })).token, verifyOpts), { ok: false, error: 'service account token has been invalidated' })
  store['sa/ns/dying'].metadata.deletionTimestamp = new Date(NOW + 1000).toISOString()
  t.equal((await verifyToken((await issueToken({ ...base, name: 'dying', uid: 'd' })).token, verifyOpts)).ok, true, 'recent deletion tolerated')
  // without lookups: signature and claims only
  t.equal((await verifyToken((await issueToken({ ...base, name: 'ghost' })).token, { ...verifyOpts, lookups: undefined })).ok, true)
})

t.test('legacy tokens', async (t) => {
  const token = await issueLegacyToken({ key: rsa, namespace: 'ns', serviceAccountName: 'builder', serviceAccountUID: 'sa-uid', secretName: 'builder-token' })
  t.equal(unverifiedIssuer(token), 'kubernetes/serviceaccount')
  const payload = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString())
  t.same(payload, {
    iss: 'kubernetes/serviceaccount',
    'orch.io/serviceaccount/namespace': 'ns',
    'orch.io/serviceaccount/secret.name': 'builder-token',
    'orch.io/serviceaccount/service-account.name': 'builder',
    'orch.io/serviceaccount/service-account.uid': 'sa-uid',
    sub: 'system:serviceaccount:ns:builder',
  })
  store['secret/ns/builder-token'] = { metadata: { name: 'builder-token', uid: 'x' }, type: 'orch.io/service-account-token', data: { token: Buffer.from(token).toString('base64') } }
  const r = await verifyToken(token, verifyOpts)
  t.same(r, {
    ok: true, audiences: API, legacySecret: { namespace: 'ns', name: 'builder-token' },
    user: { username: 'system:serviceaccount:ns:builder', uid: 'sa-uid', groups: ['system:serviceaccounts', 'system:serviceaccounts:ns'] },
  })
  t.same(await verifyToken(token, { ...verifyOpts, legacy: false }), { ok: false }, 'legacy disabled: abstain')
  // the secret no longer holds this token
  store['secret/ns/builder-token'].data.token = Buffer.from('other').toString('base64')
  t.same(await verifyToken(token, verifyOpts), { ok: false, error: "Token does not match server's copy" })
  t.equal((await verifyToken(token, { ...verifyOpts, serviceAccountLookup: false })).ok, true, '--service-account-lookup=false')
  delete store['secret/ns/builder-token']
  t.same(await verifyToken(token, verifyOpts), { ok: false, error: 'Token has been invalidated' })
  store['secret/ns/builder-token'] = { metadata: { name: 'builder-token', labels: { 'orch.io/legacy-token-invalid-since': '2024-01-01' } }, data: { token: Buffer.from(token).toString('base64') } }
  t.same(await verifyToken(token, verifyOpts), { ok: false, error: 'Token has been invalidated' })
  // a token whose sub disagrees with its claims
  const lie = await issueLegacyToken({ key: rsa, namespace: 'ns', serviceAccountName: 'builder', serviceAccountUID: 'sa-uid', secretName: 's' })
  const [h, , s] = lie.split('.')
  t.ok(!(await verifyToken(`${h}.${Buffer.from('{}').toString('base64url')}.${s}`, verifyOpts)).ok)
  t.same(splitServiceAccountUsername('system:serviceaccount:a:b'), { namespace: 'a', name: 'b' })
  t.equal(splitServiceAccountUsername('system:serviceaccount:a:b:c'), undefined)
  // legacy tokens are implicitly for the API audiences: a request for another audience fails
  store['secret/ns/builder-token'] = { metadata: { name: 'builder-token' }, data: { token: Buffer.from(token).toString('base64') } }
  t.same(await verifyToken(token, { ...verifyOpts, requestedAudiences: ['vault'] }), { ok: false, error: `token audiences ["${ISS}"] is invalid for the target audiences ["vault"]` })
})

t.test('user info', async (t) => {
  t.same(serviceAccountUserInfo({ namespace: 'a', name: 'b', uid: 'u' }), { username: 'system:serviceaccount:a:b', uid: 'u', groups: ['system:serviceaccounts', 'system:serviceaccounts:a'] })
  t.same(serviceAccountUserInfo({ namespace: 'a', name: 'b', uid: 'u', podName: 'p' }).extra, undefined, 'pod needs name and uid')
  t.same(serviceAccountUserInfo({ namespace: 'a', name: 'b', uid: 'u', nodeUID: 'x' }).extra, undefined, 'node uid needs the name')
})

t.test('key files', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sa-keys-'))
  // generated when nothing is given, and reused afterwards
  const g1 = loadServiceAccountKeys({ dataDir: join(dir, 'data') })
  t.equal(g1.generated, true)
  t.equal(g1.signing.alg, 'RS256')
  t.equal(statSync(join(dir, 'data', 'sa.key')).mode & 0o777, 0o600)
  const g2 = loadServiceAccountKeys({ dataDir: join(dir, 'data') })
  t.equal(g2.generated, false)
  t.equal(g2.signing.kid, g1.signing.kid)
  t.same(g2.verification.map((k) => k.kid), [g1.signing.kid])
  // explicit signing key + several verification files (public keys, private keys, PKCS#1, SEC1)
  const { privateKey: ecPriv, publicKey: ecPub } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const { privateKey: rsaPriv } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  writeFileSync(join(dir, 'signing.pem'), ecPriv.export({ type: 'sec1', format: 'pem' }))
  writeFileSync(join(dir, 'old.pub'), ecPub.export({ type: 'spki', format: 'pem' }))
  writeFileSync(join(dir, 'multi.pem'), String(rsaPriv.export({ type: 'pkcs1', format: 'pem' })) + String(rsa.publicKey.export({ type: 'pkcs1', format: 'pem' })))
  const k = loadServiceAccountKeys({ dataDir: join(dir, 'data2'), signingKeyFile: join(dir, 'signing.pem'), keyFiles: [join(dir, 'old.pub'), join(dir, 'multi.pem')] })
  t.equal(k.signing.alg, 'ES256')
  t.equal(k.generated, false)
  t.same(k.verification.map((v) => v.kid), [keyId(ecPub), signingKeyFrom(rsaPriv).kid, rsa.kid], 'ec key appears once (it is also the signing key)')
  // the first private key among the key files signs when no signing file is given
  const k2 = loadServiceAccountKeys({ dataDir: join(dir, 'data3'), keyFiles: [join(dir, 'old.pub'), join(dir, 'multi.pem')] })
  t.equal(k2.signing.kid, signingKeyFrom(rsaPriv).kid)
  // the TLS key verifies when no key file is given
  const k3 = loadServiceAccountKeys({ dataDir: join(dir, 'data'), tlsPrivateKeyFile: join(dir, 'signing.pem') })
  t.same(k3.verification.map((v) => v.kid), [keyId(ecPub), g1.signing.kid])
  t.throws(() => parseSigningKeyPem(readFileSync(join(dir, 'old.pub'), 'utf8')), /no RSA or ECDSA private key/)
  t.throws(() => parseVerificationKeysPem('nothing'), /no RSA or ECDSA keys/)
  const ed = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
  t.throws(() => parseSigningKeyPem(ed), /unsupported key type/)
  // round trip through files
  const tok = await issueToken({ ...base, key: k.signing })
  t.equal((await verifyToken(tok.token, { ...verifyOpts, keys: k.verification })).ok, true)
  const jwks = await publicJwks(k.verification)
  t.same(jwks.keys.map((j) => [j.use, j.kty, j.kid, j.alg]), [['sig', 'EC', keyId(ecPub), 'ES256'], ['sig', 'RSA', signingKeyFrom(rsaPriv).kid, 'RS256'], ['sig', 'RSA', rsa.kid, 'RS256']])
  t.notOk(jwks.keys.some((j) => 'd' in j), 'no private parts')
})
