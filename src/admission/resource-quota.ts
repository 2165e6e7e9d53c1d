// What quota counts, and the check of one write against a namespace's quotas (upstream's quota evaluators and CheckRequest); shared by the ResourceQuota admission plugin and the quota controller.
import { forbidden, type ApiError } from '../machinery/errors.js'
import { volumeStorageClass } from '../registry/resources/_printers.js'
import { compareQuantities, countQuantity, scaledValue, type Quantity } from '../machinery/quantity.js'
import { isExtendedResource, isHugePages } from '../registry/resources/core/resource-names.js'
import { podQOSClass } from '../registry/resources/core/pod-qos.js'
import {
  addLists, containerTotals, equalLists, exceededNames, maskList, negativeNames, prettyNames, prettyPrint,
  resourceList, subtractNonNegative, type ResourceList,
} from './resource-lists.js'
import type { AdmissionOperation } from './node-restriction.js'

export const PLUGIN_NAME = 'ResourceQuota'

type Obj = Record<string, any>

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** One scope requirement of a quota (its `scopes` read as `Exists`, then its scopeSelector's expressions). */
export interface ScopeRequirement { scopeName: string; operator: string; values: string[] }

/** A stored quota as admission and the controller read it. */
export interface QuotaState {
  name: string
  /** the resourceVersion it was read at */
  rv: number
  /** the stored object */
  object: Obj
  /** status.hard and status.used */
  hard: ResourceList
  used: ResourceList
  scopes: ScopeRequirement[]
}

export function scopeRequirements(q: Obj): ScopeRequirement[] {
  const out: ScopeRequirement[] = []
  for (const s of Array.isArray(q.spec?.scopes) ? q.spec.scopes : []) if (typeof s === 'string') out.push({ scopeName: s, operator: 'Exists', values: [] })
  for (const e of Array.isArray(q.spec?.scopeSelector?.matchExpressions) ? q.spec.scopeSelector.matchExpressions : []) {
    if (!isObj(e)) continue
    out.push({ scopeName: String(e.scopeName ?? ''), operator: String(e.operator ?? ''), values: Array.isArray(e.values) ? e.values.map(String) : [] })
  }
  return out
}

export function quotaState(o: Obj, rv: number): QuotaState {
  return { name: String(o.metadata?.name ?? ''), rv, object: o, hard: resourceList(o.status?.hard), used: resourceList(o.status?.used), scopes: scopeRequirements(o) }
}

/** How quota measures one resource type (upstream quota.Evaluator). */
export interface Evaluator {
  readonly group: string
  readonly resource: string
  /** The names of `names` this evaluator accounts for. */
  matchingResources(names: Iterable<string>): string[]
  /** Whether a write of this type can change usage (create; some updates). */
  handles(operation: AdmissionOperation, object: Obj, oldObject: Obj | undefined): boolean
  /** Whether the object falls in a scope requirement (types without scopes: never). */
  matchesScope(req: ScopeRequirement, object: Obj): boolean
  /** What a quota tracking `required` demands of the object, as the message after `failed quota: NAME: `. */
  constraints(required: string[], object: Obj): string | undefined
  /** The usage of one object at time `now` (ms). */
  usage(object: Obj, now: number): ResourceList
  /** Usage is one per object whatever it holds: a namespace's usage is its object count (no object is read). */
  readonly countsOnly: boolean
}

const ONE = countQuantity(1)
const ZERO_COUNT = countQuantity(0)

/** `count/<resource>` for the core group, `count/<resource>.<group>` otherwise (upstream ObjectCountQuotaResourceNameFor). */
export function objectCountName(group: string, resource: string): string {
  return group === '' ? `count/${resource}` : `count/${resource}.${group}`
}

/**
 * The names a quota may count objects of a type by: the brand's, and upstream's `k8s.io` spelling of a branded group
 * (a quota written for upstream, `count/ingresses.networking.k8s.io`, counts the same objects).
 */
function countNames(group: string, resource: string, alias?: string): string[] {
  const names = [objectCountName(group, resource)]
  if (group.endsWith('.orch.io')) names.push(objectCountName(group.slice(0, -'.orch.io'.length) + '.k8s.io', resource))
  if (alias !== undefined) names.push(alias)
  return names
}

/** Counts objects of a type, on create only (upstream objectCountEvaluator). */
class CountEvaluator implements Evaluator {
  readonly countsOnly = true
  readonly #names: string[]
  constructor(readonly group: string, readonly resource: string, alias?: string) { this.#names = countNames(group, resource, alias) }
  matchingResources(names: Iterable<string>): string[] { return [...names].filter((n) => this.#names.includes(n)) }
  handles(operation: AdmissionOperation): boolean { return operation === 'CREATE' }
  matchesScope(): boolean { return false }
  constraints(): undefined { return undefined }
  usage(): ResourceList { return new Map(this.#names.map((n) => [n, ONE])) }
}

// ---- pods ----

const POD_RESOURCES = new Set([
  'count/pods', 'cpu', 'memory', 'ephemeral-storage', 'requests.cpu', 'requests.memory', 'requests.ephemeral-storage',
  'limits.cpu', 'limits.memory', 'limits.ephemeral-storage', 'pods',
])
/** Resources a quota on cpu or memory makes every container declare (upstream's admitted mistake, kept). */
const VALIDATION_SET = new Set(['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'])

/** `requests.<name>` for an extended resource (upstream isExtendedResourceNameForQuota). */
function isExtendedQuotaName(name: string): boolean {
  return name.startsWith('requests.') && isExtendedResource(name.slice('requests.'.length))
}

/** The usage names of one set of requests and limits (upstream podComputeUsageHelper). */
function computeUsage(requests: ResourceList, limits: ResourceList): ResourceList {
  const out: ResourceList = new Map([['pods', ONE]])
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) {
    const req = requests.get(r)
    if (req !== undefined) { out.set(r, req); out.set(`requests.${r}`, req) }
    const lim = limits.get(r)
    if (lim !== undefined) out.set(`limits.${r}`, lim)
  }
  for (const [r, q] of requests) {
    if (isHugePages(r)) { out.set(r, q); out.set(`requests.${r}`, q) }
    if (isExtendedResource(r)) out.set(`requests.${r}`, q)
  }
  return out
}

/** Pod-level resources (spec.resources) that name cpu or memory. */
function podLevelSet(spec: Obj): boolean {
  const r = spec.resources
  if (!isObj(r)) return false
  return [r.requests, r.limits].some((m) => isObj(m) && ('cpu' in m || 'memory' in m))
}

/** The pod's requests or limits as quota charges them (upstream resourcehelper.PodRequests / PodLimits). */
function podTotals(spec: Obj, bag: 'requests' | 'limits'): ResourceList {
  const total = containerTotals(spec, bag)
  // Pod-level cpu and memory, when given, stand for the containers' sum.
  const podLevel = resourceList(spec.resources?.[bag])
  for (const r of ['cpu', 'memory']) { const q = podLevel.get(r); if (q !== undefined) total.set(r, q) }
  const overhead = resourceList(spec.overhead)
  if (overhead.size === 0) return total
  if (bag === 'requests') return addLists(total, overhead)
  // Overhead adds to the limits that are set only.
  return addLists(total, maskList(overhead, total.keys()))
}

export function isTerminating(pod: Obj): boolean {
  const a = pod.spec?.activeDeadlineSeconds
  return typeof a === 'number' && a >= 0
}

function isBestEffort(pod: Obj): boolean {
  const qos = pod.status?.qosClass
  return (typeof qos === 'string' && qos !== '' ? qos : podQOSClass(pod.spec)) === 'BestEffort'
}

function crossNamespaceTerms(terms: unknown, weighted: boolean): boolean {
  for (const t of Array.isArray(terms) ? terms : []) {
    const term = weighted ? t?.podAffinityTerm : t
    if (!isObj(term)) continue
    if ((Array.isArray(term.namespaces) && term.namespaces.length > 0) || (term.namespaceSelector !== undefined && term.namespaceSelector !== null)) return true
  }
  return false
}

function usesCrossNamespaceAffinity(pod: Obj): boolean {
  const a = pod.spec?.affinity
  if (!isObj(a)) return false
  for (const k of ['podAffinity', 'podAntiAffinity']) {
    const x = a[k]
    if (!isObj(x)) continue
    if (crossNamespaceTerms(x.requiredDuringSchedulingIgnoredDuringExecution, false)) return true
    if (crossNamespaceTerms(x.preferredDuringSchedulingIgnoredDuringExecution, true)) return true
  }
  return false
}

/** Whether a pod's priority class meets a PriorityClass requirement (a label selector over `PriorityClass: <name>`). */
function priorityClassMatches(req: ScopeRequirement, name: string): boolean {
  switch (req.operator) {
    case 'Exists': return name !== ''
    case 'DoesNotExist': return name === ''
    case 'In': return name !== '' && req.values.includes(name)
    case 'NotIn': return name === '' || !req.values.includes(name)
    default: return false
  }
}

/** Whether the pod still counts for its compute resources (upstream QuotaV1Pod). */
export function chargedPod(pod: Obj, now: number): boolean {
  const phase = pod.status?.phase
  if (phase === 'Failed' || phase === 'Succeeded') return false
  const m = pod.metadata ?? {}
  if (typeof m.deletionTimestamp === 'string' && typeof m.deletionGracePeriodSeconds === 'number') {
    if (now > Date.parse(m.deletionTimestamp) + m.deletionGracePeriodSeconds * 1000) return false
  }
  return true
}

class PodEvaluator implements Evaluator {
  readonly group = ''
  readonly resource = 'pods'
  readonly countsOnly = false

  matchingResources(names: Iterable<string>): string[] {
    const out: string[] = []
    for (const n of names) {
      if (POD_RESOURCES.has(n) || n.startsWith('hugepages-') || n.startsWith('requests.hugepages-') || isExtendedQuotaName(n)) out.push(n)
    }
    return out
  }

  handles(operation: AdmissionOperation, object: Obj, oldObject: Obj | undefined): boolean {
    if (operation === 'CREATE') return true
    // An update that moves the pod across the Terminating scope changes what quotas it is charged to.
    return operation === 'UPDATE' && oldObject !== undefined && isTerminating(oldObject) !== isTerminating(object)
  }

  matchesScope(req: ScopeRequirement, pod: Obj): boolean {
    switch (req.scopeName) {
      case 'Terminating': return isTerminating(pod)
      case 'NotTerminating': return !isTerminating(pod)
      case 'BestEffort': return isBestEffort(pod)
      case 'NotBestEffort': return !isBestEffort(pod)
      case 'PriorityClass': return priorityClassMatches(req, typeof pod.spec?.priorityClassName === 'string' ? pod.spec.priorityClassName : '')
      case 'CrossNamespacePodAffinity': return usesCrossNamespaceAffinity(pod)
      default: return false
    }
  }

  constraints(required: string[], pod: Obj): string | undefined {
    const spec = isObj(pod.spec) ? pod.spec : {}
    if (podLevelSet(spec)) return undefined
    const need = required.filter((r) => VALIDATION_SET.has(r))
    if (need.length === 0) return undefined
    const missing = new Map<string, Set<string>>()
    for (const c of [...(Array.isArray(spec.containers) ? spec.containers : []), ...(Array.isArray(spec.initContainers) ? spec.initContainers : [])]) {
      if (!isObj(c)) continue
      const has = computeUsage(resourceList(c.resources?.requests), resourceList(c.resources?.limits))
      for (const r of need) {
        if (has.has(r)) continue
        let names = missing.get(r)
        if (names === undefined) { names = new Set(); missing.set(r, names) }
        names.add(String(c.name ?? ''))
      }
    }
    if (missing.size === 0) return undefined
    return `must specify ${[...missing.keys()].sort().map((r) => `${r} for: ${[...missing.get(r)!].sort().join(',')}`).join('; ')}`
  }

  usage(pod: Obj, now: number): ResourceList {
    const out: ResourceList = new Map([['count/pods', ONE]])
    if (!chargedPod(pod, now)) return out
    const spec = isObj(pod.spec) ? pod.spec : {}
    return addLists(out, computeUsage(podTotals(spec, 'requests'), podTotals(spec, 'limits')))
  }
}

// ---- services ----

const SERVICE_RESOURCES = new Set(['count/services', 'services', 'services.nodeports', 'services.loadbalancers'])

class ServiceEvaluator implements Evaluator {
  readonly group = ''
  readonly resource = 'services'
  readonly countsOnly = false
  matchingResources(names: Iterable<string>): string[] { return [...names].filter((n) => SERVICE_RESOURCES.has(n)) }
  // Create and update: a service's type can change.
  handles(operation: AdmissionOperation): boolean { return operation === 'CREATE' || operation === 'UPDATE' }
  matchesScope(): boolean { return false }
  constraints(): undefined { return undefined }
  usage(svc: Obj): ResourceList {
    const ports = Array.isArray(svc.spec?.ports) ? svc.spec.ports.length : 0
    const out: ResourceList = new Map([['count/services', ONE], ['services', ONE], ['services.loadbalancers', ZERO_COUNT], ['services.nodeports', ZERO_COUNT]])
    const type = svc.spec?.type
    if (type === 'NodePort') out.set('services.nodeports', countQuantity(ports))
    if (type === 'LoadBalancer') {
      // Without node port allocation only the ports given a node port explicitly take one.
      const explicit = svc.spec?.allocateLoadBalancerNodePorts === false
      const nodePorts = explicit && Array.isArray(svc.spec.ports) ? svc.spec.ports.filter((p: unknown) => isObj(p) && typeof p.nodePort === 'number' && p.nodePort !== 0).length : ports
      out.set('services.nodeports', countQuantity(nodePorts))
      out.set('services.loadbalancers', ONE)
    }
    return out
  }
}

// ---- persistent volume claims ----

/** `<class>` + this + `<resource>` names a claim resource by storage class (upstream's spelling and the brand's). */
const CLASS_SUFFIXES = ['.storageclass.storage.k8s.io/', '.storageclass.storage.orch.io/']
const CLAIM_RESOURCES = ['persistentvolumeclaims', 'requests.storage']

/** A storage amount as whole bytes, rounded up (upstream's RoundUp(0) of claim requests). */
function wholeBytes(q: Quantity): Quantity {
  return q.exponent >= 0 ? q : { mantissa: scaledValue(q, 0), exponent: 0, format: q.format }
}

class ClaimEvaluator implements Evaluator {
  readonly group = ''
  readonly resource = 'persistentvolumeclaims'
  readonly countsOnly = false
  matchingResources(names: Iterable<string>): string[] {
    const out: string[] = []
    for (const n of names) {
      if (n === 'count/persistentvolumeclaims' || CLAIM_RESOURCES.includes(n)) { out.push(n); continue }
      if (CLASS_SUFFIXES.some((s) => CLAIM_RESOURCES.some((r) => n.endsWith(s + r)))) out.push(n)
    }
    return out
  }
  handles(operation: AdmissionOperation): boolean { return operation === 'CREATE' || operation === 'UPDATE' }
  matchesScope(): boolean { return false }
  constraints(): undefined { return undefined }
  usage(pvc: Obj): ResourceList {
    const out: ResourceList = new Map([['persistentvolumeclaims', ONE], ['count/persistentvolumeclaims', ONE]])
    const cls = volumeStorageClass(pvc)
    if (cls !== '') for (const s of CLASS_SUFFIXES) out.set(`${cls}${s}persistentvolumeclaims`, ONE)
    const requested = resourceList(pvc.spec?.resources?.requests).get('storage')
    if (requested === undefined) return out
    let storage = wholeBytes(requested)
    // A larger allocation (after a failed expansion was recovered) is what the claim holds.
    const allocated = resourceList(pvc.status?.allocatedResources).get('storage')
    if (allocated !== undefined && compareQuantities(allocated, storage) > 0) storage = wholeBytes(allocated)
    out.set('requests.storage', storage)
    if (cls !== '') for (const s of CLASS_SUFFIXES) out.set(`${cls}${s}requests.storage`, storage)
    return out
  }
}

// ---- the registry ----

const CORE_ALIASES: Record<string, string> = {
  configmaps: 'configmaps', secrets: 'secrets', replicationcontrollers: 'replicationcontrollers', resourcequotas: 'resourcequotas',
}
const evaluators = new Map<string, Evaluator | null>()

/**
 * The evaluator of a namespaced type, or undefined for what quota ignores (core events, as upstream's default
 * configuration). Every other type is counted (`count/<resource>.<group>`).
 */
export function evaluatorFor(group: string, resource: string): Evaluator | undefined {
  const key = `${group}/${resource}`
  let ev = evaluators.get(key)
  if (ev === undefined) {
    if (group === '' && resource === 'events') ev = null
    else if (group === '' && resource === 'pods') ev = new PodEvaluator()
    else if (group === '' && resource === 'services') ev = new ServiceEvaluator()
    else if (group === '' && resource === 'persistentvolumeclaims') ev = new ClaimEvaluator()
    else ev = new CountEvaluator(group, resource, group === '' ? CORE_ALIASES[resource] : undefined)
    evaluators.set(key, ev)
  }
  return ev ?? undefined
}

/** Whether the quota applies to the object: it tracks a resource of the type, and the object is in all its scopes. */
export function quotaMatches(ev: Evaluator, q: QuotaState, object: Obj): boolean {
  if (ev.matchingResources(q.hard.keys()).length === 0) return false
  for (const s of q.scopes) if (!ev.matchesScope(s, object)) return false
  return true
}

/** What one admission check needs of its write. */
export interface QuotaRequest {
  ev: Evaluator
  operation: AdmissionOperation
  object: Obj
  oldObject: Obj | undefined
  /** the group and resource of the write, and the name its refusals name */
  gr: { group: string; resource: string }
  name: string
}

/**
 * upstream CheckRequest: the quotas as they would be once the write is admitted (the same array when it changes no
 * quota), or the refusal.
 */
export function checkRequest(quotas: readonly QuotaState[], req: QuotaRequest, now: number): readonly QuotaState[] | ApiError {
  const { ev, object } = req
  if (!ev.handles(req.operation, object, req.oldObject)) return quotas
  const interesting: number[] = []
  for (let i = 0; i < quotas.length; i++) {
    const q = quotas[i]
    if (!quotaMatches(ev, q, object)) continue
    const restricted = ev.matchingResources(q.hard.keys())
    const failed = ev.constraints(restricted, object)
    if (failed !== undefined) return forbidden(req.gr, req.name, `failed quota: ${q.name}: ${failed}`)
    const unknown = restricted.filter((r) => q.hard.has(r) && !q.used.has(r))
    if (unknown.length > 0) return forbidden(req.gr, req.name, `status unknown for quota: ${q.name}, resources: ${prettyNames(restricted)}`)
    interesting.push(i)
  }
  const usage = ev.usage(object, now)
  const negative = negativeNames(usage)
  if (negative.length > 0) return forbidden(req.gr, req.name, `quota usage is negative for resource(s): ${prettyNames(negative)}`)
  // What each quota is charged: the whole usage, but on an update only the growth for a quota that already counted
  // the stored object (an object moving into a quota's scopes is charged in full). Amounts of zero charge nothing.
  let growth: ResourceList | undefined
  if (req.operation === 'UPDATE' && req.oldObject !== undefined && req.oldObject.metadata?.resourceVersion) {
    growth = subtractNonNegative(usage, ev.usage(req.oldObject, now))
  }
  const charges = new Map<number, ResourceList>()
  for (const i of interesting) {
    const charge = nonZero(growth !== undefined && quotaMatches(ev, quotas[i], req.oldObject!) ? growth : usage)
    if (charge.size > 0) charges.set(i, charge)
  }
  if (charges.size === 0) return quotas
  const out = quotas.slice()
  for (const [i, charge] of charges) {
    const q = out[i]
    const requested = maskList(charge, q.hard.keys())
    const used = addLists(q.used, requested)
    const exceeded = exceededNames(maskList(used, requested.keys()), q.hard)
    if (exceeded.length > 0) {
      return forbidden(req.gr, req.name, `exceeded quota: ${q.name}, requested: ${prettyPrint(maskList(requested, exceeded))}, used: ${prettyPrint(maskList(q.used, exceeded))}, limited: ${prettyPrint(maskList(q.hard, exceeded))}`)
    }
    out[i] = { ...q, used }
  }
  return out
}

function nonZero(l: ResourceList): ResourceList {
  const out: ResourceList = new Map()
  for (const [k, q] of l) if (q.mantissa !== 0n) out.set(k, q)
  return out
}

/** Whether two states of the same quotas differ in any usage. */
export function usageChanged(a: readonly QuotaState[], b: readonly QuotaState[]): boolean {
  if (a === b) return false
  for (let i = 0; i < a.length; i++) if (!equalLists(a[i].used, b[i].used)) return true
  return false
}

// ---- usage of a whole namespace (the quota controller) ----

/** Whether an object is in all of a quota's scopes, as the controller counts it (upstream CalculateUsageStats). */
export function inScopes(ev: Evaluator, scopes: readonly ScopeRequirement[], object: Obj): boolean {
  for (const s of scopes) if (!ev.matchesScope(s, object)) return false
  return true
}
