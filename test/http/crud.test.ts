// Black-box CRUD tests over real HTTP: every served group, generateName, generation, lists and paging, selectors,
// the status and scale sub-resources, deletecollection and resourceVersion ordering.
import t from 'tap'
import { startServer, type TestServer, type Reply } from '../helpers/server.js'

let s: TestServer

// No disruption controller: the PodDisruptionBudget case writes and reads status itself.
t.before(async () => { s = await startServer({ args: ['--controllers=*,-disruption'] }) })
t.teardown(async () => { await s?.stop() })

type Obj = Record<string, any>

const UID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const TIME_RE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/
const RV_RE = /^[1-9]\d*$/

/** Every resourceVersion a successful write returned, in order: each must be greater than all before it. */
let lastWriteRv = 0
const rvOrder: Array<{ what: string; rv: number }> = []
function noteWrite(t: { ok: (v: unknown, msg: string) => unknown }, what: string, r: Reply): void {
  const rv = Number(r.json?.metadata?.resourceVersion)
  t.ok(rv > lastWriteRv, `${what}: resourceVersion ${rv} is greater than the previous write's ${lastWriteRv}`)
  if (rv > lastWriteRv) lastWriteRv = rv
  rvOrder.push({ what, rv })
}

async function createNamespace(name: string): Promise<void> {
  const r = await s.request('POST', '/api/v1/namespaces', { metadata: { name } })
  if (r.status !== 201) throw new Error(`namespace ${name}: ${r.status} ${r.text}`)
}

const CSR_PEM_B64 = 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIUE1IWUNBUUF3RkRFU01CQUdBMVVFQXd3SlkzSjFaQzEwWlhOME1Ga3dFd1lIS29aSXpqMENBUVlJS29aSQp6ajBEQVFjRFFnQUVtaGhBTUt3b0dTUnVvK3h4WVNtN1ZONWVBdEoxcTQrYnh2cXlMeURrKzFqQWtyVmh3ekpMCkl2MlF0Q2drMVZKcUdDM1htY21zN0tnMWVxVm5yYVhKUHFBQU1Bb0dDQ3FHU000OUJBTUNBMGtBTUVZQ0lRRG4KR2pta3ErS1FjdXVRZk9wNjBxUlcwTk1vNnRYMjNDNkt1Ti9sTWVSaEl3SWhBT1lSSlp1RVBUeXNKa2VtaTVyVwp6b1J5SEd2YzJkelBQTGxKOFlWZ3preE0KLS0tLS1FTkQgQ0VSVElGSUNBVEUgUkVRVUVTVC0tLS0tCg=='

const podTemplate = (app: string) => ({
  metadata: { labels: { app } },
  spec: { containers: [{ name: 'c', image: 'registry.example/app:1' }] },
})

interface TypeCase {
  group: string
  version: string
  resource: string
  kind: string
  namespaced: boolean
  name: string
  body: (name: string, ns: string) => Obj
  /** DELETE answers with the final object (upstream ReturnDeletedObject). */
  returnsObject?: boolean
  /** Deletion may go through a finalizer (the object comes back with deletionTimestamp and disappears later). */
  mayFinalize?: boolean
}

const NS = 'crud'

