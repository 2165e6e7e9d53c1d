// The queue set of one priority level (upstream fairqueuing/queueset). The width of a request is work-estimate.ts; the
// clock, seat-second units, seat-demand integrator and wait histogram it measures with are measures.ts.
import { Dealer } from './dealer.js'
import type { WorkEstimate } from './work-estimate.js'
import { SeatHolds } from './seat-holds.js'
import { SS_SCALE, seatsTimesMs, ssToSeatSeconds, Histogram, SeatDemandIntegrator, realClock, type Clock, type IntegratorResults } from './measures.js'

// ---------------------------------------------------------------- queue set constants

/** Upstream's fixed estimated service time G of the initial phase. */
export const ESTIMATED_SERVICE_MS = 3
/** Without a request deadline the wait limit is RequestTimeout/4 = 15 s; with one, min(remaining/4, 1 min). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000
export const MAX_WAIT_LIMIT_MS = 60_000

/** R is wound back by R_DECREMENT once it reaches HIGH_R, keeping every reading an exact integer. */
const R_DECREMENT = 2 ** 51
const HIGH_R = 2 ** 51 + 2 ** 50

// ---------------------------------------------------------------- queue set

export type PriorityLevelKind = 'Exempt' | 'Reject' | 'Queue'
export type Decision = 'dispatched' | 'rejected' | 'timeout' | 'cancelled'
/** Upstream's reject reasons: no room in the queue, no seat on a Reject level, the wait limit, the client went away while queued. */
export type RejectReason = 'queue-full' | 'concurrency-limit' | 'time-out' | 'cancelled'
export type DecisionCallback = (decision: Decision, reason?: RejectReason) => void
export type RequestState = 'waiting' | 'executing' | 'lingering' | 'done' | 'rejected' | 'timeout' | 'cancelled'

export interface QueueSetConfig {
  /** The priority level name (metrics label). */
  name: string
  kind: PriorityLevelKind
  /** CurrentCL: the dispatch limit in seats. */
  concurrencyLimit: number
  /** Queue kind only. */
  queues?: number
  handSize?: number
  queueLengthLimit?: number
}

/**
 * Seats of a level that are also taken outside the queue set (the front-ends' fast path, through shared counters).
 * With it, every admission check reads the shared total instead of the queue set's own count.
 */
export interface SharedSeats {
  /** Every seat in use on the level, including those of requests this queue set dispatched. */
  inUse(): number
  /** This queue set dispatched a request: add its seats to the shared total. */
  take(seats: number): void
  /**
   * A request this queue set dispatched gave its seats back (at finish, or after its final phase): they leave the
   * shared total here, not where the request ran, so no seat is seen free before the queue set knows whose it was.
   */
  give(seats: number): void
}

export interface QueueSetOptions {
  clock?: Clock
  /** Shared seat counters of the level (see SharedSeats); without it the queue set counts only its own requests. */
  sharedSeats?: SharedSeats
  /** Used for the wait limit of requests without a deadline (limit = requestTimeoutMs / 4). */
  requestTimeoutMs?: number
  /** Called when a decision callback throws (the queue set carries on). */
  onCallbackError?: (err: unknown) => void
  /**
   * How long (ms) a seat stays held for a flow whose request just ended, while other flows wait (0: never; see
   * the hold rule of seat-holds.ts). Default 0.
   */
  holdMs?: number
  /** Called after a timer (a wait limit, the end of a final phase or of a hold) changed the queues. */
  afterTimer?: () => void
}

export interface FlowRequest {
  flowSchema: string
  flowDistinguisher?: string
  /** flowHash(flowSchema, distinguisher), or 0 when the level does not shuffle-shard. */
  hash?: bigint | number
  /** Seats, or the full estimate from estimateWidth (default 1 seat). */
  width?: number | Partial<WorkEstimate>
  /** Clock time (ms) by which the whole request must be done: the wait limit is min((deadline-now)/4, 1 min). */
  deadline?: number
  /** An explicit wait limit (ms), overriding the deadline rule. */
  waitLimitMs?: number
}

export interface RequestStatus {
  state: RequestState
  reason?: RejectReason
  queue?: number
  /** Seats held while executing (0 before dispatch). */
  seats: number
  waitedMs: number
}

