// watch-fanout: --watchers long-lived watch streams while --writes-per-sec creates arrive (paced). Variant `none`:
// every watcher watches all ConfigMaps, so each write is delivered to every watcher. Variant `node`: watchers watch
// pods with a spec.nodeName field selector (watcher j on node j mod --nodes), writes create pods round-robin over the
// nodes, so each write reaches only that node's watchers; --all-watchers more watch every pod (the controllers beside
// the kubelets). Delivery latency = receive time minus write ack time. Every watcher counts repeats of an object it
// already saw (duplicates) besides the events that never came (lost).
import { type Ctx, type Scenario, type ScenarioResult, closeAll } from './lib/context.js'
import { summarize, distribution } from './lib/hist.js'
import { paced } from './lib/load.js'
import { CONFIGMAPS, PODS, configMapBody, podBody, seqName, type SizedBody } from './lib/objects.js'
import { readdirSync, readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { ProcSampler, SelfAndMachine } from './lib/proc.js'
import type { Row } from './lib/report.js'
import type { Server } from './lib/server.js'
import { DeliveryTracker, SeenSet, Watcher, digitsAt, stringAt } from './lib/watch.js'

const DIGITS = 8
const NAME_KEY = Buffer.from('"name":"')
const DRAIN_MS = 5000
const SYNC_MS = 30_000

export const watchFanout: Scenario = {
  name: 'watch-fanout',
  summary: '--watchers watch streams, --writes-per-sec creates; delivery latency = event receipt - write ack',
  options: ['connections', 'object-size', 'watchers', 'all-watchers', 'writes-per-sec', 'selector', 'nodes'],
  defaults: { connections: 16, nodes: 100 },
  smokeDefaults: { connections: 2, nodes: 5, warmup: 0 },
  async run(ctx: Ctx): Promise<ScenarioResult> {
    const rows: Row[] = []
    for (const variant of ctx.list('selector')) {
      if (variant !== 'none' && variant !== 'node') throw new Error(`--selector: "${variant}" is not none or node`)
    }
    // one server for the variants: they use different resources (ConfigMaps, Pods) and are sampled separately
    const srv = await ctx.startServer()
    try {
      for (const variant of ctx.list('selector')) rows.push(...(await runVariant(ctx, srv, variant as 'none' | 'node')))
    } finally {
      await srv.stop()
    }
    return { rows, ratios: [] }
  },
}

/** CPU seconds of each thread of a process (from /proc/<pid>/task). */
function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>()
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const st = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'latin1')
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ')
      out.set(tid, (Number(f[11]) + Number(f[12])) / 100)
    }
  } catch { /* gone */ }
  return out
}

function busiest(a: Map<string, number>, b: Map<string, number>): Record<string, number> {
  const d = [...b].map(([tid, c]) => [tid, Math.round((c - (a.get(tid) ?? 0)) * 100) / 100] as const).filter(([, c]) => c >= 0.02)
  return Object.fromEntries(d.sort((x, y) => y[1] - x[1]).slice(0, 16))
}

