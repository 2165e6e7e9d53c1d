// Server-side apply and field ownership (structured-merge-diff merge.Updater with the apiserver's field manager
// layers): applyPatch for `application/apply-patch+yaml`, updateManagedFields for every other write, the 409 conflict
// Status, and the manager name derived from the User-Agent. Pure and synchronous: objects in, objects out. The typed
// comparison, merge and removal of values it builds on are in typed-value.ts.
import { ApiError, badRequest, internal } from '../errors.js'
import type { StatusCause } from '../errors.js'
import { isObject, jsonClone, jsonEqual } from '../patch/schema-walk.js'
import { memoize } from '../memo.js'
import type { TypeNode } from '../patch/schema-walk.js'
import { FieldSet, TypedError, goJSON, makePath, pathString, toFieldSet, validateTyped } from './fieldpath.js'
import type { Path } from './fieldpath.js'
import {
  cloneManaged, decodeManagedFields, emptyManaged, encodeManagedFields, formatTime, isResetManagedFields, managerIdentifier,
  printManager,
} from './managed-fields.js'
import type { Managed, ManagerInfo } from './managed-fields.js'
import { compareObjects, mergeObjects, removeItems, type Comparison } from './typed-value.js'
import { setOwn } from '../json-tree.js'

type Obj = Record<string, any>

export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration'
export const BEFORE_FIRST_APPLY = 'before-first-apply'
export const ANCIENT_CHANGES = 'ancient-changes'
export const DEFAULT_MAX_UPDATE_MANAGERS = 10
const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024
const CURRENT_OPERATION = 'current-operation'

/** Fields never recorded in a manager's set (upstream stripMetaManager). */
const STRIP_SET = FieldSet.of(
  makePath('apiVersion'), makePath('kind'), makePath('metadata'), makePath('metadata', 'name'), makePath('metadata', 'namespace'),
  makePath('metadata', 'creationTimestamp'), makePath('metadata', 'selfLink'), makePath('metadata', 'uid'), makePath('metadata', 'clusterName'),
  makePath('metadata', 'generation'), makePath('metadata', 'managedFields'), makePath('metadata', 'resourceVersion'),
)

/** An apply that cannot proceed: 400 (bad body) or 500 (upstream internal errors). */
export class ApplyError extends Error {
  readonly code: 400 | 500
  constructor(code: 400 | 500, message: string) {
    super(message)
    this.name = 'ApplyError'
    this.code = code
  }
  toApiError(): ApiError {
    return this.code === 400 ? badRequest(this.message) : internal(new Error(this.message))
  }
}

/** A field owned by another manager whose value the apply would change. */
export interface Conflict {
  /** The other manager's identifier (JSON of manager, operation, apiVersion for Update entries, subresource). */
  manager: string
  /** The other manager's name. */
  managerName: string
  path: Path
  /** The text form of the path, e.g. `.spec.template.spec.containers[name="app"].image`. */
  field: string
}

// ---- the updater (structured-merge-diff merge.Updater) ----

function filterIgnored(s: FieldSet, ignored: FieldSet | undefined): FieldSet {
  return ignored ? s.recursiveDifference(ignored) : s
}

function dropEmptyManagers(managed: Managed): void {
  for (const [k, v] of managed.fields) if (v.set.empty()) managed.fields.delete(k)
}

