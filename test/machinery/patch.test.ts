// The patch libraries without a server: strategic merge patch on pods and deployments (expected results written
// out, upstream ordering rules included), the schema walker's list / map semantics, JSON patch and merge patch with
// their Status mapping.
import t from 'tap'
import { loadDefinitions } from '../../src/registry/schema.js'
import { typeTree, typeFromSchema, typeAt } from '../../src/machinery/patch/schema-walk.js'
import { apply as smp } from '../../src/machinery/patch/strategic-merge.js'
import { apply as jsonPatch, PatchError, GENERIC_INVALID_MESSAGE } from '../../src/machinery/patch/json-patch.js'
import { apply as mergePatch } from '../../src/machinery/patch/merge-patch.js'

type Obj = Record<string, any>

const defs = loadDefinitions()
const POD = typeTree(defs, 'io.orch.api.core.v1.Pod')
const DEPLOYMENT = typeTree(defs, 'io.orch.api.apps.v1.Deployment')

function pod(): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default', labels: { app: 'web', tier: 'fe' }, annotations: { note: 'x' }, finalizers: ['a.io/one', 'a.io/two'] },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'app:1',
          ports: [{ containerPort: 80, protocol: 'TCP' }, { containerPort: 9090, protocol: 'TCP', name: 'metrics' }],
          env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }],
        },
        { name: 'side', image: 'side:1' },
      ],
      volumes: [{ name: 'data', emptyDir: {} }, { name: 'conf', configMap: { name: 'conf' } }],
      tolerations: [{ key: 'k1', operator: 'Exists' }, { key: 'k2', operator: 'Exists' }],
      nodeSelector: { disk: 'ssd' },
    },
  }
}

/** The pod with a change applied to a copy. */
function podWith(change: (p: Obj) => void): Obj {
  const p = pod()
  change(p)
  return p
}

function catchPatchError(fn: () => unknown): PatchError {
  try { fn() } catch (e) { if (e instanceof PatchError) return e; throw e }
  throw new Error('expected a PatchError')
}

