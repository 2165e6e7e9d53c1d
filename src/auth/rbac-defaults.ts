// The default RBAC policy: ClusterRoles, ClusterRoleBindings, and Roles/RoleBindings in orch-system and orch-public
// (start-up reconciliation against stored objects: rbac-reconcile.ts).
import type { BindingObject, PolicyRule, RbacObject, RoleObject, Subject, LabelSelectorObject } from '../../actors/authz/rbac.js'
import { nodeRules } from '../machinery/node-refs.js'
export { nodeRules }

export const RBAC_GROUP = 'rbac.authorization.orch.io'
export const RBAC_API_VERSION = `${RBAC_GROUP}/v1`
export const BOOTSTRAPPING_LABEL = 'orch.io/bootstrapping'
export const BOOTSTRAPPING_VALUE = 'rbac-defaults'
export const AUTOUPDATE_ANNOTATION = 'rbac.authorization.orch.io/autoupdate'
export const AGGREGATE_TO_ADMIN = 'rbac.authorization.orch.io/aggregate-to-admin'
export const AGGREGATE_TO_EDIT = 'rbac.authorization.orch.io/aggregate-to-edit'
export const AGGREGATE_TO_VIEW = 'rbac.authorization.orch.io/aggregate-to-view'
export const SYSTEM_NAMESPACE = 'orch-system'
export const PUBLIC_NAMESPACE = 'orch-public'

// API groups as the brand spells them.
const AUTHN = 'authentication.orch.io'
const AUTHZ = 'authorization.orch.io'
const CERTS = 'certificates.orch.io'
const COORD = 'coordination.orch.io'
const DISCOVERY = 'discovery.orch.io'
const EVENTS = 'events.orch.io'
const NETWORKING = 'networking.orch.io'
const STORAGE = 'storage.orch.io'
const RESOURCE = 'resource.orch.io'
const ADMISSIONREG = 'admissionregistration.orch.io'
const METRICS = 'metrics.orch.io'
const CUSTOM_METRICS = 'custom.metrics.orch.io'
const EXTERNAL_METRICS = 'external.metrics.orch.io'

/** Signer names (upstream `kubernetes.io/<signer>`). */
export const SIGNER_KUBE_APISERVER_CLIENT = 'orch.io/kube-apiserver-client'
export const SIGNER_KUBE_APISERVER_CLIENT_KUBELET = 'orch.io/kube-apiserver-client-kubelet'
export const SIGNER_KUBELET_SERVING = 'orch.io/kubelet-serving'
export const SIGNER_LEGACY_UNKNOWN = 'orch.io/legacy-unknown'

const READ = 'get list watch'
const WRITE = 'create delete deletecollection patch update'
const READ_WRITE = 'create delete deletecollection get list patch update watch'

const words = (s: string): string[] => s.split(/\s+/).filter(Boolean)

/** A resource rule: verbs, groups (a string is one group; '' is core), space-separated resources, optional names. */
function rule(verbs: string, groups: string | string[], resources: string, names?: string): PolicyRule {
  const r: PolicyRule = { verbs: words(verbs), apiGroups: typeof groups === 'string' ? [groups] : groups, resources: words(resources) }
  if (names !== undefined) r.resourceNames = words(names)
  return r
}

/** A non-resource rule. */
function urls(verbs: string, paths: string): PolicyRule { return { verbs: words(verbs), nonResourceURLs: words(paths) } }

const eventsRule = (): PolicyRule => rule('create patch update', ['', EVENTS], 'events')

function meta(name: string, namespace?: string, labels: Record<string, string> = {}): RoleObject['metadata'] {
  const m: RoleObject['metadata'] = { name }
  if (namespace !== undefined) m.namespace = namespace
  m.labels = { [BOOTSTRAPPING_LABEL]: BOOTSTRAPPING_VALUE, ...labels }
  m.annotations = { [AUTOUPDATE_ANNOTATION]: 'true' }
  return m
}

