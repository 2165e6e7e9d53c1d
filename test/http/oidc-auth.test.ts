// Black-box: OpenID Connect / JWT authentication against a provider run here (https with its own CA, discovery, JWKS,
// tokens signed with jose): the --oidc-* flags and an AuthenticationConfiguration file (CEL mappings and rules), seen
// through kubectl 1.32 (auth whoami over TLS), TokenReview (upstream's error texts) and 401 Status bodies; key rotation,
// file reload, an issuer unreachable at start, RBAC for the mapped user, and the start-up refusals.
import t from 'tap'
import { cpSync, mkdtempSync, rmSync, writeFileSync, renameSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { stringify as toYaml } from 'yaml'
import { runKubectl } from '../helpers/kubectl.js'
import { startServer, freePort, runMain, type TestServer } from '../helpers/server.js'
import { startOidcProvider, makeKey, makeTlsMaterial, type OidcProvider } from '../helpers/oidc-provider.js'

const work = mkdtempSync(join(tmpdir(), 'orch-oidc-'))
const home = mkdtempSync(join(work, 'home-'))
t.teardown(() => rmSync(work, { recursive: true, force: true }))

const UNAUTHORIZED = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 }
const now = () => Math.floor(Date.now() / 1000)

// The tests are independent (each starts its own server; the one that counts the provider's key-set fetches has that
// provider to itself), and most of their time is waiting on the server's 10 s retry intervals: they run side by side.
t.jobs = 3
// The servers that wait on those intervals (discovery retry, key-set refetch limit) run with them at 3 s: the test-only
// ORCH_TEST_OIDC_INTERVAL_MS (README); the others keep upstream's 10 s.
const SHORT = { ORCH_TEST_OIDC_INTERVAL_MS: '3000' }

let idp: OidcProvider
const caFile = join(work, 'idp-ca.pem')
t.before(async () => {
  idp = await startOidcProvider()
  writeFileSync(caFile, idp.caPem)
})
t.teardown(async () => { await idp?.close() })

async function whoami(s: TestServer, token: string): Promise<{ code: number; user: any; stderr: string }> {
  const r = await runKubectl(s.kubeconfig, home, ['--token', token, 'auth', 'whoami', '-o', 'json'])
  let user: any
  try { user = JSON.parse(r.stdout).status.userInfo } catch { user = undefined }
  return { code: r.code, user, stderr: r.stderr }
}

/** TokenReview as the admin: what the token chain says of a token (upstream's error texts in status.error). */
async function review(s: TestServer, token: string, audiences?: string[]): Promise<any> {
  const r = await s.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, ...(audiences ? { audiences } : {}) } })
  return r.json.status
}

