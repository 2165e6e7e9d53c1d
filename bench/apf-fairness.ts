// apf-fairness: API Priority and Fairness under overload. An elephant flow keeps 10x the seats of a Queue priority
// level busy while a mouse flow (one connection) shares the level: the mouse's p99 against its p99 alone (target
// <= 2x; --repeat rounds, alone and beside alternating, medians). Then the cost of APF: the same GET load with
// --enable-priority-and-fairness on and off, alternated --repeat times on fresh servers (medians; target >= 0.9).
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Ctx, type Scenario, type ScenarioResult, closeAll, loadRow, seed, windowSampler } from './lib/context.js'
import type { HttpConnection } from './lib/http.js'
import { closedLoop, type LoadResult } from './lib/load.js'
import { CONFIGMAPS, configMapBody, seqName } from './lib/objects.js'
import { ratio, type Row } from './lib/report.js'
import { launchServer, type Server } from './lib/server.js'
import { wrkGet } from './lib/wrk.js'

const G = 'flowcontrol.apiserver.orch.io'
/** ServerCL 8 and a level holding half of all shares (245 of 490): CurrentCL 4, nothing lent, nothing borrowed. */
const SERVER_FLAGS = ['--max-requests-inflight', '4', '--max-mutating-requests-inflight', '4']
const LEVEL_SHARES = 245
const LEVEL_CL = 4
const OVERLOAD = 10
/** The throughput comparison runs with upstream's default limits on both sides. */
const DEFAULT_FLAGS = ['--max-requests-inflight', '400', '--max-mutating-requests-inflight', '200']
const TOKENS = { elephant: 'elephant-token', mouse: 'mouse-token' }

