// Black-box tests of the CBOR media type (gate CBORServingAndStorage) through the real server: answers in
// self-described CBOR (get, list, create, update, apply, Status errors, discovery), CBOR request bodies and their
// 400s (nothing stored), byte fields as tag 22, negotiation with q-values, a CBOR watch (application/cbor-seq:
// ADDED, MODIFIED, DELETED, BOOKMARK, ERROR), and with the gate off (the default): 406 and 415.
// Responses are decoded with cbor-x, an implementation independent of the server's strict reader.
import t from 'tap'
import http from 'node:http'
import { request } from 'undici'
import { encode, decode, DecoderStream, Tag } from 'cbor-x'
import { startServer, type TestServer } from '../helpers/server.js'

type Obj = Record<string, any>

let on: TestServer
let off: TestServer
// A short watch history so that a resume point falls out of the ring (the ERROR event test).
const HISTORY_S = 2

t.before(async () => {
  ;[on, off] = await Promise.all([
    startServer({ args: ['--feature-gates', 'CBORServingAndStorage=true', '--watch-history', `${HISTORY_S}s`] }),
    startServer(),
  ])
})
t.teardown(async () => { await Promise.all([on?.stop(), off?.stop()]) })

const CBOR = 'application/cbor'
const SELF_DESCRIBED = 'd9d9f7'

interface Raw { status: number; contentType: string; body: Buffer; value: any }

/** A request whose body and answer are bytes; the answer is decoded by its Content-Type (CBOR or JSON). */
async function raw(s: TestServer, method: string, path: string, body?: Buffer | string | Obj, headers: Record<string, string> = {}): Promise<Raw> {
  const h: Record<string, string> = { authorization: `Bearer ${s.adminToken}`, ...headers }
  let payload: Buffer | string | undefined
  if (body !== undefined) {
    payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body)
    h['content-type'] ??= 'application/json'
  }
  const r = await request(s.url + path, { method: method as 'GET', headers: h, body: payload })
  const buf = Buffer.from(await r.body.arrayBuffer())
  const contentType = String(r.headers['content-type'] ?? '')
  let value: any
  if (contentType.startsWith(CBOR)) value = buf.length > 0 ? decode(buf) : undefined
  else { try { value = JSON.parse(buf.toString()) } catch { value = undefined } }
  return { status: r.statusCode, contentType, body: buf, value }
}

const cbor = (s: TestServer, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  raw(s, method, path, body === undefined ? undefined : encode(body), { accept: CBOR, ...(body === undefined ? {} : { 'content-type': CBOR }), ...headers })

/** A decoded CBOR value as the JSON tree it stands for: tag 22 (expected base64) becomes base64 text. */
function asJson(v: any): any {
  if (v instanceof Tag) {
    if (v.tag === 22 && v.value instanceof Uint8Array) return Buffer.from(v.value).toString('base64')
    throw new Error(`unexpected tag ${v.tag}`)
  }
  if (v instanceof Uint8Array) throw new Error('unexpected untagged byte string')
  if (Array.isArray(v)) return v.map(asJson)
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, asJson(x)]))
  return v
}

/** Every map key in the encoded bytes is a text string (major type 3): checked by walking the item. */
function keysAreText(b: Buffer): boolean {
  let p = 0
  const arg = (ai: number): number => {
    if (ai < 24) return ai
    const n = ai === 24 ? 1 : ai === 25 ? 2 : ai === 26 ? 4 : 8
    let v = 0
    for (let i = 0; i < n; i++) v = v * 256 + b[p++]
    return v
  }
  let ok = true
  const item = (): void => {
    const ib = b[p++]
    const major = ib >> 5
    const ai = ib & 31
    if (major === 7) { p += ai === 25 ? 2 : ai === 26 ? 4 : ai === 27 ? 8 : 0; return }
    const n = arg(ai)
    if (major === 2 || major === 3) { p += n; return }
    if (major === 4) { for (let i = 0; i < n; i++) item(); return }
    if (major === 5) {
      for (let i = 0; i < n; i++) { if (b[p] >> 5 !== 3) ok = false; item(); item() }
      return
    }
    if (major === 6) item()
  }
  item()
  return ok && p === b.length
}

