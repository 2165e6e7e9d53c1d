// Black-box: the validation of PodTemplates (upstream ValidatePodTemplate / ValidatePodTemplateSpec and their update
// rules, generation), ControllerRevisions (data required and immutable, revision not negative), ServiceAccounts (name,
// secret references cut to their names) and Namespaces (spec.finalizers names, the phase a status write may set).
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'
import { expectRefused } from '../helpers/refused.js'

type Obj = Record<string, any>
const PTS = '/api/v1/namespaces/default/podtemplates'
const CRS = '/apis/apps/v1/namespaces/default/controllerrevisions'
const SAS = '/api/v1/namespaces/default/serviceaccounts'
const NSS = '/api/v1/namespaces'
const MERGE = { 'content-type': 'application/merge-patch+json' }

const LABEL = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
const LABEL_VALUE = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
const QUALIFIED = "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"

let s: TestServer
t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

const pt = (name: string, template: Obj) => ({ apiVersion: 'v1', kind: 'PodTemplate', metadata: { name }, template })
const spec = (extra: Obj = {}) => ({ containers: [{ name: 'app', image: 'nginx:1.27' }], ...extra })
const inv = (field: string, value: string, detail: string) => ({ field, reason: 'FieldValueInvalid', message: `Invalid value: ${value}: ${detail}` })
const req = (field: string, detail = '') => ({ field, reason: 'FieldValueRequired', message: detail === '' ? 'Required value' : `Required value: ${detail}` })

t.test('a valid pod template is stored, defaulted, with generation 1', async (t) => {
  const r = await s.request('POST', PTS, pt('web', { metadata: { labels: { app: 'web' }, annotations: { 'example.com/note': 'x' } }, spec: spec() }))
  t.equal(r.status, 201, r.text)
  t.equal(r.json.metadata.generation, 1)
  t.equal(r.json.template.spec.restartPolicy, 'Always')
  t.equal(r.json.template.spec.containers[0].imagePullPolicy, 'IfNotPresent')
  // Any restart policy of a pod is fine in a template; OnFailure and Never too.
  const never = await s.request('POST', PTS, pt('never', { spec: spec({ restartPolicy: 'Never' }) }))
  t.equal(never.status, 201, never.text)
})

t.test('the template is validated as a pod template', async (t) => {
  await expectRefused(t, s, PTS, pt('bad-name', { spec: { containers: [{ name: 'Bad_Name' }] } }), 'PodTemplate', [
    inv('template.spec.containers[0].name', '"Bad_Name"', LABEL),
    req('template.spec.containers[0].image'),
  ])
  await expectRefused(t, s, PTS, pt('no-containers', { metadata: { labels: { app: 'no spaces' } }, spec: {} }), 'PodTemplate', [
    inv('template.labels', '"no spaces"', LABEL_VALUE),
    req('template.spec.containers'),
  ])
  await expectRefused(t, s, PTS, pt('annotations', { metadata: { annotations: { 'a/b/c': 'x' } }, spec: spec() }), 'PodTemplate', [
    inv('template.annotations', '"a/b/c"', QUALIFIED),
  ])
  await expectRefused(t, s, PTS, pt('many', {
    spec: {
      containers: [{ name: 'app', image: 'a', imagePullPolicy: 'Sometimes' }, { name: 'app', image: 'b' }],
      initContainers: [{ name: 'app', image: 'c' }],
      volumes: [{ name: 'Data', emptyDir: {} }, { name: 'cfg' }],
      restartPolicy: 'Sometimes',
    },
  }), 'PodTemplate', [
    // upstream's order: volumes, containers, init containers, then the pod's own fields.
    inv('template.spec.volumes[0].name', '"Data"', LABEL),
    req('template.spec.volumes[1]', 'must specify a volume type'),
    { field: 'template.spec.containers[0].imagePullPolicy', reason: 'FieldValueNotSupported', message: 'Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"' },
    { field: 'template.spec.containers[1].name', reason: 'FieldValueDuplicate', message: 'Duplicate value: "app"' },
    { field: 'template.spec.initContainers[0].name', reason: 'FieldValueDuplicate', message: 'Duplicate value: "app"' },
    { field: 'template.spec.restartPolicy', reason: 'FieldValueNotSupported', message: 'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"' },
  ])
  await expectRefused(t, s, PTS, pt('ephemeral', { spec: spec({ ephemeralContainers: [{ name: 'debug', image: 'busybox' }] }) }), 'PodTemplate', [
    { field: 'template.spec.ephemeralContainers', reason: 'FieldValueForbidden', message: 'Forbidden: ephemeral containers not allowed in pod template' },
  ])
  const r = await s.request('POST', PTS, pt('Upper', { spec: spec() }))
  t.equal(r.status, 422, 'the name is a DNS-1123 subdomain')
  t.match(r.json.details.causes, [{ field: 'metadata.name', reason: 'FieldValueInvalid' }])
})

