// Black-box: more of the custom resource serving — several served versions (conversion None: stored in the storage
// version, answered in the asked one, deprecation warnings), cluster scope, selectable fields, categories, server-side
// apply, kubectl explain, namespace deletion and garbage collection of what a custom resource owns.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHash } from 'node:crypto'
import { startServer, type TestServer } from '../helpers/server.js'
import { runKubectl } from '../helpers/kubectl.js'
import { waitFor } from '../helpers/wait.js'

let s: TestServer
const home = mkdtempSync(join(tmpdir(), 'orch-crdv-home-'))
// A data dir of our own: the last test restarts the server on it.
const dataDir = mkdtempSync(join(tmpdir(), 'orch-crdv-data-'))
const kubectl = (args: string[], stdin?: string) => runKubectl(s.kubeconfig, home, args, { stdin })

const CRDS = '/apis/apiextensions.orch.io/v1/customresourcedefinitions'
const V1 = '/apis/multi.example.com/v1/namespaces/default/widgets'
const V1B1 = '/apis/multi.example.com/v1beta1/namespaces/default/widgets'
const MERGE = { 'content-type': 'application/merge-patch+json' }

const schema = {
  openAPIV3Schema: {
    type: 'object',
    properties: {
      spec: { type: 'object', properties: { color: { type: 'string' }, size: { type: 'integer' }, items: { type: 'array', items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, value: { type: 'string' } } }, 'x-orch-list-type': 'map', 'x-orch-list-map-keys': ['name'] } } },
    },
  },
}

function widgetCrd(): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.orch.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'widgets.multi.example.com' },
    spec: {
      group: 'multi.example.com', scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', categories: ['all'] },
      versions: [
        { name: 'v1beta1', served: true, storage: false, deprecated: true, schema },
        { name: 'v1', served: true, storage: true, schema, selectableFields: [{ jsonPath: '.spec.color' }] },
      ],
    },
  }
}

async function establish(crd: Record<string, unknown>, path: string): Promise<void> {
  const r = await s.request('POST', CRDS, crd)
  if (r.status !== 201) throw new Error(r.text)
  await waitFor(`${path} served`, async () => ((await s.request('GET', path)).status === 200 ? true : undefined))
}

t.before(async () => {
  s = await startServer({ secure: true, dataDir })
  await establish(widgetCrd(), V1)
})
t.teardown(async () => { await s?.stop(); rmSync(home, { recursive: true, force: true }); rmSync(dataDir, { recursive: true, force: true }) })

const widget = (name: string, apiVersion: string, spec: Record<string, unknown> = {}) => ({ apiVersion, kind: 'Widget', metadata: { name }, spec: { color: 'red', ...spec } })
const warnings = (h: unknown) => ([] as string[]).concat((h as string | string[] | undefined) ?? [])

t.test('two served versions: stored in the storage version, answered in the asked one', async (t) => {
  let r = await s.request('POST', V1B1, widget('w1', 'multi.example.com/v1beta1'))
  t.equal(r.status, 201, r.text)
  t.equal(r.json.apiVersion, 'multi.example.com/v1beta1')
  t.same(warnings(r.headers['warning']), ['299 - "multi.example.com/v1beta1 Widget is deprecated; use multi.example.com/v1 Widget"'])
  r = await s.request('GET', `${V1}/w1`)
  t.equal(r.json.apiVersion, 'multi.example.com/v1')
  t.same(warnings(r.headers['warning']), [])
  r = await s.request('GET', `${V1B1}/w1`)
  t.equal(r.json.apiVersion, 'multi.example.com/v1beta1')
  // Stored in v1: the managed fields say which version each writer used.
  t.equal(r.json.metadata.managedFields?.[0]?.apiVersion, 'multi.example.com/v1beta1')
  r = await s.request('GET', V1B1)
  t.equal(r.json.apiVersion, 'multi.example.com/v1beta1')
  t.equal(r.json.kind, 'WidgetList')
  t.same(r.json.items.map((i: any) => i.apiVersion), ['multi.example.com/v1beta1'])
  r = await s.request('GET', V1)
  t.same(r.json.items.map((i: any) => i.apiVersion), ['multi.example.com/v1'])
  // A body of the other version is refused as for any type.
  r = await s.request('POST', V1B1, widget('w2', 'multi.example.com/v1'))
  t.equal(r.status, 400, r.text)
  t.equal(r.json.message, 'the API version in the data (multi.example.com/v1) does not match the expected API version (multi.example.com/v1beta1)')
  // Updates through either version.
  r = await s.request('PATCH', `${V1B1}/w1`, { spec: { size: 3 } }, MERGE)
  t.equal(r.status, 200, r.text)
  t.equal(r.json.apiVersion, 'multi.example.com/v1beta1')
  t.equal(r.json.spec.size, 3)
  const got = await s.request('GET', `${V1}/w1`)
  r = await s.request('PUT', `${V1}/w1`, { ...got.json, spec: { color: 'blue', size: 4 } })
  t.equal(r.status, 200, r.text)
  t.equal(r.json.apiVersion, 'multi.example.com/v1')
  r = await s.request('GET', `${V1B1}/w1`)
  t.same(r.json.spec, { color: 'blue', size: 4 })
})

