// A quiet binary watch (protobuf or CBOR) that takes bookmarks gets its response headers at once, with one BOOKMARK at
// the version it resumes from: client-go's Watch() returns only when the headers are complete, and uWS completes them
// only with the first body bytes. A JSON watch starts with white space instead. A binary one without bookmarks has no
// frame it could send: when the client takes JSON too (client-go always offers it), it is answered in JSON; asked for
// protobuf alone, it still waits for its first event.
import t from 'tap'
import http from 'node:http'
import { decode } from 'cbor-x'
import { startServer, type TestServer } from '../helpers/server.js'

let s: TestServer
t.before(async () => { s = await startServer({ args: ['--feature-gates', 'CBORServingAndStorage=true'] }) })
t.teardown(async () => { await s?.stop() })

const PROTOBUF = 'application/vnd.kubernetes.protobuf'

interface Opened { status: number; contentType: string; chunks: Buffer[]; req: http.ClientRequest; first: Promise<Buffer> }

/** Resolves when the answer's headers arrived, or null after ms. */
function open(path: string, accept: string, ms: number): Promise<Opened | null> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => { req.destroy(); resolve(null) }, ms)
    const req = http.get(s.url + path, { agent: false, headers: { accept, authorization: `Bearer ${s.adminToken}` } }, (res) => {
      clearTimeout(timer)
      const chunks: Buffer[] = []
      const first = new Promise<Buffer>((r) => res.once('data', (c: Buffer) => r(c)))
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('error', () => { /* closed by the test */ })
      resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type']), chunks, req, first })
    })
    req.on('error', () => { clearTimeout(timer); resolve(null) })
  })
}

async function quietVersion(ns: string): Promise<string> {
  t.equal((await s.request('POST', '/api/v1/namespaces', { metadata: { name: ns } })).status, 201)
  const r = await s.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'a' } })
  t.equal(r.status, 201)
  return r.json.metadata.resourceVersion
}

t.test('protobuf watch with bookmarks, nothing changing: headers at once and a BOOKMARK at the resume version', async (t) => {
  const rv = await quietVersion('pbw')
  const w = await open(`/api/v1/namespaces/pbw/configmaps?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=60`, PROTOBUF, 5000)
  t.ok(w, 'the headers arrive before any change')
  if (!w) return
  t.equal(w.status, 200)
  t.equal(w.contentType, `${PROTOBUF};stream=watch`)
  const frame = await w.first
  const len = frame.readUInt32BE(0)
  t.ok(len > 0 && frame.length >= 4 + len, 'one whole length-prefixed frame')
  const body = frame.subarray(4, 4 + len)
  t.ok(body.includes('BOOKMARK'), 'the frame is a BOOKMARK event')
  // ObjectMeta.resourceVersion is field 6 (length-delimited: tag 0x32), then its length and text.
  t.ok(body.includes(Buffer.concat([Buffer.from([0x32, rv.length]), Buffer.from(rv)])), `at resourceVersion ${rv}`)
  // A change afterwards still arrives as ever.
  const got = new Promise<void>((r) => { const i = setInterval(() => { if (Buffer.concat(w.chunks).includes('ADDED')) { clearInterval(i); r() } }, 20) })
  t.equal((await s.request('POST', '/api/v1/namespaces/pbw/configmaps', { metadata: { name: 'b' } })).status, 201)
  await got
  t.pass('the ADDED event follows')
  w.req.destroy()
})

t.test('CBOR watch with bookmarks, nothing changing: headers at once and a BOOKMARK item at the resume version', async (t) => {
  const rv = await quietVersion('cbw')
  const w = await open(`/api/v1/namespaces/cbw/configmaps?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=60`, 'application/cbor', 5000)
  t.ok(w, 'the headers arrive before any change')
  if (!w) return
  t.equal(w.status, 200)
  const ev = decode(await w.first) as { type: string; object: { kind: string; metadata: { resourceVersion: string } } }
  t.equal(ev.type, 'BOOKMARK')
  t.equal(ev.object.kind, 'ConfigMap')
  t.equal(ev.object.metadata.resourceVersion, rv)
  w.req.destroy()
})

t.test('JSON watch without bookmarks: headers at once (white space), no BOOKMARK', async (t) => {
  const rv = await quietVersion('jsw')
  const w = await open(`/api/v1/namespaces/jsw/configmaps?watch=1&resourceVersion=${rv}&timeoutSeconds=60`, 'application/json', 5000)
  t.ok(w, 'the headers arrive before any change')
  if (!w) return
  await new Promise((r) => setTimeout(r, 300))
  t.notMatch(Buffer.concat(w.chunks).toString(), /BOOKMARK/)
  w.req.destroy()
})

t.test('protobuf-or-JSON watch without bookmarks (client-go typed Watch, e.g. kubectl logs deploy/x): JSON, headers at once', async (t) => {
  const rv = await quietVersion('pjw')
  const w = await open(`/api/v1/namespaces/pjw/configmaps?watch=true&resourceVersion=${rv}`, `${PROTOBUF},application/json`, 5000)
  t.ok(w, 'the headers arrive before any change')
  if (!w) return
  t.equal(w.status, 200)
  t.equal(w.contentType, 'application/json')
  const got = new Promise<void>((r) => { const i = setInterval(() => { if (Buffer.concat(w.chunks).includes('"ADDED"')) { clearInterval(i); r() } }, 20) })
  t.equal((await s.request('POST', '/api/v1/namespaces/pjw/configmaps', { metadata: { name: 'b' } })).status, 201)
  await got
  const lines = Buffer.concat(w.chunks).toString().trim().split('\n')
  t.same(lines.map((l) => JSON.parse(l).type), ['ADDED'], 'the change arrives as a JSON event, and nothing before it')
  t.equal(JSON.parse(lines[0]).object.metadata.name, 'b')
  w.req.destroy()
})

t.test('protobuf-only watch without bookmarks keeps protobuf (no unasked BOOKMARK): its headers wait for the first event', async (t) => {
  const rv = await quietVersion('pow')
  const quiet = await open(`/api/v1/namespaces/pow/configmaps?watch=true&resourceVersion=${rv}`, PROTOBUF, 700)
  t.equal(quiet, null, 'no complete headers while nothing changes')
  const w = open(`/api/v1/namespaces/pow/configmaps?watch=true&resourceVersion=${rv}`, PROTOBUF, 5000)
  await new Promise((r) => setTimeout(r, 200))
  t.equal((await s.request('POST', '/api/v1/namespaces/pow/configmaps', { metadata: { name: 'b' } })).status, 201)
  const opened = await w
  t.ok(opened, 'the first event completes the headers')
  if (!opened) return
  t.equal(opened.contentType, `${PROTOBUF};stream=watch`)
  t.ok((await opened.first).includes('ADDED'))
  opened.req.destroy()
})
