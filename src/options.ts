// The Options type, its defaults, the flag table and resolveOptions (flag parsing and validation).
import os from 'node:os'
import { parseFeatureGates, FeatureGateError, type FeatureGates } from './machinery/feature-gates.js'
import { admissionPluginErrors, defaultPluginNames, registeredPluginNames } from './admission/plugins.js'
import { ipv4Number, parseNodePortRange, parseServiceIPRange, DEFAULT_SERVICE_CLUSTER_IP_RANGE, DEFAULT_SERVICE_NODE_PORT_RANGE } from './machinery/service-ranges.js'

export interface Options {
  bindAddress: string
  securePort: number
  port: number
  tlsCertFile: string
  tlsPrivateKeyFile: string
  dataDir: string
  frontends: number
  shards: number
  tokenAuthFile: string
  anonymousAuth: boolean
  authorizationMode: string[]
  /** the ABAC policy file (one JSON policy a line), for mode ABAC */
  authorizationPolicyFile: string
  /** private key that signs service-account tokens (PEM); generated in the data dir when no key is given */
  serviceAccountSigningKeyFile: string
  /** keys that verify service-account tokens (PEM; repeatable) */
  serviceAccountKeyFile: string[]
  /** issuers of service-account tokens: the first signs, all are accepted (repeatable) */
  serviceAccountIssuer: string[]
  /** the audiences tokens are valid for by default (empty: the issuers) */
  apiAudiences: string[]
  /** legacy token secrets (and their accounts) must still exist for their tokens to work */
  serviceAccountLookup: boolean
  /** the longest lifetime a TokenRequest may get, in ms (0: no limit) */
  serviceAccountMaxTokenExpiration: number
  enableBootstrapTokenAuth: boolean
  maxRequestsInflight: number
  maxMutatingRequestsInflight: number
  enablePriorityAndFairness: boolean
  /** --priority-and-fairness-seat-hold (ms): see the flow-control actor's hold rule (actors/flow-control/seat-holds.ts). */
  priorityAndFairnessSeatHold: number
  livezGracePeriod: number
  shutdownDelayDuration: number
  watchHistory: number
  /** lz4-compress stored records of 1 KB and more (smaller data dir and resident pages, more CPU per write) */
  storageCompression: boolean
  minRequestTimeout: number
  logLevel: string
  featureGates: FeatureGates
  upstreamAliases: boolean
  /** warnings of --feature-gates (deprecated or GA gates), logged at start */
  featureGateWarnings: string[]
  /** the address the Endpoints of default/kubernetes name ('' = the bind address, or a host interface's when that is loopback or unspecified) */
  advertiseAddress: string
  /** the IPv4 CIDR services' cluster IPs are allocated from */
  serviceClusterIpRange: string
  /** the ports NodePort and LoadBalancer services' node ports are allocated from */
  serviceNodePortRange: string
  /** the built-in controllers to run, as kube-controller-manager's --controllers: `*`, `name`, `-name` */
  controllers: string[]
  /** kubeconfig-format file of the token authentication webhook ('' = none) */
  authenticationTokenWebhookConfigFile: string
  /** how long the token webhook's answers are cached, in ms */
  authenticationTokenWebhookCacheTtl: number
  /** the TokenReview version sent to the token webhook: v1beta1 or v1 */
  authenticationTokenWebhookVersion: string
  /** kubeconfig-format file of the authorization webhook (--authorization-mode=...,Webhook) */
  authorizationWebhookConfigFile: string
  authorizationWebhookCacheAuthorizedTtl: number
  authorizationWebhookCacheUnauthorizedTtl: number
  /** the SubjectAccessReview version sent to the authorization webhook: v1beta1 or v1 */
  authorizationWebhookVersion: string
  /** an AuthorizationConfiguration file (instead of --authorization-mode and the webhook flags; reloaded) */
  authorizationConfig: string
  /** admission plugins to run besides those on by default (upstream names) */
  enableAdmissionPlugins: string[]
  /** admission plugins on by default not to run (upstream names) */
  disableAdmissionPlugins: string[]
  /** tolerationSeconds of the not-ready:NoExecute toleration DefaultTolerationSeconds adds to pods */
  defaultNotReadyTolerationSeconds: number
  /** tolerationSeconds of the unreachable:NoExecute toleration DefaultTolerationSeconds adds to pods */
  defaultUnreachableTolerationSeconds: number
  /** AuthenticationConfiguration file (JWT authenticators); exclusive with the --oidc-* flags */
  authenticationConfig: string
  oidcIssuerUrl: string
  oidcClientId: string
  oidcCaFile: string
  oidcUsernameClaim: string
  oidcUsernamePrefix: string
  oidcGroupsClaim: string
  oidcGroupsPrefix: string
  oidcSigningAlgs: string[]
  /** key=value claims an ID token must carry (repeatable) */
  oidcRequiredClaim: string[]
  /** whether --anonymous-auth was given (not a flag: the authentication configuration's `anonymous` excludes it) */
  anonymousAuthSet: boolean
  /** CAs (PEM) whose client certificates authenticate as CN / O; serves the secure port through node:http2 */
  clientCaFile: string
  /** CAs (PEM) of the authenticating proxy's client certificate (the identity headers are honoured only with it) */
  requestheaderClientCaFile: string
  /** proxy certificate CNs allowed to assert identities (empty: any verified by the request-header CA) */
  requestheaderAllowedNames: string[]
  requestheaderUsernameHeaders: string[]
  requestheaderUidHeaders: string[]
  requestheaderGroupHeaders: string[]
  requestheaderExtraHeadersPrefix: string[]
}

