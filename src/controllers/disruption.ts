// The disruption controller: keeps each PodDisruptionBudget's status (observedGeneration, expectedPods, currentHealthy,
// desiredHealthy, disruptionsAllowed, disruptedPods and condition DisruptionAllowed) as upstream's controller does.
//
// Cost: the budgets are kept by namespace; a pod event costs a map look-up of its namespace and nothing more when that
// namespace has no budget. Each budget keeps the pods its selector matches (found once by a scan of its namespace,
// then kept by the pod events) with what a sync needs of each, read again only when the pod's version moved: a sync
// reads the pods of its own that changed since the last, never the namespace or the cluster.
import type { Logger } from 'pino'
import { objectKey, recordAttrs, recordObject, splitKey, typePrefix } from '../machinery/storage-format.js'
import type { Obj, ResolvedDefinition } from '../registry/define.js'
import { selectorMatches } from '../registry/resources/core/pod-validation.js'
import {
  DISRUPTED_POD_TIMEOUT_MS, DISRUPTION_ALLOWED, SYNC_FAILED, conditionsAreUpToDate, controllerOf, isPodReady, scaledValue,
  setStatusCondition, updateDisruptionAllowedCondition,
} from '../registry/resources/policy/disruption.js'
import type { InternalClient } from '../server/internal-client.js'
import { rfc3339 } from '../pipeline/admission.js'
import { QueueController } from './queue.js'

/** What a sync needs of one pod. */
interface PodView { ready: boolean; deleting: boolean; controller: Obj | undefined }

interface Budget {
  namespace: string
  name: string
  /** `<namespace>/<name>`: the work item */
  key: string
  selector: unknown
  selectorText: string
  /** The pods the selector matches (name → view, undefined until read, and again after each event); complete once `scanned`. */
  members: Map<string, PodView | undefined>
  scanned: boolean
  /** Moves when the selector changes: a scan under way for an older selector gives up. */
  epoch: number
}

/** A sync that cannot work out the budget: its message becomes condition SyncFailed's (upstream's failSafe). */
class SyncFailure extends Error {}

/** Records read per event-loop turn while a namespace is scanned or a budget's pods are read. */
const SLICE = 5000
const POD_PREFIX = typePrefix('', 'pods')

export class DisruptionController extends QueueController {
  /** namespace → budget name → budget */
  #byNamespace = new Map<string, Map<string, Budget>>()
  #budgets = new Map<string, Budget>()
  #pdbDef!: ResolvedDefinition

  constructor(client: InternalClient, log: Logger) {
    super(client, log, 'poddisruptionbudget', 1000)
  }

