// Admission that needs the requesting user and live objects: the built-in plugins in upstream's order (LimitRanger,
// ServiceAccount, NodeRestriction, PodSecurity, Priority, the class defaulters, RuntimeClass, the certificate checks, ...; each in its
// own file), MutatingAdmissionWebhook, the RBAC escalation checks of role and binding writes, ValidatingAdmissionPolicy,
// ValidatingAdmissionWebhook, then ResourceQuota; each only when --enable-admission-plugins /
// --disable-admission-plugins leave it on (plugins.ts).
import { LOOPBACK_USER, nodeIdentity } from '../machinery/node-refs.js'
import { objectKey, recordObject, recordRv, splitKey, typePrefix } from '../machinery/storage-format.js'
import type { Obj, ResolvedDefinition } from '../registry/define.js'
import type { Store } from '../pipeline/store.js'
import type { RequestContext } from '../pipeline/context.js'
import type { AuthzClient } from '../../actors/authz/client.js'
import type { Registry } from '../registry/index.js'
import { admitNodeRestriction, type AdmissionOperation, type NodeRestrictionLookups } from './node-restriction.js'
import { admitPodPriority, priorityClassView, validatePriorityClassDefault, type PriorityClassView } from './priority.js'
import { admitPolicies, configurePolicyAdmission, policiesBound, type RequestKind } from './validating-policy.js'
import { limitRangeView, mutatePodLimits, validateLimits, type LimitRangeView } from './limit-ranger.js'
import { evaluatorFor, quotaState, type QuotaState } from './resource-quota.js'
import { evaluateQuota, type QuotaStore } from './quota-admission.js'
import { enabled } from './plugins.js'
import { admitPodSecurity, namespaceUpdateWarnings, podSecurityResource, validateNamespaceLabels, type NamespacePolicy } from './pod-security.js'
import { admitMutatingWebhooks, admitValidatingWebhooks, configureWebhookAdmission, mutatingWebhooksExist, validatingWebhooksExist } from './webhooks.js'
import { addDefaultTolerations } from './tolerations.js'
import { taintNewNode } from './node-taint.js'
import { defaultClaimClass, defaultIngressClass } from './default-class.js'
import { addProtectionFinalizer, PV_PROTECTION_FINALIZER, PVC_PROTECTION_FINALIZER, validateClaimResize } from './storage.js'
import { admitRuntimeClass, validateRuntimeClass } from './runtime-class.js'
import { admitPodNodeSelector, admitPodTolerations, checkPullAlways, denyAll, forcePullAlways, namespaceMissing } from './optional.js'
import { CERTIFICATES_GROUP, checkApproval, checkSigning, checkSubject, signingChanged, type Authorize } from './certificates.js'
import {
  admitPodServiceAccount, configureServiceAccountLookups, defaultAccountWait, lookupAccount, validateEphemeralServiceAccount,
  validatePodServiceAccount,
} from './service-account.js'

const RBAC_GROUP = 'rbac.authorization.orch.io'
const RBAC_WRITES = new Set(['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings'])

let store: Store | undefined
let authz: AuthzClient | undefined

/** The PodSecurity policy of a namespace, from the front-end's namespace cache (null: no pod-security labels). */
let namespaceSecurity: (ns: string) => NamespacePolicy | null = () => null

export function configurePodSecurityLookup(lookup: (ns: string) => NamespacePolicy | null): void {
  namespaceSecurity = lookup
}

/** Stores a new status of a stored object if it is still at `rv` (true), or reports that it changed (false). */
export type StatusWriter = (group: string, resource: string, old: Obj, next: Obj, rv: number) => Promise<boolean>
let writeStatus: StatusWriter | undefined

export function configureAdmissionChain(s: Store, a: AuthzClient, r: Registry, w?: StatusWriter): void {
  store = s
  authz = a
  writeStatus = w
  configurePolicyAdmission(s, r, a)
  configureWebhookAdmission(s)
  configureServiceAccountLookups(s)
}

/**
 * Writes whose object is not of the resource's kind (a Scale, a Binding, an Eviction): their objects do not flow back
 * into the write, so mutating webhooks are not called for them (validating ones are, see admitPolicyOnly).
 */
