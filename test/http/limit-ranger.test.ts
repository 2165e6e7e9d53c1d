// Black-box: the LimitRanger admission plugin. A namespace's LimitRanges fill container defaults on pod creates (and
// say so in the orch.io/limit-ranger annotation), and refuse pods and claims outside their min, max and ratios
// with upstream's 403 texts, as kubectl prints them.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runKubectl } from '../helpers/kubectl.js'
import { startServer, type TestServer } from '../helpers/server.js'

type Test = import('tap').Test
let s: TestServer
const home = mkdtempSync(join(tmpdir(), 'orch-limit-ranger-home-'))
const kubectl = (args: string[], stdin?: string) => runKubectl(s.kubeconfig, home, args, { stdin })

t.before(async () => { s = await startServer({ secure: true }) })
t.teardown(async () => {
  await s?.stop()
  rmSync(home, { recursive: true, force: true })
})

const lr = (name: string, limits: any[]) => ({ apiVersion: 'v1', kind: 'LimitRange', metadata: { name }, spec: { limits } })
const pod = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec })
const c = (name: string, resources?: Record<string, unknown>) => ({ name, image: 'i', ...(resources ? { resources } : {}) })

async function namespace(t: Test, name: string, ranges: any[]): Promise<string> {
  const r = await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } })
  t.equal(r.status, 201, r.text)
  for (const body of ranges) {
    const x = await s.request('POST', `/api/v1/namespaces/${name}/limitranges`, body)
    t.equal(x.status, 201, x.text)
  }
  return `/api/v1/namespaces/${name}`
}

/** A 403 with upstream's whole Status body, and nothing stored. */
async function forbidden(t: Test, path: string, body: any, resource: string, message: string): Promise<void> {
  const r = await s.request('POST', path, body)
  t.equal(r.status, 403, r.text)
  t.same(r.json, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `${resource} "${body.metadata.name}" is forbidden: ${message}`,
    reason: 'Forbidden', details: { name: body.metadata.name, kind: resource }, code: 403,
  })
  t.equal((await s.request('GET', `${path}/${body.metadata.name}`)).status, 404, 'nothing stored')
}

t.test('a Container item is defaulted: max fills default, default (else min) fills defaultRequest', async (t) => {
  const base = await namespace(t, 'lr-object', [])
  const r = await s.request('POST', `${base}/limitranges`, lr('l', [
    { type: 'Container', max: { cpu: '2', memory: '1Gi' }, min: { cpu: '100m', 'ephemeral-storage': '1Gi' }, default: { memory: '512Mi' } },
    { type: 'Pod', max: { cpu: '4' } },
  ]))
  t.equal(r.status, 201, r.text)
  t.same(r.json.spec.limits, [
    {
      type: 'Container', max: { cpu: '2', memory: '1Gi' }, min: { cpu: '100m', 'ephemeral-storage': '1Gi' },
      default: { memory: '512Mi', cpu: '2' }, defaultRequest: { memory: '512Mi', cpu: '2', 'ephemeral-storage': '1Gi' },
    },
    { type: 'Pod', max: { cpu: '4' } },
  ])
})

