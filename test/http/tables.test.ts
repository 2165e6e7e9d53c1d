// Black-box: the Table answers (`kubectl get`) of the kinds whose columns follow upstream's printers beyond the
// default NAME / CREATED AT: objects made over HTTP, their Table rows read back, and a few `kubectl get` outputs.
import t from 'tap'
import { runKubectl } from '../helpers/kubectl.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type TestServer } from '../helpers/server.js'
import { csrRequest } from '../helpers/csr.js'
import { issue } from '../helpers/certs.js'

let s: TestServer
let home = ''

const TABLE = 'application/json;as=Table;v=v1;g=meta.orch.io'
/** Stands for an age cell (`12s`, `3m5s`) in expected rows. */
const AGE = '<age>'

interface Table { cols: string[]; wide: string[]; types: Record<string, string>; rows: Map<string, unknown[]> }

t.before(async () => {
  // No disruption controller: the PodDisruptionBudget rows are printed from the status the test writes.
  s = await startServer({ secure: true, args: ['--controllers=*,-disruption'] })
  home = mkdtempSync(join(tmpdir(), 'orch-tables-home-'))
})
t.teardown(async () => {
  await s?.stop()
  if (home) rmSync(home, { recursive: true, force: true })
})

const kubectl = (args: string[]) => runKubectl(s.kubeconfig, home, args)

async function create(collection: string, body: Record<string, any>): Promise<any> {
  const r = await s.request('POST', collection, body)
  if (r.status !== 201) throw new Error(`POST ${collection} ${body.metadata?.name}: ${r.status} ${r.text}`)
  return r.json
}

/** Replaces the status of an object through its status sub-resource. */
async function setStatus(collection: string, name: string, status: Record<string, any>): Promise<void> {
  const g = await s.request('GET', `${collection}/${name}`)
  const r = await s.request('PUT', `${collection}/${name}/status`, { ...g.json, status })
  if (r.status !== 200) throw new Error(`PUT ${collection}/${name}/status: ${r.status} ${r.text}`)
}

/** The Table of a collection (or of one object): column names, the wide ones, and each row's cells by object name. */
async function table(path: string): Promise<Table> {
  const r = await s.request('GET', path, undefined, { accept: TABLE })
  if (r.status !== 200 || r.json?.kind !== 'Table') throw new Error(`GET ${path} as Table: ${r.status} ${r.text}`)
  const defs: any[] = r.json.columnDefinitions
  const rows = new Map<string, unknown[]>()
  for (const row of r.json.rows) {
    rows.set(row.object.metadata.name, row.cells.map((c: unknown) => (typeof c === 'string' && /^\d+(s|m\d*s?)$/.test(c) ? AGE : c)))
  }
  return {
    cols: defs.map((d) => d.name),
    wide: defs.filter((d) => d.priority > 0).map((d) => d.name),
    types: Object.fromEntries(defs.map((d) => [d.name, d.format ? `${d.type}/${d.format}` : d.type])),
    rows,
  }
}

/** A kubectl table as lines of cells (columns are apart by at least two spaces). */
function lines(out: string): string[][] {
  return out.trimEnd().split('\n').map((l) => l.trim().split(/\s{2,}/))
}

const ns = (resource: string, group = '', version = 'v1') => `${group ? `/apis/${group}` : '/api'}/${version}/namespaces/default/${resource}`
const cluster = (resource: string, group = '', version = 'v1') => `${group ? `/apis/${group}` : '/api'}/${version}/${resource}`

