// The adaptive Retry-After of a priority level (upstream dropped_requests_tracker.go).

/** Upstream maxRetryAfter: the value never grows past 32 s. */
export const MAX_RETRY_AFTER = 32

/**
 * Starts at 1. On the first drop of each new second it looks at the drops of the last `retryAfter` seconds: at least
 * 3·retryAfter of them, with retryAfter seconds since the last increase, double it (at most 32); fewer than
 * retryAfter, decrease it by one (at least 1). Between drops it does not change.
 */
export class RetryAfterTracker {
  #retryAfter = 1
  #lastIncrease = 0
  /** [unix second, drops] oldest first */
  readonly #history: Array<[number, number]> = []

  get value(): number { return this.#retryAfter }

  recordDrop(nowMs: number = Date.now()): number {
    const unix = Math.floor(nowMs / 1000)
    const h = this.#history
    const last = h[h.length - 1]
    if (last !== undefined && last[0] === unix) { last[1]++; return this.#retryAfter }
    h.push([unix, 1])
    const maxHistory = Math.min(2 * this.#retryAfter, MAX_RETRY_AFTER)
    let start = 0
    while (start < h.length && unix - h[start][0] > maxHistory) start++
    if (start > 0) h.splice(0, start)
    const retryAfter = this.#retryAfter
    let drops = 0
    for (let i = h.length - 1; i >= 0; i--) {
      if (unix - h[i][0] > retryAfter) break
      drops += h[i][1]
    }
    if (unix - this.#lastIncrease >= retryAfter && drops >= 3 * retryAfter) {
      this.#retryAfter = Math.min(2 * retryAfter, MAX_RETRY_AFTER)
      this.#lastIncrease = unix
    } else if (drops < retryAfter && retryAfter > 1) {
      this.#retryAfter = retryAfter - 1
    }
    return this.#retryAfter
  }
}
