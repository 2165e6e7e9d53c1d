// get: GET ConfigMaps by name, chosen at random among --objects stored ones; peers: etcd range of one key
// (linearizable, as upstream reads), uws-hello answering the same bytes the server returns (the HTTP ceiling).
import { type Ctx, type Scenario, type ScenarioResult, type Window, closeAll, loadRow, measure, seed, windowSampler } from './lib/context.js'
import type { HttpConnection } from './lib/http.js'
import type { LoadResult } from './lib/load.js'
import type { ProcSampler } from './lib/proc.js'
import { wrkGet } from './lib/wrk.js'
import { ETCD_PREFIX, EtcdClient, startEtcd } from './lib/etcd.js'
import { CONFIGMAPS, configMapBody, seqName, storedConfigMapBody } from './lib/objects.js'
import { ratio, type Row } from './lib/report.js'
import { startUwsHello } from './lib/uws-hello.js'

const PREFIX = 'g-'
const DIGITS = 8

export const get: Scenario = {
  name: 'get',
  summary: 'GET ConfigMaps by name among --objects stored ones (peer etcd: get of the key; uws-hello: the same bytes)',
  options: ['connections', 'object-size', 'objects', 'peer', 'peer-conns', 'repeat'],
  defaults: { 'log-level': ['warn', 'info'], repeat: 1 },
  wrk: true,
  smokeDefaults: { 'log-level': ['warn'] },
  async run(ctx: Ctx): Promise<ScenarioResult> {
    const size = ctx.int('object-size')
    const C = ctx.int('connections')
    const N = Math.max(1, ctx.int('objects'))
    const prefix = ctx.remote ? `${PREFIX}${Date.now().toString(36)}-` : PREFIX
    const paths = Array.from({ length: N }, (_, i) => `${CONFIGMAPS}/${seqName(prefix, i, DIGITS)}`)
    const pick = () => paths[Math.floor(Math.random() * N)]
    const rows: Row[] = []
    const ratios = []
    let sample: Buffer | undefined
    // --repeat N with the uws-hello peer: N rounds of (ours, hello), order alternating, on the first log level's server
    // and one hello server; the ratio is of the medians (on a shared machine one pair of runs can be 1.5x apart).
    const rounds = ctx.peers.includes('uws-hello') ? Math.max(1, ctx.int('repeat')) : 1
    let helloDone = false
    for (const level of ctx.logLevels) {
      const srv = await ctx.startServer(level)
      try {
        const conns = ctx.connections(srv.url, C)
        const body = configMapBody(size, prefix.length + DIGITS)
        await seed(ctx, conns, CONFIGMAPS, N, (i) => body.body(seqName(prefix, i, DIGITS)))
        sample = (await conns[0].request('GET', paths[0])).body
        if (rounds > 1 && !helloDone) {
          helloDone = true
          const hello = await startUwsHello(ctx.tmp, sample)
          const helloConns = ctx.connections(hello.url, C)
          try {
            const runs: Record<'orch' | 'hello', Array<{ r: LoadResult; w: Window }>> = { orch: [], hello: [] }
            for (let i = 0; i < rounds; i++) {
              for (const who of (i % 2 === 0 ? ['orch', 'hello'] : ['hello', 'orch']) as Array<'orch' | 'hello'>) {
                runs[who].push(who === 'orch'
                  ? await measureGet(ctx, `get log ${level} (${i + 1}/${rounds})`, srv.url, srv.sampler, conns, pick, `${CONFIGMAPS}/${prefix}`, N)
                  : await measureGet(ctx, `uws-hello GET (${i + 1}/${rounds})`, hello.url, hello.sampler, helloConns, pick, `${CONFIGMAPS}/${prefix}`, N))
              }
            }
            const mid = (xs: Array<{ r: LoadResult; w: Window }>) => [...xs].sort((a, b) => a.r.throughput - b.r.throughput)[(xs.length - 1) >> 1]
            const rates = (xs: Array<{ r: LoadResult }>) => xs.map((x) => x.r.throughput).join(', ')
            const o = mid(runs.orch)
            const h = mid(runs.hello)
            rows.push(loadRow('orch', `GET configmap (log ${level}; median of ${rounds}: ${rates(runs.orch)})`, 'req/s', o.r, o.w, { details: { responseBytes: sample.length, runs: runs.orch.map((x) => x.r.throughput) } }))
            rows.push(loadRow('uws-hello', `GET, fixed body of the same bytes (median of ${rounds}: ${rates(runs.hello)})`, 'req/s', h.r, h.w, { details: { runs: runs.hello.map((x) => x.r.throughput) } }))
            ratios.push(ratio(`get throughput vs uws-hello (medians of ${rounds} alternating rounds)`, o.r.throughput, h.r.throughput, 0.5))
          } finally {
            closeAll(helloConns)
            await hello.stop()
          }
          closeAll(conns)
          continue
        }
        const { r, w } = await measureGet(ctx, `get log ${level}`, srv.url, srv.sampler, conns, pick, `${CONFIGMAPS}/${prefix}`, N)
        closeAll(conns)
        const stageTimings = level === 'info' ? await srv.accessTimings(r.window) : undefined
        rows.push(loadRow('orch', `GET configmap (log ${level})`, 'req/s', r, w, { stageTimings, details: { responseBytes: sample.length } }))
      } finally {
        await srv.stop()
      }
    }
    const ours = rows[0]
    if (ctx.peers.includes('uws-hello') && !helloDone) {
      const hello = await startUwsHello(ctx.tmp, sample ?? Buffer.from(storedConfigMapBody(size, prefix.length + DIGITS).body(seqName(prefix, 0, DIGITS))))
      try {
        const conns = ctx.connections(hello.url, C)
        const { r, w } = await measureGet(ctx, 'uws-hello GET', hello.url, hello.sampler, conns, pick, `${CONFIGMAPS}/${prefix}`, N)
        closeAll(conns)
        const row = loadRow('uws-hello', 'GET, fixed body of the same bytes', 'req/s', r, w)
        rows.push(row)
        ratios.push(ratio('get throughput vs uws-hello', ours.rate, row.rate, 0.5))
      } finally {
        await hello.stop()
      }
    }
    if (ctx.peers.includes('etcd')) {
      const etcd = await startEtcd(ctx.tmp)
      const clients = Array.from({ length: ctx.peerConns }, () => new EtcdClient(etcd.endpoint))
      try {
        const value = storedConfigMapBody(size, prefix.length + DIGITS, sample?.length)
        const keys = Array.from({ length: N }, (_, i) => Buffer.from(ETCD_PREFIX + seqName(prefix, i, DIGITS)))
        let next = 0
        await Promise.all(Array.from({ length: C }, async (_, s) => {
          const c = clients[s % clients.length]
          while (next < N) { const i = next++; await c.put(keys[i], Buffer.from(value.body(seqName(prefix, i, DIGITS)))) }
        }))
        const { r, w } = await measure(ctx, 'etcd get', etcd.sampler, clients, C, async (c) => {
          const res = await c.range(keys[Math.floor(Math.random() * N)])
          return res.count === 1 ? 'ok' : 'not found'
        })
        const row = loadRow('etcd', `get (${etcd.version}, linearizable, ${ctx.peerConns} gRPC conns)`, 'req/s', r, w)
        rows.push(row)
        ratios.push(ratio('get throughput vs etcd get', ours.rate, row.rate))
      } finally {
        closeAll(clients)
        await etcd.stop()
      }
    }
    return { rows, ratios }
  },
}

