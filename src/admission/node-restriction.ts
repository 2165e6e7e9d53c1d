// The NodeRestriction admission plugin: a kubelet may write only its own Node, Lease and CSINode, its mirror pods, and pods bound to it.
import { forbidden, notFound, type ApiError } from '../machinery/errors.js'
import {
  nodeIdentity, podSecretNames, podConfigMapNames, MIRROR_POD_ANNOTATION, NODE_LEASE_NAMESPACE,
} from '../machinery/node-refs.js'

export const PLUGIN_NAME = 'NodeRestriction'

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT'

type Obj = Record<string, any>

/** What the plugin sees of one request. */
export interface NodeRestrictionAttributes {
  user: string
  groups: string[]
  operation: AdmissionOperation
  group: string
  resource: string
  subresource: string
  namespace: string
  /** The name from the URL ("" on create of a collection). */
  name: string
  /** The incoming object (pod, node, TokenRequest, Eviction, …); absent on delete. */
  object?: Obj
  /** The stored object on update and delete. */
  oldObject?: Obj
}

/** Reads of live objects the plugin needs (from a cache; undefined = not found). */
export interface NodeRestrictionLookups {
  getPod(namespace: string, name: string): Obj | undefined
  getNode(name: string): Obj | undefined
}

export interface NodeRestrictionOptions {
  /** RecoverVolumeExpansionFailure: nodes may also write status.allocatedResources(Statuses) of PVCs. Default true. */
  expansionRecoveryEnabled?: boolean
}

/** Label namespace only nodes may not set (upstream `node-restriction.kubernetes.io`). */
export const NODE_RESTRICTION_LABEL_NAMESPACE = 'node-restriction.orch.io'
/** The brand's reserved label domain (upstream `kubernetes.io` and `k8s.io`). */
const BRAND_DOMAIN = 'orch.io'
/** Labels under the brand's domain a kubelet may set on its Node (upstream kubeletapis.IsKubeletLabel). */
export const KUBELET_LABELS = new Set([
  'orch.io/hostname',
  'topology.orch.io/zone',
  'topology.orch.io/region',
  'failure-domain.beta.orch.io/zone',
  'failure-domain.beta.orch.io/region',
  'beta.orch.io/instance-type',
  'node.orch.io/instance-type',
  'orch.io/os',
  'orch.io/arch',
  'beta.orch.io/os',
  'beta.orch.io/arch',
])
const KUBELET_LABEL_NAMESPACES = ['kubelet.orch.io', 'node.orch.io']

/** upstream admission.NewForbidden: the object's name (or generateName), "Unknown" without one. */
function deny(a: NodeRestrictionAttributes, why: string): ApiError {
  let name = 'Unknown'
  const m = a.object?.metadata
  if (m?.name) name = m.name
  else if (m?.generateName) name = m.generateName
  return forbidden({ group: a.group, resource: a.resource }, name, why)
}

const q = (s: string): string => JSON.stringify(s)

/** Checks one request; returns the error to answer, or undefined to admit. */
export function admitNodeRestriction(a: NodeRestrictionAttributes, lookups: NodeRestrictionLookups, opts: NodeRestrictionOptions = {}): ApiError | undefined {
  if (a.operation !== 'CREATE' && a.operation !== 'UPDATE' && a.operation !== 'DELETE') return undefined
  const { isNode, nodeName } = nodeIdentity(a.user, a.groups)
  if (!isNode) return undefined
  if (nodeName === '') return deny(a, `could not determine node from user ${q(a.user)}`)

  const gr = `${a.group}/${a.resource}`
  switch (gr) {
    case '/pods':
      switch (a.subresource) {
        case '': return admitPod(nodeName, a, lookups)
        case 'status': return admitPodStatus(nodeName, a)
        case 'eviction': return admitPodEviction(nodeName, a, lookups)
        default: return deny(a, `unexpected pod subresource ${q(a.subresource)}, only 'status' and 'eviction' are allowed`)
      }
    case '/nodes': return admitNode(nodeName, a)
    case '/persistentvolumeclaims':
      if (a.subresource === 'status') return admitPvcStatus(nodeName, a, opts.expansionRecoveryEnabled ?? true)
      return deny(a, 'may only update PVC status')
    case '/serviceaccounts': return admitServiceAccount(nodeName, a, lookups)
    case 'coordination.orch.io/leases': return admitLease(nodeName, a)
    case 'storage.orch.io/csinodes': return admitCsiNode(nodeName, a)
    case 'resource.orch.io/resourceslices': return admitResourceSlice(nodeName, a)
    default: return undefined
  }
}

