// Black-box: the API server's own Service default/kubernetes (with its Endpoints and EndpointSlice); services get cluster IPs and node ports as kube-apiserver allocates them (--service-cluster-ip-range,
// --service-node-port-range): on create (explicit values checked, dry runs keep nothing, a failed create gives back
// what it took), on update (immutable cluster IP, type changes take and free), on delete (also through a namespace's
// deletion and a finalizer's removal), across restarts, and atomically across two front-end threads. kubectl's
// `create service nodeport`, `expose` and `get svc` on top.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type Reply, type TestServer } from '../helpers/server.js'
import { runKubectl } from '../helpers/kubectl.js'
import { eventually } from '../helpers/poll.js'

type Obj = Record<string, any>

let s: TestServer
const home = mkdtempSync(join(tmpdir(), 'orch-svc-kubectl-home-'))

t.before(async () => { s = await startServer({ secure: true, args: ['--frontends', '2', '--advertise-address', '192.0.2.10'] }) })
t.teardown(async () => {
  await s?.stop()
  rmSync(home, { recursive: true, force: true })
})

const SVCS = '/api/v1/namespaces/default/services'

function svc(name: string, spec: Obj): Obj { return { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec } }

async function create(body: Obj, server = s, path = SVCS): Promise<Obj> {
  const r = await server.request('POST', path, body)
  if (r.status !== 201) throw new Error(`create ${body.metadata.name}: ${r.status} ${r.text}`)
  return r.json
}

function invalidStatus(name: string, causes: Array<[string, string]>): Obj {
  const lines = causes.map(([f, m]) => `${f}: ${m}`)
  return {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: `Service "${name}" is invalid: ${lines.length === 1 ? lines[0] : `[${lines.join(', ')}]`}`,
    reason: 'Invalid',
    details: { name, kind: 'Service', causes: causes.map(([field, message]) => ({ reason: 'FieldValueInvalid', message, field })) },
    code: 422,
  }
}

function internalStatus(message: string): Obj {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `Internal error occurred: ${message}`, reason: 'InternalError', details: { causes: [{ message }] }, code: 500 }
}

const lastOctet = (ip: string): number => Number(ip.split('.')[3])

t.test('the API server keeps default/kubernetes: the first address, 443 to its port, endpoints at its advertised address', async (t) => {
  const k = await s.request('GET', `${SVCS}/kubernetes`)
  t.equal(k.status, 200)
  t.same(k.json.metadata.labels, { component: 'apiserver', provider: 'kubernetes' })
  t.same([k.json.spec.type, k.json.spec.clusterIP, k.json.spec.clusterIPs, k.json.spec.ports], ['ClusterIP', '10.0.0.1', ['10.0.0.1'], [{ name: 'https', protocol: 'TCP', port: 443, targetPort: s.securePort }]])
  const ep = await s.request('GET', '/api/v1/namespaces/default/endpoints/kubernetes')
  t.same(ep.json.metadata.labels, { 'endpointslice.orch.io/skip-mirror': 'true' })
  t.same(ep.json.subsets, [{ addresses: [{ ip: '192.0.2.10' }], ports: [{ name: 'https', port: s.securePort, protocol: 'TCP' }] }])
  const es = await s.request('GET', '/apis/discovery.orch.io/v1/namespaces/default/endpointslices/kubernetes')
  t.same(es.json.metadata.labels, { 'orch.io/service-name': 'kubernetes' })
  t.same([es.json.addressType, es.json.endpoints, es.json.ports], ['IPv4', [{ addresses: ['192.0.2.10'], conditions: { ready: true } }], [{ name: 'https', protocol: 'TCP', port: s.securePort }]])
  // Deleted or changed: put back (with its address again).
  t.equal((await s.request('DELETE', `${SVCS}/kubernetes`)).status, 200)
  t.ok(await eventually(async () => (await s.request('GET', `${SVCS}/kubernetes`)).json?.metadata?.uid !== undefined), 'made again')
  const again = await s.request('GET', `${SVCS}/kubernetes`)
  t.not(again.json.metadata.uid, k.json.metadata.uid)
  t.equal(again.json.spec.clusterIP, '10.0.0.1')
  let r = await s.request('PATCH', `${SVCS}/kubernetes`, { spec: { ports: [{ name: 'https', port: 8443, targetPort: 1 }] } }, { 'content-type': 'application/merge-patch+json' })
  t.equal(r.status, 200, r.text)
  t.ok(await eventually(async () => (await s.request('GET', `${SVCS}/kubernetes`)).json.spec.ports[0].port === 443), 'ports put back')
  r = await s.request('PATCH', '/api/v1/namespaces/default/endpoints/kubernetes', { subsets: [] }, { 'content-type': 'application/merge-patch+json' })
  t.equal(r.status, 200, r.text)
  t.ok(await eventually(async () => (await s.request('GET', '/api/v1/namespaces/default/endpoints/kubernetes')).json.subsets?.[0]?.addresses?.[0]?.ip === '192.0.2.10'), 'endpoints put back')
  t.equal((await s.request('DELETE', '/apis/discovery.orch.io/v1/namespaces/default/endpointslices/kubernetes')).status, 200)
  t.ok(await eventually(async () => (await s.request('GET', '/apis/discovery.orch.io/v1/namespaces/default/endpointslices/kubernetes')).status === 200), 'slice made again')
  // Nothing is rewritten while it is as it should be.
  const rv = (await s.request('GET', '/api/v1/namespaces/default/endpoints/kubernetes')).json.metadata.resourceVersion
  await new Promise((res) => setTimeout(res, 500))
  t.equal((await s.request('GET', '/api/v1/namespaces/default/endpoints/kubernetes')).json.metadata.resourceVersion, rv)
})

