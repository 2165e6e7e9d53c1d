// /metrics: the API server's metrics in the Prometheus text format (0.0.4), with upstream's names, labels and buckets.
// Each front-end thread counts the requests it answers (one string build and two map lookups per request); a scrape
// gathers every front-end's counts over a BroadcastChannel and adds the flow-control actor's figures, the stored
// object counts and the process's own.
// The global `performance` is a lazy getter on every read: the module's binding is read directly.
import { performance } from 'node:perf_hooks'
import { BroadcastChannel } from 'node:worker_threads'
import { readdirSync } from 'node:fs'
import { EMPTY_QUERY, type RequestContext } from '../pipeline/context.js'
import type { FlowMetrics } from '../../actors/flow-control/messages.js'

/** apiserver_request_duration_seconds (upstream's SLO buckets). */
export const DURATION_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60]
/** apiserver_response_sizes: 1 KB to 1 GB by tens. */
export const SIZE_BUCKETS = [1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9]

/** Non-resource paths that are counted (upstream instruments its registered handlers only, never an unknown path). */
const NON_RESOURCE_PATHS = new Set(['/healthz', '/livez', '/readyz', '/metrics', '/version', '/api', '/apis', '/openapi/v2', '/openapi/v3'])

/** One label set (without `code`): its answers by code, its durations and (get and list) its response sizes. */
interface Series {
  labels: string
  codes: Map<number, number>
  /** per-bucket counts (not cumulative), then the overflow slot */
  dur: number[]
  durSum: number
  size: number[] | null
  sizeSum: number
}

const series = new Map<string, Series>()
/** apiserver_longrunning_requests: open watches by label set. */
const longRunning = new Map<string, number>()

function bucketOf(bounds: number[], v: number): number {
  let i = 0
  while (i < bounds.length && v > bounds[i]) i++
  return i
}

/** upstream CleanScope: a named object or a create is "resource", then "namespace", "cluster", or "" off the resource tree. */
function scopeOf(ctx: RequestContext): string {
  const i = ctx.info
  if (i.name !== '' || i.verb === 'create') return 'resource'
  if (i.namespace !== '') return 'namespace'
  return i.isResourceRequest ? 'cluster' : ''
}

/** upstream's reported verb: the HTTP method, GET of a collection as LIST, a watch as WATCH, an apply patch as APPLY. */
function verbOf(ctx: RequestContext, scope: string): string {
  if (ctx.info.verb === 'watch') return 'WATCH'
  const m = ctx.method
  if (m === 'GET' || m === 'HEAD') return scope !== 'resource' && scope !== '' ? 'LIST' : 'GET'
  if (m === 'PATCH') return (ctx.headers['content-type'] ?? '').split(';')[0].trim() === 'application/apply-patch+yaml' ? 'APPLY' : 'PATCH'
  if (m === 'POST' || m === 'PUT' || m === 'DELETE') return m
  return 'other'
}

/** The dryRun values, deduplicated and sorted ("All" or ""); "invalid" for anything else, as upstream reports it. */
function dryRunOf(ctx: RequestContext): string {
  const v = ctx.query.getAll('dryRun')
  if (v.length === 0) return ''
  if (v.some((x) => x !== 'All')) return 'invalid'
  return 'All'
}

/** The label set of a request, or null when it is not counted (an unknown type or path, or refused before its handler). */
function labelsOf(ctx: RequestContext, withDryRun: boolean): string | null {
  const i = ctx.info
  const scope = scopeOf(ctx)
  const verb = verbOf(ctx, scope)
  const dry = withDryRun ? `dry_run="${dryRunOf(ctx)}",` : ''
  if (i.isResourceRequest) {
    const def = ctx.def
    if (def === undefined) return null
    // Through an upstream alias path the group is reported as the client named it.
    const group = ctx.aliasGroup ?? def.group
    return `verb="${verb}",${dry}group="${group}",version="${def.version}",resource="${def.resource}",subresource="${i.subresource}",scope="${scope}",component="apiserver"`
  }
  if (ctx.timings.authorize === undefined) return null
  const p = i.path.length > 1 && i.path.endsWith('/') ? i.path.replace(/\/+$/, '') : i.path
  if (!NON_RESOURCE_PATHS.has(p)) return null
  return `verb="${verb}",${dry}group="",version="",resource="",subresource="${p}",scope="",component="apiserver"`
}

