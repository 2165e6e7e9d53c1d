// The flow-control actor: owns the seat counters (max-in-flight mode) and answers their state; APF queues land here later.
import type { MessagePort } from 'node:worker_threads'
import { pino, type Logger } from 'pino'
import { PortPeer } from '../../src/machinery/port-rpc.js'
import { READONLY_SLOT, MUTATING_SLOT, type FlowRequest, type FlowReply } from './messages.js'

export interface FlowInit { op: 'init'; seats: SharedArrayBuffer; rejected: SharedArrayBuffer; logLevel: string; heartbeats: SharedArrayBuffer; heartbeatSlot: number }
export interface FlowAttach { op: 'attach'; port: MessagePort; name: string }
export type FlowTask = FlowInit | FlowAttach | { op: 'ping' }

let seats: Int32Array
let rejected: Int32Array
let log: Logger

export default function run(task: FlowTask): unknown {
  switch (task.op) {
    case 'init': {
      const beats = new Float64Array(task.heartbeats)
      beats[task.heartbeatSlot] = Date.now()
      setInterval(() => { beats[task.heartbeatSlot] = Date.now() }, 100).unref()
      seats = new Int32Array(task.seats)
      rejected = new Int32Array(task.rejected)
      log = pino({ level: task.logLevel }).child({ actor: 'flow-control' })
      return { ok: true }
    }
    case 'attach':
      new PortPeer<FlowRequest, FlowReply>(task.port, task.name, (peer, req) => {
        peer.reply({ id: req.id, readonly: Atomics.load(seats, READONLY_SLOT), mutating: Atomics.load(seats, MUTATING_SLOT), rejected: Atomics.load(rejected, 0) })
      }, (err) => { log.error({ err }, 'flow-control request failed'); return undefined })
      return { ok: true }
    case 'ping':
      return { ok: true }
  }
}
