// Black-box: RuntimeClass validation (upstream ValidateRuntimeClass{,Update}) — refused objects are 422 with upstream's
// causes and store nothing; the runtime classes a cluster ships (runc, gVisor with overhead and scheduling) are created.
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'
import { expectRefused } from '../helpers/refused.js'

let s: TestServer
const RC = '/apis/node.orch.io/v1/runtimeclasses'
const K = 'RuntimeClass.node.orch.io'

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

type Obj = Record<string, any>
const rc = (name: string, handler: string, extra: Obj = {}): Obj => ({ apiVersion: 'node.orch.io/v1', kind: 'RuntimeClass', metadata: { name }, handler, ...extra })
const LABEL_RE = 'a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', and must start and end with an alphanumeric character (e.g. \'my-name\',  or \'123-abc\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?\')'

t.test('runc, and gVisor with overhead and scheduling, are created', async (t) => {
  let r = await s.request('POST', RC, rc('runc', 'runc'))
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', RC, rc('gvisor', 'runsc', {
    overhead: { podFixed: { cpu: '250m', memory: '120Mi' } },
    scheduling: { nodeSelector: { 'runtime.example.com/gvisor': 'true' }, tolerations: [{ key: 'runtime.example.com/gvisor', operator: 'Exists', effect: 'NoSchedule' }, { key: 'dedicated', operator: 'Equal', value: 'sandbox', effect: 'NoExecute', tolerationSeconds: 60 }] },
  }))
  t.equal(r.status, 201, r.text)
})

t.test('handler: a DNS label, and immutable', async (t) => {
  await expectRefused(t, s, RC, rc('bad-handler', 'run.sc'), K, [{ field: 'handler', reason: 'FieldValueInvalid', message: `Invalid value: "run.sc": ${LABEL_RE}` }])
  await expectRefused(t, s, RC, rc('no-handler', ''), K, [{ field: 'handler', reason: 'FieldValueInvalid', message: `Invalid value: "": ${LABEL_RE}` }])
  const r = await s.request('GET', `${RC}/runc`)
  const u = await s.request('PUT', `${RC}/runc`, { ...r.json, handler: 'crun' })
  t.equal(u.status, 422, u.text)
  t.same(u.json.details.causes, [{ reason: 'FieldValueInvalid', message: 'Invalid value: "crun": field is immutable', field: 'handler' }])
})

t.test('overhead: container resource names and amounts', async (t) => {
  await expectRefused(t, s, RC, rc('overhead', 'runsc', { overhead: { podFixed: { cpu: '-250m', pods: '1', 'hugepages-2Mi': '2Mi' } } }), K, [
    { field: 'overhead.limits[cpu]', reason: 'FieldValueInvalid', message: 'Invalid value: "-250m": must be greater than or equal to 0' },
    { field: 'overhead.limits[pods]', reason: 'FieldValueInvalid', message: 'Invalid value: "pods": must be a standard resource for containers' },
  ])
  await expectRefused(t, s, RC, rc('hugepages-only', 'runsc', { overhead: { podFixed: { 'hugepages-2Mi': '2Mi' } } }), K, [
    { field: 'overhead', reason: 'FieldValueForbidden', message: 'Forbidden: HugePages require cpu or memory' },
  ])
})

t.test('scheduling: node selector labels and tolerations', async (t) => {
  await expectRefused(t, s, RC, rc('sched', 'runsc', {
    scheduling: {
      nodeSelector: { 'bad key': 'v' },
      tolerations: [
        { operator: 'Equal', value: 'x' },
        { key: 'k', operator: 'Exists', value: 'v' },
        { key: 'k', operator: 'Lt', effect: 'Sometimes' },
        { key: 'k', tolerationSeconds: 5, effect: 'NoSchedule' },
        { key: 'k', operator: 'Exists', value: 'v' },
      ],
    },
  }), K, [
    { field: 'scheduling.nodeSelector', reason: 'FieldValueInvalid', message: 'Invalid value: "bad key": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')' },
    { field: 'scheduling.tolerations[0].operator', reason: 'FieldValueInvalid', message: 'Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"' },
    { field: 'scheduling.tolerations[1].operator', reason: 'FieldValueInvalid', message: 'Invalid value: core.Toleration{Key:"k", Operator:"Exists", Value:"v", Effect:"", TolerationSeconds:(*int64)(nil)}: value must be empty when `operator` is \'Exists\'' },
    { field: 'scheduling.tolerations[2].operator', reason: 'FieldValueNotSupported', message: 'Unsupported value: "Lt": supported values: "Equal", "Exists"' },
    { field: 'scheduling.tolerations[2].effect', reason: 'FieldValueNotSupported', message: 'Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"' },
    { field: 'scheduling.tolerations[3].effect', reason: 'FieldValueInvalid', message: 'Invalid value: "NoSchedule": effect must be \'NoExecute\' when `tolerationSeconds` is set' },
    { field: 'scheduling.tolerations[4].operator', reason: 'FieldValueInvalid', message: 'Invalid value: core.Toleration{Key:"k", Operator:"Exists", Value:"v", Effect:"", TolerationSeconds:(*int64)(nil)}: value must be empty when `operator` is \'Exists\'' },
    { field: 'scheduling.tolerations[4]', reason: 'FieldValueDuplicate', message: 'Duplicate value: core.Toleration{Key:"k", Operator:"Exists", Value:"v", Effect:"", TolerationSeconds:(*int64)(nil)}' },
  ])
})
