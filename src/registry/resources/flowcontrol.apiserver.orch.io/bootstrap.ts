// The bootstrap APF objects (mandatory and suggested FlowSchemas and PriorityLevelConfigurations), in defaulted v1 form.
import type { Obj } from '../../define.js'

export const FLOWCONTROL_GROUP = 'flowcontrol.apiserver.orch.io'
export const FLOWCONTROL_API_VERSION = `${FLOWCONTROL_GROUP}/v1`
/** Upstream `apf.kubernetes.io/autoupdate-spec`. */
export const AUTO_UPDATE_ANNOTATION = 'apf.orch.io/autoupdate-spec'
/** Field manager of the config producer (post-start hook) and of the status writer. */
export const CONFIG_PRODUCER_FIELD_MANAGER = 'api-priority-and-fairness-config-producer-v1'
export const CONFIG_CONSUMER_FIELD_MANAGER = 'api-priority-and-fairness-config-consumer-v1'

export const FLOW_SCHEMA_NAME_EXEMPT = 'exempt'
export const FLOW_SCHEMA_NAME_CATCH_ALL = 'catch-all'
export const PRIORITY_LEVEL_NAME_EXEMPT = 'exempt'
export const PRIORITY_LEVEL_NAME_CATCH_ALL = 'catch-all'
export const FLOW_SCHEMA_MAX_MATCHING_PRECEDENCE = 10000
export const FLOW_SCHEMA_DEFAULT_MATCHING_PRECEDENCE = 1000

/** The namespace upstream calls kube-system. */
const SYSTEM_NAMESPACE = 'orch-system'
const MASTERS = 'system:masters'
const AUTHENTICATED = 'system:authenticated'
const UNAUTHENTICATED = 'system:unauthenticated'
const NODES = 'system:nodes'
const SERVICE_ACCOUNTS = 'system:serviceaccounts'
const KUBE_CONTROLLER_MANAGER = 'system:kube-controller-manager'
const KUBE_SCHEDULER = 'system:kube-scheduler'

const group = (name: string): Obj => ({ kind: 'Group', group: { name } })
const user = (name: string): Obj => ({ kind: 'User', user: { name } })
const systemServiceAccount = (name: string): Obj => ({ kind: 'ServiceAccount', serviceAccount: { namespace: SYSTEM_NAMESPACE, name } })

function resourceRule(verbs: string[], apiGroups: string[], resources: string[], namespaces: string[], clusterScope: boolean): Obj {
  const r: Obj = { verbs, apiGroups, resources }
  if (clusterScope) r.clusterScope = true
  r.namespaces = namespaces
  return r
}
const nonResourceRule = (verbs: string[], nonResourceURLs: string[]): Obj => ({ verbs, nonResourceURLs })

const everything = (subjects: Obj[]): Obj => ({
  subjects,
  resourceRules: [resourceRule(['*'], ['*'], ['*'], ['*'], true)],
  nonResourceRules: [nonResourceRule(['*'], ['*'])],
})

function flowSchema(name: string, pl: string, precedence: number, distinguisher: 'ByUser' | 'ByNamespace' | '', ...rules: Obj[]): Obj {
  const spec: Obj = { priorityLevelConfiguration: { name: pl }, matchingPrecedence: precedence }
  if (distinguisher !== '') spec.distinguisherMethod = { type: distinguisher }
  spec.rules = rules
  return { apiVersion: FLOWCONTROL_API_VERSION, kind: 'FlowSchema', metadata: { name, annotations: { [AUTO_UPDATE_ANNOTATION]: 'true' } }, spec }
}

function priorityLevel(name: string, spec: Obj): Obj {
  return { apiVersion: FLOWCONTROL_API_VERSION, kind: 'PriorityLevelConfiguration', metadata: { name, annotations: { [AUTO_UPDATE_ANNOTATION]: 'true' } }, spec }
}

function queued(shares: number, lendable: number, queues: number, handSize: number, queueLengthLimit: number): Obj {
  return {
    type: 'Limited',
    limited: { nominalConcurrencyShares: shares, lendablePercent: lendable, limitResponse: { type: 'Queue', queuing: { queues, handSize, queueLengthLimit } } },
  }
}

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object') {
    for (const k of Object.keys(v)) deepFreeze((v as Obj)[k])
    Object.freeze(v)
  }
  return v
}