const cores = os.availableParallelism()

export const defaultOptions: Readonly<Options> = Object.freeze({
  bindAddress: '127.0.0.1',
  securePort: 6443,
  port: 0,
  tlsCertFile: '',
  tlsPrivateKeyFile: '',
  dataDir: './.orch-data',
  frontends: Math.max(1, Math.floor(cores / 4)),
  shards: Math.max(1, Math.floor(cores / 2)),
  tokenAuthFile: '',
  anonymousAuth: true,
  authorizationMode: ['Node', 'RBAC'],
  authorizationPolicyFile: '',
  serviceAccountSigningKeyFile: '',
  serviceAccountKeyFile: [],
  serviceAccountIssuer: ['https://orch.default.svc.cluster.local'],
  apiAudiences: [],
  serviceAccountLookup: true,
  serviceAccountMaxTokenExpiration: 0,
  enableBootstrapTokenAuth: false,
  maxRequestsInflight: 400,
  maxMutatingRequestsInflight: 200,
  enablePriorityAndFairness: true,
  priorityAndFairnessSeatHold: 5,
  livezGracePeriod: 0,
  shutdownDelayDuration: 0,
  watchHistory: 5 * 60 * 1000,
  storageCompression: true,
  minRequestTimeout: 1800,
  logLevel: 'info',
  featureGates: parseFeatureGates('').gates,
  upstreamAliases: true,
  featureGateWarnings: [],
  advertiseAddress: '',
  serviceClusterIpRange: DEFAULT_SERVICE_CLUSTER_IP_RANGE,
  serviceNodePortRange: DEFAULT_SERVICE_NODE_PORT_RANGE,
  controllers: ['*'],
  authenticationTokenWebhookConfigFile: '',
  authenticationTokenWebhookCacheTtl: 2 * 60 * 1000,
  authenticationTokenWebhookVersion: 'v1beta1',
  authorizationWebhookConfigFile: '',
  authorizationWebhookCacheAuthorizedTtl: 5 * 60 * 1000,
  authorizationWebhookCacheUnauthorizedTtl: 30 * 1000,
  authorizationWebhookVersion: 'v1beta1',
  authorizationConfig: '',
  enableAdmissionPlugins: [],
  disableAdmissionPlugins: [],
  defaultNotReadyTolerationSeconds: 300,
  defaultUnreachableTolerationSeconds: 300,
  authenticationConfig: '',
  oidcIssuerUrl: '',
  oidcClientId: '',
  oidcCaFile: '',
  oidcUsernameClaim: 'sub',
  oidcUsernamePrefix: '',
  oidcGroupsClaim: '',
  oidcGroupsPrefix: '',
  oidcSigningAlgs: ['RS256'],
  oidcRequiredClaim: [],
  anonymousAuthSet: false,
  clientCaFile: '',
  requestheaderClientCaFile: '',
  requestheaderAllowedNames: [],
  requestheaderUsernameHeaders: [],
  requestheaderUidHeaders: [],
  requestheaderGroupHeaders: [],
  requestheaderExtraHeadersPrefix: [],
})