t.test('poddisruptionbudgets: min/max available or N/A, allowed disruptions from status', async (t) => {
  const base = ns('poddisruptionbudgets', 'policy')
  const selector = { matchLabels: { app: 'web' } }
  await create(base, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'pdb-min' }, spec: { minAvailable: 2, selector } })
  await create(base, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'pdb-max' }, spec: { maxUnavailable: '25%', selector } })
  await setStatus(base, 'pdb-min', { disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2, expectedPods: 3 })
  const tb = await table(base)
  t.same(tb.cols, ['Name', 'Min Available', 'Max Unavailable', 'Allowed Disruptions', 'Age'])
  t.same(tb.wide, [])
  t.equal(tb.types['Allowed Disruptions'], 'integer')
  t.same(tb.rows.get('pdb-min'), ['pdb-min', '2', 'N/A', 1, AGE])
  t.same(tb.rows.get('pdb-max'), ['pdb-max', 'N/A', '25%', 0, AGE])
  const one = await table(`${base}/pdb-max`)
  t.same([...one.rows.keys()], ['pdb-max'], 'a single object is one row')

  const k = await kubectl(['get', 'pdb'])
  t.equal(k.code, 0, `kubectl get pdb (stderr: ${k.stderr})`)
  const out = lines(k.stdout)
  t.same(out[0], ['NAME', 'MIN AVAILABLE', 'MAX UNAVAILABLE', 'ALLOWED DISRUPTIONS', 'AGE'])
  t.same(out.slice(1).map((l) => l.slice(0, 4)).sort(), [['pdb-max', 'N/A', '25%', '0'], ['pdb-min', '2', 'N/A', '1']])
})

t.test('ingresses: class, hosts, load balancer address, ports', async (t) => {
  const base = ns('ingresses', 'networking.orch.io')
  const backend = { service: { name: 'web', port: { number: 80 } } }
  const rule = (host?: string) => ({ ...(host ? { host } : {}), http: { paths: [{ path: '/', pathType: 'Prefix', backend }] } })
  await create(base, {
    apiVersion: 'networking.orch.io/v1', kind: 'Ingress', metadata: { name: 'ing-tls' },
    spec: { ingressClassName: 'nginx', rules: [rule('a.example.com'), rule('b.example.com')], tls: [{ hosts: ['a.example.com'], secretName: 'tls' }] },
  })
  await create(base, {
    apiVersion: 'networking.orch.io/v1', kind: 'Ingress', metadata: { name: 'ing-many' },
    spec: { rules: [rule('a.example.com'), rule(), rule('c.example.com'), rule('d.example.com'), rule('e.example.com')] },
  })
  await create(base, { apiVersion: 'networking.orch.io/v1', kind: 'Ingress', metadata: { name: 'ing-default' }, spec: { defaultBackend: backend } })
  await setStatus(base, 'ing-tls', { loadBalancer: { ingress: [{ ip: '10.0.0.2' }, { hostname: 'lb.example.com' }, { ip: '10.0.0.1' }, { ip: '10.0.0.2' }] } })
  const tb = await table(base)
  t.same(tb.cols, ['Name', 'Class', 'Hosts', 'Address', 'Ports', 'Age'])
  t.same(tb.rows.get('ing-tls'), ['ing-tls', 'nginx', 'a.example.com,b.example.com', '10.0.0.1,10.0.0.2,lb.example.com', '80, 443', AGE])
  t.same(tb.rows.get('ing-many'), ['ing-many', '<none>', 'a.example.com,c.example.com,d.example.com + 2 more...', '', '80', AGE])
  t.same(tb.rows.get('ing-default'), ['ing-default', '<none>', '*', '', '80', AGE])
})

t.test('ingressclasses and networkpolicies', async (t) => {
  const icBase = cluster('ingressclasses', 'networking.orch.io')
  await create(icBase, {
    apiVersion: 'networking.orch.io/v1', kind: 'IngressClass', metadata: { name: 'ic-params' },
    spec: { controller: 'example.com/ingress', parameters: { apiGroup: 'k8s.example.com', kind: 'IngressParameters', name: 'external-lb' } },
  })
  await create(icBase, { apiVersion: 'networking.orch.io/v1', kind: 'IngressClass', metadata: { name: 'ic-plain' }, spec: { controller: 'example.com/plain' } })
  const ic = await table(icBase)
  t.same(ic.cols, ['Name', 'Controller', 'Parameters', 'Age'])
  t.same(ic.rows.get('ic-params'), ['ic-params', 'example.com/ingress', 'IngressParameters.k8s.example.com/external-lb', AGE])
  t.same(ic.rows.get('ic-plain'), ['ic-plain', 'example.com/plain', '<none>', AGE])

  const npBase = ns('networkpolicies', 'networking.orch.io')
  await create(npBase, {
    apiVersion: 'networking.orch.io/v1', kind: 'NetworkPolicy', metadata: { name: 'np-db' },
    spec: { podSelector: { matchLabels: { role: 'db' }, matchExpressions: [{ key: 'env', operator: 'In', values: ['prod', 'dev'] }] } },
  })
  await create(npBase, { apiVersion: 'networking.orch.io/v1', kind: 'NetworkPolicy', metadata: { name: 'np-all' }, spec: { podSelector: {} } })
  const np = await table(npBase)
  t.same(np.cols, ['Name', 'Pod-Selector', 'Age'])
  t.same(np.rows.get('np-db'), ['np-db', 'env in (dev,prod),role=db', AGE])
  t.same(np.rows.get('np-all'), ['np-all', '<none>', AGE])
})

