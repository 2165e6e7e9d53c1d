// Black-box: resources served in two groups or versions over one storage, as upstream. Events: core v1 and
// events.orch.io/v1 (also through its events.k8s.io alias) are the same objects, converted field by field; field
// selectors of each group apply to its own shape. HorizontalPodAutoscalers: autoscaling/v1 over the v2 objects, with
// upstream's v1 <-> v2 conversion (what v1 cannot express kept in autoscaling.alpha.orch.io/* annotations). Both
// through get, list, watch (initial events, bookmarks, resumed), patch (merge, strategic, JSON, apply), update,
// delete, Tables and protobuf; kubectl get events / get hpa / autoscale.
import t from 'tap'
import http from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type TestServer } from '../helpers/server.js'
import { runKubectl } from '../helpers/kubectl.js'
import { decodeObject, encodeObject } from '../../src/machinery/codecs/protobuf.js'

type Obj = Record<string, any>

let s: TestServer
const home = mkdtempSync(join(tmpdir(), 'orch-shared-storage-home-'))
const NS = 'shared'
const CORE = `/api/v1/namespaces/${NS}/events`
const NEW = `/apis/events.orch.io/v1/namespaces/${NS}/events`
const K8S = `/apis/events.k8s.io/v1/namespaces/${NS}/events`
const V1 = `/apis/autoscaling/v1/namespaces/${NS}/horizontalpodautoscalers`
const V2 = `/apis/autoscaling/v2/namespaces/${NS}/horizontalpodautoscalers`
const MERGE = { 'content-type': 'application/merge-patch+json' }
const TABLE = { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' }
const PB = 'application/vnd.kubernetes.protobuf'

t.before(async () => {
  s = await startServer({ secure: true })
  const r = await s.request('POST', '/api/v1/namespaces', { metadata: { name: NS } })
  if (r.status !== 201) throw new Error(r.text)
})
t.teardown(async () => {
  await s?.stop()
  rmSync(home, { recursive: true, force: true })
})

/** A new-style event as client-go's events/v1 recorder writes it. */
const newEvent = (name: string, extra: Obj = {}): Obj => ({
  apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { name },
  eventTime: '2024-05-01T10:00:00.000000Z', reportingController: 'default-scheduler', reportingInstance: 'default-scheduler-cp-1',
  action: 'Binding', reason: 'Scheduled', type: 'Normal', note: 'Successfully assigned shared/web-0 to worker-1',
  regarding: { kind: 'Pod', namespace: NS, name: 'web-0', uid: 'u-web-0', apiVersion: 'v1' },
  related: { kind: 'Node', name: 'worker-1', apiVersion: 'v1' },
  series: { count: 2, lastObservedTime: '2024-05-01T10:00:05.000000Z' },
  ...extra,
})

/** An old-style event as the legacy recorder writes it. */
const coreEvent = (name: string, extra: Obj = {}): Obj => ({
  apiVersion: 'v1', kind: 'Event', metadata: { name },
  involvedObject: { kind: 'Pod', namespace: NS, name: 'db-0', uid: 'u-db-0', apiVersion: 'v1', fieldPath: 'spec.containers{db}' },
  reason: 'Pulled', message: 'Container image "postgres:16" already present on machine', source: { component: 'kubelet', host: 'worker-2' },
  firstTimestamp: '2024-05-01T09:00:00Z', lastTimestamp: '2024-05-01T09:05:00Z', count: 3, type: 'Warning',
  ...extra,
})

/** The events of a watch on `path` (query included) until it ends. */
function watchEvents(path: string, accept = 'application/json'): Promise<Obj[]> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(`${s.url}${path}`), { headers: { authorization: `Bearer ${s.adminToken}`, accept } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => { text += d })
      res.on('end', () => resolve(text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Obj)))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

/** A protobuf GET, decoded. */
async function getProtobuf(path: string): Promise<{ status: number; contentType: string | null; object: Obj; bytes: Buffer }> {
  const r = await fetch(`${s.url}${path}`, { headers: { authorization: `Bearer ${s.adminToken}`, accept: PB } })
  const b = new Uint8Array(await r.arrayBuffer())
  return { status: r.status, contentType: r.headers.get('content-type'), object: r.status === 200 ? decodeObject(b) : {}, bytes: Buffer.from(b) }
}