/** GETs of random paths by the chosen client: ours (closed loop) or wrk (--client wrk). */
async function measureGet(ctx: Ctx, label: string, url: string, sampler: ProcSampler | undefined, conns: HttpConnection[], pick: () => string, pathPrefix: string, n: number): Promise<{ r: LoadResult; w: Window }> {
  if (ctx.str('client') !== 'wrk') {
    return measure(ctx, label, sampler, conns, conns.length, async (c) => {
      const res = await c.request('GET', pick())
      return res.status === 200 ? 'ok' : `status ${res.status}`
    })
  }
  const o = { url, connections: conns.length, pathPrefix, digits: DIGITS, n, tmp: ctx.tmp }
  if (ctx.warmupMs > 0) await wrkGet({ ...o, seconds: Math.max(1, Math.round(ctx.warmupMs / 1000)) })
  const ws = windowSampler(sampler)
  ctx.progress.note(`[${label}] wrk for ${Math.max(1, Math.round(ctx.durationMs / 1000))} s`)
  ws.onStart()
  const { r, cpuPct } = await wrkGet({ ...o, seconds: Math.max(1, Math.round(ctx.durationMs / 1000)) })
  ws.onEnd()
  ws.result.loadgenCpuPct = cpuPct + (ws.result.loadgenCpuPct ?? 0)
  return { r, w: ws.result }
}
