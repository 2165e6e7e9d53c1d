// The facade a front-end (or the main thread) holds for the flow-control actor: messages batched per microtask checkpoint, decisions by id, the configuration replica pushed.
import type { MessagePort } from 'node:worker_threads'
import type { ActorOut, ConfigReplica, Decision, DumpKind, DumpReply, FlowMetrics, FlowMsg, InflightEntry, LocalCounts, MetricsReply, SyncReply } from './messages.js'


type Pending = (reply: Decision | MetricsReply | SyncReply | DumpReply) => void

export class FlowClient {
  readonly #port: MessagePort
  #nextId = 1
  readonly #pending = new Map<number, Pending>()
  #out: FlowMsg[] | null = null
  #kicks: Set<number> | null = null
  #onConfig: ((c: ConfigReplica) => void) | null = null
  #onCollect: ((details: boolean) => InflightEntry[]) | null = null
  #onWatchCounts: ((counts: Array<[string, number]>) => void) | null = null
  #closed = false

  constructor(port: MessagePort) {
    this.#port = port
    port.on('message', (msg: ActorOut) => this.#receive(msg))
  }

  /** Called with every configuration the actor pushes (the latest replaces the previous). */
  onConfig(fn: (c: ConfigReplica) => void): void { this.#onConfig = fn }

  /** Called with the server-wide watch counts whenever they change. */
  onWatchCounts(fn: (counts: Array<[string, number]>) => void): void { this.#onWatchCounts = fn }

  /** What this thread answers when the actor collects the requests in flight (none without it). */
  onCollect(fn: (details: boolean) => InflightEntry[]): void { this.#onCollect = fn }

  /** The text of a debug dump (upstream's /debug/api_priority_and_fairness/dump_<what>). */
  dump(what: DumpKind, details: boolean): Promise<string> {
    const id = this.#nextId++
    this.#send({ op: 'dump', id, what, details })
    return new Promise((resolve) => { this.#pending.set(id, (r) => resolve((r as DumpReply).text)) })
  }

  /** Queues a request on its level; resolves with the actor's decision. `id` is the ticket for finish/cancel. */
  enqueue(level: number, fs: string, fd: string, seats: number, finalSeats: number, latencyMs: number): { id: number; decision: Promise<Decision> } {
    const id = this.#nextId++
    this.#send({ op: 'enqueue', id, level, fs, fd, seats, finalSeats, latencyMs })
    return { id, decision: new Promise((resolve) => { this.#pending.set(id, resolve as Pending) }) }
  }

  /** The request dispatched under ticket `id` is done. */
  finish(id: number): void { this.#send({ op: 'finish', id }) }

  /** The client of the waiting request `id` went away. */
  cancel(id: number): void { this.#send({ op: 'cancel', id }) }

  /** Seats were given back on a level with waiters (one message per level per microtask checkpoint). */
  kick(level: number): void {
    if (this.#kicks === null) {
      this.#kicks = new Set()
      this.#schedule()
    }
    this.#kicks.add(level)
  }

  /** Local decisions since the last report, and this thread's watch counts when they changed. */
  report(counts: LocalCounts[], watches?: Array<[string, number]>): void {
    if (counts.length > 0 || watches !== undefined) this.#send(watches === undefined ? { op: 'report', counts } : { op: 'report', counts, watches })
  }

  metrics(): Promise<FlowMetrics> {
    const id = this.#nextId++
    this.#send({ op: 'metrics', id })
    return new Promise((resolve) => { this.#pending.set(id, (r) => resolve((r as MetricsReply).metrics)) })
  }

  /** Resolves once the actor's configuration includes every FlowSchema and level write committed before the call. */
  sync(): Promise<void> {
    const id = this.#nextId++
    this.#send({ op: 'sync', id, rv: 0 })
    return new Promise((resolve) => { this.#pending.set(id, () => resolve()) })
  }

  close(): void {
    this.#closed = true
    this.#port.close()
  }

  #send(m: FlowMsg): void {
    if (this.#closed) return
    if (this.#out === null) {
      this.#out = []
      if (this.#kicks === null) this.#schedule()
    }
    this.#out.push(m)
  }

  /**
   * One flush per microtask checkpoint: what the current callback (a request, a commit's replies) produced goes in one
   * message at once. Flushing at the end of the loop turn instead (setImmediate) left a freed seat unused until then:
   * the seat's waiter reached the actor one poll phase later. apf-fairness, 5 alternating pairs on 2 cores: the
   * elephant's creates on a 4-seat level 2,143-2,724/s vs 1,761-2,103/s, the mouse's p50 beside it 2.66-3.07x alone
   * vs 3.06-3.43x; contended creates and GETs cost the same CPU per request.
   */
  #schedule(): void { queueMicrotask(() => this.#flush()) }

  #flush(): void {
    const out = this.#out ?? []
    this.#out = null
    if (this.#kicks !== null) {
      out.push({ op: 'kick', levels: [...this.#kicks] })
      this.#kicks = null
    }
    if (out.length === 0 || this.#closed) return
    // Structured clone (see machinery/port-rpc.ts: cheaper than a packed buffer per message).
    this.#port.postMessage(out)
  }

  #receive(msg: ActorOut): void {
    if (msg.config && this.#onConfig) this.#onConfig(msg.config)
    if (msg.watchCounts && this.#onWatchCounts) this.#onWatchCounts(msg.watchCounts)
    if (msg.collect) {
      for (const c of msg.collect) {
        let entries: InflightEntry[] = []
        try { if (this.#onCollect) entries = this.#onCollect(c.details) } catch { entries = [] }
        this.#send({ op: 'collected', id: c.id, entries })
      }
    }
    if (msg.replies) {
      for (const r of msg.replies) {
        const p = this.#pending.get(r.id)
        if (p) { this.#pending.delete(r.id); p(r) }
      }
    }
  }
}

// What a front-end needs besides the port: classification against the replica, the work estimator, Retry-After.
export { compileFlowSchema, flowDistinguisher } from './classify.js'
// ... and for the main thread's APF configuration controller: the producer's plan and the FlowSchema status.
export { CONFIG_CONSUMER_FIELD_MANAGER, CONFIG_PRODUCER_FIELD_MANAGER } from './config.js'
export { planConfigProducer, statusConditions } from './producer.js'
export { estimateWidth } from './work-estimate.js'
export { RetryAfterTracker } from './retry-after.js'
