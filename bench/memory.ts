// memory: RSS per stored object. The server's RSS is read after a warm-up (a few objects written and read: the
// baseline), again after --objects ConfigMaps are created, and again after a restart on the same data dir, before and
// after one paged walk over everything (LMDB pages count in RSS once they are touched); each figure is the growth
// over the baseline divided by --objects. Disk per object is reported too.
import { type Ctx, type Scenario, type ScenarioResult, closeAll, seed } from './lib/context.js'
import { diskBytes } from './lib/disk.js'
import type { HttpConnection } from './lib/http.js'
import { CONFIGMAPS, configMapBody, firstString, seqName } from './lib/objects.js'
import { memory as procMemory } from './lib/proc.js'
import { ratio, type Ratio, type Row } from './lib/report.js'

const PREFIX = 'mem-'
const DIGITS = 8
const WARM = 200
const TARGET_RATIO = 1.8

export const memory: Scenario = {
  name: 'memory',
  summary: 'RSS per stored object: after creating --objects ConfigMaps, and after a restart (before and after a full walk)',
  options: ['connections', 'object-size', 'objects'],
  defaults: { objects: 100_000 },
  smokeDefaults: { connections: 8 },
  needsOwnServer: true,
  async run(ctx: Ctx): Promise<ScenarioResult> {
    const N = Math.max(1, ctx.int('objects'))
    const size = ctx.int('object-size')
    const rows: Row[] = []
    const ratios: Ratio[] = []
    const body = configMapBody(size, PREFIX.length + DIGITS)
    const step = ctx.smoke ? 40 : 200
    const srv = await ctx.startServer()
    const dataDir = srv.dataDir!
    let base: Rss = { rss: 0, anon: 0, file: 0 }
    let after: Rss = { rss: 0, anon: 0, file: 0 }
    let peak = 0
    try {
      const conns = ctx.connections(srv.url, ctx.int('connections'))
      // warm-up: the code paths of create and get are compiled before the baseline is taken
      await seed(ctx, conns, CONFIGMAPS, WARM, (i) => body.body(seqName('mw-', i, PREFIX.length + DIGITS - 3)), 'warm-up')
      for (let i = 0; i < WARM; i++) await conns[i % conns.length].request('GET', `${CONFIGMAPS}/${seqName('mw-', i, PREFIX.length + DIGITS - 3)}`)
      base = await settledRss(srv.pid!, step)
      srv.sampler?.start()
      await seed(ctx, conns, CONFIGMAPS, N, (i) => body.body(seqName(PREFIX, i, DIGITS)))
      peak = srv.sampler?.stop().peakRssMB ?? 0
      after = await settledRss(srv.pid!, step)
      closeAll(conns)
    } finally {
      await srv.stop()
    }
    const disk = diskBytes(dataDir)
    const grown = perObject(after, base, N)
    const baseline = { baseMB: mb(base.rss), baseAnonMB: mb(base.anon), baseFileMB: mb(base.file) }
    rows.push(memRow(`RSS growth per object while creating ${N}`, grown.total, { ...grown, ...baseline, peakMB: peak }))
    ratios.push(ratio(`RSS growth per object / object size (${size} B)`, grown.total, size, TARGET_RATIO, true))

    const again = await ctx.startServer(undefined, dataDir)
    try {
      const cold = await settledRss(again.pid!, step)
      const [c] = ctx.connections(again.url, 1)
      const seen = await walk(c)
      c.close()
      const walked = await settledRss(again.pid!, step)
      // against the baseline of the first server (warmed up, WARM objects): a restarted server has compiled less
      const c1 = perObject(cold, base, N)
      const c2 = perObject(walked, base, N)
      rows.push(memRow('RSS after restart - baseline, per object', c1.total, { ...c1, ...baseline }))
      rows.push(memRow('RSS after restart + one full paged walk - baseline, per object', c2.total, { ...c2, ...baseline, objectsSeen: seen }, seen === N + WARM ? 0 : 1))
    } finally {
      await again.stop()
    }
    rows.push(memRow('disk per object (data dir, allocated blocks)', Math.round(disk / (N + WARM)), { dataDirMB: mb(disk) }))
    return { rows, ratios }
  },
}

const mb = (b: number) => Math.round((b / 1024 / 1024) * 10) / 10

function memRow(name: string, value: number, details: Record<string, unknown>, errors = 0): Row {
  return { target: 'orch', name, unit: 'B/object', ops: 1, seconds: 0, rate: value, errors, details }
}

interface Rss { rss: number; anon: number; file: number }

/** RSS once it stops moving: the median of five readings `stepMs` apart (by total), after a pause of five steps. */
async function settledRss(pid: number, stepMs: number): Promise<Rss> {
  await new Promise((r) => setTimeout(r, stepMs * 5))
  const xs: Rss[] = []
  for (let i = 0; i < 5; i++) {
    const m = procMemory(pid)
    xs.push({ rss: m?.rss ?? 0, anon: m?.anon ?? 0, file: m?.file ?? 0 })
    await new Promise((r) => setTimeout(r, stepMs))
  }
  return xs.sort((a, b) => a.rss - b.rss)[2]
}

/** Growth over the baseline per object, in total and split into anonymous and file-backed pages. */
function perObject(now: Rss, base: Rss, n: number): { total: number; anonPerObject: number; filePerObject: number; rssMB: number; anonMB: number; fileMB: number } {
  return {
    total: Math.round((now.rss - base.rss) / n),
    anonPerObject: Math.round((now.anon - base.anon) / n),
    filePerObject: Math.round((now.file - base.file) / n),
    rssMB: mb(now.rss), anonMB: mb(now.anon), fileMB: mb(now.file),
  }
}

/** Lists every ConfigMap in pages of 500; returns how many it saw. */
async function walk(c: HttpConnection): Promise<number> {
  let seen = 0
  let token: string | undefined
  do {
    const r = await c.request('GET', `${CONFIGMAPS}?limit=500${token ? `&continue=${encodeURIComponent(token)}` : ''}`)
    if (r.status !== 200) break
    const text = r.body.toString()
    const head = text.slice(0, Math.max(0, text.indexOf('"items"')))
    token = firstString(head, 'continue') || undefined
    seen += (text.match(/"kind":"ConfigMap"/g) ?? []).length
  } while (token)
  return seen
}