const FOREIGN_SUBRESOURCES = new Set(['scale', 'binding', 'eviction'])

/**
 * MutatingAdmissionWebhook for a create or update (after the built-in mutating plugins, as upstream orders them):
 * undefined when no webhook is called, else resolves to whether the webhooks changed `object` (in place). Call only
 * when the plugin is on and mutatingWebhooksExist() (the hot path's one comparison).
 */
export function admitMutatingHooks(ctx: RequestContext, def: ResolvedDefinition, operation: AdmissionOperation, object: Obj, oldObject?: Obj): Promise<boolean> | undefined {
  if (FOREIGN_SUBRESOURCES.has(ctx.info.subresource)) return undefined
  return admitMutatingWebhooks(ctx, def, operation, object, oldObject)
}
export { mutatingWebhooksExist }

/**
 * MutatingAdmissionWebhook for a write whose object is of another kind than the resource's (a scale's Scale): the
 * caller takes what it needs from `object` afterwards. Undefined when no webhook is called (or the plugin is off).
 */
export function admitMutatingHooksOn(ctx: RequestContext, def: ResolvedDefinition, operation: AdmissionOperation, kind: RequestKind, object: Obj, oldObject?: Obj): Promise<boolean> | undefined {
  if (!enabled.mutatingAdmissionWebhook || !mutatingWebhooksExist()) return undefined
  return admitMutatingWebhooks(ctx, def, operation, object, oldObject, undefined, kind)
}

function read(resource: string, namespace: string, name: string): Obj | undefined {
  if (!store) return undefined
  const rec = store.getFresh(store.shardFor('', resource), objectKey('', resource, namespace, name))
  return rec ? JSON.parse(recordObject(rec).toString('utf8')) as Obj : undefined
}

export const liveLookups: NodeRestrictionLookups = {
  getPod: (namespace, name) => read('pods', namespace, name),
  getNode: (name) => read('nodes', '', name),
}

const SCHEDULING_GROUP = 'scheduling.orch.io'
const PRIORITY_CLASSES_PREFIX = typePrefix(SCHEDULING_GROUP, 'priorityclasses')
const EMPTY_VIEW: PriorityClassView = { byName: new Map(), globalDefault: undefined }
/** The classes as last read, and the count of PriorityClass writes they were read at: while it stays, they stand. */
let classes: PriorityClassView = EMPTY_VIEW
let classesStamp = -1n

/** The PriorityClasses, read again only after a PriorityClass write was acknowledged (a pod create reads no record). */
function priorityClasses(): PriorityClassView {
  if (!store) return EMPTY_VIEW
  const stamp = store.priorityClassWrites()
  if (stamp === classesStamp) return classes
  const shard = store.shardFor(SCHEDULING_GROUP, 'priorityclasses')
  // A snapshot taken after the count was read holds every write it counts.
  store.snapshot(shard)
  const objs: Obj[] = []
  for (const { value } of store.range(shard, PRIORITY_CLASSES_PREFIX)) objs.push(JSON.parse(recordObject(value).toString('utf8')) as Obj)
  classes = priorityClassView(objs)
  classesStamp = stamp
  return classes
}

const LIMIT_RANGES_PREFIX = typePrefix('', 'limitranges')
/** LimitRanges by namespace (name order) as last read, and the count of LimitRange writes they were read at. */
let limitRanges = new Map<string, LimitRangeView[]>()
let limitRangesStamp = -1n

/** The LimitRanges of a namespace, undefined when it has none (read again only after a LimitRange write). */
function limitRangesIn(ns: string): readonly LimitRangeView[] | undefined {
  if (!store) return undefined
  const stamp = store.limitRangeWrites()
  if (stamp !== limitRangesStamp) {
    const shard = store.shardFor('', 'limitranges')
    store.snapshot(shard)
    const byNs = new Map<string, LimitRangeView[]>()
    for (const { key, value } of store.range(shard, LIMIT_RANGES_PREFIX)) {
      const { namespace } = splitKey(key)
      let list = byNs.get(namespace)
      if (list === undefined) { list = []; byNs.set(namespace, list) }
      list.push(limitRangeView(JSON.parse(recordObject(value).toString('utf8')) as Obj))
    }
    limitRanges = byNs
    limitRangesStamp = stamp
  }
  return limitRanges.get(ns)
}

