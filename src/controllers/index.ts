// The built-in controllers of the main thread: started after bootstrap, stopped at shutdown.
import type { Logger } from 'pino'
import type { InternalClient } from '../server/internal-client.js'
import { NamespaceController } from './namespace.js'
import { GarbageCollector } from './garbage-collector.js'
import { ClusterRoleAggregation } from './clusterrole-aggregation.js'
import { ServiceAccountTokens } from './service-account-tokens.js'
import { ServiceAccountsController } from './service-accounts.js'
import { RootCaPublisher } from './root-ca-publisher.js'
import { DisruptionController } from './disruption.js'
import { ResourceQuotaController } from './resource-quota.js'
import { KubernetesServiceController, type ApiServiceTarget } from './kubernetes-service.js'
import { TokenCleaner, BootstrapSigner } from './bootstrap-tokens.js'
import { CrdController } from './crd.js'
import { PvcProtectionController, PvProtectionController } from './storage-protection.js'
import type { SigningKey } from '../auth/service-account.js'
import { enabledControllers } from '../options.js'

export interface Controllers {
  /** Starts the controllers whose initial scan is proportional to the stored objects (after the server is ready). */
  startBackground(): void
  stop(): void
}

export interface ControllerDeps {
  /** The service-account signing key (legacy token secrets). */
  signingKey: SigningKey
  /** The cluster CA (PEM) put into legacy token secrets and each namespace's root CA ConfigMap; '' when unknown. */
  caPem: string
  /** The API server's own Service default/kubernetes and where its endpoints point. */
  apiService: ApiServiceTarget
  /** `--controllers`: which of the controllers run (the API server's own Service is kept whatever it says). */
  controllers: readonly string[]
}

/**
 * Starts the controllers readiness depends on; resolves once the aggregated ClusterRoles are up to date (so RBAC is
 * complete when the server is ready). The garbage collector's initial graph is built from every stored object, so it
 * starts in startBackground(), once the server is ready: start-up time does not grow with the stored objects
 * (upstream runs it in the controller manager, outside the API server's readiness too).
 */
export async function startControllers(client: InternalClient, log: Logger, deps: ControllerDeps): Promise<Controllers> {
  const enabled = enabledControllers(deps.controllers)
  const running: Array<{ stop(): void }> = []
  /** The controller when `--controllers` runs it (started unless told otherwise), else undefined. */
  const make = <T extends { start(): Promise<void>; stop(): void }>(name: string, build: () => T, startNow = true): T | undefined => {
    if (!enabled.has(name)) return undefined
    const c = build()
    running.push(c)
    if (startNow) void c.start()
    return c
  }
  const child = (controller: string) => log.child({ controller })
  make('namespace-controller', () => new NamespaceController(client, child('namespace')))
  make('resourcequota-controller', () => new ResourceQuotaController(client, child('resourcequota')))
  make('serviceaccount-token-controller', () => new ServiceAccountTokens(client, child('serviceaccount-token'), deps.signingKey, deps.caPem))
  make('serviceaccount-controller', () => new ServiceAccountsController(client, child('serviceaccount')))
  // Without a CA of our own (serving certificate files given, or no TLS port) there is nothing to publish.
  if (deps.caPem) make('root-ca-certificate-publisher-controller', () => new RootCaPublisher(client, child('root-ca-cert-publisher'), deps.caPem))
  make('disruption-controller', () => new DisruptionController(client, child('disruption')))
  make('pvc-protection-controller', () => new PvcProtectionController(client, child('pvc-protection')))
  make('pv-protection-controller', () => new PvProtectionController(client, child('pv-protection')))
  make('token-cleaner-controller', () => new TokenCleaner(client, child('tokencleaner')))
  make('bootstrap-signer-controller', () => new BootstrapSigner(client, child('bootstrapsigner')))
  const gc = make('garbage-collector-controller', () => new GarbageCollector(client, child('garbage-collector')), false)
  const agg = make('clusterrole-aggregation-controller', () => new ClusterRoleAggregation(client, child('clusterrole-aggregation')), false)
  const apiService = new KubernetesServiceController(client, child('kubernetes-service'), deps.apiService)
  running.push(apiService)
  // The API server's own CRD controllers (upstream runs them in the apiextensions server, whatever --controllers says).
  const crds = new CrdController(client, child('customresourcedefinition'))
  running.push(crds)
  void crds.start()
  await Promise.all([agg?.start(), apiService.start()])
  let gcStarted = false
  return {
    startBackground() { if (gc && !gcStarted) { gcStarted = true; void gc.start() } },
    stop() { for (const c of running) c.stop() },
  }
}
