// Black-box list tests through the real server: paging with limit/continue over one consistent snapshot,
// remainingItemCount, malformed and misused tokens, and label/field selectors for list and deletecollection.
import t from 'tap'
import { startServer, type TestServer, type Reply } from '../helpers/server.js'

type Obj = Record<string, any>

let s: TestServer
t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

const cmBase = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`
const q = (v: string) => encodeURIComponent(v)

async function ns(name: string): Promise<void> {
  const r = await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } })
  if (r.status !== 201 && r.status !== 409) throw new Error(`namespace ${name}: ${r.status} ${r.text}`)
}

async function createCm(ns: string, name: string, labels?: Record<string, string>, data: Record<string, string> = { k: 'v' }): Promise<Reply> {
  const r = await s.request('POST', cmBase(ns), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...(labels ? { labels } : {}) }, data })
  if (r.status !== 201) throw new Error(`create ${ns}/${name}: ${r.status} ${r.text}`)
  return r
}

async function mutate(path: string, fn: (o: Obj) => void): Promise<Reply> {
  const g = await s.request('GET', path)
  if (g.status !== 200) throw new Error(`get ${path}: ${g.status} ${g.text}`)
  fn(g.json)
  const r = await s.request('PUT', path, g.json)
  if (r.status !== 200) throw new Error(`put ${path}: ${r.status} ${r.text}`)
  return r
}

const names = (r: Reply): string[] => (r.json?.items ?? []).map((i: Obj) => i.metadata.name)
const pad = (i: number) => String(i).padStart(2, '0')

interface Page { status: number; rv: string; cont: string | undefined; remaining: number | undefined; items: Obj[]; reply: Reply }
async function page(path: string): Promise<Page> {
  const r = await s.request('GET', path)
  return { status: r.status, rv: r.json?.metadata?.resourceVersion, cont: r.json?.metadata?.continue || undefined, remaining: r.json?.metadata?.remainingItemCount, items: r.json?.items ?? [], reply: r }
}

/** Every page of a list; throws on a non-200. */
async function pages(path: string): Promise<Page[]> {
  const out: Page[] = []
  let cont: string | undefined
  for (let i = 0; i < 1000; i++) {
    const p = await page(path + (cont ? `&continue=${q(cont)}` : ''))
    if (p.status !== 200) throw new Error(`page ${i}: ${p.status} ${p.reply.text}`)
    out.push(p)
    cont = p.cont
    if (!cont) return out
  }
  throw new Error('too many pages')
}

t.before(async () => {
  await ns('pg')
  for (let i = 0; i < 25; i++) await createCm('pg', `pg-${pad(i)}`, { parity: i % 2 ? 'odd' : 'even', n: String(i) })
})

t.test('limit/continue: pages, one collection resourceVersion, remainingItemCount, last page', async (t) => {
  const ps = await pages(`${cmBase('pg')}?limit=10`)
  t.same(ps.map((p) => p.items.length), [10, 10, 5], 'pages of 10, 10, 5')
  t.ok(ps[0].cont && ps[1].cont, 'continue on every page but the last')
  t.notOk(ps[2].cont, 'no continue (empty) on the last page')
  t.equal(ps[2].reply.json.metadata.continue ?? '', '', 'continue is empty or absent on the last page')
  t.same(ps.map((p) => p.remaining), [15, 5, undefined], 'remainingItemCount 15, 5, then omitted')
  t.ok(ps.every((p) => p.rv === ps[0].rv), `every page has the collection resourceVersion of the first (${ps.map((p) => p.rv).join(',')})`)
  const all = ps.flatMap((p) => p.items.map((i) => i.metadata.name))
  t.same(all, Array.from({ length: 25 }, (_, i) => `pg-${pad(i)}`), 'all items once, in key order')
  t.equal(ps[0].reply.json.kind, 'ConfigMapList')
  t.ok(Array.isArray(ps[2].reply.json.items))

  const one = await pages(`${cmBase('pg')}?limit=1`)
  t.equal(one.length, 25, 'limit=1: 25 pages')
  t.same(one.map((p) => p.remaining), [...Array.from({ length: 24 }, (_, i) => 24 - i), undefined], 'remainingItemCount counts down 24..1')
  t.ok(one.every((p) => p.rv === one[0].rv), 'one resourceVersion')

  const full = await page(`${cmBase('pg')}?limit=25`)
  t.equal(full.items.length, 25)
  t.notOk(full.cont, 'limit equal to the size: no continue')
  t.equal(full.remaining, undefined, 'and no remainingItemCount')
  const nolimit = await page(`${cmBase('pg')}`)
  t.equal(nolimit.items.length, 25, 'no limit: everything')
  t.notOk(nolimit.cont)
})

t.test('one consistent snapshot across pages while objects are created, changed and deleted', async (t) => {
  await ns('snap')
  const created: Reply[] = []
  for (let i = 0; i < 10; i++) created.push(await createCm('snap', `s-${pad(i)}`, undefined, { k: `v${i}` }))
  const p1 = await page(`${cmBase('snap')}?limit=4`)
  t.same(p1.items.map((i) => i.metadata.name), ['s-00', 's-01', 's-02', 's-03'])
  t.equal(p1.remaining, 6)
  const listRv = Number(p1.rv)

  // Between pages: create (before and after the cursor), change, delete.
  await createCm('snap', 's-05a')
  await createCm('snap', 's-99')
  await createCm('snap', 's-98')
  await createCm('snap', 's-00a')
  const changed = await mutate(`${cmBase('snap')}/s-06`, (o) => { o.data.k = 'changed' })
  const del = await s.request('DELETE', `${cmBase('snap')}/s-08`)
  t.equal(del.status, 200)
  await mutate(`${cmBase('snap')}/s-02`, (o) => { o.data.k = 'changed-behind-cursor' })

  const p2 = await page(`${cmBase('snap')}?limit=4&continue=${q(p1.cont!)}`)
  t.equal(p2.status, 200)
  t.equal(p2.rv, p1.rv, 'page 2 has the first page\'s resourceVersion')
  t.same(p2.items.map((i) => i.metadata.name), ['s-04', 's-05', 's-06', 's-07'], 'page 2: the snapshot (no s-05a)')
  const s06 = p2.items.find((i) => i.metadata.name === 's-06')
  t.equal(s06?.data?.k, 'v6', 's-06 shows its content at the snapshot, not the change')
  t.equal(s06?.metadata?.resourceVersion, created[6].json.metadata.resourceVersion, 's-06 carries its resourceVersion at the snapshot')
  t.not(s06?.metadata?.resourceVersion, changed.json.metadata.resourceVersion)
  t.equal(p2.remaining, 2, `remainingItemCount counts the snapshot (s-08, s-09), not objects created or deleted since (got ${p2.remaining})`)

  const p3 = await page(`${cmBase('snap')}?limit=4&continue=${q(p2.cont!)}`)
  t.equal(p3.status, 200)
  t.equal(p3.rv, p1.rv, 'page 3 has the first page\'s resourceVersion')
  t.same(p3.items.map((i) => i.metadata.name), ['s-08', 's-09'], 'page 3: s-08 (deleted after the snapshot) is still listed, s-98 and s-99 (created after) are not')
  t.notOk(p3.cont, 'last page')
  for (const it of [...p1.items, ...p2.items, ...p3.items]) t.ok(Number(it.metadata.resourceVersion) <= listRv, `${it.metadata.name}: item resourceVersion <= the list's`)

  const fresh = await page(`${cmBase('snap')}`)
  t.same(fresh.items.map((i) => i.metadata.name), ['s-00', 's-00a', 's-01', 's-02', 's-03', 's-04', 's-05', 's-05a', 's-06', 's-07', 's-09', 's-98', 's-99'], 'a new list without a token shows the changes')
  t.ok(Number(fresh.rv) > listRv)
})

