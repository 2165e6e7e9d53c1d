// The front-end's view of storage: direct LMDB reads of every shard's environment, writes and watches through each shard's client.
import { open, type RootDatabase, type Database } from 'lmdb'
import type { MessagePort } from 'node:worker_threads'
import { ShardClient } from '../../actors/shard/client.js'
import { COUNTER_SLOT, watermarkSlot, type ShardReply } from '../../actors/shard/messages.js'
import { shardOf } from '../machinery/sharding.js'
import { indexRange, objectsDbOptions, prefixEnd } from '../machinery/storage-format.js'

interface ShardEnv {
  root: RootDatabase; objects: Database<Buffer, string>; meta: Database<number, string>; index: Database<Buffer, string>
  /** The shard's watermark when the read snapshot was last renewed (-1: never). */
  freshAt: bigint
}

export class Store {
  readonly shards: number
  readonly clients: ShardClient[]
  #envs: ShardEnv[] = []
  #counters: BigInt64Array

  constructor(dataDir: string, counters: SharedArrayBuffer, ports: MessagePort[]) {
    this.shards = ports.length
    this.#counters = new BigInt64Array(counters)
    this.clients = ports.map((p, i) => new ShardClient(i, p))
    for (let i = 0; i < ports.length; i++) {
      const root = open({ path: `${dataDir}/shard-${i}`, mapSize: 64 * 1024 ** 3, maxDbs: 4 })
      this.#envs.push({
        root,
        objects: root.openDB<Buffer, string>('objects', objectsDbOptions()),
        meta: root.openDB<number, string>('meta', { encoding: 'msgpack' }),
        index: root.openDB<Buffer, string>('index', { encoding: 'binary' }),
        freshAt: -1n,
      })
    }
  }

  shardFor(group: string, resource: string): number { return shardOf(group, resource, this.shards) }

  /**
   * The newest committed record of a key. The read snapshot is renewed only when the shard's watermark moved since
   * it was last renewed: the shard advances it after each commit and before acknowledging it (commits complete in
   * order), so an unchanged watermark means no write was acknowledged since, and a read-mostly load skips renewals.
   */
  getFresh(shard: number, key: string): Buffer | undefined {
    const env = this.#envs[shard]
    this.#renew(shard, env)
    return env.objects.getBinary(key)
  }

  #renew(shard: number, env: ShardEnv): void {
    const wm = Atomics.load(this.#counters, watermarkSlot(shard))
    if (wm === env.freshAt) return
    env.root.resetReadTxn()
    env.freshAt = wm
  }

  /** The resourceVersion of a key in the current snapshot (0: absent), read without copying the record. */
  peekRv(shard: number, key: string): number {
    const b = this.#envs[shard].objects.getBinaryFast(key)
    return b ? b.readDoubleLE(0) : 0
  }

  /** A record from the current snapshot of this turn. */
  get(shard: number, key: string): Buffer | undefined {
    return this.#envs[shard].objects.getBinary(key)
  }

  /**
   * A fresh snapshot and the resourceVersion it stands for: the shard's published watermark read before the
   * snapshot, or the shard's last commit inside it when that is newer.
   */
  snapshot(shard: number): number {
    const wmBig = Atomics.load(this.#counters, watermarkSlot(shard))
    const wm = Number(wmBig)
    const env = this.#envs[shard]
    env.root.resetReadTxn()
    env.freshAt = wmBig
    const committed = env.meta.get('rv') ?? 0
    return Math.max(wm, committed)
  }

  /** Records under a prefix in key order, starting after `after` (exclusive) when given. */
  *range(shard: number, prefix: string, after?: string): Generator<{ key: string; value: Buffer }> {
    const start = after !== undefined ? after + '\u0000' : prefix
    for (const { key, value } of this.#envs[shard].objects.getRange({ start, end: prefixEnd(prefix) })) {
      yield { key: key as string, value: value as Buffer }
    }
  }

  /**
   * Records of a type whose indexed `field` equals `value`, in key order, under `keyPrefix` (a namespace or the
   * type), after `after` when given: the shard's secondary index, read in the same snapshot as the objects.
   */
  *rangeIndexed(shard: number, typePrefix: string, field: string, value: string, keyPrefix: string, after?: string): Generator<{ key: string; value: Buffer }> {
    const env = this.#envs[shard]
    const [start, end] = indexRange(typePrefix, field, value)
    const from = after !== undefined && after >= keyPrefix ? `${start}${after}\u0000` : `${start}${keyPrefix}`
    for (const k of env.index.getKeys({ start: from, end })) {
      const key = (k as string).slice(start.length)
      if (!key.startsWith(keyPrefix)) break
      const value = env.objects.getBinary(key)
      if (value) yield { key, value }
    }
  }

  /** Number of objects under a type or type-and-namespace prefix, in the current snapshot (kept by the shard). */
  count(shard: number, prefix: string): number {
    return this.#envs[shard].meta.get(`n:${prefix}`) ?? 0
  }

  watermark(shard: number): number { return Number(Atomics.load(this.#counters, watermarkSlot(shard))) }
  counter(): number { return Number(Atomics.load(this.#counters, COUNTER_SLOT)) }

  put(shard: number, key: string, expect: number, attrs: string, json: string): Promise<ShardReply> {
    return this.clients[shard].request({ op: 'objectPut', key, expect, attrs, json })
  }

  remove(shard: number, key: string, expect: number, attrs: string, json: string): Promise<ShardReply> {
    return this.clients[shard].request({ op: 'objectDelete', key, expect, attrs, json })
  }

  /** A cheap liveness probe of the store: a read of the meta database of every shard. */
  check(): void {
    for (const e of this.#envs) e.meta.get('rv')
  }
}
