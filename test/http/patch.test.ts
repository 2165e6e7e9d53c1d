// Black-box: PATCH (JSON patch, merge patch, strategic merge patch), server-side apply, dry run and field validation
// through the real server (one server for the whole file).
import t from 'tap'
import { startServer, type TestServer, type Reply } from '../helpers/server.js'

let s: TestServer

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

const NS = '/api/v1/namespaces/default'
const APPS = '/apis/apps/v1/namespaces/default'
const cm = (name: string) => `${NS}/configmaps/${name}`
const dep = (name: string) => `${APPS}/deployments/${name}`

const JSONP = 'application/json-patch+json'
const MERGE = 'application/merge-patch+json'
const SMP = 'application/strategic-merge-patch+json'
const APPLY = 'application/apply-patch+yaml'

function patch(path: string, type: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  return s.request('PATCH', path, typeof body === 'string' ? body : JSON.stringify(body), { 'content-type': type, ...headers })
}
function apply(path: string, body: unknown, query: string): Promise<Reply> {
  return patch(path + (query ? `?${query}` : ''), APPLY, body)
}
async function get(path: string): Promise<any> {
  const r = await s.request('GET', path)
  return r.status === 200 ? r.json : { status: r.status }
}
function warnings(r: Reply): string[] {
  const w = r.headers['warning']
  if (w === undefined) return []
  return Array.isArray(w) ? w : [w]
}
/** The managedFields entries keyed by manager (+ operation). */
function mf(o: any): Record<string, any> {
  const out: Record<string, any> = {}
  for (const e of o?.metadata?.managedFields ?? []) out[`${e.manager}/${e.operation}${e.subresource ? '/' + e.subresource : ''}`] = e
  return out
}
function configMap(name: string, data: Record<string, string>, extra: Record<string, unknown> = {}): any {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...extra }, data }
}
function deployment(name: string, containers: any[], replicas = 1): any {
  return {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers } } },
  }
}
async function create(path: string, obj: any, query = ''): Promise<any> {
  const r = await s.request('POST', path + (query ? `?${query}` : ''), obj)
  if (r.status !== 201) throw new Error(`create ${obj.metadata?.name}: ${r.status} ${r.text}`)
  return r.json
}
const byName = (a: any[]) => [...(a ?? [])].sort((x, y) => String(x.name).localeCompare(String(y.name)))

// ---------------------------------------------------------------- JSON patch

t.test('JSON patch: add/replace/remove, failing test op is 422 and changes nothing', async (t) => {
  await create(`${NS}/configmaps`, configMap('jp', { a: '1', b: '2' }))
  let r = await patch(cm('jp'), JSONP, [
    { op: 'add', path: '/data/c', value: '3' },
    { op: 'replace', path: '/data/a', value: '10' },
    { op: 'remove', path: '/data/b' },
    { op: 'add', path: '/metadata/labels', value: { l: 'v' } },
  ])
  t.equal(r.status, 200, r.text)
  t.same(r.json?.data, { a: '10', c: '3' })
  t.same(r.json?.metadata?.labels, { l: 'v' })
  const before = await get(cm('jp'))
  t.same(before.data, { a: '10', c: '3' }, 'stored')

  r = await patch(cm('jp'), JSONP, [
    { op: 'replace', path: '/data/c', value: 'changed' },
    { op: 'test', path: '/data/a', value: 'not-10' },
    { op: 'replace', path: '/data/a', value: 'x' },
  ])
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.kind, 'Status')
  t.equal(r.json?.code, 422)
  const after = await get(cm('jp'))
  t.same(after.data, { a: '10', c: '3' }, 'nothing changed')
  t.equal(after.metadata.resourceVersion, before.metadata.resourceVersion, 'resourceVersion unchanged')

  r = await patch(cm('jp'), JSONP, [{ op: 'test', path: '/data/a', value: '10' }, { op: 'replace', path: '/data/a', value: '11' }])
  t.equal(r.status, 200, 'passing test op')
  t.equal(r.json?.data?.a, '11')

  r = await patch(cm('jp'), JSONP, [{ op: 'remove', path: '/data/nope' }])
  t.equal(r.status, 422, `remove of a missing path: ${r.text}`)
})

// ---------------------------------------------------------------- merge patch

t.test('merge patch: null deletes a key, maps merge, lists are replaced', async (t) => {
  await create(`${NS}/configmaps`, configMap('mp', { a: '1', b: '2' }, { labels: { x: '1', y: '2' }, finalizers: ['example.com/a', 'example.com/b'] }))
  const r = await patch(cm('mp'), MERGE, { data: { a: null, c: '3' }, metadata: { labels: { y: null, z: '3' }, finalizers: ['example.com/c'] } })
  t.equal(r.status, 200, r.text)
  t.same(r.json?.data, { b: '2', c: '3' })
  t.same(r.json?.metadata?.labels, { x: '1', z: '3' })
  t.same(r.json?.metadata?.finalizers, ['example.com/c'], 'list replaced wholesale by merge patch')
  const g = await get(cm('mp'))
  t.same(g.data, { b: '2', c: '3' })
  await patch(cm('mp'), MERGE, { metadata: { finalizers: null } })
})

// ---------------------------------------------------------------- strategic merge patch

t.test('strategic merge patch on a Pod: containers by name, finalizers $deleteFromPrimitiveList', async (t) => {
  await create(`${NS}/pods`, {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: 'smp-pod', labels: { app: 'p' }, finalizers: ['example.com/f1', 'example.com/f2'] },
    spec: { containers: [{ name: 'a', image: 'img-a:1' }, { name: 'b', image: 'img-b:1' }] },
  })
  const r = await patch(`${NS}/pods/smp-pod`, SMP, {
    metadata: { labels: { tier: 'web' }, finalizers: ['example.com/f3'], '$deleteFromPrimitiveList/finalizers': ['example.com/f1'] },
    spec: { containers: [{ name: 'b', image: 'img-b:2' }] },
  })
  t.equal(r.status, 200, r.text)
  const p = await get(`${NS}/pods/smp-pod`)
  t.same(p.spec.containers.map((c: any) => [c.name, c.image]), [['a', 'img-a:1'], ['b', 'img-b:2']], 'containers merged by name, order kept')
  t.same(p.metadata.labels, { app: 'p', tier: 'web' })
  // upstream mergeSortedSlice puts patch-only values before server-only ones; the order is not part of the contract
  t.same([...(p.metadata.finalizers ?? [])].sort(), ['example.com/f2', 'example.com/f3'], 'f1 removed, f3 added')
  t.notOk(JSON.stringify(p).includes('$'), 'no directive stored')
  // cleanup finalizers so the pod can go later
  await patch(`${NS}/pods/smp-pod`, MERGE, { metadata: { finalizers: null } })
})