t.test('schema walker: list, map and patch semantics from the schema data', async (t) => {
  const spec = POD.child('spec')
  const containers = spec.child('containers')
  t.equal(containers.kind, 'list')
  t.equal(containers.listType, 'map')
  t.same(containers.listMapKeys, ['name'])
  t.same(containers.patchStrategies, ['merge'])
  t.equal(containers.patchMergeKey, 'name')
  const ports = containers.item.child('ports')
  t.same(ports.listMapKeys, ['containerPort', 'protocol'], 'SSA keys of container ports')
  t.equal(ports.patchMergeKey, 'containerPort', 'SMP key of container ports')
  t.equal(ports.item.keyDefault('protocol'), 'TCP', 'protocol defaults to TCP for keys')
  t.same(spec.child('volumes').patchStrategies, ['merge', 'retainKeys'])
  t.equal(spec.child('tolerations').listType, 'atomic')
  t.same(spec.child('tolerations').patchStrategies, [])
  t.equal(spec.child('nodeSelector').kind, 'map')
  t.equal(spec.child('nodeSelector').mapType, 'atomic')
  const finalizers = typeAt(POD, ['metadata', 'finalizers'])
  t.equal(finalizers.listType, 'set')
  t.same(finalizers.patchStrategies, ['merge'])
  t.equal(typeAt(POD, ['metadata', 'labels']).kind, 'map')
  t.equal(typeAt(POD, ['metadata', 'labels']).mapType, 'granular')
  t.equal(typeAt(POD, ['metadata', 'labels', 'anything']).kind, 'scalar')
  t.equal(typeAt(POD, ['metadata', 'ownerReferences', 0]).mapType, 'atomic', 'owner references are atomic structs')
  t.equal(typeAt(POD, ['spec', 'containers', 0, 'resources', 'limits', 'cpu']).kind, 'scalar', 'Quantity is a scalar')
  t.equal(typeAt(POD, ['spec', 'containers', 0, 'livenessProbe', 'httpGet', 'port']).kind, 'scalar', 'IntOrString is a scalar')
  t.equal(typeAt(POD, ['metadata', 'creationTimestamp']).kind, 'scalar', 'Time is a scalar')
  t.equal(typeAt(POD, ['status', 'hostIPs']).listType, 'atomic', 'hostIPs: SSA atomic')
  t.equal(typeAt(POD, ['status', 'hostIPs']).patchMergeKey, 'ip', 'hostIPs: SMP merge by ip')
  t.equal(typeAt(POD, ['status', 'podIPs']).listType, 'map')

  const job = typeTree(defs, 'io.orch.api.batch.v1.Job')
  t.equal(typeAt(job, ['status', 'conditions']).listType, 'atomic', 'Job conditions: SSA atomic')
  t.same(typeAt(job, ['status', 'conditions']).patchStrategies, ['merge'], 'Job conditions: SMP merge')
  t.equal(typeAt(job, ['spec', 'selector']).mapType, 'atomic', 'LabelSelector is an atomic struct')

  t.same(typeAt(DEPLOYMENT, ['spec', 'strategy']).patchStrategies, ['retainKeys'], 'a $ref property keeps its own strategy')
  t.equal(typeAt(DEPLOYMENT, ['spec', 'strategy', 'rollingUpdate', 'maxSurge']).kind, 'scalar')
  const pdb = typeTree(defs, 'io.orch.api.policy.v1.PodDisruptionBudget')
  t.same(typeAt(pdb, ['spec', 'selector']).patchStrategies, ['replace'])
  const cr = typeTree(defs, 'io.orch.api.apps.v1.ControllerRevision')
  t.equal(cr.child('data').kind, 'map', 'RawExtension holds arbitrary JSON')
  t.equal(cr.child('data').child('x').kind, 'untyped')
  const crd = typeTree(defs, 'io.orch.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition')
  const props = typeAt(crd, ['spec', 'versions', 0, 'schema', 'openAPIV3Schema', 'properties', 'spec', 'properties'])
  t.equal(props.kind, 'map', 'recursive JSONSchemaProps resolve lazily')
  t.same(typeAt(crd, ['spec', 'versions', 0, 'schema', 'openAPIV3Schema', 'x-orch-validations']).listMapKeys, ['rule'])
  t.equal(typeTree(defs, 'io.orch.api.core.v1.Pod'), POD, 'the tree is cached per kind')

  // Inline schemas (custom resources): markers apply, merge strategy without list type reads as a list-map.
  const custom = typeFromSchema({
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        'x-orch-preserve-unknown-fields': true,
        properties: {
          items: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' } } }, 'x-orch-patch-strategy': 'merge', 'x-orch-patch-merge-key': 'id' },
          tags: { type: 'array', items: { type: 'string' }, 'x-orch-patch-strategy': 'merge' },
          plain: { type: 'array', items: { type: 'string' } },
          port: { 'x-orch-int-or-string': true },
        },
      },
    },
  })
  t.equal(typeAt(custom, ['spec', 'items']).listType, 'map')
  t.same(typeAt(custom, ['spec', 'items']).listMapKeys, ['id'])
  t.equal(typeAt(custom, ['spec', 'tags']).listType, 'set')
  t.equal(typeAt(custom, ['spec', 'plain']).listType, 'atomic')
  t.equal(typeAt(custom, ['spec', 'port']).kind, 'scalar')
  t.equal(typeAt(custom, ['spec', 'unknown']).kind, 'untyped', 'preserve-unknown-fields')
})

interface SmpCase { name: string; patch: Obj; want: Obj; schema?: 'pod' | 'deployment' }