async function waitFor(what: string, f: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms
  for (;;) {
    if (await f()) return
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}


t.test('--oidc-* flags', async (t) => {
  const s = await startServer({
    secure: true,
    env: SHORT,
    args: ['--oidc-issuer-url', idp.issuer, '--oidc-client-id', 'orch', '--oidc-ca-file', caFile, '--oidc-groups-claim', 'groups',
      '--oidc-groups-prefix', 'oidc:', '--oidc-required-claim', 'hd=example.com'],
  })
  t.teardown(() => s.stop())
  const base = () => ({ iss: idp.issuer, aud: 'orch', sub: 'alice', groups: ['dev', 'ops'], hd: 'example.com', iat: now(), exp: now() + 600 })
  const good = await idp.sign({ ...base(), jti: 'id-1' })
  // Discovery runs in the background after the start: wait until it is done.
  await waitFor('the issuer to be initialized', async () => (await review(s, good)).authenticated === true)

  await t.test('kubectl auth whoami shows the mapped user (issuer# prefix for sub, prefixed groups, credential id)', async (t) => {
    const w = await whoami(s, good)
    t.equal(w.code, 0, w.stderr)
    t.same(w.user, {
      username: `${idp.issuer}#alice`, groups: ['oidc:dev', 'oidc:ops', 'system:authenticated'],
      extra: { 'authentication.orch.io/credential-id': ['JTI=id-1'] },
    })
  })

  await t.test('key rotation: a token with a new kid makes the server fetch the key set again (rate-limited)', async (t) => {
    const before = idp.hits['/keys'] ?? 0
    const k2 = await makeKey('key-2')
    // made now: the next key must reach the server within the rate limit of the fetch this token causes
    const k3 = await makeKey('key-3')
    idp.keys.push(k2)
    const w = await whoami(s, await idp.sign({ ...base(), sub: 'rotated' }, k2))
    t.equal(w.code, 0, w.stderr)
    t.equal(w.user.username, `${idp.issuer}#rotated`)
    t.equal(idp.hits['/keys'], before + 1, 'the JWKS was fetched again, once')
    // Another new key at once: no second fetch within the rate limit (10 s, 3 s here); then it is picked up.
    idp.keys.push(k3)
    const t3 = await idp.sign({ ...base(), sub: 'third' }, k3)
    t.equal((await s.requestAs(t3, 'GET', '/api/v1/namespaces')).status, 401)
    t.equal(idp.hits['/keys'], before + 1, 'rate-limited')
    await waitFor('the third key', async () => (await review(s, t3)).authenticated === true, 20_000)
    t.equal(idp.hits['/keys'], before + 2)
  })

  await t.test('TokenReview with audiences: the OIDC authenticator is audience-agnostic (the API audiences must meet them)', async (t) => {
    const ok = await review(s, good, ['https://orch.default.svc.cluster.local', 'x'])
    t.equal(ok.authenticated, true)
    t.same(ok.audiences, ['https://orch.default.svc.cluster.local'])
    const no = await review(s, await idp.sign({ ...base(), sub: 'aud-check' }), ['x'])
    t.notOk(no.authenticated)
    t.equal(no.error, 'token audiences ["https://orch.default.svc.cluster.local"] is invalid for the target audiences ["x"]')
  })

  await t.test('a groups claim holding one string is one group', async (t) => {
    const w = await whoami(s, await idp.sign({ ...base(), groups: 'admins' }))
    t.same(w.user.groups, ['oidc:admins', 'system:authenticated'])
  })

  await t.test('refused tokens: 401 Unauthorized, upstream texts in TokenReview', async (t) => {
    const other = await makeKey('key-1')
    const foreign = await makeKey('foreign')
    const cases: Array<[string, string, RegExp]> = [
      ['expired', await idp.sign({ ...base(), exp: now() - 5 }), /^oidc: verify token: oidc: token is expired \(Token Expiry: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0000 UTC\)$/],
      ['wrong audience', await idp.sign({ ...base(), aud: ['someone-else'] }), /^oidc: verify token: oidc: expected audience "orch" got \["someone-else"\]$/],
      ['bad signature (same kid, another key)', await idp.sign(base(), other), /^oidc: verify token: failed to verify signature: failed to verify id token signature$/],
      ['unknown key', await idp.sign(base(), foreign), /^oidc: verify token: failed to verify signature: failed to verify id token signature$/],
      ['required claim absent', await idp.sign({ ...base(), hd: undefined }), /^oidc: required claim hd not present in ID token$/],
      ['required claim differs', await idp.sign({ ...base(), hd: 'evil.com' }), /^oidc: required claim hd value does not match\. Got = evil\.com, want = example\.com$/],
      ['not yet valid', await idp.sign({ ...base(), nbf: now() + 600 }), /^oidc: verify token: oidc: current time .* before the nbf \(not before\) time: /],
      ['no sub', await idp.sign({ ...base(), sub: undefined }), /^oidc: parse username claims "sub": claim not present$/],
      ['another issuer', await idp.sign({ ...base(), iss: 'https://elsewhere.example.com' }), /^invalid bearer token$/],
    ]
    const es = await makeKey('ec-1', 'ES256')
    idp.keys.push(es)
    cases.push(['an algorithm not allowed (ES256)', await idp.sign(base(), es), /^oidc: verify token: oidc: id token signed with unsupported algorithm, expected \["RS256"\] got "ES256"$/])
    for (const [name, token, error] of cases) {
      const r = await s.requestAs(token, 'GET', '/api/v1/namespaces')
      t.equal(r.status, 401, name)
      t.same(r.json, UNAUTHORIZED, name)
      const st = await review(s, token)
      t.notOk(st.authenticated, name)
      t.match(st.error, error, name)
    }
    idp.keys.pop()
    const k = await whoami(s, cases[0][1])
    t.not(k.code, 0, 'kubectl: expired token refused')
    t.match(k.stderr, /Unauthorized|provide credentials/)
  })

  await t.test('other authenticators still work: the static admin token and a service-account token', async (t) => {
    const ns = await s.request('GET', '/api/v1/namespaces')
    t.equal(ns.status, 200)
    const sa = await s.request('POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'robot' } })
    t.equal(sa.status, 201)
    const tr = await s.request('POST', '/api/v1/namespaces/default/serviceaccounts/robot/token', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} })
    t.equal(tr.status, 201, tr.text)
    const w = await whoami(s, tr.json.status.token)
    t.equal(w.code, 0, w.stderr)
    t.equal(w.user.username, 'system:serviceaccount:default:robot')
  })

  await t.test('RBAC applies to the mapped user and groups', async (t) => {
    const token = await idp.sign({ ...base(), sub: 'carol', groups: ['readers'] })
    const denied = await s.requestAs(token, 'GET', '/api/v1/namespaces/default/configmaps')
    t.equal(denied.status, 403)
    t.equal(denied.json.message, `configmaps is forbidden: User "${idp.issuer}#carol" cannot list resource "configmaps" in API group "" in the namespace "default"`)
    const rb = await s.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', {
      metadata: { name: 'oidc-readers' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'oidc:readers' }],
    })
    t.equal(rb.status, 201, rb.text)
    await waitFor('the binding to apply', async () => (await s.requestAs(token, 'GET', '/api/v1/namespaces/default/configmaps')).status === 200, 10_000)
    const can = await runKubectl(s.kubeconfig, home, ['--token', token, 'auth', 'can-i', 'list', 'configmaps', '-n', 'default'])
    t.equal(can.stdout.trim(), 'yes')
  })
})

