// Black-box: the pod sub-resources a client reaches without a kubelet (pods/ephemeralcontainers; log, exec, attach,
// portforward and the proxies up to the point upstream dials a node), the RC scale selector, and discovery of them all;
// through raw HTTP and kubectl 1.32.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runKubectl } from '../helpers/kubectl.js'
import { startServer, type Reply, type TestServer } from '../helpers/server.js'

let s: TestServer
const home = mkdtempSync(join(tmpdir(), 'orch-pod-sub-home-'))
const NS = '/api/v1/namespaces/default'
const PODS = `${NS}/pods`
const SMP = { 'content-type': 'application/strategic-merge-patch+json' }
const JSONP = { 'content-type': 'application/json-patch+json' }

t.before(async () => { s = await startServer({ secure: true }) })
t.teardown(async () => {
  await s?.stop()
  rmSync(home, { recursive: true, force: true })
})

const kubectl = (args: string[]) => runKubectl(s.kubeconfig, home, args)

async function create(path: string, body: unknown): Promise<Reply> {
  const r = await s.request('POST', path, body)
  if (r.status !== 201) throw new Error(`create ${path}: ${r.status} ${r.text}`)
  return r
}

async function pod(name: string, spec: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Promise<void> {
  await create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name, ...extra }, spec: { containers: [{ name: 'c', image: 'i' }], ...spec } })
}

async function bind(name: string, node: string): Promise<void> {
  const r = await s.request('POST', `${PODS}/${name}/binding`, { apiVersion: 'v1', kind: 'Binding', metadata: { name }, target: { kind: 'Node', name: node } })
  if (r.status !== 201) throw new Error(`bind ${name}: ${r.status} ${r.text}`)
}

function status(code: number, reason: string, message: string, details?: Record<string, unknown>): Record<string, unknown> {
  const st: Record<string, unknown> = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason }
  if (details) st.details = details
  st.code = code
  return st
}

t.test('discovery lists the sub-resources with upstream verbs and kinds', async (t) => {
  const r = await s.request('GET', '/api/v1')
  const find = (name: string) => r.json.resources.find((x: any) => x.name === name)
  const entry = (name: string, kind: string, verbs: string[]) => ({ name, singularName: '', namespaced: !name.startsWith('nodes/'), kind, verbs })
  t.same(find('pods/ephemeralcontainers'), entry('pods/ephemeralcontainers', 'Pod', ['get', 'patch', 'update']))
  t.same(find('pods/log'), entry('pods/log', 'Pod', ['get']))
  t.same(find('pods/exec'), entry('pods/exec', 'PodExecOptions', ['create', 'get']))
  t.same(find('pods/attach'), entry('pods/attach', 'PodAttachOptions', ['create', 'get']))
  t.same(find('pods/portforward'), entry('pods/portforward', 'PodPortForwardOptions', ['create', 'get']))
  const proxyVerbs = ['create', 'delete', 'get', 'patch', 'update']
  t.same(find('pods/proxy'), entry('pods/proxy', 'PodProxyOptions', proxyVerbs))
  t.same(find('services/proxy'), entry('services/proxy', 'ServiceProxyOptions', proxyVerbs))
  t.same(find('nodes/proxy'), entry('nodes/proxy', 'NodeProxyOptions', proxyVerbs))
})

