// Messages and shared counters of the flow-control actor.

/** Int32 slots of the shared seat counters: requests in flight by class. */
export const READONLY_SLOT = 0
export const MUTATING_SLOT = 1
export const SEAT_SLOTS = 2

export interface StatsRequest { id: number; op: 'stats' }
export type FlowRequest = StatsRequest
export interface FlowReply { id: number; readonly: number; mutating: number; rejected: number }
