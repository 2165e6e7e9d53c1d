// Black-box tests of error answers over real HTTP: whole Status bodies compared field by field (errors-and-status
// reference), and after every failed request a check that nothing changed.
import t from 'tap'
import { startServer, type TestServer, type Reply } from '../helpers/server.js'

let s: TestServer

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

type Obj = Record<string, any>

const NS = 'errs'
const CM = `/api/v1/namespaces/${NS}/configmaps`
const DEP = `/apis/apps/v1/namespaces/${NS}/deployments`

const SUBDOMAIN_MSG = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
const LABEL_VALUE_MSG = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"

/** A failure Status as the reference shapes it (details omitted when undefined). */
function failure(code: number, reason: string, message: string, details?: Obj): Obj {
  const st: Obj = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason }
  if (details !== undefined) st.details = details
  st.code = code
  return st
}

function isStatus(t: Tap, r: Reply, code: number): void {
  t.equal(r.status, code, `HTTP ${code}`)
  t.match(String(r.headers['content-type']), /^application\/json/, 'a JSON Status')
}
type Tap = import('tap').Test

/** The state of the test namespace's configmaps and deployments: name → resourceVersion, plus the list versions. */
async function state(): Promise<Obj> {
  const out: Obj = {}
  for (const [k, p] of [['cm', CM], ['dep', DEP]] as const) {
    const l = await s.request('GET', p)
    for (const it of l.json.items) out[`${k}/${it.metadata.name}`] = it.metadata.resourceVersion
  }
  const ns = await s.request('GET', '/api/v1/namespaces')
  out.namespaces = ns.json.items.map((x: Obj) => `${x.metadata.name}@${x.metadata.resourceVersion}`).sort()
  return out
}

/** Runs an error request and verifies that the stored state is the same afterwards. */
async function unchanged(t: { same: (a: unknown, b: unknown, m: string) => unknown }, fn: () => Promise<Reply>): Promise<Reply> {
  const before = await state()
  const r = await fn()
  const after = await state()
  t.same(after, before, 'nothing changed')
  return r
}

let cm: Obj // errs/cm-a as created
let dep: Obj // errs/dep-a as created

t.test('setup', async (t) => {
  t.equal((await s.request('POST', '/api/v1/namespaces', { metadata: { name: NS } })).status, 201)
  const c = await s.request('POST', CM, { metadata: { name: 'cm-a', labels: { app: 'a' } }, data: { k: 'v' } })
  t.equal(c.status, 201)
  cm = c.json
  const d = await s.request('POST', DEP, { metadata: { name: 'dep-a' }, spec: { selector: { matchLabels: { app: 'a' } }, template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'registry.example/a:1' }] } } } })
  t.equal(d.status, 201)
  dep = d.json
})

t.test('404 NotFound for a missing object (GET, PUT, DELETE)', async (t) => {
  const want = failure(404, 'NotFound', 'configmaps "x" not found', { name: 'x', kind: 'configmaps' })
  for (const [m, body] of [['GET', undefined], ['PUT', { metadata: { name: 'x' } }], ['DELETE', undefined]] as const) {
    const r = await unchanged(t, () => s.request(m, `${CM}/x`, body))
    isStatus(t, r, 404)
    t.same(r.json, want, `${m} body`)
  }
  const g = await unchanged(t, () => s.request('GET', `${DEP}/x`))
  isStatus(t, g, 404)
  t.same(g.json, failure(404, 'NotFound', 'deployments.apps "x" not found', { name: 'x', group: 'apps', kind: 'deployments' }), 'grouped resource')
  const n = await unchanged(t, () => s.request('GET', '/api/v1/nodes/x'))
  t.same(n.json, failure(404, 'NotFound', 'nodes "x" not found', { name: 'x', kind: 'nodes' }), 'cluster-scoped resource')
})

t.test('404 NotFound for a create in a missing namespace', async (t) => {
  const r = await unchanged(t, () => s.request('POST', '/api/v1/namespaces/nope/configmaps', { metadata: { name: 'a' } }))
  isStatus(t, r, 404)
  t.same(r.json, failure(404, 'NotFound', 'namespaces "nope" not found', { name: 'nope', kind: 'namespaces' }))
  const g = await s.request('GET', '/api/v1/namespaces/nope/configmaps/a')
  t.equal(g.status, 404, 'nothing created')
})

