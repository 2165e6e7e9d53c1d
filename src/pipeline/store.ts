// The front-end's view of storage: direct LMDB reads of every shard's environment, writes and watches through each shard's client.
import { open, type RootDatabase, type Database, type Transaction } from 'lmdb'
import type { MessagePort } from 'node:worker_threads'
import { ShardClient } from '../../actors/shard/client.js'
import { COUNTER_SLOT, watermarkSlot, namespaceWritesSlot, priorityClassWritesSlot, admissionPolicyWritesSlot, limitRangeWritesSlot, resourceQuotaSetWritesSlot, serviceAccountWritesSlot, crdWritesSlot, webhookConfigWritesSlot, type ShardReply } from '../../actors/shard/messages.js'
import { shardOf } from '../machinery/sharding.js'
import { envOptions, indexRange, objectsDbOptions, prefixEnd, recordObjectOffset } from '../machinery/storage-format.js'

interface ShardEnv {
  root: RootDatabase; objects: Database<Buffer, string> & ReadsIn; meta: Database<number, string>; index: Database<Buffer, string>
  /** The objects database again, read without a copy per record (see RawEntry). */
  raw: Database<number, string>
  /** The snapshot fresh reads use (as read options), held across event-loop turns while the watermark stays put (see #fresh). */
  held: { transaction: Transaction } | undefined
  heldAt: bigint
}

/** A held snapshot no read renewed for this long after a write is let go (it would keep LMDB from reusing pages). */
const RELEASE_STALE_MS = 500

const SLAB_SIZE = 256 * 1024
const SLAB_MAX_VALUE = 16 * 1024
let slab = Buffer.allocUnsafeSlow(SLAB_SIZE)
let slabAt = 0

/** A copy of `bytes` in the current slab (a new slab when it is full; big values get a buffer of their own). */
function slabCopy(bytes: Uint8Array): Buffer {
  const n = bytes.length
  if (n > SLAB_MAX_VALUE) return Buffer.from(bytes)
  if (slabAt + n > SLAB_SIZE) { slab = Buffer.allocUnsafeSlow(SLAB_SIZE); slabAt = 0 }
  slab.set(bytes, slabAt)
  const out = slab.subarray(slabAt, slabAt + n)
  slabAt = (slabAt + n + 7) & ~7
  return out
}

/**
 * One record of a raw range read: `rec[0, size)` are the stored bytes, in lmdb's shared read buffer (or the map),
 * valid only until the next read on this thread. The same object is reused for every record of a range.
 */
export interface RawEntry { key: string; rec: Uint8Array; size: number }

let rawBytes: Uint8Array = new Uint8Array(0)
/**
 * A value "decoder" that keeps no copy: lmdb hands it its shared buffer (`needsStableBuffer` unset), and the range
 * gets the size while `rawBytes` points at the bytes. The list path copies what it needs straight into the body.
 */
const RAW = {
  encode(): never { throw new Error('the raw objects handle is read-only') },
  decode(bytes: Uint8Array, size: number): number { rawBytes = bytes; return size },
}

export type ReadTxn = Transaction