function admitPod(node: string, a: NodeRestrictionAttributes, lookups: NodeRestrictionLookups): ApiError | undefined {
  switch (a.operation) {
    case 'CREATE': return admitPodCreate(node, a, lookups)
    case 'DELETE': {
      const pod = lookups.getPod(a.namespace, a.name)
      if (!pod) return notFound({ group: '', resource: 'pod' }, a.name)
      if ((pod.spec?.nodeName ?? '') !== node) return deny(a, `node ${q(node)} can only delete pods with spec.nodeName set to itself`)
      return undefined
    }
    default: return deny(a, `unexpected operation ${q(a.operation)}, node ${q(node)} can only create and delete mirror pods`)
  }
}

function admitPodCreate(node: string, a: NodeRestrictionAttributes, lookups: NodeRestrictionLookups): ApiError | undefined {
  const pod = a.object
  if (!pod || (pod.kind !== undefined && pod.kind !== 'Pod')) return deny(a, `unexpected type ${pod?.kind ?? 'nil'}`)
  const annotations = pod.metadata?.annotations ?? {}
  if (!Object.prototype.hasOwnProperty.call(annotations, MIRROR_POD_ANNOTATION)) {
    return deny(a, `pod does not have ${q(MIRROR_POD_ANNOTATION)} annotation, node ${q(node)} can only create mirror pods`)
  }
  if ((pod.spec?.nodeName ?? '') !== node) return deny(a, `node ${q(node)} can only create pods with spec.nodeName set to itself`)
  const owners: Obj[] = pod.metadata?.ownerReferences ?? []
  if (owners.length > 1) return deny(a, `node ${q(node)} can only create pods with a single owner reference set to itself`)
  if (owners.length === 0) return deny(a, `node ${q(node)} can only create pods with an owner reference set to itself`)
  const owner = owners[0]
  if (owner.apiVersion !== 'v1' || owner.kind !== 'Node' || owner.name !== node) {
    return deny(a, `node ${q(node)} can only create pods with an owner reference set to itself`)
  }
  if (owner.controller !== true) return deny(a, `node ${q(node)} can only create pods with a controller owner reference set to itself`)
  if (owner.blockOwnerDeletion === true) return deny(a, `node ${q(node)} must not set blockOwnerDeletion on an owner reference`)
  const nodeObj = lookups.getNode(node)
  if (!nodeObj) return notFound({ group: '', resource: 'node' }, node)
  const nodeUid = nodeObj.metadata?.uid ?? ''
  if ((owner.uid ?? '') !== nodeUid) return deny(a, `node ${node} UID mismatch: expected ${owner.uid ?? ''} got ${nodeUid}`)

  if (pod.spec?.serviceAccountName) return deny(a, `node ${q(node)} can not create pods that reference a service account`)
  if (podSecretNames(pod).length > 0) return deny(a, `node ${q(node)} can not create pods that reference secrets`)
  if (podConfigMapNames(pod).length > 0) return deny(a, `node ${q(node)} can not create pods that reference configmaps`)
  for (const v of pod.spec?.volumes ?? []) {
    for (const s of v?.projected?.sources ?? []) {
      if (s?.clusterTrustBundle) return deny(a, `node ${q(node)} can not create pods that reference clustertrustbundles`)
    }
  }
  for (const v of pod.spec?.volumes ?? []) {
    if (v?.persistentVolumeClaim) return deny(a, `node ${q(node)} can not create pods that reference persistentvolumeclaims`)
  }
  return undefined
}

function labelsEqual(x: Record<string, string> | undefined, y: Record<string, string> | undefined): boolean {
  const a = x ?? {}; const b = y ?? {}
  const ka = Object.keys(a)
  if (ka.length !== Object.keys(b).length) return false
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && a[k] === b[k])
}

function claimStatusesEqual(x: Obj[] | undefined, y: Obj[] | undefined): boolean {
  const a = x ?? []; const b = y ?? []
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) {
    if (a[i]?.name !== b[i]?.name) return false
    if ((a[i]?.resourceClaimName ?? null) !== (b[i]?.resourceClaimName ?? null)) return false
  }
  return true
}

