// Unit: the authorizer chain as data — from the flags, and from an AuthorizationConfiguration (versions, defaults,
// caching switches, the types a reload must keep), and Go durations.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chainFromFlags, loadAuthorizationConfig, parseGoDuration, builtinTypes } from '../../../actors/authz/config.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-authz-config-unit-'))
const kc = join(dir, 'hook.kubeconfig')
writeFileSync(kc, 'clusters: []\n')
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

const file = (version: string, webhook: Record<string, unknown>, more: unknown[] = []) => JSON.stringify({
  apiVersion: `apiserver.config.orch.io/${version}`, kind: 'AuthorizationConfiguration',
  authorizers: [{ type: 'Webhook', name: 'hook', webhook: { timeout: '3s', subjectAccessReviewVersion: 'v1', failurePolicy: 'NoOpinion', connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: kc }, ...webhook } }, ...more],
})

t.test('Go durations', async (t) => {
  t.equal(parseGoDuration('1m30s'), 90_000)
  t.equal(parseGoDuration('500ms'), 500)
  t.equal(parseGoDuration('1.5h'), 5_400_000)
  t.equal(parseGoDuration('0'), 0)
  t.equal(parseGoDuration('-2s'), -2000)
  t.equal(parseGoDuration('30'), undefined, 'a number needs a unit')
  t.equal(parseGoDuration(''), undefined)
})

t.test('the chain of the flags: the webhook is "default", fails open, 30 s', async (t) => {
  t.same(chainFromFlags(['Node', 'Webhook', 'RBAC'], { configFile: '/k', version: 'v1', authorizedTtlMs: 1000, unauthorizedTtlMs: 0 }), [
    { type: 'Node', name: 'node' },
    { type: 'Webhook', name: 'default', webhook: { authorizedTtlMs: 1000, unauthorizedTtlMs: 0, timeoutMs: 30_000, version: 'v1', failurePolicy: 'NoOpinion', kubeConfigFile: '/k', matchConditions: [] } },
    { type: 'RBAC', name: 'rbac' },
  ])
})

t.test('every version of the file; TTLs default when 0 or absent; caching can be switched off', async (t) => {
  for (const v of ['v1alpha1', 'v1beta1', 'v1']) {
    const [w] = loadAuthorizationConfig(file(v, { authorizedTTL: '0s' }))
    t.equal(w.webhook?.authorizedTtlMs, 300_000, v)
    t.equal(w.webhook?.unauthorizedTtlMs, 30_000, v)
    t.equal(w.webhook?.timeoutMs, 3000)
  }
  const [off] = loadAuthorizationConfig(file('v1', { authorizedTTL: '1m', cacheAuthorizedRequests: false, unauthorizedTTL: '10s' }))
  t.equal(off.webhook?.authorizedTtlMs, 0)
  t.equal(off.webhook?.unauthorizedTtlMs, 10_000)
  t.throws(() => loadAuthorizationConfig(file('v1', { timeout: '3' })), /time: invalid duration "3"/)
  t.throws(() => loadAuthorizationConfig(file('v1', { timeout: '-1s', authorizedTTL: '-1s' })), {
    message: '[authorizers[0].webhook.timeout: Invalid value: "-1s": must be > 0s and <= 30s, authorizers[0].webhook.authorizedTTL: Invalid value: "-1s": must be > 0s]',
  })
  t.throws(() => loadAuthorizationConfig(JSON.stringify({ apiVersion: 'apiserver.config.orch.io/v1', kind: 'AuthorizationConfiguration', authorizers: [] })), { message: 'authorizers: Required value: at least one authorization mode must be defined' })
  t.throws(() => loadAuthorizationConfig(file('v1', { matchConditions: [{ expression: 'true' }] })), { message: 'authorizers[0].webhook.matchConditionSubjectAccessReviewVersion: Required value: required if match conditions are specified' })
  t.throws(() => loadAuthorizationConfig(file('v1', {}, [{ type: 'RBAC', name: 'rbac', webhook: {} }])), { message: 'authorizers[1].webhook: Invalid value: "non-null": may only be specified when type=Webhook' })
  t.throws(() => loadAuthorizationConfig(file('v1', {}, [{ type: 'Webhook', name: 'Other' }])), /authorizers\[1\]\.webhook: Required value: required when type=Webhook/)
  t.throws(() => loadAuthorizationConfig(file('v1', {}, [{ type: 'Magic', name: 'magic' }])), { message: 'authorizers[1].type: Unsupported value: "Magic": supported values: "ABAC", "AlwaysAllow", "AlwaysDeny", "Node", "RBAC", "Webhook"' })
  t.throws(() => loadAuthorizationConfig(file('v1', {}).replace('"hook"', '"Hook_1"')), /authorizers\[0\]\.name: Invalid value: "Hook_1": authorizer name is invalid: a lowercase RFC 1123 subdomain/)
})

t.test('a reload keeps the built-in types of the first load and may not add Node or RBAC', async (t) => {
  const first = loadAuthorizationConfig(file('v1', {}, [{ type: 'RBAC', name: 'rbac' }]))
  const required = builtinTypes(first)
  t.same([...required], ['RBAC'])
  t.throws(() => loadAuthorizationConfig(file('v1', {}), required), { message: 'missing required types: [RBAC]' })
  t.throws(() => loadAuthorizationConfig(file('v1', {}, [{ type: 'RBAC', name: 'rbac' }, { type: 'Node', name: 'node' }]), required), { message: 'authorizer type Node is not allowed if it was not enabled at initial server startup' })
  t.equal(loadAuthorizationConfig(file('v1', {}, [{ type: 'AlwaysDeny', name: 'alwaysdeny' }, { type: 'RBAC', name: 'rbac' }]), required).length, 3)
})
