import t from 'tap'
import { admitNodeRestriction, forbiddenNodeLabels, type NodeRestrictionAttributes } from '../../src/admission/node-restriction.js'

const NODES = ['system:nodes', 'system:authenticated']
const pods: Record<string, any> = {
  'ns/mine': { metadata: { name: 'mine', namespace: 'ns', uid: 'pod-uid' }, spec: { nodeName: 'n1' } },
  'ns/theirs': { metadata: { name: 'theirs', namespace: 'ns', uid: 'their-uid' }, spec: { nodeName: 'n2' } },
}
const nodes: Record<string, any> = { n1: { metadata: { name: 'n1', uid: 'node-uid' } } }
const lookups = { getPod: (ns: string, n: string) => pods[`${ns}/${n}`], getNode: (n: string) => nodes[n] }

function req(p: Partial<NodeRestrictionAttributes>): NodeRestrictionAttributes {
  return { user: 'system:node:n1', groups: NODES, operation: 'CREATE', group: '', resource: 'pods', subresource: '', namespace: 'ns', name: '', ...p }
}

function mirror(extra: Record<string, any> = {}, spec: Record<string, any> = {}): Record<string, any> {
  return {
    kind: 'Pod', apiVersion: 'v1',
    metadata: { name: 'static-n1', namespace: 'ns', annotations: { 'orch.io/config.mirror': 'hash' }, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'node-uid', controller: true }], ...extra },
    spec: { nodeName: 'n1', containers: [{ name: 'c' }], ...spec },
  }
}

const admit = (p: Partial<NodeRestrictionAttributes>) => admitNodeRestriction(req(p), lookups)

t.test('non-nodes are untouched', async (t) => {
  t.equal(admit({ user: 'alice', groups: ['system:authenticated'], object: { metadata: {} } }), undefined)
  t.equal(admit({ groups: ['system:authenticated'], object: { metadata: {} } }), undefined, 'node name without the group')
  const e = admit({ user: 'system:node:', object: mirror() })
  t.equal(e?.message, 'pods "static-n1" is forbidden: could not determine node from user "system:node:"')
})

