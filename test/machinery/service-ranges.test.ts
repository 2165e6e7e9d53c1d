import t from 'tap'
import { Worker } from 'node:worker_threads'
import { SharedBitmap } from '../../src/machinery/shared-bitmap.js'
import { ipv4Number, ipv4String, parseNodePortRange, parseServiceIPRange } from '../../src/machinery/service-ranges.js'

t.test('IPv4 ranges: members, the dynamic band (KEP-3070)', async (t) => {
  t.same(parseServiceIPRange(''), { cidr: '10.0.0.0/24', network: ipv4Number('10.0.0.0'), base: ipv4Number('10.0.0.1'), max: 254, offset: 16 })
  t.same(parseServiceIPRange('10.96.7.9/12'), { cidr: '10.96.0.0/12', network: ipv4Number('10.96.0.0'), base: ipv4Number('10.96.0.1'), max: 2 ** 20 - 2, offset: 256 }, 'masked; the band capped at 256')
  t.equal(parseServiceIPRange('192.168.1.0/28').offset, 0, 'a /28 has no static band')
  t.equal(parseServiceIPRange('192.168.1.0/27').offset, 16)
  t.equal(ipv4String(ipv4Number('010.001.000.255')!), '10.1.0.255', 'leading zeros read as decimal (Go\'s sloppy parse)')
  t.equal(ipv4Number('fd00::1'), undefined)
})

t.test('node port ranges: the three notations, the dynamic band (KEP-3668)', async (t) => {
  t.same(parseNodePortRange(''), { base: 30000, size: 2768, offset: 86, text: '30000-32767' })
  t.same(parseNodePortRange('30000+9'), { base: 30000, size: 10, offset: 0, text: '30000-30009' })
  t.same(parseNodePortRange('8080'), { base: 8080, size: 1, offset: 0, text: '8080-8080' })
  t.equal(parseNodePortRange('1-65535').offset, 128)
  t.throws(() => parseNodePortRange('1-2+3'), /unable to parse port range: 1-2\+3/)
})

t.test('SharedBitmap: take, release, bands', async (t) => {
  const b = new SharedBitmap(new SharedArrayBuffer(SharedBitmap.bytesFor(70)), 70)
  t.ok(b.take(0))
  t.notOk(b.take(0), 'taken once')
  t.notOk(b.take(70), 'not a member')
  t.ok(b.has(0))
  t.ok(b.release(0))
  t.notOk(b.release(0))
  for (let i = 40; i < 70; i++) t.ok(b.take(i))
  t.equal(b.takeIn(40, 70, 55), -1, 'a full band')
  t.equal(b.takeIn(10, 70, 60), 10, 'wraps to the start of the band')
  t.equal(b.takeIn(10, 70, 10), 11)
  t.ok(b.release(63))
  t.equal(b.takeIn(40, 70, 41), 63, 'finds the one free member past full words')
  t.equal(b.count(), 32)
})

t.test('SharedBitmap: threads taking at once never get the same member', async (t) => {
  const size = 4096
  const buf = new SharedArrayBuffer(SharedBitmap.bytesFor(size))
  const code = `
    const { workerData, parentPort } = require('node:worker_threads')
    import(workerData.url).then(({ SharedBitmap }) => {
      const b = new SharedBitmap(workerData.buf, workerData.size)
      const got = []
      for (;;) { const m = b.takeIn(0, workerData.size, Math.floor(Math.random() * workerData.size)); if (m < 0) break; got.push(m) }
      parentPort.postMessage(got)
    })`
  // The compiled module, as the server's threads load it (this test runs from dist/test).
  const moduleUrl = new URL('../../src/machinery/shared-bitmap.js', import.meta.url).href
  const runs = await Promise.all([0, 1, 2, 3].map(() => new Promise<number[]>((resolve, reject) => {
    const w = new Worker(code, { eval: true, workerData: { url: moduleUrl, buf, size } })
    w.once('message', (m: number[]) => { resolve(m); void w.terminate() })
    w.once('error', reject)
  })))
  const all = runs.flat()
  t.equal(all.length, size, 'every member taken once')
  t.equal(new Set(all).size, size, 'no member twice')
})