t.test('resourcequotas: used/hard by resource, limits.* apart', async (t) => {
  const base = ns('resourcequotas')
  const hard = { pods: '10', 'requests.cpu': '1', 'requests.memory': '1024Mi', 'limits.memory': '2Gi' }
  await create(base, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'quota' }, spec: { hard } })
  await create(base, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'quota-new' }, spec: { hard } })
  // The quota controller fills both statuses first (hard from spec, used counted); once it has, it leaves them alone.
  for (const name of ['quota', 'quota-new']) {
    for (let i = 0; ; i++) {
      const g = await s.request('GET', `${base}/${name}`)
      if (g.json?.status?.used?.pods !== undefined) break
      if (i > 200) throw new Error(`the quota controller did not fill the status of ${name}: ${g.text}`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  await setStatus(base, 'quota', { hard, used: { pods: '1', 'requests.cpu': '0.5', 'limits.memory': '1536Mi', 'requests.memory': '0' } })
  const tb = await table(base)
  t.same(tb.cols, ['Name', 'Request', 'Limit', 'Age'])
  t.same(tb.rows.get('quota'), ['quota', 'pods: 1/10, requests.cpu: 500m/1, requests.memory: 0/1Gi', 'limits.memory: 1536Mi/2Gi', AGE])
  t.same(tb.rows.get('quota-new'), ['quota-new', 'pods: 0/10, requests.cpu: 0/1, requests.memory: 0/1Gi', 'limits.memory: 0/2Gi', AGE])
})

t.test('priorityclasses: value, global default, preemption policy (always shown)', async (t) => {
  const base = cluster('priorityclasses', 'scheduling.orch.io')
  await create(base, { apiVersion: 'scheduling.orch.io/v1', kind: 'PriorityClass', metadata: { name: 'pc-high' }, value: 1000000 })
  await create(base, { apiVersion: 'scheduling.orch.io/v1', kind: 'PriorityClass', metadata: { name: 'pc-low' }, value: -5, globalDefault: false, preemptionPolicy: 'Never' })
  const tb = await table(base)
  t.same(tb.cols, ['Name', 'Value', 'Global-Default', 'Age', 'PreemptionPolicy'])
  t.same(tb.wide, [])
  t.same([tb.types.Value, tb.types['Global-Default']], ['integer', 'boolean'])
  t.same(tb.rows.get('pc-high'), ['pc-high', 1000000, false, AGE, 'PreemptLowerPriority'])
  t.same(tb.rows.get('pc-low'), ['pc-low', -5, false, AGE, 'Never'])

  const k = await kubectl(['get', 'priorityclass', 'pc-low'])
  t.equal(k.code, 0, `kubectl get priorityclass (stderr: ${k.stderr})`)
  const out = lines(k.stdout)
  t.same(out[0], ['NAME', 'VALUE', 'GLOBAL-DEFAULT', 'AGE', 'PREEMPTIONPOLICY'])
  t.match(out[1].join('|'), /^pc-low\|-5\|false\|\d+s\|Never$/)
})

t.test('persistentvolumes and persistentvolumeclaims', async (t) => {
  const pvBase = cluster('persistentvolumes')
  await create(pvBase, {
    apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv-fast' },
    spec: {
      capacity: { storage: '1024Mi' }, accessModes: ['ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOnce'], hostPath: { path: '/data/a' },
      storageClassName: 'fast', claimRef: { namespace: 'default', name: 'pvc-bound' },
    },
  })
  await create(pvBase, {
    apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv-legacy', annotations: { 'volume.beta.orch.io/storage-class': 'legacy' } },
    spec: { capacity: { storage: '1.5Gi' }, accessModes: ['ReadWriteOncePod'], hostPath: { path: '/data/b' }, storageClassName: 'fast', persistentVolumeReclaimPolicy: 'Delete', volumeMode: 'Block' },
  })
  await setStatus(pvBase, 'pv-legacy', { phase: 'Failed', reason: 'Recycling failed' })
  const pv = await table(pvBase)
  t.same(pv.cols, ['Name', 'Capacity', 'Access Modes', 'Reclaim Policy', 'Status', 'Claim', 'StorageClass', 'VolumeAttributesClass', 'Reason', 'Age', 'VolumeMode'])
  t.same(pv.wide, ['VolumeMode'])
  t.same(pv.rows.get('pv-fast'), ['pv-fast', '1Gi', 'RWO,RWX', 'Retain', 'Pending', 'default/pvc-bound', 'fast', '<unset>', '', AGE, 'Filesystem'])
  t.same(pv.rows.get('pv-legacy'), ['pv-legacy', '1536Mi', 'RWOP', 'Delete', 'Failed', '', 'legacy', '<unset>', 'Recycling failed', AGE, 'Block'])

  const k = await kubectl(['get', 'pv', 'pv-fast', '-o', 'wide'])
  t.equal(k.code, 0, `kubectl get pv -o wide (stderr: ${k.stderr})`)
  const out = lines(k.stdout)
  t.same(out[0], ['NAME', 'CAPACITY', 'ACCESS MODES', 'RECLAIM POLICY', 'STATUS', 'CLAIM', 'STORAGECLASS', 'VOLUMEATTRIBUTESCLASS', 'REASON', 'AGE', 'VOLUMEMODE'])
  t.match(out[1].join('|'), /^pv-fast\|1Gi\|RWO,RWX\|Retain\|Pending\|default\/pvc-bound\|fast\|<unset>\|\d+s\|Filesystem$/)

  const pvcBase = ns('persistentvolumeclaims')
  const resources = { requests: { storage: '1Gi' } }
  await create(pvcBase, {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'pvc-bound' },
    spec: { accessModes: ['ReadWriteOnce'], resources, storageClassName: 'fast', volumeName: 'pv-fast', volumeAttributesClassName: 'gold' },
  })
  await create(pvcBase, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'pvc-pending' }, spec: { accessModes: ['ReadWriteOnce'], resources } })
  await setStatus(pvcBase, 'pvc-bound', { phase: 'Bound', capacity: { storage: '1048576Ki' }, accessModes: ['ReadWriteMany', 'ReadWriteOnce'] })
  const pvc = await table(pvcBase)
  t.same(pvc.cols, ['Name', 'Status', 'Volume', 'Capacity', 'Access Modes', 'StorageClass', 'VolumeAttributesClass', 'Age', 'VolumeMode'])
  t.same(pvc.wide, ['VolumeMode'])
  t.same(pvc.rows.get('pvc-bound'), ['pvc-bound', 'Bound', 'pv-fast', '1Gi', 'RWO,RWX', 'fast', 'gold', AGE, 'Filesystem'])
  t.same(pvc.rows.get('pvc-pending'), ['pvc-pending', 'Pending', '', '', '', '', '<unset>', AGE, 'Filesystem'], 'no capacity or modes before a volume is named')
})

