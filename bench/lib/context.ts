// What a scenario gets: its options, a temp dir, progress, and helpers to start the server, open connections,
// seed objects and turn a load result into a report row.
import { connect, parseTarget, type ClientKind, type HttpConnection } from './http.js'
import { closedLoop, type LoadResult } from './load.js'
import { SelfAndMachine, type ProcStats } from './proc.js'
import type { Progress } from './progress.js'
import type { Ratio, Row } from './report.js'
import { launchServer, remoteServer, type Server } from './server.js'

export class Ctx {
  readonly notes: string[] = []

  constructor(
    readonly opts: Record<string, unknown>,
    readonly tmp: string,
    readonly progress: Progress,
  ) {}

  int(name: string): number { return this.opts[name] as number }
  num(name: string): number { return this.opts[name] as number }
  str(name: string): string { return this.opts[name] as string }
  list(name: string): string[] { return (this.opts[name] as string[] | undefined) ?? [] }
  bool(name: string): boolean { return this.opts[name] as boolean }
  get smoke(): boolean { return this.bool('smoke') }
  get remote(): boolean { return this.str('url') !== '' }
  get warmupMs(): number { return this.num('warmup') * 1000 }
  get durationMs(): number { return this.num('duration') * 1000 }
  get peers(): string[] { return this.list('peer') }
  /** gRPC connections to etcd: --peer-conns, or one per --connections */
  get peerConns(): number { return this.int('peer-conns') || this.int('connections') }

  /** Log levels to run the server with; a remote server runs with whatever it was started with. */
  get logLevels(): string[] {
    return this.remote ? ['remote'] : this.list('log-level')
  }

  /** Starts a fresh server (or wraps --url). `dataDir` reuses one (startup scenario); `extraArgs` go before --server-arg. */
  async startServer(logLevel?: string, dataDir?: string, extraArgs: string[] = []): Promise<Server> {
    if (this.remote) return remoteServer(this.str('url'))
    this.progress.note(`starting server (log level ${logLevel ?? this.list('log-level')[0]})`)
    return launchServer({
      port: this.int('port'), tmp: this.tmp, dataDir, logLevel: logLevel ?? this.list('log-level')[0],
      frontends: this.int('frontends') || undefined, shards: this.int('shards') || undefined,
      extraArgs: [...extraArgs, ...this.list('server-arg')],
    })
  }

  connections(url: string, n: number): HttpConnection[] {
    const target = parseTarget(url)
    // wrk drives only the measured GETs of the get scenario: everything else goes through our own client
    const kind: ClientKind = this.str('client') === 'undici' ? 'undici' : 'raw'
    return Array.from({ length: n }, () => connect(kind, target))
  }
}

export interface ScenarioResult {
  rows: Row[]
  ratios: Ratio[]
}

export interface Scenario {
  name: string
  summary: string
  /** options beyond the common ones */
  options: string[]
  defaults?: Record<string, unknown>
  smokeDefaults?: Record<string, unknown>
  /** the scenario cannot run against --url (it restarts the server) */
  needsOwnServer?: boolean
  /** the scenario can measure with --client wrk */
  wrk?: boolean
  run(ctx: Ctx): Promise<ScenarioResult>
}

/** Process stats and machine load measured over the measured window of a load run. */
export interface Window {
  server?: ProcStats
  loadgenCpuPct?: number
  machineBusyPct?: number
}

/** Hooks for closedLoop that sample the measured process and this one only inside the measured window. */
export function windowSampler(sampler: { start(): void; stop(): ProcStats } | undefined): { onStart: () => void; onEnd: () => void; result: Window } {
  let self: SelfAndMachine | undefined
  const result: Window = {}
  return {
    result,
    onStart: () => { sampler?.start(); self = new SelfAndMachine() },
    onEnd: () => {
      if (sampler) result.server = sampler.stop()
      if (self) Object.assign(result, self.stop())
    },
  }
}

export function loadRow(target: string, name: string, unit: string, r: LoadResult, w: Window, extra: Partial<Row> = {}): Row {
  return {
    target, name, unit, ops: r.ops, seconds: r.seconds, rate: r.throughput, latency: r.latency, errors: r.errors,
    outcomes: r.outcomes, server: w.server, loadgenCpuPct: w.loadgenCpuPct, machineBusyPct: w.machineBusyPct,
    timeline: r.timeline, distribution: r.distribution, ...extra,
  }
}

/**
 * Creates `count` objects through POST with `concurrency` requests in flight, not measured; throws when more than a
 * few fail. `body(i)` gives the i-th body.
 */
export async function seed(ctx: Ctx, conns: HttpConnection[], path: string, count: number, body: (i: number) => string, label = 'seed'): Promise<void> {
  if (count === 0) return
  let next = 0
  let done = 0
  let failed = 0
  let firstError = ''
  const t0 = performance.now()
  const ticker = setInterval(() => {
    const secs = (performance.now() - t0) / 1000
    ctx.progress.update(`[${label}] ${done}/${count} objects, ${Math.round(done / secs)}/s`)
  }, 1000)
  const worker = async (c: HttpConnection) => {
    while (next < count && failed < 10) {
      const i = next++
      try {
        const r = await c.request('POST', path, body(i))
        if (r.status !== 201) { failed++; firstError ||= `status ${r.status}: ${r.body.toString().slice(0, 300)}` }
      } catch (err) {
        failed++
        firstError ||= String(err)
      }
      done++
    }
  }
  await Promise.all(conns.map(worker))
  clearInterval(ticker)
  ctx.progress.clear()
  if (failed > 0) throw new Error(`seeding ${path} failed ${failed} times; first: ${firstError}`)
  ctx.progress.note(`[${label}] ${count} objects in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
}

/** Runs a closed loop with the window sampled on `sampler`. */
export async function measure<C>(ctx: Ctx, label: string, sampler: { start(): void; stop(): ProcStats } | undefined, clients: C[], concurrency: number, op: (c: C, slot: number) => Promise<string>, expected?: string[]): Promise<{ r: LoadResult; w: Window }> {
  const ws = windowSampler(sampler)
  const r = await closedLoop({
    label, clients, concurrency, warmupMs: ctx.warmupMs, durationMs: ctx.durationMs, count: ctx.int('count'),
    op, progress: ctx.progress, expected, onStart: ws.onStart, onEnd: ws.onEnd,
  })
  return { r, w: ws.result }
}

export function closeAll(conns: Array<{ close(): void }>): void {
  for (const c of conns) c.close()
}
