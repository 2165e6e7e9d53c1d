// Starts the real server (dist/src/main.js) in its own process on loopback with a fresh data dir, waits for /readyz,
// samples its CPU and RSS, and reads the per-stage `timings` of its access log lines afterwards.
import { spawn, type ChildProcess } from 'node:child_process'
import { createReadStream, mkdirSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync, statSync } from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { newHistogram, recordNs } from './hist.js'
import { ProcSampler } from './proc.js'
import { track } from './children.js'

export const mainJs = fileURLToPath(new URL('../../src/main.js', import.meta.url))

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.once('error', reject)
    s.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => {
      const p = (s.address() as net.AddressInfo).port
      s.close(() => resolve(p))
    })
  })
}

/** A fresh temporary directory for one run; everything a run writes (data dirs, logs) goes below it. */
export function benchTmp(prefix = 'orch-bench-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

export interface LaunchOptions {
  /** plain HTTP port on 127.0.0.1; 0 picks a free one */
  port: number
  /** reuse a data dir (startup scenario); a fresh one below `tmp` otherwise */
  dataDir?: string
  tmp: string
  logLevel: string
  frontends?: number
  shards?: number
  extraArgs?: string[]
  readyTimeoutMs?: number
  /** how a free port is found when `port` is 0 (tests replace it to make a port race happen) */
  pickPort?: () => Promise<number>
}

export interface StageTimings {
  verb: string
  count: number
  meanMs: number
  p99Ms: number
  /** mean milliseconds per stage; `other` is the request's total minus the stages it names */
  stagesMeanMs: Record<string, number>
}

export interface Server {
  url: string
  pid: number | undefined
  dataDir: string | undefined
  logFile: string | undefined
  /** milliseconds from spawn to the first 200 from /readyz */
  readyMs: number
  sampler: ProcSampler | undefined
  /** the server arguments, for the report */
  args: string[]
  stop(): Promise<void>
  kill(): Promise<void>
  /** per-verb stage timings from the access log lines whose time falls in the window (epoch ms), of one user if given */
  accessTimings(window?: [number, number], user?: string): Promise<StageTimings[]>
}

/** GET a path once; resolves with the status, or 0 when the connection fails. */
export function probe(url: string, path: string, timeoutMs = 1000): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(url + path, { agent: false, timeout: timeoutMs }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('error', () => resolve(0))
    req.on('timeout', () => { req.destroy(); resolve(0) })
  })
}

/**
 * Starts a server. A port the bench picked itself (no --port) can be taken by another process between freePort() and
 * the server's bind; that start is tried again on a fresh port, a few times.
 */
export async function launchServer(o: LaunchOptions): Promise<Server> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await launchOnce(o, o.port || (await (o.pickPort ?? freePort)()))
    } catch (err) {
      if (o.port || attempt >= 5 || !(err instanceof PortTaken)) throw err
    }
  }
}

class PortTaken extends Error {}

async function launchOnce(o: LaunchOptions, port: number): Promise<Server> {
  const dataDir = o.dataDir ?? join(o.tmp, `data-${port}`)
  mkdirSync(dataDir, { recursive: true })
  const logFile = join(o.tmp, `server-${port}-${Date.now()}.log`)
  const fd = openSync(logFile, 'a')
  const args = [
    '--port', String(port), '--secure-port', '0', '--bind-address', '127.0.0.1', '--data-dir', dataDir,
    '--log-level', o.logLevel, '--max-requests-inflight', '0', '--max-mutating-requests-inflight', '0', '--authorization-mode', 'AlwaysAllow',
    ...(o.frontends ? ['--frontends', String(o.frontends)] : []),
    ...(o.shards ? ['--shards', String(o.shards)] : []),
    ...(o.extraArgs ?? []),
  ]
  const t0 = performance.now()
  // ORCH_BENCH_SERVER_NODE_ARGS: node flags for the server process (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"),
  // which NODE_OPTIONS does not accept.
  const nodeArgs = (process.env.ORCH_BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter((a) => a !== '')
  const proc = spawn(process.execPath, [...nodeArgs, mainJs, ...args], { stdio: ['ignore', fd, fd] })
  closeSync(fd)
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)))
  let exitCode: number | null | undefined
  void exited.then((c) => { exitCode = c })
  track(proc)
  const url = `http://127.0.0.1:${port}`
  const deadline = t0 + (o.readyTimeoutMs ?? 120_000)
  for (;;) {
    if (exitCode !== undefined) {
      const log = tail(logFile)
      const text = `server exited with ${exitCode} before it was ready; its log ends with:\n${log}`
      throw /address already in use/.test(log) ? new PortTaken(text) : new Error(text)
    }
    if ((await probe(url, '/readyz', 500)) === 200) break
    if (performance.now() > deadline) {
      proc.kill('SIGKILL')
      throw new Error(`server not ready after ${o.readyTimeoutMs ?? 120_000} ms; log: ${logFile}`)
    }
    await new Promise((r) => setTimeout(r, 5))
  }
  const readyMs = Math.round(performance.now() - t0)
  const sampler = new ProcSampler(proc.pid!)
  return {
    url, pid: proc.pid, dataDir, logFile, readyMs, sampler, args,
    stop: () => stopProcess(proc, exited, 'SIGTERM'),
    kill: () => stopProcess(proc, exited, 'SIGKILL'),
    accessTimings: (window, user) => readAccessTimings(logFile, window, user),
  }
}