const cases: SmpCase[] = [
  {
    name: 'containers: merge by name, other items and fields kept',
    patch: { spec: { containers: [{ name: 'side', image: 'side:2' }] } },
    want: podWith((p) => { p.spec.containers[1].image = 'side:2' }),
  },
  {
    name: 'containers: a new item goes before the server-only items (no $setElementOrder)',
    patch: { spec: { containers: [{ name: 'new', image: 'new:1' }] } },
    want: podWith((p) => { p.spec.containers.unshift({ name: 'new', image: 'new:1' }) }),
  },
  {
    name: 'containers: add with $setElementOrder places it as listed',
    patch: { spec: { '$setElementOrder/containers': [{ name: 'app' }, { name: 'new' }, { name: 'side' }], containers: [{ name: 'new', image: 'new:1' }] } },
    want: podWith((p) => { p.spec.containers.splice(1, 0, { name: 'new', image: 'new:1' }) }),
  },
  {
    name: 'containers: an item carrying $patch replace is a directive: the list becomes the other items',
    patch: { spec: { containers: [{ name: 'x', image: 'x:1' }, { name: 'app', image: 'app:9', $patch: 'replace' }] } },
    want: podWith((p) => { p.spec.containers = [{ name: 'x', image: 'x:1' }] }),
  },
  {
    name: 'containers: replace one container\'s fields (merge into the item, nested $patch replace on a field)',
    patch: { spec: { containers: [{ name: 'app', image: 'app:9', env: [{ name: 'Z', value: '0' }, { $patch: 'replace' }], ports: null }] } },
    want: podWith((p) => { p.spec.containers[0] = { name: 'app', image: 'app:9', env: [{ name: 'Z', value: '0' }] } }),
  },
  {
    name: 'containers: $patch delete removes the item',
    patch: { spec: { containers: [{ name: 'side', $patch: 'delete' }] } },
    want: podWith((p) => { p.spec.containers.splice(1, 1) }),
  },
  {
    name: 'containers: $setElementOrder alone reorders',
    patch: { spec: { '$setElementOrder/containers': [{ name: 'side' }, { name: 'app' }] } },
    want: podWith((p) => { p.spec.containers.reverse() }),
  },
  {
    name: 'containers: $patch replace as a list item replaces the whole list',
    patch: { spec: { containers: [{ name: 'only', image: 'o:1' }, { $patch: 'replace' }] } },
    want: podWith((p) => { p.spec.containers = [{ name: 'only', image: 'o:1' }] }),
  },
  {
    name: 'ports: merged by containerPort (protocol kept), new port first',
    patch: { spec: { containers: [{ name: 'app', ports: [{ containerPort: 80, name: 'http' }, { containerPort: 443 }] }] } },
    want: podWith((p) => {
      p.spec.containers[0].ports = [{ containerPort: 80, protocol: 'TCP', name: 'http' }, { containerPort: 443 }, { containerPort: 9090, protocol: 'TCP', name: 'metrics' }]
    }),
  },
  {
    name: 'ports: $patch delete by containerPort',
    patch: { spec: { containers: [{ name: 'app', ports: [{ containerPort: 9090, $patch: 'delete' }] }] } },
    want: podWith((p) => { p.spec.containers[0].ports.splice(1, 1) }),
  },
  {
    name: 'env: merged by name, null deletes a field of the item',
    patch: { spec: { containers: [{ name: 'app', env: [{ name: 'B', value: null, valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }] }] } },
    want: podWith((p) => { p.spec.containers[0].env[1] = { name: 'B', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } } }),
  },
  {
    name: 'env: $patch replace replaces the list',
    patch: { spec: { containers: [{ name: 'app', env: [{ name: 'C', value: '3' }, { $patch: 'replace' }] }] } },
    want: podWith((p) => { p.spec.containers[0].env = [{ name: 'C', value: '3' }] }),
  },
  {
    name: 'env: kubectl three-way patch (setElementOrder + delete)',
    patch: { spec: { '$setElementOrder/containers': [{ name: 'app' }, { name: 'side' }], containers: [{ name: 'app', image: 'app:2', '$setElementOrder/env': [{ name: 'A' }], env: [{ name: 'B', $patch: 'delete' }] }] } },
    want: podWith((p) => { p.spec.containers[0].image = 'app:2'; p.spec.containers[0].env = [{ name: 'A', value: '1' }] }),
  },
  {
    name: 'volumes: merged by name; a new volume after a patched one keeps the patch order',
    patch: { spec: { volumes: [{ name: 'conf', configMap: { name: 'conf2' } }, { name: 'tmp', emptyDir: { medium: 'Memory' } }] } },
    want: podWith((p) => { p.spec.volumes = [{ name: 'data', emptyDir: {} }, { name: 'conf', configMap: { name: 'conf2' } }, { name: 'tmp', emptyDir: { medium: 'Memory' } }] }),
  },
  {
    name: 'volumes: $retainKeys switches the volume source',
    patch: { spec: { volumes: [{ name: 'data', $retainKeys: ['name', 'secret'], secret: { secretName: 's' } }] } },
    want: podWith((p) => { p.spec.volumes[0] = { name: 'data', secret: { secretName: 's' } } }),
  },
  {
    name: 'tolerations: no merge strategy, the list is replaced',
    patch: { spec: { tolerations: [{ key: 'k3', operator: 'Exists' }] } },
    want: podWith((p) => { p.spec.tolerations = [{ key: 'k3', operator: 'Exists' }] }),
  },
  {
    name: 'nodeSelector: maps merge key by key in SMP',
    patch: { spec: { nodeSelector: { zone: 'a' } } },
    want: podWith((p) => { p.spec.nodeSelector = { disk: 'ssd', zone: 'a' } }),
  },
  {
    name: 'finalizers: $deleteFromPrimitiveList',
    patch: { metadata: { '$deleteFromPrimitiveList/finalizers': ['a.io/one'] } },
    want: podWith((p) => { p.metadata.finalizers = ['a.io/two'] }),
  },
  {
    name: 'finalizers: union without duplicates, new values first',
    patch: { metadata: { finalizers: ['a.io/two', 'a.io/three'] } },
    want: podWith((p) => { p.metadata.finalizers = ['a.io/one', 'a.io/two', 'a.io/three'] }),
  },
  {
    name: 'finalizers: a new value alone goes first',
    patch: { metadata: { finalizers: ['a.io/zero'] } },
    want: podWith((p) => { p.metadata.finalizers = ['a.io/zero', 'a.io/one', 'a.io/two'] }),
  },
  {
    name: 'finalizers: $setElementOrder on a primitive list',
    patch: { metadata: { '$setElementOrder/finalizers': ['a.io/two', 'a.io/new', 'a.io/one'], finalizers: ['a.io/new'] } },
    want: podWith((p) => { p.metadata.finalizers = ['a.io/two', 'a.io/new', 'a.io/one'] }),
  },
  {
    name: 'finalizers: $deleteFromPrimitiveList of a missing list adds nothing',
    patch: { spec: { '$deleteFromPrimitiveList/imagePullSecretsNames': ['x'] } },
    want: pod(),
  },
  {
    name: 'labels and annotations: null deletes, other keys merge',
    patch: { metadata: { labels: { tier: null, env: 'prod' }, annotations: { note: null } } },
    want: podWith((p) => { p.metadata.labels = { app: 'web', env: 'prod' }; p.metadata.annotations = {} }),
  },
  {
    name: 'a new map: nulls inside are discarded',
    patch: { spec: { securityContext: { runAsUser: 1000, runAsGroup: null } } },
    want: podWith((p) => { p.spec.securityContext = { runAsUser: 1000 } }),
  },
  {
    name: '$patch delete inside an object empties it; $patch on an absent key adds nothing',
    patch: { metadata: { labels: { $patch: 'delete' } }, spec: { affinity: { $patch: 'replace', nodeAffinity: {} } } },
    want: podWith((p) => { p.metadata.labels = {} }),
  },
  {
    name: '$patch replace inside an object replaces it',
    patch: { metadata: { annotations: { $patch: 'replace', other: 'y' } } },
    want: podWith((p) => { p.metadata.annotations = { other: 'y' } }),
  },
  {
    name: 'a value of another type replaces the original',
    patch: { spec: { nodeSelector: null, hostname: 'h' }, metadata: { annotations: 'oops' } },
    want: podWith((p) => { delete p.spec.nodeSelector; p.spec.hostname = 'h'; p.metadata.annotations = 'oops' }),
  },
  {
    name: 'deployment strategy: $retainKeys drops rollingUpdate when switching to Recreate',
    schema: 'deployment',
    patch: { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate', rollingUpdate: null } } },
    want: { spec: { replicas: 1, strategy: { type: 'Recreate' } } },
  },
]

