// One JWT (OpenID Connect) token authenticator: issuer discovery and JWKS over https (retried in the background, never
// blocking the start), go-oidc's token checks with its texts, claim mappings and validation rules (CEL). The set of them
// and its reload: jwt-setup.ts.
import https from 'node:https'
import { createPublicKey, type KeyObject } from 'node:crypto'
import { compactVerify, decodeProtectedHeader } from 'jose'
import type { Logger } from 'pino'
import { celEvaluate, toCelValue } from '../machinery/cel.js'
import type { UserInfo } from '../pipeline/context.js'
import { CREDENTIAL_ID_KEY, type ClaimOrProgram, type CompiledJwt } from './jwt-config.js'

/**
 * Test-only: ORCH_TEST_OIDC_INTERVAL_MS (milliseconds, read once when the module loads) stands in for the two 10 s
 * intervals below, so that black-box tests of the retry and of the refetch limit do not wait them out. Unset (as
 * always outside the tests), both are upstream's 10 s.
 */
const TEST_INTERVAL_MS = Number(process.env.ORCH_TEST_OIDC_INTERVAL_MS ?? '')
const INTERVAL_MS = Number.isInteger(TEST_INTERVAL_MS) && TEST_INTERVAL_MS > 0 ? TEST_INTERVAL_MS : 10_000
/** Upstream polls an uninitialized issuer every 10 s (wait.PollUntilContextCancel, immediately first). */
const INIT_RETRY_MS = INTERVAL_MS
/** The http.Client timeout of upstream's issuer client. */
const HTTP_TIMEOUT_MS = 30_000
/** A token whose `kid` is unknown refetches the key set at most this often (go-oidc refetches on every miss). */
const JWKS_REFETCH_MS = INTERVAL_MS
/** go-oidc's leeway on `nbf` (it has none on `exp`, and does not check `iat`). */
const NBF_LEEWAY_MS = 60_000
const MAX_BODY = 1 << 20

/** What one authenticator says of a token: not its issuer (undefined), a user, or an error (the token is refused). */
export type JwtResult = { ok: true; user: UserInfo } | { ok: false; error: string }

// ---------------------------------------------------------------- https

function get(url: string, ca: string | undefined, bearer = ''): Promise<{ status: number; statusText: string; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { accept: 'application/json' }
    if (bearer !== '') headers.authorization = `Bearer ${bearer}`
    const req = https.get(url, { ca: ca || undefined, timeout: HTTP_TIMEOUT_MS, headers }, (res) => {
      const chunks: Buffer[] = []
      let size = 0
      res.on('data', (d: Buffer) => {
        size += d.length
        if (size > MAX_BODY) { req.destroy(new Error(`response body of ${url} too large`)); return }
        chunks.push(d)
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, statusText: `${res.statusCode} ${res.statusMessage ?? ''}`.trim(), body: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error(`Get "${url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`)))
    req.on('error', (err) => reject(new Error(`Get "${url}": ${(err as Error).message}`)))
  })
}

// ---------------------------------------------------------------- Go-style texts

/** Go's time.Time String() of a UTC time: `2006-01-02 15:04:05 +0000 UTC` (fractions only when present). */
function goTime(ms: number): string {
  const d = new Date(ms)
  const p = (n: number, w = 2) => String(n).padStart(w, '0')
  const frac = d.getUTCMilliseconds() === 0 ? '' : `.${p(d.getUTCMilliseconds(), 3).replace(/0+$/, '')}`
  return `${p(d.getUTCFullYear(), 4)}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}${frac} +0000 UTC`
}
/** A Go %q of a string (JSON's quoting is the same for the texts used here). */
export const goQ = (s: string): string => JSON.stringify(s)
const goQList = (l: readonly string[]): string => `[${l.map(goQ).join(' ')}]`

/** encoding/json's error for a value that is not of the wanted Go type. */
function unmarshalError(v: unknown, want: 'string' | 'bool'): string {
  const t = v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? 'number' : typeof v === 'boolean' ? 'bool' : typeof v === 'string' ? 'string' : 'object'
  return `json: cannot unmarshal ${t} into Go value of type ${want}`
}

