// Black-box resourceVersion tests through the real server: every cell of spec 1's get and list tables (including
// the invalid combinations), Exact reads of an older version, NotOlderThan waiting for a version not yet reached,
// too-new versions (504 + Retry-After), and after a restart: 410 for versions the server no longer keeps.
import t from 'tap'
import { rmSync } from 'node:fs'
import { startServer, type TestServer, type Reply } from '../helpers/server.js'

type Obj = Record<string, any>

let s: TestServer
let dataDir = ''
t.before(async () => { s = await startServer({ keepDataDir: true }); dataDir = s.dataDir })
t.teardown(async () => { await s?.stop(); if (dataDir) rmSync(dataDir, { recursive: true, force: true }) })

const NS = 'rv'
const base = `/api/v1/namespaces/${NS}/configmaps`
const q = (v: string) => encodeURIComponent(v)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const rvOf = (r: Reply) => Number(r.json?.metadata?.resourceVersion)
const names = (r: Reply): string[] => (r.json?.items ?? []).map((i: Obj) => i.metadata.name)
/** name -> data.k of a list's items */
const state = (items: Obj[]) => Object.fromEntries(items.map((i) => [i.metadata.name, i.data?.k]))

async function createCm(name: string, k = 'v', ns = NS): Promise<Reply> {
  const r = await s.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k } })
  if (r.status !== 201) throw new Error(`create ${name}: ${r.status} ${r.text}`)
  return r
}

async function setK(name: string, k: string, ns = NS): Promise<Reply> {
  const path = `/api/v1/namespaces/${ns}/configmaps/${name}`
  const g = await s.request('GET', path)
  g.json.data.k = k
  const r = await s.request('PUT', path, g.json)
  if (r.status !== 200) throw new Error(`update ${name}: ${r.status} ${r.text}`)
  return r
}

/**
 * All pages of a list from `path` (which carries limit); returns the pages' replies. Later pages repeat the query
 * with the token and without resourceVersion / resourceVersionMatch, as clients do.
 */
async function allPages(path: string): Promise<Reply[]> {
  const out: Reply[] = []
  let cont = ''
  const [p, qs] = path.split('?')
  const params = new URLSearchParams(qs)
  params.delete('resourceVersion')
  params.delete('resourceVersionMatch')
  params.delete('continue')
  for (let i = 0; i < 100; i++) {
    const r = await s.request('GET', i === 0 ? path : `${p}?${params}&continue=${q(cont)}`)
    out.push(r)
    if (r.status !== 200) return out
    cont = r.json.metadata.continue ?? ''
    if (!cont) return out
  }
  return out
}

type Asserts = import('tap').Test

function expectInvalid(t: Asserts, r: Reply, what: string): void {
  t.ok(r.status === 422 || r.status === 400, `${what}: invalid → 422/400 (got ${r.status} ${r.json?.message ?? ''})`)
  t.equal(r.json?.kind, 'Status', `${what}: a Status`)
  t.equal(r.json?.code, r.status, `${what}: code matches the status`)
}

function expectTooLarge(t: Asserts, r: Reply, what: string): void {
  t.equal(r.status, 504, `${what}: 504`)
  t.equal(r.headers['retry-after'], '1', `${what}: Retry-After: 1`)
  t.equal(r.json?.reason, 'Timeout', `${what}: reason Timeout`)
  t.match(r.json?.message ?? '', /Too large resource version/, `${what}: "Too large resource version"`)
  t.same(r.json?.details?.causes, [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], `${what}: cause ResourceVersionTooLarge`)
}

// The fixture: at version `atA` the namespace holds a0, a1 (k=old), a2; now it holds a0, a1 (k=new), a3.
const F = { atA: 0, modRv: 0, addRv: 0, a1Old: '', a1New: '' }
const stateAtA = { a0: 'v', a1: 'old', a2: 'v' }
const stateNow = { a0: 'v', a1: 'new', a3: 'v' }

t.before(async () => {
  const r = await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })
  if (r.status !== 201) throw new Error(`namespace: ${r.status} ${r.text}`)
  await createCm('a0')
  const a1 = await createCm('a1', 'old')
  F.a1Old = a1.json.metadata.resourceVersion
  const a2 = await createCm('a2')
  F.atA = rvOf(a2)
  const m = await setK('a1', 'new')
  F.modRv = rvOf(m)
  F.a1New = m.json.metadata.resourceVersion
  const d = await s.request('DELETE', `${base}/a2`)
  if (d.status !== 200) throw new Error(`delete: ${d.status}`)
  F.addRv = rvOf(await createCm('a3'))
})