function clusterRole(name: string, rules: PolicyRule[], labels?: Record<string, string>): RoleObject {
  return { apiVersion: RBAC_API_VERSION, kind: 'ClusterRole', metadata: meta(name, undefined, labels), rules }
}

function aggregatedClusterRole(name: string, selectorLabel: string, labels?: Record<string, string>): RoleObject {
  const sel: LabelSelectorObject = { matchLabels: { [selectorLabel]: 'true' } }
  return { apiVersion: RBAC_API_VERSION, kind: 'ClusterRole', metadata: meta(name, undefined, labels), aggregationRule: { clusterRoleSelectors: [sel] }, rules: [] }
}

function role(namespace: string, name: string, rules: PolicyRule[]): RoleObject {
  return { apiVersion: RBAC_API_VERSION, kind: 'Role', metadata: meta(name, namespace), rules }
}

const user = (name: string): Subject => ({ kind: 'User', apiGroup: RBAC_GROUP, name })
const group = (name: string): Subject => ({ kind: 'Group', apiGroup: RBAC_GROUP, name })
const sa = (namespace: string, name: string): Subject => ({ kind: 'ServiceAccount', name, namespace })

function clusterBinding(name: string, roleName: string, subjects: Subject[]): BindingObject {
  const b: BindingObject = { apiVersion: RBAC_API_VERSION, kind: 'ClusterRoleBinding', metadata: meta(name), roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: roleName } }
  if (subjects.length > 0) b.subjects = subjects
  return b
}

function roleBinding(namespace: string, name: string, roleName: string, subjects: Subject[]): BindingObject {
  return { apiVersion: RBAC_API_VERSION, kind: 'RoleBinding', metadata: meta(name, namespace), roleRef: { apiGroup: RBAC_GROUP, kind: 'Role', name: roleName }, subjects }
}