/**
 * The built-in controllers under kube-controller-manager's names (its names before 1.28 are taken too), and whether
 * each runs when `--controllers` says only `*`.
 */
export const CONTROLLERS: ReadonlyArray<{ name: string; alias: string; byDefault: boolean }> = [
  { name: 'namespace-controller', alias: 'namespace', byDefault: true },
  { name: 'garbage-collector-controller', alias: 'garbagecollector', byDefault: true },
  { name: 'clusterrole-aggregation-controller', alias: 'clusterrole-aggregation', byDefault: true },
  { name: 'serviceaccount-token-controller', alias: 'serviceaccount-token', byDefault: true },
  { name: 'serviceaccount-controller', alias: 'serviceaccount', byDefault: true },
  { name: 'root-ca-certificate-publisher-controller', alias: 'root-ca-cert-publisher', byDefault: true },
  { name: 'disruption-controller', alias: 'disruption', byDefault: true },
  { name: 'resourcequota-controller', alias: 'resourcequota', byDefault: true },
  { name: 'pvc-protection-controller', alias: 'pvc-protection', byDefault: true },
  { name: 'pv-protection-controller', alias: 'pv-protection', byDefault: true },
  { name: 'token-cleaner-controller', alias: 'tokencleaner', byDefault: false },
  { name: 'bootstrap-signer-controller', alias: 'bootstrapsigner', byDefault: false },
]

type FlagType = 'string' | 'port' | 'int' | 'bool' | 'duration' | 'list' | 'address' | 'gates'

/** `repeatable`: every occurrence of the flag adds its items (a list flag otherwise replaces the previous value). */
interface Flag { option: keyof Options; type: FlagType; help: string; min?: number; values?: string[]; repeatable?: boolean; emptyOk?: boolean }

