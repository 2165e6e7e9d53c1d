// Node (v1, cluster-scoped). The kubelet creates its node with status, so status is kept on create.
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'
import { ageColumn, nameColumn } from '../_printers.js'
import { fieldDuplicate, fieldForbidden, fieldInvalid, goStringSlice, GoValue, goQuote } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { parseCidrSloppy } from '../../../machinery/validation.js'
import { resourceEntries, validateResourceQuantityValue } from './resource-names.js'
import { validateTaints } from './taints.js'

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

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)
const strList = (v: unknown): string[] => (Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : '')) : [])
const CIDR_MSG = 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'
const POD_CIDR_CHANGE = 'node updates may not change podCIDR except from "" to valid'

/** Capacity and allocatable amounts: not negative, whole for counted resources (upstream ValidateNodeResources). */
function nodeResourceErrors(o: Obj): FieldError[] {
  const st = o.status
  if (!isObj(st) || (st.capacity === undefined && st.allocatable === undefined)) return []
  const errs: FieldError[] = []
  for (const bag of ['capacity', 'allocatable']) {
    for (const [k, q] of resourceEntries(st[bag])) errs.push(...validateResourceQuantityValue(k, q, `status.${bag}.${k}`))
  }
  return errs
}

/** upstream ValidateNode: taints (reported under metadata.taints, as upstream's path says), resources, podCIDRs. */
function validateNode(o: Obj): FieldError[] {
  const spec = isObj(o.spec) ? o.spec : {}
  const errs = validateTaints(spec.taints, 'metadata.taints')
  errs.push(...nodeResourceErrors(o))
  const cidrs = strList(spec.podCIDRs)
  if (cidrs.length === 0) return errs
  const parsed = cidrs.map((c, i) => {
    const net = parseCidrSloppy(c)
    if (net === undefined) errs.push(fieldInvalid(`spec.podCIDRs[${i}]`, c, CIDR_MSG))
    return net
  })
  if (cidrs.length > 1) {
    const bad = cidrs.findIndex((_, i) => parsed[i] === undefined)
    if (bad >= 0) errs.push({ type: 'InternalError', field: 'spec.podCIDRs', detail: `invalid PodCIDRs. failed to check with dual stack with error:invalid CIDR address: ${cidrs[bad]}` })
    const dualStack = bad < 0 && parsed.some((n) => n!.v4) && parsed.some((n) => !n!.v4)
    if (!dualStack || cidrs.length > 2) errs.push(fieldInvalid('spec.podCIDRs', goStringSlice('string', cidrs), 'may specify no more than one CIDR for each IP family'))
    const seen = new Set<string>()
    cidrs.forEach((c, i) => { if (seen.has(c)) errs.push(fieldDuplicate(`spec.podCIDRs[${i}]`, c)); seen.add(c) })
  }
  return errs
}

/** upstream ValidateNodeUpdate (run for spec and status writes): unique addresses, podCIDRs and providerID set once, taints. */
function validateNodeUpdate(o: Obj, old: Obj): FieldError[] {
  const spec = isObj(o.spec) ? o.spec : {}
  const prev = isObj(old.spec) ? old.spec : {}
  const errs = nodeResourceErrors(o)
  const addrs = Array.isArray(o.status?.addresses) ? o.status.addresses : []
  if (addrs.length > 1) {
    const seen = new Set<string>()
    addrs.forEach((a: unknown, i: number) => {
      const t = isObj(a) && typeof a.type === 'string' ? a.type : ''
      const ad = isObj(a) && typeof a.address === 'string' ? a.address : ''
      const id = `${t}\u0000${ad}`
      if (seen.has(id)) errs.push(fieldDuplicate(`status.addresses[${i}]`, new GoValue(`core.NodeAddress{Type:${goQuote(t)}, Address:${goQuote(ad)}}`)))
      seen.add(id)
    })
  }
  const oldCidrs = strList(prev.podCIDRs)
  if (oldCidrs.length > 0) {
    const cidrs = strList(spec.podCIDRs)
    if (cidrs.length !== oldCidrs.length) errs.push(fieldForbidden('spec.podCIDRs', POD_CIDR_CHANGE))
    else oldCidrs.forEach((c, i) => { if (c !== cidrs[i]) errs.push(fieldForbidden('spec.podCIDRs', POD_CIDR_CHANGE)) })
  }
  const oldProvider = typeof prev.providerID === 'string' ? prev.providerID : ''
  if (oldProvider !== '' && oldProvider !== (spec.providerID ?? '')) errs.push(fieldForbidden('spec.providerID', 'node updates may not change providerID except from "" to valid'))
  if (isObj(spec.configSource)) errs.push(...configSourceErrors(spec.configSource, 'spec.configSource', 'spec'))
  const cfg = o.status?.config
  if (isObj(cfg)) for (const k of ['assigned', 'active', 'lastKnownGood']) if (isObj(cfg[k])) errs.push(...configSourceErrors(cfg[k], `status.config.${k}`, 'status'))
  errs.push(...validateTaints(spec.taints, 'metadata.taints'))
  if ((spec.externalID ?? '') !== (prev.externalID ?? '')) errs.push(fieldForbidden('spec.externalID', 'may not be updated'))
  return errs
}