/** Ownership changes of the other managers for a write from `live` to `next`; conflicts when not forced. */
function updateOwners(live: unknown, next: unknown, managed: Managed, workflow: string, force: boolean, node: TypeNode, ignored: FieldSet | undefined, sameIsUnchanged = false): { compare: Comparison; conflicts?: Map<string, FieldSet> } {
  const raw = compareObjects(live, next, node, sameIsUnchanged)
  const compare: Comparison = { added: filterIgnored(raw.added, ignored), modified: filterIgnored(raw.modified, ignored), removed: filterIgnored(raw.removed, ignored) }
  const changed = compare.modified.union(compare.added)
  const conflicts = new Map<string, FieldSet>()
  for (const [mgr, vs] of managed.fields) {
    if (mgr === workflow) continue
    const cs = vs.set.intersection(changed)
    if (!cs.empty()) conflicts.set(mgr, cs)
  }
  if (!force && conflicts.size > 0) return { compare, conflicts }
  for (const [mgr, vs] of managed.fields) {
    if (mgr === workflow) continue
    const cs = conflicts.get(mgr)
    if (cs) vs.set = vs.set.difference(cs)
    if (!compare.removed.empty()) vs.set = vs.set.difference(compare.removed)
  }
  dropEmptyManagers(managed)
  return { compare }
}

function updaterUpdate(live: unknown, next: unknown, managed: Managed, manager: string, apiVersion: string, node: TypeNode, ignored: FieldSet | undefined, sameIsUnchanged = false): void {
  const { compare } = updateOwners(live, next, managed, manager, true, node, ignored, sameIsUnchanged)
  const prev = managed.fields.get(manager)?.set ?? new FieldSet()
  const set = filterIgnored(prev.difference(compare.removed).union(compare.modified).union(compare.added), ignored)
  if (set.empty()) managed.fields.delete(manager)
  else managed.fields.set(manager, { set, apiVersion, applied: false })
}

function prune(merged: unknown, managed: Managed, lastSet: FieldSet | undefined, node: TypeNode): unknown {
  if (!lastSet || lastSet.empty()) return merged
  const last = lastSet.ensureNamedFieldsAreMembers(node)
  const pruned0 = removeItems(merged, last, node) ?? {}
  // Add back what any manager (the applier's new set included) still owns.
  let owned = new FieldSet()
  for (const vs of managed.fields.values()) owned = owned.union(vs.set)
  const mergedSet = toFieldSet(merged, node).ensureNamedFieldsAreMembers(node)
  const prunedSet0 = toFieldSet(pruned0, node).ensureNamedFieldsAreMembers(node)
  const pruned1 = removeItems(merged, mergedSet.difference(prunedSet0.union(owned.ensureNamedFieldsAreMembers(node))), node) ?? {}
  // Only remove what the applier had applied before.
  const prunedSet1 = toFieldSet(pruned1, node).ensureNamedFieldsAreMembers(node)
  return removeItems(merged, mergedSet.difference(prunedSet1).intersection(last), node) ?? {}
}

function updaterApply(live: unknown, config: unknown, managed: Managed, manager: string, apiVersion: string, force: boolean, node: TypeNode, ignored: FieldSet | undefined): { object: unknown; conflicts?: Map<string, FieldSet> } {
  const merged = mergeObjects(live, config, node) ?? {}
  const lastSet = managed.fields.get(manager)?.set
  const set = filterIgnored(toFieldSet(config, node), ignored)
  managed.fields.set(manager, { set, apiVersion, applied: true })
  const next = prune(merged, managed, lastSet, node)
  const { conflicts } = updateOwners(live, next, managed, manager, force, node, ignored)
  if (conflicts) return { object: null, conflicts }
  return { object: jsonEqual(live, next) ? null : next }
}

// ---- the field manager layers ----

function stripMeta(managed: Managed, manager: string): void {
  const vs = managed.fields.get(manager)
  if (!vs) return
  vs.set = vs.set.difference(STRIP_SET)
  if (vs.set.empty()) managed.fields.delete(manager)
}

/** An Update by `info` from `live` to `next`: the writer takes what changed (managedFieldsUpdater + stripMeta). */
function trackUpdate(managed: Managed, live: unknown, next: unknown, info: ManagerInfo, now: string, node: TypeNode, ignored: FieldSet | undefined, sameIsUnchanged = false): void {
  updaterUpdate(live, next, managed, CURRENT_OPERATION, info.apiVersion, node, ignored, sameIsUnchanged)
  stripMeta(managed, CURRENT_OPERATION)
  const vs = managed.fields.get(CURRENT_OPERATION)
  if (!vs) return
  managed.fields.delete(CURRENT_OPERATION)
  const id = managerIdentifier(info)
  const prev = managed.fields.get(id)
  managed.fields.set(id, { set: prev ? vs.set.union(prev.set) : vs.set, apiVersion: vs.apiVersion, applied: false })
  managed.times.set(id, now)
}