t.test('strategic merge patch on a Deployment: $patch delete, env by name, tolerations replaced', async (t) => {
  await create(`${APPS}/deployments`, deployment('smp-dep', [
    { name: 'app', image: 'nginx:1', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }] },
    { name: 'side', image: 'busybox:1' },
  ]))
  const r = await patch(dep('smp-dep'), SMP, {
    spec: {
      replicas: 3,
      template: {
        spec: {
          containers: [
            { name: 'app', image: 'nginx:2', env: [{ name: 'B', $patch: 'delete' }, { name: 'C', value: '3' }, { name: 'A', value: '11' }] },
            { name: 'side', $patch: 'delete' },
            { name: 'new', image: 'redis:7' },
          ],
        },
      },
    },
  })
  t.equal(r.status, 200, r.text)
  const d = await get(dep('smp-dep'))
  t.equal(d.spec.replicas, 3)
  const cs = d.spec.template.spec.containers
  t.same(byName(cs).map((c: any) => [c.name, c.image]), [['app', 'nginx:2'], ['new', 'redis:7']], 'side deleted, new appended, app merged')
  const app = cs.find((c: any) => c.name === 'app')
  t.same(byName(app?.env).map((e: any) => [e.name, e.value]), [['A', '11'], ['C', '3']], 'env merged by name, B deleted')
  t.equal(cs[0]?.name, 'app', 'original item keeps its position')
  t.notOk(JSON.stringify(d).includes('$patch'), 'no directive stored')

  // $patch: replace on a list
  const r2 = await patch(dep('smp-dep'), SMP, { spec: { template: { spec: { containers: [{ $patch: 'replace' }, { name: 'only', image: 'x:1' }] } } } })
  t.equal(r2.status, 200, r2.text)
  t.same(r2.json?.spec?.template?.spec?.containers?.map((c: any) => c.name), ['only'])
  // a list without merge strategy (args) is replaced
  await patch(dep('smp-dep'), SMP, { spec: { template: { spec: { containers: [{ name: 'only', args: ['a', 'b'] }] } } } })
  const r3 = await patch(dep('smp-dep'), SMP, { spec: { template: { spec: { containers: [{ name: 'only', args: ['c'] }] } } } })
  t.same(r3.json?.spec?.template?.spec?.containers?.[0]?.args, ['c'], 'args replaced')
  // missing merge key
  const r4 = await patch(dep('smp-dep'), SMP, { spec: { template: { spec: { containers: [{ image: 'x:2' }] } } } })
  t.ok(r4.status >= 400 && r4.status < 600 && r4.status !== 200, `missing merge key refused: ${r4.status}`)
})

// ---------------------------------------------------------------- errors

t.test('unsupported patch Content-Type is 415 with the accepted list', async (t) => {
  for (const ct of ['application/json', 'text/plain', 'application/xml']) {
    const r = await patch(cm('jp'), ct, { data: { q: '1' } })
    t.equal(r.status, 415, `${ct}: ${r.text}`)
    t.equal(r.json?.reason, 'UnsupportedMediaType')
    const msg: string = r.json?.message ?? ''
    t.match(msg, /^the body of the request was in an unknown format - accepted media types include: /)
    for (const m of [JSONP, MERGE, SMP, APPLY]) t.ok(msg.includes(m), `${ct}: lists ${m}`)
  }
  t.equal((await get(cm('jp'))).data.q, undefined, 'nothing written')
})

t.test('patch pinning a stale resourceVersion is 409 with the upstream message', async (t) => {
  const c = await create(`${NS}/configmaps`, configMap('rvpin', { a: '1' }))
  const oldRv = c.metadata.resourceVersion
  let r = await patch(cm('rvpin'), MERGE, { metadata: { resourceVersion: oldRv }, data: { a: '2' } })
  t.equal(r.status, 200, `current rv accepted: ${r.text}`)
  r = await patch(cm('rvpin'), MERGE, { metadata: { resourceVersion: oldRv }, data: { a: '3' } })
  t.equal(r.status, 409, r.text)
  t.equal(r.json?.reason, 'Conflict')
  t.equal(r.json?.message, 'Operation cannot be fulfilled on configmaps "rvpin": the object has been modified; please apply your changes to the latest version and try again')
  t.equal(r.json?.details?.name, 'rvpin')
  t.equal(r.json?.details?.kind, 'configmaps')
  r = await patch(cm('rvpin'), SMP, { metadata: { resourceVersion: oldRv }, data: { a: '3' } })
  t.equal(r.status, 409, `SMP: ${r.text}`)
  r = await patch(cm('rvpin'), JSONP, [{ op: 'replace', path: '/metadata/resourceVersion', value: oldRv }, { op: 'replace', path: '/data/a', value: '3' }])
  t.equal(r.status, 409, `JSON patch: ${r.text}`)
  t.equal((await get(cm('rvpin'))).data.a, '2')
})

t.test('patch of a missing object is 404 (never creates)', async (t) => {
  for (const [ct, body] of [[MERGE, { data: { a: '1' } }], [SMP, { data: { a: '1' } }], [JSONP, [{ op: 'add', path: '/data', value: {} }]]] as const) {
    const r = await patch(cm('does-not-exist'), ct, body)
    t.equal(r.status, 404, `${ct}: ${r.text}`)
    t.equal(r.json?.reason, 'NotFound')
    t.equal(r.json?.message, 'configmaps "does-not-exist" not found')
  }
  t.equal((await get(cm('does-not-exist'))).status, 404)
})

t.test('status sub-resource patch leaves spec alone; main patch leaves status alone', async (t) => {
  await create(`${APPS}/deployments`, deployment('st', [{ name: 'app', image: 'nginx:1' }], 2))
  let r = await patch(`${dep('st')}/status`, MERGE, { spec: { replicas: 9 }, status: { replicas: 5, observedGeneration: 1 } })
  t.equal(r.status, 200, r.text)
  t.equal(r.json?.status?.replicas, 5)
  t.equal(r.json?.spec?.replicas, 2, 'spec untouched in the response')
  let d = await get(dep('st'))
  t.equal(d.status?.replicas, 5, 'status stored')
  t.equal(d.spec.replicas, 2, 'spec not stored through /status')
  const m = mf(d)
  t.ok(Object.values(m).some((e: any) => e.subresource === 'status'), 'a managedFields entry records subresource status')

  r = await patch(dep('st'), MERGE, { spec: { replicas: 4 }, status: { replicas: 77 } })
  t.equal(r.status, 200, r.text)
  d = await get(dep('st'))
  t.equal(d.spec.replicas, 4)
  t.equal(d.status?.replicas, 5, 'status not changed through the main resource')
})

