// The namespace lifecycle controller: empties a terminating namespace of every namespaced type, then finalizes it.
import type { Logger } from 'pino'
import { objectKey, recordAttrs, typePrefix } from '../machinery/storage-format.js'
import type { InternalClient } from '../server/internal-client.js'
import { QueueController } from './queue.js'

export class NamespaceController extends QueueController {

  constructor(client: InternalClient, log: Logger) {
    super(client, log, 'namespace', 1000)
  }

  protected work(key: string): Promise<boolean> { return this.#sync(key) }

  async start(): Promise<void> {
    const { registry, store } = this.client.pipeline
    const def = registry.byGroupResource('', 'namespaces')!
    this.unlisten.push(await this.client.listen(def, (events) => {
      for (const [type, key, , rec] of events) {
        if (type !== 'DELETED' && recordAttrs(rec).d) this.queue.add(key.slice(key.lastIndexOf('/') + 1))
      }
    }, { attrsOnly: true }))
    const shard = store.shardFor('', 'namespaces')
    store.snapshot(shard)
    for (const { key, value } of store.range(shard, typePrefix('', 'namespaces', ''))) {
      if (recordAttrs(value).d) this.queue.add(key.slice(key.lastIndexOf('/') + 1))
    }
  }


  /** Deletes the content; finalizes once nothing is left. Returns false to be retried. */
  async #sync(ns: string): Promise<boolean> {
    const { registry, store } = this.client.pipeline
    const nsDef = registry.byGroupResource('', 'namespaces')!
    const nsShard = store.shardFor('', 'namespaces')
    const nsRec = store.getFresh(nsShard, objectKey('', 'namespaces', '', ns))
    if (!nsRec || !recordAttrs(nsRec).d) return true
    let remaining = 0
    for (const def of registry.all) {
      if (def.scope !== 'Namespaced' || !def.verbs.includes('deletecollection')) continue
      const shard = store.shardFor(def.group, def.resource)
      store.snapshot(shard)
      let present = 0
      let live = 0
      for (const { value } of store.range(shard, typePrefix(def.group, def.resource, ns))) {
        present++
        if (!recordAttrs(value).d) live++
      }
      if (present === 0) continue
      remaining += present
      if (live > 0) {
        const r = await this.client.request('DELETE', this.client.path(def, ns), { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' })
        if (r.status >= 300 && r.status !== 404) this.log.warn({ namespace: ns, resource: def.groupResource, status: r.status, message: r.body.message }, 'could not delete namespace content')
      }
    }
    if (remaining > 0) return false
    const cur = await this.client.request('GET', this.client.path(nsDef, '', ns))
    if (cur.status !== 200) return true
    const o = cur.body
    o.spec = { ...(o.spec ?? {}), finalizers: (o.spec?.finalizers ?? []).filter((f: string) => f !== 'kubernetes') }
    const r = await this.client.request('PUT', `${this.client.path(nsDef, '', ns)}/finalize`, o)
    if (r.status === 409) return false
    if (r.status >= 300 && r.status !== 404) { this.log.warn({ namespace: ns, status: r.status, message: r.body.message }, 'finalize failed'); return false }
    this.log.info({ namespace: ns }, 'namespace finalized')
    return true
  }
}
