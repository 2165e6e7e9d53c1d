// The write path of the storage stage: create, update (guaranteedUpdate with managedFields), delete and deletecollection.
import { ApiError, alreadyExists, badRequest, conflict, forbidden, internal, invalid, methodNotAllowed, notFound, preconditionConflict, fieldNotSupported, fieldInvalid } from '../machinery/errors.js'
import { objectKey, typePrefix, recordAttrs, recordObject, recordRv, RV_MARKER } from '../machinery/storage-format.js'
import type { Obj, ResolvedDefinition } from '../registry/define.js'
import type { RequestContext, Response } from './context.js'
import { admitPlugins } from '../admission/chain.js'
import { admitCreate, admitUpdate, attrsOf, decodeBody, decodeObject, requireResourceVersion, rfc3339, toStoredJson, canonical, type UpdateTarget } from './admission.js'
import { updateManagedFields, managerOrUserAgent } from '../machinery/apply/apply.js'
import { FieldSet, makePath } from '../machinery/apply/fieldpath.js'
import { typeTree } from '../machinery/patch/schema-walk.js'
import { loadDefinitions, unmarshalText } from '../registry/schema.js'
import { store, registry, gr, shardOfDef, keyFor, objectResponse, valueResponse, withRv, isDryRun, parseRv, parseStored, queryBool, queryInt } from './dispatch.js'
import type { ShardReply } from '../../actors/shard/messages.js'
import { PUBLIC_NAMESPACE, SYSTEM_NAMESPACE } from '../auth/rbac-defaults.js'
import { parseSelectors, matches, listResponse, collectionPage } from './read.js'
import { cloneJson, sameJsonText } from '../machinery/json-tree.js'

const GRACEFUL_RESOURCES = new Set(['/pods'])
const MAX_CREATE_ATTEMPTS = 8
const MAX_UPDATE_ATTEMPTS = 16

// ---- create ----

/**
 * Namespace lifecycle states by name, each with the count of namespace writes it was read at: while the count
 * (moved by the shard before it acknowledges any namespace write) stays, the state stands without a read.
 */
const namespaceStates = new Map<string, { stamp: bigint; state: 'missing' | 'terminating' | 'active' }>()
const NAMESPACE_STATES_LIMIT = 10_000