t.test('paging across all namespaces, and with a selector', async (t) => {
  await ns('pg2')
  for (let i = 0; i < 5; i++) await createCm('pg2', `pg-${pad(i)}`, { parity: i % 2 ? 'odd' : 'even' })
  const whole = await page('/api/v1/configmaps')
  const ps = await pages('/api/v1/configmaps?limit=7')
  t.ok(ps.length > 1)
  t.ok(ps.every((p) => p.rv === ps[0].rv), 'one resourceVersion')
  const key = (i: Obj) => `${i.metadata.namespace}/${i.metadata.name}`
  t.same(ps.flatMap((p) => p.items.map(key)), whole.items.map(key), 'the paged all-namespaces list equals the unpaged one')
  t.ok(ps.slice(0, -1).every((p) => typeof p.remaining === 'number'), 'remainingItemCount without a selector')

  const sel = await pages(`/api/v1/configmaps?limit=4&labelSelector=${q('parity=even')}`)
  const selNames = sel.flatMap((p) => p.items.map(key))
  const expected = whole.items.filter((i: Obj) => i.metadata.labels?.parity === 'even').map(key)
  t.same(selNames, expected, 'paging with a label selector returns exactly the matches')
  t.ok(sel.length > 1, 'more than one page')
  t.same(sel.map((p) => p.remaining).filter((x) => x !== undefined), [], 'remainingItemCount omitted with a label selector')
  const fsel = await pages(`${cmBase('pg')}?limit=3&fieldSelector=${q('metadata.name!=pg-00')}`)
  t.equal(fsel.flatMap((p) => p.items).length, 24)
  t.same(fsel.map((p) => p.remaining).filter((x) => x !== undefined), [], 'remainingItemCount omitted with a field selector')
  t.ok(fsel[0].cont, 'but continue is there')
})

