// memory: RSS per stored object. The server's RSS is read after a warm-up (a few objects written and read: the
// baseline), again after --objects ConfigMaps are created, and again after a restart on the same data dir, before and
// after one paged walk over everything (LMDB pages count in RSS once they are touched); each figure is the growth
// over the baseline divided by --objects. Disk per object is reported too.
import { type Ctx, type Scenario, type ScenarioResult, closeAll, seed } from './lib/context.js'
import { diskBytes } from './lib/disk.js'
import type { HttpConnection } from './lib/http.js'
import { CONFIGMAPS, configMapBody, firstString, seqName } from './lib/objects.js'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { open } from 'lmdb'
import { objectsDbOptions } from '../src/machinery/storage-format.js'
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
    rows.push(memRow('disk per object (data dir, allocated blocks)', Math.round(disk / (N + WARM)), { dataDirMB: mb(disk), ...lmdbStats(dataDir) }))
    return { rows, ratios }
  },
}

const mb = (b: number) => Math.round((b / 1024 / 1024) * 10) / 10

function memRow(name: string, value: number, details: Record<string, unknown>, errors = 0): Row {
  return { target: 'orch', name, unit: 'B/object', ops: 1, seconds: 0, rate: value, errors, details }
}

interface Rss { rss: number; anon: number; file: number; /** RSS by mapping kind (smaps) */ maps?: Record<string, number> }

/**
 * RSS of a process by kind of mapping, from /proc/<pid>/smaps: `lmdb` (the data.mdb maps), `anon` (anonymous maps
 * and [heap]: the V8 heaps of every thread, array buffers, malloc), `code` (other files: node, shared libraries),
 * `stack`.
 */
function smapsBreakdown(pid: number): Record<string, number> {
  const out: Record<string, number> = { lmdb: 0, anon: 0, code: 0, stack: 0 }
  let kind = 'anon'
  let text: string
  try { text = readFileSync(`/proc/${pid}/smaps`, 'latin1') } catch { return out }
  for (const line of text.split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line)
    if (head) {
      const name = head[1]
      kind = name === '' || name === '[heap]' ? 'anon' : name.startsWith('[stack') ? 'stack' : name.endsWith('.mdb') ? 'lmdb' : name.startsWith('[') ? 'anon' : 'code'
      continue
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line)
    if (rss) out[kind] += Number(rss[1]) * 1024
  }
  return out
}

/** RSS once it stops moving: the median of five readings `stepMs` apart (by total), after a pause of five steps. */
async function settledRss(pid: number, stepMs: number): Promise<Rss> {
  await new Promise((r) => setTimeout(r, stepMs * 5))
  const xs: Rss[] = []
  for (let i = 0; i < 5; i++) {
    const m = procMemory(pid)
    xs.push({ rss: m?.rss ?? 0, anon: m?.anon ?? 0, file: m?.file ?? 0 })
    await new Promise((r) => setTimeout(r, stepMs))
  }
  const mid = xs.sort((a, b) => a.rss - b.rss)[2]
  mid.maps = smapsBreakdown(pid)
  return mid
}

/** Growth over the baseline per object, in total and split into anonymous and file-backed pages. */
function perObject(now: Rss, base: Rss, n: number): { total: number; anonPerObject: number; filePerObject: number; rssMB: number; anonMB: number; fileMB: number; mapsPerObject: Record<string, number> } {
  const mapsPerObject: Record<string, number> = {}
  for (const k of Object.keys(now.maps ?? {})) mapsPerObject[k] = Math.round(((now.maps?.[k] ?? 0) - (base.maps?.[k] ?? 0)) / n)
  return {
    total: Math.round((now.rss - base.rss) / n),
    anonPerObject: Math.round((now.anon - base.anon) / n),
    filePerObject: Math.round((now.file - base.file) / n),
    rssMB: mb(now.rss), anonMB: mb(now.anon), fileMB: mb(now.file), mapsPerObject,
  }
}

/** Page counts of the objects databases of every shard (the server is stopped), summed. */
function lmdbStats(dataDir: string): Record<string, number> {
  const out: Record<string, number> = { pageSize: 0, entries: 0, leafPages: 0, branchPages: 0, overflowPages: 0, lastPage: 0 }
  for (const d of readdirSync(dataDir).filter((n) => n.startsWith('shard-'))) {
    const root = open({ path: join(dataDir, d), readOnly: true, maxDbs: 4 })
    try {
      const s = root.openDB('objects', objectsDbOptions()).getStats() as Record<string, number>
      out.pageSize = s.pageSize
      out.entries += s.entryCount
      out.leafPages += s.treeLeafPageCount
      out.branchPages += s.treeBranchPageCount
      out.overflowPages += s.overflowPages
      out.lastPage += (root.getStats() as Record<string, number>).lastPageNumber ?? 0
    } finally {
      void root.close()
    }
  }
  return out
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
