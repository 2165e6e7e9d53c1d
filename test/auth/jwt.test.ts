// The AuthenticationConfiguration's decoding and validation (upstream's field paths and texts), and one JWT
// authenticator's claim handling against a provider run here (https, its own CA).
import t from 'tap'
import { pino } from 'pino'
import { stringify as toYaml } from 'yaml'
import { aggregateText, configFromFlags, decodeAuthenticationConfiguration, validateAuthenticationConfiguration, type CompiledJwt } from '../../src/auth/jwt-config.js'
import { JwtAuthenticator, untrustedIssuer } from '../../src/auth/jwt.js'
import { startOidcProvider, type OidcProvider } from '../helpers/oidc-provider.js'

const SA = ['https://orch.default.svc.cluster.local']
const doc = (jwt: unknown[], extra: Record<string, unknown> = {}) => toYaml({ apiVersion: 'apiserver.config.orch.io/v1', kind: 'AuthenticationConfiguration', jwt, ...extra })
const a = (over: Record<string, any> = {}) => ({ issuer: { url: 'https://idp.example.com', audiences: ['orch'] }, claimMappings: { username: { claim: 'sub', prefix: '' } }, ...over })
const problems = (text: string): string => aggregateText(validateAuthenticationConfiguration(decodeAuthenticationConfiguration(text), SA).errors)

