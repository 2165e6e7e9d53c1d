// The flow-control actor: owns the APF configuration (read from the store), the concurrency limits and their periodic borrowing, and the fair queues of the Queue levels; front-ends take free seats themselves through the shared counters and come here only to queue.
import type { MessagePort } from 'node:worker_threads'
import { pino, type Logger } from 'pino'
import { digestConfig, type FlowConfig, type PriorityLevelInfo } from './config.js'
import {
  BORROWING_ADJUSTMENT_PERIOD_MS, ZERO_SEAT_DEMAND, adjustBorrowing, computeConcurrencyLimits,
  type ConcurrencyLimits, type ConcurrencyPlan, type SeatDemandStats,
} from './concurrency.js'
import { flowHash } from './dealer.js'
import { QueueSet, type FlowRequest, type QueueSetConfig, type QueueSetDump, type RequestDump } from './fair-queuing.js'
import { SeatDemandIntegrator, WAIT_DURATION_BUCKETS, formatSeatSeconds, realClock } from './measures.js'
import { GO_ZERO_TIME, goDuration, rfc3339Nano, tabwrite } from '../../src/machinery/tabwriter.js'
import { RetryAfterTracker } from './retry-after.js'
import { ConfigSource, type ConfigObjects } from './source.js'
import {
  L_IN_USE, L_LIMIT, L_WAITING, LEVEL_CATCH_ALL, LEVEL_EXEMPT, MAX_LEVELS, MUTATING_SLOT, READONLY_SLOT, UNLIMITED, levelSlot,
  type ActorOut, type ConfigReplica, type Decision, type DumpKind, type DumpReply, type FlowMetrics, type FlowMsg, type FlowSchemaCounters,
  type InflightEntry, type LevelMetrics, type MetricsReply, type SyncReply,
} from './messages.js'

export interface FlowInit {
  op: 'init'
  seats: SharedArrayBuffer
  rejected: SharedArrayBuffer
  logLevel: string
  heartbeats: SharedArrayBuffer
  heartbeatSlot: number
  /** --enable-priority-and-fairness */
  apf?: boolean
  /** --max-requests-inflight + --max-mutating-requests-inflight (0 = classify, never limit) */
  serverCL?: number
  /** Wait limit in a queue = requestTimeoutMs / 4 (upstream: 60 s / 4). */
  requestTimeoutMs?: number
  /** --priority-and-fairness-seat-hold: how long a seat is held for a flow that just finished a request (the hold rule of seat-holds.ts). */
  seatHoldMs?: number
}
export interface FlowAttach { op: 'attach'; port: MessagePort; name: string }
/** Where the configuration comes from: the data dir and one port per shard (those not needed are closed). */
export interface FlowSourceTask { op: 'source'; dataDir: string; ports: MessagePort[] }
export type FlowTask = FlowInit | FlowAttach | FlowSourceTask | { op: 'ping' }

/** How often seat demand is sampled (and a level with waiters and free seats is re-dispatched, as a safety net). */
const SAMPLE_MS = 25
const HASH_CACHE_MAX = 10_000

let seats: Int32Array
let rejected: Int32Array
let log: Logger
let serverCL = 600
let unlimited = false
let requestTimeoutMs = 60_000
let seatHoldMs = 0
let source: ConfigSource | null = null
let plan: ConcurrencyPlan | null = null
let digest: FlowConfig | null = null
let replica: ConfigReplica | null = null
let generation = 0
const peers = new Set<Peer>()

// ---------------------------------------------------------------- levels

class Level {
  readonly name: string
  readonly index: number
  info: PriorityLevelInfo
  limits: ConcurrencyLimits
  currentCL: number
  qs: QueueSet | null = null
  present = true
  stats: SeatDemandStats = ZERO_SEAT_DEMAND
  readonly demand = new SeatDemandIntegrator(realClock)
  readonly retry = new RetryAfterTracker()
  /** What front-ends decided themselves (fast-path dispatches, Reject-level rejections), per FlowSchema. */
  readonly local = new Map<string, { dispatched: number; rejected: number }>()
  /** Rejections by reason of requests that never reached a queue set (front-end decisions included). */
  readonly rejections: Record<string, number> = { 'queue-full': 0, 'concurrency-limit': 0, 'time-out': 0, 'cancelled': 0 }
  readonly inUseSlot: number
  readonly waitingSlot: number
  readonly limitSlot: number

