// APF configuration: digesting FlowSchemas and priority levels, classification, concurrency limits and borrowing, the config producer's plan, and FlowSchema status.
import type { Obj } from '../../src/registry/define.js'
import {
  AUTO_UPDATE_ANNOTATION, FLOW_SCHEMA_NAME_CATCH_ALL, FLOW_SCHEMA_NAME_EXEMPT, PRIORITY_LEVEL_NAME_CATCH_ALL, PRIORITY_LEVEL_NAME_EXEMPT,
  cloneJSON, mandatoryFlowSchemas, mandatoryPriorityLevels, suggestedFlowSchemas, suggestedPriorityLevels,
} from '../../src/registry/resources/flowcontrol.apiserver.orch.io/bootstrap.js'
import { specEqualish } from '../../src/registry/resources/flowcontrol.apiserver.orch.io/validation.js'
import { dealerProblem, flowHash } from './dealer.js'
import type { PriorityLevelKind } from './fair-queuing.js'
import type { IntegratorResults } from './measures.js'
import { priorityLevelMaxSeats } from './work-estimate.js'

export {
  AUTO_UPDATE_ANNOTATION, CONFIG_CONSUMER_FIELD_MANAGER, CONFIG_PRODUCER_FIELD_MANAGER,
  mandatoryFlowSchemas, mandatoryPriorityLevels, suggestedFlowSchemas, suggestedPriorityLevels,
} from '../../src/registry/resources/flowcontrol.apiserver.orch.io/bootstrap.js'

/** Upstream defaults of --max-requests-inflight and --max-mutating-requests-inflight. */
export const DEFAULT_MAX_REQUESTS_INFLIGHT = 400
export const DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT = 200
/** How often CurrentCL values are re-balanced. */
export const BORROWING_ADJUSTMENT_PERIOD_MS = 10_000
export const SEAT_DEMAND_SMOOTHING = 0.977

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }
function str(v: unknown): string { return typeof v === 'string' ? v : '' }
function strings(v: unknown): string[] { return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [] }
function numOrNull(v: unknown): number | null { return typeof v === 'number' ? v : null }
/** Go's math.Round: half away from zero. */
export function goRound(x: number): number { return x < 0 ? -Math.round(-x) : Math.round(x) }

// ---------------------------------------------------------------- priority levels

export interface PriorityLevelInfo {
  name: string
  /** metadata.uid; '' for an imagined mandatory level. */
  uid: string
  object: Obj
  /** A built-in copy standing in for a missing mandatory object. */
  imagined: boolean
  kind: PriorityLevelKind
  /** Queue levels only (0 otherwise). */
  queues: number
  handSize: number
  queueLengthLimit: number
  nominalConcurrencyShares: number
  lendablePercent: number | null
  borrowingLimitPercent: number | null
}

/** The facts of one PriorityLevelConfiguration (upstream plSpecCommons and the queuing config), or a reason it is unusable. */
export function priorityLevelInfo(pl: Obj, imagined = false): PriorityLevelInfo | string {
  const spec: Obj = isObj(pl.spec) ? pl.spec : {}
  const base = { name: str(pl.metadata?.name), uid: str(pl.metadata?.uid), object: pl, imagined, queues: 0, handSize: 0, queueLengthLimit: 0 }
  if (spec.type === 'Exempt') {
    const e: Obj = isObj(spec.exempt) ? spec.exempt : {}
    return { ...base, kind: 'Exempt', nominalConcurrencyShares: numOrNull(e.nominalConcurrencyShares) ?? 0, lendablePercent: numOrNull(e.lendablePercent), borrowingLimitPercent: null }
  }
  if (!isObj(spec.limited)) return `priority level ${base.name} has no limited configuration`
  const l = spec.limited
  const lr: Obj = isObj(l.limitResponse) ? l.limitResponse : {}
  const common = { nominalConcurrencyShares: numOrNull(l.nominalConcurrencyShares) ?? 0, lendablePercent: numOrNull(l.lendablePercent), borrowingLimitPercent: numOrNull(l.borrowingLimitPercent) }
  if (lr.type === 'Queue') {
    const q: Obj = isObj(lr.queuing) ? lr.queuing : {}
    const queues = numOrNull(q.queues) ?? 0
    const handSize = numOrNull(q.handSize) ?? 0
    const problem = dealerProblem(queues, handSize)
    if (problem !== undefined) return `the spec of priority level ${base.name} implies an invalid shuffle sharding config: ${problem}`
    return { ...base, ...common, kind: 'Queue', queues, handSize, queueLengthLimit: numOrNull(q.queueLengthLimit) ?? 0 }
  }
  return { ...base, ...common, kind: 'Reject' }
}

// ---------------------------------------------------------------- digest