t.test('an event created through events.orch.io/v1 is the core v1 event of the same name, field by field', async (t) => {
  const c = await s.request('POST', NEW, newEvent('web-0.a1'))
  t.equal(c.status, 201, c.text)
  t.equal(c.json.apiVersion, 'events.orch.io/v1')
  t.same(c.json.regarding, { kind: 'Pod', namespace: NS, name: 'web-0', uid: 'u-web-0', apiVersion: 'v1' })
  const g = await s.request('GET', `${CORE}/web-0.a1`)
  t.equal(g.status, 200, g.text)
  const o = g.json
  t.equal(o.apiVersion, 'v1')
  t.equal(o.kind, 'Event')
  t.same(o.involvedObject, { kind: 'Pod', namespace: NS, name: 'web-0', uid: 'u-web-0', apiVersion: 'v1' })
  t.same(o.related, { kind: 'Node', name: 'worker-1', apiVersion: 'v1' })
  t.equal(o.message, 'Successfully assigned shared/web-0 to worker-1')
  t.equal(o.reportingComponent, 'default-scheduler')
  t.equal(o.reportingInstance, 'default-scheduler-cp-1')
  t.equal(o.action, 'Binding')
  t.equal(o.reason, 'Scheduled')
  t.equal(o.type, 'Normal')
  t.equal(o.eventTime, '2024-05-01T10:00:00.000000Z')
  t.same(o.series, { count: 2, lastObservedTime: '2024-05-01T10:00:05.000000Z' })
  t.notOk('regarding' in o || 'note' in o || 'reportingController' in o, 'no events.orch.io field names in the core shape')
  t.equal(o.metadata.uid, c.json.metadata.uid)
  t.equal(o.metadata.resourceVersion, c.json.metadata.resourceVersion)
})

t.test('an event created through core v1 reads through events.orch.io/v1 and its events.k8s.io alias', async (t) => {
  const c = await s.request('POST', CORE, coreEvent('db-0.b1'))
  t.equal(c.status, 201, c.text)
  for (const [base, av] of [[NEW, 'events.orch.io/v1'], [K8S, 'events.k8s.io/v1']]) {
    const g = await s.request('GET', `${base}/db-0.b1`)
    t.equal(g.status, 200, g.text)
    const o = g.json
    t.equal(o.apiVersion, av)
    t.same(o.regarding, { kind: 'Pod', namespace: NS, name: 'db-0', uid: 'u-db-0', apiVersion: 'v1', fieldPath: 'spec.containers{db}' })
    t.equal(o.note, 'Container image "postgres:16" already present on machine')
    t.same(o.deprecatedSource, { component: 'kubelet', host: 'worker-2' })
    t.equal(o.deprecatedFirstTimestamp, '2024-05-01T09:00:00Z')
    t.equal(o.deprecatedLastTimestamp, '2024-05-01T09:05:00Z')
    t.equal(o.deprecatedCount, 3)
    t.equal(o.type, 'Warning')
    t.notOk('involvedObject' in o || 'message' in o || 'source' in o || 'count' in o || 'reportingComponent' in o, 'no core field names')
    t.notOk('reportingController' in o, 'an empty reporting controller is left out, as upstream')
  }
  const l = await s.request('GET', NEW)
  t.equal(l.status, 200)
  t.equal(l.json.apiVersion, 'events.orch.io/v1')
  t.equal(l.json.kind, 'EventList')
  const names = l.json.items.map((i: Obj) => i.metadata.name)
  t.ok(names.includes('db-0.b1') && names.includes('web-0.a1'), `both events listed: ${names}`)
  t.ok(l.json.items.every((i: Obj) => i.apiVersion === 'events.orch.io/v1' && i.regarding !== undefined), 'items in the events.orch.io shape')
  const lc = await s.request('GET', CORE)
  t.ok(lc.json.items.every((i: Obj) => i.apiVersion === 'v1' && i.involvedObject !== undefined), 'core items in the core shape')
  t.equal(lc.json.metadata.resourceVersion !== undefined, true)
  const lk = await s.request('GET', K8S)
  t.equal(lk.json.apiVersion, 'events.k8s.io/v1')
  t.ok(lk.json.items.every((i: Obj) => i.apiVersion === 'events.k8s.io/v1'))
  // A page of one, and its continuation.
  const p1 = await s.request('GET', `${NEW}?limit=1`)
  t.equal(p1.json.items.length, 1)
  t.ok(p1.json.metadata.continue)
  const p2 = await s.request('GET', `${NEW}?limit=1&continue=${encodeURIComponent(p1.json.metadata.continue)}`)
  t.equal(p2.status, 200, p2.text)
  t.ok(p2.json.items.length >= 1 && p2.json.items[0].regarding !== undefined)
})