// ---- mandatory ----

export const mandatoryPriorityLevels: readonly Obj[] = deepFreeze([
  priorityLevel(PRIORITY_LEVEL_NAME_EXEMPT, { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } }),
  priorityLevel(PRIORITY_LEVEL_NAME_CATCH_ALL, { type: 'Limited', limited: { nominalConcurrencyShares: 5, lendablePercent: 0, limitResponse: { type: 'Reject' } } }),
])

export const mandatoryFlowSchemas: readonly Obj[] = deepFreeze([
  flowSchema(FLOW_SCHEMA_NAME_EXEMPT, PRIORITY_LEVEL_NAME_EXEMPT, 1, '', everything([group(MASTERS)])),
  flowSchema(FLOW_SCHEMA_NAME_CATCH_ALL, PRIORITY_LEVEL_NAME_CATCH_ALL, FLOW_SCHEMA_MAX_MATCHING_PRECEDENCE, 'ByUser', everything([group(UNAUTHENTICATED), group(AUTHENTICATED)])),
])

// ---- suggested ----

export const suggestedPriorityLevels: readonly Obj[] = deepFreeze([
  priorityLevel('system', queued(30, 33, 64, 6, 50)),
  priorityLevel('node-high', queued(40, 25, 64, 6, 50)),
  priorityLevel('leader-election', queued(10, 0, 16, 4, 50)),
  priorityLevel('workload-high', queued(40, 50, 128, 6, 50)),
  priorityLevel('workload-low', queued(100, 90, 128, 6, 50)),
  priorityLevel('global-default', queued(20, 50, 128, 6, 50)),
])

export const suggestedFlowSchemas: readonly Obj[] = deepFreeze([
  flowSchema('system-nodes', 'system', 500, 'ByUser', everything([group(NODES)])),
  flowSchema('system-node-high', 'node-high', 400, 'ByUser', {
    subjects: [group(NODES)],
    resourceRules: [
      resourceRule(['*'], [''], ['nodes', 'nodes/status'], ['*'], true),
      resourceRule(['*'], ['coordination.orch.io'], ['leases'], ['*'], false),
    ],
  }),
  flowSchema('probes', PRIORITY_LEVEL_NAME_EXEMPT, 2, '', {
    subjects: [group(UNAUTHENTICATED), group(AUTHENTICATED)],
    nonResourceRules: [nonResourceRule(['get'], ['/healthz', '/readyz', '/livez'])],
  }),
  flowSchema('system-leader-election', 'leader-election', 100, 'ByUser', {
    subjects: [user(KUBE_CONTROLLER_MANAGER), user(KUBE_SCHEDULER), systemServiceAccount('*')],
    resourceRules: [resourceRule(['get', 'create', 'update'], ['coordination.orch.io'], ['leases'], ['*'], false)],
  }),
  flowSchema('kube-controller-manager', 'workload-high', 800, 'ByNamespace', everything([user(KUBE_CONTROLLER_MANAGER)])),
  flowSchema('kube-scheduler', 'workload-high', 800, 'ByNamespace', everything([user(KUBE_SCHEDULER)])),
  flowSchema('kube-system-service-accounts', 'workload-high', 900, 'ByNamespace', everything([systemServiceAccount('*')])),
  flowSchema('service-accounts', 'workload-low', 9000, 'ByUser', everything([group(SERVICE_ACCOUNTS)])),
  flowSchema('global-default', 'global-default', 9900, 'ByUser', everything([group(UNAUTHENTICATED), group(AUTHENTICATED)])),
])

export function mandatoryFlowSchema(name: string): Obj | undefined { return mandatoryFlowSchemas.find((o) => o.metadata.name === name) }
export function mandatoryPriorityLevel(name: string): Obj | undefined { return mandatoryPriorityLevels.find((o) => o.metadata.name === name) }

/** A deep copy of plain JSON data. */
export function cloneJSON<T>(v: T): T { return v === undefined ? v : JSON.parse(JSON.stringify(v)) as T }