const cases: TypeCase[] = [
  { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, name: 'cm1', body: (name) => ({ metadata: { name }, data: { k: 'v' } }) },
  { group: '', version: 'v1', resource: 'nodes', kind: 'Node', namespaced: false, name: 'node-crud-1', body: (name) => ({ metadata: { name }, spec: {} }) },
  { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true, name: 'dep1', body: (name) => ({ metadata: { name }, spec: { selector: { matchLabels: { app: name } }, template: podTemplate(name) } }) },
  { group: 'batch', version: 'v1', resource: 'jobs', kind: 'Job', namespaced: true, name: 'job1', mayFinalize: true, body: (name) => ({ metadata: { name }, spec: { template: { spec: { containers: [{ name: 'c', image: 'registry.example/job:1' }], restartPolicy: 'Never' } } } }) },
  { group: 'policy', version: 'v1', resource: 'poddisruptionbudgets', kind: 'PodDisruptionBudget', namespaced: true, name: 'pdb1', body: (name) => ({ metadata: { name }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'x' } } } }) },
  { group: 'autoscaling', version: 'v2', resource: 'horizontalpodautoscalers', kind: 'HorizontalPodAutoscaler', namespaced: true, name: 'hpa1', body: (name) => ({ metadata: { name }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'dep1' }, minReplicas: 1, maxReplicas: 3 } }) },
  { group: 'networking.orch.io', version: 'v1', resource: 'networkpolicies', kind: 'NetworkPolicy', namespaced: true, name: 'np1', body: (name) => ({ metadata: { name }, spec: { podSelector: {} } }) },
  { group: 'networking.orch.io', version: 'v1', resource: 'ingressclasses', kind: 'IngressClass', namespaced: false, name: 'ic-crud-1', body: (name) => ({ metadata: { name }, spec: { controller: 'example.com/ingress-controller' } }) },
  { group: 'rbac.authorization.orch.io', version: 'v1', resource: 'roles', kind: 'Role', namespaced: true, name: 'role1', body: (name) => ({ metadata: { name }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }] }) },
  { group: 'rbac.authorization.orch.io', version: 'v1', resource: 'clusterroles', kind: 'ClusterRole', namespaced: false, name: 'crud-clusterrole-1', body: (name) => ({ metadata: { name }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] }) },
  { group: 'flowcontrol.apiserver.orch.io', version: 'v1', resource: 'flowschemas', kind: 'FlowSchema', namespaced: false, name: 'crud-fs-1', body: (name) => ({ metadata: { name }, spec: { priorityLevelConfiguration: { name: 'global-default' }, matchingPrecedence: 9000 } }) },
  { group: 'admissionregistration.orch.io', version: 'v1', resource: 'validatingwebhookconfigurations', kind: 'ValidatingWebhookConfiguration', namespaced: false, name: 'crud-vwc-1', body: (name) => ({ metadata: { name } }) },
  { group: 'coordination.orch.io', version: 'v1', resource: 'leases', kind: 'Lease', namespaced: true, name: 'lease1', body: (name) => ({ metadata: { name }, spec: { holderIdentity: 'holder-a', leaseDurationSeconds: 15 } }) },
  { group: 'discovery.orch.io', version: 'v1', resource: 'endpointslices', kind: 'EndpointSlice', namespaced: true, name: 'eps1', body: (name) => ({ metadata: { name }, addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.1'] }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }) },
  { group: 'events.orch.io', version: 'v1', resource: 'events', kind: 'Event', namespaced: true, name: 'ev1', body: (name, ns) => ({ metadata: { name }, eventTime: '2025-01-01T00:00:00.000000Z', reportingController: 'example.com/crud-test', reportingInstance: 'crud-test-1', action: 'Testing', reason: 'Tested', type: 'Normal', note: 'a test event', regarding: { kind: 'ConfigMap', namespace: ns, name: 'cm1', apiVersion: 'v1' } }) },
  { group: 'certificates.orch.io', version: 'v1', resource: 'certificatesigningrequests', kind: 'CertificateSigningRequest', namespaced: false, name: 'crud-csr-1', body: (name) => ({ metadata: { name }, spec: { request: CSR_PEM_B64, signerName: 'example.com/crud-signer', usages: ['digital signature', 'client auth'] } }) },
  { group: 'scheduling.orch.io', version: 'v1', resource: 'priorityclasses', kind: 'PriorityClass', namespaced: false, name: 'crud-pc-1', body: (name) => ({ metadata: { name }, value: 1000, description: 'crud test' }) },
  { group: 'node.orch.io', version: 'v1', resource: 'runtimeclasses', kind: 'RuntimeClass', namespaced: false, name: 'crud-rc-1', body: (name) => ({ metadata: { name }, handler: 'runc' }) },
  { group: 'storage.orch.io', version: 'v1', resource: 'storageclasses', kind: 'StorageClass', namespaced: false, name: 'crud-sc-1', body: (name) => ({ metadata: { name }, provisioner: 'example.com/provisioner' }), returnsObject: true },
  {
    group: 'apiextensions.orch.io', version: 'v1', resource: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false, name: 'widgets.crud.example.com', mayFinalize: true,
    body: (name) => ({
      metadata: { name },
      spec: {
        group: 'crud.example.com', scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } } }],
      },
    }),
  },
]

function apiVersionOf(c: TypeCase): string { return c.group === '' ? c.version : `${c.group}/${c.version}` }
function collectionPath(c: TypeCase, ns = NS): string {
  const base = c.group === '' ? `/api/${c.version}` : `/apis/${c.group}/${c.version}`
  return c.namespaced ? `${base}/namespaces/${ns}/${c.resource}` : `${base}/${c.resource}`
}
function allNamespacesPath(c: TypeCase): string {
  return c.group === '' ? `/api/${c.version}/${c.resource}` : `/apis/${c.group}/${c.version}/${c.resource}`
}