t.test('discovery of both versions: v1 preferred, the storage version\'s hash in each', async (t) => {
  const g = await s.request('GET', '/apis/multi.example.com')
  t.same(g.json.versions.map((v: any) => v.version), ['v1', 'v1beta1'])
  t.equal(g.json.preferredVersion.version, 'v1')
  const hash = createHash('sha256').update('multi.example.com/v1/Widget').digest().subarray(0, 8).toString('base64')
  for (const v of ['v1', 'v1beta1']) {
    const r = await s.request('GET', `/apis/multi.example.com/${v}`)
    t.equal(r.json.resources.find((x: any) => x.name === 'widgets')?.storageVersionHash, hash, v)
  }
})

t.test('a watch in the deprecated version sees its apiVersion', async (t) => {
  const list = await s.request('GET', V1B1)
  const ctrl = new AbortController()
  const res = await fetch(`${s.url}${V1B1}?watch=1&resourceVersion=${list.json.metadata.resourceVersion}`, { headers: { authorization: `Bearer ${s.adminToken}` }, signal: ctrl.signal })
  const reader = res.body!.getReader()
  await s.request('POST', V1, widget('w-watched', 'multi.example.com/v1'))
  let text = ''
  const dec = new TextDecoder()
  while (!text.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) break
    text += dec.decode(value)
  }
  ctrl.abort()
  const ev = JSON.parse(text.split('\n')[0])
  t.equal(ev.type, 'ADDED')
  t.equal(ev.object.apiVersion, 'multi.example.com/v1beta1')
  t.equal(ev.object.metadata.name, 'w-watched')
})

t.test('selectable fields select', async (t) => {
  let r = await s.request('GET', `${V1}?fieldSelector=spec.color%3Dred`)
  t.equal(r.status, 200, r.text)
  t.same(r.json.items.map((i: any) => i.metadata.name), ['w-watched'])
  r = await s.request('GET', `${V1}?fieldSelector=spec.size%3D1`)
  t.equal(r.status, 400, r.text)
})

t.test('categories: kubectl get all lists the custom resources; kubectl explain describes them', async (t) => {
  const g = await kubectl(['get', 'all'])
  t.equal(g.code, 0, g.stderr)
  t.match(g.stdout, /widget\.multi\.example\.com\/w1/)
  const e = await kubectl(['explain', 'widgets.spec'])
  t.equal(e.code, 0, e.stderr)
  t.match(e.stdout, /GROUP:\s+multi\.example\.com/)
  t.match(e.stdout, /color\s+<string>/)
  t.match(e.stdout, /size\s+<integer>/)
})