// ---- get ----

t.test('get: resourceVersion unset → most recent', async (t) => {
  const r = await s.request('GET', `${base}/a1`)
  t.equal(r.status, 200)
  t.equal(r.json.data.k, 'new')
  t.equal(r.json.metadata.resourceVersion, F.a1New)
})

t.test('get: resourceVersion=0 → any', async (t) => {
  const r = await s.request('GET', `${base}/a1?resourceVersion=0`)
  t.equal(r.status, 200)
  t.ok(r.json.data.k === 'new' || r.json.data.k === 'old', 'some version of the object')
  t.equal(r.json.metadata.name, 'a1')
})

t.test('get: non-zero → not older than', async (t) => {
  for (const at of [Number(F.a1Old), F.modRv, F.addRv]) {
    const r = await s.request('GET', `${base}/a1?resourceVersion=${at}`)
    t.equal(r.status, 200, `rv=${at}: 200`)
    t.ok(Number(r.json.metadata.resourceVersion) >= Math.min(at, F.modRv), `rv=${at}: not older`)
    if (at >= F.modRv) t.equal(r.json.data.k, 'new', `rv=${at}: a state at least as new as ${at} has k=new`)
  }
  const gone = await s.request('GET', `${base}/a2?resourceVersion=${F.atA}`)
  t.equal(gone.status, 404, 'NotOlderThan does not resurrect a deleted object')
})

t.test('get: too new → 504 Too large resource version, Retry-After; non-numeric → 400', async (t) => {
  expectTooLarge(t, await s.request('GET', `${base}/a1?resourceVersion=${F.addRv + 100000}`), 'get far ahead')
  const r = await s.request('GET', `${base}/a1?resourceVersion=abc`)
  t.equal(r.status, 400, 'non-numeric: 400')
  t.equal(r.json?.reason, 'BadRequest')
})

t.test('get: not older than a version not yet reached waits for it', async (t) => {
  const cur = rvOf(await setK('a0', 'before-wait'))
  const t0 = Date.now()
  const pending = s.request('GET', `${base}/a0?resourceVersion=${cur + 1}`)
  await sleep(400)
  const w = await setK('a0', 'waited')
  const r = await pending
  await setK('a0', 'v')
  const took = Date.now() - t0
  t.equal(rvOf(w), cur + 1, 'the write took the awaited version (no other writer)')
  t.equal(r.status, 200, `answered 200 once the version exists (got ${r.status} ${r.json?.message ?? ''})`)
  t.ok(took >= 350, `it waited for the write (${took} ms)`)
  t.equal(r.json?.data?.k, 'waited', 'and shows the state at that version')
})

// ---- list ----

t.test('list, resourceVersionMatch unset, no limit', async (t) => {
  const u = await s.request('GET', base)
  t.equal(u.status, 200, 'unset: 200')
  t.same(state(u.json.items), stateNow, 'unset: most recent')
  t.ok(rvOf(u) >= F.addRv, 'unset: collection version covers the last write')
  const z = await s.request('GET', `${base}?resourceVersion=0`)
  t.equal(z.status, 200, '0: 200 (any)')
  t.ok(names(z).includes('a0'), '0: a state of the collection')
  const n = await s.request('GET', `${base}?resourceVersion=${F.atA}`)
  t.equal(n.status, 200, 'non-zero: 200')
  t.ok(rvOf(n) >= F.atA, `non-zero: not older than ${F.atA} (got ${rvOf(n)})`)
  if (rvOf(n) >= F.addRv) t.same(state(n.json.items), stateNow, 'non-zero: the state at the collection version')
  expectTooLarge(t, await s.request('GET', `${base}?resourceVersion=${F.addRv + 100000}`), 'non-zero too new')
  const bad = await s.request('GET', `${base}?resourceVersion=x1`)
  t.equal(bad.status, 400, 'non-numeric: 400')
})

