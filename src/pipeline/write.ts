// The write path of the storage stage: create and update (guaranteedUpdate with managedFields); deletes are in delete.ts.
import { ApiError, alreadyExists, badRequest, conflict, forbidden, internal, invalid, methodNotAllowed, notFound, fieldInvalid } from '../machinery/errors.js'
import { objectKey, recordAttrs, recordObject, recordRv, RV_MARKER } from '../machinery/storage-format.js'
import { LOOPBACK_USER } from '../machinery/node-refs.js'
import { treeOf, type Obj, type ResolvedDefinition } from '../registry/define.js'
import { RequestContext, type Response } from './context.js'
import { admissionLookups, admitPlugins } from '../admission/chain.js'
import { enabled as admissionPlugins } from '../admission/plugins.js'
import { namespacePolicy, type NamespacePolicy } from '../admission/pod-security.js'
import { admitCreate, admitUpdate, attrsOf, requireResourceVersion, rfc3339, toStoredJson, canonical, type UpdateTarget } from './admission.js'
import { attrsOfSplit, joinStored, lend, splitFor, takeBack, type StatusSplit } from './status-split.js'
import { decodeObject } from './decode.js'
import { updateManagedFields, managerOrUserAgent } from '../machinery/apply/apply.js'
import { FieldSet, makePath } from '../machinery/apply/fieldpath.js'
import { store, registry, gr, shardOfDef, keyFor, objectResponse, withRv, isDryRun, parseRv, parseStored } from './dispatch.js'
import type { ShardReply } from '../../actors/shard/messages.js'
import { cloneJson, sameJsonText } from '../machinery/json-tree.js'
import { allocates, removalOf, settleAllocation } from './service-allocation.js'

const MAX_CREATE_ATTEMPTS = 8
export const MAX_UPDATE_ATTEMPTS = 16

// ---- create ----

/**
 * Namespace lifecycle states by name, each with its PodSecurity policy (null: no pod-security labels) and the count of
 * namespace writes it was read at: while the count (moved by the shard before it acknowledges any namespace write)
 * stays, the entry stands without a read.
 */
interface NamespaceEntry { stamp: bigint; state: 'missing' | 'terminating' | 'active'; security: NamespacePolicy | null }
const namespaceStates = new Map<string, NamespaceEntry>()
const NAMESPACE_STATES_LIMIT = 10_000

function namespaceEntry(ns: string): NamespaceEntry {
  const stamp = store.namespaceWrites()
  const cached = namespaceStates.get(ns)
  if (cached && cached.stamp === stamp) return cached
  const def = registry.byGroupResource('', 'namespaces')!
  // A snapshot taken after the count was read holds every namespace write it counts.
  const rec = store.getNewest(shardOfDef(def), objectKey('', 'namespaces', '', ns))
  const attrs = rec ? recordAttrs(rec) : undefined
  const state = !attrs ? 'missing' : attrs.d ? 'terminating' : 'active'
  const entry: NamespaceEntry = { stamp, state, security: attrs ? namespacePolicy(attrs.l as Record<string, unknown> | undefined) : null }
  if (namespaceStates.size >= NAMESPACE_STATES_LIMIT) namespaceStates.clear()
  namespaceStates.set(ns, entry)
  return entry
}

function namespaceState(ns: string): 'missing' | 'terminating' | 'active' {
  return namespaceEntry(ns).state
}

/** The PodSecurity policy of a namespace from the same cache (null: none, the common case; no read, no allocation). */
export function namespaceSecurity(ns: string): NamespacePolicy | null {
  return namespaceEntry(ns).security
}

/**
 * Whether the write goes to its shard at the end of this callback (the current microtask checkpoint) rather than after
 * the loop turn's poll phase with the turn's other writes: for a request that waited in an APF queue. Its level is
 * contended and its seats are held until the shard answers, so the write does not wait for the rest of the turn.
 * apf-fairness on 4 seats, 6 alternating pairs: the elephant's creates/s higher in all 6 (medians 3,287 vs 3,052), the
 * mouse's p99 beside it lower in 5 (4.5 vs 5.2 ms). Requests dispatched together in one actor message still reach this
 * point in one callback and travel together (the ninth session's timeline in bench/RESULTS.md). Writes that took a free
 * seat at once keep the turn's batching: sending every write at once cost 30 % of create throughput under load
 * (bench/RESULTS.md, seventh session).
 */
