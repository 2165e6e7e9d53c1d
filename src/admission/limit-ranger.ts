// The LimitRanger admission plugin: container defaults from a namespace's LimitRanges (mutating), and their min, max and limit/request ratio checks on pods and claims (validating).
import { forbidden, type ApiError } from '../machinery/errors.js'
import { formatQuantity, parseQuantity, scaledValue, ZERO, type Quantity } from '../machinery/quantity.js'
import { containerTotals, resourceList, type ResourceList } from './resource-lists.js'
import type { AdmissionOperation } from './node-restriction.js'

export const PLUGIN_NAME = 'LimitRanger'
/** The annotation naming what the plugin set (upstream's key, which is not under `k8s.io`). */
/** upstream's kubernetes.io/limit-ranger, in this brand (as kubernetes.io/config.mirror is orch.io/config.mirror). */
export const LIMIT_RANGER_ANNOTATION = 'orch.io/limit-ranger'

type Obj = Record<string, any>

/** A LimitRange as the plugin reads it: its items with parsed amounts (unparseable amounts are left out). */
export interface LimitRangeView { name: string; items: LimitItem[] }
export interface LimitItem {
  type: string
  max: Array<[string, Quantity]>
  min: Array<[string, Quantity]>
  default: Array<[string, Quantity]>
  defaultRequest: Array<[string, Quantity]>
  maxLimitRequestRatio: Array<[string, Quantity]>
}

const PODS = { group: '', resource: 'pods' }
const CLAIMS = { group: '', resource: 'persistentvolumeclaims' }
/** (2^63-1)/1000, upstream's MaxMilliValue: above it values are compared whole instead of in thousandths. */
const MAX_MILLI_VALUE = 9223372036854775n

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** The entries of a resource map with parsed amounts, sorted by name (upstream walks Go maps: any order is its order). */
function amounts(m: unknown): Array<[string, Quantity]> {
  if (!isObj(m)) return []
  const out: Array<[string, Quantity]> = []
  for (const k of Object.keys(m).sort()) {
    const v = m[k]
    const q = typeof v === 'string' || typeof v === 'number' ? parseQuantity(typeof v === 'string' ? v.trim() : v) : undefined
    if (q !== undefined) out.push([k, q])
  }
  return out
}

/** The view of one stored LimitRange. */
export function limitRangeView(o: Obj): LimitRangeView {
  const items: LimitItem[] = []
  for (const it of Array.isArray(o.spec?.limits) ? o.spec.limits : []) {
    if (!isObj(it)) continue
    items.push({
      type: typeof it.type === 'string' ? it.type : '',
      max: amounts(it.max), min: amounts(it.min), default: amounts(it.default), defaultRequest: amounts(it.defaultRequest),
      maxLimitRequestRatio: amounts(it.maxLimitRequestRatio),
    })
  }
  return { name: typeof o.metadata?.name === 'string' ? o.metadata.name : '', items }
}

function containersOf(spec: Obj): Array<[Obj, string]> {
  const out: Array<[Obj, string]> = []
  for (const c of Array.isArray(spec.containers) ? spec.containers : []) if (isObj(c)) out.push([c, 'container'])
  for (const c of Array.isArray(spec.initContainers) ? spec.initContainers : []) if (isObj(c)) out.push([c, 'init container'])
  return out
}

/**
 * The mutating half, for pod creates: each LimitRange's Container defaults fill the requests and limits a container
 * (or init container) leaves out, and the pod's annotation says what was set (upstream PodMutateLimitFunc, run once per
 * LimitRange: the last one that set anything writes the annotation).
 */