t.test('list, resourceVersionMatch unset, limit=n, no continue', async (t) => {
  const u = await allPages(`${base}?limit=2`)
  t.ok(u.every((p) => p.status === 200), 'unset: 200')
  t.same(state(u.flatMap((p) => p.json.items)), stateNow, 'unset: most recent')
  const z = await s.request('GET', `${base}?limit=2&resourceVersion=0`)
  t.equal(z.status, 200, '0: 200 (any)')
  t.same(state(z.json.items), stateNow, '0: limit ignored, the whole list (upstream serves it from the watch cache)')
  t.equal(z.json.metadata.continue, undefined, '0: no continue')
  const e = await allPages(`${base}?limit=2&resourceVersion=${F.atA}`)
  t.ok(e.every((p) => p.status === 200), `non-zero: 200 (${e.map((p) => p.status)})`)
  t.ok(e.every((p) => rvOf(p) === F.atA), `non-zero: exact — every page has collection version ${F.atA} (${e.map(rvOf)})`)
  t.same(state(e.flatMap((p) => p.json.items)), stateAtA, 'non-zero: the collection as it was at that version (a2 present, a1 old, no a3)')
  const a1 = e.flatMap((p) => p.json.items).find((i: Obj) => i.metadata.name === 'a1')
  t.equal(a1?.metadata?.resourceVersion, F.a1Old, 'a1 with its resourceVersion at that version')
  expectTooLarge(t, await s.request('GET', `${base}?limit=2&resourceVersion=${F.addRv + 100000}`), 'exact too new')
})

t.test('list, resourceVersionMatch unset, continue', async (t) => {
  const first = await s.request('GET', `${base}?limit=1`)
  const cont = first.json.metadata.continue
  t.ok(cont, 'a token')
  const u = await s.request('GET', `${base}?limit=1&continue=${q(cont)}`)
  t.equal(u.status, 200, 'unset: continue')
  t.equal(rvOf(u), rvOf(first), 'unset: exact from the token')
  t.same(names(u), ['a1'])
  const z = await s.request('GET', `${base}?limit=1&continue=${q(cont)}&resourceVersion=0`)
  t.equal(z.status, 200, '0: treated as continue')
  t.equal(rvOf(z), rvOf(first))
  t.same(names(z), ['a1'])
  const n = await s.request('GET', `${base}?limit=1&continue=${q(cont)}&resourceVersion=${rvOf(first)}`)
  t.equal(n.status, 400, 'non-zero: 400')
  t.equal(n.json?.reason, 'BadRequest')
  // The exact version of a token outlives later writes.
  await setK('a0', 'after-token')
  const later = await allPages(`${base}?limit=1&continue=${q(cont)}`)
  t.ok(later.every((p) => rvOf(p) === rvOf(first)), 'later pages keep the token version')
  await setK('a0', 'v')
})