export function sendAtOnce(ctx: RequestContext): boolean {
  return ctx.flowTicket !== 0
}

export function checkNamespace(def: ResolvedDefinition, ns: string, name: string): void {
  if (def.scope !== 'Namespaced') return
  const st = namespaceState(ns)
  if (st === 'missing') throw notFound({ group: '', resource: 'namespaces' }, ns)
  if (st === 'terminating') {
    const err = forbidden(gr(def), name, `unable to create new content in namespace ${ns} because it is being terminated`)
    // Controllers drop these quietly by this cause (apierrors.HasStatusCause(err, NamespaceTerminatingCause)).
    err.details!.causes = [{ reason: 'NamespaceTerminating', message: `namespace ${ns} is being terminated`, field: 'metadata.namespace' }]
    throw err
  }
}


/** NamespaceAutoProvision: creates the request's namespace (one made meanwhile is fine); a failure refuses the write. */
async function provisionNamespace(ctx: RequestContext, def: ResolvedDefinition, name: string): Promise<void> {
  const ns = ctx.info.namespace
  const nsDef = registry.byGroupResource('', 'namespaces')!
  const info = {
    isResourceRequest: true, path: '/api/v1/namespaces', verb: 'create', apiPrefix: 'api' as const, group: '', version: 'v1',
    namespace: '', resource: 'namespaces', subresource: '', name: '', parts: ['namespaces'],
  }
  const sub = new RequestContext('POST', info.path, new URLSearchParams(), { 'content-type': 'application/json', 'user-agent': 'orch-apiserver' }, info, ctx.log)
  sub.user = LOOPBACK_USER
  sub.body = Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }))
  try {
    await create(sub, nsDef)
  } catch (err) {
    if (err instanceof ApiError && err.code === 409) return
    throw forbidden(gr(def), name, err instanceof Error ? err.message : String(err))
  }
}

/**
 * `tracked`: the body's managedFields are already computed (server-side apply creating the object); `stored`: the body
 * is in the stored shape already (such an apply through a type served over another's storage).
 */
export async function create(ctx: RequestContext, def: ResolvedDefinition, opts: { tracked?: boolean; stored?: boolean } = {}): Promise<Response> {
  if (ctx.info.name !== '') throw methodNotAllowed()
  let body: Obj | undefined = decodeObject(ctx, def, opts.stored === true)
  const dry = isDryRun(ctx)
  const now = Date.now()
  const generated = !body.metadata.name && !!body.metadata.generateName
  // NamespaceAutoProvision (before NamespaceLifecycle, as upstream orders them): the missing namespace is made, but
  // not for a dry run.
  if (admissionPlugins.namespaceAutoProvision && !dry && def.scope === 'Namespaced' && namespaceState(ctx.info.namespace) === 'missing') await provisionNamespace(ctx, def, String((generated ? body.metadata.generateName : body.metadata.name) ?? ''))
  // As upstream's NamespaceLifecycle admission: before validation, and before a generated name exists.
  if (admissionPlugins.namespaceLifecycle) checkNamespace(def, ctx.info.namespace, String((generated ? body.metadata.generateName : body.metadata.name) ?? ''))
  // What admission must wait for (a pod's default ServiceAccount about to be made): nothing, mostly.
  const lookups = admissionLookups(ctx, def, body)
  if (lookups !== undefined) await lookups
  for (let attempt = 0; ; attempt++) {
    // Only a generated name is tried again (with a fresh copy of the body): otherwise nothing keeps the body.
    let obj: Obj | undefined = attempt === 0 ? body! : structuredClone(body!)
    if (!generated) body = undefined
    if (generated) delete obj.metadata.name
    // What a service took (admitCreate) goes back unless the object is stored.
    try {
      const mutated = admitCreate(ctx, def, obj, now, opts.tracked === true ? undefined : (o) => { o.metadata.managedFields = trackFields(ctx, def, undefined, o, 'main', now).metadata.managedFields })
      if (mutated) await mutated
      const admitted = admitPlugins(ctx, def, 'CREATE', obj)
      if (admitted) await admitted
      const name = obj.metadata.name as string
      const a = sendCreate(ctx, def, obj, name, dry)
      obj = undefined
      if (!('sent' in a)) { settleAllocation(ctx, false); return a }
      const t0 = performance.now()
      const r = await a.sent
      storageTime(ctx, t0)
      settleAllocation(ctx, r.ok)
      if (r.ok) return objectResponse(ctx, 201, withRv(a.json, r.rv))
      if (r.reason === 'exists') {
        if (generated && attempt < MAX_CREATE_ATTEMPTS) continue
        throw alreadyExists(gr(def), name, generated)
      }
      throw internal(r.message ?? r.reason)
    } catch (err) {
      settleAllocation(ctx, false)
      throw err
    }
  }
}

