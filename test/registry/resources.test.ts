import t from 'tap'
import { readFileSync } from 'node:fs'
import { resources } from '../../src/registry/resources/index.js'
import { resolveDefinition } from '../../src/registry/define.js'
import type { Obj } from '../../src/registry/define.js'
import { humanDuration, labelSelectorString, formatLabelSelector } from '../../src/registry/resources/_printers.js'
import pods, { imageTag } from '../../src/registry/resources/core/pods.js'
import { podQOSClass } from '../../src/registry/resources/core/pod-qos.js'
import deployments from '../../src/registry/resources/apps/deployments.js'
import jobs from '../../src/registry/resources/batch/jobs.js'
import services from '../../src/registry/resources/core/services.js'
import rolebindings from '../../src/registry/resources/rbac.authorization.orch.io/rolebindings.js'

const readJSON = (rel: string) => JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8'))
const definitions: Record<string, Obj> = readJSON('../../src/registry/schemas/definitions.json').definitions
interface Upstream {
  group: string; version: string; kind: string; resource: string; scope: string
  verbs: string[]; subresources: string[]; schemaRef: string; listSchemaRef?: string; returnsDeletedObject: boolean
}
const upstream: Upstream[] = readJSON('../../src/registry/schemas/resources.json')

const NOW = Date.parse('2025-01-02T03:04:05Z')

t.test('the list is complete, unique and sorted like the schema data', async (t) => {
  t.equal(resources.length, upstream.length, 'one definition per served resource')
  // autoscaling/v1 and v2 HorizontalPodAutoscalers are one resource in two versions (one storage).
  const keys = resources.map((r) => `${r.group}/${r.version}/${r.resource}`)
  t.equal(new Set(keys).size, keys.length, 'no duplicates')
  for (const u of upstream) t.ok(keys.includes(`${u.group}/${u.version}/${u.resource}`), `${u.group}/${u.version}/${u.resource} is defined`)
})

t.test('the generated data is renamed', async (t) => {
  const text = readFileSync(new URL('../../src/registry/schemas/definitions.json', import.meta.url), 'utf8')
  t.notOk(text.includes('x-kubernetes-'), 'no x-kubernetes- keys')
  t.notOk(text.includes('io.k8s.'), 'no io.k8s. names')
  t.notOk(/"group": ?"[a-z.]*\.k8s\.io"/.test(text), 'no .k8s.io groups in GVKs')
  for (const n of ['Status', 'DeleteOptions', 'APIResourceList', 'APIGroupList', 'APIVersions']) t.ok(definitions[`io.orch.apimachinery.pkg.apis.meta.v1.${n}`], n)
  t.ok(definitions['io.orch.api.autoscaling.v1.Scale'], 'Scale')
  // Every $ref resolves inside the file.
  const missing: string[] = []
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) { v.forEach(walk); return }
    if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (k === '$ref' && typeof x === 'string') { const n = x.replace('#/definitions/', ''); if (!(n in definitions)) missing.push(n) } else walk(x)
      }
    }
  }
  walk(definitions)
  t.same(missing, [], 'all $refs resolve')
})

const minimal = (r: { group: string; version: string; kind: string }): Obj => ({
  apiVersion: r.group === '' ? r.version : `${r.group}/${r.version}`,
  kind: r.kind,
  metadata: { name: 'x', namespace: 'default', creationTimestamp: '2025-01-01T00:00:00Z' },
})

