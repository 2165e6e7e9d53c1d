// Server-side apply and managedFields without a server: FieldsV1 shapes compared with the reference examples as
// exact JSON text, ownership (sharing, conflicts, force, removal, transfer on update), the 409 Status, list-map keys,
// sets, atomic lists, before-first-apply, resets, and the FieldsV1 codec itself.
import t from 'tap'
import { loadDefinitions } from '../../src/registry/schema.js'
import { typeTree } from '../../src/machinery/patch/schema-walk.js'
import {
  applyPatch, updateManagedFields, conflictMessage, conflictError, managerFromUserAgent, ApplyError, LAST_APPLIED_ANNOTATION,
} from '../../src/machinery/apply/apply.js'
import type { ApplyOptions } from '../../src/machinery/apply/apply.js'
import {
  FieldSet, toFieldSet, pathString, makePath, keyElement, valueElement, indexElement, parseElement, sortInPlace,
} from '../../src/machinery/apply/fieldpath.js'
import { decodeManagedFields, encodeManagedFields } from '../../src/machinery/apply/managed-fields.js'

type Obj = Record<string, any>

const defs = loadDefinitions()
const DEPLOYMENT = typeTree(defs, 'io.orch.api.apps.v1.Deployment')
const CONFIGMAP = typeTree(defs, 'io.orch.api.core.v1.ConfigMap')
const POD = typeTree(defs, 'io.orch.api.core.v1.Pod')
const SERVICE = typeTree(defs, 'io.orch.api.core.v1.Service')

const T0 = '2025-01-01T10:00:00Z'
const T1 = '2025-01-01T11:00:00Z'
const T2 = '2025-01-01T12:00:00Z'

function opts(schema = CONFIGMAP, extra: Partial<ApplyOptions> = {}): ApplyOptions {
  return { force: false, apiVersion: schema === DEPLOYMENT ? 'apps/v1' : 'v1', now: T1, schema, ...extra }
}

function fields(o: Obj, manager: string, operation = 'Apply'): unknown {
  return (o.metadata.managedFields as Obj[]).find((e) => e.manager === manager && e.operation === operation)?.fieldsV1
}

function managers(o: Obj): string[] {
  return ((o.metadata.managedFields ?? []) as Obj[]).map((e) => `${e.manager}/${e.operation}`)
}

/** A stored ConfigMap created by kubectl-create (an Update entry), as the server would hold it. */
function createdConfigMap(data: Obj = { a: '1' }): Obj {
  const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'ns', uid: 'u-1', resourceVersion: '1', creationTimestamp: T0 }, data }
  return updateManagedFields(undefined, obj, 'kubectl-create', 'Update', 'v1', T0, CONFIGMAP)
}

function cmApply(data: Obj | undefined, extra: Obj = {}): Obj {
  const o: Obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'ns' }, ...extra }
  if (data) o.data = data
  return o
}

const nginx = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'nginx', labels: { app: 'nginx' } },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'nginx' } },
    template: { metadata: { labels: { app: 'nginx' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.14.2', ports: [{ containerPort: 80 }] }] } },
  },
}

t.test('FieldsV1 of a Deployment applied by kubectl (reference §3 example, exact JSON)', async (t) => {
  const r = applyPatch(undefined, nginx, 'kubectl', opts(DEPLOYMENT, { now: T0 }))
  t.same(r.conflicts, [])
  t.equal(r.created, true)
  t.equal(r.changed, true)
  const entries = r.object.metadata.managedFields as Obj[]
  t.equal(entries.length, 1)
  t.same(Object.keys(entries[0]!), ['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1'], 'entry keys in upstream order')
  t.same({ ...entries[0], fieldsV1: undefined }, { manager: 'kubectl', operation: 'Apply', apiVersion: 'apps/v1', time: T0, fieldsType: 'FieldsV1', fieldsV1: undefined })
  const want = `{"f:metadata":{"f:labels":{"f:app":{}}},
 "f:spec":{"f:replicas":{},"f:selector":{},
   "f:template":{"f:metadata":{"f:labels":{"f:app":{}}},
     "f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":{".":{},"f:image":{},"f:name":{},
        "f:ports":{"k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:containerPort":{}}}}}}}}}`.replace(/\s+/g, '')
  t.equal(JSON.stringify(entries[0]!.fieldsV1), want)
  t.same(r.object.spec.template.spec.containers, nginx.spec.template.spec.containers, 'the object is the applied config (not defaulted here)')
})

t.test('Update entries: kubectl create configmap and labels get "." entries', async (t) => {
  const cm = createdConfigMap()
  t.same(cm.metadata.managedFields, [{ manager: 'kubectl-create', operation: 'Update', apiVersion: 'v1', time: T0, fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { '.': {}, 'f:a': {} } } }])
  t.equal(JSON.stringify(cm.metadata.managedFields[0].fieldsV1), '{"f:data":{".":{},"f:a":{}}}')

  const labeled = structuredClone(cm)
  labeled.metadata.labels = { app: 'x' }
  labeled.metadata.resourceVersion = '2'
  const u = updateManagedFields(cm, labeled, 'kubectl-label', 'Update', 'v1', T1, CONFIGMAP)
  t.same(managers(u), ['kubectl-create/Update', 'kubectl-label/Update'], 'sorted by time')
  t.equal(JSON.stringify(fields(u, 'kubectl-label', 'Update')), '{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}', 'resourceVersion is never recorded')
})