t.test('PATCH deployments/<name>/scale', async (t) => {
  let r = await patch(`${dep('st')}/scale`, MERGE, { spec: { replicas: 7 } })
  t.equal(r.status, 200, r.text)
  t.equal(r.json?.kind, 'Scale')
  t.equal(r.json?.apiVersion, 'autoscaling/v1')
  t.equal(r.json?.spec?.replicas, 7)
  t.equal(r.json?.metadata?.name, 'st')
  t.equal((await get(dep('st'))).spec.replicas, 7)
  r = await patch(`${dep('st')}/scale`, JSONP, [{ op: 'replace', path: '/spec/replicas', value: 1 }])
  t.equal(r.status, 200, r.text)
  t.equal((await get(dep('st'))).spec.replicas, 1)
  r = await s.request('GET', `${dep('st')}/scale`)
  t.equal(r.json?.spec?.replicas, 1)
  r = await patch(`${dep('nope')}/scale`, MERGE, { spec: { replicas: 2 } })
  t.equal(r.status, 404)
})

// ---------------------------------------------------------------- server-side apply

t.test('server-side apply: create 201 with YAML, patch 200 with JSON', async (t) => {
  const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa1\n  labels:\n    l: v\ndata:\n  x: "1"\n  "y": "2"\n'
  let r = await apply(cm('ssa1'), yaml, 'fieldManager=m1')
  t.equal(r.status, 201, r.text)
  t.same(r.json?.data, { x: '1', y: '2' })
  let e = mf(r.json)['m1/Apply']
  t.ok(e, 'Apply entry for m1')
  t.equal(e?.apiVersion, 'v1')
  t.equal(e?.fieldsType, 'FieldsV1')
  t.same(e?.fieldsV1, { 'f:data': { 'f:x': {}, 'f:y': {} }, 'f:metadata': { 'f:labels': { 'f:l': {} } } })
  t.equal(r.json?.metadata?.managedFields?.length, 1, 'only the applier')

  r = await apply(cm('ssa1'), configMap('ssa1', { x: '1', y: '3' }, { labels: { l: 'v' } }), 'fieldManager=m1')
  t.equal(r.status, 200, r.text)
  t.same(r.json?.data, { x: '1', y: '3' })
  t.same((await get(cm('ssa1'))).data, { x: '1', y: '3' })
})

t.test('server-side apply: request errors', async (t) => {
  let r = await apply(cm('ssa1'), configMap('ssa1', { x: '1' }), '')
  t.equal(r.status, 422, `no fieldManager: ${r.text}`)
  t.match(r.json?.message ?? '', /fieldManager: Required value: is required for apply patch/)
  r = await apply(cm('ssa1'), { ...configMap('ssa1', { x: '1' }), metadata: { name: 'ssa1', managedFields: [{ manager: 'm1', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: {} }] } }, 'fieldManager=m1')
  t.equal(r.status, 400, `managedFields in body: ${r.text}`)
  t.match(r.json?.message ?? '', /metadata\.managedFields must be nil/)
  r = await patch(`${cm('ssa1')}?force=true`, MERGE, { data: { x: '1' } })
  t.equal(r.status, 422, `force on a merge patch: ${r.text}`)
  t.match(r.json?.message ?? '', /force: Forbidden: may not be specified for non-apply patch/)
  r = await apply(cm('ssa1'), configMap('other-name', { x: '1' }), 'fieldManager=m1')
  t.equal(r.status, 400, `name mismatch: ${r.text}`)
  t.same((await get(cm('ssa1'))).data, { x: '1', y: '3' }, 'unchanged')
})