function isCborStatus(t: Tap, r: Raw, code: number, reason: string): void {
  t.equal(r.status, code, `HTTP ${code}`)
  t.equal(r.contentType, CBOR, 'Content-Type: application/cbor')
  t.equal(r.body.subarray(0, 3).toString('hex'), SELF_DESCRIBED, 'self-described CBOR')
  t.equal(r.value?.kind, 'Status')
  t.equal(r.value?.apiVersion, 'v1')
  t.equal(r.value?.status, 'Failure')
  t.equal(r.value?.code, code)
  t.equal(r.value?.reason, reason)
}
type Tap = import('tap').Test

async function ns(s: TestServer, name: string): Promise<void> {
  const r = await raw(s, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } })
  if (r.status !== 201 && r.status !== 409) throw new Error(`namespace ${name}: ${r.status} ${r.body.toString()}`)
}

const cms = (n: string) => `/api/v1/namespaces/${n}/configmaps`

// ---------------------------------------------------------------------------------------------------------------

t.test('get: application/cbor, self-described, text keys, the same value tree as the JSON answer', async (t) => {
  const c = await cbor(on, 'GET', '/api/v1/namespaces/default')
  t.equal(c.status, 200)
  t.equal(c.contentType, CBOR)
  t.equal(c.body.subarray(0, 3).toString('hex'), SELF_DESCRIBED, 'starts with tag 55799 (d9 d9 f7)')
  t.ok(keysAreText(c.body.subarray(3)), 'one data item; every map key is a text string')
  const j = await raw(on, 'GET', '/api/v1/namespaces/default')
  t.same(asJson(c.value), j.value, 'same object as in JSON')
})

