// A small work queue (keys deduplicated while waiting, one worker, retries after a delay) and the controller base on it.
import type { Logger } from 'pino'
import { objectKey, recordAttrs, typePrefix } from '../machinery/storage-format.js'
import type { InternalClient } from '../server/internal-client.js'
export class WorkQueue {
  #waiting = new Set<string>()
  #running = false
  #stopped = false
  #timers = new Set<NodeJS.Timeout>()
  readonly #work: (key: string) => Promise<boolean>
  readonly #onError: (err: unknown, key: string) => void

  /** `work` returns true when done, false to be retried after `retryMs`. */
  constructor(work: (key: string) => Promise<boolean>, onError: (err: unknown, key: string) => void, readonly retryMs = 500) {
    this.#work = work
    this.#onError = onError
  }

  add(key: string): void {
    if (this.#stopped) return
    this.#waiting.add(key)
    if (!this.#running) void this.#drain()
  }

  addAfter(key: string, ms: number): void {
    const t = setTimeout(() => { this.#timers.delete(t); this.add(key) }, ms)
    t.unref()
    this.#timers.add(t)
  }

  stop(): void {
    this.#stopped = true
    for (const t of this.#timers) clearTimeout(t)
    this.#waiting.clear()
  }

  async #drain(): Promise<void> {
    this.#running = true
    while (this.#waiting.size > 0 && !this.#stopped) {
      const key = this.#waiting.values().next().value as string
      this.#waiting.delete(key)
      let done = false
      try { done = await this.#work(key) } catch (err) { this.#onError(err, key) }
      if (!done) this.addAfter(key, this.retryMs)
    }
    this.#running = false
  }
}

/** Records read per event-loop turn by a controller's scan of stored objects. */
const SCAN_SLICE = 5000

/** What every main-thread controller shares: its in-process client, a logger, one work queue and its subscriptions. */
export abstract class QueueController {
  protected readonly client: InternalClient
  protected readonly log: Logger
  protected readonly queue: WorkQueue
  protected readonly unlisten: Array<() => void> = []
  /** Set by stop(): long initial scans check it between slices. */
  protected stopped = false

  /** `what` names the item in error logs (`namespace`, `clusterrole`, ...). */
  constructor(client: InternalClient, log: Logger, what: string, retryMs: number) {
    this.client = client
    this.log = log
    this.queue = new WorkQueue((k) => this.work(k), (err, k) => log.error({ err, [what]: k }, `${what} sync failed`), retryMs)
  }

  /** One item: true when done, false to be retried. */
  protected abstract work(key: string): Promise<boolean>

  /**
   * For controllers keyed by namespace: queues every active namespace now, and each again whenever it is written while
   * active (not terminating).
   */
  protected async queueActiveNamespaces(): Promise<void> {
    const { registry, store } = this.client.pipeline
    this.unlisten.push(await this.client.listen(registry.byGroupResource('', 'namespaces')!, (events) => {
      for (const [type, key, , rec] of events) if (type !== 'DELETED' && !recordAttrs(rec).d) this.queue.add(key.slice(key.lastIndexOf('/') + 1))
    }, { attrsOnly: true }))
    const shard = store.shardFor('', 'namespaces')
    store.snapshot(shard)
    for (const { key, value } of store.range(shard, typePrefix('', 'namespaces', ''))) {
      if (!recordAttrs(value).d) this.queue.add(key.slice(key.lastIndexOf('/') + 1))
    }
  }

  /**
   * Visits every stored record under `prefix` (raw reads: no copy of a record is made), `SCAN_SLICE` per event-loop turn
   * so that the main thread stays responsive with millions of objects. Between slices it goes on while `goOn()` holds
   * (default: the controller is not stopped); false when it stopped early.
   */
  protected async scanInSlices(shard: number, prefix: string, visit: (key: string, rec: Uint8Array) => void, goOn: () => boolean = () => !this.stopped): Promise<boolean> {
    const { store } = this.client.pipeline
    let after: string | undefined
    for (;;) {
      store.snapshot(shard)
      const txn = store.readTxn(shard)
      let n = 0
      try {
        for (const e of store.rawRange(shard, prefix, after, txn)) {
          after = e.key
          visit(e.key, e.rec)
          if (++n === SCAN_SLICE) break
        }
      } finally {
        txn.done()
      }
      if (n < SCAN_SLICE) return true
      await new Promise((r) => setImmediate(r))
      if (!goOn()) return false
    }
  }

  /** Whether the namespace exists and is not terminating, as of now. */
  protected namespaceActive(ns: string): boolean {
    const { store } = this.client.pipeline
    const rec = store.getFresh(store.shardFor('', 'namespaces'), objectKey('', 'namespaces', '', ns))
    return rec !== undefined && !recordAttrs(rec).d
  }

  stop(): void {
    this.stopped = true
    this.queue.stop()
    for (const u of this.unlisten) u()
  }
}
