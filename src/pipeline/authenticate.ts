// The authenticate stage: bearer tokens (static file, bootstrap tokens, service-account JWTs, OIDC JWTs, behind a bounded cache), else anonymous; a presented bad token is 401.
import { unauthorized } from '../machinery/errors.js'
import { objectKey, recordObject, recordRv } from '../machinery/storage-format.js'
import { verifyToken, type ServiceAccountLookups, type VerificationKey } from '../auth/service-account.js'
import { authenticateBootstrapToken, parseBootstrapToken } from '../auth/bootstrap-token.js'
import { impersonate } from './impersonate.js'
import type { JwtAuthenticators } from '../auth/jwt-setup.js'
import { authenticatePeer, type CertAuthnConfig } from '../auth/x509.js'
import type { Store } from './store.js'
import type { RequestContext, UserInfo } from './context.js'

export interface ServiceAccountAuthn {
  /** Accepted issuers of bound tokens (the first one signs). */
  issuers: string[]
  keys: VerificationKey[]
  /** --service-account-lookup: legacy tokens are checked against their Secret and ServiceAccount. */
  lookup: boolean
}

export interface AuthnConfig {
  tokens: Map<string, UserInfo>
  anonymous: boolean
  /** --api-audiences (default: the service-account issuers). */
  apiAudiences?: string[]
  serviceAccounts?: ServiceAccountAuthn
  /** --enable-bootstrap-token-auth */
  bootstrapTokens?: boolean
  /** live objects for service-account and bootstrap-token checks */
  store?: Store
  /** --authentication-token-webhook-config-file: asked last, when no other authenticator takes the token */
  tokenWebhook?: (token: string, audiences: string[]) => Promise<TokenResult>
  /** --client-ca-file, --requestheader-*: read only for requests that came with a client certificate */
  certificates?: CertAuthnConfig
}

let config: AuthnConfig = { tokens: new Map(), anonymous: true }
/** The JWT (OIDC) authenticators of this thread, when configured (swapped when their file is reloaded). */
let jwtAuthenticators: JwtAuthenticators | undefined

export function setJwtAuthenticators(a: JwtAuthenticators | undefined): void { jwtAuthenticators = a }

/** The paths anonymous requests may use (the authentication configuration's `anonymous.conditions`); undefined: any. */
let anonymousPaths: Set<string> | undefined

/** The authentication configuration's `anonymous` section, in place of --anonymous-auth. */
export function setAnonymous(a: { enabled: boolean; paths: string[] }): void {
  config = { ...config, anonymous: a.enabled }
  anonymousPaths = a.enabled && a.paths.length > 0 ? new Set(a.paths) : undefined
}
let apiAudiences: string[] = []

export function configureAuthentication(c: AuthnConfig): void {
  // Static users get system:authenticated once, here, rather than on every request.
  const tokens = new Map<string, UserInfo>()
  for (const [t, u] of c.tokens) if (t !== '') tokens.set(t, withAuthenticated(u))
  config = { ...c, tokens }
  apiAudiences = c.apiAudiences ?? c.serviceAccounts?.issuers ?? []
  tokenCache.clear()
}

export const ANONYMOUS: UserInfo = Object.freeze({ username: 'system:anonymous', uid: '', groups: ['system:unauthenticated'] }) as UserInfo

/** Every authenticated user is in system:authenticated (unless it names itself anonymous or unauthenticated). */
export function withAuthenticated(u: UserInfo): UserInfo {
  if (u.username === 'system:anonymous' || u.groups.includes('system:authenticated') || u.groups.includes('system:unauthenticated')) return u
  return { ...u, groups: [...u.groups, 'system:authenticated'] }
}

/** upstream bearertoken: `Bearer <token>` (scheme case-insensitive, the second space-separated part); '' when absent. */
const EXTRA_SPACE = /^\s*bearer  +\S/i
const EXTRA_SPACE_WARNING = '299 - "the provided Authorization header contains extra space before the bearer token, and is ignored"'

export function bearerToken(header: string | undefined): string {
  if (header === undefined) return ''
  const h = header.trim()
  if (h === '') return ''
  const sp = h.indexOf(' ')
  if (sp < 0 || h.slice(0, sp).toLowerCase() !== 'bearer') return ''
  const rest = h.slice(sp + 1)
  const end = rest.indexOf(' ')
  return end < 0 ? rest : rest.slice(0, end)
}