function admitPodStatus(node: string, a: NodeRestrictionAttributes): ApiError | undefined {
  if (a.operation !== 'UPDATE') return deny(a, `unexpected operation ${q(a.operation)}`)
  const old = a.oldObject
  if (!old) return deny(a, 'unexpected type nil')
  if ((old.spec?.nodeName ?? '') !== node) return deny(a, `node ${q(node)} can only update pod status for pods with spec.nodeName set to itself`)
  const pod = a.object
  if (!pod) return deny(a, 'unexpected type nil')
  if (!labelsEqual(old.metadata?.labels, pod.metadata?.labels)) return deny(a, `node ${q(node)} cannot update labels through pod status`)
  if (!claimStatusesEqual(old.status?.resourceClaimStatuses, pod.status?.resourceClaimStatuses)) return deny(a, `node ${q(node)} cannot update resource claim statues`)
  return undefined
}

function admitPodEviction(node: string, a: NodeRestrictionAttributes, lookups: NodeRestrictionLookups): ApiError | undefined {
  if (a.operation !== 'CREATE') return deny(a, `unexpected operation ${a.operation}`)
  const eviction = a.object
  if (!eviction) return deny(a, 'unexpected type nil')
  let podName = a.name
  if (podName === '') {
    podName = eviction.metadata?.name ?? ''
    if (podName === '') return deny(a, 'could not determine pod from request data')
  }
  const pod = lookups.getPod(a.namespace, podName)
  if (!pod) return notFound({ group: '', resource: 'pod' }, podName)
  if ((pod.spec?.nodeName ?? '') !== node) return deny(a, `node ${node} can only evict pods with spec.nodeName set to itself`)
  return undefined
}

/** Which top-level paths differ (a short stand-in for upstream's cmp.Diff in the message). */
function differingPaths(x: unknown, y: unknown, path = ''): string[] {
  if (JSON.stringify(x) === JSON.stringify(y)) return []
  if (x && y && typeof x === 'object' && typeof y === 'object' && !Array.isArray(x) && !Array.isArray(y)) {
    const out: string[] = []
    for (const k of new Set([...Object.keys(x), ...Object.keys(y)])) {
      out.push(...differingPaths((x as Obj)[k], (y as Obj)[k], path ? `${path}.${k}` : k))
    }
    return out
  }
  return [path || '.']
}

function admitPvcStatus(node: string, a: NodeRestrictionAttributes, expansionRecovery: boolean): ApiError | undefined {
  if (a.operation !== 'UPDATE') return deny(a, `unexpected operation ${q(a.operation)}`)
  if (!a.oldObject || !a.object) return deny(a, 'unexpected type nil')
  const strip = (pvc: Obj): Obj => {
    const c = structuredClone(pvc)
    c.metadata = { ...(c.metadata ?? {}) }
    delete c.metadata.resourceVersion
    delete c.metadata.managedFields
    c.status = { ...(c.status ?? {}) }
    delete c.status.capacity
    delete c.status.conditions
    if (expansionRecovery) { delete c.status.allocatedResourceStatuses; delete c.status.allocatedResources }
    if (Object.keys(c.status).length === 0) delete c.status
    return c
  }
  const diff = differingPaths(strip(a.oldObject), strip(a.object))
  if (diff.length > 0) {
    return deny(a, `node ${q(node)} is not allowed to update fields other than status.capacity and status.conditions: ${diff.join(', ')}`)
  }
  return undefined
}

function labelNamespace(key: string): string {
  const i = key.indexOf('/')
  return i < 0 ? '' : key.slice(0, i)
}

function isBrandLabel(key: string): boolean {
  const ns = labelNamespace(key)
  return ns === BRAND_DOMAIN || ns.endsWith(`.${BRAND_DOMAIN}`)
}

/** upstream IsKubeletLabel. */
export function isKubeletLabel(key: string): boolean {
  if (KUBELET_LABELS.has(key)) return true
  const ns = labelNamespace(key)
  return KUBELET_LABEL_NAMESPACES.some((a) => ns === a || ns.endsWith(`.${a}`))
}

function modifiedLabels(a: Record<string, string> | undefined, b: Record<string, string> | undefined): string[] {
  const x = a ?? {}; const y = b ?? {}
  const out = new Set<string>()
  for (const [k, v] of Object.entries(x)) if (!Object.prototype.hasOwnProperty.call(y, k) || y[k] !== v) out.add(k)
  for (const [k, v] of Object.entries(y)) if (!Object.prototype.hasOwnProperty.call(x, k) || x[k] !== v) out.add(k)
  return [...out]
}

