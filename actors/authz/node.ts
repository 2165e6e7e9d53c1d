// The Node authorizer: kubelets (`system:node:<name>` in `system:nodes`) reach only objects related to pods bound to their node.
import { parseFieldSelector, type FieldRequirement } from '../../src/machinery/selectors.js'
import {
  nodeIdentity, podSecretNames, podConfigMapNames, podClaimNames, podResourceClaimNames, pvSecretRefs,
  MIRROR_POD_ANNOTATION, NODE_LEASE_NAMESPACE,
} from '../../src/machinery/node-refs.js'
import type { Attributes } from './messages.js'
import { rulesAllow, type PolicyRule, type RbacDecision } from './rbac.js'
import { nodeRules } from '../../src/machinery/node-refs.js'
export { nodeRules }

export { nodeIdentity }

/** Attributes plus the request's field selector (list/watch of pods by `spec.nodeName`, resourceslices by `nodeName`). */
export interface NodeAttributes extends Attributes { fieldSelector?: string }

const COORD = 'coordination.orch.io'
const STORAGE = 'storage.orch.io'
const RESOURCE = 'resource.orch.io'



export type VertexType = 'pod' | 'secret' | 'configmap' | 'pvc' | 'pv' | 'serviceAccount' | 'resourceclaim' | 'volumeattachment' | 'resourceslice'

interface PodEntry { node: string; secrets: string[]; configmaps: string[]; pvcs: string[]; serviceAccount: string; claims: string[] }
interface PvEntry { claim: string; secrets: string[] }

const key = (ns: string, name: string): string => `${ns}/${name}`

function addRef(index: Map<string, Set<string>>, k: string, v: string): void {
  let s = index.get(k)
  if (!s) { s = new Set(); index.set(k, s) }
  s.add(v)
}

function delRef(index: Map<string, Set<string>>, k: string, v: string): void {
  const s = index.get(k)
  if (!s) return
  s.delete(v)
  if (s.size === 0) index.delete(k)
}

/**
 * The node authorizer's graph, fed with Pods, PersistentVolumes, VolumeAttachments and ResourceSlices as stored.
 * Edges: pod → node; secret, configmap, pvc, serviceaccount, resourceclaim → pod; pv → pvc; secret → pv;
 * volumeattachment → node; resourceslice → node. Mirror pods reach nothing but their node.
 */
