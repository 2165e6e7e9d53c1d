// Black-box: --authorization-config (AuthorizationConfiguration apiserver.config.orch.io/v1, YAML): start-up refusals
// with upstream's field paths, a Webhook authorizer with matchConditions, timeout and failurePolicy in front of Node and
// RBAC, and reloads of the file (a good file changes the chain, a bad one leaves it in force).
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type TestServer } from '../helpers/server.js'
import { runKubectl } from '../helpers/kubectl.js'
import { startWebhookServer, type WebhookServer, type Received, type Answer } from '../helpers/webhook-server.js'
import { eventually } from '../helpers/poll.js'

const work = mkdtempSync(join(tmpdir(), 'orch-authz-config-'))
const home = mkdtempSync(join(work, 'home-'))
const tokenFile = join(work, 'tokens.csv')
writeFileSync(tokenFile, 'alice-token,alice,u-alice,dev\n')
const configFile = join(work, 'authz.yaml')

let hook: WebhookServer
let kc: string
let s: TestServer

function policy(r: Received): Answer {
  const ra = r.body?.spec?.resourceAttributes
  if (ra?.resource === 'configmaps') return { delayMs: 2500, body: { apiVersion: r.body.apiVersion, kind: 'SubjectAccessReview', status: { allowed: true } } }
  return { body: { apiVersion: r.body.apiVersion, kind: 'SubjectAccessReview', status: { allowed: r.body?.spec?.user === 'alice' && ra?.resource === 'pods' } } }
}

const webhook = (extra: string) => `apiVersion: apiserver.config.orch.io/v1
kind: AuthorizationConfiguration
authorizers:
- type: Webhook
  name: guard
  webhook:
    timeout: 1s
    subjectAccessReviewVersion: v1
    matchConditionSubjectAccessReviewVersion: v1
    authorizedTTL: 0s
    unauthorizedTTL: 0s
${extra}    connectionInfo:
      type: KubeConfigFile
      kubeConfigFile: ${kc}
- type: Node
  name: node
- type: RBAC
  name: rbac
`
const GUARDED = `    failurePolicy: Deny
    matchConditions:
    - expression: has(request.resourceAttributes)
    - expression: request.resourceAttributes.namespace == 'guarded'
`

t.before(async () => {
  hook = await startWebhookServer()
  hook.answer = policy
  kc = hook.kubeconfig(work, 'authz')
  writeFileSync(configFile, webhook(GUARDED))
  s = await startServer({ secure: true, args: ['--token-auth-file', tokenFile, '--authorization-config', configFile] })
})
t.teardown(async () => {
  await s?.stop()
  await hook?.close()
  rmSync(work, { recursive: true, force: true })
})

const calls = (ns: string) => hook.received.filter((r) => r.body?.spec?.resourceAttributes?.namespace === ns).length