/** One request in a dump: times in the queue set's clock (ms); startTime is unset while it waits. */
export interface RequestDump {
  req: FlowRequest
  arrivalTime: number
  startTime: number | undefined
  initialSeats: number
  finalSeats: number
  additionalLatencyMs: number
}

export interface QueueDump {
  index: number
  /** Waiting requests in queue order, and those dispatched from this queue that still execute. */
  waiting: RequestDump[]
  executing: RequestDump[]
  executingRequests: number
  seatsInUse: number
  /** Seat-second units (SS_SCALE per seat-second), as are the work sums. */
  nextDispatchR: number
  initialSeatsSum: number
  maxSeatsSum: number
  totalWorkSum: number
}

export interface QueueSetDump {
  queues: QueueDump[]
  waiting: number
  executing: number
  dispatched: number
  rejected: RejectCounts
}

export interface RejectCounts { 'queue-full': number; 'concurrency-limit': number; 'time-out': number; 'cancelled': number }

export interface FlowSchemaMetrics {
  dispatched: number
  rejected: RejectCounts
  waitingRequests: number
  waitingSeats: number
  executingRequests: number
  executingSeats: number
  /** Wait durations (seconds) of requests that went on to execute / that did not. */
  waitExecuted: { buckets: readonly number[]; cumulative: number[]; sum: number; count: number }
  waitRejected: { buckets: readonly number[]; cumulative: number[]; sum: number; count: number }
}

export interface QueueSetMetrics {
  priorityLevel: string
  kind: PriorityLevelKind
  concurrencyLimit: number
  queues: number
  requestsWaiting: number
  requestsExecuting: number
  seatsWaiting: number
  seatsInUse: number
  /** Virtual time R in seat-seconds. */
  currentR: number
  dispatched: number
  rejected: RejectCounts
  epochAdvances: number
  dispatchNoAccommodation: number
  flowSchemas: Record<string, FlowSchemaMetrics>
}

class Counters {
  dispatched = 0
  rejected: RejectCounts = { 'queue-full': 0, 'concurrency-limit': 0, 'time-out': 0, 'cancelled': 0 }
  waitingRequests = 0
  waitingSeats = 0
  executingRequests = 0
  executingSeats = 0
  readonly waitExecuted = new Histogram()
  readonly waitRejected = new Histogram()
}

class Entry {
  readonly req: FlowRequest
  readonly flowSchema: string
  readonly counters: Counters
  readonly initialSeats: number
  finalSeats: number
  additionalLatencyMs: number
  /** max(initial, final) at arrival: what the request asks for while it waits. */
  readonly waitSeats: number
  /** Seats held once dispatched (the final seats may have been clamped to the limit). */
  seats = 0
  readonly initialWork: number
  readonly finalWork: number
  readonly totalWork: number
  readonly arrivalTime: number
  arrivalR: number
  startTime = 0
  decidedAt = 0
  queue: Queue | null = null
  state: RequestState = 'waiting'
  reason: RejectReason | undefined = undefined
  timer: unknown = undefined
  onDecision: DecisionCallback | undefined = undefined

  constructor(req: FlowRequest, counters: Counters, now: number, r: number) {
    this.req = req
    this.flowSchema = req.flowSchema
    this.counters = counters
    const w = req.width
    if (typeof w === 'number' || w === undefined) {
      this.initialSeats = Math.max(1, Math.ceil(w ?? 1))
      this.finalSeats = 0
      this.additionalLatencyMs = 0
    } else {
      this.initialSeats = Math.max(1, Math.ceil(w.initialSeats ?? 1))
      this.finalSeats = Math.max(0, Math.ceil(w.finalSeats ?? 0))
      this.additionalLatencyMs = this.finalSeats > 0 ? Math.max(0, w.additionalLatencyMs ?? 0) : 0
    }
    this.waitSeats = Math.max(this.initialSeats, this.finalSeats)
    this.initialWork = seatsTimesMs(this.initialSeats, ESTIMATED_SERVICE_MS)
    this.finalWork = seatsTimesMs(this.finalSeats, this.additionalLatencyMs)
    this.totalWork = this.initialWork + this.finalWork
    this.arrivalTime = now
    this.arrivalR = r
  }
}