t.test('pods/ephemeralcontainers adds ephemeral containers and keeps the rest of the pod', async (t) => {
  await pod('e1', {}, { labels: { a: 'b' } })
  let r = await s.request('GET', `${PODS}/e1/ephemeralcontainers`)
  t.equal(r.status, 200, r.text)
  t.equal(r.json.kind, 'Pod')
  const rv = r.json.metadata.resourceVersion
  const body = structuredClone(r.json)
  body.spec.ephemeralContainers = [{ name: 'dbg', image: 'busybox', command: ['sleep', '1'] }]
  body.spec.restartPolicy = 'Never'
  body.metadata.labels = { changed: 'yes' }
  body.status = { phase: 'Running' }
  r = await s.request('PUT', `${PODS}/e1/ephemeralcontainers`, body)
  t.equal(r.status, 200, r.text)
  t.same(r.json.spec.ephemeralContainers, [{ name: 'dbg', image: 'busybox', command: ['sleep', '1'], resources: {}, imagePullPolicy: 'Always', terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' }], 'defaulted as any container')
  t.equal(r.json.spec.restartPolicy, 'Always', 'the rest of spec is the stored one')
  t.same(r.json.metadata.labels, { a: 'b' }, 'labels are the stored ones')
  t.equal(r.json.status.phase, 'Pending', 'status is the stored one')
  t.not(r.json.metadata.resourceVersion, rv)
  t.ok(r.json.metadata.managedFields.some((m: any) => m.subresource === 'ephemeralcontainers'), 'tracked under the sub-resource')

  // A second one through a strategic merge patch (merged by name; without $setElementOrder, as upstream, the patch's
  // new items come before the stored ones).
  r = await s.request('PATCH', `${PODS}/e1/ephemeralcontainers`, { spec: { ephemeralContainers: [{ name: 'dbg2', image: 'busybox', targetContainerName: 'c' }] } }, SMP)
  t.equal(r.status, 200, r.text)
  t.same(r.json.spec.ephemeralContainers.map((c: any) => c.name), ['dbg2', 'dbg'])

  r = await s.request('PATCH', `${PODS}/e1/ephemeralcontainers`, [{ op: 'remove', path: '/spec/ephemeralContainers/1' }], JSONP)
  t.equal(r.status, 422)
  t.same(r.json, status(422, 'Invalid', 'Pod "e1" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers "dbg" may not be removed\n', {
    name: 'e1', kind: 'Pod', causes: [{ reason: 'FieldValueForbidden', message: 'Forbidden: existing ephemeral containers "dbg" may not be removed\n', field: 'spec.ephemeralContainers' }],
  }))
  r = await s.request('PATCH', `${PODS}/e1/ephemeralcontainers`, [{ op: 'replace', path: '/spec/ephemeralContainers/1/image', value: 'alpine' }], JSONP)
  t.equal(r.status, 422)
  t.match(r.json.message, /^Pod "e1" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers "dbg" may not be changed\n/)
  t.match(r.json.message, /image: "busybox" -> "alpine"/, 'the message names what changed')

  // The main resource may not change them.
  r = await s.request('PATCH', `${PODS}/e1`, [{ op: 'add', path: '/spec/ephemeralContainers/-', value: { name: 'x', image: 'i' } }], JSONP)
  t.equal(r.status, 422, 'not through the pod itself')
  t.match(r.json.message, /pod updates may not change fields other than/)
  t.equal((await s.request('GET', `${PODS}/e1`)).json.spec.ephemeralContainers.length, 2)
})

t.test('ephemeral containers are validated as upstream validates them', async (t) => {
  await pod('e2', { initContainers: [{ name: 'init', image: 'i' }], volumes: [{ name: 'v', emptyDir: {} }] })
  const add = (c: Record<string, unknown>) => s.request('PATCH', `${PODS}/e2/ephemeralcontainers`, { spec: { ephemeralContainers: [c] } }, SMP)
  let r = await add({ name: 'c', image: 'busybox' })
  t.equal(r.status, 422)
  t.equal(r.json.message, 'Pod "e2" is invalid: spec.ephemeralContainers[0].name: Duplicate value: "c"')
  r = await add({ name: 'init', image: 'busybox' })
  t.equal(r.json.message, 'Pod "e2" is invalid: spec.ephemeralContainers[0].name: Duplicate value: "init"')
  r = await add({ name: 'd', image: 'busybox', targetContainerName: 'nope' })
  t.equal(r.status, 422)
  t.equal(r.json.message, 'Pod "e2" is invalid: spec.ephemeralContainers[0].targetContainerName: Not found: "nope"')
  r = await add({
    name: 'd', image: 'busybox', ports: [{ containerPort: 80 }], resources: { limits: { cpu: '1' } },
    readinessProbe: { exec: { command: ['true'] } }, lifecycle: { preStop: { exec: { command: ['true'] } } },
    volumeMounts: [{ name: 'v', mountPath: '/v', subPath: 'x' }],
  })
  t.equal(r.status, 422)
  t.equal(r.json.message, 'Pod "e2" is invalid: [' + [
    'spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container',
    'spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container',
    'spec.ephemeralContainers[0].readinessProbe: Forbidden: cannot be set for an Ephemeral Container',
    'spec.ephemeralContainers[0].lifecycle: Forbidden: cannot be set for an Ephemeral Container',
    'spec.ephemeralContainers[0].volumeMounts[0].subPath: Forbidden: cannot be set for an Ephemeral Container',
  ].join(', ') + ']')
  r = await add({ name: 'd', image: 'busybox', resources: {}, targetContainerName: 'init' })
  t.equal(r.status, 200, `empty resources and an init container target are fine: ${r.text}`)

  // Not on create; not on a mirror pod.
  r = await s.request('POST', PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'e3' }, spec: { containers: [{ name: 'c', image: 'i' }], ephemeralContainers: [{ name: 'd', image: 'i' }] } })
  t.equal(r.status, 422)
  t.equal(r.json.message, 'Pod "e3" is invalid: spec.ephemeralContainers: Forbidden: cannot be set on create')
  // The mirror pod annotation in this brand (upstream kubernetes.io/config.mirror), as NodeRestriction reads it.
  await pod('mirror', { nodeName: 'n1' }, { annotations: { 'orch.io/config.mirror': 'x' } })
  r = await s.request('PATCH', `${PODS}/mirror/ephemeralcontainers`, { spec: { ephemeralContainers: [{ name: 'd', image: 'i' }] } }, SMP)
  t.equal(r.status, 422)
  t.equal(r.json.message, 'Pod "mirror" is invalid: []: Forbidden: static pods do not support ephemeral containers')
  r = await s.request('GET', `${PODS}/nope/ephemeralcontainers`)
  t.same(r.json, status(404, 'NotFound', 'pods "nope" not found', { name: 'nope', kind: 'pods' }))
})

t.test('kubectl debug adds an ephemeral container', async (t) => {
  await pod('dbg-target')
  const out = await kubectl(['debug', 'dbg-target', '--image=busybox', '--container=dbg', '--', 'sleep', '1'])
  t.equal(out.code, 0, out.stderr)
  t.notMatch(out.stderr, /ephemeral containers are disabled/)
  const got = (await s.request('GET', `${PODS}/dbg-target`)).json
  const dbg = got.spec.ephemeralContainers?.find((c: any) => c.name === 'dbg')
  t.ok(dbg, 'the container is in the pod')
  t.equal(dbg?.image, 'busybox')
  t.same(dbg?.command, ['sleep', '1'])
  const other = await kubectl(['debug', 'dbg-target', '--image=busybox', '--container=c', '--', 'sleep', '1'])
  t.not(other.code, 0, 'nor take the name of a container')
  t.match(other.stderr, 'spec.ephemeralContainers[1].name: Duplicate value: "c"')
})

t.test('pods/log: options, pod, container, then the node', async (t) => {
  await pod('l1')
  await pod('l2', { containers: [{ name: 'a', image: 'i' }, { name: 'b', image: 'i' }], initContainers: [{ name: 'in', image: 'i' }] })
  let r = await s.request('GET', `${PODS}/l1/log`)
  t.equal(r.status, 204, 'a pod without a node has no log yet (upstream: an empty location, 204)')
  t.equal(r.text, '')
  r = await s.request('GET', `${PODS}/l1/log?container=x`)
  t.same(r.json, status(400, 'BadRequest', 'container x is not valid for pod l1'))
  r = await s.request('GET', `${PODS}/l2/log`)
  t.same(r.json, status(400, 'BadRequest', 'a container name must be specified for pod l2, choose one of: [in a b]'))
  r = await s.request('GET', `${PODS}/l1/log?tailLines=-1`)
  t.same(r.json, status(422, 'Invalid', 'PodLogOptions "l1" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0', {
    name: 'l1', kind: 'PodLogOptions', causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: -1: must be greater than or equal to 0', field: 'tailLines' }],
  }))
  r = await s.request('GET', `${PODS}/nope/log`)
  t.same(r.json, status(404, 'NotFound', 'pods "nope" not found', { name: 'nope', kind: 'pods' }))
  r = await s.request('POST', `${PODS}/l1/log`, {})
  t.equal(r.status, 405, 'log is read only')

  await bind('l1', 'ghost')
  r = await s.request('GET', `${PODS}/l1/log`)
  t.same(r.json, status(404, 'NotFound', 'nodes "ghost" not found', { name: 'ghost', kind: 'nodes' }), 'the node is read first')
  await create('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } })
  await pod('l3', { nodeName: 'n1' })
  r = await s.request('GET', `${PODS}/l3/log`)
  t.same(r.json, status(503, 'ServiceUnavailable', 'cannot reach the kubelet of node "n1": this API server does not connect to kubelets, so pods/log is not available'))

  // kubectl checks a container name itself; a pod without a node gives an empty log.
  let out = await kubectl(['logs', 'l2', '-c', 'in'])
  t.equal(out.code, 0, out.stderr)
  t.equal(out.stdout, '')
  out = await kubectl(['logs', 'l3'])
  t.not(out.code, 0)
  t.match(out.stderr, 'Error from server (ServiceUnavailable): cannot reach the kubelet of node "n1"')
})

t.test('exec, attach and portforward: container, then host, then the node', async (t) => {
  await pod('x1')
  for (const sub of ['exec', 'attach']) {
    let r = await s.request('POST', `${PODS}/x1/${sub}?container=x&command=ls&stdout=true`)
    t.same(r.json, status(400, 'BadRequest', 'container x is not valid for pod x1'), `${sub}: the container`)
    r = await s.request('POST', `${PODS}/x1/${sub}?command=ls&stdout=true`)
    t.same(r.json, status(400, 'BadRequest', 'pod x1 does not have a host assigned'), `${sub}: the host`)
    r = await s.request('GET', `${PODS}/x1/${sub}?command=ls&stdout=true`)
    t.equal(r.status, 400, `${sub}: GET as well`)
    r = await s.request('PUT', `${PODS}/x1/${sub}`, {})
    t.equal(r.status, 405, `${sub}: no PUT`)
  }
  let r = await s.request('POST', `${PODS}/x1/portforward?ports=80`)
  t.same(r.json, status(400, 'BadRequest', 'pod x1 does not have a host assigned'))
  await pod('x2', { nodeName: 'n1' })
  r = await s.request('POST', `${PODS}/x2/exec?command=ls&stdout=true`)
  t.same(r.json, status(503, 'ServiceUnavailable', 'cannot reach the kubelet of node "n1": this API server does not connect to kubelets, so pods/exec is not available'))
  r = await s.request('POST', `${PODS}/x2/portforward?ports=80`)
  t.equal(r.json.message, 'cannot reach the kubelet of node "n1": this API server does not connect to kubelets, so pods/portforward is not available')

  let out = await kubectl(['exec', 'x1', '--', 'ls'])
  t.not(out.code, 0)
  t.match(out.stderr, 'pod x1 does not have a host assigned')
  out = await kubectl(['exec', 'x1', '-c', 'x', '--', 'ls'])
  t.not(out.code, 0)
  t.match(out.stderr, 'container x is not valid for pod x1')
  out = await kubectl(['exec', 'x2', '--', 'ls'])
  t.not(out.code, 0)
  t.match(out.stderr, 'cannot reach the kubelet of node "n1"')
})

t.test('the proxies: pod address, service endpoints, node', async (t) => {
  await pod('pp', { containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 8080 }] }] })
  let r = await s.request('GET', `${PODS}/pp/proxy/healthz`)
  t.same(r.json, status(400, 'BadRequest', 'address not allowed'), 'a pod without an IP')
  const st = (await s.request('GET', `${PODS}/pp`)).json
  r = await s.request('PUT', `${PODS}/pp/status`, { ...st, status: { ...st.status, podIP: '10.1.2.3', podIPs: [{ ip: '10.1.2.3' }] } })
  t.equal(r.status, 200, r.text)
  r = await s.request('GET', `${PODS}/pp/proxy/`)
  t.same(r.json, status(503, 'ServiceUnavailable', 'cannot reach pod "pp" at 10.1.2.3:8080: this API server does not proxy to pods'))
  r = await s.request('GET', `${PODS}/nope:80/proxy/`)
  t.equal(r.status, 404)

  await create(`${NS}/services`, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc' }, spec: { ports: [{ name: 'web', port: 80 }] } })
  r = await s.request('GET', `${NS}/services/svc/proxy/`)
  t.same(r.json, status(404, 'NotFound', 'endpoints "svc" not found', { name: 'svc', kind: 'endpoints' }))
  r = await s.request('GET', `${NS}/services/svc:81/proxy/`)
  t.same(r.json, status(503, 'ServiceUnavailable', 'no service port 81 found for service "svc"'))
  await create(`${NS}/endpoints`, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'svc' } })
  r = await s.request('GET', `${NS}/services/svc:80/proxy/`)
  t.same(r.json, status(503, 'ServiceUnavailable', 'no endpoints available for service "svc"'))

  r = await s.request('GET', '/api/v1/nodes/ghost/proxy/stats')
  t.same(r.json, status(404, 'NotFound', 'nodes "ghost" not found', { name: 'ghost', kind: 'nodes' }))
  r = await s.request('GET', '/api/v1/nodes/n1/proxy/stats')
  t.same(r.json, status(503, 'ServiceUnavailable', 'cannot reach the kubelet of node "n1": this API server does not connect to kubelets, so nodes/proxy is not available'))
})

t.test('the scale of a ReplicationController carries its selector', async (t) => {
  await create(`${NS}/replicationcontrollers`, {
    apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'rc1' },
    spec: { replicas: 2, selector: { tier: 'web', app: 'rc1' }, template: { metadata: { labels: { app: 'rc1', tier: 'web' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
  })
  const r = await s.request('GET', `${NS}/replicationcontrollers/rc1/scale`)
  t.equal(r.status, 200, r.text)
  t.same(r.json.status, { replicas: 0, selector: 'app=rc1,tier=web' }, 'labels.SelectorFromSet: sorted by key')
  t.same(r.json.spec, { replicas: 2 })
})