function namespaceState(ns: string): 'missing' | 'terminating' | 'active' {
  const stamp = store.namespaceWrites()
  const cached = namespaceStates.get(ns)
  if (cached && cached.stamp === stamp) return cached.state
  const def = registry.byGroupResource('', 'namespaces')!
  // A snapshot taken after the count was read holds every namespace write it counts.
  const rec = store.getNewest(shardOfDef(def), objectKey('', 'namespaces', '', ns))
  const state = !rec ? 'missing' : recordAttrs(rec).d ? 'terminating' : 'active'
  if (namespaceStates.size >= NAMESPACE_STATES_LIMIT) namespaceStates.clear()
  namespaceStates.set(ns, { stamp, state })
  return state
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
function sendAtOnce(ctx: RequestContext): boolean {
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

/** `tracked`: the body's managedFields are already computed (server-side apply creating the object). */
export async function create(ctx: RequestContext, def: ResolvedDefinition, opts: { tracked?: boolean } = {}): Promise<Response> {
  if (ctx.info.name !== '') throw methodNotAllowed()
  let body: Obj | undefined = decodeObject(ctx, def)
  const dry = isDryRun(ctx)
  const now = Date.now()
  const generated = !body.metadata.name && !!body.metadata.generateName
  // As upstream's NamespaceLifecycle admission: before validation, and before a generated name exists.
  checkNamespace(def, ctx.info.namespace, String((generated ? body.metadata.generateName : body.metadata.name) ?? ''))
  for (let attempt = 0; ; attempt++) {
    // Only a generated name is tried again (with a fresh copy of the body): otherwise nothing keeps the body.
    let obj: Obj | undefined = attempt === 0 ? body! : structuredClone(body!)
    if (!generated) body = undefined
    if (generated) delete obj.metadata.name
    admitCreate(ctx, def, obj, now, opts.tracked === true ? undefined : (o) => { o.metadata.managedFields = trackFields(ctx, def, undefined, o, 'main', now).metadata.managedFields })
    const admitted = admitPlugins(ctx, def, 'CREATE', obj)
    if (admitted) await admitted
    const name = obj.metadata.name as string
    const a = sendCreate(ctx, def, obj, name, dry)
    obj = undefined
    if (!('sent' in a)) return a
    const t0 = performance.now()
    const r = await a.sent
    storageTime(ctx, t0)
    if (r.ok) return objectResponse(ctx, 201, withRv(a.json, r.rv))
    if (r.reason === 'exists') {
      if (generated && attempt < MAX_CREATE_ATTEMPTS) continue
      throw alreadyExists(gr(def), name, generated)
    }
    throw internal(r.message ?? r.reason)
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

/**
 * Fields reset by an endpoint: the main resource never owns status, the status endpoint never owns spec (sets built
 * once: every tracked write asks).
 */
export function resetFields(def: ResolvedDefinition, target: UpdateTarget | 'scale'): FieldSet | undefined {
  if (!def.subresources?.includes('status')) return undefined
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
  return updateManagedFields(old, o, managerOf(ctx), 'Update', def.apiVersion, rfc3339(now), typeTree(loadDefinitions(), def.schemaRef),
    { subresource: target === 'main' ? undefined : target, ignoredFields: resetFields(def, target) })
}

/**
 * What a write makes of the stored object. It gets a copy of the stored object and its resourceVersion; returns the
 * new object, and whether its managedFields are already set (apply) or must be tracked as an Update.
 */
export type Mutation = (old: Obj, curRv: number) => { object: Obj; tracked: boolean }

/**
 * One update attempt from the stored record: mutate a copy of the stored object, admit it, track its fields, print it
 * and send it. Answers (unchanged object, dry run) come back as a Response; a Promise only when an admission plugin
 * must wait. The parsed objects die with this call: across the put the request holds only the reply's promise and
 * the printed text it answers with, so that under load its trees are not copied by a scavenge and promoted. (Answering
 * from a record carried by the reply instead, so that not even the text stays, made creates' p99 ~30 % worse: a
 * reply then carries a second copy of the object wherever no watch event takes the same buffer.)
 */
function attemptUpdate(ctx: RequestContext, def: ResolvedDefinition, target: UpdateTarget, key: string, rec: Buffer, curRv: number, mutate: Mutation, copyOld: boolean, dry: boolean): Attempt | Promise<Attempt> {
  const old = parseStored(rec)
  const m = mutate(copyOld ? cloneJson(old) : old, curRv)
  const now = Date.now()
  admitUpdate(ctx, def, m.object, old, target)
  const admitted = admitPlugins(ctx, def, 'UPDATE', m.object, old)
  if (admitted) return admitted.then(() => sendUpdate(ctx, def, target, key, rec, curRv, old, m, dry, now))
  return sendUpdate(ctx, def, target, key, rec, curRv, old, m, dry, now)
}

function sendUpdate(ctx: RequestContext, def: ResolvedDefinition, target: UpdateTarget, key: string, rec: Buffer, curRv: number, old: Obj, m: ReturnType<Mutation>, dry: boolean, now: number): Attempt {
  const o = m.tracked ? m.object : trackFields(ctx, def, old, m.object, target, now)
  o.metadata.resourceVersion = RV_MARKER
  const canon = canonical(o)
  const json = JSON.stringify(canon)
  old.metadata.resourceVersion = RV_MARKER
  const oldCanon = canonical(old)
  // Unchanged when the stored form would be the same text; the trees answer that without printing the old one.
  if (sameJsonText(canon, oldCanon) ?? json === JSON.stringify(oldCanon)) return objectResponse(ctx, 200, recordObject(rec))
  if (dry) return objectResponse(ctx, 200, withRv(json, curRv))
  const attrs = JSON.stringify(attrsOf(def, o))
  const shard = shardOfDef(def)
  return { sent: readyToRemove(o, now) ? store.remove(shard, key, curRv, attrs, json, sendAtOnce(ctx)) : store.put(shard, key, curRv, attrs, json, sendAtOnce(ctx)), json }
}

/**
 * The read-modify-write of update and patch (upstream GuaranteedUpdate): read the newest object, build the new one,
 * admit it, write it conditionally on the version read; retried on races unless the client pinned a version.
 */
export async function guaranteedUpdate(ctx: RequestContext, def: ResolvedDefinition, target: UpdateTarget, name: string, clientRv: number, mutate: Mutation, opts: { readsOld?: boolean } = {}): Promise<Response> {
  // A mutation that never looks at the stored object (a whole-object update) is handed it without a copy.
  const copyOld = opts.readsOld !== false
  const dry = isDryRun(ctx)
  const shard = shardOfDef(def)
  const key = keyFor(def, ctx.info.namespace, name)
  for (let attempt = 0; attempt < MAX_UPDATE_ATTEMPTS; attempt++) {
    // A copy in the shared slab, not a buffer of its own: it lives as long as this request (slabs are never reused).
    const rec = store.getFreshTransient(shard, key)
    if (!rec) throw notFound(gr(def), name)
    const curRv = recordRv(rec)
    if (clientRv !== 0 && clientRv !== curRv) throw conflict(gr(def), name)
    const a0 = attemptUpdate(ctx, def, target, key, rec, curRv, mutate, copyOld, dry)
    const a = a0 instanceof Promise ? await a0 : a0
    if (!('sent' in a)) return a
    const t0 = performance.now()
    const r = await a.sent
    storageTime(ctx, t0)
    if (r.ok) return objectResponse(ctx, 200, withRv(a.json, r.rv))
    if (r.reason === 'notfound') throw notFound(gr(def), name)
    if (r.reason === 'conflict') {
      if (clientRv !== 0) throw conflict(gr(def), name)
      continue
    }
    throw internal(r.message ?? r.reason)
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
  return guaranteedUpdate(ctx, def, target, name, clientRv, clientRv !== 0 ? once(o0) : copies(o0), { readsOld: false })
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

// ---- delete ----

const POLICIES = ['Foreground', 'Background', 'Orphan']

export interface DeleteOptions { gracePeriodSeconds?: number; propagationPolicy?: string; orphanDependents?: boolean; preconditions?: { uid?: string; resourceVersion?: string }; dryRun?: string[] }

/**
 * The apiVersions a DeleteOptions body may name: the meta group's, and every group version the server serves
 * (upstream registers DeleteOptions as an unversioned kind in each of them).
 */
const DELETE_OPTIONS_VERSIONS = ['v1', 'meta.k8s.io/v1', 'meta.orch.io/v1', 'meta.k8s.io/v1beta1', 'meta.orch.io/v1beta1']

function servedVersion(apiVersion: unknown): boolean {
  if (typeof apiVersion !== 'string') return false
  const slash = apiVersion.indexOf('/')
  return slash > 0 && registry.servesGroupVersion(apiVersion.slice(0, slash), apiVersion.slice(slash + 1))
}

function readDeleteOptions(ctx: RequestContext, def: ResolvedDefinition): DeleteOptions {
  let opts: Obj = {}
  if (ctx.body.length > 0) {
    const v = decodeBody(ctx)
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) opts = v as Obj
    else if (v !== null && v !== undefined) throw badRequest('the body of a delete must be a DeleteOptions object')
  }
  // The body decodes as DeleteOptions or not at all: another kind, or a field of the wrong type, is 400.
  const kind = opts.kind ?? 'DeleteOptions'
  const apiVersion = opts.apiVersion ?? 'v1'
  if (kind !== 'DeleteOptions' || !(DELETE_OPTIONS_VERSIONS.includes(apiVersion) || servedVersion(apiVersion))) {
    throw badRequest(`no kind ${JSON.stringify(String(kind))} is registered for version ${JSON.stringify(String(apiVersion))}: the body of a delete must be a DeleteOptions`)
  }
  const mistyped = (field: string, want: string) => badRequest(unmarshalText(opts[field], `DeleteOptions.${field}`, want))
  if (opts.gracePeriodSeconds !== undefined && opts.gracePeriodSeconds !== null && !Number.isInteger(opts.gracePeriodSeconds)) throw mistyped('gracePeriodSeconds', 'int64')
  if (opts.propagationPolicy !== undefined && opts.propagationPolicy !== null && typeof opts.propagationPolicy !== 'string') throw mistyped('propagationPolicy', 'v1.DeletionPropagation')
  if (opts.orphanDependents !== undefined && opts.orphanDependents !== null && typeof opts.orphanDependents !== 'boolean') throw mistyped('orphanDependents', 'bool')
  for (const k of ['gracePeriodSeconds', 'propagationPolicy', 'orphanDependents']) if (opts[k] === null) delete opts[k]
  // As upstream's handler: the query parameters are decoded only when there is no body (a body wins as a whole).
  if (ctx.body.length === 0) {
    const grace = queryInt(ctx, 'gracePeriodSeconds')
    if (grace !== undefined) opts.gracePeriodSeconds = grace
    const q = ctx.query
    if (q.get('propagationPolicy') !== null) opts.propagationPolicy = q.get('propagationPolicy')
    const orphan = queryBool(ctx, 'orphanDependents')
    if (orphan !== undefined) opts.orphanDependents = orphan
  }
  const errs = []
  if (opts.propagationPolicy !== undefined && !POLICIES.includes(opts.propagationPolicy)) errs.push(fieldNotSupported('propagationPolicy', opts.propagationPolicy, [...POLICIES, 'nil']))
  if (opts.orphanDependents !== undefined && opts.propagationPolicy !== undefined) errs.push(fieldInvalid('propagationPolicy', opts.propagationPolicy, 'orphanDependents and deletionPropagation cannot be both set'))
  if (errs.length > 0) throw invalid('DeleteOptions.meta.orch.io', 'meta.orch.io', 'DeleteOptions', '', errs)
  return opts as DeleteOptions
}

function successStatus(def: ResolvedDefinition, name: string, uid: string): Obj {
  const details: Obj = { name }
  if (def.group !== '') details.group = def.group
  details.kind = def.resource
  details.uid = uid
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details }
}

interface DeleteOutcome { status: number; json: string; removed: boolean }

const ORPHAN = 'orphan'
const FOREGROUND = 'foregroundDeletion'

/** upstream's shouldOrphanDependents: the options, else the object's GC finalizer, else the kind's default policy. */
function shouldOrphan(def: ResolvedDefinition, finalizers: string[], opts: DeleteOptions): boolean {
  if (opts.orphanDependents !== undefined) return opts.orphanDependents
  if (opts.propagationPolicy !== undefined) return opts.propagationPolicy === 'Orphan'
  for (const f of finalizers) {
    if (f === ORPHAN) return true
    if (f === FOREGROUND) return false
  }
  return def.strategy.defaultGarbageCollection?.policy === 'Orphan'
}

/** upstream's shouldDeleteDependents: Foreground in the options, else the object's GC finalizer. */
function shouldForeground(finalizers: string[], opts: DeleteOptions): boolean {
  if (opts.orphanDependents !== undefined) return false
  if (opts.propagationPolicy !== undefined) return opts.propagationPolicy === 'Foreground'
  for (const f of finalizers) {
    if (f === FOREGROUND) return true
    if (f === ORPHAN) return false
  }
  return false
}

/**
 * The finalizers the garbage collector needs for this delete (upstream's deletionFinalizersForGarbageCollection): both
 * GC finalizers taken out, then orphan or foregroundDeletion put back as the options (or the object) say. Undefined
 * when the set stays the same.
 */
function gcFinalizers(def: ResolvedDefinition, finalizers: string[], opts: DeleteOptions): string[] | undefined {
  const next = finalizers.filter((f) => f !== ORPHAN && f !== FOREGROUND)
  if (shouldOrphan(def, finalizers, opts)) next.push(ORPHAN)
  if (shouldForeground(finalizers, opts)) next.push(FOREGROUND)
  const had = new Set(finalizers)
  const has = new Set(next)
  if (had.size === has.size && [...has].every((f) => had.has(f))) return undefined
  return next
}

/**
 * upstream's BeforeDelete for a kind with graceful deletion (pods). 'graceful': the object now carries its deletion
 * timestamp and grace period (a first delete, or a shorter grace); 'pending': a graceful delete is under way and this
 * one changes nothing; 'none': the grace is over (0 or unset), the delete goes on as for any kind.
 */
function beforeGracefulDelete(o: Obj, opts: DeleteOptions, now: number): 'graceful' | 'pending' | 'none' {
  const m = o.metadata
  // Negative values count as 1 s on the delete path.
  const asked = opts.gracePeriodSeconds !== undefined && opts.gracePeriodSeconds < 0 ? 1 : opts.gracePeriodSeconds
  if (typeof m.deletionGracePeriodSeconds === 'number' && m.deletionGracePeriodSeconds < 0) m.deletionGracePeriodSeconds = 1
  if (m.deletionTimestamp) {
    const current = m.deletionGracePeriodSeconds
    if (typeof current !== 'number' || current === 0) return 'none'
    // Only a shorter grace period may be asked for; the deadline moves by the difference.
    if (asked === undefined || asked >= current) return 'pending'
    m.deletionTimestamp = rfc3339(Date.parse(m.deletionTimestamp) - current * 1000 + asked * 1000)
    m.deletionGracePeriodSeconds = asked
    return 'graceful'
  }
  // The pod strategy's CheckGracefulDelete: an unscheduled or finished pod goes at once (a grace of 0).
  let period = asked ?? o.spec?.terminationGracePeriodSeconds ?? 0
  if (!o.spec?.nodeName) period = 0
  if (o.status?.phase === 'Succeeded' || o.status?.phase === 'Failed') period = 0
  m.deletionTimestamp = rfc3339(now + period * 1000)
  m.deletionGracePeriodSeconds = period
  // The first graceful delete changes what the object's controllers may do: its generation moves.
  if (typeof m.generation === 'number' && m.generation > 0) m.generation++
  return 'graceful'
}

/** upstream's markAsDeleting: an object held by finalizers gets a deletion timestamp (now, or an earlier one kept) and grace 0. */
function markAsDeleting(m: Obj, now: number): void {
  if (!m.deletionTimestamp && typeof m.generation === 'number' && m.generation > 0) m.generation++
  if (!m.deletionTimestamp || Date.parse(m.deletionTimestamp) > now) m.deletionTimestamp = rfc3339(now)
  m.deletionGracePeriodSeconds = 0
}

/** The fields a delete may change, printed: a delete that leaves them as they were writes nothing. */
function deletionState(o: Obj): string {
  const m = o.metadata
  return JSON.stringify([m.finalizers, m.deletionTimestamp, m.deletionGracePeriodSeconds, m.generation, o.status?.phase])
}

/**
 * upstream's namespace delete: the first one sets the deletion timestamp (no grace period), the Terminating phase and
 * the GC finalizers the options ask for; later ones answer the namespace as it is while its spec.finalizers remain.
 * Undefined once those are gone: the delete then goes on as for any object.
 */
function namespaceDelete(o: Obj, opts: DeleteOptions, now: number): 'mark' | 'unchanged' | undefined {
  const m = o.metadata
  if (m.deletionTimestamp) return Array.isArray(o.spec?.finalizers) && o.spec.finalizers.length > 0 ? 'unchanged' : undefined
  m.deletionTimestamp = rfc3339(now)
  o.status = { ...(o.status ?? {}), phase: 'Terminating' }
  const fins: string[] = Array.isArray(m.finalizers) ? m.finalizers : []
  const orphan = opts.orphanDependents !== undefined ? opts.orphanDependents : opts.propagationPolicy !== undefined ? opts.propagationPolicy === 'Orphan' : fins.includes(ORPHAN)
  const foreground = opts.orphanDependents !== undefined ? !opts.orphanDependents : opts.propagationPolicy !== undefined ? opts.propagationPolicy === 'Foreground' : fins.includes(FOREGROUND)
  if (orphan !== fins.includes(ORPHAN) || foreground !== fins.includes(FOREGROUND)) {
    const next = fins.filter((f) => f !== ORPHAN && f !== FOREGROUND)
    if (orphan) next.push(ORPHAN)
    if (foreground) next.push(FOREGROUND)
    m.finalizers = next
  }
  return 'mark'
}

/**
 * One object's delete, as upstream's generic store runs it: preconditions; for pods the graceful-delete rules; then the
 * GC finalizers. An object held by finalizers (or in its grace period) is marked and stays; otherwise it is removed,
 * after a write of its deletion timestamp when the kind deletes gracefully. Retried on races.
 */
export async function deleteOne(ctx: RequestContext, def: ResolvedDefinition, namespace: string, name: string, opts: DeleteOptions, dry: boolean): Promise<DeleteOutcome> {
  const shard = shardOfDef(def)
  const key = keyFor(def, namespace, name)
  const gracefulKind = GRACEFUL_RESOURCES.has(`${def.group}/${def.resource}`)
  const isNamespace = def.group === '' && def.resource === 'namespaces'
  for (let attempt = 0; attempt < MAX_UPDATE_ATTEMPTS; attempt++) {
    const rec = store.getFresh(shard, key)
    if (!rec) throw notFound(gr(def), name)
    const curRv = recordRv(rec)
    const o = parseStored(rec)
    const m = o.metadata
    const pre = opts.preconditions
    if (pre?.uid && pre.uid !== m.uid) {
      throw preconditionConflict(def.group, def.kind, name, `the UID in the precondition (${pre.uid}) does not match the UID in record (${m.uid}). The object might have been deleted and then recreated`)
    }
    if (pre?.resourceVersion && pre.resourceVersion !== String(curRv)) {
      throw preconditionConflict(def.group, def.kind, name, `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${curRv}). The object might have been modified`)
    }
    const admitted = admitPlugins(ctx, def, 'DELETE', undefined, o)
    if (admitted) await admitted
    const now = Date.now()
    if (isNamespace && PROTECTED_NAMESPACES.has(name)) throw forbidden(gr(def), name, 'this namespace may not be deleted')
    const unchanged = (): DeleteOutcome => ({ status: 200, json: recordObject(rec).toString('utf8'), removed: false })
    const before = deletionState(o)
    // What happens: 'mark' writes the object and it stays; 'markThenRemove' writes it, then removes it; 'remove' removes it as stored.
    let plan: 'mark' | 'markThenRemove' | 'remove'
    const ns = isNamespace ? namespaceDelete(o, opts, now) : undefined
    if (ns === 'unchanged') return unchanged()
    if (ns === 'mark') {
      plan = 'mark'
    } else {
      const g = gracefulKind ? beforeGracefulDelete(o, opts, now) : 'none'
      if (g === 'pending') return unchanged()
      const graceful = g === 'graceful'
      const held = Array.isArray(m.finalizers) && m.finalizers.length > 0
      const fins = gcFinalizers(def, Array.isArray(m.finalizers) ? m.finalizers : [], opts)
      if (graceful || held || fins) {
        if (fins) { if (fins.length > 0) m.finalizers = fins; else delete m.finalizers }
        const pending = Array.isArray(m.finalizers) && m.finalizers.length > 0
        if (!graceful) {
          if (pending) markAsDeleting(m, now)
          plan = pending ? 'mark' : 'remove'
        } else {
          plan = pending || m.deletionGracePeriodSeconds > 0 ? 'mark' : 'markThenRemove'
        }
      } else {
        plan = 'remove'
      }
    }
    // A repeated delete that changes nothing writes nothing.
    if (plan === 'mark' && deletionState(o) === before) return unchanged()
    const json = toStoredJson(o)
    if (dry) return { status: 200, json: withRv(json, curRv), removed: plan !== 'mark' }
    const attrs = JSON.stringify(attrsOf(def, o))
    const atOnce = sendAtOnce(ctx)
    let r = plan === 'remove' ? await store.remove(shard, key, curRv, attrs, json, atOnce) : await store.put(shard, key, curRv, attrs, json, atOnce)
    // A graceful kind deleted with no grace left: the marked object was written (watchers see it), now it goes.
    if (r.ok && plan === 'markThenRemove') {
      r = await store.remove(shard, key, r.rv, attrs, json, atOnce)
      // Raced by another writer after the mark: the next attempt finds the marked object and removes it.
      if (!r.ok && r.reason === 'conflict') continue
      if (!r.ok && r.reason === 'notfound') return { status: 200, json: withRv(json, curRv), removed: true }
    }
    if (r.ok) return { status: 200, json: withRv(json, r.rv), removed: plan !== 'mark' }
    if (r.reason === 'conflict') continue
    if (r.reason === 'notfound') throw notFound(gr(def), name)
    throw internal(r.message ?? r.reason)
  }
  throw conflict(gr(def), name)
}

/** Namespaces the server keeps (upstream's NamespaceLifecycle protects default, kube-system and kube-public). */
const PROTECTED_NAMESPACES = new Set(['default', SYSTEM_NAMESPACE, PUBLIC_NAMESPACE])

export async function remove(ctx: RequestContext, def: ResolvedDefinition): Promise<Response> {
  const opts = readDeleteOptions(ctx, def)
  const gc = def.strategy.defaultGarbageCollection
  if (gc?.warning && opts.propagationPolicy === undefined && opts.orphanDependents === undefined) ctx.responseHeaders.push(['Warning', `299 - ${JSON.stringify(gc.warning)}`])
  const dry = isDryRun(ctx, opts as Obj)
  const out = await deleteOne(ctx, def, ctx.info.namespace, ctx.info.name, opts, dry)
  if (out.removed && !def.strategy.returnDeletedObject) {
    const uid = (JSON.parse(out.json) as Obj).metadata.uid
    return valueResponse(ctx, 200, successStatus(def, ctx.info.name, uid))
  }
  // As upstream's handler: 202 when the object stays and the legacy orphanDependents=false asked for cascading.
  return objectResponse(ctx, !out.removed && opts.orphanDependents === false ? 202 : out.status, out.json)
}

export async function deleteCollection(ctx: RequestContext, def: ResolvedDefinition): Promise<Response> {
  // As upstream's installer: a namespaced kind's all-namespaces path serves list and watch, never a bulk delete.
  if (def.scope === 'Namespaced' && ctx.info.namespace === '') throw methodNotAllowed()
  const opts = readDeleteOptions(ctx, def)
  const dry = isDryRun(ctx, opts as Obj)
  const sel = parseSelectors(ctx, def)
  const targets: Array<{ namespace: string; name: string }> = []
  let meta: Obj
  const paged = (ctx.query.get('limit') ?? '') !== '' || (ctx.query.get('continue') ?? '') !== ''
  if (paged) {
    // As upstream: with a limit, one page is read as a list reads it and deleted, and the answer carries its continue.
    const page = await collectionPage(ctx, def, sel)
    for (const key of page.keys) { const p = key.split('/'); targets.push({ namespace: p[2], name: p[3] }) }
    meta = page.meta
  } else {
    const shard = shardOfDef(def)
    const ns = def.scope === 'Namespaced' && ctx.info.namespace !== '' ? ctx.info.namespace : undefined
    const prefix = typePrefix(def.group, def.resource, def.scope === 'Namespaced' ? ns : '')
    meta = { resourceVersion: String(store.snapshot(shard)) }
    for (const { key, value } of store.range(shard, prefix)) {
      if (!matches(sel, key, value)) continue
      const p = key.split('/')
      targets.push({ namespace: p[2], name: p[3] })
    }
  }
  const deleted: string[] = []
  for (const t of targets) {
    try {
      const out = await deleteOne(ctx, def, t.namespace, t.name, opts, dry)
      deleted.push(out.json)
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) continue
      throw err
    }
  }
  return listResponse(ctx, def, meta, deleted)
}

