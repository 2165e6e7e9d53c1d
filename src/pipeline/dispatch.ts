// The storage stage: get, list, create, update, delete and deletecollection against the shard that owns the type.
import {
  ApiError, alreadyExists, badRequest, conflict, expired, forbidden, internal, invalid, methodNotAllowed, notFound,
  preconditionConflict, tooLargeResourceVersion, fieldNotSupported, fieldInvalid, fieldForbidden, type FieldError,
} from '../machinery/errors.js'
import { objectKey, typePrefix, recordAttrs, recordObject, recordRv, RV_MARKER, type Attrs } from '../machinery/storage-format.js'
import { parseFieldSelector, parseLabelSelector, matchFields, matchLabels, SelectorError, type FieldRequirement, type LabelSelector } from '../machinery/selectors.js'
import type { Obj, ResolvedDefinition } from '../registry/define.js'
import type { Registry } from '../registry/index.js'
import type { Store } from './store.js'
import type { RequestContext, Response } from './context.js'
import { admitPlugins } from '../admission/chain.js'
import { admitCreate, admitUpdate, attrsOf, decodeBody, decodeObject, requireResourceVersion, rfc3339, toStoredJson, canonical, type UpdateTarget } from './admission.js'
import { contentTypeOf, encodeJsonBytes, encodeList, encodeValue, negotiate, type Alias } from './encode.js'
import { buildTable, tableVersionOf } from './table.js'
import { updateManagedFields, managerOrUserAgent } from '../machinery/apply/apply.js'
import { typeTree } from '../machinery/patch/schema-walk.js'
import { loadDefinitions } from '../registry/schema.js'

let store: Store
let registry: Registry

export function configureDispatch(s: Store, r: Registry): void { store = s; registry = r }
export function storeOf(): Store { return store }

const GRACEFUL_RESOURCES = new Set(['/pods'])
const MAX_CREATE_ATTEMPTS = 8
const MAX_UPDATE_ATTEMPTS = 16

export function gr(def: ResolvedDefinition) { return { group: def.group, resource: def.resource } }

export function shardOfDef(def: ResolvedDefinition): number { return store.shardFor(def.group, def.resource) }

export function keyFor(def: ResolvedDefinition, namespace: string, name: string): string {
  return objectKey(def.group, def.resource, def.scope === 'Namespaced' ? namespace : '', name)
}

export function objectResponse(ctx: RequestContext, status: number, json: Buffer | string): Response {
  const tv = ctx.info.verb === 'get' ? tableVersionOf(ctx.headers['accept']) : null
  if (tv && ctx.def) {
    const o = JSON.parse(json.toString()) as Obj
    const table = buildTable(ctx.def, [o], { resourceVersion: o.metadata?.resourceVersion ?? '' }, ctx.query, tv)
    return { status, body: encodeValue(table, 'json', ctx.pretty), contentType: 'application/json', headers: ctx.responseHeaders }
  }
  const mt = negotiate(ctx.headers['accept'])
  return { status, body: encodeJsonBytes(json, mt, ctx.pretty, aliasOf(ctx)), contentType: contentTypeOf(mt), headers: ctx.responseHeaders }
}

export function valueResponse(ctx: RequestContext, status: number, value: unknown): Response {
  const mt = negotiate(ctx.headers['accept'])
  return { status, body: encodeValue(value, mt, ctx.pretty), contentType: contentTypeOf(mt), headers: ctx.responseHeaders }
}

export function withRv(json: string, rv: number): string {
  const at = json.indexOf(RV_MARKER)
  return at < 0 ? json : json.slice(0, at) + String(rv) + json.slice(at + RV_MARKER.length)
}

export function isDryRun(ctx: RequestContext, opts?: Obj): boolean {
  const qs = ctx.query.getAll('dryRun')
  const vals = [...qs, ...(Array.isArray(opts?.dryRun) ? opts!.dryRun : [])].filter((v) => v !== '')
  for (const v of vals) if (v !== 'All') throw badRequest(`Invalid dry run value: "${v}"; only "All" is supported`)
  return vals.length > 0
}

// ---- resourceVersion waits ----