t.test('bad and misused continue tokens', async (t) => {
  const p1 = await page(`${cmBase('pg')}?limit=5`)
  for (const [what, tok] of [
    ['garbage', 'not-a-token!!'],
    ['base64 of non-JSON', Buffer.from('hello').toString('base64url')],
    ['base64 JSON of the wrong shape', Buffer.from(JSON.stringify({ a: 1 })).toString('base64url')],
    ['truncated', p1.cont!.slice(0, 10)],
  ] as const) {
    const r = await s.request('GET', `${cmBase('pg')}?limit=5&continue=${q(tok)}`)
    t.equal(r.status, 400, `${what}: 400`)
    t.equal(r.json?.reason, 'BadRequest', `${what}: BadRequest`)
    t.match(r.json?.message, /^invalid continue token/, `${what}: "invalid continue token: …"`)
  }
  const other = await s.request('GET', `${cmBase('snap')}?limit=5&continue=${q(p1.cont!)}`)
  t.equal(other.status, 400, 'a token of another namespace: 400')
  const otherType = await s.request('GET', `/api/v1/namespaces/pg/secrets?limit=5&continue=${q(p1.cont!)}`)
  t.equal(otherType.status, 400, 'a token of another type: 400')

  const withRv = await s.request('GET', `${cmBase('pg')}?limit=5&continue=${q(p1.cont!)}&resourceVersion=${p1.rv}`)
  t.equal(withRv.status, 400, 'continue with a non-zero resourceVersion: 400')
  t.equal(withRv.json?.message, 'specifying resource version is not allowed when using continue')
  const withZero = await s.request('GET', `${cmBase('pg')}?limit=5&continue=${q(p1.cont!)}&resourceVersion=0`)
  t.equal(withZero.status, 200, 'continue with resourceVersion=0: treated as a plain continue')
  t.same(names(withZero), ['pg-05', 'pg-06', 'pg-07', 'pg-08', 'pg-09'])
  t.equal(withZero.json?.metadata?.resourceVersion, p1.rv)
  const withMatch = await s.request('GET', `${cmBase('pg')}?limit=5&continue=${q(p1.cont!)}&resourceVersion=${p1.rv}&resourceVersionMatch=Exact`)
  t.ok(withMatch.status === 400 || withMatch.status === 422, `continue with resourceVersionMatch: 400/422 (got ${withMatch.status})`)
  const bad = await s.request('GET', `${cmBase('pg')}?limit=abc`)
  t.equal(bad.status, 400, 'a non-numeric limit: 400')
})

