// List paging: continue tokens, reads at an older version (a rollback overlay on the current snapshot), the list options resolved to a start, and a page's list metadata.
import { ApiError, badRequest, expired, invalid, fieldNotSupported, fieldForbidden, type FieldError } from '../machinery/errors.js'
import { typePrefix } from '../machinery/storage-format.js'
import type { Obj, ResolvedDefinition } from '../registry/define.js'
import type { RequestContext } from './context.js'
import type { RawEntry, ReadTxn } from './store.js'
import { store, parseRv, queryInt, waitForVersion } from './dispatch.js'
import type { Selectors } from './read-selectors.js'

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
  // Nothing committed in the shard since `rv` (the usual case between the pages of a list): the snapshot is `rv`.
  const now = store.snapshot(shard)
  if (now === rv) return { overlay: new Map(), snapRv: now }
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
function remainingAt(shard: number, prefix: string, returned: number, overlay: Overlay | null, txn: ReadTxn): number {
  let n = store.countIn(shard, prefix, txn) - returned
  if (overlay) {
    for (const [key, old] of overlay) {
      if (!key.startsWith(prefix)) continue
      const now = store.getIn(shard, key, txn) !== undefined
      if (now && old === null) n--
      else if (!now && old !== null) n++
    }
  }
  return n
}

/** Raw records under a prefix in key order after `after`, with an overlay of older values merged in. */
export function* rawRangeAt(shard: number, prefix: string, after: string | undefined, overlay: Overlay | null, txn: ReadTxn): Generator<RawEntry> {
  if (!overlay || overlay.size === 0) { yield* store.rawRange(shard, prefix, after, txn); return }
  const ov = [...overlay.entries()].filter(([k]) => k.startsWith(prefix) && (after === undefined || k > after)).sort((a, b) => (a[0] < b[0] ? -1 : 1))
  const old: RawEntry = { key: '', rec: EMPTY, size: 0 }
  const at = (key: string, value: Buffer): RawEntry => { old.key = key; old.rec = value; old.size = value.length; return old }
  let i = 0
  for (const cur of store.rawRange(shard, prefix, after, txn)) {
    while (i < ov.length && ov[i][0] < cur.key) { const [key, value] = ov[i++]; if (value) yield at(key, value) }
    if (i < ov.length && ov[i][0] === cur.key) { const [key, value] = ov[i++]; if (value) yield at(key, value); continue }
    yield cur
  }
  while (i < ov.length) { const [key, value] = ov[i++]; if (value) yield at(key, value) }
}

const EMPTY = Buffer.alloc(0)

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

/** Where a list read starts: its limit, the version it reads at, the key it continues after, and the rollback to that version. */
interface ListStart { limit: number; listRv: number; after: string | undefined; overlay: Overlay | null; started: number; returnedBefore: number }

/** The list options of the request (limit, continue, resourceVersion and its match), checked and resolved to a start. */
export async function listStart(ctx: RequestContext, def: ResolvedDefinition, shard: number, prefix: string): Promise<ListStart> {
  const limitParam = ctx.query.get('limit')
  let limit = 0
  if (limitParam !== null && limitParam !== '') {
    if (!/^-?\d+$/.test(limitParam)) throw badRequest(`invalid limit: "${limitParam}"`)
    limit = Math.max(0, Number(limitParam))
  }
  const cont = ctx.query.get('continue')
  const v = listVersion(ctx, !!cont)
  // Decoded with the other options upstream, so a bad value is 400 even though a list has no use for it.
  queryInt(ctx, 'timeoutSeconds')
  // resourceVersion "0" is served from upstream's watch cache, which ignores limit: the whole list, no continue.
  if (v.rv === 0 && !cont) limit = 0
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
  return { limit, listRv, after, overlay, started, returnedBefore }
}

/** The state of one list read: what it asked, where it reads, and what it has read so far. */
export interface Page {
  ctx: RequestContext; def: ResolvedDefinition; shard: number; prefix: string; sel: Selectors; limit: number
  listRv: number; started: number; returnedBefore: number; overlay: Overlay | null
  source: Generator<RawEntry>; txn: ReadTxn
  count: number; lastKey: string | undefined; more: boolean
}

/** The list metadata once the page is read: its version, and a continue token with the remaining count when cut. */
export function pageMeta(p: Page): Obj {
  const meta: Obj = { resourceVersion: String(p.listRv) }
  if (p.more && p.lastKey !== undefined) {
    meta.continue = encodeContinue({ rv: p.listRv, start: p.lastKey, t: p.started, n: p.returnedBefore + p.count })
    if (!p.sel.labels && !p.sel.fields) meta.remainingItemCount = Math.max(0, remainingAt(p.shard, p.prefix, p.returnedBefore + p.count, p.overlay, p.txn))
  }
  return meta
}