  constructor(name: string, index: number, info: PriorityLevelInfo, limits: ConcurrencyLimits) {
    this.name = name
    this.index = index
    this.info = info
    this.limits = limits
    this.currentCL = limits.initialCL
    this.inUseSlot = levelSlot(index, L_IN_USE)
    this.waitingSlot = levelSlot(index, L_WAITING)
    this.limitSlot = levelSlot(index, L_LIMIT)
  }

  get exempt(): boolean { return this.info.kind === 'Exempt' }
  inUse(): number { return Atomics.load(seats, this.inUseSlot) }

  /** Mirrors the queue set's waiters into the shared counters (front-ends skip the fast path while > 0). */
  markWaiting(): void { Atomics.store(seats, this.waitingSlot, this.qs?.waitingRequests ?? 0) }

  writeLimit(): void { Atomics.store(seats, this.limitSlot, unlimited || this.exempt ? UNLIMITED : this.currentCL) }

  setCurrentCL(cl: number): void {
    this.currentCL = cl
    this.writeLimit()
    this.qs?.setConcurrencyLimit(cl)
    this.markWaiting()
  }

  /** A seat taken here (a request of a level that stopped queueing): the same check as the front-end's fast path. */
  tryTake(n: number): boolean {
    for (;;) {
      const limit = Atomics.load(seats, this.limitSlot)
      const cur = Atomics.load(seats, this.inUseSlot)
      if (limit !== UNLIMITED && (n > limit ? cur !== 0 : cur + n > limit)) return false
      if (Atomics.compareExchange(seats, this.inUseSlot, cur, cur + n) === cur) return true
    }
  }
}

const levels = new Map<string, Level>()
const byIndex: Array<Level | undefined> = new Array(MAX_LEVELS).fill(undefined)
const indexOfName = new Map<string, number>([['exempt', LEVEL_EXEMPT], ['catch-all', LEVEL_CATCH_ALL]])

function allocIndex(name: string): number {
  const known = indexOfName.get(name)
  if (known !== undefined) return known
  for (let i = 2; i < MAX_LEVELS; i++) {
    const holder = byIndex[i]
    if (holder === undefined && ![...indexOfName.values()].includes(i)) { indexOfName.set(name, i); return i }
  }
  // Out of indexes: reuse one of a level that is gone and idle.
  for (let i = 2; i < MAX_LEVELS; i++) {
    const holder = byIndex[i]
    if (holder !== undefined && !holder.present && holder.inUse() === 0 && (holder.qs?.isIdle() ?? true)) {
      levels.delete(holder.name)
      indexOfName.delete(holder.name)
      byIndex[i] = undefined
      indexOfName.set(name, i)
      return i
    }
  }
  return -1
}

function queueSetConfig(l: Level): QueueSetConfig {
  return { name: l.name, kind: 'Queue', concurrencyLimit: l.currentCL, queues: l.info.queues, handSize: l.info.handSize, queueLengthLimit: l.info.queueLengthLimit }
}

function newQueueSet(l: Level): QueueSet {
  return new QueueSet(queueSetConfig(l), {
    requestTimeoutMs,
    sharedSeats: { inUse: () => l.inUse(), take: (n) => { Atomics.add(seats, l.inUseSlot, n) }, give: (n) => { Atomics.sub(seats, l.inUseSlot, n) } },
    holdMs: seatHoldMs,
    afterTimer: () => l.markWaiting(),
    onCallbackError: (err) => log.error({ err, priorityLevel: l.name }, 'flow-control decision callback failed'),
  })
}

/**
 * A new digest of the configuration: limits, queue sets and the replica every front-end classifies against. Exported
 * for tests, which run the actor in-process; the actor itself is configured by its ConfigSource.
 */
