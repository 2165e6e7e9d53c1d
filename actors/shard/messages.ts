// Messages between front-ends (and the main thread) and a shard actor: requests, replies, watch events.

/** Put an object: `expect` is the resourceVersion the writer read (0 = the key must not exist). */
export interface ObjectPut { id: number; op: 'objectPut'; key: string; expect: number; attrs: string; json: string }
/** Remove an object if it is still at `expect`; `json` is the final state that the DELETED event carries. */
export interface ObjectDelete { id: number; op: 'objectDelete'; key: string; expect: number; attrs: string; json: string }
/**
 * Start receiving the events of keys under `prefix` (a type prefix `group/resource/`). With `attrsOnly` the events
 * carry the records cut after their attributes (`recordWithoutObject`) and no previous state, for listeners that read
 * attributes only: a big object then does not travel to them. A port's subscription is never narrowed again: once
 * subscribed without `attrsOnly`, the prefix's events come whole.
 */
export interface WatchSubscribe { id: number; op: 'watchSubscribe'; prefix: string; attrsOnly?: boolean }
export interface WatchUnsubscribe { id: number; op: 'watchUnsubscribe'; prefix: string }
/** Events of `prefix` after `rv` from the ring; `expired` when the ring no longer reaches back that far. */
export interface WatchBacklog { id: number; op: 'watchBacklog'; prefix: string; rv: number; /** expired also when the version stopped being current longer ago than this */ maxAgeMs?: number }

export type ShardRequest = ObjectPut | ObjectDelete | WatchSubscribe | WatchUnsubscribe | WatchBacklog

export type FailReason = 'conflict' | 'exists' | 'notfound' | 'expired' | 'internal'

export interface ReplyOk { id: number; ok: true; rv: number; events?: WatchEvent[]; oldest?: number }
export interface ReplyFail { id: number; ok: false; reason: FailReason; rv?: number; message?: string }
export type ShardReply = ReplyOk | ReplyFail

/** [type, key, rv, record bytes, previous record bytes or null] */
export type WatchEvent = [type: 'ADDED' | 'MODIFIED' | 'DELETED', key: string, rv: number, rec: Uint8Array, prev: Uint8Array | null]

/** Slots of the shared Int32/BigInt arrays the main thread hands every thread. */
export const COUNTER_SLOT = 0
/** Watermark of shard k lives at slot 1 + k of the same BigInt64Array. */
export function watermarkSlot(shard: number): number { return 1 + shard }
/**
 * After the watermarks: a count of namespace writes, bumped by the shard that holds namespaces once such a write is
 * durable and before it is acknowledged, so a thread may keep namespace states while it does not move.
 */
export function namespaceWritesSlot(shards: number): number { return 1 + shards }
/**
 * Then a count of PriorityClass writes, bumped the same way: the Priority admission plugin keeps its view of the
 * classes (read on every pod create) while it does not move.
 */
export function priorityClassWritesSlot(shards: number): number { return 2 + shards }
/**
 * Then a count of ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding writes, bumped the same way: the
 * policy admission plugin keeps its compiled policies and bindings (asked on every write) while it does not move.
 */
export function admissionPolicyWritesSlot(shards: number): number { return 3 + shards }
/**
 * Then a count of LimitRange writes, bumped the same way: the LimitRanger admission plugin keeps its view of the
 * limit ranges (asked on every pod create) while it does not move.
 */
export function limitRangeWritesSlot(shards: number): number { return 4 + shards }
/**
 * Then a count of ResourceQuota creations and deletions (not their updates: admission rewrites status.used on every
 * admitted write in a namespace with quotas), bumped the same way: the ResourceQuota admission plugin keeps the set of
 * namespaces that have quotas while it does not move.
 */
export function resourceQuotaSetWritesSlot(shards: number): number { return 5 + shards }
/**
 * Then a count of ServiceAccount writes, bumped the same way: the ServiceAccount admission plugin keeps the accounts it
 * looked up (one per pod create) while it does not move.
 */
export function serviceAccountWritesSlot(shards: number): number { return 6 + shards }
/**
 * Then a count of CustomResourceDefinition writes, bumped the same way: every thread's registry keeps the custom
 * resource types it serves while it does not move (src/registry/custom.ts).
 */
export function crdWritesSlot(shards: number): number { return 7 + shards }
/**
 * Then a count of MutatingWebhookConfiguration and ValidatingWebhookConfiguration writes, bumped the same way: the
 * webhook admission plugins keep their compiled webhooks (asked on every write) while it does not move.
 */
export function webhookConfigWritesSlot(shards: number): number { return 8 + shards }
/** Slots of the counters array for `shards` shards. */
export function counterSlots(shards: number): number { return 9 + shards }
/** The type prefix of namespaces (keys `/namespaces//<name>`). */
export const NAMESPACES_PREFIX = '/namespaces/'
/** The type prefix of PriorityClasses. */
export const PRIORITY_CLASSES_PREFIX = 'scheduling.orch.io/priorityclasses/'
/** The type prefixes of ValidatingAdmissionPolicies and their bindings. */
export const ADMISSION_POLICIES_PREFIX = 'admissionregistration.orch.io/validatingadmissionpolicies/'
export const ADMISSION_POLICY_BINDINGS_PREFIX = 'admissionregistration.orch.io/validatingadmissionpolicybindings/'
/** The type prefixes of the webhook configurations. */
export const MUTATING_WEBHOOKS_PREFIX = 'admissionregistration.orch.io/mutatingwebhookconfigurations/'
export const VALIDATING_WEBHOOKS_PREFIX = 'admissionregistration.orch.io/validatingwebhookconfigurations/'
/** The type prefixes of LimitRanges and ResourceQuotas (core group). */
export const LIMIT_RANGES_PREFIX = '/limitranges/'
export const RESOURCE_QUOTAS_PREFIX = '/resourcequotas/'
/** The type prefix of ServiceAccounts. */
export const SERVICE_ACCOUNTS_PREFIX = '/serviceaccounts/'
/** The type prefix of CustomResourceDefinitions. */
export const CRDS_PREFIX = 'apiextensions.orch.io/customresourcedefinitions/'