/** The deprecated NodeConfigSource: exactly one reference, uid and resourceVersion only in status. */
function configSourceErrors(src: Obj, field: string, where: 'spec' | 'status'): FieldError[] {
  const errs: FieldError[] = []
  const cm = src.configMap
  if (isObj(cm)) {
    const f = `${field}.configMap`
    if (where === 'spec') {
      if (cm.uid) errs.push(fieldForbidden(`${f}.uid`, 'uid must not be set in spec'))
      if (cm.resourceVersion) errs.push(fieldForbidden(`${f}.resourceVersion`, 'resourceVersion must not be set in spec'))
    } else {
      if (!cm.uid) errs.push({ type: 'FieldValueRequired', field: `${f}.uid`, detail: 'uid must be set in status' })
      if (!cm.resourceVersion) errs.push({ type: 'FieldValueRequired', field: `${f}.resourceVersion`, detail: 'resourceVersion must be set in status' })
    }
    const ns = typeof cm.namespace === 'string' ? cm.namespace : ''
    if (ns === '') errs.push({ type: 'FieldValueRequired', field: `${f}.namespace`, detail: 'namespace must be set' })
    const name = typeof cm.name === 'string' ? cm.name : ''
    if (name === '') errs.push({ type: 'FieldValueRequired', field: `${f}.name`, detail: 'name must be set' })
    const key = typeof cm.kubeletConfigKey === 'string' ? cm.kubeletConfigKey : ''
    if (key === '') errs.push({ type: 'FieldValueRequired', field: `${f}.kubeletConfigKey`, detail: 'kubeletConfigKey must be set' })
  } else {
    errs.push(fieldInvalid(field, src, 'exactly one reference subfield must be non-nil'))
  }
  return errs
}

const info = (o: Obj, k: string) => { const v = o.status?.nodeInfo?.[k]; return typeof v === 'string' && v !== '' ? v : '<unknown>' }

export default defineResource({
  group: '', version: 'v1', kind: 'Node', resource: 'nodes', singular: 'node', scope: 'Cluster',
  verbs: ALL_VERBS,
  shortNames: ['no'],
  subresources: ['status'],
  // Listed for clients; answered by src/pipeline/connect.ts (this server proxies to no node or pod).
  virtualSubresources: [{ name: 'proxy', group: '', version: 'v1', kind: 'NodeProxyOptions', verbs: ['create', 'delete', 'get', 'patch', 'update'] }],
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
      // The v1 conversion: podCIDRs comes from podCIDR when it is not given, and podCIDR is always podCIDRs[0].
      const spec = o.spec
      if (isObj(spec)) {
        if (!Array.isArray(spec.podCIDRs) && typeof spec.podCIDR === 'string' && spec.podCIDR !== '') spec.podCIDRs = [spec.podCIDR]
        if (Array.isArray(spec.podCIDRs) && spec.podCIDRs.length > 0) spec.podCIDR = spec.podCIDRs[0]
      }
      const s = o.status
      if (s !== null && typeof s === 'object' && s.capacity && typeof s.capacity === 'object' && s.allocatable === undefined) s.allocatable = { ...s.capacity }
    },
    prepareForUpdate: statusSplit.strategy.prepareForUpdate,
    validate: validateNode,
    // As upstream's node strategy: ValidateNode and then ValidateNodeUpdate (taint problems are so reported twice).
    validateUpdate: (o, old) => [...validateNode(o), ...validateNodeUpdate(o, old)],
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
  },
  status: { ...statusSplit.status, validateUpdate: validateNodeUpdate },
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