/** json.Unmarshal of a claim into a Go string: null leaves it empty. */
function claimString(claims: Record<string, unknown>, name: string): { ok: true; value: string } | { ok: false; error: string } {
  if (!Object.prototype.hasOwnProperty.call(claims, name)) return { ok: false, error: 'claim not present' }
  const v = claims[name]
  if (v === null) return { ok: true, value: '' }
  if (typeof v !== 'string') return { ok: false, error: unmarshalError(v, 'string') }
  return { ok: true, value: v }
}

// ---------------------------------------------------------------- key set

interface Key { kid: string | undefined; key: KeyObject }

class RemoteKeySet {
  #keys: Key[] = []
  #fetched = false
  #inflight: Promise<void> | undefined
  #lastTokenRefetch = 0

  constructor(readonly uri: string, readonly ca: string | undefined, readonly log: Logger) {}

  fetch(): Promise<void> {
    this.#inflight ??= (async () => {
      try {
        const r = await get(this.uri, this.ca)
        if (r.status !== 200) throw new Error(`oidc: get keys failed: ${r.statusText} ${r.body}`)
        let set: { keys?: unknown }
        try { set = JSON.parse(r.body) } catch (err) { throw new Error(`oidc: failed to decode keys: ${(err as Error).message} ${r.body}`) }
        const keys: Key[] = []
        for (const jwk of Array.isArray(set?.keys) ? set.keys as Array<Record<string, unknown>> : []) {
          if (jwk === null || typeof jwk !== 'object' || jwk.use === 'enc') continue
          try { keys.push({ kid: typeof jwk.kid === 'string' ? jwk.kid : undefined, key: createPublicKey({ key: jwk as never, format: 'jwk' }) }) } catch { /* a key this host cannot use */ }
        }
        this.#keys = keys
        this.#fetched = true
      } finally {
        this.#inflight = undefined
      }
    })()
    return this.#inflight
  }

  /** Background fetch after discovery, so the first token need not wait; a failure is retried by the first token. */
  prefetch(): void {
    this.fetch().catch((err) => this.log.warn({ err: (err as Error).message, jwks: this.uri }, 'oidc: fetching the key set failed'))
  }

  async #tryKeys(token: string, kid: string | undefined, algs: string[]): Promise<Uint8Array | undefined> {
    for (const k of this.#keys) {
      if (kid !== undefined && k.kid !== kid) continue
      try { return (await compactVerify(token, k.key, { algorithms: algs })).payload } catch { /* the next key */ }
    }
    return undefined
  }

  /**
   * go-oidc's remote key set: the cached keys, else the key set fetched again. Here a token refetches only when no
   * cached key has its `kid` (a bad signature under a known key does not), and at most every JWKS_REFETCH_MS.
   */
  async verify(token: string, kid: string | undefined, algs: string[]): Promise<Uint8Array> {
    const cached = await this.#tryKeys(token, kid, algs)
    if (cached !== undefined) return cached
    const now = Date.now()
    const known = this.#fetched && kid !== undefined && this.#keys.some((k) => k.kid === kid)
    // A fetch under way is joined; a new one starts at most every JWKS_REFETCH_MS (also while the key set is down).
    if (!known && (this.#inflight !== undefined || now - this.#lastTokenRefetch >= JWKS_REFETCH_MS)) {
      if (this.#inflight === undefined) this.#lastTokenRefetch = now
      try { await this.fetch() } catch (err) { throw new Error(`fetching keys ${(err as Error).message}`) }
      const fresh = await this.#tryKeys(token, kid, algs)
      if (fresh !== undefined) return fresh
    }
    throw new Error('failed to verify id token signature')
  }
}

// ---------------------------------------------------------------- one authenticator

interface Verifier { keys: RemoteKeySet }

export class JwtAuthenticator {
  #verifier: Verifier | undefined
  #closed = false
  #timer: NodeJS.Timeout | undefined
  /** Why it is not initialized yet (upstream's health check). */
  health = 'not initialized'
  readonly #algs: string[]

  constructor(readonly c: CompiledJwt, algs: string[], readonly log: Logger) {
    this.#algs = algs
    void this.#init()
  }

  get ready(): boolean { return this.#verifier !== undefined }

  close(): void {
    this.#closed = true
    if (this.#timer) clearTimeout(this.#timer)
    for (const v of this.#claimVerifiers.values()) v.close()
  }

  /** Discovery, polled every 10 s until it succeeds (upstream keeps retrying in the background; tokens fail meanwhile). */
  async #init(): Promise<void> {
    if (this.#closed) return
    try {
      // go-oidc: the issuer with one trailing slash trimmed, then the well-known path (or the configured discoveryURL).
      const wellKnown = this.c.discoveryURL || `${this.c.url.replace(/\/$/, '')}/.well-known/openid-configuration`
      const r = await get(wellKnown, this.c.certificateAuthority)
      if (r.status !== 200) throw new Error(`${r.statusText}: ${r.body}`)
      let doc: { issuer?: unknown; jwks_uri?: unknown }
      try { doc = JSON.parse(r.body) } catch (err) { throw new Error(`oidc: failed to decode provider discovery object: ${(err as Error).message}`) }
      if (doc.issuer !== this.c.url) throw new Error(`oidc: issuer did not match the issuer returned by provider, expected ${goQ(this.c.url)} got ${goQ(String(doc.issuer ?? ''))}`)
      if (typeof doc.jwks_uri !== 'string' || doc.jwks_uri === '') throw new Error('oidc: provider discovery object has no jwks_uri')
      if (this.#closed) return
      const keys = new RemoteKeySet(doc.jwks_uri, this.c.certificateAuthority, this.log)
      this.#verifier = { keys }
      this.health = ''
      this.log.info({ issuer: this.c.url, jwks: doc.jwks_uri }, 'oidc authenticator initialized')
      keys.prefetch()
    } catch (err) {
      this.health = (err as Error).message
      this.log.error({ issuer: this.c.url, err: this.health }, `oidc authenticator: initializing plugin failed; retrying in ${INIT_RETRY_MS / 1000}s`)
      if (!this.#closed) { this.#timer = setTimeout(() => void this.#init(), INIT_RETRY_MS); this.#timer.unref() }
    }
  }

  /** go-oidc's IDTokenVerifier.Verify then upstream's audience check: the claims, or the error text. */
  async #verify(token: string, payloadText: string): Promise<Record<string, unknown>> {
    const v = this.#verifier!
    let header: { alg?: unknown; kid?: unknown }
    try { header = decodeProtectedHeader(token) } catch (err) { throw new Error(`oidc: malformed jwt: ${(err as Error).message}`) }
    let claims: Record<string, unknown>
    try {
      claims = JSON.parse(payloadText)
      if (claims === null || typeof claims !== 'object' || Array.isArray(claims)) throw new Error(`json: cannot unmarshal ${Array.isArray(claims) ? 'array' : typeof claims} into Go value of type oidc.idToken`)
    } catch (err) { throw new Error(`oidc: failed to unmarshal claims: ${(err as Error).message}`) }
    const iss = claims.iss
    if (iss !== this.c.url && !(this.c.url === 'https://accounts.google.com' && iss === 'accounts.google.com')) {
      throw new Error(`oidc: id token issued by a different provider, expected ${goQ(this.c.url)} got ${goQ(String(iss ?? ''))}`)
    }
    const audClaim = claims.aud
    const aud = typeof audClaim === 'string' ? [audClaim] : Array.isArray(audClaim) ? audClaim.filter((x): x is string => typeof x === 'string') : []
    if (audClaim !== undefined && audClaim !== null && typeof audClaim !== 'string' && !(Array.isArray(audClaim) && aud.length === audClaim.length)) {
      throw new Error(`oidc: failed to unmarshal claims: ${unmarshalError(audClaim, 'string')}`)
    }
    const auds = this.c.audiences
    if (auds.length === 1 && !aud.includes(auds[0])) throw new Error(`oidc: expected audience ${goQ(auds[0])} got ${goQList(aud)}`)
    for (const [name, value] of [['exp', claims.exp], ['nbf', claims.nbf]] as const) {
      if (value !== undefined && value !== null && typeof value !== 'number') throw new Error(`oidc: failed to unmarshal claims: json: cannot unmarshal ${unmarshalError(value, 'string').split(' ')[3]} into Go struct field idToken.${name} of type oidc.jsonTime`)
    }
    const now = Date.now()
    const expMs = typeof claims.exp === 'number' ? claims.exp * 1000 : -62135596800000
    if (expMs < now) throw new Error(`oidc: token is expired (Token Expiry: ${goTime(expMs)})`)
    if (typeof claims.nbf === 'number' && now + NBF_LEEWAY_MS < claims.nbf * 1000) {
      throw new Error(`oidc: current time ${goTime(now)} before the nbf (not before) time: ${goTime(claims.nbf * 1000)}`)
    }
    const alg = typeof header.alg === 'string' ? header.alg : ''
    if (!this.#algs.includes(alg)) throw new Error(`oidc: id token signed with unsupported algorithm, expected ${goQList(this.#algs)} got ${goQ(alg)}`)
    let signed: Uint8Array
    try { signed = await v.keys.verify(token, typeof header.kid === 'string' && header.kid !== '' ? header.kid : undefined, this.#algs) } catch (err) { throw new Error(`failed to verify signature: ${(err as Error).message}`) }
    if (Buffer.from(signed).toString('utf8') !== payloadText) throw new Error('oidc: internal error, payload parsed did not match previous payload')
    if (auds.length > 1 && !aud.some((a) => auds.includes(a))) throw new Error(`oidc: expected audience in ${goQList([...auds].sort())} got ${goQList(aud)}`)
    return claims
  }

  /** Upstream jwtAuthenticator.AuthenticateToken after the issuer pre-check. */
  async authenticate(token: string, payloadText: string): Promise<JwtResult> {
    if (this.#verifier === undefined) return { ok: false, error: 'oidc: authenticator not initialized' }
    let claims: Record<string, unknown>
    try { claims = await this.#verify(token, payloadText) } catch (err) { return { ok: false, error: `oidc: verify token: ${(err as Error).message}` } }
    if (this.c.groups !== undefined && 'claim' in this.c.groups) {
      try { await this.#expand(claims, this.c.groups.claim) } catch (err) { return { ok: false, error: `oidc: could not expand distributed claims: ${(err as Error).message}` } }
    }
    try {
      return { ok: true, user: this.#map(claims) }
    } catch (err) {
      return { ok: false, error: (err as Error).message }
    }
  }

  /** A verified token's claims (a distributed claim's JWT), or the error go-oidc's verifier gives. */
  async verifyOnly(token: string): Promise<Record<string, unknown>> {
    if (this.#verifier === undefined) throw new Error(`verifier not initialized for issuer: ${goQ(this.c.url)}`)
    const payload = untrustedIssuer(token)?.payload
    if (payload === undefined) throw new Error('oidc: malformed jwt: square/go-jose: compact JWS format must have three parts')
    return this.#verify(token, payload)
  }

  /** Verifiers of the issuers distributed claims come from, made on first use (upstream claimResolver). */
  #claimVerifiers = new Map<string, JwtAuthenticator>()

  /**
   * OpenID Connect distributed claims (Core 1.0 §5.6.2) for the groups claim: when the token lacks it but names a source
   * with an endpoint, the endpoint's JWT is fetched (with the source's access token), verified by its issuer's keys
   * for the same audiences, and its value of the claim taken.
   */
  async #expand(claims: Record<string, unknown>, claim: string): Promise<void> {
    if (Object.prototype.hasOwnProperty.call(claims, claim) || !Object.prototype.hasOwnProperty.call(claims, '_claim_names')) return
    const names = claims._claim_names
    if (names === null || typeof names !== 'object' || Array.isArray(names) || !Object.values(names).every((v) => typeof v === 'string')) {
      throw new Error(`oidc: error parsing distributed claim names: json: cannot unmarshal ${Array.isArray(names) ? 'array' : typeof names === 'object' ? 'object' : typeof names} into Go value of type map[string]string`)
    }
    if (!Object.prototype.hasOwnProperty.call(claims, '_claim_sources')) throw new Error('oidc: no claim sources')
    const sources = claims._claim_sources
    if (sources === null || typeof sources !== 'object' || Array.isArray(sources)) throw new Error('oidc: could not parse claim sources: json: cannot unmarshal into Go value of type map[string]oidc.endpoint')
    const src = (names as Record<string, string>)[claim]
    if (src === undefined) return
    const ep = (sources as Record<string, { endpoint?: unknown; access_token?: unknown }>)[src]
    if (ep === undefined) throw new Error(`id token _claim_names contained a source ${src} missing in _claims_sources`)
    const url = typeof ep?.endpoint === 'string' ? ep.endpoint : ''
    if (url === '') return
    let jwt: string
    try {
      const r = await get(url, this.c.certificateAuthority, typeof ep.access_token === 'string' ? ep.access_token : '')
      if (r.status < 200 || r.status > 226) throw new Error(`error while getting distributed claim JWT: ${r.statusText}`)
      jwt = r.body
    } catch (err) { throw new Error(`while getting distributed claim ${goQ(claim)}: ${(err as Error).message}`) }
    const iss = untrustedIssuer(jwt)?.iss
    if (iss === undefined) throw new Error(`getting untrusted issuer from endpoint ${url} failed for claim ${goQ(claim)}: malformed token`)
    let v = this.#claimVerifiers.get(iss)
    if (v === undefined) {
      v = new JwtAuthenticator({ ...this.c, url: iss, discoveryURL: '', groups: undefined }, this.#algs, this.log)
      this.#claimVerifiers.set(iss, v)
    }
    let dist: Record<string, unknown>
    try { dist = await v.verifyOnly(jwt) } catch (err) {
      const m = (err as Error).message
      throw new Error(m.startsWith('verifier not initialized') ? `verifying untrusted issuer ${iss} failed: ${m}` : `verify distributed claim token: ${m}`)
    }
    if (!Object.prototype.hasOwnProperty.call(dist, claim)) throw new Error(`jwt returned by distributed claim endpoint ${goQ(url)} did not contain claim: ${claim}`)
    claims[claim] = dist[claim]
  }

  #eval(p: { expression: string; run: unknown; error: string | undefined }, vars: Record<string, unknown>, what: string): unknown {
    const r = celEvaluate(p as never, vars)
    if (r instanceof Promise) throw new Error(`${what}: expression '${p.expression}' resulted in error: asynchronous evaluation`)
    if (!r.ok) throw new Error(`${what}: ${r.error}`)
    return r.value
  }

  #map(claims: Record<string, unknown>): UserInfo {
    const c = this.c
    const celClaims = c.celClaims ? { claims: toCelValue(claims) } : {}
    // username
    let username: string
    if ('program' in c.username) {
      const v = this.#eval(c.username.program, celClaims, 'oidc: error evaluating username claim expression')
      if (typeof v !== 'string') throw new Error('oidc: error evaluating username claim expression: username claim expression must return a string')
      if (v === '') throw new Error('oidc: empty username via CEL expression is not allowed')
      username = v
    } else {
      const claim = c.username.claim
      const s = claimString(claims, claim)
      if (!s.ok) throw new Error(`oidc: parse username claims ${goQ(claim)}: ${s.error}`)
      if (claim === 'email' && Object.prototype.hasOwnProperty.call(claims, 'email_verified')) {
        const ev = claims.email_verified
        if (ev !== null && typeof ev !== 'boolean') throw new Error(`oidc: parse 'email_verified' claim: ${unmarshalError(ev, 'bool')}`)
        if (ev !== true) throw new Error('oidc: email not verified')
      }
      username = c.username.prefix !== '' ? c.username.prefix + s.value : s.value
    }
    // groups
    let groups: string[] = []
    if (c.groups !== undefined) groups = this.#groups(c.groups, claims, celClaims)
    // uid
    let uid = ''
    if (c.uid !== undefined) {
      if ('claim' in c.uid) {
        const s = claimString(claims, c.uid.claim)
        if (!s.ok) throw new Error(`oidc: parse uid claim ${goQ(c.uid.claim)}: ${s.error}`)
        uid = s.value
      } else {
        const v = this.#eval(c.uid.program, celClaims, 'oidc: error evaluating uid claim expression')
        if (typeof v !== 'string') throw new Error('oidc: error evaluating uid claim expression: uid claim expression must return a string')
        uid = v
      }
    }
    // extra
    const extra: Record<string, string[]> = {}
    if (typeof claims.jti === 'string' && claims.jti !== '') extra[CREDENTIAL_ID_KEY] = [`JTI=${claims.jti}`]
    for (const x of c.extra) {
      const r = celEvaluate(x.program, celClaims)
      if (r instanceof Promise || !r.ok) throw new Error(r instanceof Promise ? `expression '${x.program.expression}' resulted in error: asynchronous evaluation` : r.error)
      const values = stringList(r.value)
      if (values === undefined) throw new Error(`oidc: error evaluating extra claim expression: ${x.program.expression}: expression must return a string or a list of strings`)
      if (values.length > 0) extra[x.key] = values
    }
    // required claims, then the claim validation rules
    for (const [claim, want] of c.requiredClaims) {
      if (!Object.prototype.hasOwnProperty.call(claims, claim)) throw new Error(`oidc: required claim ${claim} not present in ID token`)
      const s = claimString(claims, claim)
      if (!s.ok) throw new Error(`oidc: parse claim ${claim}: ${s.error}`)
      if (s.value !== want) throw new Error(`oidc: required claim ${claim} value does not match. Got = ${s.value}, want = ${want}`)
    }
    for (const rule of c.claimRules) {
      const v = this.#eval(rule.program, celClaims, 'oidc: error evaluating claim validation expression')
      if (typeof v !== 'boolean') throw new Error('oidc: error evaluating claim validation expression: validation expression must return a boolean')
      if (!v) throw new Error(`oidc: error evaluating claim validation expression: validation expression '${rule.expression}' failed: ${rule.message}`)
    }
    const user: UserInfo = { username, uid, groups }
    if (Object.keys(extra).length > 0) user.extra = extra
    if (c.userRules.length > 0) {
      const celUser = { user: { username, uid, groups: [...groups], extra: { ...extra } } }
      for (const rule of c.userRules) {
        const v = this.#eval(rule.program, celUser, 'oidc: error evaluating user info validation rule')
        if (typeof v !== 'boolean') throw new Error('oidc: error evaluating user info validation rule: validation expression must return a boolean')
        if (!v) throw new Error(`oidc: error evaluating user info validation rule: validation expression '${rule.expression}' failed: ${rule.message}`)
      }
    }
    return user
  }

  #groups(g: ClaimOrProgram, claims: Record<string, unknown>, celClaims: Record<string, unknown>): string[] {
    if ('claim' in g) {
      if (!Object.prototype.hasOwnProperty.call(claims, g.claim)) return []
      const v = claims[g.claim]
      let list: string[]
      if (typeof v === 'string') list = [v]
      else if (v === null) list = []
      else if (Array.isArray(v) && v.every((x) => typeof x === 'string' || x === null)) list = v.map((x) => x ?? '')
      else throw new Error(`oidc: parse groups claim ${goQ(g.claim)}: ${unmarshalError(v, 'string')}`)
      return g.prefix !== '' ? list.map((x) => g.prefix + x) : list
    }
    const v = this.#eval(g.program, celClaims, 'oidc: error evaluating group claim expression')
    const list = stringList(v)
    if (list === undefined) throw new Error('oidc: error evaluating group claim expression: expression must return a string or a list of strings')
    return list
  }
}

/** convertCELValueToStringList: a string or a list of strings, empty strings dropped; null is none; else undefined. */
function stringList(v: unknown): string[] | undefined {
  if (v === null) return []
  if (typeof v === 'string') return v === '' ? [] : [v]
  if (Array.isArray(v)) {
    if (!v.every((x) => typeof x === 'string')) return undefined
    return (v as string[]).filter((x) => x !== '')
  }
  return undefined
}

/** The unverified `iss` of a compact JWT (upstream untrustedIssuer), or undefined when it is none. */
export function untrustedIssuer(token: string): { iss: string; payload: string } | undefined {
  if (token.trimStart().startsWith('{')) return undefined
  const a = token.indexOf('.')
  const b = a < 0 ? -1 : token.indexOf('.', a + 1)
  if (b < 0 || token.indexOf('.', b + 1) >= 0) return undefined
  const part = token.slice(a + 1, b)
  if (!/^[A-Za-z0-9_-]*$/.test(part)) return undefined
  let payload: string
  let iss: unknown
  try {
    payload = Buffer.from(part, 'base64url').toString('utf8')
    iss = (JSON.parse(payload) as { iss?: unknown })?.iss
  } catch { return undefined }
  if (iss === 'accounts.google.com') iss = 'https://accounts.google.com'
  return typeof iss === 'string' ? { iss, payload } : undefined
}