t.test('server-side apply: conflicts, force, sharing, removal', async (t) => {
  // m2 changes .data.x owned by m1 -> conflict
  let r = await apply(cm('ssa1'), configMap('ssa1', { x: '9' }), 'fieldManager=m2')
  t.equal(r.status, 409, r.text)
  t.equal(r.json?.reason, 'Conflict')
  t.equal(r.json?.message, 'Apply failed with 1 conflict: conflict with "m1": .data.x')
  t.same(r.json?.details?.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "m1"', field: '.data.x' }])
  t.equal((await get(cm('ssa1'))).data.x, '1', 'not applied')

  // two conflicting fields
  r = await apply(cm('ssa1'), configMap('ssa1', { x: '9', y: '9' }), 'fieldManager=m2')
  t.equal(r.status, 409, r.text)
  t.equal(r.json?.message, 'Apply failed with 2 conflicts: conflicts with "m1":\n- .data.x\n- .data.y')
  t.equal(r.json?.details?.causes?.length, 2, 'one cause per field')
  t.same((r.json?.details?.causes ?? []).map((c: any) => c.field).sort(), ['.data.x', '.data.y'])
  t.ok((r.json?.details?.causes ?? []).every((c: any) => c.reason === 'FieldManagerConflict' && c.message === 'conflict with "m1"'))

  // force moves ownership
  r = await apply(cm('ssa1'), configMap('ssa1', { x: '9' }), 'fieldManager=m2&force=true')
  t.equal(r.status, 200, r.text)
  t.equal(r.json?.data?.x, '9')
  let o = await get(cm('ssa1'))
  let m = mf(o)
  t.same(m['m1/Apply']?.fieldsV1, { 'f:data': { 'f:y': {} }, 'f:metadata': { 'f:labels': { 'f:l': {} } } }, 'x removed from m1')
  t.same(m['m2/Apply']?.fieldsV1, { 'f:data': { 'f:x': {} } }, 'm2 owns x')
  t.equal(m['m2/Apply']?.operation, 'Apply')
  // conflict message now names m2 for m1
  r = await apply(cm('ssa1'), configMap('ssa1', { x: '1', y: '3' }, { labels: { l: 'v' } }), 'fieldManager=m1')
  t.equal(r.status, 409)
  t.equal(r.json?.message, 'Apply failed with 1 conflict: conflict with "m2": .data.x')

  // m3 applies the same value -> shared, no conflict
  r = await apply(cm('ssa1'), configMap('ssa1', { y: '3' }), 'fieldManager=m3')
  t.equal(r.status, 200, `shared ownership: ${r.text}`)
  o = await get(cm('ssa1'))
  m = mf(o)
  t.same(m['m3/Apply']?.fieldsV1, { 'f:data': { 'f:y': {} } })
  t.ok(m['m1/Apply']?.fieldsV1?.['f:data']?.['f:y'], 'm1 still owns y')
  // a later change by one co-owner conflicts with the other
  r = await apply(cm('ssa1'), configMap('ssa1', { y: '4' }), 'fieldManager=m3')
  t.equal(r.status, 409, r.text)
  t.equal(r.json?.message, 'Apply failed with 1 conflict: conflict with "m1": .data.y')

  // m1 drops y: m3 still owns it -> kept; m1 adds z
  r = await apply(cm('ssa1'), configMap('ssa1', { z: '5' }, { labels: { l: 'v' } }), 'fieldManager=m1')
  t.equal(r.status, 200, r.text)
  o = await get(cm('ssa1'))
  t.same(o.data, { x: '9', y: '3', z: '5' }, 'y kept (owned by m3)')
  // m3 drops y: nobody owns it any more -> removed; m3 entry disappears
  r = await apply(cm('ssa1'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa1' } }, 'fieldManager=m3')
  t.equal(r.status, 200, r.text)
  o = await get(cm('ssa1'))
  t.same(o.data, { x: '9', z: '5' }, 'y removed')
  t.notOk(mf(o)['m3/Apply'], 'empty entry deleted')
  // m1 drops z -> removed
  r = await apply(cm('ssa1'), configMap('ssa1', {}, { labels: { l: 'v' } }), 'fieldManager=m1')
  t.equal(r.status, 200, r.text)
  t.same((await get(cm('ssa1'))).data, { x: '9' })
})

t.test('server-side apply: list-map items on a Deployment', async (t) => {
  const body = deployment('ssa-dep', [{ name: 'app', image: 'nginx:1', ports: [{ containerPort: 80 }] }])
  let r = await apply(dep('ssa-dep'), body, 'fieldManager=a1')
  t.equal(r.status, 201, r.text)
  const e = mf(r.json)['a1/Apply']
  t.same(e?.fieldsV1?.['f:spec']?.['f:template']?.['f:spec']?.['f:containers'], {
    'k:{"name":"app"}': { '.': {}, 'f:image': {}, 'f:name': {}, 'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } } },
  })
  t.same(e?.fieldsV1?.['f:spec']?.['f:selector'], {}, 'selector atomic leaf')
  r = await apply(dep('ssa-dep'), { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'ssa-dep' }, spec: { template: { spec: { containers: [{ name: 'app', image: 'nginx:2' }] } } } }, 'fieldManager=a2')
  t.equal(r.status, 409, r.text)
  t.equal(r.json?.message, 'Apply failed with 1 conflict: conflict with "a1": .spec.template.spec.containers[name="app"].image')
})

t.test('Update manager from User-Agent takes ownership on PUT; managedFields [{}] resets', async (t) => {
  const o = await get(cm('ssa1'))
  o.data.x = '10'
  let r = await s.request('PUT', cm('ssa1'), o, { 'user-agent': 'my-tool/1.2.3 (linux/amd64) orch' })
  t.equal(r.status, 200, r.text)
  let m = mf(r.json)
  t.ok(m['my-tool/Update'], `Update entry for my-tool: ${Object.keys(m)}`)
  t.equal(m['my-tool/Update']?.apiVersion, 'v1')
  t.same(m['my-tool/Update']?.fieldsV1, { 'f:data': { 'f:x': {} } })
  t.notOk(m['m2/Apply'], 'm2 lost its only field')
  // m2 re-applies its old value -> conflict with the Update manager
  r = await apply(cm('ssa1'), configMap('ssa1', { x: '9' }), 'fieldManager=m2')
  t.equal(r.status, 409)
  t.equal(r.json?.message, 'Apply failed with 1 conflict: conflict with "my-tool" using v1: .data.x')
  t.same(r.json?.details?.causes?.[0], { reason: 'FieldManagerConflict', message: 'conflict with "my-tool" using v1', field: '.data.x' })

  // fieldManager query wins over User-Agent
  const o2 = await get(cm('ssa1'))
  o2.data.w = '1'
  r = await s.request('PUT', `${cm('ssa1')}?fieldManager=explicit`, o2, { 'user-agent': 'my-tool/1.2.3' })
  t.equal(r.status, 200)
  t.same(mf(r.json)['explicit/Update']?.fieldsV1, { 'f:data': { 'f:w': {} } })

  // reset
  const o3 = await get(cm('ssa1'))
  o3.metadata.managedFields = [{}]
  r = await s.request('PUT', cm('ssa1'), o3)
  t.equal(r.status, 200, r.text)
  const after = await get(cm('ssa1'))
  t.same(after.metadata.managedFields ?? [], [], 'managedFields cleared')
  // first apply on the untracked object: existing fields go to before-first-apply
  r = await apply(cm('ssa1'), configMap('ssa1', { x: '99' }), 'fieldManager=late')
  t.equal(r.status, 409, r.text)
  t.match(r.json?.message ?? '', /conflict with "before-first-apply" using v1: \.data\.x/)
})

// ---------------------------------------------------------------- dry run

t.test('dryRun=All on create, update, patch, apply, delete, deletecollection stores nothing', async (t) => {
  let r = await s.request('POST', `${NS}/configmaps?dryRun=All`, configMap('dry1', { a: '1' }, { labels: { dry: 'yes' } }))
  t.equal(r.status, 201, r.text)
  t.equal(r.json?.metadata?.name, 'dry1')
  t.ok(r.json?.metadata?.uid, 'uid filled')
  t.ok(r.json?.metadata?.creationTimestamp, 'creationTimestamp filled')
  t.same(r.json?.data, { a: '1' })
  t.equal((await get(cm('dry1'))).status, 404, 'not stored')
  r = await s.request('POST', `${NS}/configmaps?dryRun=All`, { ...configMap('', { a: '1' }), metadata: { generateName: 'dry-' } })
  t.equal(r.status, 201)
  t.match(r.json?.metadata?.name ?? '', /^dry-.+/)

  await create(`${NS}/configmaps`, configMap('dry2', { a: '1' }, { labels: { dry: 'yes' } }))
  await create(`${NS}/configmaps`, configMap('dry3', { a: '1' }, { labels: { dry: 'yes' } }))
  const orig = await get(cm('dry2'))
  const rv = orig.metadata.resourceVersion

  const upd = structuredClone(orig); upd.data.a = '2'
  r = await s.request('PUT', `${cm('dry2')}?dryRun=All`, upd)
  t.equal(r.status, 200, r.text)
  t.equal(r.json?.data?.a, '2', 'update response shows the change')
  r = await patch(`${cm('dry2')}?dryRun=All`, MERGE, { data: { b: '3' } })
  t.equal(r.status, 200, r.text)
  t.same(r.json?.data, { a: '1', b: '3' })
  r = await patch(`${cm('dry2')}?dryRun=All`, JSONP, [{ op: 'add', path: '/data/c', value: '4' }])
  t.equal(r.status, 200)
  t.equal(r.json?.data?.c, '4')
  r = await apply(cm('dry2'), configMap('dry2', { a: '5' }), 'fieldManager=dry&dryRun=All&force=true')
  t.equal(r.status, 200, r.text)
  t.equal(r.json?.data?.a, '5')
  r = await apply(cm('dry-apply-new'), configMap('dry-apply-new', { a: '5' }), 'fieldManager=dry&dryRun=All')
  t.equal(r.status, 201, r.text)
  t.equal((await get(cm('dry-apply-new'))).status, 404, 'apply create not stored')

  let g = await get(cm('dry2'))
  t.same(g.data, { a: '1' }, 'data untouched')
  t.equal(g.metadata.resourceVersion, rv, 'resourceVersion untouched')

  r = await s.request('DELETE', `${cm('dry2')}?dryRun=All`)
  t.equal(r.status, 200, r.text)
  t.equal((await get(cm('dry2'))).metadata?.name, 'dry2', 'still there after dry-run delete')
  r = await s.request('DELETE', cm('dry2'), { kind: 'DeleteOptions', apiVersion: 'v1', dryRun: ['All'] })
  t.equal(r.status, 200, `dryRun in DeleteOptions: ${r.text}`)
  t.equal((await get(cm('dry2'))).metadata?.name, 'dry2')

  r = await s.request('DELETE', `${NS}/configmaps?dryRun=All&labelSelector=dry%3Dyes`)
  t.equal(r.status, 200, r.text)
  t.same((r.json?.items ?? []).map((i: any) => i.metadata.name).sort(), ['dry2', 'dry3'], 'deletecollection answer lists what would go')
  const list = await get(`${NS}/configmaps?labelSelector=dry%3Dyes`)
  t.same(list.items.map((i: any) => i.metadata.name).sort(), ['dry2', 'dry3'], 'nothing deleted')

  // empty dryRun is unset
  r = await s.request('POST', `${NS}/configmaps?dryRun=`, configMap('dry-empty', { a: '1' }))
  t.equal(r.status, 201)
  t.equal((await get(cm('dry-empty'))).metadata?.name, 'dry-empty', 'empty dryRun persists')

  for (const [m, p, b] of [['POST', `${NS}/configmaps?dryRun=Bogus`, configMap('dry-bogus', {})], ['PUT', `${cm('dry3')}?dryRun=Bogus`, await get(cm('dry3'))], ['DELETE', `${cm('dry3')}?dryRun=Bogus`, undefined]] as const) {
    r = await s.request(m, p, b)
    t.equal(r.status, 422, `${m} dryRun=Bogus: ${r.text}`)
  }
  r = await patch(`${cm('dry3')}?dryRun=Bogus`, MERGE, { data: { z: '1' } })
  t.equal(r.status, 422, `PATCH dryRun=Bogus: ${r.text}`)
  t.equal((await get(cm('dry-bogus'))).status, 404)
  g = await get(cm('dry3'))
  t.equal(g.data.z, undefined)
})

// ---------------------------------------------------------------- field validation

const dupCm = (name: string) => `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}"},"data":{"a":"1","a":"2"},"bogus":1}`

t.test('field validation on create', async (t) => {
  // Deployment with two unknown fields
  const body = deployment('fv-dep', [{ name: 'app', image: 'nginx:1', y: 1 }]) as any
  body.spec.x = 'unknown'
  let r = await s.request('POST', `${APPS}/deployments?fieldValidation=Strict`, body)
  t.equal(r.status, 400, r.text)
  t.equal(r.json?.reason, 'BadRequest')
  t.match(r.json?.message ?? '', /unknown field "spec\.x"/)
  t.match(r.json?.message ?? '', /unknown field "spec\.template\.spec\.containers\[0\]\.y"/)
  t.match(r.json?.message ?? '', /strict decoding error/)
  t.equal((await get(dep('fv-dep'))).status, 404, 'strict: not created')

  r = await s.request('POST', `${APPS}/deployments?fieldValidation=Warn`, body)
  t.equal(r.status, 201, r.text)
  t.same(warnings(r).sort(), ['299 - "unknown field \\"spec.template.spec.containers[0].y\\""', '299 - "unknown field \\"spec.x\\""'])
  let d = await get(dep('fv-dep'))
  t.equal(d.spec.x, undefined, 'unknown field not stored')
  t.equal(d.spec.template.spec.containers[0].y, undefined)

  body.metadata.name = 'fv-dep2'
  r = await s.request('POST', `${APPS}/deployments`, body)
  t.equal(r.status, 201)
  t.equal(warnings(r).length, 2, 'Warn is the default')

  body.metadata.name = 'fv-dep3'
  r = await s.request('POST', `${APPS}/deployments?fieldValidation=Ignore`, body)
  t.equal(r.status, 201)
  t.same(warnings(r), [], 'Ignore is silent')
  d = await get(dep('fv-dep3'))
  t.equal(d.spec.x, undefined)

  // duplicate field + unknown
  r = await s.request('POST', `${NS}/configmaps?fieldValidation=Strict`, dupCm('fv-cm'))
  t.equal(r.status, 400, r.text)
  t.match(r.json?.message ?? '', /duplicate field "data\.a"/)
  t.match(r.json?.message ?? '', /unknown field "bogus"/)
  r = await s.request('POST', `${NS}/configmaps?fieldValidation=Warn`, dupCm('fv-cm'))
  t.equal(r.status, 201, r.text)
  t.same(warnings(r).sort(), ['299 - "duplicate field \\"data.a\\""', '299 - "unknown field \\"bogus\\""'])
  t.equal((await get(cm('fv-cm'))).bogus, undefined)
  r = await s.request('POST', `${NS}/configmaps?fieldValidation=Ignore`, dupCm('fv-cm2'))
  t.equal(r.status, 201)
  t.same(warnings(r), [])
  r = await s.request('POST', `${NS}/configmaps?fieldValidation=Nope`, configMap('fv-bad', {}))
  t.equal(r.status, 400, 'unknown fieldValidation value')
})

t.test('field validation on update', async (t) => {
  const d = await get(dep('fv-dep'))
  d.spec.x = 1
  d.spec.template.spec.containers[0].y = 2
  let r = await s.request('PUT', `${dep('fv-dep')}?fieldValidation=Strict`, d)
  t.equal(r.status, 400, r.text)
  t.match(r.json?.message ?? '', /unknown field "spec\.x"/)
  t.match(r.json?.message ?? '', /unknown field "spec\.template\.spec\.containers\[0\]\.y"/)
  r = await s.request('PUT', `${dep('fv-dep')}?fieldValidation=Warn`, d)
  t.equal(r.status, 200, r.text)
  t.same(warnings(r).sort(), ['299 - "unknown field \\"spec.template.spec.containers[0].y\\""', '299 - "unknown field \\"spec.x\\""'])
  const stored = await get(dep('fv-dep'))
  t.equal(stored.spec.x, undefined)
  delete d.metadata.resourceVersion
  r = await s.request('PUT', `${dep('fv-dep')}?fieldValidation=Ignore`, d)
  t.equal(r.status, 200, r.text)
  t.same(warnings(r), [])
  // duplicate on update
  const c = await get(cm('fv-cm'))
  const raw = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fv-cm","resourceVersion":"${c.metadata.resourceVersion}"},"data":{"a":"1","a":"3"}}`
  r = await s.request('PUT', `${cm('fv-cm')}?fieldValidation=Strict`, raw)
  t.equal(r.status, 400, r.text)
  t.match(r.json?.message ?? '', /duplicate field "data\.a"/)
  r = await s.request('PUT', `${cm('fv-cm')}?fieldValidation=Warn`, raw)
  t.equal(r.status, 200, r.text)
  t.same(warnings(r), ['299 - "duplicate field \\"data.a\\""'])
})

t.test('field validation on patch', async (t) => {
  for (const [ct, body] of [
    [MERGE, { spec: { x: 1, template: { spec: { nodeName2: 'n' } } } }],
    [SMP, { spec: { x: 1, template: { spec: { nodeName2: 'n' } } } }],
    [JSONP, [{ op: 'add', path: '/spec/x', value: 1 }, { op: 'add', path: '/spec/template/spec/nodeName2', value: 'n' }]],
  ] as const) {
    let r = await patch(`${dep('fv-dep')}?fieldValidation=Strict`, ct, body)
    t.equal(r.status, 400, `${ct} Strict: ${r.text}`)
    t.match(r.json?.message ?? '', /unknown field "spec\.x"/, `${ct} strict lists spec.x`)
    t.match(r.json?.message ?? '', /unknown field "spec\.template\.spec\.nodeName2"/, `${ct} strict lists nodeName2`)
    r = await patch(`${dep('fv-dep')}?fieldValidation=Warn`, ct, body)
    t.equal(r.status, 200, `${ct} Warn: ${r.text}`)
    t.same(warnings(r).sort(), ['299 - "unknown field \\"spec.template.spec.nodeName2\\""', '299 - "unknown field \\"spec.x\\""'], `${ct} warnings`)
    r = await patch(`${dep('fv-dep')}?fieldValidation=Ignore`, ct, body)
    t.equal(r.status, 200, `${ct} Ignore: ${r.text}`)
    t.same(warnings(r), [], `${ct} Ignore silent`)
    const d = await get(dep('fv-dep'))
    t.equal(d.spec.x, undefined, `${ct}: unknown field not stored`)
    t.equal(d.spec.template.spec.nodeName2, undefined)
  }
  // duplicate in a merge patch body
  let r = await patch(`${cm('fv-cm')}?fieldValidation=Strict`, MERGE, '{"data":{"b":"1","b":"2"}}')
  t.equal(r.status, 400, r.text)
  t.match(r.json?.message ?? '', /duplicate field "data\.b"/)
  r = await patch(`${cm('fv-cm')}?fieldValidation=Warn`, MERGE, '{"data":{"b":"1","b":"2"}}')
  t.equal(r.status, 200, r.text)
  t.same(warnings(r), ['299 - "duplicate field \\"data.b\\""'])
})

// ---------------------------------------------------------------- extras

t.test('extras: no-op apply, apply version mismatch, $retainKeys, $setElementOrder, managedFields via JSON patch', async (t) => {
  let r = await apply(cm('extra'), configMap('extra', { a: '1' }), 'fieldManager=e1')
  t.equal(r.status, 201, r.text)
  const rv = r.json?.metadata?.resourceVersion
  const time = mf(r.json)['e1/Apply']?.time
  r = await apply(cm('extra'), configMap('extra', { a: '1' }), 'fieldManager=e1')
  t.equal(r.status, 200)
  t.equal(r.json?.metadata?.resourceVersion, rv, 'no-op apply does not bump resourceVersion')
  t.equal(mf(r.json)['e1/Apply']?.time, time, 'no-op apply keeps the manager time')

  r = await apply(dep('smp-dep'), { apiVersion: 'apps/v1beta1', kind: 'Deployment', metadata: { name: 'smp-dep' } }, 'fieldManager=e1')
  t.equal(r.status, 400, r.text)
  t.equal(r.json?.message, 'Incorrect version specified in apply patch. Specified patch version: apps/v1beta1, expected: apps/v1')

  // $retainKeys on Deployment.spec.strategy: RollingUpdate -> Recreate drops rollingUpdate
  r = await patch(dep('smp-dep'), SMP, { spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 2 } } } })
  t.equal(r.status, 200, r.text)
  r = await patch(dep('smp-dep'), SMP, { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } })
  t.equal(r.status, 200, r.text)
  t.same(r.json?.spec?.strategy, { type: 'Recreate' }, 'rollingUpdate cleared by $retainKeys')

  // $setElementOrder on env
  await patch(dep('smp-dep'), SMP, { spec: { template: { spec: { containers: [{ name: 'only', image: 'x:1', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }] }] } } } })
  r = await patch(dep('smp-dep'), SMP, { spec: { template: { spec: { containers: [{ name: 'only', '$setElementOrder/env': [{ name: 'C' }, { name: 'B' }, { name: 'A' }], env: [{ name: 'C', value: '3' }] }] } } } })
  t.equal(r.status, 200, r.text)
  t.same(r.json?.spec?.template?.spec?.containers?.[0]?.env?.map((e: any) => e.name), ['C', 'B', 'A'], '$setElementOrder order honoured')

  // $patch: merge is rejected
  r = await patch(cm('extra'), SMP, { data: { $patch: 'merge', b: '2' } })
  t.ok(r.status >= 400, `explicit $patch merge rejected: ${r.status}`)

  // explicit managedFields through a JSON patch replace the stored entries
  const o = await get(cm('extra'))
  const entries = [{ manager: 'migrated', operation: 'Apply', apiVersion: 'v1', time: '2025-01-01T10:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } } }]
  r = await patch(cm('extra'), JSONP, [{ op: 'test', path: '/metadata/resourceVersion', value: o.metadata.resourceVersion }, { op: 'replace', path: '/metadata/managedFields', value: entries }])
  t.equal(r.status, 200, r.text)
  const m = mf(await get(cm('extra')))
  t.same(Object.keys(m), ['migrated/Apply'], 'entries replaced')
  t.same(m['migrated/Apply']?.fieldsV1, { 'f:data': { 'f:a': {} } })
  // and the migrated owner now conflicts
  r = await apply(cm('extra'), configMap('extra', { a: '2' }), 'fieldManager=e2')
  t.equal(r.status, 409)
  t.equal(r.json?.message, 'Apply failed with 1 conflict: conflict with "migrated": .data.a')

  // apply through deployments/status: the manager phrase carries the subresource for Update entries
  r = await patch(`${dep('st')}/status?fieldManager=stat`, MERGE, { status: { replicas: 6 } })
  t.equal(r.status, 200, r.text)
  t.equal(mf(r.json)['stat/Update/status']?.subresource, 'status')
  r = await apply(`${dep('st')}/status`, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'st' }, status: { replicas: 8 } }, 'fieldManager=stat2')
  t.equal(r.status, 409, r.text)
  t.equal(r.json?.message, 'Apply failed with 1 conflict: conflict with "stat" with subresource "status" using apps/v1: .status.replicas')
})

