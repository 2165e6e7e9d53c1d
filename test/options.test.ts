import t from 'tap'
import { resolveOptions, OptionsError, parseDuration, defaultOptions, enabledControllers } from '../src/options.js'

t.test('defaults', async (t) => {
  const o = resolveOptions([])
  t.equal(o.bindAddress, '127.0.0.1')
  t.equal(o.securePort, 6443)
  t.equal(o.port, 0)
  t.equal(o.maxRequestsInflight, 400)
  t.equal(o.maxMutatingRequestsInflight, 200)
  t.equal(o.watchHistory, 300_000)
  t.same(o.authorizationMode, ['Node', 'RBAC'], 'secure by default: Node and RBAC')
  t.equal(o.anonymousAuth, true)
  t.same(o.serviceAccountIssuer, ['https://orch.default.svc.cluster.local'])
  t.same(o.serviceAccountKeyFile, [])
  t.same(o.apiAudiences, [])
  t.equal(o.serviceAccountLookup, true)
  t.equal(o.serviceAccountSigningKeyFile, '')
  t.equal(o.serviceAccountMaxTokenExpiration, 0)
  t.equal(o.enableBootstrapTokenAuth, false)
  t.equal(o.featureGates.APIResponseCompression, true)
  t.equal(o.featureGates.CBORServingAndStorage, false)
  t.equal(o.storageCompression, true, 'records stored lz4-compressed unless --storage-compression=false')
  t.equal(resolveOptions(['--storage-compression=false']).storageCompression, false)
  t.equal(defaultOptions.dataDir, './.orch-data')
})

t.test('flags in both spellings', async (t) => {
  const o = resolveOptions(['--port=8080', '--secure-port', '0', '--anonymous-auth=false', '--watch-history', '90s', '--authorization-mode', 'AlwaysDeny,AlwaysAllow'])
  t.equal(o.port, 8080)
  t.equal(o.securePort, 0)
  t.equal(o.anonymousAuth, false)
  t.equal(o.watchHistory, 90_000)
  t.same(o.authorizationMode, ['AlwaysDeny', 'AlwaysAllow'])
})

t.test('authentication and authorization flags; repeatable flags add up', async (t) => {
  const o = resolveOptions([
    '--authorization-mode', 'RBAC,Node,AlwaysDeny', '--service-account-key-file', 'a.pem,b.pem', '--service-account-key-file=c.pem',
    '--service-account-issuer', 'https://one', '--service-account-issuer', 'https://two', '--api-audiences', 'x,y',
    '--service-account-lookup=false', '--service-account-signing-key-file', 's.pem', '--service-account-max-token-expiration', '2h',
    '--enable-bootstrap-token-auth',
  ])
  t.same(o.authorizationMode, ['RBAC', 'Node', 'AlwaysDeny'])
  t.same(o.serviceAccountKeyFile, ['a.pem', 'b.pem', 'c.pem'])
  t.same(o.serviceAccountIssuer, ['https://one', 'https://two'], 'the first occurrence replaces the default issuer')
  t.same(o.apiAudiences, ['x', 'y'])
  t.equal(o.serviceAccountLookup, false)
  t.equal(o.serviceAccountSigningKeyFile, 's.pem')
  t.equal(o.serviceAccountMaxTokenExpiration, 7_200_000)
  t.equal(o.enableBootstrapTokenAuth, true)
  t.throws(() => resolveOptions(['--authorization-mode', 'RBAC,RBAC']), /a mode may be named only once/)
  t.same(resolveOptions([]).serviceAccountIssuer, ['https://orch.default.svc.cluster.local'], 'defaults are not shared between calls')
})

t.test('errors name the flag', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [['--nope'], /unknown flag: --nope/],
    [['--port', 'x'], /--port: must be a port number/],
    [['--port', '70000'], /--port/],
    [['--frontends', '0'], /--frontends: must be at least 1/],
    [['--anonymous-auth=maybe'], /--anonymous-auth: must be true or false/],
    [['--authorization-mode', 'Magic'], /--authorization-mode: unsupported value "Magic"/],
    [['--shutdown-delay-duration', '5x'], /--shutdown-delay-duration: must be a duration/],
    [['--feature-gates', 'Nope=true'], /--feature-gates: unrecognized feature gate: Nope/],
    [['--feature-gates', 'APIResponseCompression=maybe'], /--feature-gates/],
    [['--tls-cert-file', 'a.pem'], /--tls-cert-file and --tls-private-key-file must be given together/],
    [['--secure-port', '0', '--port', '0'], /nothing to serve/],
    [['stray'], /unexpected argument "stray"/],
    [['--controllers', '*,-nope'], /--controllers: "nope" is not a known controller/],
  ]
  for (const [argv, re] of cases) {
    let caught: unknown
    try { resolveOptions(argv) } catch (err) { caught = err }
    t.ok(caught instanceof OptionsError, `${argv.join(' ')} is an OptionsError`)
    t.match((caught as Error | undefined)?.message ?? '', re, argv.join(' '))
  }
})

