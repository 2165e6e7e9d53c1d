// The front-end's facade of the authz actor: a decision cache stamped with the shared RBAC versions, in front of batched requests.
import type { MessagePort } from 'node:worker_threads'
import { PortClient } from '../../src/machinery/port-rpc.js'
import { nodeIdentity } from '../../src/machinery/node-refs.js'
import { ApiError } from '../../src/machinery/errors.js'
import { IdentityCache } from '../../src/machinery/identity-cache.js'
import { rbacVersionSlot, graphVersionSlot, chainGenerationSlot, type TokenReviewAnswer, type AuthzRequest, type AuthzReply, type Attributes, type Decision, type RulesAnswer } from './messages.js'

const CACHE_LIMIT = 65536

/** `failure`: an authorizer's error (a failed webhook call); `expires`: when a cached copy goes stale (ms since the epoch). */
export interface AuthzDecision { decision: Decision; reason: string; failure?: string; expires?: number }

const ALLOW: AuthzDecision = Object.freeze({ decision: 'allow', reason: '' }) as AuthzDecision

function decisionOf(r: AuthzReply): AuthzDecision {
  const d: AuthzDecision = { decision: r.decision ?? 'noopinion', reason: r.reason ?? '' }
  if (r.failure) d.failure = r.failure
  return d
}

export class AuthzClient extends PortClient<AuthzRequest, AuthzReply> {
  #cache = new IdentityCache<AuthzDecision>(CACHE_LIMIT)
  /** The chain is AlwaysAllow alone (or starts with it): every request is allowed without asking. */
  #alwaysAllow = false
  /** Webhooks may be in the chain: their decisions depend on uid, extra and selectors too, and expire. */
  #webhooks = false
  /** The RBAC stamp the cached decisions were made at; the cache is dropped when it moves. */
  #stamp = -1
  #versions: BigInt64Array | null
  #shards: number

  /** `versions`: the shared authz version counters (see messages.ts); without them nothing is cached. */
  constructor(port: MessagePort, versions?: SharedArrayBuffer, shards = 0) {
    // Requests of one event-loop turn travel in one message (kubelets' node-authorized requests are never cached).
    super(port, 'immediate')
    this.#versions = versions ? new BigInt64Array(versions) : null
    this.#shards = shards
  }

  /** Per shard, the last acknowledged write the actor must have applied (RBAC types, and the graph types when asked). */
  versions(withGraph: boolean): number[] {
    const v = this.#versions
    if (!v) return []
    const out = new Array<number>(this.#shards)
    for (let s = 0; s < this.#shards; s++) {
      const r = Number(Atomics.load(v, rbacVersionSlot(s)))
      out[s] = withGraph ? Math.max(r, Number(Atomics.load(v, graphVersionSlot(this.#shards, s)))) : r
    }
    return out
  }

  /** One number that moves whenever any shard acknowledges an RBAC write. */
  #rbacStamp(): number {
    const v = this.#versions
    if (!v) return -1
    let sum = 0
    for (let s = 0; s < this.#shards; s++) sum += Number(Atomics.load(v, rbacVersionSlot(s)))
    // The chain's generation moves when --authorization-config is reloaded.
    return sum + Number(Atomics.load(v, chainGenerationSlot(this.#shards)))
  }

  /** Webhooks may be in the chain (they are sent label selectors, which nothing else reads). */
  get webhooks(): boolean { return this.#webhooks }

  /** Drop every cached decision. */
  invalidate(): void { this.#cache.clear() }

  /**
   * The authorization chain (--authorization-mode): one that starts with AlwaysAllow allows everything at once.
   * `dynamic`: the chain comes from --authorization-config and may change.
   */
  setModes(modes: readonly string[], dynamic = false): void {
    this.#alwaysAllow = modes[0] === 'AlwaysAllow' && !dynamic
    this.#webhooks = dynamic || modes.includes('Webhook')
  }

  /**
   * A cached decision is answered synchronously (no promise on the hot path); a miss asks the actor.
   * The cache is filed by identity (machinery/identity-cache.ts), then by the rest of the attributes as one string.
   */
  authorize(a: Attributes): AuthzDecision | Promise<AuthzDecision> {
    if (this.#alwaysAllow) return ALLOW
    if (a.groups.includes('system:masters')) return ALLOW
    // A node's decisions follow the pod graph, which changes all the time: never cached, always current.
    if (nodeIdentity(a.user, a.groups).isNode) return this.#ask(a, this.versions(true))
    const stamp = this.#rbacStamp()
    if (stamp < 0) return this.#ask(a, [])
    if (stamp !== this.#stamp) { this.#cache.clear(); this.#stamp = stamp }
    const byAttrs = this.#cache.entries(a.groups)
    let key = `${a.user}\u0000${a.verb}\u0000${a.apiGroup}\u0000${a.resource}\u0000${a.subresource}\u0000${a.namespace}\u0000${a.name}\u0000${a.isResourceRequest ? '' : a.path}`
    if (this.#webhooks) key += `\u0000${a.uid}\u0000${a.extra ? JSON.stringify(a.extra) : ''}\u0000${a.fieldSelector ?? ''}\u0000${a.labelSelector ?? ''}`
    const hit = byAttrs.get(key)
    if (hit !== undefined && (hit.expires === undefined || hit.expires > Date.now())) return hit
    return this.#askAndKeep(a, stamp, byAttrs, key)
  }

  async #askAndKeep(a: Attributes, stamp: number, byAttrs: Map<string, AuthzDecision>, key: string): Promise<AuthzDecision> {
    const asked = Date.now()
    const r = await this.request({ op: 'authorize', attrs: a, versions: this.versions(false) })
    const d = decisionOf(r)
    // Kept only while no RBAC write was acknowledged since the question was asked, and no longer than the webhooks' TTLs.
    if (r.ttl !== undefined) {
      if (r.ttl <= 0) return d
      d.expires = asked + r.ttl
    }
    if (this.#rbacStamp() === stamp && this.#stamp === stamp) this.#cache.set(byAttrs, key, d)
    return d
  }

  async #ask(a: Attributes, versions: number[]): Promise<AuthzDecision> {
    return decisionOf(await this.request({ op: 'authorize', attrs: a, versions }))
  }

  /** The authentication webhook's review of a token (the actor calls it and caches its answers). */
  async tokenReview(token: string, audiences: string[]): Promise<TokenReviewAnswer> {
    const r = await this.request({ op: 'tokenReview', token, audiences })
    return r.tokenReview ?? { ok: false, error: 'no answer', expires: 0 }
  }

  /** The rules a user holds in a namespace (every authorizer's, as SelfSubjectRulesReview reports them). */
  async rules(user: string, groups: string[], namespace: string): Promise<RulesAnswer> {
    const r = await this.request({ op: 'rules', user, groups, namespace, versions: this.versions(false) })
    return r.rules ?? { resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: 'no answer' }
  }

  /** The escalation check of an RBAC object write: the 403 to answer, or undefined. */
  async checkWrite(user: string, groups: string[], object: unknown, old?: unknown): Promise<ApiError | undefined> {
    const r = await this.request({
      op: 'writeCheck', user, groups, object: JSON.stringify(object), old: old === undefined ? undefined : JSON.stringify(old), versions: this.versions(false),
    })
    if (!r.error) return undefined
    return new ApiError(r.error.code, r.error.reason, r.error.message, r.error.details as never)
  }
}
