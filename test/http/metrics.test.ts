// /metrics through the real server: the Prometheus text format with upstream's request metrics (verb, dry_run, group,
// version, resource, subresource, scope, component, code), durations and sizes, open watches, stored objects, APF's
// figures, who may read it (system:monitoring), and counts gathered from every front-end thread.
import t from 'tap'
import http from 'node:http'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type TestServer } from '../helpers/server.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-metrics-'))
const tokenFile = join(dir, 'tokens.csv')
writeFileSync(tokenFile, 'mon-token,prom,prom-uid,"system:monitoring"\nnobody-token,nobody,nobody-uid\n')

let s: TestServer
t.before(async () => { s = await startServer({ args: ['--token-auth-file', tokenFile] }) })
t.teardown(async () => { await s?.stop(); rmSync(dir, { recursive: true, force: true }) })

interface Sample { name: string; labels: Record<string, string>; value: number }

function parse(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = []
  const types = new Map<string, string>()
  for (const line of text.split('\n')) {
    if (line === '') continue
    const ty = /^# TYPE (\S+) (\S+)$/.exec(line)
    if (ty) { types.set(ty[1], ty[2]); continue }
    if (line.startsWith('#')) continue
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!m) throw new Error(`not a sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2]
    samples.push({ name: m[1], labels, value: Number(m[3]) })
  }
  return { samples, types }
}

async function scrape(token = s.adminToken): Promise<{ samples: Sample[]; types: Map<string, string> }> {
  const r = await s.requestAs(token, 'GET', '/metrics')
  if (r.status !== 200) throw new Error(`GET /metrics: ${r.status} ${r.text}`)
  return parse(r.text)
}

function find(samples: Sample[], name: string, want: Record<string, string>): Sample[] {
  return samples.filter((x) => x.name === name && Object.entries(want).every(([k, v]) => x.labels[k] === v))
}
const value = (samples: Sample[], name: string, want: Record<string, string>): number => find(samples, name, want).reduce((n, x) => n + x.value, 0)

t.test('text format 0.0.4, readable by system:monitoring, forbidden to others', async (t) => {
  const r = await s.requestAs('mon-token', 'GET', '/metrics')
  t.equal(r.status, 200)
  t.equal(r.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8')
  const { types } = parse(r.text)
  t.equal(types.get('apiserver_request_total'), 'counter')
  t.equal(types.get('apiserver_request_duration_seconds'), 'histogram')
  t.equal(types.get('apiserver_storage_objects'), 'gauge')
  const no = await s.requestAs('nobody-token', 'GET', '/metrics')
  t.equal(no.status, 403)
  t.match(no.json?.message, 'forbidden: User "nobody" cannot get path "/metrics"')
})

t.test('requests are counted with upstream labels: LIST, GET, POST, APPLY, dry run, 404 and 409 codes', async (t) => {
  t.equal((await s.request('POST', '/api/v1/namespaces', { metadata: { name: 'mx' } })).status, 201)
  const before = (await scrape()).samples
  const base = { group: '', version: 'v1', resource: 'configmaps', subresource: '', component: 'apiserver' }
  const n = (samples: Sample[], l: Record<string, string>) => value(samples, 'apiserver_request_total', { ...base, ...l })

  for (let i = 0; i < 3; i++) t.equal((await s.request('GET', '/api/v1/namespaces/mx/configmaps')).status, 200)
  t.equal((await s.request('GET', '/api/v1/configmaps?limit=1')).status, 200)
  t.equal((await s.request('POST', '/api/v1/namespaces/mx/configmaps', { metadata: { name: 'a' } })).status, 201)
  t.equal((await s.request('POST', '/api/v1/namespaces/mx/configmaps', { metadata: { name: 'a' } })).status, 409)
  t.equal((await s.request('POST', '/api/v1/namespaces/mx/configmaps?dryRun=All', { metadata: { name: 'b' } })).status, 201)
  t.equal((await s.request('GET', '/api/v1/namespaces/mx/configmaps/a')).status, 200)
  t.equal((await s.request('GET', '/api/v1/namespaces/mx/configmaps/missing')).status, 404)
  const apply = await s.request('PATCH', '/api/v1/namespaces/mx/configmaps/c?fieldManager=t', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } }, { 'content-type': 'application/apply-patch+yaml' })
  t.equal(apply.status, 201)
  t.equal((await s.request('GET', '/api/v1/namespaces/mx/nosuchthings')).status, 404)

  const after = (await scrape()).samples
  const d = (l: Record<string, string>) => n(after, l) - n(before, l)
  t.equal(d({ verb: 'LIST', scope: 'namespace', code: '200', dry_run: '' }), 3, 'LIST of a namespace')
  t.equal(d({ verb: 'LIST', scope: 'cluster', code: '200', dry_run: '' }), 1, 'LIST across namespaces')
  t.equal(d({ verb: 'POST', scope: 'resource', code: '201', dry_run: '' }), 1, 'a create is scope resource')
  t.equal(d({ verb: 'POST', scope: 'resource', code: '409', dry_run: '' }), 1, 'the conflict by its code')
  t.equal(d({ verb: 'POST', scope: 'resource', code: '201', dry_run: 'All' }), 1, 'dry run labelled')
  t.equal(d({ verb: 'GET', scope: 'resource', code: '200' }), 1)
  t.equal(d({ verb: 'GET', scope: 'resource', code: '404' }), 1)
  t.equal(d({ verb: 'APPLY', scope: 'resource', code: '201' }), 1, 'an apply patch is APPLY')
  t.same(find(after, 'apiserver_request_total', { resource: 'nosuchthings' }), [], 'an unknown type is not counted')

  // Each label set's histogram agrees with its counts.
  const labels = { ...base, verb: 'LIST', scope: 'namespace', dry_run: '' }
  const count = value(after, 'apiserver_request_duration_seconds_count', labels)
  t.equal(count, n(after, { verb: 'LIST', scope: 'namespace', dry_run: '' }), '_count is the number of answers')
  const buckets = find(after, 'apiserver_request_duration_seconds_bucket', labels)
  t.equal(buckets.length, 24, '23 bounds and +Inf')
  t.same(buckets.map((b) => b.labels.le).slice(0, 3), ['0.005', '0.025', '0.05'])
  t.equal(buckets[buckets.length - 1].labels.le, '+Inf')
  t.equal(buckets[buckets.length - 1].value, count)
  t.ok(buckets.every((b, i) => i === 0 || b.value >= buckets[i - 1].value), 'cumulative')
  t.ok(value(after, 'apiserver_response_sizes_count', { ...base, verb: 'LIST', scope: 'namespace' }) >= 3, 'list sizes')
  t.same(find(after, 'apiserver_response_sizes_count', { verb: 'POST' }), [], 'sizes of reads only')
})

t.test('an open watch is a long-running request, counted as WATCH when it ends', async (t) => {
  const labels = { verb: 'WATCH', group: '', version: 'v1', resource: 'secrets', scope: 'namespace' }
  const before = value((await scrape()).samples, 'apiserver_request_total', labels)
  const req = http.get(`${s.url}/api/v1/namespaces/mx/secrets?watch=1`, { agent: false, headers: { authorization: `Bearer ${s.adminToken}` } })
  await new Promise<void>((resolve) => req.on('response', () => resolve()))
  const open = (await scrape()).samples
  t.equal(value(open, 'apiserver_longrunning_requests', labels), 1)
  req.destroy()
  let after = before
  for (let i = 0; i < 50 && after === before; i++) {
    await new Promise((r) => setTimeout(r, 50))
    after = value((await scrape()).samples, 'apiserver_request_total', { ...labels, code: '200' })
  }
  t.equal(after - before, 1)
  t.equal(value((await scrape()).samples, 'apiserver_longrunning_requests', labels), 0)
})

t.test('stored objects by resource; APF figures by flow schema and priority level', async (t) => {
  const { samples } = await scrape()
  const lists = await s.request('GET', '/api/v1/configmaps')
  t.equal(value(samples, 'apiserver_storage_objects', { resource: 'configmaps' }), lists.json.items.length)
  const crs = await s.request('GET', '/apis/rbac.authorization.orch.io/v1/clusterroles')
  t.equal(value(samples, 'apiserver_storage_objects', { resource: 'clusterroles.rbac.authorization.orch.io' }), crs.json.items.length)
  // Exempt requests are dispatched by the front-ends, which report their counts to the actor every second.
  let exempt = 0
  for (let i = 0; i < 40 && exempt === 0; i++) {
    exempt = value((await scrape()).samples, 'apiserver_flowcontrol_dispatched_requests_total', { flow_schema: 'exempt', priority_level: 'exempt' })
    if (exempt === 0) await new Promise((r) => setTimeout(r, 100))
  }
  t.ok(exempt > 0, 'the admin rides the exempt level')
  t.equal(value(samples, 'apiserver_flowcontrol_nominal_limit_seats', { priority_level: 'workload-low' }) > 0, true)
  t.ok(value(samples, 'process_resident_memory_bytes', {}) > 0)
})

t.test('with two front-ends a scrape adds both threads\' counts', async (t) => {
  const two = await startServer({ args: ['--frontends', '2'] })
  t.teardown(() => two.stop())
  const get = () => new Promise<number>((resolve, reject) => {
    // A connection per request, so the kernel spreads them over both front-ends.
    http.get(`${two.url}/api/v1/namespaces/default/configmaps`, { agent: false, headers: { authorization: `Bearer ${two.adminToken}` } }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode ?? 0)) }).on('error', reject)
  })
  for (let i = 0; i < 30; i++) t.equal(await get(), 200)
  const r = await two.request('GET', '/metrics')
  const got = value(parse(r.text).samples, 'apiserver_request_total', { verb: 'LIST', resource: 'configmaps', scope: 'namespace', code: '200' })
  t.equal(got, 30, 'every list counted once')
})
