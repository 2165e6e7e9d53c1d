// Service-account tokens: signing keys, issuing bound and legacy JWTs, verifying them, and the user they stand for.
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, X509Certificate, type KeyObject } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CompactSign, compactVerify, decodeProtectedHeader, exportJWK, type JWK } from 'jose'
import type { UserInfo } from '../pipeline/context.js'

/** The private claim key of bound tokens (upstream `kubernetes.io`). */
export const PRIVATE_CLAIM = 'orch.io'
/** The issuer of legacy secret-based tokens (upstream, unchanged: it names no domain). */
export const LEGACY_ISSUER = 'kubernetes/serviceaccount'
const LEGACY_PREFIX = 'orch.io/serviceaccount/'
export const LEGACY_CLAIM_NAMESPACE = `${LEGACY_PREFIX}namespace`
export const LEGACY_CLAIM_SECRET_NAME = `${LEGACY_PREFIX}secret.name`
export const LEGACY_CLAIM_SA_NAME = `${LEGACY_PREFIX}service-account.name`
export const LEGACY_CLAIM_SA_UID = `${LEGACY_PREFIX}service-account.uid`
/** Label that invalidates a legacy token secret (upstream `kubernetes.io/legacy-token-invalid-since`). */
export const LEGACY_TOKEN_INVALID_SINCE_LABEL = 'orch.io/legacy-token-invalid-since'
/** Label stamped with the last-use date of a legacy token secret (upstream `kubernetes.io/legacy-token-last-used`). */
export const LEGACY_TOKEN_LAST_USED_LABEL = 'orch.io/legacy-token-last-used'

export const EXTRA_POD_NAME = 'authentication.orch.io/pod-name'
export const EXTRA_POD_UID = 'authentication.orch.io/pod-uid'
export const EXTRA_NODE_NAME = 'authentication.orch.io/node-name'
export const EXTRA_NODE_UID = 'authentication.orch.io/node-uid'
export const EXTRA_CREDENTIAL_ID = 'authentication.orch.io/credential-id'

export const SERVICE_ACCOUNT_USER_PREFIX = 'system:serviceaccount:'
export const SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts'
/** Clock skew allowed on exp, nbf and iat, and on deletion of bound objects (go-jose DefaultLeeway). */
export const LEEWAY_SECONDS = 60
/** The file a generated signing key is kept in, under the data directory. */
export const GENERATED_KEY_FILE = 'sa.key'

export type SigningAlgorithm = 'RS256' | 'ES256' | 'ES384' | 'ES512'

export interface VerificationKey { alg: SigningAlgorithm; kid: string; publicKey: KeyObject }
export interface SigningKey extends VerificationKey { privateKey: KeyObject }

type Obj = Record<string, any>

// ---------------------------------------------------------------- names

export function serviceAccountUsername(namespace: string, name: string): string {
  return `${SERVICE_ACCOUNT_USER_PREFIX}${namespace}:${name}`
}

/** Splits `system:serviceaccount:<ns>:<name>`; undefined when the name is not of that form. */
export function splitServiceAccountUsername(user: string): { namespace: string; name: string } | undefined {
  if (!user.startsWith(SERVICE_ACCOUNT_USER_PREFIX)) return undefined
  const parts = user.slice(SERVICE_ACCOUNT_USER_PREFIX.length).split(':')
  if (parts.length !== 2 || parts[0] === '' || parts[1] === '') return undefined
  return { namespace: parts[0], name: parts[1] }
}

export function serviceAccountGroups(namespace: string): string[] {
  return [SERVICE_ACCOUNTS_GROUP, `${SERVICE_ACCOUNTS_GROUP}:${namespace}`]
}

// ---------------------------------------------------------------- keys

/** `kid`: unpadded base64url of the SHA-256 of the public key's DER SubjectPublicKeyInfo. */
export function keyId(publicKey: KeyObject): string {
  const der = publicKey.export({ type: 'spki', format: 'der' })
  return createHash('sha256').update(der).digest('base64url')
}

