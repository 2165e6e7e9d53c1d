// Who the server and its nodes are: the server's own loopback identity, a kubelet's node identity, and the secrets, ConfigMaps, claims and service account a pod or PV references.

/** The server's own identity on its loopback client (bootstrap, controllers, NamespaceAutoProvision). */
export const LOOPBACK_USER: { readonly username: string; readonly uid: string; readonly groups: string[] } = { username: 'system:apiserver', uid: 'system:apiserver', groups: ['system:masters'] }

export const NODE_USER_PREFIX = 'system:node:'
export const NODES_GROUP = 'system:nodes'
/** The annotation that marks a mirror pod (upstream `kubernetes.io/config.mirror`). */
export const MIRROR_POD_ANNOTATION = 'orch.io/config.mirror'
/** The namespace of node leases (upstream `kube-node-lease`). */
export const NODE_LEASE_NAMESPACE = 'orch-node-lease'
/** The ConfigMap of the cluster CA in every namespace, which pods' token volumes mount (upstream kube-root-ca.crt). */
export const ROOT_CA_CONFIGMAP = 'orch-root-ca.crt'

/** upstream NodeIdentity: a node is a user named `system:node:<name>` in group `system:nodes`; the name may be "". */
export function nodeIdentity(user: string, groups: readonly string[]): { isNode: boolean; nodeName: string } {
  if (!user.startsWith(NODE_USER_PREFIX) || !groups.includes(NODES_GROUP)) return { isNode: false, nodeName: '' }
  return { isNode: true, nodeName: user.slice(NODE_USER_PREFIX.length) }
}

type Obj = Record<string, any>

function containers(spec: Obj): Obj[] {
  return [...(spec.initContainers ?? []), ...(spec.containers ?? []), ...(spec.ephemeralContainers ?? [])]
}

function add(out: string[], name: unknown): void {
  if (typeof name === 'string' && name !== '' && !out.includes(name)) out.push(name)
}

/** Secrets a pod references (upstream VisitPodSecretNames over all containers). */
export function podSecretNames(pod: Obj): string[] {
  const spec = pod?.spec ?? {}
  const out: string[] = []
  for (const r of spec.imagePullSecrets ?? []) add(out, r?.name)
  for (const c of containers(spec)) {
    for (const ef of c.envFrom ?? []) add(out, ef?.secretRef?.name)
    for (const e of c.env ?? []) add(out, e?.valueFrom?.secretKeyRef?.name)
  }
  for (const v of spec.volumes ?? []) {
    if (v.azureFile) add(out, v.azureFile.secretName)
    else if (v.cephfs) add(out, v.cephfs.secretRef?.name)
    else if (v.cinder) add(out, v.cinder.secretRef?.name)
    else if (v.flexVolume) add(out, v.flexVolume.secretRef?.name)
    else if (v.projected) { for (const s of v.projected.sources ?? []) add(out, s?.secret?.name) }
    else if (v.rbd) add(out, v.rbd.secretRef?.name)
    else if (v.secret) add(out, v.secret.secretName)
    else if (v.scaleIO) add(out, v.scaleIO.secretRef?.name)
    else if (v.iscsi) add(out, v.iscsi.secretRef?.name)
    else if (v.storageos) add(out, v.storageos.secretRef?.name)
    else if (v.csi) add(out, v.csi.nodePublishSecretRef?.name)
  }
  return out
}

/** ConfigMaps a pod references (upstream VisitPodConfigmapNames over all containers). */
export function podConfigMapNames(pod: Obj): string[] {
  const spec = pod?.spec ?? {}
  const out: string[] = []
  for (const c of containers(spec)) {
    for (const ef of c.envFrom ?? []) add(out, ef?.configMapRef?.name)
    for (const e of c.env ?? []) add(out, e?.valueFrom?.configMapKeyRef?.name)
  }
  for (const v of spec.volumes ?? []) {
    if (v.projected) { for (const s of v.projected.sources ?? []) add(out, s?.configMap?.name) }
    else if (v.configMap) add(out, v.configMap.name)
  }
  return out
}

/** PersistentVolumeClaims a pod uses: `persistentVolumeClaim.claimName`, and `<pod>-<volume>` for generic ephemeral volumes. */
export function podClaimNames(pod: Obj): string[] {
  const out: string[] = []
  for (const v of pod?.spec?.volumes ?? []) {
    if (v.persistentVolumeClaim) add(out, v.persistentVolumeClaim.claimName)
    else if (v.ephemeral) add(out, `${pod?.metadata?.name ?? ''}-${v.name ?? ''}`)
  }
  return out
}