t.test('a ClusterIP service gets an address of the dynamic band, its clusterIPs and IP family fields', async (t) => {
  const o = await create(svc('plain', { selector: { app: 'a' }, ports: [{ port: 80 }] }))
  t.match(o.spec.clusterIP, /^10\.0\.0\.\d+$/)
  // /24: the first 16 addresses are the static band, dynamic allocation takes from .17 to .254 first.
  t.ok(lastOctet(o.spec.clusterIP) >= 17 && lastOctet(o.spec.clusterIP) <= 254, `${o.spec.clusterIP} is in the upper band`)
  t.same(o.spec.clusterIPs, [o.spec.clusterIP])
  t.same(o.spec.ipFamilies, ['IPv4'])
  t.equal(o.spec.ipFamilyPolicy, 'SingleStack')
  t.equal(o.spec.ports[0].nodePort, undefined, 'no node port for ClusterIP')
  const g = await s.request('GET', `${SVCS}/plain`)
  t.equal(g.json.spec.clusterIP, o.spec.clusterIP, 'stored as answered')
  const fields = g.json.metadata.managedFields[0].fieldsV1['f:spec']
  t.equal(fields['f:clusterIP'], undefined, 'the allocated address belongs to no manager')
})

t.test('headless, headless without selector, ExternalName', async (t) => {
  const h = await create(svc('headless', { clusterIP: 'None', selector: { app: 'h' }, ports: [{ port: 80 }] }))
  t.same([h.spec.clusterIP, h.spec.clusterIPs, h.spec.ipFamilies, h.spec.ipFamilyPolicy], ['None', ['None'], ['IPv4'], 'SingleStack'])
  const hs = await create(svc('headless-nosel', { clusterIP: 'None', ports: [{ port: 80 }] }))
  t.same([hs.spec.clusterIPs, hs.spec.ipFamilies, hs.spec.ipFamilyPolicy], [['None'], ['IPv4', 'IPv6'], 'RequireDualStack'], 'as upstream: any family for selectorless headless')
  const e = await create(svc('ext', { type: 'ExternalName', externalName: 'db.example.com' }))
  t.same([e.spec.clusterIP, e.spec.clusterIPs, e.spec.ipFamilies, e.spec.ipFamilyPolicy], [undefined, undefined, undefined, undefined])
  const r = await s.request('POST', SVCS, svc('ext-ip', { type: 'ExternalName', externalName: 'db.example.com', clusterIP: '10.0.0.9' }))
  t.equal(r.status, 422)
  t.equal(r.json.message, 'Service "ext-ip" is invalid: spec.clusterIPs: Forbidden: may not be set for ExternalName services')
})