const QUOTAS_PREFIX = typePrefix('', 'resourcequotas')
/** The namespaces that have ResourceQuotas, and the count of quota creations and deletions it was read at. */
let quotaNamespaces = new Set<string>()
let quotaNamespacesStamp = -1n

/** Whether a namespace has quotas (the set is read again only after a quota was created or deleted). */
function hasQuotas(ns: string): boolean {
  if (!store) return false
  const stamp = store.resourceQuotaSetWrites()
  if (stamp !== quotaNamespacesStamp) {
    const shard = store.shardFor('', 'resourcequotas')
    store.snapshot(shard)
    const set = new Set<string>()
    for (const { key } of store.range(shard, QUOTAS_PREFIX)) set.add(splitKey(key).namespace)
    quotaNamespaces = set
    quotaNamespacesStamp = stamp
  }
  return quotaNamespaces.has(ns)
}

/** The quotas of a namespace read fresh, and their status writes, for the quota evaluation. */
const quotaStore: QuotaStore = {
  read(ns: string): QuotaState[] {
    if (!store) return []
    const shard = store.shardFor('', 'resourcequotas')
    store.snapshot(shard)
    const out: QuotaState[] = []
    for (const { value } of store.range(shard, typePrefix('', 'resourcequotas', ns))) {
      out.push(quotaState(JSON.parse(recordObject(value).toString('utf8')) as Obj, recordRv(value)))
    }
    return out
  },
  writeStatus(old: Obj, next: Obj, rv: number): Promise<boolean> {
    if (!writeStatus) return Promise.resolve(true)
    return writeStatus('', 'resourcequotas', old, next, rv)
  },
}

/** The name a refusal names: the request's, else the object's name or generateName, else "Unknown" (upstream extractResourceName). */
function subjectName(ctx: RequestContext, o: Obj | undefined): string {
  if (ctx.info.name !== '') return ctx.info.name
  const m = o?.metadata
  if (typeof m?.name === 'string' && m.name !== '') return m.name
  if (typeof m?.generateName === 'string' && m.generateName !== '') return m.generateName
  return 'Unknown'
}

/**
 * What a pod create must wait for before its admission, which is synchronous: its namespace's default ServiceAccount,
 * when it is about to be made (see defaultAccountWait). Undefined, at once, in every other case.
 */
export function admissionLookups(ctx: RequestContext, def: ResolvedDefinition, body: Obj): Promise<void> | undefined {
  if (!enabled.serviceAccount || def.group !== '' || def.resource !== 'pods' || ctx.info.subresource !== '') return undefined
  return defaultAccountWait(ctx.info.namespace, body)
}

/**
 * Mutating admission, run after a write's defaults and before its strategy and validation (whoever asks), in upstream's
 * order: for pods LimitRanger, ServiceAccount, AlwaysPullImages, PodNodeSelector, Priority, DefaultTolerationSeconds,
 * PodTolerationRestriction, RuntimeClass; TaintNodesByCondition, DefaultStorageClass, StorageObjectInUseProtection and
 * DefaultIngressClass on creates of their types; AlwaysDeny on everything. `generatedFrom`: the generateName a create
 * generated its name from (a refusal names it, as upstream's, which generates names after this). Throws the error to answer.
 */
