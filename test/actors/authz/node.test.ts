import t from 'tap'
import { NodeAuthorizer, NodeGraph, nodeIdentity, type NodeAttributes } from '../../../actors/authz/node.js'

const NODES = ['system:nodes', 'system:authenticated']

function at(node: string, verb: string, group: string, resource: string, namespace = '', name = '', subresource = '', fieldSelector?: string): NodeAttributes {
  return {
    user: `system:node:${node}`, groups: NODES, uid: '', verb, isResourceRequest: true, apiGroup: group, apiVersion: 'v1',
    namespace, resource, subresource, name, path: '', fieldSelector,
  }
}

function pod(ns: string, name: string, node: string, spec: Record<string, unknown> = {}, annotations?: Record<string, string>): Record<string, unknown> {
  return { kind: 'Pod', apiVersion: 'v1', metadata: { name, namespace: ns, uid: `uid-${name}`, annotations }, spec: { nodeName: node, containers: [{ name: 'c' }], ...spec } }
}

function graph(): NodeGraph {
  const g = new NodeGraph()
  g.upsert(pod('ns', 'web', 'n1', {
    serviceAccountName: 'web-sa',
    imagePullSecrets: [{ name: 'pull' }],
    containers: [{ name: 'c', env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 'env-secret', key: 'k' } } }, { name: 'B', valueFrom: { configMapKeyRef: { name: 'env-cm', key: 'k' } } }], envFrom: [{ configMapRef: { name: 'envfrom-cm' } }] }],
    initContainers: [{ name: 'i', envFrom: [{ secretRef: { name: 'init-secret' } }] }],
    volumes: [
      { name: 'v1', secret: { secretName: 'vol-secret' } },
      { name: 'v2', configMap: { name: 'vol-cm' } },
      { name: 'v3', projected: { sources: [{ secret: { name: 'proj-secret' } }, { configMap: { name: 'proj-cm' } }] } },
      { name: 'v4', persistentVolumeClaim: { claimName: 'data' } },
      { name: 'scratch', ephemeral: { volumeClaimTemplate: {} } },
    ],
  }))
  g.upsert(pod('ns', 'other', 'n2', { volumes: [{ name: 'v', secret: { secretName: 'n2-secret' } }] }))
  g.upsert(pod('ns', 'pending', '', { volumes: [{ name: 'v', secret: { secretName: 'pending-secret' } }] }))
  g.upsert(pod('ns', 'mirror', 'n1', { volumes: [{ name: 'v', secret: { secretName: 'mirror-secret' } }] }, { 'orch.io/config.mirror': 'x' }))
  g.upsert({ kind: 'PersistentVolume', metadata: { name: 'pv-data' }, spec: { claimRef: { namespace: 'ns', name: 'data' }, csi: { driver: 'd', volumeHandle: 'h', nodePublishSecretRef: { namespace: 'csi', name: 'csi-secret' }, controllerPublishSecretRef: { namespace: 'csi', name: 'ctrl-secret' } } } })
  g.upsert({ kind: 'PersistentVolume', metadata: { name: 'pv-free' }, spec: { claimRef: { namespace: 'ns', name: 'unused' } } })
  g.upsert({ kind: 'VolumeAttachment', metadata: { name: 'va1' }, spec: { nodeName: 'n1' } })
  g.upsert({ kind: 'ResourceSlice', metadata: { name: 'slice1' }, spec: { nodeName: 'n1' } })
  return g
}

t.test('node identity', async (t) => {
  t.same(nodeIdentity('system:node:n1', ['system:nodes']), { isNode: true, nodeName: 'n1' })
  t.same(nodeIdentity('system:node:n1', ['system:authenticated']), { isNode: false, nodeName: '' })
  t.same(nodeIdentity('n1', ['system:nodes']), { isNode: false, nodeName: '' })
  t.same(nodeIdentity('system:node:', ['system:nodes']), { isNode: true, nodeName: '' })
})