t.test('setup namespaces', async () => {
  for (const ns of [NS, 'crud-b', 'crud-page', 'crud-sel', 'crud-dc', 'crud-gen']) await createNamespace(ns)
})

for (const c of cases) {
  t.test(`${apiVersionOf(c)} ${c.resource}: create, get, list, update, delete`, async (t) => {
    const coll = collectionPath(c)
    const path = `${coll}/${c.name}`
    const before = Date.now()
    const created = await s.request('POST', coll, c.body(c.name, NS))
    t.equal(created.status, 201, `create: ${created.text.slice(0, 300)}`)
    if (created.status !== 201) return
    noteWrite(t, `create ${c.resource}`, created)
    const o = created.json
    t.equal(o.kind, c.kind)
    t.equal(o.apiVersion, apiVersionOf(c))
    t.equal(o.metadata.name, c.name)
    if (c.namespaced) t.equal(o.metadata.namespace, NS)
    else t.notOk('namespace' in o.metadata, 'no namespace on a cluster-scoped object')
    t.match(o.metadata.uid, UID_RE, 'uid')
    t.match(o.metadata.resourceVersion, RV_RE, 'resourceVersion')
    t.type(o.metadata.resourceVersion, 'string')
    t.match(o.metadata.creationTimestamp, TIME_RE, 'creationTimestamp')
    const ct = Date.parse(o.metadata.creationTimestamp)
    t.ok(ct >= Math.floor(before / 1000) * 1000 - 1000 && ct <= Date.now() + 1000, 'creationTimestamp is now')
    t.match(String(created.headers['content-type']), /^application\/json/)

    const got = await s.request('GET', path)
    t.equal(got.status, 200, 'get')
    t.same(got.json, o, 'get returns the created object')

    const list = await s.request('GET', coll)
    t.equal(list.status, 200, 'list')
    t.equal(list.json.kind, `${c.kind}List`)
    t.equal(list.json.apiVersion, apiVersionOf(c))
    t.match(list.json.metadata.resourceVersion, RV_RE)
    t.ok(Number(list.json.metadata.resourceVersion) >= Number(o.metadata.resourceVersion), 'list resourceVersion is not older than the create')
    const item = list.json.items.find((x: Obj) => x.metadata.name === c.name)
    t.same(item, o, 'list holds the created object')

    // Update: add a label through PUT of the object read back.
    const upd = structuredClone(got.json)
    upd.metadata.labels = { ...(upd.metadata.labels ?? {}), updated: 'yes' }
    const put = await s.request('PUT', path, upd)
    t.equal(put.status, 200, `update: ${put.text.slice(0, 300)}`)
    if (put.status !== 200) return
    noteWrite(t, `update ${c.resource}`, put)
    t.equal(put.json.metadata.labels?.updated, 'yes', 'label set')
    t.equal(put.json.metadata.uid, o.metadata.uid, 'uid kept')
    t.equal(put.json.metadata.creationTimestamp, o.metadata.creationTimestamp, 'creationTimestamp kept')
    t.ok(Number(put.json.metadata.resourceVersion) > Number(o.metadata.resourceVersion), 'resourceVersion grew')
    const got2 = await s.request('GET', path)
    t.same(got2.json, put.json, 'get returns the updated object')

    // A PUT of the same object again changes nothing (no new resourceVersion).
    const same = await s.request('PUT', path, got2.json)
    t.equal(same.status, 200)
    t.equal(same.json.metadata.resourceVersion, put.json.metadata.resourceVersion, 'a no-op update keeps the resourceVersion')

    const del = await s.request('DELETE', path)
    t.equal(del.status, 200, `delete: ${del.text.slice(0, 300)}`)
    if (c.returnsObject) {
      t.equal(del.json.kind, c.kind, 'delete returns the deleted object')
      t.equal(del.json.metadata.uid, o.metadata.uid)
    } else if (c.mayFinalize && del.json.kind === c.kind) {
      t.ok(del.json.metadata.deletionTimestamp, 'finalizing object has a deletionTimestamp')
    } else {
      const details: Obj = { name: c.name }
      if (c.group !== '') details.group = c.group
      details.kind = c.resource
      details.uid = o.metadata.uid
      t.same(del.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details }, 'delete Success Status')
      t.notOk('code' in (del.json ?? {}), 'no code on a Success Status')
    }
    let gone: Reply | undefined
    for (let i = 0; i < 50; i++) {
      gone = await s.request('GET', path)
      if (gone.status === 404 || !c.mayFinalize) break
      await new Promise((r) => setTimeout(r, 100))
    }
    t.equal(gone!.status, 404, 'gone after delete')
    const list2 = await s.request('GET', coll)
    t.notOk(list2.json.items.some((x: Obj) => x.metadata.name === c.name), 'not listed after delete')
  })
}