function clusterRoles(): RoleObject[] {
  return [
    aggregatedClusterRole('admin', AGGREGATE_TO_ADMIN),
    clusterRole('cluster-admin', [rule('*', '*', '*'), urls('*', '*')]),
    aggregatedClusterRole('edit', AGGREGATE_TO_EDIT, { [AGGREGATE_TO_ADMIN]: 'true' }),
    clusterRole('system:aggregate-to-admin', [
      rule('create', AUTHZ, 'localsubjectaccessreviews'),
      rule(READ_WRITE, RBAC_GROUP, 'rolebindings roles'),
    ], { [AGGREGATE_TO_ADMIN]: 'true' }),
    clusterRole('system:aggregate-to-edit', [
      rule(READ, '', 'pods/attach pods/exec pods/portforward pods/proxy secrets services/proxy'),
      rule('impersonate', '', 'serviceaccounts'),
      rule(WRITE, '', 'pods pods/attach pods/exec pods/portforward pods/proxy'),
      rule('create', '', 'pods/eviction'),
      rule(WRITE, '', 'configmaps events persistentvolumeclaims replicationcontrollers replicationcontrollers/scale secrets serviceaccounts services services/proxy'),
      rule('create', '', 'serviceaccounts/token'),
      rule(WRITE, 'apps', 'daemonsets deployments deployments/rollback deployments/scale replicasets replicasets/scale statefulsets statefulsets/scale'),
      rule(WRITE, 'autoscaling', 'horizontalpodautoscalers'),
      rule(WRITE, 'batch', 'cronjobs jobs'),
      rule(WRITE, 'extensions', 'daemonsets deployments deployments/rollback deployments/scale ingresses networkpolicies replicasets replicasets/scale replicationcontrollers/scale'),
      rule(WRITE, 'policy', 'poddisruptionbudgets'),
      rule(WRITE, NETWORKING, 'ingresses networkpolicies'),
      rule(READ_WRITE, COORD, 'leases'),
    ], { [AGGREGATE_TO_EDIT]: 'true' }),
    clusterRole('system:aggregate-to-view', [
      rule(READ, '', 'configmaps endpoints persistentvolumeclaims persistentvolumeclaims/status pods replicationcontrollers replicationcontrollers/scale serviceaccounts services services/status'),
      rule(READ, '', 'bindings events limitranges namespaces/status pods/log pods/status replicationcontrollers/status resourcequotas resourcequotas/status'),
      rule(READ, '', 'namespaces'),
      rule(READ, DISCOVERY, 'endpointslices'),
      rule(READ, 'apps', 'controllerrevisions daemonsets daemonsets/status deployments deployments/scale deployments/status replicasets replicasets/scale replicasets/status statefulsets statefulsets/scale statefulsets/status'),
      rule(READ, 'autoscaling', 'horizontalpodautoscalers horizontalpodautoscalers/status'),
      rule(READ, 'batch', 'cronjobs cronjobs/status jobs jobs/status'),
      rule(READ, 'extensions', 'daemonsets daemonsets/status deployments deployments/scale deployments/status ingresses ingresses/status networkpolicies replicasets replicasets/scale replicasets/status replicationcontrollers/scale'),
      rule(READ, 'policy', 'poddisruptionbudgets poddisruptionbudgets/status'),
      rule(READ, NETWORKING, 'ingresses ingresses/status networkpolicies'),
    ], { [AGGREGATE_TO_VIEW]: 'true' }),
    clusterRole('system:auth-delegator', [
      rule('create', AUTHN, 'tokenreviews'),
      rule('create', AUTHZ, 'subjectaccessreviews'),
    ]),
    clusterRole('system:basic-user', [
      rule('create', AUTHZ, 'selfsubjectaccessreviews selfsubjectrulesreviews'),
      rule('create', AUTHN, 'selfsubjectreviews'),
    ]),
    clusterRole(`system:${CERTS}:certificatesigningrequests:nodeclient`, [rule('create', CERTS, 'certificatesigningrequests/nodeclient')]),
    clusterRole(`system:${CERTS}:certificatesigningrequests:selfnodeclient`, [rule('create', CERTS, 'certificatesigningrequests/selfnodeclient')]),
    clusterRole(`system:${CERTS}:kube-apiserver-client-approver`, [rule('approve', CERTS, 'signers', SIGNER_KUBE_APISERVER_CLIENT)]),
    clusterRole(`system:${CERTS}:kube-apiserver-client-kubelet-approver`, [rule('approve', CERTS, 'signers', SIGNER_KUBE_APISERVER_CLIENT_KUBELET)]),
    clusterRole(`system:${CERTS}:kubelet-serving-approver`, [rule('approve', CERTS, 'signers', SIGNER_KUBELET_SERVING)]),
    clusterRole(`system:${CERTS}:legacy-unknown-approver`, [rule('approve', CERTS, 'signers', SIGNER_LEGACY_UNKNOWN)]),
    clusterRole('system:discovery', [urls('get', '/api /api/* /apis /apis/* /healthz /livez /openapi /openapi/* /readyz /version /version/')]),
    clusterRole('system:heapster', [
      rule(READ, '', 'events namespaces nodes pods'),
      rule(READ, 'extensions', 'deployments'),
    ]),
    clusterRole('system:kube-aggregator', [rule(READ, '', 'endpoints services')]),
    clusterRole('system:kube-controller-manager', [
      eventsRule(),
      rule('create', COORD, 'leases'),
      rule('get update', COORD, 'leases', 'kube-controller-manager'),
      rule('create', '', 'secrets serviceaccounts'),
      rule('delete', '', 'secrets'),
      rule('get', '', 'configmaps namespaces secrets serviceaccounts'),
      rule('update', '', 'secrets serviceaccounts'),
      rule('create', AUTHN, 'tokenreviews'),
      rule('create', AUTHZ, 'subjectaccessreviews'),
      rule('list watch', '*', '*'),
      rule('create', '', 'serviceaccounts/token'),
    ]),
    clusterRole('system:kube-dns', [rule('list watch', '', 'endpoints services')]),
    clusterRole('system:kube-scheduler', [
      eventsRule(),
      rule('create', COORD, 'leases'),
      rule('get update', COORD, 'leases', 'kube-scheduler'),
      rule(READ, '', 'nodes'),
      rule('delete get list watch', '', 'pods'),
      rule('create', '', 'bindings pods/binding'),
      rule('patch update', '', 'pods/status'),
      rule(READ, '', 'replicationcontrollers services'),
      rule(READ, ['apps', 'extensions'], 'replicasets'),
      rule(READ, 'apps', 'statefulsets'),
      rule(READ, 'policy', 'poddisruptionbudgets'),
      rule(READ, '', 'persistentvolumeclaims persistentvolumes'),
      rule('create', AUTHN, 'tokenreviews'),
      rule('create', AUTHZ, 'subjectaccessreviews'),
      rule(READ, STORAGE, 'csinodes'),
      rule(READ, '', 'namespaces'),
      rule(READ, STORAGE, 'csidrivers'),
      rule(READ, STORAGE, 'csistoragecapacities'),
    ]),
    clusterRole('system:kubelet-api-admin', [
      rule(READ, '', 'nodes'),
      rule('proxy', '', 'nodes'),
      rule('*', '', 'nodes/log nodes/metrics nodes/proxy nodes/stats'),
    ]),
    clusterRole('system:monitoring', [urls('get', '/healthz /healthz/* /livez /livez/* /metrics /metrics/slis /readyz /readyz/*')]),
    clusterRole('system:node', nodeRules()),
    clusterRole('system:node-bootstrapper', [rule('create get list watch', CERTS, 'certificatesigningrequests')]),
    clusterRole('system:node-problem-detector', [
      rule('get', '', 'nodes'),
      rule('patch', '', 'nodes/status'),
      eventsRule(),
    ]),
    clusterRole('system:node-proxier', [
      rule('list watch', '', 'endpoints services'),
      rule(READ, '', 'nodes'),
      eventsRule(),
      rule('list watch', DISCOVERY, 'endpointslices'),
    ]),
    clusterRole('system:persistent-volume-provisioner', [
      rule('create delete get list watch', '', 'persistentvolumes'),
      rule('get list update watch', '', 'persistentvolumeclaims'),
      rule(READ, STORAGE, 'storageclasses'),
      rule('watch', '', 'events'),
      eventsRule(),
    ]),
    clusterRole('system:public-info-viewer', [urls('get', '/healthz /livez /readyz /version /version/')]),
    clusterRole('system:service-account-issuer-discovery', [urls('get', '/.well-known/openid-configuration /openid/v1/jwks')]),
    clusterRole('system:volume-scheduler', [
      rule('get list patch update watch', '', 'persistentvolumes'),
      rule(READ, STORAGE, 'storageclasses'),
      rule('get list patch update watch', '', 'persistentvolumeclaims'),
    ]),
    aggregatedClusterRole('view', AGGREGATE_TO_VIEW, { [AGGREGATE_TO_EDIT]: 'true' }),
  ]
}