t.test('409 AlreadyExists', async (t) => {
  const r = await unchanged(t, () => s.request('POST', CM, { metadata: { name: 'cm-a' }, data: { other: 'x' } }))
  isStatus(t, r, 409)
  t.same(r.json, failure(409, 'AlreadyExists', 'configmaps "cm-a" already exists', { name: 'cm-a', kind: 'configmaps' }))
  const g = await s.request('GET', `${CM}/cm-a`)
  t.same(g.json, cm, 'the existing object is untouched')
  const d = await unchanged(t, () => s.request('POST', DEP, dep))
  isStatus(t, d, 409)
  t.same(d.json, failure(409, 'AlreadyExists', 'deployments.apps "dep-a" already exists', { name: 'dep-a', group: 'apps', kind: 'deployments' }))
})

t.test('409 Conflict on a PUT with a stale resourceVersion', async (t) => {
  const fresh = structuredClone(cm)
  fresh.data = { k: 'v2' }
  const u = await s.request('PUT', `${CM}/cm-a`, fresh)
  t.equal(u.status, 200)
  cm = u.json
  const stale = structuredClone(cm)
  stale.metadata.resourceVersion = fresh.metadata.resourceVersion // the one before the update
  stale.data = { k: 'lost' }
  const r = await unchanged(t, () => s.request('PUT', `${CM}/cm-a`, stale))
  isStatus(t, r, 409)
  t.same(r.json, failure(409, 'Conflict', 'Operation cannot be fulfilled on configmaps "cm-a": the object has been modified; please apply your changes to the latest version and try again', { name: 'cm-a', kind: 'configmaps' }))
  t.same((await s.request('GET', `${CM}/cm-a`)).json, cm, 'object unchanged')

  const d = await s.request('PUT', DEP + '/dep-a', { ...structuredClone(dep), metadata: { ...dep.metadata, resourceVersion: '1' } })
  isStatus(t, d, 409)
  t.same(d.json, failure(409, 'Conflict', 'Operation cannot be fulfilled on deployments.apps "dep-a": the object has been modified; please apply your changes to the latest version and try again', { name: 'dep-a', group: 'apps', kind: 'deployments' }))
  t.same((await s.request('GET', `${DEP}/dep-a`)).json, dep, 'deployment unchanged')
})

t.test('409 Conflict on DELETE preconditions (uid, resourceVersion)', async (t) => {
  const uid = '00000000-0000-0000-0000-000000000000'
  const r1 = await unchanged(t, () => s.request('DELETE', `${CM}/cm-a`, { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid } }))
  isStatus(t, r1, 409)
  t.same(r1.json, failure(409, 'Conflict',
    `Operation cannot be fulfilled on ConfigMap "cm-a": the UID in the precondition (${uid}) does not match the UID in record (${cm.metadata.uid}). The object might have been deleted and then recreated`,
    { name: 'cm-a', kind: 'ConfigMap' }))

  const r2 = await unchanged(t, () => s.request('DELETE', `${CM}/cm-a`, { preconditions: { resourceVersion: '1' } }))
  isStatus(t, r2, 409)
  t.same(r2.json, failure(409, 'Conflict',
    `Operation cannot be fulfilled on ConfigMap "cm-a": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${cm.metadata.resourceVersion}). The object might have been modified`,
    { name: 'cm-a', kind: 'ConfigMap' }))

  const r3 = await unchanged(t, () => s.request('DELETE', `${DEP}/dep-a`, { preconditions: { uid } }))
  isStatus(t, r3, 409)
  t.same(r3.json, failure(409, 'Conflict',
    `Operation cannot be fulfilled on Deployment.apps "dep-a": the UID in the precondition (${uid}) does not match the UID in record (${dep.metadata.uid}). The object might have been deleted and then recreated`,
    { name: 'dep-a', group: 'apps', kind: 'Deployment' }))
  t.equal((await s.request('GET', `${CM}/cm-a`)).status, 200, 'still there')
  t.equal((await s.request('GET', `${DEP}/dep-a`)).status, 200, 'still there')

  // Matching preconditions delete.
  const tmp = await s.request('POST', CM, { metadata: { name: 'tmp-pre' } })
  const ok = await s.request('DELETE', `${CM}/tmp-pre`, { preconditions: { uid: tmp.json.metadata.uid, resourceVersion: tmp.json.metadata.resourceVersion } })
  t.equal(ok.status, 200, 'matching preconditions delete')
  t.equal((await s.request('GET', `${CM}/tmp-pre`)).status, 404)
})