export function mutatePodLimits(pod: Obj, ranges: readonly LimitRangeView[]): void {
  const spec = pod.spec
  if (!isObj(spec)) return
  for (const lr of ranges) {
    const defLimits = new Map<string, Quantity>()
    const defRequests = new Map<string, Quantity>()
    for (const it of lr.items) {
      if (it.type !== 'Container') continue
      for (const [k, q] of it.defaultRequest) defRequests.set(k, q)
      for (const [k, q] of it.default) defLimits.set(k, q)
    }
    const notes: string[] = []
    for (const [c, what] of containersOf(spec)) {
      if (!isObj(c.resources)) c.resources = {}
      const r = c.resources
      if (!isObj(r.limits)) r.limits = {}
      if (!isObj(r.requests)) r.requests = {}
      const setLimits: string[] = []
      const setRequests: string[] = []
      for (const [k, q] of defLimits) if (!(k in r.limits)) { r.limits[k] = formatQuantity(q); setLimits.push(k) }
      for (const [k, q] of defRequests) if (!(k in r.requests)) { r.requests[k] = formatQuantity(q); setRequests.push(k) }
      // Upstream makes both maps; empty ones print as nothing.
      if (Object.keys(r.limits).length === 0) delete r.limits
      if (Object.keys(r.requests).length === 0) delete r.requests
      if (setRequests.length > 0) notes.push(`${setRequests.sort().join(', ')} request for ${what} ${c.name ?? ''}`)
      if (setLimits.length > 0) notes.push(`${setLimits.sort().join(', ')} limit for ${what} ${c.name ?? ''}`)
    }
    if (notes.length > 0) {
      if (!isObj(pod.metadata.annotations)) pod.metadata.annotations = {}
      pod.metadata.annotations[LIMIT_RANGER_ANNOTATION] = `LimitRanger plugin set: ${notes.join('; ')}`
    }
  }
}

type List = ResourceList

/** Request, limit and enforced value at one precision (upstream requestLimitEnforcedValues). */
function comparable(req: Quantity | undefined, lim: Quantity | undefined, enforced: Quantity): [bigint, bigint, bigint] {
  const r = req ?? ZERO
  const l = lim ?? ZERO
  let a = scaledValue(r, 0)
  let b = scaledValue(l, 0)
  let c = scaledValue(enforced, 0)
  if (a <= MAX_MILLI_VALUE && b <= MAX_MILLI_VALUE && c <= MAX_MILLI_VALUE) {
    a = scaledValue(r, -3)
    b = scaledValue(l, -3)
    c = scaledValue(enforced, -3)
  }
  return [a, b, c]
}

function minConstraint(type: string, name: string, enforced: Quantity, requests: List, limits: List): string | undefined {
  const req = requests.get(name)
  const lim = limits.get(name)
  const [r, l, e] = comparable(req, lim, enforced)
  const en = formatQuantity(enforced)
  if (req === undefined) return `minimum ${name} usage per ${type} is ${en}.  No request is specified`
  if (r < e) return `minimum ${name} usage per ${type} is ${en}, but request is ${formatQuantity(req)}`
  if (lim !== undefined && l < e) return `minimum ${name} usage per ${type} is ${en}, but limit is ${formatQuantity(lim)}`
  return undefined
}

function maxConstraint(type: string, name: string, enforced: Quantity, requests: List, limits: List): string | undefined {
  const req = requests.get(name)
  const lim = limits.get(name)
  const [r, l, e] = comparable(req, lim, enforced)
  const en = formatQuantity(enforced)
  if (lim === undefined) return `maximum ${name} usage per ${type} is ${en}.  No limit is specified`
  if (l > e) return `maximum ${name} usage per ${type} is ${en}, but limit is ${formatQuantity(lim)}`
  if (req !== undefined && r > e) return `maximum ${name} usage per ${type} is ${en}, but request is ${formatQuantity(req)}`
  return undefined
}

/** The max of a claim's request (claims have no limits to check). */
function maxRequestConstraint(type: string, name: string, enforced: Quantity, requests: List): string | undefined {
  const req = requests.get(name)
  const [r, , e] = comparable(req, undefined, enforced)
  const en = formatQuantity(enforced)
  if (req === undefined) return `maximum ${name} usage per ${type} is ${en}.  No request is specified`
  if (r > e) return `maximum ${name} usage per ${type} is ${en}, but request is ${formatQuantity(req)}`
  return undefined
}