/** One ClusterRole per built-in controller: name (without `system:controller:`) → rules. */
function controllerRules(): Array<[string, PolicyRule[]]> {
  return [
    ['attachdetach-controller', [
      rule('list watch', '', 'persistentvolumeclaims persistentvolumes'),
      rule(READ, '', 'nodes'),
      rule('patch update', '', 'nodes/status'),
      rule('list watch', '', 'pods'),
      eventsRule(),
      rule('create delete get list watch', STORAGE, 'volumeattachments'),
      rule(READ, STORAGE, 'csidrivers'),
      rule(READ, STORAGE, 'csinodes'),
    ]],
    ['certificate-controller', [
      rule('delete get list watch', CERTS, 'certificatesigningrequests'),
      rule('update', CERTS, 'certificatesigningrequests/approval certificatesigningrequests/status'),
      rule('approve', CERTS, 'signers', SIGNER_KUBE_APISERVER_CLIENT_KUBELET),
      rule('sign', CERTS, 'signers', `${SIGNER_KUBE_APISERVER_CLIENT} ${SIGNER_KUBE_APISERVER_CLIENT_KUBELET} ${SIGNER_KUBELET_SERVING} ${SIGNER_LEGACY_UNKNOWN}`),
      rule('create', AUTHZ, 'subjectaccessreviews'),
      eventsRule(),
    ]],
    ['clusterrole-aggregation-controller', [rule('escalate get list patch update watch', RBAC_GROUP, 'clusterroles')]],
    ['cronjob-controller', [
      rule('get list update watch', 'batch', 'cronjobs'),
      rule('create delete get list patch update watch', 'batch', 'jobs'),
      rule('update', 'batch', 'cronjobs/status'),
      rule('update', 'batch', 'cronjobs/finalizers'),
      rule('delete list watch', '', 'pods'),
      eventsRule(),
    ]],
    ['daemon-set-controller', [
      rule(READ, ['apps', 'extensions'], 'daemonsets'),
      rule('update', ['apps', 'extensions'], 'daemonsets/status'),
      rule('update', ['apps', 'extensions'], 'daemonsets/finalizers'),
      rule('list watch', '', 'nodes'),
      rule('create delete list patch watch', '', 'pods'),
      rule('create', '', 'pods/binding'),
      rule('create delete get list patch update watch', 'apps', 'controllerrevisions'),
      eventsRule(),
    ]],
    ['deployment-controller', [
      rule('get list update watch', ['apps', 'extensions'], 'deployments'),
      rule('update', ['apps', 'extensions'], 'deployments/status'),
      rule('update', ['apps', 'extensions'], 'deployments/finalizers'),
      rule('create delete get list patch update watch', ['apps', 'extensions'], 'replicasets'),
      rule('get list update watch', '', 'pods'),
      eventsRule(),
    ]],
    ['device-taint-eviction-controller', [
      rule('delete get list watch', '', 'pods'),
      rule('patch update', '', 'pods/status'),
      rule(READ, RESOURCE, 'resourceclaims'),
      rule(READ, RESOURCE, 'resourceslices'),
      rule(READ, RESOURCE, 'deviceclasses'),
      eventsRule(),
    ]],
    ['disruption-controller', [
      rule(READ, ['apps', 'extensions'], 'deployments'),
      rule(READ, ['apps', 'extensions'], 'replicasets'),
      rule(READ, '', 'replicationcontrollers'),
      rule(READ, 'policy', 'poddisruptionbudgets'),
      rule(READ, 'apps', 'statefulsets'),
      rule('update', 'policy', 'poddisruptionbudgets/status'),
      rule('patch update', '', 'pods/status'),
      rule('get', '*', '*/scale'),
      eventsRule(),
    ]],
    ['endpoint-controller', [
      rule(READ, '', 'pods services'),
      rule('create delete get list update watch', '', 'endpoints'),
      rule('create', '', 'endpoints/restricted'),
      eventsRule(),
    ]],
    ['endpointslice-controller', [
      rule(READ, '', 'nodes pods services'),
      rule('update', '', 'services/finalizers'),
      rule('create delete get list update watch', DISCOVERY, 'endpointslices'),
      eventsRule(),
    ]],
    ['endpointslicemirroring-controller', [
      rule(READ, '', 'endpoints services'),
      rule('update', '', 'services/finalizers'),
      rule('update', '', 'endpoints/finalizers'),
      rule('create delete get list update watch', DISCOVERY, 'endpointslices'),
      eventsRule(),
    ]],
    ['ephemeral-volume-controller', [
      rule(READ, '', 'pods'),
      rule('update', '', 'pods/finalizers'),
      rule('create get list watch', '', 'persistentvolumeclaims'),
      eventsRule(),
    ]],
    ['expand-controller', [
      rule('get list patch update watch', '', 'persistentvolumes'),
      rule('patch update', '', 'persistentvolumeclaims/status'),
      rule(READ, '', 'persistentvolumeclaims'),
      eventsRule(),
    ]],
    ['generic-garbage-collector', [
      rule('delete get list patch update watch', '*', '*'),
      eventsRule(),
    ]],
    ['horizontal-pod-autoscaler', [
      rule(READ, 'autoscaling', 'horizontalpodautoscalers'),
      rule('update', 'autoscaling', 'horizontalpodautoscalers/status'),
      rule('get update', '*', '*/scale'),
      rule('list watch', '', 'pods'),
      rule('list watch', METRICS, 'pods'),
      rule(READ, CUSTOM_METRICS, '*'),
      rule(READ, EXTERNAL_METRICS, '*'),
      eventsRule(),
    ]],
    ['job-controller', [
      rule('get list patch update watch', 'batch', 'jobs'),
      rule('update', 'batch', 'jobs/status'),
      rule('update', 'batch', 'jobs/finalizers'),
      rule('create delete list patch watch', '', 'pods'),
      eventsRule(),
    ]],
    ['legacy-service-account-token-cleaner', [
      rule('get', '', 'configmaps', 'kube-apiserver-legacy-service-account-token-tracking'),
      rule('delete patch', '', 'secrets'),
    ]],
    ['namespace-controller', [
      rule('delete get list watch', '', 'namespaces'),
      rule('update', '', 'namespaces/finalize namespaces/status'),
      rule('delete deletecollection get list watch', '*', '*'),
    ]],
    ['node-controller', [
      rule('delete get list patch update watch', '', 'nodes'),
      rule('patch update', '', 'nodes/status'),
      rule('patch update', '', 'pods/status'),
      rule('delete get list watch', '', 'pods'),
      eventsRule(),
    ]],
    ['persistent-volume-binder', [
      rule('create delete get list update watch', '', 'persistentvolumes'),
      rule('update', '', 'persistentvolumes/status'),
      rule('get list update watch', '', 'persistentvolumeclaims'),
      rule('update', '', 'persistentvolumeclaims/status'),
      rule('create delete get list watch', '', 'pods'),
      rule(READ, STORAGE, 'storageclasses'),
      rule('list watch', '', 'nodes'),
      eventsRule(),
      rule('watch', '', 'events'),
    ]],
    ['pod-garbage-collector', [
      rule('delete list watch', '', 'pods'),
      rule(READ, '', 'nodes'),
      rule('patch', '', 'pods/status'),
    ]],
    ['pv-protection-controller', [
      rule('get list update watch', '', 'persistentvolumes'),
      eventsRule(),
    ]],
    ['pvc-protection-controller', [
      rule('get list update watch', '', 'persistentvolumeclaims'),
      rule('update', '', 'persistentvolumeclaims/status'),
      rule(READ, '', 'pods'),
      eventsRule(),
    ]],
    ['replicaset-controller', [
      rule('get list update watch', ['apps', 'extensions'], 'replicasets'),
      rule('update', ['apps', 'extensions'], 'replicasets/status'),
      rule('update', ['apps', 'extensions'], 'replicasets/finalizers'),
      rule('create delete list patch watch', '', 'pods'),
      eventsRule(),
    ]],
    ['replication-controller', [
      rule('get list update watch', '', 'replicationcontrollers'),
      rule('update', '', 'replicationcontrollers/status'),
      rule('update', '', 'replicationcontrollers/finalizers'),
      rule('create delete list patch watch', '', 'pods'),
      eventsRule(),
    ]],
    ['resource-claim-controller', [
      rule(READ, '', 'pods'),
      rule('update', '', 'pods/finalizers'),
      rule('create delete get list watch', RESOURCE, 'resourceclaims'),
      rule('patch update', RESOURCE, 'resourceclaims resourceclaims/status'),
      rule('patch update', '', 'pods/status'),
      eventsRule(),
      rule('patch update', RESOURCE, 'resourceclaims/binding'),
    ]],
    ['resourcequota-controller', [
      rule('list watch', '*', '*'),
      rule('update', '', 'resourcequotas/status'),
      eventsRule(),
    ]],
    ['root-ca-cert-publisher', [
      rule('create update', '', 'configmaps'),
      eventsRule(),
    ]],
    ['route-controller', [
      rule('list watch', '', 'nodes'),
      rule('patch', '', 'nodes/status'),
      eventsRule(),
    ]],
    ['selinux-warning-controller', [
      eventsRule(),
      rule(READ, '', 'persistentvolumes'),
      rule(READ, '', 'persistentvolumeclaims'),
      rule(READ, '', 'pods'),
      rule(READ, STORAGE, 'csidrivers'),
    ]],
    ['service-account-controller', [
      rule('create', '', 'serviceaccounts'),
      eventsRule(),
    ]],
    ['service-cidrs-controller', [
      rule('get list patch update watch', NETWORKING, 'servicecidrs'),
      rule('patch update', NETWORKING, 'servicecidrs/finalizers'),
      rule('patch update', NETWORKING, 'servicecidrs/status'),
      rule(READ, NETWORKING, 'ipaddresses'),
      eventsRule(),
    ]],
    ['service-controller', [
      rule(READ, '', 'services'),
      rule('patch update', '', 'services/status'),
      rule('list watch', '', 'nodes'),
      eventsRule(),
    ]],
    ['statefulset-controller', [
      rule('list watch', '', 'pods'),
      rule(READ, 'apps', 'statefulsets'),
      rule('update', 'apps', 'statefulsets/status'),
      rule('update', 'apps', 'statefulsets/finalizers'),
      rule('create delete get patch update', '', 'pods'),
      rule('create delete get list patch update watch', 'apps', 'controllerrevisions'),
      rule('create get list watch', '', 'persistentvolumeclaims'),
      rule('delete update', '', 'persistentvolumeclaims'),
      rule('update', '', 'pods/finalizers'),
      eventsRule(),
    ]],
    ['ttl-after-finished-controller', [
      rule('delete get list watch', 'batch', 'jobs'),
      eventsRule(),
    ]],
    ['ttl-controller', [
      rule('list patch update watch', '', 'nodes'),
      eventsRule(),
    ]],
    ['validatingadmissionpolicy-status-controller', [
      rule(READ, ADMISSIONREG, 'validatingadmissionpolicies'),
      rule('get patch update', ADMISSIONREG, 'validatingadmissionpolicies/status'),
      eventsRule(),
    ]],
    ['volumeattributesclass-protection-controller', [
      rule(READ, '', 'persistentvolumeclaims'),
      rule(READ, '', 'persistentvolumes'),
      rule('get list update watch', STORAGE, 'volumeattributesclasses'),
      eventsRule(),
    ]],
  ]
}

