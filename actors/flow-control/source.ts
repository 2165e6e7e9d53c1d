// Where the flow-control actor reads its configuration: FlowSchemas and PriorityLevelConfigurations straight from their shards' LMDB environments, re-read when their watch events arrive.
import type { MessagePort } from 'node:worker_threads'
import { open, type Database, type RootDatabase } from 'lmdb'
import { PortClient } from '../../src/machinery/port-rpc.js'
import { shardOf } from '../../src/machinery/sharding.js'
import { envOptions, objectsDbOptions, prefixEnd, recordObject, typePrefix } from '../../src/machinery/storage-format.js'
import { FLOWCONTROL_GROUP } from '../../src/registry/resources/flowcontrol.apiserver.orch.io/bootstrap.js'
import type { Obj } from '../../src/registry/define.js'
import type { ShardReply, ShardRequest, WatchEvent } from '../shard/messages.js'

const FS_PREFIX = typePrefix(FLOWCONTROL_GROUP, 'flowschemas')
const PL_PREFIX = typePrefix(FLOWCONTROL_GROUP, 'prioritylevelconfigurations')
/** Events of one burst (the config producer writes a dozen objects) are read once. */
const COALESCE_MS = 5

interface Env { root: RootDatabase; objects: Database<Buffer, string> }

export interface ConfigObjects { flowSchemas: Obj[]; priorityLevels: Obj[] }

export class ConfigSource {
  readonly #envs = new Map<number, Env>()
  readonly #fsShard: number
  readonly #plShard: number
  readonly #clients = new Map<number, PortClient<ShardRequest, ShardReply, WatchEvent>>()
  readonly #onChange: (objs: ConfigObjects) => void
  readonly #onError: (err: unknown) => void
  #timer: NodeJS.Timeout | null = null
  #last = ''

  constructor(dataDir: string, ports: MessagePort[], onChange: (objs: ConfigObjects) => void, onError: (err: unknown) => void) {
    this.#onChange = onChange
    this.#onError = onError
    this.#fsShard = shardOf(FLOWCONTROL_GROUP, 'flowschemas', ports.length)
    this.#plShard = shardOf(FLOWCONTROL_GROUP, 'prioritylevelconfigurations', ports.length)
    for (const s of new Set([this.#fsShard, this.#plShard])) {
      const root = open(envOptions(`${dataDir}/shard-${s}`))
      this.#envs.set(s, { root, objects: root.openDB<Buffer, string>('objects', objectsDbOptions()) })
    }
    ports.forEach((port, s) => {
      if (!this.#envs.has(s)) { port.close(); return }
      const c = new PortClient<ShardRequest, ShardReply, WatchEvent>(port)
      c.onPush((events) => {
        for (const ev of events) {
          if (ev[1].startsWith(FS_PREFIX) || ev[1].startsWith(PL_PREFIX)) { this.#schedule(); return }
        }
      })
      this.#clients.set(s, c)
    })
  }

  /** Subscribes to the two types, then reads them once. */
  async start(): Promise<ConfigObjects> {
    const fsClient = this.#clientOf(this.#fsShard)
    const plClient = this.#clientOf(this.#plShard)
    await Promise.all([fsClient.request({ op: 'watchSubscribe', prefix: FS_PREFIX }), plClient.request({ op: 'watchSubscribe', prefix: PL_PREFIX })])
    return this.read(true)
  }

  /** Reads both types from a fresh snapshot; reports a change (or everything when `force`). */
  read(force = false): ConfigObjects {
    const objs = { flowSchemas: this.#range(this.#fsShard, FS_PREFIX), priorityLevels: this.#range(this.#plShard, PL_PREFIX) }
    const key = JSON.stringify(objs)
    if (force || key !== this.#last) {
      this.#last = key
      this.#onChange(objs)
    }
    return objs
  }

  close(): void {
    if (this.#timer) clearTimeout(this.#timer)
    for (const c of this.#clients.values()) c.close()
  }

  #clientOf(shard: number): PortClient<ShardRequest, ShardReply, WatchEvent> {
    return this.#clients.get(shard) as PortClient<ShardRequest, ShardReply, WatchEvent>
  }

  #schedule(): void {
    if (this.#timer !== null) return
    this.#timer = setTimeout(() => {
      this.#timer = null
      try { this.read() } catch (err) { this.#onError(err) }
    }, COALESCE_MS)
  }

  #range(shard: number, prefix: string): Obj[] {
    const env = this.#envs.get(shard) as Env
    env.root.resetReadTxn()
    const out: Obj[] = []
    for (const { value } of env.objects.getRange({ start: prefix, end: prefixEnd(prefix) })) {
      try { out.push(JSON.parse(recordObject(value as Buffer).toString('utf8')) as Obj) } catch (err) { this.#onError(err) }
    }
    return out
  }
}