export interface FlowConfig {
  /** In matching order (matchingPrecedence, then name), without dangling schemas, with missing mandatory ones supplied. */
  flowSchemas: Obj[]
  /** By name: the usable levels plus imagined mandatory ones. */
  priorityLevels: Map<string, PriorityLevelInfo>
  /** FlowSchemas ignored because their priority level does not exist. */
  dangling: Obj[]
  /** Levels ignored because their spec is unusable, with the reason. */
  brokenPriorityLevels: Array<{ name: string; reason: string }>
}

export function compareFlowSchemas(a: Obj, b: Obj): number {
  const pa = a.spec?.matchingPrecedence ?? 0
  const pb = b.spec?.matchingPrecedence ?? 0
  if (pa !== pb) return pa - pb
  const na = str(a.metadata?.name)
  const nb = str(b.metadata?.name)
  return na < nb ? -1 : na > nb ? 1 : 0
}

/** Upstream digestConfigObjects: sort the schemas, drop dangling ones, imagine missing mandatory objects. */
export function digestConfig(flowSchemas: readonly Obj[], priorityLevels: readonly Obj[]): FlowConfig {
  const levels = new Map<string, PriorityLevelInfo>()
  const broken: Array<{ name: string; reason: string }> = []
  for (const pl of priorityLevels) {
    const info = priorityLevelInfo(pl)
    if (typeof info === 'string') broken.push({ name: str(pl.metadata?.name), reason: info })
    else levels.set(info.name, info)
  }
  const seq: Obj[] = []
  const dangling: Obj[] = []
  let haveExempt = false
  let haveCatchAll = false
  for (const fs of flowSchemas) {
    const plName = str(fs.spec?.priorityLevelConfiguration?.name)
    if (!levels.has(plName)) { dangling.push(fs); continue }
    seq.push(fs)
    const name = str(fs.metadata?.name)
    haveExempt ||= name === FLOW_SCHEMA_NAME_EXEMPT
    haveCatchAll ||= name === FLOW_SCHEMA_NAME_CATCH_ALL
  }
  seq.sort(compareFlowSchemas)
  if (!haveExempt) seq.unshift(mandatoryFlowSchemas[0])
  if (!haveCatchAll) seq.push(mandatoryFlowSchemas[1])
  for (const mand of mandatoryPriorityLevels) {
    if (!levels.has(mand.metadata.name)) levels.set(mand.metadata.name, priorityLevelInfo(mand, true) as PriorityLevelInfo)
  }
  return { flowSchemas: seq, priorityLevels: levels, dangling, brokenPriorityLevels: broken }
}

// ---------------------------------------------------------------- classification

export interface UserLike { username: string; groups: readonly string[] }
export interface RequestInfoLike {
  isResourceRequest: boolean
  /** RequestInfo verb; the lower-case HTTP method for non-resource requests. */
  verb: string
  /** API group ('' = core). */
  group: string
  namespace: string
  resource: string
  subresource: string
  path: string
}
/** What classification looks at (upstream RequestDigest): the request info and the (impersonated) user. */
export interface RequestDigest { info: RequestInfoLike; user: UserLike }

export interface Classification {
  flowSchema: Obj
  priorityLevel: PriorityLevelInfo
  /** '' unless the level is a Queue level with more than one queue. */
  flowDistinguisher: string
  /** flowHash(schema, distinguisher), or 0n when the level does not shuffle-shard. */
  hash: bigint
}

/** `*` counts only as the sole element of a list (upstream containsString). */
function containsString(x: string, list: readonly string[], wildcard: string): boolean {
  if (list.length === 1 && list[0] === wildcard) return true
  return list.includes(x)
}

const SA_PREFIX = 'system:serviceaccount:'

export function matchesSubject(user: UserLike, subject: Obj): boolean {
  switch (subject.kind) {
    case 'User':
      return isObj(subject.user) && (subject.user.name === '*' || subject.user.name === user.username)
    case 'Group': {
      if (!isObj(subject.group)) return false
      const seek = subject.group.name
      return seek === '*' || user.groups.includes(seek)
    }
    case 'ServiceAccount': {
      if (!isObj(subject.serviceAccount)) return false
      const ns = str(subject.serviceAccount.namespace)
      const name = str(subject.serviceAccount.name)
      if (name === '*') return user.username.startsWith(`${SA_PREFIX}${ns}:`)
      return user.username === `${SA_PREFIX}${ns}:${name}`
    }
    default:
      return false
  }
}

export function matchesResourceRule(info: RequestInfoLike, rule: Obj): boolean {
  if (!containsString(info.verb, strings(rule.verbs), '*')) return false
  const rs = info.subresource === '' ? info.resource : `${info.resource}/${info.subresource}`
  if (!containsString(rs, strings(rule.resources), '*')) return false
  if (!containsString(info.group, strings(rule.apiGroups), '*')) return false
  if (info.namespace === '') return rule.clusterScope === true
  return containsString(info.namespace, strings(rule.namespaces), '*')
}

