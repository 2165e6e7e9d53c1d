// The read path of the storage stage: get, and list with selectors, continue tokens and consistent snapshots from the ring (selectors in read-selectors.ts, paging in list-paging.ts, list bodies in list-encode.ts).
import { notFound } from '../machinery/errors.js'
import { typePrefix } from '../machinery/storage-format.js'
import type { Obj, ResolvedDefinition } from '../registry/define.js'
import type { RequestContext, Response } from './context.js'
import { isProtobuf, negotiate } from './encode.js'
import { metadataFormOf, tableVersionOf } from './table.js'
import { store, gr, shardOfDef, keyFor, objectResponse, parseRv, waitForVersion } from './dispatch.js'
import { parseSelectors, matches, indexedRequirement, type Selectors } from './read-selectors.js'
import { rawRangeAt, listStart, pageMeta, type Page } from './list-paging.js'
import { objectBytes, jsonListPage, encodedList, listResponse } from './list-encode.js'


// ---- get ----

export function get(ctx: RequestContext, def: ResolvedDefinition): Response | Promise<Response> {
  const shard = shardOfDef(def)
  const rvParam = ctx.query.get('resourceVersion')
  if (rvParam !== null && rvParam !== '' && rvParam !== '0') return waitForVersion(shard, parseRv(rvParam)).then(() => getNow(ctx, def, shard))
  return getNow(ctx, def, shard)
}

function getNow(ctx: RequestContext, def: ResolvedDefinition, shard: number): Response {
  // The record is only read until the answer is built (the body is copied out when written): the store's slab will do.
  const json = store.getFreshObjectTransient(shard, keyFor(def, ctx.info.namespace, ctx.info.name))
  if (!json) throw notFound(gr(def), ctx.info.name)
  return objectResponse(ctx, 200, json)
}

// ---- list ----

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
