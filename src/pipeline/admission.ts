// The admission stage: default, system metadata, the type's strategy, validation; canonical JSON out. (The body is
// read and decoded in decode.ts.)
import { randomUUID, randomBytes } from 'node:crypto'
import { badRequest, internal, invalid, fieldInvalid, type FieldError } from '../machinery/errors.js'
import { finalizerNameErrors, validateObjectMeta } from '../machinery/validation.js'
import { cloneJson, noOwnKeys, sameJsonText } from '../machinery/json-tree.js'
import { RV_MARKER, type Attrs } from '../machinery/storage-format.js'
import type { SchemaSet } from '../registry/schema.js'
import { fillZeroValues, type Obj, type ResolvedDefinition } from '../registry/define.js'
import type { RequestContext } from './context.js'
import { admitMutating, admitMutatingHooks, mutatingWebhooksExist } from '../admission/chain.js'
import { enabled as admissionPlugins } from '../admission/plugins.js'
import { allocates, allocateCreate, allocateUpdate } from './service-allocation.js'

let schemas: SchemaSet

export function configureAdmission(s: SchemaSet): void { schemas = s }

/** RFC 3339 time at second precision, as upstream's metav1.Time marshals. */
export function rfc3339(ms: number): string {
  const sec = Math.floor(ms / 1000)
  if (sec !== lastSecond) {
    lastText = new Date(sec * 1000).toISOString().replace('.000Z', 'Z')
    lastSecond = sec
  }
  return lastText
}

/** The last second formatted: every write of that second (two times each: creation and managedFields) shares it. */
let lastSecond = NaN
let lastText = ''

const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789'

/** Random bytes drawn from a pool refilled 4 KiB at a time (one syscall per ~800 names). */
let pool = randomBytes(4096)
let poolAt = 0

export function generateName(prefix: string): string {
  if (poolAt + 5 > pool.length) { pool = randomBytes(4096); poolAt = 0 }
  let s = ''
  for (let i = 0; i < 5; i++) s += GENERATE_ALPHABET[pool[poolAt++] % GENERATE_ALPHABET.length]
  const max = 63 - 5
  return (prefix.length > max ? prefix.slice(0, max) : prefix) + s
}

const META_ORDER = [
  'name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation', 'creationTimestamp',
  'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences', 'finalizers', 'managedFields',
]

/** ObjectMeta fields that upstream omits when empty. */
const OMIT_EMPTY = ['labels', 'annotations', 'ownerReferences', 'finalizers', 'managedFields']

/** The canonical object: kind, apiVersion, metadata in upstream field order, the rest as given, status last. */
export function canonical(o: Obj): Obj {
  const meta: Obj = {}
  for (const k of OMIT_EMPTY) {
    const v = o.metadata[k]
    if (v !== undefined && (Array.isArray(v) ? v.length === 0 : typeof v === 'object' && v !== null && noOwnKeys(v))) delete o.metadata[k]
  }
  for (const k of META_ORDER) if (o.metadata[k] !== undefined) meta[k] = o.metadata[k]
  for (const k of Object.keys(o.metadata)) if (!(k in meta)) meta[k] = o.metadata[k]
  const out: Obj = { kind: o.kind, apiVersion: o.apiVersion, metadata: meta }
  for (const k of Object.keys(o)) if (k !== 'kind' && k !== 'apiVersion' && k !== 'metadata' && k !== 'status') out[k] = o[k]
  if (o.status !== undefined) out.status = o.status
  return out
}

/** The field selectors of each type as a list (listed once, not per write). */
const selectorLists = new WeakMap<object, Array<[string, (o: Obj) => string]>>()

/**
 * What selectors need, computed once per write. `field`, when given, may answer a field selector's value instead of its
 * function (undefined: the function's value).
 */
