// The shard actor: sole writer of one LMDB environment, allocator of resourceVersions in its commits, keeper of watch rings.
import { open, type RootDatabase, type Database } from 'lmdb'
import type { MessagePort } from 'node:worker_threads'
import { pino, type Logger } from 'pino'
import { encodeRecord, envOptions, indexKey, objectsDbOptions, prefixEnd, recordAttrs, recordWithoutObject, RV_MARKER, type Attrs } from '../../src/machinery/storage-format.js'
import { PortPeer } from '../../src/machinery/port-rpc.js'
import {
  COUNTER_SLOT, watermarkSlot, namespaceWritesSlot, NAMESPACES_PREFIX, priorityClassWritesSlot, PRIORITY_CLASSES_PREFIX,
  admissionPolicyWritesSlot, ADMISSION_POLICIES_PREFIX, ADMISSION_POLICY_BINDINGS_PREFIX,
  limitRangeWritesSlot, LIMIT_RANGES_PREFIX, resourceQuotaSetWritesSlot, RESOURCE_QUOTAS_PREFIX,
  serviceAccountWritesSlot, SERVICE_ACCOUNTS_PREFIX,
  crdWritesSlot, CRDS_PREFIX, webhookConfigWritesSlot, MUTATING_WEBHOOKS_PREFIX, VALIDATING_WEBHOOKS_PREFIX,
  type ShardRequest, type ShardReply, type WatchEvent, type ObjectPut, type ObjectDelete,
} from './messages.js'

export interface ShardInit {
  op: 'init'; shard: number; /** how many shards there are (places the namespace-writes count) */ shards?: number; dataDir: string; counters: SharedArrayBuffer; heartbeats: SharedArrayBuffer; heartbeatSlot: number; watchHistoryMs: number; watchHistoryCount: number; /** --storage-compression */ compress?: boolean; logLevel: string
  /**
   * The authz version counters (BigInt64Array): before a write of a type under `rbacPrefixes` (or `graphPrefixes`) is
   * acknowledged, its resourceVersion is stored at `rbacSlot` (`graphSlot`), so front-ends know which state a decision
   * must reflect.
   */
  authz?: { versions: SharedArrayBuffer; rbacSlot: number; graphSlot: number; rbacPrefixes: string[]; graphPrefixes: string[] }
  /** Type prefix → the field selectors to keep a secondary index of (see ResourceDefinition.indexedFields). */
  indexes?: Record<string, string[]>
}
export interface ShardAttach { op: 'attach'; port: MessagePort; name: string }
export interface ShardPing { op: 'ping' }
export type ShardTask = ShardInit | ShardAttach | ShardPing

let shard = -1
let root: RootDatabase
let objects: Database<Buffer, string>
let meta: Database<number, string>
let index: Database<Buffer, string>
/** type prefix → indexed fields */
const indexed = new Map<string, string[]>()
const EMPTY = Buffer.alloc(0)
let counters: BigInt64Array
/** Slot of the namespace-writes count in counters (-1: an array without it). */
let namespaceSlot = -1
let priorityClassSlot = -1
let admissionPolicySlot = -1
let limitRangeSlot = -1
let quotaSetSlot = -1
let serviceAccountSlot = -1
let crdSlot = -1
let webhookConfigSlot = -1
let log: Logger
let historyMs = 300_000
let historyCount = 100_000
/** The version the shard started at: rings hold every event after it (until trimmed). */
let startRv = 0

/** rvs allocated whose commit has not resolved yet, in allocation order. */
const inflight: number[] = []

/**
 * An event as a ring keeps it. An ADDED or MODIFIED event whose version is still the stored one keeps no record
 * (null): those bytes are in LMDB, and a backlog reads them from there. When the next write of that key reads the
 * stored bytes to replace them, they become this event's record and the new event's previous state, one copy for
 * both (see supersede), so the ring holds a copy of an object only per superseded version (and per DELETED event,
 * whose final state is stored nowhere else). A stream of creates keeps no object bytes in the ring.
 */
