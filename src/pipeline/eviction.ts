// pods/eviction (upstream EvictionREST): a delete of a pod that honours the PodDisruptionBudget covering it. A pod that
// is finished, pending or already being deleted goes at once; otherwise its budget must allow one more disruption,
// which the eviction takes (disruptionsAllowed - 1, the pod in disruptedPods) before the pod is marked and deleted.
import {
  ApiError, badRequest, conflict, forbidden, invalid, methodNotAllowed, notFound, statusFailure, tooManyRequests,
  fieldNotSupported,
} from '../machinery/errors.js'
import { recordRv, typePrefix } from '../machinery/storage-format.js'
import { cloneJson } from '../machinery/json-tree.js'
import type { Obj, ResolvedDefinition } from '../registry/define.js'
import { selectorMatches } from '../registry/resources/core/pod-validation.js'
import {
  isPodReady, MAX_DISRUPTED_PODS, updateDisruptionAllowedCondition, updatePodCondition,
} from '../registry/resources/policy/disruption.js'
import { admitPlugins } from '../admission/chain.js'
import { rfc3339 } from './admission.js'
import { decodeBody } from './decode.js'
import { deleteOne, typedDeleteOptions, validDeleteOptions, type DeleteOptions } from './delete.js'
import { guaranteedUpdate, trackFieldsBy } from './write.js'
import { store, registry, shardOfDef, keyFor, isDryRun, parseStored, valueResponse } from './dispatch.js'
import type { RequestContext, Response } from './context.js'

const PODS_GR = { group: '', resource: 'pods' }
/** The resource upstream's conflicts of the condition update name (`Pod`, as it spells it there). */
const POD_KIND_GR = { group: '', resource: 'Pod' }
/** The resource upstream's refusals of a broken budget name (singular, as it spells it there). */
const PDB_GR = { group: 'policy', resource: 'poddisruptionbudget' }
/** The Eviction versions the sub-resource decodes (upstream AcceptsGroupVersion): v1, and v1beta1 still. */
const EVICTION_VERSIONS = ['policy/v1', 'policy/v1beta1']
/** Attempts of a conflicting step (upstream EvictionsRetry has 20 steps). */
const ATTEMPTS = 20
/** The manager of the budget's status writes (upstream's loopback client is `kube-apiserver`). */
const SERVER_MANAGER = 'orch-apiserver'

const VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."
const BUDGET_CAUSE = 'DisruptionBudget'

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)
const isConflict = (err: unknown): boolean => err instanceof ApiError && err.code === 409

/** Status answers of the budget checks, as upstream words them. */
function budgetBusy(name: string): ApiError {
  return tooManyRequests(VIOLATION, 10, [{ reason: BUDGET_CAUSE, message: `The disruption budget ${name} is still being processed by the server.` }])
}

function budgetExhausted(pdb: Obj): ApiError {
  const st: Obj = isObj(pdb.status) ? pdb.status : {}
  return tooManyRequests(VIOLATION, 0, [{ reason: BUDGET_CAUSE, message: `The disruption budget ${pdb.metadata.name} needs ${st.desiredHealthy ?? 0} healthy pods and has ${st.currentHealthy ?? 0} currently` }])
}

export async function evictPod(ctx: RequestContext, podDef: ResolvedDefinition): Promise<Response> {
  const i = ctx.info
  // Only POST has a route (the eviction storage only creates): any other method is upstream's route-level 405.
  if (i.verb !== 'create') throw methodNotAllowed()
  // The CreateOptions' dryRun is checked first, as upstream's handler does.
  isDryRun(ctx)
  const eviction = decodeEviction(ctx)
  if ((eviction.metadata.name ?? '') !== i.name) throw badRequest('name in URL does not match name in Eviction object')
  const opts = propagateDryRun(ctx, eviction)
  const admitted = admitPlugins(ctx, podDef, 'CREATE', eviction)
  if (admitted) await admitted
  const dry = Array.isArray(opts.dryRun) && opts.dryRun.length > 0
  const ns = i.namespace
  const name = i.name
  // A resourceVersion precondition of the client's own (even empty, as upstream's pointer) means no retries.
  const pinned = opts.preconditions?.resourceVersion !== undefined && opts.preconditions?.resourceVersion !== null

  // A pod that can no longer be disrupted (finished, pending, already deleting) is deleted without a budget check.
  const podShard = shardOfDef(podDef)
  const podKey = keyFor(podDef, ns, name)
  let pod: Obj | undefined
  let podRv = 0
  for (let attempt = 1; ; attempt++) {
    const rec = store.getFresh(podShard, podKey)
    if (!rec) throw notFound(PODS_GR, name)
    pod = parseStored(rec)
    podRv = recordRv(rec)
    if (!ignoresBudget(pod)) break
    // A pending pod is deleted as it was read: it must not have become ready (and covered) since.
    const o = enforcesVersion(pod) && !pinned ? withResourceVersion(opts, String(podRv)) : opts
    try {
      await markAndDelete(ctx, podDef, ns, name, o, dry)
      return success(ctx)
    } catch (err) {
      if (!pinned && isConflict(err) && attempt < ATTEMPTS) continue
      throw err
    }
  }

  const budgets = podBudgets(ns, pod.metadata?.labels)
  if (budgets.length > 1) throw statusFailure(500, 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.')
  let budgetName = ''
  // An unhealthy pod the budget lets go without taking a disruption: deleted only as it was read.
  let asRead = false
  if (budgets.length === 1) {
    const pdb = budgets[0]
    budgetName = pdb.metadata.name
    const st: Obj = isObj(pdb.status) ? pdb.status : {}
    if (!isPodReady(pod)) {
      if (pdb.spec?.unhealthyPodEvictionPolicy === 'AlwaysAllow') asRead = true
      else if ((st.currentHealthy ?? 0) >= (st.desiredHealthy ?? 0) && (st.desiredHealthy ?? 0) > 0) asRead = true
    }
    if (!asRead) await takeDisruption(ctx, pdb, name, dry)
  }
  const o = asRead ? withResourceVersion(opts, String(podRv)) : opts
  try {
    await markAndDelete(ctx, podDef, ns, name, o, dry)
  } catch (err) {
    // The pod changed since it was judged: the client is told to come back (upstream answers the budget's 429).
    if (isConflict(err) && asRead && !pinned) throw budgetBusy(budgetName)
    throw err
  }
  return success(ctx)
}

function success(ctx: RequestContext): Response {
  return valueResponse(ctx, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 })
}

