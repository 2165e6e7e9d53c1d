// Node (v1, cluster-scoped). The kubelet creates its node with status, so status is kept on create.
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'
import { ageColumn, nameColumn } from '../_printers.js'

/** upstream node-role.kubernetes.io/ and kubernetes.io/role, rebranded. */
export const NODE_ROLE_PREFIX = 'node-role.orch.io/'
export const NODE_ROLE_LABEL = 'orch.io/role'

function nodeStatus(o: Obj): string {
  const conditions: Obj[] = Array.isArray(o.status?.conditions) ? o.status.conditions : []
  const status: string[] = []
  const ready = conditions.find((c) => c?.type === 'Ready')
  if (ready) status.push(ready.status === 'True' ? 'Ready' : 'NotReady')
  if (status.length === 0) status.push('Unknown')
  if (o.spec?.unschedulable === true) status.push('SchedulingDisabled')
  return status.join(',')
}

function nodeRoles(o: Obj): string {
  const roles = new Set<string>()
  const labels: Obj = o.metadata?.labels ?? {}
  for (const [k, v] of Object.entries(labels)) {
    if (k.startsWith(NODE_ROLE_PREFIX)) { const r = k.slice(NODE_ROLE_PREFIX.length); if (r !== '') roles.add(r) }
    else if (k === NODE_ROLE_LABEL && v !== '') roles.add(String(v))
  }
  const s = [...roles].sort().join(',')
  return s === '' ? '<none>' : s
}

function address(o: Obj, type: string): string {
  const a = Array.isArray(o.status?.addresses) ? o.status.addresses.find((x: Obj) => x?.type === type) : undefined
  return a?.address ?? '<none>'
}

const info = (o: Obj, k: string) => { const v = o.status?.nodeInfo?.[k]; return typeof v === 'string' && v !== '' ? v : '<unknown>' }

export default defineResource({
  group: '', version: 'v1', kind: 'Node', resource: 'nodes', singular: 'node', scope: 'Cluster',
  verbs: ALL_VERBS,
  shortNames: ['no'],
  subresources: ['status'],
  schemaRef: 'io.orch.api.core.v1.Node',
  // value structs upstream; the kubelet port and every nodeInfo field have no omitempty.
  zeroValues: {
    spec: {},
    status: {
      daemonEndpoints: { kubeletEndpoint: { Port: 0 } },
      nodeInfo: { machineID: '', systemUUID: '', bootID: '', kernelVersion: '', osImage: '', containerRuntimeVersion: '', kubeletVersion: '', kubeProxyVersion: '', operatingSystem: '', architecture: '' },
    },
  },
  strategy: {
    // SetDefaults_NodeStatus: allocatable defaults to capacity.
    default: (o) => {
      const s = o.status
      if (s !== null && typeof s === 'object' && s.capacity && typeof s.capacity === 'object' && s.allocatable === undefined) s.allocatable = { ...s.capacity }
    },
    prepareForUpdate: statusSplit.strategy.prepareForUpdate,
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
  },
  status: statusSplit.status,
  table: [
    nameColumn(),
    { name: 'Status', type: 'string', description: 'The status of the node', cell: (o) => nodeStatus(o) },
    { name: 'Roles', type: 'string', description: 'The roles of the node', cell: (o) => nodeRoles(o) },
    ageColumn(),
    { name: 'Version', type: 'string', description: 'Kubelet Version reported by the node.', cell: (o) => o.status?.nodeInfo?.kubeletVersion ?? '' },
    { name: 'Internal-IP', type: 'string', priority: 1, description: 'List of addresses reachable to the node.', cell: (o) => address(o, 'InternalIP') },
    { name: 'External-IP', type: 'string', priority: 1, description: 'List of addresses reachable to the node.', cell: (o) => address(o, 'ExternalIP') },
    { name: 'OS-Image', type: 'string', priority: 1, description: 'OS Image reported by the node.', cell: (o) => info(o, 'osImage') },
    { name: 'Kernel-Version', type: 'string', priority: 1, description: "Kernel Version reported by the node from 'uname -r'.", cell: (o) => info(o, 'kernelVersion') },
    { name: 'Container-Runtime', type: 'string', priority: 1, description: 'ContainerRuntime Version reported by the node through runtime remote API.', cell: (o) => info(o, 'containerRuntimeVersion') },
  ],
  fieldSelectors: { 'spec.unschedulable': (o) => String(o.spec?.unschedulable === true) },
})