t.test('node authorizer', async (t) => {
  const z = new NodeAuthorizer(graph())
  const allow = (a: NodeAttributes, msg: string) => t.equal(z.authorize(a).decision, 'allow', msg)
  const deny = (a: NodeAttributes, msg: string, reason?: string) => {
    const d = z.authorize(a)
    t.equal(d.decision, 'noopinion', msg)
    if (reason !== undefined) t.equal(d.reason, reason, `${msg}: reason`)
  }
  // non-nodes: no opinion, nothing said
  t.same(z.authorize({ ...at('n1', 'get', '', 'secrets', 'ns', 'pull'), groups: ['system:authenticated'] }), { decision: 'noopinion', reason: '' })
  deny({ ...at('', 'get', '', 'nodes', '', 'x') }, 'empty node name', 'unknown node for user "system:node:"')

  // secrets / configmaps reachable through pods on the node
  for (const s of ['pull', 'env-secret', 'init-secret', 'vol-secret', 'proj-secret']) allow(at('n1', 'get', '', 'secrets', 'ns', s), `secret ${s}`)
  for (const c of ['env-cm', 'envfrom-cm', 'vol-cm', 'proj-cm']) allow(at('n1', 'get', '', 'configmaps', 'ns', c), `configmap ${c}`)
  allow(at('n1', 'watch', '', 'secrets', 'ns', 'pull'), 'watch of a single secret')
  allow(at('n1', 'list', '', 'configmaps', 'ns', 'vol-cm'), 'list of a single configmap by name')
  deny(at('n1', 'get', '', 'secrets', 'ns', 'n2-secret'), 'secret of a pod on another node', "no relationship found between node 'n1' and this object")
  allow(at('n2', 'get', '', 'secrets', 'ns', 'n2-secret'), 'n2 reaches its own')
  deny(at('n1', 'get', '', 'secrets', 'other-ns', 'pull'), 'same name in another namespace')
  deny(at('n1', 'get', '', 'secrets', 'ns', 'pending-secret'), 'unscheduled pods grant nothing')
  deny(at('n1', 'get', '', 'secrets', 'ns', 'mirror-secret'), 'mirror pods grant nothing')
  deny(at('n1', 'list', '', 'secrets', 'ns'), 'list all secrets', 'No Object name found')
  deny(at('n1', 'update', '', 'secrets', 'ns', 'pull'), 'write a secret', 'can only read resources of this type')
  deny(at('n1', 'get', '', 'secrets', '', 'pull'), 'cluster-scoped read', 'can only read namespaced object of this type')
  deny(at('n1', 'get', '', 'secrets', 'ns', 'pull', 'x'), 'subresource', 'cannot read subresource')

  // pvc, pv and PV secrets
  allow(at('n1', 'get', '', 'persistentvolumeclaims', 'ns', 'data'), 'pvc of a pod')
  allow(at('n1', 'get', '', 'persistentvolumeclaims', 'ns', 'web-scratch'), 'ephemeral volume claim')
  deny(at('n1', 'list', '', 'persistentvolumeclaims', 'ns', 'data'), 'pvc list', 'can only get individual resources of this type')
  allow(at('n1', 'patch', '', 'persistentvolumeclaims', 'ns', 'data', 'status'), 'pvc status patch')
  deny(at('n1', 'get', '', 'persistentvolumeclaims', 'ns', 'data', 'status'), 'pvc status get', 'can only get/update/patch this type')
  allow(at('n1', 'get', '', 'persistentvolumes', '', 'pv-data'), 'pv bound to the pvc')
  deny(at('n1', 'get', '', 'persistentvolumes', '', 'pv-free'), 'pv whose claim no pod uses')
  allow(at('n1', 'get', '', 'secrets', 'csi', 'csi-secret'), 'csi node publish secret via pv')
  deny(at('n1', 'get', '', 'secrets', 'csi', 'ctrl-secret'), 'controller secrets are not kubelet-visible')

  // service account tokens
  allow(at('n1', 'create', '', 'serviceaccounts', 'ns', 'web-sa', 'token'), 'token of a pod SA')
  deny(at('n2', 'create', '', 'serviceaccounts', 'ns', 'web-sa', 'token'), 'not n2')
  deny(at('n1', 'get', '', 'serviceaccounts', 'ns', 'web-sa'), 'get SA', 'can only create tokens for individual service accounts')
  deny(at('n1', 'create', '', 'serviceaccounts', 'ns', 'web-sa', 'x'), 'other subresource', 'can only create token subresource of serviceaccount')

  // nodes
  allow(at('n1', 'get', '', 'nodes', '', 'n1'), 'own node')
  allow(at('n1', 'create', '', 'nodes', '', ''), 'create (NodeRestriction limits)')
  allow(at('n1', 'patch', '', 'nodes', '', 'n1', 'status'), 'status')
  deny(at('n1', 'get', '', 'nodes', '', 'n2'), 'other node', "node 'n1' cannot read 'n2', only its own Node object")
  deny(at('n1', 'list', '', 'nodes'), 'all nodes', "node 'n1' cannot read all nodes, only its own Node object")
  deny(at('n1', 'delete', '', 'nodes', '', 'n1'), 'delete node')

  // pods
  allow(at('n1', 'get', '', 'pods', 'ns', 'web'), 'own pod')
  deny(at('n1', 'get', '', 'pods', 'ns', 'other'), 'other node pod')
  allow(at('n1', 'list', '', 'pods', '', '', '', 'spec.nodeName=n1'), 'list by own nodeName')
  allow(at('n1', 'watch', '', 'pods', '', '', '', 'spec.nodeName==n1,status.phase=Running'), 'watch by own nodeName')
  deny(at('n1', 'list', '', 'pods', '', '', '', 'spec.nodeName=n2'), 'other nodeName', 'can only list/watch pods with spec.nodeName field selector')
  deny(at('n1', 'list', '', 'pods', '', '', '', 'spec.nodeName!=n1'), 'negated selector')
  deny(at('n1', 'list', '', 'pods'), 'unfiltered list')
  allow(at('n1', 'create', '', 'pods', 'ns'), 'create mirror pods')
  allow(at('n1', 'update', '', 'pods', 'ns', 'web', 'status'), 'pod status')
  allow(at('n1', 'create', '', 'pods', 'ns', 'web', 'eviction'), 'eviction')
  deny(at('n1', 'update', '', 'pods', 'ns', 'web'), 'update pod')
  deny(at('n1', 'create', '', 'pods', 'ns', 'web', 'exec'), 'exec')

  // leases, csinodes, volumeattachments, resourceslices
  allow(at('n1', 'update', 'coordination.orch.io', 'leases', 'orch-node-lease', 'n1'), 'own lease')
  allow(at('n1', 'create', 'coordination.orch.io', 'leases', 'orch-node-lease'), 'create lease')
  deny(at('n1', 'update', 'coordination.orch.io', 'leases', 'orch-node-lease', 'n2'), 'other lease', 'can only access node lease with the same name as the requesting node')
  deny(at('n1', 'get', 'coordination.orch.io', 'leases', 'default', 'n1'), 'wrong namespace', 'can only access leases in the "orch-node-lease" system namespace')
  deny(at('n1', 'list', 'coordination.orch.io', 'leases', 'orch-node-lease'), 'list leases', 'can only get, create, update, patch, or delete a node lease')
  allow(at('n1', 'patch', 'storage.orch.io', 'csinodes', '', 'n1'), 'own csinode')
  deny(at('n1', 'patch', 'storage.orch.io', 'csinodes', '', 'n2'), 'other csinode')
  allow(at('n1', 'get', 'storage.orch.io', 'volumeattachments', '', 'va1'), 'va on the node')
  deny(at('n2', 'get', 'storage.orch.io', 'volumeattachments', '', 'va1'), 'va elsewhere')
  allow(at('n1', 'get', 'resource.orch.io', 'resourceslices', '', 'slice1'), 'own slice')
  allow(at('n1', 'list', 'resource.orch.io', 'resourceslices', '', '', '', 'spec.nodeName=n1'), 'slices by field')
  deny(at('n1', 'list', 'resource.orch.io', 'resourceslices'), 'all slices')

  // static rules
  allow(at('n1', 'list', '', 'services'), 'services')
  allow(at('n1', 'create', '', 'events', 'ns'), 'events')
  allow(at('n1', 'create', 'authentication.orch.io', 'tokenreviews'), 'tokenreviews')
  allow(at('n1', 'create', 'authorization.orch.io', 'subjectaccessreviews'), 'subjectaccessreviews')
  allow(at('n1', 'create', 'certificates.orch.io', 'certificatesigningrequests'), 'csr')
  allow(at('n1', 'get', '', 'endpoints', 'ns', 'e'), 'endpoints')
  deny(at('n1', 'delete', '', 'services', 'ns', 's'), 'service delete')
  deny(at('n1', 'get', 'apps', 'deployments', 'ns', 'd'), 'deployments')
  deny({ ...at('n1', 'get', '', ''), isResourceRequest: false, path: '/healthz' }, 'non-resource')
})

