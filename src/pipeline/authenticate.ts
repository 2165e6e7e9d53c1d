// The authenticate stage: bearer tokens from the static tables, else anonymous (when allowed); a presented bad token is 401.
import { timingSafeEqual } from 'node:crypto'
import { unauthorized } from '../machinery/errors.js'
import type { RequestContext, UserInfo } from './context.js'

export interface AuthnConfig { tokens: Map<string, UserInfo>; anonymous: boolean }

let config: AuthnConfig = { tokens: new Map(), anonymous: true }

export function configureAuthentication(c: AuthnConfig): void { config = c }

const ANONYMOUS: UserInfo = Object.freeze({ username: 'system:anonymous', uid: '', groups: ['system:unauthenticated'] }) as UserInfo

function withAuthenticated(u: UserInfo): UserInfo {
  return u.groups.includes('system:authenticated') ? u : { ...u, groups: [...u.groups, 'system:authenticated'] }
}

/** Map lookup is by the token itself; the final compare is constant-time so no prefix timing leaks. */
function lookupToken(token: string): UserInfo | undefined {
  const u = config.tokens.get(token)
  if (!u) return undefined
  for (const k of config.tokens.keys()) {
    if (k.length === token.length && timingSafeEqual(Buffer.from(k), Buffer.from(token))) return u
  }
  return undefined
}

const cache = new Map<string, UserInfo>()

export function authenticate(ctx: RequestContext): void {
  const h = ctx.headers['authorization']
  if (h === undefined || h === '') {
    if (!config.anonymous) throw unauthorized()
    ctx.user = ANONYMOUS
    return
  }
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h)
  if (!m) throw unauthorized()
  const token = m[1]
  let u = cache.get(token)
  if (!u) {
    const found = lookupToken(token)
    if (!found) throw unauthorized()
    u = withAuthenticated(found)
    cache.set(token, u)
  }
  ctx.user = u
}
