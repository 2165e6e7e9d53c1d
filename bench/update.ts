// update: PUT ConfigMaps from a shared client-side cache of their last known versions, --objects hot objects for
// --connections writers, so that writers collide: a stale resourceVersion gets 409, and the writer reads the object
// again (GET) before its next try. The recorded latency is the PUT, plus that GET after a conflict.
import { type Ctx, type Scenario, type ScenarioResult, closeAll, loadRow, measure, seed } from './lib/context.js'
import { CONFIGMAPS, configMapBody, seqName } from './lib/objects.js'
import type { Row } from './lib/report.js'

const DIGITS = 6

export const update: Scenario = {
  name: 'update',
  summary: 'PUT ConfigMaps with conflicts: --connections writers over --objects hot objects, 409 then re-read',
  options: ['connections', 'object-size', 'objects'],
  defaults: { objects: 100 },
  smokeDefaults: { objects: 10 },
  async run(ctx: Ctx): Promise<ScenarioResult> {
    const size = ctx.int('object-size')
    const C = ctx.int('connections')
    const N = Math.max(1, ctx.int('objects'))
    const prefix = `u-${Date.now().toString(36)}-`
    const rows: Row[] = []
    for (const level of ctx.logLevels) {
      const srv = await ctx.startServer(level)
      try {
        const conns = ctx.connections(srv.url, C)
        const body = configMapBody(size, prefix.length + DIGITS)
        await seed(ctx, conns, CONFIGMAPS, N, (i) => body.body(seqName(prefix, i, DIGITS)))
        // the shared cache: what the writers last saw of each object
        const cache: Array<Record<string, any>> = []
        for (let i = 0; i < N; i++) cache[i] = JSON.parse((await conns[0].request('GET', `${CONFIGMAPS}/${seqName(prefix, i, DIGITS)}`)).body.toString())
        let writes = 0
        let rereads = 0
        const { r, w } = await measure(ctx, `update log ${level}`, srv.sampler, conns, C, async (c) => {
          const i = Math.floor(Math.random() * N)
          const obj = cache[i]
          const path = `${CONFIGMAPS}/${obj.metadata.name}`
          const next = { ...obj, data: { ...obj.data, writer: String(writes++) } }
          const res = await c.request('PUT', path, JSON.stringify(next))
          if (res.status === 200) {
            const saved = JSON.parse(res.body.toString())
            if (Number(saved.metadata.resourceVersion) > Number(cache[i].metadata.resourceVersion)) cache[i] = saved
            return 'ok'
          }
          if (res.status === 409) {
            rereads++
            const g = await c.request('GET', path)
            if (g.status === 200) {
              const fresh = JSON.parse(g.body.toString())
              if (Number(fresh.metadata.resourceVersion) > Number(cache[i].metadata.resourceVersion)) cache[i] = fresh
            }
            return 'conflict'
          }
          return `status ${res.status}`
        }, ['conflict'])
        closeAll(conns)
        const stageTimings = level === 'info' ? await srv.accessTimings(r.window) : undefined
        const conflicts = r.outcomes.conflict ?? 0
        rows.push(loadRow('orch', `PUT configmap, ${N} hot objects (log ${level})`, 'req/s', r, w, {
          stageTimings, details: { conflicts, conflictRatio: r.ops ? Math.round((conflicts / r.ops) * 1000) / 1000 : 0, rereads, successfulUpdatesPerSec: Math.round((r.outcomes.ok ?? 0) / r.seconds) },
        }))
      } finally {
        await srv.stop()
      }
    }
    ctx.notes.push('update has no etcd peer yet (it would be a Txn comparing mod_revision, then a put)')
    return { rows, ratios: [] }
  },
}
