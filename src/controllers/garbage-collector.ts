// The garbage collector: deletes dependents whose owners are gone, and runs Foreground and Orphan deletions of owners.
import type { Logger } from 'pino'
import { objectKey, recordAttrs, recordObject, splitKey } from '../machinery/storage-format.js'
import type { Obj, ResolvedDefinition } from '../registry/define.js'
import type { InternalClient } from '../server/internal-client.js'
import { QueueController } from './queue.js'
import { CRD_GROUP, CRD_RESOURCE } from '../registry/custom.js'

interface Node { def: ResolvedDefinition; key: string; owners: string[] }

/** Records read per event-loop turn while the initial graph is built. */

export class GarbageCollector extends QueueController {
  /** uid → object (only objects that have owners, or that are owners being deleted) */
  #nodes = new Map<string, Node>()
  /** owner uid → dependent uids */
  #dependents = new Map<string, Set<string>>()
  /** keys are `dep:<uid>` (check a dependent's owners) or `own:<group>/<resource>/<ns>/<name>` (an owner being deleted) */

  constructor(client: InternalClient, log: Logger) {
    super(client, log, 'item', 500)
  }

  protected work(key: string): Promise<boolean> { return this.#work(key) }

  /** group/resource of the types whose events are observed. */
  #watched = new Set<string>()

  async start(): Promise<void> {
    const { registry, store } = this.client.pipeline
    const defs = registry.all.filter((d) => d.verbs.includes('watch'))
    for (const def of defs) await this.#listenTo(def)
    // Custom resource types come and go with their CRDs: each new one is observed (and scanned) once it is served.
    const crds = registry.byGroupResource(CRD_GROUP, CRD_RESOURCE)
    if (crds) this.unlisten.push(await this.client.listen(crds, () => { void this.#watchCustomTypes() }, { attrsOnly: true }))
    // The initial graph, built from the stored attributes only (no object is parsed), a slice per turn so that
    // the main thread stays responsive with millions of objects. Raw reads: no copy of each record is made (a copy
    // of every stored object passing through malloc leaves the heap grown by a good part of the data's size).
    for (const def of defs) {
      const done = await this.scanInSlices(store.shardFor(def.group, def.resource), `${def.group}/${def.resource}/`, (key, rec) => this.#observe(def, key, rec, false))
      if (!done) return
    }
    await this.#watchCustomTypes()
  }

  /** Attributes only (uid, owners, deletion, finalizers): the objects of every type need not travel to this thread. */
  async #listenTo(def: ResolvedDefinition): Promise<void> {
    const gr = `${def.group}/${def.resource}`
    if (this.#watched.has(gr)) return
    this.#watched.add(gr)
    this.unlisten.push(await this.client.listen(def, (events) => {
      // The definition as served now (a custom type's may have changed since).
      const cur = this.client.pipeline.registry.byGroupResource(def.group, def.resource) ?? def
      for (const [type, key, , rec] of events) this.#observe(cur, key, rec, type === 'DELETED')
    }, { attrsOnly: true }))
  }

  /** Observes the custom resource types served now that are not observed yet, and scans what they hold. */
  async #watchCustomTypes(): Promise<void> {
    const { registry, store } = this.client.pipeline
    for (const def of registry.all) {
      if (def.custom === undefined || this.#watched.has(`${def.group}/${def.resource}`) || this.stopped) continue
      await this.#listenTo(def)
      await this.scanInSlices(store.shardFor(def.group, def.resource), `${def.group}/${def.resource}/`, (key, rec) => this.#observe(def, key, rec, false))
    }
  }

  #observe(def: ResolvedDefinition, key: string, rec: Uint8Array, deleted: boolean): void {
    if (deleted) {
      // Gone: its dependents may now be orphans, and owners waiting in foreground deletion may be done.
      const uid = recordAttrs(rec).u
      if (!uid) return
      const n = this.#nodes.get(uid)
      this.#forget(uid)
      for (const dep of this.#dependents.get(uid) ?? []) this.queue.add(`dep:${dep}`)
      for (const o of n?.owners ?? []) { const on = this.#nodes.get(o); if (on) this.queue.add(`own:${on.key}`) }
      return
    }
    const a = recordAttrs(rec)
    if (!a.u) return
    const owners = a.o ?? []
    const prev = this.#nodes.get(a.u)
    if (prev) {
      this.#forget(a.u)
      // An owner no longer referenced may have been waiting for this dependent (foreground deletion).
      for (const o of prev.owners) {
        if (owners.includes(o)) continue
        const on = this.#nodes.get(o)
        if (on) this.queue.add(`own:${on.key}`)
      }
    }
    if (owners.length > 0 || this.#dependents.has(a.u) || a.d) {
      this.#nodes.set(a.u, { def, key, owners })
      for (const o of owners) {
        let s = this.#dependents.get(o)
        if (!s) { s = new Set(); this.#dependents.set(o, s) }
        s.add(a.u)
      }
    }
    if (owners.length > 0) this.queue.add(`dep:${a.u}`)
    if (a.d && a.z && (a.z.includes('foregroundDeletion') || a.z.includes('orphan'))) this.queue.add(`own:${key}`)
  }

  #forget(uid: string): void {
    const n = this.#nodes.get(uid)
    if (!n) return
    for (const o of n.owners) {
      const deps = this.#dependents.get(o)
      if (deps) { deps.delete(uid); if (deps.size === 0) this.#dependents.delete(o) }
    }
    this.#nodes.delete(uid)
  }

  #read(key: string): { def: ResolvedDefinition; o: Obj } | null {
    const { registry, store } = this.client.pipeline
    const k = splitKey(key)
    const def = registry.byGroupResource(k.group, k.resource)
    if (!def) return null
    const rec = store.getFresh(store.shardFor(k.group, k.resource), key)
    return rec ? { def, o: JSON.parse(recordObject(rec).toString('utf8')) as Obj } : null
  }

  /**
   * What an owner reference points at (upstream's classifyReferences): 'solid' (a live owner of that uid), 'waiting'
   * (that owner is in foreground deletion, waiting for its dependents), 'dangling' (no such owner), or 'invalid' (a
   * cluster-scoped dependent naming a namespaced owner: never resolvable, the dependent is left alone).
   */
  #classify(namespace: string, ref: Obj): 'solid' | 'waiting' | 'dangling' | 'invalid' {
    const { registry, store } = this.client.pipeline
    const [group, version] = String(ref.apiVersion).includes('/') ? String(ref.apiVersion).split('/') : ['', String(ref.apiVersion)]
    const kindDef = registry.byKind(group, version, String(ref.kind))
    if (!kindDef) return 'solid' // unknown kinds are never collected
    // A kind served over another's storage (events.orch.io/v1 Event) is looked up where its objects are stored.
    const def = kindDef.stored ?? kindDef
    if (def.scope === 'Namespaced' && namespace === '') return 'invalid'
    const rec = store.getFresh(store.shardFor(def.group, def.resource), objectKey(def.group, def.resource, def.scope === 'Namespaced' ? namespace : '', String(ref.name)))
    if (!rec) return 'dangling'
    const a = recordAttrs(rec)
    if (a.u !== ref.uid) return 'dangling'
    return a.d && a.z?.includes('foregroundDeletion') ? 'waiting' : 'solid'
  }

  async #work(item: string): Promise<boolean> {
    if (item.startsWith('dep:')) return this.#checkDependent(item.slice(4))
    return this.#finishOwner(item.slice(4))
  }

  /** upstream's attemptToDeleteItem for one dependent: keep it, drop references that no longer hold it, or delete it. */
  async #checkDependent(uid: string): Promise<boolean> {
    const n = this.#nodes.get(uid)
    if (!n) return true
    const cur = this.#read(n.key)
    if (!cur || cur.o.metadata.uid !== uid) return true
    const m = cur.o.metadata
    const refs: Obj[] = m.ownerReferences ?? []
    if (refs.length === 0) return true
    // Being deleted is a one-way trip: its dependents are looked at once it is gone.
    if (m.deletionTimestamp) return true
    const ns = m.namespace ?? ''
    const solid: Obj[] = []
    const dropped: Obj[] = []
    let waiting = false
    for (const r of refs) {
      const c = this.#classify(ns, r)
      if (c === 'invalid') {
        // As upstream (OwnerRefInvalidNamespace): the reference cannot resolve, and that is not retried.
        this.log.warn({ dependent: n.key, owner: { apiVersion: r.apiVersion, kind: r.kind, name: r.name, uid: r.uid }, reason: 'OwnerRefInvalidNamespace' }, 'a cluster-scoped object names a namespaced owner; it is left alone')
        return true
      }
      if (c === 'solid') solid.push(r)
      else dropped.push(r)
      if (c === 'waiting') waiting = true
    }
    if (solid.length > 0) {
      if (dropped.length === 0) return true
      // Another owner still holds it: only the references to owners that are gone or waiting on it are taken out.
      const gone = new Set(dropped.map((r) => String(r.uid)))
      m.ownerReferences = refs.filter((r) => !gone.has(String(r.uid)))
      const r = await this.client.request('PUT', this.client.path(cur.def, ns, m.name), cur.o)
      if (r.status === 409) return false
      return r.status < 300 || r.status === 404
    }
    // Foreground only for a dependent that has dependents of its own and an owner waiting on it; otherwise the
    // policy its own GC finalizer asks for, else Background.
    const fins: string[] = m.finalizers ?? []
    const policy = waiting && this.#dependents.has(uid) ? 'Foreground' : fins.includes('orphan') ? 'Orphan' : fins.includes('foregroundDeletion') ? 'Foreground' : 'Background'
    const r = await this.client.request('DELETE', this.client.path(cur.def, ns, m.name), {
      kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: policy, preconditions: { uid },
    })
    if (r.status === 409) return false
    if (r.status < 300) this.log.info({ dependent: n.key, policy }, 'deleted dependent')
    return r.status < 300 || r.status === 404
  }

  async #finishOwner(key: string): Promise<boolean> {
    const cur = this.#read(key)
    if (!cur || !cur.o.metadata.deletionTimestamp) return true
    const m = cur.o.metadata
    const fins: string[] = m.finalizers ?? []
    const deps = [...(this.#dependents.get(m.uid) ?? [])]
    if (fins.includes('orphan')) {
      for (const d of deps) {
        const dn = this.#nodes.get(d)
        if (!dn) continue
        const dc = this.#read(dn.key)
        if (!dc) continue
        dc.o.metadata.ownerReferences = (dc.o.metadata.ownerReferences ?? []).filter((r: Obj) => r.uid !== m.uid)
        if (dc.o.metadata.ownerReferences.length === 0) delete dc.o.metadata.ownerReferences
        const r = await this.client.request('PUT', this.client.path(dc.def, dc.o.metadata.namespace ?? '', dc.o.metadata.name), dc.o)
        if (r.status === 409) return false
      }
      return this.#dropFinalizer(cur, 'orphan')
    }
    if (fins.includes('foregroundDeletion')) {
      const live = deps.filter((d) => this.#nodes.has(d))
      for (const d of live) this.queue.add(`dep:${d}`)
      if (live.length > 0) return true
      return this.#dropFinalizer(cur, 'foregroundDeletion')
    }
    return true
  }

  async #dropFinalizer(cur: { def: ResolvedDefinition; o: Obj }, fin: string): Promise<boolean> {
    const m = cur.o.metadata
    m.finalizers = (m.finalizers ?? []).filter((f: string) => f !== fin)
    const r = await this.client.request('PUT', this.client.path(cur.def, m.namespace ?? '', m.name), cur.o)
    if (r.status === 409) return false
    return true
  }
}
