// The delete path of the storage stage: DeleteOptions, one object's delete (preconditions, finalizers, graceful
// deletion, the garbage collector's finalizers) and deletecollection.
import { ApiError, badRequest, conflict, forbidden, internal, invalid, methodNotAllowed, notFound, preconditionConflict, fieldNotSupported, fieldInvalid } from '../machinery/errors.js'
import { typePrefix, recordObject, recordRv } from '../machinery/storage-format.js'
import type { Obj, ResolvedDefinition } from '../registry/define.js'
import type { RequestContext, Response } from './context.js'
import { admitPlugins } from '../admission/chain.js'
import { enabled as admissionPlugins } from '../admission/plugins.js'
import { attrsOf, rfc3339, toStoredJson } from './admission.js'
import { decodeBody } from './decode.js'
import { CRD_GROUP, CRD_RESOURCE, CLEANUP_FINALIZER, setCondition } from '../registry/custom.js'
import { unmarshalText } from '../registry/schema.js'
import { store, registry, gr, shardOfDef, keyFor, objectResponse, valueResponse, withRv, isDryRun, parseStored, queryBool, queryInt } from './dispatch.js'
import { PUBLIC_NAMESPACE, SYSTEM_NAMESPACE } from '../auth/rbac-defaults.js'
import { parseSelectors, matches } from './read-selectors.js'
import { listResponse } from './list-encode.js'
import { collectionPage } from './read.js'
import { MAX_UPDATE_ATTEMPTS, sendAtOnce } from './write.js'
import { allocates, releaseService } from './service-allocation.js'

const GRACEFUL_RESOURCES = new Set(['/pods'])

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
  typedDeleteOptions(opts, 'DeleteOptions')
  // As upstream's handler: the query parameters are decoded only when there is no body (a body wins as a whole).
  if (ctx.body.length === 0) {
    const grace = queryInt(ctx, 'gracePeriodSeconds')
    if (grace !== undefined) opts.gracePeriodSeconds = grace
    const q = ctx.query
    if (q.get('propagationPolicy') !== null) opts.propagationPolicy = q.get('propagationPolicy')
    const orphan = queryBool(ctx, 'orphanDependents')
    if (orphan !== undefined) opts.orphanDependents = orphan
  }
  return validDeleteOptions(opts)
}

/** The decoder's type checks of the DeleteOptions fields (400 naming the Go struct field `<struct>.<field>`); nulls go. */
export function typedDeleteOptions(opts: Obj, struct: string): void {
  const mistyped = (field: string, want: string) => badRequest(unmarshalText(opts[field], `${struct}.${field}`, want))
  if (opts.gracePeriodSeconds !== undefined && opts.gracePeriodSeconds !== null && !Number.isInteger(opts.gracePeriodSeconds)) throw mistyped('gracePeriodSeconds', 'int64')
  if (opts.propagationPolicy !== undefined && opts.propagationPolicy !== null && typeof opts.propagationPolicy !== 'string') throw mistyped('propagationPolicy', 'v1.DeletionPropagation')
  if (opts.orphanDependents !== undefined && opts.orphanDependents !== null && typeof opts.orphanDependents !== 'boolean') throw mistyped('orphanDependents', 'bool')
  for (const k of ['gracePeriodSeconds', 'propagationPolicy', 'orphanDependents']) if (opts[k] === null) delete opts[k]
}

/** upstream ValidateDeleteOptions (but dryRun, which the callers check): the propagation policy and its exclusions. */
export function validDeleteOptions(opts: Obj): DeleteOptions {
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
 * upstream's CustomResourceDefinition delete: the first one sets the deletion timestamp, the cleanup finalizer and the
 * Terminating condition (the CRD controller then deletes the custom resources and removes the finalizer).
 */
function crdDelete(o: Obj, now: number): 'mark' | undefined {
  const m = o.metadata
  if (m.deletionTimestamp) return undefined
  m.deletionTimestamp = rfc3339(now)
  const fins: string[] = Array.isArray(m.finalizers) ? m.finalizers : []
  if (!fins.includes(CLEANUP_FINALIZER)) m.finalizers = [...fins, CLEANUP_FINALIZER]
  if (o.status === null || typeof o.status !== 'object') o.status = {}
  setCondition(o.status, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionPending', message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon' }, rfc3339(now))
  return 'mark'
}

/**
 * One object's delete, as upstream's generic store runs it: preconditions; for pods the graceful-delete rules; then the
 * GC finalizers. An object held by finalizers (or in its grace period) is marked and stays; otherwise it is removed,
 * after a write of its deletion timestamp when the kind deletes gracefully. Retried on races.
 */
/** The DeleteOptions admission sees (upstream's operation options of a delete), with the request's dry run. */
function admissionOptions(opts: DeleteOptions, dry: boolean): Obj {
  const o: Obj = { kind: 'DeleteOptions', apiVersion: 'meta.orch.io/v1' }
  if (opts.gracePeriodSeconds !== undefined) o.gracePeriodSeconds = opts.gracePeriodSeconds
  if (opts.preconditions !== undefined) o.preconditions = opts.preconditions
  if (opts.orphanDependents !== undefined) o.orphanDependents = opts.orphanDependents
  if (opts.propagationPolicy !== undefined) o.propagationPolicy = opts.propagationPolicy
  if (dry) o.dryRun = ['All']
  return o
}

export async function deleteOne(ctx: RequestContext, def: ResolvedDefinition, namespace: string, name: string, opts: DeleteOptions, dry: boolean, plugins = true): Promise<DeleteOutcome> {
  const shard = shardOfDef(def)
  const key = keyFor(def, namespace, name)
  const gracefulKind = GRACEFUL_RESOURCES.has(`${def.group}/${def.resource}`)
  const isNamespace = def.group === '' && def.resource === 'namespaces'
  const isCrd = def.group === CRD_GROUP && def.resource === CRD_RESOURCE
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
    const admitted = plugins ? admitPlugins(ctx, def, 'DELETE', undefined, o, admissionOptions(opts, dry)) : undefined
    if (admitted) await admitted
    const now = Date.now()
    if (isNamespace && admissionPlugins.namespaceLifecycle && PROTECTED_NAMESPACES.has(name)) throw forbidden(gr(def), name, 'this namespace may not be deleted')
    const unchanged = (): DeleteOutcome => ({ status: 200, json: recordObject(rec).toString('utf8'), removed: false })
    const before = deletionState(o)
    // What happens: 'mark' writes the object and it stays; 'markThenRemove' writes it, then removes it; 'remove' removes it as stored.
    let plan: 'mark' | 'markThenRemove' | 'remove'
    const ns = isNamespace ? namespaceDelete(o, opts, now) : isCrd ? crdDelete(o, now) : undefined
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
    if (r.ok) {
      // upstream's AfterDelete of a service: once it is gone, what it held goes back.
      if (plan !== 'mark' && allocates(def)) releaseService(o)
      return { status: 200, json: withRv(json, r.rv), removed: plan !== 'mark' }
    }
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
    return valueResponse(ctx, 200, successStatus(ctx.conversion ?? def, ctx.info.name, uid))
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