export function parseRv(s: string, what = 'resourceVersion'): number {
  if (!/^\d+$/.test(s)) throw badRequest(`invalid ${what}: "${s}"`)
  return Number(s)
}

/** Waits until the shard has committed through `rv` (NotOlderThan), or answers 504 Too large resource version. */
async function waitForVersion(shard: number, rv: number): Promise<void> {
  const deadline = Date.now() + 3000
  for (;;) {
    const wm = store.snapshot(shard)
    if (wm >= rv) return
    if (rv > store.counter() + 1 || Date.now() > deadline) throw tooLargeResourceVersion(rv, wm)
    await new Promise((r) => setTimeout(r, 5))
  }
}

// ---- get ----

export async function get(ctx: RequestContext, def: ResolvedDefinition): Promise<Response> {
  const shard = shardOfDef(def)
  const rvParam = ctx.query.get('resourceVersion')
  if (rvParam !== null && rvParam !== '' && rvParam !== '0') await waitForVersion(shard, parseRv(rvParam))
  const rec = store.getFresh(shard, keyFor(def, ctx.info.namespace, ctx.info.name))
  if (!rec) throw notFound(gr(def), ctx.info.name)
  return objectResponse(ctx, 200, recordObject(rec))
}

// ---- list ----

interface Selectors { labels: LabelSelector | null; fields: FieldRequirement[] | null }

export function parseSelectors(ctx: RequestContext, def: ResolvedDefinition): Selectors {
  let labels: LabelSelector | null = null
  let fields: FieldRequirement[] | null = null
  const ls = ctx.query.get('labelSelector')
  const fs = ctx.query.get('fieldSelector')
  try {
    if (ls) { labels = parseLabelSelector(ls); if (labels.length === 0) labels = null }
    if (fs) { fields = parseFieldSelector(fs); if (fields.length === 0) fields = null }
  } catch (err) {
    if (err instanceof SelectorError) throw badRequest(err.message)
    throw err
  }
  if (fields) {
    for (const f of fields) {
      if (f.field === 'metadata.name' || f.field === 'metadata.namespace') continue
      if (def.fieldSelectors && f.field in def.fieldSelectors) continue
      if (def.fieldSelectors) throw badRequest(`field label not supported: ${f.field}`)
      throw badRequest(`"${f.field}" is not a known field selector: only "metadata.name", "metadata.namespace"`)
    }
  }
  return { labels, fields }
}

function fieldValue(key: string, attrs: Attrs, field: string): string {
  if (field === 'metadata.name') return key.slice(key.lastIndexOf('/') + 1)
  if (field === 'metadata.namespace') { const p = key.split('/'); return p[2] }
  return attrs.f?.[field] ?? ''
}

export function matches(sel: Selectors, key: string, rec: Uint8Array): boolean {
  if (!sel.labels && !sel.fields) return true
  const a = recordAttrs(rec)
  if (sel.labels && !matchLabels(sel.labels, a.l)) return false
  if (sel.fields && !matchFields(sel.fields, (f) => fieldValue(key, a, f))) return false
  return true
}

interface ContinueToken { rv: number; start: string; /** when the first page was served (ms) */ t: number; /** items returned by the pages so far */ n: number }

/** Continue tokens live this long; then 410 with a token that continues from the newest state. */
const CONTINUE_TTL_MS = 5 * 60 * 1000
/** Exact reads of an older version are served this far back. */
const SNAPSHOT_RETENTION_MS = 75 * 1000

function encodeContinue(t: ContinueToken): string { return Buffer.from(JSON.stringify({ v: 'meta.orch.io/v1', rv: t.rv, start: t.start, t: t.t, n: t.n })).toString('base64url') }
function decodeContinue(s: string, prefix: string): ContinueToken {
  let t: any
  try { t = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) } catch { throw badRequest('invalid continue token: bad encoding') }
  if (!t || typeof t.rv !== 'number' || typeof t.start !== 'string' || typeof t.t !== 'number' || t.v !== 'meta.orch.io/v1') throw badRequest('invalid continue token: unrecognized format')
  if (!t.start.startsWith(prefix)) throw badRequest('invalid continue token: key is outside the requested range')
  return { rv: t.rv, start: t.start, t: t.t, n: typeof t.n === 'number' && t.n >= 0 ? t.n : 0 }
}

