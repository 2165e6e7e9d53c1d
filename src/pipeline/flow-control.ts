// The flow-control stage: API Priority and Fairness (classify against the actor's replica, take a free seat through the shared counters without a hop, else queue at the flow-control actor) or the max-in-flight limits; 429 plain text with Retry-After.
import type { MessagePort } from 'node:worker_threads'
import { tooManyRequestsPlain } from '../machinery/errors.js'
import { queryFlag } from '../server/request-info.js'
import { IdentityCache } from '../machinery/identity-cache.js'
import { typePrefix } from '../machinery/storage-format.js'
import type { Obj } from '../registry/define.js'
import { mandatoryFlowSchemas } from '../registry/resources/flowcontrol.apiserver.orch.io/bootstrap.js'
import {
  L_IN_USE, L_LIMIT, L_WAITING, LEVEL_CATCH_ALL, LEVEL_EXEMPT, MUTATING_SLOT, READONLY_SLOT, UNLIMITED, levelSlot,
  type ConfigReplica, type InflightEntry, type LocalCounts, watchKey,
} from '../../actors/flow-control/messages.js'
import { FlowClient, RetryAfterTracker, compileFlowSchema, estimateWidth, flowDistinguisher } from '../../actors/flow-control/client.js'
import type { RequestContext, ResponseHeader } from './context.js'
import type { Store } from './store.js'

export interface FlowConfig {
  seats: SharedArrayBuffer
  rejected: SharedArrayBuffer
  maxReadonly: number
  maxMutating: number
  /** --enable-priority-and-fairness; APF needs `port` too (a thread without one is not flow-controlled). */
  apf?: boolean
  port?: MessagePort
  /** For the width of lists and watches (object counts). */
  store?: Store
  /** This thread's watches by watchKey (the width of writes counts the watchers of the whole server). */
  watchCounts?: () => Map<string, number>
}

export const FLOW_SCHEMA_UID_HEADER = 'X-Orch-PF-FlowSchema-UID'
export const PRIORITY_LEVEL_UID_HEADER = 'X-Orch-PF-PriorityLevel-UID'

let mode: 'max-in-flight' | 'apf' | 'off' = 'max-in-flight'
let seats: Int32Array
let rejected: Int32Array
let limits: number[] = [0, 0]
let client: FlowClient | null = null
let store: Store | undefined
let localWatches: (() => Map<string, number>) | undefined
/** Watches of every front-end by watchKey, as the actor last pushed them. */
let watchers = new Map<string, number>()
let lastWatchReport = ''

export function configureFlowControl(c: FlowConfig): void {
  seats = new Int32Array(c.seats)
  rejected = new Int32Array(c.rejected)
  limits = [c.maxReadonly, c.maxMutating]
  store = c.store
  localWatches = c.watchCounts
  client?.close()
  client = null
  if (c.apf) {
    if (c.port === undefined) { mode = 'off'; return }
    mode = 'apf'
    client = new FlowClient(c.port)
    client.onConfig(applyReplica)
    client.onCollect(collectInflight)
    client.onWatchCounts((counts) => { watchers = new Map(counts) })
    applyReplica(BUILT_IN)
    setInterval(reportCounts, REPORT_MS).unref()
  } else {
    mode = 'max-in-flight'
  }
}

/** The flow-control client of this thread (metrics, sync), or null outside APF mode. */
export function flowClient(): FlowClient | null { return client }

/** Requests holding a max-in-flight seat now, server-wide (null in the other modes). */
export function maxInFlightCounts(): { readOnly: number; mutating: number } | null {
  if (mode !== 'max-in-flight') return null
  return { readOnly: Atomics.load(seats, READONLY_SLOT), mutating: Atomics.load(seats, MUTATING_SLOT) }
}

const MUTATING = new Set(['create', 'update', 'patch', 'delete', 'deletecollection'])
/** Long-running requests hold no seat (upstream exempts them from max-in-flight). */
const LONG_RUNNING = new Set(['watch', 'proxy'])
/** Long-running requests that bypass APF completely (upstream's long-running check, watches aside). */
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward'])

