// Black-box: webhook token authentication (--authentication-token-webhook-*) against an https webhook of the test's
// own: the TokenReview bodies (v1beta1 and v1), user mapping seen by kubectl 1.32, 401 on a "no" and on failures,
// upstream's retries, the decision cache and its TTL, and other token kinds untouched.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type TestServer } from '../helpers/server.js'
import { runKubectl } from '../helpers/kubectl.js'
import { startWebhookServer, type WebhookServer, type Received } from '../helpers/webhook-server.js'

const work = mkdtempSync(join(tmpdir(), 'orch-webhook-authn-'))
const home = mkdtempSync(join(work, 'home-'))
const tokenFile = join(work, 'tokens.csv')
writeFileSync(tokenFile, 'static-token,carol,u-carol,ops\n')
const AUDIENCE = 'https://orch.default.svc.cluster.local'

let hook: WebhookServer
let s: TestServer
let kc: string

/** The webhook's answers by token. */
function answer(r: Received) {
  const token = r.body?.spec?.token
  const apiVersion = r.body?.apiVersion
  switch (token) {
    case 'alice-token':
      return { body: { apiVersion, kind: 'TokenReview', status: { authenticated: true, user: { username: 'alice', uid: 'u-1', groups: ['devs'], extra: { 'example.org/team': ['blue'] } } } } }
    case 'nobody-token': return { body: { apiVersion, kind: 'TokenReview', status: { authenticated: false } } }
    case 'revoked-token': return { body: { apiVersion, kind: 'TokenReview', status: { authenticated: false, error: 'token revoked' } } }
    case 'wrong-version': return { body: { apiVersion: 'authentication.orch.io/v1', kind: 'TokenReview', status: { authenticated: true, user: { username: 'mallory' } } } }
    case 'broken-token': return { status: 500, body: 'boom' }
    default: return { body: { apiVersion, kind: 'TokenReview', status: { authenticated: false } } }
  }
}

t.before(async () => {
  hook = await startWebhookServer()
  hook.answer = answer
  kc = hook.kubeconfig(work, 'authn')
  s = await startServer({ secure: true, args: ['--token-auth-file', tokenFile, '--authentication-token-webhook-config-file', kc, '--authentication-token-webhook-cache-ttl', '3s'] })
})
t.teardown(async () => {
  await s?.stop()
  await hook?.close()
  rmSync(work, { recursive: true, force: true })
})

const kubectl = (args: string[], token: string) => runKubectl(s.kubeconfig, home, ['--token', token, ...args])
const calls = (token: string) => hook.received.filter((r) => r.body?.spec?.token === token).length

function table(out: string): Record<string, string> {
  const m: Record<string, string> = {}
  for (const line of out.trim().split('\n').slice(1)) {
    const i = line.search(/\s{2,}/)
    if (i > 0) m[line.slice(0, i)] = line.slice(i).trim()
  }
  return m
}

t.test('kubectl auth whoami: the webhook maps the token to a user (+ system:authenticated)', async (t) => {
  const r = await kubectl(['auth', 'whoami'], 'alice-token')
  t.equal(r.code, 0, r.stderr)
  t.same(table(r.stdout), { Username: 'alice', UID: 'u-1', Groups: '[devs system:authenticated]', 'Extra: example.org/team': '[blue]' })
  const got = hook.received.find((x) => x.body?.spec?.token === 'alice-token')!
  t.ok(got, 'the webhook was called')
  t.same(got.body, {
    kind: 'TokenReview', apiVersion: 'authentication.orch.io/v1beta1', metadata: { creationTimestamp: null },
    spec: { token: 'alice-token', audiences: [AUDIENCE] }, status: { user: {} },
  }, 'the v1beta1 TokenReview with the API audiences')
  t.equal(got.path, '/review?timeout=30s', 'the kubeconfig server path, with the client timeout')
  t.equal(got.clientCN, 'orch-apiserver', 'the kubeconfig client certificate is presented')
  t.equal(got.headers['content-type'], 'application/json')
})

