// APF concurrency: the server's limit shared into each level's nominal, lendable and borrowing limits, and the
// periodic re-balancing of current limits from seat demand (upstream apf_controller's borrowing).
import type { Obj } from '../../src/registry/define.js'
import { goRound, isFlowConfig, isObj, priorityLevelInfo, type FlowConfig, type PriorityLevelInfo } from './config.js'
import type { PriorityLevelKind } from './fair-queuing.js'
import type { IntegratorResults } from './measures.js'
import { priorityLevelMaxSeats } from './work-estimate.js'

/** Upstream defaults of --max-requests-inflight and --max-mutating-requests-inflight. */
export const DEFAULT_MAX_REQUESTS_INFLIGHT = 400
export const DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT = 200
/** How often CurrentCL values are re-balanced. */
export const BORROWING_ADJUSTMENT_PERIOD_MS = 10_000
export const SEAT_DEMAND_SMOOTHING = 0.977

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
