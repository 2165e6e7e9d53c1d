// Black-box: the Webhook authorizer by flags (--authorization-mode=Node,Webhook,RBAC) against an https webhook of the
// test's own: allow, deny (stops the chain, reason in the 403), no opinion (RBAC after it), the exact SubjectAccessReview
// bodies, the decision cache and its TTLs, a failing webhook (fails open to RBAC, else a 500), kubectl 1.32.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type TestServer } from '../helpers/server.js'
import { runKubectl } from '../helpers/kubectl.js'
import { startWebhookServer, type WebhookServer, type Received, type Answer } from '../helpers/webhook-server.js'

const work = mkdtempSync(join(tmpdir(), 'orch-webhook-authz-'))
const home = mkdtempSync(join(work, 'home-'))
const tokenFile = join(work, 'tokens.csv')
writeFileSync(tokenFile, 'alice-token,alice,u-alice,dev\nbob-token,bob,u-bob\n')

let hook: WebhookServer
let s: TestServer

/** The webhook's policy: alice may read pods, may not touch secrets; the rest is no opinion. */
function policy(r: Received): Answer {
  const spec = r.body?.spec ?? {}
  const ra = spec.resourceAttributes
  const status: Record<string, unknown> = { allowed: false }
  if (spec.user === 'alice' && ra?.resource === 'pods' && ['get', 'list', 'watch'].includes(ra.verb)) status.allowed = true
  else if (spec.user === 'alice' && ra?.resource === 'secrets') { status.denied = true; status.reason = 'secrets are off limits' }
  else if (spec.user === 'bob' && spec.nonResourceAttributes?.path === '/version') status.allowed = true
  else if (spec.user === 'alice' && ra?.resource === 'rolebindings' && ra.verb === 'create') status.allowed = true
  else if (spec.user === 'alice' && ra?.resource === 'clusterroles' && ra.verb === 'bind' && ra.name === 'admin') status.allowed = true
  else status.reason = 'no opinion here'
  if (spec.user === 'alice' && ra?.resource === 'services') return { destroy: true }
  if (spec.user === 'alice' && ra?.resource === 'endpoints') return { status: 403, body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'go away', code: 403 } }
  return { body: { apiVersion: r.body.apiVersion, kind: 'SubjectAccessReview', status } }
}

t.before(async () => {
  hook = await startWebhookServer()
  hook.answer = policy
  const kc = hook.kubeconfig(work, 'authz', { caData: true })
  s = await startServer({
    secure: true,
    args: ['--token-auth-file', tokenFile, '--authorization-mode', 'Node,Webhook,RBAC', '--authorization-webhook-config-file', kc,
      '--authorization-webhook-cache-authorized-ttl', '2s', '--authorization-webhook-cache-unauthorized-ttl', '1s'],
  })
  // alice may edit in team (RBAC), after the webhook
  const ns = await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } })
  if (ns.status !== 201) throw new Error(ns.text)
  const rb = await s.request('POST', '/apis/rbac.authorization.orch.io/v1/namespaces/team/rolebindings', {
    apiVersion: 'rbac.authorization.orch.io/v1', kind: 'RoleBinding', metadata: { name: 'alice-edit' },
    roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'ClusterRole', name: 'edit' }, subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.orch.io' }],
  })
  if (rb.status !== 201) throw new Error(rb.text)
})
t.teardown(async () => {
  await s?.stop()
  await hook?.close()
  rmSync(work, { recursive: true, force: true })
})

const kubectl = (args: string[], token: string) => runKubectl(s.kubeconfig, home, ['--token', token, ...args])
const sars = (pred: (spec: any) => boolean) => hook.received.filter((r) => pred(r.body?.spec ?? {}))

t.test('allow: the webhook lets alice list pods anywhere (RBAC would not)', async (t) => {
  const r = await kubectl(['get', 'pods', '-n', 'default'], 'alice-token')
  t.equal(r.code, 0, r.stderr)
  t.match(r.stderr, /No resources found in default namespace/)
  const sar = sars((x) => x.user === 'alice' && x.resourceAttributes?.resource === 'pods' && x.resourceAttributes?.namespace === 'default')[0]
  t.same(sar?.body, {
    kind: 'SubjectAccessReview', apiVersion: 'authorization.orch.io/v1beta1', metadata: { creationTimestamp: null },
    spec: { resourceAttributes: { namespace: 'default', verb: 'list', version: 'v1', resource: 'pods' }, user: 'alice', group: ['dev', 'system:authenticated'], uid: 'u-alice' },
    status: { allowed: false },
  }, 'the exact v1beta1 SubjectAccessReview of a resource request (groups as `group`)')
  t.equal(sar?.path, '/review?timeout=30s')
  t.equal(sar?.clientCN, 'orch-apiserver')
})

