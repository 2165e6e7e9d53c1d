// A small work queue: keys deduplicated while waiting, one worker, retries after a delay.
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