export interface BootstrapPolicy {
  clusterRoles: RoleObject[]
  clusterRoleBindings: BindingObject[]
  /** Namespaced Roles (orch-system, orch-public). */
  roles: RoleObject[]
  roleBindings: BindingObject[]
  /** Namespaces the namespaced defaults live in (created first when absent). */
  namespaces: string[]
}

/** A fresh copy of the whole default policy (callers may mutate it). */
export function bootstrapPolicy(): BootstrapPolicy {
  const controllers = controllerRules()
  const crs = [...clusterRoles(), ...controllers.map(([n, rules]) => clusterRole(`system:controller:${n}`, rules))]
  const crbs = [
    clusterBinding('cluster-admin', 'cluster-admin', [group('system:masters')]),
    clusterBinding('system:monitoring', 'system:monitoring', [group('system:monitoring')]),
    clusterBinding('system:basic-user', 'system:basic-user', [group('system:authenticated')]),
    clusterBinding('system:discovery', 'system:discovery', [group('system:authenticated')]),
    clusterBinding('system:public-info-viewer', 'system:public-info-viewer', [group('system:authenticated'), group('system:unauthenticated')]),
    clusterBinding('system:service-account-issuer-discovery', 'system:service-account-issuer-discovery', [group('system:serviceaccounts')]),
    clusterBinding('system:node-proxier', 'system:node-proxier', [user('system:kube-proxy')]),
    clusterBinding('system:kube-controller-manager', 'system:kube-controller-manager', [user('system:kube-controller-manager')]),
    clusterBinding('system:kube-dns', 'system:kube-dns', [sa(SYSTEM_NAMESPACE, 'kube-dns')]),
    clusterBinding('system:kube-scheduler', 'system:kube-scheduler', [user('system:kube-scheduler')]),
    clusterBinding('system:volume-scheduler', 'system:volume-scheduler', [user('system:kube-scheduler')]),
    clusterBinding('system:node', 'system:node', []),
    ...controllers.map(([n]) => clusterBinding(`system:controller:${n}`, `system:controller:${n}`, [sa(SYSTEM_NAMESPACE, n)])),
  ]
  const S = SYSTEM_NAMESPACE
  const P = PUBLIC_NAMESPACE
  const leaderLocking = (): PolicyRule[] => [rule('create get list update watch', COORD, 'leases'), rule('create get list update watch', COORD, 'leasecandidates')]
  const roles = [
    role(P, 'system:controller:bootstrap-signer', [
      rule(READ, '', 'configmaps'),
      rule('update', '', 'configmaps', 'cluster-info'),
      eventsRule(),
    ]),
    role(S, 'extension-apiserver-authentication-reader', [rule(READ, '', 'configmaps', 'extension-apiserver-authentication')]),
    role(S, 'system::leader-locking-kube-controller-manager', leaderLocking()),
    role(S, 'system::leader-locking-kube-scheduler', leaderLocking()),
    role(S, 'system:controller:bootstrap-signer', [rule(READ, '', 'secrets')]),
    role(S, 'system:controller:cloud-provider', [rule('create get list watch', '', 'configmaps')]),
    role(S, 'system:controller:token-cleaner', [rule('delete get list watch', '', 'secrets'), eventsRule()]),
  ]
  const roleBindings = [
    roleBinding(P, 'system:controller:bootstrap-signer', 'system:controller:bootstrap-signer', [sa(S, 'bootstrap-signer')]),
    roleBinding(S, 'system::extension-apiserver-authentication-reader', 'extension-apiserver-authentication-reader', [user('system:kube-controller-manager'), user('system:kube-scheduler')]),
    roleBinding(S, 'system::leader-locking-kube-controller-manager', 'system::leader-locking-kube-controller-manager', [user('system:kube-controller-manager'), sa(S, 'kube-controller-manager'), sa(S, 'leader-election-controller')]),
    roleBinding(S, 'system::leader-locking-kube-scheduler', 'system::leader-locking-kube-scheduler', [user('system:kube-scheduler'), sa(S, 'kube-scheduler')]),
    roleBinding(S, 'system:controller:bootstrap-signer', 'system:controller:bootstrap-signer', [sa(S, 'bootstrap-signer')]),
    roleBinding(S, 'system:controller:cloud-provider', 'system:controller:cloud-provider', [sa(S, 'cloud-provider')]),
    roleBinding(S, 'system:controller:token-cleaner', 'system:controller:token-cleaner', [sa(S, 'token-cleaner')]),
  ]
  return { clusterRoles: crs, clusterRoleBindings: crbs, roles, roleBindings, namespaces: [S, P] }
}

/** Every default object, roles before bindings, cluster-scoped before namespaced. */
export function bootstrapObjects(): RbacObject[] {
  const p = bootstrapPolicy()
  return [...p.clusterRoles, ...p.clusterRoleBindings, ...p.roles, ...p.roleBindings]
}