export function attrsOf(def: ResolvedDefinition, o: Obj, field?: (fn: (o: Obj) => string, name: string) => string | undefined): Attrs {
  const a: Attrs = {}
  if (o.metadata.labels && !noOwnKeys(o.metadata.labels)) a.l = o.metadata.labels
  if (def.fieldSelectors) {
    let list = selectorLists.get(def.fieldSelectors)
    if (list === undefined) { list = Object.entries(def.fieldSelectors); selectorLists.set(def.fieldSelectors, list) }
    const f: Record<string, string> = {}
    for (const [k, fn] of list) f[k] = (field === undefined ? undefined : field(fn, k)) ?? fn(o)
    a.f = f
  }
  if (o.metadata.uid) a.u = o.metadata.uid
  if (o.metadata.deletionTimestamp) a.d = 1
  if (Array.isArray(o.metadata.ownerReferences) && o.metadata.ownerReferences.length > 0) a.o = o.metadata.ownerReferences.map((r: Obj) => String(r.uid))
  if (Array.isArray(o.metadata.finalizers) && o.metadata.finalizers.length > 0) a.z = o.metadata.finalizers
  return a
}

/** The JSON written to the shard: resourceVersion is a marker the shard replaces with the version it assigns. */
export function toStoredJson(o: Obj): string {
  o.metadata.resourceVersion = RV_MARKER
  return JSON.stringify(canonical(o))
}

function specOf(o: Obj, withStatus = false): Obj {
  const rest: Obj = {}
  for (const k of Object.keys(o)) if (k !== 'metadata' && (withStatus || k !== 'status') && k !== 'kind' && k !== 'apiVersion') rest[k] = o[k]
  return rest
}

/** Whether the spec (everything but metadata, status and type meta) prints differently, as generation counts it. */
function specChanged(o: Obj, old: Obj, withStatus = false): boolean {
  const a = specOf(o, withStatus)
  const b = specOf(old, withStatus)
  const same = sameJsonText(a, b)
  return same === undefined ? JSON.stringify(a) !== JSON.stringify(b) : !same
}

function assertValid(def: ResolvedDefinition, o: Obj, errs: FieldError[]): void {
  if (errs.length > 0) throw invalid(def.groupKind, def.group, def.kind, String(o.metadata?.name ?? ''), errs)
}

/** Type errors of the object; what upstream would already fail to decode (quantities, int32 ranges) is 400 at once. */
function typeErrors(def: ResolvedDefinition, o: Obj): FieldError[] {
  // A custom resource is checked against its schema by its strategy's validate, after defaulting (as upstream).
  if (def.custom !== undefined) return []
  const errs = schemas.validate(def.schemaRef, o)
  const undecodable = errs.find((e) => e.decode === true)
  if (undecodable !== undefined) throw badRequest(`${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: ${undecodable.detail}`)
  return errs
}

/** Create: system metadata, defaults, the strategy's create hooks, every validation; throws one 422 with all causes. */
/**
 * Create: system fields, defaults, then `track` (the writer's managedFields, when given), then what the server adds
 * itself (prepareForCreate: a Job's generated selector and labels, a pod's status), then validation. As upstream, the
 * fields the server adds after defaulting belong to no manager, so a later apply that leaves them out keeps them.
 */
