// CPU and memory of a process from /proc/<pid>/stat and /proc/<pid>/status, and of the whole machine from /proc/stat.
import { readFileSync } from 'node:fs'
import os from 'node:os'
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks'

/** Kernel clock ticks per second (USER_HZ): 100 on every Linux we run on. */
const TICKS = 100

/** utime + stime of a process in seconds, or undefined when it is gone. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'latin1')
    // the command name (field 2) may hold spaces: fields are counted after its closing parenthesis
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ')
    return (Number(f[11]) + Number(f[12])) / TICKS
  } catch {
    return undefined
  }
}

/**
 * VmRSS and VmHWM (peak) of a process in bytes, and RSS split into anonymous memory (heaps, buffers) and file pages
 * (mapped files: the LMDB data file is read through a map, so the pages it touches count here).
 */
export function memory(pid: number): { rss: number; hwm: number; anon: number; file: number } | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'latin1')
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? 0) * 1024
    return { rss: kb('VmRSS'), hwm: kb('VmHWM'), anon: kb('RssAnon'), file: kb('RssFile') + kb('RssShmem') }
  } catch {
    return undefined
  }
}

/** Busy and total CPU seconds of the whole machine (all cores). */
export function machineCpu(): { busy: number; total: number } {
  try {
    const line = readFileSync('/proc/stat', 'latin1').split('\n')[0]
    const v = line.trim().split(/\s+/).slice(1).map(Number)
    const idle = v[3] + (v[4] ?? 0)
    const total = v.reduce((a, b) => a + b, 0)
    return { busy: (total - idle) / TICKS, total: total / TICKS }
  } catch {
    return { busy: 0, total: 0 }
  }
}

export interface ProcStats {
  /** CPU used in the window, in percent of one core (200 = two cores busy) */
  cpuPct: number
  cpuSeconds: number
  /** highest RSS sampled in the window, MiB */
  peakRssMB: number
  /** the kernel's lifetime peak (VmHWM), MiB */
  hwmMB: number
  /** RSS at the end of the window, MiB */
  rssMB: number
}

const MB = 1024 * 1024
const round1 = (x: number) => Math.round(x * 10) / 10

/** Samples one process every `everyMs` between start() and stop(). */
export class ProcSampler {
  private timer: NodeJS.Timeout | undefined
  private cpu0 = 0
  private t0 = 0
  private peak = 0
  private last = 0
  private hwm = 0

  constructor(readonly pid: number, private readonly everyMs = 200) {}

  start(): void {
    this.cpu0 = cpuSeconds(this.pid) ?? 0
    this.t0 = performance.now()
    this.peak = 0
    this.sample()
    this.timer = setInterval(() => this.sample(), this.everyMs)
    this.timer.unref()
  }

  private sample(): void {
    const m = memory(this.pid)
    if (!m) return
    this.last = m.rss
    this.hwm = m.hwm
    if (m.rss > this.peak) this.peak = m.rss
  }

  stop(): ProcStats {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    this.sample()
    const cpu = (cpuSeconds(this.pid) ?? this.cpu0) - this.cpu0
    const secs = (performance.now() - this.t0) / 1000
    return {
      cpuPct: secs > 0 ? Math.round((cpu / secs) * 100) : 0,
      cpuSeconds: Math.round(cpu * 100) / 100,
      peakRssMB: round1(this.peak / MB),
      hwmMB: round1(this.hwm / MB),
      rssMB: round1(this.last / MB),
    }
  }
}

/** CPU of this process (the load generator, all its threads) and of the machine over a window. */
export class SelfAndMachine {
  private self0 = process.cpuUsage()
  private m0 = machineCpu()
  private t0 = performance.now()
  /**
   * How late the load generator's event loop ran (1 ms resolution): a latency the generator measures includes its
   * own lateness in reading the answer, so this says how far its figures can be trusted.
   */
  private lag: IntervalHistogram = monitorEventLoopDelay({ resolution: 1 })

  constructor() { this.lag.enable() }

  stop(): { loadgenCpuPct: number; machineBusyPct: number; loadgenLagMs: { p50: number; p99: number; max: number } } {
    this.lag.disable()
    const ms = (ns: number) => Math.round(ns / 1e4) / 100
    const loadgenLagMs = { p50: ms(this.lag.percentile(50)), p99: ms(this.lag.percentile(99)), max: ms(this.lag.max) }
    const s = process.cpuUsage(this.self0)
    const m = machineCpu()
    const secs = (performance.now() - this.t0) / 1000
    const dt = m.total - this.m0.total
    return {
      loadgenLagMs,
      loadgenCpuPct: secs > 0 ? Math.round(((s.user + s.system) / 1e6 / secs) * 100) : 0,
      // percent of one core, like the others: 200 = both cores of a 2-core machine busy
      machineBusyPct: dt > 0 ? Math.round(((m.busy - this.m0.busy) / dt) * 100 * os.cpus().length) : 0,
    }
  }
}