export function matchesNonResourceRule(info: RequestInfoLike, rule: Obj): boolean {
  if (!containsString(info.verb, strings(rule.verbs), '*')) return false
  for (const url of strings(rule.nonResourceURLs)) {
    if (url === '*' || url === info.path) return true
    let prefix = url.endsWith('*') ? url.slice(0, -1) : url
    if (!prefix.endsWith('/')) prefix += '/'
    if (info.path.startsWith(prefix)) return true
  }
  return false
}

export function matchesFlowSchema(fs: Obj, digest: RequestDigest): boolean {
  const rules = Array.isArray(fs.spec?.rules) ? fs.spec.rules as unknown[] : []
  for (const r of rules) {
    if (!isObj(r)) continue
    const subjects = Array.isArray(r.subjects) ? r.subjects as unknown[] : []
    if (!subjects.some((s) => isObj(s) && matchesSubject(digest.user, s))) continue
    const list = digest.info.isResourceRequest ? r.resourceRules : r.nonResourceRules
    if (!Array.isArray(list)) continue
    const match = digest.info.isResourceRequest ? matchesResourceRule : matchesNonResourceRule
    if ((list as unknown[]).some((rule) => isObj(rule) && match(digest.info, rule))) return true
  }
  return false
}

/** A list under APF's wildcard rule: null = everything (`*` as the sole element), else the literal members. */
function wildSet(v: unknown): Set<string> | null {
  const l = strings(v)
  return l.length === 1 && l[0] === '*' ? null : new Set(l)
}

interface CompiledResourceRule { verbs: Set<string> | null; resources: Set<string> | null; groups: Set<string> | null; clusterScope: boolean; namespaces: Set<string> | null }
interface CompiledNonResourceRule { verbs: Set<string> | null; all: boolean; exact: Set<string>; prefixes: string[] }
interface CompiledRule {
  anyone: boolean
  users: Set<string>
  groups: Set<string>
  /** Exact service-account user names, and `system:serviceaccount:<ns>:` prefixes of `*` subjects. */
  serviceAccounts: Set<string>
  serviceAccountPrefixes: string[]
  resourceRules: CompiledResourceRule[]
  nonResourceRules: CompiledNonResourceRule[]
}

/**
 * The FlowSchema as a matcher with the same answers as matchesFlowSchema, built once per configuration: sets instead
 * of list scans, no allocation per request (the front-end classifies every request against it).
 */
export function compileFlowSchema(fs: Obj): (digest: RequestDigest) => boolean {
  const rules: CompiledRule[] = []
  for (const r of Array.isArray(fs.spec?.rules) ? fs.spec.rules as unknown[] : []) {
    if (!isObj(r)) continue
    const c: CompiledRule = { anyone: false, users: new Set(), groups: new Set(), serviceAccounts: new Set(), serviceAccountPrefixes: [], resourceRules: [], nonResourceRules: [] }
    for (const sub of Array.isArray(r.subjects) ? r.subjects as unknown[] : []) {
      if (!isObj(sub)) continue
      if (sub.kind === 'User' && isObj(sub.user)) {
        if (sub.user.name === '*') c.anyone = true
        else if (typeof sub.user.name === 'string') c.users.add(sub.user.name)
      } else if (sub.kind === 'Group' && isObj(sub.group)) {
        if (sub.group.name === '*') c.anyone = true
        else if (typeof sub.group.name === 'string') c.groups.add(sub.group.name)
      } else if (sub.kind === 'ServiceAccount' && isObj(sub.serviceAccount)) {
        const ns = str(sub.serviceAccount.namespace)
        const name = str(sub.serviceAccount.name)
        if (name === '*') c.serviceAccountPrefixes.push(`${SA_PREFIX}${ns}:`)
        else c.serviceAccounts.add(`${SA_PREFIX}${ns}:${name}`)
      }
    }
    for (const rr of Array.isArray(r.resourceRules) ? r.resourceRules as unknown[] : []) {
      if (!isObj(rr)) continue
      c.resourceRules.push({ verbs: wildSet(rr.verbs), resources: wildSet(rr.resources), groups: wildSet(rr.apiGroups), clusterScope: rr.clusterScope === true, namespaces: wildSet(rr.namespaces) })
    }
    for (const nr of Array.isArray(r.nonResourceRules) ? r.nonResourceRules as unknown[] : []) {
      if (!isObj(nr)) continue
      const urls = strings(nr.nonResourceURLs)
      const prefixes = urls.map((u) => { const p = u.endsWith('*') ? u.slice(0, -1) : u; return p.endsWith('/') ? p : `${p}/` })
      c.nonResourceRules.push({ verbs: wildSet(nr.verbs), all: urls.includes('*'), exact: new Set(urls), prefixes })
    }
    rules.push(c)
  }
  const subjectMatches = (c: CompiledRule, user: UserLike): boolean => {
    if (c.anyone || c.users.has(user.username) || c.serviceAccounts.has(user.username)) return true
    if (c.groups.size > 0) for (const g of user.groups) if (c.groups.has(g)) return true
    for (const p of c.serviceAccountPrefixes) if (user.username.startsWith(p)) return true
    return false
  }
  return (digest: RequestDigest): boolean => {
    const info = digest.info
    for (const c of rules) {
      if (info.isResourceRequest) {
        if (c.resourceRules.length === 0 || !subjectMatches(c, digest.user)) continue
        const rs = info.subresource === '' ? info.resource : `${info.resource}/${info.subresource}`
        for (const rr of c.resourceRules) {
          if (rr.verbs !== null && !rr.verbs.has(info.verb)) continue
          if (rr.resources !== null && !rr.resources.has(rs)) continue
          if (rr.groups !== null && !rr.groups.has(info.group)) continue
          if (info.namespace === '' ? rr.clusterScope : rr.namespaces === null || rr.namespaces.has(info.namespace)) return true
        }
      } else {
        if (c.nonResourceRules.length === 0 || !subjectMatches(c, digest.user)) continue
        for (const nr of c.nonResourceRules) {
          if (nr.verbs !== null && !nr.verbs.has(info.verb)) continue
          if (nr.all || nr.exact.has(info.path)) return true
          for (const p of nr.prefixes) if (info.path.startsWith(p)) return true
        }
      }
    }
    return false
  }
}