t.test('create, update, list round trips with CBOR bodies and answers', async (t) => {
  await ns(on, 'cbor-rt')
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', labels: { x: '1' } }, data: { k: 'v', big: 'z'.repeat(300) } }
  const c = await cbor(on, 'POST', cms('cbor-rt'), cm)
  t.equal(c.status, 201, 'created')
  t.equal(c.contentType, CBOR)
  t.equal(c.value.metadata.name, 'a')
  t.same(c.value.data, cm.data)
  t.equal(c.value.metadata.labels.x, '1')
  const j = await raw(on, 'GET', `${cms('cbor-rt')}/a`)
  t.same(j.value, asJson(c.value), 'the stored object reads back in JSON as the CBOR answer said')

  const upd = { ...c.value, data: { k: 'v2' } }
  const u = await cbor(on, 'PUT', `${cms('cbor-rt')}/a`, upd)
  t.equal(u.status, 200, 'updated')
  t.same(u.value.data, { k: 'v2' })
  t.ok(Number(u.value.metadata.resourceVersion) > Number(c.value.metadata.resourceVersion))

  const stale = await cbor(on, 'PUT', `${cms('cbor-rt')}/a`, upd)
  isCborStatus(t, stale, 409, 'Conflict')

  await cbor(on, 'POST', cms('cbor-rt'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b' }, data: { n: '2' } })
  const l = await cbor(on, 'GET', cms('cbor-rt'))
  t.equal(l.status, 200)
  t.equal(l.contentType, CBOR)
  t.equal(l.body.subarray(0, 3).toString('hex'), SELF_DESCRIBED)
  t.ok(keysAreText(l.body.subarray(3)), 'list: one data item, text keys')
  t.equal(l.value.kind, 'ConfigMapList')
  t.equal(l.value.apiVersion, 'v1')
  t.same(l.value.items.map((i: Obj) => i.metadata.name), ['a', 'b'])
  const jl = await raw(on, 'GET', cms('cbor-rt'))
  t.same(asJson(l.value), jl.value, 'the list is the JSON list')

  const page = await cbor(on, 'GET', `${cms('cbor-rt')}?limit=1`)
  t.equal(page.value.items.length, 1)
  t.type(page.value.metadata.continue, 'string', 'list metadata (continue) carried')
  t.equal(page.value.metadata.remainingItemCount, 1)

  const d = await cbor(on, 'DELETE', `${cms('cbor-rt')}/b`)
  t.equal(d.status, 200)
  t.equal(d.value.kind, 'Status')
  t.equal(d.value.status, 'Success')
})

t.test('integers (small, beyond 32 bits) and booleans keep their CBOR types', async (t) => {
  await ns(on, 'cbor-num')
  const pod = {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' },
    // An int64 without an upper bound (activeDeadlineSeconds, which this test used before, must fit in 32 bits).
    spec: { terminationGracePeriodSeconds: 0, automountServiceAccountToken: false, containers: [{ name: 'c', image: 'i', livenessProbe: { exec: { command: ['true'] }, terminationGracePeriodSeconds: 4294967301 } }] },
  }
  const c = await cbor(on, 'POST', '/api/v1/namespaces/cbor-num/pods', pod)
  t.equal(c.status, 201, JSON.stringify(c.value, (_k, v) => (typeof v === 'bigint' ? String(v) : v)))
  t.equal(c.value.spec.terminationGracePeriodSeconds, 0)
  t.equal(c.value.spec.automountServiceAccountToken, false)
  const big = c.value.spec.containers[0].livenessProbe.terminationGracePeriodSeconds
  t.equal(typeof big === 'bigint' ? Number(big) : big, 4294967301, 'an integer beyond 32 bits')
  const hex = c.body.toString('hex')
  t.ok(hex.includes('1b0000000100000005'), 'written as a 64-bit CBOR integer, not a float')
})

t.test('Secret data: written as tag 22 (expected base64) byte strings; read from tag 22, text or byte strings', async (t) => {
  await ns(on, 'cbor-sec')
  const base = '/api/v1/namespaces/cbor-sec/secrets'
  const c = await cbor(on, 'POST', base, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { a: new Tag(Buffer.from([0, 1, 2, 255]), 22), b: 'aGVsbG8=' } })
  t.equal(c.status, 201, JSON.stringify(asJson(c.value)))
  const j = await raw(on, 'GET', `${base}/s`)
  t.same(j.value.data, { a: 'AAEC/w==', b: 'aGVsbG8=' }, 'stored as base64 text (the JSON form)')
  const g = await cbor(on, 'GET', `${base}/s`)
  t.ok(g.value.data.a instanceof Tag && g.value.data.a.tag === 22, 'answered as tag 22')
  t.same([...g.value.data.a.value], [0, 1, 2, 255], 'around the raw bytes')
  t.same(Buffer.from(g.value.data.b.value).toString(), 'hello')
  t.same(asJson(g.value), j.value, 'the same tree as JSON once tag 22 is turned into base64')
  t.equal(typeof g.value.metadata.name, 'string', 'other strings stay text strings')

  // Keys and strings as byte strings (what upstream's encoder writes) are read as their UTF-8 text.
  const bytesKeys = Buffer.from('a4' + '4a' + Buffer.from('apiVersion').toString('hex') + '42' + Buffer.from('v1').toString('hex') +
    '44' + Buffer.from('kind').toString('hex') + '46' + Buffer.from('Secret').toString('hex') +
    '48' + Buffer.from('metadata').toString('hex') + 'a1' + '44' + Buffer.from('name').toString('hex') + '42' + Buffer.from('s2').toString('hex') +
    '44' + Buffer.from('data').toString('hex') + 'a1' + '41' + Buffer.from('x').toString('hex') + '48' + Buffer.from('aGVsbG8=').toString('hex'), 'hex')
  const c2 = await raw(on, 'POST', base, bytesKeys, { 'content-type': CBOR })
  t.equal(c2.status, 201, c2.body.toString())
  t.same(c2.value.data, { x: 'aGVsbG8=' })
})

t.test('server-side apply with application/apply-patch+cbor: creates, then patches; managedFields as for YAML', async (t) => {
  await ns(on, 'cbor-apply')
  const path = `${cms('cbor-apply')}/ap?fieldManager=cbor-tool`
  const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ap' }, data: { a: '1' } }
  const c = await raw(on, 'PATCH', path, encode(body), { 'content-type': 'application/apply-patch+cbor', accept: CBOR })
  t.equal(c.status, 201, `created by apply (${JSON.stringify(c.value)})`)
  t.same(c.value.data, { a: '1' })
  t.equal(c.value.metadata.managedFields?.[0]?.manager, 'cbor-tool')
  t.equal(c.value.metadata.managedFields?.[0]?.operation, 'Apply')
  const p = await raw(on, 'PATCH', path, encode({ ...body, data: { a: '1', b: '2' } }), { 'content-type': 'application/apply-patch+cbor', accept: CBOR })
  t.equal(p.status, 200)
  t.same(p.value.data, { a: '1', b: '2' })
  // A conflicting apply by another manager: 409 Status in CBOR.
  const other = await raw(on, 'PATCH', `${cms('cbor-apply')}/ap?fieldManager=other`, encode({ ...body, data: { a: 'x' } }), { 'content-type': 'application/apply-patch+cbor', accept: CBOR })
  isCborStatus(t, other, 409, 'Conflict')
  // The same apply in JSON via YAML gives the same object.
  const y = await raw(on, 'PATCH', path, JSON.stringify({ ...body, data: { a: '1', b: '2' } }), { 'content-type': 'application/apply-patch+yaml' })
  t.equal(y.status, 200)
  t.same(y.value.data, { a: '1', b: '2' })
  const bad = await raw(on, 'PATCH', path, Buffer.from('83010203', 'hex'), { 'content-type': 'application/apply-patch+cbor', accept: CBOR })
  isCborStatus(t, bad, 400, 'BadRequest')
  t.match(bad.value.message, /apply patch must be a CBOR map/)
})

t.test('Status errors answered in CBOR: 404, 409 AlreadyExists, 422 Invalid, 405', async (t) => {
  await ns(on, 'cbor-err')
  const nf = await cbor(on, 'GET', `${cms('cbor-err')}/nope`)
  isCborStatus(t, nf, 404, 'NotFound')
  t.equal(nf.value.message, 'configmaps "nope" not found')
  t.same(nf.value.details, { name: 'nope', kind: 'configmaps' })
  await cbor(on, 'POST', cms('cbor-err'), { metadata: { name: 'dup' } })
  const ae = await cbor(on, 'POST', cms('cbor-err'), { metadata: { name: 'dup' } })
  isCborStatus(t, ae, 409, 'AlreadyExists')
  const inv = await cbor(on, 'POST', cms('cbor-err'), { metadata: { name: 'Bad_Name' } })
  isCborStatus(t, inv, 422, 'Invalid')
  t.equal(inv.value.details.causes[0].field, 'metadata.name')
  const j = await raw(on, 'POST', cms('cbor-err'), { metadata: { name: 'Bad_Name' } })
  t.same(asJson(inv.value), j.value, 'the same Status as in JSON')
})

t.test('malformed CBOR bodies: 400 BadRequest with a clear message, nothing stored', async (t) => {
  await ns(on, 'cbor-bad')
  const cases: Array<[string, string, RegExp]> = [
    ['truncated', 'a1646b696e64', /could not be decoded as CBOR: unexpected end of data at byte 6/],
    ['not CBOR at all (JSON text)', Buffer.from('{"a":1}').toString('hex'), /could not be decoded as CBOR|must be a CBOR map/],
    ['duplicate map keys', 'a2' + '686d65746164617461' + 'a0' + '686d65746164617461' + 'a0', /duplicate map key "metadata"/],
    ['duplicate keys, text and byte string spelling', 'a2' + '6161' + '01' + '4161' + '02', /duplicate map key "a"/],
    ['integer map key', 'a1' + '01' + '02', /map keys must be text strings, found an unsigned integer/],
    ['array map key', 'a1' + '80' + '02', /map keys must be text strings, found an array/],
    ['top level array', '83010203', /must be a CBOR map \(an object\), found an array/],
    ['top level text', SELF_DESCRIBED + '6161', /must be a CBOR map \(an object\), found a text string/],
    ['trailing data', 'a0' + 'a0', /unexpected data after the data item/],
    ['invalid UTF-8 text', 'a1' + '6161' + '62c328', /invalid UTF-8/],
    ['NaN', 'a1' + '6161' + 'f97e00', /NaN has no JSON equivalent/],
    ['infinity', 'a1' + '6161' + 'fa7f800000', /infinite float/],
    ['undefined', 'a1' + '6161' + 'f7', /undefined has no JSON equivalent/],
    ['unsupported tag', 'a1' + '6161' + 'c249010000000000000000', /unsupported tag 2/],
    ['reserved additional information', 'a1' + '6161' + '1c', /reserved additional information 28/],
    ['stray break', 'a1' + '6161' + 'ff', /unexpected break/],
    ['empty body', '', /could not be decoded as CBOR: empty body/],
    ['too deep', 'a1' + '6161' + '81'.repeat(70) + '00', /nesting deeper than 64/],
    ['huge declared length', 'a1' + '6161' + '9b00000000ffffffff', /beyond the end of data/],
  ]
  for (const [name, hex, msg] of cases) {
    const r = await raw(on, 'POST', cms('cbor-bad'), Buffer.from(hex, 'hex'), { 'content-type': CBOR, accept: CBOR })
    isCborStatus(t, r, 400, 'BadRequest')
    t.match(r.value?.message, msg, `${name}: ${r.value?.message}`)
  }
  // PUT too.
  await cbor(on, 'POST', cms('cbor-bad'), { metadata: { name: 'keep' }, data: { a: '1' } })
  const before = await raw(on, 'GET', `${cms('cbor-bad')}/keep`)
  const put = await raw(on, 'PUT', `${cms('cbor-bad')}/keep`, Buffer.from('a2616101616102', 'hex'), { 'content-type': CBOR })
  t.equal(put.status, 400)
  t.match(put.value.message, /duplicate map key "a"/)
  const l = await raw(on, 'GET', cms('cbor-bad'))
  t.same(l.value.items.map((i: Obj) => i.metadata.name), ['keep'], 'nothing else was stored')
  t.equal(l.value.items[0].metadata.resourceVersion, before.value.metadata.resourceVersion, 'and nothing changed')
  // Well-formed variants other encoders produce are accepted: indefinite lengths (maps, chunked text), a self-described body.
  const indef = Buffer.from(SELF_DESCRIBED + 'bf' + '686d65746164617461' + 'bf' + '646e616d65' + '7f' + '6169' + '616e' + 'ff' + 'ff' + '6464617461' + 'a1' + '6161' + '6131' + 'ff', 'hex')
  const ok = await raw(on, 'POST', cms('cbor-bad'), indef, { 'content-type': CBOR })
  t.equal(ok.status, 201, ok.body.toString())
  t.equal(ok.value.metadata.name, 'in')
})

t.test('negotiation: q-values and fallbacks; 406 and 415 list application/cbor', async (t) => {
  const p = '/api/v1/namespaces/default'
  t.equal((await raw(on, 'GET', p, undefined, { accept: 'application/cbor;q=0.5, application/json' })).contentType, 'application/json', 'JSON preferred by q')
  t.equal((await raw(on, 'GET', p, undefined, { accept: 'application/json;q=0.5, application/cbor' })).contentType, CBOR, 'CBOR preferred by q')
  t.equal((await raw(on, 'GET', p, undefined, { accept: 'application/xml, application/cbor;q=0.1' })).contentType, CBOR, 'CBOR as the fallback')
  t.equal((await raw(on, 'GET', p, undefined, { accept: 'application/vnd.kubernetes.protobuf, application/cbor' })).contentType, 'application/vnd.kubernetes.protobuf', 'order decides at equal q')
  const na = await raw(on, 'GET', p, undefined, { accept: 'application/xml' })
  t.equal(na.status, 406)
  t.equal(na.value.message, 'only the following media types are accepted: application/json, application/yaml, application/vnd.orch.protobuf, application/vnd.kubernetes.protobuf, application/cbor')
  const um = await raw(on, 'POST', cms('default'), '<x/>', { 'content-type': 'application/xml', accept: CBOR })
  isCborStatus(t, um, 415, 'UnsupportedMediaType')
  t.equal(um.value.message, 'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.orch.protobuf, application/vnd.kubernetes.protobuf, application/cbor')
  const pt = await raw(on, 'PATCH', `${cms('default')}/x`, '{}', { 'content-type': 'application/xml' })
  t.equal(pt.status, 415)
  t.match(pt.value.message, /application\/apply-patch\+cbor/)
  // A JSON body with a CBOR answer, and a CBOR body with a JSON answer.
  const mix = await raw(on, 'POST', cms('default'), { metadata: { name: 'mix' } }, { accept: CBOR })
  t.equal(mix.contentType, CBOR)
  t.equal(mix.value.metadata.name, 'mix')
  const mix2 = await raw(on, 'POST', cms('default'), encode({ metadata: { name: 'mix2' } }), { 'content-type': CBOR })
  t.equal(mix2.contentType, 'application/json')
  t.equal(mix2.value.metadata.name, 'mix2')
})

t.test('discovery documents in CBOR when preferred; /version and OpenAPI stay JSON', async (t) => {
  for (const p of ['/api', '/apis', '/api/v1', '/apis/rbac.authorization.orch.io', '/apis/apps/v1']) {
    const c = await cbor(on, 'GET', p)
    t.equal(c.status, 200, p)
    t.equal(c.contentType, CBOR, `${p} in CBOR`)
    const j = await raw(on, 'GET', p)
    t.equal(j.contentType, 'application/json')
    t.same(asJson(c.value), j.value, `${p}: same document`)
  }
  const v = await cbor(on, 'GET', '/version')
  t.equal(v.contentType, 'application/json')
})

t.test('upstream alias paths answer in CBOR with the alias apiVersion', async (t) => {
  const c = await cbor(on, 'GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/admin')
  t.equal(c.status, 200)
  t.equal(c.value.apiVersion, 'rbac.authorization.k8s.io/v1')
  const l = await cbor(on, 'GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles?limit=2')
  t.equal(l.value.apiVersion, 'rbac.authorization.k8s.io/v1')
  t.equal(l.value.items[0].apiVersion, 'rbac.authorization.k8s.io/v1')
})

// ---------------------------------------------------------------------------------------------------------------
// CBOR watch: a CBOR sequence of {type, object} items.

interface WatchEvent { type: string; object: Obj }

class CborWatch {
  status = 0
  contentType = ''
  events: WatchEvent[] = []
  raw: Buffer[] = []
  ended = false
  errors: string[] = []
  req!: http.ClientRequest
  #wake: Array<() => void> = []
  notify(): void { const w = this.#wake; this.#wake = []; for (const f of w) f() }
  async until(pred: () => boolean, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms
    while (!pred()) {
      if (this.ended) return pred()
      const left = deadline - Date.now()
      if (left <= 0) return false
      await new Promise<void>((r) => { const tm = setTimeout(r, left); this.#wake.push(() => { clearTimeout(tm); r() }) })
    }
    return true
  }
  close(): void { this.req.destroy(); this.ended = true; this.notify() }
  summary(): string[] { return this.events.map((e) => `${e.type}:${e.object?.metadata?.name ?? ''}`) }
}

const openWatches: CborWatch[] = []
t.teardown(() => { for (const w of openWatches) if (!w.ended) w.close() })

/** Opens a CBOR watch; resolves once the answer's headers arrived (with the first frame) or after ms. */
function watch(path: string, ms = 5000): Promise<CborWatch> {
  const w = new CborWatch()
  openWatches.push(w)
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(w), ms)
    w.req = http.get(on.url + path, { agent: false, headers: { accept: CBOR, authorization: `Bearer ${on.adminToken}` } }, (res) => {
      w.status = res.statusCode ?? 0
      w.contentType = String(res.headers['content-type'] ?? '')
      const dec = new DecoderStream({ mapsAsObjects: true, useRecords: false })
      dec.on('data', (ev: any) => { w.events.push(ev); w.notify() })
      dec.on('error', (e: Error) => { w.errors.push(e.message); w.notify() })
      res.on('data', (c: Buffer) => { w.raw.push(c); dec.write(c) })
      res.on('end', () => { dec.end(); w.ended = true; w.notify() })
      res.on('error', () => { w.ended = true; w.notify() })
      clearTimeout(timer)
      resolve(w)
    })
    w.req.on('error', () => { w.ended = true; clearTimeout(timer); resolve(w) })
  })
}

t.test('watch: application/cbor-seq of self-described {type, object} items; initial ADDED, BOOKMARK, ADDED, MODIFIED, DELETED', async (t) => {
  await ns(on, 'cbor-w')
  await cbor(on, 'POST', cms('cbor-w'), { metadata: { name: 'pre' }, data: { a: '0' } })
  const w = await watch(`${cms('cbor-w')}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`)
  t.equal(w.status, 200)
  t.equal(w.contentType, 'application/cbor-seq', 'Content-Type: application/cbor-seq')
  t.ok(await w.until(() => w.events.length >= 2, 5000), `initial event and bookmark (${JSON.stringify(w.summary())})`)
  t.equal(w.events[0].type, 'ADDED')
  t.equal(w.events[0].object.metadata.name, 'pre')
  t.equal(w.events[0].object.kind, 'ConfigMap')
  t.equal(w.events[1].type, 'BOOKMARK')
  t.equal(w.events[1].object.metadata.annotations?.['k8s.io/initial-events-end'], 'true', 'the initial-events-end bookmark')

  const c = await cbor(on, 'POST', cms('cbor-w'), { metadata: { name: 'a' }, data: { a: '1' } })
  const u = await cbor(on, 'PUT', `${cms('cbor-w')}/a`, { ...c.value, data: { a: '2' } })
  t.equal(u.status, 200)
  const d = await cbor(on, 'DELETE', `${cms('cbor-w')}/a`)
  t.equal(d.status, 200)
  t.ok(await w.until(() => w.events.length >= 5, 5000), `three more events (${JSON.stringify(w.summary())})`)
  t.same(w.summary().slice(2), ['ADDED:a', 'MODIFIED:a', 'DELETED:a'])
  t.same(w.events[2].object.data, { a: '1' })
  t.same(w.events[3].object.data, { a: '2' })
  t.equal(w.events[3].object.metadata.resourceVersion, u.value.metadata.resourceVersion)
  t.same(w.errors, [], 'every item decoded')
  // The raw stream is a plain concatenation of self-described items, each beginning with d9 d9 f7.
  const all = Buffer.concat(w.raw)
  t.equal(all.subarray(0, 3).toString('hex'), SELF_DESCRIBED)
  let items = 0
  for (let i = all.indexOf(Buffer.from(SELF_DESCRIBED, 'hex')); i >= 0; i = all.indexOf(Buffer.from(SELF_DESCRIBED, 'hex'), i + 3)) items++
  t.equal(items, 5, 'five tagged items')
  w.close()
})

t.test('watch: two CBOR watchers get the same frames; Secret data as tag 22 in events', async (t) => {
  await ns(on, 'cbor-w2')
  const base = '/api/v1/namespaces/cbor-w2/secrets'
  const q = '?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true'
  const [w1, w2] = await Promise.all([watch(base + q), watch(base + q)])
  await w1.until(() => w1.events.length >= 1, 5000)
  await w2.until(() => w2.events.length >= 1, 5000)
  await cbor(on, 'POST', base, { metadata: { name: 's' }, data: { k: 'AAEC' } })
  t.ok(await w1.until(() => w1.events.length >= 2, 5000))
  t.ok(await w2.until(() => w2.events.length >= 2, 5000))
  const e1 = w1.events[1]
  t.equal(e1.type, 'ADDED')
  t.ok(e1.object.data.k instanceof Tag && e1.object.data.k.tag === 22)
  t.same([...e1.object.data.k.value], [0, 1, 2])
  t.same(asJson(w2.events[1]), asJson(e1))
  w1.close()
  w2.close()
})

t.test('watch: a resume point out of the ring gives one ERROR item (410 Expired), then the stream ends', async (t) => {
  await ns(on, 'cbor-w3')
  const a = await cbor(on, 'POST', cms('cbor-w3'), { metadata: { name: 'a' } })
  await cbor(on, 'POST', cms('cbor-w3'), { metadata: { name: 'b' } })
  await new Promise((r) => setTimeout(r, HISTORY_S * 1000 + 1000))
  const w = await watch(`${cms('cbor-w3')}?watch=1&resourceVersion=${a.value.metadata.resourceVersion}`)
  t.equal(w.status, 200)
  t.ok(await w.until(() => w.ended, 5000), 'the stream ends')
  t.equal(w.events.length, 1, JSON.stringify(w.events))
  t.equal(w.events[0]?.type, 'ERROR')
  t.equal(w.events[0]?.object?.kind, 'Status')
  t.equal(w.events[0]?.object?.code, 410)
  t.equal(w.events[0]?.object?.reason, 'Expired')
})

t.test('watch: a JSON watch on the same server is unchanged', async (t) => {
  await ns(on, 'cbor-w4')
  const r = await new Promise<{ status: number; ct: string; body: string }>((resolve) => {
    const req = http.get(`${on.url}${cms('cbor-w4')}?watch=1&timeoutSeconds=1`, { agent: false, headers: { authorization: `Bearer ${on.adminToken}` } }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => { body += c })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ct: String(res.headers['content-type']), body }))
    })
    req.on('error', () => resolve({ status: 0, ct: '', body: '' }))
  })
  t.equal(r.status, 200)
  t.equal(r.ct, 'application/json')
})