t.test('the SubjectAccessReview names subresource, name and the selectors', async (t) => {
  const r = await s.requestAs('alice-token', 'GET', '/api/v1/namespaces/team/pods?labelSelector=tier%21%3Ddb%2Capp%3Dweb%2Cenv+in+%28b%2Ca%29&fieldSelector=spec.nodeName%3Dn1')
  t.equal(r.status, 200, r.text)
  const sar = sars((x) => x.resourceAttributes?.namespace === 'team' && x.resourceAttributes?.labelSelector)[0]
  t.same(sar?.body?.spec?.resourceAttributes, {
    namespace: 'team', verb: 'list', version: 'v1', resource: 'pods',
    fieldSelector: { requirements: [{ key: 'spec.nodeName', operator: 'In', values: ['n1'] }] },
    labelSelector: { requirements: [{ key: 'app', operator: 'In', values: ['web'] }, { key: 'env', operator: 'In', values: ['a', 'b'] }, { key: 'tier', operator: 'NotIn', values: ['db'] }] },
  })
  const log = await s.requestAs('alice-token', 'GET', '/api/v1/namespaces/team/pods/p1/log')
  t.equal(log.status, 404, 'allowed by RBAC (edit) after the webhook\'s no opinion, then not found')
  const sub = sars((x) => x.resourceAttributes?.subresource === 'log')[0]
  t.same(sub?.body?.spec?.resourceAttributes, { namespace: 'team', verb: 'get', version: 'v1', resource: 'pods', subresource: 'log', name: 'p1' })
})

t.test('a non-resource request: nonResourceAttributes', async (t) => {
  const r = await s.requestAs('bob-token', 'GET', '/version')
  t.equal(r.status, 200)
  const sar = sars((x) => x.user === 'bob' && x.nonResourceAttributes)[0]
  t.same(sar?.body?.spec, { nonResourceAttributes: { path: '/version', verb: 'get' }, user: 'bob', group: ['system:authenticated'], uid: 'u-bob' })
})

t.test('deny stops the chain: RBAC (edit) would allow secrets, the 403 carries the reason', async (t) => {
  const r = await s.requestAs('alice-token', 'GET', '/api/v1/namespaces/team/secrets')
  t.equal(r.status, 403)
  t.same(r.json, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: 'secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "team": secrets are off limits',
    reason: 'Forbidden', details: { kind: 'secrets' }, code: 403,
  })
  const k = await kubectl(['auth', 'can-i', 'get', 'secrets', '-n', 'team'], 'alice-token')
  t.equal(k.stdout.trim(), 'no - secrets are off limits', 'kubectl prints the SelfSubjectAccessReview reason')
  t.equal(k.code, 1)
  const g = await kubectl(['get', 'secrets', '-n', 'team'], 'alice-token')
  t.not(g.code, 0)
  t.match(g.stderr, /secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "team": secrets are off limits/)
})

t.test('no opinion: RBAC decides after the webhook; with no allow anywhere the reasons are joined', async (t) => {
  const yes = await kubectl(['auth', 'can-i', 'create', 'configmaps', '-n', 'team'], 'alice-token')
  t.equal(yes.stdout.trim(), 'yes', 'RBAC edit, after the webhook')
  const r = await s.requestAs('bob-token', 'GET', '/api/v1/namespaces/team/configmaps')
  t.equal(r.status, 403)
  t.equal(r.json.message, 'configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "team": no opinion here')
})

t.test('decisions are cached for the authorized and unauthorized TTLs', async (t) => {
  const count = () => sars((x) => x.user === 'alice' && x.resourceAttributes?.resource === 'pods' && x.resourceAttributes?.namespace === 'kube-x').length
  for (let i = 0; i < 3; i++) t.equal((await s.requestAs('alice-token', 'GET', '/api/v1/namespaces/kube-x/pods')).status, 200)
  t.equal(count(), 1, 'one call for three requests within the TTL')
  await new Promise((res) => setTimeout(res, 2200))
  t.equal((await s.requestAs('alice-token', 'GET', '/api/v1/namespaces/kube-x/pods')).status, 200)
  t.equal(count(), 2, 'asked again after the authorized TTL (2s)')
  const denied = () => sars((x) => x.user === 'bob' && x.resourceAttributes?.resource === 'configmaps' && x.resourceAttributes?.namespace === 'kube-x').length
  await s.requestAs('bob-token', 'GET', '/api/v1/namespaces/kube-x/configmaps')
  await s.requestAs('bob-token', 'GET', '/api/v1/namespaces/kube-x/configmaps')
  t.equal(denied(), 1, 'an unauthorized answer is cached too')
  await new Promise((res) => setTimeout(res, 1200))
  await s.requestAs('bob-token', 'GET', '/api/v1/namespaces/kube-x/configmaps')
  t.equal(denied(), 2, 'asked again after the unauthorized TTL (1s)')
})