export const flags: Record<string, Flag> = {
  'bind-address': { option: 'bindAddress', type: 'address', help: 'IP address to listen on' },
  'secure-port': { option: 'securePort', type: 'port', help: 'HTTPS port (0 = off)' },
  port: { option: 'port', type: 'port', help: 'plain HTTP port (0 = off); for loopback benchmarks and tests' },
  'tls-cert-file': { option: 'tlsCertFile', type: 'string', help: 'serving certificate (PEM); generated in the data dir when empty' },
  'tls-private-key-file': { option: 'tlsPrivateKeyFile', type: 'string', help: 'serving key (PEM)' },
  'data-dir': { option: 'dataDir', type: 'string', help: 'where the store, certificates and tokens live' },
  frontends: { option: 'frontends', type: 'int', min: 1, help: 'number of front-end threads' },
  shards: { option: 'shards', type: 'int', min: 1, help: 'number of shard actors (fixed once data exists)' },
  'token-auth-file': { option: 'tokenAuthFile', type: 'string', help: 'static token CSV: token,user,uid,"group1,group2"' },
  'anonymous-auth': { option: 'anonymousAuth', type: 'bool', help: 'admit requests without credentials as system:anonymous' },
  'authorization-mode': { option: 'authorizationMode', type: 'list', values: ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'Node', 'RBAC', 'Webhook'], help: 'ordered authorizers' },
  'authorization-webhook-config-file': { option: 'authorizationWebhookConfigFile', type: 'string', help: 'kubeconfig-format file of the authorization webhook, used with --authorization-mode=Webhook' },
  'authorization-webhook-cache-authorized-ttl': { option: 'authorizationWebhookCacheAuthorizedTtl', type: 'duration', help: 'how long the authorization webhook\'s "authorized" answers are cached' },
  'authorization-webhook-cache-unauthorized-ttl': { option: 'authorizationWebhookCacheUnauthorizedTtl', type: 'duration', help: 'how long the authorization webhook\'s "unauthorized" answers are cached' },
  'authorization-webhook-version': { option: 'authorizationWebhookVersion', type: 'string', values: ['v1', 'v1beta1'], help: 'the authorization.orch.io SubjectAccessReview version sent to the authorization webhook' },
  'authorization-config': { option: 'authorizationConfig', type: 'string', help: 'AuthorizationConfiguration file (JSON or YAML) of the authorizer chain, reloaded when it changes; excludes --authorization-mode and --authorization-webhook-*' },
  'authentication-token-webhook-config-file': { option: 'authenticationTokenWebhookConfigFile', type: 'string', help: 'kubeconfig-format file of the token authentication webhook (TokenReview)' },
  'authentication-token-webhook-cache-ttl': { option: 'authenticationTokenWebhookCacheTtl', type: 'duration', help: 'how long the token webhook\'s answers are cached' },
  'authentication-token-webhook-version': { option: 'authenticationTokenWebhookVersion', type: 'string', values: ['v1', 'v1beta1'], help: 'the authentication.orch.io TokenReview version sent to the token webhook' },
  'authorization-policy-file': { option: 'authorizationPolicyFile', type: 'string', help: 'file with the ABAC policies of --authorization-mode=ABAC, one JSON object a line (abac.authorization.orch.io/v1beta1 Policy, or the unversioned form)' },
  'service-account-signing-key-file': { option: 'serviceAccountSigningKeyFile', type: 'string', help: 'private key (PEM) that signs service-account tokens; generated in the data dir when no key is given' },
  'service-account-key-file': { option: 'serviceAccountKeyFile', type: 'list', repeatable: true, help: 'PEM keys that verify service-account tokens (repeatable, comma-separated)' },
  'service-account-issuer': { option: 'serviceAccountIssuer', type: 'list', repeatable: true, help: 'issuer of service-account tokens; repeat to accept more issuers (the first signs)' },
  'api-audiences': { option: 'apiAudiences', type: 'list', help: 'audiences tokens are valid for by default (default: the service-account issuers)' },
  'service-account-lookup': { option: 'serviceAccountLookup', type: 'bool', help: 'legacy tokens work only while their secret and account exist' },
  'service-account-max-token-expiration': { option: 'serviceAccountMaxTokenExpiration', type: 'duration', help: 'the longest lifetime a TokenRequest may get (0: no limit)' },
  'enable-bootstrap-token-auth': { option: 'enableBootstrapTokenAuth', type: 'bool', help: 'accept bootstrap tokens (secrets bootstrap-token-<id> in orch-system)' },
  'max-requests-inflight': { option: 'maxRequestsInflight', type: 'int', min: 0, help: 'read-only requests in flight (0 = no limit)' },
  'max-mutating-requests-inflight': { option: 'maxMutatingRequestsInflight', type: 'int', min: 0, help: 'mutating requests in flight (0 = no limit)' },
  'enable-priority-and-fairness': { option: 'enablePriorityAndFairness', type: 'bool', help: 'API Priority and Fairness (=false: the max-in-flight limits instead)' },
  'priority-and-fairness-seat-hold': { option: 'priorityAndFairnessSeatHold', type: 'duration', help: 'while other flows wait on a priority level, how long a seat stays held for a flow that just finished a request and asks again within that time on average (at most its fair share; 0 = never, as upstream)' },
  'livez-grace-period': { option: 'livezGracePeriod', type: 'duration', help: 'time after start during which /livez may fail' },
  'shutdown-delay-duration': { option: 'shutdownDelayDuration', type: 'duration', help: 'time /readyz answers 503 before the listeners close' },
  'storage-compression': { option: 'storageCompression', type: 'bool', help: 'lz4-compress stored records of 1 KB and more (records already stored read either way); =false stores them plain' },
  'watch-history': { option: 'watchHistory', type: 'duration', help: 'how long watch events are kept for resuming watches' },
  'min-request-timeout': { option: 'minRequestTimeout', type: 'int', min: 1, help: 'watch timeout lower bound in seconds (randomized up to twice this)' },
  'upstream-aliases': { option: 'upstreamAliases', type: 'bool', help: 'serve /apis/<name>.k8s.io/... as the <name>.orch.io group, so typed stock clients work' },
  'feature-gates': { option: 'featureGates', type: 'gates', help: 'Name=true|false pairs, comma-separated (APIResponseCompression, CBORServingAndStorage, ...)' },
  'advertise-address': { option: 'advertiseAddress', type: 'address', help: 'IPv4 address the Endpoints of the Service default/kubernetes name (default: the bind address, or a host interface\'s when that is loopback or unspecified)' },
  'service-cluster-ip-range': { option: 'serviceClusterIpRange', type: 'string', help: 'IPv4 CIDR that services\' cluster IPs are allocated from (its first address is the API server\'s own Service\'s); mask /12 to /29' },
  'service-node-port-range': { option: 'serviceNodePortRange', type: 'string', help: 'ports that NodePort and LoadBalancer services\' node ports are allocated from: low-high, low+count, or one port' },
  controllers: { option: 'controllers', type: 'list', help: `built-in controllers to run: '*' (those on by default), 'name' (on), '-name' (off); names: ${CONTROLLERS.map((c) => c.name + (c.byDefault ? '' : ' (off by default)')).join(', ')}` },
  'enable-admission-plugins': { option: 'enableAdmissionPlugins', type: 'list', repeatable: true, emptyOk: true, help: `admission plugins to run in addition to those on by default (${defaultPluginNames().join(', ')}). Comma-delimited list of admission plugins: ${registeredPluginNames().join(', ')}. The order of plugins in this flag does not matter` },
  'disable-admission-plugins': { option: 'disableAdmissionPlugins', type: 'list', repeatable: true, emptyOk: true, help: `admission plugins not to run although they are on by default. Comma-delimited list of admission plugins: ${registeredPluginNames().join(', ')}. The order of plugins in this flag does not matter` },
  'default-not-ready-toleration-seconds': { option: 'defaultNotReadyTolerationSeconds', type: 'int', help: 'Indicates the tolerationSeconds of the toleration for notReady:NoExecute that is added by default to every pod that does not already have such a toleration' },
  'default-unreachable-toleration-seconds': { option: 'defaultUnreachableTolerationSeconds', type: 'int', help: 'Indicates the tolerationSeconds of the toleration for unreachable:NoExecute that is added by default to every pod that does not already have such a toleration' },
  'authentication-config': { option: 'authenticationConfig', type: 'string', help: 'AuthenticationConfiguration file (apiserver.config.orch.io) of JWT authenticators; reloaded when it changes; exclusive with the --oidc-* flags' },
  'oidc-issuer-url': { option: 'oidcIssuerUrl', type: 'string', help: 'OpenID issuer URL (https only); ID tokens it signs authenticate' },
  'oidc-client-id': { option: 'oidcClientId', type: 'string', help: 'audience every ID token must be issued for; required with --oidc-issuer-url' },
  'oidc-ca-file': { option: 'oidcCaFile', type: 'string', help: 'CA (PEM) of the issuer\'s serving certificate (default: the host\'s roots)' },
  'oidc-username-claim': { option: 'oidcUsernameClaim', type: 'string', help: 'claim used as user name (default sub)' },
  'oidc-username-prefix': { option: 'oidcUsernamePrefix', type: 'string', help: 'prefix of user names (default: the issuer URL and # for claims other than email; - for none)' },
  'oidc-groups-claim': { option: 'oidcGroupsClaim', type: 'string', help: 'claim used for groups (a string or a list of strings)' },
  'oidc-groups-prefix': { option: 'oidcGroupsPrefix', type: 'string', help: 'prefix of group names' },
  'oidc-signing-algs': { option: 'oidcSigningAlgs', type: 'list', help: 'accepted signing algorithms (default RS256): RS256, RS384, RS512, ES256, ES384, ES512, PS256, PS384, PS512' },
  'oidc-required-claim': { option: 'oidcRequiredClaim', type: 'string', repeatable: true, help: 'key=value claim an ID token must carry (repeatable)' },
  'client-ca-file': { option: 'clientCaFile', type: 'string', help: 'CA bundle (PEM): a client certificate it signs authenticates as its CN, with its O values as groups; the secure port is then served by node:http2 (slower than uWS)' },
  'requestheader-client-ca-file': { option: 'requestheaderClientCaFile', type: 'string', help: 'CA bundle (PEM) of an authenticating proxy: only requests with a client certificate it signs are authenticated from the --requestheader-* headers' },
  'requestheader-allowed-names': { option: 'requestheaderAllowedNames', type: 'list', help: 'common names of proxy certificates allowed to assert identities (empty: any the request-header CA signs)' },
  'requestheader-username-headers': { option: 'requestheaderUsernameHeaders', type: 'list', help: 'request headers holding the user name, in order (X-Remote-User is common)' },
  'requestheader-uid-headers': { option: 'requestheaderUidHeaders', type: 'list', help: 'request headers holding the user UID, in order (X-Remote-Uid is suggested; gate RemoteRequestHeaderUID)' },
  'requestheader-group-headers': { option: 'requestheaderGroupHeaders', type: 'list', help: 'request headers holding groups, every value of each (X-Remote-Group is suggested)' },
  'requestheader-extra-headers-prefix': { option: 'requestheaderExtraHeadersPrefix', type: 'list', help: 'request header prefixes of extra user fields (X-Remote-Extra- is suggested)' },
  'log-level': { option: 'logLevel', type: 'string', values: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'], help: 'pino log level' },
}