t.test('strategic merge patch on pods', async (t) => {
  for (const c of cases) {
    const original = c.schema === 'deployment' ? { spec: { replicas: 1, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } } } } : pod()
    const before = JSON.stringify(original)
    const got = smp(original, c.patch, c.schema === 'deployment' ? DEPLOYMENT : POD)
    t.same(got, c.want, c.name)
    t.equal(JSON.stringify(original), before, `${c.name}: original untouched`)
  }
})

t.test('strategic merge patch errors', async (t) => {
  const e1 = catchPatchError(() => smp(pod(), { spec: { containers: [{ image: 'x' }] } }, POD))
  // upstream answers these with a 500 InternalError; here they are the client's 400, with upstream's text
  t.equal(e1.kind, 'BadRequest')
  t.equal(e1.detail, 'map: map[image:x] does not contain declared merge key: name')
  t.equal(e1.toApiError().code, 400)
  t.equal(e1.toApiError().message, 'map: map[image:x] does not contain declared merge key: name')

  const e2 = catchPatchError(() => smp(pod(), { spec: { containers: [{ name: 'app', $patch: 'merge' }] } }, POD))
  t.equal(e2.detail, 'merging lists cannot yet be specified in the patch')

  const e3 = catchPatchError(() => smp(pod(), { metadata: { labels: { $patch: 'merge', a: '1' } } }, POD))
  t.equal(e3.detail, 'unknown patch type: merge in map: map[$patch:merge a:1]')

  const e4 = catchPatchError(() => smp(pod(), { spec: { volumes: [{ name: 'data', $retainKeys: ['name'], secret: { secretName: 's' } }] } }, POD))
  t.equal(e4.kind, 'BadRequest')
  t.same(e4.toApiError().toStatus(), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'invalid patch format of retainKeys', reason: 'BadRequest', code: 400 })

  const e5 = catchPatchError(() => smp(pod(), { spec: { '$setElementOrder/containers': [{ name: 'app' }], containers: [{ name: 'new' }] } }, POD))
  t.equal(e5.kind, 'BadRequest')
  t.equal(e5.detail, 'invalid patch format of setElementOrder list')

  const e6 = catchPatchError(() => smp(pod(), { metadata: { '$deleteFromPrimitiveListfinalizers': ['a.io/one'] } }, POD))
  t.equal(e6.detail, 'invalid patch format of primitive list')

  const lol = typeFromSchema({ type: 'object', properties: { m: { type: 'array', items: { type: 'array', items: { type: 'string' } }, 'x-orch-patch-strategy': 'merge' } } })
  const e7 = catchPatchError(() => smp({ m: [['a']] }, { m: [['b']] }, lol))
  t.equal(e7.kind, 'Invalid')
  t.equal(e7.detail, 'lists of lists are not supported')
  t.same(e7.toApiError().toStatus(), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: GENERIC_INVALID_MESSAGE, reason: 'Invalid', details: { causes: [{ reason: 'UnexpectedServerResponse', message: 'lists of lists are not supported' }] }, code: 422 })

  const e8 = catchPatchError(() => smp(pod(), ['not', 'an', 'object'], POD))
  t.equal(e8.kind, 'BadRequest')
})

