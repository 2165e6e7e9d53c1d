// List bodies: JSON stitched from the stored bytes (streamed when large), protobuf, CBOR and Table lists encoded from the snapshot, converted and metadata-only lists, and the chunked writing of a streamed answer.
import type { Obj, ResolvedDefinition } from '../registry/define.js'
import type { RequestContext, Response } from './context.js'
import type { HttpResponse } from 'uWebSockets.js'
import { aliased, contentTypeOf, encodeListInSlices, encodeValue, inSlices, isProtobuf, negotiate, gzipWanted, JsonListBody, SLICE_MS, type MediaType } from './encode.js'
import { JsonListEncoder } from '../machinery/codecs/protobuf.js'
import { CborListEncoder } from '../machinery/codecs/cbor.js'
import { byteFieldsOf } from '../registry/byte-fields.js'
import { constants, crc32, deflateRawSync } from 'node:zlib'
import { statusLine } from '../server/respond.js'
import { TableListBuilder, metadataFormOf, partialObjectMetadata, tableVersionOf } from './table.js'
import { store, aliasOf } from './dispatch.js'
import { viewJson } from './convert.js'
import { matches } from './read-selectors.js'
import { pageMeta, type Page } from './list-paging.js'

/** A stored record's object bytes (a view). */
export function objectBytes(rec: Uint8Array, size: number): Buffer {
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
export async function jsonListPage(p: Page): Promise<Response> {
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

/** A gzip header: deflate, no flags, no time, no extra flags, OS unknown. */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff])

/**
 * One gzip stream written in pieces, as upstream's compressing writer sends a body: the header, each piece as raw
 * deflate blocks ended by a sync flush (a compressor of its own per piece, so no back-reference crosses pieces), the
 * last as the final block, then the CRC-32 and the size of the whole. A gzip member per piece, as was sent before,
 * is a valid body too, but clients that read only the first member (curl --compressed) got a list cut at 256 KB.
 */
class GzipPieces {
  #crc = 0
  #size = 0
  #started = false

  piece(b: Buffer, last: boolean): Buffer {
    this.#crc = crc32(b, this.#crc)
    this.#size = (this.#size + b.length) >>> 0
    const parts = [deflateRawSync(b, { level: 1, finishFlush: last ? constants.Z_FINISH : constants.Z_SYNC_FLUSH })]
    if (!this.#started) { this.#started = true; parts.unshift(GZIP_HEADER) }
    if (last) {
      const trailer = Buffer.allocUnsafe(8)
      trailer.writeUInt32LE(this.#crc >>> 0, 0)
      trailer.writeUInt32LE(this.#size, 4)
      parts.push(trailer)
    }
    return parts.length === 1 ? parts[0] : Buffer.concat(parts)
  }
}

/**
 * An answer whose body `next` gives chunk by chunk (each valid until the next call), written to the socket while it
 * takes them, giving the event loop back every SLICE_MS, and waiting for it to drain when it does not. `close` runs
 * once: at the end, or when the client goes away. Gzip, when asked for, is one gzip stream over all the chunks
 * (GzipPieces), at level 1 as for answers built whole.
 */
function streamed(ctx: RequestContext, contentType: string, next: () => { chunk: Buffer; last: boolean }, onClose: () => void): Response {
  const gzip = gzipWanted(ctx.headers) ? new GzipPieces() : undefined
  const out = (b: Buffer, last: boolean): Buffer => gzip === undefined ? b : gzip.piece(b, last)
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
                res.end(out(chunk, true))
                close()
                return
              }
              if (!res.write(out(chunk, false))) { blocked = true; return }
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
export async function encodedList(p: Page, mt: MediaType, tv: string | null): Promise<Response | null> {
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