/** The flow distinguisher of a request under a schema's distinguisherMethod. */
export function flowDistinguisher(fs: Obj, digest: RequestDigest): string {
  switch (fs.spec?.distinguisherMethod?.type) {
    case 'ByUser': return digest.user.username
    case 'ByNamespace': return digest.info.namespace
    default: return ''
  }
}

/**
 * Picks the first matching FlowSchema (matchingPrecedence, then name), falling back to catch-all, and the flow
 * within it. With raw arrays the configuration is digested first (priority levels default to the bootstrap ones).
 */
export function classify(config: FlowConfig, digest: RequestDigest): Classification
export function classify(flowSchemas: readonly Obj[], digest: RequestDigest, priorityLevels?: readonly Obj[]): Classification
export function classify(cfg: FlowConfig | readonly Obj[], digest: RequestDigest, priorityLevels?: readonly Obj[]): Classification {
  const config = Array.isArray(cfg) ? digestConfig(cfg, priorityLevels ?? [...mandatoryPriorityLevels, ...suggestedPriorityLevels]) : cfg as FlowConfig
  let selected: Obj | undefined
  let catchAll: Obj | undefined
  for (const fs of config.flowSchemas) {
    if (matchesFlowSchema(fs, digest)) { selected = fs; break }
    if (fs.metadata?.name === FLOW_SCHEMA_NAME_CATCH_ALL) catchAll = fs
  }
  selected ??= catchAll ?? mandatoryFlowSchemas[1]
  const pl = config.priorityLevels.get(str(selected.spec?.priorityLevelConfiguration?.name))
    ?? config.priorityLevels.get(PRIORITY_LEVEL_NAME_CATCH_ALL) as PriorityLevelInfo
  let distinguisher = ''
  let hash = 0n
  if (pl.kind === 'Queue' && pl.queues > 1) {
    distinguisher = flowDistinguisher(selected, digest)
    hash = flowHash(str(selected.metadata?.name), distinguisher)
  }
  return { flowSchema: selected, priorityLevel: pl, flowDistinguisher: distinguisher, hash }
}

// ---------------------------------------------------------------- concurrency limits

/** ServerCL: under APF only the sum of the two max-in-flight flags matters. */
export function serverConcurrencyLimit(maxRequestsInflight = DEFAULT_MAX_REQUESTS_INFLIGHT, maxMutatingRequestsInflight = DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT): number {
  return maxRequestsInflight + maxMutatingRequestsInflight
}

export interface ConcurrencyLimits {
  name: string
  kind: PriorityLevelKind
  /** ⌈ServerCL · NCS / ΣNCS⌉. */
  nominalCL: number
  /** round(NominalCL · lendablePercent / 100). */
  lendableCL: number
  /** round(NominalCL · borrowingLimitPercent / 100), or ServerCL when unset. */
  borrowingCL: number
  minCL: number
  maxCL: number
  /** CurrentCL of a newly created level: NominalCL − ⌊LendableCL / 2⌋. */
  initialCL: number
  /** Max seats per request for the work estimator (Queue levels); 0 = the global cap. */
  maxSeats: number
}

export interface ConcurrencyPlan {
  serverCL: number
  shareSum: number
  /** Σ NominalCL: what the borrowing solver hands out. */
  nominalCLSum: number
  levels: Map<string, ConcurrencyLimits>
}

