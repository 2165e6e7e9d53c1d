// The report of a run: rows (one per target and operation), ratios against the peers, the readable table,
// the JSON and the self-contained HTML page (inline SVG, no external assets).
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import type { LatencySummary } from './hist.js'
import type { ProcStats } from './proc.js'
import type { StageTimings } from './server.js'
import { lmdbAddon, type LmdbAddon } from '../../src/machinery/lmdb-addon.js'

export interface Row {
  /** 'orch', 'etcd' or 'uws-hello' */
  target: string
  /** what was measured, e.g. 'POST configmap (log warn)' */
  name: string
  /** operations measured (requests, pages, events, restarts) */
  ops: number
  seconds: number
  /** the headline figure of the row, in `unit` (ops/s, or e.g. bytes per object) */
  rate: number
  unit: string
  latency?: LatencySummary
  errors: number
  outcomes?: Record<string, number>
  /** the measured process (our server, etcd, uws-hello) over the measured window */
  server?: ProcStats
  loadgenCpuPct?: number
  /** CPU busy on the whole machine, percent of one core: what exceeds server + load generator is someone else */
  machineBusyPct?: number
  timeline?: number[]
  distribution?: Array<[number, number]>
  /** per-verb stage timings from the server's access log (log level info only) */
  stageTimings?: StageTimings[]
  details?: Record<string, unknown>
}

export interface Ratio {
  name: string
  ours: number
  peer: number
  ratio: number
  /** e.g. '>= 2.5' */
  target?: string
  met?: boolean
}

export interface Setting {
  value: unknown
  isDefault: boolean
  help: string
}

export interface Report {
  scenario: string
  date: string
  machine: Machine
  /** which server was measured: a digest of the compiled server (dist/src, dist/actors) and when it was built */
  serverBuild: ServerBuild
  settings: Record<string, Setting>
  rows: Row[]
  ratios: Ratio[]
  notes: string[]
}

export interface Machine {
  nproc: number
  cpu: string
  memGiB: number
  node: string
  /** The node flags of the load generator's own process (--loadgen-gc single runs it with --single-threaded-gc). */
  loadgenNodeFlags: string[]
  loadavg: number[]
}

export interface ServerBuild {
  id: string
  builtAt: string
  /** lmdb-js's native addon the server loads (the prebuilt one reads ranges 1.5-1.9x slower) */
  lmdbAddon: LmdbAddon
}

/** sha256 of every compiled server file (path and content), first 12 hex digits, and the newest file's time. */
export function serverBuild(distDir: string): ServerBuild {
  const h = createHash('sha256')
  let newest = 0
  const walk = (dir: string) => {
    let entries
    try { entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name)) } catch { return }
    for (const e of entries) {
      const p = join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.name.endsWith('.js')) {
        h.update(p.slice(distDir.length)).update(readFileSync(p))
        newest = Math.max(newest, statSync(p).mtimeMs)
      }
    }
  }
  walk(join(distDir, 'src'))
  walk(join(distDir, 'actors'))
  return { id: h.digest('hex').slice(0, 12), builtAt: newest ? new Date(newest).toISOString() : 'unknown', lmdbAddon: lmdbAddon() }
}

export function machine(): Machine {
  let cpu = os.cpus()[0]?.model ?? 'unknown'
  try {
    cpu = /^model name\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpu
  } catch { /* not Linux */ }
  return {
    nproc: os.availableParallelism(),
    cpu,
    memGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    loadgenNodeFlags: [...process.execArgv],
    loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100),
  }
}

/** ours / peer, with a target check when a target is given (higher is better unless `lowerIsBetter`). */
export function ratio(name: string, ours: number, peer: number, target?: number, lowerIsBetter = false): Ratio {
  const r = peer > 0 ? Math.round((ours / peer) * 100) / 100 : 0
  return {
    name, ours, peer, ratio: r,
    ...(target !== undefined ? { target: `${lowerIsBetter ? '<=' : '>='} ${target}`, met: lowerIsBetter ? r <= target : r >= target } : {}),
  }
}

const fmt = (x: number | undefined, digits = 2) => (x === undefined ? '-' : x >= 100 ? String(Math.round(x)) : x.toFixed(digits))

