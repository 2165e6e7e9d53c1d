// Long-lived watch streams (one connection each) that hand every event line to a callback with its receive time,
// and a tracker of write-acknowledge times that turns receipts into delivery latencies.
import { RawConnection, LineSplitter, buildRequest, parseTarget, type Target } from './http.js'
import { newHistogram, recordNs } from './hist.js'

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

  constructor(url: string, readonly path: string, private readonly onEvent: (type: string, line: string, t: number) => void) {
    this.target = parseTarget(url)
    this.conn = new RawConnection(this.target)
  }

  start(): void {
    const lines = new LineSplitter((line) => {
      const t = performance.now()
      this.lines++
      const at = line.indexOf('"type":"')
      const type = at >= 0 ? line.slice(at + 8, line.indexOf('"', at + 8)) : '?'
      this.onEvent(type, line, t)
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

/**
 * Delivery latency = event receive time minus write acknowledge time. An event that arrives before its write is
 * acknowledged counts as 0 (and is counted as early); end-to-end latency (from sending the write) is kept too.
 */
export class DeliveryTracker {
  readonly lag = newHistogram()
  readonly endToEnd = newHistogram()
  private readonly sent = new Map<string, number>()
  private readonly acked = new Map<string, number>()
  private readonly early = new Map<string, number[]>()
  received = 0
  earlyCount = 0
  unknown = 0
  readonly timeline: number[] = []
  private t0 = performance.now()

  get startedAt(): number { return this.t0 }

  begin(): void {
    this.t0 = performance.now()
  }

  send(key: string): void {
    this.sent.set(key, performance.now())
  }

  ack(key: string): void {
    const t = performance.now()
    this.acked.set(key, t)
    const waiting = this.early.get(key)
    if (waiting) {
      for (const _ of waiting) recordNs(this.lag, 0)
      this.early.delete(key)
    }
  }

  /** A write that failed: its events (if any) are not expected. */
  forget(key: string): void {
    this.sent.delete(key)
  }

  receive(key: string, t: number): void {
    const s = this.sent.get(key)
    if (s === undefined) { this.unknown++; return }
    this.received++
    const sec = Math.floor((t - this.t0) / 1000)
    if (sec >= 0) this.timeline[sec] = (this.timeline[sec] ?? 0) + 1
    recordNs(this.endToEnd, (t - s) * 1e6)
    const a = this.acked.get(key)
    if (a !== undefined) {
      recordNs(this.lag, (t - a) * 1e6)
    } else {
      this.earlyCount++
      const w = this.early.get(key)
      if (w) w.push(t)
      else this.early.set(key, [t])
    }
  }

  filledTimeline(): number[] {
    const out = this.timeline.slice()
    for (let i = 0; i < out.length; i++) out[i] ??= 0
    return out
  }
}