export const apfFairness: Scenario = {
  name: 'apf-fairness',
  summary: `an elephant flow at ${OVERLOAD}x the seats of a Queue level and a mouse flow on the same level (mouse p99 vs alone); GET throughput with APF on vs off`,
  options: ['connections', 'object-size', 'objects', 'repeat', 'parts'],
  defaults: { connections: 32, repeat: 3 },
  wrk: true,
  smokeDefaults: { repeat: 1 },
  needsOwnServer: true,
  async run(ctx: Ctx): Promise<ScenarioResult> {
    const tokenFile = join(ctx.tmp, 'apf-tokens.csv')
    writeFileSync(tokenFile, `${TOKENS.elephant},elephant,elephant-uid\n${TOKENS.mouse},mouse,mouse-uid\n`)
    const common = ['--token-auth-file', tokenFile, '--authorization-mode', 'AlwaysAllow']
    const rows: Row[] = []
    const ratios = []
    const parts = ctx.list('parts')
    // With access lines (--log-level info) each flow's rows carry its server-side stages (flowControl.queue: the
    // wait in the actor's queue, part of flowControl; the rest of flowControl is the trip to the actor and back).
    const info = ctx.list('log-level')[0] === 'info'

    // ---- fairness: rounds of (mouse alone, mouse beside the elephant) on one server, order alternating
    const rounds = Math.max(1, ctx.int('repeat'))
    const med = (xs: number[]) => { const v = [...xs].sort((a, b) => a - b); return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2 }
    if (parts.includes('fairness')) {
      const srv = await start(ctx, [...common, ...SERVER_FLAGS])
      try {
        await configureLevel(ctx, srv)
        const body = configMapBody(ctx.int('object-size'), 10)
        const auth = (t: string) => ({ authorization: `Bearer ${t}` })
        let n = 0
        const createAs = (token: string, who: string) => async (c: HttpConnection) => {
          const r = await c.request('POST', CONFIGMAPS, body.body(`${who}${(n++).toString(36).padStart(9, '0')}`), auth(token))
          return r.status === 201 ? 'ok' : `status ${r.status}`
        }
        const mouseConns = ctx.connections(srv.url, 1)
        const elephantConns = ctx.connections(srv.url, LEVEL_CL * OVERLOAD)
        const p99: Record<'alone' | 'beside', number[]> = { alone: [], beside: [] }
        const p50: Record<'alone' | 'beside', number[]> = { alone: [], beside: [] }
        let lastAlone: Awaited<ReturnType<typeof loop>> | undefined
        let lastBeside: Awaited<ReturnType<typeof loop>> | undefined
        let lastElephant: Awaited<ReturnType<typeof loop>> | undefined
        for (let i = 0; i < rounds; i++) {
          for (const phase of (i % 2 === 0 ? ['alone', 'beside'] : ['beside', 'alone']) as Array<'alone' | 'beside'>) {
            if (phase === 'alone') {
              lastAlone = await loop(ctx, `mouse alone (${i + 1})`, srv, mouseConns, 1, createAs(TOKENS.mouse, 'm'))
              p99.alone.push(lastAlone.r.latency.p99)
              p50.alone.push(lastAlone.r.latency.p50)
            } else {
              const [mouse, elephant] = await Promise.all([
                loop(ctx, `mouse beside the elephant (${i + 1})`, srv, mouseConns, 1, createAs(TOKENS.mouse, 'm')),
                loop(ctx, `elephant (${i + 1})`, undefined, elephantConns, LEVEL_CL * OVERLOAD, createAs(TOKENS.elephant, 'e')),
              ])
              lastBeside = mouse
              lastElephant = elephant
              p99.beside.push(mouse.r.latency.p99)
              p50.beside.push(mouse.r.latency.p50)
            }
          }
        }
        closeAll(mouseConns)
        closeAll(elephantConns)
        if (lastAlone && lastBeside && lastElephant) {
          const stages = async (l: { r: LoadResult }, user: string) => (info ? srv.accessTimings(l.r.window, user) : undefined)
          rows.push(loadRow('orch', `mouse alone: POST configmap, 1 conn (p99 per round: ${p99.alone.join(', ')} ms)`, 'req/s', lastAlone.r, lastAlone.w, { details: { p99: p99.alone, p50: p50.alone }, stageTimings: await stages(lastAlone, 'mouse') }))
          rows.push(loadRow('orch', `mouse beside the elephant: POST configmap, 1 conn, level CL ${LEVEL_CL} (p99 per round: ${p99.beside.join(', ')} ms)`, 'req/s', lastBeside.r, lastBeside.w, { details: { p99: p99.beside, p50: p50.beside }, stageTimings: await stages(lastBeside, 'mouse') }))
          rows.push(loadRow('orch', `elephant: POST configmap, ${LEVEL_CL * OVERLOAD} conns (${OVERLOAD}x the level's seats; last round)`, 'req/s', lastElephant.r, lastElephant.w, { stageTimings: await stages(lastElephant, 'elephant') }))
        }
        ratios.push(ratio(`mouse p99 beside the elephant vs alone (medians of ${rounds})`, med(p99.beside), med(p99.alone), 2, true))
        ratios.push(ratio(`mouse p50 beside the elephant vs alone (medians of ${rounds})`, med(p50.beside), med(p50.alone)))
      } finally {
        await srv.stop()
      }
    }

    // ---- cost: GET by name as a user classified by the suggested FlowSchemas (global-default), APF on vs off
    if (!parts.includes('cost')) return { rows, ratios }
    const C = ctx.int('connections')
    const N = Math.max(1, ctx.int('objects'))
    const paths = Array.from({ length: N }, (_, i) => `${CONFIGMAPS}/${seqName('apf-', i, 8)}`)
    const rates: Record<'on' | 'off', number[]> = { on: [], off: [] }
    const last: Partial<Record<'on' | 'off', { r: LoadResult; w: ReturnType<typeof windowSampler>['result'] }>> = {}
    for (let i = 0; i < rounds; i++) {
      for (const mode of (i % 2 === 0 ? ['on', 'off'] : ['off', 'on']) as Array<'on' | 'off'>) {
        const srv = await start(ctx, [...common, ...DEFAULT_FLAGS, `--enable-priority-and-fairness=${mode === 'on'}`])
        try {
          const conns = ctx.connections(srv.url, C)
          const admin = { authorization: `Bearer ${readFileSync(join(srv.dataDir as string, 'admin-token'), 'utf8').trim()}` }
          const body = configMapBody(ctx.int('object-size'), 12)
          await seedAs(ctx, conns, N, (k) => body.body(seqName('apf-', k, 8)), admin)
          const label = `GET, APF ${mode} (${i + 1})`
          const res = ctx.str('client') === 'wrk'
            ? await wrkLoop(ctx, label, srv, C, `${CONFIGMAPS}/apf-`, N, `Bearer ${TOKENS.elephant}`)
            : await loop(ctx, label, srv, conns, C, async (c) => {
              const r = await c.request('GET', paths[Math.floor(Math.random() * N)], undefined, { authorization: `Bearer ${TOKENS.elephant}` })
              return r.status === 200 ? 'ok' : `status ${r.status}`
            })
          closeAll(conns)
          rates[mode].push(res.r.throughput)
          last[mode] = res
        } finally {
          await srv.stop()
        }
      }
    }
    for (const mode of ['on', 'off'] as const) {
      const res = last[mode]
      if (!res) continue
      rows.push(loadRow('orch', `GET configmap as a user, ${C} conns, APF ${mode} (rate = median of ${rates[mode].length}: ${rates[mode].join(', ')})`, 'req/s', res.r, res.w, { rate: med(rates[mode]), details: { runs: rates[mode] } }))
    }
    ratios.push(ratio('GET throughput, APF on vs off (medians)', med(rates.on), med(rates.off), 0.9))
    ctx.notes.push(`fairness: ServerCL 8 (${SERVER_FLAGS.join(' ')}), level "bench" with ${LEVEL_SHARES} of 490 shares = CurrentCL ${LEVEL_CL}, Queue 64 queues / hand 6 / length 50, FlowSchema ByUser for users elephant and mouse`)
    ctx.notes.push(`cost: ${DEFAULT_FLAGS.join(' ')}, the user "elephant" lands on global-default (suggested configuration); the runs alternate on/off; client ${ctx.str('client')}`)
    return { rows, ratios }
  },
}