t.test('an explicit cluster IP: in range and free, else upstream\'s 422', async (t) => {
  const o = await create(svc('fixed', { clusterIP: '10.0.0.10', ports: [{ port: 80 }] }))
  t.same([o.spec.clusterIP, o.spec.clusterIPs], ['10.0.0.10', ['10.0.0.10']])
  let r = await s.request('POST', SVCS, svc('fixed2', { clusterIP: '10.0.0.10', ports: [{ port: 80 }] }))
  t.same(r.json, invalidStatus('fixed2', [['spec.clusterIPs', 'Invalid value: []string{"10.0.0.10"}: failed to allocate IP 10.0.0.10: provided IP is already allocated']]))
  r = await s.request('POST', SVCS, svc('fixed2', { clusterIP: '10.1.0.10', clusterIPs: ['10.1.0.10'], ports: [{ port: 80 }] }))
  t.same(r.json, invalidStatus('fixed2', [['spec.clusterIPs', 'Invalid value: []string{"10.1.0.10"}: failed to allocate IP 10.1.0.10: the provided IP (10.1.0.10) is not in the valid range. The range of valid IPs is 10.0.0.0/24']]))
  r = await s.request('POST', SVCS, svc('fixed2', { clusterIP: '10.0.0.0', ports: [{ port: 80 }] }))
  t.equal(r.json.details.causes[0].message, 'Invalid value: []string{"10.0.0.0"}: failed to allocate IP 10.0.0.0: the provided IP (10.0.0.0) is not in the valid range. The range of valid IPs is 10.0.0.0/24', 'never the network address')
  r = await s.request('POST', SVCS, svc('fixed2', { clusterIP: '10.0.0.255', ports: [{ port: 80 }] }))
  t.match(r.json.message, /the provided IP \(10\.0\.0\.255\) is not in the valid range/, 'nor the broadcast address')
  r = await s.request('POST', SVCS, svc('fixed2', { clusterIP: '10.0.0.1', ports: [{ port: 80 }] }))
  t.same(r.json, invalidStatus('fixed2', [['spec.clusterIPs', 'Invalid value: []string{"10.0.0.1"}: failed to allocate IP 10.0.0.1: provided IP is already allocated']]), 'the first address is the API server\'s own')
  r = await s.request('POST', SVCS, svc('fixed2', { clusterIP: 'ten', ports: [{ port: 80 }] }))
  t.same(r.json, invalidStatus('fixed2', [['spec.clusterIPs[0]', 'Invalid value: "ten": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)']]))
  r = await s.request('POST', SVCS, svc('fixed2', { clusterIP: 'fd00::1', ports: [{ port: 80 }] }))
  t.same(r.json, invalidStatus('fixed2', [['spec.clusterIPs[0]', 'Invalid value: []string{"fd00::1"}: IPv6 is not configured on this cluster']]))
  r = await s.request('POST', SVCS, svc('fixed2', { ipFamilyPolicy: 'RequireDualStack', ports: [{ port: 80 }] }))
  t.same(r.json, invalidStatus('fixed2', [['spec.ipFamilyPolicy', 'Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services']]))
  const p = await create(svc('prefer', { ipFamilyPolicy: 'PreferDualStack', ports: [{ port: 80 }] }))
  t.same([p.spec.ipFamilyPolicy, p.spec.ipFamilies, p.spec.clusterIPs.length], ['PreferDualStack', ['IPv4'], 1], 'PreferDualStack gets the one family there is')
})