t.test('matchConditions: a FALSE condition skips the webhook, all TRUE call it', async (t) => {
  const open = await s.requestAs('alice-token', 'GET', '/api/v1/namespaces/open/pods')
  t.equal(open.status, 403, 'RBAC alone decides outside "guarded"')
  t.equal(open.json.message, 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "open"')
  t.equal(calls('open'), 0, 'the webhook was skipped')
  const version = await s.requestAs('alice-token', 'GET', '/version')
  t.equal(version.status, 200, 'a non-resource request fails has(request.resourceAttributes): RBAC allows /version')
  t.equal(hook.received.length, 0)
  const k = await runKubectl(s.kubeconfig, home, ['--token', 'alice-token', 'get', 'pods', '-n', 'guarded'])
  t.equal(k.code, 0, k.stderr)
  t.equal(calls('guarded'), 1, 'the webhook was called')
  t.same(hook.received[0].body, {
    kind: 'SubjectAccessReview', apiVersion: 'authorization.orch.io/v1', metadata: { creationTimestamp: null },
    spec: { resourceAttributes: { namespace: 'guarded', verb: 'list', version: 'v1', resource: 'pods' }, user: 'alice', groups: ['dev', 'system:authenticated'], uid: 'u-alice' },
    status: { allowed: false },
  })
  t.equal(hook.received[0].path, '/review?timeout=1s', 'the configured timeout')
})

t.test('failurePolicy Deny: a slow webhook (past the timeout) and a condition that errs refuse the request', async (t) => {
  const started = Date.now()
  const slow = await s.requestAs('alice-token', 'GET', '/api/v1/namespaces/guarded/configmaps')
  const took = Date.now() - started
  t.equal(slow.status, 500, slow.text)
  t.equal(slow.json.reason, 'InternalError')
  t.match(slow.json.message, /^Internal error occurred: Post "https:\/\/127\.0\.0\.1:\d+\/review\?timeout=1s": context deadline exceeded \(Client\.Timeout exceeded while awaiting headers\)$/)
  t.ok(took >= 900 && took < 2400, `cut at the 1s timeout, not retried (${took} ms)`)
  // a cluster-scoped request has no namespace: the second condition errs (no FALSE): failurePolicy Deny
  const nodes = await s.requestAs('alice-token', 'GET', '/api/v1/nodes')
  t.equal(nodes.status, 500, nodes.text)
  t.equal(nodes.json.message, "Internal error occurred: cel evaluation error: expression 'request.resourceAttributes.namespace == 'guarded'' resulted in error: no such key: namespace")
})

t.test('a changed file is reloaded: the chain changes at once', async (t) => {
  const before = calls('open')
  writeFileSync(configFile, webhook('    failurePolicy: NoOpinion\n'))
  t.ok(await eventually(async () => (await s.requestAs('alice-token', 'GET', '/api/v1/namespaces/open/pods')).status === 200), 'the new chain is in force')
  t.ok(calls('open') > before, 'the webhook is now asked for every namespace')
  t.ok(s.logs.some((l) => l.includes('reloaded authz config')), 'logged')
  // NoOpinion now: past the timeout the webhook has no opinion and RBAC decides (alice may view in "guarded")
  t.equal((await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'guarded' } })).status, 201)
  const rb = await s.request('POST', '/apis/rbac.authorization.orch.io/v1/namespaces/guarded/rolebindings', {
    apiVersion: 'rbac.authorization.orch.io/v1', kind: 'RoleBinding', metadata: { name: 'alice-view' },
    roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.orch.io' }],
  })
  t.equal(rb.status, 201, rb.text)
  const slow = await s.requestAs('alice-token', 'GET', '/api/v1/namespaces/guarded/configmaps')
  t.equal(slow.status, 200, slow.text)
  // with nothing that allows, the webhook's error is the answer (upstream's authorization filter: 500)
  const none = await s.requestAs('alice-token', 'GET', '/api/v1/namespaces/open/configmaps')
  t.equal(none.status, 500, none.text)
  t.match(none.json.message, /^Internal error occurred: Post "https:\/\/127\.0\.0\.1:\d+\/review\?timeout=1s": context deadline exceeded/)
})

t.test('an invalid new file keeps the chain in force (an error is logged)', async (t) => {
  writeFileSync(configFile, webhook('    failurePolicy: NoOpinion\n').replace('timeout: 1s', 'timeout: 45s'))
  t.ok(await eventually(async () => s.logs.some((l) => l.includes('reloading authorization config') && l.includes('must be > 0s and <= 30s'))), 'the error is logged')
  t.equal((await s.requestAs('alice-token', 'GET', '/api/v1/namespaces/open/pods')).status, 200, 'the webhook still allows')
  // dropping RBAC is refused too (the types of the first load must stay)
  writeFileSync(configFile, webhook('    failurePolicy: NoOpinion\n').replace('- type: RBAC\n  name: rbac\n', ''))
  t.ok(await eventually(async () => s.logs.some((l) => l.includes('missing required types: [RBAC]'))), 'the error is logged')
  t.equal((await s.request('GET', '/api/v1/namespaces')).status, 200)
})

/** Starts the server with these arguments; it must exit at start with this text on its standard error. */
async function refused(t: import('tap').Test, args: string[], text: string | RegExp): Promise<void> {
  const err = await startServer({ args }).then(async (x) => { await x.stop(); return undefined }, (e: Error) => e)
  t.ok(err, 'the server did not start')
  t.match(err?.message ?? '', /server exited with 2 before ready/)
  if (typeof text === 'string') t.ok(err?.message.includes(`orch-apiserver: ${text}\n`), `${text}\n--- got:\n${err?.message}`)
  else t.match(err?.message ?? '', text)
}