/** A write on its way to the shard, and the text it answers with: the caller holds nothing else across the put. */
type Attempt = Response | { sent: Promise<ShardReply>; json: string }

/** Records a write's round trip to the shard, begun at `t0`, in the access line as `dispatch.storage`. */
function storageTime(ctx: RequestContext, t0: number): void {
  ctx.timings['dispatch.storage'] = (ctx.timings['dispatch.storage'] ?? 0) + performance.now() - t0
}

/** Prints the new object (its managedFields set) and sends it (or answers a dry run); the object dies with this call. */
function sendCreate(ctx: RequestContext, def: ResolvedDefinition, obj: Obj, name: string, dry: boolean): Attempt {
  const json = toStoredJson(obj)
  if (dry) {
    // As upstream's dry-run storage: a dry-run create of a name that exists fails as the real one would.
    if (store.getFreshTransient(shardOfDef(def), keyFor(def, ctx.info.namespace, name))) throw alreadyExists(gr(def), name)
    return objectResponse(ctx, 201, withRv(json, 0).replace('"resourceVersion":"0",', ''))
  }
  return { sent: store.put(shardOfDef(def), keyFor(def, ctx.info.namespace, name), 0, JSON.stringify(attrsOf(def, obj)), json, sendAtOnce(ctx)), json }
}

// ---- update ----


/** Whether an object whose finalizers are gone and whose deletion started must now be removed. */
function readyToRemove(o: Obj, now: number): boolean {
  const m = o.metadata
  if (!m.deletionTimestamp) return false
  if (Array.isArray(m.finalizers) && m.finalizers.length > 0) return false
  if (Array.isArray(o.spec?.finalizers) && o.spec.finalizers.length > 0 && o.kind === 'Namespace') return false
  if (m.deletionGracePeriodSeconds > 0 && Date.parse(m.deletionTimestamp) > now) return false
  return true
}

/** The manager of a non-apply write: `fieldManager`, else derived from the User-Agent (checked as upstream). */
export function managerOf(ctx: RequestContext): string {
  const fm = ctx.query.get('fieldManager')
  if (fm !== null && fm !== '') {
    if (fm.length > 128 || /[^\x20-\x7e]/.test(fm)) {
      throw invalid('PatchOptions.meta.orch.io', 'meta.orch.io', 'PatchOptions', '', [fieldInvalid('fieldManager', fm, 'must consist of printable characters and be at most 128 characters long')])
    }
    return fm
  }
  return managerOrUserAgent(undefined, ctx.headers['user-agent'])
}

const RESET_SPEC = FieldSet.of(makePath('spec'))
const RESET_STATUS = FieldSet.of(makePath('status'))
const RESET_APPROVAL = FieldSet.of(makePath('spec'), makePath('status', 'certificate'))

/**
 * Fields reset by an endpoint: the main resource never owns status, the status endpoint never owns spec (sets built
 * once: every tracked write asks).
 */
