// The namespace lifecycle controller: empties a terminating namespace of every namespaced type, then finalizes it.
import type { Logger } from 'pino'
import { objectKey, recordAttrs, typePrefix } from '../machinery/storage-format.js'
import type { Obj } from '../registry/define.js'
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


  /**
   * Deletes the content, records what is left in the namespace's conditions (written only when they change), and
   * finalizes once nothing is left. Returns false to be retried.
   */
  async #sync(ns: string): Promise<boolean> {
    const { registry, store } = this.client.pipeline
    const nsDef = registry.byGroupResource('', 'namespaces')!
    const nsShard = store.shardFor('', 'namespaces')
    const nsRec = store.getFresh(nsShard, objectKey('', 'namespaces', '', ns))
    if (!nsRec || !recordAttrs(nsRec).d) return true
    const content: Content = { remaining: [], finalizers: new Map(), failures: [] }
    for (const def of registry.all) {
      if (def.scope !== 'Namespaced' || !def.verbs.includes('deletecollection')) continue
      const shard = store.shardFor(def.group, def.resource)
      let left = count(store, shard, def.group, def.resource, ns)
      if (left.present === 0) continue
      if (left.live > 0) {
        const r = await this.client.request('DELETE', this.client.path(def, ns), { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' })
        if (r.status >= 300 && r.status !== 404) {
          this.log.warn({ namespace: ns, resource: def.groupResource, status: r.status, message: r.body.message }, 'could not delete namespace content')
          content.failures.push(String(r.body.message ?? `status ${r.status}`))
        }
        // What is left after the delete, and the finalizers that hold it.
        left = count(store, shard, def.group, def.resource, ns)
        if (left.present === 0) continue
      }
      content.remaining.push(`${def.resource}.${def.group} has ${left.present} resource instances`)
      for (const [f, n] of left.finalizers) content.finalizers.set(f, (content.finalizers.get(f) ?? 0) + n)
    }
    const written = await this.#writeConditions(ns, content)
    if (!written) return false
    if (content.remaining.length > 0 || content.failures.length > 0) return false
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

  /**
   * The deletion conditions of upstream's namespace controller, in its order, each False ("fine") unless the content
   * says otherwise; a condition's lastTransitionTime moves only when its status does. Written through namespaces/status
   * when any changed. False when the write raced another and the sync should run again.
   */
  async #writeConditions(ns: string, content: Content): Promise<boolean> {
    const nsDef = this.client.pipeline.registry.byGroupResource('', 'namespaces')!
    const cur = await this.client.request('GET', this.client.path(nsDef, '', ns))
    if (cur.status !== 200) return true
    const o = cur.body
    if (!o.metadata?.deletionTimestamp) return true
    const now = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z')
    const wanted = new Map<string, { status: string; reason: string; message: string }>()
    if (content.failures.length > 0) {
      const msgs = [...content.failures].sort()
      wanted.set('NamespaceDeletionContentFailure', { status: 'True', reason: 'ContentDeletionFailed', message: `Failed to delete all resource types, ${msgs.length} remaining: ${msgs.join(', ')}` })
    }
    if (content.remaining.length > 0) {
      wanted.set('NamespaceContentRemaining', { status: 'True', reason: 'SomeResourcesRemain', message: `Some resources are remaining: ${[...content.remaining].sort().join(', ')}` })
    }
    if (content.finalizers.size > 0) {
      const held = [...content.finalizers].map(([f, n]) => `${f} in ${n} resource instances`).sort()
      wanted.set('NamespaceFinalizersRemaining', { status: 'True', reason: 'SomeFinalizersRemain', message: `Some content in the namespace has finalizers remaining: ${held.join(', ')}` })
    }
    const conditions: Obj[] = Array.isArray(o.status?.conditions) ? o.status.conditions : []
    let changed = false
    for (const [type, fine] of CONDITIONS) {
      const want = wanted.get(type) ?? { status: 'False', ...fine }
      const old = conditions.find((c) => c.type === type)
      if (!old) {
        conditions.push({ type, status: want.status, lastTransitionTime: now, reason: want.reason, message: want.message })
        changed = true
      } else if (old.status !== want.status || old.reason !== want.reason || old.message !== want.message) {
        if (old.status !== want.status) old.lastTransitionTime = now
        old.status = want.status
        old.reason = want.reason
        old.message = want.message
        changed = true
      }
    }
    if (!changed) return true
    o.status = { ...(o.status ?? {}), conditions }
    const r = await this.client.request('PUT', `${this.client.path(nsDef, '', ns)}/status`, o)
    if (r.status === 409) return false
    if (r.status >= 300 && r.status !== 404) this.log.warn({ namespace: ns, status: r.status, message: r.body.message }, 'could not update the namespace conditions')
    return true
  }
}

/** What a sync found in a terminating namespace. */
interface Content {
  /** `<resource>.<group> has <n> resource instances`, one per type with objects left */
  remaining: string[]
  /** finalizer → how many of the objects left carry it */
  finalizers: Map<string, number>
  /** the messages of the collection deletes that failed */
  failures: string[]
}

/** upstream's namespace deletion conditions, in its order, with the reason and message each has when all is fine. */
const CONDITIONS: Array<[string, { reason: string; message: string }]> = [
  ['NamespaceDeletionDiscoveryFailure', { reason: 'ResourcesDiscovered', message: 'All resources successfully discovered' }],
  ['NamespaceDeletionGroupVersionParsingFailure', { reason: 'ParsedGroupVersions', message: 'All legacy kube types successfully parsed' }],
  ['NamespaceDeletionContentFailure', { reason: 'ContentDeleted', message: 'All content successfully deleted, may be waiting on finalization' }],
  ['NamespaceContentRemaining', { reason: 'ContentRemoved', message: 'All content successfully removed' }],
  ['NamespaceFinalizersRemaining', { reason: 'ContentHasNoFinalizers', message: 'All content-preserving finalizers finished' }],
]

/** The objects of a type in a namespace: all of them, those not being deleted, and the finalizers they carry. */
function count(store: InternalClient['pipeline']['store'], shard: number, group: string, resource: string, ns: string): { present: number; live: number; finalizers: Map<string, number> } {
  store.snapshot(shard)
  let present = 0
  let live = 0
  const finalizers = new Map<string, number>()
  for (const { value } of store.range(shard, typePrefix(group, resource, ns))) {
    present++
    const a = recordAttrs(value)
    if (!a.d) live++
    for (const f of a.z ?? []) finalizers.set(f, (finalizers.get(f) ?? 0) + 1)
  }
  return { present, live, finalizers }
}