t.test('pod creates get the Container defaults, and the annotation says what was set', async (t) => {
  const base = await namespace(t, 'lr-defaults', [lr('defaults', [
    { type: 'Container', default: { cpu: '500m', memory: '256Mi' }, defaultRequest: { cpu: '100m', memory: '128Mi' } },
  ])])
  const r = await s.request('POST', `${base}/pods`, pod('p', {
    initContainers: [c('i', { limits: { memory: '512Mi' } })],
    containers: [c('a'), c('b', { requests: { cpu: '200m' } })],
  }))
  t.equal(r.status, 201, r.text)
  const [a, b] = r.json.spec.containers
  t.same(a.resources, { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '128Mi' } })
  t.same(b.resources, { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '200m', memory: '128Mi' } })
  // The init container's memory request came from its limit (pod defaulting runs first).
  t.same(r.json.spec.initContainers[0].resources, { limits: { memory: '512Mi', cpu: '500m' }, requests: { memory: '512Mi', cpu: '100m' } })
  t.equal(r.json.metadata.annotations?.['orch.io/limit-ranger'],
    'LimitRanger plugin set: cpu, memory request for container a; cpu, memory limit for container a; memory request for container b; cpu, memory limit for container b; cpu request for init container i; cpu limit for init container i')
  t.equal(r.json.status.qosClass, 'Burstable', 'the QoS class is computed from the defaulted pod')

  // Nothing to set: no annotation.
  const full = await s.request('POST', `${base}/pods`, pod('full', { containers: [c('x', { limits: { cpu: '1', memory: '1Gi' } })] }))
  t.equal(full.status, 201, full.text)
  t.equal(full.json.metadata.annotations, undefined)
  t.equal(full.json.status.qosClass, 'Guaranteed')

  // Another namespace has no LimitRange: its pods are left as they are.
  const other = await s.request('POST', '/api/v1/namespaces/default/pods', pod('untouched', { containers: [c('x')] }))
  t.equal(other.status, 201, other.text)
  t.same(other.json.spec.containers[0].resources, {})
  t.equal(other.json.metadata.annotations, undefined)
  t.equal(other.json.status.qosClass, 'BestEffort')
})

t.test('Container min and max, with upstream\'s messages (one bare, several in brackets, duplicates once)', async (t) => {
  const base = await namespace(t, 'lr-container', [lr('bounds', [
    { type: 'Container', max: { cpu: '1', memory: '1Gi' }, min: { cpu: '100m' } },
  ])])
  await forbidden(t, `${base}/pods`, pod('cpu-big', { containers: [c('x', { limits: { cpu: '2' } })] }), 'pods',
    'maximum cpu usage per Container is 1, but limit is 2')
  await forbidden(t, `${base}/pods`, pod('both-big', { containers: [c('x', { limits: { cpu: '2', memory: '2Gi' } })] }), 'pods',
    '[maximum cpu usage per Container is 1, but limit is 2, maximum memory usage per Container is 1Gi, but limit is 2Gi]')
  await forbidden(t, `${base}/pods`, pod('twice', { containers: [c('x', { limits: { cpu: '2' } }), c('y', { limits: { cpu: '2' } })] }), 'pods',
    'maximum cpu usage per Container is 1, but limit is 2')
  await forbidden(t, `${base}/pods`, pod('small', { containers: [c('x', { requests: { cpu: '50m' }, limits: { cpu: '50m' } })] }), 'pods',
    'minimum cpu usage per Container is 100m, but request is 50m')
  await forbidden(t, `${base}/pods`, pod('init-big', { initContainers: [c('i', { requests: { cpu: '200m' }, limits: { cpu: '1500m' } })], containers: [c('x')] }), 'pods',
    'maximum cpu usage per Container is 1, but limit is 1500m')
  // Within bounds (the defaults came from max: cpu 1, memory 1Gi).
  const ok = await s.request('POST', `${base}/pods`, pod('fits', { containers: [c('x', { requests: { cpu: '200m' }, limits: { cpu: '500m' } })] }))
  t.equal(ok.status, 201, ok.text)
  t.same(ok.json.spec.containers[0].resources, { limits: { cpu: '500m', memory: '1Gi' }, requests: { cpu: '200m', memory: '1Gi' } })

  // Pod updates are not checked again (containers cannot change): a LimitRange added later does not block them.
  const later = await s.request('POST', `${base}/limitranges`, lr('tight', [{ type: 'Container', max: { cpu: '100m' } }]))
  t.equal(later.status, 201, later.text)
  const upd = await s.request('PATCH', `${base}/pods/fits`, { metadata: { labels: { a: 'b' } } }, { 'content-type': 'application/merge-patch+json' })
  t.equal(upd.status, 200, upd.text)
})