t.test('generateName gives a unique random name with the prefix', async (t) => {
  const coll = `/api/v1/namespaces/crud-gen/configmaps`
  const names = new Set<string>()
  for (let i = 0; i < 5; i++) {
    const r = await s.request('POST', coll, { metadata: { generateName: 'gen-' }, data: { i: String(i) } })
    t.equal(r.status, 201)
    noteWrite(t, 'create generateName', r)
    t.match(r.json.metadata.name, /^gen-[a-z0-9]{5}$/, 'prefix plus five characters')
    t.equal(r.json.metadata.generateName, 'gen-', 'generateName is kept')
    t.match(r.json.metadata.uid, UID_RE)
    names.add(r.json.metadata.name)
    const g = await s.request('GET', `${coll}/${r.json.metadata.name}`)
    t.equal(g.status, 200, 'retrievable by the generated name')
  }
  t.equal(names.size, 5, 'all names differ')
  // A cluster-scoped type too.
  const pc = await s.request('POST', '/apis/scheduling.orch.io/v1/priorityclasses', { metadata: { generateName: 'crud-gen-pc-' }, value: 7 })
  t.equal(pc.status, 201)
  t.match(pc.json.metadata.name, /^crud-gen-pc-[a-z0-9]{5}$/)
  // name wins over generateName.
  const both = await s.request('POST', coll, { metadata: { name: 'explicit', generateName: 'gen-' } })
  t.equal(both.status, 201)
  t.equal(both.json.metadata.name, 'explicit')
})

t.test('deployment generation: 1 on create, bumped on spec change only', async (t) => {
  const coll = `/apis/apps/v1/namespaces/${NS}/deployments`
  const c = await s.request('POST', coll, { metadata: { name: 'gen-dep' }, spec: { replicas: 1, selector: { matchLabels: { app: 'g' } }, template: podTemplate('g') } })
  t.equal(c.status, 201)
  t.equal(c.json.metadata.generation, 1, 'generation 1 on create')
  // A client-sent generation is ignored on create.
  const c2 = await s.request('POST', coll, { metadata: { name: 'gen-dep-2', generation: 7 }, spec: { selector: { matchLabels: { app: 'g2' } }, template: podTemplate('g2') } })
  t.equal(c2.json.metadata.generation, 1, 'client generation ignored')

  const labels = structuredClone(c.json)
  labels.metadata.labels = { a: 'b' }
  labels.metadata.annotations = { note: 'x' }
  const r1 = await s.request('PUT', `${coll}/gen-dep`, labels)
  t.equal(r1.status, 200)
  t.equal(r1.json.metadata.generation, 1, 'metadata-only change keeps generation')
  t.ok(Number(r1.json.metadata.resourceVersion) > Number(c.json.metadata.resourceVersion), 'but the resourceVersion grows')

  const spec = structuredClone(r1.json)
  spec.spec.replicas = 3
  const r2 = await s.request('PUT', `${coll}/gen-dep`, spec)
  t.equal(r2.status, 200)
  t.equal(r2.json.metadata.generation, 2, 'spec change bumps generation')
  t.equal(r2.json.spec.replicas, 3)

  const spec2 = structuredClone(r2.json)
  spec2.spec.template.spec.containers[0].image = 'registry.example/app:2'
  const r3 = await s.request('PUT', `${coll}/gen-dep`, spec2)
  t.equal(r3.json.metadata.generation, 3, 'template change bumps generation')

  // A client-sent generation on update is ignored.
  const forged = structuredClone(r3.json)
  forged.metadata.generation = 42
  const r4 = await s.request('PUT', `${coll}/gen-dep`, forged)
  t.equal(r4.status, 200)
  t.equal(r4.json.metadata.generation, 3, 'client generation ignored on update')

  // A status write does not bump generation.
  const st = structuredClone(r4.json)
  st.status = { observedGeneration: 3, replicas: 3 }
  const r5 = await s.request('PUT', `${coll}/gen-dep/status`, st)
  t.equal(r5.status, 200)
  t.equal(r5.json.metadata.generation, 3, 'status write keeps generation')
})