t.test('label selectors: the full syntax on list', async (t) => {
  await ns('lsel')
  const mk = (name: string, labels: Record<string, string>) => createCm('lsel', name, labels)
  await mk('a', { env: 'prod', tier: 'fe', n: '3' })
  await mk('b', { env: 'dev', tier: 'be', n: '7' })
  await mk('c', { env: 'prod', tier: 'be', n: '10' })
  await mk('d', { tier: 'fe', 'example.com/owner': 'x' })
  await mk('e', { env: '' })
  const cases: Array<[string, string[]]> = [
    ['env=prod', ['a', 'c']],
    ['env==prod', ['a', 'c']],
    ['env!=prod', ['b', 'd', 'e']],
    ['env in (prod,dev)', ['a', 'b', 'c']],
    ['env notin (prod)', ['b', 'd', 'e']],
    ['env', ['a', 'b', 'c', 'e']],
    ['!env', ['d']],
    ['env=', ['e']],
    ['env==', ['e']],
    ['env=prod,tier=be', ['c']],
    ['env in (prod), tier notin (fe)', ['c']],
    [' env = prod , tier = fe ', ['a']],
    ['example.com/owner=x', ['d']],
    ['n>5', ['b', 'c']],
    ['n<5', ['a']],
    ['env=prod,!n', []],
    ['', ['a', 'b', 'c', 'd', 'e']],
  ]
  for (const [sel, want] of cases) {
    const r = await s.request('GET', `${cmBase('lsel')}?labelSelector=${q(sel)}`)
    t.equal(r.status, 200, `"${sel}": 200 (${r.status === 200 ? '' : r.json?.message})`)
    t.same(names(r).sort(), want, `"${sel}" selects ${JSON.stringify(want)}`)
  }
  for (const sel of ['env in (prod', 'env notin prod', '=prod', 'env=a b', 'a,', `env=${'x'.repeat(64)}`, `${'k'.repeat(64)}=v`, 'env=-bad-']) {
    const r = await s.request('GET', `${cmBase('lsel')}?labelSelector=${q(sel)}`)
    t.equal(r.status, 400, `"${sel}": 400 (got ${r.status})`)
    t.equal(r.json?.reason, 'BadRequest')
  }
  const msg = (await s.request('GET', `${cmBase('lsel')}?labelSelector=${q('env in (prod')}`)).json?.message ?? ''
  t.notMatch(msg, /unable to parse requirement: unable to parse requirement/, `the message names the problem once (${msg})`)
})