t.test('a decision is cached for the TTL, then asked again', async (t) => {
  const before = calls('alice-token')
  const r = await s.requestAs('alice-token', 'POST', '/apis/authentication.orch.io/v1/selfsubjectreviews', { apiVersion: 'authentication.orch.io/v1', kind: 'SelfSubjectReview' })
  t.equal(r.status, 201, r.text)
  t.equal(r.json.status.userInfo.username, 'alice')
  t.equal(calls('alice-token'), before, 'no call within the TTL')
  await new Promise((res) => setTimeout(res, 3200))
  const again = await s.requestAs('alice-token', 'POST', '/apis/authentication.orch.io/v1/selfsubjectreviews', { apiVersion: 'authentication.orch.io/v1', kind: 'SelfSubjectReview' })
  t.equal(again.status, 201, again.text)
  t.equal(calls('alice-token'), before + 1, 'asked again after the TTL')
  // "no" answers are cached too
  await s.requestAs('nobody-token', 'GET', '/api/v1/namespaces')
  await s.requestAs('nobody-token', 'GET', '/api/v1/namespaces')
  t.equal(calls('nobody-token'), 1, 'a "not authenticated" answer is cached')
})

t.test('authenticated: false is 401, with or without an error text', async (t) => {
  for (const token of ['nobody-token', 'revoked-token']) {
    const r = await s.requestAs(token, 'GET', '/api/v1/namespaces')
    t.equal(r.status, 401, token)
    t.same(r.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 })
    const k = await kubectl(['get', 'namespaces'], token)
    t.not(k.code, 0)
    t.match(k.stderr, /Unauthorized|must be logged in/)
  }
  // an answer with an error text is an error: not cached
  const before = calls('revoked-token')
  await s.requestAs('revoked-token', 'GET', '/api/v1/namespaces')
  await s.requestAs('revoked-token', 'GET', '/api/v1/namespaces')
  t.equal(calls('revoked-token'), before + 2, 'asked each time')
})

t.test('a reply of another version, or a failing webhook, is 401; 500s are retried with backoff', async (t) => {
  const w = await s.requestAs('wrong-version', 'GET', '/api/v1/namespaces')
  t.equal(w.status, 401, 'a v1 answer to a v1beta1 review is refused')
  const started = Date.now()
  const b = await s.requestAs('broken-token', 'GET', '/api/v1/namespaces')
  t.equal(b.status, 401)
  t.equal(calls('broken-token'), 5, 'five attempts (upstream DefaultRetryBackoff)')
  t.ok(Date.now() - started >= 2500, 'with backoff between them')
})

t.test('other token kinds keep working and never reach the webhook', async (t) => {
  const n = hook.received.length
  const r = await kubectl(['auth', 'whoami'], 'static-token')
  t.equal(r.code, 0, r.stderr)
  t.equal(table(r.stdout).Username, 'carol')
  const a = await s.request('GET', '/api/v1/namespaces')
  t.equal(a.status, 200)
  const sa = await s.request('POST', '/api/v1/namespaces/default/serviceaccounts/default/token', { apiVersion: 'authentication.orch.io/v1', kind: 'TokenRequest', spec: {} })
  t.equal(sa.status, 201, sa.text)
  const who = await s.requestAs(sa.json.status.token, 'POST', '/apis/authentication.orch.io/v1/selfsubjectreviews', { apiVersion: 'authentication.orch.io/v1', kind: 'SelfSubjectReview' })
  t.equal(who.json?.status?.userInfo?.username, 'system:serviceaccount:default:default')
  t.equal(hook.received.length, n, 'the webhook was not called')
  const anon = await s.requestAs(null, 'GET', '/version')
  t.equal(anon.status, 200)
  t.equal(hook.received.length, n)
})

t.test('--authentication-token-webhook-version=v1 sends a v1 TokenReview', async (t) => {
  const v1 = await startServer({ secure: true, args: ['--authentication-token-webhook-config-file', kc, '--authentication-token-webhook-version', 'v1'] })
  t.teardown(() => v1.stop())
  const r = await runKubectl(v1.kubeconfig, home, ['--token', 'alice-token', 'auth', 'whoami'])
  t.equal(r.code, 0, r.stderr)
  t.equal(table(r.stdout).Username, 'alice')
  const last = hook.received[hook.received.length - 1]
  t.same(last.body, {
    kind: 'TokenReview', apiVersion: 'authentication.orch.io/v1', metadata: { creationTimestamp: null },
    spec: { token: 'alice-token', audiences: [AUDIENCE] }, status: { user: {} },
  })
})

t.test('a webhook kubeconfig that does not load stops the start', async (t) => {
  await t.rejects(startServer({ args: ['--authentication-token-webhook-config-file', join(work, 'missing.kubeconfig')] }), /--authentication-token-webhook-config-file: stat .*missing\.kubeconfig: no such file or directory/)
})