t.test('server-side apply through /status records its owner with the subresource: conflicts, force, removal', async (t) => {
  const pod = `${NS}/pods/ssa-status`
  let r = await s.request('POST', `${NS}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'ssa-status' }, spec: { containers: [{ name: 'c', image: 'i' }] } })
  t.equal(r.status, 201, r.text)
  const podApply = (status: any) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'ssa-status' }, status })
  r = await apply(`${pod}/status`, podApply({ phase: 'Running', message: 'hi' }), 'fieldManager=kl&force=true')
  t.equal(r.status, 200, r.text)
  const e = mf(r.json)['kl/Apply/status']
  t.ok(e, `an Apply entry for kl with subresource status: ${Object.keys(mf(r.json))}`)
  t.same(e?.fieldsV1, { 'f:status': { 'f:message': {}, 'f:phase': {} } }, 'it owns the applied status fields only')
  t.equal(e?.subresource, 'status')
  t.same(Object.keys(mf(await get(pod))).sort(), Object.keys(mf(r.json)).sort(), 'stored as answered')
  // another applier changing an owned field without force conflicts with the owner and its subresource
  r = await apply(`${pod}/status`, podApply({ phase: 'Failed' }), 'fieldManager=other')
  t.equal(r.status, 409, r.text)
  t.equal(r.json?.message, 'Apply failed with 1 conflict: conflict with "kl" with subresource "status": .status.phase')
  t.equal((await get(pod)).status.phase, 'Running', 'the refused apply changed nothing')
  // a field the owner no longer applies is removed
  r = await apply(`${pod}/status`, podApply({ phase: 'Running' }), 'fieldManager=kl')
  t.equal(r.status, 200, r.text)
  t.equal(r.json?.status?.message, undefined, 'status.message removed with its only owner')
  t.same(mf(r.json)['kl/Apply/status']?.fieldsV1, { 'f:status': { 'f:phase': {} } })
  // spec sent through /status is neither stored nor owned
  r = await apply(`${pod}/status`, { ...podApply({ phase: 'Running' }), spec: { activeDeadlineSeconds: 5 } }, 'fieldManager=kl')
  t.equal(r.status, 200, r.text)
  t.equal(r.json?.spec?.activeDeadlineSeconds, undefined, 'spec not written through /status')
  t.equal(JSON.stringify(mf(r.json)['kl/Apply/status']?.fieldsV1).includes('f:spec'), false, 'spec not owned by the status applier')
})

t.test('a body or patch that leaves the object without the name of the URL is 400 (upstream checkName), never a 500', async (t) => {
  let r = await s.request('POST', `${NS}/configmaps`, configMap('noname', { a: '1' }))
  t.equal(r.status, 201, r.text)
  r = await s.request('PUT', cm('noname'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: {}, data: { a: '2' } })
  t.equal(r.status, 400, r.text)
  t.equal(r.json?.message, 'the name of the object () does not match the name on the URL (noname)')
  r = await patch(cm('noname'), JSONP, [{ op: 'replace', path: '/metadata', value: null }])
  t.equal(r.status, 400, r.text)
  t.equal(r.json?.message, 'the name of the object () does not match the name on the URL (noname)')
  r = await patch(cm('noname'), JSONP, [{ op: 'remove', path: '/metadata/name' }])
  t.equal(r.status, 400, r.text)
  r = await patch(cm('noname'), MERGE, { metadata: { name: null } })
  t.equal(r.status, 400, r.text)
  r = await patch(dep('nodep'), JSONP, [{ op: 'replace', path: '/metadata', value: null }])
  t.equal(r.status, 404, 'a missing object stays 404')
  t.equal((await get(cm('noname'))).data.a, '1', 'nothing changed')
})

t.test('a strategic merge patch upstream answers with a 500 (unknown $patch, wrong type, missing merge key) is 400 here and changes nothing', async (t) => {
  let r = await s.request('POST', `${NS}/configmaps`, configMap('smpbad', { a: '1' }))
  t.equal(r.status, 201, r.text)
  const rv = r.json.metadata.resourceVersion
  r = await patch(cm('smpbad'), SMP, { data: { $patch: 'x' } })
  t.equal(r.status, 400, r.text)
  t.equal(r.json?.reason, 'BadRequest')
  t.equal(r.json?.message, 'unknown patch type: x in map: map[$patch:x]')
  r = await patch(cm('smpbad'), SMP, { '$setElementOrder/data': [1] })
  t.equal(r.status, 400, r.text)
  t.equal(r.json?.message, 'expected a []interface {}, but received a map[string]interface {}')
  r = await s.request('POST', `${NS}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'smpbad' }, spec: { automountServiceAccountToken: false, containers: [{ name: 'app', image: 'x' }] } })
  t.equal(r.status, 201, r.text)
  r = await patch(`${NS}/pods/smpbad`, SMP, { spec: { containers: [{ image: 'y' }] } })
  t.equal(r.status, 400, r.text)
  t.equal(r.json?.message, 'map: map[image:y] does not contain declared merge key: name')
  t.equal((await get(`${NS}/pods/smpbad`)).spec.containers[0].image, 'x', 'the pod is unchanged')
  t.equal((await get(cm('smpbad'))).metadata.resourceVersion, rv, 'the ConfigMap is unchanged')
})