function ratioConstraint(type: string, name: string, enforced: Quantity, requests: List, limits: List): string | undefined {
  const req = requests.get(name)
  const lim = limits.get(name)
  const [r, l] = comparable(req, lim, enforced)
  const en = formatQuantity(enforced)
  if (req === undefined || r === 0n) return `${name} max limit to request ratio per ${type} is ${en}, but no request is specified or request is 0`
  if (lim === undefined || l === 0n) return `${name} max limit to request ratio per ${type} is ${en}, but no limit is specified or limit is 0`
  const shown = Number(l) / Number(r)
  let observed = shown
  let max = Number(scaledValue(enforced, 0))
  if (scaledValue(enforced, 0) <= MAX_MILLI_VALUE) {
    observed = observed * 1000
    max = Number(scaledValue(enforced, -3))
  }
  if (observed > max) return `${name} max limit to request ratio per ${type} is ${en}, but provided ratio is ${shown.toFixed(6)}`
  return undefined
}

/** upstream's aggregate error text: duplicates once, one message bare, several in brackets. */
export function aggregateMessage(msgs: readonly string[]): string {
  const seen = [...new Set(msgs)]
  return seen.length === 1 ? seen[0] : `[${seen.join(', ')}]`
}

/** The checks of one LimitRange on a pod (upstream PodValidateLimitFunc): every failure, in upstream's order. */
function podFailures(lr: LimitRangeView, spec: Obj): string[] {
  const errs: string[] = []
  const push = (m: string | undefined) => { if (m !== undefined) errs.push(m) }
  for (const it of lr.items) {
    if (it.type === 'Container') {
      for (const containers of [spec.containers, spec.initContainers]) {
        for (const c of Array.isArray(containers) ? containers : []) {
          if (!isObj(c)) continue
          const requests = resourceList(c.resources?.requests)
          const limits = resourceList(c.resources?.limits)
          for (const [k, q] of it.min) push(minConstraint('Container', k, q, requests, limits))
          for (const [k, q] of it.max) push(maxConstraint('Container', k, q, requests, limits))
          for (const [k, q] of it.maxLimitRequestRatio) push(ratioConstraint('Container', k, q, requests, limits))
        }
      }
    }
    if (it.type === 'Pod') {
      const requests = containerTotals(spec, 'requests')
      const limits = containerTotals(spec, 'limits')
      for (const [k, q] of it.min) push(minConstraint('Pod', k, q, requests, limits))
      for (const [k, q] of it.max) push(maxConstraint('Pod', k, q, requests, limits))
      for (const [k, q] of it.maxLimitRequestRatio) push(ratioConstraint('Pod', k, q, requests, limits))
    }
  }
  return errs
}

/** The checks of one LimitRange on a claim's storage requests (upstream PersistentVolumeClaimValidateLimitFunc). */
function claimFailures(lr: LimitRangeView, claim: Obj): string[] {
  const errs: string[] = []
  const requests = resourceList(claim.spec?.resources?.requests)
  for (const it of lr.items) {
    if (it.type !== 'PersistentVolumeClaim') continue
    for (const [k, q] of it.min) { const m = minConstraint('PersistentVolumeClaim', k, q, requests, new Map()); if (m !== undefined) errs.push(m) }
    for (const [k, q] of it.max) { const m = maxRequestConstraint('PersistentVolumeClaim', k, q, requests); if (m !== undefined) errs.push(m) }
  }
  return errs
}

/**
 * The validating half: pod creates and claim creates and updates (not their sub-resources, not objects being
 * deleted). The first LimitRange the object fails refuses it with all of that range's failures. `name` is the name
 * the refusal names.
 */
export function validateLimits(resource: string, operation: AdmissionOperation, name: string, object: Obj, oldObject: Obj | undefined, ranges: readonly LimitRangeView[]): ApiError | undefined {
  if (oldObject?.metadata?.deletionTimestamp) return undefined
  if (resource === 'pods') {
    if (operation !== 'CREATE' || !isObj(object.spec)) return undefined
    for (const lr of ranges) {
      const errs = podFailures(lr, object.spec)
      if (errs.length > 0) return forbidden(PODS, name, aggregateMessage(errs))
    }
    return undefined
  }
  if (resource === 'persistentvolumeclaims' && (operation === 'CREATE' || operation === 'UPDATE')) {
    for (const lr of ranges) {
      const errs = claimFailures(lr, object)
      if (errs.length > 0) return forbidden(CLAIMS, name, aggregateMessage(errs))
    }
  }
  return undefined
}
