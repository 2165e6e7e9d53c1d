// What the queue sets of fair-queuing.ts measure with: an injectable clock, fixed-point seat-seconds, the seat-demand
// integrator that feeds borrowing, and the wait-duration histogram.

// ---------------------------------------------------------------- clock

/** Time in milliseconds plus one-shot timers; injectable so tests can drive time by hand. */
export interface Clock {
  now(): number
  setTimer(fn: () => void, ms: number): unknown
  clearTimer(handle: unknown): void
}

export const realClock: Clock = {
  now: () => performance.now(),
  setTimer: (fn, ms) => setTimeout(fn, Math.max(0, ms)),
  clearTimer: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
}

// ---------------------------------------------------------------- seat-seconds

/** Seat-seconds are fixed point, 10^8 units per seat-second (upstream fqrequest.SeatSeconds). */
export const SS_SCALE = 1e8

/** SeatsTimesDuration: seats × ms in seat-second units (rounded like upstream). */
export function seatsTimesMs(seats: number, ms: number): number { return Math.round(seats * ms * (SS_SCALE / 1000)) }
export function ssToSeatSeconds(ss: number): number { return ss / SS_SCALE }
/** Seat-seconds the way upstream prints them: whole part, eight decimals, "ss". */
export function formatSeatSeconds(ss: number): string {
  const v = Math.round(Math.abs(ss))
  return `${ss < 0 ? '-' : ''}${Math.floor(v / SS_SCALE)}.${String(v % SS_SCALE).padStart(8, '0')}ss`
}


// ---------------------------------------------------------------- seat-demand integrator

export interface IntegratorResults {
  /** Seconds integrated. */
  duration: number
  average: number
  /** Standard deviation; NaN when the variance came out negative or nothing was integrated. */
  deviation: number
  min: number
  max: number
}

/** Time-weighted moments of a piecewise-constant value (upstream fairqueuing.Integrator). */
export class SeatDemandIntegrator {
  readonly #clock: Clock
  #last: number
  #x = 0
  #elapsed = 0
  #ix = 0
  #ixx = 0
  #min = 0
  #max = 0

  constructor(clock: Clock) {
    this.#clock = clock
    this.#last = clock.now()
  }

  get value(): number { return this.#x }

  set(x: number): void {
    this.#update()
    this.#x = x
    if (x < this.#min) this.#min = x
    if (x > this.#max) this.#max = x
  }

  #update(): void {
    const now = this.#clock.now()
    const dt = (now - this.#last) / 1000
    this.#last = now
    this.#elapsed += dt
    this.#ix += dt * this.#x
    this.#ixx += dt * this.#x * this.#x
  }

  results(): IntegratorResults {
    this.#update()
    let average = NaN
    let deviation = NaN
    if (this.#elapsed > 0) {
      average = this.#ix / this.#elapsed
      const variance = this.#ixx / this.#elapsed - average * average
      if (variance >= 0) deviation = Math.sqrt(variance)
    }
    return { duration: this.#elapsed, average, deviation, min: this.#min, max: this.#max }
  }

  /** The results so far, then start a new period from the current value. */
  reset(): IntegratorResults {
    const r = this.results()
    this.#elapsed = 0
    this.#ix = 0
    this.#ixx = 0
    this.#min = this.#x
    this.#max = this.#x
    return r
  }
}

// ---------------------------------------------------------------- histogram

/** Buckets (seconds) of apiserver_flowcontrol_request_wait_duration_seconds. */
export const WAIT_DURATION_BUCKETS: readonly number[] = [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30]

export class Histogram {
  readonly buckets: readonly number[]
  readonly #counts: number[]
  sum = 0
  count = 0

  constructor(buckets: readonly number[] = WAIT_DURATION_BUCKETS) {
    this.buckets = buckets
    this.#counts = new Array<number>(buckets.length).fill(0)
  }

  observe(v: number): void {
    this.sum += v
    this.count++
    for (let i = 0; i < this.buckets.length; i++) if (v <= this.buckets[i]) { this.#counts[i]++; break }
  }

  /** Cumulative counts per upper bound (Prometheus `le`), +Inf being `count`. */
  cumulative(): number[] {
    const out: number[] = []
    let acc = 0
    for (const c of this.#counts) { acc += c; out.push(acc) }
    return out
  }
}