t.test('kubectl create deployment: value structs have no "." entries, pointer structs and new items do', async (t) => {
  const obj = {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'ns', labels: { app: 'web' } },
    spec: {
      replicas: 1, selector: { matchLabels: { app: 'web' } }, revisionHistoryLimit: 10, progressDeadlineSeconds: 600,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'web', image: 'nginx', imagePullPolicy: 'Always', resources: {} }], restartPolicy: 'Always', securityContext: {} },
      },
    },
    status: {},
  }
  const c = updateManagedFields(undefined, obj, 'kubectl-create', 'Update', 'apps/v1', T0, DEPLOYMENT, { ignoredFields: [['status']] })
  t.equal(JSON.stringify(fields(c, 'kubectl-create', 'Update')), JSON.stringify({
    'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
    'f:spec': {
      'f:progressDeadlineSeconds': {}, 'f:replicas': {}, 'f:revisionHistoryLimit': {}, 'f:selector': {},
      'f:strategy': { 'f:rollingUpdate': { '.': {}, 'f:maxSurge': {}, 'f:maxUnavailable': {} }, 'f:type': {} },
      'f:template': {
        'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
        'f:spec': {
          'f:containers': { 'k:{"name":"web"}': { '.': {}, 'f:image': {}, 'f:imagePullPolicy': {}, 'f:name': {}, 'f:resources': {} } },
          'f:restartPolicy': {}, 'f:securityContext': {},
        },
      },
    },
  }))
})

t.test('two managers share a field set to the same value', async (t) => {
  const cm = createdConfigMap()
  const r = applyPatch(cm, cmApply({ a: '1', b: '2' }), 'tool', opts())
  t.same(r.conflicts, [])
  t.same(r.object.data, { a: '1', b: '2' })
  t.same(fields(r.object, 'tool'), { 'f:data': { 'f:a': {}, 'f:b': {} } })
  t.same(fields(r.object, 'kubectl-create', 'Update'), { 'f:data': { '.': {}, 'f:a': {} } }, 'still owned by the creator too')
  t.same(managers(r.object), ['tool/Apply', 'kubectl-create/Update'], 'Apply entries first')

  // A second applier with the same value: shared by three, no conflict.
  const r2 = applyPatch(r.object, cmApply({ a: '1' }), 'other', opts(CONFIGMAP, { now: T2 }))
  t.same(r2.conflicts, [])
  t.equal(r2.changed, false, 'nothing changed in the object')
  t.same(fields(r2.object, 'other'), { 'f:data': { 'f:a': {} } })
  t.notOk('time' in (r2.object.metadata.managedFields as Obj[]).find((e) => e.manager === 'other')!, 'a no-op apply records no time')

  // Any later change by one of them conflicts with the others.
  const r3 = applyPatch(r2.object, cmApply({ a: '9', b: '2' }), 'tool', opts(CONFIGMAP, { now: T2 }))
  t.same(r3.conflicts.map((c) => [c.managerName, c.field]), [['other', '.data.a'], ['kubectl-create', '.data.a']].sort((x, y) => (x[0]! < y[0]! ? -1 : 1)))
})