t.test('--authentication-config: CEL mappings and rules, several audiences, reload', async (t) => {
  // A provider of its own: the --oidc-* test counts the key-set fetches of the shared one.
  const idp = await startOidcProvider()
  t.teardown(() => idp.close())
  const file = join(work, 'authn.yaml')
  const config = (audiences: string[]) => ({
    apiVersion: 'apiserver.config.orch.io/v1', kind: 'AuthenticationConfiguration',
    jwt: [{
      issuer: { url: idp.issuer, certificateAuthority: idp.caPem, audiences, ...(audiences.length > 1 ? { audienceMatchPolicy: 'MatchAny' } : {}) },
      claimValidationRules: [
        { claim: 'hd', requiredValue: 'example.com' },
        { expression: 'claims.email_verified == true', message: 'email must be verified' },
      ],
      claimMappings: {
        username: { expression: 'claims.email' },
        groups: { expression: "claims.roles.map(r, 'role:' + r)" },
        uid: { claim: 'sub' },
        extra: [{ key: 'example.com/tenant', valueExpression: 'claims.tenant' }, { key: 'example.com/empty', valueExpression: "''" }],
      },
      userValidationRules: [{ expression: "!user.username.startsWith('system:')", message: 'username cannot use reserved system: prefix' }],
    }],
  })
  writeFileSync(file, toYaml(config(['orch'])))
  // Two front-ends: each thread runs its own authenticators and reloads the file itself.
  const s = await startServer({ secure: true, args: ['--authentication-config', file, '--frontends', '2'] })
  t.teardown(() => s.stop())
  const base = () => ({ iss: idp.issuer, aud: 'orch', sub: 'u-123', email: 'dana@example.com', email_verified: true, hd: 'example.com', roles: ['admin', 'dev'], tenant: 'blue', iat: now(), exp: now() + 600 })
  const good = await idp.sign(base())
  await waitFor('the issuer to be initialized', async () => (await review(s, good)).authenticated === true)
  await waitFor('both front-ends to initialize', async () => {
    for (let i = 0; i < 3; i++) if ((await whoami(s, good)).code !== 0) return false
    return true
  })

  await t.test('kubectl auth whoami: username, groups, uid and extra from CEL', async (t) => {
    const w = await whoami(s, good)
    t.equal(w.code, 0, w.stderr)
    t.same(w.user, { username: 'dana@example.com', uid: 'u-123', groups: ['role:admin', 'role:dev', 'system:authenticated'], extra: { 'example.com/tenant': ['blue'] } })
  })

  await t.test('rules that fail: 401, with upstream texts', async (t) => {
    const cases: Array<[string, string, string]> = [
      ['required hd absent', await idp.sign({ ...base(), hd: undefined }), 'oidc: required claim hd not present in ID token'],
      ['claim rule false', await idp.sign({ ...base(), email_verified: false }), "oidc: error evaluating claim validation expression: validation expression 'claims.email_verified == true' failed: email must be verified"],
      ['user rule false', await idp.sign({ ...base(), email: 'system:admin' }), "oidc: error evaluating user info validation rule: validation expression '!user.username.startsWith('system:')' failed: username cannot use reserved system: prefix"],
      ['username expression errors', await idp.sign({ ...base(), email: undefined }), "oidc: error evaluating username claim expression: expression 'claims.email' resulted in error: no such key: email"],
      ['username expression not a string', await idp.sign({ ...base(), email: 42 }), 'oidc: error evaluating username claim expression: username claim expression must return a string'],
      ['second audience not configured yet', await idp.sign({ ...base(), aud: 'kubectl' }), 'oidc: verify token: oidc: expected audience "orch" got ["kubectl"]'],
    ]
    for (const [name, token, error] of cases) {
      const r = await s.requestAs(token, 'GET', '/api/v1/namespaces')
      t.equal(r.status, 401, name)
      t.same(r.json, UNAUTHORIZED, name)
      t.equal((await review(s, token)).error, error, name)
    }
    const w = await whoami(s, cases[2][1])
    t.not(w.code, 0, 'kubectl: the system: user is refused')
  })

  await t.test('reload: a changed file takes effect; an invalid one keeps the last good configuration', async (t) => {
    const second = await idp.sign({ ...base(), aud: ['kubectl'] })
    t.equal((await s.requestAs(second, 'GET', '/api/v1/namespaces')).status, 401)
    // Replaced the way editors and ConfigMap mounts do it (a rename over the file).
    writeFileSync(`${file}.tmp`, toYaml(config(['orch', 'kubectl'])))
    renameSync(`${file}.tmp`, file)
    await waitFor('the new audience', async () => (await review(s, second)).authenticated === true, 20_000)
    // kubectl opens a new connection each run: with two front-ends, both have reloaded once several runs in a row pass.
    await waitFor('both front-ends to reload', async () => {
      for (let i = 0; i < 4; i++) if ((await whoami(s, second)).code !== 0) return false
      return true
    }, 20_000)
    const w = await whoami(s, second)
    t.equal(w.code, 0, w.stderr)
    t.equal(w.user.username, 'dana@example.com')
    // An invalid file (duplicate issuer) is refused and logged; tokens keep working under the old configuration.
    const bad = config(['orch'])
    bad.jwt.push(structuredClone(bad.jwt[0]))
    writeFileSync(file, toYaml(bad))
    await waitFor('the reload error in the log', async () => s.logs.some((l) => l.includes('failed to validate authentication config') && l.includes('Duplicate value')), 20_000)
    t.equal((await review(s, second)).authenticated, true, 'the old configuration stays')
  })
})