type RingEvent = [type: WatchEvent[0], key: string, rv: number, rec: Uint8Array | null, prev: Uint8Array | null]
/** `events` are in rv order (published in commit order). */
interface Ring { events: Array<RingEvent | undefined>; times: number[]; start: number; /** the rv before which history is gone */ floor: number }
const rings = new Map<string, Ring>()
/**
 * Stored versions replaced by a write applied before their own event was published (an earlier write of the same key
 * in the same commit; events are published after the commit returns): rv → the bytes read for the replacing write,
 * taken by the ring event of that rv when it is published.
 */
const supersededPending = new Map<number, Uint8Array>()

/** `prefixes`: the type prefixes a peer subscribed to, each with whether it takes the attributes only. */
type Peer = PortPeer<ShardRequest, ShardReply, WatchEvent> & { prefixes: Map<string, boolean> }
const peers: Peer[] = []

let authzVersions: BigInt64Array | null = null
/** type prefix → slot of the authz version counters it bumps */
const authzSlots = new Map<string, number>()

function typePrefixOf(key: string): string {
  const a = key.indexOf('/')
  const b = key.indexOf('/', a + 1)
  return key.slice(0, b + 1)
}

function ringOf(prefix: string): Ring {
  let r = rings.get(prefix)
  if (!r) {
    // Every event since the shard started is published to its type's ring, so a ring made late still covers them.
    r = { events: [], times: [], start: 0, floor: startRv }
    rings.set(prefix, r)
  }
  return r
}

function publishedWatermark(): number { return Number(Atomics.load(counters, watermarkSlot(shard))) }

function trimRing(r: Ring, now: number): void {
  let cut = r.start
  const end = r.events.length
  while (cut < end && (end - cut > historyCount || now - r.times[cut] > historyMs)) cut++
  if (cut > r.start) {
    r.floor = r.events[cut - 1]![2]
    // Expired events are released at once (each may hold two copies of an object); the array is compacted later.
    for (let i = r.start; i < cut; i++) r.events[i] = undefined
    r.start = cut
    if (r.start > 1024 && r.start * 2 > r.events.length) {
      r.events = r.events.slice(r.start)
      r.times = r.times.slice(r.start)
      r.start = 0
    }
  }
}

function reply(peer: Peer, r: ShardReply): void { peer.reply(r) }

function publish(ev: WatchEvent): void {
  const prefix = typePrefixOf(ev[1])
  const r = ringOf(prefix)
  // Never the pushed tuple itself for an event that keeps no record: a ring event is completed later (supersede),
  // and a pushed tuple may still wait in a peer's outgoing batch.
  let kept: RingEvent = ev
  if (ev[0] !== 'DELETED') {
    const old = supersededPending.get(ev[2])
    if (old !== undefined) supersededPending.delete(ev[2])
    kept = [ev[0], ev[1], ev[2], old ?? null, ev[4]]
  }
  r.events.push(kept)
  r.times.push(Date.now())
  let slim: WatchEvent | null = null
  for (const p of peers) {
    const attrsOnly = p.prefixes.get(prefix)
    if (attrsOnly === undefined) continue
    // The cut record copied into a buffer of its own size: recordWithoutObject gives a Buffer view of the whole
    // record, and structured clone would carry the whole backing store (the object too) to the listener.
    p.push(attrsOnly ? (slim ??= [ev[0], ev[1], ev[2], new Uint8Array(recordWithoutObject(ev[3])), null]) : ev)
  }
}

/** An RBAC (or node-graph) write is about to be acknowledged: publish its version first. */
function bumpAuthzVersion(ev: WatchEvent): void {
  if (authzVersions === null) return
  const slot = authzSlots.get(typePrefixOf(ev[1]))
  if (slot !== undefined) Atomics.store(authzVersions, slot, BigInt(ev[2]))
}

function advanceWatermark(): void {
  const slot = watermarkSlot(shard)
  // Everything this shard allocated below the oldest in-flight rv is committed; with nothing in flight the
  // whole counter is safe to name (any later write here takes a larger rv).
  const wm = inflight.length > 0 ? inflight[0] - 1 : Number(Atomics.load(counters, COUNTER_SLOT))
  if (wm > Number(Atomics.load(counters, slot))) Atomics.store(counters, slot, BigInt(wm))
}

function finishRv(rv: number): void {
  const i = inflight.indexOf(rv)
  if (i >= 0) inflight.splice(i, 1)
  advanceWatermark()
}