export function admitMutating(ctx: RequestContext, def: ResolvedDefinition, operation: AdmissionOperation, object: Obj, oldObject?: Obj, generatedFrom?: string): void {
  if (enabled.alwaysDeny && !isLoopback(ctx)) throw denyAll({ group: def.group, resource: def.resource }, generatedFrom ?? subjectName(ctx, object))
  if (ctx.info.subresource !== '') return
  if (def.group !== '') {
    if (def.resource === 'ingresses' && operation === 'CREATE' && enabled.defaultIngressClass && def.group === NETWORKING_GROUP) {
      defaultIngressClass(object, () => readAll(NETWORKING_GROUP, 'ingressclasses'))
    }
    return
  }
  if (def.resource !== 'pods') {
    if (operation === 'CREATE') admitCoreCreate(def.resource, object)
    return
  }
  if (operation === 'CREATE') {
    if (enabled.limitRanger) {
      const ranges = limitRangesIn(ctx.info.namespace)
      if (ranges !== undefined) mutatePodLimits(object, ranges)
    }
    if (enabled.serviceAccount) {
      const err = admitPodServiceAccount(ctx.info.namespace, generatedFrom ?? subjectName(ctx, object), object, lookupAccount)
      if (err) throw err
    }
  }
  if (enabled.alwaysPullImages) forcePullAlways(object, oldObject)
  if (operation === 'CREATE' && enabled.podNodeSelector) {
    const err = admitPodNodeSelector(generatedFrom ?? subjectName(ctx, object), object, read('namespaces', '', ctx.info.namespace), ctx.info.namespace)
    if (err) throw err
  }
  if (enabled.priority) {
    const err = admitPodPriority(operation, ctx.info.name, object, oldObject, priorityClasses)
    if (err) throw err
  }
  if (enabled.defaultTolerationSeconds) addDefaultTolerations(object)
  if (enabled.podTolerationRestriction) {
    const err = admitPodTolerations(generatedFrom ?? subjectName(ctx, object), object, operation === 'CREATE', read('namespaces', '', ctx.info.namespace), ctx.info.namespace)
    if (err) throw err
  }
  if (operation === 'CREATE' && enabled.runtimeClass && typeof object.spec?.runtimeClassName === 'string') {
    const err = admitRuntimeClass(generatedFrom ?? subjectName(ctx, object), object, readRuntimeClass)
    if (err) throw err
  }
}

/**
 * The server's own writes (bootstrap, controllers: the loopback identity, start.ts): AlwaysDeny lets them through, or
 * the server could not start (upstream's would never become ready).
 */
function isLoopback(ctx: RequestContext): boolean {
  const u = ctx.user
  return u !== undefined && u.username === LOOPBACK_USER.username && u.uid === LOOPBACK_USER.uid
}

/** The mutating plugins of a core type's create but pods': TaintNodesByCondition, DefaultStorageClass, StorageObjectInUseProtection. */
function admitCoreCreate(resource: string, object: Obj): void {
  if (resource === 'persistentvolumeclaims') {
    if (enabled.defaultStorageClass) defaultClaimClass(object, () => readAll(STORAGE_GROUP, 'storageclasses'))
    if (enabled.storageObjectInUseProtection) addProtectionFinalizer(object, PVC_PROTECTION_FINALIZER)
  } else if (resource === 'nodes') {
    if (enabled.taintNodesByCondition) taintNewNode(object)
  } else if (resource === 'persistentvolumes') {
    if (enabled.storageObjectInUseProtection) addProtectionFinalizer(object, PV_PROTECTION_FINALIZER)
  }
}

const NETWORKING_GROUP = 'networking.orch.io'
const STORAGE_GROUP = 'storage.orch.io'
const NODE_GROUP = 'node.orch.io'

/**
 * Every stored object of a type (of one namespace, when given), read fresh: the class look-ups of writes that name no
 * class, and the pods a namespace update that tightens its enforce level checks.
 */
function readAll(group: string, resource: string, namespace?: string): Obj[] {
  if (!store) return []
  const shard = store.shardFor(group, resource)
  store.snapshot(shard)
  const out: Obj[] = []
  for (const { value } of store.range(shard, typePrefix(group, resource, namespace))) out.push(JSON.parse(recordObject(value).toString('utf8')) as Obj)
  return out
}

/** One stored object of a cluster-scoped type, read fresh. */
function readClusterObject(group: string, resource: string, name: string): Obj | undefined {
  if (!store) return undefined
  const rec = store.getFresh(store.shardFor(group, resource), objectKey(group, resource, '', name))
  return rec ? JSON.parse(recordObject(rec).toString('utf8')) as Obj : undefined
}

