// Wires the pipeline modules of one thread (a front-end, or the main thread) to its ports and shared state.
import type { MessagePort } from 'node:worker_threads'
import type { Logger } from 'pino'
import type { Options } from '../options.js'
import { Registry } from '../registry/index.js'
import { CRD_GROUP, CRD_RESOURCE } from '../registry/custom.js'
import { recordObject, typePrefix } from '../machinery/storage-format.js'
import type { Obj } from '../registry/define.js'
import { SchemaSet } from '../registry/schema.js'
import type { UserInfo } from '../pipeline/context.js'
import { configurePipeline, type NonResourceRouter } from '../pipeline/index.js'
import { configureAuthentication, withAuthenticated } from '../pipeline/authenticate.js'
import { configureFlowControl } from '../pipeline/flow-control.js'
import { configureAuthorization } from '../pipeline/authorize.js'
import { configureAdmission } from '../pipeline/admission.js'
import { configureDispatch } from '../pipeline/dispatch.js'
import { configurePatch } from '../pipeline/patch.js'
import { configureEncode } from '../pipeline/encode.js'
import { Store } from '../pipeline/store.js'
import { AuthzClient } from '../../actors/authz/client.js'
import { configureAdmissionChain, configurePodSecurityLookup } from '../admission/chain.js'
import { configureAdmissionPlugins } from '../admission/plugins.js'
import { configureDefaultTolerations } from '../admission/tolerations.js'
import { namespaceSecurity, writeStatusDirect } from '../pipeline/write.js'
import { configureReviews } from '../pipeline/reviews.js'
import { parseSigningKeyPem, parseVerificationKeysPem } from '../auth/service-account.js'
import { webhookTokenAuthenticator } from '../auth/token-webhook.js'
import { configureWatchStreams, watchCounts } from './watch.js'
import { certAuthnConfig, type CertAuthnData } from '../auth/x509.js'
import { configureServiceAllocation, type ServiceAllocationData } from '../pipeline/service-allocation.js'

/** What every thread needs of the service-account keys and flags (PEM text: key objects are made in each thread). */
export interface ServiceAccountData {
  signingKeyPem: string
  verificationKeyPems: string[]
  issuers: string[]
  apiAudiences: string[]
  lookup: boolean
  maxExpirationSeconds: number
}

export interface ThreadData {
  options: Options
  counters: SharedArrayBuffer
  seats: SharedArrayBuffer
  rejected: SharedArrayBuffer
  state: SharedArrayBuffer
  heartbeats: SharedArrayBuffer
  shardPorts: MessagePort[]
  authzPort: MessagePort
  /** The authz version counters the shards bump on RBAC and node-graph writes (actors/authz/messages.ts). */
  authzVersions: SharedArrayBuffer
  tokens: Array<[string, UserInfo]>
  serviceAccounts: ServiceAccountData
  /** The ranges and shared allocation maps of service cluster IPs and node ports (one pair per process). */
  serviceAllocation: ServiceAllocationData
}

export interface FrontendData extends ThreadData {
  index: number
  flowPort: MessagePort
  httpPort: number
  httpsPort: number
  tls: { certFile: string; keyFile: string }
  /** JWT authenticators (--authentication-config or --oidc-*), when configured */
  jwt?: import('../auth/jwt-setup.js').JwtSetup
  /** --client-ca-file / --requestheader-*: front-end 0 serves the secure port with node:http2 and reads client certificates */
  certAuth?: CertAuthnData
}

export interface Pipeline { registry: Registry; store: Store; authz: AuthzClient }

/** Every stored CustomResourceDefinition, as of now. */
function storedCrds(store: Store): Obj[] {
  const shard = store.shardFor(CRD_GROUP, CRD_RESOURCE)
  store.snapshot(shard)
  const out: Obj[] = []
  for (const { value } of store.range(shard, typePrefix(CRD_GROUP, CRD_RESOURCE))) {
    try { out.push(JSON.parse(recordObject(value).toString('utf8')) as Obj) } catch { /* a record that does not parse serves nothing */ }
  }
  return out
}

export function setupPipeline(data: ThreadData, log: Logger, router: (p: Pipeline) => NonResourceRouter): Pipeline {
  const registry = new Registry()
  const store = new Store(data.options.dataDir, data.counters, data.shardPorts)
  const authz = new AuthzClient(data.authzPort, data.authzVersions, data.shardPorts.length)
  authz.setModes(data.options.authorizationMode, !!data.options.authorizationConfig)
  const p: Pipeline = { registry, store, authz }
  // Custom resource types: read again from the stored CRDs whenever a CRD write was acknowledged.
  registry.attachCustom({ stamp: () => store.crdWrites(), load: () => storedCrds(store) })
  const sa = data.serviceAccounts
  const signing = parseSigningKeyPem(sa.signingKeyPem, 'service-account signing key')
  configureAuthentication({
    tokens: new Map(data.tokens), anonymous: data.options.anonymousAuth, apiAudiences: sa.apiAudiences, store,
    bootstrapTokens: data.options.enableBootstrapTokenAuth,
    tokenWebhook: data.options.authenticationTokenWebhookConfigFile ? webhookTokenAuthenticator((t, a) => authz.tokenReview(t, a), withAuthenticated) : undefined,
    serviceAccounts: { issuers: sa.issuers, lookup: sa.lookup, keys: sa.verificationKeyPems.flatMap((pem) => parseVerificationKeysPem(pem)) },
    certificates: (data as Partial<FrontendData>).certAuth ? certAuthnConfig((data as FrontendData).certAuth!) : undefined,
  })
  configureReviews(store, { key: signing, issuer: sa.issuers[0], apiAudiences: sa.apiAudiences, maxExpirationSeconds: sa.maxExpirationSeconds, extendExpiration: true }, data.options.upstreamAliases)
  configureAdmissionPlugins(data.options.enableAdmissionPlugins, data.options.disableAdmissionPlugins)
  configureDefaultTolerations(data.options.defaultNotReadyTolerationSeconds, data.options.defaultUnreachableTolerationSeconds)
  configureAdmissionChain(store, authz, registry, writeStatusDirect)
  configurePodSecurityLookup(namespaceSecurity)
  configureFlowControl({ seats: data.seats, rejected: data.rejected, maxReadonly: data.options.maxRequestsInflight, maxMutating: data.options.maxMutatingRequestsInflight, apf: data.options.enablePriorityAndFairness, port: (data as Partial<FrontendData>).flowPort, store, watchCounts })
  configureAuthorization(authz)
  configureAdmission(new SchemaSet())
  configureDispatch(store, registry)
  configureServiceAllocation(registry.byGroupResource('', 'services'), data.serviceAllocation)
  configureEncode({ cbor: data.options.featureGates.CBORServingAndStorage, gzip: data.options.featureGates.APIResponseCompression })
  configurePatch({ cbor: data.options.featureGates.CBORServingAndStorage })
  configurePipeline(registry, router(p), data.options.upstreamAliases)
  configureWatchStreams(store, registry, data.options, log)
  return p
}