class Queue {
  index: number
  readonly waiting: Entry[] = []
  /** Sums over the waiting requests: total work (seat-second units) and max seats. */
  workSum = 0
  seatsSum = 0
  executing = 0
  /** The requests dispatched from this queue that still execute (for the debug dump). */
  readonly running = new Set<Entry>()
  seatsInUse = 0
  /** Virtual start time of the head (upstream nextDispatchR). */
  nextDispatchR = 0

  constructor(index: number) { this.index = index }

  push(e: Entry): void { this.waiting.push(e); this.workSum += e.totalWork; this.seatsSum += e.waitSeats }
  shift(): Entry {
    const e = this.waiting.shift() as Entry
    this.workSum -= e.totalWork
    this.seatsSum -= e.waitSeats
    return e
  }
  remove(e: Entry): boolean {
    const i = this.waiting.indexOf(e)
    if (i < 0) return false
    this.waiting.splice(i, 1)
    this.workSum -= e.totalWork
    this.seatsSum -= e.waitSeats
    return true
  }
}

/**
 * The fair queuing of one priority level. Queue levels shuffle-shard each flow onto a hand of queues, join the
 * queue with the least waiting work, and dispatch by smallest virtual finish time while seats are free; Reject
 * levels execute at once or reject; Exempt levels always execute at once (their seats are only counted).
 *
 * Decisions: `submit` answers 'dispatched' or 'rejected' synchronously, or 'queued' and later calls the callback
 * with 'dispatched' or 'timeout'. Every dispatched request must be given back with `finish`.
 */
export class QueueSet {
  readonly name: string
  readonly #clock: Clock
  readonly #requestTimeoutMs: number
  readonly #onCallbackError: ((err: unknown) => void) | undefined
  readonly #shared: SharedSeats | undefined
  #kind: PriorityLevelKind = 'Queue'
  #cl = 0
  #desiredQueues = 0
  #handSize = 1
  #qll = 1
  #dealer: Dealer | null = null
  #hand: number[] = []
  #queues: Queue[] = []
  #currentR = 0
  #lastRealTime: number
  #robinIndex = 0
  #totWaiting = 0
  #totExecuting = 0
  #seatsInUse = 0
  #seatsWaiting = 0
  #enqueues = 0
  #epochAdvances = 0
  #noAccommodation = 0
  readonly #entries = new WeakMap<object, Entry>()
  readonly #counters = new Map<string, Counters>()
  readonly #demand: SeatDemandIntegrator
  readonly #deferred: Array<() => void> = []
  #flushing = false
  readonly #afterTimer: (() => void) | undefined
  /** Seats held for flows whose request just ended (seat-holds.ts). */
  readonly #holds: SeatHolds

