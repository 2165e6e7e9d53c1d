// The front-end side of webhook token authentication: the authz actor calls the webhook and caches its answers for
// the TTL; each front-end keeps an answer until the same expiry, under a hash of the token (never the token itself).
import { createHash } from 'node:crypto'
import type { UserInfo } from '../pipeline/context.js'
import type { TokenReviewAnswer } from '../../actors/authz/messages.js'


export type WebhookTokenResult = { ok: true; user: UserInfo; audiences: string[] } | { ok: false; error: string }

const LIMIT = 4096

/**
 * A token authenticator over `review` (the actor's tokenReview). `authenticated` adds system:authenticated once per
 * answer, so one identity keeps one user object (and one groups array) while it is cached.
 */
export function webhookTokenAuthenticator(
  review: (token: string, audiences: string[]) => Promise<TokenReviewAnswer>,
  authenticated: (u: UserInfo) => UserInfo,
): (token: string, audiences: string[]) => Promise<WebhookTokenResult> {
  const cache = new Map<string, { result: WebhookTokenResult; expires: number }>()
  return async (token, audiences) => {
    const h = createHash('sha256').update(token)
    for (const a of audiences) h.update('\u0000').update(a)
    const key = h.digest('base64')
    const hit = cache.get(key)
    if (hit) {
      if (hit.expires > Date.now()) return hit.result
      cache.delete(key)
    }
    const r = await review(token, audiences)
    let result: WebhookTokenResult
    if (r.ok && r.user) {
      const u: UserInfo = { username: r.user.username, uid: r.user.uid, groups: r.user.groups }
      if (r.user.extra) u.extra = r.user.extra
      result = { ok: true, user: authenticated(u), audiences: r.audiences ?? audiences }
    } else {
      result = { ok: false, error: r.error }
    }
    if (r.expires > Date.now()) {
      if (cache.size >= LIMIT) {
        const oldest = cache.keys().next().value
        if (oldest !== undefined) cache.delete(oldest)
      }
      cache.set(key, { result, expires: r.expires })
    }
    return result
  }
}