export class OptionsError extends Error {}

/** Go-style durations: 300ms, 5s, 1m30s, 2h; a bare number is seconds. Returns milliseconds. */
export function parseDuration(s: string): number {
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s) * 1000
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy
  let total = 0
  let m: RegExpExecArray | null
  let pos = 0
  while ((m = re.exec(s)) !== null) {
    total += Number(m[1]) * ({ ms: 1, s: 1000, m: 60000, h: 3600000 } as Record<string, number>)[m[2]]
    pos = re.lastIndex
  }
  if (pos !== s.length || s.length === 0) throw new Error('not a duration')
  return total
}

function parseValue(name: string, flag: Flag, raw: string): unknown {
  const bad = (why: string) => new OptionsError(`invalid value "${raw}" for flag --${name}: ${why}`)
  switch (flag.type) {
    case 'string': {
      if (flag.values && !flag.values.includes(raw)) throw bad(`must be one of ${flag.values.join(', ')}`)
      return raw
    }
    case 'address': {
      if (!/^(\d{1,3}(\.\d{1,3}){3}|[0-9a-fA-F:]+|localhost)$/.test(raw)) throw bad('not an IP address')
      return raw
    }
    case 'port': {
      if (!/^\d+$/.test(raw) || Number(raw) > 65535) throw bad('must be a port number 0-65535')
      return Number(raw)
    }
    case 'int': {
      if (!/^-?\d+$/.test(raw)) throw bad('must be an integer')
      const n = Number(raw)
      if (flag.min !== undefined && n < flag.min) throw bad(`must be at least ${flag.min}`)
      return n
    }
    case 'bool': {
      if (raw === 'true' || raw === '1') return true
      if (raw === 'false' || raw === '0') return false
      throw bad('must be true or false')
    }
    case 'duration': {
      try { return parseDuration(raw) } catch { throw bad('must be a duration such as 30s or 5m') }
    }
    case 'gates': {
      try { return parseFeatureGates(raw) } catch (err) {
        if (err instanceof FeatureGateError) throw bad(err.message)
        throw err
      }
    }
    case 'list': {
      // A repeatable flag names one value per occurrence unless it is a comma list (issuers are URLs without commas).
      const items = raw.split(',').map((s) => s.trim()).filter(Boolean)
      if (items.length === 0 && !flag.emptyOk) throw bad('must not be empty')
      for (const it of items) if (flag.values && !flag.values.includes(it)) throw bad(`unsupported value "${it}"; supported: ${flag.values.join(', ')}`)
      return items
    }
  }
}