export function flowControl(ctx: RequestContext): void | Promise<void> {
  if (mode === 'apf') return priorityAndFairness(ctx)
  if (mode === 'max-in-flight') maxInFlight(ctx)
}

function maxInFlight(ctx: RequestContext): void {
  const verb = ctx.info.verb
  if (LONG_RUNNING.has(verb)) return
  if (ctx.user?.groups.includes('system:masters')) return
  const slot = ctx.info.isResourceRequest && MUTATING.has(verb) ? MUTATING_SLOT : READONLY_SLOT
  const limit = limits[slot]
  if (limit === 0) return
  const now = Atomics.add(seats, slot, 1) + 1
  if (now > limit) {
    Atomics.sub(seats, slot, 1)
    Atomics.add(rejected, 0, 1)
    throw tooManyRequestsPlain(1)
  }
  ctx.seat = slot
}

export function releaseSeat(ctx: RequestContext): void {
  if (ctx.seat < 0) return
  if (mode !== 'apf') {
    Atomics.sub(seats, ctx.seat, 1)
    ctx.seat = -1
    return
  }
  inflight.delete(ctx)
  const held = Math.max(ctx.seatCount, ctx.finalSeats)
  // A watch holds its seats while it sends its initial events: the front-end calls the stream right after the
  // pipeline returns, within this turn, so the seats go back on the next one.
  if (ctx.info.verb === 'watch') {
    const level = ctx.seat
    const ticket = ctx.flowTicket
    ctx.seat = -1
    setImmediate(giveBack, level, held, ticket, 0)
    return
  }
  giveBack(ctx.seat, held, ctx.flowTicket, ctx.additionalLatencyMs)
  ctx.seat = -1
}

/**
 * The request is done. Seats a queue set dispatched (a ticket) go back through the actor, which gives them back in
 * the shared counter itself (at once, or after a write's additional latency: upstream keeps them that long after the
 * answer), so none is seen free before the actor knows whose it was. Fast-path seats go back here, now or after
 * that latency.
 */
function giveBack(level: number, n: number, ticket: number, latencyMs: number): void {
  if (ticket !== 0) {
    client?.finish(ticket)
    return
  }
  if (latencyMs > 0) {
    setTimeout(releaseSeats, latencyMs, level, n)
    return
  }
  releaseSeats(level, n)
}

/** Fast-path seats back to the level; the actor is kicked when the level has waiters. */
function releaseSeats(level: number, n: number): void {
  if (n > 0) Atomics.sub(seats, levelSlot(level, L_IN_USE), n)
  if (n > 0 && Atomics.load(seats, levelSlot(level, L_WAITING)) > 0) client?.kick(level)
}

// ---------------------------------------------------------------- requests in flight (debug dumps)

/**
 * Requests under APF, linked through their contexts: adding and removing touch two neighbours, no hashing (a Map
 * keyed by the context costs an identity hash and a table entry per request).
 */
class InflightList {
  first: RequestContext | undefined = undefined

  add(ctx: RequestContext, s: SchemaRef): void {
    if (ctx.apfSchema !== undefined) return
    ctx.apfSchema = s
    ctx.apfPrev = undefined
    ctx.apfNext = this.first
    if (this.first !== undefined) this.first.apfPrev = ctx
    this.first = ctx
  }

  delete(ctx: RequestContext): void {
    if (ctx.apfSchema === undefined) return
    ctx.apfSchema = undefined
    if (ctx.apfPrev !== undefined) ctx.apfPrev.apfNext = ctx.apfNext
    else this.first = ctx.apfNext
    if (ctx.apfNext !== undefined) ctx.apfNext.apfPrev = ctx.apfPrev
    ctx.apfPrev = undefined
    ctx.apfNext = undefined
  }
}

/** This thread's flow-controlled requests that hold seats or wait for them, with their FlowSchema. */
const inflight = new InflightList()

