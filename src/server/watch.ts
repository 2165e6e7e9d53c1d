// Watch streams: per-type hubs fed once by the owning shard, per-watcher filtering, one encoding per event shared by all watchers.
import type { HttpResponse } from 'uWebSockets.js'
import type { Logger } from 'pino'
import { badRequest, expired, fieldForbidden, fieldNotSupported, invalid, notAcceptable, ApiError, type FieldError } from '../machinery/errors.js'
import { queryFlag } from './request-info.js'
import { recordAttrs, recordObject, typePrefix, type Attrs } from '../machinery/storage-format.js'
import type { WatchEvent } from '../../actors/shard/messages.js'
import { watchKey } from '../../actors/flow-control/messages.js'
import type { ResolvedDefinition } from '../registry/define.js'
import type { Registry } from '../registry/index.js'
import type { Options } from '../options.js'
import type { Store } from '../pipeline/store.js'
import type { RequestContext, Response } from '../pipeline/context.js'
import { parseSelectors, matches, matchesAttrs, indexedRequirement, type Selectors } from '../pipeline/read.js'
import { queryInt, aliasOf } from '../pipeline/dispatch.js'
import { negotiate, acceptsJson, isProtobuf, contentTypeOf, aliased, cborEnabled, PROTOBUF, CBOR_SEQ, type MediaType, type Alias } from '../pipeline/encode.js'
import { encodeObjectJson, encodeWatchEvent } from '../machinery/codecs/protobuf.js'
import { cborWatchEvent } from '../machinery/codecs/cbor.js'
import { byteFieldsOf } from '../registry/byte-fields.js'
import { longRunningStarted, observeRequest } from './metrics.js'
import { buildTable, metadataFormOf, partialObjectMetadata, tableVersionOf } from '../pipeline/table.js'
import { configureWatch } from '../pipeline/index.js'
import { viewJson, viewObject } from '../pipeline/convert.js'
import { toView, type WebhookConversion } from '../pipeline/crd-convert.js'
import { statusLine } from './respond.js'

/** A watcher whose unsent bytes pass this is cut off (its client relists); writers never wait for it. */
const MAX_BUFFERED = 8 * 1024 * 1024
const BOOKMARK_INTERVAL_MS = 60_000
const BOOKMARK_BEFORE_END_MS = 2000

let store: Store
let opts: Options
let log: Logger

export const watchMetrics = { started: 0, active: 0, slowTerminated: 0 }

interface Watcher {
  res: HttpResponse
  def: ResolvedDefinition
  /** The served type when it is served over another's storage (`def` is the stored one): events are converted to it. */
  view: ResolvedDefinition | null
  /** A custom resource version converted by its CRD's conversion webhook: each frame is converted, in order. */
  wc: WebhookConversion | null
  /** The conversions under way (frames go out in order once each is converted). */
  chain: Promise<void> | undefined
  /** key prefix the watcher sees (type, namespace or one object) */
  prefix: string
  name: string
  sel: Selectors
  query: URLSearchParams
  /** highest rv sent */
  sentRv: number
  /** events arriving while the start-up state is being sent */
  pending: WatchEvent[] | null
  pendingBytes: number
  bookmarks: boolean
  /** Table apiVersion when the client asked for Tables (kubectl get -w), else null */
  table: string | null
  /** The apiVersion of PartialObjectMetadata when the watcher asked for metadata only, else null. */
  metadataOnly: string | null
  /** [our group, the upstream spelling] when the watch came through an upstream alias path */
  alias: Alias | null
  /** the negotiated media type of the stream */
  mt: MediaType
  /** column definitions go only in the first Table event */
  tableColumnsSent: boolean
  closed: boolean
  /**
   * Frames not yet handed to uWS, from `queueAt` on: once a write finds the socket full, later frames wait here (shared
   * buffers, not copies in uWS's per-connection buffer) and the writable handler sends them on.
   */
  queue: Array<Buffer | string>
  queueAt: number
  /** bytes in `queue` */
  queued: number
  /** the socket was full at the last write: frames queue until the writable handler has sent what uWS holds */
  blocked: boolean
  timers: NodeJS.Timeout[]
  hub: Hub
  /** where the hub files this watcher (see Hub) */
  slot: Slot
  /** frames written during one delivery, sent in one corked write after it */
  out: Array<Buffer | string>
  /** whether any frame was written: a binary stream's headers go out with its first frame */
  wrote: boolean
  /** counts the watch in the request metrics once it is over (apiserver_longrunning_requests until then) */
  finish: () => void
}

