import t from 'tap'
import type { MessagePort } from 'node:worker_threads'
import { PortClient } from '../../src/machinery/port-rpc.js'

// When a client's batch leaves: the port records what was posted (a port of our own making, not a mock of storage).

interface Req { id: number; op: string }
interface Reply { id: number }

function recordingPort(): { port: MessagePort; posted: Array<Array<{ op: string }>> } {
  const posted: Array<Array<{ op: string }>> = []
  const port = { postMessage: (m: Array<{ op: string }>) => { posted.push(m.map((r) => ({ op: r.op }))) }, on: () => port } as unknown as MessagePort
  return { port, posted }
}

const microtasks = () => new Promise<void>((resolve) => queueMicrotask(resolve))
const turn = () => new Promise<void>((resolve) => setImmediate(resolve))

t.test('an immediate client sends the requests of a loop turn together, after the poll phase', async (t) => {
  const { port, posted } = recordingPort()
  const c = new PortClient<Req, Reply>(port, 'immediate')
  void c.request({ op: 'a' })
  await microtasks()
  void c.request({ op: 'b' })
  await microtasks()
  t.same(posted, [], 'nothing yet within the turn')
  await turn()
  t.same(posted, [[{ op: 'a' }, { op: 'b' }]], 'one message for both')
})

t.test('an urgent request leaves at the end of the current callback, with what was collected before it', async (t) => {
  const { port, posted } = recordingPort()
  const c = new PortClient<Req, Reply>(port, 'immediate')
  void c.request({ op: 'a' })
  void c.request({ op: 'b' }, true)
  await microtasks()
  t.same(posted, [[{ op: 'a' }, { op: 'b' }]], 'sent before the turn ends')
  void c.request({ op: 'c' }, true)
  await microtasks()
  t.same(posted, [[{ op: 'a' }, { op: 'b' }], [{ op: 'c' }]], 'an urgent request with nothing before it')
  void c.request({ op: 'd' })
  await turn()
  t.same(posted.length, 3, 'a later ordinary request still waits for the turn')
  t.same(posted[2], [{ op: 'd' }])
})

t.test('a microtask client sends at the end of the callback either way', async (t) => {
  const { port, posted } = recordingPort()
  const c = new PortClient<Req, Reply>(port)
  void c.request({ op: 'a' })
  void c.request({ op: 'b' }, true)
  await microtasks()
  t.same(posted, [[{ op: 'a' }, { op: 'b' }]])
  await turn()
  t.equal(posted.length, 1, 'no empty message afterwards')
})
