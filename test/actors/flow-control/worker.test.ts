import t from 'tap'
import { MessageChannel, type MessagePort } from 'node:worker_threads'
import run, { applyConfig } from '../../../actors/flow-control/worker.js'
import { mandatoryFlowSchemas, mandatoryPriorityLevels } from '../../../actors/flow-control/config.js'
import { L_IN_USE, SEAT_SLOTS, levelSlot, type ActorOut, type FlowMsg, type InflightEntry } from '../../../actors/flow-control/messages.js'
import type { Obj } from '../../../src/registry/define.js'

// The flow-control actor, run in this process: its ports are MessageChannels that the test drives as front-ends would.

const seats = new Int32Array(new SharedArrayBuffer(SEAT_SLOTS * 4))

/** A front-end's end of a port: sends batches of messages, and reads what the actor sends back. */
class FrontEnd {
  readonly port: MessagePort
  readonly #inbox: ActorOut[] = []
  #wake: (() => void) | null = null
  constructor(port: MessagePort) {
    this.port = port
    port.on('message', (m: ActorOut) => { this.#inbox.push(m); this.#wake?.() })
  }

  send(...msgs: FlowMsg[]): void { this.port.postMessage(msgs) }

  /** The next message from the actor that satisfies `pick`; earlier ones are dropped. */
  async next<T>(pick: (m: ActorOut) => T | undefined): Promise<T> {
    for (;;) {
      while (this.#inbox.length > 0) {
        const v = pick(this.#inbox.shift() as ActorOut)
        if (v !== undefined) return v
      }
      await new Promise<void>((resolve) => { this.#wake = resolve })
      this.#wake = null
    }
  }
}

async function attach(name: string): Promise<FrontEnd> {
  const { port1, port2 } = new MessageChannel()
  await run({ op: 'attach', port: port1, name })
  return new FrontEnd(port2)
}

const collectOf = (m: ActorOut) => m.collect?.[0]
const replyOf = (id: number) => (m: ActorOut) => m.replies?.find((r) => r.id === id)

t.before(async () => {
  await run({
    op: 'init', seats: seats.buffer as SharedArrayBuffer, rejected: new SharedArrayBuffer(16), logLevel: 'silent',
    heartbeats: new SharedArrayBuffer(8), heartbeatSlot: 0, apf: false, serverCL: 100,
  })
})

t.test('dump_requests: a request queued while the peers answer is either left out or shown with its details', async (t) => {
  // One queuing level of one queue for user "q".
  const level: Obj = {
    metadata: { name: 'queued', uid: 'uid-queued' },
    spec: { type: 'Limited', limited: { nominalConcurrencyShares: 10, lendablePercent: 0, limitResponse: { type: 'Queue', queuing: { queues: 1, handSize: 1, queueLengthLimit: 10 } } } },
  }
  const schema: Obj = {
    metadata: { name: 'queued', uid: 'uid-queued-fs' },
    spec: { matchingPrecedence: 100, priorityLevelConfiguration: { name: 'queued' }, rules: [{ subjects: [{ kind: 'User', user: { name: 'q' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }] }] },
  }
  const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T
  const main = await attach('main')
  const fe = await attach('frontend-0')
  applyConfig({ flowSchemas: [...clone(mandatoryFlowSchemas), schema], priorityLevels: [...clone(mandatoryPriorityLevels), level] })
  // The front-end gets the configuration at attach, then the new one.
  const index = await fe.next((m) => m.config?.levels.find((l) => l.name === 'queued')?.index)
  t.ok(index > 1, 'the level has its own index')
  // Every seat of the level is taken (as front-ends' fast paths take them): what comes now waits in the queue.
  Atomics.store(seats, levelSlot(index, L_IN_USE), 1000)

  const entry = (ticket: number): InflightEntry => ({
    ticket, level: index, fs: 'queued', fd: '', arrive: Date.now(), start: 0, seats: 1, finalSeats: 0, latencyMs: 0,
    details: ['q', 'list', '/api/v1/namespaces/default/configmaps', 'default', '', 'v1', 'configmaps', ''],
  })
  const rowsOf = (text: string) => {
    const [head, ...lines] = text.split('\n').filter((l) => l !== '')
    const names = head.split(',').map((c) => c.trim())
    return lines.map((l) => Object.fromEntries(l.split(',').map((c, i) => [names[i], c.trim()])) as Record<string, string>).filter((r) => r.PriorityLevelName === 'queued')
  }

  // Request 1 waits; its front-end lists it from then on.
  const listed: InflightEntry[] = [entry(1)]
  fe.send({ op: 'enqueue', id: 1, level: index, fs: 'queued', fd: '', seats: 1, finalSeats: 0, latencyMs: 0 }, { op: 'dump', id: 6, what: 'queues', details: false })
  const queues = (await fe.next(replyOf(6)) as { text: string }).text
  t.match(queues, /^queued,\s+0,\s+1,/m, 'request 1 waits (the queue dump needs no peers)')
  // A dump: the actor asks both peers. The front-end answers at once; request 2 reaches the actor after that
  // answer but before the main thread's (the order that made the black-box test fail now and then).
  main.send({ op: 'dump', id: 7, what: 'requests', details: true })
  const c1 = await fe.next(collectOf)
  const c2 = await main.next(collectOf)
  fe.send({ op: 'collected', id: c1.id, entries: [...listed] })
  listed.push(entry(2))
  fe.send({ op: 'enqueue', id: 2, level: index, fs: 'queued', fd: '', seats: 1, finalSeats: 0, latencyMs: 0 })
  // Let the actor take in both messages before the last answer.
  await new Promise((resolve) => setTimeout(resolve, 50))
  main.send({ op: 'collected', id: c2.id, entries: [] })
  const first = rowsOf((await main.next(replyOf(7)) as { text: string }).text)
  t.same(first.map((r) => [r.QueueIndex, r.RequestIndexInQueue, r.Verb, r.Resource, r.UserName]), [['0', '0', 'list', 'configmaps', 'q']],
    'the dump shows the queue as it was when the peers were asked: request 1, with its details')

  // The next dump shows both, each with its details.
  main.send({ op: 'dump', id: 8, what: 'requests', details: true })
  const d1 = await fe.next(collectOf)
  const d2 = await main.next(collectOf)
  fe.send({ op: 'collected', id: d1.id, entries: [...listed] })
  main.send({ op: 'collected', id: d2.id, entries: [] })
  const second = rowsOf((await main.next(replyOf(8)) as { text: string }).text)
  t.same(second.map((r) => [r.RequestIndexInQueue, r.Verb, r.UserName]), [['0', 'list', 'q'], ['1', 'list', 'q']])

  // The level's dump counts from the same moment: two waiting.
  main.send({ op: 'dump', id: 9, what: 'priority_levels', details: false })
  const e1 = await fe.next(collectOf)
  const e2 = await main.next(collectOf)
  fe.send({ op: 'collected', id: e1.id, entries: [...listed] })
  main.send({ op: 'collected', id: e2.id, entries: [] })
  t.match(rowsOf((await main.next(replyOf(9)) as { text: string }).text), [{ WaitingRequests: '2', ExecutingRequests: '0' }])
  main.port.close()
  fe.port.close()
})