t.test('422 Invalid for a bad name', async (t) => {
  const r = await unchanged(t, () => s.request('POST', CM, { metadata: { name: 'Bad_Name' } }))
  isStatus(t, r, 422)
  const body = `Invalid value: "Bad_Name": ${SUBDOMAIN_MSG}`
  t.same(r.json, failure(422, 'Invalid', `ConfigMap "Bad_Name" is invalid: metadata.name: ${body}`, {
    name: 'Bad_Name', kind: 'ConfigMap', causes: [{ reason: 'FieldValueInvalid', message: body, field: 'metadata.name' }],
  }))
  t.equal((await s.request('GET', `${CM}/Bad_Name`)).status, 404, 'not created')
})

t.test('422 Invalid with several causes', async (t) => {
  const r = await unchanged(t, () => s.request('POST', CM, { metadata: { name: 'Bad_Name', labels: { ok: 'bad value!' } } }))
  isStatus(t, r, 422)
  const b1 = `Invalid value: "Bad_Name": ${SUBDOMAIN_MSG}`
  const b2 = `Invalid value: "bad value!": ${LABEL_VALUE_MSG}`
  t.same(r.json, failure(422, 'Invalid', `ConfigMap "Bad_Name" is invalid: [metadata.name: ${b1}, metadata.labels: ${b2}]`, {
    name: 'Bad_Name', kind: 'ConfigMap',
    causes: [
      { reason: 'FieldValueInvalid', message: b1, field: 'metadata.name' },
      { reason: 'FieldValueInvalid', message: b2, field: 'metadata.labels' },
    ],
  }))
})

t.test('422 Invalid for a missing name', async (t) => {
  const r = await unchanged(t, () => s.request('POST', CM, { metadata: {} }))
  isStatus(t, r, 422)
  t.same(r.json, failure(422, 'Invalid', 'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required', {
    kind: 'ConfigMap', causes: [{ reason: 'FieldValueRequired', message: 'Required value: name or generateName is required', field: 'metadata.name' }],
  }))
})