/** Upstream finishQueueSetReconfigsLocked, for the given levels (PriorityLevelInfo, raw objects, or a digest). */
export function computeConcurrencyLimits(levels: FlowConfig | Iterable<PriorityLevelInfo | Obj>, serverCL: number): ConcurrencyPlan {
  const infos: PriorityLevelInfo[] = []
  const src: Iterable<PriorityLevelInfo | Obj> = isFlowConfig(levels) ? levels.priorityLevels.values() : levels
  for (const l of src) {
    if (isObj(l) && 'kind' in l && 'nominalConcurrencyShares' in l && 'object' in l) { infos.push(l as PriorityLevelInfo); continue }
    const info = priorityLevelInfo(l as Obj)
    if (typeof info !== 'string') infos.push(info)
  }
  let shareSum = 0
  for (const i of infos) shareSum += i.nominalConcurrencyShares
  const out = new Map<string, ConcurrencyLimits>()
  let nominalCLSum = 0
  for (const i of infos) {
    const nominalCL = shareSum > 0 ? Math.ceil(serverCL * i.nominalConcurrencyShares / shareSum) : 0
    const lendableCL = i.lendablePercent !== null ? goRound(nominalCL * i.lendablePercent / 100) : 0
    const borrowingCL = i.borrowingLimitPercent !== null ? goRound(nominalCL * i.borrowingLimitPercent / 100) : serverCL
    const maxSeats = i.kind === 'Queue' ? priorityLevelMaxSeats(nominalCL, i.handSize) : 0
    nominalCLSum += nominalCL
    out.set(i.name, {
      name: i.name, kind: i.kind, nominalCL, lendableCL, borrowingCL,
      minCL: nominalCL - lendableCL, maxCL: nominalCL + borrowingCL,
      initialCL: nominalCL - Math.floor(lendableCL / 2), maxSeats,
    })
  }
  return { serverCL, shareSum, nominalCLSum, levels: out }
}

function isFlowConfig(v: unknown): v is FlowConfig { return isObj(v) && v.priorityLevels instanceof Map && Array.isArray(v.flowSchemas) }

// ---------------------------------------------------------------- borrowing

export interface SeatDemandStats { avg: number; stdDev: number; highWatermark: number; smoothed: number }

export const ZERO_SEAT_DEMAND: SeatDemandStats = Object.freeze({ avg: 0, stdDev: 0, highWatermark: 0, smoothed: 0 })

/** Upstream seatDemandStats.update. */
export function updateSeatDemandStats(prev: SeatDemandStats, obs: IntegratorResults): SeatDemandStats {
  const highWatermark = goRound(obs.max)
  if (!(obs.duration > 0)) return { ...prev, highWatermark }
  const avg = Number.isNaN(obs.average) ? 0 : obs.average
  const stdDev = Number.isNaN(obs.deviation) ? 0 : obs.deviation
  const envelope = avg + stdDev
  const smoothed = Math.max(envelope, SEAT_DEMAND_SMOOTHING * prev.smoothed + (1 - SEAT_DEMAND_SMOOTHING) * envelope)
  return { avg, stdDev, highWatermark, smoothed }
}

export interface BorrowingInput {
  name: string
  exempt: boolean
  nominalCL: number
  minCL: number
  maxCL: number
  /** The level's CurrentCL now (kept if the solver fails). */
  currentCL: number
  /** Stats after the previous period (ZERO_SEAT_DEMAND for a new level). */
  stats: SeatDemandStats
  /** The seat demand integrated over the period just ended (QueueSet.takeSeatDemand()). */
  observation: IntegratorResults
}

export interface BorrowingOutcome {
  name: string
  currentCL: number
  stats: SeatDemandStats
  lowerBound: number
  upperBound: number
  target: number
}

export interface BorrowingResult {
  levels: BorrowingOutcome[]
  /** The fair share proportion of the solver (0 when the budget only covers the lower bounds). */
  fairFrac: number
  /** Set when the solver failed and the previous CurrentCL values were kept. */
  error?: string
}