t.test('list, resourceVersionMatch=Exact', async (t) => {
  expectInvalid(t, await s.request('GET', `${base}?resourceVersionMatch=Exact`), 'Exact, unset, no limit')
  expectInvalid(t, await s.request('GET', `${base}?resourceVersionMatch=Exact&resourceVersion=0`), 'Exact, 0, no limit')
  expectInvalid(t, await s.request('GET', `${base}?resourceVersionMatch=Exact&limit=2`), 'Exact, unset, limit')
  expectInvalid(t, await s.request('GET', `${base}?resourceVersionMatch=Exact&resourceVersion=0&limit=2`), 'Exact, 0, limit')
  const e = await s.request('GET', `${base}?resourceVersionMatch=Exact&resourceVersion=${F.atA}`)
  t.equal(e.status, 200, 'Exact, non-zero, no limit: 200')
  t.equal(rvOf(e), F.atA, 'collection version equals the requested one')
  t.same(state(e.json.items), stateAtA, 'the collection at that version')
  const mid = await s.request('GET', `${base}?resourceVersionMatch=Exact&resourceVersion=${F.modRv}`)
  t.same(state(mid.json.items), { a0: 'v', a1: 'new', a2: 'v' }, `at ${F.modRv}: a1 changed, a2 not yet deleted`)
  const ep = await allPages(`${base}?resourceVersionMatch=Exact&resourceVersion=${F.atA}&limit=1`)
  t.ok(ep.every((p) => p.status === 200), `Exact, non-zero, limit: 200 (${ep.map((p) => p.status)})`)
  t.equal(ep.length, 3, 'three pages of one')
  t.ok(ep.every((p) => rvOf(p) === F.atA), 'every page at the requested version')
  t.same(state(ep.flatMap((p) => p.json.items)), stateAtA, 'paged exact read of the old state')
  expectTooLarge(t, await s.request('GET', `${base}?resourceVersionMatch=Exact&resourceVersion=${F.addRv + 100000}`), 'Exact too new')

  const all = await s.request('GET', `/api/v1/configmaps?resourceVersionMatch=Exact&resourceVersion=${F.atA}`)
  t.equal(all.status, 200, 'Exact across all namespaces')
  t.equal(rvOf(all), F.atA)
  t.same(state(all.json.items.filter((i: Obj) => i.metadata.namespace === NS)), stateAtA, 'all namespaces: this namespace as it was')

  // Selectors apply to the objects as they were at that version.
  const r = await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'rv-sel' } })
  t.equal(r.status, 201)
  const b = '/api/v1/namespaces/rv-sel/configmaps'
  for (const [name, color] of [['x', 'red'], ['y', 'blue'], ['z', 'red']]) {
    t.equal((await s.request('POST', b, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { color } } })).status, 201)
  }
  const at = rvOf(await s.request('GET', `${b}?limit=1`))
  for (const name of ['x', 'y']) {
    const g = await s.request('GET', `${b}/${name}`)
    g.json.metadata.labels.color = g.json.metadata.labels.color === 'red' ? 'blue' : 'red'
    t.equal((await s.request('PUT', `${b}/${name}`, g.json)).status, 200)
  }
  const now = await s.request('GET', `${b}?labelSelector=color%3Dred`)
  t.same(names(now), ['y', 'z'], 'now: y and z are red')
  const then = await s.request('GET', `${b}?labelSelector=color%3Dred&resourceVersionMatch=Exact&resourceVersion=${at}`)
  t.equal(then.status, 200)
  t.same(names(then), ['x', 'z'], `at ${at}: x and z were red`)
  t.same(then.json.items.map((i: Obj) => i.metadata.labels.color), ['red', 'red'], 'with their labels of then')
})

t.test('list, resourceVersionMatch=NotOlderThan', async (t) => {
  expectInvalid(t, await s.request('GET', `${base}?resourceVersionMatch=NotOlderThan`), 'NotOlderThan, unset, no limit')
  expectInvalid(t, await s.request('GET', `${base}?resourceVersionMatch=NotOlderThan&limit=2`), 'NotOlderThan, unset, limit')
  const z = await s.request('GET', `${base}?resourceVersionMatch=NotOlderThan&resourceVersion=0`)
  t.equal(z.status, 200, 'NotOlderThan, 0, no limit: any')
  const zl = await s.request('GET', `${base}?resourceVersionMatch=NotOlderThan&resourceVersion=0&limit=2`)
  t.equal(zl.status, 200, 'NotOlderThan, 0, limit: any')
  const n = await s.request('GET', `${base}?resourceVersionMatch=NotOlderThan&resourceVersion=${F.atA}`)
  t.equal(n.status, 200, 'NotOlderThan, non-zero, no limit: 200')
  t.ok(rvOf(n) >= F.atA, `not older (${rvOf(n)} >= ${F.atA})`)
  if (rvOf(n) >= F.addRv) t.same(state(n.json.items), stateNow, 'the state at its collection version')
  const np = await allPages(`${base}?resourceVersionMatch=NotOlderThan&resourceVersion=${F.atA}&limit=2`)
  t.ok(np.every((p) => p.status === 200), `NotOlderThan, non-zero, limit: 200 (${np.map((p) => p.status)})`)
  t.ok(rvOf(np[0]) >= F.atA, 'not older')
  t.ok(np.every((p) => rvOf(p) === rvOf(np[0])), 'later pages keep the first page\'s version')
  expectTooLarge(t, await s.request('GET', `${base}?resourceVersionMatch=NotOlderThan&resourceVersion=${F.addRv + 100000}`), 'NotOlderThan too new')
})

t.test('list: other invalid combinations', async (t) => {
  expectInvalid(t, await s.request('GET', `${base}?resourceVersionMatch=Bogus&resourceVersion=1`), 'an unknown resourceVersionMatch')
  const first = await s.request('GET', `${base}?limit=1`)
  expectInvalid(t, await s.request('GET', `${base}?limit=1&continue=${q(first.json.metadata.continue)}&resourceVersionMatch=NotOlderThan&resourceVersion=0`), 'resourceVersionMatch with continue')
  const ex = await s.request('GET', `${base}?resourceVersionMatch=Exact`)
  t.equal(ex.json?.reason, 'Invalid', 'reason Invalid')
  t.match(ex.json?.message ?? '', /resourceVersionMatch/, 'names resourceVersionMatch')
})

