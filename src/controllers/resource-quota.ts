// The resource quota controller: keeps each ResourceQuota's status.hard equal to spec.hard and recomputes status.used when the quota changes, when objects it counts go away or stop counting, and every five minutes.
import type { Logger } from 'pino'
import { objectKey, recordAttrs, recordObject, recordRv, splitKey, typePrefix } from '../machinery/storage-format.js'
import { countQuantity } from '../machinery/quantity.js'
import type { Obj, ResolvedDefinition } from '../registry/define.js'
import type { InternalClient } from '../server/internal-client.js'
import type { WatchEvent } from '../../actors/shard/messages.js'
import { evaluatorFor, inScopes, scopeRequirements, type Evaluator, type ScopeRequirement } from '../admission/resource-quota.js'
import { addLists, equalLists, maskList, resourceList, resourceMap, type ResourceList } from '../admission/resource-lists.js'
import { QueueController } from './queue.js'

/** upstream's --resource-quota-sync-period default: every quota is recomputed this often. */
const RESYNC_MS = 5 * 60_000

/** Pod phases after which a pod no longer counts for its compute resources. */
const TERMINAL = new Set(['Failed', 'Succeeded'])

export class ResourceQuotaController extends QueueController {
  /** namespace → quota name → the names of its spec.hard (only namespaces that have quotas are here) */
  #quotas = new Map<string, Map<string, string[]>>()
  /** Whether the types quotas count are being listened to (from the first quota on). */
  #replenishing = false
  #resync: NodeJS.Timeout | undefined

  constructor(client: InternalClient, log: Logger) {
    super(client, log, 'resourcequota', 1000)
  }

  protected work(key: string): Promise<boolean> { return this.#sync(key) }

  async start(): Promise<void> {
    const { registry, store } = this.client.pipeline
    const def = registry.byGroupResource('', 'resourcequotas')!
    this.unlisten.push(await this.client.listen(def, (events) => {
      for (const [type, key, , rec, prev] of events) this.#observeQuota(type, key, rec, prev)
    }))
    const shard = store.shardFor('', 'resourcequotas')
    store.snapshot(shard)
    // Every quota is recomputed once at start (objects may have gone while the server was down).
    for (const { key, value } of store.range(shard, typePrefix('', 'resourcequotas'))) this.#observeQuota('ADDED', key, value, null)
    this.#resync = setInterval(() => {
      for (const [ns, quotas] of this.#quotas) for (const name of quotas.keys()) this.queue.add(`${ns}/${name}`)
    }, RESYNC_MS)
    this.#resync.unref()
  }