/** Answers the actor's collect: every request of this thread under APF (the dump_* debug endpoints). */
function collectInflight(details: boolean): InflightEntry[] {
  const out: InflightEntry[] = []
  const origin = performance.timeOrigin
  for (let ctx = inflight.first; ctx !== undefined; ctx = ctx.apfNext) {
    const s = ctx.apfSchema as SchemaRef
    const level = s.level
    const arrive = origin + ctx.start + (ctx.timings.authenticate ?? 0)
    const e: InflightEntry = {
      ticket: ctx.flowTicket, level: level.index, fs: s.name,
      fd: level.queues > 1 ? flowDistinguisher(s.obj, { info: ctx.info, user: ctx.user ?? ANONYMOUS }) : '',
      arrive, start: ctx.seatedAt > 0 ? origin + ctx.seatedAt : ctx.seat >= 0 ? arrive : 0,
      seats: ctx.seatCount, finalSeats: ctx.finalSeats, latencyMs: ctx.additionalLatencyMs,
    }
    if (details) {
      const i = ctx.info
      e.details = [ctx.user?.username ?? '', i.verb, i.path, i.namespace, i.name, i.group ? `${i.group}/${i.version}` : i.version, i.resource, i.subresource]
    }
    out.push(e)
  }
  return out
}

// ---------------------------------------------------------------- the replica

interface LevelRef {
  name: string
  index: number
  kind: 'Exempt' | 'Reject' | 'Queue'
  /** A flow distinguisher only matters with more than one queue. */
  queues: number
  maxSeats: number
  header: [string, string]
  inUse: number
  limit: number
  waiting: number
  retry: RetryAfterTracker
}

interface SchemaRef {
  obj: Obj
  matches: ReturnType<typeof compileFlowSchema>
  name: string
  level: LevelRef
  /** Both UID headers as one prepared header (see uidHeaders), or the FlowSchema's alone with `levelHeader`. */
  header: ResponseHeader
  levelHeader: ResponseHeader | undefined
  counts: LocalCounts
}

const FLOW_SCHEMA_UID_BYTES = Buffer.from(FLOW_SCHEMA_UID_HEADER)
const PLAIN_UID = /^[A-Za-z0-9-]*$/

/**
 * The two UID headers of a FlowSchema and its level, made once per replica: the bytes of one header whose value
 * carries the line break and the second header, so a response writes them in one call (uWS writes name, ": ", value,
 * CRLF; a header write is a native call, and the two were ~4 % of a GET's front-end time in a profile). The bytes on
 * the wire are those of two headers. UIDs that are not plain (the server makes them; they always are) go as two.
 */
function uidHeaders(fsUid: string, level: LevelRef): [ResponseHeader, ResponseHeader | undefined] {
  const plUid = level.header[1]
  if (PLAIN_UID.test(fsUid) && PLAIN_UID.test(plUid)) return [[FLOW_SCHEMA_UID_BYTES, Buffer.from(`${fsUid}\r\n${PRIORITY_LEVEL_UID_HEADER}: ${plUid}`)], undefined]
  return [[FLOW_SCHEMA_UID_HEADER, fsUid], level.header]
}

const BUILT_IN: ConfigReplica = {
  generation: 0,
  unlimited: false,
  flowSchemas: JSON.stringify(mandatoryFlowSchemas),
  levels: [
    { name: 'exempt', uid: '', index: LEVEL_EXEMPT, kind: 'Exempt', queues: 0, maxSeats: 0 },
    { name: 'catch-all', uid: '', index: LEVEL_CATCH_ALL, kind: 'Reject', queues: 0, maxSeats: 0 },
  ],
}

let schemas: SchemaRef[] = []
let catchAll: SchemaRef
let unlimited = false
let generation = -1
const retryTrackers = new Map<string, RetryAfterTracker>()
/** Counts of this front-end's own decisions since the last report. */
let counted: LocalCounts[] = []
const REPORT_MS = 1000