t.test('a conflict and its exact Status (reference §6)', async (t) => {
  const cm = createdConfigMap()
  const r = applyPatch(cm, cmApply({ a: '2' }), 'tool', opts())
  t.equal(r.conflicts.length, 1)
  t.same(r.object, cm, 'the live object is returned unchanged')
  const c = r.conflicts[0]!
  t.equal(c.field, '.data.a')
  t.equal(c.managerName, 'kubectl-create')
  t.same(conflictMessage(r.conflicts, 'tool'), {
    message: 'Apply failed with 1 conflict: conflict with "kubectl-create" using v1: .data.a',
    causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "kubectl-create" using v1', field: '.data.a' }],
  })
  t.equal(JSON.stringify(conflictError(r.conflicts, 'tool').toStatus()), JSON.stringify({
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: 'Apply failed with 1 conflict: conflict with "kubectl-create" using v1: .data.a',
    reason: 'Conflict',
    details: { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "kubectl-create" using v1', field: '.data.a' }] },
    code: 409,
  }))
})

t.test('several conflicts: grouped by manager, one line per path', async (t) => {
  const created = applyPatch(undefined, {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'ns' },
    spec: { replicas: 1, selector: { matchLabels: { app: 'a' } }, template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'app', image: 'app:1' }] } } },
  }, 'deployer', opts(DEPLOYMENT, { now: T0 })).object
  created.metadata.uid = 'u-2'
  const edited = structuredClone(created)
  edited.spec.replicas = 5
  edited.spec.template.spec.containers[0].image = 'app:2'
  const e = updateManagedFields(created, edited, 'kubectl-edit', 'Update', 'apps/v1', T1, DEPLOYMENT)
  t.same(fields(e, 'kubectl-edit', 'Update'), { 'f:spec': { 'f:replicas': {}, 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { 'f:image': {} } } } } } }, 'ownership moved to the editor')
  t.same(fields(e, 'deployer'), {
    'f:spec': { 'f:selector': {}, 'f:template': { 'f:metadata': { 'f:labels': { 'f:app': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { '.': {}, 'f:name': {} } } } } },
  }, 'and away from the applier')

  const r = applyPatch(e, {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' },
    spec: { replicas: 3, selector: { matchLabels: { app: 'a' } }, template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'app', image: 'app:3' }] } } },
  }, 'deployer', opts(DEPLOYMENT, { now: T2 }))
  t.equal(conflictMessage(r.conflicts).message, 'Apply failed with 2 conflicts: conflicts with "kubectl-edit" using apps/v1:\n- .spec.replicas\n- .spec.template.spec.containers[name="app"].image')
  t.same(conflictMessage(r.conflicts).causes.map((c) => c.field), ['.spec.replicas', '.spec.template.spec.containers[name="app"].image'])

  // force takes the fields over: values overwritten, the editor loses them (and its now empty entry).
  const f = applyPatch(e, {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' },
    spec: { replicas: 3, selector: { matchLabels: { app: 'a' } }, template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'app', image: 'app:3' }] } } },
  }, 'deployer', opts(DEPLOYMENT, { now: T2, force: true }))
  t.same(f.conflicts, [])
  t.equal(f.object.spec.replicas, 3)
  t.equal(f.object.spec.template.spec.containers[0].image, 'app:3')
  t.same(managers(f.object), ['deployer/Apply'])
  t.equal((f.object.metadata.managedFields as Obj[])[0]!.time, T2)
})

t.test('several managers in one conflict message are sorted; subresource phrase', async (t) => {
  const mk = (manager: string, operation: 'Apply' | 'Update', apiVersion: string, path: string[], subresource?: string): Obj => {
    const e: Obj = { manager, operation, apiVersion, fieldsType: 'FieldsV1', fieldsV1: {} }
    let cur: Obj = e.fieldsV1
    for (const p of path) { cur[`f:${p}`] = {}; cur = cur[`f:${p}`] }
    if (subresource) e.subresource = subresource
    return e
  }
  const live = {
    apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', uid: 'u', managedFields: [mk('zeta', 'Apply', 'v1', ['data', 'a']), mk('alpha', 'Update', 'v1', ['data', 'b'], 'status')] },
    data: { a: '1', b: '1' },
  }
  const r = applyPatch(live, cmApply({ a: '2', b: '2' }), 'me', opts())
  t.equal(conflictMessage(r.conflicts).message, 'Apply failed with 2 conflicts: conflicts with "alpha" with subresource "status" using v1:\n- .data.b\nconflicts with "zeta":\n- .data.a')
})

t.test('fields no longer applied are removed unless someone else owns them', async (t) => {
  const a1 = applyPatch(undefined, cmApply({ a: '1', b: '2', c: '3' }), 'tool', opts(CONFIGMAP, { now: T0 }))
  const live = a1.object
  live.metadata.uid = 'u-3'
  const shared = applyPatch(live, cmApply({ c: '3' }), 'other', opts())
  const r = applyPatch(shared.object, cmApply({ a: '1' }), 'tool', opts(CONFIGMAP, { now: T2 }))
  t.same(r.conflicts, [])
  t.same(r.object.data, { a: '1', c: '3' }, 'b removed (only tool owned it), c kept (other owns it)')
  t.same(fields(r.object, 'tool'), { 'f:data': { 'f:a': {} } })
  t.same(fields(r.object, 'other'), { 'f:data': { 'f:c': {} } })

  // Dropping everything: the map itself goes when nobody owns anything in it.
  const gone = applyPatch(a1.object, cmApply(undefined), 'tool', opts(CONFIGMAP, { now: T2 }))
  t.notOk('data' in gone.object, 'data removed')
  t.same(managers(gone.object), [], 'the empty Apply entry is dropped')
  t.notOk('managedFields' in gone.object.metadata)
})