t.test('JSON patch', async (t) => {
  const doc = { metadata: { name: 'a', resourceVersion: '5', labels: { x: '1' } }, spec: { list: [1, 2, 3] } }
  const got = jsonPatch(doc, [
    { op: 'test', path: '/metadata/resourceVersion', value: '5' },
    { op: 'replace', path: '/spec/list/0', value: 9 },
    { op: 'add', path: '/spec/list/-', value: 4 },
    { op: 'remove', path: '/metadata/labels/x' },
    { op: 'copy', from: '/metadata/name', path: '/metadata/generateName' },
    { op: 'move', from: '/spec/list', path: '/spec/items' },
  ])
  t.same(got, { metadata: { name: 'a', resourceVersion: '5', labels: {}, generateName: 'a' }, spec: { items: [9, 2, 3, 4] } })
  t.same(doc.spec.list, [1, 2, 3], 'original untouched')

  const failedTest = catchPatchError(() => jsonPatch(doc, [{ op: 'replace', path: '/metadata/name', value: 'b' }, { op: 'test', path: '/metadata/resourceVersion', value: '4' }]))
  t.equal(failedTest.kind, 'Invalid', 'a failed test is 422')
  t.same(failedTest.toApiError().toStatus(), {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: 'the server rejected our request due to an error in our request', reason: 'Invalid',
    details: { causes: [{ reason: 'UnexpectedServerResponse', message: 'testing value /metadata/resourceVersion failed: test failed' }] }, code: 422,
  })
  t.equal(doc.metadata.name, 'a')

  t.equal(catchPatchError(() => jsonPatch(doc, [{ op: 'remove', path: '/nope' }])).kind, 'Invalid', 'missing path is 422')
  t.equal(catchPatchError(() => jsonPatch(doc, [{ op: 'frob', path: '/a' }])).kind, 'Invalid', 'unknown op is 422')
  const notArray = catchPatchError(() => jsonPatch(doc, { op: 'add' }))
  t.equal(notArray.kind, 'BadRequest', 'a document that is not a list is 400')
  t.equal(notArray.toApiError().message, 'json: cannot unmarshal object into Go value of type jsonpatch.Patch')
  t.equal(catchPatchError(() => jsonPatch(doc, ['x'])).kind, 'BadRequest')
  const tooMany = catchPatchError(() => jsonPatch(doc, Array.from({ length: 10001 }, () => ({ op: 'test', path: '/metadata/name', value: 'a' }))))
  t.same(tooMany.toApiError().toStatus(), {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: 'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001', reason: 'RequestEntityTooLarge', code: 413,
  })
})