t.test('field selectors apply to each group\'s own shape', async (t) => {
  const sel = async (base: string, fs: string) => {
    const r = await s.request('GET', `${base}?fieldSelector=${encodeURIComponent(fs)}`)
    t.equal(r.status, 200, `${base} ${fs}: ${r.text}`)
    return r.json.items.map((i: Obj) => i.metadata.name).sort()
  }
  t.same(await sel(NEW, 'regarding.name=web-0'), ['web-0.a1'])
  t.same(await sel(NEW, 'regarding.name=db-0'), ['db-0.b1'])
  t.same(await sel(NEW, 'reportingController=default-scheduler'), ['web-0.a1'])
  t.same(await sel(NEW, 'type=Warning,regarding.kind=Pod'), ['db-0.b1'])
  t.same(await sel(K8S, 'regarding.uid=u-db-0'), ['db-0.b1'])
  t.same(await sel(CORE, 'involvedObject.name=web-0'), ['web-0.a1'])
  t.same(await sel(CORE, 'reportingComponent=default-scheduler'), ['web-0.a1'])
  t.same(await sel(CORE, 'source=kubelet'), ['db-0.b1'])
  // Each group knows only its own names.
  const a = await s.request('GET', `${NEW}?fieldSelector=involvedObject.name%3Dweb-0`)
  t.equal(a.status, 400)
  t.equal(a.json.message, 'field label not supported: involvedObject.name')
  const b = await s.request('GET', `${CORE}?fieldSelector=regarding.name%3Dweb-0`)
  t.equal(b.status, 400)
  t.equal(b.json.message, 'field label not supported: regarding.name')
  const c = await s.request('GET', `${NEW}?fieldSelector=source%3Dkubelet`)
  t.equal(c.status, 400, 'source is a core field label only')
})

t.test('patch, update and delete through the other group', async (t) => {
  // What was reported may not change through events.orch.io/v1 (upstream's ValidateEventUpdate for that version,
  // on the internal names); through core it may.
  const ro = await s.request('PATCH', `${NEW}/db-0.b1`, { note: 'patched note', deprecatedCount: 4 }, MERGE)
  t.equal(ro.status, 422, ro.text)
  t.same(ro.json.details.causes.map((c: Obj) => `${c.field}: ${c.message}`), ['message: Invalid value: "patched note": field is immutable', 'count: Invalid value: 4: field is immutable'])
  const p = await s.request('PATCH', `${CORE}/db-0.b1`, { message: 'patched note', count: 4 }, MERGE)
  t.equal(p.status, 200, p.text)
  const g = await s.request('GET', `${NEW}/db-0.b1`)
  t.equal(g.json.note, 'patched note')
  t.equal(g.json.deprecatedCount, 4)
  t.same(g.json.regarding.name, 'db-0', 'the rest kept')
  // A merge patch in the events.orch.io shape that changes what may change (the series).
  const sr = await s.request('PATCH', `${NEW}/web-0.a1`, { series: { count: 3 } }, MERGE)
  t.equal(sr.status, 200, sr.text)
  t.same(sr.json.series, { count: 3, lastObservedTime: '2024-05-01T10:00:05.000000Z' })
  t.equal((await s.request('GET', `${CORE}/web-0.a1`)).json.series.count, 3)
  const bad = await s.request('PATCH', `${NEW}/web-0.a1`, { series: { count: 1 } }, MERGE)
  t.equal(bad.status, 422, bad.text)
  t.same(bad.json.details.causes.map((c: Obj) => c.field), ['series.count'])
  // A strategic merge patch and a JSON patch through core of an event created through events.orch.io.
  const sp = await s.request('PATCH', `${CORE}/web-0.a1`, { message: 'via core' }, { 'content-type': 'application/strategic-merge-patch+json' })
  t.equal(sp.status, 200, sp.text)
  const jp = await s.request('PATCH', `${NEW}/web-0.a1`, [{ op: 'replace', path: '/series/count', value: 7 }], { 'content-type': 'application/json-patch+json' })
  t.equal(jp.status, 200, jp.text)
  t.equal(jp.json.note, 'via core')
  t.equal(jp.json.series.count, 7)
  // A PUT of the events.orch.io object as read.
  const cur = (await s.request('GET', `${K8S}/web-0.a1`)).json
  cur.series.count = 9
  cur.metadata.labels = { put: 'k8s' }
  const u = await s.request('PUT', `${K8S}/web-0.a1`, cur)
  t.equal(u.status, 200, u.text)
  t.equal(u.json.apiVersion, 'events.k8s.io/v1')
  const afterPut = (await s.request('GET', `${CORE}/web-0.a1`)).json
  t.equal(afterPut.series.count, 9)
  t.same(afterPut.metadata.labels, { put: 'k8s' })
  t.equal(afterPut.message, 'via core')
  // A stale resourceVersion is a conflict whichever group wrote last.
  const stale = await s.request('PUT', `${K8S}/web-0.a1`, cur)
  t.equal(stale.status, 409, stale.text)
  // Server-side apply through events.orch.io.
  const ap = await s.request('PATCH', `${NEW}/applied.c1?fieldManager=applier`, newEvent('applied.c1', { note: 'applied' }), { 'content-type': 'application/apply-patch+yaml' })
  t.equal(ap.status, 201, ap.text)
  t.equal(ap.json.note, 'applied')
  t.ok(Array.isArray(ap.json.metadata.managedFields) && ap.json.metadata.managedFields.some((m: Obj) => m.manager === 'applier' && m.operation === 'Apply'), 'the applier is recorded')
  const ap2 = await s.request('PATCH', `${NEW}/applied.c1?fieldManager=applier`, newEvent('applied.c1', { note: 'applied', series: { count: 5, lastObservedTime: '2024-05-01T10:01:00.000000Z' } }), { 'content-type': 'application/apply-patch+yaml' })
  t.equal(ap2.status, 200, ap2.text)
  t.equal((await s.request('GET', `${CORE}/applied.c1`)).json.series.count, 5)
  const wrongVersion = await s.request('PATCH', `${NEW}/applied.c1?fieldManager=applier`, { ...newEvent('applied.c1'), apiVersion: 'v1' }, { 'content-type': 'application/apply-patch+yaml' })
  t.equal(wrongVersion.status, 400, wrongVersion.text)
  // Delete through one group: gone from both.
  const d = await s.request('DELETE', `${NEW}/applied.c1`)
  t.equal(d.status, 200, d.text)
  t.equal((await s.request('GET', `${CORE}/applied.c1`)).status, 404)
  const gone = await s.request('GET', `${NEW}/applied.c1`)
  t.equal(gone.status, 404)
  t.equal(gone.json.message, 'events.events.orch.io "applied.c1" not found', 'errors name the group asked')
  t.same(gone.json.details, { name: 'applied.c1', group: 'events.orch.io', kind: 'events' })
  t.equal((await s.request('GET', `${CORE}/applied.c1`)).json.message, 'events "applied.c1" not found')
  // An unknown field of the events.orch.io shape is refused under Strict, named in its own terms.
  const strict = await s.request('POST', `${NEW}?fieldValidation=Strict`, newEvent('strict.d1', { involvedObject: { name: 'x' } }))
  t.equal(strict.status, 400, strict.text)
  t.match(strict.json.message, /unknown field "involvedObject"/)
})

