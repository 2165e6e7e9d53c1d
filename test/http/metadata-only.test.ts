// Black-box: the metadata-only forms (PartialObjectMetadata, PartialObjectMetadataList) that client-go's metadata
// client and controller-runtime ask for, on get, list (with paging) and watch.
import t from 'tap'
import http from 'node:http'
import { startServer, type TestServer } from '../helpers/server.js'

let s: TestServer
const CM = '/api/v1/namespaces/default/configmaps'
const ONE = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1'
const LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1'

t.before(async () => {
  s = await startServer()
  for (const n of ['m1', 'm2', 'm3']) {
    const r = await s.request('POST', CM, { metadata: { name: n, labels: { app: 'm' } }, data: { secret: 'value' } })
    if (r.status !== 201) throw new Error(r.text)
  }
})
t.teardown(async () => { await s?.stop() })

t.test('get and list answer metadata only, with paging', async (t) => {
  const one = await s.request('GET', `${CM}/m1`, undefined, { accept: ONE })
  t.equal(one.status, 200, one.text)
  t.equal(one.json.kind, 'PartialObjectMetadata')
  t.equal(one.json.apiVersion, 'meta.k8s.io/v1')
  t.equal(one.json.metadata.name, 'm1')
  t.same(one.json.metadata.labels, { app: 'm' })
  t.same(Object.keys(one.json).sort(), ['apiVersion', 'kind', 'metadata'], 'no data')
  const page = await s.request('GET', `${CM}?limit=2`, undefined, { accept: LIST })
  t.equal(page.json.kind, 'PartialObjectMetadataList')
  t.equal(page.json.items.length, 2)
  t.ok(page.json.items.every((i: any) => i.kind === 'PartialObjectMetadata' && i.data === undefined), 'items are metadata only')
  t.ok(page.json.metadata.continue, 'a continue token')
  const rest = await s.request('GET', `${CM}?limit=2&continue=${encodeURIComponent(page.json.metadata.continue)}`, undefined, { accept: LIST })
  t.same(rest.json.items.map((i: any) => i.metadata.name), ['m3'])
  const ours = await s.request('GET', CM, undefined, { accept: 'application/json;as=PartialObjectMetadataList;g=meta.orch.io;v=v1' })
  t.equal(ours.json.apiVersion, 'meta.orch.io/v1', 'the group asked for')
  t.equal((await s.request('GET', CM, undefined, { accept: ONE })).status, 406, 'a list asked as a single object, no fallback')
  const fallback = await s.request('GET', CM, undefined, { accept: `${ONE}, application/json` })
  t.equal(fallback.json.kind, 'ConfigMapList', 'with a fallback: the plain list')
})

t.test('a watch sends PartialObjectMetadata events and bookmarks', async (t) => {
  const rv = (await s.request('GET', CM)).json.metadata.resourceVersion
  const lines: any[] = []
  const req = http.get(`${s.url}${CM}?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=3`, { headers: { accept: ONE, authorization: `Bearer ${s.adminToken}` } }, (res) => {
    let buf = ''
    res.on('data', (c) => { buf += c; let i; while ((i = buf.indexOf('\n')) >= 0) { const l = buf.slice(0, i).trim(); buf = buf.slice(i + 1); if (l) lines.push(JSON.parse(l)) } })
  })
  await new Promise((r) => setTimeout(r, 200))
  await s.request('PATCH', `${CM}/m2`, { data: { secret: 'other' } }, { 'content-type': 'application/merge-patch+json' })
  await s.request('DELETE', `${CM}/m3`)
  await new Promise((r) => req.on('close', r))
  const events = lines.filter((e) => e.type !== 'BOOKMARK')
  t.same(events.map((e) => `${e.type}:${e.object.metadata.name}`), ['MODIFIED:m2', 'DELETED:m3'])
  t.ok(lines.every((e) => e.object.kind === 'PartialObjectMetadata' && e.object.data === undefined), 'every object is metadata only')
  t.ok(lines.some((e) => e.type === 'BOOKMARK'), 'the bookmark before the end, as PartialObjectMetadata')
})
