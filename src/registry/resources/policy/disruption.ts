// What the eviction sub-resource and the disruption controller share about a PodDisruptionBudget's status: pod
// health, the DisruptionAllowed condition (upstream's pdbhelper and apimeta.SetStatusCondition), scaled IntOrStrings.
import type { Obj } from '../../define.js'

export const DISRUPTION_ALLOWED = 'DisruptionAllowed'
export const SUFFICIENT_PODS = 'SufficientPods'
export const INSUFFICIENT_PODS = 'InsufficientPods'
export const SYNC_FAILED = 'SyncFailed'

/**
 * How long an entry of status.disruptedPods keeps its pod out of currentHealthy when the pod is not seen being deleted
 * (upstream DeletionTimeout, 2 minutes).
 */
export const DISRUPTED_POD_TIMEOUT_MS = 2 * 60 * 1000

/** Above this many status.disruptedPods entries the eviction sub-resource refuses (upstream MaxDisruptedPodSize). */
export const MAX_DISRUPTED_PODS = 2000

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)

/** upstream IsPodReady: the pod's Ready condition is True. */
export function isPodReady(pod: Obj): boolean {
  const conditions = pod.status?.conditions
  if (!Array.isArray(conditions)) return false
  for (const c of conditions) if (isObj(c) && c.type === 'Ready') return c.status === 'True'
  return false
}

/**
 * apimeta.SetStatusCondition: adds the condition (its lastTransitionTime `now`), or updates the one of its type, whose
 * lastTransitionTime moves only when its status does. Returns whether anything changed.
 */
export function setStatusCondition(conditions: Obj[], c: { type: string; status: string; reason: string; message: string; observedGeneration?: number }, now: string): boolean {
  const cur = conditions.find((x) => isObj(x) && x.type === c.type)
  if (cur === undefined) {
    const n: Obj = { type: c.type, status: c.status }
    if (c.observedGeneration) n.observedGeneration = c.observedGeneration
    n.lastTransitionTime = now
    n.reason = c.reason
    n.message = c.message
    conditions.push(n)
    return true
  }
  let changed = false
  if (cur.status !== c.status) { cur.status = c.status; cur.lastTransitionTime = now; changed = true }
  if (cur.reason !== c.reason) { cur.reason = c.reason; changed = true }
  if ((cur.message ?? '') !== c.message) { cur.message = c.message; changed = true }
  if ((cur.observedGeneration ?? 0) !== (c.observedGeneration ?? 0)) {
    if (c.observedGeneration) cur.observedGeneration = c.observedGeneration
    else delete cur.observedGeneration
    changed = true
  }
  return changed
}

/** pdbhelper.UpdateDisruptionAllowedCondition: True/SufficientPods while disruptions are allowed, else False/InsufficientPods. */
export function updateDisruptionAllowedCondition(status: Obj, now: string): void {
  if (!Array.isArray(status.conditions)) status.conditions = []
  const allowed = (status.disruptionsAllowed ?? 0) > 0
  setStatusCondition(status.conditions, {
    type: DISRUPTION_ALLOWED,
    status: allowed ? 'True' : 'False',
    reason: allowed ? SUFFICIENT_PODS : INSUFFICIENT_PODS,
    message: '',
    observedGeneration: status.observedGeneration ?? 0,
  }, now)
}

/** pdbhelper.ConditionsAreUpToDate: the condition says what disruptionsAllowed says, for the current generation. */
export function conditionsAreUpToDate(pdb: Obj): boolean {
  const status: Obj = isObj(pdb.status) ? pdb.status : {}
  const cond = Array.isArray(status.conditions) ? status.conditions.find((c: Obj) => isObj(c) && c.type === DISRUPTION_ALLOWED) : undefined
  if (cond === undefined) return false
  if ((status.observedGeneration ?? 0) !== (pdb.metadata?.generation ?? 0)) return false
  if ((status.disruptionsAllowed ?? 0) > 0) return cond.status === 'True' && cond.reason === SUFFICIENT_PODS
  return cond.status === 'False' && cond.reason === INSUFFICIENT_PODS
}

/**
 * intstr.GetScaledValueFromIntOrPercent: an integer as it is, `N%` of `total` rounded up or down; an error text for
 * anything else.
 */
export function scaledValue(v: unknown, total: number, roundUp: boolean): number | string {
  if (typeof v === 'number') return v
  if (typeof v !== 'string') return 'invalid type: neither int nor percentage'
  const m = /^(-?\d+)%$/.exec(v)
  if (m === null) return `invalid value for IntOrString: invalid value ${JSON.stringify(v)}`
  const scaled = (Number(m[1]) * total) / 100
  return roundUp ? Math.ceil(scaled) : Math.floor(scaled)
}

/** metav1.GetControllerOf: the owner reference with controller true. */
export function controllerOf(o: Obj): Obj | undefined {
  const refs = o.metadata?.ownerReferences
  if (!Array.isArray(refs)) return undefined
  for (const r of refs) if (isObj(r) && r.controller === true) return r
  return undefined
}

/**
 * upstream UpdatePodCondition: the condition replaces the one of its type (lastProbeTime cleared, lastTransitionTime
 * kept while the status stays) or is added. Returns whether anything changed.
 */
export function updatePodCondition(status: Obj, c: { type: string; status: string; reason: string; message: string }, now: string): boolean {
  if (!Array.isArray(status.conditions)) status.conditions = []
  const conditions: Obj[] = status.conditions
  // No lastProbeTime: upstream's zero time (printed as null), which objects here leave out as a decoded null is.
  const n: Obj = { type: c.type, status: c.status, lastTransitionTime: now, reason: c.reason, message: c.message }
  const i = conditions.findIndex((x) => isObj(x) && x.type === c.type)
  if (i < 0) {
    conditions.push(n)
    return true
  }
  const old = conditions[i]
  if (old.status === c.status) n.lastTransitionTime = old.lastTransitionTime ?? null
  const same = old.status === c.status && (old.reason ?? '') === c.reason && (old.message ?? '') === c.message &&
    (old.lastProbeTime ?? null) === null && (old.lastTransitionTime ?? null) === n.lastTransitionTime
  conditions[i] = n
  return !same
}