// ---------------------------------------------------------------- the token cache

/** A live object a cached verification depended on, at the version it had (0: absent). */
interface Dependency { shard: number; key: string; rv: number }
interface CachedToken { user: UserInfo; audiences: string[]; expires: number; deps: Dependency[] }

/** Upstream caches successful token authentications 10 s; failures are not cached. */
const TOKEN_TTL_MS = 10_000
const TOKEN_CACHE_LIMIT = 4096
const tokenCache = new Map<string, CachedToken>()

/** A cached verification stands only while every object it read is unchanged (so a deleted account is revoked at once). */
function depsUnchanged(deps: Dependency[]): boolean {
  const store = config.store
  if (!store) return true
  for (const d of deps) {
    const rec = store.getFresh(d.shard, d.key)
    if ((rec ? recordRv(rec) : 0) !== d.rv) return false
  }
  return true
}

function remember(key: string, entry: CachedToken): void {
  if (tokenCache.size >= TOKEN_CACHE_LIMIT) {
    const oldest = tokenCache.keys().next().value
    if (oldest !== undefined) tokenCache.delete(oldest)
  }
  tokenCache.set(key, entry)
}

/** Lookups of live objects that note each object's version, so a cached result can be checked cheaply. */
function recordingLookups(store: Store, deps: Dependency[]): ServiceAccountLookups & { get(resource: string, namespace: string, name: string): Record<string, any> | undefined } {
  const get = (resource: string, namespace: string, name: string): Record<string, any> | undefined => {
    const shard = store.shardFor('', resource)
    const key = objectKey('', resource, namespace, name)
    const rec = store.getFresh(shard, key)
    deps.push({ shard, key, rv: rec ? recordRv(rec) : 0 })
    return rec ? JSON.parse(recordObject(rec).toString('utf8')) : undefined
  }
  return {
    get,
    getServiceAccount: (ns, name) => get('serviceaccounts', ns, name),
    getSecret: (ns, name) => get('secrets', ns, name),
    getPod: (ns, name) => get('pods', ns, name),
    getNode: (name) => get('nodes', '', name),
  }
}

const goQuoteList = (l: readonly string[]): string => `[${l.map((s) => JSON.stringify(s)).join(' ')}]`

export type TokenResult = { ok: true; user: UserInfo; audiences: string[] } | { ok: false; error: string }

/** Authenticators that know nothing of audiences pass when the requested audiences meet the API audiences. */
function audienceAgnostic(user: UserInfo, audiences: string[] | undefined): TokenResult {
  if (!audiences || audiences.length === 0) return { ok: true, user, audiences: [...apiAudiences] }
  const both = audiences.filter((a) => apiAudiences.includes(a))
  if (both.length === 0) return { ok: false, error: `token audiences ${goQuoteList(apiAudiences)} is invalid for the target audiences ${goQuoteList(audiences)}` }
  return { ok: true, user, audiences: both }
}

function expiryOf(token: string): number {
  try {
    const exp = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'))?.exp
    return typeof exp === 'number' ? exp * 1000 : Infinity
  } catch { return Infinity }
}

/**
 * The token authenticators in order (static file, bootstrap token, service-account JWT); the first success wins.
 * `audiences`: the audiences the token must be good for (TokenReview); default the API audiences.
 */