const readRuntimeClass = (name: string): Obj | undefined => readClusterObject(NODE_GROUP, 'runtimeclasses', name)
const readStorageClass = (name: string): Obj | undefined => readClusterObject(STORAGE_GROUP, 'storageclasses', name)

/**
 * Runs after a write's own admission (defaults, strategy, validation) and before it is stored. `object` is the new
 * object (absent on delete), `oldObject` the stored one (update, delete), `options` the operation's options when the
 * request's query does not hold them all (a delete's DeleteOptions). Throws the error to answer. Returns a promise
 * only when it must wait (the RBAC escalation check; the quota charge, in a namespace with quotas; an authorizer check
 * of a policy): callers await only then, so that a write goes on to its store put without a microtask turn in between.
 * ValidatingAdmissionPolicy runs last, as upstream orders its plugins; with no policy bound it costs one comparison.
 */
export function admitPlugins(ctx: RequestContext, def: ResolvedDefinition, operation: AdmissionOperation, object?: Obj, oldObject?: Obj, options?: Obj): void | Promise<void> {
  if (enabled.alwaysDeny && !isLoopback(ctx)) throw denyAll({ group: def.group, resource: def.resource }, subjectName(ctx, object ?? oldObject))
  // A delete has no mutating stage of its own: its mutating webhooks (which may only look) run first.
  if (operation === 'DELETE' && enabled.mutatingAdmissionWebhook && mutatingWebhooksExist()) {
    const hooks = admitMutatingWebhooks(ctx, def, operation, object, oldObject, options)
    if (hooks !== undefined) return hooks.then(() => admitValidating(ctx, def, operation, object, oldObject, options))
  }
  return admitValidating(ctx, def, operation, object, oldObject, options)
}

function admitValidating(ctx: RequestContext, def: ResolvedDefinition, operation: AdmissionOperation, object?: Obj, oldObject?: Obj, options?: Obj): void | Promise<void> {
  const admitted = admitBuiltIn(ctx, def, operation, object, oldObject)
  // pods/binding is admitted upstream as the create of a Binding, which this write does not have.
  const binding = ctx.info.subresource === 'binding'
  const policies = enabled.validatingAdmissionPolicy && !binding && policiesBound()
  const hooks = enabled.validatingAdmissionWebhook && !binding && validatingWebhooksExist()
  if (!policies && !hooks) return then(admitted, () => admitQuota(ctx, def, operation, object, oldObject))
  // pods/eviction is the create of a policy/v1 Eviction, as upstream's request kind says.
  const kind = ctx.info.subresource === 'eviction' ? EVICTION_KIND : undefined
  return then(then(admitted, () => admitExtensions(ctx, def, operation, kind, object, oldObject, options, policies, hooks)), () => admitQuota(ctx, def, operation, object, oldObject))
}

/** ValidatingAdmissionPolicy, then ValidatingAdmissionWebhook (upstream's order), each when asked for. */
function admitExtensions(ctx: RequestContext, def: ResolvedDefinition, operation: AdmissionOperation, kind: RequestKind | undefined, object: Obj | undefined, oldObject: Obj | undefined, options: Obj | null | undefined, policies: boolean, hooks: boolean): void | Promise<void> {
  const checked = policies ? admitPolicies(ctx, def, operation, object, oldObject, kind, options) : undefined
  if (!hooks) return checked
  return then(checked, () => admitValidatingWebhooks(ctx, def, operation, object, oldObject, kind, options))
}

/** `next` after `first`: at once when `first` did not have to wait, so that nothing waits a microtask turn for nothing. */
function then(first: void | Promise<void>, next: () => void | Promise<void>): void | Promise<void> {
  return first ? first.then(next) : next()
}
const EVICTION_KIND: RequestKind = { group: 'policy', version: 'v1', kind: 'Eviction' }

/**
 * ValidatingAdmissionPolicy and ValidatingAdmissionWebhook alone, for the writes whose object is not of the resource's
 * kind and that no other plugin here looks at: a connect (its options), a scale (the Scale), a binding (the Binding).
 * Two comparisons when no policy is bound and no webhook configured.
 */