t.test('a create through events.orch.io/v1 is checked as upstream checks that version; through core it is not', async (t) => {
  const r = await s.request('POST', NEW, newEvent('strict.g1', { type: 'Info', deprecatedCount: 2, deprecatedSource: { component: 'kubelet' }, series: { count: 1 } }))
  t.equal(r.status, 422, r.text)
  t.same(r.json.details.causes.map((c: Obj) => `${c.field}: ${c.message}`), [
    'series.count: Invalid value: "": should be at least 2', 'series.lastObservedTime: Required value',
    'type: Invalid value: "": has invalid value: Info', 'count: Invalid value: "": needs to be unset', 'source: Invalid value: "": needs to be unset',
  ])
  t.equal((await s.request('GET', `${CORE}/strict.g1`)).status, 404, 'nothing stored')
  const noTime = await s.request('POST', K8S, { ...newEvent('strict.g2'), apiVersion: 'events.k8s.io/v1', eventTime: undefined })
  t.equal(noTime.status, 422, noTime.text)
  t.ok(noTime.json.details.causes.some((c: Obj) => c.field === 'eventTime' && c.reason === 'FieldValueRequired'))
  const core = await s.request('POST', CORE, coreEvent('strict.g3', { type: 'Info' }))
  t.equal(core.status, 201, core.text)
})