// Explicit node ports and addresses in this file come from the static bands (30000-30085, 10.0.0.1-10.0.0.16), which
// dynamic allocation leaves alone while the upper bands have room: a random pick can never take them first.
t.test('NodePort: a node port per port, explicit ones checked', async (t) => {
  const o = await create(svc('np', { type: 'NodePort', ports: [{ name: 'a', port: 80 }, { name: 'b', port: 81 }, { name: 'c', port: 80, protocol: 'UDP' }] }))
  const [a, b, c] = o.spec.ports.map((p: Obj) => p.nodePort)
  // 30000-32767: the first 86 ports are the static band, dynamic allocation takes from 30086 first.
  for (const p of [a, b]) t.ok(p >= 30086 && p <= 32767, `${p} is in the upper band`)
  t.not(a, b)
  t.equal(c, a, 'ports of one number share their node port (upstream initNodePorts)')
  t.match(o.spec.clusterIP, /^10\.0\.0\./)
  const e = await create(svc('np-explicit', { type: 'NodePort', ports: [{ port: 80, nodePort: 30010 }] }))
  t.equal(e.spec.ports[0].nodePort, 30010)
  let r = await s.request('POST', SVCS, svc('np2', { type: 'NodePort', ports: [{ port: 80, nodePort: 30010 }] }))
  t.same(r.json, invalidStatus('np2', [['spec.ports[0].nodePort', 'Invalid value: 30010: provided port is already allocated']]))
  r = await s.request('POST', SVCS, svc('np2', { type: 'NodePort', ports: [{ port: 80, nodePort: 29999 }] }))
  t.same(r.json, invalidStatus('np2', [['spec.ports[0].nodePort', 'Invalid value: 29999: provided port is not in the valid range. The range of valid ports is 30000-32767']]))
  r = await s.request('POST', SVCS, svc('np2', { ports: [{ port: 80, nodePort: 30011 }] }))
  t.equal(r.json.message, 'Service "np2" is invalid: spec.ports[0].nodePort: Forbidden: may not be used when `type` is \'ClusterIP\'')
  // The failed creates gave back their addresses and ports: 30011 was never taken.
  await create(svc('np3', { type: 'NodePort', ports: [{ port: 80, nodePort: 30011 }] }))
})