/**
 * Where a hub finds the watchers an event may concern, so that a write costs the watchers it can matter to rather
 * than all of them (10k kubelets each watching their node's pods): one object's key, one namespace's prefix, the
 * value of an equality field selector (matched against the new and the previous object, for transitions), or all.
 */
type Slot = { kind: 'all' } | { kind: 'key'; key: string } | { kind: 'prefix'; prefix: string } | { kind: 'field'; field: string; value: string }

function slotOf(def: ResolvedDefinition, hubPrefix: string, prefix: string, name: string, sel: Selectors): Slot {
  if (name !== '' && prefix !== hubPrefix) return { kind: 'key', key: prefix + name }
  const f = sel.fields?.find((r) => r.op === 'eq' && def.fieldSelectors !== undefined && r.field in def.fieldSelectors)
  if (f) return { kind: 'field', field: f.field, value: f.value }
  if (prefix !== hubPrefix) return { kind: 'prefix', prefix }
  return { kind: 'all' }
}

function addTo<K>(m: Map<K, Set<Watcher>>, k: K, w: Watcher): void {
  let set = m.get(k)
  if (!set) { set = new Set(); m.set(k, set) }
  set.add(w)
}

function removeFrom<K>(m: Map<K, Set<Watcher>>, k: K, w: Watcher): void {
  const set = m.get(k)
  if (set && set.delete(w) && set.size === 0) m.delete(k)
}

/** Attributes of a record decoded once per event, whatever the number of watchers that check them. */
const attrsCache = new WeakMap<Uint8Array, Attrs>()
function attrsOf(rec: Uint8Array): Attrs {
  let a = attrsCache.get(rec)
  if (!a) { a = recordAttrs(rec); attrsCache.set(rec, a) }
  return a
}

/** Watchers with frames queued during the current delivery. */
let delivering = false
const dirty: Watcher[] = []

class Hub {
  readonly prefix: string
  readonly shard: number
  readonly watchers = new Set<Watcher>()
  /** In-process listeners (the main thread's controllers) get every event of the type. */
  readonly listeners = new Set<(events: WatchEvent[]) => void>()
  subscribed: Promise<void> | null = null
  /**
   * The shard sends this hub the records' attributes only (no object bytes, no previous state): while every user of the
   * hub is a listener that reads attributes only. A watcher or a listener of whole objects widens it for good.
   */
  attrsOnly = false

  constructor(prefix: string, shard: number) { this.prefix = prefix; this.shard = shard }

  /** Subscribes (or widens the subscription to whole events when `whole`); resolves once such events flow. */
  ensureSubscribed(whole = true): Promise<void> {
    if (this.subscribed && (this.attrsOnly === false || !whole)) return this.subscribed
    this.attrsOnly = !whole
    this.subscribed = store.clients[this.shard].request({ op: 'watchSubscribe', prefix: this.prefix, attrsOnly: this.attrsOnly }).then(() => undefined)
    return this.subscribed
  }

  /**
   * The version through which every event of this type has reached this front-end: the shard answers on the same
   * port after every event it published before, so nothing at or below it can still be on the way.
   */
  async progress(): Promise<number> {
    const r = await store.clients[this.shard].request({ op: 'watchSubscribe', prefix: this.prefix, attrsOnly: this.attrsOnly })
    return r.ok ? r.rv : 0
  }