function timeSeconds(t: string | undefined): number {
  if (t === undefined) return 0
  const ms = Date.parse(t)
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000)
}

/** Keeps at most `max` Update entries by merging the oldest into `ancient-changes` (one per apiVersion). */
export function capUpdateManagers(managed: Managed, max = DEFAULT_MAX_UPDATE_MANAGERS): void {
  if (managed.fields.size <= max) return
  const updaters = [...managed.fields.entries()].filter(([, vs]) => !vs.applied).map(([k]) => k)
  if (updaters.length <= max) return
  updaters.sort((a, b) => {
    const ta = timeSeconds(managed.times.get(a))
    const tb = timeSeconds(managed.times.get(b))
    if (ta !== tb) return ta - tb
    return a < b ? -1 : a > b ? 1 : 0
  })
  const firstOfVersion = new Map<string, string>()
  let length = updaters.length
  for (let i = 0; i < updaters.length && length > max; i++) {
    const mgr = updaters[i]!
    const vs = managed.fields.get(mgr)!
    const time = managed.times.get(mgr)
    const version = vs.apiVersion
    const bucket = managerIdentifier({ manager: ANCIENT_CHANGES, operation: 'Update', apiVersion: version })
    const first = firstOfVersion.get(version)
    if (first === undefined) { firstOfVersion.set(version, mgr); continue }
    if (!managed.fields.has(bucket)) {
      const s = managed.fields.get(first)!
      managed.fields.delete(first)
      managed.fields.set(bucket, s)
    }
    managed.fields.set(bucket, { set: vs.set.union(managed.fields.get(bucket)!.set), apiVersion: vs.apiVersion, applied: vs.applied })
    managed.fields.delete(mgr)
    length--
    managed.times.set(bucket, time)
  }
}

function ignoredSet(ignored: FieldSet | ReadonlyArray<ReadonlyArray<string>> | undefined): FieldSet | undefined {
  if (ignored === undefined) return undefined
  if (ignored instanceof FieldSet) return ignored.empty() ? undefined : ignored
  return ignored.length === 0 ? undefined : FieldSet.of(...ignored.map((p) => makePath(...p)))
}

function withoutManagedFields(o: unknown): Obj {
  const c = isObject(o) ? jsonClone(o) : {}
  if (isObject(c.metadata)) delete c.metadata.managedFields
  return c
}

/** A new top level (and metadata) without managedFields; nested values are shared with `o`. */
function shallowWithoutManagedFields(o: unknown): Obj {
  if (!isObject(o)) return {}
  // Key by key: spread and rest copies of these (often dictionary-mode) objects cost several times more.
  const c: Obj = {}
  for (const k of Object.keys(o)) setOwn(c, k, o[k])
  if (isObject(o.metadata)) {
    const src = o.metadata as Obj
    const md: Obj = {}
    for (const k of Object.keys(src)) if (k !== 'managedFields') setOwn(md, k, src[k])
    c.metadata = md
  }
  return c
}

function setManagedFields(o: Obj, managed: Managed): void {
  const entries = encodeManagedFields(managed)
  if (entries === undefined) {
    if (isObject(o.metadata)) delete o.metadata.managedFields
    return
  }
  if (!isObject(o.metadata)) o.metadata = {}
  o.metadata.managedFields = entries
}

/** Null-valued keys dropped (a JSON null decodes to the zero value, as in Go). */
function dropNulls(v: unknown): void {
  if (Array.isArray(v)) { for (const x of v) dropNulls(x); return }
  if (!isObject(v)) return
  for (const k of Object.keys(v)) {
    if (v[k] === null) delete v[k]
    else dropNulls(v[k])
  }
}

