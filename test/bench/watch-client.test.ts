// The bench's watch client reads event lines as bytes: lines split across socket reads, white space, event types and
// names read in place, the duplicate bitmap and the delivery tracker by write sequence number.
import t from 'tap'
import { LineSplitter } from '../../bench/lib/http.js'
import { DeliveryTracker, SeenSet, digitsAt, eventType, stringAt } from '../../bench/lib/watch.js'

t.test('lines across pieces, blank lines and padding skipped', async (t) => {
  const text = ' {"type":"ADDED","object":{"metadata":{"name":"w-a-00000012"}}}\n\n{"type":"MODIFIED"}\r\n{"type":"DELETED","x":"é"}\n'
  const whole = Buffer.from(text)
  // every way to cut the stream in two, and one byte per piece
  const cuts = [...Array.from({ length: whole.length + 1 }, (_, i) => [whole.subarray(0, i), whole.subarray(i)]), [...whole].map((b) => Buffer.from([b]))]
  for (const pieces of cuts) {
    const got: string[] = []
    const s = new LineSplitter((l) => got.push(l.toString()))
    for (const p of pieces) s.push(p)
    t.same(got, ['{"type":"ADDED","object":{"metadata":{"name":"w-a-00000012"}}}', '{"type":"MODIFIED"}', '{"type":"DELETED","x":"é"}'])
  }
  const held: string[] = []
  const s = new LineSplitter((l) => held.push(l.toString()))
  s.push(Buffer.from('{"type":"ADD'))
  t.same(held, [], 'nothing before the line ends')
  s.push(Buffer.from('ED"}\n{"ty'))
  t.same(held, ['{"type":"ADDED"}'])
})

t.test('types and names read in place', async (t) => {
  const line = Buffer.from('{"type":"BOOKMARK","object":{"metadata":{"name":"w-run-00000345","resourceVersion":"9"}}}')
  t.equal(eventType(line), 'BOOKMARK')
  t.equal(eventType(Buffer.from('{"type":"ERROR"}')), 'ERROR')
  t.equal(eventType(Buffer.from('{"object":{}}')), '?')
  const at = stringAt(line, Buffer.from('"name":"'))
  t.ok(at)
  t.equal(line.toString('latin1', at![0], at![1]), 'w-run-00000345')
  t.equal(digitsAt(line, at![0] + 'w-run-'.length, at![1]), 345)
  t.equal(digitsAt(line, at![0], at![1]), -1, 'not all digits')
  t.equal(stringAt(line, Buffer.from('"uid":"')), null)
})

t.test('seen bitmap grows and tells duplicates', async (t) => {
  const s = new SeenSet()
  t.ok(s.add(0))
  t.ok(s.add(100_000))
  t.notOk(s.add(100_000))
  t.notOk(s.add(0))
  t.ok(s.add(31))
  t.ok(s.add(32))
  t.notOk(s.add(31))
})

t.test('tracker by sequence number: unknown, early and forgotten writes', async (t) => {
  const tr = new DeliveryTracker()
  tr.send(5000)
  tr.receive(5000, performance.now())
  t.equal(tr.earlyCount, 1, 'received before its ack')
  tr.ack(5000)
  t.equal(tr.lag.count, 1)
  tr.receive(7, performance.now())
  tr.receive(-1, performance.now())
  t.equal(tr.unknown, 2, 'never sent and unparsable')
  tr.send(8)
  tr.forget(8)
  tr.receive(8, performance.now())
  t.equal(tr.unknown, 3, 'a failed write is not expected')
  t.equal(tr.received, 1)
})