t.test('feature gates', async (t) => {
  const o = resolveOptions(['--feature-gates', 'APIResponseCompression=false,CBORServingAndStorage=true'])
  t.equal(o.featureGates.APIResponseCompression, false)
  t.equal(o.featureGates.CBORServingAndStorage, true)
  const d = resolveOptions(['--feature-gates', 'DeclarativeValidation=false,DeclarativeValidationTakeover=true'])
  t.equal(d.featureGates.DeclarativeValidationTakeover, false, 'disabling DeclarativeValidation disables the takeover')
})

t.test('durations', async (t) => {
  t.equal(parseDuration('300ms'), 300)
  t.equal(parseDuration('1m30s'), 90_000)
  t.equal(parseDuration('2h'), 7_200_000)
  t.equal(parseDuration('15'), 15_000)
  t.throws(() => parseDuration('1d'))
  t.throws(() => parseDuration(''))
})

t.test('service ranges: kube-apiserver\'s defaults, and bad values name the flag', async (t) => {
  const o = resolveOptions([])
  t.equal(o.serviceClusterIpRange, '10.0.0.0/24')
  t.equal(o.serviceNodePortRange, '30000-32767')
  const r = resolveOptions(['--service-cluster-ip-range', '10.96.0.0/12', '--service-node-port-range=30000+99'])
  t.same([r.serviceClusterIpRange, r.serviceNodePortRange], ['10.96.0.0/12', '30000+99'])
  const cases: Array<[string[], string]> = [
    [['--service-cluster-ip-range', '10.0.0.0/11'], 'invalid value "10.0.0.0/11" for flag --service-cluster-ip-range: specified --service-cluster-ip-range is too large; for 32-bit addresses, the mask must be >= 12'],
    [['--service-cluster-ip-range', '10.0.0.0/30'], 'invalid value "10.0.0.0/30" for flag --service-cluster-ip-range: the service cluster IP range must be at least 8 IP addresses'],
    [['--service-cluster-ip-range', '10.0.0/24'], 'invalid value "10.0.0/24" for flag --service-cluster-ip-range: service-cluster-ip-range[0] is not a valid cidr'],
    [['--service-cluster-ip-range', 'fd00::/112'], 'invalid value "fd00::/112" for flag --service-cluster-ip-range: this server allocates from one IPv4 range; IPv6 ranges are not supported'],
    [['--service-cluster-ip-range', '10.0.0.0/24,fd00::/112'], 'invalid value "10.0.0.0/24,fd00::/112" for flag --service-cluster-ip-range: this server allocates from one IPv4 range; dual-stack ranges are not supported'],
    [['--service-node-port-range', '32767-30000'], 'invalid value "32767-30000" for flag --service-node-port-range: end port cannot be less than start port: 32767-30000'],
    [['--service-node-port-range', '30000-70000'], 'invalid value "30000-70000" for flag --service-node-port-range: the port range cannot be greater than 65535: 30000-70000'],
    [['--advertise-address', '127.0.0.1'], 'invalid value "127.0.0.1" for flag --advertise-address: must be an IPv4 address that is not loopback or unspecified'],
    [['--service-node-port-range', 'high'], 'invalid value "high" for flag --service-node-port-range: strconv.Atoi: parsing "high": invalid syntax'],
  ]
  for (const [argv, message] of cases) {
    let caught: unknown
    try { resolveOptions(argv) } catch (err) { caught = err }
    t.ok(caught instanceof OptionsError, argv.join(' '))
    t.equal((caught as Error | undefined)?.message, message)
  }
})

