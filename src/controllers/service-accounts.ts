// The service accounts controller: every active namespace has a ServiceAccount named "default", made again when deleted.
import type { Logger } from 'pino'
import { objectKey, typePrefix } from '../machinery/storage-format.js'
import type { InternalClient } from '../server/internal-client.js'
import { QueueController } from './queue.js'

export const DEFAULT_SERVICE_ACCOUNT = 'default'

export class ServiceAccountsController extends QueueController {
  constructor(client: InternalClient, log: Logger) {
    super(client, log, 'namespace', 1000)
  }

  protected work(ns: string): Promise<boolean> { return this.#sync(ns) }

  async start(): Promise<void> {
    const saDef = this.client.pipeline.registry.byGroupResource('', 'serviceaccounts')!
    const saPrefix = typePrefix('', 'serviceaccounts').length
    this.unlisten.push(await this.client.listen(saDef, (events) => {
      for (const [type, key] of events) {
        if (type !== 'DELETED') continue
        const [ns, name] = key.slice(saPrefix).split('/')
        if (name === DEFAULT_SERVICE_ACCOUNT) this.queue.add(ns)
      }
    }, { attrsOnly: true }))
    await this.queueActiveNamespaces()
  }

  /** Creates the namespace's default account when it is missing; true when done, false to be retried. */
  async #sync(ns: string): Promise<boolean> {
    const { registry, store } = this.client.pipeline
    // Gone or terminating: nothing to make (a create there would be refused anyway).
    if (!this.namespaceActive(ns)) return true
    if (store.getFresh(store.shardFor('', 'serviceaccounts'), objectKey('', 'serviceaccounts', ns, DEFAULT_SERVICE_ACCOUNT))) return true
    const def = registry.byGroupResource('', 'serviceaccounts')!
    const r = await this.client.request('POST', this.client.path(def, ns), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: DEFAULT_SERVICE_ACCOUNT } })
    // 409: made meanwhile; 403/404: the namespace started terminating or went.
    if (r.status === 201 || r.status === 409 || r.status === 403 || r.status === 404) return true
    this.log.warn({ namespace: ns, status: r.status, message: r.body.message }, 'could not create the default service account')
    return false
  }
}