t.test('endpoints and endpointslices: the first three addresses and + N more...', async (t) => {
  const epBase = ns('endpoints')
  await create(epBase, {
    apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'ep-web' },
    subsets: [{ addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }], ports: [{ name: 'http', port: 80 }, { name: 'https', port: 443 }] }],
  })
  await create(epBase, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'ep-v6' }, subsets: [{ addresses: [{ ip: 'fd00::1' }], ports: [{ port: 8080 }] }, { addresses: [{ ip: '10.0.0.9' }] }] })
  await create(epBase, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'ep-none' } })
  const ep = await table(epBase)
  t.same(ep.cols, ['Name', 'Endpoints', 'Age'])
  t.same(ep.rows.get('ep-web'), ['ep-web', '10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more...', AGE])
  t.same(ep.rows.get('ep-v6'), ['ep-v6', '[fd00::1]:8080,10.0.0.9', AGE])
  t.same(ep.rows.get('ep-none'), ['ep-none', '<none>', AGE])

  const esBase = ns('endpointslices', 'discovery.orch.io')
  await create(esBase, {
    apiVersion: 'discovery.orch.io/v1', kind: 'EndpointSlice', metadata: { name: 'es-web' }, addressType: 'IPv4',
    ports: [{ name: 'http', port: 80 }, { name: 'metrics' }, { name: 'p3', port: 9090 }, { name: 'p4', port: 9091 }],
    endpoints: [{ addresses: ['10.0.0.1', '10.0.0.2'] }, { addresses: ['10.0.0.3'] }],
  })
  await create(esBase, { apiVersion: 'discovery.orch.io/v1', kind: 'EndpointSlice', metadata: { name: 'es-empty' }, addressType: 'IPv6', endpoints: [] })
  const es = await table(esBase)
  t.same(es.cols, ['Name', 'AddressType', 'Ports', 'Endpoints', 'Age'])
  t.same(es.rows.get('es-web'), ['es-web', 'IPv4', '80,metrics,9090 + 1 more...', '10.0.0.1,10.0.0.2,10.0.0.3', AGE])
  t.same(es.rows.get('es-empty'), ['es-empty', 'IPv6', '<unset>', '<unset>', AGE])
})