t.test('LoadBalancer: node ports unless allocateLoadBalancerNodePorts=false; a health-check port for Local', async (t) => {
  const lb = await create(svc('lb', { type: 'LoadBalancer', ports: [{ port: 443 }] }))
  t.ok(lb.spec.ports[0].nodePort >= 30000)
  t.equal(lb.spec.allocateLoadBalancerNodePorts, true)
  t.equal(lb.spec.healthCheckNodePort, undefined)
  const none = await create(svc('lb-none', { type: 'LoadBalancer', allocateLoadBalancerNodePorts: false, ports: [{ port: 443 }] }))
  t.equal(none.spec.ports[0].nodePort, undefined)
  t.match(none.spec.clusterIP, /^10\.0\.0\./)
  const local = await create(svc('lb-local', { type: 'LoadBalancer', externalTrafficPolicy: 'Local', ports: [{ port: 443 }] }))
  t.ok(local.spec.healthCheckNodePort >= 30000 && local.spec.healthCheckNodePort <= 32767)
  t.not(local.spec.healthCheckNodePort, local.spec.ports[0].nodePort)
  const r = await s.request('POST', SVCS, svc('lb-hc', { type: 'LoadBalancer', externalTrafficPolicy: 'Local', healthCheckNodePort: local.spec.healthCheckNodePort, ports: [{ port: 443 }] }))
  t.same(r.json, internalStatus(`failed to allocate requested HealthCheck NodePort ${local.spec.healthCheckNodePort}: provided port is already allocated`))
  const tbl = await s.request('GET', `${SVCS}/lb-local`, undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' })
  t.same(tbl.json.rows[0].cells.slice(0, 5), ['lb-local', 'LoadBalancer', local.spec.clusterIP, '<pending>', `443:${local.spec.ports[0].nodePort}/TCP`])
})

t.test('dry run: checked and shown as upstream\'s dry-run allocators do, nothing kept', async (t) => {
  let r = await s.request('POST', `${SVCS}?dryRun=All`, svc('dry', { type: 'NodePort', ports: [{ name: 'a', port: 80 }, { name: 'b', port: 81 }] }))
  t.equal(r.status, 201)
  t.equal(r.json.spec.clusterIP, '10.0.0.0', 'the range\'s network address stands for the address a create would get')
  t.same(r.json.spec.ports.map((p: Obj) => p.nodePort), [32769, 32770])
  t.equal((await s.request('GET', `${SVCS}/dry`)).status, 404)
  r = await s.request('POST', `${SVCS}?dryRun=All`, svc('dry', { clusterIP: '10.0.0.8', type: 'NodePort', ports: [{ port: 80, nodePort: 30012 }] }))
  t.same([r.status, r.json.spec.clusterIP, r.json.spec.ports[0].nodePort], [201, '10.0.0.8', 30012])
  await create(svc('after-dry', { clusterIP: '10.0.0.8', type: 'NodePort', ports: [{ port: 80, nodePort: 30012 }] }))
  r = await s.request('POST', `${SVCS}?dryRun=All`, svc('dry', { type: 'NodePort', ports: [{ port: 80, nodePort: 30012 }] }))
  t.same(r.json, invalidStatus('dry', [['spec.ports[0].nodePort', 'Invalid value: 30012: provided port is already allocated']]), 'a taken port is refused in a dry run too')
  r = await s.request('POST', `${SVCS}?dryRun=All`, svc('dry', { clusterIP: '10.9.0.1', ports: [{ port: 80 }] }))
  t.equal(r.status, 422, 'an address out of range is refused in a dry run too')
  // A dry-run delete keeps the address.
  r = await s.request('DELETE', `${SVCS}/after-dry?dryRun=All`)
  t.equal(r.status, 200)
  r = await s.request('POST', SVCS, svc('after-dry2', { clusterIP: '10.0.0.8', ports: [{ port: 80 }] }))
  t.equal(r.status, 422)
})

t.test('a create that fails after allocating gives back what it took', async (t) => {
  // Allocation runs before validation (upstream's BeginCreate); the invalid sessionAffinity fails the create after it.
  let r = await s.request('POST', SVCS, svc('bad', { clusterIP: '10.0.0.11', type: 'NodePort', sessionAffinity: 'Sticky', ports: [{ port: 80, nodePort: 30013 }] }))
  t.equal(r.status, 422)
  t.match(r.json.message, 'spec.sessionAffinity: Unsupported value: "Sticky"')
  r = await s.request('POST', SVCS, svc('taken', { clusterIP: '10.0.0.12', ports: [{ port: 80 }] }))
  t.equal(r.status, 201)
  r = await s.request('POST', SVCS, svc('taken2', { clusterIP: '10.0.0.12', ports: [{ port: 80 }] }))
  t.equal(r.status, 422, 'a stored service holds its address')
  r = await s.request('POST', SVCS, svc('taken', { clusterIP: '10.0.0.13', type: 'NodePort', ports: [{ port: 80, nodePort: 30014 }] }))
  t.equal(r.status, 409, 'a name that exists fails at the store')
  await create(svc('good', { clusterIP: '10.0.0.11', type: 'NodePort', ports: [{ port: 80, nodePort: 30013 }] }))
  await create(svc('good2', { clusterIP: '10.0.0.13', type: 'NodePort', ports: [{ port: 80, nodePort: 30014 }] }))
})

t.test('update: the cluster IP is immutable; a resubmitted manifest keeps what was allocated', async (t) => {
  const o = await create(svc('upd', { type: 'NodePort', selector: { app: 'u' }, ports: [{ name: 'web', port: 80 }] }))
  let r = await s.request('PATCH', `${SVCS}/upd`, { spec: { clusterIP: '10.0.0.14' } }, { 'content-type': 'application/merge-patch+json' })
  t.same(r.json, invalidStatus('upd', [['spec.clusterIPs[0]', 'Invalid value: []string{"10.0.0.14"}: may not change once set']]))
  r = await s.request('PATCH', `${SVCS}/upd`, { spec: { clusterIP: '10.0.0.14', clusterIPs: ['10.0.0.14'] } }, { 'content-type': 'application/merge-patch+json' })
  t.same(r.json, invalidStatus('upd', [['spec.clusterIPs[0]', 'Invalid value: []string{"10.0.0.14"}: may not change once set']]))
  // A PUT of the manifest as first sent (no clusterIP, no nodePort) keeps both.
  r = await s.request('PUT', `${SVCS}/upd`, svc('upd', { type: 'NodePort', selector: { app: 'u2' }, ports: [{ name: 'web', port: 80 }] }))
  t.equal(r.status, 200, r.text)
  t.same([r.json.spec.clusterIP, r.json.spec.clusterIPs, r.json.spec.ports[0].nodePort, r.json.spec.selector], [o.spec.clusterIP, o.spec.clusterIPs, o.spec.ports[0].nodePort, { app: 'u2' }])
  // A second port gets a node port of its own; the first keeps its.
  r = await s.request('PUT', `${SVCS}/upd`, svc('upd', { type: 'NodePort', ports: [{ name: 'web', port: 80 }, { name: 'metrics', port: 9090 }] }))
  t.equal(r.json.spec.ports[0].nodePort, o.spec.ports[0].nodePort)
  const metrics = r.json.spec.ports[1].nodePort
  t.ok(metrics >= 30000 && metrics !== o.spec.ports[0].nodePort)
  // Dropping the port frees its node port.
  r = await s.request('PUT', `${SVCS}/upd`, svc('upd', { type: 'NodePort', ports: [{ name: 'web', port: 80 }] }))
  t.equal(r.status, 200)
  await create(svc('takes-metrics', { type: 'NodePort', ports: [{ port: 80, nodePort: metrics }] }))
})

t.test('update: type changes take and free addresses and node ports', async (t) => {
  const o = await create(svc('morph', { ports: [{ port: 80 }] }))
  const ip = o.spec.clusterIP
  const merge = { 'content-type': 'application/merge-patch+json' }
  // ClusterIP -> NodePort: node ports allocated, the address kept.
  let r = await s.request('PATCH', `${SVCS}/morph`, { spec: { type: 'NodePort' } }, merge)
  t.equal(r.status, 200, r.text)
  const np = r.json.spec.ports[0].nodePort
  t.ok(np >= 30000)
  t.equal(r.json.spec.clusterIP, ip)
  // NodePort -> LoadBalancer (Local): the node port kept, a health-check port added.
  r = await s.request('PATCH', `${SVCS}/morph`, { spec: { type: 'LoadBalancer', externalTrafficPolicy: 'Local' } }, merge)
  t.equal(r.status, 200, r.text)
  t.equal(r.json.spec.ports[0].nodePort, np)
  const hc = r.json.spec.healthCheckNodePort
  t.ok(hc >= 30000)
  // LoadBalancer -> ClusterIP: node ports, health-check port and the type's fields dropped (upstream dropTypeDependentFields); freed.
  r = await s.request('PATCH', `${SVCS}/morph`, { spec: { type: 'ClusterIP' } }, merge)
  t.equal(r.status, 200, r.text)
  t.same([r.json.spec.ports[0].nodePort, r.json.spec.healthCheckNodePort, r.json.spec.externalTrafficPolicy, r.json.spec.allocateLoadBalancerNodePorts, r.json.spec.clusterIP], [undefined, undefined, undefined, undefined, ip])
  await create(svc('takes-np', { type: 'NodePort', ports: [{ name: 'a', port: 80, nodePort: np }, { name: 'b', port: 81, nodePort: hc }] }))
  // ClusterIP -> ExternalName: the address freed.
  r = await s.request('PATCH', `${SVCS}/morph`, { spec: { type: 'ExternalName', externalName: 'x.example.com' } }, merge)
  t.equal(r.status, 200, r.text)
  t.same([r.json.spec.clusterIP, r.json.spec.clusterIPs, r.json.spec.ipFamilies, r.json.spec.ipFamilyPolicy], [undefined, undefined, undefined, undefined])
  await create(svc('takes-ip', { clusterIP: ip, ports: [{ port: 80 }] }))
  // ExternalName -> ClusterIP: a new address.
  r = await s.request('PATCH', `${SVCS}/morph`, { spec: { type: 'ClusterIP', externalName: null } }, merge)
  t.equal(r.status, 200, r.text)
  t.match(r.json.spec.clusterIP, /^10\.0\.0\.\d+$/)
  t.not(r.json.spec.clusterIP, ip)
  t.same(r.json.spec.ipFamilies, ['IPv4'])
  // An update that fails validation gives back the node port it took.
  r = await s.request('PATCH', `${SVCS}/morph`, { spec: { type: 'NodePort', sessionAffinity: 'Sticky', ports: [{ port: 80, nodePort: 30015 }] } }, merge)
  t.equal(r.status, 422)
  await create(svc('takes-30015', { type: 'NodePort', ports: [{ port: 80, nodePort: 30015 }] }))
})

t.test('delete frees, also when a finalizer goes last and when the namespace goes', async (t) => {
  await create(svc('gone', { clusterIP: '10.0.0.15', type: 'NodePort', ports: [{ port: 80, nodePort: 30016 }] }))
  let r = await s.request('DELETE', `${SVCS}/gone`)
  t.equal(r.status, 200)
  t.equal(r.json.kind, 'Service', 'a service delete answers with the object')
  await create(svc('gone-again', { clusterIP: '10.0.0.15', type: 'NodePort', ports: [{ port: 80, nodePort: 30016 }] }))
  // Held by a finalizer: the delete marks it, the address stays taken until the finalizer goes.
  await create({ ...svc('held', { clusterIP: '10.0.0.16', ports: [{ port: 80 }] }), metadata: { name: 'held', finalizers: ['example.com/hold'] } })
  r = await s.request('DELETE', `${SVCS}/held`)
  t.ok(r.json.metadata.deletionTimestamp)
  r = await s.request('POST', SVCS, svc('wants-16', { clusterIP: '10.0.0.16', ports: [{ port: 80 }] }))
  t.equal(r.status, 422, 'still held while the object remains')
  r = await s.request('PATCH', `${SVCS}/held`, { metadata: { finalizers: null } }, { 'content-type': 'application/merge-patch+json' })
  t.equal(r.status, 200, r.text)
  t.equal((await s.request('GET', `${SVCS}/held`)).status, 404)
  await create(svc('wants-16', { clusterIP: '10.0.0.16', ports: [{ port: 80 }] }))
  // A namespace's deletion deletes its services: their addresses and ports come back.
  t.equal((await s.request('POST', '/api/v1/namespaces', { metadata: { name: 'svc-ns' } })).status, 201)
  await create(svc('in-ns', { clusterIP: '10.0.0.2', type: 'NodePort', ports: [{ port: 80, nodePort: 30017 }] }), s, '/api/v1/namespaces/svc-ns/services')
  t.equal((await s.request('DELETE', '/api/v1/namespaces/svc-ns')).status, 200)
  t.ok(await eventually(async () => (await s.request('GET', '/api/v1/namespaces/svc-ns')).status === 404, 30_000), 'the namespace is gone')
  await create(svc('after-ns', { clusterIP: '10.0.0.2', type: 'NodePort', ports: [{ port: 80, nodePort: 30017 }] }))
})

t.test('kubectl: create service nodeport, expose a deployment, get svc', async (t) => {
  const k = (args: string[]) => runKubectl(s.kubeconfig, home, args)
  let r = await k(['create', 'service', 'nodeport', 'kx', '--tcp=80:8080'])
  t.equal(r.code, 0, r.stderr)
  r = await k(['get', 'svc', 'kx'])
  t.equal(r.code, 0, r.stderr)
  const lines = r.stdout.trim().split('\n')
  t.match(lines[0], /^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE$/)
  t.match(lines[1], /^kx\s+NodePort\s+10\.0\.0\.\d+\s+<none>\s+80:3\d{4}\/TCP\s+\d+s$/)
  r = await k(['create', 'deployment', 'web', '--image=nginx', '--port=80'])
  t.equal(r.code, 0, r.stderr)
  r = await k(['expose', 'deployment', 'web', '--port=80', '--target-port=80'])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, 'service/web exposed')
  r = await k(['get', 'svc', 'kubernetes'])
  t.match(r.stdout.trim().split('\n')[1], /^kubernetes\s+ClusterIP\s+10\.0\.0\.1\s+<none>\s+443\/TCP\s+\d+s$/)
  r = await k(['get', 'svc', 'web', '-o', 'wide'])
  t.match(r.stdout.trim().split('\n')[1], /^web\s+ClusterIP\s+10\.0\.0\.\d+\s+<none>\s+80\/TCP\s+\d+s\s+app=web$/)
  r = await k(['create', 'service', 'clusterip', 'kh', '--clusterip=None'])
  t.equal(r.code, 0, r.stderr)
  r = await k(['get', 'svc', 'kh'])
  t.match(r.stdout.trim().split('\n')[1], /^kh\s+ClusterIP\s+None\s+<none>\s+<none>\s+\d+s$/)
  r = await k(['create', 'service', 'clusterip', 'kdup', '--clusterip=10.0.0.10', '--tcp=80:80'])
  t.not(r.code, 0)
  t.match(r.stderr, 'failed to create ClusterIP service: Service "kdup" is invalid: spec.clusterIPs: Invalid value: []string{"10.0.0.10"}: failed to allocate IP 10.0.0.10: provided IP is already allocated')
})