export function admitCreate(ctx: RequestContext, def: ResolvedDefinition, o: Obj, now: number, track?: (o: Obj) => void): void | Promise<void> {
  const m = o.metadata
  const urlNs = ctx.info.namespace
  if (def.scope === 'Namespaced') {
    if (m.namespace !== undefined && m.namespace !== '' && m.namespace !== urlNs) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request')
    }
    m.namespace = urlNs
  } else {
    delete m.namespace
  }
  const typeErrs = typeErrors(def, o)
  assertValid(def, o, typeErrs)
  // A refusal of mutating admission names the generateName, as upstream's, whose name is generated after it.
  let subject: string | undefined
  if ((m.name === undefined || m.name === '') && typeof m.generateName === 'string' && m.generateName !== '') {
    m.name = generateName(m.generateName)
    subject = m.generateName
  }
  m.uid = randomUUID()
  m.creationTimestamp = rfc3339(now)
  delete m.deletionTimestamp
  delete m.deletionGracePeriodSeconds
  delete m.selfLink
  if (def.strategy.hasGeneration) m.generation = 1
  else delete m.generation
  def.strategy.default?.(o)
  // Upstream's decoding writes these before its defaulting; after ours here, so that a default set when a field is
  // absent still applies. Like defaults, they belong to the writer.
  if (def.zeroSpec !== undefined) fillZeroValues(o, def.zeroSpec)
  track?.(o)
  // Mutating admission after the writer's fields are tracked: what it sets belongs to no manager, as upstream.
  admitMutating(ctx, def, 'CREATE', o, undefined, subject)
  // Then the mutating webhooks (a comparison when none is configured); the object is checked again if they changed it.
  if (admissionPlugins.mutatingAdmissionWebhook && mutatingWebhooksExist()) {
    const hooks = createWebhooks(ctx, def, o, subject !== undefined)
    if (hooks !== undefined) return hooks.then(() => finishCreate(ctx, def, o))
  }
  finishCreate(ctx, def, o)
}

/** The rest of a create after mutating admission: upstream's BeforeCreate (allocation, prepare, validation). */
function finishCreate(ctx: RequestContext, def: ResolvedDefinition, o: Obj): void {
  // upstream's BeginCreate: a service's cluster IP and node ports, before its checks (settled by the write).
  if (allocates(def)) ctx.allocation = allocateCreate(ctx, o)
  def.strategy.prepareForCreate?.(o, ctx.user)
  // The status the create starts with (`{}` and the counters upstream always prints), owned by no one.
  if (def.zeroStatus !== undefined) fillZeroValues(o, def.zeroStatus)
  const errs = validateObjectMeta(o.metadata, { nameRule: def.strategy.nameRule ?? 'subdomain', namespaced: def.scope === 'Namespaced' })
  if (def.strategy.validate) errs.push(...def.strategy.validate(o))
  // Written through a type served over this one's storage: its own checks too.
  if (ctx.conversion !== undefined && ctx.conversion.sharedStorage!.validate !== undefined) errs.push(...ctx.conversion.sharedStorage!.validate(o))
  assertValid(def, o, errs)
  toStorageVersion(def, o)
}

/**
 * The mutating webhooks of a create. They see the object as upstream's do, before its system fields are set (uid,
 * creationTimestamp, generation, a generated name), which are set again afterwards; an object they changed is checked
 * against its schema again (and was defaulted again after each patch). Undefined when no webhook is called.
 */
function createWebhooks(ctx: RequestContext, def: ResolvedDefinition, o: Obj, generated: boolean): Promise<void> | undefined {
  const m = o.metadata
  const kept = { name: m.name, uid: m.uid, creationTimestamp: m.creationTimestamp, generation: m.generation }
  if (generated) delete m.name
  delete m.uid
  delete m.creationTimestamp
  delete m.generation
  const restore = (changed: boolean): void => {
    const n = o.metadata
    // A webhook may name the object; a generated name stands unless it did.
    if (n.name === undefined || n.name === '') n.name = kept.name
    n.uid = kept.uid
    n.creationTimestamp = kept.creationTimestamp
    if (kept.generation !== undefined) n.generation = kept.generation
    if (changed) rescope(ctx, def, o)
  }
  const hooks = admitMutatingHooks(ctx, def, 'CREATE', o)
  if (hooks === undefined) { restore(false); return undefined }
  return hooks.then((changed) => restore(changed), (err: unknown) => { restore(false); throw err })
}

