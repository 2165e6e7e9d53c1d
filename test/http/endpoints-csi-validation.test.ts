// Black-box: upstream's validation of core/v1 Endpoints and of storage.orch.io/v1 CSIDriver, CSINode and
// CSIStorageCapacity — refused writes are 422 with upstream's causes and change nothing; objects as the kubelet, a CSI
// driver's deployment or the server itself write them are accepted; the immutable fields stay as created.
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'
import { expectRefused, type Cause } from '../helpers/refused.js'

type Obj = Record<string, any>

let s: TestServer
t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

const EP = '/api/v1/namespaces/default/endpoints'
const DRIVERS = '/apis/storage.orch.io/v1/csidrivers'
const NODES = '/apis/storage.orch.io/v1/csinodes'
const CAPS = '/apis/storage.orch.io/v1/namespaces/default/csistoragecapacities'

const LABEL_MSG = 'a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', and must start and end with an alphanumeric character (e.g. \'my-name\',  or \'123-abc\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?\')'
const SUBDOMAIN_MSG = 'a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')'
const QUALIFIED_MSG = 'name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')'
const LABEL_VALUE_MSG = 'a valid label must be an empty string or consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyValue\',  or \'my_value\',  or \'12345\', regex used for validation is \'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\')'

/** An Invalid cause; strings are quoted as Go's %q does, other values printed as they are. */
const inv = (field: string, value: unknown, detail: string): Cause => ({ field, reason: 'FieldValueInvalid', message: `Invalid value: ${typeof value === 'string' ? JSON.stringify(value) : String(value)}: ${detail}` })
const req = (field: string, detail = ''): Cause => ({ field, reason: 'FieldValueRequired', message: `Required value${detail ? `: ${detail}` : ''}` })
const dup = (field: string, value: string): Cause => ({ field, reason: 'FieldValueDuplicate', message: `Duplicate value: ${JSON.stringify(value)}` })
const unsupported = (field: string, value: string, supported: string[]): Cause => ({ field, reason: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${supported.map((x) => JSON.stringify(x)).join(', ')}` })

/** A PUT of `change(stored)` that must be refused with exactly these causes, the stored object left as it was. */
async function refusedUpdate(t: import('tap').Test, path: string, groupKind: string, change: (o: Obj) => void, causes: Cause[]): Promise<void> {
  const before = (await s.request('GET', path)).json
  const body = structuredClone(before)
  change(body)
  const r = await s.request('PUT', path, body)
  t.equal(r.status, 422, r.text)
  t.same(r.json?.details?.causes, causes)
  const lines = [...new Set(causes.map((c) => `${c.field}: ${c.message}`))]
  t.equal(r.json?.message, `${groupKind} "${before.metadata.name}" is invalid: ${lines.length === 1 ? lines[0] : `[${lines.join(', ')}]`}`)
  t.same((await s.request('GET', path)).json, before, 'nothing changed')
}

async function accepted(t: import('tap').Test, method: string, path: string, body: Obj, status = method === 'POST' ? 201 : 200): Promise<Obj> {
  const r = await s.request(method, path, body)
  t.equal(r.status, status, r.text)
  return r.json
}

// ---- Endpoints ----

const endpoints = (name: string, subsets?: Obj[]): Obj => ({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name }, ...(subsets ? { subsets } : {}) })
const epRefused = (t: import('tap').Test, body: Obj, causes: Cause[]) => expectRefused(t, s, EP, body, 'Endpoints', causes)

t.test('Endpoints as controllers and users write them are accepted', async (t) => {
  // What the endpoints controller writes for a Service with ready and unready pods.
  let o = await accepted(t, 'POST', EP, endpoints('web', [{
    addresses: [{ ip: '10.244.1.5', hostname: 'web-0', nodeName: 'worker-1', targetRef: { kind: 'Pod', namespace: 'default', name: 'web-0' } }, { ip: 'fd00:10:244::7', nodeName: 'worker-2.example.com' }],
    notReadyAddresses: [{ ip: '10.244.2.9' }],
    ports: [{ name: 'http', port: 8080, protocol: 'TCP', appProtocol: 'http' }, { name: 'grpc', port: 9090, protocol: 'TCP', appProtocol: 'kubernetes.io/h2c' }, { name: 'dns', port: 53, protocol: 'UDP' }, { name: 'sig', port: 65535, protocol: 'SCTP' }],
  }]))
  t.equal(o.subsets[0].ports.length, 4)
  // A headless service's subset has no ports; an object may have no subsets at all.
  await accepted(t, 'POST', EP, endpoints('headless', [{ addresses: [{ ip: '192.0.2.10' }] }]))
  await accepted(t, 'POST', EP, endpoints('empty'))
  // One port needs no name; the protocol defaults to TCP, also when sent empty.
  o = await accepted(t, 'POST', EP, endpoints('unnamed', [{ addresses: [{ ip: '192.0.2.11' }], ports: [{ port: 80 }] }, { notReadyAddresses: [{ ip: '192.0.2.12' }], ports: [{ port: 81, protocol: '' }] }]))
  t.same(o.subsets.map((x: Obj) => x.ports[0].protocol), ['TCP', 'TCP'])
  // Upstream does not ask for unique port names in Endpoints.
  await accepted(t, 'POST', EP, endpoints('same-names', [{ addresses: [{ ip: '192.0.2.13' }], ports: [{ name: 'a', port: 1 }, { name: 'a', port: 2 }] }]))
})

t.test('the server\'s own default/kubernetes Endpoints pass', async (t) => {
  const r = await s.request('GET', `${EP}/kubernetes`)
  if (r.status === 404) { t.skip('no address to advertise on this host', async () => {}); return }
  t.equal(r.status, 200, r.text)
  await accepted(t, 'PUT', `${EP}/kubernetes`, r.json)
})

t.test('Endpoints addresses: an IP that makes sense as a destination, a DNS-label hostname, a subdomain nodeName', async (t) => {
  await epRefused(t, endpoints('bad-ip', [{ addresses: [{ ip: 'not-an-ip' }] }]), [
    inv('subsets[0].addresses[0].ip', 'not-an-ip', 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'),
    inv('subsets[0].addresses[0].ip', 'not-an-ip', 'must be a valid IP address'),
  ])
  await epRefused(t, endpoints('special', [{
    addresses: ['0.0.0.0', '127.0.0.1', '169.254.169.254', '224.0.0.1', '::1', 'fe80::1', 'ff02::1'].map((ip) => ({ ip })),
    notReadyAddresses: [{ ip: '::' }, { ip: '' }],
  }]), [
    inv('subsets[0].addresses[0].ip', '0.0.0.0', 'may not be unspecified (0.0.0.0)'),
    inv('subsets[0].addresses[1].ip', '127.0.0.1', 'may not be in the loopback range (127.0.0.0/8, ::1/128)'),
    inv('subsets[0].addresses[2].ip', '169.254.169.254', 'may not be in the link-local range (169.254.0.0/16, fe80::/10)'),
    inv('subsets[0].addresses[3].ip', '224.0.0.1', 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'),
    inv('subsets[0].addresses[4].ip', '::1', 'may not be in the loopback range (127.0.0.0/8, ::1/128)'),
    inv('subsets[0].addresses[5].ip', 'fe80::1', 'may not be in the link-local range (169.254.0.0/16, fe80::/10)'),
    inv('subsets[0].addresses[6].ip', 'ff02::1', 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'),
    inv('subsets[0].notReadyAddresses[0].ip', '::', 'may not be unspecified (::)'),
    inv('subsets[0].notReadyAddresses[1].ip', '', 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'),
    inv('subsets[0].notReadyAddresses[1].ip', '', 'must be a valid IP address'),
  ])
  await epRefused(t, endpoints('names', [{ addresses: [{ ip: '10.0.0.1', hostname: 'web.0', nodeName: 'Worker_1' }, { ip: '10.0.0.2', hostname: 'a'.repeat(64), nodeName: '' }] }]), [
    inv('subsets[0].addresses[0].hostname', 'web.0', LABEL_MSG),
    inv('subsets[0].addresses[0].nodeName', 'Worker_1', SUBDOMAIN_MSG),
    inv('subsets[0].addresses[1].hostname', 'a'.repeat(64), 'must be no more than 63 characters'),
    inv('subsets[0].addresses[1].nodeName', '', SUBDOMAIN_MSG),
  ])
  await epRefused(t, endpoints('no-addresses', [{ addresses: [{ ip: '10.0.0.1' }] }, { ports: [{ port: 80 }] }]), [
    req('subsets[1]', 'must specify `addresses` or `notReadyAddresses`'),
  ])
})

t.test('Endpoints ports: names, numbers, protocols, appProtocol', async (t) => {
  await epRefused(t, endpoints('ports', [{
    addresses: [{ ip: '10.0.0.1' }],
    ports: [{ port: 99999, protocol: 'XTP' }, { name: 'Web', port: 0, appProtocol: 'bad proto' }, { name: 'h', appProtocol: 'a/b/c' }],
  }]), [
    req('subsets[0].ports[0].name'),
    inv('subsets[0].ports[0].port', 99999, 'must be between 1 and 65535, inclusive'),
    unsupported('subsets[0].ports[0].protocol', 'XTP', ['SCTP', 'TCP', 'UDP']),
    inv('subsets[0].ports[1].name', 'Web', LABEL_MSG),
    inv('subsets[0].ports[1].port', 0, 'must be between 1 and 65535, inclusive'),
    inv('subsets[0].ports[1].appProtocol', 'bad proto', QUALIFIED_MSG),
    inv('subsets[0].ports[2].port', 0, 'must be between 1 and 65535, inclusive'),
    inv('subsets[0].ports[2].appProtocol', 'a/b/c', 'a qualified name must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\') with an optional DNS subdomain prefix and \'/\' (e.g. \'example.com/MyName\')'),
  ])
})

t.test('Endpoints updates are validated as creates are; the node of an address may change', async (t) => {
  await accepted(t, 'POST', EP, endpoints('moving', [{ addresses: [{ ip: '10.0.0.5', nodeName: 'worker-1' }], ports: [{ name: 'http', port: 80 }] }]))
  await refusedUpdate(t, `${EP}/moving`, 'Endpoints', (o) => { o.subsets[0].addresses[0].ip = '127.0.0.2'; o.subsets[0].ports[0].port = 70000 }, [
    inv('subsets[0].addresses[0].ip', '127.0.0.2', 'may not be in the loopback range (127.0.0.0/8, ::1/128)'),
    inv('subsets[0].ports[0].port', 70000, 'must be between 1 and 65535, inclusive'),
  ])
  const cur = (await s.request('GET', `${EP}/moving`)).json
  cur.subsets[0].addresses[0].nodeName = 'worker-2'
  const o = await accepted(t, 'PUT', `${EP}/moving`, cur)
  t.equal(o.subsets[0].addresses[0].nodeName, 'worker-2')
  // A merge patch is checked too.
  const r = await s.request('PATCH', `${EP}/moving`, { subsets: [{ addresses: [{ ip: 'fe80::9' }] }] }, { 'content-type': 'application/merge-patch+json' })
  t.equal(r.status, 422, r.text)
  t.same(r.json.details.causes, [inv('subsets[0].addresses[0].ip', 'fe80::9', 'may not be in the link-local range (169.254.0.0/16, fe80::/10)')])
})

// ---- CSIDriver ----

const DK = 'CSIDriver.storage.orch.io'
const driver = (name: string, spec: Obj = {}): Obj => ({ apiVersion: 'storage.orch.io/v1', kind: 'CSIDriver', metadata: { name }, spec })
const driverRefused = (t: import('tap').Test, body: Obj, causes: Cause[]) => expectRefused(t, s, DRIVERS, body, DK, causes)

t.test('CSIDrivers as drivers deploy them are accepted', async (t) => {
  let o = await accepted(t, 'POST', DRIVERS, driver('plain.csi.example.com'))
  t.same(o.spec, { attachRequired: true, podInfoOnMount: false, storageCapacity: false, fsGroupPolicy: 'ReadWriteOnceWithFSType', volumeLifecycleModes: ['Persistent'], requiresRepublish: false, seLinuxMount: false })
  o = await accepted(t, 'POST', DRIVERS, driver('full.csi.example.com', {
    attachRequired: false, podInfoOnMount: true, storageCapacity: true, fsGroupPolicy: 'File', volumeLifecycleModes: ['Persistent', 'Ephemeral'],
    tokenRequests: [{ audience: 'vault', expirationSeconds: 600 }, { audience: '', expirationSeconds: 2 ** 32 }], requiresRepublish: true,
    seLinuxMount: true, nodeAllocatableUpdatePeriodSeconds: 10, serviceAccountTokenInSecrets: true,
  }))
  t.equal(o.spec.serviceAccountTokenInSecrets, true)
  await accepted(t, 'POST', DRIVERS, driver('none.csi.example.com', { fsGroupPolicy: 'None', volumeLifecycleModes: ['Ephemeral'] }))
})

t.test('CSIDriver spec: known values, token requests, refresh period, tokens in secrets only with token requests', async (t) => {
  await driverRefused(t, driver('bad.csi.example.com', {
    fsGroupPolicy: 'Sometimes', volumeLifecycleModes: ['Persistent', 'Forever'],
    tokenRequests: [{ audience: 'a', expirationSeconds: 599 }, { audience: 'a', expirationSeconds: 1 }, { audience: 'b', expirationSeconds: 2 ** 32 + 1 }],
    nodeAllocatableUpdatePeriodSeconds: 5,
  }), [
    unsupported('spec.fsGroupPolicy', 'Sometimes', ['File', 'None', 'ReadWriteOnceWithFSType']),
    inv('spec.tokenRequests[0].expirationSeconds', 599, 'may not specify a duration less than 10 minutes'),
    dup('spec.tokenRequests[1].audience', 'a'),
    inv('spec.tokenRequests[2].expirationSeconds', 2 ** 32 + 1, 'may not specify a duration larger than 2^32 seconds'),
    unsupported('spec.volumeLifecycleModes', 'Forever', ['Persistent', 'Ephemeral']),
    inv('spec.nodeAllocatableUpdatePeriodSeconds', 5, 'must be greater than or equal to 10 seconds'),
  ])
  await driverRefused(t, driver('secrets.csi.example.com', { serviceAccountTokenInSecrets: false }), [
    inv('spec.serviceAccountTokenInSecrets', false, 'serviceAccountTokenInSecrets is set but no tokenRequests are specified'),
  ])
  await driverRefused(t, driver('Bad_Name'), [inv('metadata.name', 'Bad_Name', SUBDOMAIN_MSG)])
})

t.test('CSIDriver updates: attachRequired and volumeLifecycleModes are immutable, the rest may change', async (t) => {
  const path = `${DRIVERS}/plain.csi.example.com`
  await refusedUpdate(t, path, DK, (o) => { o.spec.attachRequired = false; o.spec.volumeLifecycleModes = ['Ephemeral']; o.spec.fsGroupPolicy = 'Never' }, [
    unsupported('spec.fsGroupPolicy', 'Never', ['File', 'None', 'ReadWriteOnceWithFSType']),
    inv('spec.attachedRequired', false, 'field is immutable'),
    { field: 'spec.volumeLifecycleModes', reason: 'FieldValueInvalid', message: 'Invalid value: []storage.VolumeLifecycleMode{"Ephemeral"}: field is immutable' },
  ])
  const cur = (await s.request('GET', path)).json
  cur.spec = { ...cur.spec, podInfoOnMount: true, storageCapacity: true, fsGroupPolicy: 'None', tokenRequests: [{ audience: 'vault' }], requiresRepublish: true, seLinuxMount: true, nodeAllocatableUpdatePeriodSeconds: 60, serviceAccountTokenInSecrets: true }
  const o = await accepted(t, 'PUT', path, cur)
  t.same([o.spec.podInfoOnMount, o.spec.storageCapacity, o.spec.fsGroupPolicy, o.spec.tokenRequests], [true, true, 'None', [{ audience: 'vault' }]])
})

// ---- CSINode ----

const NK = 'CSINode.storage.orch.io'
const csiNode = (name: string, drivers: Obj[]): Obj => ({ apiVersion: 'storage.orch.io/v1', kind: 'CSINode', metadata: { name }, spec: { drivers } })
const nodeRefused = (t: import('tap').Test, body: Obj, causes: Cause[]) => expectRefused(t, s, NODES, body, NK, causes)

t.test('CSINodes as the kubelet writes them are accepted', async (t) => {
  await accepted(t, 'POST', NODES, csiNode('worker-1', [
    { name: 'ebs.csi.aws.com', nodeID: 'i-0abc', topologyKeys: ['topology.ebs.csi.aws.com/zone'], allocatable: { count: 25 } },
    { name: 'Hostpath.CSI.example.com', nodeID: 'n'.repeat(256), allocatable: { count: 0 } },
  ]))
  await accepted(t, 'POST', NODES, csiNode('worker-2', []))
})

t.test('CSINode drivers: names, node IDs, counts, topology keys', async (t) => {
  await nodeRefused(t, csiNode('bad-1', [{ name: '', nodeID: '' }, { name: 'a'.repeat(64), nodeID: 'x'.repeat(257), allocatable: { count: -1 } }]), [
    req('spec.drivers[0].name'),
    inv('spec.drivers[0].name', '', SUBDOMAIN_MSG),
    req('spec.drivers[0].nodeID'),
    { field: 'spec.drivers[1].name', reason: 'FieldValueTooLong', message: 'Too long: may not be more than 63 bytes' },
    inv('spec.drivers[1].nodeID', 'x'.repeat(257), 'must be 256 characters or less'),
    inv('spec.drivers[1].allocatable.count', -1, 'must be greater than or equal to 0'),
  ])
  await nodeRefused(t, csiNode('bad-2', [
    { name: 'Bad_Driver', nodeID: 'n1', topologyKeys: ['zone', 'zone', '', 'bad key'] },
    { name: 'Bad_Driver', nodeID: 'n2' },
  ]), [
    inv('spec.drivers[0].name', 'Bad_Driver', SUBDOMAIN_MSG),
    dup('spec.drivers[0]', 'zone'),
    req('spec.drivers[0]'),
    inv('spec.drivers[0]', '', 'name part must be non-empty'),
    inv('spec.drivers[0]', '', QUALIFIED_MSG),
    inv('spec.drivers[0]', 'bad key', QUALIFIED_MSG),
    inv('spec.drivers[1].name', 'Bad_Driver', SUBDOMAIN_MSG),
    dup('spec.drivers[1].name', 'Bad_Driver'),
  ])
})

t.test('CSINode updates: a registered driver keeps its node ID and topology keys; its count, and the list, may change', async (t) => {
  const path = `${NODES}/worker-3`
  await accepted(t, 'POST', NODES, csiNode('worker-3', [{ name: 'a.csi.example.com', nodeID: 'n1', topologyKeys: ['zone'], allocatable: { count: 1 } }]))
  await refusedUpdate(t, path, NK, (o) => { o.spec.drivers[0].nodeID = 'n2'; o.spec.drivers[0].allocatable.count = 2 }, [
    { field: 'spec.drivers', reason: 'FieldValueInvalid', message: 'Invalid value: storage.CSINodeDriver{Name:"a.csi.example.com", NodeID:"n2", TopologyKeys:[]string{"zone"}, Allocatable:(*storage.VolumeNodeResources)(nil)}: field is immutable' },
  ])
  await refusedUpdate(t, path, NK, (o) => { delete o.spec.drivers[0].topologyKeys }, [
    { field: 'spec.drivers', reason: 'FieldValueInvalid', message: 'Invalid value: storage.CSINodeDriver{Name:"a.csi.example.com", NodeID:"n1", TopologyKeys:[]string(nil), Allocatable:(*storage.VolumeNodeResources)(nil)}: field is immutable' },
  ])
  let cur = (await s.request('GET', path)).json
  cur.spec.drivers[0].allocatable.count = 7
  cur.spec.drivers.push({ name: 'b.csi.example.com', nodeID: 'other' })
  let o = await accepted(t, 'PUT', path, cur)
  t.same(o.spec.drivers.map((d: Obj) => [d.name, d.allocatable?.count]), [['a.csi.example.com', 7], ['b.csi.example.com', undefined]])
  cur = o
  cur.spec.drivers = []
  o = await accepted(t, 'PUT', path, cur)
  t.same(o.spec.drivers ?? [], [], 'drivers may be unregistered')
})

// ---- CSIStorageCapacity ----

const CK = 'CSIStorageCapacity.storage.orch.io'
const capacity = (name: string, fields: Obj): Obj => ({ apiVersion: 'storage.orch.io/v1', kind: 'CSIStorageCapacity', metadata: { name }, ...fields })
const capRefused = (t: import('tap').Test, body: Obj, causes: Cause[]) => expectRefused(t, s, CAPS, body, CK, causes)
const zoneA = { matchLabels: { 'topology.ebs.csi.aws.com/zone': 'eu-west-1a' } }

t.test('CSIStorageCapacities as the external provisioner writes them are accepted', async (t) => {
  await accepted(t, 'POST', CAPS, capacity('cap-a', { storageClassName: 'fast', capacity: '10Gi', maximumVolumeSize: '1Ti', nodeTopology: zoneA }))
  await accepted(t, 'POST', CAPS, capacity('cap-any', { storageClassName: 'fast', capacity: '0' }))
})

t.test('CSIStorageCapacity: selector, storage class name, capacity', async (t) => {
  await capRefused(t, capacity('cap-bad', {
    storageClassName: 'Fast_Class', capacity: '-1Gi',
    nodeTopology: { matchLabels: { 'bad key': 'v' }, matchExpressions: [{ key: 'zone', operator: 'In', values: ['bad value'] }] },
  }), [
    inv('nodeTopology.matchLabels', 'bad key', QUALIFIED_MSG),
    inv('nodeTopology.matchExpressions[0].values[0]', 'bad value', LABEL_VALUE_MSG),
    inv('storageClassName', 'Fast_Class', SUBDOMAIN_MSG),
    inv('capacity', '-1Gi', 'must be greater than or equal to 0'),
  ])
  await capRefused(t, capacity('cap-empty', { storageClassName: '' }), [inv('storageClassName', '', SUBDOMAIN_MSG)])
})

t.test('CSIStorageCapacity updates: nodeTopology and storageClassName are immutable, the capacities may change', async (t) => {
  const path = `${CAPS}/cap-a`
  await refusedUpdate(t, path, CK, (o) => { o.storageClassName = 'slow'; o.nodeTopology = { matchLabels: { 'topology.ebs.csi.aws.com/zone': 'eu-west-1b' } } }, [
    { field: 'nodeTopology', reason: 'FieldValueInvalid', message: 'Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"topology.ebs.csi.aws.com/zone":"eu-west-1b"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable' },
    inv('storageClassName', 'slow', 'field is immutable'),
  ])
  await refusedUpdate(t, path, CK, (o) => { delete o.nodeTopology }, [{ field: 'nodeTopology', reason: 'FieldValueInvalid', message: 'Invalid value: null: field is immutable' }])
  const cur = (await s.request('GET', path)).json
  cur.capacity = '5Gi'
  cur.maximumVolumeSize = '2Gi'
  const o = await accepted(t, 'PUT', path, cur)
  t.same([o.capacity, o.maximumVolumeSize], ['5Gi', '2Gi'])
})
