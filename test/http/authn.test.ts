// Black-box authentication: the static token file, anonymous, bad tokens, service accounts (TokenRequest, bound and
// legacy tokens, revocation, key and issuer flags), bootstrap tokens, TokenReview and impersonation.
import t from 'tap'
import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type TestServer, type Reply } from '../helpers/server.js'
import { issueToken, signingKeyFrom } from '../../src/auth/service-account.js'

type Obj = Record<string, any>

const work = mkdtempSync(join(tmpdir(), 'orch-authn-'))
const tokenFile = join(work, 'tokens.csv')
writeFileSync(tokenFile, [
  'alice-token,alice,u-alice,"dev,ops"',
  'bob-token,bob,u-bob',
  '"quoted,token",carol,u-carol,"a ""b"" c",ignored-column',
  ',nobody,u-nobody',
  '',
].join('\n'))

let s: TestServer
t.before(async () => { s = await startServer({ args: ['--token-auth-file', tokenFile, '--enable-bootstrap-token-auth'] }) })
t.teardown(async () => {
  await s?.stop()
  rmSync(work, { recursive: true, force: true })
})

const SSR = '/apis/authentication.orch.io/v1/selfsubjectreviews'

async function whoami(token: string | null, headers: Record<string, string> = {}): Promise<Reply> {
  return s.requestAs(token, 'POST', SSR, { apiVersion: 'authentication.orch.io/v1', kind: 'SelfSubjectReview' }, headers)
}

const UNAUTHORIZED = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 }

function claims(jwt: string): Obj { return JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8')) }

async function poll<T>(fn: () => Promise<T | undefined>, ms = 10_000): Promise<T | undefined> {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v !== undefined || Date.now() > end) return v
    await new Promise((r) => setTimeout(r, 50))
  }
}

// ---------------------------------------------------------------- static tokens, anonymous, bad tokens

t.test('static token file: users, uids, quoted groups, system:authenticated', async (t) => {
  const a = await whoami('alice-token')
  t.equal(a.status, 201)
  t.same(a.json.status.userInfo, { username: 'alice', uid: 'u-alice', groups: ['dev', 'ops', 'system:authenticated'] })
  t.equal(a.json.apiVersion, 'authentication.orch.io/v1')
  t.match(a.json.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
  const b = await whoami('bob-token')
  t.same(b.json.status.userInfo, { username: 'bob', uid: 'u-bob', groups: ['system:authenticated'] })
  // A quoted token with a comma, quotes inside a quoted group, and a fifth column that is ignored.
  const c = await whoami('quoted,token')
  t.equal(c.status, 201)
  t.same(c.json.status.userInfo, { username: 'carol', uid: 'u-carol', groups: ['a "b" c', 'system:authenticated'] })
  // The row with an empty token authenticates nobody.
  t.equal((await whoami('')).status, 403, 'an empty bearer token is no credential: anonymous')
})

t.test('the admin token is in system:masters', async (t) => {
  const r = await whoami(s.adminToken)
  t.same(r.json.status.userInfo.groups, ['system:masters', 'system:authenticated'])
})

t.test('no credentials: system:anonymous, which may read only the public info', async (t) => {
  for (const p of ['/version', '/healthz', '/livez', '/readyz']) t.equal((await s.requestAs(null, 'GET', p)).status, 200, `anonymous GET ${p}`)
  const ns = await s.requestAs(null, 'GET', '/api/v1/namespaces')
  t.equal(ns.status, 403)
  t.same(ns.json, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: 'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope',
    reason: 'Forbidden', details: { kind: 'namespaces' }, code: 403,
  })
  const api = await s.requestAs(null, 'GET', '/api')
  t.equal(api.status, 403, 'discovery needs authentication')
  t.equal(api.json.message, 'forbidden: User "system:anonymous" cannot get path "/api"')
  const me = await whoami(null)
  t.equal(me.status, 403, 'anonymous may not create a SelfSubjectReview (system:basic-user is for authenticated users)')
})