/**
 * Object counts per type and per type and namespace, kept in the meta database in the same transaction as the
 * objects, so a list page learns its remainingItemCount from its own snapshot without counting keys.
 */
function countKey(key: string, delta: number): void {
  const typeEnd = key.indexOf('/', key.indexOf('/') + 1) + 1
  const nsEnd = key.indexOf('/', typeEnd) + 1
  const kt = `n:${key.slice(0, typeEnd)}`
  const kn = `n:${key.slice(0, nsEnd)}`
  countDeltas.set(kt, (countDeltas.get(kt) ?? 0) + delta)
  countDeltas.set(kn, (countDeltas.get(kn) ?? 0) + delta)
}

/**
 * The count changes of the transaction being built, written once per key at its end: a group commit of many creates
 * in one namespace reads and writes its two counters once instead of once per create.
 */
const countDeltas = new Map<string, number>()

function writeCounts(): void {
  for (const [k, d] of countDeltas) meta.put(k, (meta.get(k) ?? 0) + d)
  countDeltas.clear()
}

/** Index of the event of version `rv` in a ring (binary search: rings are in rv order), or -1. */
function findEvent(r: Ring, rv: number): number {
  let lo = r.start
  let hi = r.events.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1
    const at = r.events[mid]![2]
    if (at === rv) return mid
    if (at < rv) lo = mid + 1
    else hi = mid - 1
  }
  return -1
}

/**
 * The stored version `rv` of a key of type `prefix` is being replaced by a write that read its bytes (`cur`): the ring
 * event of that version, which kept no record while it was the stored one, takes these bytes (the new event's
 * previous state: one copy for both). An event not published yet takes them when it is; one already trimmed, or from
 * before the shard started, needs nothing.
 */
function supersede(prefix: string, rv: number, cur: Uint8Array): void {
  const r = rings.get(prefix)
  const lastPublished = r === undefined ? startRv : r.events.length > r.start ? r.events[r.events.length - 1]![2] : r.floor
  if (rv > lastPublished) { supersededPending.set(rv, cur); return }
  if (r === undefined) return
  const i = findEvent(r, rv)
  if (i < 0) return
  const ev = r.events[i]!
  if (ev[3] === null) ev[3] = cur
}

/**
 * Stored records read for backlogs during this turn, by ring event. The replies of one turn go out in one message, and
 * structured clone copies an object once per message however often it appears: watchers resuming together (thousands
 * of kubelets after a restart) then share one copy of each record, as they did when the ring held them all.
 */
let readThisTurn: Map<RingEvent, Buffer> | null = null

function storedOf(ev: RingEvent): Buffer | undefined {
  if (readThisTurn === null) {
    readThisTurn = new Map()
    setImmediate(() => { readThisTurn = null })
  }
  let rec = readThisTurn.get(ev)
  if (rec === undefined) {
    rec = objects.getBinary(ev[1])
    if (rec !== undefined) readThisTurn.set(ev, rec)
  }
  return rec
}

interface PendingWrite { peer: Peer; req: ObjectPut | ObjectDelete; rv: number; failure: ShardReply | null; event: WatchEvent | null }

/**
 * Group commit: the writes of one event-loop turn (every message the ports delivered in it) go into one LMDB
 * transaction, committed at the end of the turn (setImmediate). While a commit syncs, the thread is busy, so the writes
 * that arrive meanwhile wait in the ports and make the next turn's batch: one sync carries many writes under load, and
 * a lone write is committed in the turn it arrives in.
 *
 * The commit is synchronous (transactionSync) and a write is acknowledged after it returns: LMDB has then written the
 * pages, fdatasync'd them and written the meta page through its O_DSYNC descriptor, so kill -9 or a power loss keeps
 * every acknowledged write (test/http/durability.test.ts). That holds only because this env never has an lmdb-js async
 * write (put, remove or transaction without Sync) in flight: lmdb-js runs a transactionSync begun while one is in flight
 * inside that batch's transaction, which its writer thread commits later, after the JS turn. Every write of the shard
 * goes through commitBatch (and buildIndexes at start), both synchronous.
 *
 * Measured against the asynchronous transaction() with two commits in flight (same machine, alternating runs): creates
 * at 64 connections 13.2k/s against 10.0k/s, and a 4-seat APF level at 10x overload 2,850 against 2,300 creates/s:
 * an async commit hops to lmdb-js's writer thread and back (to run the callback, then to resolve) on every batch.
 */
