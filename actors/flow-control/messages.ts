// Messages and shared counters of the flow-control actor: the seat counters every thread shares, and the port protocol.

/** Int32 slots of the shared seat counters: requests in flight by class (max-in-flight mode). */
export const READONLY_SLOT = 0
export const MUTATING_SLOT = 1

/**
 * APF: per priority level, a group of Int32 slots in the same array (the level's index is handed out by the actor
 * and travels with the configuration replica). Levels 0 and 1 are always `exempt` and `catch-all`.
 */
export const APF_BASE = 4
export const MAX_LEVELS = 512
/** 16 Int32 = 64 bytes: one cache line per level, so front-ends updating different levels do not contend. */
export const LEVEL_STRIDE = 16
/** Seats in use on the level: fast-path seats taken by front-ends plus seats of requests the actor dispatched. */
export const L_IN_USE = 0
/** CurrentCL of the level; UNLIMITED for exempt levels (and for every level when ServerCL is 0). */
export const L_LIMIT = 1
/** Requests waiting in the actor's queues: while > 0 a front-end never takes a seat itself. */
export const L_WAITING = 2
export const UNLIMITED = -1

export const SEAT_SLOTS = APF_BASE + MAX_LEVELS * LEVEL_STRIDE

export const LEVEL_EXEMPT = 0
export const LEVEL_CATCH_ALL = 1

export function levelSlot(level: number, field: number): number { return APF_BASE + level * LEVEL_STRIDE + field }

// ---------------------------------------------------------------- front-end → actor

/** A request that found no free seat (or waiters ahead of it): queue it. Answered by a Decision with the same id. */
export interface EnqueueMsg {
  op: 'enqueue'
  id: number
  level: number
  /** FlowSchema name and flow distinguisher (the actor hashes them). */
  fs: string
  fd: string
  /** Initial seats, final seats and their additional latency (ms). */
  seats: number
  finalSeats: number
  latencyMs: number
}
/** The request dispatched for `id` is done (its seats were already given back to the shared counter). */
export interface FinishMsg { op: 'finish'; id: number }
/** The client of a waiting request went away. */
export interface CancelMsg { op: 'cancel'; id: number }
/** Fast-path seats were given back on these levels, which have waiters: dispatch what now fits. */
export interface KickMsg { op: 'kick'; levels: number[] }
/**
 * Counters of a front-end's own decisions since its last report (fast path and local rejections), and its watches
 * by what they watch when they changed (`group/resource/namespace/name` → count; see WatchCounts).
 */
export interface ReportMsg { op: 'report'; counts: LocalCounts[]; watches?: Array<[string, number]> }
/** Ask for the current metrics (answered by a Metrics reply with the same id). */
export interface MetricsMsg { op: 'metrics'; id: number }
/** Answered once the configuration reflects every FlowSchema and level write up to resourceVersion `rv`. */
export interface SyncMsg { op: 'sync'; id: number; rv: number }

/** A debug dump (answered by a DumpReply with the same id): the actor asks every front-end for its requests first. */
export interface DumpMsg { op: 'dump'; id: number; what: DumpKind; details: boolean }
/** A front-end's answer to the actor's collect request `id`: its flow-controlled requests in flight. */
export interface CollectedMsg { op: 'collected'; id: number; entries: InflightEntry[] }

export type FlowMsg = EnqueueMsg | FinishMsg | CancelMsg | KickMsg | ReportMsg | MetricsMsg | SyncMsg | DumpMsg | CollectedMsg

/** The three debug endpoints of upstream: /debug/api_priority_and_fairness/dump_<kind>. */
export type DumpKind = 'priority_levels' | 'queues' | 'requests'

/**
 * A request a front-end holds under APF: `ticket` 0 for one that took its seats itself (fast path or exempt), else
 * its actor ticket (waiting or dispatched by the actor). Times in milliseconds since the epoch (start 0: not yet).
 */
export interface InflightEntry {
  ticket: number
  level: number
  fs: string
  fd: string
  arrive: number
  start: number
  seats: number
  finalSeats: number
  latencyMs: number
  /** With includeRequestDetails: user, verb, path, namespace, name, apiVersion, resource, subresource. */
  details?: string[]
}

export interface LocalCounts {
  level: string
  fs: string
  dispatched: number
  /** Rejections decided by the front-end (Reject levels): concurrency-limit. */
  rejected: number
}

// ---------------------------------------------------------------- actor → front-end

export type DecisionKind = 'dispatched' | 'rejected' | 'timeout' | 'cancelled'
/** A dispatched write with final seats says what it got (the final seats narrowed to the limit, the latency stretched). */
export interface Decision {
  id: number
  d: DecisionKind
  reason?: string
  retryAfter?: number
  finalSeats?: number
  latencyMs?: number
  /** Milliseconds the request waited in its queue at the actor (the rest of the stage is the trip there and back). */
  queuedMs?: number
  /**
   * The seats were taken outside any queue set (the level stopped queueing): the front-end gives them back itself, as
   * for its fast path. Otherwise the queue set that dispatched the request gives them back when it learns the finish.
   */
  own?: true
}
export interface MetricsReply { id: number; metrics: FlowMetrics }
export interface SyncReply { id: number; rv: number }
export interface DumpReply { id: number; text: string }

/** The replica of the configuration a front-end classifies against. */
export interface ConfigReplica {
  generation: number
  /** ServerCL is 0: classify and label, never limit. */
  unlimited: boolean
  /** FlowSchemas in matching order (precedence, then name), dangling ones left out, as JSON. */
  flowSchemas: string
  levels: LevelReplica[]
}

export interface LevelReplica {
  name: string
  uid: string
  index: number
  kind: 'Exempt' | 'Reject' | 'Queue'
  /** Queue levels: queues (a flow distinguisher matters only when > 1) and max seats per request. */
  queues: number
  maxSeats: number
}

export interface ActorOut {
  replies?: Array<Decision | MetricsReply | SyncReply | DumpReply>
  config?: ConfigReplica
  /** Collect requests: answer each with a CollectedMsg (with request details when asked). */
  collect?: Array<{ id: number; details: boolean }>
  /** The watches of every front-end together, when they changed (the width of writes depends on them). */
  watchCounts?: Array<[string, number]>
}

/**
 * The key of a set of similar watches (upstream's watch tracker): `group/resource/namespace/name`, namespace and name
 * empty when the watch spans them.
 */
export function watchKey(group: string, resource: string, namespace: string, name: string): string {
  return `${group}/${resource}/${namespace}/${name}`
}

// ---------------------------------------------------------------- metrics

export interface FlowSchemaCounters {
  dispatched: number
  rejected: Record<string, number>
  inQueue: number
  executingSeats: number
  waitDuration: { buckets: readonly number[]; cumulative: number[]; sum: number; count: number }
}

export interface LevelMetrics {
  name: string
  kind: string
  nominalCL: number
  lendableCL: number
  currentCL: number
  seatsInUse: number
  inQueue: number
  seatsInQueue: number
  dispatched: number
  rejected: Record<string, number>
  retryAfter: number
  flowSchemas: Record<string, FlowSchemaCounters>
  /** Seats held for flows that just finished (--priority-and-fairness-seat-hold): taken, used by the flow, run out. */
  holds: { taken: number; used: number; expired: number }
}

export interface FlowMetrics {
  serverCL: number
  levels: LevelMetrics[]
  /** The max-in-flight counters (--enable-priority-and-fairness=false). */
  maxInFlight: { readonly: number; mutating: number; rejected: number }
}
