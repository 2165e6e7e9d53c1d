// Bootstrap tokens: the `<id>.<secret>` bearer token checked against its Secret in orch-system, and the cluster-info detached JWS.
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { UserInfo } from '../pipeline/context.js'

export const BOOTSTRAP_TOKEN_NAMESPACE = 'orch-system'
export const BOOTSTRAP_TOKEN_SECRET_PREFIX = 'bootstrap-token-'
export const BOOTSTRAP_TOKEN_SECRET_TYPE = 'bootstrap.orch.io/token'
export const BOOTSTRAP_USER_PREFIX = 'system:bootstrap:'
export const BOOTSTRAP_DEFAULT_GROUP = 'system:bootstrappers'

export const KEY_DESCRIPTION = 'description'
export const KEY_TOKEN_ID = 'token-id'
export const KEY_TOKEN_SECRET = 'token-secret'
export const KEY_EXPIRATION = 'expiration'
export const KEY_USAGE_AUTHENTICATION = 'usage-bootstrap-authentication'
export const KEY_USAGE_SIGNING = 'usage-bootstrap-signing'
export const KEY_EXTRA_GROUPS = 'auth-extra-groups'

export const TOKEN_ID_PATTERN = /^[a-z0-9]{6}$/
export const TOKEN_SECRET_PATTERN = /^[a-z0-9]{16}$/
export const BOOTSTRAP_TOKEN_PATTERN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/
export const BOOTSTRAP_GROUP_PATTERN = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/

/** The cluster-info ConfigMap and its keys. */
export const CLUSTER_INFO_NAMESPACE = 'orch-public'
export const CLUSTER_INFO_NAME = 'cluster-info'
export const CLUSTER_INFO_KUBECONFIG_KEY = 'kubeconfig'
export const CLUSTER_INFO_SIGNATURE_PREFIX = 'jws-kubeconfig-'

type Obj = Record<string, any>

/** Splits `<id>.<secret>`; undefined for anything else (which the authenticator silently ignores). */
export function parseBootstrapToken(token: string): { id: string; secret: string } | undefined {
  const m = BOOTSTRAP_TOKEN_PATTERN.exec(token)
  return m ? { id: m[1], secret: m[2] } : undefined
}

export function bootstrapTokenSecretName(id: string): string { return `${BOOTSTRAP_TOKEN_SECRET_PREFIX}${id}` }

/** A value of the secret: `data` (base64), else `stringData`; "" when absent. */
export function secretData(secret: Obj, key: string): string {
  const d = secret?.data?.[key]
  if (typeof d === 'string') return Buffer.from(d, 'base64').toString('utf8')
  const s = secret?.stringData?.[key]
  return typeof s === 'string' ? s : ''
}

function hasData(secret: Obj): boolean {
  const d = secret?.data
  const s = secret?.stringData
  return (d !== null && typeof d === 'object' && Object.keys(d).length > 0) || (s !== null && typeof s === 'object' && Object.keys(s).length > 0)
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/

/** Whether the secret's `expiration` has passed: absent never expires; unparseable counts as expired. */
export function hasExpired(secret: Obj, now: number | Date = Date.now()): boolean {
  const exp = secretData(secret, KEY_EXPIRATION)
  if (exp === '') return false
  if (!RFC3339.test(exp)) return true
  const t = Date.parse(exp)
  if (!Number.isFinite(t)) return true
  const n = typeof now === 'number' ? now : now.getTime()
  return n > t
}

export function validateBootstrapGroupName(group: string): string | undefined {
  if (BOOTSTRAP_GROUP_PATTERN.test(group)) return undefined
  return `bootstrap group ${JSON.stringify(group)} is invalid (must match ${BOOTSTRAP_GROUP_PATTERN.source})`
}

/** `system:bootstrappers` plus `auth-extra-groups`, sorted and de-duplicated; an error for a bad group. */
export function bootstrapGroups(secret: Obj): { groups: string[] } | { error: string } {
  const groups = new Set([BOOTSTRAP_DEFAULT_GROUP])
  const extra = secretData(secret, KEY_EXTRA_GROUPS)
  if (extra !== '') {
    for (const g of extra.split(',')) {
      const err = validateBootstrapGroupName(g)
      if (err) return { error: err }
      groups.add(g)
    }
  }
  return { groups: [...groups].sort() }
}

export function constantTimeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a); const y = Buffer.from(b)
  if (x.length !== y.length) return false
  return timingSafeEqual(x, y)
}

