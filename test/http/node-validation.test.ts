// Black-box: Node validation (upstream ValidateNode, ValidateNodeUpdate) — taints, podCIDRs, resources, and what may
// not change once set; refused creates are 422 with upstream's causes and store nothing; a kubelet's node is created.
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'
import { expectRefused } from '../helpers/refused.js'

let s: TestServer
const NODES = '/api/v1/nodes'

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

type Obj = Record<string, any>
const node = (name: string, spec: Obj = {}, status?: Obj): Obj => ({ apiVersion: 'v1', kind: 'Node', metadata: { name }, spec, ...(status ? { status } : {}) })
const refused = (t: import('tap').Test, body: Obj, causes: Array<{ field: string; reason: string; message: string }>) => expectRefused(t, s, NODES, body, 'Node', causes)

/** A node as the kubelet registers it (trimmed), then as the node-ipam controller gives it pod CIDRs. */
const kubelet = (name: string): Obj => ({
  apiVersion: 'v1', kind: 'Node',
  metadata: { name, labels: { 'orch.io/hostname': name, 'orch.io/os': 'linux', 'orch.io/arch': 'amd64' }, annotations: { 'volumes.orch.io/controller-managed-attach-detach': 'true' } },
  spec: { providerID: `kind://docker/kind/${name}`, taints: [{ key: 'node.orch.io/not-ready', effect: 'NoSchedule' }] },
  status: {
    capacity: { cpu: '8', 'ephemeral-storage': '102626232Ki', 'hugepages-2Mi': '0', memory: '32863564Ki', pods: '110' },
    allocatable: { cpu: '8', 'ephemeral-storage': '102626232Ki', 'hugepages-2Mi': '0', memory: '32863564Ki', pods: '110' },
    addresses: [{ type: 'InternalIP', address: '172.18.0.2' }, { type: 'Hostname', address: name }],
    conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady', message: 'container runtime network not ready', lastHeartbeatTime: '2024-01-01T00:00:00Z', lastTransitionTime: '2024-01-01T00:00:00Z' }],
    nodeInfo: { kubeletVersion: 'v1.32.0', osImage: 'Debian GNU/Linux 12 (bookworm)', kernelVersion: '6.1.0', containerRuntimeVersion: 'containerd://1.7.13', operatingSystem: 'linux', architecture: 'amd64', machineID: 'm', systemUUID: 'u', bootID: 'b', kubeProxyVersion: 'v1.32.0' },
  },
})

t.test('a kubelet registers its node; the controller sets its pod CIDRs once; podCIDR alone becomes podCIDRs', async (t) => {
  let r = await s.request('POST', NODES, kubelet('worker-1'))
  t.equal(r.status, 201, r.text)
  const n = r.json
  n.spec.podCIDRs = ['10.244.1.0/24', 'fd00:10:244:1::/64']
  r = await s.request('PUT', `${NODES}/worker-1`, n)
  t.equal(r.status, 200, r.text)
  t.same(r.json.spec.podCIDRs, ['10.244.1.0/24', 'fd00:10:244:1::/64'])
  t.equal(r.json.spec.podCIDR, '10.244.1.0/24')
  r = await s.request('POST', NODES, node('single-cidr', { podCIDR: '10.244.2.0/24' }))
  t.equal(r.status, 201, r.text)
  t.same(r.json.spec.podCIDRs, ['10.244.2.0/24'])
})

t.test('taints: key, value, effect, unique by key and effect (upstream reports them under metadata.taints)', async (t) => {
  await refused(t, node('taint-effect', { taints: [{ key: 'a', effect: 'NoScheduleNoAdmit' }, { key: 'b' }] }), [
    { field: 'metadata.taints[0].effect', reason: 'FieldValueNotSupported', message: 'Unsupported value: "NoScheduleNoAdmit": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"' },
    { field: 'metadata.taints[1].effect', reason: 'FieldValueRequired', message: 'Required value' },
  ])
  await refused(t, node('taint-key', { taints: [{ key: 'bad key', value: 'x/y', effect: 'NoSchedule' }] }), [
    { field: 'metadata.taints[0].key', reason: 'FieldValueInvalid', message: 'Invalid value: "bad key": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')' },
    { field: 'metadata.taints[0].value', reason: 'FieldValueInvalid', message: 'Invalid value: "x/y": a valid label must be an empty string or consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyValue\',  or \'my_value\',  or \'12345\', regex used for validation is \'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\')' },
  ])
  await refused(t, node('taint-dup', { taints: [{ key: 'k', value: 'a', effect: 'NoSchedule' }, { key: 'k', effect: 'NoExecute' }, { key: 'k', value: 'b', effect: 'NoSchedule' }] }), [
    { field: 'metadata.taints[2]', reason: 'FieldValueDuplicate', message: 'Duplicate value: core.Taint{Key:"k", Value:"b", Effect:"NoSchedule", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair' },
  ])
})

