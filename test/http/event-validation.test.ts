// Black-box: core v1 Event validation (upstream legacyValidateEvent, all that ValidateEventCreate/Update apply to
// /api/v1 writes) — refused events are 422 with upstream's causes and store nothing; recorder-style events are created.
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'
import { expectRefused } from '../helpers/refused.js'

let s: TestServer
const EV = '/api/v1/namespaces/default/events'
const NS_EV = (ns: string) => `/api/v1/namespaces/${ns}/events`

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

type Obj = Record<string, any>

/** An event as client-go's legacy recorder (record.EventRecorder) writes it for a pod. */
const recorderEvent = (name: string, extra: Obj = {}): Obj => ({
  apiVersion: 'v1', kind: 'Event', metadata: { name, namespace: 'default' },
  involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-0', uid: '11111111-1111-1111-1111-111111111111', apiVersion: 'v1', resourceVersion: '42', fieldPath: 'spec.containers{web}' },
  reason: 'Pulled', message: 'Container image "nginx:1.27" already present on machine', source: { component: 'kubelet', host: 'worker-1' },
  firstTimestamp: '2024-05-01T10:00:00Z', lastTimestamp: '2024-05-01T10:00:00Z', count: 1, type: 'Normal', eventTime: null, reportingComponent: '', reportingInstance: '',
  ...extra,
})

/** A new-style event (eventTime set) as the events/v1 recorder writes it, read back through v1. */
const newStyle = (name: string, extra: Obj = {}): Obj => ({
  apiVersion: 'v1', kind: 'Event', metadata: { name, namespace: 'default' },
  involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-0' },
  eventTime: '2024-05-01T10:00:00.000000Z', reportingComponent: 'default-scheduler', reportingInstance: 'default-scheduler-cp-1', action: 'Binding', reason: 'Scheduled', type: 'Normal', message: 'Successfully assigned default/web-0 to worker-1',
  ...extra,
})

t.test('recorder events, a node event in default, a new-style event and a free-form type are created', async (t) => {
  for (const [path, body] of [
    [EV, recorderEvent('web-0.17a')],
    [EV, recorderEvent('worker-1.17b', { involvedObject: { kind: 'Node', name: 'worker-1', uid: 'worker-1' }, reason: 'NodeReady', message: 'Node worker-1 status is now: NodeReady' })],
    [EV, newStyle('web-0.17c')],
    // The Normal/Warning rule is events.orch.io/v1's only: a v1 write keeps any type, as upstream.
    [EV, recorderEvent('web-0.17d', { type: 'Info' })],
    [NS_EV('orch-system'), newStyle('node.17e', { metadata: { name: 'node.17e', namespace: 'orch-system' }, involvedObject: { kind: 'Node', name: 'worker-1' } })],
  ] as Array<[string, Obj]>) {
    const r = await s.request('POST', path, body)
    t.equal(r.status, 201, r.text)
  }
})

t.test('old-style events: the involved object is in the event namespace', async (t) => {
  await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } })
  await expectRefused(t, s, EV, recorderEvent('other-ns', { involvedObject: { kind: 'Pod', namespace: 'team-a', name: 'x' } }), 'Event', [
    { field: 'involvedObject.namespace', reason: 'FieldValueInvalid', message: 'Invalid value: "team-a": does not match event.namespace' },
  ])
  await expectRefused(t, s, NS_EV('team-a'), { ...recorderEvent('cluster-obj', { involvedObject: { kind: 'Node', name: 'worker-1' } }), metadata: { name: 'cluster-obj', namespace: 'team-a' } }, 'Event', [
    { field: 'involvedObject.namespace', reason: 'FieldValueInvalid', message: 'Invalid value: "": does not match event.namespace' },
  ])
})

t.test('new-style events: reporting controller, instance, action, reason, lengths', async (t) => {
  await expectRefused(t, s, EV, newStyle('missing', { reportingComponent: '', reportingInstance: '', action: '', reason: '' }), 'Event', [
    { field: 'reportingController', reason: 'FieldValueRequired', message: 'Required value' },
    { field: 'reportingController', reason: 'FieldValueInvalid', message: 'Invalid value: "": name part must be non-empty' },
    { field: 'reportingController', reason: 'FieldValueInvalid', message: 'Invalid value: "": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')' },
    { field: 'reportingInstance', reason: 'FieldValueRequired', message: 'Required value' },
    { field: 'action', reason: 'FieldValueRequired', message: 'Required value' },
    { field: 'reason', reason: 'FieldValueRequired', message: 'Required value' },
  ])
  await expectRefused(t, s, EV, newStyle('too-long', { reportingInstance: 'i'.repeat(129), action: 'a'.repeat(129), reason: 'r'.repeat(129), message: 'm'.repeat(1025) }), 'Event', [
    { field: 'reportingInstance', reason: 'FieldValueInvalid', message: 'Invalid value: "": can have at most 128 characters' },
    { field: 'action', reason: 'FieldValueInvalid', message: 'Invalid value: "": can have at most 128 characters' },
    { field: 'reason', reason: 'FieldValueInvalid', message: 'Invalid value: "": can have at most 128 characters' },
    { field: 'message', reason: 'FieldValueInvalid', message: 'Invalid value: "": can have at most 1024 characters' },
  ])
})

t.test('an update is checked the same way', async (t) => {
  const r = await s.request('GET', `${EV}/web-0.17a`)
  const ev = r.json
  ev.involvedObject.namespace = 'team-a'
  const u = await s.request('PUT', `${EV}/web-0.17a`, ev)
  t.equal(u.status, 422, u.text)
  t.same(u.json.details.causes, [{ reason: 'FieldValueInvalid', message: 'Invalid value: "team-a": does not match event.namespace', field: 'involvedObject.namespace' }])
})