const CONTINUE_TOO_OLD = 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.'

function continueExpired(t: ContinueToken): ApiError {
  const e = expired(CONTINUE_TOO_OLD)
  e.continueToken = encodeContinue({ rv: -1, start: t.start, t: Date.now(), n: t.n })
  return e
}

type Overlay = Map<string, Buffer | null>

/**
 * The state of a type at an older version `rv`, as a rollback of the current snapshot: for each key changed since,
 * its value at `rv` (null: absent then). Leaves the read snapshot fresh and returns its version; null when the ring
 * no longer reaches back to `rv`.
 */
async function rollback(shard: number, def: ResolvedDefinition, rv: number, maxAgeMs?: number): Promise<{ overlay: Overlay; snapRv: number } | null> {
  const prefix = typePrefix(def.group, def.resource)
  for (let attempt = 0; ; attempt++) {
    const r = await store.clients[shard].request({ op: 'watchBacklog', prefix, rv, maxAgeMs })
    if (!r.ok) return null
    // The snapshot must not hold commits the ring had not yet published when it answered.
    const snapRv = store.snapshot(shard)
    if (r.rv < snapRv && attempt < 20) { await new Promise((res) => setTimeout(res, 2)); continue }
    const overlay: Overlay = new Map()
    for (const [type, key, evRv, , prev] of r.events ?? []) {
      if (evRv > snapRv || overlay.has(key)) continue
      overlay.set(key, type === 'ADDED' ? null : Buffer.from(prev!))
    }
    return { overlay, snapRv }
  }
}

/**
 * Objects not yet returned at the overlay's version: the kept count of the prefix, corrected for keys created or
 * deleted since, less what the earlier pages and this one returned.
 */
function remainingAt(shard: number, prefix: string, returned: number, overlay: Overlay | null): number {
  let n = store.count(shard, prefix) - returned
  if (overlay) {
    for (const [key, old] of overlay) {
      if (!key.startsWith(prefix)) continue
      const now = store.get(shard, key) !== undefined
      if (now && old === null) n--
      else if (!now && old !== null) n++
    }
  }
  return n
}

/** Records under a prefix in key order after `after`, with an overlay of older values merged in. */
function* rangeAt(shard: number, prefix: string, after: string | undefined, overlay: Overlay | null): Generator<{ key: string; value: Buffer }> {
  if (!overlay || overlay.size === 0) { yield* store.range(shard, prefix, after); return }
  const ov = [...overlay.entries()].filter(([k]) => k.startsWith(prefix) && (after === undefined || k > after)).sort((a, b) => (a[0] < b[0] ? -1 : 1))
  let i = 0
  for (const cur of store.range(shard, prefix, after)) {
    while (i < ov.length && ov[i][0] < cur.key) { const [key, value] = ov[i++]; if (value) yield { key, value } }
    if (i < ov.length && ov[i][0] === cur.key) { const [key, value] = ov[i++]; if (value) yield { key, value }; continue }
    yield cur
  }
  while (i < ov.length) { const [key, value] = ov[i++]; if (value) yield { key, value } }
}

function invalidListOptions(errs: FieldError[]): ApiError {
  return invalid('ListOptions.meta.orch.io', 'meta.orch.io', 'ListOptions', '', errs)
}