t.test('a presented but invalid bearer token is 401, never anonymous', async (t) => {
  for (const tok of ['nope', 'a.b.c', 'abcdef.0123456789abcdef']) {
    const r = await s.requestAs(tok, 'GET', '/version')
    t.equal(r.status, 401, `token ${tok}`)
    t.same(r.json, UNAUTHORIZED)
  }
  const lower = await s.request('GET', '/version', undefined, { authorization: 'bearer nope' })
  t.equal(lower.status, 401, 'the scheme is case-insensitive')
  const basic = await s.request('GET', '/version', undefined, { authorization: 'Basic YWxpY2U6c2VjcmV0' })
  t.equal(basic.status, 200, 'another scheme is no bearer token: anonymous')
  // Only the second space-separated part is the token: after two spaces it is empty, which is no credential.
  const twoSpaces = await s.request('GET', '/api/v1/namespaces', undefined, { authorization: `Bearer  ${s.adminToken}` })
  t.equal(twoSpaces.status, 403, 'an empty token part: anonymous')
  const warned = await s.request('GET', '/version', undefined, { authorization: `Bearer  ${s.adminToken}` })
  t.equal(warned.status, 200)
  t.equal(warned.headers['warning'], '299 - "the provided Authorization header contains extra space before the bearer token, and is ignored"', 'with upstream\'s warning')
  t.equal((await s.request('GET', '/version', undefined, { authorization: 'Basic YWxpY2U6c2VjcmV0' })).headers['warning'], undefined, 'no warning for another scheme')
})

// ---------------------------------------------------------------- service accounts

async function createSa(name: string, ns = 'default'): Promise<Obj> {
  const r = await s.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name } })
  if (r.status !== 201) throw new Error(`sa ${name}: ${r.status} ${r.text}`)
  return r.json
}