t.test('podtemplates (no age column) and controllerrevisions', async (t) => {
  const ptBase = ns('podtemplates')
  await create(ptBase, {
    apiVersion: 'v1', kind: 'PodTemplate', metadata: { name: 'pt-web' },
    template: { metadata: { labels: { tier: 'fe', app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }, { name: 'sidecar', image: 'busybox' }] } },
  })
  const pt = await table(ptBase)
  t.same(pt.cols, ['Name', 'Containers', 'Images', 'Pod Labels'])
  t.same(pt.wide, [])
  t.same(pt.rows.get('pt-web'), ['pt-web', 'app,sidecar', 'nginx:1.27,busybox', 'app=web,tier=fe'])
  const k = await kubectl(['get', 'podtemplates'])
  t.equal(k.code, 0, `kubectl get podtemplates (stderr: ${k.stderr})`)
  t.same(lines(k.stdout), [['NAME', 'CONTAINERS', 'IMAGES', 'POD LABELS'], ['pt-web', 'app,sidecar', 'nginx:1.27,busybox', 'app=web,tier=fe']])

  const dep = await create(ns('deployments', 'apps'), {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' },
    spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx' }] } } },
  })
  const cm = await create(ns('configmaps'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cr-owner' } })
  const crBase = ns('controllerrevisions', 'apps')
  const owner = (o: any, controller: boolean) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, uid: o.metadata.uid, controller })
  await create(crBase, { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'cr-apps', ownerReferences: [owner(cm, false), owner(dep, true)] }, data: {}, revision: 3 })
  await create(crBase, { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'cr-core', ownerReferences: [owner(cm, true)] }, data: {}, revision: 1 })
  await create(crBase, { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'cr-none', ownerReferences: [owner(cm, false)] }, data: {}, revision: 7 })
  const cr = await table(crBase)
  t.same(cr.cols, ['Name', 'Controller', 'Revision', 'Age'])
  t.same(cr.rows.get('cr-apps'), ['cr-apps', 'deployment.apps/web', 3, AGE])
  t.same(cr.rows.get('cr-core'), ['cr-core', 'configmap/cr-owner', 1, AGE])
  t.same(cr.rows.get('cr-none'), ['cr-none', '<none>', 7, AGE])
})