/** Upstream updateBorrowingLocked: new CurrentCL values from the seat demand of the last period. */
export function adjustBorrowing(inputs: readonly BorrowingInput[], nominalCLSum: number): BorrowingResult {
  const stats = inputs.map((l) => updateSeatDemandStats(l.stats, l.observation))
  const items: AllocItem[] = []
  const itemIndex = new Array<number>(inputs.length).fill(-1)
  const minCurrent = new Array<number>(inputs.length).fill(0)
  let remaining = nominalCLSum
  let minCLSum = 0
  let minCurrentCLSum = 0
  inputs.forEach((l, i) => {
    const hwm = stats[i].highWatermark
    if (l.exempt) {
      minCurrent[i] = Math.max(l.minCL, hwm)
      remaining -= minCurrent[i]
    } else {
      minCurrent[i] = Math.max(l.minCL, Math.min(l.nominalCL, hwm))
      itemIndex[i] = items.length
      items.push({ lowerBound: minCurrent[i], upperBound: l.maxCL, target: Math.max(minCurrent[i], stats[i].smoothed) })
      minCLSum += l.minCL
      minCurrentCLSum += minCurrent[i]
    }
  })
  const outcome = (i: number, currentCL: number): BorrowingOutcome => {
    const it = itemIndex[i] >= 0 ? items[itemIndex[i]] : { lowerBound: minCurrent[i], upperBound: inputs[i].maxCL, target: minCurrent[i] }
    return { name: inputs[i].name, currentCL, stats: stats[i], lowerBound: it.lowerBound, upperBound: it.upperBound, target: it.target }
  }
  if (items.length === 0 && nominalCLSum > 0) {
    return { levels: inputs.map((l, i) => outcome(i, l.exempt ? minCurrent[i] : l.currentCL)), fairFrac: 0, error: 'no priority levels' }
  }
  let allocs: number[] = []
  let fairFrac = 0
  let shareFrac = 0
  let error: string | undefined
  if (remaining <= minCLSum) {
    // every limited level gets its minCL
  } else if (remaining <= minCurrentCLSum) {
    shareFrac = (remaining - minCLSum) / (minCurrentCLSum - minCLSum)
  } else {
    const solved = computeConcurrencyAllocation(nominalCLSum, items)
    if (typeof solved === 'string') {
      error = solved
      allocs = inputs.filter((l) => !l.exempt).map((l) => l.currentCL)
    } else {
      allocs = solved.allocs
      fairFrac = solved.fairProp
    }
  }
  const levels = inputs.map((l, i) => {
    let currentCL: number
    if (l.exempt) currentCL = minCurrent[i]
    else if (remaining <= minCLSum) currentCL = l.minCL
    else if (remaining <= minCurrentCLSum) currentCL = l.minCL + goRound((minCurrent[i] - l.minCL) * shareFrac)
    else currentCL = goRound(allocs[itemIndex[i]])
    return outcome(i, currentCL)
  })
  const result: BorrowingResult = { levels, fairFrac }
  if (error !== undefined) result.error = error
  return result
}

export interface AllocItem { target: number; lowerBound: number; upperBound: number }

const MIN_TARGET = 0.001
const EPSILON = 0.0000001

/**
 * Upstream computeConcurrencyAllocation: allocations summing to requiredSum with one fair proportion p such that
 * each alloc is clamp(p · target, lower, upper). Returns a reason string when impossible.
 */
export function computeConcurrencyAllocation(requiredSum: number, classes: readonly AllocItem[]): { allocs: number[]; fairProp: number } | string {
  if (requiredSum < 0) return 'negative sums are not supported'
  let lowSum = 0
  let highSum = 0
  let targetSum = 0
  let lbMin = Infinity
  let lbMax = -Infinity
  let ubMin = Infinity
  let ubMax = -Infinity
  const rel: Array<{ target: number; lo: number; hi: number }> = []
  for (let idx = 0; idx < classes.length; idx++) {
    const item = classes[idx]
    if (item.lowerBound < 0) return `lower bound ${idx} is ${item.lowerBound} but negative lower bounds are not allowed`
    if (item.target < item.lowerBound) return `target ${idx} is ${item.target}, which is below its lower bound of ${item.lowerBound}`
    if (item.upperBound < item.lowerBound) return `upper bound ${idx} is ${item.upperBound} but should not be less than the lower bound ${item.lowerBound}`
    const target = item.target < MIN_TARGET ? MIN_TARGET : item.target
    lowSum += item.lowerBound
    highSum += item.upperBound
    targetSum += target
    const r = { target, lo: item.lowerBound / target, hi: item.upperBound / target }
    ubMin = Math.min(ubMin, r.hi); ubMax = Math.max(ubMax, r.hi)
    lbMin = Math.min(lbMin, r.lo); lbMax = Math.max(lbMax, r.lo)
    rel.push(r)
  }
  if (lbMax > 1) return `lbRange.max-1=${lbMax - 1}, which is impossible because lbRange.max can not be greater than 1`
  if (lowSum - requiredSum > EPSILON) return `lower bounds sum to ${lowSum}, which is higher than the required sum of ${requiredSum}`
  if (requiredSum - highSum > EPSILON) return `upper bounds sum to ${highSum}, which is lower than the required sum of ${requiredSum}`
  const ans = new Array<number>(classes.length).fill(0)
  if (requiredSum === 0) return { allocs: ans, fairProp: 0 }
  if (lowSum - requiredSum > -EPSILON) return { allocs: classes.map((c) => c.lowerBound), fairProp: lbMin }
  if (requiredSum - highSum > -EPSILON) return { allocs: classes.map((c) => c.upperBound), fairProp: ubMax }
  let fairProp = requiredSum / targetSum
  if (lbMax <= fairProp && fairProp <= ubMin) return { allocs: rel.map((r) => r.target * fairProp), fairProp }
  // Some bounds matter: walk the sorted bounds, raising fairProp from the smallest lower bound.
  const bounds: Array<{ value: number; item: number; lower: boolean }> = []
  rel.forEach((r, i) => { bounds.push({ value: r.lo, item: i, lower: true }); bounds.push({ value: r.hi, item: i, lower: false }) })
  bounds.sort((a, b) => a.value - b.value)
  let sumSoFar = lowSum
  fairProp = lbMin
  let sensitiveTargetSum = 0
  let deltaSensitiveTargetSum = 0
  let numSensitive = 0
  let deltaSensitive = 0
  let next = 0
  while (sumSoFar < requiredSum) {
    let nextBound: number
    for (;;) {
      sensitiveTargetSum += deltaSensitiveTargetSum
      numSensitive += deltaSensitive
      if (next >= bounds.length) return 'impossible: ran out of bounds to consider in bound-constrained problem'
      const b = bounds[next]
      nextBound = b.value
      deltaSensitive = b.lower ? 1 : -1
      deltaSensitiveTargetSum = b.lower ? rel[b.item].target : -rel[b.item].target
      next++
      if (nextBound > fairProp) break
    }
    if (numSensitive === 0) { fairProp = nextBound; continue }
    const nextProp = fairProp + (requiredSum - sumSoFar) / sensitiveTargetSum
    if (nextProp <= nextBound) { fairProp = nextProp; break }
    sumSoFar += (nextBound - fairProp) * sensitiveTargetSum
    fairProp = nextBound
  }
  return { allocs: classes.map((c, i) => Math.max(c.lowerBound, Math.min(c.upperBound, fairProp * rel[i].target))), fairProp }
}