t.test('list-map items: k: keys, item removal, items kept for other owners', async (t) => {
  const p1 = applyPatch(undefined, {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' },
    spec: { containers: [{ name: 'a', image: 'a:1', ports: [{ containerPort: 80 }, { containerPort: 53, protocol: 'UDP' }] }, { name: 'b', image: 'b:1' }] },
  }, 'm1', opts(POD, { now: T0 }))
  t.equal(JSON.stringify(fields(p1.object, 'm1')), JSON.stringify({
    'f:spec': {
      'f:containers': {
        'k:{"name":"a"}': {
          '.': {}, 'f:image': {}, 'f:name': {},
          'f:ports': { 'k:{"containerPort":53,"protocol":"UDP"}': { '.': {}, 'f:containerPort': {}, 'f:protocol': {} }, 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
        },
        'k:{"name":"b"}': { '.': {}, 'f:image': {}, 'f:name': {} },
      },
    },
  }), 'keys sorted by name inside k:, items sorted by key')
  const live = p1.object
  live.metadata.uid = 'u-4'
  // m2 co-owns container b.
  const p2 = applyPatch(live, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'b', image: 'b:1' }] } }, 'm2', opts(POD))
  // m1 drops both b and the UDP port of a.
  const p3 = applyPatch(p2.object, {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'a', image: 'a:1', ports: [{ containerPort: 80 }] }] },
  }, 'm1', opts(POD, { now: T2 }))
  t.same(p3.object.spec.containers, [{ name: 'a', image: 'a:1', ports: [{ containerPort: 80 }] }, { name: 'b', image: 'b:1' }], 'port removed, b kept for m2')
  const p4 = applyPatch(live, {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'a', image: 'a:1', ports: [{ containerPort: 80 }] }] },
  }, 'm1', opts(POD, { now: T2 }))
  t.same(p4.object.spec.containers, [{ name: 'a', image: 'a:1', ports: [{ containerPort: 80 }] }], 'b removed when only m1 owned it')

  // Missing key fields fail as upstream (500).
  try {
    applyPatch(undefined, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' }, spec: { containers: [{ image: 'x' }] } }, 'm1', opts(POD))
    t.fail('expected an error')
  } catch (e) {
    t.ok(e instanceof ApplyError)
    t.equal((e as ApplyError).code, 500)
    t.equal((e as ApplyError).toApiError().message, 'Internal error occurred: failed to create typed patch object (ns/p; /v1, Kind=Pod): .spec.containers: element 0: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)')
  }
  try {
    applyPatch(undefined, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' }, spec: { containers: [{ name: 'a' }, { name: 'a' }] } }, 'm1', opts(POD))
    t.fail('expected an error')
  } catch (e) {
    t.match((e as Error).message, /\.spec\.containers: duplicate entries for key \[name="a"\]$/)
  }
})

t.test('Service ports keyed by port+protocol; sets (v:) and atomic lists', async (t) => {
  const s = applyPatch(undefined, { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { selector: { app: 'x' }, ports: [{ port: 80, targetPort: 8080 }] } }, 'm1', opts(SERVICE))
  t.equal(JSON.stringify(fields(s.object, 'm1')), '{"f:spec":{"f:ports":{"k:{\\"port\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:port":{},"f:targetPort":{}}},"f:selector":{}}}', 'selector is an atomic map')

  const p = applyPatch(undefined, {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', finalizers: ['example.com/finalizer', 'b.io/x'] },
    spec: { tolerations: [{ key: 'k', operator: 'Exists' }], containers: [{ name: 'c', image: 'i', args: ['--x'] }] },
  }, 'm1', opts(POD, { now: T0 }))
  t.equal(JSON.stringify(fields(p.object, 'm1')), JSON.stringify({
    'f:metadata': { 'f:finalizers': { 'v:"b.io/x"': {}, 'v:"example.com/finalizer"': {} } },
    'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:args': {}, 'f:image': {}, 'f:name': {} } }, 'f:tolerations': {} },
  }), 'set items as v:, atomic lists as leaves')
  const live = p.object
  live.metadata.uid = 'u-5'
  // Another applier adds a finalizer: sets merge item by item.
  const p2 = applyPatch(live, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', finalizers: ['c.io/y'] } }, 'm2', opts(POD))
  t.same(p2.object.metadata.finalizers, ['example.com/finalizer', 'b.io/x', 'c.io/y'])
  // Changing an atomic list owned by another manager conflicts on the whole list.
  const p3 = applyPatch(p2.object, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { tolerations: [{ key: 'other', operator: 'Exists' }] } }, 'm2', opts(POD))
  t.same(p3.conflicts.map((c) => c.field), ['.spec.tolerations'])
  // m1 stops applying one finalizer.
  const p4 = applyPatch(p2.object, {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', finalizers: ['b.io/x'] },
    spec: { tolerations: [{ key: 'k', operator: 'Exists' }], containers: [{ name: 'c', image: 'i', args: ['--x'] }] },
  }, 'm1', opts(POD, { now: T2 }))
  t.same(p4.object.metadata.finalizers, ['b.io/x', 'c.io/y'])
  t.equal(pathString(makePath('metadata', 'finalizers', valueElement('a'))), '.metadata.finalizers[="a"]')
  t.equal(pathString(makePath('spec', 'ports', keyElement([['protocol', 'TCP'], ['port', 80]]))), '.spec.ports[port=80,protocol="TCP"]')
  t.equal(pathString(makePath('spec', 'args', indexElement(0))), '.spec.args[0]')
})

