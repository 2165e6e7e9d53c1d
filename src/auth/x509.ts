// Client certificates: CA bundles (--client-ca-file, --requestheader-client-ca-file), chain verification, the x509 user (CN, O, UID) and the request-header (front proxy) user.
import type { Options } from '../options.js'
import { X509Certificate, createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { UserInfo } from '../pipeline/context.js'
import { EXTRA_CREDENTIAL_ID } from './service-account.js'

/** A verified chain may be this deep at most (leaf, intermediates, root). */
const MAX_CHAIN = 10
const EKU_CLIENT_AUTH = '1.3.6.1.5.5.7.3.2'
const EKU_ANY = '2.5.29.37.0'
/** upstream's OID for a user UID in a certificate subject (AllowParsingUserUIDFromCertAuth). */
export const UID_OID = '1.3.6.1.4.1.57683.2'

export class CaBundleError extends Error {}

/** One CA bundle: the certificates of a PEM file (upstream's dynamic CA content), under upstream's name `<purpose>::<file>`. */
export interface CaBundle { name: string; roots: X509Certificate[]; pem: string }

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g

/** The CERTIFICATE blocks of a PEM text, parsed; other blocks are skipped, as upstream's cert.ParseCertsPEM does. */
export function parseCaBundle(purpose: string, file: string, pem: string): CaBundle {
  const name = `${purpose}::${file}`
  if (pem.length === 0) throw new CaBundleError(`missing content for CA bundle "${name}"`)
  const roots: X509Certificate[] = []
  for (const m of pem.matchAll(PEM_BLOCK)) {
    if (m[1] !== 'CERTIFICATE') continue
    try {
      roots.push(new X509Certificate(`-----BEGIN CERTIFICATE-----${m[2]}-----END CERTIFICATE-----\n`))
    } catch (err) {
      throw new CaBundleError(`error loading CA bundle for "${name}": ${(err as Error).message}`)
    }
  }
  if (roots.length === 0) throw new CaBundleError(`error loading CA bundle for "${name}": data does not contain any valid RSA or ECDSA certificates`)
  return { name, roots, pem }
}

/** Reads and parses a bundle file; the errors are upstream's texts (the caller names the flag). */
export function loadCaBundle(purpose: string, file: string): CaBundle {
  let pem: string
  try {
    pem = readFileSync(file, 'utf8')
  } catch (err) {
    const e = err as NodeJS.ErrnoException
    throw new CaBundleError(e.code === 'ENOENT' ? `open ${file}: no such file or directory` : `open ${file}: ${e.message}`)
  }
  return parseCaBundle(purpose, file, pem)
}

// ---------------------------------------------------------------- verification

const timeOf = (s: string): number => Date.parse(s)

/** Go's time format in its x509 expiry error (RFC 3339, UTC). */
const goTime = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')

/** The EKU list allows client authentication (no EKU extension allows everything). */
function clientAuthAllowed(c: X509Certificate): boolean {
  const eku = c.keyUsage as string[] | undefined
  return eku === undefined || eku.length === 0 || eku.includes(EKU_CLIENT_AUTH) || eku.includes(EKU_ANY)
}

function issuedBy(c: X509Certificate, parent: X509Certificate): boolean {
  try { return c.checkIssued(parent) && c.verify(parent.publicKey) } catch { return false }
}

export type Verdict = { ok: true; validFrom: number; validUntil: number } | { ok: false; error: string }

/**
 * Verifies `leaf` (with the intermediates the peer sent) against `roots` at `now`, as Go's Certificate.Verify with
 * KeyUsages [ClientAuth]: every certificate in its validity window, each signed by the next, intermediates CAs, the
 * chain ending at one of the roots, and client authentication allowed by the EKUs of every certificate on the way.
 */
export function verifyChain(leaf: X509Certificate, intermediates: X509Certificate[], roots: X509Certificate[], now: number): Verdict {
  const from = timeOf(leaf.validFrom)
  const until = timeOf(leaf.validTo)
  if (now < from || now > until) {
    return { ok: false, error: `x509: certificate has expired or is not yet valid: current time ${goTime(now)} is ${now < from ? `before ${goTime(from)}` : `after ${goTime(until)}`}` }
  }
  let sawEku = false
  const search = (c: X509Certificate, depth: number, lo: number, hi: number): Verdict | null => {
    if (!clientAuthAllowed(c)) { sawEku = true; return null }
    for (const r of roots) {
      if (!issuedBy(c, r)) continue
      const rf = timeOf(r.validFrom)
      const rt = timeOf(r.validTo)
      if (now < rf || now > rt) continue
      if (!clientAuthAllowed(r)) { sawEku = true; continue }
      return { ok: true, validFrom: Math.max(lo, rf), validUntil: Math.min(hi, rt) }
    }
    if (depth >= MAX_CHAIN) return null
    for (const i of intermediates) {
      if (i === c || !i.ca || !issuedBy(c, i)) continue
      const f = timeOf(i.validFrom)
      const t = timeOf(i.validTo)
      if (now < f || now > t) continue
      const v = search(i, depth + 1, Math.max(lo, f), Math.min(hi, t))
      if (v) return v
    }
    return null
  }
  const v = search(leaf, 1, from, until)
  if (v) return v
  return { ok: false, error: sawEku ? 'x509: certificate specifies an incompatible key usage' : 'x509: certificate signed by unknown authority' }
}

// ---------------------------------------------------------------- the peer of a connection

/**
 * The client certificate of one TLS connection (the node front-end makes one per connection that sent one), with
 * each verification kept while its chain stays valid: a connection's requests cost one look-up, not a verification.
 */
export class PeerCertificate {
  readonly leaf: X509Certificate
  readonly intermediates: X509Certificate[]
  readonly #verdicts = new Map<CaBundle, { verdict: Verdict; until: number }>()

  constructor(leaf: X509Certificate, intermediates: X509Certificate[]) {
    this.leaf = leaf
    this.intermediates = intermediates
  }

  verify(bundle: CaBundle, now: number): Verdict {
    const hit = this.#verdicts.get(bundle)
    if (hit && now <= hit.until && (!hit.verdict.ok || now >= hit.verdict.validFrom)) return hit.verdict
    const verdict = verifyChain(this.leaf, this.intermediates, bundle.roots, now)
    // A failure is kept a short while (a clock-dependent one may turn), a success while every certificate is valid.
    this.#verdicts.set(bundle, { verdict, until: verdict.ok ? verdict.validUntil : now + FAILURE_TTL_MS })
    return verdict
  }

  /** The x509 authenticator's outcome for this certificate (its user does not change while the chain verifies). */
  userOutcome: { user?: UserInfo; error?: string } | undefined

  #subject: Record<string, string | string[]> | undefined
  get subject(): Record<string, string | string[]> {
    this.#subject ??= (this.leaf.toLegacyObject().subject ?? {}) as unknown as Record<string, string | string[]>
    return this.#subject
  }

  /** The subject CN (Go keeps the last of several). */
  get commonName(): string {
    const cn = this.subject.CN
    return Array.isArray(cn) ? cn[cn.length - 1] ?? '' : cn ?? ''
  }

  /** upstream's certificateIdentifier (serial number in decimal, plus the subject here: SKID/AKID are not exposed by node). */
  get identifier(): string {
    let sn: string
    try { sn = BigInt(`0x${this.leaf.serialNumber}`).toString(10) } catch { sn = this.leaf.serialNumber }
    return `SN=${sn}, subject=${this.leaf.subject.replace(/\n/g, ', ')}`
  }
}

const FAILURE_TTL_MS = 1000

/** What a request on the node front-end carries for the certificate authenticators. */
export interface PeerRequest {
  /** the connection's client certificate; null when it sent none */
  cert: PeerCertificate | null
  /** the request's header lines as received (name, value, name, value...): the proxy headers are read line by line */
  rawHeaders: string[]
  /** set by authentication when the request runs as system:anonymous (an HTTP/2 connection is then closed after it) */
  anonymous?: boolean
}

// ---------------------------------------------------------------- authenticators

export interface CertAuthnConfig {
  /** --client-ca-file */
  clientCA?: CaBundle
  /** --requestheader-client-ca-file and its headers */
  requestHeader?: RequestHeaderConfig
  /** AllowParsingUserUIDFromCertAuth */
  uidFromCert: boolean
}

export interface RequestHeaderConfig {
  ca: CaBundle
  allowedNames: string[]
  /** lower-cased header names */
  usernameHeaders: string[]
  uidHeaders: string[]
  groupHeaders: string[]
  extraPrefixes: string[]
}

const asList = (v: string | string[] | undefined): string[] => v === undefined ? [] : Array.isArray(v) ? v : [v]

/** upstream's CommonNameUserConversion: CN, every O, the UID element, and the credential id (SHA-256 of the DER). */
export function certificateUser(cert: PeerCertificate, uidFromCert: boolean): { user?: UserInfo; error?: string } {
  const name = cert.commonName
  if (name === '') return {}
  let uid = ''
  if (uidFromCert) {
    const uids = asList(cert.subject[UID_OID])
    if (uids.length > 1) return { error: `expected 1 UID, but found multiple: [${uids.join(' ')}]` }
    if (uids.length === 1) {
      if (uids[0] === '') return { error: 'UID cannot be an empty string' }
      uid = uids[0]
    }
  }
  const id = `X509SHA256=${createHash('sha256').update(cert.leaf.raw).digest('hex')}`
  return { user: { username: name, uid, groups: [...asList(cert.subject.O)], extra: { [EXTRA_CREDENTIAL_ID]: [id] } } }
}

/** Go's url.PathUnescape of an extra key; a malformed one is kept as it is. */
function unescapeKey(k: string): string {
  if (!k.includes('%')) return k
  if (/%(?![0-9a-fA-F]{2})/.test(k)) return k
  try {
    return Buffer.from(k.replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1').toString('utf8')
  } catch { return k }
}

/**
 * upstream's request-header authenticator over the header lines: the first non-empty value of the username (and uid)
 * headers in the configured order, every non-empty value of every group header, and every value of the headers with
 * an extra prefix (key: the rest of the name, lower-cased, percent-decoded). No username: not authenticated.
 */
export function requestHeaderUser(rh: RequestHeaderConfig, rawHeaders: string[]): UserInfo | undefined {
  const lines = new Map<string, string[]>()
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const k = rawHeaders[i].toLowerCase()
    if (k.startsWith(':')) continue
    let l = lines.get(k)
    if (!l) { l = []; lines.set(k, l) }
    l.push(rawHeaders[i + 1])
  }
  // h.Get: the first line of a header; the first header with a non-empty one wins.
  const first = (names: string[]): string => {
    for (const n of names) {
      const v = lines.get(n)?.[0] ?? ''
      if (v !== '') return v
    }
    return ''
  }
  const username = first(rh.usernameHeaders)
  if (username === '') return undefined
  const groups: string[] = []
  for (const n of rh.groupHeaders) for (const v of lines.get(n) ?? []) if (v !== '') groups.push(v)
  const extra: Record<string, string[]> = {}
  let extras = 0
  for (const p of rh.extraPrefixes) {
    for (const [k, vs] of lines) {
      if (!k.startsWith(p)) continue
      const key = unescapeKey(k.slice(p.length))
      ;(extra[key] ??= []).push(...vs)
      extras++
    }
  }
  const u: UserInfo = { username, uid: first(rh.uidHeaders), groups }
  if (extras > 0) u.extra = extra
  return u
}

/** The header names (and prefixes) a successful request-header authentication removes from the request. */
export function clearRequestHeaders(rh: RequestHeaderConfig, headers: Record<string, string>): void {
  for (const n of rh.usernameHeaders) delete headers[n]
  for (const n of rh.uidHeaders) delete headers[n]
  for (const n of rh.groupHeaders) delete headers[n]
  if (rh.extraPrefixes.length > 0) for (const k of Object.keys(headers)) if (rh.extraPrefixes.some((p) => k.startsWith(p))) delete headers[k]
}

/** upstream's AuthenticatedGroupAdder: every authenticated user is in system:authenticated. */
function withAuthenticatedGroup(r: { user?: UserInfo; error?: string }): { user?: UserInfo; error?: string } {
  const u = r.user
  if (!u || u.username === 'system:anonymous' || u.groups.includes('system:authenticated') || u.groups.includes('system:unauthenticated')) return r
  return { user: { ...u, groups: [...u.groups, 'system:authenticated'] } }
}

export type PeerOutcome = { user: UserInfo; error?: undefined } | { user?: undefined; error: string } | { user?: undefined; error?: undefined }

/**
 * The certificate authenticators in upstream's order: the front proxy (a certificate of the request-header CA whose
 * CN is allowed, then the headers), then the client certificate itself. The first user wins; errors are kept and
 * decide only when no later authenticator (a bearer token) succeeds.
 */
export function authenticatePeer(cfg: CertAuthnConfig, peer: PeerRequest, headers: Record<string, string>, now: number): PeerOutcome {
  const cert = peer.cert
  if (cert === null) return {}
  const errors: string[] = []
  const rh = cfg.requestHeader
  if (rh) {
    const v = cert.verify(rh.ca, now)
    if (!v.ok) errors.push(v.error)
    else if (rh.allowedNames.length > 0 && !rh.allowedNames.includes(cert.commonName)) {
      errors.push(`x509: subject with cn=${cert.commonName} is not in the allowed list`)
    } else {
      const u = requestHeaderUser(rh, peer.rawHeaders)
      if (u) {
        clearRequestHeaders(rh, headers)
        return { user: u }
      }
    }
  }
  if (cfg.clientCA) {
    const v = cert.verify(cfg.clientCA, now)
    if (!v.ok) errors.push(`verifying certificate ${cert.identifier} failed: ${v.error}`)
    else {
      // Made once per certificate (a connection's requests share it; users are never changed after authentication).
      const r = cert.userOutcome ??= withAuthenticatedGroup(certificateUser(cert, cfg.uidFromCert))
      if (r.user) return { user: r.user }
      if (r.error) errors.push(r.error)
    }
  }
  if (errors.length === 0) return {}
  return { error: errors.length === 1 ? errors[0] : `[${errors.join(', ')}]` }
}

// ---------------------------------------------------------------- configuration across threads

/** What the main thread hands every front-end (PEM text: certificates are parsed in each thread). */
export interface CertAuthnData {
  /** every CA a client certificate may chain to (advertised in the TLS handshake) */
  caPems: string[]
  clientCA?: { file: string; pem: string }
  requestHeader?: { file: string; pem: string; allowedNames: string[]; usernameHeaders: string[]; uidHeaders: string[]; groupHeaders: string[]; extraPrefixes: string[] }
  uidFromCert: boolean
}

export type CertAuthnOptions = Pick<Options, 'clientCaFile' | 'requestheaderClientCaFile' | 'requestheaderAllowedNames' | 'requestheaderUsernameHeaders'
  | 'requestheaderUidHeaders' | 'requestheaderGroupHeaders' | 'requestheaderExtraHeadersPrefix' | 'featureGates'>

/**
 * Reads and checks the bundles of the options (a bad one throws a CaBundleError carrying the flag); undefined when
 * neither flag is given (the secure port stays on uWS).
 */
export function certAuthnData(o: CertAuthnOptions): CertAuthnData | undefined {
  // Options made without resolveOptions (tests, benchmarks) may lack these fields.
  if (!o.clientCaFile && !o.requestheaderClientCaFile) return undefined
  const load = (flag: string, purpose: string, file: string): CaBundle => {
    try { return loadCaBundle(purpose, file) } catch (err) { throw new CaBundleError(`--${flag}: ${(err as Error).message}`) }
  }
  const lower = (l: string[] | undefined): string[] => (l ?? []).map((s) => s.trim().toLowerCase())
  const d: CertAuthnData = { caPems: [], uidFromCert: o.featureGates?.AllowParsingUserUIDFromCertAuth !== false }
  if (o.clientCaFile) {
    const b = load('client-ca-file', 'client-ca-bundle', o.clientCaFile)
    d.clientCA = { file: o.clientCaFile, pem: b.pem }
    d.caPems.push(b.pem)
  }
  if (o.requestheaderClientCaFile) {
    const b = load('requestheader-client-ca-file', 'request-header', o.requestheaderClientCaFile)
    d.requestHeader = {
      file: o.requestheaderClientCaFile, pem: b.pem, allowedNames: [...(o.requestheaderAllowedNames ?? [])],
      usernameHeaders: lower(o.requestheaderUsernameHeaders), uidHeaders: lower(o.requestheaderUidHeaders),
      groupHeaders: lower(o.requestheaderGroupHeaders), extraPrefixes: lower(o.requestheaderExtraHeadersPrefix),
    }
    d.caPems.push(b.pem)
  }
  return d
}

/** The authenticators' configuration in a thread. */
export function certAuthnConfig(d: CertAuthnData): CertAuthnConfig {
  const c: CertAuthnConfig = { uidFromCert: d.uidFromCert }
  if (d.clientCA) c.clientCA = parseCaBundle('client-ca-bundle', d.clientCA.file, d.clientCA.pem)
  const rh = d.requestHeader
  if (rh) {
    c.requestHeader = {
      ca: parseCaBundle('request-header', rh.file, rh.pem), allowedNames: rh.allowedNames, usernameHeaders: rh.usernameHeaders,
      uidHeaders: rh.uidHeaders, groupHeaders: rh.groupHeaders, extraPrefixes: rh.extraPrefixes,
    }
  }
  return c
}

/** upstream's start-up warnings when a header list leaves out the standard name extension API servers expect. */
export function requestHeaderWarnings(o: Pick<CertAuthnOptions, 'requestheaderUsernameHeaders' | 'requestheaderGroupHeaders' | 'requestheaderExtraHeadersPrefix'>): string[] {
  const has = (l: string[] | undefined, h: string): boolean => (l ?? []).some((x) => x.trim().toLowerCase() === h.toLowerCase())
  const out: string[] = []
  const check = (l: string[] | undefined, flag: string, std: string, what: string): void => {
    if ((l ?? []).length > 0 && !has(l, std)) out.push(`--${flag} is set without specifying the standard ${std} ${what} - API aggregation will not work`)
  }
  check(o.requestheaderUsernameHeaders, 'requestheader-username-headers', 'X-Remote-User', 'header')
  check(o.requestheaderGroupHeaders, 'requestheader-group-headers', 'X-Remote-Group', 'header')
  check(o.requestheaderExtraHeadersPrefix, 'requestheader-extra-headers-prefix', 'X-Remote-Extra-', 'header prefix')
  return out
}