/** Looks a bootstrap token secret up: (namespace, name) → the stored Secret or undefined. */
export type SecretGetter = (namespace: string, name: string) => Obj | undefined

export type BootstrapResult =
  | { ok: true; user: UserInfo }
  /** Not authenticated; `reason` is for logs only (the authenticator never reports an error). */
  | { ok: false; reason: string }

/** The bootstrap token authenticator: every failure is "not authenticated" without an error. */
export function authenticateBootstrapToken(token: string, getSecret: SecretGetter, now: number | Date = Date.now()): BootstrapResult {
  const parsed = parseBootstrapToken(token)
  if (!parsed) return { ok: false, reason: 'not a bootstrap token' }
  const name = bootstrapTokenSecretName(parsed.id)
  const secret = getSecret(BOOTSTRAP_TOKEN_NAMESPACE, name)
  const where = `secret ${BOOTSTRAP_TOKEN_NAMESPACE}/${name}`
  if (!secret) return { ok: false, reason: `${where} not found` }
  if (secret.metadata?.deletionTimestamp) return { ok: false, reason: `${where} is deleted and awaiting removal` }
  if (secret.type !== BOOTSTRAP_TOKEN_SECRET_TYPE || !hasData(secret)) return { ok: false, reason: `${where} has invalid type, expected ${BOOTSTRAP_TOKEN_SECRET_TYPE}.` }
  if (!constantTimeEqual(secretData(secret, KEY_TOKEN_SECRET), parsed.secret)) return { ok: false, reason: `${where} has invalid value for key ${KEY_TOKEN_SECRET}.` }
  if (secretData(secret, KEY_TOKEN_ID) !== parsed.id) return { ok: false, reason: `${where} has invalid value for key ${KEY_TOKEN_ID}.` }
  if (hasExpired(secret, now)) return { ok: false, reason: `${where} has expired` }
  if (secretData(secret, KEY_USAGE_AUTHENTICATION) !== 'true') return { ok: false, reason: `${where} not marked ${KEY_USAGE_AUTHENTICATION}=true.` }
  const g = bootstrapGroups(secret)
  if ('error' in g) return { ok: false, reason: `${where} has invalid value for key ${KEY_EXTRA_GROUPS}: ${g.error}.` }
  return { ok: true, user: { username: `${BOOTSTRAP_USER_PREFIX}${parsed.id}`, uid: '', groups: g.groups } }
}

/** Whether a token secret may sign cluster-info: named after its id, has a secret, not expired, usage-bootstrap-signing "true". */
export function signingTokenOf(secret: Obj, now: number | Date = Date.now()): { id: string; secret: string } | undefined {
  if (secret?.type !== BOOTSTRAP_TOKEN_SECRET_TYPE) return undefined
  const id = secretData(secret, KEY_TOKEN_ID)
  if (!TOKEN_ID_PATTERN.test(id) || secret.metadata?.name !== bootstrapTokenSecretName(id)) return undefined
  const s = secretData(secret, KEY_TOKEN_SECRET)
  if (s === '') return undefined
  if (hasExpired(secret, now)) return undefined
  if (secretData(secret, KEY_USAGE_SIGNING) !== 'true') return undefined
  return { id, secret: s }
}

/**
 * The detached JWS of the cluster-info kubeconfig (RFC 7515 appendix F): header `{"alg":"HS256","kid":"<id>"}`,
 * HMAC-SHA256 keyed with the token secret over `b64(header).b64(content)`, stored as `b64(header)..b64(sig)`.
 */
export function computeDetachedSignature(content: string, tokenId: string, tokenSecret: string): string {
  const header = Buffer.from(`{"alg":"HS256","kid":${JSON.stringify(tokenId)}}`).toString('base64url')
  const input = `${header}.${Buffer.from(content, 'utf8').toString('base64url')}`
  const sig = createHmac('sha256', Buffer.from(tokenSecret, 'utf8')).update(input).digest('base64url')
  return `${header}..${sig}`
}

export function verifyDetachedSignature(content: string, signature: string, tokenId: string, tokenSecret: string): boolean {
  return constantTimeEqual(computeDetachedSignature(content, tokenId, tokenSecret), signature)
}