/** The list resourceVersion table of spec 1: which reads are valid, and at what version. */
function listVersion(ctx: RequestContext, hasContinue: boolean): { rv: number | null; match: string } {
  const rvParam = ctx.query.get('resourceVersion')
  const match = ctx.query.get('resourceVersionMatch') ?? ''
  const rv = rvParam === null || rvParam === '' ? null : parseRv(rvParam)
  const errs: FieldError[] = []
  if (match !== '' && match !== 'NotOlderThan' && match !== 'Exact') errs.push(fieldNotSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']))
  if (match !== '' && rv === null) errs.push(fieldForbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'))
  if (match !== '' && hasContinue) errs.push(fieldForbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'))
  if (match === 'Exact' && rv === 0) errs.push(fieldForbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
  if (ctx.query.get('sendInitialEvents') !== null) errs.push(fieldForbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'))
  if (errs.length > 0) throw invalidListOptions(errs)
  if (hasContinue && rv !== null && rv !== 0) throw badRequest('specifying resource version is not allowed when using continue')
  return { rv, match }
}

export async function list(ctx: RequestContext, def: ResolvedDefinition): Promise<Response> {
  const shard = shardOfDef(def)
  const ns = def.scope === 'Namespaced' && ctx.info.namespace !== '' ? ctx.info.namespace : undefined
  const prefix = typePrefix(def.group, def.resource, def.scope === 'Namespaced' ? ns : '')
  const sel = parseSelectors(ctx, def)
  const limitParam = ctx.query.get('limit')
  let limit = 0
  if (limitParam !== null && limitParam !== '') {
    if (!/^-?\d+$/.test(limitParam)) throw badRequest(`invalid limit: "${limitParam}"`)
    limit = Math.max(0, Number(limitParam))
  }
  const cont = ctx.query.get('continue')
  const v = listVersion(ctx, !!cont)
  let listRv: number
  let after: string | undefined
  let overlay: Overlay | null = null
  let started = Date.now()
  let returnedBefore = 0
  if (cont) {
    const t = decodeContinue(cont, prefix)
    after = t.start
    started = t.t
    returnedBefore = t.n
    if (t.rv < 0) {
      listRv = store.snapshot(shard)
    } else {
      if (Date.now() - t.t > CONTINUE_TTL_MS) throw continueExpired(t)
      const at = await rollback(shard, def, t.rv)
      if (!at) throw continueExpired(t)
      overlay = at.overlay
      listRv = t.rv
    }
  } else if (v.match === 'Exact' && v.rv !== null) {
    await waitForVersion(shard, v.rv)
    const at = await rollback(shard, def, v.rv, SNAPSHOT_RETENTION_MS)
    if (!at) throw expired('The resourceVersion for the provided list is too old.')
    overlay = at.overlay
    listRv = v.rv
  } else if (limit > 0 && v.match === '' && v.rv !== null && v.rv !== 0) {
    // limit with a resourceVersion and no match: Exact, per the list table.
    await waitForVersion(shard, v.rv)
    const at = await rollback(shard, def, v.rv, SNAPSHOT_RETENTION_MS)
    if (!at) throw expired('The resourceVersion for the provided list is too old.')
    overlay = at.overlay
    listRv = v.rv
  } else {
    if (v.rv !== null && v.rv !== 0) await waitForVersion(shard, v.rv)
    listRv = store.snapshot(shard)
  }
  const parts: Buffer[] = []
  let count = 0
  let lastKey: string | undefined
  let more = false
  for (const { key, value } of rangeAt(shard, prefix, after, overlay)) {
    if (!matches(sel, key, value)) continue
    if (limit > 0 && count >= limit) { more = true; break }
    parts.push(recordObject(value))
    count++
    lastKey = key
  }
  const meta: Obj = { resourceVersion: String(listRv) }
  if (more && lastKey !== undefined) {
    meta.continue = encodeContinue({ rv: listRv, start: lastKey, t: started, n: returnedBefore + count })
    if (!sel.labels && !sel.fields) meta.remainingItemCount = Math.max(0, remainingAt(shard, prefix, returnedBefore + count, overlay))
  }
  return listResponse(ctx, def, meta, parts)
}

function listResponse(ctx: RequestContext, def: ResolvedDefinition, meta: Obj, items: Array<Buffer | string>): Response {
  const tv = ctx.info.verb === 'list' ? tableVersionOf(ctx.headers['accept']) : null
  if (tv) {
    const objects = items.map((it) => JSON.parse(it.toString()) as Obj)
    const table = buildTable(def, objects, meta, ctx.query, tv)
    return { status: 200, body: encodeValue(table, 'json', ctx.pretty), contentType: 'application/json', headers: ctx.responseHeaders }
  }
  const mt = negotiate(ctx.headers['accept'])
  const body = encodeList(def.apiVersion, def.listKind, meta, items, mt, ctx.pretty, aliasOf(ctx))
  return { status: 200, body, contentType: contentTypeOf(mt), headers: ctx.responseHeaders }
}

/** The alias pair of a request through an upstream alias path (protobuf answers need it at encode time). */
export function aliasOf(ctx: RequestContext): Alias | undefined {
  return ctx.aliasGroup ? [ctx.info.group, ctx.aliasGroup] : undefined
}

// ---- create ----

function namespaceState(ns: string): 'missing' | 'terminating' | 'active' {
  const def = registry.byGroupResource('', 'namespaces')!
  const shard = shardOfDef(def)
  const key = objectKey('', 'namespaces', '', ns)
  // The snapshot of this turn answers almost always; only a miss is confirmed against the newest commit.
  const rec = store.get(shard, key) ?? store.getFresh(shard, key)
  if (!rec) return 'missing'
  return recordAttrs(rec).d ? 'terminating' : 'active'
}

export function checkNamespace(def: ResolvedDefinition, ns: string, name: string): void {
  if (def.scope !== 'Namespaced') return
  const st = namespaceState(ns)
  if (st === 'missing') throw notFound({ group: '', resource: 'namespaces' }, ns)
  if (st === 'terminating') throw forbidden(gr(def), name, `unable to create new content in namespace ${ns} because it is being terminated`)
}

/** `tracked`: the body's managedFields are already computed (server-side apply creating the object). */
export async function create(ctx: RequestContext, def: ResolvedDefinition, opts: { tracked?: boolean } = {}): Promise<Response> {
  if (ctx.info.name !== '') throw methodNotAllowed()
  const o = decodeObject(ctx, def)
  const dry = isDryRun(ctx)
  const now = Date.now()
  const generated = !o.metadata.name && !!o.metadata.generateName
  for (let attempt = 0; ; attempt++) {
    const obj = attempt === 0 ? o : structuredClone(o)
    if (generated) delete obj.metadata.name
    admitCreate(ctx, def, obj, now)
    await admitPlugins(ctx, def, 'CREATE', obj)
    const name = obj.metadata.name as string
    checkNamespace(def, ctx.info.namespace, name)
    const json = toStoredJson(opts.tracked ? obj : trackFields(ctx, def, undefined, obj, 'main', now))
    if (dry) return objectResponse(ctx, 201, withRv(json, 0).replace('"resourceVersion":"0",', ''))
    const shard = shardOfDef(def)
    const r = await store.put(shard, keyFor(def, ctx.info.namespace, name), 0, JSON.stringify(attrsOf(def, obj)), json)
    if (r.ok) return objectResponse(ctx, 201, withRv(json, r.rv))
    if (r.reason === 'exists') {
      if (generated && attempt < MAX_CREATE_ATTEMPTS) continue
      throw alreadyExists(gr(def), name, generated)
    }
    throw internal(r.message ?? r.reason)
  }
}

// ---- update ----

export function parseStored(rec: Buffer): Obj { return JSON.parse(recordObject(rec).toString('utf8')) as Obj }

/** Whether an object whose finalizers are gone and whose deletion started must now be removed. */
function readyToRemove(o: Obj, now: number): boolean {
  const m = o.metadata
  if (!m.deletionTimestamp) return false
  if (Array.isArray(m.finalizers) && m.finalizers.length > 0) return false
  if (Array.isArray(o.spec?.finalizers) && o.spec.finalizers.length > 0 && o.kind === 'Namespace') return false
  if (m.deletionGracePeriodSeconds > 0 && Date.parse(m.deletionTimestamp) > now) return false
  return true
}

/** The manager of a non-apply write: `fieldManager`, else derived from the User-Agent (checked as upstream). */
export function managerOf(ctx: RequestContext): string {
  const fm = ctx.query.get('fieldManager')
  if (fm !== null && fm !== '') {
    if (fm.length > 128 || /[^\x20-\x7e]/.test(fm)) {
      throw invalid('PatchOptions.meta.orch.io', 'meta.orch.io', 'PatchOptions', '', [fieldInvalid('fieldManager', fm, 'must consist of printable characters and be at most 128 characters long')])
    }
    return fm
  }
  return managerOrUserAgent(undefined, ctx.headers['user-agent'])
}

/** Fields reset by an endpoint: the main resource never owns status, the status endpoint never owns spec. */
export function resetFields(def: ResolvedDefinition, target: UpdateTarget): string[][] {
  if (!def.subresources?.includes('status')) return []
  return target === 'status' ? [['spec']] : [['status']]
}

/** managedFields of a non-apply write (create, update, patch): changed fields move to the writer. */
function trackFields(ctx: RequestContext, def: ResolvedDefinition, old: Obj | undefined, o: Obj, target: UpdateTarget, now: number): Obj {
  return updateManagedFields(old, o, managerOf(ctx), 'Update', def.apiVersion, rfc3339(now), typeTree(loadDefinitions(), def.schemaRef),
    { subresource: target === 'main' ? undefined : target, ignoredFields: resetFields(def, target) })
}

/**
 * What a write makes of the stored object. It gets a copy of the stored object and its resourceVersion; returns the
 * new object, and whether its managedFields are already set (apply) or must be tracked as an Update.
 */
export type Mutation = (old: Obj, curRv: number) => { object: Obj; tracked: boolean }

/**
 * The read-modify-write of update and patch (upstream GuaranteedUpdate): read the newest object, build the new one,
 * admit it, write it conditionally on the version read; retried on races unless the client pinned a version.
 */
export async function guaranteedUpdate(ctx: RequestContext, def: ResolvedDefinition, target: UpdateTarget, name: string, clientRv: number, mutate: Mutation): Promise<Response> {
  const dry = isDryRun(ctx)
  const shard = shardOfDef(def)
  const key = keyFor(def, ctx.info.namespace, name)
  for (let attempt = 0; attempt < MAX_UPDATE_ATTEMPTS; attempt++) {
    const rec = store.getFresh(shard, key)
    if (!rec) throw notFound(gr(def), name)
    const curRv = recordRv(rec)
    if (clientRv !== 0 && clientRv !== curRv) throw conflict(gr(def), name)
    const old = parseStored(rec)
    const m = mutate(structuredClone(old), curRv)
    let o = m.object
    const now = Date.now()
    admitUpdate(ctx, def, o, old, target)
    await admitPlugins(ctx, def, 'UPDATE', o, old)
    if (!m.tracked) o = trackFields(ctx, def, old, o, target, now)
    const json = toStoredJson(o)
    const oldJson = (() => { old.metadata.resourceVersion = RV_MARKER; return JSON.stringify(canonical(old)) })()
    if (json === oldJson) return objectResponse(ctx, 200, recordObject(rec))
    if (dry) return objectResponse(ctx, 200, withRv(json, curRv))
    const attrs = JSON.stringify(attrsOf(def, o))
    const r = readyToRemove(o, now)
      ? await store.remove(shard, key, curRv, attrs, json)
      : await store.put(shard, key, curRv, attrs, json)
    if (r.ok) return objectResponse(ctx, 200, withRv(json, r.rv))
    if (r.reason === 'notfound') throw notFound(gr(def), name)
    if (r.reason === 'conflict') {
      if (clientRv !== 0) throw conflict(gr(def), name)
      continue
    }
    throw internal(r.message ?? r.reason)
  }
  throw conflict(gr(def), name)
}

export async function update(ctx: RequestContext, def: ResolvedDefinition, target: UpdateTarget): Promise<Response> {
  const o0 = decodeObject(ctx, def)
  const name = ctx.info.name
  if (o0.metadata.name === undefined || o0.metadata.name === '') o0.metadata.name = name
  if (o0.metadata.name !== name) throw badRequest(`the name of the object (${o0.metadata.name}) does not match the name on the URL (${name})`)
  requireResourceVersion(def, o0)
  const clientRv = o0.metadata.resourceVersion ? parseRv(String(o0.metadata.resourceVersion), 'metadata.resourceVersion') : 0
  return guaranteedUpdate(ctx, def, target, name, clientRv, (_old, _rv) => ({ object: structuredClone(o0), tracked: false }))
}

// ---- delete ----

const POLICIES = ['Foreground', 'Background', 'Orphan']

export interface DeleteOptions { gracePeriodSeconds?: number; propagationPolicy?: string; orphanDependents?: boolean; preconditions?: { uid?: string; resourceVersion?: string }; dryRun?: string[] }

function readDeleteOptions(ctx: RequestContext, def: ResolvedDefinition): DeleteOptions {
  let opts: Obj = {}
  if (ctx.body.length > 0) {
    const v = decodeBody(ctx)
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) opts = v as Obj
    else if (v !== null && v !== undefined) throw badRequest('the body of a delete must be a DeleteOptions object')
  }
  const q = ctx.query
  if (q.get('gracePeriodSeconds') !== null) opts.gracePeriodSeconds = Number(q.get('gracePeriodSeconds'))
  if (q.get('propagationPolicy') !== null) opts.propagationPolicy = q.get('propagationPolicy')
  if (q.get('orphanDependents') !== null) opts.orphanDependents = q.get('orphanDependents') === 'true'
  const errs = []
  if (opts.gracePeriodSeconds !== undefined && (!Number.isInteger(opts.gracePeriodSeconds))) errs.push(fieldInvalid('gracePeriodSeconds', opts.gracePeriodSeconds, 'must be an integer'))
  if (opts.propagationPolicy !== undefined && !POLICIES.includes(opts.propagationPolicy)) errs.push(fieldNotSupported('propagationPolicy', opts.propagationPolicy, POLICIES))
  if (opts.orphanDependents !== undefined && opts.propagationPolicy !== undefined) errs.push(fieldInvalid('propagationPolicy', opts.propagationPolicy, 'orphanDependents and deletionPropagation cannot be both set'))
  if (errs.length > 0) throw invalid('DeleteOptions', '', 'DeleteOptions', '', errs)
  return opts as DeleteOptions
}

function successStatus(def: ResolvedDefinition, name: string, uid: string): Obj {
  const details: Obj = { name }
  if (def.group !== '') details.group = def.group
  details.kind = def.resource
  details.uid = uid
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details }
}

interface DeleteOutcome { status: number; json: string; removed: boolean }

/** One object's delete: preconditions, finalizers and grace, then remove or mark; retried on races. */
export async function deleteOne(ctx: RequestContext, def: ResolvedDefinition, namespace: string, name: string, opts: DeleteOptions, dry: boolean): Promise<DeleteOutcome> {
  const shard = shardOfDef(def)
  const key = keyFor(def, namespace, name)
  for (let attempt = 0; attempt < MAX_UPDATE_ATTEMPTS; attempt++) {
    const rec = store.getFresh(shard, key)
    if (!rec) throw notFound(gr(def), name)
    const curRv = recordRv(rec)
    const o = parseStored(rec)
    const m = o.metadata
    const pre = opts.preconditions
    if (pre?.uid && pre.uid !== m.uid) {
      throw preconditionConflict(def.group, def.kind, name, `the UID in the precondition (${pre.uid}) does not match the UID in record (${m.uid}). The object might have been deleted and then recreated`)
    }
    if (pre?.resourceVersion && pre.resourceVersion !== String(curRv)) {
      throw preconditionConflict(def.group, def.kind, name, `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${curRv}). The object might have been modified`)
    }
    await admitPlugins(ctx, def, 'DELETE', undefined, o)
    const now = Date.now()
    const finalizers: string[] = Array.isArray(m.finalizers) ? [...m.finalizers] : []
    const policy = opts.propagationPolicy ?? (opts.orphanDependents === true ? 'Orphan' : opts.orphanDependents === false ? 'Background' : undefined)
    const add = policy === 'Orphan' ? 'orphan' : policy === 'Foreground' ? 'foregroundDeletion' : undefined
    if (add) {
      const other = add === 'orphan' ? 'foregroundDeletion' : 'orphan'
      const i = finalizers.indexOf(other)
      if (i >= 0 && !m.deletionTimestamp) finalizers.splice(i, 1)
      if (!finalizers.includes(add) && !m.deletionTimestamp) finalizers.push(add)
    } else if (policy === 'Background' && !m.deletionTimestamp) {
      for (const f of ['orphan', 'foregroundDeletion']) { const i = finalizers.indexOf(f); if (i >= 0) finalizers.splice(i, 1) }
    }
    let grace = 0
    if (GRACEFUL_RESOURCES.has(`${def.group}/${def.resource}`) && o.spec?.nodeName && !(o.status?.phase === 'Succeeded' || o.status?.phase === 'Failed')) {
      grace = opts.gracePeriodSeconds ?? o.spec?.terminationGracePeriodSeconds ?? 30
      if (grace < 0) grace = 1
    }
    const isNamespace = def.group === '' && def.resource === 'namespaces'
    const specFinalizers = isNamespace && Array.isArray(o.spec?.finalizers) && o.spec.finalizers.length > 0
    const twoPhase = finalizers.length > 0 || grace > 0 || specFinalizers
    if (m.deletionTimestamp && twoPhase) {
      // Already being deleted: a repeated delete changes nothing but may shorten the grace period.
      if (!(grace > 0 && m.deletionGracePeriodSeconds > grace)) return { status: 200, json: recordObject(rec).toString('utf8'), removed: false }
    }
    if (twoPhase) {
      if (!m.deletionTimestamp || grace < (m.deletionGracePeriodSeconds ?? Infinity)) {
        m.deletionTimestamp = rfc3339(now + grace * 1000)
        m.deletionGracePeriodSeconds = grace
      }
      if (finalizers.length > 0) m.finalizers = finalizers
      if (isNamespace) o.status = { ...(o.status ?? {}), phase: 'Terminating' }
    }
    // Two-phase: the object is marked and stays; otherwise it is removed now.
    const removed = !twoPhase
    const json = toStoredJson(o)
    if (dry) return { status: 200, json: withRv(json, curRv), removed }
    const attrs = JSON.stringify(attrsOf(def, o))
    const r = removed ? await store.remove(shard, key, curRv, attrs, json) : await store.put(shard, key, curRv, attrs, json)
    if (r.ok) return { status: 200, json: withRv(json, r.rv), removed }
    if (r.reason === 'conflict') continue
    if (r.reason === 'notfound') throw notFound(gr(def), name)
    throw internal(r.message ?? r.reason)
  }
  throw conflict(gr(def), name)
}

export async function remove(ctx: RequestContext, def: ResolvedDefinition): Promise<Response> {
  const opts = readDeleteOptions(ctx, def)
  const dry = isDryRun(ctx, opts as Obj)
  const out = await deleteOne(ctx, def, ctx.info.namespace, ctx.info.name, opts, dry)
  if (out.removed && !def.strategy.returnDeletedObject) {
    const uid = (JSON.parse(out.json) as Obj).metadata.uid
    return valueResponse(ctx, 200, successStatus(def, ctx.info.name, uid))
  }
  return objectResponse(ctx, out.status, out.json)
}

export async function deleteCollection(ctx: RequestContext, def: ResolvedDefinition): Promise<Response> {
  const opts = readDeleteOptions(ctx, def)
  const dry = isDryRun(ctx, opts as Obj)
  const sel = parseSelectors(ctx, def)
  const shard = shardOfDef(def)
  const ns = def.scope === 'Namespaced' && ctx.info.namespace !== '' ? ctx.info.namespace : undefined
  const prefix = typePrefix(def.group, def.resource, def.scope === 'Namespaced' ? ns : '')
  const listRv = store.snapshot(shard)
  const targets: Array<{ namespace: string; name: string }> = []
  for (const { key, value } of store.range(shard, prefix)) {
    if (!matches(sel, key, value)) continue
    const p = key.split('/')
    targets.push({ namespace: p[2], name: p[3] })
  }
  const deleted: string[] = []
  for (const t of targets) {
    try {
      const out = await deleteOne(ctx, def, t.namespace, t.name, opts, dry)
      deleted.push(out.json)
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) continue
      throw err
    }
  }
  return listResponse(ctx, def, { resourceVersion: String(listRv) }, deleted)
}