function gvkString(o: Obj): string {
  const av = typeof o.apiVersion === 'string' ? o.apiVersion : ''
  const slash = av.indexOf('/')
  const group = slash >= 0 ? av.slice(0, slash) : ''
  const version = slash >= 0 ? av.slice(slash + 1) : av
  return `${group}/${version}, Kind=${typeof o.kind === 'string' ? o.kind : ''}`
}

function objectGVKNN(o: Obj): string {
  const md = isObject(o.metadata) ? o.metadata : {}
  return `${typeof md.namespace === 'string' ? md.namespace : ''}/${typeof md.name === 'string' ? md.name : ''}; ${gvkString(o)}`
}

// ---- last-applied-configuration (the manager named `kubectl`) ----

function allowedConflictsFromLastApplied(live: Obj, apiVersion: string, node: TypeNode): FieldSet | undefined {
  const ann = isObject(live.metadata) && isObject(live.metadata.annotations) ? live.metadata.annotations[LAST_APPLIED_ANNOTATION] : undefined
  if (typeof ann !== 'string' || ann === '') return undefined
  let last: unknown
  try { last = JSON.parse(ann) } catch { return undefined }
  if (!isObject(last) || last.apiVersion !== apiVersion) return undefined
  try {
    validateTyped(last, node, false)
    const set = toFieldSet(last, node)
    const c = compareObjects(last, live, node)
    return set.difference(c.modified).difference(c.added).difference(c.removed)
  } catch {
    return undefined
  }
}

function buildLastApplied(applied: Obj): string {
  const o = jsonClone(applied)
  if (isObject(o.metadata) && isObject(o.metadata.annotations)) delete o.metadata.annotations[LAST_APPLIED_ANNOTATION]
  return `${goJSON(o)}\n`
}

function setLastApplied(o: Obj, value: string): void {
  if (!isObject(o.metadata)) o.metadata = {}
  const annotations: Obj = isObject(o.metadata.annotations) ? o.metadata.annotations : {}
  annotations[LAST_APPLIED_ANNOTATION] = value
  let total = 0
  for (const [k, v] of Object.entries(annotations)) total += Buffer.byteLength(k) + Buffer.byteLength(typeof v === 'string' ? v : '')
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT) delete annotations[LAST_APPLIED_ANNOTATION]
  o.metadata.annotations = annotations
}

function hasLastApplied(o: Obj): boolean {
  const v = isObject(o.metadata) && isObject(o.metadata.annotations) ? o.metadata.annotations[LAST_APPLIED_ANNOTATION] : undefined
  return typeof v === 'string' && v.length > 0
}

// ---- public API ----

export interface ApplyOptions {
  /** `force=true`: take conflicting fields over instead of failing. */
  force: boolean
  /** The group/version of the request (`v1`, `apps/v1`); the applied body must carry the same apiVersion. */
  apiVersion: string
  /** The kind of the request's type; when set, the applied body must carry it (else 400 `invalid object type`). */
  kind?: string
  /** The time of the request (any Date-parsable form; written as RFC 3339 whole seconds). */
  now: string
  /** The type tree of the kind (typeTree(defs, schemaRef), or typeFromSchema for custom resources). */
  schema: TypeNode
  /** Set when applying through a subresource (`status`). */
  subresource?: string
  /** Reset fields of the endpoint (e.g. [['status']] on the main resource): never owned, never compared. */
  ignoredFields?: FieldSet | ReadonlyArray<ReadonlyArray<string>>
}

export interface ApplyResult {
  /** The merged object with `metadata.managedFields` updated (the live object unchanged when there are conflicts). */
  object: Obj
  /** Non-empty when the apply was refused; answer 409 with conflictError(conflicts). */
  conflicts: Conflict[]
  /** False for a no-op apply (object as live; the manager's time not bumped). */
  changed: boolean
  /** True when there was no live object (the caller answers 201). */
  created: boolean
}