t.test('server-side apply with the schema\'s list-map markers', async (t) => {
  const cfg = (items: unknown[]) => JSON.stringify({ apiVersion: 'multi.example.com/v1', kind: 'Widget', metadata: { name: 'applied', namespace: 'default' }, spec: { color: 'green', items } })
  let k = await kubectl(['apply', '--server-side', '--field-manager', 'one', '-f', '-'], cfg([{ name: 'a', value: '1' }]))
  t.equal(k.code, 0, k.stderr)
  t.match(k.stdout, /widget.multi.example.com\/applied serverside-applied/)
  // A second manager adds an item of its own to the list-map: both stay.
  k = await kubectl(['apply', '--server-side', '--field-manager', 'two', '-f', '-'], JSON.stringify({ apiVersion: 'multi.example.com/v1', kind: 'Widget', metadata: { name: 'applied', namespace: 'default' }, spec: { items: [{ name: 'b', value: '2' }] } }))
  t.equal(k.code, 0, k.stderr)
  let r = await s.request('GET', `${V1}/applied`)
  t.same(r.json.spec.items, [{ name: 'a', value: '1' }, { name: 'b', value: '2' }])
  // A conflicting value is refused unless forced.
  k = await kubectl(['apply', '--server-side', '--field-manager', 'two', '-f', '-'], JSON.stringify({ apiVersion: 'multi.example.com/v1', kind: 'Widget', metadata: { name: 'applied', namespace: 'default' }, spec: { color: 'black' } }))
  t.not(k.code, 0)
  t.match(k.stderr, /conflict with "one": \.spec\.color/)
  // A list-map holds no key twice (upstream's ValidateListSetsAndMaps).
  r = await s.request('POST', V1, widget('dup', 'multi.example.com/v1', { items: [{ name: 'a', value: '1' }, { name: 'a', value: '2' }] }))
  t.equal(r.status, 422, r.text)
  t.equal(r.json.message, 'Widget.multi.example.com "dup" is invalid: spec.items[1]: Duplicate value: map[string]interface {}{"name":"a"}')
  r = await s.request('PATCH', `${V1}/applied?fieldManager=one`, { apiVersion: 'multi.example.com/v1', kind: 'Widget', metadata: { name: 'applied' }, spec: { color: 'green', items: [{ name: 'a', value: '1' }] } }, { 'content-type': 'application/apply-patch+yaml' })
  t.equal(r.status, 200, r.text)
})

t.test('a cluster-scoped custom resource', async (t) => {
  const crd = {
    apiVersion: 'apiextensions.orch.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'gadgets.multi.example.com' },
    spec: { group: 'multi.example.com', scope: 'Cluster', names: { plural: 'gadgets', kind: 'Gadget' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-orch-preserve-unknown-fields': true } } }] },
  }
  await establish(crd, '/apis/multi.example.com/v1/gadgets')
  let r = await s.request('POST', '/apis/multi.example.com/v1/gadgets', { apiVersion: 'multi.example.com/v1', kind: 'Gadget', metadata: { name: 'g1' }, anything: { goes: [1, 2] } })
  t.equal(r.status, 201, r.text)
  t.same(r.json.anything, { goes: [1, 2] })
  t.equal(r.json.metadata.namespace, undefined)
  r = await s.request('GET', '/apis/multi.example.com/v1/namespaces/default/gadgets/g1')
  t.equal(r.status, 404)
  const rl = await s.request('GET', '/apis/multi.example.com/v1')
  t.match(rl.json.resources.find((x: any) => x.name === 'gadgets'), { namespaced: false, kind: 'Gadget', singularName: 'gadget' })
  const k = await kubectl(['get', 'gadgets'])
  t.equal(k.code, 0, k.stderr)
  t.match(k.stdout, /^NAME\s+AGE\ng1\s+\d+s\n$/)
  // No status sub-resource: /status is the object's NotFound, and a status change through the object bumps generation.
  r = await s.request('GET', '/apis/multi.example.com/v1/gadgets/g1/status')
  t.equal(r.status, 404, r.text)
  t.equal(r.json.message, 'gadgets.multi.example.com "g1" not found')
  r = await s.request('PATCH', '/apis/multi.example.com/v1/gadgets/g1', { status: { phase: 'Up' } }, MERGE)
  t.equal(r.status, 200, r.text)
  t.equal(r.json.status.phase, 'Up')
  t.equal(r.json.metadata.generation, 2)
})

t.test('deleting a namespace deletes its custom resources; what a custom resource owns is collected', async (t) => {
  t.equal((await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } })).status, 201)
  const owner = await s.request('POST', '/apis/multi.example.com/v1/namespaces/doomed/widgets', widget('owner', 'multi.example.com/v1'))
  t.equal(owner.status, 201, owner.text)
  const cm = await s.request('POST', '/api/v1/namespaces/default/configmaps', {
    apiVersion: 'v1', kind: 'ConfigMap',
    metadata: { name: 'owned', ownerReferences: [{ apiVersion: 'multi.example.com/v1', kind: 'Widget', name: 'w1', uid: (await s.request('GET', `${V1}/w1`)).json.metadata.uid }] },
  })
  t.equal(cm.status, 201, cm.text)
  t.equal((await s.request('DELETE', `${V1}/w1`)).status, 200)
  await waitFor('owned ConfigMap collected', async () => ((await s.request('GET', '/api/v1/namespaces/default/configmaps/owned')).status === 404 ? true : undefined), 20_000)
  t.equal((await s.request('DELETE', '/api/v1/namespaces/doomed')).status, 200)
  await waitFor('namespace gone', async () => ((await s.request('GET', '/api/v1/namespaces/doomed')).status === 404 ? true : undefined), 20_000)
  t.equal((await s.request('GET', '/apis/multi.example.com/v1/namespaces/doomed/widgets/owner')).status, 404)
})