t.test('list: NotOlderThan a version not yet reached waits for it', async (t) => {
  const cur = rvOf(await setK('a0', 'before-list-wait'))
  const t0 = Date.now()
  const pending = s.request('GET', `${base}?resourceVersionMatch=NotOlderThan&resourceVersion=${cur + 1}`)
  const pendingLegacy = s.request('GET', `${base}?resourceVersion=${cur + 1}`)
  await sleep(400)
  const c = await createCm('late')
  const [r, rl] = await Promise.all([pending, pendingLegacy])
  const took = Date.now() - t0
  t.equal(rvOf(c), cur + 1, 'the create took the awaited version (no other writer)')
  t.equal(r.status, 200, `answered once the version exists (got ${r.status} ${r.json?.message ?? ''})`)
  t.equal(rl.status, 200, 'the legacy form (no match, no limit) too')
  t.ok(took >= 350, `it waited (${took} ms)`)
  t.ok(rvOf(r) >= cur + 1, 'collection version not older than requested')
  t.ok(names(r).includes('late'), 'and the list includes the awaited write')
  t.ok(names(rl).includes('late'))
  await s.request('DELETE', `${base}/late`)
  await setK('a0', 'v')
})

// ---- after a restart the server keeps no history from before: older versions are gone ----

t.test('after a restart: Exact reads and continue tokens of older versions are 410; NotOlderThan still works', async (t) => {
  const first = await s.request('GET', `${base}?limit=1`)
  const oldCont = first.json.metadata.continue
  const before = rvOf(first)
  // A write after the token: the token's version is then history, which a restart does not keep.
  await setK('a0', 'after-token')
  await setK('a0', 'v')
  await s.stop()
  s = await startServer({ dataDir, keepDataDir: true })

  const e = await s.request('GET', `${base}?resourceVersionMatch=Exact&resourceVersion=${F.atA}`)
  t.equal(e.status, 410, `Exact at a version from before the restart: 410 (got ${e.status})`)
  t.equal(e.json?.reason, 'Expired')
  t.equal(e.json?.message, 'The resourceVersion for the provided list is too old.')
  const legacy = await s.request('GET', `${base}?limit=1&resourceVersion=${F.atA}`)
  t.equal(legacy.status, 410, 'limit + non-zero (legacy exact): 410')

  const c = await s.request('GET', `${base}?limit=1&continue=${q(oldCont)}`)
  t.equal(c.status, 410, `a continue token from before the restart: 410 (got ${c.status})`)
  t.equal(c.json?.reason, 'Expired')
  t.match(c.json?.message ?? '', /^The provided continue parameter is too old to display a consistent list result\./)
  const fresh = c.json?.metadata?.continue
  t.ok(fresh, 'the Status carries a replacement token in metadata.continue')
  if (fresh) {
    const next = await allPages(`${base}?limit=1&continue=${q(fresh)}`)
    t.ok(next.every((p) => p.status === 200), 'the replacement token continues (inconsistent, at the newest state)')
    t.same(next.flatMap((p) => names(p)), ['a1', 'a3'], 'the rest of the list after the old cursor')
  }

  const n = await s.request('GET', `${base}?resourceVersionMatch=NotOlderThan&resourceVersion=${before}`)
  t.equal(n.status, 200, 'NotOlderThan an old version: 200')
  t.ok(rvOf(n) >= before, 'not older')
  t.same(state(n.json.items), stateNow, 'the data survived')
  const g = await s.request('GET', `${base}/a1?resourceVersion=${F.modRv}`)
  t.equal(g.status, 200, 'get not older than an old version: 200')
  const after = await createCm('post-restart')
  t.ok(rvOf(after) > before, 'versions keep growing after the restart')
  const ex = await s.request('GET', `${base}?resourceVersionMatch=Exact&resourceVersion=${rvOf(after)}`)
  t.equal(ex.status, 200, 'an Exact read of a version after the restart works')
  t.ok(names(ex).includes('post-restart'))
})