function applyReplica(r: ConfigReplica): void {
  if (r.generation !== 0 && r.generation <= generation) return
  generation = r.generation
  unlimited = r.unlimited
  const levels = new Map<string, LevelRef>()
  for (const l of r.levels) {
    let retry = retryTrackers.get(l.name)
    if (retry === undefined) { retry = new RetryAfterTracker(); retryTrackers.set(l.name, retry) }
    levels.set(l.name, {
      name: l.name, index: l.index, kind: l.kind, queues: l.queues, maxSeats: l.maxSeats,
      header: [PRIORITY_LEVEL_UID_HEADER, l.uid], inUse: levelSlot(l.index, L_IN_USE), limit: levelSlot(l.index, L_LIMIT),
      waiting: levelSlot(l.index, L_WAITING), retry,
    })
  }
  const next: SchemaRef[] = []
  for (const fs of JSON.parse(r.flowSchemas) as Obj[]) {
    const level = levels.get(fs.spec?.priorityLevelConfiguration?.name ?? '')
    if (level === undefined) continue
    const name = String(fs.metadata?.name ?? '')
    const [header, levelHeader] = uidHeaders(String(fs.metadata?.uid ?? ''), level)
    next.push({ obj: fs, matches: compileFlowSchema(fs), name, level, header, levelHeader, counts: { level: level.name, fs: name, dispatched: 0, rejected: 0 } })
  }
  // Counts made under the previous replica still go out with the next report.
  for (const old of schemas) if (old.counts.dispatched > 0 || old.counts.rejected > 0) counted.push(old.counts)
  schemas = next
  catchAll = next.find((s) => s.name === 'catch-all') ?? next[next.length - 1]
  classified.clear()
  lastOf = new WeakMap()
}