t.test('a failing webhook has no opinion (flags): RBAC still decides, else a 500 with the error', async (t) => {
  // connection reset: retried with backoff (5 attempts), then no opinion; RBAC (edit) allows services in team
  const n = sars((x) => x.resourceAttributes?.resource === 'services').length
  const ok = await s.requestAs('alice-token', 'GET', '/api/v1/namespaces/team/services')
  t.equal(ok.status, 200, ok.text)
  t.equal(sars((x) => x.resourceAttributes?.resource === 'services').length - n, 5, 'five attempts on connection resets')
  // a 403 from the webhook is not retried; nothing allows endpoints in default for alice: upstream answers 500
  const bad = await s.requestAs('alice-token', 'GET', '/api/v1/namespaces/default/endpoints')
  t.equal(bad.status, 500, bad.text)
  t.same(bad.json, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: 'Internal error occurred: go away', reason: 'InternalError', details: { causes: [{ message: 'go away' }] }, code: 500,
  })
  // errors are not cached
  const before = sars((x) => x.resourceAttributes?.resource === 'endpoints').length
  await s.requestAs('alice-token', 'GET', '/api/v1/namespaces/default/endpoints')
  t.equal(sars((x) => x.resourceAttributes?.resource === 'endpoints').length, before + 1)
})

t.test('the escalation check of a binding asks the webhook too (bind on the role)', async (t) => {
  const body = (name: string, role: string) => ({
    apiVersion: 'rbac.authorization.orch.io/v1', kind: 'RoleBinding', metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'ClusterRole', name: role }, subjects: [{ kind: 'User', name: 'bob', apiGroup: 'rbac.authorization.orch.io' }],
  })
  const ok = await s.requestAs('alice-token', 'POST', '/apis/rbac.authorization.orch.io/v1/namespaces/team/rolebindings', body('bob-admin', 'admin'))
  t.equal(ok.status, 201, ok.text)
  const bind = sars((x) => x.resourceAttributes?.verb === 'bind')[0]
  t.same(bind?.body?.spec?.resourceAttributes, { namespace: 'team', verb: 'bind', group: 'rbac.authorization.orch.io', resource: 'clusterroles', name: 'admin' })
  // no bind from the webhook on cluster-admin, and alice does not hold its rules: refused
  const no = await s.requestAs('alice-token', 'POST', '/apis/rbac.authorization.orch.io/v1/namespaces/team/rolebindings', body('bob-root', 'cluster-admin'))
  t.equal(no.status, 403, no.text)
})

t.test('system:masters never reaches the webhook', async (t) => {
  const n = hook.received.length
  t.equal((await s.request('GET', '/api/v1/namespaces/team/secrets')).status, 200)
  t.equal(hook.received.length, n)
})

t.test('v1: groups as `groups`; start-up refusals of the flags', async (t) => {
  const kc = hook.kubeconfig(work, 'authz-v1')
  const v1 = await startServer({ args: ['--token-auth-file', tokenFile, '--authorization-mode', 'Webhook,RBAC', '--authorization-webhook-config-file', kc, '--authorization-webhook-version', 'v1'] })
  t.teardown(() => v1.stop())
  const r = await v1.requestAs('alice-token', 'GET', '/api/v1/namespaces/default/pods/p1')
  t.equal(r.status, 404, r.text)
  const last = hook.received[hook.received.length - 1]
  t.same(last.body, {
    kind: 'SubjectAccessReview', apiVersion: 'authorization.orch.io/v1', metadata: { creationTimestamp: null },
    spec: { resourceAttributes: { namespace: 'default', verb: 'get', version: 'v1', resource: 'pods', name: 'p1' }, user: 'alice', groups: ['dev', 'system:authenticated'], uid: 'u-alice' },
    status: { allowed: false },
  })
  await t.rejects(startServer({ args: ['--authorization-mode', 'Webhook,RBAC'] }), /authorization-mode Webhook's authorization config file not passed/)
  await t.rejects(startServer({ args: ['--authorization-webhook-config-file', kc] }), /cannot specify --authorization-webhook-config-file without mode Webhook/)
})