t.test('watches of either group get the other group\'s writes, converted, with resourceVersions and bookmarks', async (t) => {
  const list = await s.request('GET', NEW)
  const rv = list.json.metadata.resourceVersion
  // A bookmark comes about 2 s before the end: after the writes below.
  const resumed = watchEvents(`${NEW}?watch=1&resourceVersion=${rv}&timeoutSeconds=3&allowWatchBookmarks=true`)
  const coreWatch = watchEvents(`${CORE}?watch=1&resourceVersion=${rv}&timeoutSeconds=2`)
  const selected = watchEvents(`${NEW}?watch=1&resourceVersion=${rv}&timeoutSeconds=2&fieldSelector=regarding.name%3Dwatch-pod`)
  await new Promise((r) => setTimeout(r, 200))
  const c = await s.request('POST', CORE, coreEvent('watch.e1', { involvedObject: { kind: 'Pod', namespace: NS, name: 'watch-pod' } }))
  t.equal(c.status, 201, c.text)
  const n = await s.request('POST', NEW, newEvent('watch.e2'))
  t.equal(n.status, 201, n.text)
  const m = await s.request('PATCH', `${CORE}/watch.e1`, { message: 'changed' }, MERGE)
  t.equal(m.status, 200, m.text)
  const del = await s.request('DELETE', `${CORE}/watch.e1`)
  t.equal(del.status, 200, del.text)
  const evs = await resumed
  const of = (name: string) => evs.filter((e) => e.object.metadata?.name === name)
  t.same(of('watch.e1').map((e) => e.type), ['ADDED', 'MODIFIED', 'DELETED'])
  t.same(of('watch.e2').map((e) => e.type), ['ADDED'])
  for (const e of [...of('watch.e1'), ...of('watch.e2')]) {
    t.equal(e.object.apiVersion, 'events.orch.io/v1')
    t.ok(e.object.regarding !== undefined && e.object.involvedObject === undefined, 'events.orch.io shape')
  }
  t.equal(of('watch.e1')[0].object.metadata.resourceVersion, c.json.metadata.resourceVersion)
  t.equal(of('watch.e1')[1].object.note, 'changed')
  t.equal(of('watch.e1')[1].object.metadata.resourceVersion, m.json.metadata.resourceVersion)
  const bookmarks = evs.filter((e) => e.type === 'BOOKMARK')
  t.ok(bookmarks.length >= 1, 'a bookmark before the end')
  for (const b of bookmarks) {
    t.equal(b.object.apiVersion, 'events.orch.io/v1')
    t.equal(b.object.kind, 'Event')
    t.ok(Number(b.object.metadata.resourceVersion) >= Number(m.json.metadata.resourceVersion))
  }
  const core = await coreWatch
  const e2 = core.find((e) => e.object.metadata?.name === 'watch.e2')
  t.equal(e2?.object.apiVersion, 'v1')
  t.equal(e2?.object.message, newEvent('x').note, 'core watchers see the core shape')
  const sel = await selected
  t.same(sel.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'watch.e1'], ['MODIFIED', 'watch.e1'], ['DELETED', 'watch.e1']], 'the selector is on the events.orch.io field, mapped to the stored one')
  // Initial events with their closing bookmark (sendInitialEvents), in the events.k8s.io shape.
  const initial = await watchEvents(`${K8S}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1`)
  const added = initial.filter((e) => e.type === 'ADDED')
  t.ok(added.length >= 3 && added.every((e) => e.object.apiVersion === 'events.k8s.io/v1' && e.object.regarding !== undefined), 'initial events converted')
  const end = initial.find((e) => e.type === 'BOOKMARK' && e.object.metadata.annotations?.['k8s.io/initial-events-end'] === 'true')
  t.ok(end, 'the initial-events-end bookmark')
  t.equal(end?.object.apiVersion, 'events.k8s.io/v1')
  // A Table watch (kubectl get -w): rows from the converted objects, columns in the first event only.
  const rows = await watchEvents(`${NEW}?watch=1&timeoutSeconds=1`, TABLE.accept)
  t.ok(rows.length >= 3 && rows.every((e) => e.type === 'ADDED' && e.object.kind === 'Table'), 'Table events')
  t.ok(rows[0].object.columnDefinitions?.length > 0 && rows[1].object.columnDefinitions === null, 'columns in the first event only')
  t.ok(rows.some((e) => e.object.rows[0].cells.includes('Scheduled') && e.object.rows[0].cells.includes('pod/web-0')), 'cells from the events.orch.io fields')
})

t.test('Tables and protobuf for either group', async (t) => {
  const tn = await s.request('GET', NEW, undefined, TABLE)
  t.equal(tn.status, 200, tn.text)
  t.equal(tn.json.kind, 'Table')
  const row = tn.json.rows.find((r: Obj) => r.object.metadata.name === 'web-0.a1')
  t.ok(row, 'a row per event')
  t.ok(row.cells.includes('Scheduled') && row.cells.some((c: unknown) => String(c).includes('pod/web-0') || String(c).includes('Pod/web-0') || c === 'web-0'), `cells name the reason and object: ${JSON.stringify(row.cells)}`)
  const tg = await s.request('GET', `${NEW}/db-0.b1`, undefined, TABLE)
  t.equal(tg.status, 200, tg.text)
  t.equal(tg.json.rows.length, 1)
  const pbNew = await getProtobuf(`${NEW}/db-0.b1`)
  t.equal(pbNew.status, 200)
  t.equal(pbNew.object.apiVersion, 'events.orch.io/v1')
  t.equal(pbNew.object.note, 'patched note')
  const pbK8s = await getProtobuf(`${K8S}/db-0.b1`)
  // (the test's decoder reads upstream spellings as ours: the envelope's bytes tell)
  t.ok(pbK8s.bytes.includes('events.k8s.io/v1') && !pbK8s.bytes.includes('events.orch.io'), 'the envelope names events.k8s.io/v1')
  t.equal(pbK8s.object.note, 'patched note')
  const pbCore = await getProtobuf(`${CORE}/web-0.a1`)
  t.equal(pbCore.status, 200)
  t.equal(pbCore.object.apiVersion, 'v1')
  t.equal(pbCore.object.reportingComponent, 'default-scheduler')
  const pbList = await getProtobuf(NEW)
  t.equal(pbList.object.kind, 'EventList')
  t.ok(pbList.object.items.length >= 2 && pbList.object.items.every((i: Obj) => i.regarding !== undefined))
  // A protobuf body through events.k8s.io.
  const body = encodeObject({ ...newEvent('pb.f1'), apiVersion: 'events.k8s.io/v1' })
  const r = await fetch(`${s.url}${K8S}`, { method: 'POST', body: body as any, headers: { authorization: `Bearer ${s.adminToken}`, 'content-type': PB, accept: 'application/json' } })
  t.equal(r.status, 201, await r.clone().text())
  t.equal((await s.request('GET', `${CORE}/pb.f1`)).json.message, newEvent('x').note)
})