t.test('x-orch-validations: CEL rules on self and oldSelf, messages, reasons, field paths', async (t) => {
  const crd = {
    apiVersion: 'apiextensions.orch.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'limits.multi.example.com' },
    spec: {
      group: 'multi.example.com', scope: 'Namespaced', names: { plural: 'limits', kind: 'Limit' },
      versions: [{
        name: 'v1', served: true, storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                'x-orch-validations': [
                  { rule: 'self.minReplicas <= self.maxReplicas', message: 'minReplicas must not exceed maxReplicas' },
                  { rule: 'self.maxReplicas < 100', messageExpression: "'replicas ' + string(self.maxReplicas) + ' too many'" },
                  { rule: 'self.maxReplicas != 13', message: 'unlucky', reason: 'FieldValueForbidden', fieldPath: '.maxReplicas' },
                  { rule: 'self.minReplicas >= 0' },
                ],
                properties: {
                  minReplicas: { type: 'integer' },
                  maxReplicas: { type: 'integer' },
                  name: { type: 'string', 'x-orch-validations': [{ rule: 'self == oldSelf', message: 'name is immutable' }] },
                },
              },
            },
          },
        },
      }],
    },
  }
  const L = '/apis/multi.example.com/v1/namespaces/default/limits'
  await establish(crd, L)
  const limit = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'multi.example.com/v1', kind: 'Limit', metadata: { name }, spec })
  const bad = async (body: unknown, message: string, method = 'POST', path = L) => {
    const r = await s.request(method, path, body)
    t.equal(r.status, 422, r.text)
    t.equal(r.json?.message, message)
  }
  await bad(limit('l1', { minReplicas: 5, maxReplicas: 2 }), 'Limit.multi.example.com "l1" is invalid: spec: Invalid value: "object": minReplicas must not exceed maxReplicas')
  await bad(limit('l1', { minReplicas: 5, maxReplicas: 150 }), 'Limit.multi.example.com "l1" is invalid: spec: Invalid value: "object": replicas 150 too many')
  await bad(limit('l1', { minReplicas: 5, maxReplicas: 13 }), 'Limit.multi.example.com "l1" is invalid: spec.maxReplicas: Forbidden: unlucky')
  await bad(limit('l1', { minReplicas: -1, maxReplicas: 2 }), 'Limit.multi.example.com "l1" is invalid: spec: Invalid value: "object": failed rule: self.minReplicas >= 0')
  await bad(limit('l1', { minReplicas: 1, maxReplicas: 'x' }),
    'Limit.multi.example.com "l1" is invalid: [spec.maxReplicas: Invalid value: "string": spec.maxReplicas in body must be of type integer: "string", : Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]')
  const ok = await s.request('POST', L, limit('l1', { minReplicas: 1, maxReplicas: 2, name: 'first' }))
  t.equal(ok.status, 201, ok.text)
  const r = await s.request('PATCH', `${L}/l1`, { spec: { name: 'second' } }, MERGE)
  t.equal(r.status, 422, r.text)
  t.equal(r.json.message, 'Limit.multi.example.com "l1" is invalid: spec.name: Invalid value: "string": name is immutable')
  const same = await s.request('PATCH', `${L}/l1`, { spec: { maxReplicas: 3 } }, MERGE)
  t.equal(same.status, 200, same.text)
})