let batch: PendingWrite[] = []
let scheduled = false

function write(peer: Peer, req: ObjectPut | ObjectDelete): void {
  batch.push({ peer, req, rv: 0, failure: null, event: null })
  if (!scheduled) {
    scheduled = true
    setImmediate(commitBatch)
  }
}

/** Checks and applies one write inside the transaction; the resourceVersion is taken here, in commit order. */
function apply(w: PendingWrite): void {
  const req = w.req
  const cur = objects.getBinary(req.key)
  const curRv = cur ? cur.readDoubleLE(0) : 0
  if (req.op === 'objectPut') {
    if (req.expect === 0 && cur) { w.failure = { id: req.id, ok: false, reason: 'exists', rv: curRv }; return }
    if (req.expect !== 0 && !cur) { w.failure = { id: req.id, ok: false, reason: 'notfound' }; return }
    if (req.expect !== 0 && curRv !== req.expect) { w.failure = { id: req.id, ok: false, reason: 'conflict', rv: curRv }; return }
  } else {
    if (!cur) { w.failure = { id: req.id, ok: false, reason: 'notfound' }; return }
    if (curRv !== req.expect) { w.failure = { id: req.id, ok: false, reason: 'conflict', rv: curRv }; return }
  }
  const rv = Number(Atomics.add(counters, COUNTER_SLOT, 1n)) + 1
  w.rv = rv
  inflight.push(rv)
  const at = req.json.indexOf(RV_MARKER)
  const json = at < 0 ? req.json : req.json.slice(0, at) + String(rv) + req.json.slice(at + RV_MARKER.length)
  const rec = encodeRecord(rv, req.attrs, json)
  const tp = typePrefixOf(req.key)
  const fields = indexed.get(tp)
  if (fields) reindex(tp, req.key, fields, cur ? recordAttrs(cur) : null, req.op === 'objectPut' ? JSON.parse(req.attrs) as Attrs : null)
  if (cur) supersede(tp, curRv, cur)
  if (req.op === 'objectPut') {
    if (!cur) countKey(req.key, 1)
    objects.put(req.key, rec)
    w.event = [cur ? 'MODIFIED' : 'ADDED', req.key, rv, rec, cur ?? null]
  } else {
    countKey(req.key, -1)
    objects.remove(req.key)
    w.event = ['DELETED', req.key, rv, rec, cur!]
  }
}

/** Moves a key's index entries from its old field values to its new ones (null: absent), inside the transaction. */
function reindex(tp: string, key: string, fields: string[], old: Attrs | null, cur: Attrs | null): void {
  for (const f of fields) {
    const was = old ? old.f?.[f] ?? '' : null
    const now = cur ? cur.f?.[f] ?? '' : null
    if (was === now) continue
    if (was !== null) index.remove(indexKey(tp, f, was, key))
    if (now !== null) index.put(indexKey(tp, f, now, key), EMPTY)
  }
}

/** Builds the index from the stored objects when the indexed fields differ from those it was built for. */
function buildIndexes(spec: Record<string, string[]>): void {
  const want = JSON.stringify(Object.entries(spec).sort())
  for (const [prefix, fields] of Object.entries(spec)) indexed.set(prefix, fields)
  const meta2 = meta as unknown as Database<string, string>
  if (meta2.get('index-spec') === want) return
  const t0 = performance.now()
  let n = 0
  root.transactionSync(() => {
    for (const { key } of index.getRange({})) index.remove(key as string)
    for (const [prefix, fields] of indexed) {
      for (const { key, value } of objects.getRange({ start: prefix, end: prefixEnd(prefix) })) {
        reindex(prefix, key as string, fields, null, recordAttrs(value as Buffer))
        n++
      }
    }
    meta2.put('index-spec', want)
  })
  log.info({ objects: n, ms: Math.round(performance.now() - t0) }, 'secondary indexes built')
}

