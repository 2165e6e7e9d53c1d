// Long-lived watch streams (one connection each) that hand every event line to a callback with its receive time,
// and a tracker of write-acknowledge times that turns receipts into delivery latencies.
import { RawConnection, LineSplitter, buildRequest, parseTarget, type Target } from './http.js'
import { newHistogram, recordNs } from './hist.js'

const TYPE_KEY = Buffer.from('"type":"')
/** Event types by their first letter after `"type":"` (no decoding per event). */
const TYPES: Record<number, string> = { 65: 'ADDED', 77: 'MODIFIED', 68: 'DELETED', 66: 'BOOKMARK', 69: 'ERROR' }

/** The type of a watch event line (`?` when it has none). */
export function eventType(line: Buffer): string {
  const at = line.indexOf(TYPE_KEY)
  return at >= 0 ? TYPES[line[at + TYPE_KEY.length]] ?? '?' : '?'
}

/** Where the value of the first `"key":"..."` of a JSON line starts and ends (no escapes expected), or null. */
export function stringAt(line: Buffer, key: Buffer): [number, number] | null {
  const at = line.indexOf(key)
  if (at < 0) return null
  const start = at + key.length
  const end = line.indexOf(34, start)
  return end < 0 ? null : [start, end]
}

/** The decimal number a line holds at [start, end) (the digits of a bench object's name), or -1. */
export function digitsAt(line: Buffer, start: number, end: number): number {
  if (end <= start) return -1
  let n = 0
  for (let i = start; i < end; i++) {
    const c = line[i] - 48
    if (c < 0 || c > 9) return -1
    n = n * 10 + c
  }
  return n
}

export class Watcher {
  readonly conn: RawConnection
  private readonly target: Target
  /** the stream ended (or failed) before close() was called */
  ended = false
  status = 0
  /** body pieces (socket reads, roughly) and event lines received */
  reads = 0
  lines = 0
  private closing = false

  /** `onEvent` gets each event line undecoded (a view valid during the call) with its receive time. */
  constructor(url: string, readonly path: string, private readonly onEvent: (type: string, line: Buffer, t: number) => void) {
    this.target = parseTarget(url)
    this.conn = new RawConnection(this.target)
  }

  start(): void {
    const lines = new LineSplitter((line) => {
      const t = performance.now()
      this.lines++
      this.onEvent(eventType(line), line, t)
    })
    this.conn.send(buildRequest(this.target, 'GET', this.path), (piece) => { this.reads++; lines.push(piece) }).then(
      (r) => { this.status = r.status; if (!this.closing) this.ended = true },
      () => { if (!this.closing) this.ended = true },
    )
  }

  close(): void {
    this.closing = true
    this.conn.close()
  }
}

/** Per-id values in a typed array that grows as ids do (NaN: none). */
class Times {
  private a = new Float64Array(1024).fill(NaN)
  get(id: number): number { return id >= 0 && id < this.a.length ? this.a[id] : NaN }
  set(id: number, v: number): void {
    if (id >= this.a.length) {
      const b = new Float64Array(Math.max(id + 1, this.a.length * 2)).fill(NaN)
      b.set(this.a)
      this.a = b
    }
    this.a[id] = v
  }
}

/** Which ids a watcher has seen, as a bitmap that grows as ids do. */
export class SeenSet {
  private bits = new Uint32Array(4)
  /** Marks `id` seen; false when it was seen already (a duplicate). */
  add(id: number): boolean {
    const w = id >>> 5
    if (w >= this.bits.length) {
      const b = new Uint32Array(Math.max(w + 1, this.bits.length * 2))
      b.set(this.bits)
      this.bits = b
    }
    const m = 1 << (id & 31)
    if ((this.bits[w] & m) !== 0) return false
    this.bits[w] |= m
    return true
  }
}

/**
 * Delivery latency = event receive time minus write acknowledge time. An event that arrives before its write is
 * acknowledged counts as 0 (and is counted as early); end-to-end latency (from sending the write) is kept too.
 */
export class DeliveryTracker {
  readonly lag = newHistogram()
  readonly endToEnd = newHistogram()
  /** per write id (the bench's sequence number): when it was sent and acknowledged */
  private readonly sent = new Times()
  private readonly acked = new Times()
  private readonly early = new Map<number, number[]>()
  received = 0
  earlyCount = 0
  unknown = 0
  readonly timeline: number[] = []
  private t0 = performance.now()

  get startedAt(): number { return this.t0 }

  begin(): void {
    this.t0 = performance.now()
  }

  send(id: number): void {
    this.sent.set(id, performance.now())
  }

  ack(id: number): void {
    const t = performance.now()
    this.acked.set(id, t)
    const waiting = this.early.get(id)
    if (waiting) {
      for (const _ of waiting) recordNs(this.lag, 0)
      this.early.delete(id)
    }
  }

  /** A write that failed: its events (if any) are not expected. */
  forget(id: number): void {
    this.sent.set(id, NaN)
  }

  receive(id: number, t: number): void {
    const s = this.sent.get(id)
    if (Number.isNaN(s)) { this.unknown++; return }
    this.received++
    const sec = Math.floor((t - this.t0) / 1000)
    if (sec >= 0) this.timeline[sec] = (this.timeline[sec] ?? 0) + 1
    recordNs(this.endToEnd, (t - s) * 1e6)
    const a = this.acked.get(id)
    if (!Number.isNaN(a)) {
      recordNs(this.lag, (t - a) * 1e6)
    } else {
      this.earlyCount++
      const w = this.early.get(id)
      if (w) w.push(t)
      else this.early.set(id, [t])
    }
  }

  filledTimeline(): number[] {
    const out = this.timeline.slice()
    for (let i = 0; i < out.length; i++) out[i] ??= 0
    return out
  }
}