/** RS256 for RSA keys; ES256/384/512 for EC keys on P-256/384/521. */
export function algorithmFor(key: KeyObject): SigningAlgorithm {
  const t = key.asymmetricKeyType
  if (t === 'rsa') return 'RS256'
  if (t === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve
    if (curve === 'prime256v1' || curve === 'P-256') return 'ES256'
    if (curve === 'secp384r1' || curve === 'P-384') return 'ES384'
    if (curve === 'secp521r1' || curve === 'P-521') return 'ES512'
    throw new Error(`unsupported EC curve ${curve ?? 'unknown'}`)
  }
  throw new Error(`unsupported key type ${t ?? 'unknown'}: need RSA or ECDSA`)
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g

function pemBlocks(pem: string): Array<{ type: string; text: string }> {
  return [...pem.matchAll(PEM_BLOCK)].map((m) => ({ type: m[1], text: m[0] }))
}

function verificationKey(publicKey: KeyObject): VerificationKey {
  return { alg: algorithmFor(publicKey), kid: keyId(publicKey), publicKey }
}

export function signingKeyFrom(privateKey: KeyObject): SigningKey {
  const publicKey = createPublicKey(privateKey)
  return { ...verificationKey(publicKey), privateKey }
}

/** The first private key (PKCS#1 RSA, SEC1 EC or PKCS#8) in a PEM text. */
export function parseSigningKeyPem(pem: string, source = 'key'): SigningKey {
  for (const b of pemBlocks(pem)) {
    if (b.type === 'RSA PRIVATE KEY' || b.type === 'EC PRIVATE KEY' || b.type === 'PRIVATE KEY') return signingKeyFrom(createPrivateKey(b.text))
  }
  throw new Error(`${source}: no RSA or ECDSA private key found`)
}

/** Every public key in a PEM text: public keys, the public halves of private keys, and certificates' keys. */
export function parseVerificationKeysPem(pem: string, source = 'key file'): VerificationKey[] {
  const out: VerificationKey[] = []
  for (const b of pemBlocks(pem)) {
    let pub: KeyObject | undefined
    switch (b.type) {
      case 'PUBLIC KEY': case 'RSA PUBLIC KEY': pub = createPublicKey(b.text); break
      case 'RSA PRIVATE KEY': case 'EC PRIVATE KEY': case 'PRIVATE KEY': pub = createPublicKey(createPrivateKey(b.text)); break
      case 'CERTIFICATE': pub = new X509Certificate(b.text).publicKey; break
      default: continue
    }
    out.push(verificationKey(pub))
  }
  if (out.length === 0) throw new Error(`${source}: no RSA or ECDSA keys found`)
  return out
}

/** A fresh RSA-2048 signing key and its PKCS#8 PEM. */
export function generateSigningKey(): { key: SigningKey; pem: string } {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
  return { key: signingKeyFrom(privateKey), pem }
}

export interface ServiceAccountKeyOptions {
  /** --service-account-signing-key-file */
  signingKeyFile?: string
  /** --service-account-key-file (repeatable) */
  keyFiles?: string[]
  /** --tls-private-key-file: the verification key when no key file is given */
  tlsPrivateKeyFile?: string
  /** Where a generated signing key is kept (`<dataDir>/sa.key`) */
  dataDir: string
}

export interface ServiceAccountKeys {
  signing: SigningKey
  /** Keys tokens are verified with; always includes the signing key's public half. */
  verification: VerificationKey[]
  /** The file the signing key came from. */
  signingKeyFile: string
  /** Whether the signing key was generated now. */
  generated: boolean
}

/**
 * Resolves the flags to keys. Signing: --service-account-signing-key-file; else the first private key among
 * --service-account-key-file; else `<dataDir>/sa.key`, generated (mode 0600) when absent.
 * Verification: every key of --service-account-key-file (or of --tls-private-key-file when none), plus the signing key.
 */
export function loadServiceAccountKeys(o: ServiceAccountKeyOptions): ServiceAccountKeys {
  const keyFiles = o.keyFiles ?? []
  let signing: SigningKey | undefined
  let signingKeyFile = ''
  let generated = false
  if (o.signingKeyFile) {
    signing = parseSigningKeyPem(readFileSync(o.signingKeyFile, 'utf8'), o.signingKeyFile)
    signingKeyFile = o.signingKeyFile
  } else {
    for (const f of keyFiles) {
      try { signing = parseSigningKeyPem(readFileSync(f, 'utf8'), f); signingKeyFile = f; break } catch { /* a public-key file */ }
    }
  }
  if (!signing) {
    const file = join(o.dataDir, GENERATED_KEY_FILE)
    if (existsSync(file)) {
      signing = parseSigningKeyPem(readFileSync(file, 'utf8'), file)
    } else {
      mkdirSync(o.dataDir, { recursive: true })
      const g = generateSigningKey()
      writeFileSync(file, g.pem, { mode: 0o600 })
      signing = g.key
      generated = true
    }
    signingKeyFile = file
  }
  const verification: VerificationKey[] = []
  const sources = keyFiles.length > 0 ? keyFiles : o.tlsPrivateKeyFile ? [o.tlsPrivateKeyFile] : []
  for (const f of sources) verification.push(...parseVerificationKeysPem(readFileSync(f, 'utf8'), f))
  const { privateKey: _p, ...signingPublic } = signing
  verification.push(signingPublic)
  const seen = new Set<string>()
  const unique = verification.filter((k) => (seen.has(k.kid) ? false : (seen.add(k.kid), true)))
  return { signing, verification: unique, signingKeyFile, generated }
}

/** The JSON Web Key Set of the verification keys (for `/openid/v1/jwks`). */
export async function publicJwks(keys: readonly VerificationKey[]): Promise<{ keys: JWK[] }> {
  const out: JWK[] = []
  for (const k of keys) {
    const { kty, ...rest } = await exportJWK(k.publicKey)
    out.push({ use: 'sig', kty, kid: k.kid, alg: k.alg, ...rest })
  }
  return { keys: out }
}

// ---------------------------------------------------------------- issuing

/** JSON with object keys sorted at every level (the form go-jose's claim builder produces). */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`
  if (v !== null && typeof v === 'object') {
    const o = v as Obj
    return `{${Object.keys(o).filter((k) => o[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`
  }
  return JSON.stringify(v)
}

async function sign(key: SigningKey, claims: Obj): Promise<string> {
  return new CompactSign(new TextEncoder().encode(canonicalJson(claims)))
    .setProtectedHeader({ alg: key.alg, kid: key.kid })
    .sign(key.privateKey)
}

const seconds = (now: number | Date | undefined): number => Math.floor((now === undefined ? Date.now() : typeof now === 'number' ? now : now.getTime()) / 1000)

export interface ObjectRef { name: string; uid: string }

export interface BoundObjectRef { kind: 'Pod' | 'Secret' | 'Node' | string; name: string; uid?: string; apiVersion?: string }

export interface IssueTokenOptions {
  key: SigningKey
  /** The first --service-account-issuer. */
  issuer: string
  /** The service account. */
  namespace: string
  name: string
  uid: string
  /** Token audiences (the caller fills in the API audiences when the request named none). */
  audiences: string[]
  expirationSeconds: number
  /** The object the token is bound to (uid filled from the live object). */
  boundObjectRef?: BoundObjectRef
  /** The node a bound pod runs on (persisted in pod-bound tokens). */
  node?: ObjectRef
  /** Extended tokens: `warnafter` = now + this. */
  warnAfterSeconds?: number
  /** Milliseconds since the epoch, or a Date; default now. */
  now?: number | Date
  /** The token id; default a random UUID. */
  jti?: string
}

export interface IssuedToken { token: string; claims: Obj; expirationTimestamp: Date }

/** A bound service-account token (TokenRequest, projected volumes). */
export async function issueToken(o: IssueTokenOptions): Promise<IssuedToken> {
  const iat = seconds(o.now)
  const priv: Obj = { namespace: o.namespace, serviceaccount: { name: o.name, uid: o.uid } }
  const ref = o.boundObjectRef
  if (ref) {
    const r = { name: ref.name, uid: ref.uid ?? '' }
    switch (ref.kind) {
      case 'Pod':
        priv.pod = r
        if (o.node) priv.node = { name: o.node.name, uid: o.node.uid }
        break
      case 'Secret': priv.secret = r; break
      case 'Node': priv.node = r; break
      default: throw new Error(`cannot bind a token to a ${ref.kind}`)
    }
  }
  if (o.warnAfterSeconds) priv.warnafter = iat + o.warnAfterSeconds
  const exp = iat + o.expirationSeconds
  const claims: Obj = {
    aud: o.audiences, exp, iat, iss: o.issuer, jti: o.jti ?? randomUUID(), [PRIVATE_CLAIM]: priv, nbf: iat,
    sub: serviceAccountUsername(o.namespace, o.name),
  }
  return { token: await sign(o.key, claims), claims, expirationTimestamp: new Date(exp * 1000) }
}

export interface IssueLegacyTokenOptions {
  key: SigningKey
  namespace: string
  serviceAccountName: string
  serviceAccountUID: string
  secretName: string
}

/** A legacy secret-based token (no aud, no exp). */
export async function issueLegacyToken(o: IssueLegacyTokenOptions): Promise<string> {
  return sign(o.key, {
    iss: LEGACY_ISSUER,
    [LEGACY_CLAIM_NAMESPACE]: o.namespace,
    [LEGACY_CLAIM_SECRET_NAME]: o.secretName,
    [LEGACY_CLAIM_SA_NAME]: o.serviceAccountName,
    [LEGACY_CLAIM_SA_UID]: o.serviceAccountUID,
    sub: serviceAccountUsername(o.namespace, o.serviceAccountName),
  })
}

// ---------------------------------------------------------------- verifying

/** Reads of live objects; each returns undefined when the object does not exist. */
export interface ServiceAccountLookups {
  getServiceAccount(namespace: string, name: string): Obj | undefined
  getSecret(namespace: string, name: string): Obj | undefined
  getPod(namespace: string, name: string): Obj | undefined
  getNode(name: string): Obj | undefined
}

export interface VerifyTokenOptions {
  /** Accepted issuers of bound tokens (--service-account-issuer, all of them). */
  issuers: string[]
  /** The API audiences (--api-audiences, defaulting to the issuer): implicit audiences. */
  audiences: string[]
  /** The audiences the request is for (TokenReview spec.audiences); default the API audiences. */
  requestedAudiences?: string[]
  keys: readonly VerificationKey[]
  /** Live objects. Without them the existence and UID checks are skipped. */
  lookups?: ServiceAccountLookups
  /** Accept legacy secret-based tokens (default true). */
  legacy?: boolean
  /** --service-account-lookup: legacy tokens are checked against their Secret and ServiceAccount (default true). */
  serviceAccountLookup?: boolean
  now?: number | Date
}

export interface VerifiedToken {
  ok: true
  user: UserInfo
  /** The intersection of the token's and the requested audiences. */
  audiences: string[]
  /** A legacy token: the secret it lives in (the caller may stamp the last-used label). */
  legacySecret?: { namespace: string; name: string }
}

/** `error` undefined: not a service-account token (the authenticator abstains); otherwise the 401 reason. */
export interface RejectedToken { ok: false; error?: string }

export type VerifyResult = VerifiedToken | RejectedToken

const abstain: RejectedToken = { ok: false }
const reject = (error: string): RejectedToken => ({ ok: false, error })
const goQuoteList = (l: readonly string[]): string => `[${l.map((s) => JSON.stringify(s)).join(' ')}]`

/** The unverified `iss` of a compact JWT (upstream hasCorrectIssuer reads it before the signature). */
export function unverifiedIssuer(token: string): string | undefined {
  const parts = token.split('.')
  if (parts.length !== 3) return undefined
  try {
    const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'))
    return typeof claims?.iss === 'string' ? claims.iss : undefined
  } catch { return undefined }
}

function numericClaim(v: unknown): number | undefined { return typeof v === 'number' && Number.isFinite(v) ? v : undefined }

function deletedBefore(o: Obj, limitSeconds: number): boolean {
  const ts = o.metadata?.deletionTimestamp
  if (!ts) return false
  const t = Date.parse(ts)
  return Number.isFinite(t) && t / 1000 < limitSeconds
}

/** Verifies a bound or legacy service-account token. */
export async function verifyToken(token: string, o: VerifyTokenOptions): Promise<VerifyResult> {
  const iss = unverifiedIssuer(token)
  if (iss === undefined) return abstain
  const isLegacy = iss === LEGACY_ISSUER && (o.legacy ?? true) && !o.issuers.includes(iss)
  if (!isLegacy && !o.issuers.includes(iss)) return abstain

  let kid: string | undefined
  try { kid = decodeProtectedHeader(token).kid } catch { return abstain }
  const byKid = kid ? o.keys.filter((k) => k.kid === kid) : []
  const candidates = byKid.length > 0 ? byKid : o.keys
  let payload: Uint8Array | undefined
  const errs: string[] = []
  for (const k of candidates) {
    try {
      payload = (await compactVerify(token, k.publicKey, { algorithms: [k.alg] })).payload
      break
    } catch (e) { errs.push(e instanceof Error ? e.message : String(e)) }
  }
  if (!payload) {
    const uniq = [...new Set(errs)]
    return reject(uniq.length === 0 ? 'no verification keys' : uniq.length === 1 ? uniq[0] : `[${uniq.join(', ')}]`)
  }
  let claims: Obj
  try { claims = JSON.parse(new TextDecoder().decode(payload)) } catch { return abstain }
  if (claims === null || typeof claims !== 'object') return abstain
  const accepted = isLegacy ? [LEGACY_ISSUER] : o.issuers
  if (!accepted.includes(claims.iss)) return reject(`token issuer ${JSON.stringify(claims.iss)} is invalid`)

  const tokenAud: string[] = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud.filter((a: unknown) => typeof a === 'string') : []
  const implicit = o.audiences
  const tokenAudiences = tokenAud.length > 0 ? tokenAud : implicit
  const requested = o.requestedAudiences ?? implicit
  const auds = tokenAudiences.filter((a) => requested.includes(a))
  if (auds.length === 0 && implicit.length !== 0) {
    return reject(`token audiences ${goQuoteList(tokenAudiences)} is invalid for the target audiences ${goQuoteList(requested)}`)
  }
  const now = seconds(o.now)
  const r = isLegacy ? validateLegacy(token, claims, o) : validateBound(claims, o, now)
  if ('error' in r) return reject(r.error)
  return { ok: true, user: r.user, audiences: auds, ...(r.legacySecret ? { legacySecret: r.legacySecret } : {}) }
}

interface Validated { user: UserInfo; legacySecret?: { namespace: string; name: string } }

function validateBound(claims: Obj, o: VerifyTokenOptions, now: number): Validated | { error: string } {
  const priv = claims[PRIVATE_CLAIM]
  if (priv === null || typeof priv !== 'object') return { error: 'service account token claims could not be validated due to unexpected private claim' }
  const nbf = numericClaim(claims.nbf); const exp = numericClaim(claims.exp); const iat = numericClaim(claims.iat)
  if (nbf !== undefined && now + LEEWAY_SECONDS < nbf) return { error: 'service account token is not valid yet' }
  if (exp !== undefined && now - LEEWAY_SECONDS > exp) return { error: 'service account token has expired' }
  if (iat !== undefined && now + LEEWAY_SECONDS < iat) return { error: 'service account token is issued in the future' }

  const namespace: string = typeof priv.namespace === 'string' ? priv.namespace : ''
  const saRef: ObjectRef = { name: priv.serviceaccount?.name ?? '', uid: priv.serviceaccount?.uid ?? '' }
  const podRef: ObjectRef | undefined = priv.pod ? { name: priv.pod.name ?? '', uid: priv.pod.uid ?? '' } : undefined
  const secretRef: ObjectRef | undefined = priv.secret ? { name: priv.secret.name ?? '', uid: priv.secret.uid ?? '' } : undefined
  const nodeRef: ObjectRef | undefined = priv.node ? { name: priv.node.name ?? '', uid: priv.node.uid ?? '' } : undefined
  const invalidIfDeletedBefore = now - LEEWAY_SECONDS
  // A bound object that is gone invalidates the token; the answer does not say which lookup failed (as upstream).
  const lk = o.lookups
  if (lk) {
    const sa = lk.getServiceAccount(namespace, saRef.name)
    if (!sa) return { error: `serviceaccounts ${JSON.stringify(saRef.name)} not found` }
    if (deletedBefore(sa, invalidIfDeletedBefore)) return { error: 'service account token has been invalidated' }
    const uid = sa.metadata?.uid ?? ''
    if (uid !== saRef.uid) return { error: `service account UID (${uid}) does not match claim (${saRef.uid})` }
    if (secretRef) {
      const s = lk.getSecret(namespace, secretRef.name)
      if (!s) return { error: 'service account token has been invalidated' }
      if (deletedBefore(s, invalidIfDeletedBefore)) return { error: 'service account token has been invalidated' }
      const suid = s.metadata?.uid ?? ''
      if (suid !== secretRef.uid) return { error: `secret UID (${suid}) does not match service account secret ref claim (${secretRef.uid})` }
    }
    if (podRef) {
      const p = lk.getPod(namespace, podRef.name)
      if (!p) return { error: 'service account token has been invalidated' }
      if (deletedBefore(p, invalidIfDeletedBefore)) return { error: 'service account token has been invalidated' }
      const puid = p.metadata?.uid ?? ''
      if (puid !== podRef.uid) return { error: `pod UID (${puid}) does not match service account pod ref claim (${podRef.uid})` }
    }
    if (nodeRef && !podRef) {
      const n = lk.getNode(nodeRef.name)
      if (!n) return { error: 'service account token has been invalidated' }
      if (deletedBefore(n, invalidIfDeletedBefore)) return { error: 'service account token has been invalidated' }
      const nuid = n.metadata?.uid ?? ''
      if (nuid !== nodeRef.uid) return { error: `node UID (${nuid}) does not match service account node ref claim (${nodeRef.uid})` }
    }
  }
  const jti = typeof claims.jti === 'string' ? claims.jti : ''
  return {
    user: serviceAccountUserInfo({
      namespace, name: saRef.name, uid: saRef.uid,
      podName: podRef?.name, podUID: podRef?.uid, nodeName: nodeRef?.name, nodeUID: nodeRef?.uid,
      credentialID: jti ? `JTI=${jti}` : undefined,
    }),
  }
}

function secretDataString(secret: Obj, key: string): string | undefined {
  const d = secret.data?.[key]
  if (typeof d === 'string') return Buffer.from(d, 'base64').toString('utf8')
  const s = secret.stringData?.[key]
  return typeof s === 'string' ? s : undefined
}

function validateLegacy(token: string, claims: Obj, o: VerifyTokenOptions): Validated | { error: string } {
  const str = (k: string): string => (typeof claims[k] === 'string' ? claims[k] : '')
  const sub = str('sub')
  if (sub === '') return { error: 'sub claim is missing' }
  const namespace = str(LEGACY_CLAIM_NAMESPACE)
  if (namespace === '') return { error: 'namespace claim is missing' }
  const secretName = str(LEGACY_CLAIM_SECRET_NAME)
  if (secretName === '') return { error: 'secretName claim is missing' }
  const saName = str(LEGACY_CLAIM_SA_NAME)
  if (saName === '') return { error: 'serviceAccountName claim is missing' }
  const saUID = str(LEGACY_CLAIM_SA_UID)
  if (saUID === '') return { error: 'serviceAccountUID claim is missing' }
  const split = splitServiceAccountUsername(sub)
  if (!split || split.namespace !== namespace || split.name !== saName) return { error: 'sub claim is invalid' }
  const lk = o.lookups
  if ((o.serviceAccountLookup ?? true) && lk) {
    const secret = lk.getSecret(namespace, secretName)
    if (!secret || secret.metadata?.deletionTimestamp) return { error: 'Token has been invalidated' }
    if (secretDataString(secret, 'token') !== token) return { error: "Token does not match server's copy" }
    const sa = lk.getServiceAccount(namespace, saName)
    if (!sa) return { error: `serviceaccounts ${JSON.stringify(saName)} not found` }
    if (sa.metadata?.deletionTimestamp) return { error: `ServiceAccount ${namespace}/${saName} has been deleted` }
    const uid = sa.metadata?.uid ?? ''
    if (uid !== saUID) return { error: `ServiceAccount UID (${uid}) does not match claim (${saUID})` }
    if (secret.metadata?.labels?.[LEGACY_TOKEN_INVALID_SINCE_LABEL]) return { error: 'Token has been invalidated' }
  }
  return { user: serviceAccountUserInfo({ namespace, name: saName, uid: saUID }), legacySecret: { namespace, name: secretName } }
}

export interface ServiceAccountInfo {
  namespace: string
  name: string
  uid: string
  podName?: string
  podUID?: string
  nodeName?: string
  nodeUID?: string
  credentialID?: string
}

/** The user a service account authenticates as (without `system:authenticated`, which the authenticate stage adds). */
export function serviceAccountUserInfo(sa: ServiceAccountInfo): UserInfo {
  const extra: Record<string, string[]> = {}
  if (sa.podName && sa.podUID) { extra[EXTRA_POD_NAME] = [sa.podName]; extra[EXTRA_POD_UID] = [sa.podUID] }
  if (sa.credentialID) extra[EXTRA_CREDENTIAL_ID] = [sa.credentialID]
  if (sa.nodeName) {
    extra[EXTRA_NODE_NAME] = [sa.nodeName]
    if (sa.nodeUID) extra[EXTRA_NODE_UID] = [sa.nodeUID]
  }
  const u: UserInfo = { username: serviceAccountUsername(sa.namespace, sa.name), uid: sa.uid, groups: serviceAccountGroups(sa.namespace) }
  if (Object.keys(extra).length > 0) u.extra = extra
  return u
}