function start(ctx: Ctx, args: string[]): Promise<Server> {
  ctx.progress.note(`starting server ${args.filter((a) => !a.includes('/')).join(' ')}`)
  return launchServer({
    port: ctx.int('port'), tmp: ctx.tmp, logLevel: ctx.list('log-level')[0],
    frontends: ctx.int('frontends') || undefined, shards: ctx.int('shards') || undefined,
    extraArgs: [...ctx.list('server-arg'), ...args],
  })
}

async function loop(ctx: Ctx, label: string, srv: Server | undefined, conns: HttpConnection[], concurrency: number, op: (c: HttpConnection) => Promise<string>): Promise<{ r: LoadResult; w: ReturnType<typeof windowSampler>['result'] }> {
  const ws = windowSampler(srv?.sampler)
  const r = await closedLoop({
    label, clients: conns, concurrency, warmupMs: ctx.warmupMs, durationMs: ctx.durationMs, count: ctx.int('count'),
    op, progress: ctx.progress, onStart: ws.onStart, onEnd: ws.onEnd,
  })
  return { r, w: ws.result }
}

/** The cost part's GETs by wrk (--client wrk): a C client at about a third of our client's CPU per request. */
async function wrkLoop(ctx: Ctx, label: string, srv: Server, connections: number, pathPrefix: string, n: number, authorization: string): Promise<{ r: LoadResult; w: ReturnType<typeof windowSampler>['result'] }> {
  const o = { url: srv.url, connections, pathPrefix, digits: 8, n, tmp: ctx.tmp, authorization }
  if (ctx.warmupMs > 0) await wrkGet({ ...o, seconds: Math.max(1, Math.round(ctx.warmupMs / 1000)) })
  const ws = windowSampler(srv.sampler)
  ctx.progress.note(`[${label}] wrk for ${Math.max(1, Math.round(ctx.durationMs / 1000))} s`)
  ws.onStart()
  const { r, cpuPct } = await wrkGet({ ...o, seconds: Math.max(1, Math.round(ctx.durationMs / 1000)) })
  ws.onEnd()
  ws.result.loadgenCpuPct = cpuPct + (ws.result.loadgenCpuPct ?? 0)
  return { r, w: ws.result }
}

async function seedAs(ctx: Ctx, conns: HttpConnection[], n: number, body: (i: number) => string, headers: Record<string, string>): Promise<void> {
  const authed = conns.map((c) => ({ request: (m: string, p: string, b?: Buffer | string) => c.request(m, p, b, headers), close: () => c.close() }))
  await seed(ctx, authed, CONFIGMAPS, n, body)
}

/** The level "bench" and a FlowSchema sending users elephant and mouse to it, one flow per user. */
async function configureLevel(ctx: Ctx, srv: Server): Promise<void> {
  const [c] = ctx.connections(srv.url, 1)
  const admin = { authorization: `Bearer ${readFileSync(join(srv.dataDir as string, 'admin-token'), 'utf8').trim()}`, 'content-type': 'application/json' }
  try {
    const pl = await c.request('POST', `/apis/${G}/v1/prioritylevelconfigurations`, JSON.stringify({
      apiVersion: `${G}/v1`, kind: 'PriorityLevelConfiguration', metadata: { name: 'bench' },
      spec: { type: 'Limited', limited: { nominalConcurrencyShares: LEVEL_SHARES, lendablePercent: 0, borrowingLimitPercent: 0, limitResponse: { type: 'Queue', queuing: { queues: 64, handSize: 6, queueLengthLimit: 50 } } } },
    }), admin)
    if (pl.status !== 201) throw new Error(`creating the priority level: ${pl.status} ${pl.body.toString().slice(0, 300)}`)
    const fs = await c.request('POST', `/apis/${G}/v1/flowschemas`, JSON.stringify({
      apiVersion: `${G}/v1`, kind: 'FlowSchema', metadata: { name: 'bench' },
      spec: {
        matchingPrecedence: 500, priorityLevelConfiguration: { name: 'bench' }, distinguisherMethod: { type: 'ByUser' },
        rules: [{ subjects: [{ kind: 'User', user: { name: 'elephant' } }, { kind: 'User', user: { name: 'mouse' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }] }],
      },
    }), admin)
    if (fs.status !== 201) throw new Error(`creating the FlowSchema: ${fs.status} ${fs.body.toString().slice(0, 300)}`)
    const uid = JSON.parse(pl.body.toString()).metadata.uid as string
    // The front-ends classify against a replica the flow-control actor pushes: wait until it names the new level.
    const deadline = Date.now() + 10_000
    for (;;) {
      const r = await fetch(`${srv.url}${CONFIGMAPS}?limit=1`, { headers: { authorization: `Bearer ${TOKENS.mouse}` } })
      await r.arrayBuffer()
      if (r.headers.get('x-orch-pf-prioritylevel-uid') === uid) break
      if (Date.now() > deadline) throw new Error('the bench priority level did not come into force')
      await new Promise((res) => setTimeout(res, 50))
    }
  } finally {
    c.close()
  }
}