t.test('pods', async (t) => {
  t.equal(admit({ object: mirror() }), undefined, 'a proper mirror pod')
  t.equal(admit({ object: { ...mirror(), metadata: { ...mirror().metadata, annotations: {} } } })?.message,
    'pods "static-n1" is forbidden: pod does not have "orch.io/config.mirror" annotation, node "n1" can only create mirror pods')
  t.match(admit({ object: mirror({}, { nodeName: 'n2' }) })?.message, /node "n1" can only create pods with spec.nodeName set to itself$/)
  t.match(admit({ object: mirror({ ownerReferences: [] }) })?.message, /can only create pods with an owner reference set to itself$/)
  t.match(admit({ object: mirror({ ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n2', uid: 'x', controller: true }] }) })?.message, /owner reference set to itself$/)
  t.match(admit({ object: mirror({ ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'node-uid' }] }) })?.message, /controller owner reference/)
  t.match(admit({ object: mirror({ ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'node-uid', controller: true, blockOwnerDeletion: true }] }) })?.message, /must not set blockOwnerDeletion/)
  t.match(admit({ object: mirror({ ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'bad', controller: true }] }) })?.message, /node n1 UID mismatch: expected bad got node-uid$/)
  t.match(admit({ object: mirror({}, { serviceAccountName: 'sa' }) })?.message, /can not create pods that reference a service account$/)
  t.match(admit({ object: mirror({}, { volumes: [{ name: 'v', secret: { secretName: 's' } }] }) })?.message, /reference secrets$/)
  t.match(admit({ object: mirror({}, { containers: [{ name: 'c', envFrom: [{ configMapRef: { name: 'c' } }] }] }) })?.message, /reference configmaps$/)
  t.match(admit({ object: mirror({}, { volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'c' } }] }) })?.message, /reference persistentvolumeclaims$/)
  t.match(admit({ object: mirror({}, { volumes: [{ name: 'v', projected: { sources: [{ clusterTrustBundle: { name: 'b' } }] } }] }) })?.message, /clustertrustbundles$/)
  const noNode = admitNodeRestriction(req({ user: 'system:node:n9', object: mirror({ ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n9', uid: 'u', controller: true }] }, { nodeName: 'n9' }) }), lookups)
  t.same([noNode?.code, noNode?.message], [404, 'node "n9" not found'])
  // delete
  t.equal(admit({ operation: 'DELETE', name: 'mine' }), undefined)
  t.equal(admit({ operation: 'DELETE', name: 'theirs' })?.message, 'pods "Unknown" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself')
  t.equal(admit({ operation: 'DELETE', name: 'gone' })?.code, 404)
  // update
  t.equal(admit({ operation: 'UPDATE', name: 'mine', object: pods['ns/mine'], oldObject: pods['ns/mine'] })?.message,
    'pods "mine" is forbidden: unexpected operation "UPDATE", node "n1" can only create and delete mirror pods')
  // status
  const old = { metadata: { name: 'mine', labels: { a: 'b' } }, spec: { nodeName: 'n1' }, status: {} }
  t.equal(admit({ operation: 'UPDATE', subresource: 'status', name: 'mine', oldObject: old, object: { ...old, status: { phase: 'Running' } } }), undefined)
  t.match(admit({ operation: 'UPDATE', subresource: 'status', name: 'mine', oldObject: old, object: { ...old, metadata: { name: 'mine', labels: { a: 'c' } } } })?.message, /cannot update labels through pod status$/)
  t.match(admit({ operation: 'UPDATE', subresource: 'status', name: 'x', oldObject: { ...old, spec: { nodeName: 'n2' } }, object: old })?.message, /can only update pod status for pods with spec.nodeName set to itself$/)
  t.match(admit({ operation: 'UPDATE', subresource: 'status', name: 'mine', oldObject: old, object: { ...old, status: { resourceClaimStatuses: [{ name: 'x' }] } } })?.message, /cannot update resource claim statues$/)
  // eviction
  t.equal(admit({ subresource: 'eviction', name: 'mine', object: { kind: 'Eviction', metadata: { name: 'mine' } } }), undefined)
  t.equal(admit({ subresource: 'eviction', name: '', object: { kind: 'Eviction', metadata: { name: 'mine' } } }), undefined, 'name from the Eviction')
  t.match(admit({ subresource: 'eviction', name: 'theirs', object: { kind: 'Eviction', metadata: { name: 'theirs' } } })?.message, /node n1 can only evict pods with spec.nodeName set to itself$/)
  t.match(admit({ subresource: 'eviction', name: '', object: { kind: 'Eviction', metadata: {} } })?.message, /could not determine pod from request data$/)
  t.match(admit({ subresource: 'exec', name: 'mine', operation: 'CONNECT' }), undefined, 'connect is not handled')
  t.match(admit({ subresource: 'binding', name: 'mine', object: { metadata: { name: 'mine' } } })?.message, /unexpected pod subresource "binding", only 'status' and 'eviction' are allowed$/)
})

t.test('nodes', async (t) => {
  const n = (labels: Record<string, string> = {}, spec: Record<string, any> = {}) => ({ kind: 'Node', metadata: { name: 'n1', labels }, spec })
  t.equal(admit({ resource: 'nodes', namespace: '', object: n({ 'orch.io/hostname': 'n1', 'node.orch.io/instance-type': 'big', 'example.com/x': 'y', 'kubelet.orch.io/foo': 'z' }) }), undefined)
  t.equal(admit({ resource: 'nodes', namespace: '', object: { ...n(), metadata: { name: 'n2' } } })?.message, 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"')
  t.equal(admit({ resource: 'nodes', namespace: '', object: n({ 'node-role.orch.io/control-plane': '', 'node-restriction.orch.io/x': 'y', 'orch.io/role': 'r' }) })?.message,
    'nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: node-restriction.orch.io/x, node-role.orch.io/control-plane, orch.io/role')
  t.match(admit({ resource: 'nodes', namespace: '', object: n({}, { configSource: { configMap: {} } }) })?.message, /non-nil configSource$/)
  const old = n({ 'node-role.orch.io/worker': '' }, { taints: [{ key: 'k', effect: 'NoSchedule' }] })
  t.equal(admit({ resource: 'nodes', namespace: '', operation: 'UPDATE', name: 'n1', oldObject: old, object: n({ 'node-role.orch.io/worker': '', 'orch.io/os': 'linux' }, { taints: [{ key: 'k', effect: 'NoSchedule' }] }) }), undefined, 'existing forbidden label untouched')
  t.match(admit({ resource: 'nodes', namespace: '', operation: 'UPDATE', name: 'n1', oldObject: old, object: n({}, old.spec) })?.message, /is not allowed to modify labels: node-role.orch.io\/worker$/)
  t.match(admit({ resource: 'nodes', namespace: '', operation: 'UPDATE', name: 'n1', oldObject: old, object: n(old.metadata.labels, {}) })?.message, /is not allowed to modify taints$/)
  t.equal(admit({ resource: 'nodes', namespace: '', operation: 'UPDATE', subresource: 'status', name: 'n1', oldObject: old, object: old }), undefined)
  t.match(admit({ resource: 'nodes', namespace: '', operation: 'UPDATE', subresource: 'status', name: 'n2', oldObject: old, object: old })?.message, /not allowed to modify node "n2"/)
  t.equal(admit({ resource: 'nodes', namespace: '', operation: 'DELETE', name: 'n1' }), undefined)
  t.same(forbiddenNodeLabels(['topology.orch.io/zone', 'sub.node-restriction.orch.io/a', 'x.orch.io/y']), ['sub.node-restriction.orch.io/a', 'x.orch.io/y'])
})

t.test('pvc status, tokens, leases, csinodes, slices', async (t) => {
  const pvc = { metadata: { name: 'c', resourceVersion: '1', labels: { a: 'b' } }, spec: { resources: {} }, status: { phase: 'Bound', capacity: { storage: '1Gi' } } }
  const upd = (object: any) => admit({ resource: 'persistentvolumeclaims', subresource: 'status', operation: 'UPDATE', name: 'c', oldObject: pvc, object })
  t.equal(upd({ ...pvc, metadata: { ...pvc.metadata, resourceVersion: '' }, status: { phase: 'Bound', capacity: { storage: '2Gi' }, conditions: [{ type: 'Resizing' }], allocatedResources: { storage: '2Gi' } } }), undefined)
  t.match(upd({ ...pvc, status: { phase: 'Lost' } })?.message, /is not allowed to update fields other than status.capacity and status.conditions: status.phase$/)
  t.match(upd({ ...pvc, metadata: { ...pvc.metadata, labels: {} } })?.message, /metadata.labels/)
  t.equal(admit({ resource: 'persistentvolumeclaims', operation: 'UPDATE', name: 'c', oldObject: pvc, object: pvc })?.message, 'persistentvolumeclaims "c" is forbidden: may only update PVC status')

  const tr = (ref: any) => admit({ resource: 'serviceaccounts', subresource: 'token', name: 'sa', object: { kind: 'TokenRequest', metadata: { name: 'sa' }, spec: { boundObjectRef: ref } } })
  t.equal(tr({ apiVersion: 'v1', kind: 'Pod', name: 'mine', uid: 'pod-uid' }), undefined)
  t.match(tr(undefined)?.message, /node requested token not bound to a pod$/)
  t.match(tr({ apiVersion: 'v1', kind: 'Secret', name: 'mine', uid: 'x' })?.message, /not bound to a pod$/)
  t.match(tr({ apiVersion: 'v1', kind: 'Pod', name: 'mine' })?.message, /pod binding without a uid$/)
  t.match(tr({ apiVersion: 'v1', kind: 'Pod', name: 'mine', uid: 'old' })?.message, /the UID in the bound object reference \(old\) does not match the UID in record/)
  t.match(tr({ apiVersion: 'v1', kind: 'Pod', name: 'theirs', uid: 'their-uid' })?.message, /bound to a pod scheduled on a different node$/)
  t.equal(tr({ apiVersion: 'v1', kind: 'Pod', name: 'gone', uid: 'x' })?.code, 404)
  t.equal(admit({ resource: 'serviceaccounts', operation: 'UPDATE', name: 'sa', object: {} }), undefined, 'only token creation is checked')

  const L = 'coordination.orch.io'
  t.equal(admit({ group: L, resource: 'leases', namespace: 'orch-node-lease', object: { metadata: { name: 'n1' } } }), undefined)
  t.match(admit({ group: L, resource: 'leases', namespace: 'orch-node-lease', object: { metadata: { name: 'n2' } } })?.message, /^leases.coordination.orch.io "n2" is forbidden: can only access node lease with the same name as the requesting node$/)
  t.match(admit({ group: L, resource: 'leases', namespace: 'default', object: { metadata: { name: 'n1' } } })?.message, /can only access leases in the "orch-node-lease" system namespace$/)
  t.equal(admit({ group: L, resource: 'leases', namespace: 'orch-node-lease', operation: 'UPDATE', name: 'n1', object: { metadata: { name: 'n1' } } }), undefined)
  t.equal(admit({ group: 'storage.orch.io', resource: 'csinodes', namespace: '', object: { metadata: { name: 'n1' } } }), undefined)
  t.match(admit({ group: 'storage.orch.io', resource: 'csinodes', namespace: '', operation: 'DELETE', name: 'n2' })?.message, /can only access CSINode with the same name as the requesting node$/)
  const R = 'resource.orch.io'
  t.equal(admit({ group: R, resource: 'resourceslices', namespace: '', object: { metadata: { name: 's' }, spec: { nodeName: 'n1' } } }), undefined)
  t.match(admit({ group: R, resource: 'resourceslices', namespace: '', object: { metadata: { name: 's' }, spec: { nodeName: 'n2' } } })?.message, /can only create ResourceSlice with the same NodeName/)
  t.match(admit({ group: R, resource: 'resourceslices', namespace: '', operation: 'DELETE', name: 's', oldObject: { spec: {} } })?.message, /can only delete ResourceSlice/)
  t.equal(admit({ resource: 'configmaps', object: { metadata: { name: 'x' } } }), undefined, 'other resources are left to the authorizer')
})