t.test('graph updates', async (t) => {
  const g = graph()
  const z = new NodeAuthorizer(g)
  const get = (node: string, name: string) => z.authorize(at(node, 'get', '', 'secrets', 'ns', name)).decision
  t.equal(get('n1', 'vol-secret'), 'allow')
  // The pod moves to another node (recreated): n1 loses access, n3 gains it.
  g.upsert(pod('ns', 'web', 'n3', { volumes: [{ name: 'v1', secret: { secretName: 'vol-secret' } }] }))
  t.equal(get('n1', 'vol-secret'), 'noopinion')
  t.equal(get('n3', 'vol-secret'), 'allow')
  t.equal(get('n3', 'pull'), 'noopinion', 'old refs dropped')
  t.ok(g.knowsNode('n3'))
  // Shared secret: two pods, delete one, still reachable via the other.
  g.upsert(pod('ns', 'a', 'n4', { volumes: [{ name: 'v', secret: { secretName: 'shared' } }] }))
  g.upsert(pod('ns', 'b', 'n4', { volumes: [{ name: 'v', secret: { secretName: 'shared' } }] }))
  t.ok(g.remove('Pod', 'ns', 'a'))
  t.equal(get('n4', 'shared'), 'allow')
  t.ok(g.remove('Pod', 'ns', 'b'))
  t.equal(get('n4', 'shared'), 'noopinion')
  t.notOk(g.knowsNode('n4'))
  t.notOk(g.remove('Pod', 'ns', 'b'))
  // PV unbinding drops its edges.
  t.equal(z.authorize(at('n1', 'get', '', 'secrets', 'csi', 'csi-secret')).decision, 'noopinion', 'web moved away from n1')
  g.upsert(pod('ns', 'db', 'n1', { volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }] }))
  t.equal(z.authorize(at('n1', 'get', '', 'secrets', 'csi', 'csi-secret')).decision, 'allow')
  g.upsert({ kind: 'PersistentVolume', metadata: { name: 'pv-data' }, spec: {} })
  t.equal(z.authorize(at('n1', 'get', '', 'persistentvolumes', '', 'pv-data')).decision, 'noopinion')
  t.equal(z.authorize(at('n1', 'get', '', 'secrets', 'csi', 'csi-secret')).decision, 'noopinion')
  t.notOk(g.upsert({ kind: 'Secret', metadata: { name: 's', namespace: 'ns' } }), 'other kinds ignored')
})