t.test('updates are validated and count template changes in the generation', async (t) => {
  const c = await s.request('POST', PTS, pt('upd', { metadata: { labels: { app: 'upd' } }, spec: spec() }))
  t.equal(c.status, 201, c.text)
  let r = await s.request('PATCH', `${PTS}/upd`, { metadata: { labels: { team: 'a' } } }, MERGE)
  t.equal(r.status, 200, r.text)
  t.equal(r.json.metadata.generation, 1, 'a metadata change keeps the generation')
  r = await s.request('PATCH', `${PTS}/upd`, { template: { spec: { restartPolicy: 'OnFailure' } } }, MERGE)
  t.equal(r.status, 200, r.text)
  t.equal(r.json.metadata.generation, 2, 'a template change bumps it')
  const rv = r.json.metadata.resourceVersion
  r = await s.request('PATCH', `${PTS}/upd`, { template: { spec: { containers: [{ name: 'Bad_Name', image: '' }] } } }, MERGE)
  t.equal(r.status, 422, r.text)
  t.same(r.json.details.causes, [inv('template.spec.containers[0].name', '"Bad_Name"', LABEL), req('template.spec.containers[0].image')])
  t.equal(r.json.message, `PodTemplate "upd" is invalid: [template.spec.containers[0].name: Invalid value: "Bad_Name": ${LABEL}, template.spec.containers[0].image: Required value]`)
  const put = await s.request('PUT', `${PTS}/upd`, pt('upd', { metadata: { labels: { app: 'Not Valid' } }, spec: spec() }))
  t.equal(put.status, 422, put.text)
  t.same(put.json.details.causes, [inv('template.labels', '"Not Valid"', LABEL_VALUE)])
  const g = await s.request('GET', `${PTS}/upd`)
  t.equal(g.json.metadata.resourceVersion, rv, 'nothing changed')
  t.same(g.json.template.spec.containers.map((x: Obj) => x.name), ['app'])
})

const cr = (name: string, extra: Obj) => ({ apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name }, ...extra })

t.test('controller revisions: data is mandatory, revision not negative', async (t) => {
  const r = await s.request('POST', CRS, cr('rev-1', { data: { spec: { template: { metadata: { labels: { a: 'b' } } } } }, revision: 1 }))
  t.equal(r.status, 201, r.text)
  const zero = await s.request('POST', CRS, cr('rev-0', { data: {} }))
  t.equal(zero.status, 201, zero.text)
  t.equal(zero.json.revision, 0)
  await expectRefused(t, s, CRS, cr('no-data', { revision: 2 }), 'ControllerRevision.apps', [req('data', 'data is mandatory')])
  await expectRefused(t, s, CRS, cr('null-data', { data: null, revision: -1 }), 'ControllerRevision.apps', [
    req('data', 'data is mandatory'),
    { field: 'revision', reason: 'FieldValueInvalid', message: 'Invalid value: -1: must be greater than or equal to 0' },
  ])
})

t.test('controller revisions: data is immutable, the revision number may change', async (t) => {
  const c = await s.request('POST', CRS, cr('imm', { data: { a: 1 }, revision: 1 }))
  t.equal(c.status, 201, c.text)
  let r = await s.request('PATCH', `${CRS}/imm`, { revision: 5, metadata: { labels: { x: 'y' } } }, MERGE)
  t.equal(r.status, 200, r.text)
  t.equal(r.json.revision, 5)
  const rv = r.json.metadata.resourceVersion
  r = await s.request('PATCH', `${CRS}/imm`, { data: { a: 2 } }, MERGE)
  t.equal(r.status, 422, r.text)
  const unknown = 'runtime.Unknown{TypeMeta:runtime.TypeMeta{APIVersion:"", Kind:""}, Raw:[]uint8{0x7b, 0x22, 0x61, 0x22, 0x3a, 0x32, 0x7d}, ContentEncoding:"", ContentType:"application/json"}'
  t.same(r.json.details.causes, [{ field: 'data', reason: 'FieldValueInvalid', message: `Invalid value: ${unknown}: field is immutable` }])
  t.equal(r.json.message, `ControllerRevision.apps "imm" is invalid: data: Invalid value: ${unknown}: field is immutable`)
  r = await s.request('PATCH', `${CRS}/imm`, { revision: -3 }, MERGE)
  t.same(r.json.details.causes, [{ field: 'revision', reason: 'FieldValueInvalid', message: 'Invalid value: -3: must be greater than or equal to 0' }])
  const g = await s.request('GET', `${CRS}/imm`)
  t.equal(g.json.metadata.resourceVersion, rv, 'nothing changed')
  t.same(g.json.data, { a: 1 })
})

