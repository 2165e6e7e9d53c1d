import t from 'tap'
import {
  ESTIMATED_SERVICE_MS, QueueSet, type Decision, type FlowRequest, type QueueSetConfig, type RejectReason,
} from '../../../actors/flow-control/fair-queuing.js'
import {
  Histogram, SeatDemandIntegrator, WAIT_DURATION_BUCKETS, formatSeatSeconds, seatsTimesMs, ssToSeatSeconds, type Clock,
} from '../../../actors/flow-control/measures.js'
import { estimateWidth, priorityLevelMaxSeats } from '../../../actors/flow-control/work-estimate.js'
import { flowHash } from '../../../actors/flow-control/dealer.js'

/** Time that moves only when told to; timers fire in order while it moves. */
class ManualClock implements Clock {
  t = 1000
  #id = 0
  readonly timers = new Map<number, { at: number; fn: () => void }>()
  now(): number { return this.t }
  setTimer(fn: () => void, ms: number): unknown { const id = ++this.#id; this.timers.set(id, { at: this.t + ms, fn }); return id }
  clearTimer(h: unknown): void { this.timers.delete(h as number) }
  advance(ms: number): void {
    const end = this.t + ms
    for (;;) {
      let best: [number, { at: number; fn: () => void }] | undefined
      for (const e of this.timers) if (e[1].at <= end && (best === undefined || e[1].at < best[1].at)) best = e
      if (best === undefined) break
      this.timers.delete(best[0])
      this.t = best[1].at
      best[1].fn()
    }
    this.t = end
  }
}

interface Harness {
  clock: ManualClock
  qs: QueueSet
  /** Decisions delivered through callbacks, in order. */
  events: Array<{ id: string; decision: Decision; reason?: RejectReason }>
  submit: (id: string, init: Partial<FlowRequest>) => { req: FlowRequest; answer: string }
}

function harness(cfg: Partial<QueueSetConfig>, requestTimeoutMs?: number): Harness {
  const clock = new ManualClock()
  const qs = new QueueSet({ name: 'pl', kind: 'Queue', concurrencyLimit: 1, queues: 2, handSize: 1, queueLengthLimit: 50, ...cfg }, { clock, requestTimeoutMs })
  const events: Harness['events'] = []
  const submit = (id: string, init: Partial<FlowRequest>) => {
    const req: FlowRequest = { flowSchema: 'fs', hash: 0, ...init }
    const answer = qs.submit(req, (decision, reason) => events.push(reason === undefined ? { id, decision } : { id, decision, reason }))
    return { req, answer }
  }
  return { clock, qs, events, submit }
}

t.test('seat-second arithmetic', async (t) => {
  t.equal(ESTIMATED_SERVICE_MS, 3)
  t.equal(seatsTimesMs(1, 3), 300_000, 'G of one seat is 0.003 seat-seconds at scale 1e8')
  t.equal(ssToSeatSeconds(seatsTimesMs(4, 1000)), 4)
  t.equal(seatsTimesMs(2, 2.5), 500_000)
})

t.test('virtual time R advances at min(seats requested, CL) / active queues', async (t) => {
  const { clock, qs, submit } = harness({ concurrencyLimit: 10 })
  t.equal(qs.metrics().currentR, 0)
  clock.advance(1000)
  t.equal(qs.metrics().currentR, 0, 'no active queue: R stands still')
  const a = submit('a', { hash: 0, width: 4 })
  t.equal(a.answer, 'dispatched')
  clock.advance(1000)
  t.equal(qs.metrics().currentR, 4, 'one queue with 4 seats in use: 4 seat-seconds per second')
  const b = submit('b', { hash: 1, width: 2 })
  t.equal(b.answer, 'dispatched')
  clock.advance(500)
  t.equal(qs.metrics().currentR, 4 + 0.5 * (6 / 2), 'two active queues, 6 seats requested: 3 per second')
  const c = submit('c', { hash: 1, width: 8 })
  t.equal(c.answer, 'queued', '6 + 8 > 10')
  clock.advance(1000)
  t.equal(qs.metrics().currentR, 5.5 + 10 / 2, 'requested 14 is capped by CL 10')
  qs.finish(a.req)
  qs.finish(b.req)
  t.equal(qs.statusOf(c.req)?.state, 'executing')
})

t.test('fair order between an elephant and a mouse flow', async (t) => {
  const { clock, qs } = harness({ concurrencyLimit: 1 })
  const order: string[] = []
  const executing: FlowRequest[] = []
  const add = (name: string, hash: number, i: number): void => {
    const req: FlowRequest = { flowSchema: name, hash }
    const note = (d: Decision): void => { if (d === 'dispatched') { order.push(`${name[0]}${i}`); executing.push(req) } }
    const answer = qs.submit(req, note)
    if (answer === 'dispatched') note('dispatched')
  }
  for (let i = 0; i < 10; i++) add('elephant', 0, i)
  for (let i = 0; i < 3; i++) add('mouse', 1, i)
  while (executing.length > 0) {
    const r = executing.shift() as FlowRequest
    clock.advance(3)
    qs.finish(r)
  }
  t.same(order, ['e0', 'm0', 'e1', 'm1', 'e2', 'm2', 'e3', 'e4', 'e5', 'e6', 'e7', 'e8', 'e9'], 'the mouse is served every other turn despite arriving last')
  const m = qs.metrics()
  t.equal(m.flowSchemas.elephant.dispatched, 10)
  t.equal(m.flowSchemas.mouse.dispatched, 3)
  t.equal(m.requestsExecuting, 0)
  t.equal(m.seatsInUse, 0)
})

t.test('a slow elephant does not starve a later mouse', async (t) => {
  const { clock, qs } = harness({ concurrencyLimit: 2 })
  const order: string[] = []
  const executing: Array<{ req: FlowRequest; until: number }> = []
  const add = (name: string, hash: number, i: number, serviceMs: number): void => {
    const req: FlowRequest = { flowSchema: name, hash }
    const note = (d: Decision): void => { if (d === 'dispatched') { order.push(`${name[0]}${i}`); executing.push({ req, until: clock.now() + serviceMs }) } }
    if (qs.submit(req, note) === 'dispatched') note('dispatched')
  }
  for (let i = 0; i < 20; i++) add('elephant', 0, i, 50)
  clock.advance(10)
  for (let i = 0; i < 4; i++) add('mouse', 1, i, 50)
  while (executing.length > 0) {
    executing.sort((a, b) => a.until - b.until)
    const next = executing.shift() as { req: FlowRequest; until: number }
    if (next.until > clock.now()) clock.advance(next.until - clock.now())
    qs.finish(next.req)
  }
  const firstMice = order.slice(0, 10).filter((x) => x.startsWith('m')).length
  t.equal(firstMice, 4, `all four mouse requests are among the first ten dispatches: ${order.join(' ')}`)
})

t.test('width: a request occupies its seats', async (t) => {
  const { qs, submit, events } = harness({ concurrencyLimit: 4 })
  const a = submit('a', { width: 3 })
  t.equal(a.answer, 'dispatched')
  t.equal(qs.statusOf(a.req)?.seats, 3)
  const b = submit('b', { hash: 1, width: 2 })
  t.equal(b.answer, 'queued', '3 + 2 seats exceed CL 4')
  let m = qs.metrics()
  t.equal(m.seatsInUse, 3)
  t.equal(m.seatsWaiting, 2)
  t.equal(m.flowSchemas.fs.executingSeats, 3)
  t.equal(m.flowSchemas.fs.waitingSeats, 2)
  qs.finish(a.req)
  t.same(events, [{ id: 'b', decision: 'dispatched' }])
  m = qs.metrics()
  t.equal(m.seatsInUse, 2)
  t.equal(m.seatsWaiting, 0)
  qs.finish(b.req)
  t.equal(qs.metrics().seatsInUse, 0)
  t.ok(qs.isIdle())
})

t.test('a request wider than the limit runs only when nothing else executes', async (t) => {
  const { qs, submit, events } = harness({ concurrencyLimit: 4 })
  const small = submit('small', { width: 1 })
  const wide = submit('wide', { hash: 1, width: 6 })
  t.equal(small.answer, 'dispatched')
  t.equal(wide.answer, 'queued')
  qs.finish(small.req)
  t.same(events, [{ id: 'wide', decision: 'dispatched' }])
  t.equal(qs.metrics().seatsInUse, 6, 'it holds all its seats')
  const next = submit('next', { width: 1 })
  t.equal(next.answer, 'queued')
  qs.finish(wide.req)
  t.equal(qs.statusOf(next.req)?.state, 'executing')
})

t.test('dispatch stops at a head that does not fit (no skipping)', async (t) => {
  const { clock, qs, submit, events } = harness({ concurrencyLimit: 4 })
  const x = submit('x', { hash: 0, width: 3 })
  const b = submit('b', { hash: 1, width: 2 })
  const c = submit('c', { hash: 0, width: 1 })
  t.equal(x.answer, 'dispatched')
  t.equal(b.answer, 'queued')
  t.equal(c.answer, 'queued', 'c would fit, but b has the smaller virtual finish time and does not')
  t.equal(qs.metrics().dispatchNoAccommodation > 0, true)
  clock.advance(3)
  qs.finish(x.req)
  t.same(events.map((e) => e.id), ['b', 'c'], 'x took exactly G, so b keeps the smaller virtual finish time')
  t.equal(qs.metrics().seatsInUse, 3)
})

t.test('the queue with the least waiting work in the hand is joined', async (t) => {
  // 4 queues, hand of 4: every flow may use every queue.
  const { qs, submit } = harness({ concurrencyLimit: 1, queues: 4, handSize: 4 })
  submit('running', { width: 1 })
  const waiting = [submit('w0', { width: 1 }), submit('w1', { width: 2 }), submit('w2', { width: 1 }), submit('w3', { width: 1 })]
  const queues = waiting.map((w) => qs.statusOf(w.req)?.queue)
  t.equal(new Set(queues).size, 4, `each waiting request took an empty queue: ${queues.join(',')}`)
  // Now every queue has one request; the wider one (w1) has the most work, so a new one avoids its queue.
  const extra = submit('extra', { width: 1 })
  t.not(qs.statusOf(extra.req)?.queue, qs.statusOf(waiting[1].req)?.queue)
})

t.test('queue length limit: reject when seats are all in use and the queue is full', async (t) => {
  const { qs, submit } = harness({ concurrencyLimit: 1, queues: 1, handSize: 1, queueLengthLimit: 2 })
  t.equal(submit('a', {}).answer, 'dispatched')
  t.equal(submit('b', {}).answer, 'queued')
  t.equal(submit('c', {}).answer, 'queued')
  const d = submit('d', {})
  t.equal(d.answer, 'rejected')
  t.same(qs.statusOf(d.req), { state: 'rejected', reason: 'queue-full', seats: 0, waitedMs: 0 })
  const m = qs.metrics()
  t.same(m.rejected, { 'queue-full': 1, 'concurrency-limit': 0, 'time-out': 0, 'cancelled': 0 })
  t.equal(m.flowSchemas.fs.rejected['queue-full'], 1)
  t.equal(m.requestsWaiting, 2)
  t.equal(m.flowSchemas.fs.waitRejected.count, 1)
})

t.test('queue length limit applies only while all seats are taken', async (t) => {
  const { qs, submit } = harness({ concurrencyLimit: 4, queues: 1, handSize: 1, queueLengthLimit: 1 })
  t.equal(submit('x', { width: 3 }).answer, 'dispatched')
  t.equal(submit('b', { width: 2 }).answer, 'queued')
  t.equal(submit('c', { width: 2 }).answer, 'queued', '3 seats in use < CL 4: no rejection even though the queue is at its limit')
  t.equal(qs.metrics().requestsWaiting, 2)
})

t.test('time limit in queue: 15 s without a deadline', async (t) => {
  const { clock, qs, submit, events } = harness({ concurrencyLimit: 1 })
  const a = submit('a', {})
  const b = submit('b', {})
  t.equal(b.answer, 'queued')
  clock.advance(14_999)
  t.same(events, [])
  t.equal(qs.statusOf(b.req)?.state, 'waiting')
  clock.advance(1)
  t.same(events, [{ id: 'b', decision: 'timeout', reason: 'time-out' }])
  t.same(qs.statusOf(b.req), { state: 'timeout', reason: 'time-out', queue: 0, seats: 0, waitedMs: 15_000 })
  const m = qs.metrics()
  t.equal(m.rejected['time-out'], 1)
  t.equal(m.requestsWaiting, 0)
  t.equal(m.flowSchemas.fs.waitRejected.sum, 15)
  qs.finish(a.req)
  t.ok(qs.isIdle())
})

t.test('time limit in queue: a quarter of the remaining deadline, at most one minute', async (t) => {
  const { clock, submit, events } = harness({ concurrencyLimit: 1 })
  submit('a', {})
  submit('short', { deadline: clock.now() + 8_000 })
  submit('long', { deadline: clock.now() + 1_000_000 })
  submit('explicit', { waitLimitMs: 100 })
  clock.advance(100)
  t.same(events.map((e) => e.id), ['explicit'])
  clock.advance(1_900)
  t.same(events.map((e) => e.id), ['explicit', 'short'], 'deadline 8 s away: waits 2 s')
  clock.advance(57_999)
  t.equal(events.length, 2)
  clock.advance(1)
  t.same(events.map((e) => e.id), ['explicit', 'short', 'long'], 'capped at 60 s')
})

t.test('the request timeout option sets the default wait limit', async (t) => {
  const { clock, submit, events } = harness({ concurrencyLimit: 1 }, 8_000)
  submit('a', {})
  submit('b', {})
  clock.advance(2_000)
  t.same(events, [{ id: 'b', decision: 'timeout', reason: 'time-out' }])
})

t.test('cancel and finish of a waiting request withdraw it', async (t) => {
  const { qs, submit, events } = harness({ concurrencyLimit: 1 })
  const a = submit('a', {})
  const b = submit('b', {})
  const c = submit('c', {})
  t.equal(qs.cancel(b.req), true)
  t.equal(qs.cancel(b.req), false, 'only once')
  qs.finish(c.req)
  t.same(events, [{ id: 'b', decision: 'cancelled', reason: 'cancelled' }, { id: 'c', decision: 'cancelled', reason: 'cancelled' }])
  t.same(qs.statusOf(b.req), { state: 'cancelled', reason: 'cancelled', queue: 0, seats: 0, waitedMs: 0 })
  t.equal(qs.metrics().requestsWaiting, 0)
  t.same(qs.metrics().rejected, { 'queue-full': 0, 'concurrency-limit': 0, 'time-out': 0, 'cancelled': 2 })
  qs.finish(a.req)
  qs.finish(a.req)
  t.ok(qs.isIdle(), 'finish is idempotent')
})

t.test('dump: waiting requests in queue order, executing ones by queue, sums and totals', async (t) => {
  const { qs, submit, clock } = harness({ concurrencyLimit: 1, queues: 2, handSize: 1 })
  const a = submit('a', { hash: 0 })
  clock.advance(5)
  const b = submit('b', { hash: 0, width: { initialSeats: 1, finalSeats: 2, additionalLatencyMs: 5 } })
  const c = submit('c', { hash: 0 })
  qs.cancel(c.req)
  const d = qs.dump()
  t.equal(d.waiting, 1)
  t.equal(d.executing, 1)
  t.same(d.rejected, { 'queue-full': 0, 'concurrency-limit': 0, 'time-out': 0, 'cancelled': 1 })
  const q = d.queues.find((x) => x.waiting.length > 0)!
  t.equal(q.waiting[0].req, b.req)
  t.match(q.waiting[0], { arrivalTime: 1005, startTime: undefined, initialSeats: 1, finalSeats: 2, additionalLatencyMs: 5 })
  t.equal(q.initialSeatsSum, 1)
  t.equal(q.maxSeatsSum, 2)
  t.equal(q.totalWorkSum, seatsTimesMs(1, ESTIMATED_SERVICE_MS) + seatsTimesMs(2, 5))
  t.equal(q.executing.length, 1, 'a runs from the same queue')
  t.equal(q.executing[0].req, a.req)
  t.equal(q.executingRequests, 1)
  qs.finish(a.req)
  t.equal(qs.dump().queues.reduce((n, x) => n + x.executing.length, 0), 1, 'b dispatched')
  t.equal(formatSeatSeconds(0), '0.00000000ss')
  t.equal(formatSeatSeconds(seatsTimesMs(1, 3)), '0.00300000ss')
  t.equal(formatSeatSeconds(seatsTimesMs(4, 2500)), '10.00000000ss')
})

t.test('Reject levels never queue', async (t) => {
  const { qs, submit } = harness({ kind: 'Reject', concurrencyLimit: 2 })
  const a = submit('a', {})
  t.equal(a.answer, 'dispatched')
  t.equal(submit('b', {}).answer, 'dispatched')
  const c = submit('c', {})
  t.equal(c.answer, 'rejected')
  t.equal(qs.statusOf(c.req)?.reason, 'concurrency-limit')
  t.equal(qs.metrics().requestsWaiting, 0)
  t.equal(submit('wide', { width: 2 }).answer, 'rejected', 'no queue even for a request that fits later')
  qs.finish(a.req)
  t.equal(submit('d', {}).answer, 'dispatched')
  t.same(qs.metrics().rejected, { 'queue-full': 0, 'concurrency-limit': 2, 'time-out': 0, 'cancelled': 0 })
})

t.test('a Reject level runs a too-wide request when idle', async (t) => {
  const { submit } = harness({ kind: 'Reject', concurrencyLimit: 2 })
  const w = submit('w', { width: 5 })
  t.equal(w.answer, 'dispatched')
  t.equal(submit('x', {}).answer, 'rejected')
})

t.test('Exempt levels never queue and never reject, but count their seats', async (t) => {
  const { qs, submit } = harness({ kind: 'Exempt', concurrencyLimit: 0 })
  const reqs = Array.from({ length: 5 }, (_, i) => submit(`e${i}`, { width: 2 }))
  t.ok(reqs.every((r) => r.answer === 'dispatched'))
  const m = qs.metrics()
  t.equal(m.seatsInUse, 10)
  t.equal(m.requestsExecuting, 5)
  t.equal(m.flowSchemas.fs.dispatched, 5)
  for (const r of reqs) qs.finish(r.req)
  t.equal(qs.metrics().seatsInUse, 0)
})

t.test('promise form', async (t) => {
  const { clock, qs } = harness({ concurrencyLimit: 1, queues: 1, handSize: 1, queueLengthLimit: 1 })
  const a: FlowRequest = { flowSchema: 'fs' }
  const b: FlowRequest = { flowSchema: 'fs' }
  const c: FlowRequest = { flowSchema: 'fs' }
  const d: FlowRequest = { flowSchema: 'fs', waitLimitMs: 10 }
  t.equal(await qs.enqueue(a), 'dispatched')
  const pb = qs.enqueue(b)
  t.equal(await qs.enqueue(c), 'rejected')
  qs.finish(a)
  t.equal(await pb, 'dispatched')
  const pd = qs.enqueue(d)
  clock.advance(10)
  t.equal(await pd, 'timeout')
  t.throws(() => qs.submit(a), /already submitted/)
})

t.test('a callback may finish its request at once', async (t) => {
  const { qs } = harness({ concurrencyLimit: 1 })
  const order: string[] = []
  const reqs = Array.from({ length: 4 }, (_, i) => ({ flowSchema: 'fs', hash: i % 2 }) as FlowRequest)
  const first = qs.submit(reqs[0])
  for (let i = 1; i < 4; i++) {
    const r = reqs[i]
    qs.submit(r, (d) => { order.push(`${i}:${d}`); qs.finish(r) })
  }
  t.equal(first, 'dispatched')
  qs.finish(reqs[0])
  t.same(order, ['1:dispatched', '2:dispatched', '3:dispatched'])
  t.ok(qs.isIdle())
})

t.test('additional latency keeps the final seats after finish', async (t) => {
  const { clock, qs, submit } = harness({ concurrencyLimit: 4 })
  const w = submit('w', { width: { initialSeats: 1, finalSeats: 3, additionalLatencyMs: 5 } })
  t.equal(w.answer, 'dispatched')
  t.equal(qs.metrics().seatsInUse, 3, 'max(initial, final) seats')
  const other = submit('o', { hash: 1, width: 2 })
  t.equal(other.answer, 'queued')
  qs.finish(w.req)
  t.equal(qs.statusOf(w.req)?.state, 'lingering')
  t.equal(qs.metrics().seatsInUse, 3)
  t.equal(qs.metrics().requestsExecuting, 0)
  clock.advance(5)
  t.equal(qs.statusOf(w.req)?.state, 'done')
  t.equal(qs.statusOf(other.req)?.state, 'executing')
  t.equal(qs.metrics().seatsInUse, 2)
})

t.test('final seats wider than the limit are narrowed at dispatch', async (t) => {
  const { clock, qs, submit } = harness({ concurrencyLimit: 2 })
  const blocker = submit('b', { width: 1 })
  const w = submit('w', { hash: 1, width: { initialSeats: 1, finalSeats: 4, additionalLatencyMs: 5 } })
  t.equal(w.answer, 'queued')
  qs.finish(blocker.req)
  t.equal(qs.statusOf(w.req)?.seats, 2, 'final seats clamped to CL 2')
  qs.finish(w.req)
  clock.advance(9.999)
  t.equal(qs.statusOf(w.req)?.state, 'lingering', '4 seats × 5 ms stretched to 2 seats × 10 ms')
  clock.advance(0.001)
  t.equal(qs.statusOf(w.req)?.state, 'done')
})

t.test('raising the concurrency limit dispatches waiting requests', async (t) => {
  const { qs, submit, events } = harness({ concurrencyLimit: 1 })
  submit('a', {})
  submit('b', {})
  submit('c', { hash: 1 })
  qs.setConcurrencyLimit(3)
  t.same(events.map((e) => e.id).sort(), ['b', 'c'])
  t.equal(qs.concurrencyLimit, 3)
})

t.test('changing the number of queues', async (t) => {
  const { qs, submit } = harness({ concurrencyLimit: 1, queues: 8, handSize: 2 })
  t.equal(qs.queueCount, 8)
  const a = submit('a', { hash: 7 })
  const waiting = submit('w', { hash: 123456789 })
  t.equal(waiting.answer, 'queued')
  qs.setConfig({ queues: 2, handSize: 1 })
  t.ok(qs.queueCount >= 2 && qs.queueCount <= 8, 'idle surplus queues go at once, busy ones later')
  qs.finish(a.req)
  qs.finish(waiting.req)
  t.equal(qs.queueCount, 2, 'drained surplus queues are removed')
  qs.setConfig({ queues: 16, handSize: 4 })
  t.equal(qs.queueCount, 16)
  t.throws(() => qs.setConfig({ queues: 512, handSize: 8 }), /entropy/)
})

t.test('switching a Queue level to Reject drains its queues', async (t) => {
  const { qs, submit, events } = harness({ concurrencyLimit: 1 })
  const a = submit('a', {})
  submit('b', {})
  qs.setConfig({ kind: 'Reject' })
  t.equal(submit('c', {}).answer, 'rejected')
  qs.finish(a.req)
  t.same(events, [{ id: 'b', decision: 'dispatched' }])
})

t.test('drain rejects everything waiting', async (t) => {
  const { qs, submit, events } = harness({ concurrencyLimit: 1 })
  submit('a', {})
  submit('b', {})
  submit('c', { hash: 1 })
  qs.drain()
  t.same(events.map((e) => `${e.id}:${e.decision}`).sort(), ['b:timeout', 'c:timeout'])
  t.equal(qs.metrics().requestsWaiting, 0)
})

t.test('wait-duration histograms per flow schema', async (t) => {
  const { clock, qs, submit } = harness({ concurrencyLimit: 1 })
  const a = submit('a', { flowSchema: 'x' })
  const b = submit('b', { flowSchema: 'y' })
  clock.advance(30)
  qs.finish(a.req)
  const m = qs.metrics()
  t.equal(m.flowSchemas.x.waitExecuted.count, 1)
  t.equal(m.flowSchemas.x.waitExecuted.sum, 0)
  t.equal(m.flowSchemas.y.waitExecuted.count, 1)
  t.equal(m.flowSchemas.y.waitExecuted.sum, 0.03)
  t.same(m.flowSchemas.y.waitExecuted.buckets, WAIT_DURATION_BUCKETS)
  t.same(m.flowSchemas.y.waitExecuted.cumulative, [0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], 'in the 0.05 s bucket')
  t.equal(m.dispatched, 2)
  qs.finish(b.req)
})

t.test('histogram', async (t) => {
  const h = new Histogram([1, 2])
  h.observe(0.5); h.observe(2); h.observe(3)
  t.same(h.cumulative(), [1, 2])
  t.equal(h.count, 3)
  t.equal(h.sum, 5.5)
})

t.test('seat demand integrator', async (t) => {
  const clock = new ManualClock()
  const igr = new SeatDemandIntegrator(clock)
  clock.advance(1000)
  igr.set(10)
  clock.advance(1000)
  const r = igr.reset()
  t.equal(r.duration, 2)
  t.equal(r.average, 5)
  t.equal(r.deviation, 5)
  t.equal(r.max, 10)
  t.equal(r.min, 0)
  clock.advance(1000)
  const r2 = igr.reset()
  t.same({ duration: r2.duration, average: r2.average, deviation: r2.deviation, min: r2.min, max: r2.max }, { duration: 1, average: 10, deviation: 0, min: 10, max: 10 })
  const fresh = new SeatDemandIntegrator(clock).results()
  t.ok(Number.isNaN(fresh.average), 'nothing integrated yet')
})

t.test('the queue set feeds its seat demand (in use + waiting)', async (t) => {
  const { clock, qs, submit } = harness({ concurrencyLimit: 2 })
  qs.takeSeatDemand()
  const a = submit('a', { width: 2 })
  submit('b', { width: 2, hash: 1 })
  clock.advance(1000)
  const r = qs.takeSeatDemand()
  t.equal(r.max, 4)
  t.equal(r.average, 4)
  qs.finish(a.req)
  clock.advance(1000)
  t.equal(qs.takeSeatDemand().average, 2)
})

t.test('R is wound back before it loses precision (epoch advance)', async (t) => {
  const { clock, qs, submit } = harness({ concurrencyLimit: 1000, queues: 1, handSize: 1 })
  const a = submit('a', { width: 1000 })
  const b = submit('b', { width: 1, waitLimitMs: 1e12 })
  t.equal(b.answer, 'queued')
  clock.advance(40_000_000)
  const m = qs.metrics()
  t.equal(m.epochAdvances, 1)
  t.ok(Math.abs(m.currentR - (40_000_000 - 2 ** 51 / 1e8)) < 1e-3, `R wound back to ${m.currentR}`)
  qs.finish(a.req)
  t.equal(qs.statusOf(b.req)?.state, 'executing', 'queues still dispatch after the wind-back')
})

t.test('estimateWidth', async (t) => {
  const one = { initialSeats: 1, finalSeats: 0, additionalLatencyMs: 0 }
  const seats = (n: number) => ({ initialSeats: n, finalSeats: 0, additionalLatencyMs: 0 })
  t.same(estimateWidth({ verb: 'get' }), one)
  t.same(estimateWidth({ verb: 'deletecollection', objectCount: 10_000 }), one)
  t.same(estimateWidth({ verb: 'post' }), one, 'non-resource')
  // count-based lists
  t.same(estimateWidth({ verb: 'list', objectCount: 250 }), seats(3), 'from cache: ⌈N/100⌉')
  t.same(estimateWidth({ verb: 'list', objectCount: 0 }), seats(1), 'never zero')
  t.same(estimateWidth({ verb: 'list', objectCount: 5000 }), seats(10), 'global cap 10')
  t.same(estimateWidth({ verb: 'list', objectCount: 5000, maxSeats: 4 }), seats(4), 'per-level cap')
  t.same(estimateWidth({ verb: 'list', objectCount: 5000, maxSeats: 37 }), seats(10), 'per-level cap above 10 is capped at 10')
  t.same(estimateWidth({ verb: 'list' }), one, 'unknown resource')
  t.same(estimateWidth({ verb: 'list', objectCount: 10, stale: true }), seats(10), 'stale count: the cap')
  t.same(estimateWidth({ verb: 'list', objectCount: 5000, singleObject: true }), one, 'metadata.name field selector')
  t.same(estimateWidth({ verb: 'list', objectCount: 1000, limit: 100, fromCache: false }), seats(2), 'from storage without selector: 2·limit')
  t.same(estimateWidth({ verb: 'list', objectCount: 300, limit: 100, fromCache: false, hasSelector: true }), seats(4), 'from storage with selector: N + limit')
  t.same(estimateWidth({ verb: 'list', objectCount: 50, limit: 500, fromCache: false }), seats(1), 'limit above N counts N')
  // watches
  t.same(estimateWidth({ verb: 'watch', objectCount: 500 }), one, 'plain watch')
  t.same(estimateWidth({ verb: 'watch', objectCount: 500, initialEvents: true }), seats(5), 'watch with initial events, as a cached list')
  // size-based lists
  t.same(estimateWidth({ verb: 'list', mode: 'size', objectCount: 50, averageObjectSize: 10_000 }), seats(5), '500 kB')
  t.same(estimateWidth({ verb: 'list', mode: 'size', objectCount: 500, averageObjectSize: 10_000 }), seats(10), 'cache-served memory capped at 1 MB')
  t.same(estimateWidth({ verb: 'list', mode: 'size', objectCount: 500, averageObjectSize: 10_000, fromCache: false }), seats(50))
  t.same(estimateWidth({ verb: 'list', mode: 'size', objectCount: 500, averageObjectSize: 10_000, fromCache: false, limit: 10, hasSelector: true }), seats(25), 'selector from storage: max(L, N/2)')
  t.same(estimateWidth({ verb: 'list', mode: 'size', objectCount: 5000, averageObjectSize: 10_000, fromCache: false }), seats(100), 'size cap 100')
  t.same(estimateWidth({ verb: 'list', mode: 'size', objectCount: 3, fromCache: false }), seats(45), 'unknown size: 1.5 MB each')
  t.same(estimateWidth({ verb: 'list', mode: 'size', objectCount: 0 }), seats(1))
  // mutating
  t.same(estimateWidth({ verb: 'create', watchers: 9 }), one)
  t.same(estimateWidth({ verb: 'update', watchers: 25 }), { initialSeats: 1, finalSeats: 3, additionalLatencyMs: 5 })
  t.same(estimateWidth({ verb: 'patch', watchers: 200 }), { initialSeats: 1, finalSeats: 10, additionalLatencyMs: 10 }, 'capped at 10, area kept')
  t.same(estimateWidth({ verb: 'delete', watchers: 200, maxSeats: 4 }), { initialSeats: 1, finalSeats: 4, additionalLatencyMs: 25 })
  t.same(estimateWidth({ verb: 'create', watchers: 200, exemptFromWatchEvents: true }), one, 'TokenRequest')
})

t.test('per-level max seats', async (t) => {
  t.equal(priorityLevelMaxSeats(74, 6), 12)
  t.equal(priorityLevelMaxSeats(98, 6), 15)
  t.equal(priorityLevelMaxSeats(25, 4), 4)
  t.equal(priorityLevelMaxSeats(245, 6), 37)
  t.equal(priorityLevelMaxSeats(49, 6), 8)
  t.equal(priorityLevelMaxSeats(3, 8), 1, 'at least 1')
})

/**
 * The bench's fairness scenario in virtual time: CL 4, 64 queues of hand 6, an elephant of 40 closed-loop clients
 * and a mouse of one, each request served for exactly S. Every free seat goes to the smallest virtual finish; the
 * mouse's next request, arriving as its last one frees its seat to an elephant, waits for the next round of
 * completions: exactly S, never more, while the elephant's requests wait about 10 S (40 clients on 4 seats).
 */
t.test('a mouse beside an elephant at 10x the seats waits one service time, the elephant ten', async (t) => {
  const clock = new ManualClock()
  const qs = new QueueSet({ name: 'bench', kind: 'Queue', concurrencyLimit: 4, queues: 64, handSize: 6, queueLengthLimit: 50 }, { clock, requestTimeoutMs: 1e9 })
  const S = 5
  const waits: Record<string, number[]> = { mouse: [], elephant: [] }
  const hashes: Record<string, bigint> = { mouse: flowHash('bench', 'mouse'), elephant: flowHash('bench', 'elephant') }
  const issue = (who: string): void => {
    const req: FlowRequest = { flowSchema: 'bench', flowDistinguisher: who, hash: hashes[who] }
    const t0 = clock.now()
    const run = (): void => {
      waits[who].push(clock.now() - t0)
      clock.setTimer(() => { qs.finish(req); clock.setTimer(() => issue(who), 0) }, S)
    }
    if (qs.submit(req, (d) => { if (d === 'dispatched') run() }) === 'dispatched') run()
  }
  for (let i = 0; i < 40; i++) issue('elephant')
  issue('mouse')
  clock.advance(5_000)
  const settled = (xs: number[]) => xs.slice(20)
  const mouse = settled(waits.mouse)
  const elephant = settled(waits.elephant)
  t.ok(mouse.length > 400, `${mouse.length} mouse requests`)
  t.equal(Math.max(...mouse), S, 'the mouse never waits more than one round')
  const mean = elephant.reduce((a, b) => a + b, 0) / elephant.length
  t.ok(mean > 9 * S && mean < 11 * S, `the elephant waits about 10 S (${(mean / S).toFixed(2)} S)`)
})

// ---------------------------------------------------------------- seat holds (QueueSet's hold rule)

function holdHarness(cfg: Partial<QueueSetConfig>, holdMs: number): Harness {
  const clock = new ManualClock()
  const qs = new QueueSet({ name: 'pl', kind: 'Queue', concurrencyLimit: 1, queues: 8, handSize: 1, queueLengthLimit: 50, ...cfg }, { clock, holdMs, requestTimeoutMs: 1e9 })
  const events: Harness['events'] = []
  const submit = (id: string, init: Partial<FlowRequest>) => {
    const req: FlowRequest = { flowSchema: 'fs', hash: 0, ...init }
    const answer = qs.submit(req, (decision, reason) => events.push(reason === undefined ? { id, decision } : { id, decision, reason }))
    return { req, answer }
  }
  return { clock, qs, events, submit }
}

/**
 * The level under group commit: every request executing at a commit (every S ms) ends in it, their finishes reach the
 * queue set together (finish(req, true), then dispatch()), and each flow asks again `think` ms after its answer.
 * Returns the waits of the mouse (one request at a time) and the elephant's requests per commit.
 */
function groupCommitModel(holdMs: number): { mouseWaits: number[]; elephantPerCommit: number } {
  const clock = new ManualClock()
  const qs = new QueueSet({ name: 'bench', kind: 'Queue', concurrencyLimit: 4, queues: 64, handSize: 6, queueLengthLimit: 50 }, { clock, holdMs, requestTimeoutMs: 1e9 })
  const S = 2
  const think = 0.4
  const hashes: Record<string, bigint> = { mouse: flowHash('bench', 'mouse'), elephant: flowHash('bench', 'elephant') }
  const executing: Array<{ req: FlowRequest; who: string }> = []
  const mouseWaits: number[] = []
  let elephantDone = 0
  const issue = (who: string): void => {
    const req: FlowRequest = { flowSchema: 'bench', flowDistinguisher: who, hash: hashes[who] }
    const t0 = clock.now()
    const run = (): void => {
      if (who === 'mouse') mouseWaits.push(clock.now() - t0)
      executing.push({ req, who })
    }
    if (qs.submit(req, (d) => { if (d === 'dispatched') run() }) === 'dispatched') run()
  }
  const commit = (): void => {
    const done = executing.splice(0)
    for (const r of done) qs.finish(r.req, true)
    qs.dispatch()
    for (const r of done) {
      if (r.who === 'elephant') elephantDone++
      clock.setTimer(() => issue(r.who), think)
    }
    clock.setTimer(commit, S)
  }
  for (let i = 0; i < 40; i++) issue('elephant')
  issue('mouse')
  clock.setTimer(commit, S)
  clock.advance(2_000)
  return { mouseWaits: mouseWaits.slice(20), elephantPerCommit: elephantDone / (2_000 / S) }
}

t.test('without holds, a mouse that asks again after each answer waits most of a commit cycle beside an elephant', async (t) => {
  const { mouseWaits, elephantPerCommit } = groupCommitModel(0)
  const mean = mouseWaits.reduce((a, b) => a + b, 0) / mouseWaits.length
  t.ok(mean > 1.5, `the mouse waits ${mean.toFixed(2)} ms of each 2 ms cycle: every seat freed at a commit went to the waiting elephant`)
  t.ok(elephantPerCommit > 3.4, `the elephant gets ${elephantPerCommit} requests per commit`)
})

t.test('with holds, that mouse gets its seat back at once and the elephant keeps the rest', async (t) => {
  const { mouseWaits, elephantPerCommit } = groupCommitModel(1)
  t.ok(mouseWaits.length > 900, `${mouseWaits.length} mouse requests: one per commit`)
  t.equal(Math.max(...mouseWaits), 0, 'the mouse never waits: its seat is held for it through its think time')
  t.ok(elephantPerCommit > 2.95 && elephantPerCommit < 3.05, `the elephant has the other three seats (${elephantPerCommit} requests per commit)`)
})

t.test('a hold runs out: the seat then goes to the waiting flow', async (t) => {
  const h = holdHarness({ concurrencyLimit: 2 }, 2)
  const m = h.submit('m1', { hash: 1 })
  t.equal(m.answer, 'dispatched')
  t.equal(h.submit('e1', { hash: 2 }).answer, 'dispatched')
  t.equal(h.submit('e2', { hash: 2 }).answer, 'queued')
  h.qs.finish(m.req)
  t.equal(h.qs.heldSeats, 1, 'the mouse flow has nothing waiting and held its fair share (2 seats over 2 flows)')
  t.same(h.events, [], 'the elephant still waits')
  h.clock.advance(1.9)
  t.same(h.events, [], 'still held')
  h.clock.advance(0.2)
  t.same(h.events, [{ id: 'e2', decision: 'dispatched' }], 'after holdMs the seat goes to the waiter')
  t.equal(h.qs.heldSeats, 0)
  t.same(h.qs.holdCounts, { taken: 1, used: 0, expired: 1 })
})

t.test('the held flow asking again takes its seat ahead of what waits in its queue', async (t) => {
  // One queue: the elephant's waiting request is ahead of the mouse's in it.
  const h = holdHarness({ concurrencyLimit: 2, queues: 1 }, 2)
  const m1 = h.submit('m1', { hash: 1 })
  h.submit('e1', { hash: 2 })
  h.submit('e2', { hash: 2 })
  h.qs.finish(m1.req)
  h.clock.advance(0.5)
  const m2 = h.submit('m2', { hash: 1 })
  t.equal(m2.answer, 'dispatched', 'the mouse is dispatched at once')
  t.equal(h.qs.statusOf(m2.req)?.waitedMs, 0)
  t.equal(h.qs.heldSeats, 0)
  t.equal(h.qs.waitingRequests, 1, 'the elephant still waits')
  t.same(h.qs.holdCounts, { taken: 1, used: 1, expired: 0 })
  h.clock.advance(5)
  t.same(h.events, [], 'nothing else was dispatched when the hold would have run out')
})

t.test('no hold when nothing else waits, for a flow with requests waiting, or above its fair share', async (t) => {
  {
    const h = holdHarness({ concurrencyLimit: 2 }, 2)
    const m = h.submit('m1', { hash: 1 })
    h.qs.finish(m.req)
    t.equal(h.qs.heldSeats, 0, 'nobody waits: nothing to hold against')
  }
  {
    const h = holdHarness({ concurrencyLimit: 2 }, 2)
    const m1 = h.submit('m1', { hash: 1 })
    h.submit('m2', { hash: 1 })
    h.submit('m3', { hash: 1 })
    h.submit('e1', { hash: 2 })
    h.qs.finish(m1.req)
    t.equal(h.qs.heldSeats, 0, 'the flow has requests waiting: they compete for the seat as usual')
    t.same(h.events, [{ id: 'e1', decision: 'dispatched' }], 'fair queuing gave the seat to the other flow')
  }
  {
    const h = holdHarness({ concurrencyLimit: 2 }, 2)
    const a = h.submit('a1', { hash: 1 })
    h.submit('a2', { hash: 1 })
    h.submit('b1', { hash: 2 })
    h.qs.finish(a.req)
    t.equal(h.qs.heldSeats, 0, 'the flow held both seats, more than its share of one')
    t.same(h.events, [{ id: 'b1', decision: 'dispatched' }])
  }
  {
    const h = holdHarness({ concurrencyLimit: 1 }, 2)
    const m = h.submit('m1', { hash: 1 })
    h.submit('e1', { hash: 2 })
    h.qs.finish(m.req)
    t.equal(h.qs.heldSeats, 0, 'one seat over two flows: half a seat each, and the mouse had one')
  }
  {
    const h = holdHarness({ concurrencyLimit: 2 }, 0)
    const m = h.submit('m1', { hash: 1 })
    h.submit('e1', { hash: 2 })
    h.submit('e2', { hash: 2 })
    h.qs.finish(m.req)
    t.equal(h.qs.heldSeats, 0, 'holdMs 0: never')
  }
})

t.test('a flow whose requests come further apart than the hold is not waited for, until its gaps shrink', async (t) => {
  const h = holdHarness({ concurrencyLimit: 2 }, 2)
  let n = 0
  let m = h.submit(`m${n++}`, { hash: 1 })
  for (let i = 0; i < 40; i++) h.submit(`e${i}`, { hash: 2 })
  const elephants = (): FlowRequest[] => h.qs.dump().queues.flatMap((q) => q.executing.map((e) => e.req)).filter((r) => r.hash === 2)
  // The mouse asks again `gap` ms after each answer; the elephant's requests end as needed to let it in.
  const next = (gap: number): void => {
    h.clock.advance(gap)
    m = h.submit(`m${n++}`, { hash: 1 })
    // Each elephant request that ends is replaced: the elephant always has requests waiting.
    while (h.qs.statusOf(m.req)?.state === 'waiting') { h.qs.finish(elephants()[0]); h.submit(`e${n++}`, { hash: 2 }) }
  }
  const slow: number[] = []
  for (let i = 0; i < 4; i++) {
    h.qs.finish(m.req)
    slow.push(h.qs.heldSeats)
    next(20)
  }
  t.same(slow, [1, 1, 0, 0], 'asking again 20 ms after each answer: held while its think time is unknown and after one gap, then not')
  const quick: number[] = []
  for (let i = 0; i < 10; i++) {
    h.qs.finish(m.req)
    quick.push(h.qs.heldSeats)
    if (h.qs.heldSeats > 0) break
    next(0.2)
  }
  t.ok(quick.length > 1 && quick.at(-1) === 1, `asking again 0.2 ms after each answer: held again after a few (${quick.join(' ')})`)
  t.same(h.qs.holdCounts, { taken: 3, used: 0, expired: 2 })
})