export class NodeGraph {
  readonly #pods = new Map<string, PodEntry>()
  readonly #podsByNode = new Map<string, Set<string>>()
  /** per referenced type: `ns/name` → pod keys */
  readonly #refs: Record<'secret' | 'configmap' | 'pvc' | 'serviceAccount' | 'resourceclaim', Map<string, Set<string>>> = {
    secret: new Map(), configmap: new Map(), pvc: new Map(), serviceAccount: new Map(), resourceclaim: new Map(),
  }
  readonly #pvs = new Map<string, PvEntry>()
  readonly #pvsByClaim = new Map<string, Set<string>>()
  readonly #pvsBySecret = new Map<string, Set<string>>()
  readonly #attachments = new Map<string, string>()
  readonly #slices = new Map<string, string>()
  generation = 0

  /** Feeds one stored object (Pod, PersistentVolume, VolumeAttachment, ResourceSlice); other kinds are ignored. */
  upsert(obj: Record<string, any>): boolean {
    const kind = obj?.kind
    const name: string = obj?.metadata?.name ?? ''
    const ns: string = obj?.metadata?.namespace ?? ''
    if (name === '') return false
    switch (kind) {
      case 'Pod': this.#putPod(ns, name, obj); break
      case 'PersistentVolume': this.#putPv(name, obj); break
      case 'VolumeAttachment': {
        const n = obj.spec?.nodeName
        if (typeof n === 'string' && n !== '') this.#attachments.set(name, n)
        else this.#attachments.delete(name)
        break
      }
      case 'ResourceSlice': {
        const n = obj.spec?.nodeName
        if (typeof n === 'string' && n !== '') this.#slices.set(name, n)
        else this.#slices.delete(name)
        break
      }
      default: return false
    }
    this.generation++
    return true
  }

  remove(kind: string, namespace: string, name: string): boolean {
    let removed = false
    switch (kind) {
      case 'Pod': removed = this.#deletePod(key(namespace, name)); break
      case 'PersistentVolume': removed = this.#deletePv(name); break
      case 'VolumeAttachment': removed = this.#attachments.delete(name); break
      case 'ResourceSlice': removed = this.#slices.delete(name); break
    }
    if (removed) this.generation++
    return removed
  }

  #putPod(ns: string, name: string, pod: Record<string, any>): void {
    const k = key(ns, name)
    this.#deletePod(k)
    const node: string = pod.spec?.nodeName ?? ''
    if (node === '') return // not scheduled: not in the graph
    const mirror = pod.metadata?.annotations?.[MIRROR_POD_ANNOTATION] !== undefined
    const e: PodEntry = mirror
      ? { node, secrets: [], configmaps: [], pvcs: [], serviceAccount: '', claims: [] }
      : {
        node, secrets: podSecretNames(pod), configmaps: podConfigMapNames(pod), pvcs: podClaimNames(pod),
        serviceAccount: pod.spec?.serviceAccountName ?? '', claims: podResourceClaimNames(pod),
      }
    this.#pods.set(k, e)
    addRef(this.#podsByNode, node, k)
    for (const s of e.secrets) addRef(this.#refs.secret, key(ns, s), k)
    for (const c of e.configmaps) addRef(this.#refs.configmap, key(ns, c), k)
    for (const p of e.pvcs) addRef(this.#refs.pvc, key(ns, p), k)
    for (const c of e.claims) addRef(this.#refs.resourceclaim, key(ns, c), k)
    if (e.serviceAccount) addRef(this.#refs.serviceAccount, key(ns, e.serviceAccount), k)
  }

  #deletePod(k: string): boolean {
    const e = this.#pods.get(k)
    if (!e) return false
    const ns = k.slice(0, k.indexOf('/'))
    this.#pods.delete(k)
    delRef(this.#podsByNode, e.node, k)
    for (const s of e.secrets) delRef(this.#refs.secret, key(ns, s), k)
    for (const c of e.configmaps) delRef(this.#refs.configmap, key(ns, c), k)
    for (const p of e.pvcs) delRef(this.#refs.pvc, key(ns, p), k)
    for (const c of e.claims) delRef(this.#refs.resourceclaim, key(ns, c), k)
    if (e.serviceAccount) delRef(this.#refs.serviceAccount, key(ns, e.serviceAccount), k)
    return true
  }

  #putPv(name: string, pv: Record<string, any>): void {
    this.#deletePv(name)
    const ref = pv.spec?.claimRef
    if (!ref?.name) return // only bound volumes have edges
    const e: PvEntry = { claim: key(ref.namespace ?? '', ref.name), secrets: pvSecretRefs(pv).map((s) => key(s.namespace, s.name)) }
    this.#pvs.set(name, e)
    addRef(this.#pvsByClaim, e.claim, name)
    for (const s of e.secrets) addRef(this.#pvsBySecret, s, name)
  }

  #deletePv(name: string): boolean {
    const e = this.#pvs.get(name)
    if (!e) return false
    this.#pvs.delete(name)
    delRef(this.#pvsByClaim, e.claim, name)
    for (const s of e.secrets) delRef(this.#pvsBySecret, s, name)
    return true
  }

  #podsOnNode(pods: Set<string> | undefined, node: string): boolean {
    if (!pods) return false
    for (const p of pods) if (this.#pods.get(p)?.node === node) return true
    return false
  }

  #pvReachable(pv: string, node: string): boolean {
    const e = this.#pvs.get(pv)
    return e !== undefined && this.#podsOnNode(this.#refs.pvc.get(e.claim), node)
  }

  /** Whether the node knows anything at all (upstream: the node vertex exists). */
  knowsNode(node: string): boolean {
    if (this.#podsByNode.has(node)) return true
    for (const n of this.#attachments.values()) if (n === node) return true
    for (const n of this.#slices.values()) if (n === node) return true
    return false
  }

  /** Whether a path leads from the object to the node. */
  hasPathFrom(node: string, type: VertexType, namespace: string, name: string): boolean {
    const k = key(namespace, name)
    switch (type) {
      case 'pod': return this.#pods.get(k)?.node === node
      case 'configmap':
      case 'pvc':
      case 'serviceAccount':
      case 'resourceclaim':
        return this.#podsOnNode(this.#refs[type].get(k), node)
      case 'secret': {
        if (this.#podsOnNode(this.#refs.secret.get(k), node)) return true
        for (const pv of this.#pvsBySecret.get(k) ?? []) if (this.#pvReachable(pv, node)) return true
        return false
      }
      case 'pv': return this.#pvReachable(name, node)
      case 'volumeattachment': return this.#attachments.get(name) === node
      case 'resourceslice': return this.#slices.get(name) === node
    }
  }
}

const NO_OPINION = (reason = ''): RbacDecision => ({ decision: 'noopinion', reason })
const ALLOW: RbacDecision = { decision: 'allow', reason: '' }

function fieldRequirements(a: NodeAttributes): FieldRequirement[] {
  if (!a.fieldSelector) return []
  try { return parseFieldSelector(a.fieldSelector) } catch { return [] }
}

/** The Node authorizer (upstream NodeAuthorizer with AuthorizeNodeWithSelectors on). */
export class NodeAuthorizer {
  readonly #rules: PolicyRule[]
  constructor(readonly graph: NodeGraph, rules: PolicyRule[] = nodeRules()) { this.#rules = rules }

  authorize(a: NodeAttributes): RbacDecision {
    const { isNode, nodeName } = nodeIdentity(a.user, a.groups)
    if (!isNode) return NO_OPINION()
    if (nodeName === '') return NO_OPINION(`unknown node for user ${JSON.stringify(a.user)}`)
    if (a.isResourceRequest) {
      const g = a.apiGroup
      const r = a.resource
      if (g === '' && r === 'secrets') return this.#readNamespaced(nodeName, 'secret', a)
      if (g === '' && r === 'configmaps') return this.#readNamespaced(nodeName, 'configmap', a)
      if (g === '' && r === 'persistentvolumeclaims') {
        return a.subresource === 'status' ? this.#statusUpdate(nodeName, 'pvc', a) : this.#get(nodeName, 'pvc', a)
      }
      if (g === '' && r === 'persistentvolumes') return this.#get(nodeName, 'pv', a)
      if (g === RESOURCE && r === 'resourceclaims') return this.#get(nodeName, 'resourceclaim', a)
      if (g === STORAGE && r === 'volumeattachments') return this.#get(nodeName, 'volumeattachment', a)
      if (g === '' && r === 'serviceaccounts') return this.#createToken(nodeName, a)
      if (g === COORD && r === 'leases') return this.#lease(nodeName, a)
      if (g === STORAGE && r === 'csinodes') return this.#csiNode(nodeName, a)
      if (g === RESOURCE && r === 'resourceslices') return this.#resourceSlice(nodeName, a)
      if (g === '' && r === 'nodes') return this.#node(nodeName, a)
      if (g === '' && r === 'pods') return this.#pod(nodeName, a)
    }
    return rulesAllow(a, this.#rules) ? ALLOW : NO_OPINION()
  }

  #statusUpdate(node: string, type: VertexType, a: NodeAttributes): RbacDecision {
    if (a.verb !== 'update' && a.verb !== 'patch') return NO_OPINION('can only get/update/patch this type')
    if (a.subresource !== 'status') return NO_OPINION('can only update status subresource')
    return this.#related(node, type, a)
  }

  #get(node: string, type: VertexType, a: NodeAttributes): RbacDecision {
    if (a.verb !== 'get') return NO_OPINION('can only get individual resources of this type')
    if (a.subresource !== '') return NO_OPINION('cannot get subresource')
    return this.#related(node, type, a)
  }

  #readNamespaced(node: string, type: VertexType, a: NodeAttributes): RbacDecision {
    if (a.verb !== 'get' && a.verb !== 'list' && a.verb !== 'watch') return NO_OPINION('can only read resources of this type')
    if (a.subresource !== '') return NO_OPINION('cannot read subresource')
    if (a.namespace === '') return NO_OPINION('can only read namespaced object of this type')
    return this.#related(node, type, a)
  }

  #related(node: string, type: VertexType, a: NodeAttributes): RbacDecision {
    if (a.name === '') return NO_OPINION('No Object name found')
    if (!this.graph.hasPathFrom(node, type, a.namespace, a.name)) return NO_OPINION(`no relationship found between node '${node}' and this object`)
    return ALLOW
  }

  #createToken(node: string, a: NodeAttributes): RbacDecision {
    if (a.verb !== 'create' || a.name === '') return NO_OPINION('can only create tokens for individual service accounts')
    if (a.subresource !== 'token') return NO_OPINION('can only create token subresource of serviceaccount')
    if (!this.graph.hasPathFrom(node, 'serviceAccount', a.namespace, a.name)) return NO_OPINION(`no relationship found between node '${node}' and this object`)
    return ALLOW
  }

  #lease(node: string, a: NodeAttributes): RbacDecision {
    if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb)) return NO_OPINION('can only get, create, update, patch, or delete a node lease')
    if (a.namespace !== NODE_LEASE_NAMESPACE) return NO_OPINION(`can only access leases in the ${JSON.stringify(NODE_LEASE_NAMESPACE)} system namespace`)
    if (a.verb !== 'create' && a.name !== node) return NO_OPINION('can only access node lease with the same name as the requesting node')
    return ALLOW
  }

  #csiNode(node: string, a: NodeAttributes): RbacDecision {
    if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb)) return NO_OPINION('can only get, create, update, patch, or delete a CSINode')
    if (a.subresource !== '') return NO_OPINION('cannot authorize CSINode subresources')
    if (a.verb !== 'create' && a.name !== node) return NO_OPINION('can only access CSINode with the same name as the requesting node')
    return ALLOW
  }

  #resourceSlice(node: string, a: NodeAttributes): RbacDecision {
    if (a.subresource !== '') return NO_OPINION('cannot authorize ResourceSlice subresources')
    switch (a.verb) {
      case 'create': return ALLOW // NodeRestriction checks spec.nodeName
      case 'get': case 'update': case 'patch': case 'delete': return this.#related(node, 'resourceslice', a)
      case 'watch': case 'list': case 'deletecollection':
        for (const req of fieldRequirements(a)) if ((req.field === 'spec.nodeName' || req.field === 'nodeName') && req.op === 'eq' && req.value === node) return ALLOW
        return NO_OPINION('can only list/watch/deletecollection resourceslices with nodeName field selector')
      default:
        return NO_OPINION('only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection')
    }
  }

  #node(node: string, a: NodeAttributes): RbacDecision {
    if (a.subresource === '') {
      switch (a.verb) {
        case 'create': case 'update': case 'patch': return ALLOW // NodeRestriction limits the node to its own object
        case 'get': case 'list': case 'watch':
          if (a.name === node) return ALLOW
          if (a.name === '') return NO_OPINION(`node '${node}' cannot read all nodes, only its own Node object`)
          return NO_OPINION(`node '${node}' cannot read '${a.name}', only its own Node object`)
      }
    } else if (a.subresource === 'status' && (a.verb === 'update' || a.verb === 'patch')) {
      return ALLOW
    }
    return NO_OPINION()
  }

  #pod(node: string, a: NodeAttributes): RbacDecision {
    switch (a.subresource) {
      case '':
        switch (a.verb) {
          case 'get': return this.#get(node, 'pod', a)
          case 'list': case 'watch':
            for (const req of fieldRequirements(a)) if (req.field === 'spec.nodeName' && req.op === 'eq' && req.value === node) return ALLOW
            if (a.name !== '') return this.#related(node, 'pod', a)
            return NO_OPINION('can only list/watch pods with spec.nodeName field selector')
          case 'create': case 'delete': return ALLOW // mirror pods; NodeRestriction limits them
        }
        break
      case 'status':
        if (a.verb === 'update' || a.verb === 'patch') return ALLOW
        break
      case 'eviction':
        if (a.verb === 'create') return ALLOW
        break
    }
    return NO_OPINION()
  }
}