for (const def of resources) {
  const r = resolveDefinition(def)
  t.test(`${r.groupResource} ${r.version}`, async (t) => {
    const u = upstream.find((x) => x.group === r.group && x.version === r.version && x.resource === r.resource)
    if (!u) { t.fail('not in resources.json'); return }
    t.equal(r.version, u.version, 'version')
    t.equal(r.kind, u.kind, 'kind')
    t.equal(r.scope, u.scope, 'scope')
    t.equal(r.singular, r.kind.toLowerCase(), 'singular is the lower-case kind')
    t.same([...r.verbs].sort(), u.verbs, 'verbs')
    t.same([...(r.subresources ?? [])].sort(), u.subresources.filter((s) => s === 'status' || s === 'scale'), 'status/scale sub-resources')
    t.equal(r.schemaRef, u.schemaRef, 'schemaRef agrees with the paths')
    t.equal(r.strategy.returnDeletedObject === true, u.returnsDeletedObject, 'returnDeletedObject agrees with the DELETE response')
    t.equal(r.strategy.allowUnconditionalUpdate, true, 'allowUnconditionalUpdate')
    t.equal(r.scale !== undefined, (r.subresources ?? []).includes('scale'), 'scale paths iff scale sub-resource')
    t.equal(r.status !== undefined, (r.subresources ?? []).includes('status'), 'status strategy iff status sub-resource')

    const schema = definitions[r.schemaRef]
    t.ok(schema, 'schemaRef exists')
    const gvks: Obj[] = schema?.['x-orch-group-version-kind'] ?? []
    t.ok(gvks.some((g) => g.group === r.group && g.version === r.version && g.kind === r.kind), 'x-orch-group-version-kind names the type')
    t.ok(u.listSchemaRef && definitions[u.listSchemaRef], 'list definition exists')
    t.equal(u.listSchemaRef, `${r.schemaRef}List`, 'list definition is <Kind>List')

    const o = minimal(r)
    for (const c of r.table ?? []) {
      t.doesNotThrow(() => c.cell(structuredClone(o), NOW), `table cell ${c.name}`)
      // Table lists parse stored objects without metadata.managedFields: no cell may read it.
      const read: string[] = []
      const watched = structuredClone(o)
      watched.metadata = new Proxy({ ...watched.metadata, managedFields: [] }, { get: (m, k) => { if (k === 'managedFields') read.push(String(k)); return Reflect.get(m, k) } })
      try { c.cell(watched, NOW) } catch { /* totality is checked above */ }
      t.same(read, [], `table cell ${c.name} does not read metadata.managedFields`)
    }
    for (const [name, f] of Object.entries(r.fieldSelectors ?? {})) {
      let v: unknown
      t.doesNotThrow(() => { v = f(structuredClone(o)) }, `field selector ${name}`)
      t.type(v, 'string', `field selector ${name} gives a string`)
    }
    // Hooks are total on the minimal object too.
    const s = r.strategy
    t.doesNotThrow(() => {
      const x = structuredClone(o)
      s.default?.(x)
      s.prepareForCreate?.(x)
      const errs = s.validate?.(x) ?? []
      t.ok(Array.isArray(errs), 'validate gives an array')
      const y = structuredClone(x)
      s.default?.(y)
      s.prepareForUpdate?.(y, x)
      s.validateUpdate?.(y, x)
      r.status?.prepareForUpdate?.(structuredClone(y), x)
    }, 'hooks')
  })
}

t.test('humanDuration', async (t) => {
  const s = 1000, m = 60 * s, h = 60 * m, d = 24 * h
  const cases: Array<[number, string]> = [
    [-5 * s, '<invalid>'], [-1500, '0s'], [0, '0s'], [5 * s, '5s'], [119 * s, '119s'], [2 * m, '2m'], [3 * m + 20 * s, '3m20s'],
    [45 * m, '45m'], [3 * h, '3h'], [4 * h + 5 * m, '4h5m'], [20 * h, '20h'], [2 * d, '2d'], [3 * d + 4 * h, '3d4h'], [30 * d, '30d'],
    [2 * 365 * d, '2y'], [2 * 365 * d + 5 * d, '2y5d'], [9 * 365 * d, '9y'],
  ]
  for (const [ms, want] of cases) t.equal(humanDuration(ms), want, `${ms}ms`)
})

t.test('tables', async (t) => {
  const age = resolveDefinition(pods).table!.find((c) => c.name === 'Age')!
  t.equal(age.cell(minimal(pods), NOW), '27h')
  const pod: Obj = {
    ...minimal(pods),
    spec: { containers: [{ name: 'a', image: 'x' }, { name: 'b', image: 'y' }], nodeName: 'n1' },
    status: {
      phase: 'Running', podIPs: [{ ip: '10.0.0.1' }],
      containerStatuses: [
        { name: 'a', ready: true, restartCount: 2, state: { running: {} }, lastState: { terminated: { finishedAt: '2025-01-02T03:00:05Z' } } },
        { name: 'b', ready: false, restartCount: 0, state: { waiting: { reason: 'CrashLoopBackOff' } } },
      ],
    },
  }
  const cells = Object.fromEntries(pods.table!.map((c) => [c.name, c.cell(pod, NOW)]))
  t.same(cells, { Name: 'x', Ready: '1/2', Status: 'CrashLoopBackOff', Restarts: '2 (4m ago)', Age: '27h', IP: '10.0.0.1', Node: 'n1', 'Nominated Node': '<none>', 'Readiness Gates': '<none>' })
  const job: Obj = { ...minimal(jobs), spec: { completions: 3 }, status: { succeeded: 1, startTime: '2025-01-02T03:00:00Z' } }
  t.same(jobs.table!.slice(0, 4).map((c) => c.cell(job, NOW)), ['x', 'Running', '1/3', '4m5s'])
  t.equal(labelSelectorString({ matchLabels: { b: '1' }, matchExpressions: [{ key: 'a', operator: 'In', values: ['y', 'x'] }, { key: 'c', operator: 'DoesNotExist' }] }), 'a in (x,y),b=1,!c')
  t.equal(formatLabelSelector({}), '<none>')
  const svc: Obj = { ...minimal(services), spec: { type: 'NodePort', clusterIP: '10.1.0.5', ports: [{ port: 80, nodePort: 30080, protocol: 'TCP' }] } }
  t.same(services.table!.slice(0, 5).map((c) => c.cell(svc, NOW)), ['x', 'NodePort', '10.1.0.5', '<none>', '80:30080/TCP'])
})