t.test('validation: upstream field paths and texts', async (t) => {
  const cases: Array<[string, unknown[], string]> = [
    ['discoveryURL equal to url', [a({ issuer: { url: 'https://idp.example.com', discoveryURL: 'https://idp.example.com/', audiences: ['orch'] } })],
      'jwt[0].issuer.discoveryURL: Invalid value: "https://idp.example.com/": discoveryURL must be different from URL'],
    ['no audiences', [a({ issuer: { url: 'https://idp.example.com' } })], 'jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required'],
    ['empty and duplicate audiences', [a({ issuer: { url: 'https://idp.example.com', audiences: ['x', '', 'x'], audienceMatchPolicy: 'MatchAny' } })],
      '[jwt[0].issuer.audiences[1]: Required value, jwt[0].issuer.audiences[2]: Duplicate value: "x"]'],
    ['a policy other than MatchAny', [a({ issuer: { url: 'https://idp.example.com', audiences: ['x'], audienceMatchPolicy: 'MatchAll' } })],
      'jwt[0].issuer.audienceMatchPolicy: Invalid value: "MatchAll": audienceMatchPolicy must be empty or MatchAny for single audience'],
    ['a CA that is no certificate', [a({ issuer: { url: 'https://idp.example.com', audiences: ['x'], certificateAuthority: 'nope' } })],
      'jwt[0].issuer.certificateAuthority: Invalid value: "<omitted>": data does not contain any valid RSA or ECDSA certificates'],
    ['user info and fragment in the url', [a({ issuer: { url: 'https://u:p@idp.example.com/#x', audiences: ['x'] } })],
      '[jwt[0].issuer.url: Invalid value: "https://u:p@idp.example.com/#x": URL must not contain a username or password, jwt[0].issuer.url: Invalid value: "https://u:p@idp.example.com/#x": URL must not contain a fragment]'],
    ['an egress selector of another kind', [a({ issuer: { url: 'https://idp.example.com', audiences: ['x'], egressSelectorType: 'etcd' } })],
      'jwt[0].issuer.egressSelectorType: Invalid value: "etcd": egress selector must be either controlplane or cluster'],
    ['claim validation rules', [a({ claimValidationRules: [
      { claim: 'hd', expression: 'true' }, {}, { claim: 'x', message: 'm' }, { claim: 'x' }, { expression: 'true', requiredValue: 'v' }, { expression: 'true' },
    ] })], '[jwt[0].claimValidationRules[0]: Invalid value: "hd": claim and expression can\'t both be set, jwt[0].claimValidationRules[1]: Required value: claim or expression is required, jwt[0].claimValidationRules[2].message: Invalid value: "m": may not be specified when claim is set, jwt[0].claimValidationRules[3].claim: Duplicate value: "x", jwt[0].claimValidationRules[4].requiredValue: Invalid value: "v": may not be specified when expression is set, jwt[0].claimValidationRules[5].expression: Duplicate value: "true"]'],
    ['username mapping missing', [a({ claimMappings: {} })], 'jwt[0].claimMappings.username: Required value: claim or expression is required'],
    ['username claim and expression', [a({ claimMappings: { username: { claim: 'sub', expression: 'claims.sub' } } })], 'jwt[0].claimMappings.username: Invalid value: "": claim and expression can\'t both be set'],
    ['a prefix with an expression', [a({ claimMappings: { username: { expression: 'claims.sub', prefix: 'p:' } } })], 'jwt[0].claimMappings.username.prefix: Invalid value: "p:": may not be specified when expression is set'],
    ['groups claim without prefix', [a({ claimMappings: { username: { claim: 'sub', prefix: '' }, groups: { claim: 'g' } } })],
      'jwt[0].claimMappings.groups.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing'],
    ['uid claim and expression', [a({ claimMappings: { username: { claim: 'sub', prefix: '' }, uid: { claim: 'sub', expression: 'claims.sub' } } })],
      'jwt[0].claimMappings.uid: Invalid value: "": claim and expression can\'t both be set'],
    ['extra keys', [a({ claimMappings: { username: { claim: 'sub', prefix: '' }, extra: [
      { key: 'Example.com/X', valueExpression: "'a'" }, { key: 'nodomain', valueExpression: "'a'" }, { key: 'a.orch.io/x', valueExpression: "'a'" },
      { key: 'example.com/y', valueExpression: "'a'" }, { key: 'example.com/y', valueExpression: "'b'" }, { key: 'example.com/z' },
    ] } })], '[jwt[0].claimMappings.extra[0].key: Invalid value: "Example.com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\'), jwt[0].claimMappings.extra[0].key: Invalid value: "Example.com/X": must be lowercase, jwt[0].claimMappings.extra[1].key: Invalid value: "nodomain": must be a domain-prefixed path (such as "acme.io/foo"), jwt[0].claimMappings.extra[2].key: Invalid value: "a.orch.io/x": orch.io and its subdomains are reserved for orch use, jwt[0].claimMappings.extra[4].key: Duplicate value: "example.com/y", jwt[0].claimMappings.extra[5].valueExpression: Required value]'],
    ['user validation rules', [a({ userValidationRules: [{ expression: '' }, { expression: 'user.username' }, { expression: "user.foo == 'x'" }, { expression: "user.uid == ''" }, { expression: "user.uid == ''" }] })],
      '[jwt[0].userValidationRules[0].expression: Required value, jwt[0].userValidationRules[1].expression: Invalid value: "user.username": must evaluate to bool, jwt[0].userValidationRules[2].expression: Invalid value: "user.foo == \'x\'": compilation failed: ERROR: <input>:1:5: undefined field \'foo\'\n | user.foo == \'x\'\n | ....^, jwt[0].userValidationRules[4].expression: Duplicate value: "user.uid == \'\'"]'],
    ['a claims expression reading another variable', [a({ claimMappings: { username: { expression: 'user.username' } } })],
      'jwt[0].claimMappings.username.expression: Invalid value: "user.username": compilation failed: ERROR: <input>:1:1: undeclared reference to \'user\' (in container \'\')\n | user.username\n | ^'],
    ['too many authenticators', Array.from({ length: 65 }, (_, i) => a({ issuer: { url: `https://idp${i}.example.com`, audiences: ['x'] } })), 'jwt: Too many: 65: must have at most 64 items'],
    ['a duplicate discovery URL', [
      a({ issuer: { url: 'https://a.example.com', discoveryURL: 'https://d.example.com/x', audiences: ['x'] } }),
      a({ issuer: { url: 'https://b.example.com', discoveryURL: 'https://d.example.com/x', audiences: ['x'] } }),
    ], 'jwt[1].issuer.discoveryURL: Duplicate value: "https://d.example.com/x"'],
  ]
  for (const [name, list, want] of cases) t.equal(problems(doc(list)), want, name)
  // claims.email in the username expression is fine when claims.email_verified is read anywhere (here in an extra mapping).
  t.equal(validateAuthenticationConfiguration(decodeAuthenticationConfiguration(doc([a({ claimMappings: {
    username: { expression: 'claims.email' }, extra: [{ key: 'example.com/verified', valueExpression: "claims.?email_verified.orValue(false) ? 'yes' : 'no'" }],
  } })])), SA).errors.length, 0)
  t.equal(problems(doc([a({ claimMappings: { username: { expression: "has(claims.email) ? claims.email : claims.sub" } } })])),
    'jwt[0].claimMappings.username.expression: Invalid value: "has(claims.email) ? claims.email : claims.sub": claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression')
})

