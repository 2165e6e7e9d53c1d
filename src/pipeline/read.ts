// The read path of the storage stage: get, and list with selectors, continue tokens and consistent snapshots from the ring.
import { ApiError, badRequest, expired, forbidden, invalid, notFound, fieldNotSupported, fieldForbidden, type FieldError } from '../machinery/errors.js'
import { typePrefix, recordAttrs, recordObject, type Attrs } from '../machinery/storage-format.js'
import { parseFieldSelector, parseLabelSelector, matchFields, matchLabels, SelectorError, type FieldRequirement, type LabelSelector } from '../machinery/selectors.js'
import type { Obj, ResolvedDefinition } from '../registry/define.js'
import type { RequestContext, Response } from './context.js'
import type { HttpResponse } from 'uWebSockets.js'
import { aliased, contentTypeOf, encodeListInSlices, encodeValue, inSlices, isProtobuf, negotiate, gzipWanted, JsonListBody, SLICE_MS, type MediaType } from './encode.js'
import { JsonListEncoder } from '../machinery/codecs/protobuf.js'
import { CborListEncoder } from '../machinery/codecs/cbor.js'
import { byteFieldsOf } from '../registry/byte-fields.js'
import { gzipSync } from 'node:zlib'
import type { RawEntry, ReadTxn } from './store.js'
import { statusLine } from '../server/respond.js'
import { TableListBuilder, metadataFormOf, partialObjectMetadata, tableVersionOf } from './table.js'
import { store, gr, shardOfDef, keyFor, objectResponse, parseRv, queryInt, waitForVersion, aliasOf } from './dispatch.js'
import { storedFieldRequirements, viewJson } from './convert.js'


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
    // A type served over another's storage: its field names are the stored type's (convert.ts).
    if (ctx.conversion !== undefined) fields = storedFieldRequirements(ctx.conversion, fields)
    for (const f of fields) {
      if (f.field === 'metadata.name') continue
      // Cluster-scoped kinds with selectable fields of their own (nodes, namespaces, CSRs) know no namespace field.
      if (f.field === 'metadata.namespace' && !(def.scope === 'Cluster' && def.fieldSelectors)) continue
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
function* rawRangeAt(shard: number, prefix: string, after: string | undefined, overlay: Overlay | null, txn: ReadTxn): Generator<RawEntry> {
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
async function listStart(ctx: RequestContext, def: ResolvedDefinition, shard: number, prefix: string): Promise<ListStart> {
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

/**
 * The keys a deletecollection works on: one page when the request has a limit (or continues one), as a list would
 * read it, with the list metadata (resourceVersion, and continue when cut) its answer carries.
 */
export async function collectionPage(ctx: RequestContext, def: ResolvedDefinition, sel: Selectors): Promise<{ keys: string[]; meta: Obj }> {
  const shard = shardOfDef(def)
  const ns = def.scope === 'Namespaced' && ctx.info.namespace !== '' ? ctx.info.namespace : undefined
  const prefix = typePrefix(def.group, def.resource, def.scope === 'Namespaced' ? ns : '')
  const { limit, listRv, after, overlay, started, returnedBefore } = await listStart(ctx, def, shard, prefix)
  const txn = store.readTxn(shard)
  const source = rawRangeAt(shard, prefix, after, overlay, txn)
  const page: Page = { ctx, def, shard, prefix, sel, limit, listRv, started, returnedBefore, overlay, source, txn, count: 0, lastKey: undefined, more: false }
  try {
    const keys: string[] = []
    for (let r = source.next(); !r.done; r = source.next()) {
      const e = r.value
      if (!matches(sel, e.key, e.rec)) continue
      if (limit > 0 && page.count >= limit) { page.more = true; break }
      keys.push(e.key)
      page.count++
      page.lastKey = e.key
    }
    return { keys, meta: pageMeta(page) }
  } finally {
    source.return(undefined)
    txn.done()
  }
}

export async function list(ctx: RequestContext, def: ResolvedDefinition): Promise<Response> {
  const shard = shardOfDef(def)
  const ns = def.scope === 'Namespaced' && ctx.info.namespace !== '' ? ctx.info.namespace : undefined
  const prefix = typePrefix(def.group, def.resource, def.scope === 'Namespaced' ? ns : '')
  const sel = parseSelectors(ctx, def)
  const { limit, listRv, after, overlay, started, returnedBefore } = await listStart(ctx, def, shard, prefix)
  // One read transaction for the whole list: the pages's reads, its remaining count, and a streamed body's later turns.
  const txn = store.readTxn(shard)
  const ix = overlay === null || overlay.size === 0 ? indexedRequirement(def, sel) : undefined
  const source = ix ? store.rawRangeIndexed(shard, typePrefix(def.group, def.resource), ix.field, ix.value, prefix, after, txn) : rawRangeAt(shard, prefix, after, overlay, txn)
  const page: Page = { ctx, def, shard, prefix, sel, limit, listRv, started, returnedBefore, overlay, source, txn, count: 0, lastKey: undefined, more: false }
  let handed = false
  try {
    const tv = ctx.info.verb === 'list' ? tableVersionOf(ctx.headers['accept']) : null
    const pm = ctx.info.verb === 'list' && !tv ? metadataFormOf(ctx.headers['accept'], true) : null
    const mt = tv || pm ? 'json' : negotiate(ctx.headers['accept'])
    // Stored bytes straight into the answer, unless the items are converted (a type served over another's storage).
    if (ctx.conversion === undefined) {
      // A custom resource read in another version or with read defaults takes the item-by-item path (src/pipeline/encode.ts).
      if (!tv && !pm && mt === 'json' && !ctx.pretty && ctx.versionAlias === undefined) {
        const r = await jsonListPage(page)
        handed = r.stream !== undefined
        return r
      }
      if (limit === 0 && (tv || isProtobuf(mt) || mt === 'cbor')) {
        const r = await encodedList(page, mt, tv)
        if (r) return r
      }
    }
    // Protobuf, CBOR, Table, YAML and pretty JSON encode from the items' JSON, copied out of the snapshot.
    const parts: Buffer[] = []
    for (let r = source.next(); !r.done; r = source.next()) {
      const e = r.value
      if (!matches(sel, e.key, e.rec)) continue
      if (limit > 0 && page.count >= limit) { page.more = true; break }
      parts.push(Buffer.from(objectBytes(e.rec, e.size)))
      page.count++
      page.lastKey = e.key
    }
    const meta = pageMeta(page)
    source.return(undefined)
    txn.done()
    handed = true
    return await listResponse(ctx, def, meta, parts)
  } finally {
    if (!handed) { source.return(undefined); txn.done() }
  }
}

/** The state of one list read: what it asked, where it reads, and what it has read so far. */
interface Page {
  ctx: RequestContext; def: ResolvedDefinition; shard: number; prefix: string; sel: Selectors; limit: number
  listRv: number; started: number; returnedBefore: number; overlay: Overlay | null
  source: Generator<RawEntry>; txn: ReadTxn
  count: number; lastKey: string | undefined; more: boolean
}

/** The list metadata once the page is read: its version, and a continue token with the remaining count when cut. */
function pageMeta(p: Page): Obj {
  const meta: Obj = { resourceVersion: String(p.listRv) }
  if (p.more && p.lastKey !== undefined) {
    meta.continue = encodeContinue({ rv: p.listRv, start: p.lastKey, t: p.started, n: p.returnedBefore + p.count })
    if (!p.sel.labels && !p.sel.fields) meta.remainingItemCount = Math.max(0, remainingAt(p.shard, p.prefix, p.returnedBefore + p.count, p.overlay, p.txn))
  }
  return meta
}

/** A stored record's object bytes (a view). */
function objectBytes(rec: Uint8Array, size: number): Buffer {
  const start = 12 + ((rec[8] | (rec[9] << 8) | (rec[10] << 16) | (rec[11] << 24)) >>> 0)
  return Buffer.from(rec.buffer, rec.byteOffset + start, size - start)
}

/** A JSON list body from this many bytes on is streamed (when its metadata is known before its items: no limit). */
const STREAM_AT = 1 << 20
/** Bytes per write of a streamed list. */
const STREAM_CHUNK = 256 * 1024
/** The most a JSON page reserves up front from the first item's size (beyond it, the body grows by doubling). */
const RESERVE_MAX = 64 << 20

/**
 * A JSON list stitched from the stored bytes into one buffer. The reads give the event loop back every SLICE_MS.
 * A list without a limit whose body passes STREAM_AT is streamed from there: the head and what was read go out, the
 * rest follows in chunks from the same read transaction, paced by the socket.
 */
async function jsonListPage(p: Page): Promise<Response> {
  const { ctx, def, sel, limit, source } = p
  const streamable = limit === 0
  const body = new JsonListBody(64 * 1024)
  let since = performance.now()
  for (let r = source.next(); !r.done; r = source.next()) {
    const e = r.value
    if (!matches(sel, e.key, e.rec)) continue
    if (limit > 0 && p.count >= limit) { p.more = true; break }
    body.addRecord(e.rec, e.size)
    if (p.count === 0) {
      const expect = limit > 0 ? limit : store.countIn(p.shard, p.prefix, p.txn)
      body.reserve(Math.min(RESERVE_MAX, streamable ? STREAM_AT : Infinity, (expect - 1) * (body.size + 1)))
    }
    p.count++
    p.lastKey = e.key
    if (streamable && body.size >= STREAM_AT) {
      body.head(def.apiVersion, def.listKind, { resourceVersion: String(p.listRv) })
      return streamedList(p, body)
    }
    if ((p.count & 63) === 0 && performance.now() - since >= SLICE_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve))
      if (ctx.aborted) { body.release(); return gone(ctx) }
      since = performance.now()
    }
  }
  body.head(def.apiVersion, def.listKind, pageMeta(p))
  return { status: 200, body: body.finish(), contentType: 'application/json', headers: ctx.responseHeaders, release: () => body.release() }
}

/** The rest of a JSON list, read as the socket takes it (see streamed), from the read transaction of the page. */
function streamedList(p: Page, body: JsonListBody): Response {
  const { sel, source, txn } = p
  return streamed(p.ctx, 'application/json', () => {
    while (body.size < STREAM_CHUNK) {
      const r = source.next()
      if (r.done) return { chunk: body.finish(), last: true }
      if (matches(sel, r.value.key, r.value.rec)) body.addRecord(r.value.rec, r.value.size)
    }
    return { chunk: body.take(), last: false }
  }, () => { source.return(undefined); txn.done(); body.release() })
}

/** A body built whole, written in chunks as the socket takes them (uWS then holds a chunk, not a copy of it all). */
function streamedBody(ctx: RequestContext, body: Buffer, contentType: string): Response {
  let at = 0
  return streamed(ctx, contentType, () => {
    const end = Math.min(body.length, at + STREAM_CHUNK)
    const chunk = body.subarray(at, end)
    at = end
    return { chunk, last: end === body.length }
  }, () => undefined)
}

/**
 * An answer whose body `next` gives chunk by chunk (each valid until the next call), written to the socket while it
 * takes them, giving the event loop back every SLICE_MS, and waiting for it to drain when it does not. `close` runs
 * once: at the end, or when the client goes away. Gzip, when asked for, compresses each chunk as a gzip member of its
 * own (a gzip stream may hold several; decoders read them as one body), at level 1 as for answers built whole.
 */
function streamed(ctx: RequestContext, contentType: string, next: () => { chunk: Buffer; last: boolean }, onClose: () => void): Response {
  const gzip = gzipWanted(ctx.headers)
  const out = gzip ? (b: Buffer): Buffer => gzipSync(b, { level: 1 }) : (b: Buffer): Buffer => b
  let closed = false
  const close = (): void => {
    if (closed) return
    closed = true
    onClose()
  }
  ctx.onAbort = close
  return {
    status: 200, body: '', contentType, headers: ctx.responseHeaders, release: close,
    stream: (res: HttpResponse) => {
      let started = false
      let waiting = false
      const pump = (): void => {
        if (closed) return
        const t0 = performance.now()
        let blocked = false
        try {
          res.cork(() => {
            if (!started) {
              started = true
              res.writeStatus(statusLine(200))
              res.writeHeader('Content-Type', contentType)
              let cache = false
              for (const [k, v] of ctx.responseHeaders) { if (k === 'Cache-Control') cache = true; res.writeHeader(k, v) }
              if (!cache) res.writeHeader('Cache-Control', 'no-cache, private')
              if (gzip) { res.writeHeader('Content-Encoding', 'gzip'); res.writeHeader('Vary', 'Accept-Encoding') }
            }
            for (;;) {
              const { chunk, last } = next()
              if (last) {
                res.end(out(chunk))
                close()
                return
              }
              if (!res.write(out(chunk))) { blocked = true; return }
              if (performance.now() - t0 >= SLICE_MS) return
            }
          })
        } catch (err) {
          // Headers are out: nothing can say what went wrong but the connection closing.
          const aborted = ctx.aborted
          close()
          if (!aborted) {
            ctx.log.error({ err }, 'streaming a list failed')
            try { res.close() } catch { /* gone */ }
          }
          return
        }
        if (closed) return
        if (blocked) waiting = true
        else setImmediate(pump)
      }
      res.onWritable(() => {
        if (waiting) { waiting = false; pump() }
        return true
      })
      pump()
    },
  }
}

/**
 * A list without a limit in protobuf, CBOR or Table: the items go to the encoder straight from the snapshot (no copy
 * of their JSON is kept), giving the event loop back every SLICE_MS; a large encoded body is written in chunks.
 * Null when the form needs what is not known before the items (CBOR's count, under a selector or an older version).
 */
async function encodedList(p: Page, mt: MediaType, tv: string | null): Promise<Response | null> {
  const { ctx, def, sel, source } = p
  const meta: Obj = { resourceVersion: String(p.listRv) }
  const alias = aliasOf(ctx)
  const one: Array<Buffer | string> = ['']
  let add: (item: Buffer | string) => void
  let finish: () => Buffer | string
  let contentType = 'application/json'
  if (tv) {
    const tb = new TableListBuilder(def, meta, ctx.query, tv)
    add = (it) => { one[0] = it; tb.add(one, 0, 1) }
    finish = () => tb.finishJson(ctx.pretty)
  } else {
    const av = alias && def.apiVersion.startsWith(alias[0]) ? `${alias[1]}${def.apiVersion.slice(alias[0].length)}` : def.apiVersion
    const expect = store.countKeysIn(p.shard, p.prefix, p.txn)
    if (isProtobuf(mt)) {
      const enc = new JsonListEncoder(av, def.listKind, meta, Math.min(expect * 1024, RESERVE_MAX))
      add = (it) => { one[0] = it; enc.add(one, 0, 1) }
      finish = () => enc.finish()
    } else {
      if (sel.labels || sel.fields || p.overlay !== null) return null
      const enc = new CborListEncoder(def.listKind, av, meta, expect, byteFieldsOf, Math.min(expect * 1024, RESERVE_MAX))
      add = (it) => { one[0] = it; enc.add(one, 0, 1) }
      finish = () => enc.finish()
    }
    contentType = contentTypeOf(mt)
  }
  let since = performance.now()
  for (let r = source.next(); !r.done; r = source.next()) {
    const e = r.value
    if (!matches(sel, e.key, e.rec)) continue
    const bytes = objectBytes(e.rec, e.size)
    add(alias && !tv ? aliased(bytes.toString(), alias) : bytes)
    if ((++p.count & 63) === 0 && performance.now() - since >= SLICE_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve))
      if (ctx.aborted) return gone(ctx)
      since = performance.now()
    }
  }
  const body = finish()
  if (typeof body !== 'string' && body.length >= STREAM_AT && !ctx.aliasGroup && !ctx.versionAlias) return streamedBody(ctx, body, contentType)
  return { status: 200, body, contentType, headers: ctx.responseHeaders }
}

