// Admission that needs the requesting user and live objects: Priority, NodeRestriction, the RBAC escalation checks of
// role and binding writes, then ValidatingAdmissionPolicy.
import { nodeIdentity } from '../machinery/node-refs.js'
import { objectKey, recordObject, typePrefix } from '../machinery/storage-format.js'
import type { Obj, ResolvedDefinition } from '../registry/define.js'
import type { Store } from '../pipeline/store.js'
import type { RequestContext } from '../pipeline/context.js'
import type { AuthzClient } from '../../actors/authz/client.js'
import type { Registry } from '../registry/index.js'
import { admitNodeRestriction, type AdmissionOperation, type NodeRestrictionLookups } from './node-restriction.js'
import { admitPodPriority, priorityClassView, validatePriorityClassDefault, type PriorityClassView } from './priority.js'
import { admitPolicies, configurePolicyAdmission, policiesBound, type RequestKind } from './validating-policy.js'

const RBAC_GROUP = 'rbac.authorization.orch.io'
const RBAC_WRITES = new Set(['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings'])

let store: Store | undefined
let authz: AuthzClient | undefined

export function configureAdmissionChain(s: Store, a: AuthzClient, r: Registry): void {
  store = s
  authz = a
  configurePolicyAdmission(s, r, a)
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

/**
 * Mutating admission, run after a write's defaults and before its strategy and validation (whoever asks): the
 * Priority plugin's pod half. Throws the error to answer.
 */
export function admitMutating(ctx: RequestContext, def: ResolvedDefinition, operation: AdmissionOperation, object: Obj, oldObject?: Obj): void {
  if (def.group !== '' || def.resource !== 'pods' || ctx.info.subresource !== '') return
  const err = admitPodPriority(operation, ctx.info.name, object, oldObject, priorityClasses)
  if (err) throw err
}

/**
 * Runs after a write's own admission (defaults, strategy, validation) and before it is stored. `object` is the new
 * object (absent on delete), `oldObject` the stored one (update, delete). Throws the error to answer. Returns a promise
 * only when it must wait (the RBAC escalation check, an authorizer check of a policy): callers await only then, so that
 * a write goes on to its store put without a microtask turn in between. ValidatingAdmissionPolicy runs last, as
 * upstream orders its plugins; with no policy bound it costs one comparison.
 */
export function admitPlugins(ctx: RequestContext, def: ResolvedDefinition, operation: AdmissionOperation, object?: Obj, oldObject?: Obj): void | Promise<void> {
  const admitted = admitBuiltIn(ctx, def, operation, object, oldObject)
  // pods/binding is admitted upstream as the create of a Binding, which this write does not have.
  if (!policiesBound() || ctx.info.subresource === 'binding') return admitted
  // pods/eviction is the create of a policy/v1 Eviction, as upstream's request kind says.
  const kind = ctx.info.subresource === 'eviction' ? EVICTION_KIND : undefined
  if (admitted) return admitted.then(() => admitPolicies(ctx, def, operation, object, oldObject, kind))
  return admitPolicies(ctx, def, operation, object, oldObject, kind)
}
const EVICTION_KIND: RequestKind = { group: 'policy', version: 'v1', kind: 'Eviction' }

/**
 * ValidatingAdmissionPolicy alone, for the writes whose object is not of the resource's kind and that no other plugin
 * here looks at: a connect (its options), a scale (the Scale), a binding (the Binding). One comparison when no policy is
 * bound.
 */
export function admitPolicyOnly(ctx: RequestContext, def: ResolvedDefinition, operation: AdmissionOperation, kind: RequestKind, object: Obj | undefined, oldObject?: Obj, options?: Obj | null): void | Promise<void> {
  if (!policiesBound()) return
  return admitPolicies(ctx, def, operation, object, oldObject, kind, options)
}

function admitBuiltIn(ctx: RequestContext, def: ResolvedDefinition, operation: AdmissionOperation, object?: Obj, oldObject?: Obj): void | Promise<void> {
  if (def.group === SCHEDULING_GROUP && def.resource === 'priorityclasses' && object && ctx.info.subresource === '') {
    const err = validatePriorityClassDefault(operation, ctx.info.name, object, priorityClasses)
    if (err) throw err
  }
  const u = ctx.user
  if (!u || u.groups.includes('system:masters')) return
  if (nodeIdentity(u.username, u.groups).isNode) {
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
