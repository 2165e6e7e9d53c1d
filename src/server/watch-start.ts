// The start of a watch: its options checked, the backlog of a resumed watch or the initial state, then bookmarks and the timeout.
import type { HttpResponse } from 'uWebSockets.js'
import { badRequest, expired, fieldForbidden, fieldNotSupported, invalid, notAcceptable, ApiError, type FieldError } from '../machinery/errors.js'
import { queryFlag } from './request-info.js'
import { typePrefix } from '../machinery/storage-format.js'
import type { WatchEvent } from '../../actors/shard/messages.js'
import type { ResolvedDefinition } from '../registry/define.js'
import type { RequestContext, Response } from '../pipeline/context.js'
import { parseSelectors, matches, indexedRequirement } from '../pipeline/read-selectors.js'
import { queryInt, aliasOf } from '../pipeline/dispatch.js'
import { negotiate, acceptsJson, isProtobuf, contentTypeOf, cborEnabled, PROTOBUF, CBOR_SEQ, type MediaType } from '../pipeline/encode.js'
import { longRunningStarted, observeRequest } from './metrics.js'
import { metadataFormOf, tableVersionOf } from '../pipeline/table.js'
import { statusLine } from './respond.js'
import { store, opts, slotOf, hubFor, type Watcher } from './watch.js'
import { watchMetrics, write, drain, bookmarkFrame, errorFrame, end } from './watch-stream.js'
import { keyMatchesWatcher, emit, sendEvent } from './watch-events.js'

const BOOKMARK_INTERVAL_MS = 60_000
const BOOKMARK_BEFORE_END_MS = 2000

/** An open watch is a long-running request; when it ends it is counted as answered (200) after its whole length. */
function watchFinisher(ctx: RequestContext): () => void {
  const stop = longRunningStarted(ctx)
  let done = false
  return () => {
    if (done) return
    done = true
    stop()
    observeRequest(ctx, 200, undefined)
  }
}

// ---- start ----