// ---- HorizontalPodAutoscalers ----

const scaleTargetRef = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }

t.test('autoscaling/v1 is served over the v2 objects: targetCPUUtilizationPercentage is a cpu utilization metric', async (t) => {
  const c = await s.request('POST', V1, { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h1' }, spec: { scaleTargetRef, maxReplicas: 5, targetCPUUtilizationPercentage: 60 } })
  t.equal(c.status, 201, c.text)
  t.equal(c.json.apiVersion, 'autoscaling/v1')
  t.same(c.json.spec, { scaleTargetRef, minReplicas: 1, maxReplicas: 5, targetCPUUtilizationPercentage: 60 })
  t.same(c.json.status, { currentReplicas: 0, desiredReplicas: 0 })
  t.notOk(c.json.metadata.annotations, 'nothing v1 cannot express, no annotations')
  const g = await s.request('GET', `${V2}/h1`)
  t.equal(g.status, 200, g.text)
  t.same(g.json.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } }])
  t.equal(g.json.spec.minReplicas, 1)
  // Without a target: v2's default, 80 %.
  const d = await s.request('POST', V1, { metadata: { name: 'h-default' }, spec: { scaleTargetRef, maxReplicas: 3 } })
  t.equal(d.status, 201, d.text)
  t.equal(d.json.spec.targetCPUUtilizationPercentage, 80)
  // Validation is the stored type's: 422.
  const bad = await s.request('POST', V1, { metadata: { name: 'h-bad' }, spec: { scaleTargetRef, maxReplicas: 0 } })
  t.equal(bad.status, 422, bad.text)
  t.equal(bad.json.reason, 'Invalid')
})