async function runVariant(ctx: Ctx, srv: Server, variant: 'none' | 'node'): Promise<Row[]> {
  // the node variant's cluster-wide watchers come after the node watchers (indices W .. W + A - 1)
  const A = variant === 'node' ? Math.max(0, ctx.int('all-watchers')) : 0
  const W = ctx.int('watchers') + A
  const nodeWatchers = W - A
  const nodes = Math.max(1, ctx.int('nodes'))
  const size = ctx.int('object-size')
  const run = `${Date.now().toString(36)}-${variant}-`
  const watchers: Watcher[] = []
  const writers = ctx.connections(srv.url, ctx.int('connections'))
  try {
    const base = variant === 'none' ? CONFIGMAPS : PODS
    const listed = JSON.parse((await writers[0].request('GET', `${base}?limit=1`)).body.toString())
    const rv = listed.metadata.resourceVersion as string
    const tracker = new DeliveryTracker()
    const perNode = new Array<number>(nodes).fill(0)
    const markersSeen = new Array<boolean>(W).fill(false)
    let watchErrors = 0
    let duplicates = 0
    const nameLen = `w-${run}`.length + DIGITS
    const marker = Buffer.from(`m-${run}`)
    const written = Buffer.from(`w-${run}`)
    for (let j = 0; j < W; j++) {
      const node = j % nodes
      const all = j >= nodeWatchers
      if (!all) perNode[node]++
      const path = variant === 'none'
        ? `${CONFIGMAPS}?watch=1&resourceVersion=${rv}`
        : all ? `/api/v1/pods?watch=1&resourceVersion=${rv}`
          : `/api/v1/pods?watch=1&resourceVersion=${rv}&fieldSelector=${encodeURIComponent(`spec.nodeName=node-${node}`)}`
      const seen = new SeenSet()
      const wt = new Watcher(srv.url, path, (type, line, t) => {
        if (type === 'ERROR') { watchErrors++; return }
        if (type !== 'ADDED') return
        // the name is read in place: `w-<run>` or `m-<run>` (a marker) and the write's sequence number
        const at = stringAt(line, NAME_KEY)
        if (at === null || at[1] - at[0] !== nameLen) { tracker.receive(-1, t); return }
        if (line.compare(marker, 0, marker.length, at[0], at[0] + marker.length) === 0) { markersSeen[j] = true; return }
        if (line.compare(written, 0, written.length, at[0], at[0] + written.length) !== 0) { tracker.receive(-1, t); return }
        const seq = digitsAt(line, at[0] + written.length, at[1])
        if (seq < 0) { tracker.receive(-1, t); return }
        if (!seen.add(seq)) { duplicates++; return }
        tracker.receive(seq, t)
      })
      wt.start()
      watchers.push(wt)
    }
    // the streams are live once each watcher has seen a marker written after it started
    const bodies = new Map<number, SizedBody>()
    const bodyFor = (node: number, nameLen: number): SizedBody => {
      let b = bodies.get(node)
      if (!b) { b = variant === 'none' ? configMapBody(size, nameLen) : podBody(size, nameLen, `node-${node}`); bodies.set(node, b) }
      return b
    }
    const markerCount = variant === 'none' ? 1 : Math.max(1, Math.min(nodes, nodeWatchers))
    for (let k = 0; k < markerCount; k++) {
      const name = seqName(`m-${run}`, k, nameLen - `m-${run}`.length)
      const r = await writers[0].request('POST', base, bodyFor(k, nameLen).body(name))
      if (r.status !== 201) throw new Error(`marker write failed: ${r.status} ${r.body.toString().slice(0, 300)}`)
    }
    const syncDeadline = performance.now() + SYNC_MS
    while (markersSeen.some((s) => !s) && performance.now() < syncDeadline) await new Promise((r) => setTimeout(r, 20))
    const unsynced = markersSeen.filter((s) => !s).length
    if (unsynced > 0) ctx.notes.push(`watch-fanout ${variant}: ${unsynced} of ${W} watchers never saw their marker event within ${SYNC_MS / 1000} s`)
    if (ctx.warmupMs > 0) await new Promise((r) => setTimeout(r, ctx.warmupMs))

    // with --url the server's CPU is sampled when BENCH_SERVER_PID names its process (a server started by hand)
    const sampler = srv.sampler ?? (process.env.BENCH_SERVER_PID ? new ProcSampler(Number(process.env.BENCH_SERVER_PID)) : undefined)
    sampler?.start()
    const threads0 = sampler ? threadCpu(sampler.pid) : undefined
    const self = new SelfAndMachine()
    tracker.begin()
    const counts0 = watchers.map((w) => [w.reads, w.lines])
    let expected = 0
    const writeResult = await paced({
      label: `watch-fanout ${variant}`, rate: ctx.num('writes-per-sec'), durationMs: ctx.durationMs,
      maxInFlight: writers.length * 4, progress: ctx.progress,
      op: async (seq) => {
        const name = seqName(`w-${run}`, seq, DIGITS)
        const node = seq % nodes
        tracker.send(seq)
        const res = await writers[seq % writers.length].request('POST', base, bodyFor(variant === 'none' ? 0 : node, nameLen).body(name))
        if (res.status !== 201) { tracker.forget(seq); return `status ${res.status}` }
        tracker.ack(seq)
        expected += variant === 'none' ? W : perNode[node] + A
        return 'ok'
      },
    })
    const drainUntil = performance.now() + DRAIN_MS
    while (tracker.received < expected && performance.now() < drainUntil) await new Promise((r) => setTimeout(r, 20))
    const secs = writeResult.seconds
    const server = sampler?.stop()
    const threads1 = sampler ? threadCpu(sampler.pid) : undefined
    const cpu = self.stop()
    const loadgenCpuSeconds = (cpu.loadgenCpuPct / 100) * (performance.now() - tracker.startedAt) / 1000
    const stageTimings = ctx.list('log-level')[0] === 'info' ? await srv.accessTimings(writeResult.window) : undefined
    // events per body piece received: how many frames the server coalesced into one write (node watchers, all-pods watchers)
    const perRead = (from: number, to: number): number | undefined => {
      let r = 0, l = 0
      for (let j = from; j < to; j++) { r += watchers[j].reads - counts0[j][0]; l += watchers[j].lines - counts0[j][1] }
      return r > 0 ? Math.round((l / r) * 100) / 100 : undefined
    }
    const ended = watchers.filter((w) => w.ended).length
    const missed = Math.max(0, expected - tracker.received)
    const label = variant === 'none' ? `${W} watchers, all ConfigMaps`
      : `${nodeWatchers} watchers of pods by spec.nodeName over ${nodes} nodes${A > 0 ? ` + ${A} of all pods` : ''}`
    const e2e = summarize(tracker.endToEnd)
    const e2eRow: Row = {
      target: 'orch', name: `watch event from write sent, ${label}`, unit: 'events/s', ops: tracker.received, seconds: secs,
      rate: Math.round((tracker.received / secs) * 10) / 10, latency: e2e, errors: missed, distribution: distribution(tracker.endToEnd),
    }
    return [
      {
        target: 'orch', name: `watch delivery, ${label}`, unit: 'events/s', ops: tracker.received, seconds: secs,
        rate: Math.round((tracker.received / secs) * 10) / 10, latency: summarize(tracker.lag), errors: missed + duplicates + watchErrors + ended,
        server, loadgenCpuPct: cpu.loadgenCpuPct, machineBusyPct: cpu.machineBusyPct,
        timeline: tracker.filledTimeline(), distribution: distribution(tracker.lag),
        details: {
          expected, received: tracker.received, missed, duplicates, watchErrors, streamsEnded: ended, deliveredBeforeAck: tracker.earlyCount,
          unknownEvents: tracker.unknown,
          // CPU per delivered event (microseconds), the figure to compare on a shared machine
          serverCpuUsPerEvent: server && tracker.received > 0 ? Math.round((server.cpuSeconds * 1e6) / tracker.received) : undefined,
          loadgenCpuUsPerEvent: tracker.received > 0 ? Math.round((loadgenCpuSeconds * 1e6) / tracker.received) : undefined,
          // the server's busiest threads over the window (thread id: CPU seconds): front-end, shard, main, GC helpers
          eventsPerRead: perRead(0, nodeWatchers),
          eventsPerReadAllWatchers: A > 0 ? perRead(nodeWatchers, W) : undefined,
          serverThreadCpuSeconds: threads0 && threads1 ? busiest(threads0, threads1) : undefined,
          loadAverage: loadavg().map((x) => Math.round(x * 100) / 100),
        },
      },
      e2eRow,
      {
        target: 'orch', name: `POST during fan-out (${variant})`, unit: 'req/s', ops: writeResult.ops, seconds: writeResult.seconds,
        rate: writeResult.throughput, latency: writeResult.latency, errors: writeResult.errors, outcomes: writeResult.outcomes,
        timeline: writeResult.timeline, distribution: writeResult.distribution, stageTimings,
      },
    ]
  } finally {
    for (const w of watchers) w.close()
    closeAll(writers)
  }
}