export function resetFields(def: ResolvedDefinition, target: UpdateTarget | 'scale'): FieldSet | undefined {
  if (!def.subresources?.includes('status')) return undefined
  // certificatesigningrequests/approval owns status.conditions only (upstream's approval strategy reset fields).
  if (target === 'approval') return RESET_APPROVAL
  if (target !== 'status') return RESET_STATUS
  const extra = def.status?.resetPaths
  if (extra === undefined) return RESET_SPEC
  let set = statusResets.get(def)
  if (set === undefined) {
    set = FieldSet.of(makePath('spec'), ...extra.map((p) => makePath(...p)))
    statusResets.set(def, set)
  }
  return set
}
const statusResets = new WeakMap<ResolvedDefinition, FieldSet>()

/** managedFields of a non-apply write (create, update, patch, scale): changed fields move to the writer. */
export function trackFields(ctx: RequestContext, def: ResolvedDefinition, old: Obj | undefined, o: Obj, target: UpdateTarget | 'scale', now: number): Obj {
  return trackFieldsBy(managerOf(ctx), def, old, o, target, now)
}

/** trackFields for a write the server makes on its own account, under the manager it names. */
export function trackFieldsBy(manager: string, def: ResolvedDefinition, old: Obj | undefined, o: Obj, target: UpdateTarget | 'scale', now: number): Obj {
  return updateManagedFields(old, o, manager, 'Update', def.apiVersion, rfc3339(now), treeOf(def),
    { subresource: target === 'main' ? undefined : target, ignoredFields: resetFields(def, target) })
}

/**
 * What a write makes of the stored object. It gets a copy of the stored object and its resourceVersion; returns the
 * new object, and whether its managedFields are already set (apply) or must be tracked as an Update.
 */
export interface Mutated { object: Obj; tracked: boolean }
/** A mutation is synchronous except where a conversion webhook takes part (a patch of a webhook-converted version). */
export type Mutation = (old: Obj, curRv: number) => Mutated | Promise<Mutated>

/**
 * One update attempt from the stored record: mutate a copy of the stored object, admit it, track its fields, print it
 * and send it. Answers (unchanged object, dry run) come back as a Response; a Promise only when an admission plugin
 * must wait. The parsed objects die with this call: across the put the request holds only the reply's promise and
 * the printed text it answers with, so that under load its trees are not copied by a scavenge and promoted. (Answering
 * from a record carried by the reply instead, so that not even the text stays, made creates' p99 ~30 % worse: a
 * reply then carries a second copy of the object wherever no watch event takes the same buffer.)
 */
function attemptUpdate(ctx: RequestContext, def: ResolvedDefinition, target: UpdateTarget, key: string, rec: Buffer, curRv: number, mutate: Mutation, copyOld: boolean, dry: boolean, plugins: boolean, statusOnly: boolean): Attempt | Promise<Attempt> {
  // A write of status alone works on the stored object without the members the status endpoint keeps (status-split.ts).
  const split = statusOnly && target === 'status' ? splitFor(def, recordObject(rec)) : undefined
  const old = split !== undefined ? split.head : parseStored(rec)
  const m0 = mutate(copyOld ? cloneJson(old) : old, curRv)
  if (m0 instanceof Promise) return m0.then((m) => admitAttempt(ctx, def, target, key, rec, curRv, old, m, dry, plugins, split))
  return admitAttempt(ctx, def, target, key, rec, curRv, old, m0, dry, plugins, split)
}

function admitAttempt(ctx: RequestContext, def: ResolvedDefinition, target: UpdateTarget, key: string, rec: Buffer, curRv: number, old: Obj, m: Mutated, dry: boolean, plugins: boolean, split: StatusSplit | undefined): Attempt | Promise<Attempt> {
  const now = Date.now()
  const mutated = admitUpdate(ctx, def, m.object, old, target)
  if (mutated) return mutated.then(() => validateUpdate(ctx, def, target, key, rec, curRv, old, m, dry, now, plugins, split))
  return validateUpdate(ctx, def, target, key, rec, curRv, old, m, dry, now, plugins, split)
}

