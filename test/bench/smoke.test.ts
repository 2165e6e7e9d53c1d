// Smoke run of every bench scenario through the real CLI (dist/bench/run.js --smoke): each exits 0 and prints a JSON
// report with the expected keys. No timing assertions: the figures of a smoke run mean nothing.
import t from 'tap'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { root } from '../helpers/server.js'
import { plainNode } from '../helpers/tap-env.js'
import { findEtcd } from '../../bench/lib/etcd.js'
import { findWrk } from '../../bench/lib/wrk.js'

const runJs = join(root, 'dist/bench/run.js')
const etcd = findEtcd() !== undefined
const tmp = mkdtempSync(join(tmpdir(), 'orch-bench-smoke-'))
t.teardown(() => rmSync(tmp, { recursive: true, force: true }))

interface Case { scenario: string; args: string[] }

const cases: Case[] = [
  { scenario: 'create', args: ['--peer', etcd ? 'etcd,uws-hello' : 'uws-hello', '--html', join(tmp, 'create.html')] },
  { scenario: 'get', args: ['--peer', 'uws-hello'] },
  { scenario: 'list', args: etcd ? ['--peer', 'etcd'] : [] },
  { scenario: 'update', args: [] },
  { scenario: 'watch-fanout', args: [] },
  { scenario: 'mixed', args: ['--pod-status-write', 'patch'] },
  { scenario: 'startup', args: [] },
  { scenario: 'memory', args: [] },
  // with wrk, the GET throughput part runs once, by wrk (apf-wrk below); without it, here by the built-in client
  { scenario: 'apf-fairness', args: findWrk() !== undefined ? ['--parts', 'fairness'] : [] },
  { scenario: 'encode', args: [] },
]

interface Outcome { code: number | null; stdout: string; stderr: string }

/** One run of the CLI; its --json file is <key>.json (two runs of one scenario may overlap). */
function run(c: Case, key: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const p = spawn(...plainNode([runJs, c.scenario, '--smoke', '--no-progress', '--json', join(tmp, `${key}.json`), ...c.args]), { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    p.stdout.on('data', (d) => { stdout += d })
    p.stderr.on('data', (d) => { stderr += d })
    const timer = setTimeout(() => p.kill('SIGKILL'), 120_000)
    p.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }) })
  })
}

// Every CLI run of this file, the extra ones of the later tests too, goes through one queue worked by two lanes from
// the start, the longest first (most of a smoke run is server start-up, which leaves a core idle); each test awaits
// its own runs. Keys: the scenario for the runs of `cases`, a name of its own for the others.
const extra: Record<string, Case> = {
  'apf-wrk': { scenario: 'apf-fairness', args: ['--parts', 'cost', '--client', 'wrk'] },
  'mixed-put': { scenario: 'mixed', args: ['--pod-status-write', 'put'] },
  'mixed-post': { scenario: 'mixed', args: ['--pod-status-write', 'post'] },
  nope: { scenario: 'nope', args: [] },
  bogus: { scenario: 'get', args: ['--bogus', '1'] },
  'gc-parallel': { scenario: 'get', args: ['--loadgen-gc', 'parallel'] },
  'gc-bogus': { scenario: 'get', args: ['--loadgen-gc', 'none'] },
}
const wrk = findWrk() !== undefined
// server starts per run, roughly its cost: the order of the queue
const weight: Record<string, number> = { startup: 3, 'apf-fairness': 3, memory: 2, 'apf-wrk': 2, create: 2, mixed: 1.5, 'mixed-put': 1.5, 'mixed-post': 0.1, nope: 0.1, bogus: 0.1, 'gc-bogus': 0.1 }
const outcomes = new Map<string, Promise<Outcome>>()
{
  const queue: Array<[string, Case]> = [...cases.map((c): [string, Case] => [c.scenario, c]), ...Object.entries(extra).filter(([k]) => k !== 'apf-wrk' || wrk)]
  queue.sort((a, b) => (weight[b[0]] ?? 1) - (weight[a[0]] ?? 1))
  const started = new Map<string, (o: Promise<Outcome>) => void>()
  for (const [key] of queue) outcomes.set(key, new Promise<Outcome>((resolve) => started.set(key, (p) => { void p.then(resolve) })))
  const lane = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const p = run(next[1], next[0])
      started.get(next[0])!(p)
      await p
    }
  }
  const lanes = Promise.all([lane(), lane()])
  t.teardown(() => lanes)
}

const waitFor = (key: string): Promise<Outcome> => outcomes.get(key)!