export async function startWatch(ctx: RequestContext, def: ResolvedDefinition): Promise<Response> {
  const q = ctx.query
  const metadataOnly = tableVersionOf(ctx.headers['accept']) ? null : metadataFormOf(ctx.headers['accept'], false)
  let mt: MediaType = tableVersionOf(ctx.headers['accept']) || metadataOnly ? 'json' : negotiate(ctx.headers['accept'])
  // uWS completes a response's headers only with its first body bytes. A JSON stream starts with white space and a
  // binary one that takes bookmarks with a BOOKMARK (below); a binary one without bookmarks has no frame it could
  // send, so a quiet watch would hold its client in Watch() until the first change (kubectl's wait for a pod of a
  // Deployment never timed out). When the client takes JSON too, as client-go always offers, the stream is JSON.
  if (mt !== 'json' && mt !== 'yaml' && !queryFlag(q.get('allowWatchBookmarks')) && acceptsJson(ctx.headers['accept'])) mt = 'json'
  if (mt === 'yaml') throw notAcceptable(cborEnabled() ? ['application/json', PROTOBUF, 'application/cbor'] : ['application/json', PROTOBUF])
  const sel = parseSelectors(ctx, def)
  const rvParam = q.get('resourceVersion') ?? ''
  if (rvParam !== '' && !/^\d+$/.test(rvParam)) throw badRequest(`invalid resource version: "${rvParam}"`)
  const sendInitial = q.get('sendInitialEvents')
  const match = q.get('resourceVersionMatch') ?? ''
  // upstream's validateWatchOptions, every error at once
  const watchErrs: FieldError[] = []
  if (sendInitial !== null && match !== 'NotOlderThan') {
    watchErrs.push(fieldForbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'))
  }
  if (match !== '') {
    if (sendInitial === null) watchErrs.push(fieldForbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'))
    if (match !== 'NotOlderThan') watchErrs.push(fieldNotSupported('resourceVersionMatch', match, ['NotOlderThan']))
  }
  if (watchErrs.length > 0) throw invalid('ListOptions.meta.orch.io', 'meta.orch.io', 'ListOptions', '', watchErrs)
  // A value that is not an integer is 400; 0 or less (or none) means the server's random lifetime.
  const timeoutParam = queryInt(ctx, 'timeoutSeconds')
  const timeoutS = timeoutParam !== undefined && timeoutParam > 0 ? timeoutParam : opts.minRequestTimeout * (1 + Math.random())
  const ns = def.scope === 'Namespaced' && ctx.info.namespace !== '' ? ctx.info.namespace : undefined
  const prefix = typePrefix(def.group, def.resource, def.scope === 'Namespaced' ? ns : '')
  let name = ctx.info.name
  const nameSel = sel.fields?.find((f) => f.field === 'metadata.name' && f.op === 'eq')
  if (nameSel && name === '') name = nameSel.value
  const shard = store.shardFor(def.group, def.resource)
  const typeKey = typePrefix(def.group, def.resource)
  const hub = hubFor(def)
  await hub.ensureSubscribed()
  const initial = sendInitial !== null ? queryFlag(sendInitial) : rvParam === '' || rvParam === '0'
  const startRv = rvParam === '' ? 0 : Number(rvParam)
  if (ctx.info.name !== '' && sel.fields) {
    const named = sel.fields.filter((f) => f.field === 'metadata.name')
    if (named.some((f) => f.op !== 'eq' || f.value !== ctx.info.name)) throw badRequest("fieldSelector metadata.name doesn't match requested name")
  }
  // Backlog of a resumed watch: from the ring, or 410 when it no longer reaches back.
  let backlog: WatchEvent[] = []
  let expiredErr: ApiError | null = null
  if (!initial && startRv > 0) {
    const r = await store.clients[shard].request({ op: 'watchBacklog', prefix: typeKey, rv: startRv })
    if (r.ok) backlog = r.events ?? []
    else if (r.reason === 'expired') expiredErr = expired(`too old resource version: ${startRv} (${r.rv})`)
  }
  const wc = ctx.webhookConversion ?? null
  if (wc !== null && mt !== 'json') throw new ApiError(406, 'NotAcceptable', `a watch of ${wc.view.resource}.${wc.view.group} in version ${wc.view.version} is served as JSON only by this server: its conversion webhook converts each event`)
  return {
    status: 200, body: '', contentType: 'application/json', headers: [],
    stream: (res: HttpResponse) => {
      const w: Watcher = { res, def, wc, chain: undefined, view: ctx.conversion ?? null, prefix, name, sel, query: q, sentRv: 0, pending: [], pendingBytes: 0, bookmarks: queryFlag(q.get('allowWatchBookmarks')), table: tableVersionOf(ctx.headers['accept']), metadataOnly, alias: aliasOf(ctx) ?? null, mt, tableColumnsSent: false, closed: false, queue: [], queueAt: 0, queued: 0, blocked: false, timers: [], hub, slot: slotOf(def, typeKey, prefix, name, sel), out: [], wrote: false, finish: watchFinisher(ctx) }
      watchMetrics.started++
      watchMetrics.active++
      res.onAborted(() => { if (!w.closed) { w.closed = true; w.queue = []; for (const t of w.timers) clearTimeout(t); hub.remove(w); watchMetrics.active--; w.finish() } })
      res.onWritable(() => drain(w))
      res.cork(() => {
        res.writeStatus(statusLine(200))
        res.writeHeader('Content-Type', isProtobuf(mt) ? `${contentTypeOf(mt)};stream=watch` : mt === 'cbor' ? CBOR_SEQ : 'application/json')
        res.writeHeader('Cache-Control', 'no-cache, private')
        for (const [k, v] of ctx.responseHeaders) res.writeHeader(k, v)
        // Headers go out at once when a JSON stream starts with white space; a binary stream (protobuf frames, a CBOR
        // sequence) has no filler, and uWS ends the headers with the first frame.
        if (mt === 'json') res.write(' ')
      })
      if (expiredErr) { write(w, errorFrame(w, expiredErr)); end(w); return }
      hub.add(w)
      const begin = (): void => {
        if (initial) {
          const snapRv = store.snapshot(shard)
          const ix = indexedRequirement(def, sel)
          const source = ix ? store.rangeIndexed(shard, typeKey, ix.field, ix.value, prefix) : store.range(shard, prefix)
          for (const { key, value } of source) {
            if (!keyMatchesWatcher(w, key) || !matches(sel, key, value)) continue
            emit(w, 'ADDED', value)
          }
          w.sentRv = snapRv
          if (w.bookmarks && sendInitial !== null) write(w, bookmarkFrame(w, snapRv, true))
        } else {
          w.sentRv = startRv
          // Dropped once sent: the closures of a watch keep this function's scope, backlog included, as long as it runs.
          const events = backlog
          backlog = []
          for (const ev of events) sendEvent(w, ev)
        }
        const pending = w.pending!
        w.pending = null
        for (const ev of pending) sendEvent(w, ev)
        // uWS ends a response's headers only with its first body bytes, and a binary frame has no filler, so a quiet
        // protobuf or CBOR watch would keep its client (client-go's Watch() waits for the headers) waiting for the
        // first change. A watcher that takes bookmarks (every informer) gets one at once, at the version it is at.
        if (!w.wrote && w.mt !== 'json' && w.bookmarks) write(w, bookmarkFrame(w, w.sentRv))
        w.timers.push(setTimeout(() => end(w), timeoutS * 1000))
        if (w.bookmarks) {
          /** A bookmark at the version every event up to now has reached, then `next`. */
          const progress = (next?: () => void) => () => {
            if (w.closed) return
            void hub.progress().then((rv) => {
              if (w.closed) return
              w.sentRv = Math.max(w.sentRv, rv)
              write(w, bookmarkFrame(w, w.sentRv))
              next?.()
            })
          }
          const tick: () => void = progress(() => w.timers.push(setTimeout(tick, BOOKMARK_INTERVAL_MS)))
          w.timers.push(setTimeout(tick, BOOKMARK_INTERVAL_MS))
          // And one about 2 s before the watch's end, as upstream does, so a client resumes from a fresh version.
          w.timers.push(setTimeout(progress(), Math.max(0, timeoutS * 1000 - BOOKMARK_BEFORE_END_MS)))
        }
        ctx.log.debug({ prefix, name, initial, startRv }, 'watch started')
      }
      // NotOlderThan: the initial state waits until the shard has reached the version asked for; the watch just waits.
      if (initial && startRv > 0 && store.snapshot(shard) < startRv) {
        const poll = setInterval(() => {
          if (w.closed) { clearInterval(poll); return }
          if (store.snapshot(shard) >= startRv) { clearInterval(poll); begin() }
        }, 10)
        w.timers.push(poll)
        w.timers.push(setTimeout(() => end(w), timeoutS * 1000))
        return
      }
      begin()
    },
  }
}