/** Labels a node may not add, remove or change: node-restriction ones, and brand labels that are not kubelet labels. */
export function forbiddenNodeLabels(modified: readonly string[]): string[] {
  const out = new Set<string>()
  for (const l of modified) {
    const ns = labelNamespace(l)
    if (ns === NODE_RESTRICTION_LABEL_NAMESPACE || ns.endsWith(`.${NODE_RESTRICTION_LABEL_NAMESPACE}`)) out.add(l)
    if (isBrandLabel(l) && !isKubeletLabel(l)) out.add(l)
  }
  return [...out].sort()
}

function admitNode(node: string, a: NodeRestrictionAttributes): ApiError | undefined {
  // On create the URL has no name: the object's name is the requested one.
  const requested = a.operation === 'CREATE' && a.name === '' ? (a.object?.metadata?.name ?? '') : a.name
  if (requested !== node) return deny(a, `node ${q(node)} is not allowed to modify node ${q(requested)}`)
  if (a.operation === 'CREATE') {
    const obj = a.object
    if (!obj) return deny(a, 'unexpected type nil')
    if (obj.spec?.configSource != null) return deny(a, `node ${q(node)} is not allowed to create pods with a non-nil configSource`)
    const bad = forbiddenNodeLabels(modifiedLabels(obj.metadata?.labels, undefined))
    if (bad.length > 0) return deny(a, `node ${q(node)} is not allowed to set the following labels: ${bad.join(', ')}`)
  }
  if (a.operation === 'UPDATE') {
    const obj = a.object
    const old = a.oldObject
    if (!obj || !old) return deny(a, 'unexpected type nil')
    if (obj.spec?.configSource != null && JSON.stringify(obj.spec.configSource) !== JSON.stringify(old.spec?.configSource ?? null)) {
      return deny(a, `node ${q(node)} is not allowed to update configSource to a new non-nil configSource`)
    }
    const taints = (o: Obj): string => JSON.stringify(o.spec?.taints?.length ? o.spec.taints : [])
    if (taints(obj) !== taints(old)) return deny(a, `node ${q(node)} is not allowed to modify taints`)
    const bad = forbiddenNodeLabels(modifiedLabels(obj.metadata?.labels, old.metadata?.labels))
    if (bad.length > 0) return deny(a, `is not allowed to modify labels: ${bad.join(', ')}`)
  }
  return undefined
}

function admitServiceAccount(node: string, a: NodeRestrictionAttributes, lookups: NodeRestrictionLookups): ApiError | undefined {
  if (a.operation !== 'CREATE' || a.subresource !== 'token') return undefined
  const tr = a.object
  if (!tr) return deny(a, 'unexpected type nil')
  const ref = tr.spec?.boundObjectRef
  if (!ref || ref.apiVersion !== 'v1' || ref.kind !== 'Pod' || !ref.name) return deny(a, 'node requested token not bound to a pod')
  if (!ref.uid) return deny(a, 'node requested token with a pod binding without a uid')
  const pod = lookups.getPod(a.namespace, ref.name)
  if (!pod) return notFound({ group: '', resource: 'pod' }, ref.name)
  if (ref.uid !== (pod.metadata?.uid ?? '')) {
    return deny(a, `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`)
  }
  if ((pod.spec?.nodeName ?? '') !== node) return deny(a, 'node requested token bound to a pod scheduled on a different node')
  return undefined
}

function admitLease(node: string, a: NodeRestrictionAttributes): ApiError | undefined {
  if (a.namespace !== NODE_LEASE_NAMESPACE) return deny(a, `can only access leases in the ${q(NODE_LEASE_NAMESPACE)} system namespace`)
  const name = a.operation === 'CREATE' ? (a.object?.metadata?.name ?? '') : a.name
  if (name !== node) return deny(a, 'can only access node lease with the same name as the requesting node')
  return undefined
}

function admitCsiNode(node: string, a: NodeRestrictionAttributes): ApiError | undefined {
  const name = a.operation === 'CREATE' ? (a.object?.metadata?.name ?? '') : a.name
  if (name !== node) return deny(a, 'can only access CSINode with the same name as the requesting node')
  return undefined
}

function admitResourceSlice(node: string, a: NodeRestrictionAttributes): ApiError | undefined {
  if (a.operation === 'CREATE') {
    if ((a.object?.spec?.nodeName ?? '') !== node) return deny(a, 'can only create ResourceSlice with the same NodeName as the requesting node')
  } else if (a.operation === 'DELETE') {
    if ((a.oldObject?.spec?.nodeName ?? '') !== node) return deny(a, 'can only delete ResourceSlice with the same NodeName as the requesting node')
  }
  return undefined
}