/** lmdb's binary reads take a transaction too (its types omit the options). */
interface ReadsIn {
  getBinaryFast(key: string, opts?: { transaction: Transaction }): Buffer | undefined
  getBinary(key: string, opts?: { transaction: Transaction }): Buffer | undefined
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
      const root = open(envOptions(`${dataDir}/shard-${i}`))
      this.#envs.push({
        root,
        objects: root.openDB<Buffer, string>('objects', objectsDbOptions()) as Database<Buffer, string> & ReadsIn,
        meta: root.openDB<number, string>('meta', { encoding: 'msgpack' }),
        index: root.openDB<Buffer, string>('index', { encoding: 'binary' }),
        raw: root.openDB<number, string>('objects', { encoder: RAW, compression: objectsDbOptions().compression } as never),
        held: undefined,
        heldAt: -1n,
      })
    }
    setInterval(() => this.#releaseStale(), RELEASE_STALE_MS).unref()
  }

  shardFor(group: string, resource: string): number { return shardOf(group, resource, this.shards) }

  /**
   * The newest committed record of a key. The read snapshot is renewed only when the shard's watermark moved since
   * it was last renewed: the shard advances it after each commit and before acknowledging it (commits complete in
   * order), so an unchanged watermark means no write was acknowledged since, and a read-mostly load skips renewals.
   */
  getFresh(shard: number, key: string): Buffer | undefined {
    const env = this.#envs[shard]
    return env.objects.getBinary(key, this.#fresh(shard, env))
  }

  /**
   * getFresh for an answer written out at once: the bytes are copied into a shared slab instead of a buffer of
   * their own (no ArrayBuffer per read). Never keep the result or post it to another thread (a structured clone
   * copies the whole slab).
   */
  getFreshTransient(shard: number, key: string): Buffer | undefined {
    const env = this.#envs[shard]
    const fast = env.objects.getBinaryFast(key, this.#fresh(shard, env))
    if (fast === undefined) return undefined
    // LMDB's reusable buffer reports the value's size as its length; its typed-array extent is larger.
    return slabCopy(new Uint8Array(fast.buffer, fast.byteOffset, fast.length))
  }

  /**
   * The object's JSON bytes of the newest committed record of a key, as getFreshTransient gives them (copied into the
   * shared slab: never keep them or post them to another thread), with no view of the whole record made on the way.
   */
  getFreshObjectTransient(shard: number, key: string): Buffer | undefined {
    const env = this.#envs[shard]
    const fast = env.objects.getBinaryFast(key, this.#fresh(shard, env))
    if (fast === undefined) return undefined
    // fast.length is the value's size (lmdb's reusable buffer; its typed-array extent is larger).
    return slabCopy(fast.subarray(recordObjectOffset(fast), fast.length))
  }

  /**
   * Fresh reads go through a read transaction this store holds itself: lmdb-js would otherwise renew and reset its
   * own snapshot on every event-loop turn that reads (a timer and two native calls per turn). It is replaced only
   * when the shard's watermark moved, which the shard does after each commit and before acknowledging it, so a
   * read after an acknowledged write always sees it.
   */
  #fresh(shard: number, env: ShardEnv): { transaction: Transaction } {
    const wm = Atomics.load(this.#counters, watermarkSlot(shard))
    if (env.held !== undefined && wm === env.heldAt) return env.held
    this.#release(env)
    // lmdb-js's own snapshot may be from earlier in this turn: reset it so the one handed to us is taken now.
    env.root.resetReadTxn()
    env.held = { transaction: env.root.useReadTransaction() }
    env.heldAt = wm
    return env.held
  }

  #releaseStale(): void {
    for (let shard = 0; shard < this.#envs.length; shard++) {
      const env = this.#envs[shard]
      if (env.held === undefined || Atomics.load(this.#counters, watermarkSlot(shard)) === env.heldAt) continue
      this.#release(env)
    }
  }

  #release(env: ShardEnv): void {
    if (env.held === undefined) return
    env.held.transaction.done()
    env.held = undefined
    env.heldAt = -1n
  }

  /** A record from a snapshot taken now (the read transaction is renewed whatever the watermark says). */
  getNewest(shard: number, key: string): Buffer | undefined {
    const env = this.#envs[shard]
    this.#release(env)
    return env.objects.getBinary(key, this.#fresh(shard, env))
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
    // Fresh reads after this one must not use an older snapshot than this (the committed version may be ahead of
    // the published watermark): the held one is let go, the next fresh read takes a new one.
    this.#release(env)
    env.root.resetReadTxn()
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
   * A read transaction on the shard's current snapshot (the one the last snapshot() or read renewed), held until
   * done() even across turns of the event loop: a list that yields or streams reads one consistent snapshot.
   */
  readTxn(shard: number): ReadTxn {
    return this.#envs[shard].root.useReadTransaction()
  }

  /** range() without a copy per record: the entry (reused) points into lmdb's buffer until the next read. */
  *rawRange(shard: number, prefix: string, after: string | undefined, txn: ReadTxn): Generator<RawEntry> {
    const start = after !== undefined ? after + '\u0000' : prefix
    const e: RawEntry = { key: '', rec: rawBytes, size: 0 }
    for (const { key, value } of this.#envs[shard].raw.getRange({ start, end: prefixEnd(prefix), transaction: txn })) {
      e.key = key as string
      e.rec = rawBytes
      e.size = value as number
      yield e
    }
  }

  /** rangeIndexed() without a copy per record, as rawRange. */
  *rawRangeIndexed(shard: number, typePrefix: string, field: string, value: string, keyPrefix: string, after: string | undefined, txn: ReadTxn): Generator<RawEntry> {
    const env = this.#envs[shard]
    const [start, end] = indexRange(typePrefix, field, value)
    const from = after !== undefined && after >= keyPrefix ? `${start}${after}\u0000` : `${start}${keyPrefix}`
    const e: RawEntry = { key: '', rec: rawBytes, size: 0 }
    const opts = { transaction: txn }
    for (const k of env.index.getKeys({ start: from, end, transaction: txn })) {
      const key = (k as string).slice(start.length)
      if (!key.startsWith(keyPrefix)) break
      const b = env.objects.getBinaryFast(key, opts)
      if (!b) continue
      e.key = key
      e.rec = b
      e.size = (env.objects as unknown as { lastSize: number }).lastSize
      yield e
    }
  }

  /** Keys under a prefix in a held read transaction, counted in lmdb (no key or value reaches JavaScript). */
  countKeysIn(shard: number, prefix: string, txn: ReadTxn): number {
    return this.#envs[shard].objects.getKeysCount({ start: prefix, end: prefixEnd(prefix), transaction: txn } as never)
  }

  /** get() in a held read transaction. */
  getIn(shard: number, key: string, txn: ReadTxn): Buffer | undefined {
    return this.#envs[shard].objects.getBinary(key, { transaction: txn })
  }

  /** count() in a held read transaction. */
  countIn(shard: number, prefix: string, txn: ReadTxn): number {
    return this.#envs[shard].meta.get(`n:${prefix}`, { transaction: txn } as never) ?? 0
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

  /** How many namespace writes were acknowledged so far (moves before each is acknowledged). */
  namespaceWrites(): bigint { return Atomics.load(this.#counters, namespaceWritesSlot(this.shards)) }

  /** How many PriorityClass writes were acknowledged so far (moves before each is acknowledged). */
  priorityClassWrites(): bigint { return Atomics.load(this.#counters, priorityClassWritesSlot(this.shards)) }
  /** How many ValidatingAdmissionPolicy and binding writes were acknowledged so far (moves before each is acknowledged). */
  admissionPolicyWrites(): bigint { return Atomics.load(this.#counters, admissionPolicyWritesSlot(this.shards)) }

  /** How many LimitRange writes were acknowledged so far (moves before each is acknowledged). */
  limitRangeWrites(): bigint { return Atomics.load(this.#counters, limitRangeWritesSlot(this.shards)) }

  /** How many ResourceQuota creations and deletions were acknowledged so far (moves before each is acknowledged). */
  resourceQuotaSetWrites(): bigint { return Atomics.load(this.#counters, resourceQuotaSetWritesSlot(this.shards)) }

  /** How many ServiceAccount writes were acknowledged so far (moves before each is acknowledged). */
  serviceAccountWrites(): bigint { return Atomics.load(this.#counters, serviceAccountWritesSlot(this.shards)) }
  /** How many CustomResourceDefinition writes were acknowledged so far (moves before each is acknowledged). */
  crdWrites(): bigint { return Atomics.load(this.#counters, crdWritesSlot(this.shards)) }
  /** How many webhook configuration writes were acknowledged so far (moves before each is acknowledged). */
  webhookConfigWrites(): bigint { return Atomics.load(this.#counters, webhookConfigWritesSlot(this.shards)) }

  watermark(shard: number): number { return Number(Atomics.load(this.#counters, watermarkSlot(shard))) }
  counter(): number { return Number(Atomics.load(this.#counters, COUNTER_SLOT)) }

  /**
   * A conditional write. `urgent`: sent to the shard at the end of this callback instead of the end of the loop turn
   * (see sendAtOnce in write.ts).
   */
  put(shard: number, key: string, expect: number, attrs: string, json: string, urgent = false): Promise<ShardReply> {
    return this.clients[shard].request({ op: 'objectPut', key, expect, attrs, json }, urgent)
  }

  remove(shard: number, key: string, expect: number, attrs: string, json: string, urgent = false): Promise<ShardReply> {
    return this.clients[shard].request({ op: 'objectDelete', key, expect, attrs, json }, urgent)
  }

  /** A cheap liveness probe of the store: a read of the meta database of every shard. */
  check(): void {
    for (const e of this.#envs) e.meta.get('rv')
  }
}