// ---------------------------------------------------------------- config producer (auto-update annotation)

/** Go strconv.ParseBool. */
export function parseGoBool(v: unknown): boolean | undefined {
  switch (v) {
    case '1': case 't': case 'T': case 'true': case 'TRUE': case 'True': return true
    case '0': case 'f': case 'F': case 'false': case 'FALSE': case 'False': return false
    default: return undefined
  }
}

function annotationOf(o: Obj): string | undefined {
  const a = o.metadata?.annotations
  return isObj(a) && typeof a[AUTO_UPDATE_ANNOTATION] === 'string' ? a[AUTO_UPDATE_ANNOTATION] : undefined
}

/** The annotation if it parses; otherwise auto-update only objects the operator has not changed (generation 1). */
export function shouldUpdateSpec(o: Obj): boolean {
  const parsed = parseGoBool(annotationOf(o))
  if (parsed !== undefined) return parsed
  return o.metadata?.generation === 1
}

function bootstrapSpecEqualish(kind: 'FlowSchema' | 'PriorityLevelConfiguration', bootstrap: Obj, actual: Obj): boolean {
  if (kind === 'PriorityLevelConfiguration' && bootstrap.metadata.name === PRIORITY_LEVEL_NAME_EXEMPT) {
    // Operators may tune the exempt level's nominalConcurrencyShares and lendablePercent.
    if (!isObj(actual.spec?.exempt)) return false
    const expected = cloneJSON(bootstrap.spec) as Obj
    expected.exempt.nominalConcurrencyShares = actual.spec.exempt.nominalConcurrencyShares
    expected.exempt.lendablePercent = actual.spec.exempt.lendablePercent
    return specEqualish(expected, actual.spec)
  }
  return specEqualish(bootstrap.spec, actual.spec)
}

/**
 * Upstream ensurer ReviseIfNeeded: the updated object when the spec must be stomped back to the bootstrap value
 * and/or the auto-update annotation must be (re)written; undefined when nothing is to be done.
 */
export function reviseIfNeeded(kind: 'FlowSchema' | 'PriorityLevelConfiguration', current: Obj, bootstrap: Obj, mandatory: boolean): Obj | undefined {
  const autoUpdate = mandatory || shouldUpdateSpec(current)
  const updateAnnotation = parseGoBool(annotationOf(current)) !== autoUpdate
  const specChanged = autoUpdate && !bootstrapSpecEqualish(kind, bootstrap, current)
  if (!updateAnnotation && !specChanged) return undefined
  const revised = cloneJSON(current)
  if (specChanged) revised.spec = cloneJSON(bootstrap.spec)
  if (updateAnnotation) {
    revised.metadata ??= {}
    revised.metadata.annotations = { ...(isObj(revised.metadata.annotations) ? revised.metadata.annotations : {}), [AUTO_UPDATE_ANNOTATION]: String(autoUpdate) }
  }
  return revised
}

export interface ProducerPlan {
  /** Bootstrap objects to create (with apiVersion and kind). */
  create: Obj[]
  /** Existing objects revised (spec and/or annotation), to be written with an update. */
  update: Obj[]
  /** Auto-updated objects that are no longer bootstrap objects. */
  delete: Array<{ kind: 'FlowSchema' | 'PriorityLevelConfiguration'; name: string }>
}

/**
 * One pass of the config producer: ensure suggested objects (levels, then schemas), ensure mandatory ones, then
 * delete auto-updated objects that are no longer bootstrap objects (schemas, then levels).
 */