export async function listResponse(ctx: RequestContext, def: ResolvedDefinition, meta: Obj, items: Array<Buffer | string>): Promise<Response> {
  const aborted = () => ctx.aborted
  if (ctx.conversion !== undefined) {
    // The items of a type served over another's storage in its shape, converted in slices as they are encoded.
    const view = ctx.conversion
    const stored = items
    const converted: string[] = new Array(stored.length)
    if (!(await inSlices(stored.length, (from, to) => { for (let k = from; k < to; k++) converted[k] = viewJson(view, stored[k]) }, aborted))) return gone(ctx)
    def = view
    items = converted
  }
  const tv = ctx.info.verb === 'list' ? tableVersionOf(ctx.headers['accept']) : null
  const pm = ctx.info.verb === 'list' && !tv ? metadataFormOf(ctx.headers['accept'], true) : null
  if (pm) {
    // Metadata only: each item's metadata as PartialObjectMetadata, the list's own metadata as it is.
    const out: Obj[] = new Array(items.length)
    const ok = await inSlices(items.length, (from, to) => {
      for (let k = from; k < to; k++) out[k] = partialObjectMetadata(JSON.parse(items[k].toString()) as Obj, pm)
    }, aborted)
    if (!ok) return gone(ctx)
    const list = { kind: 'PartialObjectMetadataList', apiVersion: pm, metadata: meta, items: out }
    return { status: 200, body: encodeValue(list, 'json', ctx.pretty), contentType: 'application/json', headers: ctx.responseHeaders }
  }
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