export function admitPolicyOnly(ctx: RequestContext, def: ResolvedDefinition, operation: AdmissionOperation, kind: RequestKind, object: Obj | undefined, oldObject?: Obj, options?: Obj | null): void | Promise<void> {
  const policies = enabled.validatingAdmissionPolicy && policiesBound()
  const hooks = enabled.validatingAdmissionWebhook && validatingWebhooksExist()
  if (!policies && !hooks) return
  return admitExtensions(ctx, def, operation, kind, object, oldObject, options, policies, hooks)
}

function admitBuiltIn(ctx: RequestContext, def: ResolvedDefinition, operation: AdmissionOperation, object?: Obj, oldObject?: Obj): void | Promise<void> {
  if (enabled.namespaceExists && ctx.info.namespace !== '' && !(def.group === '' && def.resource === 'namespaces') && read('namespaces', '', ctx.info.namespace) === undefined) {
    throw namespaceMissing(ctx.info.namespace)
  }
  if (def.group === SCHEDULING_GROUP && def.resource === 'priorityclasses' && object && ctx.info.subresource === '' && enabled.priority) {
    const err = validatePriorityClassDefault(operation, ctx.info.name, object, priorityClasses)
    if (err) throw err
  }
  if (def.group === '' && (def.resource === 'pods' || def.resource === 'persistentvolumeclaims') && object && ctx.info.subresource === '' && enabled.limitRanger) {
    const ranges = limitRangesIn(ctx.info.namespace)
    if (ranges !== undefined) {
      const err = validateLimits(def.resource, operation, subjectName(ctx, object), object, oldObject, ranges)
      if (err) throw err
    }
  }
  if (def.group === '' && object !== undefined && ctx.info.subresource === '') {
    if (def.resource === 'pods') {
      if (enabled.alwaysPullImages && (operation === 'CREATE' || operation === 'UPDATE')) {
        const err = checkPullAlways(subjectName(ctx, object), object, oldObject)
        if (err) throw err
      }
      if (operation === 'CREATE' && enabled.runtimeClass && (typeof object.spec?.runtimeClassName === 'string' || object.spec?.overhead !== undefined)) {
        const err = validateRuntimeClass(subjectName(ctx, object), object, readRuntimeClass)
        if (err) throw err
      }
    } else if (def.resource === 'persistentvolumeclaims' && operation === 'UPDATE' && enabled.persistentVolumeClaimResize && oldObject !== undefined) {
      const err = validateClaimResize(subjectName(ctx, object), object, oldObject, readStorageClass)
      if (err) throw err
    }
  }
  if (def.group === '' && def.resource === 'pods' && object && enabled.serviceAccount) {
    const sub = ctx.info.subresource
    const err = operation === 'CREATE' && sub === '' ? validatePodServiceAccount(ctx.info.namespace, subjectName(ctx, object), object, lookupAccount)
      : operation === 'UPDATE' && sub === 'ephemeralcontainers' ? validateEphemeralServiceAccount(ctx.info.namespace, subjectName(ctx, object), object, lookupAccount)
        : undefined
    if (err) throw err
  }
  const user = admitUserPlugins(ctx, def, operation, object, oldObject)
  // PodSecurity, after NodeRestriction as upstream orders them: a namespace without pod-security labels costs its cached look-up.
  if (enabled.podSecurity && object !== undefined && (def.group === '' || def.group === 'apps' || def.group === 'batch') && podSecurityResource(def.group, def.resource)) {
    const o = object
    return then(user, () => admitPodSecurityFor(ctx, def, operation, o, oldObject))
  }
  if (def.group !== CERTIFICATES_GROUP) return user
  return then(user, () => admitCertificates(ctx, def, operation, object, oldObject))
}