function commitBatch(): void {
  scheduled = false
  if (batch.length === 0) return
  const writes = batch
  batch = []
  try {
    root.transactionSync(() => {
      countDeltas.clear()
      let last = 0
      for (const w of writes) {
        apply(w)
        if (w.rv) last = w.rv
      }
      writeCounts()
      if (last) meta.put('rv', last)
    })
  } catch (err) {
    log.error({ err, writes: writes.length }, 'commit failed')
    for (const w of writes) {
      // A version that never became stored is superseded by nothing.
      if (w.rv) { finishRv(w.rv); supersededPending.delete(w.rv) }
      reply(w.peer, { id: w.req.id, ok: false, reason: 'internal', message: err instanceof Error ? err.message : String(err) })
    }
    return
  }
  // Acknowledged only now: the commit is durable. Namespace, PriorityClass, admission policy and LimitRange writes,
  // and ResourceQuota creations and deletions, move their shared counts first (see messages.ts).
  if (namespaceSlot >= 0) {
    let ns = false
    let pc = false
    let ap = false
    let lr = false
    let rq = false
    let sa = false
    let crd = false
    let wh = false
    for (const w of writes) {
      if (w.event === null) continue
      const prefix = typePrefixOf(w.req.key)
      if (prefix === NAMESPACES_PREFIX) ns = true
      else if (prefix === PRIORITY_CLASSES_PREFIX) pc = true
      else if (prefix === ADMISSION_POLICIES_PREFIX || prefix === ADMISSION_POLICY_BINDINGS_PREFIX) ap = true
      else if (prefix === LIMIT_RANGES_PREFIX) lr = true
      else if (prefix === RESOURCE_QUOTAS_PREFIX && w.event[0] !== 'MODIFIED') rq = true
      else if (prefix === SERVICE_ACCOUNTS_PREFIX) sa = true
      else if (prefix === CRDS_PREFIX) crd = true
      else if (prefix === MUTATING_WEBHOOKS_PREFIX || prefix === VALIDATING_WEBHOOKS_PREFIX) wh = true
    }
    if (ns) Atomics.add(counters, namespaceSlot, 1n)
    if (pc) Atomics.add(counters, priorityClassSlot, 1n)
    if (ap) Atomics.add(counters, admissionPolicySlot, 1n)
    if (lr) Atomics.add(counters, limitRangeSlot, 1n)
    if (rq) Atomics.add(counters, quotaSetSlot, 1n)
    if (sa) Atomics.add(counters, serviceAccountSlot, 1n)
    if (crd) Atomics.add(counters, crdSlot, 1n)
    if (wh) Atomics.add(counters, webhookConfigSlot, 1n)
  }
  for (const w of writes) {
    if (w.failure) { reply(w.peer, w.failure); continue }
    if (w.event) { publish(w.event); bumpAuthzVersion(w.event) }
    finishRv(w.rv)
    reply(w.peer, { id: w.req.id, ok: true, rv: w.rv })
  }
}

function handle(peer: Peer, req: ShardRequest): void {
  switch (req.op) {
    case 'objectPut':
    case 'objectDelete':
      write(peer, req)
      return
    case 'watchSubscribe':
      peer.prefixes.set(req.prefix, req.attrsOnly === true && peer.prefixes.get(req.prefix) !== false)
      ringOf(req.prefix)
      reply(peer, { id: req.id, ok: true, rv: publishedWatermark() })
      return
    case 'watchUnsubscribe':
      peer.prefixes.delete(req.prefix)
      reply(peer, { id: req.id, ok: true, rv: publishedWatermark() })
      return
    case 'watchBacklog': {
      const r = ringOf(req.prefix)
      trimRing(r, Date.now())
      if (req.rv < r.floor) { reply(peer, { id: req.id, ok: false, reason: 'expired', rv: r.floor }); return }
      let first = r.events.length
      // The events after req.rv: a binary search for the first of them (rv order), then the rest in order.
      for (let lo = r.start, hi = r.events.length - 1; lo <= hi;) {
        const mid = (lo + hi) >>> 1
        if (r.events[mid]![2] > req.rv) { first = mid; hi = mid - 1 } else lo = mid + 1
      }
      if (req.maxAgeMs !== undefined && first < r.events.length && Date.now() - r.times[first] > req.maxAgeMs) {
        reply(peer, { id: req.id, ok: false, reason: 'expired', rv: r.floor })
        return
      }
      const events: WatchEvent[] = []
      for (let i = first; i < r.events.length; i++) {
        const ev = r.events[i]!
        if (ev[3] !== null) { events.push(ev as WatchEvent); continue }
        // Still the stored version (a write that replaced it would have completed the event in apply, before this turn).
        const rec = storedOf(ev)
        if (rec === undefined || rec.readDoubleLE(0) !== ev[2]) {
          log.error({ key: ev[1], rv: ev[2], stored: rec?.readDoubleLE(0) }, 'watch ring event without its record')
          reply(peer, { id: req.id, ok: false, reason: 'expired', rv: r.floor })
          return
        }
        events.push([ev[0], ev[1], ev[2], rec, ev[4]])
      }
      reply(peer, { id: req.id, ok: true, rv: publishedWatermark(), events, oldest: r.floor })
      return
    }
  }
}