t.test('what v1 cannot express travels in autoscaling.alpha.orch.io annotations and survives a v1 round trip', async (t) => {
  const v2 = {
    apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h2', annotations: { team: 'a' } },
    spec: {
      scaleTargetRef, minReplicas: 2, maxReplicas: 10,
      metrics: [
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
        { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '500Mi' } } },
        { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } },
      ],
      behavior: { scaleDown: { stabilizationWindowSeconds: 60, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 1, periodSeconds: 30 }] } },
    },
  }
  const c = await s.request('POST', V2, v2)
  t.equal(c.status, 201, c.text)
  const st = await s.request('PUT', `${V2}/h2/status`, { ...c.json, status: { currentReplicas: 3, desiredReplicas: 4, currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 55, averageValue: '120m' } } }], conditions: [{ type: 'AbleToScale', status: 'True', reason: 'ReadyForNewScale', lastTransitionTime: '2024-05-01T10:00:00Z' }] } })
  t.equal(st.status, 200, st.text)
  const g = await s.request('GET', `${V1}/h2`)
  t.equal(g.status, 200, g.text)
  const o = g.json
  t.equal(o.spec.targetCPUUtilizationPercentage, 70)
  t.equal(o.spec.minReplicas, 2)
  t.same(o.status, { currentReplicas: 3, desiredReplicas: 4, currentCPUUtilizationPercentage: 55 })
  const ann = o.metadata.annotations
  t.equal(ann.team, 'a')
  t.same(JSON.parse(ann['autoscaling.alpha.orch.io/metrics']), [
    { type: 'Resource', resource: { name: 'memory', targetAverageValue: '500Mi' } },
    { type: 'Pods', pods: { metricName: 'qps', targetAverageValue: '10' } },
  ])
  t.same(JSON.parse(ann['autoscaling.alpha.orch.io/current-metrics']), [{ type: 'Resource', resource: { name: 'cpu', currentAverageUtilization: 55, currentAverageValue: '120m' } }])
  t.same(JSON.parse(ann['autoscaling.alpha.orch.io/behavior']).scaleDown.policies, [{ type: 'Pods', value: 1, periodSeconds: 30 }])
  t.same(JSON.parse(ann['autoscaling.alpha.orch.io/conditions'])[0].type, 'AbleToScale')
  // A v1 client's read-modify-write changes only what it changed.
  o.spec.maxReplicas = 12
  o.spec.targetCPUUtilizationPercentage = 65
  const u = await s.request('PUT', `${V1}/h2`, o)
  t.equal(u.status, 200, u.text)
  const after = (await s.request('GET', `${V2}/h2`)).json
  t.equal(after.spec.maxReplicas, 12)
  t.same(after.spec.metrics, [
    { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 65 } } },
    v2.spec.metrics[1], v2.spec.metrics[2],
  ])
  t.equal(after.spec.behavior.scaleDown.stabilizationWindowSeconds, 60)
  t.same(after.metadata.annotations, { team: 'a' }, 'the round-trip annotations are not stored')
  t.equal(after.status.currentMetrics[0].resource.current.averageValue, '120m', 'status kept')
  t.equal(after.metadata.generation, c.json.metadata.generation + 1)
  // A merge patch in the v1 shape.
  const p = await s.request('PATCH', `${V1}/h2`, { spec: { minReplicas: 3 } }, MERGE)
  t.equal(p.status, 200, p.text)
  t.equal(p.json.spec.minReplicas, 3)
  const p2 = (await s.request('GET', `${V2}/h2`)).json
  t.equal(p2.spec.minReplicas, 3)
  t.equal(p2.spec.metrics.length, 3, 'the other metrics kept through the patch')
  // The v1 status sub-resource.
  const s1 = await s.request('PATCH', `${V1}/h2/status`, { status: { currentReplicas: 5 } }, MERGE)
  t.equal(s1.status, 200, s1.text)
  t.equal(s1.json.status.currentReplicas, 5)
  t.equal((await s.request('GET', `${V2}/h2`)).json.status.currentReplicas, 5)
  // Server-side apply in the v1 shape.
  const ap = await s.request('PATCH', `${V1}/h3?fieldManager=applier`, { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h3' }, spec: { scaleTargetRef, maxReplicas: 4, targetCPUUtilizationPercentage: 50 } }, { 'content-type': 'application/apply-patch+yaml' })
  t.equal(ap.status, 201, ap.text)
  t.equal(ap.json.spec.targetCPUUtilizationPercentage, 50)
  const ap2 = await s.request('PATCH', `${V1}/h3?fieldManager=applier`, { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h3' }, spec: { scaleTargetRef, maxReplicas: 6, targetCPUUtilizationPercentage: 50 } }, { 'content-type': 'application/apply-patch+yaml' })
  t.equal(ap2.status, 200, ap2.text)
  t.equal((await s.request('GET', `${V2}/h3`)).json.spec.maxReplicas, 6)
})

t.test('autoscaling/v1 lists, watches, Tables, protobuf and deletes', async (t) => {
  const l = await s.request('GET', V1)
  t.equal(l.json.apiVersion, 'autoscaling/v1')
  t.equal(l.json.kind, 'HorizontalPodAutoscalerList')
  t.ok(l.json.items.length >= 3 && l.json.items.every((i: Obj) => i.apiVersion === 'autoscaling/v1' && i.spec.metrics === undefined))
  const rv = l.json.metadata.resourceVersion
  const w = watchEvents(`${V1}?watch=1&resourceVersion=${rv}&timeoutSeconds=1`)
  await new Promise((r) => setTimeout(r, 200))
  const c = await s.request('POST', V2, { metadata: { name: 'h4' }, spec: { scaleTargetRef, maxReplicas: 2, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 40 } } }] } })
  t.equal(c.status, 201, c.text)
  const evs = (await w).filter((e) => e.object.metadata?.name === 'h4')
  t.equal(evs.length, 1)
  t.equal(evs[0].type, 'ADDED')
  t.equal(evs[0].object.apiVersion, 'autoscaling/v1')
  t.equal(evs[0].object.spec.targetCPUUtilizationPercentage, 40)
  const tb = await s.request('GET', V1, undefined, TABLE)
  t.equal(tb.status, 200, tb.text)
  const row = tb.json.rows.find((r: Obj) => r.object.metadata.name === 'h4')
  t.same(row.cells.slice(0, 5), ['h4', 'Deployment/web', 'cpu: <unknown>/40%', '1', 2])
  const pb = await getProtobuf(`${V1}/h4`)
  t.equal(pb.status, 200)
  t.equal(pb.contentType, PB)
  t.equal(pb.object.apiVersion, 'autoscaling/v1')
  t.equal(pb.object.spec.targetCPUUtilizationPercentage, 40)
  t.equal(pb.object.status.desiredReplicas, 0)
  // A protobuf body of the v1 shape.
  const body = encodeObject({ apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h-pb', namespace: NS }, spec: { scaleTargetRef, maxReplicas: 3, targetCPUUtilizationPercentage: 33 } })
  const pc = await fetch(`${s.url}${V1}`, { method: 'POST', body: body as any, headers: { authorization: `Bearer ${s.adminToken}`, 'content-type': PB, accept: 'application/json' } })
  t.equal(pc.status, 201, await pc.clone().text())
  t.equal((await s.request('GET', `${V2}/h-pb`)).json.spec.metrics[0].resource.target.averageUtilization, 33)
  const d = await s.request('DELETE', `${V1}/h4`)
  t.equal(d.status, 200, d.text)
  t.equal((await s.request('GET', `${V2}/h4`)).status, 404)
  const disc = await s.request('GET', '/apis/autoscaling')
  t.same(disc.json.versions.map((v: Obj) => v.version), ['v2', 'v1'])
  t.equal(disc.json.preferredVersion.version, 'v2')
  // One storage, one storage version hash (the stored version's), as upstream's discovery says.
  const hash = async (path: string, resource: string) => ((await s.request('GET', path)).json.resources as Obj[]).find((r) => r.name === resource)?.storageVersionHash
  t.equal(await hash('/apis/autoscaling/v1', 'horizontalpodautoscalers'), await hash('/apis/autoscaling/v2', 'horizontalpodautoscalers'))
  const coreHash = await hash('/api/v1', 'events')
  t.ok(coreHash)
  t.equal(await hash('/apis/events.orch.io/v1', 'events'), coreHash)
})

