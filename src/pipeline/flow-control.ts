// The flow-control stage: take a seat under the max-in-flight limits (shared counters, no hop), or answer 429.
import { tooManyRequestsPlain } from '../machinery/errors.js'
import { READONLY_SLOT, MUTATING_SLOT } from '../../actors/flow-control/messages.js'
import type { RequestContext } from './context.js'

export interface FlowConfig { seats: SharedArrayBuffer; rejected: SharedArrayBuffer; maxReadonly: number; maxMutating: number }

let seats: Int32Array
let rejected: Int32Array
let limits: number[] = [0, 0]

export function configureFlowControl(c: FlowConfig): void {
  seats = new Int32Array(c.seats)
  rejected = new Int32Array(c.rejected)
  limits = [c.maxReadonly, c.maxMutating]
}

const MUTATING = new Set(['create', 'update', 'patch', 'delete', 'deletecollection'])
/** Long-running requests hold no seat (upstream exempts them from max-in-flight). */
const LONG_RUNNING = new Set(['watch', 'proxy'])

export function flowControl(ctx: RequestContext): void {
  const verb = ctx.info.verb
  if (LONG_RUNNING.has(verb)) return
  if (ctx.user?.groups.includes('system:masters')) return
  const slot = ctx.info.isResourceRequest && MUTATING.has(verb) ? MUTATING_SLOT : READONLY_SLOT
  const limit = limits[slot]
  if (limit === 0) return
  const now = Atomics.add(seats, slot, 1) + 1
  if (now > limit) {
    Atomics.sub(seats, slot, 1)
    Atomics.add(rejected, 0, 1)
    throw tooManyRequestsPlain(1)
  }
  ctx.seat = slot
}

export function releaseSeat(ctx: RequestContext): void {
  if (ctx.seat >= 0) {
    Atomics.sub(seats, ctx.seat, 1)
    ctx.seat = -1
  }
}