t.test('all-namespaces list', async (t) => {
  for (const ns of [NS, 'crud-b']) {
    const r = await s.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'everywhere', labels: { suite: 'allns' } } })
    t.equal(r.status, 201)
    const d = await s.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, { metadata: { name: 'everywhere', labels: { suite: 'allns' } }, spec: { selector: { matchLabels: { app: 'e' } }, template: podTemplate('e') } })
    t.equal(d.status, 201)
  }
  const cms = await s.request('GET', '/api/v1/configmaps?labelSelector=suite%3Dallns')
  t.equal(cms.status, 200)
  t.equal(cms.json.kind, 'ConfigMapList')
  t.same(cms.json.items.map((x: Obj) => `${x.metadata.namespace}/${x.metadata.name}`).sort(), ['crud-b/everywhere', `${NS}/everywhere`])
  const all = await s.request('GET', '/api/v1/configmaps')
  const nss = new Set(all.json.items.map((x: Obj) => x.metadata.namespace))
  t.ok(nss.has(NS) && nss.has('crud-b') && nss.has('crud-gen'), 'items from several namespaces')
  const deps = await s.request('GET', '/apis/apps/v1/deployments?labelSelector=suite%3Dallns')
  t.equal(deps.json.kind, 'DeploymentList')
  t.same(deps.json.items.map((x: Obj) => `${x.metadata.namespace}/${x.metadata.name}`).sort(), ['crud-b/everywhere', `${NS}/everywhere`])
  // metadata.namespace field selector on an all-namespaces list.
  const one = await s.request('GET', '/api/v1/configmaps?fieldSelector=metadata.namespace%3Dcrud-b')
  t.equal(one.status, 200)
  t.ok(one.json.items.length >= 1)
  t.ok(one.json.items.every((x: Obj) => x.metadata.namespace === 'crud-b'), 'only crud-b items')
})

t.test('list paging with limit and continue', async (t) => {
  const coll = '/api/v1/namespaces/crud-page/configmaps'
  const names = ['p0', 'p1', 'p2', 'p3', 'p4']
  for (const n of names) t.equal((await s.request('POST', coll, { metadata: { name: n, labels: { page: 'yes' } } })).status, 201)
  const p1 = await s.request('GET', `${coll}?limit=2`)
  t.equal(p1.status, 200)
  t.same(p1.json.items.map((x: Obj) => x.metadata.name), ['p0', 'p1'], 'first page')
  t.type(p1.json.metadata.continue, 'string')
  t.ok(p1.json.metadata.continue.length > 0, 'first page has a continue token')
  t.equal(p1.json.metadata.remainingItemCount, 3, 'remainingItemCount after the first page')
  const rv = p1.json.metadata.resourceVersion

  // A change after the first page must not show up in later pages (consistent snapshot).
  t.equal((await s.request('POST', coll, { metadata: { name: 'p5', labels: { page: 'yes' } } })).status, 201)

  const p2 = await s.request('GET', `${coll}?limit=2&continue=${encodeURIComponent(p1.json.metadata.continue)}`)
  t.equal(p2.status, 200)
  t.same(p2.json.items.map((x: Obj) => x.metadata.name), ['p2', 'p3'], 'second page')
  t.equal(p2.json.metadata.resourceVersion, rv, 'same resourceVersion across pages')
  t.equal(p2.json.metadata.remainingItemCount, 1, 'remainingItemCount after the second page')
  t.ok(p2.json.metadata.continue, 'second page has a continue token')

  const p3 = await s.request('GET', `${coll}?limit=2&continue=${encodeURIComponent(p2.json.metadata.continue)}`)
  t.equal(p3.status, 200)
  t.same(p3.json.items.map((x: Obj) => x.metadata.name), ['p4'], 'last page holds only what existed at the first page')
  t.equal(p3.json.metadata.resourceVersion, rv, 'same resourceVersion on the last page')
  t.ok(p3.json.metadata.continue === undefined || p3.json.metadata.continue === '', 'no continue on the last page')
  t.notOk('remainingItemCount' in p3.json.metadata, 'no remainingItemCount on the last page')

  // A new list without a token sees the change.
  const fresh = await s.request('GET', coll)
  t.same(fresh.json.items.map((x: Obj) => x.metadata.name), [...names, 'p5'])
  t.ok(Number(fresh.json.metadata.resourceVersion) > Number(rv), 'a new list has a newer resourceVersion')

  // limit equal to the size: no token, no count.
  const exact = await s.request('GET', `${coll}?limit=6`)
  t.equal(exact.json.items.length, 6)
  t.ok(!exact.json.metadata.continue, 'no continue when everything fits')
  t.notOk('remainingItemCount' in exact.json.metadata)

  // With a label selector: pages still work, remainingItemCount is omitted.
  const sel = await s.request('GET', `${coll}?limit=2&labelSelector=page%3Dyes`)
  t.equal(sel.json.items.length, 2)
  t.ok(sel.json.metadata.continue, 'selector page has a continue token')
  t.notOk('remainingItemCount' in sel.json.metadata, 'no remainingItemCount with a selector')
  const collected: string[] = sel.json.items.map((x: Obj) => x.metadata.name)
  let cont = sel.json.metadata.continue
  while (cont) {
    const p = await s.request('GET', `${coll}?limit=2&labelSelector=page%3Dyes&continue=${encodeURIComponent(cont)}`)
    t.equal(p.status, 200)
    collected.push(...p.json.items.map((x: Obj) => x.metadata.name))
    cont = p.json.metadata.continue
  }
  t.same(collected, [...names, 'p5'], 'all pages together, in order, no duplicates')

  // Paging an all-namespaces list.
  const allp = await s.request('GET', '/api/v1/configmaps?limit=1')
  t.equal(allp.json.items.length, 1)
  t.ok(allp.json.metadata.continue)
  t.ok(allp.json.metadata.remainingItemCount >= 1)
})

