// The seat holds of one queue set (--priority-and-fairness-seat-hold): what each flow has on the level, the seats held
// for flows whose request just ended, and each flow's think time. The queue set asks it at arrival, dispatch and finish.
import type { Clock } from './measures.js'

/** A flow: its hash (fair-queuing.ts FlowRequest.hash, 0 when the level does not shuffle-shard). */
export type FlowKey = bigint | number

/** What one flow has on the level: requests waiting, seats held by its executing requests. */
class FlowUse {
  waiting = 0
  seats = 0
}

/** Seats kept for one flow after its request ended, until it asks again or the hold runs out. */
interface Hold { seats: number; timer: unknown }

/** A flow's time between the end of a request and its next one: when the last ended (0: asked since), the average. */
interface Think { endedAt: number; avgMs: number }

/** Flows whose think time is remembered (the map starts over beyond this). */
const THINK_MAX_FLOWS = 4096

/**
 * The hold rule. A flow that asks again as soon as it is answered (one client, one request at a time) has nothing
 * waiting when its seat frees, so work-conserving fair queuing gives that seat to the flows that do wait, and its next
 * request, a round trip later, finds every seat taken and waits for most of a cycle of theirs: in phase with them,
 * it never gets its share. So when a request ends while other flows wait, and its flow has nothing waiting and held
 * no more than its fair share of the level (the limit over the active flows, itself included), its seats stay held
 * for it for holdMs. Its next request within that time takes them at once; after it they go to the waiting flows.
 * Disk schedulers do the same for synchronous readers (anticipatory scheduling). A held seat counts as taken.
 * A flow whose requests come further apart than holdMs on average (its think time) gets no hold: one that does not
 * come back in time stops being waited for after a hold or two, and is again once its gaps shrink; one late return
 * of a flow that is usually quick (a pause of its client) moves its average by a quarter of the gap, at most one hold.
 * With holdMs 0 nothing is counted or held.
 */
export class SeatHolds {
  readonly #holdMs: number
  readonly #clock: Clock
  /** A hold ran out (its seats are free again): the queue set dispatches. */
  readonly #onExpire: () => void
  /** Per flow: what it has waiting and executing; a flow with neither has no entry. */
  readonly #flows = new Map<FlowKey, FlowUse>()
  readonly #holds = new Map<FlowKey, Hold>()
  /** Per flow that recently finished a request (see ended, arrived). */
  readonly #think = new Map<FlowKey, Think>()
  #held = 0
  #taken = 0
  #used = 0
  #expired = 0

  constructor(holdMs: number, clock: Clock, onExpire: () => void) {
    this.#holdMs = Math.max(0, holdMs)
    this.#clock = clock
    this.#onExpire = onExpire
  }

  /** Seats held for flows whose request just ended. */
  get held(): number { return this.#held }
  /** Holds taken, those the flow came back for before they ran out, and those that ran out. */
  get counts(): { taken: number; used: number; expired: number } { return { taken: this.#taken, used: this.#used, expired: this.#expired } }

  /**
   * A request of the flow arrives to wait: its think time takes the gap since its last request ended, and what was held
   * for it is its own again (true: it had a hold, which is gone now).
   */
  arrive(key: FlowKey, now: number): boolean {
    if (this.#holdMs <= 0) return false
    const t = this.#think.get(key)
    if (t !== undefined && t.endedAt !== 0) {
      // A gap counts for at most 4 holds (a flow's fast-path requests never reach here, so a gap may span several).
      t.avgMs = 0.75 * t.avgMs + 0.25 * Math.min(now - t.endedAt, 4 * this.#holdMs)
      t.endedAt = 0
    }
    if (this.#holds.size === 0 || !this.#drop(key)) return false
    this.#used++
    return true
  }

  /** The flow's request waits in a queue (+1) or leaves it (-1). */
  waiting(key: FlowKey, n: 1 | -1): void {
    if (this.#holdMs <= 0) return
    const f = this.#use(key)
    f.waiting += n
    this.#done(key, f)
  }

  /** The flow's request took (n > 0) or gave back (n < 0) seats. */
  seats(key: FlowKey, n: number): void {
    if (this.#holdMs <= 0) return
    const f = this.#use(key)
    f.seats += n
    this.#done(key, f)
  }

  /**
   * The flow's request gave back its `seats` (already counted by seats()); `othersWaiting`: requests wait on the level.
   * Holds them for the flow when the hold rule says so.
   */
  ended(key: FlowKey, seats: number, limit: number, othersWaiting: boolean, now: number): void {
    if (this.#holdMs <= 0) return
    let think = this.#think.get(key)
    if (think === undefined) {
      if (this.#think.size >= THINK_MAX_FLOWS) this.#think.clear()
      think = { endedAt: now, avgMs: 0 }
      this.#think.set(key, think)
    } else think.endedAt = now
    if (!othersWaiting || think.avgMs > this.#holdMs) return
    const use = this.#flows.get(key)
    if (use !== undefined && use.waiting > 0) return
    const prior = this.#holds.get(key)
    const active = this.#flows.size + (use === undefined ? 1 : 0)
    if ((use?.seats ?? 0) + (prior?.seats ?? 0) + seats > limit / active) return
    let h = prior
    if (h === undefined) {
      h = { seats: 0, timer: undefined }
      this.#holds.set(key, h)
    } else this.#clock.clearTimer(h.timer)
    h.seats += seats
    this.#held += seats
    this.#taken++
    h.timer = this.#clock.setTimer(() => {
      if (!this.#drop(key)) return
      this.#expired++
      this.#onExpire()
    }, this.#holdMs)
  }

  /** Every hold let go (the queue set drains). */
  clear(): void {
    for (const key of [...this.#holds.keys()]) this.#drop(key)
  }

  #drop(key: FlowKey): boolean {
    const h = this.#holds.get(key)
    if (h === undefined) return false
    this.#holds.delete(key)
    this.#clock.clearTimer(h.timer)
    this.#held -= h.seats
    return true
  }

  #use(key: FlowKey): FlowUse {
    let f = this.#flows.get(key)
    if (f === undefined) { f = new FlowUse(); this.#flows.set(key, f) }
    return f
  }

  #done(key: FlowKey, f: FlowUse): void {
    if (f.waiting === 0 && f.seats === 0) this.#flows.delete(key)
  }
}
