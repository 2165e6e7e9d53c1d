// The facade a front-end (or the main thread) holds for one shard: batched requests over its own port, replies by id, events pushed.
import type { MessagePort } from 'node:worker_threads'
import { PortClient } from '../../src/machinery/port-rpc.js'
import type { ShardRequest, ShardReply, WatchEvent } from './messages.js'

export class ShardClient extends PortClient<ShardRequest, ShardReply, WatchEvent> {
  readonly shard: number
  /** Requests of one loop turn go together (see FlushAt): a write-heavy front-end otherwise posts one message per write. */
  constructor(shard: number, port: MessagePort) {
    super(port, 'immediate')
    this.shard = shard
  }
}