/** The validating plugins of an update attempt, then its send. A split's kept members are lent to the plugins. */
function validateUpdate(ctx: RequestContext, def: ResolvedDefinition, target: UpdateTarget, key: string, rec: Buffer, curRv: number, old: Obj, m: Mutated, dry: boolean, now: number, plugins: boolean, split: StatusSplit | undefined): Attempt | Promise<Attempt> {
  if (!plugins) return sendUpdate(ctx, def, target, key, rec, curRv, old, m, dry, now, split)
  const admitted = split === undefined ? admitPlugins(ctx, def, 'UPDATE', m.object, old) : admitPlugins(ctx, def, 'UPDATE', lend(m.object, split), lend(old, split))
  const send = (): Attempt => {
    if (split !== undefined) { takeBack(m.object, split); takeBack(old, split) }
    return sendUpdate(ctx, def, target, key, rec, curRv, old, m, dry, now, split)
  }
  return admitted ? admitted.then(send) : send()
}

function sendUpdate(ctx: RequestContext, def: ResolvedDefinition, target: UpdateTarget, key: string, rec: Buffer, curRv: number, old: Obj, m: Mutated, dry: boolean, now: number, split: StatusSplit | undefined): Attempt {
  const o = m.tracked ? m.object : trackFields(ctx, def, old, m.object, target, now)
  o.metadata.resourceVersion = RV_MARKER
  const print = (c: Obj): string => split !== undefined ? joinStored(c, split) : JSON.stringify(c)
  const canon = canonical(o)
  const json = print(canon)
  old.metadata.resourceVersion = RV_MARKER
  const oldCanon = canonical(old)
  // Unchanged when the stored form would be the same text; the trees answer that without printing the old one.
  if (sameJsonText(canon, oldCanon) ?? json === print(oldCanon)) return objectResponse(ctx, 200, recordObject(rec))
  if (dry) return objectResponse(ctx, 200, withRv(json, curRv))
  const attrs = JSON.stringify(split !== undefined ? attrsOfSplit(def, o, split, () => recordAttrs(rec)) : attrsOf(def, o))
  const shard = shardOfDef(def)
  if (readyToRemove(o, now)) {
    // A service removed by its last finalizer gives back what it held (upstream's AfterDelete of an update).
    if (allocates(def)) ctx.allocation = removalOf(ctx.allocation, old)
    return { sent: store.remove(shard, key, curRv, attrs, json, sendAtOnce(ctx)), json }
  }
  return { sent: store.put(shard, key, curRv, attrs, json, sendAtOnce(ctx)), json }
}

/**
 * The read-modify-write of update and patch (upstream GuaranteedUpdate): read the newest object, build the new one,
 * admit it, write it conditionally on the version read; retried on races unless the client pinned a version.
 * `plugins: false`: the write of a handler that ran the request's admission itself (pods/eviction's writes, as
 * upstream's rest.ValidateAllObjectFunc), so the admission plugins do not see it a second time as an update.
 */