/** CertificateApproval, CertificateSigning and CertificateSubjectRestriction, on CertificateSigningRequests. */
function admitCertificates(ctx: RequestContext, def: ResolvedDefinition, operation: AdmissionOperation, object?: Obj, oldObject?: Obj): void | Promise<void> {
  if (def.resource !== 'certificatesigningrequests' || object === undefined) return
  const sub = ctx.info.subresource
  if (operation === 'CREATE') {
    if (sub !== '' || !enabled.certificateSubjectRestriction) return
    const err = checkSubject(subjectName(ctx, object), object)
    if (err) throw err
    return
  }
  if (operation !== 'UPDATE' || oldObject === undefined || !authz || !ctx.user) return
  const a = authz
  const authorize: Authorize = (attrs) => a.authorize(attrs)
  if (sub === 'approval' && enabled.certificateApproval) return checkApproval(authorize, ctx.user, subjectName(ctx, oldObject), oldObject)
  if (sub === 'status' && enabled.certificateSigning && signingChanged(object, oldObject)) return checkSigning(authorize, ctx.user, subjectName(ctx, oldObject), oldObject)
}

function admitPodSecurityFor(ctx: RequestContext, def: ResolvedDefinition, operation: AdmissionOperation, object: Obj, oldObject: Obj | undefined): void {
  if (def.resource === 'namespaces') {
    if (ctx.info.subresource !== '' || (operation !== 'CREATE' && operation !== 'UPDATE')) return
    const name = subjectName(ctx, object)
    const err = validateNamespaceLabels(name, operation, object, oldObject)
    if (err) throw err
    if (operation === 'UPDATE' && oldObject !== undefined) {
      for (const w of namespaceUpdateWarnings(name, object, oldObject, () => readAll('', 'pods', name))) ctx.addWarning(w)
    }
    return
  }
  const policy = namespaceSecurity(ctx.info.namespace)
  if (policy === null) return
  const out = admitPodSecurity(policy, def.group, def.resource, ctx.info.subresource, operation, subjectName(ctx, object), object, oldObject)
  if (out === undefined) return
  if (out.error) throw out.error
  for (const w of out.warnings) ctx.addWarning(w)
}

/**
 * ResourceQuota, the last plugin (after ValidatingAdmissionPolicy, as upstream orders them): it charges the quotas, so
 * it runs once everything else admitted the write.
 */
function admitQuota(ctx: RequestContext, def: ResolvedDefinition, operation: AdmissionOperation, object?: Obj, oldObject?: Obj): void | Promise<void> {
  if (!enabled.resourceQuota || object === undefined || (operation !== 'CREATE' && operation !== 'UPDATE') || ctx.info.subresource !== '' || def.scope !== 'Namespaced') return
  const ns = ctx.info.namespace
  if (ns === '' || !hasQuotas(ns)) return
  const ev = evaluatorFor(def.group, def.resource)
  if (ev === undefined || !ev.handles(operation, object, oldObject)) return
  const dryRun = ctx.query.getAll('dryRun').length > 0
  return evaluateQuota(quotaStore, ns, { ev, operation, object, oldObject, gr: { group: def.group, resource: def.resource }, name: subjectName(ctx, object) }, dryRun)
}

/** NodeRestriction and the RBAC escalation checks: what depends on who asks (system:masters skip them). */
function admitUserPlugins(ctx: RequestContext, def: ResolvedDefinition, operation: AdmissionOperation, object?: Obj, oldObject?: Obj): void | Promise<void> {
  const u = ctx.user
  if (!u || u.groups.includes('system:masters')) return
  if (enabled.nodeRestriction && nodeIdentity(u.username, u.groups).isNode) {
    const err = admitNodeRestriction({
      user: u.username, groups: u.groups, operation, group: def.group, resource: def.resource, subresource: ctx.info.subresource,
      namespace: ctx.info.namespace || (oldObject?.metadata?.namespace ?? object?.metadata?.namespace ?? ''),
      name: ctx.info.name || (operation === 'DELETE' ? oldObject?.metadata?.name ?? '' : ''),
      object, oldObject,
    }, liveLookups)
    if (err) throw err
  }
  if (def.group === RBAC_GROUP && operation !== 'DELETE' && RBAC_WRITES.has(def.resource) && ctx.info.subresource === '' && authz && object) {
    return checkEscalation(authz, u.username, u.groups, object, oldObject)
  }
}

async function checkEscalation(a: AuthzClient, user: string, groups: string[], object: Obj, old: Obj | undefined): Promise<void> {
  const err = await a.checkWrite(user, groups, object, old)
  if (err) throw err
}
