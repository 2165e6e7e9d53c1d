// The PVC and PV protection controllers: they take the protection finalizers (StorageObjectInUseProtection admission)
// off a claim being deleted once no scheduled pod uses it, and off a volume being deleted once it is not bound.
import type { Logger } from 'pino'
import { recordAttrs, splitKey, typePrefix } from '../machinery/storage-format.js'
import type { Obj } from '../registry/define.js'
import type { InternalClient } from '../server/internal-client.js'
import { PV_PROTECTION_FINALIZER, PVC_PROTECTION_FINALIZER } from '../admission/storage.js'
import { QueueController } from './queue.js'

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)

/** A pod deleted with no grace (done, or forced): its ephemeral volumes' claims are free (upstream podIsShutDown). */
const shutDown = (pod: Obj): boolean => pod.metadata?.deletionTimestamp != null && pod.metadata?.deletionGracePeriodSeconds === 0

/**
 * Whether a pod uses the claim (upstream podUsesPVC): only a scheduled pod does (a kubelet does not start a pod whose
 * claim is being deleted), by a persistentVolumeClaim volume, or by an ephemeral volume (`<pod>-<volume>`) it owns.
 */
function usesClaim(pod: Obj, claim: Obj): boolean {
  const vols = pod.spec?.volumes
  if (typeof pod.spec?.nodeName !== 'string' || pod.spec.nodeName === '' || !Array.isArray(vols)) return false
  const name = claim.metadata?.name
  for (const v of vols) {
    if (!isObj(v)) continue
    if (isObj(v.persistentVolumeClaim) && v.persistentVolumeClaim.claimName === name) return true
    if (isObj(v.ephemeral) && !shutDown(pod) && `${pod.metadata?.name}-${v.name}` === name &&
      Array.isArray(claim.metadata?.ownerReferences) && claim.metadata.ownerReferences.some((r: Obj) => r?.uid === pod.metadata?.uid && r?.controller === true)) return true
  }
  return false
}

/** Removes `finalizer` from the object at `path` (read again first); true when done, false to be retried. */
async function dropFinalizer(client: InternalClient, log: Logger, path: string, o: Obj, finalizer: string): Promise<boolean> {
  o.metadata.finalizers = (o.metadata.finalizers as string[]).filter((f) => f !== finalizer)
  const r = await client.request('PUT', path, o)
  if (r.status === 200 || r.status === 404) return true
  if (r.status !== 409) log.warn({ path, status: r.status, message: r.body.message }, `could not remove finalizer ${finalizer}`)
  return false
}

/** Keyed `namespace/name` of claims; a pod write in a namespace with claims being deleted looks at them again. */
export class PvcProtectionController extends QueueController {
  /** Per namespace, the claims being deleted that still hold the finalizer. */
  #deleting = new Map<string, Set<string>>()

  constructor(client: InternalClient, log: Logger) { super(client, log, 'persistentvolumeclaim', 500) }