t.test('two front-ends: concurrent creates take distinct addresses and ports; a full range answers upstream\'s error; restart', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'orch-svc-small-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  // /27: 30 usable addresses, the first reserved: 29 to allocate. 20 node ports.
  const args = ['--frontends', '2', '--service-cluster-ip-range', '10.96.0.0/27', '--service-node-port-range', '31000-31019']
  let small = await startServer({ dataDir, args })
  t.teardown(() => small.stop())
  // 25 NodePort creates at once: 20 get the 20 ports; 5 fail and give back the addresses they had taken.
  const np = await Promise.all(Array.from({ length: 25 }, (_, i) => small.request('POST', SVCS, svc(`np-${i}`, { type: 'NodePort', ports: [{ port: 80 }] }))))
  const npOk = np.filter((r) => r.status === 201)
  t.equal(npOk.length, 20)
  const ports = npOk.map((r) => r.json.spec.ports[0].nodePort)
  t.equal(new Set(ports).size, 20, 'distinct node ports')
  t.ok(ports.every((p) => p >= 31000 && p <= 31019))
  for (const r of np.filter((r) => r.status !== 201)) t.same(r.json, internalStatus('failed to allocate a nodePort: range is full'))
  // 50 ClusterIP creates at once: the 9 addresses left go to 9 of them, the rest are told the range is full.
  const ip = await Promise.all(Array.from({ length: 50 }, (_, i) => small.request('POST', SVCS, svc(`ip-${i}`, { ports: [{ port: 80 }] }))))
  const ipOk = ip.filter((r) => r.status === 201)
  t.equal(ipOk.length, 9, 'the addresses the failed NodePort creates took came back')
  const all = [...npOk, ...ipOk].map((r: Reply) => r.json.spec.clusterIP)
  t.equal(new Set(all).size, 29, 'all 29 addresses distinct')
  t.ok(all.every((a) => /^10\.96\.0\.(\d+)$/.test(a) && lastOctet(a) >= 2 && lastOctet(a) <= 30), 'within the range, never .0, .1 or .31')
  for (const r of ip.filter((r) => r.status !== 201)) t.same(r.json, internalStatus('failed to allocate a serviceIP: range is full'))
  const servedBy = new Set(small.logs.filter((l) => l.includes('"method":"POST"') && l.includes('/services')).map((l) => JSON.parse(l).frontend))
  t.same([...servedBy].sort(), [0, 1], 'both front-end threads allocated')
  // After a restart the maps are rebuilt from the stored services before anything is served.
  await small.stop()
  small = await startServer({ dataDir, args })
  let r = await small.request('POST', SVCS, svc('after-restart', { ports: [{ port: 80 }] }))
  t.same(r.json, internalStatus('failed to allocate a serviceIP: range is full'))
  r = await small.request('POST', SVCS, svc('after-restart', { clusterIP: all[0], ports: [{ port: 80 }] }))
  t.equal(r.json.details.causes[0].message, `Invalid value: []string{"${all[0]}"}: failed to allocate IP ${all[0]}: provided IP is already allocated`)
  const victim = npOk[3].json
  t.equal((await small.request('DELETE', `${SVCS}/${victim.metadata.name}`)).status, 200)
  r = await small.request('POST', SVCS, svc('after-restart', { type: 'NodePort', ports: [{ port: 80 }] }))
  t.equal(r.status, 201, r.text)
  t.equal(r.json.spec.clusterIP, victim.spec.clusterIP, 'the one free address')
  t.equal(r.json.spec.ports[0].nodePort, victim.spec.ports[0].nodePort, 'the one free port')
})