t.test('start-up refusals', async (t) => {
  const file = (name: string, body: string): string => { const f = join(work, name); writeFileSync(f, body); return f }
  await refused(t, ['--authorization-config', configFile, '--authorization-mode', 'RBAC'], '--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined')
  await refused(t, ['--authorization-config', configFile, '--authorization-webhook-cache-authorized-ttl', '1m'], '--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined')
  const many = file('many.yaml', `apiVersion: apiserver.config.orch.io/v1
kind: AuthorizationConfiguration
authorizers:
- type: Webhook
  name: hook
  webhook:
    timeout: 45s
    subjectAccessReviewVersion: v2
    failurePolicy: Maybe
    connectionInfo:
      type: InClusterConfig
- type: RBAC
  name: rbac
- type: Webhook
  name: hook
  webhook: {timeout: 3s, subjectAccessReviewVersion: v1, failurePolicy: Deny, connectionInfo: {type: KubeConfigFile, kubeConfigFile: relative.kubeconfig}}
- type: Node
- type: RBAC
  name: rbac2
`)
  await refused(t, ['--authorization-config', many], '[' + [
    'authorizers[0].webhook.timeout: Invalid value: "45s": must be > 0s and <= 30s',
    'authorizers[0].webhook.subjectAccessReviewVersion: Unsupported value: "v2": supported values: "v1", "v1beta1"',
    'authorizers[0].webhook.failurePolicy: Unsupported value: "Maybe": supported values: "NoOpinion", "Deny"',
    'authorizers[0].webhook.connectionInfo.type: Unsupported value: "InClusterConfig": supported values: "KubeConfigFile"',
    'authorizers[2].name: Duplicate value: "hook"',
    'authorizers[2].webhook.connectionInfo.kubeConfigFile: Invalid value: "relative.kubeconfig": must be an absolute path',
    'authorizers[3].name: Required value',
    'authorizers[4].type: Duplicate value: "RBAC"',
  ].join(', ') + ']')
  const conditions = Array.from({ length: 65 }, (_, i) => `    - expression: request.user != 'u${i}'`).join('\n')
  const tooMany = file('too-many.yaml', webhook(`    failurePolicy: Deny\n    matchConditions:\n${conditions}\n`))
  await refused(t, ['--authorization-config', tooMany], 'authorizers[0].webhook.matchConditions: Too many: 65: must have at most 64 items')
  const badCel = file('bad-cel.json', JSON.stringify({
    apiVersion: 'apiserver.config.orch.io/v1', kind: 'AuthorizationConfiguration',
    authorizers: [{ type: 'Webhook', name: 'w', webhook: { timeout: '3s', subjectAccessReviewVersion: 'v1', matchConditionSubjectAccessReviewVersion: 'v1', failurePolicy: 'Deny', connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: kc }, matchConditions: [{ expression: 'object.foo == 1' }, { expression: '' }] } }],
  }))
  await refused(t, ['--authorization-config', badCel], /orch-apiserver: \[authorizers\[0\]\.webhook\.matchConditions\[0\]\.expression: Invalid value: "object\.foo == 1": compilation failed: ERROR: <input>:1:1: undeclared reference to 'object' \(in container ''\)[\s\S]*authorizers\[0\]\.webhook\.matchConditions\[1\]\.expression: Required value\]/)
  const names = file('names.yaml', 'apiVersion: apiserver.config.orch.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: RBAC\n  name: my-rbac\n')
  await refused(t, ['--authorization-config', names], 'expected name rbac for authorizer RBAC instead of my-rbac')
  const version = file('version.yaml', 'apiVersion: apiserver.config.orch.io/v2\nkind: AuthorizationConfiguration\nauthorizers: []\n')
  await refused(t, ['--authorization-config', version], /failed to load AuthorizationConfiguration from file: no kind "AuthorizationConfiguration" is registered for version "apiserver\.config\.orch\.io\/v2"/)
  const unknown = file('unknown.yaml', 'apiVersion: apiserver.config.orch.io/v1beta1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: RBAC\n  name: rbac\n  color: blue\n')
  await refused(t, ['--authorization-config', unknown], 'failed to load AuthorizationConfiguration from file: strict decoding error: unknown field "authorizers[0].color"')
})
