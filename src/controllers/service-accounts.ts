// The service accounts controller: every active namespace has a ServiceAccount named "default", made again when deleted.
import type { Logger } from 'pino'
import { objectKey, recordAttrs, typePrefix } from '../machinery/storage-format.js'
import type { InternalClient } from '../server/internal-client.js'
import { QueueController } from './queue.js'

export const DEFAULT_SERVICE_ACCOUNT = 'default'

export class ServiceAccountsController extends QueueController {
  constructor(client: InternalClient, log: Logger) {
    super(client, log, 'namespace', 1000)
  }

  protected work(ns: string): Promise<boolean> { return this.#sync(ns) }

  async start(): Promise<void> {
    const { registry, store } = this.client.pipeline
    const nsDef = registry.byGroupResource('', 'namespaces')!
    const saDef = registry.byGroupResource('', 'serviceaccounts')!
    this.unlisten.push(await this.client.listen(nsDef, (events) => {
      for (const [type, key, , rec] of events) if (type !== 'DELETED' && !recordAttrs(rec).d) this.queue.add(key.slice(key.lastIndexOf('/') + 1))
    }, { attrsOnly: true }))
    const saPrefix = typePrefix('', 'serviceaccounts').length
    this.unlisten.push(await this.client.listen(saDef, (events) => {
      for (const [type, key] of events) {
        if (type !== 'DELETED') continue
        const [ns, name] = key.slice(saPrefix).split('/')
        if (name === DEFAULT_SERVICE_ACCOUNT) this.queue.add(ns)
      }
    }, { attrsOnly: true }))
    const shard = store.shardFor('', 'namespaces')
    store.snapshot(shard)
    for (const { key, value } of store.range(shard, typePrefix('', 'namespaces', ''))) {
      if (!recordAttrs(value).d) this.queue.add(key.slice(key.lastIndexOf('/') + 1))
    }
  }

  /** Creates the namespace's default account when it is missing; true when done, false to be retried. */
  async #sync(ns: string): Promise<boolean> {
    const { registry, store } = this.client.pipeline
    const nsRec = store.getFresh(store.shardFor('', 'namespaces'), objectKey('', 'namespaces', '', ns))
    // Gone or terminating: nothing to make (a create there would be refused anyway).
    if (!nsRec || recordAttrs(nsRec).d) return true
    if (store.getFresh(store.shardFor('', 'serviceaccounts'), objectKey('', 'serviceaccounts', ns, DEFAULT_SERVICE_ACCOUNT))) return true
    const def = registry.byGroupResource('', 'serviceaccounts')!
    const r = await this.client.request('POST', this.client.path(def, ns), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: DEFAULT_SERVICE_ACCOUNT } })
    // 409: made meanwhile; 403/404: the namespace started terminating or went.
    if (r.status === 201 || r.status === 409 || r.status === 403 || r.status === 404) return true
    this.log.warn({ namespace: ns, status: r.status, message: r.body.message }, 'could not create the default service account')
    return false
  }
}