t.test('limit/request ratio and the Pod type', async (t) => {
  const base = await namespace(t, 'lr-ratio', [lr('ratio', [
    { type: 'Container', maxLimitRequestRatio: { cpu: '2' } },
    { type: 'Pod', max: { cpu: '1' }, min: { memory: '64Mi' } },
  ])])
  await forbidden(t, `${base}/pods`, pod('bursty', { containers: [c('x', { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '500m' } })] }), 'pods',
    'cpu max limit to request ratio per Container is 2, but provided ratio is 5.000000')
  await forbidden(t, `${base}/pods`, pod('no-request', { containers: [c('x', { requests: { memory: '64Mi' } })] }), 'pods',
    '[cpu max limit to request ratio per Container is 2, but no request is specified or request is 0, maximum cpu usage per Pod is 1.  No limit is specified]')
  // The Pod item sums the containers.
  await forbidden(t, `${base}/pods`, pod('sum', {
    containers: [c('x', { requests: { cpu: '600m', memory: '32Mi' }, limits: { cpu: '600m' } }), c('y', { requests: { cpu: '600m', memory: '16Mi' }, limits: { cpu: '600m' } })],
  }), 'pods', '[minimum memory usage per Pod is 64Mi, but request is 48Mi, maximum cpu usage per Pod is 1, but limit is 1200m]')
  const ok = await s.request('POST', `${base}/pods`, pod('ok', {
    containers: [c('x', { requests: { cpu: '300m', memory: '32Mi' }, limits: { cpu: '500m' } }), c('y', { requests: { cpu: '300m', memory: '32Mi' }, limits: { cpu: '500m' } })],
  }))
  t.equal(ok.status, 201, ok.text)
})

t.test('PersistentVolumeClaim min and max storage', async (t) => {
  const base = await namespace(t, 'lr-claims', [lr('storage', [{ type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '10Gi' } }])])
  const claim = (name: string, storage: string) => ({
    apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } },
  })
  await forbidden(t, `${base}/persistentvolumeclaims`, claim('big', '20Gi'), 'persistentvolumeclaims',
    'maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi')
  await forbidden(t, `${base}/persistentvolumeclaims`, claim('small', '500Mi'), 'persistentvolumeclaims',
    'minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi')
  const ok = await s.request('POST', `${base}/persistentvolumeclaims`, claim('fits', '5Gi'))
  t.equal(ok.status, 201, ok.text)
})

t.test('kubectl prints the refusal', async (t) => {
  await namespace(t, 'lr-kubectl', [lr('bounds', [{ type: 'Container', max: { cpu: '1' } }])])
  const yaml = [
    'apiVersion: v1', 'kind: Pod', 'metadata:', '  name: k-big', '  namespace: lr-kubectl', 'spec:', '  containers:',
    '  - name: x', '    image: i', '    resources:', '      limits:', '        cpu: "2"', '',
  ].join('\n')
  const r = await kubectl(['create', '-f', '-'], yaml)
  t.equal(r.code, 1)
  t.equal(r.stderr, 'Error from server (Forbidden): error when creating "STDIN": pods "k-big" is forbidden: maximum cpu usage per Container is 1, but limit is 2\n')
  const ok = await kubectl(['run', 'k-ok', '-n', 'lr-kubectl', '--image=i', '--restart=Never'])
  t.equal(ok.code, 0, ok.stderr)
  const got = await s.request('GET', '/api/v1/namespaces/lr-kubectl/pods/k-ok')
  t.same(got.json.spec.containers[0].resources, { limits: { cpu: '1' }, requests: { cpu: '1' } })
  t.equal(got.json.metadata.annotations['orch.io/limit-ranger'], 'LimitRanger plugin set: cpu request for container k-ok; cpu limit for container k-ok')
})
