import t from 'tap'
import {
  authenticateBootstrapToken, parseBootstrapToken, bootstrapGroups, hasExpired, computeDetachedSignature, verifyDetachedSignature,
  signingTokenOf, validateBootstrapGroupName, constantTimeEqual,
} from '../../src/auth/bootstrap-token.js'

const b64 = (s: string) => Buffer.from(s).toString('base64')
const NOW = Date.UTC(2025, 5, 1)

function secret(data: Record<string, string>, extra: Record<string, any> = {}): Record<string, any> {
  const d: Record<string, string> = {}
  for (const [k, v] of Object.entries(data)) d[k] = b64(v)
  return { apiVersion: 'v1', kind: 'Secret', type: 'bootstrap.orch.io/token', metadata: { name: 'bootstrap-token-abcdef', namespace: 'orch-system' }, data: d, ...extra }
}

const good = { 'token-id': 'abcdef', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true' }

function auth(token: string, s: Record<string, any> | undefined, now = NOW) {
  const seen: string[] = []
  const r = authenticateBootstrapToken(token, (ns, name) => { seen.push(`${ns}/${name}`); return s }, now)
  return { r, seen }
}

t.test('token format', async (t) => {
  t.same(parseBootstrapToken('abcdef.0123456789abcdef'), { id: 'abcdef', secret: '0123456789abcdef' })
  for (const bad of ['ABCDEF.0123456789abcdef', 'abcde.0123456789abcdef', 'abcdef.0123456789abcde', 'abcdef0123456789abcdef', 'abcdef.0123456789abcdef ', 'abcdef.0123456789abcdeg0', 'abc-ef.0123456789abcdef', '']) {
    t.equal(parseBootstrapToken(bad), undefined, JSON.stringify(bad))
  }
})

t.test('authentication', async (t) => {
  const { r, seen } = auth('abcdef.0123456789abcdef', secret(good))
  t.same(r, { ok: true, user: { username: 'system:bootstrap:abcdef', uid: '', groups: ['system:bootstrappers'] } })
  t.same(seen, ['orch-system/bootstrap-token-abcdef'])

  const extra = auth('abcdef.0123456789abcdef', secret({ ...good, 'auth-extra-groups': 'system:bootstrappers:worker,system:bootstrappers:a:b-c,system:bootstrappers:worker' }))
  t.same(extra.r, { ok: true, user: { username: 'system:bootstrap:abcdef', uid: '', groups: ['system:bootstrappers', 'system:bootstrappers:a:b-c', 'system:bootstrappers:worker'] } }, 'sorted, de-duplicated')

  // every failure is silent
  const fails: Array<[string, string, Record<string, any> | undefined]> = [
    ['bad format', 'nope', secret(good)],
    ['no secret', 'abcdef.0123456789abcdef', undefined],
    ['wrong secret', 'abcdef.0123456789abcdee', secret(good)],
    ['wrong id in data', 'abcdef.0123456789abcdef', secret({ ...good, 'token-id': 'zzzzzz' })],
    ['wrong type', 'abcdef.0123456789abcdef', secret(good, { type: 'Opaque' })],
    ['no data', 'abcdef.0123456789abcdef', { ...secret(good), data: {} }],
    ['deleting', 'abcdef.0123456789abcdef', secret(good, { metadata: { name: 'bootstrap-token-abcdef', deletionTimestamp: '2025-01-01T00:00:00Z' } })],
    ['expired', 'abcdef.0123456789abcdef', secret({ ...good, expiration: '2025-05-31T23:59:59Z' })],
    ['bad expiration', 'abcdef.0123456789abcdef', secret({ ...good, expiration: 'tomorrow' })],
    ['no auth usage', 'abcdef.0123456789abcdef', secret({ ...good, 'usage-bootstrap-authentication': 'false' })],
    ['usage not exactly true', 'abcdef.0123456789abcdef', secret({ ...good, 'usage-bootstrap-authentication': 'True' })],
    ['signing only', 'abcdef.0123456789abcdef', secret({ 'token-id': 'abcdef', 'token-secret': '0123456789abcdef', 'usage-bootstrap-signing': 'true' })],
    ['bad extra group', 'abcdef.0123456789abcdef', secret({ ...good, 'auth-extra-groups': 'system:masters' })],
    ['extra group trailing colon', 'abcdef.0123456789abcdef', secret({ ...good, 'auth-extra-groups': 'system:bootstrappers:x:' })],
  ]
  for (const [msg, token, s] of fails) {
    const { r } = auth(token, s)
    t.equal(r.ok, false, msg)
    t.ok(!r.ok && r.reason, `${msg}: has a log reason`)
  }
  t.match(auth('abcdef.0123456789abcdef', secret({ ...good, 'auth-extra-groups': 'system:masters' })).r,
    { ok: false, reason: /has invalid value for key auth-extra-groups: bootstrap group "system:masters" is invalid/ })
  // a future expiration is fine; stringData is read too
  t.equal(auth('abcdef.0123456789abcdef', secret({ ...good, expiration: '2025-06-01T00:00:01Z' })).r.ok, true)
  t.equal(auth('abcdef.0123456789abcdef', { type: 'bootstrap.orch.io/token', metadata: { name: 'bootstrap-token-abcdef' }, stringData: good }).r.ok, true)
})

t.test('helpers', async (t) => {
  t.equal(hasExpired(secret({}), NOW), false, 'no expiration never expires')
  t.equal(hasExpired(secret({ expiration: '2025-06-01T00:00:00Z' }), NOW), false, 'exactly now is not after')
  t.equal(hasExpired(secret({ expiration: '2025-06-01T02:00:00+03:00' }), NOW), true, 'offsets honoured')
  t.equal(hasExpired(secret({ expiration: '2025-06-01T00:00:00.5Z' }), NOW), false, 'fractional seconds')
  t.equal(hasExpired(secret({ expiration: '2025-06-01' }), NOW), true, 'not RFC 3339')
  t.equal(validateBootstrapGroupName('system:bootstrappers:ok'), undefined)
  t.match(validateBootstrapGroupName('system:bootstrappers:'), /must match/)
  t.match(validateBootstrapGroupName(`system:bootstrappers:${'a'.repeat(257)}`), /must match/)
  t.same(bootstrapGroups(secret({ 'auth-extra-groups': '' })), { groups: ['system:bootstrappers'] })
  t.ok(constantTimeEqual('abc', 'abc'))
  t.notOk(constantTimeEqual('abc', 'abcd'))
})

t.test('cluster-info detached signature', async (t) => {
  // the upstream library's check vector
  const content = 'Hello from the other side. I must have called a thousand times.'
  t.equal(computeDetachedSignature(content, 'joshua', 'my voice is my passcode'),
    'eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_8')
  const sig = computeDetachedSignature('kubeconfig text', 'abcdef', '0123456789abcdef')
  t.ok(verifyDetachedSignature('kubeconfig text', sig, 'abcdef', '0123456789abcdef'))
  t.notOk(verifyDetachedSignature('kubeconfig text!', sig, 'abcdef', '0123456789abcdef'))
  const signing = { ...good, 'usage-bootstrap-signing': 'true' }
  t.same(signingTokenOf(secret(signing), NOW), { id: 'abcdef', secret: '0123456789abcdef' })
  t.equal(signingTokenOf(secret(good), NOW), undefined, 'not marked for signing')
  t.equal(signingTokenOf(secret({ ...signing, expiration: '2020-01-01T00:00:00Z' }), NOW), undefined, 'expired')
  t.equal(signingTokenOf(secret({ ...signing, 'token-id': 'zzzzzz' }), NOW), undefined, 'name must match the id')
})
