// The flow-control actor: owns the APF configuration (read from the store), the concurrency limits and their periodic borrowing, and the fair queues of the Queue levels; front-ends take free seats themselves through the shared counters and come here only to queue.
import type { MessagePort } from 'node:worker_threads'
import { Packr } from 'msgpackr'
import { pino, type Logger } from 'pino'
import {
  BORROWING_ADJUSTMENT_PERIOD_MS, ZERO_SEAT_DEMAND, adjustBorrowing, computeConcurrencyLimits, digestConfig,
  type ConcurrencyLimits, type ConcurrencyPlan, type FlowConfig, type PriorityLevelInfo, type SeatDemandStats,
} from './config.js'
import { flowHash } from './dealer.js'
import { QueueSet, SeatDemandIntegrator, WAIT_DURATION_BUCKETS, realClock, type FlowRequest, type QueueSetConfig } from './fair-queuing.js'
import { RetryAfterTracker } from './retry-after.js'
import { ConfigSource, type ConfigObjects } from './source.js'
import {
  L_IN_USE, L_LIMIT, L_WAITING, LEVEL_CATCH_ALL, LEVEL_EXEMPT, MAX_LEVELS, MUTATING_SLOT, READONLY_SLOT, UNLIMITED, levelSlot,
  type ActorOut, type ConfigReplica, type Decision, type FlowMetrics, type FlowMsg, type FlowSchemaCounters, type LevelMetrics,
  type MetricsReply, type SyncReply,
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
}
export interface FlowAttach { op: 'attach'; port: MessagePort; name: string }
/** Where the configuration comes from: the data dir and one port per shard (those not needed are closed). */
export interface FlowSourceTask { op: 'source'; dataDir: string; ports: MessagePort[] }
export type FlowTask = FlowInit | FlowAttach | FlowSourceTask | { op: 'ping' }

const packr = new Packr({ useRecords: false, moreTypes: false })
/** How often seat demand is sampled (and a level with waiters and free seats is re-dispatched, as a safety net). */
const SAMPLE_MS = 25
const HASH_CACHE_MAX = 10_000

let seats: Int32Array
let rejected: Int32Array
let log: Logger
let serverCL = 600
let unlimited = false
let requestTimeoutMs = 60_000
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
  readonly rejections: Record<string, number> = { 'queue-full': 0, 'concurrency-limit': 0, 'time-out': 0 }
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
    sharedSeats: { inUse: () => l.inUse(), take: (n) => { Atomics.add(seats, l.inUseSlot, n) } },
    onCallbackError: (err) => log.error({ err, priorityLevel: l.name }, 'flow-control decision callback failed'),
  })
}

/** A new digest of the configuration: limits, queue sets and the replica every front-end classifies against. */
function applyConfig(objs: ConfigObjects): void {
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
  #out: ActorOut | null = null

  constructor(port: MessagePort, name: string) {
    this.port = port
    this.name = name
    port.on('message', (buf: Uint8Array) => {
      let msgs: FlowMsg[]
      try { msgs = packr.unpack(buf) as FlowMsg[] } catch (err) { log.error({ err, peer: name }, 'bad flow-control message'); return }
      for (const m of msgs) {
        try { handle(this, m) } catch (err) {
          log.error({ err, peer: name, op: m.op }, 'flow-control request failed')
          if (m.op === 'enqueue') this.reply({ id: m.id, d: 'rejected', reason: 'internal', retryAfter: 1 })
        }
      }
    })
    port.on('close', () => this.close())
  }

  reply(r: Decision | MetricsReply | SyncReply): void { (this.#queue().replies ??= []).push(r) }
  pushConfig(c: ConfigReplica): void { this.#queue().config = c }

  close(): void {
    peers.delete(this)
    for (const t of this.tickets.values()) t.qs.finish(t.req)
    this.tickets.clear()
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
    const buf = packr.pack(out)
    try { this.port.postMessage(buf, [buf.buffer as ArrayBuffer]) } catch (err) { log.warn({ err, peer: this.name }, 'flow-control reply not delivered') }
  }
}

function handle(peer: Peer, m: FlowMsg): void {
  switch (m.op) {
    case 'enqueue': return enqueue(peer, m.id, m.level, m.fs, m.fd, m.seats, m.finalSeats, m.latencyMs)
    case 'finish': {
      const t = peer.tickets.get(m.id)
      if (t === undefined) return
      peer.tickets.delete(m.id)
      t.qs.finish(t.req)
      t.level.markWaiting()
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
    if (l.tryTake(Math.max(initialSeats, finalSeats))) peer.reply({ id, d: 'dispatched' })
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
  const answer = qs.submit(req, (decision, reason) => {
    if (decision === 'dispatched') peer.reply({ id, d: 'dispatched' })
    else {
      peer.tickets.delete(id)
      peer.reply({ id, d: decision, reason, retryAfter: l.retry.recordDrop() })
    }
    l.markWaiting()
  })
  if (answer === 'dispatched') { peer.reply({ id, d: 'dispatched' }); return }
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
      const rej: Record<string, number> = { 'queue-full': q?.rejected['queue-full'] ?? 0, 'concurrency-limit': (q?.rejected['concurrency-limit'] ?? 0) + loc.rejected, 'time-out': q?.rejected['time-out'] ?? 0 }
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