export function resolveOptions(argv: string[]): Options {
  const opts: Options = {
    ...defaultOptions, authorizationMode: [...defaultOptions.authorizationMode], featureGates: { ...defaultOptions.featureGates }, featureGateWarnings: [],
    serviceAccountKeyFile: [], serviceAccountIssuer: [...defaultOptions.serviceAccountIssuer], apiAudiences: [],
    enableAdmissionPlugins: [], disableAdmissionPlugins: [],
    oidcSigningAlgs: [...defaultOptions.oidcSigningAlgs], oidcRequiredClaim: [],
    requestheaderAllowedNames: [], requestheaderUsernameHeaders: [], requestheaderUidHeaders: [], requestheaderGroupHeaders: [], requestheaderExtraHeadersPrefix: [],
  }
  const repeated = new Set<string>()
  const given = new Set<string>()
  let oidcFlagsSet = false
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (!arg.startsWith('--')) throw new OptionsError(`unexpected argument "${arg}"`)
    let name = arg.slice(2)
    let value: string | undefined
    const eq = name.indexOf('=')
    if (eq >= 0) { value = name.slice(eq + 1); name = name.slice(0, eq) }
    const flag = flags[name]
    if (!flag) throw new OptionsError(`unknown flag: --${name}`)
    if (value === undefined) {
      if (flag.type === 'bool' && (i + 1 >= argv.length || argv[i + 1].startsWith('--'))) value = 'true'
      else if (i + 1 < argv.length) value = argv[++i]
      else throw new OptionsError(`flag needs an argument: --${name}`)
    }
    given.add(name)
    const parsed = parseValue(name, flag, value)
    if (name.startsWith('oidc-')) oidcFlagsSet = true
    if (name === 'anonymous-auth') opts.anonymousAuthSet = true
    if (flag.type === 'gates') {
      const g = parsed as ReturnType<typeof parseFeatureGates>
      opts.featureGates = g.gates
      opts.featureGateWarnings = g.warnings
    } else if (flag.repeatable) {
      // The first occurrence replaces the default, later ones add to it.
      const prev = repeated.has(name) ? (opts as any)[flag.option] as string[] : []
      repeated.add(name)
      ;(opts as any)[flag.option] = [...prev, ...(Array.isArray(parsed) ? parsed : [parsed])]
    } else {
      ;(opts as any)[flag.option] = parsed
    }
  }
  checkAuthorizationFlags(opts, given)
  checkOidcFlags(opts, oidcFlagsSet)
  const modes = opts.authorizationMode
  if (new Set(modes).size !== modes.length) throw new OptionsError(`invalid value "${modes.join(',')}" for flag --authorization-mode: a mode may be named only once`)
  if (modes.includes('ABAC') && opts.authorizationPolicyFile === '') throw new OptionsError("authorization-mode ABAC's authorization policy file not passed")
  if (opts.authorizationPolicyFile !== '' && !modes.includes('ABAC')) throw new OptionsError('cannot specify --authorization-policy-file without mode ABAC')
  if (opts.serviceAccountIssuer.some((i) => i === '')) throw new OptionsError('flag --service-account-issuer: an issuer may not be empty')
  if ((opts.tlsCertFile === '') !== (opts.tlsPrivateKeyFile === '')) {
    throw new OptionsError('flags --tls-cert-file and --tls-private-key-file must be given together')
  }
  if (opts.securePort === 0 && opts.port === 0) throw new OptionsError('flags --secure-port and --port are both 0: nothing to serve')
  for (const f of ['client-ca-file', 'requestheader-client-ca-file'] as const) {
    if ((opts as any)[flags[f].option] !== '' && opts.securePort === 0) throw new OptionsError(`flag --${f} needs the secure port: client certificates come over TLS only (--secure-port is 0)`)
  }
  if (opts.requestheaderUidHeaders.length > 0 && !opts.featureGates.RemoteRequestHeaderUID) {
    throw new OptionsError('--requestheader-uid-headers requires the "RemoteRequestHeaderUID" feature to be enabled')
  }
  serviceRangesOf(opts)
  enabledControllers(opts.controllers)
  checkAdmissionPlugins(opts)
  if (opts.advertiseAddress !== '') {
    const n = ipv4Number(opts.advertiseAddress)
    if (n === undefined || n === 0 || n >>> 24 === 127) throw new OptionsError(`invalid value "${opts.advertiseAddress}" for flag --advertise-address: must be an IPv4 address that is not loopback or unspecified`)
  }
  return opts
}

