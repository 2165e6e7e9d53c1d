// The shard actor's watch ring, driven in-process through its port protocol: writes of one key in one group commit
// (the earlier version replaced before its event is published), a version replaced after its event was published,
// and a deletion; a backlog and the pushed events carry each version's own record and previous state.
import t from 'tap'
import { MessageChannel } from 'node:worker_threads'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import run from '../../../actors/shard/worker.js'
import { PortClient } from '../../../src/machinery/port-rpc.js'
import { recordObject, recordRv } from '../../../src/machinery/storage-format.js'
import type { ShardRequest, ShardReply, WatchEvent } from '../../../actors/shard/messages.js'

type Client = PortClient<ShardRequest, ShardReply, WatchEvent>

const attrs = JSON.stringify({ u: 'uid' })
const json = (name: string, v: string) => JSON.stringify({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name, namespace: 'ns', resourceVersion: '@@RV@@' }, data: { v, pad: v.repeat(600) } })

/** An event as `type name v@rv (prev v@rv)` from its records. */
function show(ev: WatchEvent): string {
  const one = (rec: Uint8Array | null) => {
    if (rec === null) return '-'
    const o = JSON.parse(recordObject(rec).toString('utf8'))
    if (o.data.pad !== o.data.v.repeat(600)) return 'torn'
    return `${o.data.v}@${recordRv(rec)}/${o.metadata.resourceVersion}`
  }
  return `${ev[0]} ${ev[1]} ${ev[2]} ${one(ev[3])} prev ${one(ev[4])}`
}

// The actor's state is per process: the second run goes on with the same counters and another type (its own ring).
const counters = new SharedArrayBuffer(16)
for (const [compress, resource] of [[false, 'configmaps'], [true, 'secrets']] as const) {
  t.test(`ring events of versions replaced in the same commit and later${compress ? ' (compressed)' : ''}`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-shard-ring-'))
    run({ op: 'init', shard: 0, dataDir: dir, counters, heartbeats: new SharedArrayBuffer(8), heartbeatSlot: 0, watchHistoryMs: 60_000, watchHistoryCount: 1000, compress, logLevel: 'silent' })
    const { port1, port2 } = new MessageChannel()
    run({ op: 'attach', port: port2, name: 'test' })
    const c: Client = new PortClient(port1)
    const pushed: WatchEvent[] = []
    c.onPush((evs) => pushed.push(...evs))
    t.teardown(() => { c.close(); rmSync(dir, { recursive: true, force: true }) })
    const prefix = `/${resource}/`
    await c.request({ op: 'watchSubscribe', prefix })
    const base = Number(new BigInt64Array(counters)[0])
    const K = `${prefix}ns/k`
    const L = `${prefix}ns/l`
    // One message, one group commit: k created and replaced, l created and deleted, before any event is published.
    const first = await Promise.all([
      c.request({ op: 'objectPut', key: K, expect: 0, attrs, json: json('k', 'k1') }),
      c.request({ op: 'objectPut', key: K, expect: base + 1, attrs, json: json('k', 'k2') }),
      c.request({ op: 'objectPut', key: L, expect: 0, attrs, json: json('l', 'l1') }),
      c.request({ op: 'objectDelete', key: L, expect: base + 3, attrs, json: json('l', 'l1') }),
    ])
    t.same(first.map((r) => r.ok && r.rv), [base + 1, base + 2, base + 3, base + 4], 'all four in one commit, in order')
    // A later commit replaces k's published version.
    const later = await c.request({ op: 'objectPut', key: K, expect: base + 2, attrs, json: json('k', 'k3') })
    t.equal(later.ok && later.rv, base + 5)
    const b = (n: number) => base + n
    const want = [
      `ADDED ${K} ${b(1)} k1@${b(1)}/${b(1)} prev -`,
      `MODIFIED ${K} ${b(2)} k2@${b(2)}/${b(2)} prev k1@${b(1)}/${b(1)}`,
      `ADDED ${L} ${b(3)} l1@${b(3)}/${b(3)} prev -`,
      `DELETED ${L} ${b(4)} l1@${b(4)}/${b(4)} prev l1@${b(3)}/${b(3)}`,
      `MODIFIED ${K} ${b(5)} k3@${b(5)}/${b(5)} prev k2@${b(2)}/${b(2)}`,
    ]
    await new Promise((resolve) => setTimeout(resolve, 20))
    t.same(pushed.map(show), want, 'pushed events carry their own records')
    for (const from of [base, base + 1, base + 3]) {
      const r = await c.request({ op: 'watchBacklog', prefix, rv: from })
      t.ok(r.ok, `backlog after ${from}`)
      t.same(r.ok ? r.events!.map(show) : [], want.filter((w) => Number(w.split(' ')[2]) > from), `backlog after ${from}: each version's own record`)
    }
    // Watchers resuming together (thousands of kubelets after a restart) share one copy of each stored record: the
    // backlogs of one turn go out in one message, where structured clone copies an object once.
    const together = await Promise.all([1, 2, 3].map(() => c.request({ op: 'watchBacklog', prefix, rv: base + 4 })))
    const recs = together.map((r) => (r.ok ? r.events![0][3] : null))
    t.ok(recs[0] !== null && recs.every((x) => x === recs[0]), 'the current version read once for backlogs of one turn')
    // The pushed tuples are not changed afterwards (they may wait in an outgoing batch).
    t.same(pushed.map(show), want, 'pushed events unchanged')
  })
}