t.test('podCIDRs: CIDR format, one per family, at most two, no duplicates', async (t) => {
  await refused(t, node('cidr-format', { podCIDRs: ['10.244.0.0/33'] }), [
    { field: 'spec.podCIDRs[0]', reason: 'FieldValueInvalid', message: 'Invalid value: "10.244.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)' },
  ])
  await refused(t, node('cidr-family', { podCIDRs: ['10.244.0.0/24', '10.245.0.0/24'] }), [
    { field: 'spec.podCIDRs', reason: 'FieldValueInvalid', message: 'Invalid value: []string{"10.244.0.0/24", "10.245.0.0/24"}: may specify no more than one CIDR for each IP family' },
  ])
  await refused(t, node('cidr-three', { podCIDRs: ['10.244.0.0/24', 'fd00::/64', '10.244.0.0/24'] }), [
    { field: 'spec.podCIDRs', reason: 'FieldValueInvalid', message: 'Invalid value: []string{"10.244.0.0/24", "fd00::/64", "10.244.0.0/24"}: may specify no more than one CIDR for each IP family' },
    { field: 'spec.podCIDRs[2]', reason: 'FieldValueDuplicate', message: 'Duplicate value: "10.244.0.0/24"' },
  ])
  await refused(t, node('cidr-internal', { podCIDRs: ['10.244.0.0/24', 'nope'] }), [
    { field: 'spec.podCIDRs[1]', reason: 'FieldValueInvalid', message: 'Invalid value: "nope": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)' },
    { field: 'spec.podCIDRs', reason: 'InternalError', message: 'Internal error: invalid PodCIDRs. failed to check with dual stack with error:invalid CIDR address: nope' },
    { field: 'spec.podCIDRs', reason: 'FieldValueInvalid', message: 'Invalid value: []string{"10.244.0.0/24", "nope"}: may specify no more than one CIDR for each IP family' },
  ])
})

t.test('capacity and allocatable amounts', async (t) => {
  await refused(t, node('neg-cap', {}, { capacity: { cpu: '-1', pods: '1500m' } }), [
    { field: 'status.capacity.cpu', reason: 'FieldValueInvalid', message: 'Invalid value: "-1": must be greater than or equal to 0' },
    { field: 'status.capacity.pods', reason: 'FieldValueInvalid', message: 'Invalid value: "1500m": must be an integer' },
    { field: 'status.allocatable.cpu', reason: 'FieldValueInvalid', message: 'Invalid value: "-1": must be greater than or equal to 0' },
    { field: 'status.allocatable.pods', reason: 'FieldValueInvalid', message: 'Invalid value: "1500m": must be an integer' },
  ])
})

t.test('podCIDRs and providerID may only be set once; status writes are checked too', async (t) => {
  let r = await s.request('POST', NODES, kubelet('worker-2'))
  t.equal(r.status, 201, r.text)
  const n = r.json
  n.spec.podCIDRs = ['10.244.3.0/24']
  r = await s.request('PUT', `${NODES}/worker-2`, n)
  t.equal(r.status, 200, r.text)
  const next = structuredClone(r.json)
  next.spec.podCIDRs = ['10.244.4.0/24']
  next.spec.podCIDR = '10.244.4.0/24'
  next.spec.providerID = 'kind://docker/kind/other'
  r = await s.request('PUT', `${NODES}/worker-2`, next)
  t.equal(r.status, 422, r.text)
  t.same(r.json.details.causes, [
    { reason: 'FieldValueForbidden', message: 'Forbidden: node updates may not change podCIDR except from "" to valid', field: 'spec.podCIDRs' },
    { reason: 'FieldValueForbidden', message: 'Forbidden: node updates may not change providerID except from "" to valid', field: 'spec.providerID' },
  ])
  // A taint problem on update is reported by both of upstream's checks.
  const tainted = structuredClone(n)
  tainted.metadata.resourceVersion = undefined
  tainted.spec = { ...n.spec, podCIDRs: ['10.244.3.0/24'], taints: [{ key: 'x', effect: 'Never' }] }
  r = await s.request('PUT', `${NODES}/worker-2`, tainted)
  t.equal(r.status, 422, r.text)
  const msg = 'Unsupported value: "Never": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'
  t.same(r.json.details.causes, [
    { reason: 'FieldValueNotSupported', message: msg, field: 'metadata.taints[0].effect' },
    { reason: 'FieldValueNotSupported', message: msg, field: 'metadata.taints[0].effect' },
  ])
  t.equal(r.json.message, `Node "worker-2" is invalid: metadata.taints[0].effect: ${msg}`)
  // The status sub-resource: duplicate addresses.
  r = await s.request('GET', `${NODES}/worker-2`)
  const st = r.json
  st.status.addresses.push({ type: 'InternalIP', address: '172.18.0.2' })
  r = await s.request('PUT', `${NODES}/worker-2/status`, st)
  t.equal(r.status, 422, r.text)
  t.same(r.json.details.causes, [{ reason: 'FieldValueDuplicate', message: 'Duplicate value: core.NodeAddress{Type:"InternalIP", Address:"172.18.0.2"}', field: 'status.addresses[2]' }])
})