export function applyConfig(objs: ConfigObjects): void {
  const cfg = digestConfig(objs.flowSchemas, objs.priorityLevels)
  for (const b of cfg.brokenPriorityLevels) log.warn({ priorityLevel: b.name, reason: b.reason }, 'priority level ignored')
  const p = computeConcurrencyLimits(cfg, serverCL)
  for (const l of levels.values()) l.present = false
  for (const [name, info] of cfg.priorityLevels) {
    const limits = p.levels.get(name) as ConcurrencyLimits
    let l = levels.get(name)
    if (l === undefined) {
      const index = allocIndex(name)
      if (index < 0) { log.error({ priorityLevel: name }, `more than ${MAX_LEVELS} priority levels: level ignored`); continue }
      l = new Level(name, index, info, limits)
      levels.set(name, l)
      byIndex[index] = l
    } else {
      // A level whose limits changed starts over as a new one would (upstream keeps its CurrentCL until the next
      // borrowing adjustment, which leaves e.g. an imagined catch-all with every seat for up to 10 s).
      const changed = limits.nominalCL !== l.limits.nominalCL || limits.minCL !== l.limits.minCL || limits.maxCL !== l.limits.maxCL
      l.info = info
      l.limits = limits
      if (changed) l.currentCL = limits.initialCL
    }
    l.present = true
    if (info.kind === 'Queue') {
      if (l.qs === null) l.qs = newQueueSet(l)
      else l.qs.setConfig(queueSetConfig(l))
    } else if (l.qs !== null) {
      const qs = l.qs
      l.qs = null
      qs.drain()
    }
    l.writeLimit()
    l.markWaiting()
  }
  for (const l of levels.values()) {
    if (l.present || l.qs === null) continue
    const qs = l.qs
    l.qs = null
    qs.drain()
    l.markWaiting()
  }
  plan = p
  digest = cfg
  generation++
  replica = {
    generation,
    unlimited,
    flowSchemas: JSON.stringify(cfg.flowSchemas.map((fs) => ({ metadata: { name: fs.metadata?.name ?? '', uid: fs.metadata?.uid ?? '' }, spec: fs.spec ?? {} }))),
    levels: [...levels.values()].filter((l) => l.present).map((l) => ({ name: l.name, uid: l.info.uid, index: l.index, kind: l.info.kind, queues: l.info.queues, maxSeats: l.limits.maxSeats })),
  }
  for (const peer of peers) peer.pushConfig(replica)
  log.debug({ generation, flowSchemas: cfg.flowSchemas.length, priorityLevels: cfg.priorityLevels.size, dangling: cfg.dangling.length }, 'flow-control configuration applied')
}

/** Upstream updateBorrowingLocked, every 10 s: CurrentCL from each level's seat demand of the period. */
function adjustLevels(): void {
  if (plan === null || unlimited) return
  const ls = [...levels.values()].filter((l) => l.present)
  const inputs = ls.map((l) => ({
    name: l.name, exempt: l.exempt, nominalCL: l.limits.nominalCL, minCL: l.limits.minCL, maxCL: l.limits.maxCL,
    currentCL: l.currentCL, stats: l.stats, observation: l.demand.reset(),
  }))
  const res = adjustBorrowing(inputs, plan.nominalCLSum)
  if (res.error !== undefined) log.warn({ error: res.error }, 'borrowing adjustment failed; limits kept')
  res.levels.forEach((o, i) => {
    const l = ls[i]
    l.stats = o.stats
    if (!l.exempt && o.currentCL !== l.currentCL) l.setCurrentCL(o.currentCL)
  })
}

function sample(): void {
  for (const l of levels.values()) {
    const qs = l.qs
    l.demand.set(l.inUse() + (qs?.waitingSeats ?? 0))
    if (qs !== null && qs.waitingRequests > 0) { qs.dispatch(); l.markWaiting() }
  }
}

