// The CustomResourceDefinition controller: upstream's naming, establishing and finalizer controllers in one queue.
// Names are accepted unless another CRD of the group holds them (NamesAccepted, status.acceptedNames); a CRD whose
// names were accepted is Established (its types are then served); a CRD being deleted has its custom resources
// deleted, then its cleanup finalizer removed (Terminating).
import type { Logger } from 'pino'
import { objectKey, recordObject, typePrefix } from '../machinery/storage-format.js'
import type { Obj, ResolvedDefinition } from '../registry/define.js'
import type { InternalClient } from '../server/internal-client.js'
import { CLEANUP_FINALIZER, CRD_GROUP, CRD_RESOURCE, conditionOf, conditionTrue, setCondition } from '../registry/custom.js'
import { QueueController } from './queue.js'
import { nonStructuralMessage } from '../registry/crd-schema.js'

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)

function nowText(): string { return new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z') }

interface Names { plural: string; singular: string; shortNames: string[]; kind: string; listKind: string; categories?: string[] }

function namesOf(n: unknown): Names {
  const o = isObj(n) ? n : {}
  const s = (v: unknown) => (typeof v === 'string' ? v : '')
  return {
    plural: s(o.plural), singular: s(o.singular), kind: s(o.kind), listKind: s(o.listKind),
    shortNames: Array.isArray(o.shortNames) ? o.shortNames.filter((x: unknown): x is string => typeof x === 'string') : [],
    categories: Array.isArray(o.categories) ? o.categories.filter((x: unknown): x is string => typeof x === 'string') : undefined,
  }
}

/** upstream's equalToAcceptedOrFresh: a name is fine when it is already ours, or nobody else in the group uses it. */
function inUse(requested: string, accepted: string, used: Set<string>): string | undefined {
  if (requested === accepted || !used.has(requested)) return undefined
  return `${JSON.stringify(requested)} is already in use`
}

type Condition = { type: string; status: string; reason: string; message: string }

/**
 * upstream's calculateNamesAndConditions: the names to accept, the NamesAccepted condition, and the Established one
 * (left as it is once True; Installing when the names were just accepted).
 */
export function calculateNames(crd: Obj, others: Obj[]): { names: Names; namesAccepted: Condition; established: Condition } {
  const requested = namesOf(crd.spec?.names)
  const accepted = namesOf(crd.status?.acceptedNames)
  const next: Names = { ...accepted, shortNames: [...accepted.shortNames] }
  const resources = new Set<string>()
  const kinds = new Set<string>()
  for (const o of others) {
    const n = namesOf(o.status?.acceptedNames)
    for (const x of [n.plural, n.singular, ...n.shortNames]) if (x !== '') resources.add(x)
    for (const x of [n.kind, n.listKind]) if (x !== '') kinds.add(x)
  }
  let cond: Condition | undefined
  const fail = (reason: string, message: string) => { cond = { type: 'NamesAccepted', status: 'False', reason, message } }
  let e = inUse(requested.plural, accepted.plural, resources)
  if (e) fail('PluralConflict', e); else next.plural = requested.plural
  e = inUse(requested.singular, accepted.singular, resources)
  if (e) fail('SingularConflict', e); else next.singular = requested.singular
  if (JSON.stringify(requested.shortNames) !== JSON.stringify(accepted.shortNames)) {
    const mine = new Set(accepted.shortNames)
    const errs: string[] = []
    for (const s of requested.shortNames) {
      if (mine.has(s)) continue
      const x = inUse(s, '', resources)
      if (x) errs.push(x)
    }
    if (errs.length > 0) fail('ShortNamesConflict', errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`)
    else next.shortNames = requested.shortNames
  }
  e = inUse(requested.kind, accepted.kind, kinds)
  if (e) fail('KindConflict', e); else next.kind = requested.kind
  e = inUse(requested.listKind, accepted.listKind, kinds)
  if (e) fail('ListKindConflict', e); else next.listKind = requested.listKind
  next.categories = requested.categories
  const namesAccepted: Condition = cond ?? { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' }
  const old = conditionOf(crd, 'Established')
  let established: Condition = old ? { type: 'Established', status: String(old.status), reason: String(old.reason ?? ''), message: String(old.message ?? '') } : { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' }
  if (established.status !== 'True' && namesAccepted.status === 'True') {
    established = { type: 'Established', status: 'False', reason: 'Installing', message: 'the initial names have been accepted' }
  }
  return { names: next, namesAccepted, established }
}

/** status.acceptedNames as upstream serializes CustomResourceDefinitionNames (empty lists and strings omitted). */
function acceptedNamesJson(n: Names): Obj {
  const out: Obj = { plural: n.plural }
  if (n.singular !== '') out.singular = n.singular
  if (n.shortNames.length > 0) out.shortNames = n.shortNames
  out.kind = n.kind
  if (n.listKind !== '') out.listKind = n.listKind
  if (n.categories && n.categories.length > 0) out.categories = n.categories
  return out
}

export class CrdController extends QueueController {
  constructor(client: InternalClient, log: Logger) {
    super(client, log, 'customresourcedefinition', 1000)
  }

  protected work(key: string): Promise<boolean> { return this.#sync(key) }

  #def(): ResolvedDefinition { return this.client.pipeline.registry.byGroupResource(CRD_GROUP, CRD_RESOURCE)! }

  async start(): Promise<void> {
    const { store } = this.client.pipeline
    this.unlisten.push(await this.client.listen(this.#def(), (events) => {
      for (const [type, key] of events) {
        const name = key.slice(key.lastIndexOf('/') + 1)
        this.queue.add(name)
        // Names freed by a deletion (or changed) may be what another CRD of the group waits for.
        if (type !== 'ADDED') for (const o of this.#all()) if (o.metadata?.name !== name && conditionOf(o, 'NamesAccepted')?.status === 'False') this.queue.add(String(o.metadata.name))
      }
    }))
    const shard = store.shardFor(CRD_GROUP, CRD_RESOURCE)
    store.snapshot(shard)
    for (const { key } of store.range(shard, typePrefix(CRD_GROUP, CRD_RESOURCE))) this.queue.add(key.slice(key.lastIndexOf('/') + 1))
  }

  #all(): Obj[] {
    const { store } = this.client.pipeline
    const shard = store.shardFor(CRD_GROUP, CRD_RESOURCE)
    store.snapshot(shard)
    const out: Obj[] = []
    for (const { value } of store.range(shard, typePrefix(CRD_GROUP, CRD_RESOURCE))) out.push(JSON.parse(recordObject(value).toString('utf8')) as Obj)
    return out
  }

  #read(name: string): Obj | undefined {
    const { store } = this.client.pipeline
    const rec = store.getFresh(store.shardFor(CRD_GROUP, CRD_RESOURCE), objectKey(CRD_GROUP, CRD_RESOURCE, '', name))
    return rec ? JSON.parse(recordObject(rec).toString('utf8')) as Obj : undefined
  }

  async #writeStatus(crd: Obj): Promise<'ok' | 'retry' | 'gone'> {
    const r = await this.client.request('PUT', `${this.client.path(this.#def(), '', crd.metadata.name)}/status`, crd)
    if (r.status === 404) return 'gone'
    if (r.status === 409) return 'retry'
    if (r.status >= 300) { this.log.warn({ crd: crd.metadata.name, status: r.status, message: r.body.message }, 'could not write the CRD status'); return 'retry' }
    return 'ok'
  }

  /** `turn`: how many status writes this sync already made (a status that does not settle is retried later, not looped on). */
  async #sync(name: string, turn = 0): Promise<boolean> {
    if (turn > 3) return false
    const crd = this.#read(name)
    if (!crd) return true
    if (crd.metadata?.deletionTimestamp) return this.#finalize(crd)
    const group = crd.spec?.group
    const others = this.#all().filter((o) => o.metadata?.name !== name && o.spec?.group === group)
    const { names, namesAccepted, established } = calculateNames(crd, others)
    if (!isObj(crd.status)) crd.status = {}
    const now = nowText()
    const before = JSON.stringify(crd.status)
    crd.status.acceptedNames = acceptedNamesJson(names)
    setCondition(crd.status, namesAccepted, now)
    setCondition(crd.status, established, now)
    // upstream's nonstructuralschema controller: violations of a schema stored before they were refused.
    const violations = nonStructuralMessage(crd.spec)
    if (violations !== undefined) setCondition(crd.status, { type: 'NonStructuralSchema', status: 'True', reason: 'Violations', message: violations }, now)
    else if (Array.isArray(crd.status.conditions)) crd.status.conditions = crd.status.conditions.filter((c: Obj) => !isObj(c) || c.type !== 'NonStructuralSchema')
    if (JSON.stringify(crd.status) !== before) {
      const w = await this.#writeStatus(crd)
      if (w !== 'ok') return w === 'gone'
      // The establishing controller's turn, on what was just written.
      return this.#sync(name, turn + 1)
    }
    if (conditionTrue(crd, 'NamesAccepted') && !conditionTrue(crd, 'Established')) {
      setCondition(crd.status, { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }, now)
      const w = await this.#writeStatus(crd)
      if (w !== 'ok') return w === 'gone'
      this.log.info({ crd: name }, 'custom resource definition established')
    }
    return true
  }

  /** upstream's finalizer controller: delete every custom resource of the CRD, then drop the cleanup finalizer. */
  async #finalize(crd: Obj): Promise<boolean> {
    const name = String(crd.metadata.name)
    const fins: string[] = Array.isArray(crd.metadata.finalizers) ? crd.metadata.finalizers : []
    if (!fins.includes(CLEANUP_FINALIZER)) return true
    if (!isObj(crd.status)) crd.status = {}
    const now = nowText()
    if (setCondition(crd.status, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' }, now)) {
      const w = await this.#writeStatus(crd)
      if (w !== 'ok') return w === 'gone'
      const cur = this.#read(name)
      return cur ? this.#finalize(cur) : true
    }
    let result: Condition = { type: 'Terminating', status: 'False', reason: 'InstanceDeletionCompleted', message: 'removed all instances' }
    // Nothing was served when it never was Established: nothing to delete.
    if (conditionTrue(crd, 'Established')) {
      const left = await this.#deleteInstances(crd)
      if (left !== undefined) result = left
    }
    if (result.status === 'True') {
      if (setCondition(crd.status, result, now)) await this.#writeStatus(crd)
      return false
    }
    setCondition(crd.status, result, now)
    const w = await this.#writeStatus(crd)
    if (w === 'gone') return true
    if (w === 'retry') return false
    const cur = this.#read(name)
    if (!cur) return true
    cur.metadata.finalizers = (cur.metadata.finalizers ?? []).filter((f: string) => f !== CLEANUP_FINALIZER)
    const r = await this.client.request('PUT', this.client.path(this.#def(), '', name), cur)
    if (r.status === 409) return false
    if (r.status >= 300 && r.status !== 404) { this.log.warn({ crd: name, status: r.status, message: r.body.message }, 'could not remove the cleanup finalizer'); return false }
    this.log.info({ crd: name }, 'custom resource definition cleaned up')
    return true
  }

  /** Deletes the custom resources; a Terminating condition when some are left (to be retried), undefined when none are. */
  async #deleteInstances(crd: Obj): Promise<Condition | undefined> {
    const { registry, store } = this.client.pipeline
    const group = String(crd.spec?.group ?? '')
    const plural = String(crd.status?.acceptedNames?.plural ?? crd.spec?.names?.plural ?? '')
    const def = registry.byGroupResource(group, plural)
    if (!def || def.custom === undefined) return undefined
    const shard = store.shardFor(group, plural)
    const namespaces = new Set<string>()
    store.snapshot(shard)
    for (const { key } of store.range(shard, typePrefix(group, plural))) namespaces.add(key.split('/')[2])
    const failures: string[] = []
    for (const ns of namespaces) {
      const r = await this.client.request('DELETE', this.client.path(def, ns), { kind: 'DeleteOptions', apiVersion: 'v1' })
      if (r.status >= 300 && r.status !== 404) failures.push(String(r.body.message ?? r.status))
    }
    if (failures.length > 0) return { type: 'Terminating', status: 'True', reason: 'InstanceDeletionFailed', message: `could not issue all deletes: ${failures.join(', ')}` }
    store.snapshot(shard)
    for (const _ of store.range(shard, typePrefix(group, plural))) {
      return { type: 'Terminating', status: 'True', reason: 'InstanceDeletionCheck', message: 'could not confirm zero CustomResources remaining: timed out waiting for the condition' }
    }
    return undefined
  }
}
