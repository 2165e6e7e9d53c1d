// The width of a request in seats (upstream request.WorkEstimator) and a Queue level's max seats per request: what a
// front-end computes before it asks for seats, and the config computes per level.

export interface WorkEstimate {
  /** Seats held while the request executes. */
  initialSeats: number
  /** Seats held after the response, for additionalLatencyMs (watch-event fan-out of a write). */
  finalSeats: number
  additionalLatencyMs: number
}

export interface WidthInput {
  /** RequestInfo verb (lower-case HTTP method for non-resource requests). */
  verb: string
  /** Stored object count N of the listed resource; undefined = unknown resource (1 seat). */
  objectCount?: number
  /** The count is stale: assume the worst (the cap). */
  stale?: boolean
  /** ?limit= of a list (0 / undefined = none). */
  limit?: number
  /** A list/watch of one object (fieldSelector=metadata.name=X): 1 seat. */
  singleObject?: boolean
  /** The list is served from memory (watch cache); default true. */
  fromCache?: boolean
  /** A label or field selector is present. */
  hasSelector?: boolean
  /** For watch: the watch sends initial events (sendInitialEvents=true, or the legacy unset/"0" RV with WatchList on). */
  initialEvents?: boolean
  /** 'count' (one seat per 100 objects, cap 10) or 'size' (one seat per 100 kB, cap 100). Default 'count'. */
  mode?: 'count' | 'size'
  /** Size mode: average object size in bytes; unknown with N > 0 means 1.5 MB per object. */
  averageObjectSize?: number
  /** Mutating requests: watchers interested in the object. */
  watchers?: number
  /** TokenRequest (serviceaccounts/token create) gets no final seats. */
  exemptFromWatchEvents?: boolean
  /** The priority level's max seats per request (0 / undefined = only the global cap). */
  maxSeats?: number
}

const OBJECTS_PER_SEAT = 100
const BYTES_PER_SEAT = 100_000
const CACHE_BYTES_CAP = 1_000_000
const UNKNOWN_OBJECT_SIZE = 1_500_000
const MAX_LIST_SEATS_COUNT = 10
const MAX_LIST_SEATS_SIZE = 100
const MAX_MUTATING_SEATS = 10
const WATCHES_PER_SEAT = 10
const EVENT_ADDITIONAL_MS = 5
const MUTATING_VERBS = new Set(['create', 'update', 'patch', 'delete'])

function capOf(perLevel: number | undefined, global: number): number {
  return !perLevel || perLevel > global ? global : perLevel
}

/**
 * The width of a request (upstream request.WorkEstimator): lists (and watches with initial events) by object count
 * or size, writes by the watchers their events reach, everything else 1 seat.
 */
export function estimateWidth(input: WidthInput): WorkEstimate {
  const one: WorkEstimate = { initialSeats: 1, finalSeats: 0, additionalLatencyMs: 0 }
  const verb = input.verb
  if (verb === 'list' || verb === 'watch') {
    const size = input.mode === 'size'
    const cap = capOf(input.maxSeats, size ? MAX_LIST_SEATS_SIZE : MAX_LIST_SEATS_COUNT)
    if (input.singleObject) return one
    if (verb === 'watch' && !input.initialEvents) return one
    if (input.stale) return { initialSeats: cap, finalSeats: 0, additionalLatencyMs: 0 }
    const n = input.objectCount
    if (n === undefined || n < 0) return one
    const fromCache = verb === 'watch' || input.fromCache !== false
    const limit = input.limit !== undefined && input.limit > 0 && input.limit < n ? input.limit : n
    let seats: number
    if (size) {
      const objects = fromCache || !input.hasSelector ? limit : Math.max(limit, n / 2)
      let bytes = objects * (input.averageObjectSize ?? (n > 0 ? UNKNOWN_OBJECT_SIZE : 0))
      if (fromCache) bytes = Math.min(bytes, CACHE_BYTES_CAP)
      seats = Math.ceil(bytes / BYTES_PER_SEAT)
    } else {
      let objects: number
      if (fromCache) objects = n
      else if (input.hasSelector) objects = n + limit
      else objects = 2 * limit
      seats = Math.ceil(objects / OBJECTS_PER_SEAT)
    }
    return { initialSeats: Math.min(Math.max(seats, 1), cap), finalSeats: 0, additionalLatencyMs: 0 }
  }
  if (MUTATING_VERBS.has(verb)) {
    if (input.exemptFromWatchEvents) return one
    const watchers = input.watchers ?? 0
    if (watchers < WATCHES_PER_SEAT) return one
    const cap = capOf(input.maxSeats, MAX_MUTATING_SEATS)
    const wanted = Math.ceil(watchers / WATCHES_PER_SEAT)
    const finalWorkMs = wanted * EVENT_ADDITIONAL_MS
    const finalSeats = Math.min(wanted, cap)
    return { initialSeats: 1, finalSeats, additionalLatencyMs: finalWorkMs / finalSeats }
  }
  return one
}

/** Upstream's per-level max seats of a Queue level: max(1, min(⌈0.15·NominalCL⌉, ⌊NominalCL/handSize⌋)). */
export function priorityLevelMaxSeats(nominalCL: number, handSize: number): number {
  return Math.max(1, Math.min(Math.ceil(nominalCL * 0.15), Math.floor(nominalCL / handSize)))
}