t.test('Update: ownership transfer, removal from every set, legacy objects, resets', async (t) => {
  const applied = applyPatch(createdConfigMap({ a: '1', b: '1' }), cmApply({ b: '1' }), 'tool', opts()).object
  const edited = structuredClone(applied)
  edited.data = { a: '2', c: '3' }
  const u = updateManagedFields(applied, edited, 'kubectl-edit', 'Update', 'v1', T2, CONFIGMAP)
  t.same(fields(u, 'kubectl-edit', 'Update'), { 'f:data': { 'f:a': {}, 'f:c': {} } }, 'changed and added fields move to the writer')
  t.same(fields(u, 'kubectl-create', 'Update'), { 'f:data': {} }, 'a and b left the creator, the data node stays its own')
  t.equal(fields(u, 'tool'), undefined, 'b was removed, so the applier owns nothing and its entry goes')

  // An Update that does not mention a field keeps its ownership.
  const again = structuredClone(u)
  again.data.d = '4'
  const u2 = updateManagedFields(u, again, 'kubectl-edit', 'Update', 'v1', '2025-01-01T13:00:00Z', CONFIGMAP)
  t.same(fields(u2, 'kubectl-edit', 'Update'), { 'f:data': { 'f:a': {}, 'f:c': {}, 'f:d': {} } })
  t.equal((u2.metadata.managedFields as Obj[]).find((e) => e.manager === 'kubectl-edit')!.time, '2025-01-01T13:00:00Z')
  const same = updateManagedFields(u2, structuredClone(u2), 'kubectl-edit', 'Update', 'v1', '2025-01-01T14:00:00Z', CONFIGMAP)
  t.equal((same.metadata.managedFields as Obj[]).find((e) => e.manager === 'kubectl-edit')!.time, '2025-01-01T13:00:00Z', 'no change, no new time')

  // Legacy object (no managedFields, has a uid): nothing is tracked.
  const legacy = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', uid: 'u-9' }, data: { a: '1' } }
  const l = updateManagedFields(legacy, { ...legacy, data: { a: '2' } }, 'kubectl-edit', 'Update', 'v1', T1, CONFIGMAP)
  t.notOk('managedFields' in l.metadata)

  // [{}] clears all tracking; so does [] (upstream code).
  const reset = updateManagedFields(u2, { ...u2, metadata: { ...u2.metadata, managedFields: [{}] }, data: { z: '1' } }, 'x', 'Update', 'v1', T2, CONFIGMAP)
  t.notOk('managedFields' in reset.metadata)
  t.same(reset.data, { z: '1' })
  const owned = updateManagedFields(u2, { ...u2, metadata: { ...u2.metadata, managedFields: [{}] }, data: { ...u2.data, z: '1' } }, 'x', 'Update', 'v1', T2, CONFIGMAP, { ownChangesAfterReset: true })
  t.same(owned.metadata.managedFields, [{ manager: 'x', operation: 'Update', apiVersion: 'v1', time: T2, fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:z': {} } } }], 'opt-in: the writer owns what it changed')
  t.notOk('managedFields' in updateManagedFields(u2, { ...u2, metadata: { ...u2.metadata, managedFields: [] } }, 'x', 'Update', 'v1', T2, CONFIGMAP).metadata)
  t.same(updateManagedFields(u2, { ...u2, metadata: { ...u2.metadata, managedFields: [] } }, 'x', 'Update', 'v1', T2, CONFIGMAP, { emptyListResets: false }).metadata.managedFields, u2.metadata.managedFields, 'opt-out: [] keeps them')

  // A valid explicit list replaces the stored entries; an invalid one is ignored.
  const explicit = [{ manager: 'kubectl', operation: 'Apply', apiVersion: 'v1', time: T0, fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } } }]
  t.same(updateManagedFields(u2, { ...u2, metadata: { ...u2.metadata, managedFields: explicit } }, 'x', 'Update', 'v1', T2, CONFIGMAP).metadata.managedFields, explicit)
  const invalid = [{ manager: 'kubectl', operation: 'Bogus', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: {} }]
  t.same(updateManagedFields(u2, { ...u2, metadata: { ...u2.metadata, managedFields: invalid } }, 'x', 'Update', 'v1', T2, CONFIGMAP).metadata.managedFields, u2.metadata.managedFields)

  // Through a subresource the body's managedFields are ignored and the entry names the subresource.
  const st = updateManagedFields(u2, { ...u2, metadata: { ...u2.metadata, managedFields: [{}] }, data: { ...u2.data, s: '1' } }, 'ctl', 'Update', 'v1', T2, CONFIGMAP, { subresource: 'status' })
  t.same((st.metadata.managedFields as Obj[]).find((e) => e.manager === 'ctl'), { manager: 'ctl', operation: 'Update', apiVersion: 'v1', time: T2, fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:s': {} } }, subresource: 'status' })
})

t.test('set operations: subsets, disjoint sets and nothing removed give the same paths as a full merge would', async (t) => {
  const fs = (...ps: string[][]) => FieldSet.of(...ps.map((p) => makePath(...p)))
  const paths = (s: FieldSet) => s.paths().map(pathString)
  const big = fs(['spec', 'a'], ['spec', 'b'], ['status', 'phase'], ['metadata'])
  const small = fs(['spec', 'a'], ['status', 'phase'])
  t.strictSame(paths(big.union(small)), paths(big), 'a subset joined to a set: the set')
  t.strictSame(paths(small.union(big)), paths(big), 'a set joined to its subset: the set')
  t.strictSame(paths(small.union(fs(['spec', 'c']))), ['.spec.a', '.spec.c', '.status.phase'], 'neither holds the other: both')
  t.strictSame(paths(big.union(fs(['spec']))), ['.metadata', '.spec', '.spec.a', '.spec.b', '.status.phase'], 'a member over a parent of others')
  t.strictSame(paths(big.intersection(fs(['spec', 'z'], ['data']))), [], 'disjoint: empty')
  t.ok(big.intersection(fs(['data'])).empty())
  t.strictSame(paths(big.intersection(fs(['spec', 'b'], ['status', 'phase'], ['data']))), ['.spec.b', '.status.phase'])
  t.strictSame(paths(fs(['spec', 'z']).intersection(big)), [], 'either order')
  t.strictSame(paths(big.difference(fs(['data'], ['spec', 'z']))), paths(big), 'nothing to remove')
  t.strictSame(paths(big.difference(fs(['spec', 'a'], ['metadata']))), ['.spec.b', '.status.phase'])
  t.strictSame(paths(big.difference(fs(['spec', 'z'], ['metadata']))), ['.spec.a', '.spec.b', '.status.phase'], 'a subtree the other set reaches into but takes nothing from stays')
  t.strictSame(paths(big.recursiveDifference(fs(['spec', 'z'], ['metadata']))), ['.spec.a', '.spec.b', '.status.phase'])
  t.strictSame(paths(big.difference(fs(['spec']))), paths(big), 'difference: a member does not remove longer paths')
  t.strictSame(paths(big.recursiveDifference(fs(['spec']))), ['.metadata', '.status.phase'], 'recursiveDifference: it does')
  t.strictSame(paths(big.recursiveDifference(fs(['spec', 'a'], ['status', 'phase']))), ['.metadata', '.spec.b'])
  t.strictSame(paths(fs(['spec', 'a']).difference(fs(['spec', 'a'])).union(small)), paths(small), 'an emptied set joins as empty')
})

t.test('difference and recursiveDifference agree with path-by-path removal on random sets', async (t) => {
  // A small seeded generator: the same sets every run.
  let seed = 42
  const rnd = (n: number) => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed % n }
  const names = ['a', 'b', 'c', 'd']
  const randomPaths = (): string[][] => {
    const out: string[][] = []
    for (let i = rnd(9); i > 0; i--) out.push(Array.from({ length: 1 + rnd(3) }, () => names[rnd(names.length)]!))
    return out
  }
  const key = (p: string[]) => p.join('.')
  let cases = 0
  for (let i = 0; i < 3000; i++) {
    const ap = randomPaths()
    const bp = randomPaths()
    // Sets built through operations too, so that some hold emptied children.
    const a = rnd(3) === 0 ? FieldSet.of(...ap.map((p) => makePath(...p))).difference(FieldSet.of(...randomPaths().map((p) => makePath(...p)))) : FieldSet.of(...ap.map((p) => makePath(...p)))
    const b = FieldSet.of(...bp.map((p) => makePath(...p)))
    const aPaths = a.paths().map((p) => p.map((e) => e.name!))
    const inB = new Set(bp.map(key))
    const expectDiff = aPaths.filter((p) => !inB.has(key(p))).map(key).sort()
    const expectRec = aPaths.filter((p) => !p.some((_, j) => inB.has(key(p.slice(0, j + 1))))).map(key).sort()
    const got = (s: FieldSet) => s.paths().map((p) => key(p.map((e) => e.name!))).sort()
    const d = a.difference(b)
    const r = a.recursiveDifference(b)
    if (JSON.stringify(got(d)) !== JSON.stringify(expectDiff) || JSON.stringify(got(r)) !== JSON.stringify(expectRec)) {
      t.fail(`a ${JSON.stringify(aPaths)} b ${JSON.stringify(bp)}: difference ${JSON.stringify(got(d))} (want ${JSON.stringify(expectDiff)}), recursive ${JSON.stringify(got(r))} (want ${JSON.stringify(expectRec)})`)
      return
    }
    // Nothing removed: the set itself.
    if (expectDiff.length === aPaths.length && d !== a) { t.fail(`difference removed nothing but made a new set: ${JSON.stringify(aPaths)} - ${JSON.stringify(bp)}`); return }
    cases++
  }
  t.equal(cases, 3000)
  // The in-place sort of short arrays is stable and sorts like Array.prototype.sort.
  for (let i = 0; i < 500; i++) {
    const xs = Array.from({ length: rnd(20) }, (_, j) => ({ k: rnd(5), j }))
    const want = [...xs].sort((x, y) => x.k - y.k)
    t.strictSame(sortInPlace(xs, (x, y) => x.k - y.k), want)
  }
})

t.test('a status writer repeating the same fields keeps its entry as it was, but for the time', async (t) => {
  const created = updateManagedFields(undefined, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns', uid: 'u-1', creationTimestamp: T0 }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] } }, 'creator', 'Update', 'v1', T0, POD)
  const status = (n: number) => ({ phase: 'Running', conditions: [{ type: 'Ready', status: n % 2 ? 'True' : 'False', reason: `r${n}`, lastTransitionTime: T0 }] })
  let cur = structuredClone(created)
  const entries: Obj[] = []
  for (let n = 0; n < 3; n++) {
    const next = structuredClone(cur)
    next.status = status(n)
    cur = structuredClone(updateManagedFields(cur, next, 'kubelet', 'Update', 'v1', `2025-01-01T1${n}:00:00Z`, POD, { subresource: 'status', ignoredFields: FieldSet.of(makePath('spec')) }))
    entries.push((cur.metadata.managedFields as Obj[]).find((e) => e.manager === 'kubelet')!)
  }
  t.same(entries[0].fieldsV1, { 'f:status': { 'f:conditions': { '.': {}, 'k:{"type":"Ready"}': { '.': {}, 'f:lastTransitionTime': {}, 'f:reason': {}, 'f:status': {}, 'f:type': {} } }, 'f:phase': {} } })
  t.same(entries[2].fieldsV1, entries[0].fieldsV1, 'the same fields, the same set')
  t.strictSame(entries.map((e) => e.time), ['2025-01-01T10:00:00Z', '2025-01-01T11:00:00Z', '2025-01-01T12:00:00Z'], 'each write that changed a field stamps its time')
  t.same(fields(cur, 'creator', 'Update'), fields(created, 'creator', 'Update'), "the creator's entry is untouched")
})

t.test('first apply on an untracked object: before-first-apply', async (t) => {
  const legacy = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'ns', uid: 'u', labels: { app: 'x' } }, data: { a: '1' } }
  const c = applyPatch(legacy, cmApply({ a: '2' }), 'tool', opts())
  t.equal(conflictMessage(c.conflicts).message, 'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.a')
  const r = applyPatch(legacy, cmApply({ b: '2' }), 'tool', opts())
  t.same(r.object.metadata.managedFields, [
    { manager: 'tool', operation: 'Apply', apiVersion: 'v1', time: T1, fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:b': {} } } },
    { manager: 'before-first-apply', operation: 'Update', apiVersion: 'v1', time: T1, fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { '.': {}, 'f:a': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } } },
  ])
})

t.test('apply errors the caller maps to a Status', async (t) => {
  try {
    applyPatch(undefined, { ...cmApply({ a: '1' }), metadata: { name: 'cm', managedFields: [] } }, 'tool', opts())
    t.fail('expected an error')
  } catch (e) {
    t.same((e as ApplyError).toApiError().toStatus(), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'metadata.managedFields must be nil', reason: 'BadRequest', code: 400 })
  }
  t.doesNotThrow(() => applyPatch(undefined, { ...cmApply({ a: '1' }), metadata: { name: 'cm', managedFields: null } }, 'tool', opts()), 'null is nil')
  try {
    applyPatch(undefined, { ...nginx, apiVersion: 'apps/v1beta1' }, 'tool', opts(DEPLOYMENT))
    t.fail('expected an error')
  } catch (e) {
    t.equal((e as ApplyError).message, 'Incorrect version specified in apply patch. Specified patch version: apps/v1beta1, expected: apps/v1')
    t.equal((e as ApplyError).code, 400)
  }
})

