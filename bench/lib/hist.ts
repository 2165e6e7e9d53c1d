// Latency histograms (perf_hooks HDR-style, nanoseconds in, milliseconds out) and their summaries.
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks'

/** A histogram of durations in nanoseconds, 1 ns .. 10 min, 3 significant figures. */
export function newHistogram(): RecordableHistogram {
  return createHistogram({ lowest: 1, highest: 600e9, figures: 3 })
}

/** Records a duration in nanoseconds; values below 1 ns are recorded as 1 ns. */
export function recordNs(h: RecordableHistogram, ns: number | bigint): void {
  const v = typeof ns === 'bigint' ? Number(ns) : ns
  h.record(v >= 1 ? Math.round(v) : 1)
}

export interface LatencySummary {
  count: number
  mean: number
  p50: number
  p90: number
  p99: number
  p999: number
  max: number
}

const ms = (ns: number) => Math.round(ns / 1e3) / 1e3

/** Milliseconds with microsecond resolution. */
export function summarize(h: RecordableHistogram): LatencySummary {
  if (h.count === 0) return { count: 0, mean: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0 }
  return {
    count: h.count,
    mean: ms(h.mean),
    p50: ms(h.percentile(50)),
    p90: ms(h.percentile(90)),
    p99: ms(h.percentile(99)),
    p999: ms(h.percentile(99.9)),
    max: ms(h.max),
  }
}

/** Points of the latency distribution, [percentile, ms], at fixed percentiles (HDR-style plot: 1/(1-p) on a log axis). */
export function distribution(h: RecordableHistogram): Array<[number, number]> {
  if (h.count === 0) return []
  const ps = [0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 99.999, 100]
  return ps.map((p) => [p, ms(p === 0 ? h.min : p === 100 ? h.max : h.percentile(p))])
}
