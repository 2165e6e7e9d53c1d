// Black-box tests of streamed lists: a list without a limit whose body passes 1 MiB goes out in chunks as it is
// read. The bytes are those of the same list built whole, the list is one snapshot however slowly the client reads,
// and a client that goes away mid-stream leaves the server serving.
import t from 'tap'
import http from 'node:http'
import { crc32, gunzipSync, inflateRawSync } from 'node:zlib'
import { startServer, type TestServer } from '../helpers/server.js'

let s: TestServer
t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

const NS = 'big'
const base = `/api/v1/namespaces/${NS}/configmaps`
/** 300 ConfigMaps of ~100 KB: a ~30 MB list, far more than the socket buffers between the server and the test hold. */
const COUNT = 300
const pad = (i: number): string => String(i).padStart(4, '0')

interface Raw { status: number; headers: http.IncomingHttpHeaders; body: Buffer }

/** A GET read to the end, with the raw body bytes. */
function get(path: string, headers: Record<string, string> = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${s.url}${path}`, { agent: false, headers: { authorization: `Bearer ${s.adminToken}`, ...headers } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('error', reject)
  })
}

async function create(name: string, labels: Record<string, string>, size: number): Promise<void> {
  const r = await s.request('POST', base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data: { v: 'x'.repeat(size) } })
  if (r.status !== 201) throw new Error(`create ${name}: ${r.status} ${r.text}`)
}

t.before(async () => {
  const r = await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })
  if (r.status !== 201) throw new Error(`namespace: ${r.status} ${r.text}`)
  for (let i = 0; i < COUNT; i += 10) {
    await Promise.all(Array.from({ length: 10 }, (_, k) => create(`cm-${pad(i + k)}`, { parity: (i + k) % 2 ? 'odd' : 'even' }, 100_000)))
  }
})

t.test('a large list is streamed, byte for byte the list built whole', async (t) => {
  const streamed = await get(base)
  t.equal(streamed.status, 200)
  t.equal(streamed.headers['transfer-encoding'], 'chunked', 'streamed in chunks')
  t.equal(streamed.headers['content-type'], 'application/json')
  // A limit above the count: built whole (the head would carry a continue token), the same snapshot when nothing changed.
  const whole = await get(`${base}?limit=100000`)
  t.equal(whole.status, 200)
  t.ok(whole.headers['content-length'], 'built whole, with a length')
  t.ok(streamed.body.equals(whole.body), `identical bytes (${streamed.body.length} vs ${whole.body.length})`)
  const list = JSON.parse(streamed.body.toString())
  t.equal(list.kind, 'ConfigMapList')
  t.equal(list.items.length, COUNT)
  t.same(list.items.map((o: any) => o.metadata.name), Array.from({ length: COUNT }, (_, i) => `cm-${pad(i)}`))
})

t.test('a streamed list asked for with gzip is compressed, and decodes to the same bytes', async (t) => {
  const plain = await get(base)
  const gz = await get(base, { 'accept-encoding': 'gzip' })
  t.equal(gz.status, 200)
  t.equal(gz.headers['content-encoding'], 'gzip')
  t.equal(gz.headers['transfer-encoding'], 'chunked')
  t.ok(gz.body.length < plain.body.length / 10, `compressed (${gz.body.length} bytes)`)
  t.ok(gunzipSync(gz.body).equals(plain.body), 'identical bytes once decoded')
  // One gzip member over the whole body, as upstream sends it: a client that reads only the first member of a body
  // (curl --compressed) got a list cut at the first chunk when each chunk was a member of its own.
  let inner = Buffer.alloc(0)
  try { inner = inflateRawSync(gz.body.subarray(10, gz.body.length - 8)) } catch { /* not one deflate stream */ }
  t.ok(inner.equals(plain.body), `one deflate stream holds the whole body (${inner.length} of ${plain.body.length} bytes)`)
  t.equal(gz.body.readUInt32LE(gz.body.length - 8), crc32(plain.body) >>> 0, 'its CRC-32 is that of the whole body')
  t.equal(gz.body.readUInt32LE(gz.body.length - 4), plain.body.length >>> 0, 'its size is that of the whole body')
})

t.test('a streamed list with a label selector holds what the selector matches', async (t) => {
  const streamed = await get(`${base}?labelSelector=parity%3Dodd`)
  t.equal(streamed.headers['transfer-encoding'], 'chunked')
  const whole = await get(`${base}?labelSelector=parity%3Dodd&limit=100000`)
  t.ok(streamed.body.equals(whole.body), 'identical bytes')
  const list = JSON.parse(streamed.body.toString())
  t.equal(list.items.length, COUNT / 2)
  t.ok(list.items.every((o: any) => o.metadata.labels.parity === 'odd'))
})

t.test('a slow reader sees one snapshot: writes made while it reads are not in its list', async (t) => {
  const started = Date.now()
  const body = await new Promise<Buffer>((resolve, reject) => {
    const req = http.get(`${s.url}${base}`, { agent: false, headers: { authorization: `Bearer ${s.adminToken}` } }, (res) => {
      const chunks: Buffer[] = []
      let paused = false
      res.on('data', (c: Buffer) => {
        chunks.push(c)
        if (paused) return
        paused = true
        res.pause()
        // While the server waits for the socket: delete the last object, create one after it, update one near the end.
        void (async () => {
          const d = await s.request('DELETE', `${base}/cm-${pad(COUNT - 1)}`)
          if (d.status !== 200) throw new Error(`delete: ${d.status} ${d.text}`)
          await create('cm-9999', { parity: 'new' }, 10)
          const g = await s.request('GET', `${base}/cm-${pad(COUNT - 2)}`)
          g.json.data = { v: 'changed' }
          const u = await s.request('PUT', `${base}/cm-${pad(COUNT - 2)}`, g.json)
          if (u.status !== 200) throw new Error(`update: ${u.status} ${u.text}`)
          res.resume()
        })().catch(reject)
      })
      res.on('end', () => resolve(Buffer.concat(chunks)))
      res.on('error', reject)
    })
    req.on('error', reject)
  })
  const list = JSON.parse(body.toString())
  const names = list.items.map((o: any) => o.metadata.name)
  t.equal(names.length, COUNT, 'the deleted object is there, the created one is not')
  t.equal(names[COUNT - 1], `cm-${pad(COUNT - 1)}`)
  t.notOk(names.includes('cm-9999'))
  t.equal(list.items[COUNT - 2].data.v.length, 100_000, 'the object as it was at the list version')
  const after = await get(`${base}?limit=1`)
  t.ok(Number(JSON.parse(after.body.toString()).metadata.resourceVersion) > Number(list.metadata.resourceVersion), 'the writes came after the list version')
  t.ok(Date.now() - started < 120_000)
  // put things back for the other tests
  await s.request('DELETE', `${base}/cm-9999`)
  await create(`cm-${pad(COUNT - 1)}`, { parity: (COUNT - 1) % 2 ? 'odd' : 'even' }, 100_000)
})

t.test('a client that goes away mid-stream leaves the server serving', async (t) => {
  for (let i = 0; i < 5; i++) {
    await new Promise<void>((resolve, reject) => {
      const req = http.get(`${s.url}${base}`, { agent: false, headers: { authorization: `Bearer ${s.adminToken}` } }, (res) => {
        res.once('data', () => { req.destroy(); resolve() })
        res.on('error', () => undefined)
      })
      req.on('error', (err) => { if (!req.destroyed) reject(err) })
    })
  }
  // Writes still commit (a read transaction left open would not stop them, but a wedged front-end would).
  await create('after-abort', { parity: 'x' }, 10)
  const full = await get(base)
  t.equal(full.status, 200)
  t.equal(JSON.parse(full.body.toString()).items.length, COUNT + 1)
  const ready = await s.request('GET', '/readyz')
  t.equal(ready.status, 200)
  t.notOk(s.logs.some((l) => l.includes('"level":50') || l.includes('"level":60')), 'no error logged')
  await s.request('DELETE', `${base}/after-abort`)
})

t.test('other media types of a large list hold every item, in the bytes of the path that collects them first', async (t) => {
  const table = await get(base, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' })
  t.equal(table.status, 200)
  t.equal(JSON.parse(table.body.toString()).rows.length, COUNT)
  const pretty = await get(`${base}?pretty=true`)
  t.equal(JSON.parse(pretty.body.toString()).items.length, COUNT)
  const proto = await get(base, { accept: 'application/vnd.kubernetes.protobuf' })
  t.equal(proto.status, 200)
  t.equal(proto.headers['content-type'], 'application/vnd.kubernetes.protobuf')
  t.ok(proto.body.length > (COUNT - 1) * 100_000, `protobuf body of ${proto.body.length} bytes`)
  t.equal(proto.headers['transfer-encoding'], 'chunked', 'a large encoded body goes out in chunks')
  // A limit above the count takes the path that collects the items first: the same bytes.
  const whole = await get(`${base}?limit=100000`, { accept: 'application/vnd.kubernetes.protobuf' })
  t.ok(proto.body.equals(whole.body), 'identical bytes')
  const tableWhole = await get(`${base}?limit=100000`, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' })
  t.same(JSON.parse(table.body.toString()).rows.map((r: any) => r.cells[0]), JSON.parse(tableWhole.body.toString()).rows.map((r: any) => r.cells[0]))
})