t.test('merge patch', async (t) => {
  const doc = { metadata: { name: 'a', labels: { x: '1', y: '2' } }, spec: { containers: [{ name: 'a', image: 'a' }, { name: 'b', image: 'b' }] } }
  const got = mergePatch(doc, { metadata: { labels: { x: null, z: '3' }, annotations: { a: 'b', gone: null } }, spec: { containers: [{ name: 'c', image: null }] } })
  t.same(got, { metadata: { name: 'a', labels: { y: '2', z: '3' }, annotations: { a: 'b' } }, spec: { containers: [{ name: 'c' }] } }, 'null deletes, lists are replaced')
  t.same(doc.metadata.labels, { x: '1', y: '2' }, 'original untouched')
  t.same(mergePatch(doc, { metadata: null }), { spec: doc.spec })
  const nul = catchPatchError(() => mergePatch(doc, null))
  t.same(nul.toApiError().toStatus(), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Invalid JSON Patch', reason: 'BadRequest', code: 400 })
  const arr = catchPatchError(() => mergePatch(doc, [1]))
  t.equal(arr.toApiError().code, 422)
  t.equal(arr.toApiError().message, ' "" is invalid: patch: Invalid value: "[1]": json: cannot unmarshal array into Go value of type map[string]interface {}')
})

// The update path hands a patch the stored object itself (guaranteedUpdate's leavesOldAlone): every patch form must
// leave it as it is. A frozen object makes any write to it throw.
t.test('no patch form changes the object it is applied to', async (t) => {
  const freeze = (v: unknown): unknown => {
    if (v !== null && typeof v === 'object') { for (const x of Object.values(v)) freeze(x); Object.freeze(v) }
    return v
  }
  const frozen = () => freeze(pod()) as Obj
  const before = JSON.stringify(pod())
  const s = smp(frozen(), {
    metadata: { labels: { tier: null, added: 'y' }, finalizers: ['a.io/three'] },
    spec: { containers: [{ name: 'app', image: 'app:2', env: [{ name: 'B', $patch: 'delete' }, { name: 'C', value: '3' }] }, { name: 'side', $patch: 'delete' }] },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  }, POD) as Obj
  t.equal(s.spec.containers[0].image, 'app:2')
  const m = mergePatch(frozen(), { metadata: { labels: { tier: null } }, spec: { containers: [{ name: 'app', image: 'app:3' }] } }) as Obj
  t.equal(m.spec.containers[0].image, 'app:3')
  const j = jsonPatch(frozen(), [{ op: 'replace', path: '/spec/containers/0/image', value: 'app:4' }, { op: 'remove', path: '/metadata/labels/tier' }, { op: 'add', path: '/metadata/finalizers/-', value: 'a.io/x' }]) as Obj
  t.equal(j.spec.containers[0].image, 'app:4')
  t.equal(JSON.stringify(pod()), before)
})
