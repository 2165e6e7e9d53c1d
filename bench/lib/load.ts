// Load loops: closed-loop (N slots, each with one request in flight) and paced (a fixed rate), both bounded in time.
import type { RecordableHistogram } from 'node:perf_hooks'
import { newHistogram, recordNs, summarize, distribution, type LatencySummary } from './hist.js'
import type { Progress } from './progress.js'

/** What one operation ended with: 'ok', or a kind (e.g. 'status 409', 'conflict', 'error ECONNRESET'). */
export type Outcome = string

export interface LoadResult {
  ops: number
  seconds: number
  throughput: number
  latency: LatencySummary
  distribution: Array<[number, number]>
  /** completed operations in each second of the measured window */
  timeline: number[]
  errors: number
  outcomes: Record<string, number>
  /** wall-clock bounds of the measured window (epoch ms), to match server log lines */
  window: [number, number]
}

export interface ClosedLoopOptions<C> {
  label: string
  /** slot i uses clients[i % clients.length] */
  clients: C[]
  concurrency: number
  warmupMs: number
  durationMs: number
  /** stop after this many measured operations instead of the duration (0 = use the duration) */
  count?: number
  op: (client: C, slot: number) => Promise<Outcome>
  progress: Progress
  /** outcomes that are counted but are not errors (e.g. an expected 'conflict') */
  expected?: string[]
  /** called when the measured window opens and closes (process sampling) */
  onStart?: () => void
  onEnd?: () => void
}

/** Upper bound for a run that stops by count, so that no loop runs unbounded. */
const MAX_COUNT_RUN_MS = 30 * 60 * 1000

export function outcomeOf(err: unknown): Outcome {
  const e = err as NodeJS.ErrnoException
  return `error ${e?.code ?? e?.message ?? String(err)}`
}

export async function closedLoop<C>(o: ClosedLoopOptions<C>): Promise<LoadResult> {
  const h = newHistogram()
  const outcomes: Record<string, number> = {}
  const timeline: number[] = []
  const expected = new Set(['ok', ...(o.expected ?? [])])
  let phase: 'warmup' | 'measure' | 'done' = o.warmupMs > 0 ? 'warmup' : 'measure'
  let t0 = performance.now()
  let wallStart = Date.now()
  let tEnd = 0
  let measured = 0
  let errors = 0
  const count = o.count ?? 0
  const started = performance.now()
  if (phase === 'measure') o.onStart?.()
  const totalMs = o.warmupMs + (count > 0 ? 0 : o.durationMs)

  const finish = () => {
    if (phase === 'done') return
    phase = 'done'
    tEnd = performance.now()
    o.onEnd?.()
  }
  const begin = () => {
    phase = 'measure'
    t0 = performance.now()
    wallStart = Date.now()
    o.onStart?.()
  }
  const timers: NodeJS.Timeout[] = []
  if (o.warmupMs > 0) timers.push(setTimeout(begin, o.warmupMs))
  timers.push(setTimeout(finish, count > 0 ? o.warmupMs + MAX_COUNT_RUN_MS : totalMs))
  const ticker = setInterval(() => {
    const el = (performance.now() - started) / 1000
    const secs = (performance.now() - t0) / 1000
    const rate = phase === 'measure' && secs > 0 ? Math.round(measured / secs) : 0
    const of = count > 0 ? `${measured}/${count} ops` : `${el.toFixed(0)}s/${(totalMs / 1000).toFixed(0)}s`
    o.progress.update(`[${o.label}] ${phase} ${of} ${rate} ops/s errors ${errors}`)
  }, 1000)

  const slot = async (i: number) => {
    const client = o.clients[i % o.clients.length]
    while (phase !== 'done') {
      const p = phase
      const s = performance.now()
      let out: Outcome
      try {
        out = await o.op(client, i)
      } catch (err) {
        out = outcomeOf(err)
      }
      const e = performance.now()
      if (p !== 'measure' || phase !== 'measure') continue
      recordNs(h, (e - s) * 1e6)
      outcomes[out] = (outcomes[out] ?? 0) + 1
      if (!expected.has(out)) errors++
      const sec = Math.floor((e - t0) / 1000)
      timeline[sec] = (timeline[sec] ?? 0) + 1
      measured++
      if (count > 0 && measured >= count) finish()
    }
  }
  await Promise.all(Array.from({ length: o.concurrency }, (_, i) => slot(i)))
  for (const t of timers) clearTimeout(t)
  clearInterval(ticker)
  o.progress.clear()
  return result(h, measured, (tEnd - t0) / 1000, timeline, errors, outcomes, [wallStart, wallStart + (tEnd - t0)])
}

