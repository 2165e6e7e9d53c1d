// The authz actor: owns the authorizer chain of --authorization-mode and answers decisions for the front-ends.
import type { MessagePort } from 'node:worker_threads'
import { pino, type Logger } from 'pino'
import { PortPeer } from '../../src/machinery/port-rpc.js'
import type { AuthzRequest, AuthzReply, Attributes, Decision } from './messages.js'

export interface AuthzInit { op: 'init'; modes: string[]; logLevel: string; heartbeats: SharedArrayBuffer; heartbeatSlot: number }
export interface AuthzAttach { op: 'attach'; port: MessagePort; name: string }
export type AuthzTask = AuthzInit | AuthzAttach | { op: 'ping' }

type Authorizer = (a: Attributes) => { decision: Decision; reason: string }

const authorizers: Record<string, Authorizer> = {
  AlwaysAllow: () => ({ decision: 'allow', reason: '' }),
  AlwaysDeny: () => ({ decision: 'deny', reason: 'Everything is forbidden.' }),
}

let chain: Authorizer[] = []
let log: Logger
/** Bumped whenever the chain's inputs change, so front-ends drop their caches. */
const generation = 1

export function decide(chain: Authorizer[], a: Attributes): { decision: Decision; reason: string } {
  // system:masters is allowed before any authorizer runs (upstream's privileged-group authorizer).
  if (a.groups.includes('system:masters')) return { decision: 'allow', reason: '' }
  for (const z of chain) {
    const d = z(a)
    if (d.decision !== 'noopinion') return d
  }
  return { decision: 'noopinion', reason: '' }
}

export default function run(task: AuthzTask): unknown {
  switch (task.op) {
    case 'init': {
      const beats = new Float64Array(task.heartbeats)
      beats[task.heartbeatSlot] = Date.now()
      setInterval(() => { beats[task.heartbeatSlot] = Date.now() }, 100).unref()
      log = pino({ level: task.logLevel }).child({ actor: 'authz' })
      chain = task.modes.map((m) => {
        const z = authorizers[m]
        if (!z) throw new Error(`unsupported authorization mode ${m}`)
        return z
      })
      return { ok: true }
    }
    case 'attach':
      new PortPeer<AuthzRequest, AuthzReply>(task.port, task.name, (peer, req) => {
        if (req.op === 'authorize') peer.reply({ id: req.id, ...decide(chain, req.attrs), generation })
        else peer.reply({ id: req.id, decision: 'noopinion', reason: '', generation })
      }, (err, req) => {
        log.error({ err }, 'authorize failed')
        return req ? { id: req.id, decision: 'noopinion', reason: 'internal error', generation } : undefined
      })
      return { ok: true }
    case 'ping':
      return { ok: true }
  }
}