/** ResourceClaims a pod uses: direct names, or the generated names recorded in status for templates. */
export function podResourceClaimNames(pod: Obj): string[] {
  const out: string[] = []
  const statuses: Obj[] = pod?.status?.resourceClaimStatuses ?? []
  for (const c of pod?.spec?.resourceClaims ?? []) {
    if (typeof c.resourceClaimName === 'string') add(out, c.resourceClaimName)
    else if (c.resourceClaimTemplateName) add(out, statuses.find((s) => s?.name === c.name)?.resourceClaimName)
  }
  const ext = pod?.status?.extendedResourceClaimStatus?.resourceClaimName
  add(out, ext)
  return out
}

/** Secrets a PersistentVolume references that the kubelet uses (upstream VisitPVSecretNames with kubeletVisible). */
export function pvSecretRefs(pv: Obj): Array<{ namespace: string; name: string }> {
  const s = pv?.spec ?? {}
  const claimNs: string = s.claimRef?.namespace ?? ''
  const out: Array<{ namespace: string; name: string }> = []
  const push = (namespace: unknown, name: unknown): void => {
    if (typeof name !== 'string' || name === '') return
    const ns = typeof namespace === 'string' && namespace !== '' ? namespace : claimNs
    if (!out.some((x) => x.namespace === ns && x.name === name)) out.push({ namespace: ns, name })
  }
  if (s.azureFile) push(s.azureFile.secretNamespace, s.azureFile.secretName)
  else if (s.cephfs) push(s.cephfs.secretRef?.namespace, s.cephfs.secretRef?.name)
  else if (s.cinder) push(s.cinder.secretRef?.namespace, s.cinder.secretRef?.name)
  else if (s.flexVolume) push(s.flexVolume.secretRef?.namespace, s.flexVolume.secretRef?.name)
  else if (s.rbd) push(s.rbd.secretRef?.namespace, s.rbd.secretRef?.name)
  else if (s.scaleIO) push(s.scaleIO.secretRef?.namespace, s.scaleIO.secretRef?.name)
  else if (s.iscsi) push(s.iscsi.secretRef?.namespace, s.iscsi.secretRef?.name)
  else if (s.storageos) push(s.storageos.secretRef?.namespace, s.storageos.secretRef?.name)
  else if (s.csi) {
    // controllerPublish/controllerExpand secrets are not visible to the kubelet
    for (const k of ['nodePublishSecretRef', 'nodeStageSecretRef', 'nodeExpandSecretRef']) {
      const r = s.csi[k]
      if (typeof r?.name !== 'string' || r.name === '') continue
      const ns: string = r.namespace ?? ''
      if (!out.some((x) => x.namespace === ns && x.name === r.name)) out.push({ namespace: ns, name: r.name })
    }
  }
  return out
}

/** A policy rule as the default roles and the Node authorizer write it. */
export interface NodeRule { verbs: string[]; apiGroups: string[]; resources: string[] }

const nodeRule = (verbs: string, group: string, resources: string): NodeRule =>
  ({ verbs: verbs.split(' '), apiGroups: [group], resources: resources.split(' ') })

/**
 * The rules of ClusterRole `system:node`, which are also the Node authorizer's static rules for resources the
 * graph does not subdivide: one list for both.
 */
export function nodeRules(): NodeRule[] {
  const R = 'get list watch'
  const STORAGE = 'storage.orch.io'
  return [
    nodeRule('create', 'authentication.orch.io', 'tokenreviews'),
    nodeRule('create', 'authorization.orch.io', 'localsubjectaccessreviews subjectaccessreviews'),
    nodeRule(R, '', 'services'),
    nodeRule('create get list watch', '', 'nodes'),
    nodeRule('patch update', '', 'nodes/status'),
    nodeRule('patch update', '', 'nodes'),
    nodeRule('create patch update', '', 'events'),
    nodeRule(R, '', 'pods'),
    nodeRule('create delete', '', 'pods'),
    nodeRule('patch update', '', 'pods/status'),
    nodeRule('create', '', 'pods/eviction'),
    nodeRule(R, '', 'configmaps secrets'),
    nodeRule('get', '', 'persistentvolumeclaims persistentvolumes'),
    nodeRule('get', '', 'endpoints'),
    nodeRule('create get list watch', 'certificates.orch.io', 'certificatesigningrequests'),
    nodeRule('create delete get patch update', 'coordination.orch.io', 'leases'),
    nodeRule('get', STORAGE, 'volumeattachments'),
    nodeRule('create', '', 'serviceaccounts/token'),
    nodeRule('get patch update', '', 'persistentvolumeclaims/status'),
    nodeRule(R, STORAGE, 'csidrivers'),
    nodeRule('create delete get patch update', STORAGE, 'csinodes'),
    nodeRule(R, 'node.orch.io', 'runtimeclasses'),
  ]
}
