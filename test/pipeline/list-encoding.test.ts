// List encoding from stored JSON: Table rows built item by item without managedFields (the same Table as from the
// parsed objects), and the slices that give the event loop back during a large list.
import t from 'tap'
import { Registry } from '../../src/registry/index.js'
import type { Obj } from '../../src/registry/define.js'
import { buildTable, parseWithoutManagedFields, TableListBuilder } from '../../src/pipeline/table.js'
import { encodeList, encodeListInSlices, inSlices, SLICE_MS } from '../../src/pipeline/encode.js'

const registry = new Registry()
const pods = registry.lookup('', 'v1', 'pods')!

const managed = [{ manager: 'kubectl', operation: 'Update', apiVersion: 'v1', time: '2025-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'k:{"name":"a"}': {} } } }]

function pod(name: string, metadata: Obj = {}): Obj {
  return {
    kind: 'Pod', apiVersion: 'v1',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, creationTimestamp: '2025-01-01T00:00:00Z', labels: { app: 'x' }, ...metadata },
    spec: { nodeName: 'n1', containers: [{ name: 'a', image: 'nginx' }, { name: 'b', image: 'busybox' }] },
    status: { phase: 'Running', podIP: '10.0.0.1', containerStatuses: [{ name: 'a', ready: true, restartCount: 2, state: { running: {} } }, { name: 'b', ready: false, restartCount: 0, state: { waiting: { reason: 'CrashLoopBackOff' } } }] },
  }
}

t.test('parseWithoutManagedFields: the parsed object without metadata.managedFields, wherever the member is', async (t) => {
  const expect = (o: Obj): Obj => { const c = structuredClone(o); delete c.metadata.managedFields; return c }
  const cases: Obj[] = [
    pod('middle', { managedFields: managed, annotations: { a: 'b' } }),
    { kind: 'Pod', apiVersion: 'v1', metadata: { managedFields: managed, name: 'first' } },
    { kind: 'Pod', apiVersion: 'v1', metadata: { managedFields: managed } },
    { kind: 'Pod', apiVersion: 'v1', metadata: { name: 'last', managedFields: managed } },
    { metadata: { name: 'metadata first', managedFields: [] }, kind: 'Pod' },
    pod('none'),
    { kind: 'Pod', apiVersion: 'v1', metadata: { name: 'x', annotations: { managedFields: 'an annotation, not the member' } }, spec: { managedFields: 1 } },
  ]
  for (const o of cases) t.strictSame(parseWithoutManagedFields(Buffer.from(JSON.stringify(o))), expect(o), JSON.stringify(o).slice(0, 60))
  // Not compact JSON, or no object metadata: parsed whole, the member deleted.
  t.strictSame(parseWithoutManagedFields(Buffer.from(JSON.stringify(pod('ws', { managedFields: managed }), null, 1))), expect(pod('ws', { managedFields: managed })))
  t.strictSame(parseWithoutManagedFields(Buffer.from('{"kind":"Pod","metadata":[1]}')), { kind: 'Pod', metadata: [1] })
  t.strictSame(parseWithoutManagedFields(JSON.stringify(pod('string', { managedFields: managed }))), expect(pod('string', { managedFields: managed })), 'a string item')
  t.throws(() => parseWithoutManagedFields(Buffer.from('{"kind":"Pod","metadata":{"managedFields":[],"name":"x"')), SyntaxError, 'malformed JSON fails as JSON.parse does')
})

t.test('TableListBuilder gives the Table buildTable gives for the parsed objects, for every includeObject', async (t) => {
  const objects = [pod('a', { managedFields: managed }), pod('b'), pod('c', { managedFields: managed, deletionTimestamp: '2025-01-01T00:00:01Z' })]
  const items = objects.map((o) => Buffer.from(JSON.stringify(o)))
  const meta = { resourceVersion: '5', continue: 'c' }
  for (const include of [undefined, 'None', 'Metadata', 'Object']) {
    const query = new URLSearchParams(include ? { includeObject: include } : {})
    const tb = new TableListBuilder(pods, meta, query, 'meta.k8s.io/v1')
    tb.add(items, 0, 2)
    tb.add(items, 2, 3)
    const got = tb.finish()
    const want = buildTable(pods, objects.map((o) => structuredClone(o)), meta, query, 'meta.k8s.io/v1')
    // Age cells come from the clock of each call: compare the rest, and the Age cells with each other.
    const age = (want.columnDefinitions as Obj[]).findIndex((c) => c.name === 'Age')
    const strip = (x: Obj) => ({ ...x, rows: x.rows.map((r: Obj) => ({ ...r, cells: r.cells.filter((_: unknown, i: number) => i !== age) })) })
    t.equal(JSON.stringify(strip(got)), JSON.stringify(strip(want)), `includeObject=${include}`)
    if (include === 'Metadata' || include === undefined) t.notOk(JSON.stringify(got).includes('managedFields'), 'no managedFields in the rows')
    if (include === 'Object') t.ok(JSON.stringify(got).includes('managedFields'), 'whole objects keep managedFields')
    t.equal(tb.finishJson(false), JSON.stringify(got), 'the text is JSON.stringify of the Table')
    t.equal(tb.finishJson(true), JSON.stringify(got, null, 2) + '\n', 'pretty: indented by two, with a newline')
  }
  t.throws(() => new TableListBuilder(pods, {}, new URLSearchParams({ includeObject: 'All' }), 'meta.k8s.io/v1'), /includeObject: Unsupported value/)
})

t.test('list encoding in slices gives the event loop back, and stops when the client is gone', async (t) => {
  const busy = () => { const end = performance.now() + SLICE_MS + 1; while (performance.now() < end) { /* a slice that takes longer than SLICE_MS */ } }
  const order: string[] = []
  setImmediate(() => order.push('other work'))
  let slices = 0
  t.equal(await inSlices(64 * 3, () => { busy(); order.push(`slice ${++slices}`) }), true)
  t.same(order, ['slice 1', 'other work', 'slice 2', 'slice 3'], 'other work ran between slices')
  let gone = false
  let done = 0
  setImmediate(() => { gone = true })
  t.equal(await inSlices(64 * 3, () => { busy(); done++ }, () => gone), false, 'aborted')
  t.equal(done, 1, 'no slice after the client went')
  // A small list is encoded in one go (no turn of the event loop); the bytes are encodeList's either way.
  const items = Array.from({ length: 200 }, (_, i) => Buffer.from(JSON.stringify(pod(`p${i}`, { managedFields: managed }))))
  for (const mt of ['protobuf', 'cbor', 'json'] as const) {
    const a = await encodeListInSlices('v1', 'PodList', { resourceVersion: '1' }, items, mt, false)
    const b = encodeList('v1', 'PodList', { resourceVersion: '1' }, items, mt, false)
    t.ok(a !== null && Buffer.from(a).equals(Buffer.from(b)), `${mt}: same bytes`)
  }
})
