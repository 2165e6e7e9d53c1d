// The front-end's facade of the authz actor: a decision cache in front of batched requests.
import type { MessagePort } from 'node:worker_threads'
import { PortClient } from '../../src/machinery/port-rpc.js'
import type { AuthzRequest, AuthzReply, Attributes } from './messages.js'

const CACHE_LIMIT = 65536

export class AuthzClient extends PortClient<AuthzRequest, AuthzReply> {
  #cache = new Map<string, AuthzReply>()
  #generation = 0

  constructor(port: MessagePort) { super(port) }

  /** Drop every cached decision (an RBAC object changed). */
  invalidate(): void { this.#cache.clear() }

  async authorize(a: Attributes): Promise<AuthzReply> {
    const key = `${a.user}\u0000${a.groups.join(',')}\u0000${a.verb}\u0000${a.apiGroup}\u0000${a.resource}\u0000${a.subresource}\u0000${a.namespace}\u0000${a.name}\u0000${a.isResourceRequest ? '' : a.path}`
    const hit = this.#cache.get(key)
    if (hit) return hit
    const r = await this.request({ op: 'authorize', attrs: a })
    if (r.generation !== this.#generation) { this.#cache.clear(); this.#generation = r.generation }
    if (this.#cache.size >= CACHE_LIMIT) this.#cache.clear()
    this.#cache.set(key, r)
    return r
  }
}