  /** Every watcher of the type, whatever its slot. */
  add(w: Watcher): void {
    this.watchers.add(w)
    const sl = w.slot
    if (sl.kind === 'all') this.#all.add(w)
    else if (sl.kind === 'key') addTo(this.#byKey, sl.key, w)
    else if (sl.kind === 'prefix') addTo(this.#byPrefix, sl.prefix, w)
    else {
      let m = this.#byField.get(sl.field)
      if (!m) { m = new Map(); this.#byField.set(sl.field, m) }
      addTo(m, sl.value, w)
    }
  }

  remove(w: Watcher): void {
    if (!this.watchers.delete(w)) return
    const sl = w.slot
    if (sl.kind === 'all') this.#all.delete(w)
    else if (sl.kind === 'key') removeFrom(this.#byKey, sl.key, w)
    else if (sl.kind === 'prefix') removeFrom(this.#byPrefix, sl.prefix, w)
    else {
      const m = this.#byField.get(sl.field)
      if (m) { removeFrom(m, sl.value, w); if (m.size === 0) this.#byField.delete(sl.field) }
    }
  }

  readonly #all = new Set<Watcher>()
  readonly #byKey = new Map<string, Set<Watcher>>()
  readonly #byPrefix = new Map<string, Set<Watcher>>()
  readonly #byField = new Map<string, Map<string, Set<Watcher>>>()

  deliver(events: WatchEvent[]): void {
    for (const l of this.listeners) {
      try { l(events) } catch (err) { log.error({ err, prefix: this.prefix }, 'watch listener failed') }
    }
    if (this.watchers.size === 0) return
    delivering = true
    try {
      for (const ev of events) {
        for (const w of this.#all) offer(w, ev)
        if (this.#byKey.size > 0) this.#offerAll(this.#byKey.get(ev[1]), ev)
        if (this.#byPrefix.size > 0) this.#offerAll(this.#byPrefix.get(ev[1].slice(0, ev[1].lastIndexOf('/') + 1)), ev)
        for (const [field, byValue] of this.#byField) {
          const v = attrsOf(ev[3]).f?.[field] ?? ''
          this.#offerAll(byValue.get(v), ev)
          const prev = ev[4]
          if (prev) {
            const pv = attrsOf(prev).f?.[field] ?? ''
            if (pv !== v) this.#offerAll(byValue.get(pv), ev)
          }
        }
      }
    } finally {
      delivering = false
      flushDirty()
    }
  }

  #offerAll(set: Set<Watcher> | undefined, ev: WatchEvent): void {
    if (set) for (const w of set) offer(w, ev)
  }
}

/** One event to one watcher: held while its watch is starting, else filtered and sent. */
function offer(w: Watcher, ev: WatchEvent): void {
  if (w.closed) return
  if (w.pending) {
    w.pending.push(ev)
    w.pendingBytes += ev[3].length
    // A watch still waiting to start holds what arrives meanwhile, up to the cap of a slow watcher.
    if (w.pendingBytes > MAX_BUFFERED) { watchMetrics.slowTerminated++; end(w) }
    return
  }
  sendEvent(w, ev)
}

const hubs = new Map<string, Hub>()

export function configureWatchStreams(s: Store, _registry: Registry, o: Options, l: Logger): void {
  store = s
  opts = o
  log = l
  for (const c of store.clients) {
    c.onPush((events) => {
      // Group by type prefix so each hub gets its events in one call.
      let cur: string | null = null
      let batch: WatchEvent[] = []
      const flush = () => { if (cur !== null && batch.length) hubs.get(cur)?.deliver(batch); batch = [] }
      for (const ev of events) {
        const key = ev[1]
        const p = key.slice(0, key.indexOf('/', key.indexOf('/') + 1) + 1)
        if (p !== cur) { flush(); cur = p }
        batch.push(ev)
      }
      flush()
    })
  }
  configureWatch(startWatch)
}

function hubFor(def: ResolvedDefinition): Hub {
  const typeKey = typePrefix(def.group, def.resource)
  let hub = hubs.get(typeKey)
  if (!hub) { hub = new Hub(typeKey, store.shardFor(def.group, def.resource)); hubs.set(typeKey, hub) }
  return hub
}

/**
 * This thread's watches by what they watch (upstream's watch tracker), keyed by watchKey(group, resource, namespace,
 * name): namespace and name are empty when the watch spans them. As upstream, a pod watch narrowed to one node
 * (`spec.nodeName=<node>`) is left out: a write reaches only that node's watchers, and which node is not known here.
 */
export function watchCounts(): Map<string, number> {
  const out = new Map<string, number>()
  for (const hub of hubs.values()) {
    for (const w of hub.watchers) {
      if (w.closed) continue
      const d = w.def
      if (d.group === '' && d.resource === 'pods' && w.sel.fields?.some((f) => f.field === 'spec.nodeName' && f.op === 'eq' && f.value !== '')) continue
      // The watcher's prefix past the type's: '' (all namespaces), '<ns>/' or '/' (a cluster-scoped type).
      const rest = w.prefix.slice(hub.prefix.length)
      const k = watchKey(d.group, d.resource, rest.endsWith('/') ? rest.slice(0, -1) : rest, w.name)
      out.set(k, (out.get(k) ?? 0) + 1)
    }
  }
  return out
}

/**
 * Subscribes an in-process listener to every event of a type; resolves once events flow. With `attrsOnly` the listener
 * reads no more than `recordRv` and `recordAttrs` of the events (their records carry no object bytes and no previous
 * state, unless another user of the type needs them): big objects then do not travel to this thread for it.
 */
export async function listenType(def: ResolvedDefinition, fn: (events: WatchEvent[]) => void, opts: { attrsOnly?: boolean } = {}): Promise<() => void> {
  const hub = hubFor(def)
  if (opts.attrsOnly) {
    hub.listeners.add(fn)
    await hub.ensureSubscribed(false)
  } else {
    // Added once whole events flow: an event before that may still be cut (the caller reads the state after this).
    await hub.ensureSubscribed(true)
    hub.listeners.add(fn)
  }
  return () => { hub.listeners.delete(fn) }
}

// ---- encoding: once per event, shared by every watcher ----

const encoded = new WeakMap<Uint8Array, Map<string, Buffer>>()

/** One event in the watcher's form: a JSON line, a length-prefixed protobuf WatchEvent frame, or a CBOR data item. */
function frame(mt: MediaType, type: string, objectJson: Buffer | string, alias?: Alias): Buffer {
  if (isProtobuf(mt)) {
    return encodeWatchEvent(type, encodeObjectJson(alias ? aliased(objectJson.toString(), alias) : objectJson))
  }
  if (mt === 'cbor') return cborWatchEvent(type, aliased(objectJson.toString(), alias), byteFieldsOf)
  const body = alias ? aliased(objectJson.toString(), alias) : objectJson
  return Buffer.concat([Buffer.from(`{"type":"${type}","object":`), typeof body === 'string' ? Buffer.from(body) : body, NEWLINE_END])
}
const NEWLINE_END = Buffer.from('}\n')

/** Encoded once per event, type and media type, and shared by every watcher that gets it. */
function encodeEvent(mt: MediaType, type: string, rec: Uint8Array): Buffer {
  let m = encoded.get(rec)
  if (!m) { m = new Map(); encoded.set(rec, m) }
  const k = `${mt}:${type}`
  let b = m.get(k)
  if (!b) { b = frame(mt, type, recordObject(rec)); m.set(k, b) }
  return b
}

function write(w: Watcher, buf: Buffer | string): void {
  if (w.closed) return
  if (w.wc !== null) { writeConverted(w, w.wc, buf); return }
  w.wrote = true
  // During a delivery the frames of one watcher are gathered and go out in one corked write (one send).
  if (delivering) {
    if (w.out.length === 0) dirty.push(w)
    w.out.push(buf)
    return
  }
  writeNow(w, buf)
}

/**
 * write() for a watch of a webhook-converted version: the frame's object converted through the webhook (one review per
 * event), frames kept in order; a failed conversion ends the watch with an ERROR event carrying the Status.
 */
function writeConverted(w: Watcher, wc: WebhookConversion, buf: Buffer | string): void {
  const step = async (): Promise<void> => {
    if (w.closed) return
    const text = buf.toString()
    let out: Buffer | string = buf
    if (text.includes(`"apiVersion":"${wc.stored.apiVersion}"`)) {
      const ev = JSON.parse(text) as { type: string; object?: Record<string, any> }
      if (ev.object !== undefined && ev.object.apiVersion === wc.stored.apiVersion && ev.object.kind === wc.view.kind) {
        // A bookmark carries no object to convert: only its apiVersion is the requested one.
        if (ev.type === 'BOOKMARK') ev.object.apiVersion = wc.view.apiVersion
        else ev.object = (await toView(wc, [ev.object]))[0]
        if (w.table && ev.type !== 'BOOKMARK') {
          ev.object = buildTable(wc.view, [ev.object!], { resourceVersion: ev.object!.metadata?.resourceVersion ?? '' }, w.query, w.table, !w.tableColumnsSent)
          w.tableColumnsSent = true
        }
        out = `${JSON.stringify(ev)}\n`
      }
    }
    if (w.closed) return
    w.wrote = true
    writeNow(w, out)
  }
  const failed = (err: unknown): void => {
    if (w.closed) return
    const e = err instanceof ApiError ? err : new ApiError(500, 'InternalError', `Internal error occurred: ${(err as Error).message}`)
    w.wrote = true
    writeNow(w, errorFrame(w, e))
    end(w)
  }
  w.chain = (w.chain ?? Promise.resolve()).then(step).catch(failed)
}

function flushDirty(): void {
  for (let i = 0; i < dirty.length; i++) {
    const w = dirty[i]
    const out = w.out
    w.out = []
    if (w.closed) continue
    writeNow(w, out.length === 1 ? out[0] : out)
  }
  dirty.length = 0
}

function noop(): void {}

const byteLength = (b: Buffer | string): number => typeof b === 'string' ? Buffer.byteLength(b) : b.length

/** uWS's cork buffer (16 KB) less a margin, and the chunk framing uWS adds around each write (CRLF, hex size, CRLF). */
const CORK_ROOM = 16 * 1024 - 256
const CHUNK_FRAMING = 12
const single: Array<Buffer | string> = ['']

/**
 * Frames from `from` on to the socket, in corked groups that fit uWS's cork buffer, until the socket is full (a write
 * answers false and uWS keeps the rest of that frame: `w.blocked`). Returns the index after the last frame handed over.
 * A write that does not fit in the cork buffer makes uWS send the corked bytes first, and when that send finds the
 * socket full this uWS build keeps the corked bytes but drops the write's own (its AsyncSocket::uncork): the stream's
 * chunk framing broke (the client read the next chunk's size line where it expected data) and the event was lost. So a
 * corked group never outgrows the cork buffer, and a frame too large for it is corked alone: only its few bytes of
 * chunk framing are corked before it, which a socket that took the last write whole has room for. (An uncorked write
 * would be safe but makes uWS print a warning on stderr for every such response.)
 */
function writeFrames(w: Watcher, frames: ArrayLike<Buffer | string>, from: number): number {
  const res = w.res
  let i = from
  while (i < frames.length && !w.blocked) {
    res.cork(() => {
      let room = CORK_ROOM
      do {
        const n = byteLength(frames[i]) + CHUNK_FRAMING
        // the first frame of a group goes in whatever its size (a large one alone)
        if (n > room && room < CORK_ROOM) break
        room -= n
        if (!res.write(frames[i++])) { w.blocked = true; break }
      } while (i < frames.length)
    })
  }
  return i
}

/**
 * Frames to the socket (writeFrames). Once the socket is full the remaining frames and later ones queue until the
 * writable handler has sent what uWS holds; a watcher whose queue passes MAX_BUFFERED is too slow and is ended.
 */
function writeNow(w: Watcher, data: Buffer | string | Array<Buffer | string>): void {
  if (w.blocked) { enqueue(w, data, 0); return }
  let frames: Array<Buffer | string>
  if (Array.isArray(data)) frames = data
  else { single[0] = data; frames = single }
  const i = writeFrames(w, frames, 0)
  if (w.blocked) enqueue(w, frames, i)
  single[0] = ''
}

function enqueue(w: Watcher, data: Buffer | string | Array<Buffer | string>, from: number): void {
  if (Array.isArray(data)) for (let i = from; i < data.length; i++) { w.queue.push(data[i]); w.queued += byteLength(data[i]) }
  else { w.queue.push(data); w.queued += byteLength(data) }
  if (w.queued > MAX_BUFFERED) {
    // Past the cap this watcher is too slow: it is ended (its client relists); writers never wait for it.
    watchMetrics.slowTerminated++
    log.warn({ prefix: w.prefix, buffered: w.queued }, 'watcher too slow, terminated')
    w.queue = []
    w.queueAt = 0
    w.queued = 0
    end(w)
  }
}

/**
 * The writable handler of every watch, registered when it starts. uWS leaves what it holds for a response alone on a
 * writable socket once the response has a writable handler (the handler is expected to write), and without one it
 * gives the socket a short idle timeout after draining, which would end a quiet watch. So this handler moves the data
 * on: queued frames are written until the socket is full again (the first write sends what uWS holds first); with none
 * queued, a cork with nothing in it ends in an uncork, which sends what uWS holds. Without it the tail of a large
 * backlog or initial state waited for the watch's next event, however long that took.
 */
function drain(w: Watcher): boolean {
  if (w.closed) return true
  const q = w.queue
  const from = w.queueAt
  // A corked send that found the socket full is not seen by write() (it answers for the cork buffer), only here.
  if (from >= q.length) { w.res.cork(noop); w.blocked = false; return true }
  w.blocked = false
  const to = writeFrames(w, q, from)
  for (let j = from; j < to; j++) { w.queued -= byteLength(q[j]); q[j] = '' }
  if (to < q.length) w.queueAt = to
  else { w.queue = []; w.queueAt = 0 }
  return true
}

function keyMatchesWatcher(w: Watcher, key: string): boolean {
  if (!key.startsWith(w.prefix)) return false
  if (w.name !== '' && key.slice(key.lastIndexOf('/') + 1) !== w.name) return false
  return true
}

/** A Table watch event: one row, column definitions only in the watcher's first event. */
function tableEvent(w: Watcher, type: string, rec: Uint8Array, query: URLSearchParams): Buffer {
  const o = JSON.parse(recordObject(rec).toString('utf8'))
  const t = buildTable(w.def, [o], { resourceVersion: o.metadata?.resourceVersion ?? '' }, query, w.table!, !w.tableColumnsSent)
  w.tableColumnsSent = true
  return Buffer.from(`{"type":"${type}","object":${JSON.stringify(t)}}\n`)
}

/**
 * A metadata-only watch event: the object as PartialObjectMetadata (client-go's metadata informers ask for these).
 * Made once per event, type and apiVersion, in the same cache as the other encodings, and shared by its watchers.
 */
function metadataEvent(type: string, rec: Uint8Array, apiVersion: string): Buffer {
  let m = encoded.get(rec)
  if (!m) { m = new Map(); encoded.set(rec, m) }
  const k = `meta:${apiVersion}:${type}`
  let b = m.get(k)
  if (!b) {
    const o = JSON.parse(recordObject(rec).toString('utf8'))
    b = Buffer.from(`{"type":"${type}","object":${JSON.stringify(partialObjectMetadata(o, apiVersion))}}\n`)
    m.set(k, b)
  }
  return b
}

function emit(w: Watcher, type: string, rec: Uint8Array): void {
  if (w.view !== null) { emitConverted(w, w.view, type, rec); return }
  // A webhook-converted watch's Table is built after the conversion (writeConverted), from the plain event.
  if (w.table && w.wc === null) { write(w, tableEvent(w, type, rec, w.query)); return }
  if (w.metadataOnly) { write(w, metadataEvent(type, rec, w.metadataOnly)); return }
  // Through an upstream alias path the objects carry the alias apiVersion (encoded for this watcher alone).
  write(w, w.alias ? frame(w.mt, type, recordObject(rec), w.alias) : encodeEvent(w.mt, type, rec))
}

/**
 * emit() for a type served over another's storage: the stored object converted to the served type, once per event,
 * type and form for every plain watcher of it (a Table row or metadata is made per watcher).
 */
function emitConverted(w: Watcher, view: ResolvedDefinition, type: string, rec: Uint8Array): void {
  const plain = !w.table && !w.metadataOnly && !w.alias
  let m: Map<string, Buffer> | undefined
  const k = `conv:${view.apiVersion}:${w.mt}:${type}`
  if (plain) {
    m = encoded.get(rec)
    const b = m?.get(k)
    if (b !== undefined) { write(w, b); return }
  }
  const o = viewObject(view, JSON.parse(recordObject(rec).toString('utf8')))
  if (w.table) {
    const t = buildTable(view, [o], { resourceVersion: o.metadata?.resourceVersion ?? '' }, w.query, w.table, !w.tableColumnsSent)
    w.tableColumnsSent = true
    write(w, Buffer.from(`{"type":"${type}","object":${JSON.stringify(t)}}\n`))
    return
  }
  if (w.metadataOnly) { write(w, Buffer.from(`{"type":"${type}","object":${JSON.stringify(partialObjectMetadata(o, w.metadataOnly))}}\n`)); return }
  const b = frame(w.mt, type, JSON.stringify(o), w.alias ?? undefined)
  if (plain) {
    if (m === undefined) { m = new Map(); encoded.set(rec, m) }
    m.set(k, b)
  }
  write(w, b)
}

/** An object that stopped matching: DELETED with its previous content and the version of the change. */
function emitStopMatching(w: Watcher, prev: Uint8Array, rv: number): void {
  let json = recordObject(prev).toString('utf8').replace(/"resourceVersion":"\d+"/, `"resourceVersion":"${rv}"`)
  if (w.view !== null) json = viewJson(w.view, json)
  if (w.metadataOnly) json = JSON.stringify(partialObjectMetadata(JSON.parse(json), w.metadataOnly))
  write(w, frame(w.mt, 'DELETED', json, w.alias ?? undefined))
}

function sendEvent(w: Watcher, ev: WatchEvent): void {
  const [type, key, rv, rec, prev] = ev
  if (rv <= w.sentRv) return
  if (!keyMatchesWatcher(w, key)) return
  const filtered = w.sel.labels !== null || w.sel.fields !== null
  const now = !filtered || matchesAttrs(w.sel, key, attrsOf(rec))
  const before = prev !== null && (!filtered || matchesAttrs(w.sel, key, attrsOf(prev)))
  let t: string | null = null
  if (type === 'DELETED') t = before ? 'DELETED' : null
  else if (type === 'ADDED') t = now ? 'ADDED' : null
  else if (now && before) t = 'MODIFIED'
  else if (now) t = 'ADDED'
  else if (before) { w.sentRv = rv; emitStopMatching(w, prev!, rv); return }
  w.sentRv = rv
  if (t === null) return
  emit(w, t, rec)
}

function bookmarkFrame(w: Watcher, rv: number, initialEventsEnd = false): Buffer {
  const meta: Record<string, unknown> = { resourceVersion: String(rv) }
  if (initialEventsEnd) meta.annotations = { 'orch.io/initial-events-end': 'true', 'k8s.io/initial-events-end': 'true' }
  const shown = w.view ?? w.def
  const [kind, apiVersion] = w.metadataOnly ? ['PartialObjectMetadata', w.metadataOnly] : [shown.kind, shown.apiVersion]
  // A bookmark is no stored object: no read defaults for it (only the apiVersion of an alias path).
  const alias: Alias | undefined = w.alias ? [w.alias[0], w.alias[1]] : undefined
  return frame(w.mt, 'BOOKMARK', `{"kind":"${kind}","apiVersion":"${apiVersion}","metadata":${JSON.stringify(meta)}}`, alias)
}

function errorFrame(w: Watcher, err: ApiError): Buffer {
  return frame(w.mt, 'ERROR', JSON.stringify(err.toStatus()))
}

function end(w: Watcher): void {
  if (w.closed) return
  w.closed = true
  for (const t of w.timers) clearTimeout(t)
  w.hub.remove(w)
  watchMetrics.active--
  w.finish()
  // Frames still queued go out before the end (uWS keeps what the socket does not take; writeFrames says how).
  const rest = w.queue.slice(w.queueAt)
  w.queue = []
  try {
    for (let i = 0; i < rest.length;) { w.blocked = false; i = writeFrames(w, rest, i) }
    w.res.cork(() => w.res.end())
  } catch { /* aborted */ }
}

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


async function startWatch(ctx: RequestContext, def: ResolvedDefinition): Promise<Response> {
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

/** Watch option errors are 422 Invalid on the ListOptions kind, as upstream validates them. */
/** Bookmarks (at what was really delivered) to every watcher that asked for them, then end all streams (graceful shutdown). */
export async function closeAllWatches(): Promise<void> {
  await Promise.all([...hubs.values()].map(async (hub) => {
    const rv = hub.watchers.size > 0 ? await hub.progress().catch(() => 0) : 0
    for (const w of [...hub.watchers]) {
      if (w.bookmarks && !w.pending) write(w, bookmarkFrame(w, Math.max(w.sentRv, rv)))
      end(w)
    }
  }))
}