/** An object mutating webhooks changed: in the request's namespace still (upstream's BeforeCreate check), of its schema. */
function rescope(ctx: RequestContext, def: ResolvedDefinition, o: Obj): void {
  const n = o.metadata
  if (def.scope === 'Namespaced') {
    if (n.namespace !== undefined && n.namespace !== '' && n.namespace !== ctx.info.namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request')
    }
    n.namespace = ctx.info.namespace
  } else {
    delete n.namespace
  }
  let errs: FieldError[]
  try {
    errs = typeErrors(def, o)
  } catch (err) {
    // What upstream could not decode into the kind after the patch is its internal error, not the client's.
    throw internal(`${(err as Error).message}`)
  }
  assertValid(def, o, errs)
}

/** A custom resource written through another version than its storage version is stored in the storage version. */
function toStorageVersion(def: ResolvedDefinition, o: Obj): void {
  const c = def.custom
  if (c !== undefined && c.storageVersion !== def.version && c.storageVersion !== '') o.apiVersion = `${def.group}/${c.storageVersion}`
}

export type UpdateTarget = 'main' | 'status' | 'finalize' | 'binding' | 'ephemeralcontainers' | 'approval'

/**
 * A sub-resource that changes one field only: `o` becomes the stored object with the request's `section.field` (none
 * when the request has none), its resourceVersion and its managedFields.
 */
function keepStoredBut(o: Obj, old: Obj, section: 'spec' | 'status', field: string): void {
  const value = o[section]?.[field]
  const { resourceVersion, managedFields } = o.metadata
  for (const k of Object.keys(o)) delete o[k]
  Object.assign(o, structuredClone(old))
  o.metadata = { ...o.metadata, resourceVersion }
  if (managedFields !== undefined) o.metadata.managedFields = managedFields
  o[section] = { ...(o[section] ?? {}) }
  if (value === undefined || value === null) delete o[section][field]
  else o[section][field] = value
}

/** Update: carry over what the client may not change, then validate; generation follows spec changes. */
export function admitUpdate(ctx: RequestContext, def: ResolvedDefinition, o: Obj, old: Obj, target: UpdateTarget): void | Promise<void> {
  const m = o.metadata
  const om = old.metadata
  if (def.scope === 'Namespaced') {
    if (m.namespace !== undefined && m.namespace !== '' && m.namespace !== ctx.info.namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request')
    }
    m.namespace = ctx.info.namespace
  } else {
    delete m.namespace
  }
  assertValid(def, o, typeErrors(def, o))
  const errs: FieldError[] = []
  if (m.uid !== undefined && m.uid !== '' && m.uid !== om.uid) errs.push(fieldInvalid('metadata.uid', m.uid, 'field is immutable'))
  m.uid = om.uid
  m.creationTimestamp = om.creationTimestamp
  // As upstream's BeforeUpdate and ValidateObjectMetaUpdate: a deletion timestamp, once set, is kept whatever the
  // body says; a body may not set one, nor change the grace period (leaving it out keeps the stored one).
  if (om.deletionTimestamp !== undefined) m.deletionTimestamp = om.deletionTimestamp
  else if (m.deletionTimestamp !== undefined && m.deletionTimestamp !== null) {
    if (target === 'main') errs.push(fieldInvalid('metadata.deletionTimestamp', m.deletionTimestamp, 'field is immutable'))
    delete m.deletionTimestamp
  } else delete m.deletionTimestamp
  if (m.deletionGracePeriodSeconds === undefined || m.deletionGracePeriodSeconds === null) {
    if (om.deletionGracePeriodSeconds !== undefined) m.deletionGracePeriodSeconds = om.deletionGracePeriodSeconds
    else delete m.deletionGracePeriodSeconds
  } else if (m.deletionGracePeriodSeconds !== om.deletionGracePeriodSeconds) {
    if (target === 'main') errs.push(fieldInvalid('metadata.deletionGracePeriodSeconds', m.deletionGracePeriodSeconds, 'field is immutable'))
    if (om.deletionGracePeriodSeconds !== undefined) m.deletionGracePeriodSeconds = om.deletionGracePeriodSeconds
    else delete m.deletionGracePeriodSeconds
  }
  delete m.selfLink
  if (target === 'main') {
    def.strategy.default?.(o)
    if (def.zeroSpec !== undefined) fillZeroValues(o, def.zeroSpec)
    admitMutating(ctx, def, 'UPDATE', o, old)
  }
  // Then the mutating webhooks (a comparison when none is configured); pods/binding has none (see admitMutatingHooks).
  if (target !== 'binding' && admissionPlugins.mutatingAdmissionWebhook && mutatingWebhooksExist()) {
    const hooks = admitMutatingHooks(ctx, def, 'UPDATE', o, old)
    if (hooks !== undefined) {
      return hooks.then((changed) => {
        if (changed) updateRescope(ctx, def, o, old)
        finishUpdate(ctx, def, o, old, target, errs)
      })
    }
  }
  finishUpdate(ctx, def, o, old, target, errs)
}

