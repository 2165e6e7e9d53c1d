// wrk (Debian's `wrk`) as the load generator of GETs (--client wrk: the get scenario, apf-fairness's cost part): a C client that costs about a third
// of the CPU per request of ours, which matters when client and server share two cores. A Lua script picks the
// object at random and prints the summary as JSON; wrk gives no per-second timeline.
import { spawn } from 'node:child_process'
import { accessSync, constants, writeFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import type { LoadResult } from './load.js'
import { cpuSeconds } from './proc.js'

export const WRK_INSTALL_HINT = 'wrk is not installed: install it with `apt-get install wrk` (Debian)'

export function findWrk(): string | undefined {
  for (const d of [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/local/bin']) {
    if (!d) continue
    try { accessSync(join(d, 'wrk'), constants.X_OK); return join(d, 'wrk') } catch { /* next */ }
  }
  return undefined
}

const SCRIPT = `
local n = tonumber(os.getenv("BENCH_N"))
local fmt = "%s%0" .. os.getenv("BENCH_DIGITS") .. "d"
local prefix = os.getenv("BENCH_PREFIX")
local auth = os.getenv("BENCH_AUTH")
if auth ~= nil and auth ~= "" then wrk.headers["Authorization"] = auth end
request = function()
  return wrk.format("GET", string.format(fmt, prefix, math.random(0, n - 1)))
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRKJSON {"requests":%d,"duration_us":%d,"socket_errors":%d,"status_errors":%d,"timeouts":%d,"min":%d,"p10":%d,"p25":%d,"p50":%d,"p75":%d,"p90":%d,"p95":%d,"p99":%d,"p999":%d,"p9999":%d,"max":%d,"mean":%f}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write, e.status, e.timeout, latency.min,
    latency:percentile(10), latency:percentile(25), latency:percentile(50), latency:percentile(75), latency:percentile(90),
    latency:percentile(95), latency:percentile(99), latency:percentile(99.9), latency:percentile(99.99), latency.max, latency.mean))
end
`

export interface WrkGet {
  url: string
  connections: number
  seconds: number
  /** GET `${pathPrefix}${zero-padded i}` for i random in [0, n) */
  pathPrefix: string
  digits: number
  n: number
  tmp: string
  threads?: number
  /** an Authorization header value sent with every request */
  authorization?: string
}

/** Runs wrk once; resolves with a LoadResult (no timeline) and the CPU of the wrk process (percent of one core). */
export async function wrkGet(o: WrkGet): Promise<{ r: LoadResult; cpuPct: number }> {
  const bin = findWrk()
  if (!bin) throw new Error(WRK_INSTALL_HINT)
  const script = join(o.tmp, 'get.lua')
  writeFileSync(script, SCRIPT)
  const wallStart = Date.now()
  let cpuPct = 0
  const out = await new Promise<string>((resolve, reject) => {
    const p = spawn(bin, ['-t', String(o.threads ?? 1), '-c', String(o.connections), '-d', `${o.seconds}s`, '--timeout', '10s', '-s', script, o.url], {
      env: { ...process.env, BENCH_N: String(o.n), BENCH_DIGITS: String(o.digits), BENCH_PREFIX: o.pathPrefix, BENCH_AUTH: o.authorization ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let s = ''
    // the CPU of wrk, read while it runs (its /proc entry is gone once it has been reaped)
    const t0 = performance.now()
    const poll = setInterval(() => {
      const c = cpuSeconds(p.pid!)
      if (c !== undefined) cpuPct = Math.round((c / ((performance.now() - t0) / 1000)) * 100)
    }, 100)
    p.on('exit', () => clearInterval(poll))
    p.stdout.on('data', (d) => { s += d })
    p.stderr.on('data', (d) => { s += d })
    p.on('error', reject)
    p.on('close', (code) => (code === 0 ? resolve(s) : reject(new Error(`wrk exited with ${code}: ${s.slice(-500)}`))))
  })
  const line = out.split('\n').find((l) => l.startsWith('WRKJSON '))
  if (!line) throw new Error(`wrk printed no summary: ${out.slice(-500)}`)
  const w = JSON.parse(line.slice(8))
  const ms = (us: number) => Math.round(us) / 1000
  const seconds = w.duration_us / 1e6
  const errors = w.socket_errors + w.status_errors + w.timeouts
  const r: LoadResult = {
    ops: w.requests, seconds, throughput: Math.round((w.requests / seconds) * 10) / 10,
    latency: { count: w.requests, mean: ms(w.mean), p50: ms(w.p50), p90: ms(w.p90), p99: ms(w.p99), p999: ms(w.p999), max: ms(w.max) },
    distribution: [[0, ms(w.min)], [10, ms(w.p10)], [25, ms(w.p25)], [50, ms(w.p50)], [75, ms(w.p75)], [90, ms(w.p90)], [95, ms(w.p95)], [99, ms(w.p99)], [99.9, ms(w.p999)], [99.99, ms(w.p9999)], [100, ms(w.max)]],
    timeline: [], errors,
    outcomes: { ok: w.requests - w.status_errors, ...(w.status_errors ? { 'non-2xx': w.status_errors } : {}), ...(w.socket_errors ? { 'socket error': w.socket_errors } : {}), ...(w.timeouts ? { timeout: w.timeouts } : {}) },
    window: [wallStart, wallStart + seconds * 1000],
  }
  return { r, cpuPct }
}