  protected work(key: string): Promise<boolean> { return this.#sync(key) }

  async start(): Promise<void> {
    const { registry, store } = this.client.pipeline
    const pdbDef = registry.byGroupResource('policy', 'poddisruptionbudgets')
    const podDef = registry.byGroupResource('', 'pods')
    if (!pdbDef || !podDef) return
    this.#pdbDef = pdbDef
    // Pods: attributes only (labels), so that no pod's bytes travel to this thread for it.
    this.unlisten.push(await this.client.listen(podDef, (events) => {
      for (const [type, key, , rec] of events) this.#observePod(key, type === 'DELETED' ? undefined : rec)
    }, { attrsOnly: true }))
    this.unlisten.push(await this.client.listen(pdbDef, (events) => {
      for (const [type, key, , rec] of events) this.#observeBudget(key, type === 'DELETED' ? undefined : rec)
    }))
    const shard = store.shardFor(pdbDef.group, pdbDef.resource)
    store.snapshot(shard)
    for (const { key, value } of store.range(shard, typePrefix(pdbDef.group, pdbDef.resource))) this.#observeBudget(key, value)
  }

  #observeBudget(key: string, rec: Uint8Array | undefined): void {
    const { namespace, name } = splitKey(key)
    const k = `${namespace}/${name}`
    let b = this.#budgets.get(k)
    if (rec === undefined) {
      if (!b) return
      this.#budgets.delete(k)
      const inNs = this.#byNamespace.get(namespace)
      inNs?.delete(name)
      if (inNs?.size === 0) this.#byNamespace.delete(namespace)
      return
    }
    const o = JSON.parse(recordObject(rec).toString('utf8')) as Obj
    const selector = o.spec?.selector ?? null
    const selectorText = JSON.stringify(selector)
    if (!b) {
      b = { namespace, name, key: k, selector, selectorText, members: new Map(), scanned: false, epoch: 0 }
      this.#budgets.set(k, b)
      let inNs = this.#byNamespace.get(namespace)
      if (!inNs) { inNs = new Map(); this.#byNamespace.set(namespace, inNs) }
      inNs.set(name, b)
    } else if (b.selectorText !== selectorText) {
      b.selector = selector
      b.selectorText = selectorText
      b.members.clear()
      b.scanned = false
      b.epoch++
    }
    this.queue.add(k)
  }

  /** A pod event (`rec` undefined: deleted): only a namespace with budgets costs more than this look-up. */
  #observePod(key: string, rec: Uint8Array | undefined): void {
    const slash = key.indexOf('/', POD_PREFIX.length)
    const inNs = this.#byNamespace.get(key.slice(POD_PREFIX.length, slash))
    if (inNs === undefined) return
    const name = key.slice(slash + 1)
    const labels = rec === undefined ? undefined : recordAttrs(rec).l ?? {}
    for (const b of inNs.values()) {
      const match = labels !== undefined && selectorMatches(b.selector, labels)
      const was = b.members.has(name)
      // A member's view is read again at the next sync: every change of a pod comes as an event.
      if (match) b.members.set(name, undefined)
      else if (was) b.members.delete(name)
      if (match || was) this.queue.add(b.key)
    }
  }

  /** The namespace's pods the selector matches, a slice per turn; false when the selector changed meanwhile. */
  async #scan(b: Budget): Promise<boolean> {
    const { store } = this.client.pipeline
    const shard = store.shardFor('', 'pods')
    const prefix = typePrefix('', 'pods', b.namespace)
    const epoch = b.epoch
    const done = await this.scanInSlices(shard, prefix, (key, rec) => {
      const name = key.slice(prefix.length)
      if (selectorMatches(b.selector, recordAttrs(rec).l ?? {})) {
        if (!b.members.has(name)) b.members.set(name, undefined)
      } else {
        b.members.delete(name)
      }
    }, () => !this.stopped && b.epoch === epoch && this.#budgets.get(b.key) === b)
    if (!done) return false
    b.scanned = true
    return true
  }