t.test('decoding: strict, typed, registered versions only', async (t) => {
  const load = (text: string) => { try { decodeAuthenticationConfiguration(text); return 'ok' } catch (err) { return (err as Error).message } }
  t.equal(load(''), 'empty config data')
  t.equal(load('jwt: []\n'), "Object 'Kind' is missing in '{\"jwt\":[]}'")
  t.equal(load('apiVersion: apiserver.config.orch.io/v1\nkind: AuthorizationConfiguration\n'), 'no kind "AuthorizationConfiguration" is registered for version "apiserver.config.orch.io/v1" in scheme "pkg/runtime/scheme.go:100"')
  t.equal(load(doc([{ issuer: { url: 'https://x', audiences: 'orch' } }])), 'json: cannot unmarshal string into Go struct field Issuer.jwt.issuer.audiences of type []string')
  t.equal(load(doc([{ issuer: { url: 'https://x', audiences: ['orch'], extra: 1 }, claimMappings: { username: { claim: 'sub', prefix: '', x: 2 } } }])),
    'strict decoding error: unknown field "jwt[0].issuer.extra", unknown field "jwt[0].claimMappings.username.x"')
  t.equal(load('apiVersion: apiserver.config.orch.io/v1\nkind: AuthenticationConfiguration\njwt: []\njwt: []\n'), 'error converting YAML to JSON: yaml: unmarshal errors:\n  line 4: key "jwt" already set in map')
  t.equal(load('jwt:\n- issuer:\n    url: a\n    url: b\n'), 'error converting YAML to JSON: yaml: unmarshal errors:\n  line 4: key "url" already set in map')
  t.equal(load('{"apiVersion":"apiserver.config.orch.io/v1","kind":"AuthenticationConfiguration","jwt":[],"jwt":[]}'), 'strict decoding error: duplicate field "jwt"')
  t.match(load('a: [\n'), /^error converting YAML to JSON: yaml: line 2: /)
  // Nulls decode as Go does (zero values), so they meet validation rather than break it.
  t.equal(problems('apiVersion: apiserver.config.orch.io/v1\nkind: AuthenticationConfiguration\njwt: [null]\n'),
    '[jwt[0].issuer.url: Required value, jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required, jwt[0].claimMappings.username: Required value: claim or expression is required]')
  t.equal(problems(doc([a({ claimValidationRules: [null], claimMappings: { username: { claim: 'sub', prefix: null }, extra: [null] } })], { anonymous: null })),
    '[jwt[0].claimValidationRules[0]: Required value: claim or expression is required, jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing, jwt[0].claimMappings.extra[0].key: Required value, jwt[0].claimMappings.extra[0].valueExpression: Required value]')
  for (const v of ['v1', 'v1beta1', 'v1alpha1']) t.equal(load(`{"apiVersion":"apiserver.config.orch.io/${v}","kind":"AuthenticationConfiguration","jwt":[]}`), 'ok', v)
  t.equal(load('{"apiVersion":"apiserver.config.k8s.io/v1","kind":"AuthenticationConfiguration"}'), 'no kind "AuthenticationConfiguration" is registered for version "apiserver.config.k8s.io/v1" in scheme "pkg/runtime/scheme.go:100"')
})

t.test('the flags: username prefix rules and required claims', async (t) => {
  const f = { issuerUrl: 'https://idp', clientId: 'c', usernameClaim: 'sub', usernamePrefix: '', groupsClaim: '', groupsPrefix: '', requiredClaims: [], caPem: '' }
  t.same(configFromFlags(f).jwt![0].claimMappings.username, { prefix: 'https://idp#', claim: 'sub' })
  t.same(configFromFlags({ ...f, usernameClaim: 'email' }).jwt![0].claimMappings.username, { prefix: '', claim: 'email' })
  t.same(configFromFlags({ ...f, usernamePrefix: '-' }).jwt![0].claimMappings.username, { prefix: '', claim: 'sub' })
  t.same(configFromFlags({ ...f, usernamePrefix: 'p:' }).jwt![0].claimMappings.username, { prefix: 'p:', claim: 'sub' })
  t.same(configFromFlags({ ...f, requiredClaims: ['a=b=c', 'd=', 'a=x'] }).jwt![0].claimValidationRules, [{ claim: 'a', requiredValue: 'x' }, { claim: 'd', requiredValue: '' }])
})