export async function guaranteedUpdate(ctx: RequestContext, def: ResolvedDefinition, target: UpdateTarget, name: string, clientRv: number, mutate: Mutation, opts: { leavesOldAlone?: boolean; plugins?: boolean; statusOnly?: boolean } = {}): Promise<Response> {
  // A mutation that does not change the stored object it is handed (a whole-object update never looks at it; a patch
  // works on its own copy) is handed it without a copy: the admission and field tracking after it need it unchanged.
  const copyOld = opts.leavesOldAlone !== true
  const dry = isDryRun(ctx)
  const shard = shardOfDef(def)
  const key = keyFor(def, ctx.info.namespace, name)
  for (let attempt = 0; attempt < MAX_UPDATE_ATTEMPTS; attempt++) {
    // A copy in the shared slab, not a buffer of its own: it lives as long as this request (slabs are never reused).
    const rec = store.getFreshTransient(shard, key)
    if (!rec) throw notFound(gr(def), name)
    const curRv = recordRv(rec)
    if (clientRv !== 0 && clientRv !== curRv) throw conflict(gr(def), name)
    // What a service update took (admitUpdate) goes back unless the write is stored; what it frees goes back once it is.
    try {
      const a0 = attemptUpdate(ctx, def, target, key, rec, curRv, mutate, copyOld, dry, opts.plugins !== false, opts.statusOnly === true)
      const a = a0 instanceof Promise ? await a0 : a0
      if (!('sent' in a)) { settleAllocation(ctx, false); return a }
      const t0 = performance.now()
      const r = await a.sent
      storageTime(ctx, t0)
      settleAllocation(ctx, r.ok)
      if (r.ok) return objectResponse(ctx, 200, withRv(a.json, r.rv))
      if (r.reason === 'notfound') throw notFound(gr(def), name)
      if (r.reason === 'conflict') {
        if (clientRv !== 0) throw conflict(gr(def), name)
        continue
      }
      throw internal(r.message ?? r.reason)
    } catch (err) {
      settleAllocation(ctx, false)
      throw err
    }
  }
  throw conflict(gr(def), name)
}

export async function update(ctx: RequestContext, def: ResolvedDefinition, target: UpdateTarget): Promise<Response> {
  const o0 = decodeObject(ctx, def)
  const name = ctx.info.name
  // As upstream's checkName: the body names the object of the URL (an empty or missing name does not).
  if ((o0.metadata.name ?? '') !== name) throw badRequest(`the name of the object (${o0.metadata.name ?? ''}) does not match the name on the URL (${name})`)
  requireResourceVersion(def, o0)
  const clientRv = o0.metadata.resourceVersion ? parseRv(String(o0.metadata.resourceVersion), 'metadata.resourceVersion') : 0
  // A version from the client means one attempt (guaranteedUpdate answers a race with 409 instead of retrying): the
  // decoded body is used as it is, and not kept while the put is in flight. Retries without one each get a fresh copy.
  return guaranteedUpdate(ctx, def, target, name, clientRv, clientRv !== 0 ? once(o0) : copies(o0), { leavesOldAlone: true })
}

/** A mutation handing over `o` itself, once: it keeps no reference after that. */
function once(o: Obj): Mutation {
  let object: Obj | undefined = o
  return () => {
    if (object === undefined) throw internal('an update with a resourceVersion was attempted twice')
    const r = { object, tracked: false }
    object = undefined
    return r
  }
}

/** A mutation handing over a fresh copy of `o` on every attempt. */
function copies(o: Obj): Mutation {
  return () => ({ object: cloneJson(o), tracked: false })
}

// ---- status written by the server itself ----

/** The field manager of writes the server makes itself (upstream's loopback client is `kube-apiserver`). */
export const SERVER_MANAGER = 'orch-apiserver'

/**
 * Stores `next`, a new status of the stored object `old`, if the object is still at `rv`, as an update of the status
 * sub-resource by the server's own manager (admission plugins that keep status, such as ResourceQuota's usage).
 * Resolves true when stored, false when the object changed or went away meanwhile.
 */
export async function writeStatusDirect(group: string, resource: string, old: Obj, next: Obj, rv: number): Promise<boolean> {
  const def = registry.byGroupResource(group, resource)
  if (def === undefined) return false
  const now = Date.now()
  const o = updateManagedFields(old, next, SERVER_MANAGER, 'Update', def.apiVersion, rfc3339(now), treeOf(def),
    { subresource: 'status', ignoredFields: resetFields(def, 'status') })
  const ns = String(o.metadata?.namespace ?? '')
  const name = String(o.metadata?.name ?? '')
  const r = await store.put(shardOfDef(def), keyFor(def, ns, name), rv, JSON.stringify(attrsOf(def, o)), toStoredJson(o))
  if (r.ok) return true
  if (r.reason === 'conflict' || r.reason === 'notfound') return false
  throw internal(r.message ?? r.reason)
}