async function tokenFor(name: string, spec: Obj = {}, ns = 'default'): Promise<Reply> {
  return s.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts/${name}/token`, { apiVersion: 'authentication.orch.io/v1', kind: 'TokenRequest', spec })
}

t.test('TokenRequest: defaults, the token and the user it stands for', async (t) => {
  const sa = await createSa('bot')
  const before = Math.floor(Date.now() / 1000)
  const r = await tokenFor('bot')
  t.equal(r.status, 201)
  t.equal(r.json.kind, 'TokenRequest')
  t.equal(r.json.apiVersion, 'authentication.orch.io/v1')
  t.equal(r.json.spec.expirationSeconds, 3600, 'default lifetime')
  t.same(r.json.spec.audiences, ['https://orch.default.svc.cluster.local'], 'default audiences: the API audiences (the issuer)')
  const token: string = r.json.status.token
  const c = claims(token)
  t.equal(c.iss, 'https://orch.default.svc.cluster.local')
  t.equal(c.sub, 'system:serviceaccount:default:bot')
  t.equal(c.exp - c.iat, 3600)
  t.ok(c.iat >= before - 1)
  t.same(c['orch.io'], { namespace: 'default', serviceaccount: { name: 'bot', uid: sa.metadata.uid } })
  t.equal(Date.parse(r.json.status.expirationTimestamp) / 1000 - Date.parse(r.json.metadata.creationTimestamp) / 1000, 3600)
  const me = await whoami(token)
  t.equal(me.status, 201)
  t.same(me.json.status.userInfo, {
    username: 'system:serviceaccount:default:bot', uid: sa.metadata.uid,
    groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'],
    extra: { 'authentication.orch.io/credential-id': [`JTI=${c.jti}`] },
  })
  const pods = await s.requestAs(token, 'GET', '/api/v1/namespaces/default/pods')
  t.equal(pods.status, 403, 'a service account holds no permissions of its own')
  t.equal(pods.json.message, 'pods is forbidden: User "system:serviceaccount:default:bot" cannot list resource "pods" in API group "" in the namespace "default"')
})

t.test('TokenRequest validation', async (t) => {
  await createSa('val')
  const short = await tokenFor('val', { expirationSeconds: 599 })
  t.equal(short.status, 422)
  t.equal(short.json.reason, 'Invalid')
  t.equal(short.json.message, 'TokenRequest.authentication.orch.io "val" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes')
  const ok = await tokenFor('val', { expirationSeconds: 600 })
  t.equal(ok.status, 201)
  t.equal(claims(ok.json.status.token).exp - claims(ok.json.status.token).iat, 600)
  const missing = await tokenFor('no-such-account')
  t.equal(missing.status, 404)
  t.equal(missing.json.message, 'serviceaccounts "no-such-account" not found')
  const mismatch = await s.request('POST', '/api/v1/namespaces/default/serviceaccounts/val/token', { kind: 'TokenRequest', apiVersion: 'authentication.orch.io/v1', metadata: { name: 'other' }, spec: {} })
  t.equal(mismatch.status, 422, 'the token endpoint\'s own check (see the TokenRequest naming test)')
  const wrongKind = await s.request('POST', '/api/v1/namespaces/default/serviceaccounts/val/token', { kind: 'Pod', apiVersion: 'v1' })
  t.equal(wrongKind.status, 400)
  const get = await s.request('GET', '/api/v1/namespaces/default/serviceaccounts/val/token')
  t.equal(get.status, 405, 'the token sub-resource is create-only')
})

t.test('audiences: a token for other audiences is not good for the API, TokenReview checks them', async (t) => {
  await createSa('aud')
  const r = await tokenFor('aud', { audiences: ['vault', 'other'] })
  t.equal(r.status, 201)
  const token = r.json.status.token
  t.same(claims(token).aud, ['vault', 'other'])
  t.equal((await whoami(token)).status, 401, 'not for the API audiences')
  const review = await s.request('POST', '/apis/authentication.orch.io/v1/tokenreviews', { kind: 'TokenReview', apiVersion: 'authentication.orch.io/v1', spec: { token, audiences: ['vault'] } })
  t.equal(review.status, 201)
  t.equal(review.json.status.authenticated, true)
  t.same(review.json.status.audiences, ['vault'])
  t.equal(review.json.status.user.username, 'system:serviceaccount:default:aud')
  const wrong = await s.request('POST', '/apis/authentication.orch.io/v1/tokenreviews', { kind: 'TokenReview', apiVersion: 'authentication.orch.io/v1', spec: { token, audiences: ['nobody'] } })
  t.equal(wrong.status, 201)
  t.notOk(wrong.json.status.authenticated)
  t.match(wrong.json.status.error, /token audiences \["vault" "other"\] is invalid for the target audiences \["nobody"\]/)
})

t.test('TokenReview: static tokens, bad tokens, a missing token', async (t) => {
  const ok = await s.request('POST', '/apis/authentication.orch.io/v1/tokenreviews', { kind: 'TokenReview', apiVersion: 'authentication.orch.io/v1', spec: { token: 'alice-token' } })
  t.equal(ok.status, 201)
  t.same(ok.json.status, { authenticated: true, user: { username: 'alice', uid: 'u-alice', groups: ['dev', 'ops', 'system:authenticated'] }, audiences: ['https://orch.default.svc.cluster.local'] })
  t.equal(ok.json.spec.token, 'alice-token', 'the spec is echoed')
  const bad = await s.request('POST', '/apis/authentication.orch.io/v1/tokenreviews', { kind: 'TokenReview', apiVersion: 'authentication.orch.io/v1', spec: { token: 'nope' } })
  t.equal(bad.status, 201)
  t.notOk(bad.json.status.authenticated)
  t.equal(bad.json.status.error, 'invalid bearer token')
  const none = await s.request('POST', '/apis/authentication.orch.io/v1/tokenreviews', { kind: 'TokenReview', apiVersion: 'authentication.orch.io/v1', spec: {} })
  t.equal(none.status, 400)
  t.equal(none.json.message, 'token is required for TokenReview in authentication')
  const alice = await s.requestAs('alice-token', 'POST', '/apis/authentication.orch.io/v1/tokenreviews', { kind: 'TokenReview', apiVersion: 'authentication.orch.io/v1', spec: { token: 'bob-token' } })
  t.equal(alice.status, 403, 'creating a TokenReview needs system:auth-delegator or the like')
})

t.test('deleting the service account revokes its tokens on the next request', async (t) => {
  await createSa('gone')
  const token = (await tokenFor('gone')).json.status.token
  t.equal((await whoami(token)).status, 201)
  t.equal((await whoami(token)).status, 201, 'again (cached)')
  const d = await s.request('DELETE', '/api/v1/namespaces/default/serviceaccounts/gone')
  t.equal(d.status, 200)
  t.equal((await whoami(token)).status, 401, 'revoked at once')
  // Recreated under the same name: another uid, the old token stays dead.
  await createSa('gone')
  t.equal((await whoami(token)).status, 401, 'a new account of the same name does not revive it')
})

t.test('pod-bound tokens: the pod in the user, revoked with the pod; checks of the binding', async (t) => {
  await createSa('runner')
  const pod = await s.request('POST', '/api/v1/namespaces/default/pods', { metadata: { name: 'runner-pod' }, spec: { serviceAccountName: 'runner', containers: [{ name: 'c', image: 'registry.example/app:1' }] } })
  t.equal(pod.status, 201)
  const uid = pod.json.metadata.uid
  const r = await tokenFor('runner', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'runner-pod' } })
  t.equal(r.status, 201)
  t.same(r.json.spec.boundObjectRef, { kind: 'Pod', apiVersion: 'v1', name: 'runner-pod', uid })
  const token = r.json.status.token
  t.same(claims(token)['orch.io'].pod, { name: 'runner-pod', uid })
  const me = await whoami(token)
  t.same(me.json.status.userInfo.extra['authentication.orch.io/pod-name'], ['runner-pod'])
  t.same(me.json.status.userInfo.extra['authentication.orch.io/pod-uid'], [uid])

  const wrongUid = await tokenFor('runner', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'runner-pod', uid: 'not-the-uid' } })
  t.equal(wrongUid.status, 409)
  t.equal(wrongUid.json.reason, 'Conflict')
  const other = await s.request('POST', '/api/v1/namespaces/default/pods', { metadata: { name: 'other-pod' }, spec: { containers: [{ name: 'c', image: 'registry.example/app:1' }] } })
  t.equal(other.status, 201)
  const wrongSa = await tokenFor('runner', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'other-pod' } })
  t.equal(wrongSa.status, 400, 'the pod must run as the account')
  const noPod = await tokenFor('runner', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'no-pod' } })
  t.equal(noPod.status, 404)
  const badKind = await tokenFor('runner', { boundObjectRef: { kind: 'ConfigMap', apiVersion: 'v1', name: 'x' } })
  t.equal(badKind.status, 400)

  // The extended lifetime of projected tokens: exactly 3607 s with the API audiences gets a year and warnafter.
  const ext = await tokenFor('runner', { expirationSeconds: 3607, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'runner-pod' } })
  const ec = claims(ext.json.status.token)
  t.equal(ec.exp - ec.iat, 365 * 24 * 3600, 'extended to a year')
  t.equal(ec['orch.io'].warnafter, ec.iat + 3607)
  t.equal(Date.parse(ext.json.status.expirationTimestamp) / 1000 - Date.parse(ext.json.metadata.creationTimestamp) / 1000, 3607, 'the answer reports the requested lifetime')

  t.equal((await s.request('DELETE', '/api/v1/namespaces/default/pods/runner-pod')).status, 200)
  t.equal((await whoami(token)).status, 401, 'the token died with its pod')
})

t.test('secret-bound tokens die with the secret', async (t) => {
  await createSa('sbound')
  const sec = await s.request('POST', '/api/v1/namespaces/default/secrets', { metadata: { name: 'bound-secret' }, data: { a: 'YQ==' } })
  t.equal(sec.status, 201)
  const token = (await tokenFor('sbound', { boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 'bound-secret' } })).json.status.token
  t.equal((await whoami(token)).status, 201)
  await s.request('DELETE', '/api/v1/namespaces/default/secrets/bound-secret')
  t.equal((await whoami(token)).status, 401)
})

t.test('legacy secret-based tokens: filled by the token controller, revoked with the secret', async (t) => {
  const sa = await createSa('legacy')
  const c = await s.request('POST', '/api/v1/namespaces/default/secrets', {
    metadata: { name: 'legacy-token', annotations: { 'orch.io/service-account.name': 'legacy' } }, type: 'orch.io/service-account-token',
  })
  t.equal(c.status, 201)
  const filled = await poll(async () => {
    const r = await s.request('GET', '/api/v1/namespaces/default/secrets/legacy-token')
    return r.json?.data?.token ? r.json : undefined
  })
  t.ok(filled, 'the controller put a token into the secret')
  t.equal(filled.metadata.annotations['orch.io/service-account.uid'], sa.metadata.uid)
  t.equal(Buffer.from(filled.data.namespace, 'base64').toString(), 'default')
  const token = Buffer.from(filled.data.token, 'base64').toString()
  const cl = claims(token)
  t.equal(cl.iss, 'kubernetes/serviceaccount')
  t.equal(cl['orch.io/serviceaccount/secret.name'], 'legacy-token')
  t.equal(cl.exp, undefined, 'legacy tokens do not expire')
  const me = await whoami(token)
  t.equal(me.status, 201)
  t.same(me.json.status.userInfo, { username: 'system:serviceaccount:default:legacy', uid: sa.metadata.uid, groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'] })
  t.equal((await s.request('DELETE', '/api/v1/namespaces/default/secrets/legacy-token')).status, 200)
  t.equal((await whoami(token)).status, 401, '--service-account-lookup (default true): revoked with its secret')

  // The token secrets of an account go when the account goes (the tokens controller deletes them).
  await createSa('legacy2')
  const sec = await s.request('POST', '/api/v1/namespaces/default/secrets', {
    metadata: { name: 'legacy2-token', annotations: { 'orch.io/service-account.name': 'legacy2' } }, type: 'orch.io/service-account-token',
  })
  t.equal(sec.status, 201, sec.text)
  t.equal((await s.request('DELETE', '/api/v1/namespaces/default/serviceaccounts/legacy2')).status, 200)
  let gone = false
  for (let i = 0; i < 100 && !gone; i++) {
    gone = (await s.request('GET', '/api/v1/namespaces/default/secrets/legacy2-token')).status === 404
    if (!gone) await new Promise((r) => setTimeout(r, 50))
  }
  t.ok(gone, 'the secret of the deleted account is deleted')
})

t.test('TokenRequest naming another account in its metadata is 422 on metadata.name', async (t) => {
  await createSa('tr-name')
  const r = await s.request('POST', '/api/v1/namespaces/default/serviceaccounts/tr-name/token', { apiVersion: 'authentication.orch.io/v1', kind: 'TokenRequest', metadata: { name: 'other' }, spec: {} })
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.message, 'TokenRequest.authentication.orch.io "tr-name" is invalid: metadata.name: Invalid value: "other": must match the service account name if specified')
  const same = await s.request('POST', '/api/v1/namespaces/default/serviceaccounts/tr-name/token', { apiVersion: 'authentication.orch.io/v1', kind: 'TokenRequest', metadata: { name: 'tr-name' }, spec: {} })
  t.equal(same.status, 201, 'its own name is fine')
})

// ---------------------------------------------------------------- bootstrap tokens

const b64 = (v: string) => Buffer.from(v).toString('base64')

async function bootstrapSecret(id: string, data: Record<string, string>, type = 'bootstrap.orch.io/token'): Promise<void> {
  const body = { metadata: { name: `bootstrap-token-${id}` }, type, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])) }
  const r = await s.request('POST', '/api/v1/namespaces/orch-system/secrets', body)
  if (r.status !== 201) throw new Error(`${r.status} ${r.text}`)
}

t.test('bootstrap tokens (--enable-bootstrap-token-auth)', async (t) => {
  await bootstrapSecret('abcdef', { 'token-id': 'abcdef', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true', 'auth-extra-groups': 'system:bootstrappers:worker,system:bootstrappers:edge' })
  const me = await whoami('abcdef.0123456789abcdef')
  t.equal(me.status, 201)
  t.same(me.json.status.userInfo, { username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:bootstrappers:edge', 'system:bootstrappers:worker', 'system:authenticated'] })
  t.equal((await whoami('abcdef.0123456789abcdeX'.toLowerCase().replace('x', '0'))).status, 401, 'a wrong secret')
  t.equal((await whoami('abcdef.fedcba9876543210')).status, 401, 'a wrong secret')

  await bootstrapSecret('expire', { 'token-id': 'expire', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true', expiration: '2020-01-01T00:00:00Z' })
  t.equal((await whoami('expire.0123456789abcdef')).status, 401, 'expired')
  await bootstrapSecret('future', { 'token-id': 'future', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true', expiration: '2999-01-01T00:00:00Z' })
  t.equal((await whoami('future.0123456789abcdef')).status, 201, 'not yet expired')
  await bootstrapSecret('nouse0', { 'token-id': 'nouse0', 'token-secret': '0123456789abcdef', 'usage-bootstrap-signing': 'true' })
  t.equal((await whoami('nouse0.0123456789abcdef')).status, 401, 'not marked for authentication')
  await bootstrapSecret('badgrp', { 'token-id': 'badgrp', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true', 'auth-extra-groups': 'system:masters' })
  t.equal((await whoami('badgrp.0123456789abcdef')).status, 401, 'extra groups must be system:bootstrappers:*')
  await bootstrapSecret('opaque', { 'token-id': 'opaque', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true' }, 'Opaque')
  t.equal((await whoami('opaque.0123456789abcdef')).status, 401, 'the secret type must be bootstrap.orch.io/token')
  await s.request('DELETE', '/api/v1/namespaces/orch-system/secrets/bootstrap-token-abcdef')
  t.equal((await whoami('abcdef.0123456789abcdef')).status, 401, 'gone with its secret')
})

// ---------------------------------------------------------------- impersonation

async function grant(name: string, rules: Obj[], user: string): Promise<void> {
  const rbac = '/apis/rbac.authorization.orch.io/v1'
  const r1 = await s.request('POST', `${rbac}/clusterroles`, { metadata: { name }, rules })
  const r2 = await s.request('POST', `${rbac}/clusterrolebindings`, { metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'ClusterRole', name }, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.orch.io', name: user }] })
  if (r1.status !== 201 || r2.status !== 201) throw new Error(`grant ${name}: ${r1.status} ${r2.status}`)
}

t.test('impersonation: user, groups, uid, extra, service accounts', async (t) => {
  const u = await whoami(s.adminToken, { 'impersonate-user': 'alice' })
  t.equal(u.status, 201)
  t.same(u.json.status.userInfo, { username: 'alice', groups: ['system:authenticated'] })
  const g = await whoami(s.adminToken, { 'impersonate-user': 'alice', 'impersonate-group': 'g1', 'impersonate-uid': 'uid-1', 'Impersonate-Extra-Scopes': 'view', 'impersonate-extra-team': 'blue' })
  t.same(g.json.status.userInfo, { username: 'alice', uid: 'uid-1', groups: ['g1', 'system:authenticated'], extra: { scopes: ['view'], team: ['blue'] } })
  const groups = await whoami(s.adminToken, { 'impersonate-user': 'alice', 'impersonate-group': 'g1, g2' })
  t.same(groups.json.status.userInfo.groups, ['g1', 'g2', 'system:authenticated'], 'repeated Impersonate-Group lines (joined with commas)')
  const sa = await whoami(s.adminToken, { 'impersonate-user': 'system:serviceaccount:kube:robot' })
  t.same(sa.json.status.userInfo, { username: 'system:serviceaccount:kube:robot', groups: ['system:serviceaccounts', 'system:serviceaccounts:kube', 'system:authenticated'] })
  const anon = await s.request('POST', '/apis/authorization.orch.io/v1/selfsubjectaccessreviews', { kind: 'SelfSubjectAccessReview', apiVersion: 'authorization.orch.io/v1', spec: { nonResourceAttributes: { path: '/version', verb: 'get' } } }, { 'impersonate-user': 'system:anonymous' })
  t.equal(anon.status, 403, 'system:anonymous is in system:unauthenticated (no basic-user)')
  const noUser = await whoami(s.adminToken, { 'impersonate-group': 'g1' })
  t.equal(noUser.status, 400)
  t.equal(noUser.json.message, 'requested [groups] without impersonating a user')
})

t.test('impersonation needs the impersonate verb on each attribute', async (t) => {
  const denied = await whoami('alice-token', { 'impersonate-user': 'bob' })
  t.equal(denied.status, 403)
  t.same(denied.json, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: 'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope',
    reason: 'Forbidden', details: { name: 'bob', kind: 'users' }, code: 403,
  })
  await grant('impersonate-bob', [
    { apiGroups: [''], resources: ['users'], verbs: ['impersonate'], resourceNames: ['bob'] },
    { apiGroups: ['authentication.orch.io'], resources: ['userextras/scopes'], verbs: ['impersonate'], resourceNames: ['view'] },
  ], 'alice')
  const asBob = await whoami('alice-token', { 'impersonate-user': 'bob' })
  t.equal(asBob.status, 201, 'allowed at once after the grant')
  t.equal(asBob.json.status.userInfo.username, 'bob')
  t.equal((await whoami('alice-token', { 'impersonate-user': 'carol' })).status, 403, 'only bob')
  const grp = await whoami('alice-token', { 'impersonate-user': 'bob', 'impersonate-group': 'system:masters' })
  t.equal(grp.status, 403)
  t.equal(grp.json.message, 'groups "system:masters" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the cluster scope')
  const extra = await whoami('alice-token', { 'impersonate-user': 'bob', 'impersonate-extra-scopes': 'view' })
  t.equal(extra.status, 201)
  t.same(extra.json.status.userInfo.extra, { scopes: ['view'] })
  const extra2 = await whoami('alice-token', { 'impersonate-user': 'bob', 'impersonate-extra-scopes': 'admin' })
  t.equal(extra2.status, 403)
  t.equal(extra2.json.message, 'userextras.authentication.orch.io "admin" is forbidden: User "alice" cannot impersonate resource "userextras/scopes" in API group "authentication.orch.io" at the cluster scope')
  const uid = await whoami('alice-token', { 'impersonate-user': 'bob', 'impersonate-uid': 'x' })
  t.equal(uid.status, 403)
  t.equal(uid.json.message, 'uids.authentication.orch.io "x" is forbidden: User "alice" cannot impersonate resource "uids" in API group "authentication.orch.io" at the cluster scope')
  // Impersonating a service account is checked on serviceaccounts in its namespace.
  const sa = await whoami('alice-token', { 'impersonate-user': 'system:serviceaccount:default:bot' })
  t.equal(sa.status, 403)
  t.equal(sa.json.message, 'serviceaccounts "bot" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "default"')
})

// ---------------------------------------------------------------- a second server: flags

function pem(k: KeyObject, type: 'pkcs8' | 'spki'): string {
  return k.export({ type, format: 'pem' }).toString()
}

t.test('key and issuer flags, --service-account-lookup=false, --anonymous-auth=false, --service-account-max-token-expiration', async (t) => {
  const k1 = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const k2 = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const k3 = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const dir = mkdtempSync(join(work, 'flags-'))
  writeFileSync(join(dir, 'k1.pem'), pem(k1.privateKey, 'pkcs8'))
  writeFileSync(join(dir, 'k2.pub'), pem(k2.publicKey, 'spki'))
  const b = await startServer({
    args: [
      '--anonymous-auth=false', '--service-account-lookup=false', '--service-account-max-token-expiration', '1h',
      '--service-account-signing-key-file', join(dir, 'k1.pem'), '--service-account-key-file', join(dir, 'k2.pub'),
      '--service-account-issuer', 'https://issuer-one.example', '--service-account-issuer', 'https://issuer-two.example',
    ],
  })
  t.teardown(() => b.stop())
  t.equal((await b.requestAs(null, 'GET', '/version')).status, 401, 'no anonymous requests')
  t.same((await b.requestAs(null, 'GET', '/version')).json, UNAUTHORIZED)

  const sa = await b.request('POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'ext' } })
  const uid = sa.json.metadata.uid
  const tr = await b.request('POST', '/api/v1/namespaces/default/serviceaccounts/ext/token', { spec: { expirationSeconds: 7200 } })
  t.equal(tr.status, 201)
  t.equal(tr.json.spec.expirationSeconds, 3600, 'shortened to the maximum')
  t.match(String(tr.headers.warning), /shortened/)
  const c = claims(tr.json.status.token)
  t.equal(c.iss, 'https://issuer-one.example', 'the first issuer signs')
  t.same(c.aud, ['https://issuer-one.example', 'https://issuer-two.example'], 'API audiences default to the issuers')
  t.equal(c.exp - c.iat, 3600)
  const ssr = (tok: string) => b.requestAs(tok, 'POST', SSR, { kind: 'SelfSubjectReview', apiVersion: 'authentication.orch.io/v1' })
  t.equal((await ssr(tr.json.status.token)).status, 201, 'signed with --service-account-signing-key-file')

  const mint = async (key: KeyObject, issuer: string) => (await issueToken({
    key: signingKeyFrom(key), issuer, namespace: 'default', name: 'ext', uid, audiences: ['https://issuer-two.example'], expirationSeconds: 600,
  })).token
  t.equal((await ssr(await mint(k2.privateKey, 'https://issuer-two.example'))).status, 201, 'a key of --service-account-key-file verifies; the second issuer is accepted')
  t.equal((await ssr(await mint(k3.privateKey, 'https://issuer-two.example'))).status, 401, 'an unknown key does not')
  t.equal((await ssr(await mint(k2.privateKey, 'https://elsewhere.example'))).status, 401, 'an unknown issuer does not')

  // --service-account-lookup=false: a legacy token outlives its secret.
  await b.request('POST', '/api/v1/namespaces/default/secrets', { metadata: { name: 'lt', annotations: { 'orch.io/service-account.name': 'ext' } }, type: 'orch.io/service-account-token' })
  const filled = await poll(async () => {
    const r = await b.request('GET', '/api/v1/namespaces/default/secrets/lt')
    return r.json?.data?.token ? r.json : undefined
  })
  const legacy = Buffer.from(filled.data.token, 'base64').toString()
  t.equal((await ssr(legacy)).status, 201)
  await b.request('DELETE', '/api/v1/namespaces/default/secrets/lt')
  t.equal((await ssr(legacy)).status, 201, 'not looked up: still valid')
  // Bootstrap tokens are off unless enabled.
  await b.request('POST', '/api/v1/namespaces/orch-system/secrets', { metadata: { name: 'bootstrap-token-abcdef' }, type: 'bootstrap.orch.io/token', data: { 'token-id': b64('abcdef'), 'token-secret': b64('0123456789abcdef'), 'usage-bootstrap-authentication': b64('true') } })
  t.equal((await ssr('abcdef.0123456789abcdef')).status, 401, 'bootstrap token auth is off by default')
})

t.test('a generated signing key is kept in the data dir across restarts', async (t) => {
  const dataDir = mkdtempSync(join(work, 'keep-'))
  const a = await startServer({ dataDir })
  await a.request('POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'keep' } })
  const token = (await a.request('POST', '/api/v1/namespaces/default/serviceaccounts/keep/token', { spec: {} })).json.status.token
  await a.stop()
  const b = await startServer({ dataDir })
  t.teardown(() => b.stop())
  const r = await b.requestAs(token, 'POST', SSR, { kind: 'SelfSubjectReview', apiVersion: 'authentication.orch.io/v1' })
  t.equal(r.status, 201, 'a token of the first run still verifies')
})