t.test('the scale sub-resource: dryRun stores nothing; the writer owns spec.replicas under subresource scale', async (t) => {
  let r = await s.request('POST', `${APPS}/deployments`, deployment('sc', [{ name: 'c', image: 'i' }], 2))
  t.equal(r.status, 201, r.text)
  const rv = r.json.metadata.resourceVersion
  r = await patch(`${dep('sc')}/scale?dryRun=All`, MERGE, { spec: { replicas: 7 } })
  t.equal(r.status, 200, r.text)
  t.equal(r.json?.spec?.replicas, 7, 'the dry run answers the scale it would store')
  let d = await get(dep('sc'))
  t.equal(d.spec.replicas, 2, 'PATCH with dryRun changed nothing')
  t.equal(d.metadata.resourceVersion, rv)
  r = await s.request('PUT', `${dep('sc')}/scale?dryRun=All`, { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'sc' }, spec: { replicas: 9 } })
  t.equal(r.status, 200, r.text)
  t.equal((await get(dep('sc'))).spec.replicas, 2, 'PUT with dryRun changed nothing')
  r = await patch(`${dep('sc')}/scale?dryRun=Bogus`, MERGE, { spec: { replicas: 7 } })
  t.equal(r.status, 422, 'a bad dryRun value is 422 (PatchOptions invalid)')
  r = await patch(`${dep('sc')}/scale?fieldManager=scaler`, MERGE, { spec: { replicas: 4 } })
  t.equal(r.status, 200, r.text)
  d = await get(dep('sc'))
  t.equal(d.spec.replicas, 4)
  t.same(mf(d)['scaler/Update/scale']?.fieldsV1, { 'f:spec': { 'f:replicas': {} } }, 'the scaler owns spec.replicas')
  t.equal(d.metadata.generation, 2, 'the spec change counts as a generation')
})