const hashes = new Map<string, bigint>()
function hashOf(fs: string, fd: string): bigint {
  const k = `${fs}\u0000${fd}`
  let h = hashes.get(k)
  if (h === undefined) {
    if (hashes.size >= HASH_CACHE_MAX) hashes.clear()
    h = flowHash(fs, fd)
    hashes.set(k, h)
  }
  return h
}

// ---------------------------------------------------------------- front-end ports

interface Ticket { level: Level; qs: QueueSet; req: FlowRequest }

class Peer {
  readonly port: MessagePort
  readonly name: string
  readonly tickets = new Map<number, Ticket>()
  /** This front-end's watches (its last report). */
  watches = new Map<string, number>()
  #out: ActorOut | null = null

  constructor(port: MessagePort, name: string) {
    this.port = port
    this.name = name
    port.on('message', (msgs: FlowMsg[]) => {
      if (!Array.isArray(msgs)) { log.error({ peer: name }, 'bad flow-control message'); return }
      for (const m of msgs) {
        try { handle(this, m) } catch (err) {
          log.error({ err, peer: name, op: m.op }, 'flow-control request failed')
          if (m.op === 'enqueue') this.reply({ id: m.id, d: 'rejected', reason: 'internal', retryAfter: 1 })
        }
      }
      // The seats of the batch's finished requests: given away once all of them are counted (see QueueSet.finish).
      for (const l of finishedLevels) {
        if (l.qs !== null) l.qs.dispatch()
        l.markWaiting()
      }
      finishedLevels.clear()
    })
    port.on('close', () => this.close())
  }