function toConflicts(m: Map<string, FieldSet>): Conflict[] {
  const out: Conflict[] = []
  for (const id of [...m.keys()].sort()) {
    let name = id
    try { name = (JSON.parse(id) as { manager?: string }).manager ?? id } catch { /* a raw name */ }
    for (const p of m.get(id)!.paths()) out.push({ manager: id, managerName: name, path: p, field: pathString(p) })
  }
  return out
}

/**
 * Server-side apply of `applied` (the decoded apply body) onto `live` (undefined when the object does not exist) by
 * `manager`. Throws ApplyError for a body with `metadata.managedFields` (400 `metadata.managedFields must be nil`), a
 * wrong apiVersion (400), list items without their keys or duplicated (500, upstream text), undecodable stored
 * managedFields (500). Conflicts are returned, not thrown. The result is not defaulted or validated.
 */
export function applyPatch(live: object | undefined, applied: object, manager: string, opts: ApplyOptions): ApplyResult {
  if (!isObject(applied)) throw new ApplyError(400, 'error decoding patch: the apply body must be an object')
  const body = applied as Obj
  const mf = isObject(body.metadata) ? body.metadata.managedFields : undefined
  if (mf !== undefined && mf !== null) throw new ApplyError(400, 'metadata.managedFields must be nil')
  if (body.apiVersion !== opts.apiVersion) {
    throw new ApplyError(400, `Incorrect version specified in apply patch. Specified patch version: ${typeof body.apiVersion === 'string' ? body.apiVersion : ''}, expected: ${opts.apiVersion}`)
  }
  if (opts.kind !== undefined && body.kind !== opts.kind) {
    // Upstream's version check compares the whole group/version/kind, printed as Go prints a GroupVersionKind.
    const gv = opts.apiVersion.includes('/') ? opts.apiVersion : `/${opts.apiVersion}`
    throw new ApplyError(400, `invalid object type: ${gv}, Kind=${typeof body.kind === 'string' ? body.kind : ''}`)
  }
  const node = opts.schema
  const now = formatTime(opts.now)
  const ignored = ignoredSet(opts.ignoredFields)
  let liveManaged: Managed
  try {
    liveManaged = decodeManagedFields(isObject(live) && isObject(live.metadata) ? live.metadata.managedFields : undefined)
  } catch (e) {
    throw new ApplyError(500, `failed to decode managed fields: ${(e as Error).message}`)
  }
  const liveObj = withoutManagedFields(live)
  const config = jsonClone(body)
  try { validateTyped(config, node, false) } catch (e) {
    throw new ApplyError(500, `failed to create typed patch object (${objectGVKNN(config)}): ${(e as Error).message}`)
  }
  try { validateTyped(liveObj, node, true) } catch (e) {
    throw new ApplyError(500, `failed to create typed live object (${objectGVKNN(liveObj)}): ${(e as Error).message}`)
  }
  const info: ManagerInfo = { manager: manager === '' ? 'unknown' : manager, operation: 'Apply', apiVersion: opts.apiVersion }
  if (opts.subresource) info.subresource = opts.subresource
  const id = managerIdentifier(info)

  const run = (force: boolean): { object: unknown; managed: Managed; conflicts?: Map<string, FieldSet> } => {
    const managed = cloneManaged(liveManaged)
    if (managed.fields.size === 0) {
      // First apply on an untracked object: everything it has belongs to `before-first-apply`.
      const before: ManagerInfo = { manager: BEFORE_FIRST_APPLY, operation: 'Update', apiVersion: opts.apiVersion }
      if (opts.subresource) before.subresource = opts.subresource
      trackUpdate(managed, {}, liveObj, before, now, node, ignored)
      capUpdateManagers(managed)
    }
    let res: { object: unknown; conflicts?: Map<string, FieldSet> }
    try {
      res = updaterApply(liveObj, config, managed, id, opts.apiVersion, force, node, ignored)
    } catch (e) {
      if (e instanceof TypedError) throw new ApplyError(500, `failed to merge config: ${e.message}`)
      throw e
    }
    if (res.conflicts) return { object: null, managed, conflicts: res.conflicts }
    stripMeta(managed, id)
    if (res.object !== null) managed.times.set(id, now)
    return { object: res.object, managed }
  }

  let r = run(opts.force)
  if (r.conflicts && info.manager === 'kubectl') {
    // Fields last set by client-side apply and untouched since may be taken over without force.
    const allowed = allowedConflictsFromLastApplied(liveObj, opts.apiVersion, node)
    if (allowed) {
      const remaining = new Map<string, FieldSet>()
      for (const [mgr, set] of r.conflicts) {
        const left = FieldSet.of(...set.paths().filter((p) => !allowed.has(p)))
        if (!left.empty()) remaining.set(mgr, left)
      }
      if (remaining.size > 0) r = { ...r, conflicts: remaining }
      else r = run(true)
    }
  }
  if (r.conflicts) {
    return { object: isObject(live) ? jsonClone(live) as Obj : {}, conflicts: toConflicts(r.conflicts), changed: false, created: live === undefined }
  }
  const object = (r.object !== null && isObject(r.object) ? r.object : jsonClone(liveObj)) as Obj
  dropNulls(object)
  if (info.manager === 'kubectl' && hasLastApplied(object)) setLastApplied(object, buildLastApplied(body))
  setManagedFields(object, r.managed)
  return { object, conflicts: [], changed: r.object !== null, created: live === undefined }
}