/** A server that is already running (--url): no process to sample or stop. */
export function remoteServer(url: string): Server {
  return {
    url: url.replace(/\/$/, ''), pid: undefined, dataDir: undefined, logFile: undefined, readyMs: 0, sampler: undefined, args: [],
    stop: async () => undefined, kill: async () => undefined, accessTimings: async () => [],
  }
}

async function stopProcess(proc: ChildProcess, exited: Promise<unknown>, signal: NodeJS.Signals): Promise<void> {
  if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal)
  const t = setTimeout(() => proc.kill('SIGKILL'), 15_000)
  await exited
  clearTimeout(t)
}

/** Access lines read at most: beyond this, every k-th line is read. */
const MAX_LINES = 200_000

async function readAccessTimings(file: string, window?: [number, number], user?: string): Promise<StageTimings[]> {
  let size = 0
  try { size = statSync(file).size } catch { return [] }
  // an access line is about 400 bytes
  const every = Math.max(1, Math.ceil(size / 400 / MAX_LINES))
  const byVerb = new Map<string, { n: number; total: ReturnType<typeof newHistogram>; sum: number; stages: Record<string, number> }>()
  const rl = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity })
  let i = 0
  for await (const line of rl) {
    if (!line.includes('"msg":"access"')) continue
    if (i++ % every !== 0) continue
    let rec: { time?: number; verb?: string; resource?: string; url?: string; ms?: number; timings?: Record<string, number>; status?: number; user?: string }
    try { rec = JSON.parse(line) } catch { continue }
    if (window && (rec.time === undefined || rec.time < window[0] || rec.time > window[1])) continue
    if (user !== undefined && rec.user !== user) continue
    const sub = /^\/api[^?]*\/[^/?]+\/[^/?]+\/(status|scale|binding|eviction)(\?|$)/.exec(rec.url ?? '')?.[1]
    const verb = `${rec.verb ?? '?'} ${rec.resource ?? ''}${sub ? `/${sub}` : ''} ${rec.status ?? ''}`.replace(/\s+/g, ' ').trim()
    let v = byVerb.get(verb)
    if (!v) { v = { n: 0, total: newHistogram(), sum: 0, stages: {} }; byVerb.set(verb, v) }
    v.n++
    const ms = rec.ms ?? 0
    v.sum += ms
    recordNs(v.total, ms * 1e6)
    let named = 0
    // A dotted key (flowControl.queue) is a part of the stage before the dot, not a stage of its own.
    for (const [k, t] of Object.entries(rec.timings ?? {})) { v.stages[k] = (v.stages[k] ?? 0) + t; if (!k.includes('.')) named += t }
    v.stages.other = (v.stages.other ?? 0) + Math.max(0, ms - named)
  }
  const r3 = (x: number) => Math.round(x * 1000) / 1000
  return [...byVerb.entries()].map(([verb, v]) => ({
    verb,
    count: v.n * every,
    meanMs: r3(v.sum / v.n),
    p99Ms: r3(v.total.percentile(99) / 1e6),
    stagesMeanMs: Object.fromEntries(Object.entries(v.stages).map(([k, t]) => [k, r3(t / v.n)])),
  }))
}

/** The last lines of a log file (the temp dir holding it is removed when the run ends). */
function tail(file: string, bytes = 3000): string {
  try {
    const s = readFileSync(file, 'utf8')
    return s.slice(-bytes)
  } catch {
    return '(no log)'
  }
}

/** Removes a run's temporary directory. */
export function removeTmp(dir: string): void {
  rmSync(dir, { recursive: true, force: true })
}