// ---------------------------------------------------------------------------------------------------------------
// Gate off (the default): CBOR is not served.

t.test('gate off: Accept of only CBOR is 406 without cbor in the list; a fallback is served', async (t) => {
  const r = await raw(off, 'GET', '/api/v1/namespaces/default', undefined, { accept: CBOR })
  t.equal(r.status, 406)
  t.equal(r.contentType, 'application/json')
  t.equal(r.value.reason, 'NotAcceptable')
  t.equal(r.value.message, 'only the following media types are accepted: application/json, application/yaml, application/vnd.orch.protobuf, application/vnd.kubernetes.protobuf')
  const l = await raw(off, 'GET', '/api/v1/namespaces', undefined, { accept: CBOR })
  t.equal(l.status, 406, 'list too')
  const f = await raw(off, 'GET', '/api/v1/namespaces/default', undefined, { accept: 'application/cbor, application/json;q=0.9' })
  t.equal(f.status, 200)
  t.equal(f.contentType, 'application/json', 'falls back to JSON')
  const w = await raw(off, 'GET', '/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1', undefined, { accept: CBOR })
  t.equal(w.status, 406, 'a CBOR watch too')
  const d = await raw(off, 'GET', '/api', undefined, { accept: CBOR })
  t.equal(d.contentType, 'application/json', 'discovery stays JSON')
})

t.test('gate off: a CBOR body is 415, apply-patch+cbor is 415; nothing stored', async (t) => {
  await ns(off, 'cbor-off')
  const c = await raw(off, 'POST', cms('cbor-off'), encode({ metadata: { name: 'x' } }), { 'content-type': CBOR })
  t.equal(c.status, 415)
  t.equal(c.value.reason, 'UnsupportedMediaType')
  t.equal(c.value.message, 'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.orch.protobuf, application/vnd.kubernetes.protobuf')
  const a = await raw(off, 'PATCH', `${cms('cbor-off')}/x?fieldManager=m`, encode({ metadata: { name: 'x' } }), { 'content-type': 'application/apply-patch+cbor' })
  t.equal(a.status, 415)
  t.equal(a.value.message, 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml')
  const l = await raw(off, 'GET', cms('cbor-off'))
  t.same(l.value.items, [], 'nothing stored')
})