t.test('service accounts: the name is a subdomain, secret references keep only their names', async (t) => {
  await expectRefused(t, s, SAS, { metadata: { name: 'Bad_Name' } }, 'ServiceAccount', [
    inv('metadata.name', '"Bad_Name"', "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
  ])
  const r = await s.request('POST', SAS, { metadata: { name: 'builder' }, secrets: [{ name: 'tok', namespace: 'other', kind: 'Secret', uid: 'u1' }, { kind: 'Secret' }], imagePullSecrets: [{ name: 'pull' }] })
  t.equal(r.status, 201, r.text)
  t.same(r.json.secrets, [{ name: 'tok' }, {}])
  const u = await s.request('PATCH', `${SAS}/builder`, { secrets: [{ name: 'tok2', fieldPath: 'x' }] }, MERGE)
  t.equal(u.status, 200, u.text)
  t.same(u.json.secrets, [{ name: 'tok2' }])
  t.same(u.json.imagePullSecrets, [{ name: 'pull' }])
})

t.test('namespaces: finalizer names, and the phase a status write may set', async (t) => {
  await expectRefused(t, s, NSS, { metadata: { name: 'fins' }, spec: { finalizers: ['bad', 'a/b/c', 'example.com/ok'] } }, 'Namespace', [
    inv('spec.finalizers', '"bad"', 'name is neither a standard finalizer name nor is it fully qualified'),
    inv('spec.finalizers', '"a/b/c"', QUALIFIED),
  ])
  const c = await s.request('POST', NSS, { metadata: { name: 'phases' }, spec: { finalizers: ['example.com/ok'] } })
  t.equal(c.status, 201, c.text)
  t.same(c.json.spec.finalizers, ['example.com/ok', 'kubernetes'])
  let r = await s.request('PUT', `${NSS}/phases/status`, { ...c.json, status: { phase: 'Terminating' } })
  t.equal(r.status, 422, r.text)
  t.same(r.json.details.causes, [{ field: 'status.Phase', reason: 'FieldValueInvalid', message: 'Invalid value: "Terminating": may only be \'Active\' if `deletionTimestamp` is empty' }])
  t.equal(r.json.message, 'Namespace "phases" is invalid: status.Phase: Invalid value: "Terminating": may only be \'Active\' if `deletionTimestamp` is empty')
  r = await s.request('PATCH', `${NSS}/phases/status`, { status: { phase: 'Foo' } }, MERGE)
  t.equal(r.status, 422, r.text)
  t.equal((await s.request('GET', `${NSS}/phases`)).json.status.phase, 'Active', 'nothing changed')
  // A status without a phase is defaulted to Active (SetDefaults_NamespaceStatus).
  r = await s.request('PUT', `${NSS}/phases/status`, { ...c.json, status: { conditions: [] } })
  t.equal(r.status, 200, r.text)
  t.equal(r.json.status.phase, 'Active')
  // Once deleted (the example.com/ok finalizer keeps it), only Terminating.
  const d = await s.request('DELETE', `${NSS}/phases`)
  t.ok(d.status === 200 || d.status === 202, d.text)
  r = await s.request('PATCH', `${NSS}/phases/status`, { status: { phase: 'Active' } }, MERGE)
  t.equal(r.status, 422, r.text)
  t.same(r.json.details.causes, [{ field: 'status.Phase', reason: 'FieldValueInvalid', message: 'Invalid value: "Active": may only be \'Terminating\' if `deletionTimestamp` is not empty' }])
  // namespaces/finalize checks the names at their index.
  const g = await s.request('GET', `${NSS}/phases`)
  const unconditional = { ...g.json, metadata: { ...g.json.metadata, resourceVersion: undefined } }
  r = await s.request('PUT', `${NSS}/phases/finalize`, { ...unconditional, spec: { finalizers: ['example.com/ok', 'nope'] } })
  t.equal(r.status, 422, r.text)
  t.same(r.json.details.causes, [inv('spec.finalizers[1]', '"nope"', 'name is neither a standard finalizer name nor is it fully qualified')])
  // Let it go.
  r = await s.request('PUT', `${NSS}/phases/finalize`, { ...unconditional, spec: { finalizers: [] } })
  t.equal(r.status, 200, r.text)
})

t.test('workload templates are pod templates too: their labels and annotations checked, no ephemeral containers', async (t) => {
  const template = { metadata: { labels: { a: 'b' }, annotations: { 'bad key!': 'x' } }, spec: spec({ ephemeralContainers: [{ name: 'e', image: 'busybox' }] }) }
  const causes = [
    inv('spec.template.annotations', '"bad key!"', "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
    { field: 'spec.template.spec.ephemeralContainers', reason: 'FieldValueForbidden', message: 'Forbidden: ephemeral containers not allowed in pod template' },
  ]
  const apps = (kind: string, extra: Obj = {}) => ({ apiVersion: 'apps/v1', kind, metadata: { name: `eph-${kind.toLowerCase()}` }, spec: { selector: { matchLabels: { a: 'b' } }, template, ...extra } })
  for (const [kind, resource, extra] of [['Deployment', 'deployments', {}], ['ReplicaSet', 'replicasets', {}], ['StatefulSet', 'statefulsets', { serviceName: 'svc' }], ['DaemonSet', 'daemonsets', {}]] as const) {
    await expectRefused(t, s, `/apis/apps/v1/namespaces/default/${resource}`, apps(kind, extra), `${kind}.apps`, causes)
  }
  await expectRefused(t, s, '/api/v1/namespaces/default/replicationcontrollers', { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'eph-rc' }, spec: { selector: { a: 'b' }, template } }, 'ReplicationController', causes)
})