/** An Update's decoded managedFields keep their source objects: sets the write leaves alone are encoded with them. */
const KEEP_SOURCES = { keepSources: true }

export interface UpdateOptions {
  /** Set when writing through a subresource: the body's managedFields are ignored. */
  subresource?: string
  /** Reset fields of the endpoint (e.g. [['status']] on the main resource). */
  ignoredFields?: FieldSet | ReadonlyArray<ReadonlyArray<string>>
  /**
   * Whether `managedFields: []` in the body clears the tracking like `[{}]` (upstream code: yes; the protocol document
   * says an empty list does not reset). Default true.
   */
  emptyListResets?: boolean
  /**
   * After a reset, let the writer own the fields its request changed (the protocol document's wording). Upstream code
   * leaves a reset object untracked instead. Default false.
   */
  ownChangesAfterReset?: boolean
}

/**
 * Ownership for a non-apply write (create, PUT, JSON / merge / strategic patch): `old` is the stored object
 * (undefined on create), `updated` the object about to be stored (after defaulting). Returns a copy of `updated` with
 * `metadata.managedFields` set: fields changed or added move to `manager` (an Update entry for `apiVersion`), removed
 * fields leave every set. A body with valid explicit managedFields replaces the stored ones; `[{}]` (and `[]`) clears
 * them; an object without any tracking (legacy) stays untracked. Never throws for ownership problems: the stored
 * managedFields are kept instead, as upstream. The result is a new top-level object and metadata; nested values are
 * shared with `updated` (neither input is modified).
 */