/** What mutating webhooks may not change in an update: the system fields kept from the stored object, the scope. */
function updateRescope(ctx: RequestContext, def: ResolvedDefinition, o: Obj, old: Obj): void {
  const n = o.metadata
  const om = old.metadata
  n.name = om.name
  n.uid = om.uid
  n.creationTimestamp = om.creationTimestamp
  if (om.deletionTimestamp !== undefined) n.deletionTimestamp = om.deletionTimestamp
  else delete n.deletionTimestamp
  if (om.deletionGracePeriodSeconds !== undefined) n.deletionGracePeriodSeconds = om.deletionGracePeriodSeconds
  else delete n.deletionGracePeriodSeconds
  rescope(ctx, def, o)
}

/** The rest of an update after mutating admission: what each endpoint keeps, generation, validation. */
function finishUpdate(ctx: RequestContext, def: ResolvedDefinition, o: Obj, old: Obj, target: UpdateTarget, errs: FieldError[]): void {
  const m = o.metadata
  const om = old.metadata
  if (target === 'finalize') {
    // namespaces/finalize changes spec.finalizers only.
    const fins = o.spec?.finalizers
    if (Array.isArray(fins)) fins.forEach((f: unknown, i: number) => { if (typeof f === 'string') errs.push(...finalizerNameErrors(f, `spec.finalizers[${i}]`)) })
    for (const k of Object.keys(o)) delete o[k]
    Object.assign(o, structuredClone(old))
    o.spec = { ...(o.spec ?? {}) }
    if (fins === undefined) delete o.spec.finalizers
    else o.spec.finalizers = fins
  } else if (target === 'binding') {
    // pods/binding: its own mutation set spec.nodeName, annotations and the PodScheduled condition on the stored pod;
    // nothing else is taken from the request, and the pod update rules (which forbid nodeName changes) do not apply.
  } else if (target === 'ephemeralcontainers') {
    // pods/ephemeralcontainers changes spec.ephemeralContainers only (upstream dropNonEphemeralContainerUpdates): the
    // body's containers are defaulted as any pod's; the rest of spec, status and metadata (but for managedFields, as
    // for status) are the stored ones.
    def.strategy.default?.(o)
    keepStoredBut(o, old, 'spec', 'ephemeralContainers')
  } else if (target === 'approval') {
    // certificatesigningrequests/approval changes status.conditions only (upstream's approval strategy); metadata is the
    // stored one but for managedFields, as for status.
    keepStoredBut(o, old, 'status', 'conditions')
    def.approval?.prepareForUpdate?.(o, old)
  } else if (target === 'status') {
    // The status sub-resource changes status only: metadata is the stored one but for managedFields, which an apply
    // has already set for this write (upstream's ResetObjectMetaForStatus keeps them too); an Update is tracked later.
    def.status?.prepareForUpdate?.(o, old)
    o.metadata = { ...om, resourceVersion: m.resourceVersion }
    if (m.managedFields !== undefined) o.metadata.managedFields = m.managedFields
    // A counter the write leaves out (or removes) is stored as its zero, as upstream's decoding makes it.
    if (def.zeroStatus !== undefined) fillZeroValues(o, def.zeroStatus)
  } else {
    // upstream's BeginUpdate (before the strategy's PrepareForUpdate), settled by the write.
    if (allocates(def)) ctx.allocation = allocateUpdate(ctx, o, old)
    def.strategy.prepareForUpdate?.(o, old)
    // Normally the stored status, which has them; an object stored without them gets them here.
    if (def.zeroStatus !== undefined) fillZeroValues(o, def.zeroStatus)
    if (om.deletionTimestamp !== undefined && Array.isArray(m.finalizers)) {
      // While deleting, finalizers may only be removed.
      for (const f of m.finalizers) if (!(om.finalizers ?? []).includes(f)) errs.push(fieldForbiddenFinalizer(f))
    }
  }
  if (def.strategy.hasGeneration) {
    const g = typeof om.generation === 'number' ? om.generation : 1
    // A custom resource without a status sub-resource counts its status in (upstream's customResourceStrategy).
    const withStatus = def.custom !== undefined && !(def.subresources?.includes('status') ?? false)
    o.metadata.generation = specChanged(o, old, withStatus) ? g + 1 : g
  } else {
    delete o.metadata.generation
  }
  if (target === 'main') {
    errs.push(...validateObjectMeta(o.metadata, { nameRule: def.strategy.nameRule ?? 'subdomain', namespaced: def.scope === 'Namespaced' }))
    if (def.strategy.validateUpdate) errs.push(...def.strategy.validateUpdate(o, decodedView(def, old)))
    else if (def.strategy.validate) errs.push(...def.strategy.validate(o))
    // Written through a type served over this one's storage: its own checks too.
    if (ctx.conversion !== undefined && ctx.conversion.sharedStorage!.validateUpdate !== undefined) errs.push(...ctx.conversion.sharedStorage!.validateUpdate(o, decodedView(def, old)))
  } else if (target === 'status' && def.status?.validateUpdate) {
    errs.push(...def.status.validateUpdate(o, old))
  } else if (target === 'approval' && def.approval?.validateUpdate) {
    errs.push(...def.approval.validateUpdate(o, old))
  } else if (target === 'ephemeralcontainers' && def.ephemeralContainers?.validateUpdate) {
    errs.push(...def.ephemeralContainers.validateUpdate(o, old))
  }
  assertValid(def, o, errs)
  toStorageVersion(def, o)
}

/**
 * The stored object as upstream's decoding from storage hands it to an update's checks: defaulted, with its zero
 * values. An object stored by an earlier build may lack what this build adds on every write (a container's
 * `resources: {}`, the serviceAccount alias); compared as stored, a Job's unchanged template would be "changed".
 */
function decodedView(def: ResolvedDefinition, old: Obj): Obj {
  if (def.strategy.default === undefined && def.zeroSpec === undefined) return old
  const v = cloneJson(old) as Obj
  def.strategy.default?.(v)
  if (def.zeroSpec !== undefined) fillZeroValues(v, def.zeroSpec)
  return v
}

function fieldForbiddenFinalizer(f: string): FieldError {
  return { type: 'FieldValueForbidden', field: 'metadata.finalizers', detail: `no new finalizers can be added if the object is being deleted, found new finalizers []string{${JSON.stringify(f)}}` }
}

export function requireResourceVersion(def: ResolvedDefinition, o: Obj): void {
  if (def.strategy.allowUnconditionalUpdate === false && !o.metadata.resourceVersion) {
    throw invalid(def.groupKind, def.group, def.kind, String(o.metadata.name ?? ''), [fieldInvalid('metadata.resourceVersion', '0x0', 'must be specified for an update')])
  }
}