  /**
   * The budget's pods as of now. A view stands until an event of its pod drops it (every change of a pod comes as
   * one), so a sync reads only the pods that changed since the last: a slice per turn when many did.
   */
  async #readMembers(b: Budget): Promise<Array<[string, PodView]>> {
    const { store } = this.client.pipeline
    const shard = store.shardFor('', 'pods')
    const stale: string[] = []
    for (const [name, v] of b.members) if (v === undefined) stale.push(name)
    // What this sync read stands for it even if an event drops it meanwhile (the event brings another sync).
    const read = new Map<string, PodView>()
    for (let at = 0; at < stale.length; at += SLICE) {
      if (at > 0) await new Promise((r) => setImmediate(r))
      store.snapshot(shard)
      const txn = store.readTxn(shard)
      try {
        for (let k = at; k < Math.min(at + SLICE, stale.length); k++) {
          const name = stale[k]
          if (!b.members.has(name)) continue
          const rec = store.getIn(shard, objectKey('', 'pods', b.namespace, name), txn)
          if (!rec) { b.members.delete(name); continue }
          if (!selectorMatches(b.selector, recordAttrs(rec).l ?? {})) { b.members.delete(name); continue }
          const pod = JSON.parse(recordObject(rec).toString('utf8')) as Obj
          const view: PodView = { ready: isPodReady(pod), deleting: !!pod.metadata?.deletionTimestamp, controller: controllerOf(pod) }
          b.members.set(name, view)
          read.set(name, view)
        }
      } finally {
        txn.done()
      }
    }
    const out: Array<[string, PodView]> = []
    for (const [name, v] of b.members) {
      const view = v ?? read.get(name)
      if (view !== undefined) out.push([name, view])
    }
    return out
  }

  #readObject(group: string, resource: string, namespace: string, name: string): Obj | undefined {
    const { store } = this.client.pipeline
    const rec = store.getFresh(store.shardFor(group, resource), objectKey(group, resource, namespace, name))
    return rec ? JSON.parse(recordObject(rec).toString('utf8')) as Obj : undefined
  }

  async #sync(key: string): Promise<boolean> {
    const b = this.#budgets.get(key)
    if (!b) return true
    if (!b.scanned && !(await this.#scan(b))) return true
    if (this.stopped || this.#budgets.get(key) !== b) return true
    const epoch = b.epoch
    const pods = await this.#readMembers(b)
    // Deleted, or its selector changed, while many pods were read: the event that did it brings the next sync.
    if (this.stopped || this.#budgets.get(key) !== b || b.epoch !== epoch) return true
    // The budget as it is now (read after its pods: a write of its status since is not undone).
    const pdb = this.#readObject('policy', 'poddisruptionbudgets', b.namespace, b.name)
    if (!pdb) return true
    const now = Date.now()
    let expected: number
    let desired: number
    try {
      [expected, desired] = this.#expectedCount(pdb, pods)
    } catch (err) {
      if (!(err instanceof SyncFailure)) throw err
      return this.#failSafe(pdb, err.message, now)
    }
    const { disrupted, recheckAt } = disruptedPodMap(pdb, pods, now)
    let healthy = 0
    for (const [name, v] of pods) {
      if (v.deleting) continue
      const t = disrupted[name]
      if (t !== undefined && Date.parse(t) + DISRUPTED_POD_TIMEOUT_MS > now) continue
      if (v.ready) healthy++
    }
    let allowed = healthy - desired
    if (expected <= 0 || allowed <= 0) allowed = 0
    const st: Obj = isObj(pdb.status) ? pdb.status : {}
    const generation = pdb.metadata?.generation ?? 0
    const same = (st.currentHealthy ?? 0) === healthy && (st.desiredHealthy ?? 0) === desired && (st.expectedPods ?? 0) === expected &&
      (st.disruptionsAllowed ?? 0) === allowed && sameTimes(st.disruptedPods, disrupted) && (st.observedGeneration ?? 0) === generation &&
      conditionsAreUpToDate(pdb)
    let done = true
    if (!same) {
      const status: Obj = { observedGeneration: generation }
      if (Object.keys(disrupted).length > 0) status.disruptedPods = disrupted
      status.disruptionsAllowed = allowed
      status.currentHealthy = healthy
      status.desiredHealthy = desired
      status.expectedPods = expected
      status.conditions = Array.isArray(st.conditions) ? st.conditions : []
      updateDisruptionAllowedCondition(status, rfc3339(now))
      pdb.status = status
      done = await this.#writeStatus(pdb, now)
    }
    if (done && recheckAt !== undefined) this.queue.addAfter(key, Math.max(0, recheckAt - now))
    return done
  }

  /**
   * upstream getExpectedPodCount: [expectedPods, desiredHealthy]. An integer minAvailable counts the matching pods; a
   * percentage, or maxUnavailable, counts the replicas their controllers ask for.
   */
  #expectedCount(pdb: Obj, pods: Array<[string, PodView]>): [number, number] {
    const spec: Obj = isObj(pdb.spec) ? pdb.spec : {}
    if (spec.maxUnavailable !== undefined && spec.maxUnavailable !== null) {
      const expected = this.#expectedScale(pdb.metadata.namespace, pods)
      const max = scaledValue(spec.maxUnavailable, expected, true)
      if (typeof max === 'string') throw new SyncFailure(max)
      return [expected, Math.max(0, expected - max)]
    }
    if (spec.minAvailable !== undefined && spec.minAvailable !== null) {
      if (typeof spec.minAvailable === 'number') return [pods.length, spec.minAvailable]
      const expected = this.#expectedScale(pdb.metadata.namespace, pods)
      const min = scaledValue(spec.minAvailable, expected, true)
      if (typeof min === 'string') throw new SyncFailure(min)
      return [expected, min]
    }
    return [0, 0]
  }

  /**
   * upstream getExpectedScale: the sum of the replicas of the pods' controllers, each counted once. Pods without a
   * controller are left out; a controller that cannot be found fails the sync.
   */
  #expectedScale(namespace: string, pods: Array<[string, PodView]>): number {
    const byRef = new Map<string, { uid: string; replicas: number }>()
    const scales = new Map<string, number>()
    for (const [name, v] of pods) {
      const ref = v.controller
      if (ref === undefined) continue
      const refUid = String(ref.uid ?? '')
      let found = byRef.get(refUid)
      if (found === undefined) {
        found = this.#controllerScale(namespace, ref)
        if (found === undefined) throw new SyncFailure(`found no controllers for pod ${JSON.stringify(name)}`)
        byRef.set(refUid, found)
      }
      scales.set(found.uid, found.replicas)
    }
    let sum = 0
    for (const n of scales.values()) sum += n
    return sum
  }

  /**
   * upstream's controller finders, in its order: ReplicationController, the Deployment of a ReplicaSet, a ReplicaSet
   * of no Deployment, StatefulSet, then any kind through its scale. With no workload controllers here, the scale is
   * the owner's spec.replicas.
   */
  #controllerScale(namespace: string, ref: Obj): { uid: string; replicas: number } | undefined {
    const apiVersion = String(ref.apiVersion ?? '')
    const parts = apiVersion.split('/')
    if (parts.length > 2) throw new SyncFailure(`unexpected GroupVersion string: ${apiVersion}`)
    const group = parts.length === 2 ? parts[0] : ''
    const kind = String(ref.kind ?? '')
    const name = String(ref.name ?? '')
    const uid = String(ref.uid ?? '')
    const replicas = (o: Obj) => (typeof o.spec?.replicas === 'number' ? o.spec.replicas : 1)
    const apps = group === 'apps' || group === 'extensions'
    if (kind === 'ReplicationController' && group === '') {
      const rc = this.#readObject('', 'replicationcontrollers', namespace, name)
      if (rc && rc.metadata.uid === uid) return { uid, replicas: replicas(rc) }
    }
    if (kind === 'ReplicaSet' && apps) {
      const rs = this.#readObject('apps', 'replicasets', namespace, name)
      if (rs && rs.metadata.uid === uid) {
        const owner = controllerOf(rs)
        if (owner === undefined || owner.kind !== 'Deployment') return { uid, replicas: replicas(rs) }
        const ownerGroup = String(owner.apiVersion ?? '').split('/')[0]
        if (ownerGroup === 'apps' || ownerGroup === 'extensions') {
          const d = this.#readObject('apps', 'deployments', namespace, String(owner.name ?? ''))
          if (d && d.metadata.uid === owner.uid) return { uid: d.metadata.uid, replicas: replicas(d) }
        }
      }
    }
    if (kind === 'StatefulSet' && group === 'apps') {
      const ss = this.#readObject('apps', 'statefulsets', namespace, name)
      if (ss && ss.metadata.uid === uid) return { uid, replicas: replicas(ss) }
    }
    // Any other kind: through its scale, which it must have.
    const { registry } = this.client.pipeline
    const ours = group.endsWith('.k8s.io') ? `${group.slice(0, -'.k8s.io'.length)}.orch.io` : group
    const def = registry.all.find((d) => d.group === ours && d.kind === kind)
    if (!def) throw new SyncFailure(`no matches for kind ${JSON.stringify(kind)} in version ${JSON.stringify(apiVersion)}`)
    if (!def.subresources?.includes('scale')) throw new SyncFailure(`${def.groupResource} does not implement the scale subresource`)
    const o = this.#readObject(def.group, def.resource, def.scope === 'Namespaced' ? namespace : '', name)
    if (!o || o.metadata.uid !== uid) return undefined
    const path = (def.scale?.specReplicasPath ?? 'spec.replicas').split('.')
    let v: unknown = o
    for (const p of path) v = isObj(v) ? v[p] : undefined
    return { uid, replicas: typeof v === 'number' ? v : 0 }
  }

  /** upstream failSafe: no disruptions allowed and condition SyncFailed with the reason, the rest of the status kept. */
  async #failSafe(pdb: Obj, message: string, now: number): Promise<boolean> {
    this.log.warn({ poddisruptionbudget: `${pdb.metadata.namespace}/${pdb.metadata.name}`, err: message }, 'failed to sync the disruption budget')
    const status: Obj = isObj(pdb.status) ? { ...pdb.status } : {}
    status.disruptionsAllowed = 0
    status.conditions = Array.isArray(status.conditions) ? status.conditions.map((c: Obj) => ({ ...c })) : []
    setStatusCondition(status.conditions, { type: DISRUPTION_ALLOWED, status: 'False', reason: SYNC_FAILED, message, observedGeneration: status.observedGeneration ?? 0 }, rfc3339(now))
    pdb.status = status
    return this.#writeStatus(pdb, now)
  }

  /** Writes the budget's status (conditional on the version read); false when it must be tried again. */
  async #writeStatus(pdb: Obj, now: number): Promise<boolean> {
    const path = `${this.client.path(this.#pdbDef, pdb.metadata.namespace, pdb.metadata.name)}/status`
    const r = await this.client.request('PUT', path, pdb)
    if (r.status < 300 || r.status === 404) return true
    if (r.status === 409) return false
    // As upstream: a write refused for another reason is reported through the fail-safe status, once.
    if (pdb.status?.conditions?.some((c: Obj) => c.type === DISRUPTION_ALLOWED && c.reason === SYNC_FAILED)) {
      this.log.warn({ poddisruptionbudget: `${pdb.metadata.namespace}/${pdb.metadata.name}`, status: r.status, message: r.body.message }, 'could not write the disruption budget status')
      return false
    }
    const cur = this.#readObject('policy', 'poddisruptionbudgets', pdb.metadata.namespace, pdb.metadata.name)
    if (!cur) return true
    return this.#failSafe(cur, String(r.body.message ?? `status ${r.status}`), now)
  }
}

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)