function init(task: ShardInit): { rv: number } {
  shard = task.shard
  counters = new BigInt64Array(task.counters)
  if (task.shards !== undefined) {
    namespaceSlot = namespaceWritesSlot(task.shards)
    priorityClassSlot = priorityClassWritesSlot(task.shards)
    admissionPolicySlot = admissionPolicyWritesSlot(task.shards)
    limitRangeSlot = limitRangeWritesSlot(task.shards)
    quotaSetSlot = resourceQuotaSetWritesSlot(task.shards)
    serviceAccountSlot = serviceAccountWritesSlot(task.shards)
    crdSlot = crdWritesSlot(task.shards)
    webhookConfigSlot = webhookConfigWritesSlot(task.shards)
  }
  historyMs = task.watchHistoryMs
  historyCount = task.watchHistoryCount
  log = pino({ level: task.logLevel }).child({ actor: 'shard', shard })
  root = open(envOptions(`${task.dataDir}/shard-${shard}`))
  objects = root.openDB<Buffer, string>('objects', objectsDbOptions(task.compress === true))
  meta = root.openDB<number, string>('meta', { encoding: 'msgpack' })
  index = root.openDB<Buffer, string>('index', { encoding: 'binary' })
  buildIndexes(task.indexes ?? {})
  const persisted = meta.get('rv') ?? 0
  // Resume the global counter above everything this shard ever committed.
  for (;;) {
    const cur = Atomics.load(counters, COUNTER_SLOT)
    if (cur >= BigInt(persisted)) break
    if (Atomics.compareExchange(counters, COUNTER_SLOT, cur, BigInt(persisted)) === cur) break
  }
  Atomics.store(counters, watermarkSlot(shard), BigInt(persisted))
  startRv = persisted
  if (task.authz) {
    authzVersions = new BigInt64Array(task.authz.versions)
    for (const p of task.authz.rbacPrefixes) authzSlots.set(p, task.authz.rbacSlot)
    for (const p of task.authz.graphPrefixes) authzSlots.set(p, task.authz.graphSlot)
  }
  const beats = new Float64Array(task.heartbeats)
  beats[task.heartbeatSlot] = Date.now()
  setInterval(() => {
    beats[task.heartbeatSlot] = Date.now()
    advanceWatermark()
    const now = Date.now()
    for (const r of rings.values()) trimRing(r, now)
  }, 50).unref()
  return { rv: persisted }
}

function attach(task: ShardAttach): void {
  const peer = new PortPeer<ShardRequest, ShardReply, WatchEvent>(task.port, task.name, (p, r) => handle(p as Peer, r), (err, r) => {
    log.error({ err, op: r?.op }, 'request failed')
    return r ? { id: r.id, ok: false, reason: 'internal', message: err instanceof Error ? err.message : String(err) } : undefined
  }) as Peer
  peer.prefixes = new Map()
  peers.push(peer)
  task.port.on('close', () => {
    const i = peers.indexOf(peer)
    if (i >= 0) peers.splice(i, 1)
  })
}

export default function run(task: ShardTask): unknown {
  switch (task.op) {
    case 'init': return init(task)
    case 'attach': attach(task); return { ok: true }
    case 'ping': return { ok: true, shard }
  }
}
