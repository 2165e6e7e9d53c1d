// APF configuration digested: each priority level's facts, and the FlowSchemas in matching order with the levels they
// use. Built on it: classify.ts (which schema and level a request gets), concurrency.ts (concurrency limits and
// borrowing), producer.ts (the config producer's plan and FlowSchema status).
import type { Obj } from '../../src/registry/define.js'
import {
  FLOW_SCHEMA_NAME_CATCH_ALL, FLOW_SCHEMA_NAME_EXEMPT, mandatoryFlowSchemas, mandatoryPriorityLevels,
} from '../../src/registry/resources/flowcontrol.apiserver.orch.io/bootstrap.js'
import { dealerProblem } from './dealer.js'
import type { PriorityLevelKind } from './fair-queuing.js'

export {
  AUTO_UPDATE_ANNOTATION, CONFIG_CONSUMER_FIELD_MANAGER, CONFIG_PRODUCER_FIELD_MANAGER,
  mandatoryFlowSchemas, mandatoryPriorityLevels, suggestedFlowSchemas, suggestedPriorityLevels,
} from '../../src/registry/resources/flowcontrol.apiserver.orch.io/bootstrap.js'

// Readers of the untyped objects' fields, for this file and the ones built on it (classify, concurrency, producer).
export function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }
export function str(v: unknown): string { return typeof v === 'string' ? v : '' }
export function strings(v: unknown): string[] { return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [] }
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

/** Whether a value is a digested configuration rather than a list of objects. */
export function isFlowConfig(v: unknown): v is FlowConfig { return isObj(v) && v.priorityLevels instanceof Map && Array.isArray(v.flowSchemas) }