t.test('horizontalpodautoscalers: reference, targets with current values, min/max pods, replicas', async (t) => {
  const base = ns('horizontalpodautoscalers', 'autoscaling', 'v2')
  const ref = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }
  await create(base, {
    apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'hpa-multi' },
    spec: {
      scaleTargetRef: ref, minReplicas: 2, maxReplicas: 10,
      metrics: [
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } },
        { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '512Mi' } } },
        { type: 'Pods', pods: { metric: { name: 'rps' }, target: { type: 'AverageValue', averageValue: '1k' } } },
      ],
    },
  })
  await create(base, {
    apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'hpa-object' },
    spec: {
      scaleTargetRef: ref, maxReplicas: 4,
      metrics: [
        { type: 'Object', object: { metric: { name: 'hits' }, describedObject: { apiVersion: 'v1', kind: 'Service', name: 'web' }, target: { type: 'AverageValue', averageValue: '2000m' } } },
        { type: 'External', external: { metric: { name: 'queue' }, target: { type: 'Value', value: '30' } } },
      ],
    },
  })
  await create(base, { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'hpa-default' }, spec: { scaleTargetRef: ref, maxReplicas: 3 } })
  await setStatus(base, 'hpa-multi', {
    currentReplicas: 3, desiredReplicas: 3,
    currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 45, averageValue: '100m' } } }],
  })
  await setStatus(base, 'hpa-object', {
    currentReplicas: 1, desiredReplicas: 1,
    currentMetrics: [
      { type: 'Object', object: { metric: { name: 'hits' }, describedObject: { apiVersion: 'v1', kind: 'Service', name: 'web' }, current: { averageValue: '1500m' } } },
      { type: 'External', external: { metric: { name: 'queue' }, current: { value: '12' } } },
    ],
  })
  const tb = await table(base)
  t.same(tb.cols, ['Name', 'Reference', 'Targets', 'MinPods', 'MaxPods', 'Replicas', 'Age'])
  t.same(tb.rows.get('hpa-multi'), ['hpa-multi', 'Deployment/web', 'cpu: 45%/60%, memory: <unknown>/512Mi + 1 more...', '2', 10, 3, AGE])
  t.same(tb.rows.get('hpa-object'), ['hpa-object', 'Deployment/web', '1500m/2 (avg), 12/30', '1', 4, 1, AGE])
  t.same(tb.rows.get('hpa-default'), ['hpa-default', 'Deployment/web', 'cpu: <unknown>/80%', '1', 3, 0, AGE], 'the defaulted metric')

  const k = await kubectl(['get', 'hpa', 'hpa-default'])
  t.equal(k.code, 0, `kubectl get hpa (stderr: ${k.stderr})`)
  const out = lines(k.stdout)
  t.same(out[0], ['NAME', 'REFERENCE', 'TARGETS', 'MINPODS', 'MAXPODS', 'REPLICAS', 'AGE'])
  t.match(out[1].join('|'), /^hpa-default\|Deployment\/web\|cpu: <unknown>\/80%\|1\|3\|0\|\d+s$/)
})