  reply(r: Decision | MetricsReply | SyncReply | DumpReply): void { (this.#queue().replies ??= []).push(r) }
  pushConfig(c: ConfigReplica): void { this.#queue().config = c }
  pushWatchCounts(c: Array<[string, number]>): void { this.#queue().watchCounts = c }
  collect(id: number, details: boolean): void { (this.#queue().collect ??= []).push({ id, details }) }

  close(): void {
    peers.delete(this)
    for (const t of this.tickets.values()) t.qs.finish(t.req)
    this.tickets.clear()
    for (const [id, g] of gathers) {
      g.waiting.delete(this)
      if (g.waiting.size === 0) finishGather(id)
    }
    if (this.watches.size > 0) {
      this.watches = new Map()
      sumWatchCounts()
    }
  }

  #queue(): ActorOut {
    if (this.#out === null) {
      this.#out = {}
      queueMicrotask(() => this.#flush())
    }
    return this.#out
  }

  #flush(): void {
    const out = this.#out
    this.#out = null
    if (out === null) return
    try { this.port.postMessage(out) } catch (err) { log.warn({ err, peer: this.name }, 'flow-control reply not delivered') }
  }
}

/** Levels whose requests finished in the batch of messages being handled. */
const finishedLevels = new Set<Level>()

function handle(peer: Peer, m: FlowMsg): void {
  switch (m.op) {
    case 'enqueue': return enqueue(peer, m.id, m.level, m.fs, m.fd, m.seats, m.finalSeats, m.latencyMs)
    case 'finish': {
      const t = peer.tickets.get(m.id)
      if (t === undefined) return
      peer.tickets.delete(m.id)
      t.qs.finish(t.req, true)
      finishedLevels.add(t.level)
      return
    }
    case 'cancel': {
      const t = peer.tickets.get(m.id)
      if (t !== undefined) t.qs.cancel(t.req)
      return
    }
    case 'kick':
      for (const i of m.levels) {
        const l = byIndex[i]
        if (l?.qs) { l.qs.dispatch(); l.markWaiting() }
      }
      return
    case 'report':
      if (m.watches !== undefined) {
        peer.watches = new Map(m.watches)
        sumWatchCounts()
      }
      for (const c of m.counts) {
        const l = levels.get(c.level)
        if (l === undefined) continue
        let e = l.local.get(c.fs)
        if (e === undefined) { e = { dispatched: 0, rejected: 0 }; l.local.set(c.fs, e) }
        e.dispatched += c.dispatched
        e.rejected += c.rejected
        l.rejections['concurrency-limit'] += c.rejected
        for (let i = 0; i < c.rejected; i++) l.retry.recordDrop()
      }
      return
    case 'metrics':
      peer.reply({ id: m.id, metrics: metrics() })
      return
    case 'sync':
      // A fresh read sees every write committed before the request was sent.
      if (source !== null) source.read()
      peer.reply({ id: m.id, rv: generation })
      return
    case 'dump':
      startDump(peer, m.id, m.what, m.details)
      return
    case 'collected': {
      const g = gathers.get(m.id)
      if (g === undefined) return
      g.got.set(peer, m.entries)
      g.waiting.delete(peer)
      if (g.waiting.size === 0) finishGather(m.id)
      return
    }
  }
}

function enqueue(peer: Peer, id: number, index: number, fs: string, fd: string, initialSeats: number, finalSeats: number, latencyMs: number): void {
  const l = byIndex[index]
  if (l === undefined || !l.present) {
    peer.reply({ id, d: 'rejected', reason: 'concurrency-limit', retryAfter: 1 })
    return
  }
  const qs = l.qs
  if (qs === null) {
    // The level stopped queueing since the front-end's replica was made: decide as its fast path would.
    if (l.tryTake(Math.max(initialSeats, finalSeats))) peer.reply({ id, d: 'dispatched', own: true })
    else {
      l.rejections['concurrency-limit']++
      peer.reply({ id, d: 'rejected', reason: 'concurrency-limit', retryAfter: l.retry.recordDrop() })
    }
    return
  }
  const req: FlowRequest = {
    flowSchema: fs, flowDistinguisher: fd, hash: l.info.queues > 1 ? hashOf(fs, fd) : 0,
    width: { initialSeats, finalSeats, additionalLatencyMs: latencyMs },
  }
  const t: Ticket = { level: l, qs, req }
  peer.tickets.set(id, t)
  const dispatched = (): void => {
    const queuedMs = Math.round((qs.statusOf(req)?.waitedMs ?? 0) * 1000) / 1000
    const f = finalSeats > 0 ? qs.finalPhaseOf(req) : undefined
    peer.reply(f === undefined ? { id, d: 'dispatched', queuedMs } : { id, d: 'dispatched', queuedMs, finalSeats: f.finalSeats, latencyMs: f.additionalLatencyMs })
  }
  const answer = qs.submit(req, (decision, reason) => {
    if (decision === 'dispatched') dispatched()
    else {
      peer.tickets.delete(id)
      peer.reply({ id, d: decision, reason, retryAfter: l.retry.recordDrop() })
    }
    l.markWaiting()
  })
  if (answer === 'dispatched') { dispatched(); return }
  if (answer === 'rejected') {
    peer.tickets.delete(id)
    peer.reply({ id, d: 'rejected', reason: qs.statusOf(req)?.reason ?? 'queue-full', retryAfter: l.retry.recordDrop() })
    return
  }
  // Queued: publish the waiter first, then look again, so a seat given back meanwhile is either seen here or kicked.
  l.markWaiting()
  qs.dispatch()
  l.markWaiting()
}

// ---------------------------------------------------------------- watch counts

let watchTotals = ''

/** The watches of all front-ends together, pushed to every front-end when they change (they size writes). */
function sumWatchCounts(): void {
  const sum = new Map<string, number>()
  for (const p of peers) for (const [k, n] of p.watches) sum.set(k, (sum.get(k) ?? 0) + n)
  const list = [...sum].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
  const key = JSON.stringify(list)
  if (key === watchTotals) return
  watchTotals = key
  for (const p of peers) p.pushWatchCounts(list)
}

// ---------------------------------------------------------------- debug dumps

/**
 * A dump that needs the front-ends' requests in flight (the fast path takes seats without telling the actor): every
 * peer is asked, and the dump is written once all have answered or COLLECT_TIMEOUT_MS has passed.
 */
interface Gather {
  what: DumpKind
  details: boolean
  /**
   * The queues as they were when the peers were asked: every request queued then was already in its front-end's list
   * (a front-end lists a request before it sends the enqueue), so each queued row finds its details. A request
   * enqueued after one peer had answered, but before the last answer came, would otherwise show without them.
   */
  queues: QueuesSnapshot
  requester: Peer
  replyId: number
  waiting: Set<Peer>
  got: Map<Peer, InflightEntry[]>
  timer: NodeJS.Timeout
}
interface QueuesSnapshot {
  levels: Array<{ level: Level; qs: QueueSetDump | undefined }>
  /** Which peer's ticket each request is. */
  owners: Map<FlowRequest, { peer: Peer; id: number }>
}
const gathers = new Map<number, Gather>()
let nextGather = 1
const COLLECT_TIMEOUT_MS = 1000

function startDump(peer: Peer, id: number, what: DumpKind, details: boolean): void {
  if (what === 'queues') { peer.reply({ id, text: dumpQueues() }); return }
  const gid = nextGather++
  const g: Gather = { what, details, queues: snapshotLevels(), requester: peer, replyId: id, waiting: new Set(peers), got: new Map(), timer: setTimeout(() => finishGather(gid), COLLECT_TIMEOUT_MS) }
  gathers.set(gid, g)
  for (const p of g.waiting) p.collect(gid, details)
}

function finishGather(id: number): void {
  const g = gathers.get(id)
  if (g === undefined) return
  gathers.delete(id)
  clearTimeout(g.timer)
  let text: string
  try { text = g.what === 'priority_levels' ? dumpPriorityLevels(g.queues, g.got) : dumpRequests(g.queues, g.got, g.details) } catch (err) {
    log.error({ err, dump: g.what }, 'flow-control dump failed')
    text = ''
  }
  if (peers.has(g.requester)) g.requester.reply({ id: g.replyId, text })
}

/** Levels in name order: the configured ones, and removed ones that still have requests (quiescing). */
function dumpLevels(): Level[] {
  return [...levels.values()].filter((l) => l.present || l.inUse() > 0 || !(l.qs?.isIdle() ?? true)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

function snapshotLevels(): QueuesSnapshot {
  const owners = new Map<FlowRequest, { peer: Peer; id: number }>()
  for (const peer of peers) for (const [id, t] of peer.tickets) owners.set(t.req, { peer, id })
  return { levels: dumpLevels().map((level) => ({ level, qs: level.qs?.dump() })), owners }
}

const row = (cells: Array<string | number | boolean>): string => cells.join(',\t')
/** The actor's clock (performance.now) as milliseconds since the epoch. */
const epochOf = (t: number): number => performance.timeOrigin + t

function dumpPriorityLevels(snapshot: QueuesSnapshot, got: Map<Peer, InflightEntry[]>): string {
  const own = new Map<number, number>()
  for (const entries of got.values()) for (const e of entries) if (e.ticket === 0) own.set(e.level, (own.get(e.level) ?? 0) + 1)
  const lines = [row(['PriorityLevelName', 'ActiveQueues', 'IsIdle', 'IsQuiescing', 'WaitingRequests', 'ExecutingRequests', 'DispatchedRequests', 'RejectedRequests', 'TimedoutRequests', 'CancelledRequests'])]
  for (const { level: l, qs: d } of snapshot.levels) {
    const waiting = d?.waiting ?? 0
    const executing = (d?.executing ?? 0) + (own.get(l.index) ?? 0)
    let dispatched = d?.dispatched ?? 0
    for (const c of l.local.values()) dispatched += c.dispatched
    const rejected: Record<string, number> = { ...l.rejections }
    if (d) for (const [k, v] of Object.entries(d.rejected)) rejected[k] = (rejected[k] ?? 0) + v
    const rejectedTotal = Object.values(rejected).reduce((a, b) => a + b, 0)
    lines.push(row([l.name, d ? d.queues.filter((q) => q.waiting.length > 0).length : 0, waiting === 0 && executing === 0, !l.present, waiting, executing, dispatched, rejectedTotal, rejected['time-out'] ?? 0, rejected.cancelled ?? 0]))
  }
  return tabwrite(lines.map((x) => x + '\n').join(''))
}

function dumpQueues(): string {
  const lines = [row(['PriorityLevelName', 'Index', 'PendingRequests', 'ExecutingRequests', 'SeatsInUse', 'NextDispatchR', 'InitialSeatsSum', 'MaxSeatsSum', 'TotalWorkSum'])]
  for (const l of dumpLevels()) {
    const d = l.qs?.dump()
    if (!d) continue
    for (const q of d.queues) {
      lines.push(row([l.name, q.index, q.waiting.length, q.executingRequests, q.seatsInUse, formatSeatSeconds(q.nextDispatchR), q.initialSeatsSum, q.maxSeatsSum, formatSeatSeconds(q.totalWorkSum)]))
    }
  }
  return tabwrite(lines.map((x) => x + '\n').join(''))
}

const DETAIL_COLUMNS = ['UserName', 'Verb', 'APIPath', 'Namespace', 'Name', 'APIVersion', 'Resource', 'SubResource']

function dumpRequests(snapshot: QueuesSnapshot, got: Map<Peer, InflightEntry[]>, details: boolean): string {
  // The front-ends know who asked (details) and the requests that took their seats themselves (ticket 0).
  const byTicket = new Map<Peer, Map<number, InflightEntry>>()
  for (const [p, entries] of got) {
    const m = new Map<number, InflightEntry>()
    for (const e of entries) if (e.ticket !== 0) m.set(e.ticket, e)
    byTicket.set(p, m)
  }
  const header = ['PriorityLevelName', 'FlowSchemaName', 'QueueIndex', 'RequestIndexInQueue', 'FlowDistingsher', 'ArriveTime', 'InitialSeats', 'FinalSeats', 'AdditionalLatency', 'StartTime']
  const lines = [row(details ? [...header, ...DETAIL_COLUMNS] : header)]
  const push = (cells: Array<string | number>, d: string[] | undefined): void => {
    lines.push(row(details ? [...cells, ...DETAIL_COLUMNS.map((_, i) => d?.[i] ?? '')] : cells))
  }
  for (const { level: l, qs: d } of snapshot.levels) {
    const fromQueue = (iq: number, ir: number, r: RequestDump): void => {
      const owner = snapshot.owners.get(r.req)
      push([
        l.name, r.req.flowSchema, iq, ir, r.req.flowDistinguisher ?? '', rfc3339Nano(epochOf(r.arrivalTime)), r.initialSeats, r.finalSeats,
        goDuration(r.additionalLatencyMs * 1e6), r.startTime === undefined ? GO_ZERO_TIME : rfc3339Nano(epochOf(r.startTime)),
      ], owner && byTicket.get(owner.peer)?.get(owner.id)?.details)
    }
    if (d) {
      for (const q of d.queues) {
        q.waiting.forEach((r, ir) => fromQueue(q.index, ir, r))
        for (const r of q.executing) fromQueue(q.index, -1, r)
      }
    }
    for (const entries of got.values()) {
      for (const e of entries) {
        if (e.ticket !== 0 || e.level !== l.index) continue
        push([l.name, e.fs, -1, -1, e.fd, rfc3339Nano(e.arrive), e.seats, e.finalSeats, goDuration(e.latencyMs * 1e6), rfc3339Nano(e.start || e.arrive)], e.details)
      }
    }
  }
  return tabwrite(lines.map((x) => x + '\n').join(''))
}

// ---------------------------------------------------------------- metrics

function metrics(): FlowMetrics {
  const out: LevelMetrics[] = []
  for (const l of levels.values()) {
    if (!l.present) continue
    const qm = l.qs?.metrics()
    const flowSchemas: Record<string, FlowSchemaCounters> = {}
    const rejectedTotal: Record<string, number> = { ...l.rejections }
    let dispatched = 0
    const fsNames = new Set<string>([...l.local.keys(), ...Object.keys(qm?.flowSchemas ?? {})])
    for (const fs of fsNames) {
      const q = qm?.flowSchemas[fs]
      const loc = l.local.get(fs) ?? { dispatched: 0, rejected: 0 }
      const rej: Record<string, number> = { 'queue-full': q?.rejected['queue-full'] ?? 0, 'concurrency-limit': (q?.rejected['concurrency-limit'] ?? 0) + loc.rejected, 'time-out': q?.rejected['time-out'] ?? 0, 'cancelled': q?.rejected.cancelled ?? 0 }
      const buckets = q?.waitExecuted.buckets ?? WAIT_DURATION_BUCKETS
      const cumulative = (q?.waitExecuted.cumulative ?? buckets.map(() => 0)).map((c) => c + loc.dispatched)
      flowSchemas[fs] = {
        dispatched: (q?.dispatched ?? 0) + loc.dispatched,
        rejected: rej,
        inQueue: q?.waitingRequests ?? 0,
        executingSeats: q?.executingSeats ?? 0,
        waitDuration: { buckets, cumulative, sum: q?.waitExecuted.sum ?? 0, count: (q?.waitExecuted.count ?? 0) + loc.dispatched },
      }
      dispatched += flowSchemas[fs].dispatched
    }
    if (qm) for (const k of Object.keys(qm.rejected)) rejectedTotal[k] += qm.rejected[k as keyof typeof qm.rejected]
    out.push({
      name: l.name, kind: l.info.kind, nominalCL: l.limits.nominalCL, lendableCL: l.limits.lendableCL,
      currentCL: unlimited || l.exempt ? -1 : l.currentCL, seatsInUse: l.inUse(), inQueue: l.qs?.waitingRequests ?? 0,
      seatsInQueue: l.qs?.waitingSeats ?? 0, dispatched, rejected: rejectedTotal, retryAfter: l.retry.value, flowSchemas,
      holds: l.qs?.holdCounts ?? { taken: 0, used: 0, expired: 0 },
    })
  }
  return {
    serverCL, levels: out,
    maxInFlight: { readonly: Atomics.load(seats, READONLY_SLOT), mutating: Atomics.load(seats, MUTATING_SLOT), rejected: Atomics.load(rejected, 0) },
  }
}

// ---------------------------------------------------------------- tasks

export default async function run(task: FlowTask): Promise<unknown> {
  switch (task.op) {
    case 'init': {
      const beats = new Float64Array(task.heartbeats)
      beats[task.heartbeatSlot] = Date.now()
      setInterval(() => { beats[task.heartbeatSlot] = Date.now() }, 100).unref()
      seats = new Int32Array(task.seats)
      rejected = new Int32Array(task.rejected)
      log = pino({ level: task.logLevel }).child({ actor: 'flow-control' })
      serverCL = task.serverCL ?? 600
      unlimited = serverCL <= 0
      requestTimeoutMs = task.requestTimeoutMs ?? 60_000
      seatHoldMs = task.seatHoldMs ?? 0
      // Until the store is read, only the built-in mandatory objects exist (upstream imagines them too).
      applyConfig({ flowSchemas: [], priorityLevels: [] })
      if (task.apf !== false) {
        setInterval(sample, SAMPLE_MS).unref()
        setInterval(adjustLevels, BORROWING_ADJUSTMENT_PERIOD_MS).unref()
      }
      return { ok: true }
    }
    case 'attach': {
      const peer = new Peer(task.port, task.name)
      peers.add(peer)
      if (replica !== null) peer.pushConfig(replica)
      if (watchTotals !== '') peer.pushWatchCounts(JSON.parse(watchTotals) as Array<[string, number]>)
      return { ok: true }
    }
    case 'source': {
      source?.close()
      source = new ConfigSource(task.dataDir, task.ports, applyConfig, (err) => log.error({ err }, 'reading the flow-control configuration failed'))
      await source.start()
      return { ok: true, generation, flowSchemas: digest?.flowSchemas.length ?? 0 }
    }
    case 'ping':
      return { ok: true }
  }
}