t.test('a JSON patch that does not apply is 422 with the reason as its cause (kubectl prints it)', async (t) => {
  let r = await s.request('POST', `${NS}/configmaps`, configMap('jp-cause', { a: '1' }))
  t.equal(r.status, 201, r.text)
  r = await patch(cm('jp-cause'), JSONP, [{ op: 'remove', path: '/data/nope' }])
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.message, 'the server rejected our request due to an error in our request')
  t.same(r.json?.details?.causes, [{ reason: 'UnexpectedServerResponse', message: "error in remove for path: '/data/nope': Unable to remove nonexistent key: nope: missing value" }])
  r = await patch(cm('jp-cause'), JSONP, [{ op: 'remove', path: '/spec/nope' }])
  t.equal(r.status, 422, r.text)
  t.same(r.json?.details?.causes, [{ reason: 'UnexpectedServerResponse', message: 'remove operation does not apply: doc is missing path: "/spec/nope": missing value' }])
  r = await patch(cm('jp-cause'), JSONP, [{ op: 'test', path: '/data/a', value: '2' }])
  t.equal(r.status, 422, r.text)
  t.same(r.json?.details?.causes, [{ reason: 'UnexpectedServerResponse', message: 'testing value /data/a failed: test failed' }])
})

t.test('server-side apply with another kind in the body is 400 and changes nothing (the stored kind stays)', async (t) => {
  let r = await apply(cm('km'), configMap('km', { a: '1' }), 'fieldManager=x')
  t.equal(r.status, 201, r.text)
  r = await apply(cm('km'), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'km' }, type: 'Opaque', data: { z: 'eg==' } }, 'fieldManager=x')
  t.equal(r.status, 400, r.text)
  t.equal(r.json?.message, 'invalid object type: /v1, Kind=Secret')
  r = await apply(dep('smp-dep'), { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'smp-dep' } }, 'fieldManager=x')
  t.equal(r.status, 400, r.text)
  t.equal(r.json?.message, 'invalid object type: apps/v1, Kind=StatefulSet')
  const got = await get(cm('km'))
  t.equal(got.kind, 'ConfigMap')
  t.same(got.data, { a: '1' })
  const list = await s.request('GET', `${NS}/configmaps`)
  t.ok(list.json.items.every((i: any) => i.kind === undefined || i.kind === 'ConfigMap'), 'the list holds ConfigMaps only')
})