function pad(rows: string[][]): string {
  const w = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)))
  return rows.map((r) => r.map((c, i) => (i <= 1 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  ')).join('\n')
}

export function table(rep: Report): string {
  const head = ['target', 'operation', 'ops', 'rate', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'errors', 'srv CPU%', 'srv CPU us/op', 'srv peak RSS MB', 'loadgen CPU%', 'machine busy%']
  const lines = [head]
  for (const r of rep.rows) {
    lines.push([
      r.target, r.name, String(r.ops), `${fmt(r.rate, 1)} ${r.unit}`,
      fmt(r.latency?.p50), fmt(r.latency?.p90), fmt(r.latency?.p99), fmt(r.latency?.max),
      String(r.errors), r.server ? String(r.server.cpuPct) : '-', cpuPerOp(r), r.server ? fmt(r.server.peakRssMB, 1) : '-',
      r.loadgenCpuPct === undefined ? '-' : String(r.loadgenCpuPct), r.machineBusyPct === undefined ? '-' : String(r.machineBusyPct),
    ])
  }
  return pad(lines)
}

/** Server CPU per operation in microseconds: a figure that holds up better than req/s when others share the CPU. */
export function cpuPerOp(r: Row): string {
  if (!r.server || !r.ops || !r.seconds || r.unit === 'ms' || r.unit === 'B/object') return '-'
  return String(Math.round((r.server.cpuSeconds / r.ops) * 1e6))
}

export function text(rep: Report): string {
  const out: string[] = []
  const m = rep.machine
  out.push(`scenario ${rep.scenario}   ${rep.date}   ${m.nproc} cores ${m.cpu}, ${m.memGiB} GiB, node ${m.node}, loadavg ${m.loadavg.join(' ')}${m.loadgenNodeFlags?.length ? `, load generator: node ${m.loadgenNodeFlags.join(' ')}` : ''}`)
  out.push(`server build ${rep.serverBuild.id} (compiled ${rep.serverBuild.builtAt}), lmdb addon ${rep.serverBuild.lmdbAddon}`)
  out.push('settings:')
  for (const [k, s] of Object.entries(rep.settings)) {
    out.push(`  --${k} ${JSON.stringify(s.value)}${s.isDefault ? ' (default)' : ''}   ${s.help}`)
  }
  out.push('')
  out.push(table(rep))
  if (rep.ratios.length > 0) {
    out.push('')
    out.push('ratios (ours / peer):')
    for (const r of rep.ratios) {
      out.push(`  ${r.name}: ${fmt(r.ours, 1)} / ${fmt(r.peer, 1)} = ${r.ratio}x${r.target ? `   target ${r.target}: ${r.met ? 'met' : 'MISSED'}` : ''}`)
    }
  }
  for (const r of rep.rows) {
    const extra: string[] = []
    if (r.outcomes && Object.keys(r.outcomes).some((k) => k !== 'ok')) extra.push(`outcomes ${JSON.stringify(r.outcomes)}`)
    if (r.details) extra.push(`details ${JSON.stringify(r.details)}`)
    for (const t of r.stageTimings ?? []) {
      const stages = Object.entries(t.stagesMeanMs).map(([k, v]) => `${k} ${v}`).join(', ')
      extra.push(`server ${t.verb}: n=${t.count} mean ${t.meanMs} ms p99 ${t.p99Ms} ms; mean per stage: ${stages}`)
    }
    if (extra.length > 0) {
      out.push('')
      out.push(`${r.target} ${r.name}:`)
      for (const e of extra) out.push(`  ${e}`)
    }
  }
  for (const n of rep.notes) out.push(`note: ${n}`)
  return out.join('\n') + '\n'
}

// --- HTML ---

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf']

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!)

/** Latency by percentile, x = log10(1/(1-p)) (HDR style), y = log10(ms). */
function distributionSvg(rows: Row[]): string {
  const series = rows.filter((r) => r.distribution && r.distribution.length > 0)
  if (series.length === 0) return '<p>No latency distribution in this run.</p>'
  const W = 760, H = 360, L = 60, R = 40, T = 20, B = 40
  const xOf = (p: number) => Math.log10(1 / (1 - Math.min(p, 99.999) / 100))
  const all = series.flatMap((r) => r.distribution!.map(([, v]) => Math.max(v, 0.001)))
  const yMin = Math.floor(Math.log10(Math.min(...all)))
  const yMax = Math.ceil(Math.log10(Math.max(...all)))
  const X = (p: number) => L + (xOf(p) / 5) * (W - L - R)
  const Y = (v: number) => T + (1 - (Math.log10(Math.max(v, 0.001)) - yMin) / Math.max(1, yMax - yMin)) * (H - T - B)
  const parts: string[] = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="11">`]
  for (const p of [0, 90, 99, 99.9, 99.99, 99.999]) {
    parts.push(`<line x1="${X(p)}" y1="${T}" x2="${X(p)}" y2="${H - B}" stroke="#ddd"/><text x="${X(p)}" y="${H - B + 14}" text-anchor="middle">${p}%</text>`)
  }
  for (let e = yMin; e <= yMax; e++) {
    const v = 10 ** e
    parts.push(`<line x1="${L}" y1="${Y(v)}" x2="${W - R}" y2="${Y(v)}" stroke="#ddd"/><text x="${L - 4}" y="${Y(v) + 4}" text-anchor="end">${v >= 1 ? v : v.toFixed(-e)} ms</text>`)
  }
  parts.push(`<text x="${(W + L) / 2}" y="${H - 6}" text-anchor="middle">percentile</text>`)
  series.forEach((r, i) => {
    const pts = r.distribution!.map(([p, v]) => `${X(p).toFixed(1)},${Y(v).toFixed(1)}`).join(' ')
    parts.push(`<polyline fill="none" stroke="${COLORS[i % COLORS.length]}" stroke-width="2" points="${pts}"/>`)
  })
  parts.push('</svg>')
  return parts.join('') + legend(series)
}

/** Operations per second in each second of the measured window. */
function timelineSvg(rows: Row[]): string {
  const series = rows.filter((r) => r.timeline && r.timeline.length > 0)
  if (series.length === 0) return '<p>No throughput timeline in this run.</p>'
  const W = 760, H = 300, L = 70, R = 40, T = 20, B = 40
  const n = Math.max(...series.map((r) => r.timeline!.length))
  const top = Math.max(1, ...series.flatMap((r) => r.timeline!)) * 1.1
  const X = (i: number) => L + (n <= 1 ? 0 : (i / (n - 1)) * (W - L - R))
  const Y = (v: number) => T + (1 - v / top) * (H - T - B)
  const parts: string[] = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="11">`]
  for (let k = 0; k <= 4; k++) {
    const v = (top / 4) * k
    parts.push(`<line x1="${L}" y1="${Y(v)}" x2="${W - R}" y2="${Y(v)}" stroke="#ddd"/><text x="${L - 4}" y="${Y(v) + 4}" text-anchor="end">${Math.round(v)}</text>`)
  }
  const step = Math.max(1, Math.ceil(n / 10))
  for (let i = 0; i < n; i += step) parts.push(`<text x="${X(i)}" y="${H - B + 14}" text-anchor="middle">${i + 1}s</text>`)
  parts.push(`<text x="${(W + L) / 2}" y="${H - 6}" text-anchor="middle">second of the measured window</text>`)
  series.forEach((r, i) => {
    const color = COLORS[i % COLORS.length]
    const pts = r.timeline!.map((v, k) => `${X(k).toFixed(1)},${Y(v).toFixed(1)}`)
    parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.join(' ')}"/>`)
    if (pts.length <= 60) for (const p of pts) { const [x, y] = p.split(','); parts.push(`<circle cx="${x}" cy="${y}" r="3" fill="${color}"/>`) }
  })
  parts.push('</svg>')
  return parts.join('') + legend(series)
}