t.test('an issuer unreachable at start: the server starts, tokens fail until discovery succeeds', async (t) => {
  const port = await freePort()
  const tls = makeTlsMaterial()
  const ca = join(work, 'late-ca.pem')
  writeFileSync(ca, tls.caPem)
  const issuer = `https://127.0.0.1:${port}`
  const s = await startServer({ env: SHORT, args: ['--oidc-issuer-url', issuer, '--oidc-client-id', 'orch', '--oidc-ca-file', ca, '--oidc-username-prefix', '-'] })
  t.teardown(() => s.stop())
  const key = await makeKey('late-1')
  const late = await startOidcProvider({ port, tls })
  t.teardown(() => late.close())
  late.keys = [key]
  const token = await late.sign({ iss: issuer, aud: 'orch', sub: 'erin', exp: now() + 600 }, key)
  // Until the next attempt (every 10 s, 3 s here) the authenticator is not initialized.
  const first = await review(s, token)
  if (!first.authenticated) t.equal(first.error, 'oidc: authenticator not initialized')
  await waitFor('discovery to succeed', async () => (await review(s, token)).authenticated === true, 30_000)
  const r = await s.requestAs(token, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' })
  t.equal(r.status, 201)
  t.same(r.json.status.userInfo, { username: 'erin', groups: ['system:authenticated'] })
  t.ok(s.logs.some((l) => l.includes('oidc authenticator: initializing plugin failed; retrying in 3s')), 'the failed attempt is logged')
})

t.test("the file's anonymous section: anonymous requests only on the listed paths; it may not change on reload", async (t) => {
  const file = join(work, 'anon.yaml')
  const cfg = (paths: string[]) => toYaml({ apiVersion: 'apiserver.config.orch.io/v1beta1', kind: 'AuthenticationConfiguration', anonymous: { enabled: true, conditions: paths.map((path) => ({ path })) } })
  writeFileSync(file, cfg(['/livez', '/version']))
  const s = await startServer({ args: ['--authentication-config', file] })
  t.teardown(() => s.stop())
  t.equal((await s.requestAs(null, 'GET', '/livez')).status, 200)
  t.equal((await s.requestAs(null, 'GET', '/version')).status, 200)
  const denied = await s.requestAs(null, 'GET', '/readyz')
  t.equal(denied.status, 401)
  t.same(denied.json, UNAUTHORIZED)
  t.equal((await s.requestAs(null, 'GET', '/version?x=1')).status, 200, 'the path alone is compared')
  t.equal((await s.request('GET', '/readyz')).status, 200, 'tokens still work')
  writeFileSync(file, cfg(['/livez']))
  await waitFor('the reload error', async () => s.logs.some((l) => l.includes('anonymous: Forbidden: changed from initial configuration file')), 20_000)
  t.equal((await s.requestAs(null, 'GET', '/version')).status, 200, 'the initial anonymous configuration stays')
})

t.test('start-up refusals', async (t) => {
  // Each run has a data dir of its own, a copy of the first run's (its keys made once: the refusals come after them).
  const first = mkdtempSync(join(work, 'data-'))
  const dataDir = () => { const d = mkdtempSync(join(work, 'data-')); cpSync(first, d, { recursive: true }); return d }
  const start = async (args: string[], dir = dataDir()) => runMain(['--port', String(await freePort()), '--secure-port', '0', '--data-dir', dir, ...args], 30_000)
  const file = (name: string, cfg: unknown) => { const f = join(work, name); writeFileSync(f, typeof cfg === 'string' ? cfg : toYaml(cfg)); return f }
  const jwt = (over: Record<string, unknown> = {}) => ({ issuer: { url: idp.issuer, audiences: ['orch'] }, claimMappings: { username: { claim: 'sub', prefix: '' } }, ...over })
  const doc = (list: unknown[]) => ({ apiVersion: 'apiserver.config.orch.io/v1', kind: 'AuthenticationConfiguration', jwt: list })
  const cases: Array<[string, string[], string]> = [
    ['duplicate issuer', ['--authentication-config', file('dup.yaml', doc([jwt(), jwt()]))],
      `invalid authentication configuration: jwt[1].issuer.url: Duplicate value: "${idp.issuer}"`],
    ['issuer equal to the service-account issuer', ['--authentication-config', file('sa.yaml', doc([jwt({ issuer: { url: 'https://orch.default.svc.cluster.local', audiences: ['orch'] } })]))],
      'invalid authentication configuration: jwt[0].issuer.url: Invalid value: "https://orch.default.svc.cluster.local": URL must not overlap with disallowed issuers: [https://orch.default.svc.cluster.local]'],
    ['claims.email without claims.email_verified', ['--authentication-config', file('email.yaml', doc([jwt({ claimMappings: { username: { expression: 'claims.email' } } })]))],
      'invalid authentication configuration: jwt[0].claimMappings.username.expression: Invalid value: "claims.email": claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression'],
    ['the file and --oidc-* flags', ['--authentication-config', file('ok.yaml', doc([jwt()])), '--oidc-issuer-url', idp.issuer, '--oidc-client-id', 'orch'],
      'authentication-config file and oidc-* flags are mutually exclusive'],
    ['several problems at once', ['--authentication-config', file('many.yaml', doc([{ issuer: { url: 'http://x.example.com?a=b', audiences: ['a', 'b'] }, claimMappings: { username: { claim: 'sub' }, extra: [{ key: 'orch.io/x', valueExpression: 'claims.x' }] }, claimValidationRules: [{ expression: 'claims.x' }] }]))],
      'invalid authentication configuration: [jwt[0].issuer.url: Invalid value: "http://x.example.com?a=b": URL scheme must be https, jwt[0].issuer.url: Invalid value: "http://x.example.com?a=b": URL must not contain a query, jwt[0].issuer.audienceMatchPolicy: Invalid value: "": audienceMatchPolicy must be MatchAny for multiple audiences, jwt[0].claimValidationRules[0].expression: Invalid value: "claims.x": must evaluate to bool, jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing, jwt[0].claimMappings.extra[0].key: Invalid value: "orch.io/x": orch.io and its subdomains are reserved for orch use]'],
    ['a CEL syntax error', ['--authentication-config', file('syntax.yaml', doc([jwt({ userValidationRules: [{ expression: 'user.username ==', message: 'm' }] })]))],
      'invalid authentication configuration: jwt[0].userValidationRules[0].expression: Invalid value: "user.username ==": compilation failed: ERROR: <input>:1:'],
    ['an unknown field', ['--authentication-config', file('unknown.yaml', doc([{ ...jwt(), issuer: { url: idp.issuer, audiences: ['orch'], audience: 'x' } }]))],
      `failed to load authentication configuration from file "${join(work, 'unknown.yaml')}": strict decoding error: unknown field "jwt[0].issuer.audience"`],
    ['an unknown version', ['--authentication-config', file('version.yaml', { apiVersion: 'apiserver.config.orch.io/v2', kind: 'AuthenticationConfiguration' })],
      'no kind "AuthenticationConfiguration" is registered for version "apiserver.config.orch.io/v2"'],
    ['an http issuer flag', ['--oidc-issuer-url', 'http://idp.example.com', '--oidc-client-id', 'orch'],
      'invalid authentication configuration: jwt[0].issuer.url: Invalid value: "http://idp.example.com": URL scheme must be https'],
    ['an issuer without a client id', ['--oidc-issuer-url', idp.issuer],
      'oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set'],
    ['a required claim without a value', ['--oidc-issuer-url', idp.issuer, '--oidc-client-id', 'orch', '--oidc-required-claim', 'hd'],
      'invalid argument "hd" for "--oidc-required-claim" flag: malformed pair, expect string=string'],
    ['an algorithm not on the list', ['--oidc-issuer-url', idp.issuer, '--oidc-client-id', 'orch', '--oidc-signing-algs', 'HS256'],
      'oidc: unsupported signing alg: "HS256"'],
    ['--anonymous-auth with an anonymous section', ['--anonymous-auth=false', '--authentication-config', file('anon-flag.yaml', { apiVersion: 'apiserver.config.orch.io/v1', kind: 'AuthenticationConfiguration', anonymous: { enabled: true } })],
      'anonymous: Forbidden: --anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file'],
    ['anonymous conditions while disabled', ['--authentication-config', file('anon-off.yaml', { apiVersion: 'apiserver.config.orch.io/v1', kind: 'AuthenticationConfiguration', anonymous: { enabled: false, conditions: [{ path: '/livez' }] } })],
      'invalid authentication configuration: anonymous.conditions: Invalid value: [{"path":"/livez"}]: enabled should be set to true when conditions are defined'],
    ['a missing file', ['--authentication-config', join(work, 'nope.yaml')],
      `failed to load authentication configuration from file "${join(work, 'nope.yaml')}": open ${join(work, 'nope.yaml')}: no such file or directory`],
  ]
  // v1beta1 and JSON are read as well.
  const json = file('beta.json', JSON.stringify({ apiVersion: 'apiserver.config.orch.io/v1beta1', kind: 'AuthenticationConfiguration', jwt: [jwt(), jwt()] }))
  // Each run only loads the code and stops at its flags: three at a time, then the checks in order.
  const runs: Array<string[]> = [...cases.map((c) => c[1]), ['--authentication-config', json]]
  const results: Array<{ code: number | null; out: string }> = [await start(runs[0], first)]
  let next = 1
  await Promise.all(Array.from({ length: 3 }, async () => { for (let i = next++; i < runs.length; i = next++) results[i] = await start(runs[i]) }))
  for (const [i, [name, , message]] of cases.entries()) {
    const r = results[i]
    t.equal(r.code, 2, `${name}: exit code`)
    t.match(r.out, message, name)
  }
  const r = results[cases.length]
  t.equal(r.code, 2)
  t.match(r.out, `invalid authentication configuration: jwt[1].issuer.url: Duplicate value: "${idp.issuer}"`, 'v1beta1 as JSON')
})