t.test('apply through deployments/status owns neither spec nor metadata.labels (its reset fields): no false conflict later', async (t) => {
  let r = await s.request('POST', `${APPS}/deployments`, deployment('sl', [{ name: 'c', image: 'i' }]))
  t.equal(r.status, 201, r.text)
  r = await apply(`${dep('sl')}/status`, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'sl', labels: { st: 'x' } }, status: { replicas: 1 } }, 'fieldManager=ctrl&force=true')
  t.equal(r.status, 200, r.text)
  t.same(mf(r.json)['ctrl/Apply/status']?.fieldsV1, { 'f:status': { 'f:replicas': {} } }, 'only the status field is owned')
  r = await apply(dep('sl'), { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'sl', labels: { st: 'y' } } }, 'fieldManager=user')
  t.equal(r.status, 200, `no conflict with the status applier: ${r.text}`)
  t.equal(r.json?.metadata?.labels?.st, 'y')
})

t.test('a __proto__ key (legal in a ConfigMap) survives every patch type and apply, and can be added by them', async (t) => {
  // Raw JSON bodies: a JavaScript object literal would not carry the key as data.
  const body = (name: string, data: string) => `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}"},"data":${data}}`
  let r = await s.request('POST', `${NS}/configmaps`, body('proto', '{"__proto__":"x","a":"b"}'), { 'content-type': 'application/json' })
  t.equal(r.status, 201, r.text)
  const data = async (name: string) => JSON.stringify((await s.request('GET', cm(name))).json.data)
  for (const [type, key] of [[SMP, 's'], [MERGE, 'm']]) {
    r = await patch(cm('proto'), type, `{"data":{"${key}":"1"}}`)
    t.equal(r.status, 200, r.text)
  }
  t.equal(await data('proto'), '{"__proto__":"x","a":"b","s":"1","m":"1"}', 'kept by a strategic merge patch and a merge patch of other keys')
  r = await s.request('POST', `${NS}/configmaps`, body('proto2', '{"a":"b"}'), { 'content-type': 'application/json' })
  r = await patch(cm('proto2'), SMP, '{"data":{"__proto__":"s"}}')
  t.equal(await data('proto2'), '{"a":"b","__proto__":"s"}', 'added by a strategic merge patch')
  r = await patch(cm('proto2'), MERGE, '{"data":{"__proto__":"m"}}')
  t.equal(await data('proto2'), '{"a":"b","__proto__":"m"}', 'changed by a merge patch')
  r = await apply(cm('proto3'), body('proto3', '{"__proto__":"w","k":"v"}'), 'fieldManager=m')
  t.equal(r.status, 201, r.text)
  t.equal(await data('proto3'), '{"__proto__":"w","k":"v"}', 'created by an apply')
  t.same(r.json.metadata.managedFields[0].fieldsV1, { 'f:data': { 'f:__proto__': {}, 'f:k': {} } }, 'and owned by it')
  r = await apply(cm('proto3'), body('proto3', '{"__proto__":"w2"}'), 'fieldManager=m')
  t.equal(r.status, 200, r.text)
  t.equal(await data('proto3'), '{"__proto__":"w2"}', 'an apply that drops k keeps the key it still applies')
})