t.test('field selectors: metadata fields, pods, secrets, nodes; unsupported is 400', async (t) => {
  await ns('fsel')
  await ns('fsel2')
  await createCm('fsel', 'x')
  await createCm('fsel', 'y')
  await createCm('fsel2', 'x')
  let r = await s.request('GET', `/api/v1/configmaps?fieldSelector=${q('metadata.name=x')}`)
  t.same(r.json.items.map((i: Obj) => `${i.metadata.namespace}/${i.metadata.name}`).filter((k: string) => k.startsWith('fsel')).sort(), ['fsel/x', 'fsel2/x'], 'metadata.name')
  r = await s.request('GET', `/api/v1/configmaps?fieldSelector=${q('metadata.namespace=fsel')}`)
  t.same(names(r).sort(), ['x', 'y'], 'metadata.namespace')
  r = await s.request('GET', `/api/v1/configmaps?fieldSelector=${q('metadata.namespace=fsel,metadata.name!=x')}`)
  t.same(names(r), ['y'], 'comma-ANDed with !=')
  r = await s.request('GET', `${cmBase('fsel')}?fieldSelector=${q('metadata.name==y')}`)
  t.same(names(r), ['y'], '==')

  const pods = '/api/v1/namespaces/fsel/pods'
  const pod = (name: string, node: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName: node, containers: [{ name: 'c', image: 'registry.example/app:1' }] } })
  t.equal((await s.request('POST', pods, pod('p1', 'n1'))).status, 201)
  t.equal((await s.request('POST', pods, pod('p2', 'n2'))).status, 201)
  await mutate(`${pods}/p2/status`, (o) => { o.status.phase = 'Running' })
  r = await s.request('GET', `${pods}?fieldSelector=${q('spec.nodeName=n1')}`)
  t.same(names(r), ['p1'], 'pods spec.nodeName')
  r = await s.request('GET', `${pods}?fieldSelector=${q('status.phase=Running')}`)
  t.same(names(r), ['p2'], 'pods status.phase')
  r = await s.request('GET', `${pods}?fieldSelector=${q('status.phase!=Running,spec.nodeName=n1')}`)
  t.same(names(r), ['p1'])
  r = await s.request('GET', `${pods}?fieldSelector=${q('spec.foo=1')}`)
  t.equal(r.status, 400, 'pods: unsupported field 400')
  t.equal(r.json?.message, 'field label not supported: spec.foo')

  const secrets = '/api/v1/namespaces/fsel/secrets'
  t.equal((await s.request('POST', secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's-op' }, type: 'Opaque' })).status, 201)
  t.equal((await s.request('POST', secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's-cu' }, type: 'example.com/custom' })).status, 201)
  r = await s.request('GET', `${secrets}?fieldSelector=${q('type=example.com/custom')}`)
  t.same(names(r), ['s-cu'], 'secrets type')

  t.equal((await s.request('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'fs-n1' }, spec: { unschedulable: true } })).status, 201)
  t.equal((await s.request('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'fs-n2' }, spec: {} })).status, 201)
  r = await s.request('GET', `/api/v1/nodes?fieldSelector=${q('spec.unschedulable=true')}`)
  t.same(names(r), ['fs-n1'], 'nodes spec.unschedulable=true')
  r = await s.request('GET', `/api/v1/nodes?fieldSelector=${q('spec.unschedulable=false')}`)
  t.same(names(r), ['fs-n2'], 'nodes spec.unschedulable=false')

  r = await s.request('GET', `${cmBase('fsel')}?fieldSelector=${q('spec.x=1')}`)
  t.equal(r.status, 400, 'configmaps: unsupported field 400')
  t.equal(r.json?.message, '"spec.x" is not a known field selector: only "metadata.name", "metadata.namespace"')
  r = await s.request('GET', `${cmBase('fsel')}?fieldSelector=${q('metadata.name')}`)
  t.equal(r.status, 400, 'unparseable field selector 400')
  t.match(r.json?.message ?? '', /^invalid selector: 'metadata\.name'; can't understand 'metadata\.name'$/, `unparseable: "invalid selector: …" (${r.json?.message})`)
  r = await s.request('GET', `${cmBase('fsel')}?fieldSelector=${q('metadata.name in (x)')}`)
  t.equal(r.status, 400, 'no set operators in field selectors')
})

t.test('deletecollection honours label and field selectors; an unsupported one deletes nothing', async (t) => {
  await ns('dc')
  for (let i = 0; i < 6; i++) await createCm('dc', `d-${i}`, { grp: i < 3 ? 'a' : 'b', n: String(i) })
  let r = await s.request('DELETE', `${cmBase('dc')}?fieldSelector=${q('spec.x=1')}`)
  t.equal(r.status, 400, 'unsupported field selector: 400')
  r = await s.request('DELETE', `${cmBase('dc')}?labelSelector=${q('grp in (a')}`)
  t.equal(r.status, 400, 'bad label selector: 400')
  t.equal(names(await s.request('GET', cmBase('dc'))).length, 6, 'nothing deleted by the rejected requests')

  r = await s.request('DELETE', `${cmBase('dc')}?labelSelector=${q('grp=a,n!=1')}`)
  t.equal(r.status, 200)
  t.same(names(r).sort(), ['d-0', 'd-2'], 'the answer lists the deleted objects')
  t.same(names(await s.request('GET', cmBase('dc'))), ['d-1', 'd-3', 'd-4', 'd-5'], 'only matching objects deleted')
  r = await s.request('DELETE', `${cmBase('dc')}?fieldSelector=${q('metadata.name=d-4')}`)
  t.equal(r.status, 200)
  t.same(names(await s.request('GET', cmBase('dc'))), ['d-1', 'd-3', 'd-5'], 'field selector deletecollection')
  r = await s.request('DELETE', `/api/v1/namespaces/fsel/pods?fieldSelector=${q('spec.nodeName=n2')}&gracePeriodSeconds=0`)
  t.equal(r.status, 200)
  const left = names(await s.request('GET', '/api/v1/namespaces/fsel/pods'))
  t.same(left, ['p1'], 'spec.nodeName deletecollection: the pod on n2 is gone, the one on n1 kept')
  r = await s.request('DELETE', `${cmBase('dc')}?labelSelector=${q('n>4')}`)
  t.equal(r.status, 200, `gt in a deletecollection selector (got ${r.status})`)
  t.same(names(await s.request('GET', cmBase('dc'))), ['d-1', 'd-3'], 'n>4 deletes d-5')
})

t.test('timeoutSeconds on a list', async (t) => {
  const r = await s.request('GET', `${cmBase('pg')}?timeoutSeconds=1&limit=3`)
  t.equal(r.status, 200)
  t.equal(names(r).length, 3)
})