t.test('kubectl: conflicts with client-side-apply fields are taken over, the annotation is rewritten', async (t) => {
  const lastApplied = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'ns' }, data: { a: '1' } })
  const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'ns', uid: 'u', annotations: { [LAST_APPLIED_ANNOTATION]: lastApplied } }, data: { a: '1', b: '1' } }
  const csa = updateManagedFields(undefined, obj, 'kubectl-client-side-apply', 'Update', 'v1', T0, CONFIGMAP)
  const edited = updateManagedFields(csa, { ...csa, data: { a: '1', b: '2' } }, 'kubectl-edit', 'Update', 'v1', T0, CONFIGMAP)
  const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'ns' }, data: { a: '5' } }
  const other = applyPatch(edited, body, 'someone', opts())
  t.same(other.conflicts.map((c) => c.field), ['.data.a'], 'any other manager conflicts')
  const k = applyPatch(edited, body, 'kubectl', opts())
  t.same(k.conflicts, [])
  t.equal(k.object.data.a, '5')
  t.equal(k.object.metadata.annotations[LAST_APPLIED_ANNOTATION], '{"apiVersion":"v1","data":{"a":"5"},"kind":"ConfigMap","metadata":{"name":"cm","namespace":"ns"}}\n')
  const changedB = { ...body, data: { a: '5', b: '3' } }
  const k2 = applyPatch(edited, changedB, 'kubectl', opts())
  t.same(k2.conflicts.map((c) => [c.managerName, c.field]), [['kubectl-edit', '.data.b']], 'b was changed after the client-side apply: still a conflict')
})

