// create: POST 1 KB ConfigMaps with many connections; peers: etcd put of the same bytes at the same concurrency,
// uws-hello answering the same POST.
import { type Ctx, type Scenario, type ScenarioResult, closeAll, loadRow, measure } from './lib/context.js'
import { ETCD_PREFIX, EtcdClient, startEtcd } from './lib/etcd.js'
import { CONFIGMAPS, configMapBody, seqName, storedConfigMapBody } from './lib/objects.js'
import { ratio, type Row } from './lib/report.js'
import { startUwsHello } from './lib/uws-hello.js'

const DIGITS = 9

export const create: Scenario = {
  name: 'create',
  summary: 'POST ConfigMaps of --object-size bytes (peer etcd: put of the stored bytes; uws-hello: the same POST)',
  options: ['connections', 'object-size', 'peer', 'peer-conns'],
  defaults: { 'log-level': ['warn', 'info'] },
  // one server start in the smoke run: info, so that the access-log timings are read too
  smokeDefaults: { 'log-level': ['info'] },
  async run(ctx: Ctx): Promise<ScenarioResult> {
    const size = ctx.int('object-size')
    const C = ctx.int('connections')
    const run = Date.now().toString(36)
    const rows: Row[] = []
    // what the server answers to a create is what it stores: etcd is given values of that size
    let storedBytes: number | undefined
    for (const level of ctx.logLevels) {
      const srv = await ctx.startServer(level)
      try {
        const prefix = `c-${run}-${level}-`
        const body = configMapBody(size, prefix.length + DIGITS)
        const conns = ctx.connections(srv.url, C)
        let seq = 0
        const { r, w } = await measure(ctx, `create log ${level}`, srv.sampler, conns, C, async (c) => {
          const res = await c.request('POST', CONFIGMAPS, body.body(seqName(prefix, seq++, DIGITS)))
          if (res.status !== 201) return `status ${res.status}`
          storedBytes ??= res.body.length
          return 'ok'
        })
        closeAll(conns)
        const stageTimings = level === 'info' ? await srv.accessTimings(r.window) : undefined
        rows.push(loadRow('orch', `POST configmap (log ${level})`, 'req/s', r, w, { stageTimings, details: { bodyBytes: body.body(seqName(prefix, 0, DIGITS)).length } }))
      } finally {
        await srv.stop()
      }
    }
    const ours = rows[0]
    const ratios = []
    if (ctx.peers.includes('etcd')) {
      const etcd = await startEtcd(ctx.tmp)
      const clients = Array.from({ length: ctx.peerConns }, () => new EtcdClient(etcd.endpoint))
      try {
        const prefix = `c-${run}-etcd-`
        const value = storedConfigMapBody(size, prefix.length + DIGITS, storedBytes && storedBytes - (`c-${run}-${ctx.logLevels[0]}-`.length - prefix.length))
        let seq = 0
        const { r, w } = await measure(ctx, 'etcd put', etcd.sampler, clients, C, async (c) => {
          const name = seqName(prefix, seq++, DIGITS)
          await c.put(Buffer.from(ETCD_PREFIX + name), Buffer.from(value.body(name)))
          return 'ok'
        })
        const valueBytes = value.body(seqName(prefix, 0, DIGITS)).length
        const etcdRow = loadRow('etcd', `put (${etcd.version}, ${ctx.peerConns} gRPC conns)`, 'req/s', r, w, { details: { valueBytes } })
        rows.push(etcdRow)
        ratios.push(ratio('create throughput vs etcd put', ours.rate, etcdRow.rate, 2.5))
        ratios.push(ratio('create p99 vs etcd put p99', ours.latency!.p99, etcdRow.latency!.p99, 1, true))
      } finally {
        closeAll(clients)
        await etcd.stop()
      }
    }
    if (ctx.peers.includes('uws-hello')) {
      const hello = await startUwsHello(ctx.tmp, Buffer.from('{"kind":"ConfigMap"}'))
      try {
        const body = configMapBody(size, 12 + DIGITS)
        const conns = ctx.connections(hello.url, C)
        let seq = 0
        const { r, w } = await measure(ctx, 'uws-hello POST', hello.sampler, conns, C, async (c) => {
          const res = await c.request('POST', CONFIGMAPS, body.body(seqName('c-uws-hello-', seq++, DIGITS)))
          return res.status === 200 ? 'ok' : `status ${res.status}`
        })
        closeAll(conns)
        const row = loadRow('uws-hello', 'POST, fixed answer', 'req/s', r, w)
        rows.push(row)
        ratios.push(ratio('create throughput vs uws-hello', ours.rate, row.rate))
      } finally {
        await hello.stop()
      }
    }
    return { rows, ratios }
  },
}