/** Series of the common case (no subresource, no dry run, no alias path) by type, then by reported verb and scope. */
const fast = new Map<object, Array<Series | undefined>>()
const FAST_VERBS: Record<string, number> = { GET: 0, LIST: 1, WATCH: 2, POST: 3, PUT: 4, PATCH: 5, APPLY: 6, DELETE: 7, other: 8 }
const FAST_SCOPES: Record<string, number> = { resource: 0, namespace: 1, cluster: 2 }

function newSeries(labels: string): Series {
  const s: Series = { labels, codes: new Map(), dur: new Array(DURATION_BUCKETS.length + 1).fill(0), durSum: 0, size: null, sizeSum: 0 }
  series.set(labels, s)
  return s
}

/** The series of a request, or undefined when it is not counted. */
function seriesOf(ctx: RequestContext): Series | undefined {
  const def = ctx.def
  const common = def !== undefined && ctx.info.subresource === '' && ctx.aliasGroup === undefined && (ctx.query === EMPTY_QUERY || !ctx.query.has('dryRun'))
  if (common) {
    const scope = scopeOf(ctx)
    const slot = FAST_VERBS[verbOf(ctx, scope)] * 3 + FAST_SCOPES[scope]
    let row = fast.get(def)
    if (row === undefined) { row = []; fast.set(def, row) }
    const hit = row[slot]
    if (hit !== undefined) return hit
    const labels = labelsOf(ctx, true)!
    return (row[slot] = series.get(labels) ?? newSeries(labels))
  }
  const labels = labelsOf(ctx, true)
  if (labels === null) return undefined
  return series.get(labels) ?? newSeries(labels)
}

/** Counts an answered request: its code, its duration since it arrived, and for get and list its size in bytes. */
export function observeRequest(ctx: RequestContext, status: number, bytes: number | undefined): void {
  try {
    const s = seriesOf(ctx)
    if (s === undefined) return
    s.codes.set(status, (s.codes.get(status) ?? 0) + 1)
    const seconds = (performance.now() - ctx.start) / 1000
    s.dur[bucketOf(DURATION_BUCKETS, seconds)]++
    s.durSum += seconds
    if (bytes !== undefined && (ctx.method === 'GET' || ctx.method === 'HEAD') && ctx.info.verb !== 'watch') {
      s.size ??= new Array(SIZE_BUCKETS.length + 1).fill(0)
      s.size[bucketOf(SIZE_BUCKETS, bytes)]++
      s.sizeSum += bytes
    }
  } catch { /* counting never fails a request */ }
}

/** A watch opened: apiserver_longrunning_requests goes up until the returned function is called (once). */
export function longRunningStarted(ctx: RequestContext): () => void {
  const labels = labelsOf(ctx, false)
  if (labels === null) return () => {}
  longRunning.set(labels, (longRunning.get(labels) ?? 0) + 1)
  let done = false
  return () => {
    if (done) return
    done = true
    longRunning.set(labels, (longRunning.get(labels) ?? 1) - 1)
  }
}

// ---------------------------------------------------------------- gathering

interface Snapshot { series: Array<[string, Array<[number, number]>, number[], number, number[] | null, number]>; longRunning: Array<[string, number]> }

function snapshot(): Snapshot {
  return {
    series: [...series.values()].map((s) => [s.labels, [...s.codes], s.dur, s.durSum, s.size, s.sizeSum]),
    longRunning: [...longRunning],
  }
}

const CHANNEL = 'orch-metrics'
let channel: BroadcastChannel | null = null
let frontendCount = 1
let selfIndex = 0
let nextAsk = 0
const asks = new Map<string, { got: Snapshot[]; done: () => void }>()