t.test('422 Invalid on a grouped kind names Kind.group', async (t) => {
  const r = await unchanged(t, () => s.request('POST', DEP, { metadata: { name: 'Bad_Dep' }, spec: { selector: { matchLabels: { app: 'b' } }, template: { metadata: { labels: { app: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } } }))
  isStatus(t, r, 422)
  const body = `Invalid value: "Bad_Dep": ${SUBDOMAIN_MSG}`
  t.same(r.json, failure(422, 'Invalid', `Deployment.apps "Bad_Dep" is invalid: metadata.name: ${body}`, {
    name: 'Bad_Dep', group: 'apps', kind: 'Deployment', causes: [{ reason: 'FieldValueInvalid', message: body, field: 'metadata.name' }],
  }))
})

t.test('a field of the wrong JSON type is 400: a built-in type fails to decode it (Go\'s decoder text)', async (t) => {
  const r = await unchanged(t, () => s.request('POST', CM, { metadata: { name: 'typed' }, data: { a: 1 } }))
  isStatus(t, r, 400)
  t.equal(r.json?.reason, 'BadRequest')
  t.equal(r.json?.message, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string')
  t.equal((await s.request('GET', `${CM}/typed`)).status, 404, 'not created')

  const d = await unchanged(t, () => s.request('POST', DEP, { metadata: { name: 'typed' }, spec: { replicas: 'x', selector: { matchLabels: { app: 't' } }, template: { metadata: { labels: { app: 't' } }, spec: { containers: [{ name: 'c', image: 5 }] } } } }))
  isStatus(t, d, 400)
  t.equal(d.json?.message, 'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32')

  const p = await unchanged(t, () => s.request('POST', DEP, { metadata: { name: 'typed2' }, spec: { selector: { matchLabels: { app: 't' } }, template: { metadata: { labels: { app: 't' } }, spec: { containers: [{ name: 'c', image: 5 }] } } } }))
  isStatus(t, p, 400)
  t.equal(p.json?.message, 'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number into Go struct field Container.spec.template.spec.containers.image of type string', 'the innermost struct and the path from the root')

  // On update too: the stored object stays as it was.
  const u = structuredClone(cm)
  u.data = { k: 2 }
  const r2 = await unchanged(t, () => s.request('PUT', `${CM}/cm-a`, u))
  isStatus(t, r2, 400)
  t.equal(r2.json?.message, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string')
})

t.test('405 MethodNotAllowed for PUT on a collection and POST on a named path', async (t) => {
  const want = failure(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {})
  const r1 = await unchanged(t, () => s.request('PUT', CM, { metadata: { name: 'x' } }))
  isStatus(t, r1, 405)
  t.same(r1.json, want, 'PUT on a collection')
  const r2 = await unchanged(t, () => s.request('POST', `${CM}/x`, { metadata: { name: 'x' } }))
  isStatus(t, r2, 405)
  t.same(r2.json, want, 'POST on a named path')
  const r3 = await unchanged(t, () => s.request('POST', `${CM}/cm-a`, { metadata: { name: 'cm-a' } }))
  t.same(r3.json, want, 'POST on an existing named path')
  const r4 = await unchanged(t, () => s.request('PUT', DEP, { metadata: { name: 'x' } }))
  t.same(r4.json, want, 'PUT on a grouped collection')
  const r5 = await unchanged(t, () => s.request('PUT', '/api/v1/nodes', { metadata: { name: 'x' } }))
  t.same(r5.json, want, 'PUT on a cluster-scoped collection')
})

t.test('404 plain text for paths outside the API', async (t) => {
  for (const p of ['/apis/nope.orch.io/v1', '/apis/nope.orch.io/v1/namespaces/default/things', '/foo', '/api/v2/configmaps']) {
    const r = await s.request('GET', p)
    t.equal(r.status, 404, p)
    t.equal(r.text, '404 page not found\n', `${p} body`)
    t.match(String(r.headers['content-type']), /^text\/plain/, `${p} content type`)
  }
  const post = await unchanged(t, () => s.request('POST', '/apis/nope.orch.io/v1/namespaces/default/things', { metadata: { name: 'x' } }))
  t.equal(post.status, 404)
  t.equal(post.text, '404 page not found\n')
})

t.test('404 Status for an unknown resource in a served group-version', async (t) => {
  const want = failure(404, 'NotFound', 'the server could not find the requested resource', {})
  for (const p of ['/api/v1/foos', '/api/v1/namespaces/default/foos', '/api/v1/namespaces/default/foos/x', '/apis/apps/v1/foos']) {
    const r = await s.request('GET', p)
    isStatus(t, r, 404)
    t.same(r.json, want, p)
  }
  const post = await unchanged(t, () => s.request('POST', '/api/v1/namespaces/errs/foos', { metadata: { name: 'x' } }))
  t.same(post.json, want, 'POST to an unknown resource')
})

t.test('413 for a body over 3 MiB', async (t) => {
  const big = JSON.stringify({ metadata: { name: 'big' }, data: { k: 'x'.repeat(3 * 1024 * 1024) } })
  t.ok(Buffer.byteLength(big) > 3145728)
  const r = await unchanged(t, () => s.request('POST', CM, big))
  isStatus(t, r, 413)
  t.same(r.json, failure(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728'))
  t.equal((await s.request('GET', `${CM}/big`)).status, 404, 'not created')
  // On update too.
  const u = JSON.stringify({ ...cm, data: { k: 'y'.repeat(3 * 1024 * 1024 + 10) } })
  const r2 = await unchanged(t, () => s.request('PUT', `${CM}/cm-a`, u))
  isStatus(t, r2, 413)
  t.same(r2.json, failure(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728'))
  // Just under the limit is accepted by the body reader (the object may still be refused for other reasons).
  const ok = JSON.stringify({ metadata: { name: 'almost' }, data: { k: 'z'.repeat(1024 * 1024) } })
  const r3 = await s.request('POST', CM, ok)
  t.equal(r3.status, 201, 'a 1 MiB body is fine')
  t.equal((await s.request('DELETE', `${CM}/almost`)).status, 200)
})

t.test('400 BadRequest for malformed JSON', async (t) => {
  for (const body of ['{"metadata": {"name": "mal"', 'not json at all', '{"metadata": {"name": "mal"}} trailing']) {
    const r = await unchanged(t, () => s.request('POST', CM, body, { 'content-type': 'application/json' }))
    isStatus(t, r, 400)
    t.type(r.json?.message, 'string')
    t.ok(r.json?.message.length > 0, 'has a message')
    t.same(r.json, failure(400, 'BadRequest', r.json?.message), `whole body for ${JSON.stringify(body)}`)
  }
  const u = await unchanged(t, () => s.request('PUT', `${CM}/cm-a`, '{"metadata":', { 'content-type': 'application/json' }))
  isStatus(t, u, 400)
  t.equal(u.json?.reason, 'BadRequest')
  t.equal((await s.request('GET', `${CM}/mal`)).status, 404, 'not created')
})

t.test('400 BadRequest for YAML whose anchor contains itself (a create, an update, a server-side apply): no 500', async (t) => {
  const msg = "error converting YAML to JSON: yaml: anchor 'x' value contains itself"
  const c = await unchanged(t, () => s.request('POST', CM, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: loop}\nx: &x [*x]\n', { 'content-type': 'application/yaml' }))
  isStatus(t, c, 400)
  t.same(c.json, failure(400, 'BadRequest', msg))
  const u = await unchanged(t, () => s.request('PUT', `${CM}/cm-a`, 'apiVersion: v1\nkind: ConfigMap\nmetadata: &x {name: cm-a, labels: {a: *x}}\n', { 'content-type': 'application/yaml' }))
  isStatus(t, u, 400)
  t.equal(u.json?.message, msg)
  const a = await unchanged(t, () => s.request('PATCH', `${CM}/cm-a?fieldManager=loop`, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-a}\ndata: &x {k: *x}\n', { 'content-type': 'application/apply-patch+yaml' }))
  isStatus(t, a, 400)
  t.equal(a.json?.message, msg)
  // an alias of a node outside itself is fine
  const ok = await s.request('POST', CM, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: alias-ok, labels: &l {a: b}, annotations: *l}\n', { 'content-type': 'application/yaml' })
  t.equal(ok.status, 201, ok.text)
  t.same(ok.json?.metadata?.annotations, { a: 'b' })
  t.equal((await s.request('DELETE', `${CM}/alias-ok`)).status, 200)
})

t.test('400 BadRequest when the body name differs from the URL name', async (t) => {
  const b = structuredClone(cm)
  b.metadata.name = 'other'
  const r = await unchanged(t, () => s.request('PUT', `${CM}/cm-a`, b))
  isStatus(t, r, 400)
  t.same(r.json, failure(400, 'BadRequest', 'the name of the object (other) does not match the name on the URL (cm-a)'))
  t.equal((await s.request('GET', `${CM}/other`)).status, 404)
})

t.test('400 BadRequest when the body namespace differs from the URL namespace', async (t) => {
  const want = failure(400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request')
  const r = await unchanged(t, () => s.request('POST', CM, { metadata: { name: 'nsx', namespace: 'default' } }))
  isStatus(t, r, 400)
  t.same(r.json, want, 'create')
  t.equal((await s.request('GET', '/api/v1/namespaces/default/configmaps/nsx')).status, 404, 'not created in the body namespace')
  const b = structuredClone(cm)
  b.metadata.namespace = 'default'
  const u = await unchanged(t, () => s.request('PUT', `${CM}/cm-a`, b))
  isStatus(t, u, 400)
  t.same(u.json, want, 'update')
})

t.test('415 UnsupportedMediaType for an unknown Content-Type', async (t) => {
  const r = await unchanged(t, () => s.request('POST', CM, JSON.stringify({ metadata: { name: 'ct' } }), { 'content-type': 'text/plain' }))
  isStatus(t, r, 415)
  const msg: string = r.json?.message ?? ''
  const prefix = 'the body of the request was in an unknown format - accepted media types include: '
  t.ok(msg.startsWith(prefix), 'message prefix')
  const listed = msg.slice(prefix.length).split(', ')
  t.ok(listed.includes('application/json'), 'lists application/json')
  t.ok(listed.includes('application/yaml'), 'lists application/yaml')
  t.same(r.json, failure(415, 'UnsupportedMediaType', msg), 'whole body')
  t.equal((await s.request('GET', `${CM}/ct`)).status, 404, 'not created')
})

t.test('406 NotAcceptable for Accept: application/xml alone; protobuf is served', async (t) => {
  const r = await s.request('GET', `${CM}/cm-a`, undefined, { accept: 'application/xml' })
  isStatus(t, r, 406)
  t.same(r.json, failure(406, 'NotAcceptable', 'only the following media types are accepted: application/json, application/yaml, application/vnd.orch.protobuf, application/vnd.kubernetes.protobuf'))
  const l = await s.request('GET', CM, undefined, { accept: 'application/xml' })
  t.equal(l.status, 406, 'list too')
  // A write with an unacceptable Accept must not be performed.
  const w = await unchanged(t, () => s.request('POST', CM, { metadata: { name: 'acc' } }, { accept: 'application/xml' }))
  t.equal(w.status, 406, 'create with an unacceptable Accept')
  t.equal((await s.request('GET', `${CM}/acc`)).status, 404, 'not created')
  // With a JSON fallback the request succeeds.
  const ok = await s.request('GET', `${CM}/cm-a`, undefined, { accept: 'application/xml, application/json' })
  t.equal(ok.status, 200)
  t.equal(ok.json?.metadata?.name, 'cm-a')
  // Protobuf (both spellings) is answered in the envelope.
  for (const mt of ['application/vnd.orch.protobuf', 'application/vnd.kubernetes.protobuf']) {
    const pb = await s.request('GET', `${CM}/cm-a`, undefined, { accept: mt })
    t.equal(pb.status, 200, mt)
    t.equal(pb.headers['content-type'], mt, `${mt} content type`)
    t.equal(Buffer.from(pb.text, 'latin1').subarray(0, 4).toString('hex'), '6b387300', `${mt} envelope magic`)
  }
})

t.test('400 BadRequest for an unknown field selector', async (t) => {
  const r = await s.request('GET', `${CM}?fieldSelector=${encodeURIComponent('spec.x=1')}`)
  isStatus(t, r, 400)
  t.same(r.json, failure(400, 'BadRequest', '"spec.x" is not a known field selector: only "metadata.name", "metadata.namespace"'))
  const p = await s.request('GET', `/api/v1/namespaces/${NS}/pods?fieldSelector=${encodeURIComponent('spec.x=1')}`)
  isStatus(t, p, 400)
  t.same(p.json, failure(400, 'BadRequest', 'field label not supported: spec.x'))
  // deletecollection with the same selector deletes nothing.
  const d = await unchanged(t, () => s.request('DELETE', `${CM}?fieldSelector=${encodeURIComponent('spec.x=1')}`))
  isStatus(t, d, 400)
  t.same(d.json, failure(400, 'BadRequest', '"spec.x" is not a known field selector: only "metadata.name", "metadata.namespace"'))
})

t.test('the objects are as the last successful write left them', async (t) => {
  t.same((await s.request('GET', `${CM}/cm-a`)).json, cm)
  t.same((await s.request('GET', `${DEP}/dep-a`)).json, dep)
  const l = await s.request('GET', CM)
  t.same(l.json.items.map((x: Obj) => x.metadata.name).sort(), ['cm-a'])
})

t.test('timeoutSeconds that is not an integer is 400 on a list and on a watch', async (t) => {
  for (const q of ['timeoutSeconds=abc', 'watch=true&timeoutSeconds=abc', 'watch=true&timeoutSeconds=1e3']) {
    const r = await s.request('GET', `${CM}?${q}`)
    t.equal(r.status, 400, `${q}: ${r.text}`)
    t.match(r.json?.message, /^strconv\.ParseInt: parsing "[^"]+": invalid syntax$/, q)
  }
  const ok = await s.request('GET', `${CM}?watch=true&timeoutSeconds=1`)
  t.equal(ok.status, 200, 'a valid timeout still watches (and ends)')
})
