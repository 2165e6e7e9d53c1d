// mixed: a kubelet-like load. --nodes simulated nodes each renew their Lease every --lease-interval seconds and
// update the status of their --pods-per-node pods every --pod-update-interval seconds; each node runs an informer
// (LIST then WATCH pods with a spec.nodeName field selector), and one cluster-wide pod informer watches everything,
// as a controller would. Reported: lease and pod-status write latency, informer list latency, and the delivery
// latency of pod status changes to the node's informer and to the cluster-wide one.
import { type Ctx, type Scenario, type ScenarioResult, closeAll } from './lib/context.js'
import type { HttpConnection } from './lib/http.js'
import { newHistogram, recordNs, summarize, distribution } from './lib/hist.js'
import { paced, type LoadResult } from './lib/load.js'
import { LEASES, PODS, firstString, leaseBody, microTime, nodeBody, podBody } from './lib/objects.js'
import { SelfAndMachine, type ProcStats } from './lib/proc.js'
import type { Row } from './lib/report.js'
import { DeliveryTracker, Watcher, digitsAt, stringAt } from './lib/watch.js'

const REASON_KEY = Buffer.from('"reason":"')
const BENCH = Buffer.from('bench-')

const DRAIN_MS = 5000
const SMP = { 'content-type': 'application/strategic-merge-patch+json' }