t.test('label selectors and the metadata.name field selector', async (t) => {
  const coll = '/api/v1/namespaces/crud-sel/configmaps'
  const objs: Array<[string, Record<string, string> | undefined]> = [
    ['s1', { env: 'prod', tier: 'web' }],
    ['s2', { env: 'dev', tier: 'web' }],
    ['s3', { env: 'qa' }],
    ['s4', undefined],
  ]
  for (const [name, labels] of objs) t.equal((await s.request('POST', coll, { metadata: { name, labels } })).status, 201)
  const q = async (param: string, sel: string): Promise<string[]> => {
    const r = await s.request('GET', `${coll}?${param}=${encodeURIComponent(sel)}`)
    t.equal(r.status, 200, `${param} ${sel}: ${r.status === 200 ? '' : r.text}`)
    return (r.json?.items ?? []).map((x: Obj) => x.metadata.name).sort()
  }
  t.same(await q('labelSelector', 'env=prod'), ['s1'], '=')
  t.same(await q('labelSelector', 'env==prod'), ['s1'], '==')
  t.same(await q('labelSelector', 'env!=prod'), ['s2', 's3', 's4'], '!= (includes objects without the key)')
  t.same(await q('labelSelector', 'env in (prod,dev)'), ['s1', 's2'], 'in')
  t.same(await q('labelSelector', 'env in (prod, dev)'), ['s1', 's2'], 'in with a space')
  t.same(await q('labelSelector', 'env notin (prod,dev)'), ['s3', 's4'], 'notin (includes objects without the key)')
  t.same(await q('labelSelector', 'tier'), ['s1', 's2'], 'exists')
  t.same(await q('labelSelector', '!tier'), ['s3', 's4'], '!key')
  t.same(await q('labelSelector', 'env=dev,tier=web'), ['s2'], 'two requirements')
  t.same(await q('labelSelector', 'tier,env notin (dev)'), ['s1'], 'exists plus notin')
  t.same(await q('labelSelector', 'env=none'), [], 'no match')
  t.same(await q('labelSelector', ''), ['s1', 's2', 's3', 's4'], 'empty selector selects all')
  t.same(await q('fieldSelector', 'metadata.name=s2'), ['s2'], 'metadata.name=')
  t.same(await q('fieldSelector', 'metadata.name==s2'), ['s2'], 'metadata.name==')
  t.same(await q('fieldSelector', 'metadata.name!=s2'), ['s1', 's3', 's4'], 'metadata.name!=')
  t.same(await q('fieldSelector', 'metadata.name=nope'), [], 'metadata.name no match')
  const both = await s.request('GET', `${coll}?labelSelector=${encodeURIComponent('tier=web')}&fieldSelector=${encodeURIComponent('metadata.name=s1')}`)
  t.same(both.json.items.map((x: Obj) => x.metadata.name), ['s1'], 'label and field selector together')
  const bad = await s.request('GET', `${coll}?labelSelector=${encodeURIComponent('env in prod')}`)
  t.equal(bad.status, 400, 'a malformed label selector is 400')
})