/** The body as an Eviction (JSON, YAML or protobuf; policy/v1 or policy/v1beta1), in the namespace of the URL. */
function decodeEviction(ctx: RequestContext): Obj {
  const v = decodeBody(ctx)
  if (!isObj(v)) throw badRequest("couldn't get version/kind; json parse error: the body is not a JSON object")
  const apiVersion = typeof v.apiVersion === 'string' && v.apiVersion !== '' ? v.apiVersion : 'policy/v1'
  const kind = typeof v.kind === 'string' && v.kind !== '' ? v.kind : 'Eviction'
  if (!apiVersion.startsWith('policy/')) {
    throw badRequest(`the API version in the data (${apiVersion}) does not match the expected API version (policy/v1)`)
  }
  if (kind !== 'Eviction' || !EVICTION_VERSIONS.includes(apiVersion)) {
    const version = apiVersion.slice(apiVersion.indexOf('/') + 1)
    throw badRequest(`${kind} in version "${version}" cannot be handled as a Eviction: no kind "${kind}" is registered for version "${apiVersion}"`)
  }
  if (v.metadata === undefined || v.metadata === null) v.metadata = {}
  if (!isObj(v.metadata)) throw badRequest(`Eviction in version "${apiVersion.slice(7)}" cannot be handled as a Eviction: json: cannot unmarshal ${Array.isArray(v.metadata) ? 'array' : typeof v.metadata} into Go struct field Eviction.metadata of type v1.ObjectMeta`)
  const ns = v.metadata.namespace
  if (ns !== undefined && ns !== null && ns !== '' && ns !== ctx.info.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request')
  }
  v.metadata.namespace = ctx.info.namespace
  v.apiVersion = apiVersion
  v.kind = kind
  const d = v.deleteOptions
  if (d !== undefined && d !== null && !isObj(d)) {
    throw badRequest(`Eviction in version "${apiVersion.slice(7)}" cannot be handled as a Eviction: json: cannot unmarshal ${Array.isArray(d) ? 'array' : typeof d} into Go struct field Eviction.deleteOptions of type v1.DeleteOptions`)
  }
  if (isObj(d)) typedDeleteOptions(d, 'Eviction.deleteOptions')
  return v
}

/**
 * upstream propagateDryRun: the Eviction's DeleteOptions (a copy), with the request's dryRun when they name none; both
 * naming different ones is refused.
 */
function propagateDryRun(ctx: RequestContext, eviction: Obj): Obj {
  const query = ctx.query.getAll('dryRun').filter((v) => v !== '')
  const opts: Obj = isObj(eviction.deleteOptions) ? cloneJson(eviction.deleteOptions) as Obj : {}
  const own: unknown[] = Array.isArray(opts.dryRun) ? opts.dryRun : []
  if (own.length === 0) {
    if (query.length > 0) opts.dryRun = query
    else delete opts.dryRun
    return opts
  }
  if (query.length === 0) return opts
  if (query.length !== own.length || query.some((q, k) => q !== own[k])) {
    throw statusFailure(500, `Non-matching dry-run options in request and content: [${query.join(' ')}] and [${own.map(String).join(' ')}]`, 'Unknown')
  }
  return opts
}

/** The DeleteOptions of the pod's delete, checked as upstream's store checks them when it deletes. */
function deleteOptionsOf(opts: Obj): DeleteOptions {
  const dry: unknown[] = Array.isArray(opts.dryRun) ? opts.dryRun : []
  if (dry.some((v) => v !== 'All')) {
    throw invalid('DeleteOptions.meta.orch.io', 'meta.orch.io', 'DeleteOptions', '', [fieldNotSupported('dryRun', dry, ['All'])])
  }
  return validDeleteOptions(opts)
}