t.test('deletecollection through events.orch.io selects on its own fields and answers in its shape', async (t) => {
  for (const n of ['dc.1', 'dc.2']) t.equal((await s.request('POST', CORE, coreEvent(n, { involvedObject: { kind: 'Pod', namespace: NS, name: 'doomed' } }))).status, 201)
  const d = await s.request('DELETE', `${NEW}?fieldSelector=regarding.name%3Ddoomed`)
  t.equal(d.status, 200, d.text)
  t.equal(d.json.kind, 'EventList')
  t.equal(d.json.apiVersion, 'events.orch.io/v1')
  t.same(d.json.items.map((i: Obj) => [i.metadata.name, i.regarding.name]).sort(), [['dc.1', 'doomed'], ['dc.2', 'doomed']])
  t.equal((await s.request('GET', `${CORE}/dc.1`)).status, 404)
  t.equal((await s.request('GET', `${CORE}/db-0.b1`)).status, 200, 'others kept')
})

t.test('kubectl: get events, get hpa, autoscale', async (t) => {
  const k = (args: string[]) => runKubectl(s.kubeconfig, home, args)
  const ev = await k(['get', 'events', '-n', NS])
  t.equal(ev.code, 0, ev.stderr)
  t.match(ev.stdout, /Scheduled/)
  t.match(ev.stdout, /pod\/web-0/)
  const evk = await k(['get', 'events.events.orch.io', '-n', NS, '-o', 'json'])
  t.equal(evk.code, 0, evk.stderr)
  const items = JSON.parse(evk.stdout).items as Obj[]
  t.ok(items.some((i) => i.metadata.name === 'db-0.b1' && i.regarding?.name === 'db-0'), 'events written through core read as events.orch.io')
  const dep = await s.request('POST', `/apis/apps/v1/namespaces/${NS}/deployments`, { metadata: { name: 'web' }, spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } })
  t.equal(dep.status, 201, dep.text)
  const as = await k(['autoscale', 'deployment', 'web', '-n', NS, '--name', 'web-hpa', '--min', '2', '--max', '5', '--cpu-percent', '75'])
  t.equal(as.code, 0, as.stderr)
  const got = (await s.request('GET', `${V1}/web-hpa`)).json
  t.same(got.spec, { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 2, maxReplicas: 5, targetCPUUtilizationPercentage: 75 })
  const hpa = await k(['get', 'hpa', '-n', NS])
  t.equal(hpa.code, 0, hpa.stderr)
  t.match(hpa.stdout, /web-hpa\s+Deployment\/web\s+cpu: <unknown>\/75%\s+2\s+5\s+0/)
  const v1 = await k(['get', 'horizontalpodautoscalers.v1.autoscaling', 'web-hpa', '-n', NS, '-o', 'jsonpath={.spec.targetCPUUtilizationPercentage}'])
  t.equal(v1.code, 0, v1.stderr)
  t.equal(v1.stdout, '75')
  const desc = await k(['describe', 'pod', 'web-0', '-n', NS])
  t.match(desc.stderr + desc.stdout, /not found|NotFound/, 'describe of a missing pod still fails cleanly')
  const kev = await k(['events', '-n', NS, '--for', 'pod/web-0'])
  t.equal(kev.code, 0, kev.stderr)
  t.match(kev.stdout, /Scheduled/, 'kubectl events shows an event written through events.orch.io')
})