/** Upstream's checks of the authorization flags (BuiltInAuthorizationOptions.Validate). */
function checkAuthorizationFlags(opts: Options, given: Set<string>): void {
  if (opts.authorizationConfig !== '') {
    const legacy = ['authorization-mode', 'authorization-webhook-config-file', 'authorization-webhook-version', 'authorization-webhook-cache-authorized-ttl', 'authorization-webhook-cache-unauthorized-ttl']
    if (legacy.some((f) => given.has(f))) throw new OptionsError('--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined')
    return
  }
  const modes = opts.authorizationMode
  if (modes.includes('Webhook') && opts.authorizationWebhookConfigFile === '') throw new OptionsError('authorization-mode Webhook\'s authorization config file not passed')
  if (opts.authorizationWebhookConfigFile !== '' && !modes.includes('Webhook')) throw new OptionsError('cannot specify --authorization-webhook-config-file without mode Webhook')
}

/**
 * The admission plugin flags, checked as upstream checks them; several errors are reported together as upstream's
 * aggregate prints them (start() asks again for callers that skip resolveOptions).
 */
export function checkAdmissionPlugins(opts: Partial<Pick<Options, 'enableAdmissionPlugins' | 'disableAdmissionPlugins'>>): void {
  const errs = admissionPluginErrors(opts.enableAdmissionPlugins ?? [], opts.disableAdmissionPlugins ?? [])
  if (errs.length === 1) throw new OptionsError(errs[0])
  if (errs.length > 1) throw new OptionsError(`[${errs.join(', ')}]`)
}