t.test('at most 10 Update entries: the oldest merge into ancient-changes', async (t) => {
  let cur = createdConfigMap({ k0: 'v' })
  for (let i = 1; i <= 10; i++) {
    const next = structuredClone(cur)
    next.data[`k${i}`] = 'v'
    cur = updateManagedFields(cur, next, `writer-${String(i).padStart(2, '0')}`, 'Update', 'v1', `2025-01-01T10:${String(i).padStart(2, '0')}:00Z`, CONFIGMAP)
  }
  const entries = cur.metadata.managedFields as Obj[]
  t.equal(entries.length, 10)
  t.equal(entries[0]!.manager, 'ancient-changes')
  t.same(entries[0]!.fieldsV1, { 'f:data': { '.': {}, 'f:k0': {}, 'f:k1': {} } })
  t.equal(entries[0]!.time, '2025-01-01T10:01:00Z')
})

t.test('FieldsV1 codec: ordering, ".", i: accepted, unknown prefixes dropped', async (t) => {
  const s = FieldSet.fromFieldsV1({
    'v:2': {}, 'i:3': {}, 'f:b': { '.': {}, 'f:x': {} }, 'k:{"b":1,"a":"x"}': { '.': {}, 'f:a': {} }, 'f:a': {}, 'v:"s"': {}, 'z:junk': {}, 'v:1': {},
  })
  t.equal(JSON.stringify(s.toFieldsV1()), '{"f:a":{},"f:b":{".":{},"f:x":{}},"k:{\\"a\\":\\"x\\",\\"b\\":1}":{".":{},"f:a":{}},"v:1":{},"v:2":{},"v:\\"s\\"":{},"i:3":{}}')
  t.ok(s.has(makePath('b')), '"." makes the node a member')
  t.ok(s.has(makePath('b', 'x')))
  t.notOk(s.has(makePath('z')))
  t.equal(s.size(), 9)
  const hostile = FieldSet.fromFieldsV1({ 'k:{"name":"a<b>&"}': {} })
  t.equal(Object.keys(hostile.toFieldsV1())[0], 'k:{"name":"a\\u003cb\\u003e\\u0026"}', 'Go escapes HTML characters in keys')
  t.throws(() => decodeManagedFields([{ manager: 'm', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'k:{bad': {} } }]))
  t.throws(() => decodeManagedFields([{ manager: 'm', operation: 'Apply', apiVersion: 'v1' }]), /missing fieldsType in managed fields entry 0/)
  t.throws(() => decodeManagedFields([{ manager: 'm', operation: 'Patch', apiVersion: 'v1', fieldsType: 'FieldsV1' }]), /operation must be `Apply` or `Update`/)
  const m = decodeManagedFields([
    { manager: 'b', operation: 'Update', apiVersion: 'v1', time: '2025-01-01T10:00:00.123Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:a': {} } },
    { manager: 'a', operation: 'Update', apiVersion: 'v1', time: T0, fieldsType: 'FieldsV1', fieldsV1: { 'f:b': {} } },
    { manager: 'z', operation: 'Apply', apiVersion: 'v1', time: T2, fieldsType: 'FieldsV1', fieldsV1: { 'f:c': {} } },
  ])
  t.same(encodeManagedFields(m)!.map((e) => `${e.manager}@${e.time}`), [`z@${T2}`, `a@${T0}`, `b@${T0}`], 'Apply first, then time, then manager; whole seconds')
  t.equal(pathString(toFieldSet({ spec: { replicas: 1 } }, DEPLOYMENT).paths()[0]!), '.spec.replicas')
  t.equal(parseElement('f:app.kubernetes.io/name')!.name, 'app.kubernetes.io/name')
})

t.test('manager names from the User-Agent', async (t) => {
  t.equal(managerFromUserAgent('kubectl/v1.32.4 (linux/amd64) kubernetes/abc'), 'kubectl')
  t.equal(managerFromUserAgent('kube-controller-manager/v1.32.0 (linux/amd64) kubernetes/x/system:serviceaccount:kube-system:deployment-controller'), 'kube-controller-manager')
  t.equal(managerFromUserAgent('curl'), 'curl')
  t.equal(managerFromUserAgent('my\ttool\u0001 x/1'), 'mytool x', 'non-printables dropped, spaces kept')
  t.equal(managerFromUserAgent('x'.repeat(200)), 'x'.repeat(128))
  t.equal(managerFromUserAgent('é'.repeat(100)), 'é'.repeat(64), 'cut at 128 bytes')
  t.equal(managerFromUserAgent(''), '')
})
