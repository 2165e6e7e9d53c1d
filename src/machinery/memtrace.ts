// TEMPORARY investigation aid: per-thread heap figures every 250 ms when ORCH_MEMTRACE is set.
import v8 from 'node:v8'
import { pino } from 'pino'
import { PerformanceObserver } from 'node:perf_hooks'

export function memtrace(name: string): void {
  if (!process.env.ORCH_MEMTRACE) return
  const log = pino({ level: 'info' })
  let gcMs = 0
  let gcs = 0
  new PerformanceObserver((l) => { for (const e of l.getEntries()) { gcMs += e.duration; gcs++ } }).observe({ entryTypes: ['gc'] })
  const M = (n: number) => Math.round(n / 1048576 * 10) / 10
  setInterval(() => {
    const m = process.memoryUsage()
    const sp: Record<string, number> = {}
    for (const s of v8.getHeapSpaceStatistics()) if (s.space_size > 0) sp[s.space_name.replace('_space', '')] = M(s.space_size)
    log.info({ mt: name, total: M(m.heapTotal), used: M(m.heapUsed), ext: M(m.external), ab: M(m.arrayBuffers), sp, gcMs: Math.round(gcMs), gcs }, 'memtrace')
  }, 250).unref()
}