interface Ask { type: 'ask'; id: string }
interface Answer { type: 'answer'; id: string; snapshot: Snapshot }

/** Joins the front-ends' channel: every front-end answers a scrape with its counts. */
export function joinMetrics(index: number, frontends: number): void {
  selfIndex = index
  frontendCount = Math.max(1, frontends)
  if (frontendCount === 1) return
  channel = new BroadcastChannel(CHANNEL)
  ;(channel as unknown as { unref?: () => void }).unref?.()
  channel.onmessage = (ev: unknown) => {
    const m = (ev as { data: Ask | Answer }).data
    if (m.type === 'ask') channel!.postMessage({ type: 'answer', id: m.id, snapshot: snapshot() } satisfies Answer)
    else {
      const a = asks.get(m.id)
      if (!a) return
      a.got.push(m.snapshot)
      if (a.got.length >= frontendCount) a.done()
    }
  }
}

export function leaveMetrics(): void { channel?.close(); channel = null }

/** Every front-end's counts (this one's at once; the others' within a second, or what arrived by then). */
async function gather(): Promise<Snapshot[]> {
  const own = snapshot()
  if (channel === null) return [own]
  const id = `${selfIndex}-${++nextAsk}`
  const got: Snapshot[] = [own]
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => { asks.delete(id); resolve() }, 1000)
    asks.set(id, { got, done: () => { clearTimeout(timer); asks.delete(id); resolve() } })
    channel!.postMessage({ type: 'ask', id } satisfies Ask)
  })
  return got
}

// ---------------------------------------------------------------- exposition

export interface MetricsSources {
  flow: () => Promise<FlowMetrics> | null
  /** stored objects per resource label (resource, or resource.group) */
  storedObjects: () => Array<[string, number]>
  /** requests holding a max-in-flight seat (null with API Priority and Fairness) */
  inflight: () => { readOnly: number; mutating: number } | null
}