  constructor(config: QueueSetConfig, options: QueueSetOptions = {}) {
    this.name = config.name
    this.#clock = options.clock ?? realClock
    this.#requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
    this.#onCallbackError = options.onCallbackError
    this.#afterTimer = options.afterTimer
    this.#holds = new SeatHolds(options.holdMs ?? 0, this.#clock, () => {
      this.#syncTime(this.#clock.now())
      this.#dispatchAsMuchAsPossible()
      this.#flush()
      this.#afterTimer?.()
    })
    this.#shared = options.sharedSeats
    this.#lastRealTime = this.#clock.now()
    this.#demand = new SeatDemandIntegrator(this.#clock)
    this.#applyConfig(config)
  }

  // ---- configuration

  get kind(): PriorityLevelKind { return this.#kind }
  get concurrencyLimit(): number { return this.#cl }
  get queueCount(): number { return this.#queues.length }
  /** Requests and seats waiting in the queues. */
  get waitingRequests(): number { return this.#totWaiting }
  get waitingSeats(): number { return this.#seatsWaiting }
  /** Seats held by requests this queue set dispatched (not the shared total). */
  get seatsInUse(): number { return this.#seatsInUse }
  /** Seats kept for flows whose request just ended (the hold rule of seat-holds.ts). */
  get heldSeats(): number { return this.#holds.held }
  /** Holds taken, those the flow came back for before they ran out, and those that ran out. */
  get holdCounts(): { taken: number; used: number; expired: number } { return this.#holds.counts }

  /** Seats were given back outside the queue set (shared counters): dispatch what now fits. */
  dispatch(): void {
    if (this.#totWaiting === 0) return
    this.#syncTime(this.#clock.now())
    this.#dispatchAsMuchAsPossible()
    this.#flush()
  }

  /** Changes the configuration (e.g. a new CurrentCL after borrowing); then dispatches what now fits. */
  setConfig(config: Partial<QueueSetConfig>): void {
    this.#syncTime(this.#clock.now())
    this.#applyConfig({ name: this.name, kind: config.kind ?? this.#kind, concurrencyLimit: config.concurrencyLimit ?? this.#cl, queues: config.queues ?? this.#desiredQueues, handSize: config.handSize ?? this.#handSize, queueLengthLimit: config.queueLengthLimit ?? this.#qll })
    this.#dispatchAsMuchAsPossible()
    this.#flush()
  }

  /** Shorthand for setConfig({ concurrencyLimit }). */
  setConcurrencyLimit(cl: number): void { this.setConfig({ concurrencyLimit: cl }) }

  #applyConfig(c: QueueSetConfig): void {
    if (!Number.isFinite(c.concurrencyLimit) || c.concurrencyLimit < 0) throw new RangeError(`concurrency limit ${c.concurrencyLimit} is not a non-negative number`)
    this.#kind = c.kind
    this.#cl = Math.floor(c.concurrencyLimit)
    if (c.kind === 'Queue') {
      const queues = c.queues ?? 64
      const handSize = c.handSize ?? 8
      if (this.#dealer === null || this.#dealer.deckSize !== queues || this.#dealer.handSize !== handSize) this.#dealer = new Dealer(queues, handSize)
      this.#desiredQueues = queues
      this.#handSize = handSize
      this.#hand = new Array<number>(handSize)
      this.#qll = Math.max(0, c.queueLengthLimit ?? 50)
      while (this.#queues.length < queues) this.#queues.push(new Queue(this.#queues.length))
    } else {
      // Reject and Exempt levels have no queues; requests still waiting from an earlier config drain out.
      this.#desiredQueues = 0
      this.#dealer = null
    }
    // Surplus queues that are idle go now; busy ones go when they empty (removeQueueIfEmpty).
    for (let i = this.#queues.length - 1; i >= this.#desiredQueues; i--) {
      const q = this.#queues[i]
      if (q.waiting.length === 0 && q.executing === 0 && q.seatsInUse === 0) this.#removeQueue(i)
    }
  }

  // ---- requests

  /**
   * Admits a request. Returns 'dispatched' (execute now, then call finish), 'rejected' (answer 429; see
   * statusOf for the reason) or 'queued' — then `onDecision` is called later with 'dispatched' or 'timeout'.
   */
  submit(req: FlowRequest, onDecision?: DecisionCallback): 'dispatched' | 'rejected' | 'queued' {
    if (this.#entries.has(req)) throw new Error('request was already submitted')
    const now = this.#clock.now()
    this.#syncTime(now)
    const e = new Entry(req, this.#countersOf(req.flowSchema), now, this.#currentR)
    this.#entries.set(req, e)
    let answer: 'dispatched' | 'rejected' | 'queued'
    if (this.#kind === 'Exempt') {
      this.#startSansQueue(e, now)
      answer = 'dispatched'
    } else if (this.#desiredQueues < 1) {
      if (this.#canAccommodate(e.waitSeats)) {
        this.#startSansQueue(e, now)
        answer = 'dispatched'
      } else {
        this.#reject(e, 'concurrency-limit', now)
        answer = 'rejected'
      }
    } else {
      answer = this.#enqueueOrReject(e, req, now)
    }
    if (answer === 'queued') {
      if (e.state === 'executing') answer = 'dispatched'
      else {
        e.onDecision = onDecision
        const limit = this.#waitLimitMs(req, now)
        e.timer = this.#clock.setTimer(() => this.#expire(e), limit)
      }
    }
    this.#flush()
    return answer
  }

  /** submit as a promise: resolves with 'dispatched', 'rejected' or 'timeout'. */
  enqueue(req: FlowRequest): Promise<Decision> {
    return new Promise<Decision>((resolve) => {
      const d = this.submit(req, resolve)
      if (d !== 'queued') resolve(d)
    })
  }

  /**
   * The request is done: executing requests give back their seats (after their additional latency, if any);
   * a request still waiting is withdrawn (client gone: counted as cancelled). Idempotent. With `later`, nothing is
   * dispatched into the freed seats until the caller calls dispatch(): requests that ended together (one batch of
   * messages) all count before the first of their seats is given away, so each can be held for its flow.
   */
  finish(req: FlowRequest, later = false): void {
    const e = this.#entries.get(req)
    if (e === undefined) return
    if (e.state === 'waiting') { this.cancel(req); return }
    if (e.state !== 'executing') return
    const now = this.#clock.now()
    this.#syncTime(now)
    const released = this.#finishExecuting(e, now)
    // The hold rule (seat-holds.ts): only requests that waited in a queue of this level.
    if (released && e.queue !== null && this.#desiredQueues >= 1) this.#holds.ended(e.req.hash ?? 0, e.seats, this.#cl, this.#totWaiting > 0, now)
    if (later) return
    this.#dispatchAsMuchAsPossible()
    this.#flush()
  }

  /**
   * Withdraws a waiting request (its client went away): it leaves its queue, never executes, and is answered
   * 'cancelled' (upstream's reject reason for a request whose context ended while it waited).
   */
  cancel(req: FlowRequest): boolean {
    const e = this.#entries.get(req)
    if (e === undefined || e.state !== 'waiting') return false
    this.#withdraw(e, 'cancelled')
    return true
  }

  /** The final phase of a request as it stands (narrowed to the limit at dispatch if it was wider). */
  finalPhaseOf(req: FlowRequest): { finalSeats: number; additionalLatencyMs: number } | undefined {
    const e = this.#entries.get(req)
    return e === undefined ? undefined : { finalSeats: e.finalSeats, additionalLatencyMs: e.additionalLatencyMs }
  }

  statusOf(req: FlowRequest): RequestStatus | undefined {
    const e = this.#entries.get(req)
    if (e === undefined) return undefined
    const s: RequestStatus = { state: e.state, seats: e.seats, waitedMs: (e.state === 'waiting' ? this.#clock.now() : e.decidedAt) - e.arrivalTime }
    if (e.reason !== undefined) s.reason = e.reason
    if (e.queue !== null) s.queue = e.queue.index
    return s
  }

  /** Rejects every waiting request (shutdown or the level was deleted): their callbacks get 'timeout'. */
  drain(): void {
    const now = this.#clock.now()
    this.#syncTime(now)
    this.#holds.clear()
    for (const q of this.#queues) {
      while (q.waiting.length > 0) {
        const e = q.shift()
        this.#leaveQueue(e)
        this.#reject(e, 'time-out', now)
      }
    }
    this.#flush()
  }

  isIdle(): boolean { return this.#totWaiting === 0 && this.#totExecuting === 0 }

  /** Seat demand (seats in use + seats waiting) integrated since the last call; starts a new period. */
  takeSeatDemand(): IntegratorResults { return this.#demand.reset() }

  metrics(): QueueSetMetrics {
    this.#syncTime(this.#clock.now())
    const flowSchemas: Record<string, FlowSchemaMetrics> = {}
    const rejected: RejectCounts = { 'queue-full': 0, 'concurrency-limit': 0, 'time-out': 0, 'cancelled': 0 }
    let dispatched = 0
    for (const [fs, c] of this.#counters) {
      dispatched += c.dispatched
      for (const k of Object.keys(rejected) as RejectReason[]) rejected[k] += c.rejected[k]
      flowSchemas[fs] = {
        dispatched: c.dispatched,
        rejected: { ...c.rejected },
        waitingRequests: c.waitingRequests,
        waitingSeats: c.waitingSeats,
        executingRequests: c.executingRequests,
        executingSeats: c.executingSeats,
        waitExecuted: { buckets: c.waitExecuted.buckets, cumulative: c.waitExecuted.cumulative(), sum: c.waitExecuted.sum, count: c.waitExecuted.count },
        waitRejected: { buckets: c.waitRejected.buckets, cumulative: c.waitRejected.cumulative(), sum: c.waitRejected.sum, count: c.waitRejected.count },
      }
    }
    return {
      priorityLevel: this.name, kind: this.#kind, concurrencyLimit: this.#cl, queues: this.#queues.length,
      requestsWaiting: this.#totWaiting, requestsExecuting: this.#totExecuting, seatsWaiting: this.#seatsWaiting, seatsInUse: this.#seatsInUse,
      currentR: ssToSeatSeconds(this.#currentR), dispatched, rejected, epochAdvances: this.#epochAdvances,
      dispatchNoAccommodation: this.#noAccommodation, flowSchemas,
    }
  }

  /** The state of every queue and request, for the debug endpoints (upstream QueueSet.Dump). */
  dump(): QueueSetDump {
    this.#syncTime(this.#clock.now())
    const view = (e: Entry): RequestDump => ({
      req: e.req, arrivalTime: e.arrivalTime, startTime: e.state === 'waiting' ? undefined : e.startTime,
      initialSeats: e.initialSeats, finalSeats: e.finalSeats, additionalLatencyMs: e.additionalLatencyMs,
    })
    const totals: RejectCounts = { 'queue-full': 0, 'concurrency-limit': 0, 'time-out': 0, 'cancelled': 0 }
    let dispatched = 0
    for (const c of this.#counters.values()) {
      dispatched += c.dispatched
      for (const k of Object.keys(totals) as RejectReason[]) totals[k] += c.rejected[k]
    }
    return {
      queues: this.#queues.map((q) => ({
        index: q.index, waiting: q.waiting.map(view), executing: [...q.running].map(view), executingRequests: q.executing,
        seatsInUse: q.seatsInUse, nextDispatchR: q.nextDispatchR,
        initialSeatsSum: q.waiting.reduce((n, e) => n + e.initialSeats, 0), maxSeatsSum: q.seatsSum, totalWorkSum: q.workSum,
      })),
      waiting: this.#totWaiting, executing: this.#totExecuting, dispatched, rejected: totals,
    }
  }

  // ---- internals

  #countersOf(fs: string): Counters {
    let c = this.#counters.get(fs)
    if (c === undefined) { c = new Counters(); this.#counters.set(fs, c) }
    return c
  }

  #waitLimitMs(req: FlowRequest, now: number): number {
    if (req.waitLimitMs !== undefined) return Math.max(0, req.waitLimitMs)
    if (req.deadline !== undefined) return Math.max(0, Math.min((req.deadline - now) / 4, MAX_WAIT_LIMIT_MS))
    return Math.min(this.#requestTimeoutMs / 4, MAX_WAIT_LIMIT_MS)
  }

  /** R advances at min(seats requested, CL) / active queues seat-seconds per second (upstream getVirtualTimeRatio). */
  #virtualTimeRatio(): number {
    let active = 0
    let requested = 0
    for (const q of this.#queues) {
      requested += q.seatsInUse + q.seatsSum
      if (q.waiting.length > 0 || q.executing > 0) active++
    }
    return active === 0 ? 0 : Math.min(requested, this.#cl) / active
  }

  #syncTime(now: number): void {
    const dt = now - this.#lastRealTime
    this.#lastRealTime = now
    if (dt > 0) this.#currentR += seatsTimesMs(this.#virtualTimeRatio(), dt)
    if (this.#currentR >= HIGH_R) this.#advanceEpoch()
  }

  #advanceEpoch(): void {
    this.#currentR -= R_DECREMENT
    for (const q of this.#queues) {
      if (q.waiting.length === 0 && q.executing === 0) { q.nextDispatchR = 0; continue }
      q.nextDispatchR -= R_DECREMENT
      for (const e of q.waiting) e.arrivalR -= R_DECREMENT
    }
    this.#epochAdvances++
  }

  /** Shuffle sharding: deal the flow's hand, visit it from offset enqueues % handSize, pick the least queued work. */
  #chooseQueue(hash: bigint | number): Queue {
    const dealer = this.#dealer as Dealer
    const hand = dealer.dealInto(hash, this.#hand)
    const n = hand.length
    const offset = this.#enqueues % n
    this.#enqueues++
    let best: Queue | null = null
    for (let i = 0; i < n; i++) {
      const q = this.#queues[hand[(offset + i) % n]]
      if (best === null || q.workSum < best.workSum) best = q
    }
    return best as Queue
  }

  #enqueueOrReject(e: Entry, req: FlowRequest, now: number): 'queued' | 'rejected' {
    const key = req.hash ?? 0
    // The flow's next request: what was held for it is its own again.
    const held = this.#holds.arrive(key, now)
    const q = this.#chooseQueue(key)
    if (this.#usedSeats() + this.#holds.held >= this.#cl && q.waiting.length >= this.#qll) {
      this.#reject(e, 'queue-full', now)
      return 'rejected'
    }
    if (q.waiting.length === 0 && q.executing === 0) q.nextDispatchR = this.#currentR
    e.queue = q
    q.push(e)
    this.#totWaiting++
    this.#seatsWaiting += e.waitSeats
    e.counters.waitingRequests++
    e.counters.waitingSeats += e.waitSeats
    this.#holds.waiting(key, 1)
    this.#boundNextDispatch(q)
    this.#noteDemand()
    if (held) {
      // It goes ahead of whatever waits in its queue (other flows' requests, shuffle sharding shares queues).
      if (this.#canAccommodate(e.waitSeats)) {
        q.remove(e)
        this.#leaveQueue(e)
        this.#boundNextDispatch(q)
        this.#dispatchEntry(q, e)
      }
    }
    this.#dispatchAsMuchAsPossible()
    return 'queued'
  }

  /** Seats in use on the level: the shared total when there is one. */
  #usedSeats(): number { return this.#shared !== undefined ? this.#shared.inUse() : this.#seatsInUse }

  #canAccommodate(seats: number): boolean {
    if (seats > this.#cl) return this.#holds.held === 0 && (this.#shared !== undefined ? this.#shared.inUse() === 0 : this.#totExecuting === 0)
    return this.#usedSeats() + this.#holds.held + seats <= this.#cl
  }

  #dispatchAsMuchAsPossible(): void {
    while (this.#totWaiting !== 0 && this.#usedSeats() + this.#holds.held < this.#cl && this.#dispatchOne()) { /* keep going */ }
  }

  /** Upstream dispatchLocked + findDispatchQueueToBoundLocked. */
  #dispatchOne(): boolean {
    const nq = this.#queues.length
    if (nq === 0) return false
    let minFinish = Infinity
    let minQueue: Queue | null = null
    let minIndex = 0
    for (let k = 0; k < nq; k++) {
      this.#robinIndex = (this.#robinIndex + 1) % nq
      const q = this.#queues[this.#robinIndex]
      if (q.waiting.length === 0) continue
      const finish = q.nextDispatchR + q.waiting[0].totalWork
      if (finish < minFinish) { minFinish = finish; minQueue = q; minIndex = this.#robinIndex }
    }
    if (minQueue === null) return false
    const head = minQueue.waiting[0]
    if (!this.#canAccommodate(head.waitSeats)) {
      this.#noAccommodation++
      return false
    }
    minQueue.shift()
    this.#leaveQueue(head)
    this.#robinIndex = minIndex
    this.#dispatchEntry(minQueue, head)
    return true
  }

  /** Starts a request that has left queue q's waiting list. */
  #dispatchEntry(q: Queue, head: Entry): void {
    if (head.finalSeats > this.#cl) {
      // Too wide for the level: narrow the final phase and stretch it so its work is preserved.
      head.finalSeats = this.#cl
      head.additionalLatencyMs = head.finalSeats > 0 ? head.finalWork / head.finalSeats / (SS_SCALE / 1000) : 0
    }
    const now = this.#clock.now()
    this.#start(head, Math.max(head.initialSeats, head.finalSeats), now)
    q.executing++
    q.running.add(head)
    q.seatsInUse += head.seats
    q.nextDispatchR += head.totalWork
    this.#boundNextDispatch(q)
    this.#noteDemand()
    this.#decide(head, 'dispatched', undefined, now)
  }

  /** Bookkeeping of a request leaving the waiting state (its queue has already dropped it). */
  #leaveQueue(e: Entry): void {
    this.#totWaiting--
    this.#seatsWaiting -= e.waitSeats
    e.counters.waitingRequests--
    e.counters.waitingSeats -= e.waitSeats
    this.#holds.waiting(e.req.hash ?? 0, -1)
  }

  #start(e: Entry, seats: number, now: number): void {
    e.state = 'executing'
    e.startTime = now
    e.seats = seats
    this.#totExecuting++
    this.#seatsInUse += seats
    e.counters.executingRequests++
    e.counters.executingSeats += seats
    this.#holds.seats(e.req.hash ?? 0, seats)
    this.#shared?.take(seats)
  }

  #startSansQueue(e: Entry, now: number): void {
    this.#start(e, e.waitSeats, now)
    this.#noteDemand()
    this.#decide(e, 'dispatched', undefined, now)
  }

  #reject(e: Entry, reason: RejectReason, now: number): void {
    e.counters.rejected[reason]++
    this.#decide(e, reason === 'time-out' ? 'timeout' : reason === 'cancelled' ? 'cancelled' : 'rejected', reason, now)
    this.#noteDemand()
  }

  #decide(e: Entry, decision: Decision, reason: RejectReason | undefined, now: number): void {
    if (e.timer !== undefined) { this.#clock.clearTimer(e.timer); e.timer = undefined }
    e.decidedAt = now
    const waitedSeconds = Math.max(0, now - e.arrivalTime) / 1000
    if (decision === 'dispatched') {
      e.counters.dispatched++
      e.counters.waitExecuted.observe(waitedSeconds)
    } else {
      e.state = decision
      e.reason = reason
      e.counters.waitRejected.observe(waitedSeconds)
    }
    const cb = e.onDecision
    if (cb !== undefined) {
      e.onDecision = undefined
      this.#deferred.push(() => cb(decision, reason))
    }
  }

  /** Wait limit reached. */
  #expire(e: Entry): void {
    e.timer = undefined
    this.#withdraw(e, 'time-out')
    this.#afterTimer?.()
  }

  /** A waiting request leaves its queue without executing (wait limit, or its client went away). */
  #withdraw(e: Entry, reason: 'time-out' | 'cancelled'): void {
    if (e.state !== 'waiting') return
    const now = this.#clock.now()
    this.#syncTime(now)
    const q = e.queue
    if (q !== null && q.remove(e)) {
      this.#leaveQueue(e)
      this.#boundNextDispatch(q)
    }
    this.#reject(e, reason, now)
    this.#dispatchAsMuchAsPossible()
    this.#flush()
  }

  /** Returns whether the seats went back now (false: they linger for the request's additional latency). */
  #finishExecuting(e: Entry, now: number): boolean {
    this.#totExecuting--
    e.counters.executingRequests--
    const q = e.queue
    if (q !== null) {
      q.executing--
      q.running.delete(e)
      // The queue's start R moves by (G - actual service time) × initial seats.
      q.nextDispatchR -= seatsTimesMs(e.initialSeats, ESTIMATED_SERVICE_MS - (now - e.startTime))
      this.#boundNextDispatch(q)
    }
    if (e.additionalLatencyMs <= 0) {
      this.#release(e)
      return true
    }
    e.state = 'lingering'
    this.#clock.setTimer(() => {
      this.#syncTime(this.#clock.now())
      this.#release(e)
      this.#dispatchAsMuchAsPossible()
      this.#flush()
      this.#afterTimer?.()
    }, e.additionalLatencyMs)
    return false
  }

  #release(e: Entry): void {
    e.state = 'done'
    this.#seatsInUse -= e.seats
    e.counters.executingSeats -= e.seats
    this.#shared?.give(e.seats)
    this.#holds.seats(e.req.hash ?? 0, -e.seats)
    const q = e.queue
    if (q !== null) {
      q.seatsInUse -= e.seats
      if (this.#queues.length > this.#desiredQueues && q.waiting.length === 0 && q.executing === 0 && this.#queues[q.index] === q) this.#removeQueue(q.index)
    }
    this.#noteDemand()
  }

  #removeQueue(index: number): void {
    this.#queues.splice(index, 1)
    for (let i = index; i < this.#queues.length; i++) this.#queues[i].index = i
    if (this.#robinIndex >= index) this.#robinIndex--
    if (this.#robinIndex < 0) this.#robinIndex = Math.max(0, this.#queues.length - 1)
  }

  /** Anti-windup: a queue's virtual start may not precede the arrival of its head. */
  #boundNextDispatch(q: Queue): void {
    const head = q.waiting[0]
    if (head !== undefined && q.nextDispatchR < head.arrivalR) q.nextDispatchR = head.arrivalR
  }

  #noteDemand(): void { this.#demand.set(this.#seatsInUse + this.#seatsWaiting) }

  #flush(): void {
    if (this.#flushing) return
    this.#flushing = true
    try {
      while (this.#deferred.length > 0) {
        const fn = this.#deferred.shift() as () => void
        try { fn() } catch (err) { this.#onCallbackError?.(err) }
      }
    } finally {
      this.#flushing = false
    }
  }
}
