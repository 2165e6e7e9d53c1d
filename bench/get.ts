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
  options: ['connections', 'object-size', 'objects', 'peer', 'peer-conns'],
  defaults: { 'log-level': ['warn', 'info'] },
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
    let sample: Buffer | undefined
    for (const level of ctx.logLevels) {
      const srv = await ctx.startServer(level)
      try {
        const conns = ctx.connections(srv.url, C)
        const body = configMapBody(size, prefix.length + DIGITS)
        await seed(ctx, conns, CONFIGMAPS, N, (i) => body.body(seqName(prefix, i, DIGITS)))
        sample = (await conns[0].request('GET', paths[0])).body
        const { r, w } = await measureGet(ctx, `get log ${level}`, srv.url, srv.sampler, conns, pick, `${CONFIGMAPS}/${prefix}`, N)
        closeAll(conns)
        const stageTimings = level === 'info' ? await srv.accessTimings(r.window) : undefined
        rows.push(loadRow('orch', `GET configmap (log ${level})`, 'req/s', r, w, { stageTimings, details: { responseBytes: sample.length } }))
      } finally {
        await srv.stop()
      }
    }
    const ours = rows[0]
    const ratios = []
    if (ctx.peers.includes('uws-hello')) {
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
