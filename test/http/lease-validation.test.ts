// Black-box: Lease validation (upstream ValidateLeaseSpec).
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'
import { expectRefused } from '../helpers/refused.js'

let s: TestServer
const LEASES = '/apis/coordination.orch.io/v1/namespaces/default/leases'
const K = 'Lease.coordination.orch.io'

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

const lease = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: 'node-a', ...spec } })

t.test('a node lease is created', async (t) => {
  const r = await s.request('POST', LEASES, lease('node-a', { leaseDurationSeconds: 40, leaseTransitions: 0, renewTime: '2025-01-01T00:00:00.000000Z' }))
  t.equal(r.status, 201, r.text)
})

t.test('duration, transitions, strategy, preferredHolder', async (t) => {
  await expectRefused(t, s, LEASES, lease('zero', { leaseDurationSeconds: 0, leaseTransitions: -1 }), K, [
    { field: 'spec.leaseDurationSeconds', reason: 'FieldValueInvalid', message: 'Invalid value: 0: must be greater than 0' },
    { field: 'spec.leaseTransitions', reason: 'FieldValueInvalid', message: 'Invalid value: -1: must be greater than or equal to 0' },
  ])
  await expectRefused(t, s, LEASES, lease('strategy', { strategy: 'Newest' }), K, [
    { field: 'spec.strategy.strategy', reason: 'FieldValueNotSupported', message: 'Unsupported value: "Newest": supported values: "OldestEmulationVersion"' },
  ])
  await expectRefused(t, s, LEASES, lease('holder', { preferredHolder: 'node-b' }), K, [
    { field: 'spec.preferredHolder', reason: 'FieldValueForbidden', message: 'Forbidden: may only be specified if `strategy` is defined' },
  ])
  const r = await s.request('POST', LEASES, lease('custom', { strategy: 'example.com/round-robin', preferredHolder: 'node-b' }))
  t.equal(r.status, 201, r.text)
})

t.test('updates are validated', async (t) => {
  const r = await s.request('PATCH', `${LEASES}/node-a`, { spec: { leaseDurationSeconds: -5 } }, { 'content-type': 'application/merge-patch+json' })
  t.equal(r.status, 422, r.text)
  t.equal((await s.request('GET', `${LEASES}/node-a`)).json.spec.leaseDurationSeconds, 40)
})
