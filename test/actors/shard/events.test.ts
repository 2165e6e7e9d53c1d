// The shard actor's watch events, driven in-process through its port protocol: attrs-only subscribers get the
// record cut after its attributes, in a buffer of exactly that size (structured clone copies whole backing stores).
import t from 'tap'
import { MessageChannel } from 'node:worker_threads'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import run from '../../../actors/shard/worker.js'
import { PortClient } from '../../../src/machinery/port-rpc.js'
import { encodeRecord, recordAttrs, recordRv } from '../../../src/machinery/storage-format.js'
import type { ShardRequest, ShardReply, WatchEvent } from '../../../actors/shard/messages.js'

t.test('attrs-only and whole events of a put', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-shard-test-'))
  run({ op: 'init', shard: 0, dataDir: dir, counters: new SharedArrayBuffer(16), heartbeats: new SharedArrayBuffer(8), heartbeatSlot: 0, watchHistoryMs: 60_000, watchHistoryCount: 1000, logLevel: 'silent' })
  const clients: Array<PortClient<ShardRequest, ShardReply, WatchEvent>> = []
  const events: WatchEvent[][] = [[], []]
  for (const i of [0, 1]) {
    const { port1, port2 } = new MessageChannel()
    run({ op: 'attach', port: port2, name: `test-${i}` })
    const c = new PortClient<ShardRequest, ShardReply, WatchEvent>(port1)
    c.onPush((evs) => events[i].push(...evs))
    clients.push(c)
  }
  t.teardown(() => { for (const c of clients) c.close(); rmSync(dir, { recursive: true, force: true }) })
  await clients[0].request({ op: 'watchSubscribe', prefix: '/configmaps/', attrsOnly: true })
  await clients[1].request({ op: 'watchSubscribe', prefix: '/configmaps/' })
  const attrs = JSON.stringify({ l: { app: 'x' }, u: 'uid-1' })
  const json = JSON.stringify({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', namespace: 'ns', resourceVersion: '@@RV@@' }, data: { payload: 'x'.repeat(4000) } })
  const r = await clients[1].request({ op: 'objectPut', key: '/configmaps/ns/a', expect: 0, attrs, json })
  t.ok(r.ok)
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.equal(events[0].length, 1)
  t.equal(events[1].length, 1)
  const slim = events[0][0][3]
  const whole = events[1][0][3]
  const headerAndAttrs = 12 + Buffer.byteLength(attrs)
  t.equal(slim.byteLength, headerAndAttrs, 'the attrs-only record ends after the attributes')
  t.equal(slim.buffer.byteLength, headerAndAttrs, 'and arrives in a buffer of its own size, not the whole record')
  t.same(recordAttrs(slim), JSON.parse(attrs))
  t.equal(recordRv(slim), recordRv(whole))
  t.equal(whole.byteLength, encodeRecord(1, attrs, json).byteLength + String(recordRv(whole)).length - '@@RV@@'.length)
})