t.test('status sub-resource: PUT /status changes only status; PUT on the main resource does not change status', async (t) => {
  const coll = `/apis/apps/v1/namespaces/${NS}/deployments`
  const c = await s.request('POST', coll, { metadata: { name: 'st-dep' }, spec: { replicas: 2, selector: { matchLabels: { app: 'st' } }, template: podTemplate('st') }, status: { replicas: 99 } })
  t.equal(c.status, 201)
  t.notOk(c.json.status?.replicas, 'status from the create body is dropped')

  const gs = await s.request('GET', `${coll}/st-dep/status`)
  t.equal(gs.status, 200, 'GET /status')
  t.equal(gs.json.kind, 'Deployment')
  t.same(gs.json, c.json, 'GET /status returns the whole object')

  const body = structuredClone(c.json)
  body.status = { observedGeneration: 1, replicas: 2, readyReplicas: 1 }
  body.spec.replicas = 5
  body.metadata.labels = { sneaky: 'yes' }
  const ps = await s.request('PUT', `${coll}/st-dep/status`, body)
  t.equal(ps.status, 200, `PUT /status: ${ps.text.slice(0, 200)}`)
  noteWrite(t, 'status update', ps)
  t.same(ps.json.status, { observedGeneration: 1, replicas: 2, readyReplicas: 1 }, 'status changed')
  t.equal(ps.json.spec.replicas, 2, 'spec not changed by /status')
  t.notOk(ps.json.metadata.labels?.sneaky, 'labels not changed by /status')
  t.equal(ps.json.metadata.generation, 1)
  const g1 = await s.request('GET', `${coll}/st-dep`)
  t.same(g1.json, ps.json, 'stored as answered')

  const main = structuredClone(g1.json)
  main.status = { replicas: 0, observedGeneration: 9 }
  main.spec.replicas = 4
  const pm = await s.request('PUT', `${coll}/st-dep`, main)
  t.equal(pm.status, 200)
  noteWrite(t, 'main update', pm)
  t.same(pm.json.status, { observedGeneration: 1, replicas: 2, readyReplicas: 1 }, 'status not changed by the main resource')
  t.equal(pm.json.spec.replicas, 4, 'spec changed by the main resource')
  t.equal(pm.json.metadata.generation, 2)
  const g2 = await s.request('GET', `${coll}/st-dep`)
  t.same(g2.json, pm.json)

  // The same split on a cluster-scoped type (nodes/status).
  const n = await s.request('POST', '/api/v1/nodes', { metadata: { name: 'crud-status-node' }, spec: { unschedulable: false } })
  t.equal(n.status, 201)
  const nb = structuredClone(n.json)
  nb.status = { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ok' }] }
  nb.spec = { unschedulable: true }
  const ns = await s.request('PUT', '/api/v1/nodes/crud-status-node/status', nb)
  t.equal(ns.status, 200)
  t.same(ns.json.status.conditions, nb.status.conditions, 'node status changed')
  t.notOk(ns.json.spec?.unschedulable, 'node spec not changed by /status')
  const nm = structuredClone(ns.json)
  nm.status = { conditions: [] }
  nm.spec = { unschedulable: true }
  const nu = await s.request('PUT', '/api/v1/nodes/crud-status-node', nm)
  t.equal(nu.status, 200)
  t.equal(nu.json.spec.unschedulable, true, 'node spec changed by the main resource')
  t.same(nu.json.status.conditions, nb.status.conditions, 'node status not changed by the main resource')

  // A type without a status sub-resource: /status is not found.
  const cm = await s.request('GET', `/api/v1/namespaces/${NS}/configmaps/everywhere/status`)
  t.equal(cm.status, 404, 'configmaps have no /status')
})

t.test('scale sub-resource on deployments', async (t) => {
  const coll = `/apis/apps/v1/namespaces/${NS}/deployments`
  const c = await s.request('POST', coll, { metadata: { name: 'sc-dep' }, spec: { replicas: 2, selector: { matchLabels: { app: 'sc', tier: 'x' } }, template: { ...podTemplate('sc'), metadata: { labels: { app: 'sc', tier: 'x' } } } } })
  t.equal(c.status, 201)
  const g = await s.request('GET', `${coll}/sc-dep/scale`)
  t.equal(g.status, 200)
  t.same(g.json, {
    kind: 'Scale', apiVersion: 'autoscaling/v1',
    metadata: { name: 'sc-dep', namespace: NS, uid: c.json.metadata.uid, resourceVersion: c.json.metadata.resourceVersion, creationTimestamp: c.json.metadata.creationTimestamp },
    spec: { replicas: 2 },
    status: { replicas: 0, selector: 'app=sc,tier=x' },
  }, 'Scale view')

  const p = await s.request('PUT', `${coll}/sc-dep/scale`, { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: { name: 'sc-dep', namespace: NS }, spec: { replicas: 4 } })
  t.equal(p.status, 200, `PUT scale: ${p.text.slice(0, 200)}`)
  noteWrite(t, 'scale update', p)
  t.equal(p.json.kind, 'Scale')
  t.equal(p.json.spec.replicas, 4)
  const d = await s.request('GET', `${coll}/sc-dep`)
  t.equal(d.json.spec.replicas, 4, 'deployment spec.replicas follows the scale')
  t.equal(d.json.metadata.generation, 2, 'scaling bumps generation')
  t.equal(p.json.metadata.resourceVersion, d.json.metadata.resourceVersion, 'Scale resourceVersion is the deployment\'s')

  // Scale with a stale resourceVersion conflicts.
  const stale = await s.request('PUT', `${coll}/sc-dep/scale`, { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: { name: 'sc-dep', namespace: NS, resourceVersion: c.json.metadata.resourceVersion }, spec: { replicas: 1 } })
  t.equal(stale.status, 409, 'stale scale update conflicts')
  const d2 = await s.request('GET', `${coll}/sc-dep`)
  t.equal(d2.json.spec.replicas, 4, 'unchanged after the conflict')
  t.equal(d2.json.metadata.resourceVersion, d.json.metadata.resourceVersion)

  const g404 = await s.request('GET', `${coll}/nope/scale`)
  t.equal(g404.status, 404)
})

t.test('deletecollection with a label selector', async (t) => {
  const coll = '/api/v1/namespaces/crud-dc/configmaps'
  for (const [n, del] of [['dc1', 'yes'], ['dc2', 'yes'], ['dc3', 'no'], ['dc4', undefined]] as const) {
    t.equal((await s.request('POST', coll, { metadata: { name: n, labels: del ? { del } : undefined } })).status, 201)
  }
  const other = await s.request('POST', '/api/v1/namespaces/crud-b/configmaps', { metadata: { name: 'dc-other', labels: { del: 'yes' } } })
  t.equal(other.status, 201)
  const r = await s.request('DELETE', `${coll}?labelSelector=${encodeURIComponent('del=yes')}`)
  t.equal(r.status, 200)
  t.equal(r.json.kind, 'ConfigMapList')
  t.same(r.json.items.map((x: Obj) => x.metadata.name).sort(), ['dc1', 'dc2'], 'the deleted items')
  const left = await s.request('GET', coll)
  t.same(left.json.items.map((x: Obj) => x.metadata.name).sort(), ['dc3', 'dc4'], 'the rest remains')
  const o = await s.request('GET', '/api/v1/namespaces/crud-b/configmaps/dc-other')
  t.equal(o.status, 200, 'other namespaces untouched')
  const r2 = await s.request('DELETE', `${coll}?labelSelector=${encodeURIComponent('del=yes')}`)
  t.equal(r2.status, 200)
  t.same(r2.json.items, [], 'nothing left to delete')
})

t.test('resourceVersions only grow', async (t) => {
  t.ok(rvOrder.length > 20, `${rvOrder.length} writes seen`)
  for (let i = 1; i < rvOrder.length; i++) {
    if (!(rvOrder[i].rv > rvOrder[i - 1].rv)) t.fail(`${rvOrder[i].what} (${rvOrder[i].rv}) is not after ${rvOrder[i - 1].what} (${rvOrder[i - 1].rv})`)
  }
  // One object through several writes.
  const coll = `/api/v1/namespaces/${NS}/configmaps`
  const c = await s.request('POST', coll, { metadata: { name: 'rv-seq' }, data: { n: '0' } })
  let prev = Number(c.json.metadata.resourceVersion)
  let cur = c.json
  for (let i = 1; i <= 5; i++) {
    cur = structuredClone(cur)
    cur.data.n = String(i)
    const u = await s.request('PUT', `${coll}/rv-seq`, cur)
    t.equal(u.status, 200)
    const rv = Number(u.json.metadata.resourceVersion)
    t.ok(rv > prev, `write ${i}: ${rv} > ${prev}`)
    prev = rv
    cur = u.json
  }
  const l = await s.request('GET', coll)
  t.ok(Number(l.json.metadata.resourceVersion) >= prev, 'list resourceVersion is not older than the last write')
  const del = await s.request('DELETE', `${coll}/rv-seq`)
  t.equal(del.status, 200)
  const l2 = await s.request('GET', coll)
  t.ok(Number(l2.json.metadata.resourceVersion) > prev, 'a delete advances the list resourceVersion')
})