export async function authenticateToken(token: string, audiences?: string[]): Promise<TokenResult> {
  const cacheKey = audiences && audiences.length > 0 ? `${token}\u0000${audiences.join('\u0000')}` : token
  const hit = tokenCache.get(cacheKey)
  if (hit) {
    if (hit.expires > Date.now() && depsUnchanged(hit.deps)) return { ok: true, user: hit.user, audiences: hit.audiences }
    tokenCache.delete(cacheKey)
  }
  const fixed = config.tokens.get(token)
  if (fixed) return audienceAgnostic(fixed, audiences)
  const errors: string[] = []
  if (config.bootstrapTokens && config.store && parseBootstrapToken(token)) {
    const lookups = recordingLookups(config.store, [])
    const r = authenticateBootstrapToken(token, (ns, name) => lookups.getSecret(ns, name))
    if (r.ok) return audienceAgnostic(withAuthenticated(r.user), audiences)
  }
  const sa = config.serviceAccounts
  if (sa && config.store && token.split('.').length === 3) {
    const deps: Dependency[] = []
    const r = await verifyToken(token, {
      issuers: sa.issuers, audiences: apiAudiences, requestedAudiences: audiences && audiences.length > 0 ? audiences : undefined,
      keys: sa.keys, lookups: recordingLookups(config.store, deps), serviceAccountLookup: sa.lookup,
    })
    if (r.ok) {
      const user = withAuthenticated(r.user)
      remember(cacheKey, { user, audiences: r.audiences, expires: Math.min(Date.now() + TOKEN_TTL_MS, expiryOf(token)), deps })
      return { ok: true, user, audiences: r.audiences }
    }
    if (r.error) errors.push(r.error)
  }
  // After the service accounts (upstream keeps OIDC after them); a token of no configured issuer is not looked at.
  const jwt = jwtAuthenticators?.authenticate(token)
  if (jwt !== undefined) {
    const r = await jwt
    if (r.ok) {
      const user = withAuthenticated(r.user)
      const res = audienceAgnostic(user, audiences)
      if (res.ok) remember(cacheKey, { user, audiences: res.audiences, expires: Math.min(Date.now() + TOKEN_TTL_MS, expiryOf(token)), deps: [] })
      return res
    }
    errors.push(r.error)
  }
  if (config.tokenWebhook) {
    // Last, as upstream's union orders it: local authenticators first, then remote.
    const r = await config.tokenWebhook(token, audiences && audiences.length > 0 ? audiences : apiAudiences)
    if (r.ok) return r
    if (r.error) errors.push(r.error)
  }
  return { ok: false, error: errors.length === 0 ? 'invalid bearer token' : errors.length === 1 ? errors[0] : `[${errors.join(', ')}]` }
}

async function authenticateSlow(ctx: RequestContext, token: string): Promise<void> {
  const r = await authenticateToken(token)
  if (!r.ok) {
    if (ctx.logs('debug')) ctx.log.debug({ reason: r.error }, 'bearer token rejected')
    throw unauthorized()
  }
  ctx.user = r.user
  await impersonate(ctx)
}

/**
 * Synchronous for anonymous requests and static tokens; asynchronous only when a JWT must be verified. Impersonation
 * headers are honoured here too (after the real user is known, before flow control).
 */
export function authenticate(ctx: RequestContext): void | Promise<void> {
  // A client certificate (node front-end only): the front proxy, then the certificate's own user, before bearer tokens.
  let certFailed = false
  if (ctx.peer !== undefined && config.certificates) {
    const r = authenticatePeer(config.certificates, ctx.peer, ctx.headers, Date.now())
    if (r.user) { ctx.user = withAuthenticated(r.user); return impersonate(ctx) }
    if (r.error !== undefined) {
      certFailed = true
      if (ctx.logs('debug')) ctx.log.debug({ reason: r.error }, 'client certificate rejected')
    }
  }
  const token = bearerToken(ctx.headers['authorization'])
  if (token === '') {
    // A certificate that failed is an error: no anonymous fallback (upstream's union fails on it).
    if (!config.anonymous || certFailed || (anonymousPaths !== undefined && !anonymousPaths.has(ctx.url))) throw unauthorized()
    // `Bearer  <token>` (two spaces) is no bearer token: the request goes on as anonymous, with upstream's warning.
    if (EXTRA_SPACE.test(ctx.headers['authorization'] ?? '')) ctx.responseHeaders.push(['Warning', EXTRA_SPACE_WARNING])
    // The node front-end closes an anonymous client's HTTP/2 connection after the answer (upstream's DoS mitigation).
    if (ctx.peer !== undefined) ctx.peer.anonymous = true
    ctx.user = ANONYMOUS
    return impersonate(ctx)
  }
  const fixed = config.tokens.get(token)
  if (fixed) { ctx.user = fixed; return impersonate(ctx) }
  return authenticateSlow(ctx, token)
}