/** The flags and their help, as `--help` prints them. */
export function usage(): string {
  const lines = ['Usage: orch-apiserver [flags]', '', 'Flags:']
  for (const [name, f] of Object.entries(flags)) lines.push(`      --${name} ${f.type === 'bool' ? '' : f.type}`.trimEnd(), `            ${f.help}`)
  return lines.join('\n') + '\n'
}

/** Upstream validateOIDCOptions (and oidc.New's algorithm allow-list): what the flags say without reading any file. */
function checkOidcFlags(opts: Options, flagsSet: boolean): void {
  if (opts.authenticationConfig !== '') {
    if (flagsSet) throw new OptionsError('authentication-config file and oidc-* flags are mutually exclusive')
    return
  }
  if (flagsSet && (opts.oidcIssuerUrl === '' || opts.oidcClientId === '')) {
    throw new OptionsError('oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set')
  }
  for (const kv of opts.oidcRequiredClaim) {
    if (!kv.includes('=')) throw new OptionsError(`invalid argument "${kv}" for "--oidc-required-claim" flag: malformed pair, expect string=string`)
  }
  if (opts.oidcIssuerUrl === '') return
  const allowed = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512']
  for (const alg of opts.oidcSigningAlgs) if (!allowed.includes(alg)) throw new OptionsError(`oidc: unsupported signing alg: ${JSON.stringify(alg)}`)
}

/** The controllers `--controllers` runs (their names): an error names the flag and the unknown name. */
export function enabledControllers(list: readonly string[]): Set<string> {
  const canonical = (n: string): string => {
    const c = CONTROLLERS.find((x) => x.name === n || x.alias === n)
    if (!c) throw new OptionsError(`invalid value "${list.join(',')}" for flag --controllers: "${n}" is not a known controller`)
    return c.name
  }
  const on = new Set<string>()
  const off = new Set<string>()
  let star = false
  for (const item of list) {
    if (item === '*') star = true
    else if (item.startsWith('-')) off.add(canonical(item.slice(1)))
    else on.add(canonical(item))
  }
  const out = new Set<string>()
  for (const c of CONTROLLERS) if (!off.has(c.name) && (on.has(c.name) || (star && c.byDefault))) out.add(c.name)
  return out
}

/** The two service ranges of the options, checked; an error names the flag (start() asks again for callers that skip resolveOptions). */
export function serviceRangesOf(opts: Pick<Options, 'serviceClusterIpRange' | 'serviceNodePortRange'>): { ip: ReturnType<typeof parseServiceIPRange>; ports: ReturnType<typeof parseNodePortRange> } {
  const check = <T>(flag: string, raw: string, parse: (v: string) => T): T => {
    try { return parse(raw) } catch (err) { throw new OptionsError(`invalid value "${raw}" for flag --${flag}: ${(err as Error).message}`) }
  }
  return {
    ip: check('service-cluster-ip-range', opts.serviceClusterIpRange ?? '', parseServiceIPRange),
    ports: check('service-node-port-range', opts.serviceNodePortRange ?? '', parseNodePortRange),
  }
}
