// Watch streams: per-type hubs fed once by the owning shard, where they file their watchers and how they deliver to them (writing in watch-stream.ts, per-watcher events in watch-events.ts, the start in watch-start.ts).
import type { HttpResponse } from 'uWebSockets.js'
import type { Logger } from 'pino'
import { typePrefix } from '../machinery/storage-format.js'
import type { WatchEvent } from '../../actors/shard/messages.js'
import { watchKey } from '../../actors/flow-control/messages.js'
import type { ResolvedDefinition } from '../registry/define.js'
import type { Registry } from '../registry/index.js'
import type { Options } from '../options.js'
import type { Store } from '../pipeline/store.js'
import type { Selectors } from '../pipeline/read-selectors.js'
import type { MediaType, Alias } from '../pipeline/encode.js'
import { configureWatch } from '../pipeline/index.js'
import type { WebhookConversion } from '../pipeline/crd-convert.js'
import { MAX_BUFFERED, watchMetrics, write, flushDirty, bookmarkFrame, end } from './watch-stream.js'
import { attrsOf, sendEvent } from './watch-events.js'
import { startWatch } from './watch-start.js'

export let store: Store
export let opts: Options
export let log: Logger

export interface Watcher {
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

export function slotOf(def: ResolvedDefinition, hubPrefix: string, prefix: string, name: string, sel: Selectors): Slot {
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

/** Watchers with frames queued during the current delivery. */
export let delivering = false
export const dirty: Watcher[] = []

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

export function hubFor(def: ResolvedDefinition): Hub {
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
