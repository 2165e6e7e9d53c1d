// Black-box: EndpointSlice validation (upstream ValidateEndpointSlice{Create,Update}) — refused objects are 422 with
// upstream's causes and store nothing; slices as the endpointslice controller writes them are created.
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'
import { expectRefused } from '../helpers/refused.js'

let s: TestServer
const ES = '/apis/discovery.orch.io/v1/namespaces/default/endpointslices'
const K = 'EndpointSlice.discovery.orch.io'

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

type Obj = Record<string, any>
type Cause = { field: string; reason: string; message: string }
const slice = (name: string, addressType: string, endpoints: Obj[], ports: Obj[] = []): Obj => ({ apiVersion: 'discovery.orch.io/v1', kind: 'EndpointSlice', metadata: { name }, addressType, endpoints, ports })
const refused = (t: import('tap').Test, body: Obj, causes: Cause[]) => expectRefused(t, s, ES, body, K, causes)
const inv = (field: string, value: string, detail: string): Cause => ({ field, reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(value)}: ${detail}` })

/** What the endpointslice controller writes for a Service with two ready pods. */
const controllerSlice = (name: string, addressType = 'IPv4', addrs = ['10.244.1.5', '10.244.2.7']): Obj => ({
  apiVersion: 'discovery.orch.io/v1', kind: 'EndpointSlice',
  metadata: { name, labels: { 'orch.io/service-name': 'web', 'endpointslice.orch.io/managed-by': 'endpointslice-controller.orch.io' } },
  addressType,
  endpoints: addrs.map((a, i) => ({
    addresses: [a], conditions: { ready: true, serving: true, terminating: false }, nodeName: `worker-${i + 1}`, zone: 'us-east-1a',
    targetRef: { kind: 'Pod', namespace: 'default', name: `web-${i}`, uid: `00000000-0000-0000-0000-00000000000${i}` },
  })),
  ports: [{ name: 'http', port: 8080, protocol: 'TCP', appProtocol: 'http' }, { name: 'metrics', port: 9090, protocol: 'TCP' }],
})

t.test('slices as the controller writes them (IPv4, IPv6, FQDN, no endpoints yet) are created', async (t) => {
  for (const body of [
    controllerSlice('web-ipv4'),
    controllerSlice('web-ipv6', 'IPv6', ['fd00:10:244:1::5', '2001:db8::7']),
    controllerSlice('web-fqdn', 'FQDN', ['db.example.com', 'cache.example.com.']),
    { ...controllerSlice('web-empty'), endpoints: [], ports: [{ port: 80 }] },
  ]) {
    const r = await s.request('POST', ES, body)
    t.equal(r.status, 201, r.text)
  }
})

t.test('addressType: required, one of three, immutable', async (t) => {
  const none = slice('no-type', 'IPv4', [])
  delete none.addressType
  await refused(t, none, [{ field: 'addressType', reason: 'FieldValueRequired', message: 'Required value' }])
  await refused(t, slice('ip-type', 'IP', []), [{ field: 'addressType', reason: 'FieldValueNotSupported', message: 'Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"' }])
  const r = await s.request('GET', `${ES}/web-ipv4`)
  const body = r.json
  body.addressType = 'IPv6'
  body.endpoints = []
  const u = await s.request('PUT', `${ES}/web-ipv4`, body)
  t.equal(u.status, 422, u.text)
  t.same(u.json.details.causes, [{ reason: 'FieldValueInvalid', message: 'Invalid value: "IPv6": field is immutable', field: 'addressType' }])
})

t.test('addresses of each type', async (t) => {
  await refused(t, slice('bad-v4', 'IPv4', [{ addresses: ['fd00::1', 'nope', '127.0.0.1', '0.0.0.0', '169.254.169.254', '224.0.0.5'] }]), [
    inv('endpoints[0].addresses[0]', 'fd00::1', 'must be a valid IPv4 address'),
    inv('endpoints[0].addresses[1]', 'nope', 'must be a valid IPv4 address'),
    inv('endpoints[0].addresses[1]', 'nope', 'must be a valid IP address'),
    inv('endpoints[0].addresses[2]', '127.0.0.1', 'may not be in the loopback range (127.0.0.0/8, ::1/128)'),
    inv('endpoints[0].addresses[3]', '0.0.0.0', 'may not be unspecified (0.0.0.0)'),
    inv('endpoints[0].addresses[4]', '169.254.169.254', 'may not be in the link-local range (169.254.0.0/16, fe80::/10)'),
    inv('endpoints[0].addresses[5]', '224.0.0.5', 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'),
  ])
  await refused(t, slice('bad-v6', 'IPv6', [{ addresses: ['10.0.0.1', '::1', 'fe80::1'] }]), [
    inv('endpoints[0].addresses[0]', '10.0.0.1', 'must be a valid IPv6 address'),
    inv('endpoints[0].addresses[1]', '::1', 'may not be in the loopback range (127.0.0.0/8, ::1/128)'),
    inv('endpoints[0].addresses[2]', 'fe80::1', 'may not be in the link-local range (169.254.0.0/16, fe80::/10)'),
  ])
  await refused(t, slice('bad-fqdn', 'FQDN', [{ addresses: ['localhost', 'Db.example.com', ''] }]), [
    inv('endpoints[0].addresses[0]', 'localhost', 'should be a domain with at least two segments separated by dots'),
    inv('endpoints[0].addresses[1]', 'Db.example.com', 'a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')'),
    { field: 'endpoints[0].addresses[2]', reason: 'FieldValueRequired', message: 'Required value' },
  ])
  await refused(t, slice('no-addr', 'IPv4', [{ addresses: [] }, { addresses: Array.from({ length: 101 }, (_, i) => `10.0.${i >> 8}.${(i & 255) + 1}`) }]), [
    { field: 'endpoints[0].addresses', reason: 'FieldValueRequired', message: 'Required value: must contain at least 1 address' },
    { field: 'endpoints[1].addresses', reason: 'FieldValueTooMany', message: 'Too many: 101: must have at most 100 items' },
  ])
  const many = Array.from({ length: 1001 }, (_, i) => ({ addresses: [`10.1.${i >> 8}.${(i & 255) + 1}`] }))
  await refused(t, slice('many', 'IPv4', many), [{ field: 'endpoints', reason: 'FieldValueTooMany', message: 'Too many: 1001: must have at most 1000 items' }])
})

t.test('hostname, nodeName, topology, zone hints', async (t) => {
  await refused(t, slice('ep-fields', 'IPv4', [{
    addresses: ['10.0.0.1'], hostname: 'web.0', nodeName: 'Worker_1',
    deprecatedTopology: { 'topology.orch.io/zone': 'a' }, hints: { forZones: [{ name: 'a' }, { name: 'a' }] },
  }]), [
    inv('endpoints[0].nodeName', 'Worker_1', 'a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')'),
    { field: 'endpoints[0].deprecatedTopology[topology.orch.io/zone]', reason: 'InternalError', message: 'Internal error: reserved key was not removed in conversion' },
    inv('endpoints[0].hostname', 'web.0', 'a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', and must start and end with an alphanumeric character (e.g. \'my-name\',  or \'123-abc\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?\')'),
    { field: 'endpoints[0].hints.forZones[1].name', reason: 'FieldValueDuplicate', message: 'Duplicate value: "a"' },
  ])
})

t.test('ports: name, unique names (two unnamed ports too), protocol, appProtocol, at most 20000', async (t) => {
  await refused(t, slice('ports', 'IPv4', [], [{ name: 'HTTP', port: 80 }, { port: 81, protocol: 'HTTP' }, { port: 82, appProtocol: 'a/b/c' }]), [
    inv('ports[0].name', 'HTTP', 'a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', and must start and end with an alphanumeric character (e.g. \'my-name\',  or \'123-abc\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?\')'),
    { field: 'ports[1].protocol', reason: 'FieldValueNotSupported', message: 'Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"' },
    { field: 'ports[2].name', reason: 'FieldValueDuplicate', message: 'Duplicate value: ""' },
    inv('ports[2].appProtocol', 'a/b/c', 'a qualified name must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\') with an optional DNS subdomain prefix and \'/\' (e.g. \'example.com/MyName\')'),
  ])
})