  override stop(): void {
    if (this.#resync) clearInterval(this.#resync)
    super.stop()
  }

  #observeQuota(type: WatchEvent[0], key: string, rec: Uint8Array, prev: Uint8Array | null): void {
    const { namespace, name } = splitKey(key)
    if (type === 'DELETED') {
      const quotas = this.#quotas.get(namespace)
      quotas?.delete(name)
      if (quotas?.size === 0) this.#quotas.delete(namespace)
      // Quotas that count quotas have one less.
      this.#replenish(namespace, evaluatorFor('', 'resourcequotas')!)
      return
    }
    const o = JSON.parse(recordObject(rec).toString('utf8')) as Obj
    const specHard = resourceList(o.spec?.hard)
    let quotas = this.#quotas.get(namespace)
    if (quotas === undefined) { quotas = new Map(); this.#quotas.set(namespace, quotas) }
    quotas.set(name, [...specHard.keys()])
    if (!this.#replenishing) { this.#replenishing = true; void this.#listenToCounted() }
    // A new quota is computed. An updated one is when its hard limits changed or its status does not show them
    // (upstream's quota handlers); admission's own usage updates change neither, and are not.
    if (type === 'MODIFIED' && equalLists(specHard, resourceList(o.status?.hard))) {
      const before = prev === null ? undefined : JSON.parse(recordObject(prev).toString('utf8')) as Obj
      if (before === undefined || equalLists(specHard, resourceList(before.spec?.hard))) return
    }
    this.queue.add(`${namespace}/${name}`)
  }

  /** Listens to the objects of every type quota counts: their removals (and the updates that stop a pod counting) free usage. */
  async #listenToCounted(): Promise<void> {
    const { registry } = this.client.pipeline
    for (const def of registry.all) {
      if (def.scope !== 'Namespaced' || !def.verbs.includes('watch') || !def.verbs.includes('create')) continue
      if (def.group === '' && def.resource === 'resourcequotas') continue
      const ev = evaluatorFor(def.group, def.resource)
      if (ev === undefined) continue
      const at = typePrefix(def.group, def.resource).length
      const pods = def.group === '' && def.resource === 'pods'
      const anyUpdate = def.group === '' && (def.resource === 'services' || def.resource === 'persistentvolumeclaims')
      if (this.stopped) return
      this.unlisten.push(await this.client.listen(def, (events) => {
        for (const [type, key, , rec] of events) {
          if (type === 'ADDED' || this.#quotas.size === 0) continue
          const ns = key.slice(at, key.indexOf('/', at))
          if (!this.#quotas.has(ns)) continue
          if (type === 'MODIFIED') {
            // A pod that reached a terminal phase frees its compute usage; a service's type or a claim's allocation may
            // have changed. Other updates change no usage.
            if (pods ? !TERMINAL.has(recordAttrs(rec).f?.['status.phase'] ?? '') : !anyUpdate) continue
          }
          this.#replenish(ns, ev)
        }
      }, { attrsOnly: true }))
    }
  }

  /** Queues the quotas of a namespace that track a resource the evaluator measures. */
  #replenish(ns: string, ev: Evaluator): void {
    const quotas = this.#quotas.get(ns)
    if (quotas === undefined) return
    for (const [name, hard] of quotas) if (ev.matchingResources(hard).length > 0) this.queue.add(`${ns}/${name}`)
  }

  /** Recomputes one quota's status and writes it when it changed. False to be retried. */
  async #sync(key: string): Promise<boolean> {
    const slash = key.indexOf('/')
    const ns = key.slice(0, slash)
    const name = key.slice(slash + 1)
    const { registry, store } = this.client.pipeline
    const def = registry.byGroupResource('', 'resourcequotas')!
    const rec = store.getFresh(store.shardFor('', 'resourcequotas'), objectKey('', 'resourcequotas', ns, name))
    if (!rec) return true
    const o = JSON.parse(recordObject(rec).toString('utf8')) as Obj
    const hard = resourceList(o.spec?.hard)
    const prevUsed = resourceList(o.status?.used)
    // Names no type measures keep what they had.
    let used: ResourceList = new Map(prevUsed)
    for (const [k, q] of this.#usage(ns, hard, scopeRequirements(o))) used.set(k, q)
    used = maskList(used, hard.keys())
    const dirty = o.status?.hard === undefined || o.status?.used === undefined || !equalLists(hard, resourceList(o.status?.hard)) || !equalLists(used, prevUsed)
    if (!dirty) return true
    const body = { ...o, metadata: { ...o.metadata, resourceVersion: String(recordRv(rec)) }, status: { hard: sortedMap(o.spec?.hard), used: resourceMap(used) } }
    const r = await this.client.request('PUT', `${this.client.path(def, ns, name)}/status`, body)
    if (r.status === 409) return false
    if (r.status === 404) return true
    if (r.status >= 300) {
      this.log.warn({ namespace: ns, name, status: r.status, message: r.body.message }, 'could not update the quota status')
      return false
    }
    return true
  }

  /** The usage of a namespace for the quota's hard names in its scopes (upstream CalculateUsage). */
  #usage(ns: string, hard: ResourceList, scopes: ScopeRequirement[]): ResourceList {
    const names = [...hard.keys()]
    let out: ResourceList = new Map()
    for (const def of this.client.pipeline.registry.all) {
      if (def.scope !== 'Namespaced') continue
      const ev = evaluatorFor(def.group, def.resource)
      if (ev === undefined) continue
      const tracked = ev.matchingResources(names)
      if (tracked.length === 0) continue
      out = addLists(out, this.#usageOf(def, ev, ns, tracked, scopes))
    }
    return out
  }

  #usageOf(def: ResolvedDefinition, ev: Evaluator, ns: string, tracked: string[], scopes: ScopeRequirement[]): ResourceList {
    const { store } = this.client.pipeline
    const shard = store.shardFor(def.group, def.resource)
    const prefix = typePrefix(def.group, def.resource, ns)
    store.snapshot(shard)
    let used: ResourceList = new Map(tracked.map((n) => [n, countQuantity(0)]))
    if (ev.countsOnly) {
      // An object count: the shard keeps the number of objects per namespace. Counting evaluators match no scope.
      if (scopes.length > 0) return used
      const n = countQuantity(store.count(shard, prefix))
      return new Map(tracked.map((k) => [k, n]))
    }
    const now = Date.now()
    for (const { value } of store.range(shard, prefix)) {
      const o = JSON.parse(recordObject(value).toString('utf8')) as Obj
      if (!inScopes(ev, scopes, o)) continue
      used = addLists(used, maskList(ev.usage(o, now), tracked))
    }
    return used
  }
}

/** A resource map with its names in order, as Go prints a map. */
function sortedMap(m: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  if (m === null || typeof m !== 'object') return out
  for (const k of Object.keys(m).sort()) out[k] = (m as Record<string, unknown>)[k]
  return out
}