t.test('a default added to the schema later is filled in what is read', async (t) => {
  const shape = { type: 'string', default: 'round' }
  const r = await s.request('PATCH', `${CRDS}/widgets.multi.example.com`, [
    { op: 'add', path: '/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/shape', value: shape },
    { op: 'add', path: '/spec/versions/1/schema/openAPIV3Schema/properties/spec/properties/shape', value: shape },
  ], { 'content-type': 'application/json-patch+json' })
  t.equal(r.status, 200, r.text)
  let g = await s.request('GET', `${V1}/w-watched`)
  t.equal(g.json.spec.shape, 'round')
  g = await s.request('GET', `${V1B1}/w-watched`)
  t.equal(g.json.spec.shape, 'round')
  t.equal(g.json.apiVersion, 'multi.example.com/v1beta1')
  g = await s.request('GET', `${V1}/w-watched`, undefined, { accept: 'application/yaml' })
  t.match(g.text, /shape: round/)
  const l = await s.request('GET', V1)
  t.ok(l.json.items.length > 0)
  t.ok(l.json.items.every((i: any) => i.spec.shape === 'round'), 'every listed item defaulted')
  // The initial events of a watch are read from storage too.
  const ctrl = new AbortController()
  const res = await fetch(`${s.url}${V1}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`, { headers: { authorization: `Bearer ${s.adminToken}` }, signal: ctrl.signal })
  const reader = res.body!.getReader()
  let text = ''
  const dec = new TextDecoder()
  while (!text.includes('"BOOKMARK"')) {
    const { value, done } = await reader.read()
    if (done) break
    text += dec.decode(value)
  }
  ctrl.abort()
  const events = text.split('\n').filter((x) => x !== '').map((x) => JSON.parse(x))
  const added = events.filter((e: any) => e.type === 'ADDED')
  t.ok(added.length > 0)
  t.ok(added.every((e: any) => e.object.spec.shape === 'round'), 'initial events defaulted')
  t.same(Object.keys(events.find((e: any) => e.type === 'BOOKMARK').object).sort(), ['apiVersion', 'kind', 'metadata'])
  const m = await s.request('GET', `${V1}/w-watched`, undefined, { accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' })
  t.equal(m.json.kind, 'PartialObjectMetadata')
  t.equal(m.json.spec, undefined)
})

t.test('after a restart the custom resources are served at once', async (t) => {
  await s.stop()
  s = await startServer({ secure: true, dataDir })
  let r = await s.request('GET', `${V1B1}/w-watched`)
  t.equal(r.status, 200, r.text)
  t.equal(r.json.apiVersion, 'multi.example.com/v1beta1')
  r = await s.request('POST', V1, widget('after-restart', 'multi.example.com/v1'))
  t.equal(r.status, 201, r.text)
  const rl = await s.request('GET', '/apis/multi.example.com/v1')
  t.ok(rl.json.resources.some((x: any) => x.name === 'widgets'))
})

t.test('x-orch-embedded-resource: apiVersion and kind required, its metadata pruned as any object\'s', async (t) => {
  const crd = {
    apiVersion: 'apiextensions.orch.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'wrappers.multi.example.com' },
    spec: {
      group: 'multi.example.com', scope: 'Namespaced', names: { plural: 'wrappers', kind: 'Wrapper' },
      versions: [{
        name: 'v1', served: true, storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { template: { type: 'object', 'x-orch-embedded-resource': true, 'x-orch-preserve-unknown-fields': true } } } } } },
      }],
    },
  }
  const W = '/apis/multi.example.com/v1/namespaces/default/wrappers'
  await establish(crd, W)
  let r = await s.request('POST', W, { apiVersion: 'multi.example.com/v1', kind: 'Wrapper', metadata: { name: 'bad' }, spec: { template: { data: { a: 1 } } } })
  t.equal(r.status, 422, r.text)
  t.equal(r.json.message, 'Wrapper.multi.example.com "bad" is invalid: [spec.template.apiVersion: Required value: must not be empty, spec.template.kind: Required value: must not be empty]')
  r = await s.request('POST', W, { apiVersion: 'multi.example.com/v1', kind: 'Wrapper', metadata: { name: 'good' }, spec: { template: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', bogus: 1 }, data: { a: '1' } } } })
  t.equal(r.status, 201, r.text)
  t.same(r.json.spec.template, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { a: '1' } })
})