export const mixed: Scenario = {
  name: 'mixed',
  summary: 'kubelet-like: lease renewals, pod status updates, per-node pod informers (LIST + WATCH by spec.nodeName)',
  options: ['connections', 'object-size', 'nodes', 'pods-per-node', 'lease-interval', 'pod-update-interval', 'pod-status-write'],
  defaults: { connections: 1000, duration: 30, 'object-size': 1024 },
  smokeDefaults: { connections: 4, duration: 1 },
  async run(ctx: Ctx): Promise<ScenarioResult> {
    const N = Math.max(1, ctx.int('nodes'))
    const statusWrite = ctx.str('pod-status-write')
    if (statusWrite !== 'patch' && statusWrite !== 'put') throw new Error(`--pod-status-write: "${statusWrite}" is not patch or put`)
    const P = ctx.int('pods-per-node')
    const size = ctx.int('object-size')
    const run = Date.now().toString(36)
    const nodeName = (i: number) => `mx-${run}-node-${i}`
    const podName = (k: number) => `mx-${run}-pod-${Math.floor(k / P)}-${k % P}`
    const srv = await ctx.startServer()
    const conns = ctx.connections(srv.url, Math.min(ctx.int('connections'), Math.max(1, N)))
    // a kubelet has a connection of its own: one per node, up to --connections
    const connOf = (node: number): HttpConnection => conns[node % conns.length]
    const watchers: Watcher[] = []
    try {
      // --- setup: nodes, leases, pods ---
      // Objects are kept as the server's JSON text, not parsed: 150k parsed pods made the load generator's heap about
      // 650 MB (now ~360) and cost it a fifth more CPU; the latencies it measures were the same either way.
      const leases: string[] = []
      const pods: string[] = []
      const uids: string[] = []
      ctx.progress.note(`[mixed] creating ${N} nodes, ${N} leases, ${N * P} pods`)
      await parallel(N, conns.length, async (i) => {
        const c = connOf(i)
        const n = await c.request('POST', '/api/v1/nodes', nodeBody(nodeName(i)))
        if (n.status !== 201) throw new Error(`node create: ${n.status} ${n.body.toString().slice(0, 300)}`)
        const l = await c.request('POST', LEASES, leaseBody(nodeName(i), new Date()))
        if (l.status !== 201) throw new Error(`lease create: ${l.status} ${l.body.toString().slice(0, 300)}`)
        leases[i] = l.body.toString()
      })
      await parallel(N * P, conns.length, async (k) => {
        const node = Math.floor(k / P)
        const name = podName(k)
        const r = await connOf(node).request('POST', PODS, podBody(size, name.length, nodeName(node)).body(name))
        if (r.status !== 201) throw new Error(`pod create: ${r.status} ${r.body.toString().slice(0, 300)}`)
        pods[k] = r.body.toString()
        uids[k] = firstString(pods[k], 'uid') ?? ''
      })

      // --- informers: LIST then WATCH from the list's resourceVersion ---
      const nodeTracker = new DeliveryTracker()
      const allTracker = new DeliveryTracker()
      const listHist = newHistogram()
      let listErrors = 0
      let watchErrors = 0
      const informer = async (i: number | undefined) => {
        const sel = i === undefined ? '' : `&fieldSelector=${encodeURIComponent(`spec.nodeName=${nodeName(i)}`)}`
        // pages of 500 as client-go's reflector asks for them; the watch starts at the first page's version
        const s = performance.now()
        let rv: string | undefined
        let token: string | undefined
        do {
          const r = await connOf(i ?? 0).request('GET', `/api/v1/pods?limit=500${sel}${token ? `&continue=${encodeURIComponent(token)}` : ''}`)
          if (r.status !== 200) { listErrors++; return }
          const head = r.body.toString('latin1', 0, Math.min(r.body.length, 2048))
          const meta = head.slice(0, Math.max(0, head.indexOf('"items"')))
          rv ??= firstString(meta, 'resourceVersion')
          token = firstString(meta, 'continue') || undefined
        } while (token)
        recordNs(listHist, (performance.now() - s) * 1e6)
        const tracker = i === undefined ? allTracker : nodeTracker
        const w = new Watcher(srv.url, `/api/v1/pods?watch=1&resourceVersion=${rv}${sel}`, (type, line, t) => {
          if (type === 'ERROR') { watchErrors++; return }
          if (type !== 'MODIFIED') return
          // the pod status update's condition reason is `bench-<seq>`: read in place
          const at = stringAt(line, REASON_KEY)
          if (at !== null && line.compare(BENCH, 0, BENCH.length, at[0], at[0] + BENCH.length) === 0) {
            tracker.receive(digitsAt(line, at[0] + BENCH.length, at[1]), t)
          }
        })
        w.start()
        watchers.push(w)
      }
      ctx.progress.note(`[mixed] starting ${N + 1} informers`)
      const informersFrom = Date.now()
      await parallel(N, conns.length, (i) => informer(i))
      await informer(undefined)
      const informersWindow: [number, number] = [informersFrom, Date.now()]
      if (ctx.warmupMs > 0) await new Promise((r) => setTimeout(r, ctx.warmupMs))

      // --- the measured window: lease renewals and pod status updates, paced ---
      srv.sampler?.start()
      const measuredFrom = Date.now()
      const self = new SelfAndMachine()
      nodeTracker.begin()
      allTracker.begin()
      let nodeExpected = 0
      const leaseRate = N / ctx.num('lease-interval')
      const podRate = P > 0 ? (N * P) / ctx.num('pod-update-interval') : 0
      const [leaseRes, podRes] = await Promise.all([
        paced({
          label: 'mixed leases', rate: leaseRate, durationMs: ctx.durationMs, maxInFlight: Math.max(16, N), progress: ctx.progress,
          op: async (seq) => {
            const i = seq % N
            const r = await connOf(i).request('PUT', `${LEASES}/${nodeName(i)}`, withRenewTime(leases[i], microTime(new Date())))
            if (r.status !== 200) return `status ${r.status}`
            leases[i] = r.body.toString()
            return 'ok'
          },
        }),
        podRate > 0
          ? paced({
            label: 'mixed pod status', rate: podRate, durationMs: ctx.durationMs, maxInFlight: Math.max(16, N), progress: ctx.progress,
            op: async (seq) => {
              // round-robin over the nodes first, so that one node's pods are not updated in a burst
              const k = (seq % N) * P + (Math.floor(seq / N) % P)
              const key = `bench-${seq}`
              const ready = { type: 'Ready', status: seq % 2 ? 'True' : 'False', reason: key, lastProbeTime: null, lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }
              let r
              nodeTracker.send(seq)
              allTracker.send(seq)
              if (statusWrite === 'patch') {
                // the kubelet's status manager: a two-way strategic merge patch of the old and new status, with the
                // pod's uid as a precondition; the answer is the whole pod, which a kubelet keeps as its own copy
                const body = `{"metadata":{"uid":"${uids[k]}"},"status":{"$setElementOrder/conditions":[{"type":"Ready"}],"conditions":[${JSON.stringify(ready)}],"phase":"Running"}}`
                r = await connOf(Math.floor(k / P)).request('PATCH', `${PODS}/${podName(k)}/status`, body, SMP)
              } else {
                const [head, oldStatus] = splitStatus(pods[k])
                const status = { ...oldStatus, phase: 'Running', conditions: [ready] }
                r = await connOf(Math.floor(k / P)).request('PUT', `${PODS}/${podName(k)}/status`, `${head},"status":${JSON.stringify(status)}}`)
              }
              if (r.status !== 200) { nodeTracker.forget(seq); allTracker.forget(seq); return `status ${r.status}` }
              nodeTracker.ack(seq)
              allTracker.ack(seq)
              nodeExpected++
              pods[k] = r.body.toString()
              return 'ok'
            },
          })
          : Promise.resolve(undefined),
      ])
      const drainUntil = performance.now() + DRAIN_MS
      while ((nodeTracker.received < nodeExpected || allTracker.received < nodeExpected) && performance.now() < drainUntil) {
        await new Promise((r) => setTimeout(r, 20))
      }
      const server = srv.sampler?.stop()
      const cpu = self.stop()
      const info = ctx.list('log-level')[0] === 'info'
      const measuredTimings = info ? await srv.accessTimings([measuredFrom, Date.now()]) : undefined
      const informerTimings = info ? await srv.accessTimings(informersWindow) : undefined
      const ended = watchers.filter((w) => w.ended).length
      const common = { server, loadgenCpuPct: cpu.loadgenCpuPct, machineBusyPct: cpu.machineBusyPct }
      const rows: Row[] = [
        { ...writeRow(`lease renew PUT (${N} nodes every ${ctx.num('lease-interval')} s)`, leaseRes, common), stageTimings: measuredTimings },
      ]
      if (podRes) rows.push(writeRow(`pod status ${statusWrite.toUpperCase()} (${N * P} pods every ${ctx.num('pod-update-interval')} s)`, podRes, common))
      rows.push(deliveryRow(`pod status to node informer (${N} watches by spec.nodeName)`, nodeTracker, nodeExpected, watchErrors + ended, leaseRes.seconds, common))
      const e2e = summarize(nodeTracker.endToEnd)
      rows.push({
        target: 'orch', name: 'pod status to node informer, from write sent', unit: 'events/s', ops: nodeTracker.received, seconds: leaseRes.seconds,
        rate: rows[rows.length - 1].rate, latency: e2e, errors: 0, distribution: distribution(nodeTracker.endToEnd),
      })
      rows.push(deliveryRow('pod status to cluster-wide pod informer', allTracker, nodeExpected, 0, leaseRes.seconds, common))
      rows.push({
        target: 'orch', name: `informer initial LIST (${N} by node, 1 cluster-wide)`, unit: 'lists', ops: listHist.count, seconds: 0, rate: listHist.count,
        latency: summarize(listHist), errors: listErrors, distribution: distribution(listHist), stageTimings: informerTimings,
      })
      const lag = cpu.loadgenLagMs
      ctx.notes.push(`load generator's event-loop delay over the measured window: p50 ${lag.p50} ms, p99 ${lag.p99} ms, max ${lag.max} ms (a write's latency includes the generator's lateness in reading its answer)`)
      return { rows, ratios: [] }
    } finally {
      for (const w of watchers) w.close()
      closeAll(conns)
      await srv.stop()
    }
  },
}