function legend(series: Row[]): string {
  return '<p>' + series.map((r, i) => `<span style="color:${COLORS[i % COLORS.length]}">&#9632;</span> ${esc(`${r.target} ${r.name}`)}`).join(' &nbsp; ') + '</p>'
}

export function html(rep: Report): string {
  const rows = rep.rows
  const m = rep.machine
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>orch bench: ${esc(rep.scenario)}</title>
<style>body{font-family:sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}td:nth-child(-n+2),th:nth-child(-n+2){text-align:left}pre{background:#f6f6f6;padding:1em;overflow:auto;font-size:12px}</style>
</head><body>
<h1>orch bench: ${esc(rep.scenario)}</h1>
<p>${esc(rep.date)} &mdash; server build ${esc(rep.serverBuild.id)} (compiled ${esc(rep.serverBuild.builtAt)}, lmdb addon ${esc(rep.serverBuild.lmdbAddon)}) &mdash; ${m.nproc} cores, ${esc(m.cpu)}, ${m.memGiB} GiB, node ${esc(m.node)}, load average at start ${m.loadavg.join(' ')}</p>
<h2>Results</h2>
<table><tr><th>target</th><th>operation</th><th>ops</th><th>rate</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>max ms</th><th>errors</th><th>server CPU %</th><th>server CPU us/op</th><th>server peak RSS MB</th><th>loadgen CPU %</th></tr>
${rows.map((r) => `<tr><td>${esc(r.target)}</td><td>${esc(r.name)}</td><td>${r.ops}</td><td>${fmt(r.rate, 1)} ${esc(r.unit)}</td><td>${fmt(r.latency?.p50)}</td><td>${fmt(r.latency?.p90)}</td><td>${fmt(r.latency?.p99)}</td><td>${fmt(r.latency?.max)}</td><td>${r.errors}</td><td>${r.server?.cpuPct ?? '-'}</td><td>${cpuPerOp(r)}</td><td>${r.server ? fmt(r.server.peakRssMB, 1) : '-'}</td><td>${r.loadgenCpuPct ?? '-'}</td></tr>`).join('\n')}
</table>
${rep.ratios.length ? `<h2>Ratios (ours / peer)</h2><ul>${rep.ratios.map((r) => `<li>${esc(r.name)}: ${fmt(r.ours, 1)} / ${fmt(r.peer, 1)} = <b>${r.ratio}x</b>${r.target ? ` (target ${esc(r.target)}: ${r.met ? 'met' : '<b>missed</b>'})` : ''}</li>`).join('')}</ul>` : ''}
<h2>Latency distribution</h2>
${distributionSvg(rows)}
<h2>Throughput over time</h2>
${timelineSvg(rows)}
<h2>Settings and details</h2>
<pre>${esc(text(rep))}</pre>
</body></html>
`
}

export function writeJson(file: string, rep: Report): void {
  writeFileSync(file, JSON.stringify(rep, null, 2) + '\n')
}

export function writeHtml(file: string, rep: Report): void {
  writeFileSync(file, html(rep))
}