/** upstream canIgnorePDB: finished, pending, or already being deleted. */
function ignoresBudget(pod: Obj): boolean {
  const phase = pod.status?.phase
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || !!pod.metadata?.deletionTimestamp
}

/** upstream shouldEnforceResourceVersion: every such pod but a finished or deleting one. */
function enforcesVersion(pod: Obj): boolean {
  const phase = pod.status?.phase
  return !(phase === 'Succeeded' || phase === 'Failed' || !!pod.metadata?.deletionTimestamp)
}

function withResourceVersion(opts: Obj, rv: string): Obj {
  return { ...opts, preconditions: { ...(isObj(opts.preconditions) ? opts.preconditions : {}), resourceVersion: rv } }
}

/** The budgets of the pod's namespace whose selector matches its labels (a null selector matches none). */
function podBudgets(namespace: string, labels: unknown): Obj[] {
  const def = registry.byGroupResource('policy', 'poddisruptionbudgets')
  if (!def) return []
  const shard = shardOfDef(def)
  store.snapshot(shard)
  const out: Obj[] = []
  for (const { value } of store.range(shard, typePrefix(def.group, def.resource, namespace))) {
    const pdb = parseStored(value)
    if (selectorMatches(pdb.spec?.selector, labels)) out.push(pdb)
  }
  return out
}

/** upstream checkAndDecrement's refusals, on the budget as read. */
function checkBudget(pdb: Obj): void {
  const st: Obj = isObj(pdb.status) ? pdb.status : {}
  const name = pdb.metadata.name
  if ((st.observedGeneration ?? 0) < (pdb.metadata.generation ?? 0)) throw budgetBusy(name)
  const allowed = st.disruptionsAllowed ?? 0
  if (allowed < 0) throw forbidden(PDB_GR, name, 'pdb disruptions allowed is negative')
  if (isObj(st.disruptedPods) && Object.keys(st.disruptedPods).length > MAX_DISRUPTED_PODS) {
    throw forbidden(PDB_GR, name, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller')
  }
  if (allowed === 0) throw budgetExhausted(pdb)
}

/**
 * Takes one disruption from the budget: disruptionsAllowed - 1 and the pod in disruptedPods (so that the controller
 * does not count it healthy while it goes), written through the budget's status, re-read and re-checked on a race.
 * A dry run only checks.
 */
async function takeDisruption(ctx: RequestContext, first: Obj, podName: string, dry: boolean): Promise<void> {
  if (dry) { checkBudget(first); return }
  const def = registry.byGroupResource('policy', 'poddisruptionbudgets')!
  await guaranteedUpdate(ctx, def, 'status', first.metadata.name, 0, (pdb) => {
    checkBudget(pdb)
    const old = cloneJson(pdb) as Obj
    const now = Date.now()
    const st: Obj = pdb.status
    st.disruptionsAllowed = (st.disruptionsAllowed ?? 0) - 1
    if (st.disruptionsAllowed === 0) updateDisruptionAllowedCondition(st, rfc3339(now))
    st.disruptedPods = { ...(isObj(st.disruptedPods) ? st.disruptedPods : {}), [podName]: rfc3339(now) }
    return { object: trackFieldsBy(SERVER_MANAGER, def, old, pdb, 'status', now), tracked: true }
  }, { plugins: false })
}

/**
 * upstream addConditionAndDeletePod: the pod gets condition DisruptionTarget (through its status, checked against
 * the delete's preconditions), then is deleted with the options; a dry run only deletes, as a dry run.
 */
async function markAndDelete(ctx: RequestContext, podDef: ResolvedDefinition, ns: string, name: string, opts: Obj, dry: boolean): Promise<void> {
  let o = opts
  if (!dry) {
    const pre: Obj = isObj(o.preconditions) ? o.preconditions : {}
    await guaranteedUpdate(ctx, podDef, 'status', name, 0, (pod) => {
      if (typeof pre.uid === 'string' && pre.uid !== '' && pre.uid !== pod.metadata.uid) {
        throw conflict(POD_KIND_GR, name, `the UID in the precondition (${pre.uid}) does not match the UID in record (${pod.metadata.uid}). The object might have been deleted and then recreated`)
      }
      if (typeof pre.resourceVersion === 'string' && pre.resourceVersion !== '' && pre.resourceVersion !== String(pod.metadata.resourceVersion)) {
        throw conflict(POD_KIND_GR, name, `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${pod.metadata.resourceVersion}). The object might have been modified`)
      }
      if (!isObj(pod.status)) pod.status = {}
      updatePodCondition(pod.status, { type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting' }, rfc3339(Date.now()))
      // The store's own update: no managedFields entry moves (upstream's field manager runs in handlers only).
      return { object: pod, tracked: true }
    }, { plugins: false })
    if (pre.resourceVersion !== undefined && pre.resourceVersion !== null) {
      // The precondition follows the version this write made.
      const rec = store.getFresh(shardOfDef(podDef), keyFor(podDef, ns, name))
      if (rec) o = withResourceVersion(o, String(recordRv(rec)))
    }
  }
  await deleteOne(ctx, podDef, ns, name, deleteOptionsOf(o), dry, false)
}