export function updateManagedFields(old: object | undefined, updated: object, manager: string, operation: 'Update', apiVersion: string, now: string, schema: TypeNode, opts: UpdateOptions = {}): Obj {
  const liveMF = isObject(old) && isObject((old as Obj).metadata) ? (old as Obj).metadata.managedFields : undefined
  const newMF = isObject(updated) && isObject((updated as Obj).metadata) ? (updated as Obj).metadata.managedFields : undefined
  const decodeOrEmpty = (v: unknown): Managed => { try { return decodeManagedFields(v, KEEP_SOURCES) } catch { return emptyManaged() } }
  let managed: Managed
  let reset = false
  if (opts.subresource) managed = decodeOrEmpty(liveMF)
  else if (isResetManagedFields(newMF, opts.emptyListResets ?? true)) { managed = emptyManaged(); reset = true }
  else {
    let m: Managed | undefined
    try { m = decodeManagedFields(newMF, KEEP_SOURCES) } catch { m = undefined }
    managed = m && m.fields.size > 0 ? m : decodeOrEmpty(liveMF)
  }
  const result = shallowWithoutManagedFields(updated)
  const isCreate = old === undefined || !(isObject((old as Obj).metadata) && (old as Obj).metadata.uid)
  if (managed.fields.size === 0 && !isCreate && !(reset && opts.ownChangesAfterReset)) return result
  const liveObj = shallowWithoutManagedFields(old)
  const info: ManagerInfo = { manager: manager === '' ? 'unknown' : manager, operation, apiVersion }
  if (opts.subresource) info.subresource = opts.subresource
  try {
    // Errors of the walk are not reported (the stored managedFields are kept): values the write kept are not walked.
    trackUpdate(managed, liveObj, result, info, formatTime(now), schema, ignoredSet(opts.ignoredFields), true)
    capUpdateManagers(managed)
  } catch {
    if (liveMF !== undefined) {
      if (!isObject(result.metadata)) result.metadata = {}
      result.metadata.managedFields = jsonClone(liveMF)
    }
    return result
  }
  setManagedFields(result, managed)
  return result
}

/**
 * The 409 text and causes of refused apply (upstream NewConflictError): one conflict reads
 * `Apply failed with 1 conflict: conflict with "mgr" using v1: .data.a`; several are grouped per manager (sorted),
 * `conflicts with <manager>:` then `- <path>` lines, joined by newlines. `manager` (the applier) is not part of it.
 */
export function conflictMessage(conflicts: Conflict[], _manager?: string): { message: string; causes: StatusCause[] } {
  const causes: StatusCause[] = conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${printManager(c.manager)}`, field: c.field }))
  if (conflicts.length === 1) {
    const c = conflicts[0]!
    return { message: `Apply failed with 1 conflict: conflict with ${printManager(c.manager)}: ${c.field}`, causes }
  }
  const byManager = new Map<string, string[]>()
  for (const c of conflicts) {
    const l = byManager.get(c.manager)
    if (l) l.push(c.field)
    else byManager.set(c.manager, [c.field])
  }
  const lines: string[] = []
  for (const m of [...byManager.keys()].sort()) {
    lines.push(`conflicts with ${printManager(m)}:`)
    for (const f of byManager.get(m)!) lines.push(`- ${f}`)
  }
  return { message: `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`, causes }
}

/** The 409 Conflict Status of a refused apply (details carry only the causes). */
export function conflictError(conflicts: Conflict[], manager?: string): ApiError {
  const { message, causes } = conflictMessage(conflicts, manager)
  return new ApiError(409, 'Conflict', message, { causes })
}

/**
 * The manager name of a write without `fieldManager`: the User-Agent up to the first `/`, non-printable characters
 * dropped, cut at 128 bytes (`kubectl/v1.32.4 (linux/amd64) kubernetes/abc` → `kubectl`).
 */
export function managerFromUserAgent(ua: string): string {
  const head = ua.split('/')[0] ?? ''
  let out = ''
  let len = 0
  for (const ch of head) {
    if (!(ch === ' ' || /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(ch))) continue
    const b = Buffer.byteLength(ch)
    if (len + b > 128) break
    out += ch
    len += b
  }
  return out
}

/** `fieldManager` when given, else the User-Agent derivation (upstream managerOrUserAgent). */
export function managerOrUserAgent(fieldManager: string | undefined, ua: string | undefined): string {
  if (fieldManager) return fieldManager
  return managerOfAgent(ua ?? '')
}

/** Managers derived from User-Agents (clients send the same few agents over and over). */
const managerOfAgent = memoize(managerFromUserAgent, 1024, 512)