  protected work(key: string): Promise<boolean> { return this.#sync(key) }

  #track(ns: string, name: string, deleting: boolean): void {
    let set = this.#deleting.get(ns)
    if (deleting) {
      if (set === undefined) { set = new Set(); this.#deleting.set(ns, set) }
      set.add(name)
      this.queue.add(`${ns}/${name}`)
    } else if (set !== undefined && set.delete(name) && set.size === 0) {
      this.#deleting.delete(ns)
    }
  }

  async start(): Promise<void> {
    const { registry, store } = this.client.pipeline
    const pvcDef = registry.byGroupResource('', 'persistentvolumeclaims')!
    const podDef = registry.byGroupResource('', 'pods')!
    this.unlisten.push(await this.client.listen(pvcDef, (events) => {
      for (const [type, key, , rec] of events) {
        const { namespace, name } = splitKey(key)
        const a = type === 'DELETED' ? undefined : recordAttrs(rec)
        this.#track(namespace, name, a !== undefined && a.d === 1 && (a.z?.includes(PVC_PROTECTION_FINALIZER) ?? false))
      }
    }, { attrsOnly: true }))
    // A pod write can free a claim: only namespaces with claims being deleted are looked at.
    this.unlisten.push(await this.client.listen(podDef, (events) => {
      if (this.#deleting.size === 0) return
      for (const [, key] of events) {
        const set = this.#deleting.get(splitKey(key).namespace)
        if (set !== undefined) for (const name of set) this.queue.add(`${splitKey(key).namespace}/${name}`)
      }
    }, { attrsOnly: true }))
    const shard = store.shardFor('', 'persistentvolumeclaims')
    await this.scanInSlices(shard, typePrefix('', 'persistentvolumeclaims'), (key, rec) => {
      const a = recordAttrs(rec)
      if (a.d === 1 && a.z?.includes(PVC_PROTECTION_FINALIZER)) { const { namespace, name } = splitKey(key); this.#track(namespace, name, true) }
    })
  }

  async #sync(key: string): Promise<boolean> {
    const slash = key.indexOf('/')
    const ns = key.slice(0, slash)
    const name = key.slice(slash + 1)
    const { registry } = this.client.pipeline
    const pvcDef = registry.byGroupResource('', 'persistentvolumeclaims')!
    const path = this.client.path(pvcDef, ns, name)
    const cur = await this.client.request('GET', path)
    if (cur.status === 404) return true
    if (cur.status !== 200) return false
    const pvc = cur.body
    if (!pvc.metadata?.deletionTimestamp || !Array.isArray(pvc.metadata.finalizers) || !pvc.metadata.finalizers.includes(PVC_PROTECTION_FINALIZER)) return true
    const pods = await this.client.request('GET', this.client.path(registry.byGroupResource('', 'pods')!, ns))
    if (pods.status !== 200) return false
    const items: Obj[] = Array.isArray(pods.body.items) ? pods.body.items : []
    // In use: a pod event queues it again.
    if (items.some((p) => usesClaim(p, pvc))) return true
    return dropFinalizer(this.client, this.log, path, pvc, PVC_PROTECTION_FINALIZER)
  }
}

/** Keyed by volume name: a volume being deleted loses its finalizer once its phase is not Bound. */
export class PvProtectionController extends QueueController {
  constructor(client: InternalClient, log: Logger) { super(client, log, 'persistentvolume', 500) }

  protected work(name: string): Promise<boolean> { return this.#sync(name) }

  async start(): Promise<void> {
    const { registry, store } = this.client.pipeline
    const pvDef = registry.byGroupResource('', 'persistentvolumes')!
    this.unlisten.push(await this.client.listen(pvDef, (events) => {
      for (const [type, key, , rec] of events) {
        if (type === 'DELETED') continue
        const a = recordAttrs(rec)
        if (a.d === 1 && a.z?.includes(PV_PROTECTION_FINALIZER)) this.queue.add(splitKey(key).name)
      }
    }, { attrsOnly: true }))
    await this.scanInSlices(store.shardFor('', 'persistentvolumes'), typePrefix('', 'persistentvolumes'), (key, rec) => {
      const a = recordAttrs(rec)
      if (a.d === 1 && a.z?.includes(PV_PROTECTION_FINALIZER)) this.queue.add(splitKey(key).name)
    })
  }

  async #sync(name: string): Promise<boolean> {
    const pvDef = this.client.pipeline.registry.byGroupResource('', 'persistentvolumes')!
    const path = this.client.path(pvDef, '', name)
    const cur = await this.client.request('GET', path)
    if (cur.status === 404) return true
    if (cur.status !== 200) return false
    const pv = cur.body
    if (!pv.metadata?.deletionTimestamp || !Array.isArray(pv.metadata.finalizers) || !pv.metadata.finalizers.includes(PV_PROTECTION_FINALIZER)) return true
    // Bound: its status write (by whoever unbinds it) queues it again.
    if (pv.status?.phase === 'Bound') return true
    return dropFinalizer(this.client, this.log, path, pv, PV_PROTECTION_FINALIZER)
  }
}