class Out {
  lines: string[] = []
  family(name: string, type: 'counter' | 'gauge' | 'histogram', help: string): void {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`)
  }
  sample(name: string, labels: string, v: number): void {
    this.lines.push(labels === '' ? `${name} ${num(v)}` : `${name}{${labels}} ${num(v)}`)
  }
  /** A histogram from per-bucket counts (the last slot beyond every bound). */
  histogram(name: string, labels: string, bounds: readonly number[], counts: readonly number[], sum: number): void {
    let c = 0
    const pre = labels === '' ? '' : `${labels},`
    for (let i = 0; i < bounds.length; i++) {
      c += counts[i]
      this.lines.push(`${name}_bucket{${pre}le="${num(bounds[i])}"} ${c}`)
    }
    c += counts[bounds.length] ?? 0
    this.lines.push(`${name}_bucket{${pre}le="+Inf"} ${c}`, `${name}_sum${labels === '' ? '' : `{${labels}}`} ${num(sum)}`, `${name}_count${labels === '' ? '' : `{${labels}}`} ${c}`)
  }
}

function num(v: number): string {
  if (v === Infinity) return '+Inf'
  if (v === -Infinity) return '-Inf'
  if (Number.isNaN(v)) return 'NaN'
  return String(v)
}

/** A label value escaped for the text format. */
export function lv(s: string): string { return s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n') }

function openFds(): number | undefined {
  try { return readdirSync('/proc/self/fd').length } catch { return undefined }
}

/** The whole exposition. */
export async function renderMetrics(src: MetricsSources): Promise<string> {
  const [snaps, flow] = await Promise.all([gather(), src.flow() ?? Promise.resolve(null)])
  const merged = new Map<string, { codes: Map<number, number>; dur: number[]; durSum: number; size: number[] | null; sizeSum: number }>()
  const lr = new Map<string, number>()
  for (const s of snaps) {
    for (const [labels, codes, dur, durSum, size, sizeSum] of s.series) {
      let m = merged.get(labels)
      if (!m) { m = { codes: new Map(), dur: new Array(dur.length).fill(0), durSum: 0, size: null, sizeSum: 0 }; merged.set(labels, m) }
      for (const [c, n] of codes) m.codes.set(c, (m.codes.get(c) ?? 0) + n)
      for (let i = 0; i < dur.length; i++) m.dur[i] += dur[i]
      m.durSum += durSum
      if (size) {
        m.size ??= new Array(size.length).fill(0)
        for (let i = 0; i < size.length; i++) m.size[i] += size[i]
        m.sizeSum += sizeSum
      }
    }
    for (const [labels, n] of s.longRunning) lr.set(labels, (lr.get(labels) ?? 0) + n)
  }
  const keys = [...merged.keys()].sort()
  const o = new Out()

  o.family('apiserver_request_total', 'counter', '[STABLE] Requests answered, by verb, dry run, group, version, resource, subresource, scope, component and HTTP code.')
  for (const k of keys) {
    const m = merged.get(k)!
    for (const c of [...m.codes.keys()].sort((a, b) => a - b)) o.sample('apiserver_request_total', `${k},code="${c}"`, m.codes.get(c)!)
  }
  o.family('apiserver_request_duration_seconds', 'histogram', '[STABLE] Time from a request\'s arrival to its answer in seconds, by verb, dry run, group, version, resource, subresource, scope and component.')
  for (const k of keys) { const m = merged.get(k)!; o.histogram('apiserver_request_duration_seconds', k, DURATION_BUCKETS, m.dur, m.durSum) }
  o.family('apiserver_response_sizes', 'histogram', '[STABLE] Sizes of get and list answers in bytes, by verb, group, version, resource, subresource, scope and component.')
  for (const k of keys) {
    const m = merged.get(k)!
    if (m.size) o.histogram('apiserver_response_sizes', k.replace(/dry_run="[^"]*",/, ''), SIZE_BUCKETS, m.size, m.sizeSum)
  }
  o.family('apiserver_longrunning_requests', 'gauge', '[ALPHA] Open long-running requests (watches), by verb, group, version, resource, subresource, scope and component.')
  for (const k of [...lr.keys()].sort()) if (lr.get(k)! > 0) o.sample('apiserver_longrunning_requests', k, lr.get(k)!)

  const stored = src.storedObjects()
  o.family('apiserver_storage_objects', 'gauge', '[STABLE] Objects stored, by resource.')
  for (const [r, n] of stored.sort((a, b) => (a[0] < b[0] ? -1 : 1))) o.sample('apiserver_storage_objects', `resource="${lv(r)}"`, n)

  if (flow) renderFlow(o, flow)
  const inflight = src.inflight()
  if (inflight) {
    o.family('apiserver_current_inflight_requests', 'gauge', '[STABLE] Requests executing under the max-in-flight limits, by kind.')
    o.sample('apiserver_current_inflight_requests', 'request_kind="mutating"', inflight.mutating)
    o.sample('apiserver_current_inflight_requests', 'request_kind="readOnly"', inflight.readOnly)
  }

  const mem = process.memoryUsage()
  const cpu = process.cpuUsage()
  o.family('process_cpu_seconds_total', 'counter', 'CPU time of the whole process (every thread), user and system, in seconds.')
  o.sample('process_cpu_seconds_total', '', (cpu.user + cpu.system) / 1e6)
  o.family('process_resident_memory_bytes', 'gauge', 'Resident memory of the process in bytes.')
  o.sample('process_resident_memory_bytes', '', mem.rss)
  o.family('process_start_time_seconds', 'gauge', 'When the process started, in seconds since the Unix epoch.')
  o.sample('process_start_time_seconds', '', Math.round((Date.now() / 1000 - process.uptime()) * 1000) / 1000)
  const fds = openFds()
  if (fds !== undefined) {
    o.family('process_open_fds', 'gauge', 'Open file descriptors of the process.')
    o.sample('process_open_fds', '', fds)
  }
  return o.lines.join('\n') + '\n'
}

const FLOW = 'apiserver_flowcontrol_'

function renderFlow(o: Out, f: FlowMetrics): void {
  const levels = [...f.levels].sort((a, b) => (a.name < b.name ? -1 : 1))
  const each = (fn: (pl: string, fs: string, c: FlowMetrics['levels'][number]['flowSchemas'][string]) => void) => {
    for (const l of levels) for (const fs of Object.keys(l.flowSchemas).sort()) fn(l.name, fs, l.flowSchemas[fs])
  }
  const fsl = (pl: string, fs: string) => `flow_schema="${lv(fs)}",priority_level="${lv(pl)}"`

  o.family(`${FLOW}dispatched_requests_total`, 'counter', '[BETA] Requests released for execution by API Priority and Fairness, by flow schema and priority level.')
  each((pl, fs, c) => { if (c.dispatched > 0) o.sample(`${FLOW}dispatched_requests_total`, fsl(pl, fs), c.dispatched) })
  o.family(`${FLOW}rejected_requests_total`, 'counter', '[BETA] Requests refused by API Priority and Fairness, by flow schema, priority level and reason.')
  each((pl, fs, c) => {
    for (const reason of Object.keys(c.rejected).sort()) if (c.rejected[reason] > 0) o.sample(`${FLOW}rejected_requests_total`, `${fsl(pl, fs)},reason="${lv(reason)}"`, c.rejected[reason])
  })
  o.family(`${FLOW}current_inqueue_requests`, 'gauge', '[BETA] Requests waiting in a queue, by flow schema and priority level.')
  each((pl, fs, c) => o.sample(`${FLOW}current_inqueue_requests`, fsl(pl, fs), c.inQueue))
  o.family(`${FLOW}current_executing_seats`, 'gauge', '[BETA] Seats held by executing requests, by flow schema and priority level.')
  each((pl, fs, c) => o.sample(`${FLOW}current_executing_seats`, fsl(pl, fs), c.executingSeats))
  o.family(`${FLOW}request_wait_duration_seconds`, 'histogram', '[BETA] Time requests that were executed waited in a queue, in seconds, by flow schema and priority level.')
  each((pl, fs, c) => {
    const w = c.waitDuration
    // cumulative per bound in the actor's form; back to per-bucket counts
    const per = w.cumulative.map((x, i) => x - (i > 0 ? w.cumulative[i - 1] : 0))
    per.push(w.count - (w.cumulative[w.cumulative.length - 1] ?? 0))
    o.histogram(`${FLOW}request_wait_duration_seconds`, `execute="true",${fsl(pl, fs)}`, w.buckets as number[], per, w.sum)
  })
  o.family(`${FLOW}nominal_limit_seats`, 'gauge', '[BETA] Nominal concurrency limit of each priority level, in seats.')
  for (const l of levels) o.sample(`${FLOW}nominal_limit_seats`, `priority_level="${lv(l.name)}"`, l.nominalCL)
  o.family(`${FLOW}current_limit_seats`, 'gauge', '[ALPHA] Concurrency limit of each limited priority level after borrowing and lending, in seats.')
  for (const l of levels) if (l.currentCL >= 0) o.sample(`${FLOW}current_limit_seats`, `priority_level="${lv(l.name)}"`, l.currentCL)
  o.family(`${FLOW}current_inqueue_seats`, 'gauge', '[ALPHA] Seats asked for by the requests waiting in the queues of each priority level.')
  for (const l of levels) o.sample(`${FLOW}current_inqueue_seats`, `priority_level="${lv(l.name)}"`, l.seatsInQueue)
  o.family(`${FLOW}seat_holds_total`, 'counter', '[ORCH] Seats held for a flow whose request ended while other flows waited (--priority-and-fairness-seat-hold), by whether the flow asked again in time (used) or the hold ran out (expired).')
  for (const l of levels) {
    if (l.kind !== 'Queue') continue
    o.sample(`${FLOW}seat_holds_total`, `outcome="used",priority_level="${lv(l.name)}"`, l.holds.used)
    o.sample(`${FLOW}seat_holds_total`, `outcome="expired",priority_level="${lv(l.name)}"`, l.holds.expired)
  }
}
