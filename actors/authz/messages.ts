// Messages between front-ends and the authz actor, and the shared layout of the authz version counters.

/** The attributes upstream's authorizers see (authorizer.Attributes). */
export interface Attributes {
  user: string
  groups: string[]
  uid: string
  extra?: Record<string, string[]>
  verb: string
  isResourceRequest: boolean
  apiGroup: string
  apiVersion: string
  namespace: string
  resource: string
  subresource: string
  name: string
  path: string
  /** The list/watch field selector (the Node authorizer reads `spec.nodeName` from it). */
  fieldSelector?: string
  /** The list/watch label selector (sent to authorization webhooks). */
  labelSelector?: string
}

export type Decision = 'allow' | 'deny' | 'noopinion'

/**
 * Every request carries `versions`: per shard, the resourceVersion of the last authz-relevant write that shard
 * acknowledged before the request was sent. The actor answers only once it has applied every event up to them,
 * so no answer can miss a write that was already acknowledged to its writer.
 */
export interface AuthorizeRequest { id: number; op: 'authorize'; attrs: Attributes; versions: number[] }
/** The rules a user holds in a namespace (SelfSubjectRulesReview). */
export interface RulesRequest { id: number; op: 'rules'; user: string; groups: string[]; namespace: string; versions: number[] }
/** The escalation check of a Role/ClusterRole/RoleBinding/ClusterRoleBinding write (objects as JSON). */
export interface WriteCheckRequest { id: number; op: 'writeCheck'; user: string; groups: string[]; object: string; old?: string; versions: number[] }
export interface PingRequest { id: number; op: 'ping' }
/** A bearer token for the authentication webhook (only when --authentication-token-webhook-config-file is set). */
export interface TokenReviewRequest { id: number; op: 'tokenReview'; token: string; audiences: string[] }
export type AuthzRequest = AuthorizeRequest | RulesRequest | WriteCheckRequest | PingRequest | TokenReviewRequest

/** The authentication webhook's answer; `expires` (ms since the epoch) is how long it may be kept (0: not at all). */
export interface TokenReviewAnswer {
  ok: boolean
  user?: { username: string; uid: string; groups: string[]; extra?: Record<string, string[]> }
  audiences?: string[]
  error: string
  expires: number
}

export interface ResourceRule { verbs: string[]; apiGroups?: string[]; resources?: string[]; resourceNames?: string[] }
export interface NonResourceRule { verbs: string[]; nonResourceURLs?: string[] }
export interface RulesAnswer { resourceRules: ResourceRule[]; nonResourceRules: NonResourceRule[]; incomplete: boolean; evaluationError: string }
/** A Status that crossed the thread boundary (client.ts turns it back into an ApiError). */
export interface StatusLike { code: number; reason: string; message: string; details?: Record<string, unknown> }

export interface AuthzReply {
  id: number
  decision?: Decision
  reason?: string
  rules?: RulesAnswer
  /** writeCheck: the 403 to answer; absent when the write may go on */
  error?: StatusLike
  /** authorize: an authorizer's error (a failed webhook call); without an allow the request gets a 500 with it */
  failure?: string
  /** authorize: how long (ms) the decision may be cached, when a webhook with its own TTLs took part */
  ttl?: number
  tokenReview?: TokenReviewAnswer
}

// ---- the authz version counters (a BigInt64Array over a SharedArrayBuffer the main thread makes) ----

/** Slots: the RBAC version of shard s at s, the node-graph version of shard s at shards + s, the chain's generation last. */
export function authzVersionSlots(shards: number): number { return 2 * shards + 1 }
/** Bumped by the authz actor whenever its authorizer chain is replaced (--authorization-config reloads). */
export function chainGenerationSlot(shards: number): number { return 2 * shards }
export function rbacVersionSlot(shard: number): number { return shard }
export function graphVersionSlot(shards: number, shard: number): number { return shards + shard }

/** The types whose objects feed the RBAC index: [group, resource, kind]. */
export const RBAC_TYPES: ReadonlyArray<readonly [string, string, string]> = [
  ['rbac.authorization.orch.io', 'roles', 'Role'],
  ['rbac.authorization.orch.io', 'rolebindings', 'RoleBinding'],
  ['rbac.authorization.orch.io', 'clusterroles', 'ClusterRole'],
  ['rbac.authorization.orch.io', 'clusterrolebindings', 'ClusterRoleBinding'],
]

/** The types whose objects feed the Node authorizer's graph: [group, resource, kind]. */
export const GRAPH_TYPES: ReadonlyArray<readonly [string, string, string]> = [
  ['', 'pods', 'Pod'],
  ['', 'persistentvolumes', 'PersistentVolume'],
  ['storage.orch.io', 'volumeattachments', 'VolumeAttachment'],
]

export const typePrefixOf = (group: string, resource: string): string => `${group}/${resource}/`