for (const c of cases) {
  t.test(`bench ${c.scenario} --smoke`, async (t) => {
    const o = await waitFor(c.scenario)
    t.equal(o.code, 0, `exit code (stderr: ${o.stderr.slice(-2000)})`)
    const last = o.stdout.trim().split('\n').pop() ?? ''
    let report: any
    t.doesNotThrow(() => { report = JSON.parse(last) }, 'the last line of stdout is the JSON report')
    if (!report) return
    t.equal(report.scenario, c.scenario)
    for (const k of ['date', 'machine', 'settings', 'rows', 'ratios', 'notes']) t.ok(k in report, `report has ${k}`)
    t.equal(report.settings.smoke.value, true)
    t.ok(report.machine.loadgenNodeFlags.includes('--single-threaded-gc'), 'the load generator ran with --single-threaded-gc (--loadgen-gc single, the default)')
    t.ok(report.rows.length > 0, 'at least one row')
    for (const row of report.rows) {
      for (const k of ['target', 'name', 'ops', 'rate', 'unit', 'errors']) t.ok(k in row, `row ${row.name} has ${k}`)
    }
    const file = JSON.parse(readFileSync(join(tmp, `${c.scenario}.json`), 'utf8'))
    t.same(file.rows.map((r: any) => r.name), report.rows.map((r: any) => r.name), '--json wrote the same report')
    t.match(o.stdout, /^target\s+operation/m, 'the readable table was printed')
    if (c.args.includes('--peer')) {
      const peers = c.args[c.args.indexOf('--peer') + 1].split(',')
      for (const p of peers) t.ok(report.rows.some((r: any) => r.target === p), `a row for the ${p} peer`)
      t.ok(report.ratios.length > 0, 'ratios against the peer')
    }
    if (c.scenario === 'encode') {
      t.same(report.rows.map((r: any) => r.name.replace(/ \(.*$/, '')), ['full LIST as json', 'full LIST as protobuf', 'full LIST as table', 'full LIST as cbor'], 'a row per media type')
      for (const row of report.rows) {
        t.equal(row.errors, 0, `${row.name}: no errors (notes: ${JSON.stringify(report.notes)})`)
        t.match(row.name, /\(20 pods,/, `${row.name}: every stored pod in the answer`)
        t.ok(row.details.bytes > 0 && row.details.bytesPerObject > 0, `${row.name}: bytes measured`)
      }
      t.equal(report.ratios.length, 6, 'time and bytes against JSON for protobuf, table and cbor')
    }
    if (c.scenario === 'create') {
      t.ok(report.rows.some((r: any) => r.stageTimings?.length > 0), 'per-stage timings read from the access log (log level info)')
      const html = readFileSync(join(tmp, 'create.html'), 'utf8')
      t.match(html, /<svg/, '--html wrote a page with SVG charts')
      t.notMatch(html, /<script|<link|https?:\/\/(?!www\.w3\.org\/2000\/svg)/, 'the page loads nothing from outside')
    }
  })
}

t.test('unknown scenario and unknown option exit 2 with a message', async (t) => {
  const a = await waitFor('nope')
  t.equal(a.code, 2)
  t.match(a.stderr, /unknown scenario/)
  const b = await waitFor('bogus')
  t.equal(b.code, 2)
  t.match(b.stderr, /unknown option --bogus/)
})

t.test('apf-fairness --parts cost --client wrk: the GETs by wrk, with the token, all answered 200', { skip: !wrk ? 'wrk is not installed (apt-get install wrk)' : false }, async (t) => {
  const o = await waitFor('apf-wrk')
  t.equal(o.code, 0, `exit code (stderr: ${o.stderr.slice(-2000)})`)
  const report = JSON.parse(o.stdout.trim().split('\n').pop() ?? '{}')
  t.same(report.rows.map((r: any) => r.name.replace(/ \(.*$/, '')), ['GET configmap as a user, 16 conns, APF on', 'GET configmap as a user, 16 conns, APF off'].map((n) => n.replace('16', String(report.settings.connections.value))))
  for (const row of report.rows) {
    t.ok(row.ops > 0, `${row.name}: requests made`)
    t.equal(row.errors, 0, `${row.name}: every GET answered 200 (a missing token would be 401)`)
  }
  t.match(report.notes.join(' '), /client wrk/)
})

t.test('--loadgen-gc parallel runs the load generator with V8\'s own GC threads; another value exits 2', async (t) => {
  const o = await waitFor('gc-parallel')
  t.equal(o.code, 0, `exit code (stderr: ${o.stderr.slice(-2000)})`)
  const report = JSON.parse(o.stdout.trim().split('\n').pop() ?? '{}')
  t.equal(report.settings['loadgen-gc'].value, 'parallel')
  t.notOk(report.machine.loadgenNodeFlags.includes('--single-threaded-gc'), 'no --single-threaded-gc')
  t.ok(report.rows.length > 0 && report.rows.every((r: any) => r.ops > 0), 'the scenario ran')
  const b = await waitFor('gc-bogus')
  t.equal(b.code, 2)
  t.match(b.stderr, /--loadgen-gc: "none" is not single or parallel/)
})

t.test('the CLI exists once built', async (t) => {
  t.ok(existsSync(runJs))
})

t.test('mixed writes pod status as the kubelet does (a strategic merge patch) or as a whole PUT, every write answered 200 and seen by both informers', async (t) => {
  for (const how of ['patch', 'put']) {
    const o = await waitFor(how === 'patch' ? 'mixed' : `mixed-${how}`)
    t.equal(o.code, 0, `${how}: exit code (stderr: ${o.stderr.slice(-2000)})`)
    const report = JSON.parse(o.stdout.trim().split('\n').pop() ?? '{}')
    const row = report.rows?.find((r: any) => r.name.startsWith('pod status '))
    t.match(row?.name, how === 'patch' ? /^pod status PATCH/ : /^pod status PUT/, `${how}: the row names the verb`)
    t.ok(row?.ops > 0, `${how}: pod status writes were made`)
    t.equal(row?.errors, 0, `${how}: no write failed (outcomes ${JSON.stringify(row?.outcomes)})`)
    for (const d of report.rows.filter((r: any) => r.details?.expected !== undefined)) {
      t.equal(d.details.missed, 0, `${how}: ${d.name} missed nothing`)
    }
  }
  const bad = await waitFor('mixed-post')
  t.not(bad.code, 0, 'an unknown way of writing is refused')
  t.match(bad.stderr, /--pod-status-write: "post" is not patch or put/)
})
