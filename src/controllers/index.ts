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
import type { SigningKey } from '../auth/service-account.js'

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
}

/**
 * Starts the controllers readiness depends on; resolves once the aggregated ClusterRoles are up to date (so RBAC is
 * complete when the server is ready). The garbage collector's initial graph is built from every stored object, so it
 * starts in startBackground(), once the server is ready: start-up time does not grow with the stored objects
 * (upstream runs it in the controller manager, outside the API server's readiness too).
 */
export async function startControllers(client: InternalClient, log: Logger, deps: ControllerDeps): Promise<Controllers> {
  const ns = new NamespaceController(client, log.child({ controller: 'namespace' }))
  const gc = new GarbageCollector(client, log.child({ controller: 'garbage-collector' }))
  const agg = new ClusterRoleAggregation(client, log.child({ controller: 'clusterrole-aggregation' }))
  const tokens = new ServiceAccountTokens(client, log.child({ controller: 'serviceaccount-token' }), deps.signingKey, deps.caPem)
  const accounts = new ServiceAccountsController(client, log.child({ controller: 'serviceaccount' }))
  // Without a CA of our own (serving certificate files given, or no TLS port) there is nothing to publish.
  const rootCa = deps.caPem ? new RootCaPublisher(client, log.child({ controller: 'root-ca-cert-publisher' }), deps.caPem) : undefined
  const disruption = new DisruptionController(client, log.child({ controller: 'disruption' }))
  const quota = new ResourceQuotaController(client, log.child({ controller: 'resourcequota' }))
  void ns.start()
  void quota.start()
  void tokens.start()
  void accounts.start()
  void rootCa?.start()
  void disruption.start()
  const apiService = new KubernetesServiceController(client, log.child({ controller: 'kubernetes-service' }), deps.apiService)
  await Promise.all([agg.start(), apiService.start()])
  let gcStarted = false
  return {
    startBackground() { if (!gcStarted) { gcStarted = true; void gc.start() } },
    stop() { ns.stop(); gc.stop(); agg.stop(); tokens.stop(); accounts.stop(); rootCa?.stop(); disruption.stop(); quota.stop(); apiService.stop() },
  }
}