function writeRow(name: string, r: LoadResult, common: { server?: ProcStats; loadgenCpuPct: number; machineBusyPct: number }): Row {
  return {
    target: 'orch', name, unit: 'req/s', ops: r.ops, seconds: r.seconds, rate: r.throughput, latency: r.latency, errors: r.errors,
    outcomes: r.outcomes, timeline: r.timeline, distribution: r.distribution, ...common,
  }
}

function deliveryRow(name: string, t: DeliveryTracker, expected: number, streamErrors: number, secs: number, common: { server?: ProcStats; loadgenCpuPct: number; machineBusyPct: number }): Row {
  const missed = Math.max(0, expected - t.received)
  const e2e = summarize(t.endToEnd)
  return {
    target: 'orch', name, unit: 'events/s', ops: t.received, seconds: secs, rate: secs > 0 ? Math.round((t.received / secs) * 10) / 10 : 0,
    latency: summarize(t.lag), errors: missed + streamErrors, timeline: t.filledTimeline(), distribution: distribution(t.lag),
    details: { expected, received: t.received, missed, streamErrors, deliveredBeforeAck: t.earlyCount, endToEndFromSendMs: { p50: e2e.p50, p99: e2e.p99, max: e2e.max } },
    ...common,
  }
}

/** Runs fn(0..count-1) with at most `width` at once; the first failure stops the rest and is thrown. */
async function parallel(count: number, width: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0
  let failure: unknown
  await Promise.all(Array.from({ length: Math.max(1, Math.min(width, count)) }, async () => {
    while (next < count && failure === undefined) {
      const i = next++
      try { await fn(i) } catch (err) { failure = err }
    }
  }))
  if (failure !== undefined) throw failure
}

/**
 * A stored object's JSON text split before its top-level status (the server prints status last, after spec), and that
 * status parsed. `},"status":{` cannot occur inside a JSON string, nor in metadata (managedFields spell `"f:status"`).
 */
function splitStatus(text: string): [string, Record<string, unknown>] {
  const at = text.indexOf('},"status":{')
  if (at < 0 || !text.endsWith('}')) throw new Error(`no top-level status in ${text.slice(0, 200)}`)
  return [text.slice(0, at + 1), JSON.parse(text.slice(at + 11, -1)) as Record<string, unknown>]
}

/** A Lease's JSON text with spec.renewTime replaced (the server prints it as a quoted RFC 3339 time). */
function withRenewTime(text: string, renewTime: string): string {
  const key = '"renewTime":"'
  const at = text.indexOf(key)
  if (at < 0) throw new Error(`no renewTime in ${text.slice(0, 200)}`)
  const end = text.indexOf('"', at + key.length)
  return text.slice(0, at + key.length) + renewTime + text.slice(end)
}