function result(h: RecordableHistogram, ops: number, seconds: number, timeline: number[], errors: number, outcomes: Record<string, number>, window: [number, number]): LoadResult {
  for (let i = 0; i < timeline.length; i++) timeline[i] ??= 0
  // whole seconds only: the last bucket is usually a fraction of one, which would show as a dip
  const whole = Math.max(1, Math.floor(seconds + 0.05))
  if (timeline.length > whole) timeline.length = whole
  return {
    ops,
    seconds: Math.round(seconds * 1000) / 1000,
    throughput: seconds > 0 ? Math.round((ops / seconds) * 10) / 10 : 0,
    latency: summarize(h),
    distribution: distribution(h),
    timeline,
    errors,
    outcomes,
    window,
  }
}

export interface PacedOptions {
  label: string
  /** operations per second */
  rate: number
  durationMs: number
  /** at most this many in flight; a tick that finds them all busy is counted as 'skipped' */
  maxInFlight: number
  op: (seq: number) => Promise<Outcome>
  progress: Progress
  expected?: string[]
}

/**
 * Starts operations at a fixed rate (open loop) and records each one's latency from the time it was due, not from when
 * the generator got round to starting it: a generator that falls behind (its event loop busy, or off the CPU) counts
 * its own lateness against the result instead of hiding it (what wrk2 calls coordinated omission).
 */
export async function paced(o: PacedOptions): Promise<LoadResult> {
  const h = newHistogram()
  const outcomes: Record<string, number> = {}
  const timeline: number[] = []
  const expected = new Set(['ok', ...(o.expected ?? [])])
  const t0 = performance.now()
  const wallStart = Date.now()
  const interval = 1000 / o.rate
  let seq = 0
  let inFlight = 0
  let errors = 0
  let measured = 0
  const running = new Set<Promise<void>>()
  const ticker = setInterval(() => {
    const el = (performance.now() - t0) / 1000
    o.progress.update(`[${o.label}] ${el.toFixed(0)}s/${(o.durationMs / 1000).toFixed(0)}s ${measured} ops errors ${errors}`)
  }, 1000)
  const one = async (n: number) => {
    const dueAt = t0 + n * interval
    let out: Outcome
    try {
      out = await o.op(n)
    } catch (err) {
      out = outcomeOf(err)
    }
    const e = performance.now()
    recordNs(h, (e - dueAt) * 1e6)
    outcomes[out] = (outcomes[out] ?? 0) + 1
    if (!expected.has(out)) errors++
    const sec = Math.floor((e - t0) / 1000)
    timeline[sec] = (timeline[sec] ?? 0) + 1
    measured++
  }
  while (performance.now() - t0 < o.durationMs) {
    const due = Math.floor((performance.now() - t0) / interval) + 1
    while (seq < due) {
      if (inFlight >= o.maxInFlight) {
        outcomes.skipped = (outcomes.skipped ?? 0) + 1
        errors++
        seq++
        continue
      }
      inFlight++
      const p = one(seq++).finally(() => { inFlight--; running.delete(p) })
      running.add(p)
    }
    const next = t0 + (seq) * interval
    await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())))
  }
  const seconds = (performance.now() - t0) / 1000
  // operations still in flight get a bounded grace period; one that never answers is left behind
  await Promise.race([Promise.all(running), new Promise((r) => setTimeout(r, 10_000).unref())])
  clearInterval(ticker)
  o.progress.clear()
  return result(h, measured, seconds, timeline, errors, outcomes, [wallStart, wallStart + seconds * 1000])
}