t.test('--controllers: *, names and -names, in either spelling', async (t) => {
  const all = enabledControllers(resolveOptions([]).controllers)
  t.ok(all.has('disruption-controller') && all.has('namespace-controller'), 'on by default')
  t.notOk(all.has('token-cleaner-controller') || all.has('bootstrap-signer-controller'), 'the bootstrap token controllers are off by default')
  const some = enabledControllers(resolveOptions(['--controllers=*,tokencleaner,-disruption']).controllers)
  t.ok(some.has('token-cleaner-controller'))
  t.notOk(some.has('disruption-controller'))
  t.ok(some.has('garbage-collector-controller'))
  const only = enabledControllers(['namespace-controller', 'bootstrapsigner'])
  t.same([...only].sort(), ['bootstrap-signer-controller', 'namespace-controller'], 'without * only what is named')
})

t.test('--oidc-* flags and --authentication-config', async (t) => {
  const d = resolveOptions([])
  t.equal(d.oidcUsernameClaim, 'sub')
  t.same(d.oidcSigningAlgs, ['RS256'])
  t.equal(d.authenticationConfig, '')
  const o = resolveOptions(['--oidc-issuer-url=https://idp', '--oidc-client-id', 'c', '--oidc-required-claim', 'a=b,c', '--oidc-required-claim=d=e', '--oidc-signing-algs', 'RS256,ES256'])
  t.same(o.oidcRequiredClaim, ['a=b,c', 'd=e'], 'one pair per occurrence, commas kept')
  t.same(o.oidcSigningAlgs, ['RS256', 'ES256'])
  const fails = (argv: string[]) => { try { resolveOptions(argv); return '' } catch (err) { t.ok(err instanceof OptionsError); return (err as Error).message } }
  t.equal(fails(['--authentication-config', 'f.yaml', '--oidc-username-claim', 'email']), 'authentication-config file and oidc-* flags are mutually exclusive')
  t.equal(fails(['--oidc-groups-claim', 'g']), 'oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set')
  t.equal(fails(['--oidc-client-id', 'c']), 'oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set')
  t.equal(fails(['--oidc-issuer-url=https://idp', '--oidc-client-id', 'c', '--oidc-signing-algs', 'none']), 'oidc: unsupported signing alg: "none"')
  t.equal(fails(['--oidc-issuer-url=https://idp', '--oidc-client-id', 'c', '--oidc-required-claim', 'x']), 'invalid argument "x" for "--oidc-required-claim" flag: malformed pair, expect string=string')
  t.equal(resolveOptions(['--anonymous-auth=false']).anonymousAuthSet, true)
  t.equal(d.anonymousAuthSet, false)
})

t.test('client certificate and request-header flags', async (t) => {
  const o = resolveOptions(['--client-ca-file', '/ca.pem', '--requestheader-client-ca-file', '/p.pem', '--requestheader-allowed-names', 'front-proxy,other',
    '--requestheader-username-headers', 'X-Remote-User', '--requestheader-group-headers', 'X-Remote-Group', '--requestheader-extra-headers-prefix', 'X-Remote-Extra-',
    '--requestheader-uid-headers', 'X-Remote-Uid'])
  t.equal(o.clientCaFile, '/ca.pem')
  t.equal(o.requestheaderClientCaFile, '/p.pem')
  t.same(o.requestheaderAllowedNames, ['front-proxy', 'other'])
  t.same(o.requestheaderUsernameHeaders, ['X-Remote-User'])
  t.same(o.requestheaderUidHeaders, ['X-Remote-Uid'])
  t.same(resolveOptions([]).requestheaderUsernameHeaders, [], 'no default header names (kube-apiserver has none)')
  t.equal(resolveOptions([]).featureGates.RemoteRequestHeaderUID, true)
  t.equal(resolveOptions([]).featureGates.AllowParsingUserUIDFromCertAuth, true)
  t.throws(() => resolveOptions(['--requestheader-uid-headers', 'X-Remote-Uid', '--feature-gates', 'RemoteRequestHeaderUID=false']),
    new OptionsError('--requestheader-uid-headers requires the "RemoteRequestHeaderUID" feature to be enabled'))
  t.throws(() => resolveOptions(['--client-ca-file', '/ca.pem', '--secure-port', '0', '--port', '8080']), /flag --client-ca-file needs the secure port/)
  t.throws(() => resolveOptions(['--requestheader-client-ca-file', '/ca.pem', '--secure-port', '0', '--port', '8080']), /flag --requestheader-client-ca-file needs the secure port/)
})