t.test('string formats are checked as upstream checks them', async (t) => {
  const crd = {
    apiVersion: 'apiextensions.orch.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'stamps.multi.example.com' },
    spec: {
      group: 'multi.example.com', scope: 'Namespaced', names: { plural: 'stamps', kind: 'Stamp' },
      versions: [{
        name: 'v1', served: true, storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { at: { type: 'string', format: 'date-time' }, ip: { type: 'string', format: 'ipv4' }, free: { type: 'string', format: 'my-own' } } } } } },
      }],
    },
  }
  const P = '/apis/multi.example.com/v1/namespaces/default/stamps'
  await establish(crd, P)
  let r = await s.request('POST', P, { apiVersion: 'multi.example.com/v1', kind: 'Stamp', metadata: { name: 'bad' }, spec: { at: 'yesterday', ip: '1.2.3.4', free: 'x' } })
  t.equal(r.status, 422, r.text)
  t.equal(r.json.message, 'Stamp.multi.example.com "bad" is invalid: spec.at: Invalid value: "yesterday": spec.at in body must be of type date-time: "yesterday"')
  t.equal(r.json.details.causes[0].reason, 'FieldValueTypeInvalid')
  r = await s.request('POST', P, { apiVersion: 'multi.example.com/v1', kind: 'Stamp', metadata: { name: 'bad' }, spec: { at: '2024-01-02T03:04:05Z', ip: '300.1.1.1' } })
  t.equal(r.status, 422, r.text)
  t.equal(r.json.message, 'Stamp.multi.example.com "bad" is invalid: spec.ip: Invalid value: "300.1.1.1": spec.ip in body must be of type ipv4: "300.1.1.1"')
  r = await s.request('POST', P, { apiVersion: 'multi.example.com/v1', kind: 'Stamp', metadata: { name: 'good' }, spec: { at: '2024-01-02T03:04:05Z', ip: '10.0.0.1', free: 'anything' } })
  t.equal(r.status, 201, r.text)
})

t.test('OpenAPI v2 and v3 describe the custom resources; their PATCH takes no strategic merge patch', async (t) => {
  const v2 = await s.request('GET', '/openapi/v2')
  t.equal(v2.status, 200)
  const def = v2.json.definitions['com.example.multi.v1.Widget']
  t.ok(def, 'the kind is defined')
  t.same(def['x-kubernetes-group-version-kind'], [{ group: 'multi.example.com', kind: 'Widget', version: 'v1' }])
  t.equal(def.properties.metadata.$ref, '#/definitions/io.orch.apimachinery.pkg.apis.meta.v1.ObjectMeta')
  t.ok(v2.json.definitions['com.example.multi.v1.WidgetList'])
  const patch = v2.json.paths['/apis/multi.example.com/v1/namespaces/{namespace}/widgets/{name}'].patch
  t.same(patch.consumes, ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'])
  const idx = await s.request('GET', '/openapi/v3')
  const url = idx.json.paths['apis/multi.example.com/v1']?.serverRelativeURL
  t.ok(url)
  const v3 = await s.request('GET', url)
  t.equal(v3.status, 200)
  t.ok(v3.json.components.schemas['com.example.multi.v1.Widget'])
  t.same(Object.keys(v3.json.paths['/apis/multi.example.com/v1/namespaces/{namespace}/widgets/{name}'].patch.requestBody.content), ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'])
})

t.test('kubectl delete crd waits for its custom resources to go, then the CRD', async (t) => {
  const W = '/apis/multi.example.com/v1/namespaces/default/wrappers'
  t.equal((await s.request('GET', `${W}/good`)).status, 200)
  const k = await kubectl(['delete', 'crd', 'wrappers.multi.example.com'])
  t.equal(k.code, 0, k.stderr)
  t.match(k.stdout, /customresourcedefinition\.apiextensions\.orch\.io "wrappers\.multi\.example\.com" deleted/)
  t.equal((await s.request('GET', `${CRDS}/wrappers.multi.example.com`)).status, 404)
  t.equal((await s.request('GET', `${W}/good`)).status, 404)
  const rl = await s.request('GET', '/apis/multi.example.com/v1')
  t.notOk(rl.json.resources.some((x: any) => x.name === 'wrappers'))
})