function reportCounts(): void {
  const out: LocalCounts[] = []
  for (const s of schemas) {
    const c = s.counts
    if (c.dispatched > 0 || c.rejected > 0) { out.push({ ...c }); c.dispatched = 0; c.rejected = 0 }
  }
  for (const c of counted) out.push(c)
  counted = []
  let watches: Array<[string, number]> | undefined
  if (localWatches !== undefined) {
    const list = [...localWatches()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    const key = JSON.stringify(list)
    if (key !== lastWatchReport) { lastWatchReport = key; watches = list }
  }
  client?.report(out, watches)
}

/** Classification results of this replica by identity and every request attribute a FlowSchema rule can look at. */
const classified = new IdentityCache<SchemaRef>(65536)

/**
 * The last classification of each identity (its groups array, as in the cache above) with the attributes it was made
 * for: a client repeating the same kind of request is answered by comparing those, without building the cache's key.
 */
interface LastClassification {
  username: string
  resource: boolean
  verb: string
  group: string
  resourceName: string
  subresource: string
  namespace: string
  path: string
  schema: SchemaRef
}
let lastOf = new WeakMap<readonly string[], LastClassification>()

function classify(ctx: RequestContext): SchemaRef {
  const user = ctx.user ?? ANONYMOUS
  const i = ctx.info
  const last = lastOf.get(user.groups)
  if (last !== undefined && last.username === user.username && last.verb === i.verb && last.resource === i.isResourceRequest &&
    (i.isResourceRequest
      ? last.resourceName === i.resource && last.group === i.group && last.namespace === i.namespace && last.subresource === i.subresource
      : last.path === i.path)) {
    return last.schema
  }
  const s = classifyByKey(user, i)
  if (last === undefined) {
    lastOf.set(user.groups, {
      username: user.username, resource: i.isResourceRequest, verb: i.verb, group: i.group, resourceName: i.resource,
      subresource: i.subresource, namespace: i.namespace, path: i.path, schema: s,
    })
  } else {
    last.username = user.username
    last.resource = i.isResourceRequest
    last.verb = i.verb
    last.group = i.group
    last.resourceName = i.resource
    last.subresource = i.subresource
    last.namespace = i.namespace
    last.path = i.path
    last.schema = s
  }
  return s
}

function classifyByKey(user: { username: string; groups: string[] }, i: RequestContext['info']): SchemaRef {
  const key = i.isResourceRequest
    ? `${user.username}\u0000${i.verb}\u0000${i.group}\u0000${i.resource}\u0000${i.subresource}\u0000${i.namespace}`
    : `${user.username}\u0000${i.verb}\u0001${i.path}`
  const byKey = classified.entries(user.groups)
  let s = byKey.get(key)
  if (s !== undefined) return s
  s = catchAll
  const digest = { info: i, user }
  for (const c of schemas) if (c.matches(digest)) { s = c; break }
  classified.set(byKey, key, s)
  return s
}

const ANONYMOUS = { username: 'system:anonymous', groups: ['system:unauthenticated'] }

// ---------------------------------------------------------------- width

const COUNT_TTL_MS = 10_000
const objectCounts = new Map<string, { n: number; at: number }>()

/** Stored objects under a type (or one namespace of it), refreshed at most every 10 s. */
function objectCount(group: string, resource: string, namespace: string): number | undefined {
  if (store === undefined) return undefined
  const prefix = namespace !== '' ? typePrefix(group, resource, namespace) : typePrefix(group, resource)
  const now = performance.now()
  const c = objectCounts.get(prefix)
  if (c !== undefined && now - c.at < COUNT_TTL_MS) return c.n
  let n: number
  try { n = store.count(store.shardFor(group, resource), prefix) } catch { return undefined }
  objectCounts.set(prefix, { n, at: now })
  return n
}

const SINGLE_NAME = /(?:^|,)\s*metadata\.name\s*==?\s*[^,]+/
const MUTATING_WIDTH = new Set(['create', 'update', 'patch', 'delete'])

/** Watches that may want the events of a write (upstream's interested-watch count): by type, namespace, name. */
function interestedWatchers(group: string, resource: string, namespace: string, name: string): number {
  if (watchers.size === 0) return 0
  let n = watchers.get(watchKey(group, resource, '', '')) ?? 0
  if (namespace !== '') n += watchers.get(watchKey(group, resource, namespace, '')) ?? 0
  if (name !== '') n += watchers.get(watchKey(group, resource, namespace, name)) ?? 0
  return n
}

/**
 * Initial seats of a request: lists (and watches that send initial events) by object count, everything else 1.
 * Writes whose events reach 10 or more watchers also get final seats and their latency (ctx.finalSeats, ctx.additionalLatencyMs).
 */
function widthOf(ctx: RequestContext, level: LevelRef): number {
  const i = ctx.info
  if (i.isResourceRequest && MUTATING_WIDTH.has(i.verb)) {
    const w = interestedWatchers(i.group, i.resource, i.namespace, i.name)
    if (w < 10) return 1
    const e = estimateWidth({
      verb: i.verb, watchers: w, exemptFromWatchEvents: i.resource === 'serviceaccounts' && i.subresource === 'token',
      maxSeats: level.maxSeats > 0 ? level.maxSeats : undefined,
    })
    let final = e.finalSeats
    let latency = e.additionalLatencyMs
    // Wider than the level's limit: narrower and longer, the same work (as upstream does at dispatch).
    const limit = Atomics.load(seats, level.limit)
    if (limit !== UNLIMITED && limit > 0 && final > limit) {
      latency = (final * latency) / limit
      final = limit
    }
    ctx.finalSeats = final
    ctx.additionalLatencyMs = latency
    return e.initialSeats
  }
  if (!i.isResourceRequest || (i.verb !== 'list' && i.verb !== 'watch')) return 1
  const q = ctx.query
  const fieldSelector = q.get('fieldSelector') ?? ''
  const sendInitial = q.get('sendInitialEvents')
  const rv = q.get('resourceVersion') ?? ''
  const initialEvents = sendInitial !== null ? queryFlag(sendInitial) : rv === '' || rv === '0'
  if (i.verb === 'watch' && !initialEvents) return 1
  if (i.name !== '' || SINGLE_NAME.test(fieldSelector)) return 1
  const limit = Number(q.get('limit') ?? 0) || 0
  return estimateWidth({
    verb: i.verb, objectCount: objectCount(i.group, i.resource, i.namespace), limit, fromCache: !(limit > 0),
    hasSelector: fieldSelector !== '' || (q.get('labelSelector') ?? '') !== '', initialEvents,
    maxSeats: level.maxSeats > 0 ? level.maxSeats : undefined,
  }).initialSeats
}

// ---------------------------------------------------------------- the stage

function bypasses(ctx: RequestContext): boolean {
  const i = ctx.info
  if (i.isResourceRequest) return i.verb === 'proxy' || LONG_RUNNING_SUBRESOURCES.has(i.subresource)
  return i.path.startsWith('/debug/pprof')
}

/** Takes n seats if they fit under the level's current limit (a wider request only when the level is idle). */
function tryTake(level: LevelRef, n: number): boolean {
  for (;;) {
    const limit = Atomics.load(seats, level.limit)
    const cur = Atomics.load(seats, level.inUse)
    if (limit !== UNLIMITED && (n > limit ? cur !== 0 : cur + n > limit)) return false
    if (Atomics.compareExchange(seats, level.inUse, cur, cur + n) === cur) return true
  }
}

function priorityAndFairness(ctx: RequestContext): void | Promise<void> {
  if (bypasses(ctx)) return
  const s = classify(ctx)
  const level = s.level
  ctx.responseHeaders.push(s.header)
  if (s.levelHeader !== undefined) ctx.responseHeaders.push(s.levelHeader)
  if (unlimited) return
  if (level.kind === 'Exempt') {
    // Exempt requests never wait; their seats are only counted (they feed the borrowing of the other levels).
    Atomics.add(seats, level.inUse, 1)
    ctx.seat = level.index
    ctx.seatCount = 1
    s.counts.dispatched++
    inflight.add(ctx, s)
    return
  }
  const n = widthOf(ctx, level)
  if (Atomics.load(seats, level.waiting) === 0 && tryTake(level, ctx.finalSeats > n ? ctx.finalSeats : n)) {
    ctx.seat = level.index
    ctx.seatCount = n
    s.counts.dispatched++
    inflight.add(ctx, s)
    return
  }
  if (level.kind === 'Reject' || client === null) {
    s.counts.rejected++
    throw tooManyRequestsPlain(level.retry.recordDrop())
  }
  // A client already gone is not queued (nobody would read the answer).
  if (ctx.aborted) throw tooManyRequestsPlain(1)
  const fd = level.queues > 1 ? flowDistinguisher(s.obj, { info: ctx.info, user: ctx.user ?? ANONYMOUS }) : ''
  const c = client
  const { id, decision } = c.enqueue(level.index, s.name, fd, n, ctx.finalSeats, ctx.additionalLatencyMs)
  // The client goes away while the request waits: the actor withdraws it from its queue (it never executes).
  ctx.onAbort = () => c.cancel(id)
  ctx.flowTicket = id
  ctx.seatCount = n
  inflight.add(ctx, s)
  return decision.then((d) => {
    ctx.onAbort = undefined
    if (d.d !== 'dispatched') {
      inflight.delete(ctx)
      ctx.flowTicket = 0
      throw tooManyRequestsPlain(d.retryAfter ?? 1)
    }
    ctx.seat = level.index
    ctx.seatedAt = performance.now()
    if (d.own === true) ctx.flowTicket = 0
    // Part of the stage's time (a dotted key: a part, not a stage): the wait in the actor's queue; the rest is the trip.
    if (d.queuedMs !== undefined) ctx.timings['flowControl.queue'] = d.queuedMs
    if (d.finalSeats !== undefined) {
      ctx.finalSeats = d.finalSeats
      ctx.additionalLatencyMs = d.latencyMs ?? 0
    }
    // The client went away as the decision crossed the cancel: give the seats back at once (the pipeline's finally does).
    if (ctx.aborted) throw tooManyRequestsPlain(1)
  })
}