t.test('pod defaults and validation', async (t) => {
  t.equal(imageTag('nginx'), 'latest')
  t.equal(imageTag('nginx:1.27'), '1.27')
  t.equal(imageTag('localhost:5000/nginx'), 'latest')
  t.equal(imageTag('nginx@sha256:abc'), '')
  const o: Obj = { ...minimal(pods), spec: { containers: [{ name: 'a', image: 'nginx', resources: { limits: { cpu: '1', memory: '1Gi' } } }, { name: 'b', image: 'busybox:1.36' }] } }
  pods.strategy!.default!(o)
  t.equal(o.spec.restartPolicy, 'Always')
  t.equal(o.spec.dnsPolicy, 'ClusterFirst')
  t.equal(o.spec.schedulerName, 'default-scheduler')
  t.equal(o.spec.terminationGracePeriodSeconds, 30)
  t.equal(o.spec.containers[0].imagePullPolicy, 'Always')
  t.equal(o.spec.containers[1].imagePullPolicy, 'IfNotPresent')
  t.equal(o.spec.containers[0].terminationMessagePath, '/dev/termination-log')
  t.equal(o.spec.containers[0].terminationMessagePolicy, 'File')
  t.same(o.spec.containers[0].resources.requests, { cpu: '1', memory: '1Gi' })
  t.equal(podQOSClass(o.spec), 'Burstable')
  t.equal(podQOSClass({ containers: [{ resources: { limits: { cpu: '500m', memory: '1Gi' }, requests: { cpu: '0.5', memory: '1024Mi' } } }] }), 'Guaranteed')
  t.equal(podQOSClass({ containers: [{}] }), 'BestEffort')
  pods.strategy!.prepareForCreate!(o)
  t.same(o.status, { phase: 'Pending', qosClass: 'Burstable' })
  t.same(pods.strategy!.validate!({ spec: { containers: [{ name: 'a' }] } }).map((e) => `${e.field}: ${e.type}`), ['spec.containers[0].image: FieldValueRequired'])
  t.same(pods.strategy!.validate!({ spec: {} }).map((e) => e.field), ['spec.containers'])
})

t.test('deployment defaults and validation', async (t) => {
  const o: Obj = { ...minimal(deployments), spec: { selector: { matchLabels: { app: 'a' } }, template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } } }
  deployments.strategy!.default!(o)
  t.equal(o.spec.replicas, 1)
  t.same(o.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } })
  t.equal(o.spec.revisionHistoryLimit, 10)
  t.equal(o.spec.progressDeadlineSeconds, 600)
  t.equal(o.spec.template.spec.restartPolicy, 'Always')
  t.same(deployments.strategy!.validate!(o), [])
  const bad: Obj = { spec: { template: { spec: { containers: [{ name: 'c', image: 'i' }] } } } }
  t.same(deployments.strategy!.validate!(bad).map((e) => e.field), ['spec.selector', 'spec.template.metadata.labels'])
  const changed = structuredClone(o)
  changed.spec.selector = { matchLabels: { app: 'b' } }
  t.ok(deployments.strategy!.validateUpdate!(changed, o).some((e) => e.field === 'spec.selector' && e.detail === 'field is immutable'))
})

t.test('service and role binding validation', async (t) => {
  const svc: Obj = { spec: { ports: [{ port: 80 }] } }
  services.strategy!.default!(svc)
  t.same(svc.spec, { type: 'ClusterIP', sessionAffinity: 'None', ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }], internalTrafficPolicy: 'Cluster' })
  t.same(services.strategy!.validate!(svc), [])
  t.same(services.strategy!.validate!({ spec: { ports: [{}] } }).map((e) => e.field), ['spec.ports[0].port'])
  const rb: Obj = { roleRef: { kind: 'Role', name: 'r' }, subjects: [{ kind: 'User', name: 'u' }] }
  rolebindings.strategy!.default!(rb)
  t.equal(rb.roleRef.apiGroup, 'rbac.authorization.orch.io')
  t.same(rolebindings.strategy!.validate!(rb), [])
  t.same(rolebindings.strategy!.validate!({}).map((e) => e.field), ['roleRef.apiGroup', 'roleRef.kind', 'roleRef.name'])
})
