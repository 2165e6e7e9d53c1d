// Webhook token authentication (--authentication-token-webhook-*): a TokenReview POSTed to the webhook, its
// decisions cached for the TTL under a hash of the token (the token itself is never a key nor logged).
import { createHmac, randomBytes } from 'node:crypto'
import { WebhookClient, checkReplyKind, loadWebhookKubeconfig } from '../../src/machinery/webhook-client.js'
import type { TokenReviewAnswer } from './messages.js'

export interface TokenWebhookOptions { file: string; version: string; ttlMs: number; apiAudiences: string[] }

const GROUP = 'authentication.orch.io'
const CACHE_LIMIT = 8192
/** Upstream LoadKubeconfig: every call to a webhook has a 30 s timeout. */
const TIMEOUT_MS = 30_000

interface Entry { answer: TokenReviewAnswer; expires: number }

export class TokenWebhook {
  readonly #client: WebhookClient
  readonly #opts: TokenWebhookOptions
  readonly #cache = new Map<string, Entry>()
  /** Keys are an HMAC of token and audiences under a per-process secret. */
  readonly #secret = randomBytes(32)
  /** Concurrent reviews of one token share one call. */
  readonly #inflight = new Map<string, Promise<TokenReviewAnswer>>()

  readonly #report: (failure: string) => void

  /** `report`: where a failed call is logged (upstream logs every one). */
  constructor(opts: TokenWebhookOptions, report: (failure: string) => void = () => {}) {
    this.#opts = opts
    this.#report = report
    this.#client = new WebhookClient(loadWebhookKubeconfig(opts.file), TIMEOUT_MS)
  }

  review(token: string, audiences: string[]): TokenReviewAnswer | Promise<TokenReviewAnswer> {
    const h = createHmac('sha256', this.#secret).update(token)
    for (const a of audiences) h.update('\u0000').update(a)
    const key = h.digest('base64')
    const hit = this.#cache.get(key)
    const now = Date.now()
    if (hit) {
      if (hit.expires > now) return hit.answer
      this.#cache.delete(key)
    }
    let p = this.#inflight.get(key)
    if (p === undefined) {
      p = this.#call(token, audiences, key).finally(() => this.#inflight.delete(key))
      this.#inflight.set(key, p)
    }
    return p
  }

  async #call(token: string, audiences: string[], key: string): Promise<TokenReviewAnswer> {
    const v = this.#opts.version
    const spec: Record<string, unknown> = { token }
    if (audiences.length > 0) spec.audiences = audiences
    let body: Record<string, any>
    try {
      body = (await this.#client.post({ kind: 'TokenReview', apiVersion: `${GROUP}/${v}`, metadata: { creationTimestamp: null }, spec, status: { user: {} } })).body
    } catch (err) {
      // Errors (outage, bad configuration) are not cached: the next request asks again.
      this.#report((err as Error).message)
      return { ok: false, error: (err as Error).message, expires: 0 }
    }
    const bad = checkReplyKind(body, GROUP, v, 'TokenReview')
    if (bad) return { ok: false, error: bad, expires: 0 }
    const st = (body.status ?? {}) as Record<string, any>
    let answer: TokenReviewAnswer
    let granted = audiences
    if (audiences.length > 0) {
      // Audiences the webhook names (or else the API audiences) must meet the ones asked for.
      const got: string[] = Array.isArray(st.audiences) && st.audiences.length > 0 ? st.audiences.map(String) : this.#opts.apiAudiences
      granted = audiences.filter((a) => got.includes(a))
    }
    const expires = Date.now() + this.#opts.ttlMs
    if (audiences.length > 0 && granted.length === 0) {
      answer = { ok: false, error: '', expires }
    } else if (st.authenticated !== true) {
      // authenticated: false with an error text is an error (not cached), without one a plain "no" (cached).
      const error = typeof st.error === 'string' ? st.error : ''
      answer = { ok: false, error, expires: error === '' ? expires : 0 }
    } else {
      const u = (st.user ?? {}) as Record<string, any>
      const user: TokenReviewAnswer['user'] = {
        username: typeof u.username === 'string' ? u.username : '',
        uid: typeof u.uid === 'string' ? u.uid : '',
        groups: Array.isArray(u.groups) ? u.groups.map(String) : [],
      }
      if (u.extra && typeof u.extra === 'object') {
        const extra: Record<string, string[]> = {}
        for (const [k, vals] of Object.entries(u.extra as Record<string, unknown>)) extra[k] = Array.isArray(vals) ? vals.map(String) : []
        user!.extra = extra
      }
      answer = { ok: true, user, audiences: granted, error: '', expires }
    }
    if (answer.expires > 0 && this.#opts.ttlMs > 0) {
      if (this.#cache.size >= CACHE_LIMIT) {
        const oldest = this.#cache.keys().next().value
        if (oldest !== undefined) this.#cache.delete(oldest)
      }
      this.#cache.set(key, { answer, expires: answer.expires })
    }
    return answer
  }
}