/**
 * upstream buildDisruptedPodMap: the entries of status.disruptedPods whose pod still matches and is not yet being
 * deleted, while their timeout runs; and when the next one runs out (the budget is synced again then).
 */
function disruptedPodMap(pdb: Obj, pods: Array<[string, PodView]>, now: number): { disrupted: Record<string, string>; recheckAt: number | undefined } {
  const prior: Obj = isObj(pdb.status?.disruptedPods) ? pdb.status.disruptedPods : {}
  const disrupted: Record<string, string> = {}
  let recheckAt: number | undefined
  for (const [name, v] of pods) {
    if (v.deleting) continue
    const t = prior[name]
    if (typeof t !== 'string') continue
    const expires = Date.parse(t) + DISRUPTED_POD_TIMEOUT_MS
    // Not seen deleted in time: the eviction did not happen after all (upstream records event NotDeleted).
    if (expires < now) continue
    if (recheckAt === undefined || expires < recheckAt) recheckAt = expires
    disrupted[name] = t
  }
  return { disrupted, recheckAt }
}

/** Two disruptedPods maps hold the same entries (absent and empty are the same). */
function sameTimes(a: unknown, b: Record<string, string>): boolean {
  const x: Obj = isObj(a) ? a : {}
  const keys = Object.keys(x)
  if (keys.length !== Object.keys(b).length) return false
  for (const k of keys) if (x[k] !== b[k]) return false
  return true
}