export function planConfigProducer(flowSchemas: readonly Obj[], priorityLevels: readonly Obj[]): ProducerPlan {
  const plan: ProducerPlan = { create: [], update: [], delete: [] }
  const byName = (list: readonly Obj[]): Map<string, Obj> => new Map(list.map((o) => [str(o.metadata?.name), o]))
  const fsByName = byName(flowSchemas)
  const plByName = byName(priorityLevels)
  const ensure = (kind: 'FlowSchema' | 'PriorityLevelConfiguration', existing: Map<string, Obj>, bootstrap: readonly Obj[], mandatory: boolean): void => {
    for (const b of bootstrap) {
      const current = existing.get(b.metadata.name)
      if (current === undefined) { plan.create.push(cloneJSON(b)); continue }
      const revised = reviseIfNeeded(kind, current, b, mandatory)
      if (revised !== undefined) plan.update.push(revised)
    }
  }
  ensure('PriorityLevelConfiguration', plByName, suggestedPriorityLevels, false)
  ensure('FlowSchema', fsByName, suggestedFlowSchemas, false)
  ensure('PriorityLevelConfiguration', plByName, mandatoryPriorityLevels, true)
  ensure('FlowSchema', fsByName, mandatoryFlowSchemas, true)
  const unwanted = (kind: 'FlowSchema' | 'PriorityLevelConfiguration', list: readonly Obj[], bootstrap: readonly Obj[]): void => {
    const names = new Set(bootstrap.map((b) => b.metadata.name as string))
    for (const o of list) {
      const name = str(o.metadata?.name)
      if (names.has(name)) continue
      if (parseGoBool(annotationOf(o)) === true) plan.delete.push({ kind, name })
    }
  }
  unwanted('FlowSchema', flowSchemas, [...suggestedFlowSchemas, ...mandatoryFlowSchemas])
  unwanted('PriorityLevelConfiguration', priorityLevels, [...suggestedPriorityLevels, ...mandatoryPriorityLevels])
  return plan
}

// ---------------------------------------------------------------- FlowSchema status

export interface Condition { type: string; status: string; lastTransitionTime?: string; reason?: string; message?: string }

function plNameSet(pls: readonly Obj[] | ReadonlySet<string> | FlowConfig): ReadonlySet<string> {
  if (isFlowConfig(pls)) return new Set([...pls.priorityLevels.values()].filter((l) => !l.imagined).map((l) => l.name))
  if (Array.isArray(pls)) return new Set((pls as readonly Obj[]).map((p) => str(p.metadata?.name)))
  return pls as ReadonlySet<string>
}

function rfc3339(now: string | Date | undefined): string {
  const d = now === undefined ? new Date() : typeof now === 'string' ? new Date(now) : now
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z')
}

/**
 * The Dangling condition the config consumer keeps on a FlowSchema, and whether it differs from the one the
 * object carries (status, reason or message). lastTransitionTime is `now` for a change, else the old value.
 */
export function danglingCondition(fs: Obj, pls: readonly Obj[] | ReadonlySet<string> | FlowConfig, now?: string | Date): { condition: Condition; changed: boolean } {
  const plName = str(fs.spec?.priorityLevelConfiguration?.name)
  const dangling = !plNameSet(pls).has(plName)
  const status = dangling ? 'True' : 'False'
  const reason = dangling ? 'NotFound' : 'Found'
  const message = dangling
    ? `This FlowSchema references the PriorityLevelConfiguration object named ${JSON.stringify(plName)} but there is no such object`
    : `This FlowSchema references the PriorityLevelConfiguration object named ${JSON.stringify(plName)} and it exists`
  const old = (Array.isArray(fs.status?.conditions) ? fs.status.conditions as Obj[] : []).find((c) => isObj(c) && c.type === 'Dangling')
  if (old !== undefined && old.status === status && old.reason === reason && old.message === message) {
    return { condition: { type: 'Dangling', status, lastTransitionTime: old.lastTransitionTime, reason, message }, changed: false }
  }
  return { condition: { type: 'Dangling', status, lastTransitionTime: rfc3339(now), reason, message }, changed: true }
}

/** The FlowSchema's status.conditions with the Dangling condition brought up to date (others kept). */
export function statusConditions(fs: Obj, pls: readonly Obj[] | ReadonlySet<string> | FlowConfig, now?: string | Date): { conditions: Condition[]; changed: boolean } {
  const { condition, changed } = danglingCondition(fs, pls, now)
  const existing = Array.isArray(fs.status?.conditions) ? (fs.status.conditions as Obj[]).filter(isObj) : []
  const conditions: Condition[] = []
  let placed = false
  for (const c of existing) {
    if (c.type === 'Dangling') { if (!placed) { conditions.push(condition); placed = true } continue }
    conditions.push(c as Condition)
  }
  if (!placed) conditions.push(condition)
  return { conditions, changed }
}