t.test('one authenticator: claims to user', async (t) => {
  const idp: OidcProvider = await startOidcProvider()
  t.teardown(() => idp.close())
  const log = pino({ level: 'silent' })
  const made: JwtAuthenticator[] = []
  t.teardown(() => made.forEach((x) => x.close()))
  const build = async (jwt: Record<string, any>, algs = ['RS256']): Promise<JwtAuthenticator> => {
    const v = validateAuthenticationConfiguration(decodeAuthenticationConfiguration(doc([{ ...jwt, issuer: { url: idp.issuer, certificateAuthority: idp.caPem, audiences: ['orch'], ...jwt.issuer } }])), SA)
    t.same(v.errors, [])
    const x = new JwtAuthenticator(v.jwt[0] as CompiledJwt, algs, log)
    made.push(x)
    for (let i = 0; i < 200 && !x.ready; i++) await new Promise((r) => setTimeout(r, 25))
    t.ok(x.ready)
    return x
  }
  const exp = Math.floor(Date.now() / 1000) + 600
  const run = async (x: JwtAuthenticator, claims: Record<string, unknown>) => {
    const token = await idp.sign({ iss: idp.issuer, aud: 'orch', exp, ...claims })
    const r = await x.authenticate(token, untrustedIssuer(token)!.payload)
    return r.ok ? r.user : r.error
  }

  const email = await build({ claimMappings: { username: { claim: 'email', prefix: '' }, groups: { claim: 'groups', prefix: 'g:' }, uid: { claim: 'oid' } } })
  t.same(await run(email, { email: 'a@x', groups: ['a', 'b'], oid: 'u1' }), { username: 'a@x', uid: 'u1', groups: ['g:a', 'g:b'] })
  t.same(await run(email, { email: 'a@x', email_verified: true, oid: 'u1' }), { username: 'a@x', uid: 'u1', groups: [] })
  t.equal(await run(email, { email: 'a@x', email_verified: false, oid: 'u1' }), 'oidc: email not verified')
  t.equal(await run(email, { email: 'a@x', email_verified: 'true', oid: 'u1' }), "oidc: parse 'email_verified' claim: json: cannot unmarshal string into Go value of type bool")
  t.equal(await run(email, { email: 'a@x', groups: 5, oid: 'u1' }), 'oidc: parse groups claim "groups": json: cannot unmarshal number into Go value of type string')
  t.equal(await run(email, { email: 'a@x' }), 'oidc: parse uid claim "oid": claim not present')
  t.equal(await run(email, { email: 7, oid: 'u1' }), 'oidc: parse username claims "email": json: cannot unmarshal number into Go value of type string')

  const cel = await build({
    issuer: { audiences: ['orch', 'other'], audienceMatchPolicy: 'MatchAny' },
    claimMappings: {
      username: { expression: "'u:' + claims.sub" },
      groups: { expression: 'claims.teams' },
      uid: { expression: 'claims.n' },
      extra: [{ key: 'example.com/all', valueExpression: "['x', '', 'y']" }, { key: 'example.com/none', valueExpression: '[]' }],
    },
  })
  t.same(await run(cel, { sub: 's', teams: 'solo', n: 'id', aud: ['other'] }), { username: 'u:s', uid: 'id', groups: ['solo'], extra: { 'example.com/all': ['x', 'y'] } })
  t.equal(await run(cel, { sub: 's', teams: 'solo', n: 'id', aud: ['nobody'] }), 'oidc: verify token: oidc: expected audience in ["orch" "other"] got ["nobody"]')
  t.equal(await run(cel, { sub: 's', teams: [1], n: 'id' }), 'oidc: error evaluating group claim expression: expression must return a string or a list of strings')
  t.equal(await run(cel, { sub: 's', teams: 'solo', n: 5 }), 'oidc: error evaluating uid claim expression: uid claim expression must return a string')
  t.same(await run(cel, { sub: 's', teams: null, n: 'id', jti: 'j' }), { username: 'u:s', uid: 'id', groups: [], extra: { 'authentication.orch.io/credential-id': ['JTI=j'], 'example.com/all': ['x', 'y'] } })

  // discoveryURL: discovery elsewhere (here the same server under another host name); the issuer still must match.
  const viaDiscovery = await build({ issuer: { discoveryURL: `https://localhost:${idp.port}/.well-known/openid-configuration` }, claimMappings: { username: { claim: 'sub', prefix: 'd:' } } })
  t.same(await run(viaDiscovery, { sub: 's' }), { username: 'd:s', uid: '', groups: [] })
  idp.discoveredIssuer = 'https://impostor.example.com'
  const v = validateAuthenticationConfiguration(decodeAuthenticationConfiguration(doc([a({ issuer: { url: idp.issuer, certificateAuthority: idp.caPem, audiences: ['orch'] } })])), SA)
  const mismatch = new JwtAuthenticator(v.jwt[0], ['RS256'], log)
  made.push(mismatch)
  for (let i = 0; i < 200 && mismatch.health === 'not initialized'; i++) await new Promise((r) => setTimeout(r, 25))
  t.equal(mismatch.health, `oidc: issuer did not match the issuer returned by provider, expected "${idp.issuer}" got "https://impostor.example.com"`)
  t.equal(await run(mismatch, { sub: 's' }), 'oidc: authenticator not initialized')
  idp.discoveredIssuer = undefined

  // Distributed claims: the groups claim fetched from the source's endpoint, a JWT verified with its issuer's keys.
  const dist = await build({ claimMappings: { username: { claim: 'sub', prefix: '' }, groups: { claim: 'groups', prefix: 'd:' } } })
  idp.documents['/distributed'] = await idp.sign({ iss: idp.issuer, aud: 'orch', exp, groups: ['far', 'away'] })
  const sources = { _claim_names: { groups: 'src1' }, _claim_sources: { src1: { endpoint: `${idp.issuer}/distributed`, access_token: 'at-1' } } }
  const first = await run(dist, { sub: 's', ...sources })
  if (typeof first === 'string') t.equal(first, `oidc: could not expand distributed claims: verifying untrusted issuer ${idp.issuer} failed: verifier not initialized for issuer: "${idp.issuer}"`, 'the first use starts its verifier')
  let got: unknown
  for (let i = 0; i < 200; i++) { got = await run(dist, { sub: 's', ...sources }); if (typeof got !== 'string') break; await new Promise((r) => setTimeout(r, 25)) }
  t.same(got, { username: 's', uid: '', groups: ['d:far', 'd:away'] })
  t.equal(idp.authorization['/distributed'], 'Bearer at-1')
  t.equal(await run(dist, { sub: 's', _claim_names: { groups: 'src2' }, _claim_sources: {} }), 'oidc: could not expand distributed claims: id token _claim_names contained a source src2 missing in _claims_sources')
  t.equal(await run(dist, { sub: 's', _claim_names: { groups: 'src1' } }), 'oidc: could not expand distributed claims: oidc: no claim sources')
  t.same(await run(dist, { sub: 's', groups: ['own'], ...sources }), { username: 's', uid: '', groups: ['d:own'] }, 'a claim in the token wins')
  idp.documents['/distributed'] = await idp.sign({ iss: idp.issuer, aud: 'elsewhere', exp, groups: ['x'] })
  t.equal(await run(dist, { sub: 's', ...sources }), 'oidc: could not expand distributed claims: verify distributed claim token: oidc: expected audience "orch" got ["elsewhere"]')

  const empty = await build({ claimMappings: { username: { expression: "claims.?name.orValue('')" } } })
  t.equal(await run(empty, { sub: 's' }), 'oidc: empty username via CEL expression is not allowed')
  t.equal(await run(empty, { name: 'n', exp: undefined }), 'oidc: verify token: oidc: token is expired (Token Expiry: 0001-01-01 00:00:00 +0000 UTC)')
})
