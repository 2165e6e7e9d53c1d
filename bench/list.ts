// list: pages of --page-size over --objects stored ConfigMaps (each connection walks the whole collection with
// continue tokens, again and again), then --full-lists unpaged lists; peer etcd: range pages of the same size over
// the same keys (first page linearizable, the next ones at its revision, as upstream pages).
import { type Ctx, type Scenario, type ScenarioResult, closeAll, loadRow, measure, seed } from './lib/context.js'
import { ETCD_PREFIX, EtcdClient, prefixEnd, startEtcd } from './lib/etcd.js'
import type { HttpConnection } from './lib/http.js'
import { newHistogram, recordNs, summarize, distribution } from './lib/hist.js'
import { CONFIGMAPS, configMapBody, firstString, seqName, storedConfigMapBody } from './lib/objects.js'
import { ratio, type Row } from './lib/report.js'

const PREFIX = 'l-'
const DIGITS = 8

interface Walk { token: string | undefined; pages: number }

export const list: Scenario = {
  name: 'list',
  summary: 'paged LIST (--page-size) over --objects ConfigMaps, and full lists (peer etcd: range pages)',
  options: ['connections', 'object-size', 'objects', 'page-size', 'full-lists', 'peer', 'peer-conns'],
  defaults: { objects: 100_000, connections: 16 },
  smokeDefaults: { 'page-size': 50 },
  async run(ctx: Ctx): Promise<ScenarioResult> {
    const size = ctx.int('object-size')
    const C = ctx.int('connections')
    const N = ctx.int('objects')
    const pageSize = ctx.int('page-size')
    const rows: Row[] = []
    const ratios = []
    let storedBytes: number | undefined
    const srv = await ctx.startServer()
    try {
      const conns = ctx.connections(srv.url, C)
      const body = configMapBody(size, PREFIX.length + DIGITS)
      if (!ctx.remote) {
        const seeders = ctx.connections(srv.url, 64)
        await seed(ctx, seeders, CONFIGMAPS, N, (i) => body.body(seqName(PREFIX, i, DIGITS)))
        closeAll(seeders)
      }
      // one page checked in full: the page holds what was asked for
      const first = JSON.parse((await conns[0].request('GET', `${CONFIGMAPS}?limit=${pageSize}`)).body.toString())
      const firstPageItems = first.items?.length ?? 0
      storedBytes = first.items?.[0] ? Buffer.byteLength(JSON.stringify({ kind: 'ConfigMap', apiVersion: 'v1', ...first.items[0] })) : undefined
      const walks: Walk[] = Array.from({ length: C }, () => ({ token: undefined, pages: 0 }))
      let walksDone = 0
      let bytes = 0
      let fetched = 0
      const { r, w } = await measure(ctx, 'list pages', srv.sampler, conns, C, async (c: HttpConnection, slot) => {
        const walk = walks[slot]
        const path = walk.token ? `${CONFIGMAPS}?limit=${pageSize}&continue=${encodeURIComponent(walk.token)}` : `${CONFIGMAPS}?limit=${pageSize}`
        const res = await c.request('GET', path)
        if (res.status !== 200) { walk.token = undefined; return `status ${res.status}` }
        bytes += res.body.length
        fetched++
        // metadata comes first in a list: the continue token is found without parsing the page
        const head = res.body.toString('latin1', 0, Math.min(res.body.length, 2048))
        const itemsAt = head.indexOf('"items"')
        walk.token = firstString(itemsAt >= 0 ? head.slice(0, itemsAt) : head, 'continue') || undefined
        walk.pages++
        if (!walk.token) walksDone++
        return 'ok'
      })
      closeAll(conns)
      const stageTimings = ctx.list('log-level')[0] === 'info' ? await srv.accessTimings(r.window) : undefined
      rows.push(loadRow('orch', `LIST page of ${pageSize}`, 'pages/s', r, w, {
        stageTimings,
        details: { objects: N, firstPageItems, meanPageBytes: fetched ? Math.round(bytes / fetched) : 0, fullWalks: walksDone },
      }))
      if (ctx.int('full-lists') > 0) rows.push(await fullLists(ctx, srv.url, srv.sampler, N))
    } finally {
      await srv.stop()
    }
    if (ctx.peers.includes('etcd')) {
      const etcd = await startEtcd(ctx.tmp)
      const clients = Array.from({ length: ctx.peerConns }, () => new EtcdClient(etcd.endpoint))
      try {
        const value = storedConfigMapBody(size, PREFIX.length + DIGITS, storedBytes)
        let next = 0
        ctx.progress.note(`[etcd seed] ${N} keys`)
        await Promise.all(Array.from({ length: 64 }, async (_, s) => {
          const c = clients[s % clients.length]
          while (next < N) {
            const i = next++
            const name = seqName(PREFIX, i, DIGITS)
            await c.put(Buffer.from(ETCD_PREFIX + name), Buffer.from(value.body(name)))
          }
        }))
        const start = Buffer.from(ETCD_PREFIX)
        const end = prefixEnd(start)
        const walks = Array.from({ length: C }, () => ({ key: undefined as Buffer | undefined, rev: 0 }))
        const { r, w } = await measure(ctx, 'etcd range pages', etcd.sampler, clients, C, async (c, slot) => {
          const walk = walks[slot]
          const res = await c.range(walk.key ?? start, end, pageSize, walk.rev)
          if (res.more && res.lastKey) {
            walk.key = Buffer.concat([res.lastKey, Buffer.from([0])])
            walk.rev = walk.rev || res.revision
          } else {
            walk.key = undefined
            walk.rev = 0
          }
          return res.count > 0 ? 'ok' : 'empty page'
        })
        const row = loadRow('etcd', `range page of ${pageSize} (${etcd.version}, ${ctx.peerConns} gRPC conns)`, 'pages/s', r, w)
        rows.push(row)
        ratios.push(ratio('list pages/s vs etcd range pages/s', rows[0].rate, row.rate, 10))
        // full range, unpaged (none with --full-lists 0)
        if (ctx.int('full-lists') > 0) {
          const h = newHistogram()
          let count = 0
          etcd.sampler.start()
          const t0 = performance.now()
          let failed = 0
          for (let i = 0; i < ctx.int('full-lists'); i++) {
            const s = performance.now()
            try {
              const res = await clients[0].range(start, end)
              recordNs(h, (performance.now() - s) * 1e6)
              count = res.count
            } catch (err) {
              failed++
              ctx.notes.push(`etcd full range failed: ${String(err)}`)
            }
          }
          const secs = (performance.now() - t0) / 1000
          const full = rows.find((r) => r.target === 'orch' && r.name.startsWith('full LIST'))!
          rows.push({
            target: 'etcd', name: `full range (${count} keys)`, unit: 'lists/s', ops: h.count, seconds: secs, rate: Math.round((h.count / secs) * 100) / 100,
            latency: summarize(h), errors: failed + (count === N ? 0 : 1), server: etcd.sampler.stop(), distribution: distribution(h),
          })
          if (full.latency && rows[rows.length - 1].latency) ratios.push(ratio('full list time vs etcd full range time', full.latency.p50, rows[rows.length - 1].latency!.p50, undefined, true))
        }
      } finally {
        closeAll(clients)
        await etcd.stop()
      }
    }
    return { rows, ratios }
  },
}

async function fullLists(ctx: Ctx, url: string, sampler: { start(): void; stop(): import('./lib/proc.js').ProcStats } | undefined, N: number): Promise<Row> {
  const [c] = ctx.connections(url, 1)
  const h = newHistogram()
  let items = -1
  let bytes = 0
  let errors = 0
  sampler?.start()
  const t0 = performance.now()
  for (let i = 0; i < ctx.int('full-lists'); i++) {
    const s = performance.now()
    const res = await c.request('GET', CONFIGMAPS)
    recordNs(h, (performance.now() - s) * 1e6)
    if (res.status !== 200) { errors++; continue }
    bytes = res.body.length
    if (i === 0) items = JSON.parse(res.body.toString()).items.length
  }
  const secs = (performance.now() - t0) / 1000
  c.close()
  if (!ctx.remote && items !== N) errors++
  return {
    target: 'orch', name: `full LIST (${items} objects, ${Math.round(bytes / 1024 / 1024)} MiB)`, unit: 'lists/s', ops: h.count, seconds: Math.round(secs * 1000) / 1000,
    rate: Math.round((h.count / secs) * 100) / 100, latency: summarize(h), errors, server: sampler?.stop(), distribution: distribution(h),
  }
}