t.test('certificatesigningrequests: signer, requested duration, condition', async (t) => {
  const base = cluster('certificatesigningrequests', 'certificates.orch.io')
  const spec = { request: csrRequest('csr-a'), usages: ['client auth'] }
  await create(base, { apiVersion: 'certificates.orch.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'csr-a' }, spec: { ...spec, signerName: 'example.com/signer', expirationSeconds: 90000 } })
  await create(base, { apiVersion: 'certificates.orch.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'csr-b' }, spec: { ...spec, signerName: 'example.com/signer' } })
  await setStatus(base, 'csr-b', { conditions: [{ type: 'Failed', status: 'True', reason: 'SignerError', message: 'no' }], certificate: Buffer.from(issue(null, { cn: 'csr-b' }).certPem).toString('base64') })
  const tb = await table(base)
  t.same(tb.cols, ['Name', 'Age', 'SignerName', 'Requestor', 'RequestedDuration', 'Condition'])
  const a = tb.rows.get('csr-a')!
  t.same([a[0], a[1], a[2], a[4], a[5]], ['csr-a', AGE, 'example.com/signer', '25h', 'Pending'])
  const b = tb.rows.get('csr-b')!
  t.same([b[0], b[2], b[4], b[5]], ['csr-b', 'example.com/signer', '<none>', 'Pending,Failed,Issued'])
})

t.test('storageclasses (default marked), runtimeclasses', async (t) => {
  const scBase = cluster('storageclasses', 'storage.orch.io')
  await create(scBase, {
    apiVersion: 'storage.orch.io/v1', kind: 'StorageClass', metadata: { name: 'fast', annotations: { 'storageclass.orch.io/is-default-class': 'true' } },
    provisioner: 'csi.example.com', volumeBindingMode: 'WaitForFirstConsumer', allowVolumeExpansion: true,
  })
  await create(scBase, { apiVersion: 'storage.orch.io/v1', kind: 'StorageClass', metadata: { name: 'slow' }, provisioner: 'csi.example.com', reclaimPolicy: 'Retain' })
  const sc = await table(scBase)
  t.same(sc.cols, ['Name', 'Provisioner', 'ReclaimPolicy', 'VolumeBindingMode', 'AllowVolumeExpansion', 'Age'])
  t.same(sc.rows.get('fast'), ['fast (default)', 'csi.example.com', 'Delete', 'WaitForFirstConsumer', true, AGE])
  t.same(sc.rows.get('slow'), ['slow', 'csi.example.com', 'Retain', 'Immediate', false, AGE])

  const k = await kubectl(['get', 'sc'])
  t.equal(k.code, 0, `kubectl get sc (stderr: ${k.stderr})`)
  const out = lines(k.stdout)
  t.same(out[0], ['NAME', 'PROVISIONER', 'RECLAIMPOLICY', 'VOLUMEBINDINGMODE', 'ALLOWVOLUMEEXPANSION', 'AGE'])
  t.same(out.slice(1).map((l) => l.slice(0, 5)), [['fast (default)', 'csi.example.com', 'Delete', 'WaitForFirstConsumer', 'true'], ['slow', 'csi.example.com', 'Retain', 'Immediate', 'false']])

  const rcBase = cluster('runtimeclasses', 'node.orch.io')
  await create(rcBase, { apiVersion: 'node.orch.io/v1', kind: 'RuntimeClass', metadata: { name: 'gvisor' }, handler: 'runsc' })
  const rc = await table(rcBase)
  t.same(rc.cols, ['Name', 'Handler', 'Age'])
  t.same(rc.rows.get('gvisor'), ['gvisor', 'runsc', AGE])
})

t.test('csidrivers, csinodes, volumeattachments', async (t) => {
  const drvBase = cluster('csidrivers', 'storage.orch.io')
  await create(drvBase, { apiVersion: 'storage.orch.io/v1', kind: 'CSIDriver', metadata: { name: 'plain.csi.example.com' }, spec: {} })
  await create(drvBase, {
    apiVersion: 'storage.orch.io/v1', kind: 'CSIDriver', metadata: { name: 'tokens.csi.example.com' },
    spec: { attachRequired: false, podInfoOnMount: true, storageCapacity: true, requiresRepublish: true, tokenRequests: [{ audience: 'vault' }, { audience: 'gcp' }], volumeLifecycleModes: ['Persistent', 'Ephemeral'] },
  })
  const drv = await table(drvBase)
  t.same(drv.cols, ['Name', 'AttachRequired', 'PodInfoOnMount', 'StorageCapacity', 'TokenRequests', 'RequiresRepublish', 'Modes', 'Age'])
  t.same(drv.rows.get('plain.csi.example.com'), ['plain.csi.example.com', true, false, false, '<unset>', false, 'Persistent', AGE])
  t.same(drv.rows.get('tokens.csi.example.com'), ['tokens.csi.example.com', false, true, true, 'vault,gcp', true, 'Persistent,Ephemeral', AGE])

  const nodeBase = cluster('csinodes', 'storage.orch.io')
  await create(nodeBase, { apiVersion: 'storage.orch.io/v1', kind: 'CSINode', metadata: { name: 'node-1' }, spec: { drivers: [{ name: 'a.csi.example.com', nodeID: 'n1' }, { name: 'b.csi.example.com', nodeID: 'n1' }] } })
  const nodes = await table(nodeBase)
  t.same(nodes.cols, ['Name', 'Drivers', 'Age'])
  t.same(nodes.rows.get('node-1'), ['node-1', 2, AGE])

  const vaBase = cluster('volumeattachments', 'storage.orch.io')
  const spec = { attacher: 'csi.example.com', nodeName: 'node-1', source: { persistentVolumeName: 'pv-fast' } }
  await create(vaBase, { apiVersion: 'storage.orch.io/v1', kind: 'VolumeAttachment', metadata: { name: 'va-1' }, spec })
  await create(vaBase, { apiVersion: 'storage.orch.io/v1', kind: 'VolumeAttachment', metadata: { name: 'va-2' }, spec })
  await setStatus(vaBase, 'va-2', { attached: true })
  const va = await table(vaBase)
  t.same(va.cols, ['Name', 'Attacher', 'PV', 'Node', 'Attached', 'Age'])
  t.equal(va.types.Attacher, 'string/name', 'upstream gives the attacher the name format')
  t.same(va.rows.get('va-1'), ['va-1', 'csi.example.com', 'pv-fast', 'node-1', false, AGE])
  t.same(va.rows.get('va-2'), ['va-2', 'csi.example.com', 'pv-fast', 'node-1', true, AGE])
})

t.test('webhook configurations, validating admission policies and bindings', async (t) => {
  const group = 'admissionregistration.orch.io'
  const webhook = (name: string) => ({
    name, clientConfig: { url: `https://hooks.example.com/${name}` }, admissionReviewVersions: ['v1'], sideEffects: 'None',
    rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['widgets'] }],
  })
  for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
    const base = cluster(`${kind.toLowerCase()}s`, group)
    await create(base, { apiVersion: `${group}/v1`, kind, metadata: { name: 'two-hooks' }, webhooks: [webhook('a.example.com'), webhook('b.example.com')] })
    await create(base, { apiVersion: `${group}/v1`, kind, metadata: { name: 'no-hooks' } })
    const tb = await table(base)
    t.same(tb.cols, ['Name', 'Webhooks', 'Age'], kind)
    t.equal(tb.types.Webhooks, 'integer')
    t.same(tb.rows.get('two-hooks'), ['two-hooks', 2, AGE], kind)
    t.same(tb.rows.get('no-hooks'), ['no-hooks', 0, AGE], kind)
  }

  const vapBase = cluster('validatingadmissionpolicies', group)
  const matchConstraints = { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['widgets'] }] }
  await create(vapBase, {
    apiVersion: `${group}/v1`, kind: 'ValidatingAdmissionPolicy', metadata: { name: 'vap-params' },
    spec: { paramKind: { apiVersion: 'v1', kind: 'ConfigMap' }, matchConstraints, validations: [{ expression: 'true' }, { expression: '1 == 1' }] },
  })
  await create(vapBase, { apiVersion: `${group}/v1`, kind: 'ValidatingAdmissionPolicy', metadata: { name: 'vap-plain' }, spec: { matchConstraints, validations: [{ expression: 'true' }] } })
  const vap = await table(vapBase)
  t.same(vap.cols, ['Name', 'Validations', 'ParamKind', 'Age'])
  t.same(vap.rows.get('vap-params'), ['vap-params', 2, 'v1/ConfigMap', AGE])
  t.same(vap.rows.get('vap-plain'), ['vap-plain', 1, '<unset>', AGE])

  const bBase = cluster('validatingadmissionpolicybindings', group)
  const binding = (name: string, paramRef?: Record<string, unknown>) => ({
    apiVersion: `${group}/v1`, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name },
    spec: { policyName: 'vap-params', validationActions: ['Deny'], ...(paramRef ? { paramRef: { parameterNotFoundAction: 'Deny', ...paramRef } } : {}) },
  })
  await create(bBase, binding('b-ns', { name: 'params', namespace: 'default' }))
  await create(bBase, binding('b-any', { name: 'params' }))
  await create(bBase, binding('b-sel', { selector: { matchLabels: { tier: 'b', env: 'a' }, matchExpressions: [{ key: 'k', operator: 'In', values: ['y', 'x'] }] } }))
  await create(bBase, binding('b-none'))
  const b = await table(bBase)
  t.same(b.cols, ['Name', 'PolicyName', 'ParamRef', 'Age'])
  t.same(b.rows.get('b-ns'), ['b-ns', 'vap-params', 'default/params', AGE])
  t.same(b.rows.get('b-any'), ['b-any', 'vap-params', '*/params', AGE])
  t.same(b.rows.get('b-sel'), ['b-sel', 'vap-params', '&LabelSelector{MatchLabels:map[string]string{env: a,tier: b,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,Values:[y x],},},}', AGE])
  t.same(b.rows.get('b-none'), ['b-none', 'vap-params', '<unset>', AGE])
})
