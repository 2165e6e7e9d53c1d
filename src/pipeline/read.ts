// The read path of the storage stage: get, and list with selectors, continue tokens and consistent snapshots from the ring.
import { ApiError, badRequest, expired, forbidden, invalid, notFound, fieldNotSupported, fieldForbidden, type FieldError } from '../machinery/errors.js'
import { typePrefix, recordAttrs, recordObject, type Attrs } from '../machinery/storage-format.js'
import { parseFieldSelector, parseLabelSelector, matchFields, matchLabels, SelectorError, type FieldRequirement, type LabelSelector } from '../machinery/selectors.js'
import type { Obj, ResolvedDefinition } from '../registry/define.js'
import type { RequestContext, Response } from './context.js'
import { contentTypeOf, encodeListInSlices, inSlices, negotiate } from './encode.js'
import { TableListBuilder, tableVersionOf } from './table.js'
import { store, gr, shardOfDef, keyFor, objectResponse, parseRv, waitForVersion, aliasOf } from './dispatch.js'


// ---- get ----

export function get(ctx: RequestContext, def: ResolvedDefinition): Response | Promise<Response> {
  const shard = shardOfDef(def)
  const rvParam = ctx.query.get('resourceVersion')
  if (rvParam !== null && rvParam !== '' && rvParam !== '0') return waitForVersion(shard, parseRv(rvParam)).then(() => getNow(ctx, def, shard))
  return getNow(ctx, def, shard)
}

function getNow(ctx: RequestContext, def: ResolvedDefinition, shard: number): Response {
  // The record is only read until the answer is built (the body is copied out when written): the store's slab will do.
  const rec = store.getFreshTransient(shard, keyFor(def, ctx.info.namespace, ctx.info.name))
  if (!rec) throw notFound(gr(def), ctx.info.name)
  return objectResponse(ctx, 200, recordObject(rec))
}

// ---- list ----

export interface Selectors { labels: LabelSelector | null; fields: FieldRequirement[] | null }

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
  return matchesAttrs(sel, key, recordAttrs(rec))
}

/** matches() on attributes decoded once (watch fan-out checks one event against many watchers). */
export function matchesAttrs(sel: Selectors, key: string, a: Attrs): boolean {
  if (sel.labels && !matchLabels(sel.labels, a.l)) return false
  if (sel.fields && !matchFields(sel.fields, (f) => fieldValue(key, a, f))) return false
  return true
}

/**
 * The equality on an indexed field a read can start from (the shard's secondary index), if the selector has one.
 * Reads of an older version (a rollback overlay) scan the collection instead: the index holds current values.
 */
export function indexedRequirement(def: ResolvedDefinition, sel: Selectors): { field: string; value: string } | undefined {
  if (!def.indexedFields || !sel.fields) return undefined
  const f = sel.fields.find((r) => r.op === 'eq' && def.indexedFields!.includes(r.field))
  return f ? { field: f.field, value: f.value } : undefined
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
  const ix = overlay === null || overlay.size === 0 ? indexedRequirement(def, sel) : undefined
  const source = ix ? store.rangeIndexed(shard, typePrefix(def.group, def.resource), ix.field, ix.value, prefix, after) : rangeAt(shard, prefix, after, overlay)
  for (const { key, value } of source) {
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

export async function listResponse(ctx: RequestContext, def: ResolvedDefinition, meta: Obj, items: Array<Buffer | string>): Promise<Response> {
  const tv = ctx.info.verb === 'list' ? tableVersionOf(ctx.headers['accept']) : null
  const aborted = () => ctx.aborted
  if (tv) {
    const tb = new TableListBuilder(def, meta, ctx.query, tv)
    if (!(await inSlices(items.length, (from, to) => tb.add(items, from, to), aborted))) return gone(ctx)
    return { status: 200, body: tb.finishJson(ctx.pretty), contentType: 'application/json', headers: ctx.responseHeaders }
  }
  const mt = negotiate(ctx.headers['accept'])
  const body = await encodeListInSlices(def.apiVersion, def.listKind, meta, items, mt, ctx.pretty, aliasOf(ctx), aborted)
  if (body === null) return gone(ctx)
  return { status: 200, body, contentType: contentTypeOf(mt), headers: ctx.responseHeaders }
}

/** The answer to a request whose client has gone while it was being encoded (never written). */
function gone(ctx: RequestContext): Response {
  return { status: 200, body: '', contentType: 'application/json', headers: ctx.responseHeaders }
}

