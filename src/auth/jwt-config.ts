// The AuthenticationConfiguration file (--authentication-config) and the --oidc-* flags: decoding, upstream's validation
// with its field paths and texts, and the compiled form the JWT authenticators run (CEL programs compiled once here).
import { parseCaBundle } from './x509.js'
import { parseDocument } from 'yaml'
import { fieldErrorBody, fieldDuplicate, fieldInvalid, fieldRequired, fieldTooMany, type FieldError } from '../machinery/errors.js'
import { domainPrefixedPath } from '../machinery/validation.js'
import { celCompileProblemWith, celProgramWith, celSelects, type CelProgram, type CelResult, type CelVariables } from '../machinery/cel.js'

export const CONFIG_GROUP = 'apiserver.config.orch.io'
/** The versions of the kind upstream registers (v1alpha1 from 1.29, v1beta1 from 1.30, v1 from 1.34); the same fields in each. */
export const CONFIG_VERSIONS = ['v1', 'v1beta1', 'v1alpha1']
export const CONFIG_KIND = 'AuthenticationConfiguration'

/** Upstream's allow-list of signing algorithms (sorted, as oidc.AllValidSigningAlgorithms gives them). */
export const ALLOWED_SIGNING_ALGS = ['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512']
/** The extra key a token's `jti` is reported under (upstream authentication.kubernetes.io/credential-id). */
export const CREDENTIAL_ID_KEY = 'authentication.orch.io/credential-id'

// ---------------------------------------------------------------- the decoded configuration (JSON field names)

export interface PrefixedClaimOrExpression { claim?: string; prefix?: string | null; expression?: string }
export interface JwtAuthenticatorConfig {
  issuer: { url?: string; discoveryURL?: string; certificateAuthority?: string; audiences?: string[]; audienceMatchPolicy?: string; egressSelectorType?: string }
  claimValidationRules?: Array<{ claim?: string; requiredValue?: string; expression?: string; message?: string }>
  claimMappings: { username?: PrefixedClaimOrExpression; groups?: PrefixedClaimOrExpression; uid?: { claim?: string; expression?: string }; extra?: Array<{ key?: string; valueExpression?: string }> }
  userValidationRules?: Array<{ expression?: string; message?: string }>
}
export interface AuthenticationConfiguration {
  apiVersion?: string
  kind?: string
  jwt?: JwtAuthenticatorConfig[]
  anonymous?: { enabled?: boolean; conditions?: Array<{ path?: string }> }
}

// ---------------------------------------------------------------- strict decoding

type Shape = 'string' | 'bool' | 'nullable-string' | { list: Shape } | { object: string; fields: Record<string, Shape> }

const prefixed: Shape = { object: 'PrefixedClaimOrExpression', fields: { claim: 'string', prefix: 'nullable-string', expression: 'string' } }
const SHAPE: Shape = {
  object: 'AuthenticationConfiguration',
  fields: {
    apiVersion: 'string', kind: 'string',
    jwt: { list: { object: 'JWTAuthenticator', fields: {
      issuer: { object: 'Issuer', fields: { url: 'string', discoveryURL: 'string', certificateAuthority: 'string', audiences: { list: 'string' }, audienceMatchPolicy: 'string', egressSelectorType: 'string' } },
      claimValidationRules: { list: { object: 'ClaimValidationRule', fields: { claim: 'string', requiredValue: 'string', expression: 'string', message: 'string' } } },
      claimMappings: { object: 'ClaimMappings', fields: {
        username: prefixed, groups: prefixed,
        uid: { object: 'ClaimOrExpression', fields: { claim: 'string', expression: 'string' } },
        extra: { list: { object: 'ExtraMapping', fields: { key: 'string', valueExpression: 'string' } } },
      } },
      userValidationRules: { list: { object: 'UserValidationRule', fields: { expression: 'string', message: 'string' } } },
    } } },
    anonymous: { object: 'AnonymousAuthConfig', fields: { enabled: 'bool', conditions: { list: { object: 'AnonymousAuthCondition', fields: { path: 'string' } } } } },
  },
}

function jsonType(v: unknown): string {
  if (typeof v === 'string') return 'string'
  if (typeof v === 'number') return 'number'
  if (typeof v === 'boolean') return 'bool'
  if (Array.isArray(v)) return 'array'
  return 'object'
}

function goType(s: Shape): string {
  if (s === 'string' || s === 'nullable-string') return 'string'
  if (s === 'bool') return 'bool'
  if ('list' in s) return `[]${goType(s.list).replace(/^apiserver\./, 'v1.')}`
  return `v1.${s.object}`
}

/** Go's json type errors over the decoded JSON (a field of the wrong JSON type), named as encoding/json names them. */
function typeErrors(v: unknown, shape: Shape, path: string, owner: string, out: string[]): void {
  if (v === null || v === undefined) return
  const mismatch = () => { out.push(`json: cannot unmarshal ${jsonType(v)} into Go struct field ${owner}.${path} of type ${goType(shape)}`) }
  if (shape === 'string' || shape === 'nullable-string') { if (typeof v !== 'string') mismatch(); return }
  if (shape === 'bool') { if (typeof v !== 'boolean') mismatch(); return }
  if ('list' in shape) {
    if (!Array.isArray(v)) { mismatch(); return }
    for (const x of v) typeErrors(x, shape.list, path, owner, out)
    return
  }
  if (typeof v !== 'object' || Array.isArray(v)) { mismatch(); return }
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const f = shape.fields[k]
    if (f !== undefined) typeErrors(x, f, path === '' ? k : `${path}.${k}`, shape.object, out)
  }
}

/** Go's decoding of nulls: a null field is absent (a nil pointer keeps null), a null list item is its type's zero value. */
function normalize(v: unknown, shape: Shape): unknown {
  if (v === null || v === undefined) return shape === 'nullable-string' && v === null ? null : undefined
  if (typeof shape === 'string') return v
  const zero = (s: Shape): unknown => s === 'bool' ? false : typeof s === 'string' ? '' : 'list' in s ? [] : {}
  if ('list' in shape) return (v as unknown[]).map((x) => x === null ? zero(shape.list) : normalize(x, shape.list))
  const out: Record<string, unknown> = {}
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const f = shape.fields[k]
    if (f === undefined) continue
    const r = normalize(x, f)
    if (r !== undefined) out[k] = r
  }
  return out
}

/** Unknown fields are reported with their list indexes, as the strict decoder names them (`jwt[0].issuer.foo`). */
function unknownFields(v: unknown, shape: Shape, path: string, out: string[]): void {
  if (v === null || typeof v !== 'object' || typeof shape === 'string') return
  if ('list' in shape) {
    if (Array.isArray(v)) v.forEach((x, i) => unknownFields(x, shape.list, `${path}[${i}]`, out))
    return
  }
  if (Array.isArray(v)) return
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const p = path === '' ? k : `${path}.${k}`
    const f = shape.fields[k]
    if (f === undefined) out.push(p)
    else unknownFields(x, f, p, out)
  }
}

export class ConfigLoadError extends Error {}

/**
 * Decodes the file's text (YAML or JSON) as upstream's strict decoder does: apiVersion and kind must name a registered
 * version of AuthenticationConfiguration; type mismatches and unknown or duplicate fields are errors.
 */
export function decodeAuthenticationConfiguration(text: string): AuthenticationConfiguration {
  if (text.length === 0) throw new ConfigLoadError('empty config data')
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true })
  if (doc.errors.length > 0) {
    // go-yaml's texts (through sigs.k8s.io/yaml): a repeated key, else the first error with its line.
    const e = doc.errors[0]
    const line = e.linePos?.[0]?.line
    if (e.code === 'DUPLICATE_KEY' && text.trimStart().startsWith('{')) {
      // JSON is decoded strictly as JSON: a repeated field is a strict decoding error.
      const key = /^"((?:[^"\\]|\\.)*)"/.exec(text.slice(e.pos[0]))?.[1] ?? ''
      throw new ConfigLoadError(`strict decoding error: duplicate field ${JSON.stringify(key)}`)
    }
    const dup = e.code === 'DUPLICATE_KEY' ? /^\s*(?:-\s+)?([^\s:]+):/.exec(text.split('\n')[(line ?? 1) - 1] ?? '')?.[1] : undefined
    if (dup !== undefined) throw new ConfigLoadError(`error converting YAML to JSON: yaml: unmarshal errors:\n  line ${line}: key ${JSON.stringify(dup)} already set in map`)
    throw new ConfigLoadError(`error converting YAML to JSON: yaml: ${line !== undefined ? `line ${line}: ` : ''}${e.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')}`)
  }
  const raw = doc.toJS({ maxAliasCount: 100 }) as unknown
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigLoadError(`couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonType(raw)} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`)
  }
  const obj = raw as Record<string, unknown>
  const kind = typeof obj.kind === 'string' ? obj.kind : ''
  const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : ''
  if (kind === '') throw new ConfigLoadError(`Object 'Kind' is missing in '${JSON.stringify(raw)}'`)
  const slash = apiVersion.indexOf('/')
  const group = slash < 0 ? '' : apiVersion.slice(0, slash)
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1)
  if (group !== CONFIG_GROUP || !CONFIG_VERSIONS.includes(version) || kind !== CONFIG_KIND) {
    throw new ConfigLoadError(`no kind "${kind}" is registered for version "${apiVersion}" in scheme "pkg/runtime/scheme.go:100"`)
  }
  const mismatches: string[] = []
  typeErrors(raw, SHAPE, '', 'AuthenticationConfiguration', mismatches)
  if (mismatches.length > 0) throw new ConfigLoadError(mismatches[0])
  const unknown: string[] = []
  unknownFields(raw, SHAPE, '', unknown)
  if (unknown.length > 0) throw new ConfigLoadError(`strict decoding error: ${unknown.map((u) => `unknown field "${u}"`).join(', ')}`)
  const cfg = normalize(raw, SHAPE) as AuthenticationConfiguration
  for (const j of cfg.jwt ?? []) {
    // Go's zero values for absent structs.
    j.issuer ??= {}
    j.claimMappings ??= {}
  }
  return cfg
}

// ---------------------------------------------------------------- --oidc-* flags

export interface OidcFlags {
  issuerUrl: string
  clientId: string
  usernameClaim: string
  usernamePrefix: string
  groupsClaim: string
  groupsPrefix: string
  requiredClaims: string[]
  caPem: string
}

/** The JWT authenticator the flags stand for (upstream ToAuthenticationConfig): the legacy username prefix rules. */
export function configFromFlags(f: OidcFlags): AuthenticationConfiguration {
  let usernamePrefix = f.usernamePrefix
  if (usernamePrefix === '' && f.usernameClaim !== 'email') usernamePrefix = `${f.issuerUrl}#`
  if (f.usernamePrefix === '-') usernamePrefix = ''
  const j: JwtAuthenticatorConfig = {
    issuer: { url: f.issuerUrl, audiences: [f.clientId] },
    claimMappings: { username: { prefix: usernamePrefix, claim: f.usernameClaim } },
  }
  if (f.groupsClaim !== '') j.claimMappings.groups = { prefix: f.groupsPrefix, claim: f.groupsClaim }
  if (f.caPem !== '') j.issuer.certificateAuthority = f.caPem
  if (f.requiredClaims.length > 0) {
    const seen = new Map<string, string>()
    for (const kv of f.requiredClaims) {
      // cliflag's map flag: key and value split at the first '=', each trimmed; a later key wins.
      const eq = kv.indexOf('=')
      seen.set((eq < 0 ? kv : kv.slice(0, eq)).trim(), eq < 0 ? '' : kv.slice(eq + 1).trim())
    }
    j.claimValidationRules = [...seen].map(([claim, requiredValue]) => ({ claim, requiredValue }))
  }
  return { jwt: [j] }
}

// ---------------------------------------------------------------- validation and compilation

const CLAIMS_VARS: CelVariables = { claims: 'map<string, dyn>' }
const USER_VARS: CelVariables = { user: { username: 'string', uid: 'string', groups: 'list<string>', extra: 'map<string, list<string>>' } }

export interface CompiledExpression { expression: string; program: CelProgram; message: string }
export type ClaimOrProgram = { claim: string; prefix: string } | { program: CelProgram }

/** One JWT authenticator as it runs. */
export interface CompiledJwt {
  url: string
  discoveryURL: string
  certificateAuthority: string
  audiences: string[]
  username: ClaimOrProgram
  groups: ClaimOrProgram | undefined
  uid: { claim: string } | { program: CelProgram } | undefined
  extra: Array<{ key: string; program: CelProgram }>
  requiredClaims: Array<[string, string]>
  claimRules: CompiledExpression[]
  userRules: CompiledExpression[]
  /** Whether any CEL expression reads the claims (they are converted for CEL only then). */
  celClaims: boolean
}

/** Go's url.Parse view of what upstream checks: scheme, user info, query and fragment. */
function urlProblems(field: string, raw: string, disallowed: string[]): FieldError[] {
  const errs: FieldError[] = []
  if (disallowed.includes(raw)) errs.push(fieldInvalid(field, raw, `URL must not overlap with disallowed issuers: [${[...new Set(disallowed)].sort().join(' ')}]`))
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(raw)?.[1]?.toLowerCase() ?? ''
  if (scheme !== 'https') errs.push(fieldInvalid(field, raw, 'URL scheme must be https'))
  let rest = raw.slice(scheme.length + (scheme ? 1 : 0))
  const hash = rest.indexOf('#')
  const fragment = hash >= 0 ? rest.slice(hash + 1) : ''
  if (hash >= 0) rest = rest.slice(0, hash)
  const q = rest.indexOf('?')
  const query = q >= 0 ? rest.slice(q + 1) : ''
  if (q >= 0) rest = rest.slice(0, q)
  if (rest.startsWith('//')) {
    const authority = rest.slice(2).split('/')[0]
    if (authority.includes('@')) errs.push(fieldInvalid(field, raw, 'URL must not contain a username or password'))
  }
  if (query !== '') errs.push(fieldInvalid(field, raw, 'URL must not contain a query'))
  if (fragment !== '') errs.push(fieldInvalid(field, raw, 'URL must not contain a fragment'))
  return errs
}

/** cert.NewPoolFromBytes: at least one PEM certificate block, and every one parses (the CA bundle reader of x509.ts). */
function caProblem(pem: string): string | undefined {
  try { parseCaBundle('certificateAuthority', '', pem) } catch { return 'data does not contain any valid RSA or ECDSA certificates' }
  return undefined
}

function compile(field: string, expr: string, result: CelResult, vars: CelVariables, errs: FieldError[]): (CelProgram & { ast: unknown }) | undefined {
  const problem = celCompileProblemWith(expr, result, vars)
  if (problem !== undefined) { errs.push(fieldInvalid(field, expr, problem)); return undefined }
  const p = celProgramWith(expr, vars)
  if (p.run === undefined) { errs.push(fieldInvalid(field, expr, `compilation failed: ${p.error ?? ''}`)); return undefined }
  return p
}

function isReservedKey(key: string): boolean {
  const slash = key.indexOf('/')
  const domain = slash < 0 ? '' : key.slice(0, slash)
  return domain === 'orch.io' || domain.endsWith('.orch.io')
}

interface State { usesEmail: boolean; usesEmailVerified: boolean }

function prefixedClaimOrExpression(m: PrefixedClaimOrExpression | undefined, field: string, required: boolean, errs: FieldError[], state: State | undefined): ClaimOrProgram | undefined {
  const claim = m?.claim ?? ''
  const expression = m?.expression ?? ''
  if (expression !== '' && claim !== '') { errs.push(fieldInvalid(field, '', "claim and expression can't both be set")); return undefined }
  if (expression === '' && claim === '') {
    if (required) errs.push(fieldRequired(field, 'claim or expression is required'))
    return undefined
  }
  if (expression !== '') {
    if (m?.prefix !== undefined && m.prefix !== null) errs.push(fieldInvalid(`${field}.prefix`, m.prefix, 'may not be specified when expression is set'))
    const p = compile(`${field}.expression`, expression, 'any', CLAIMS_VARS, errs)
    if (p === undefined) return undefined
    if (state) {
      state.usesEmail ||= celSelects(p.ast, 'claims', 'email')
      state.usesEmailVerified ||= celSelects(p.ast, 'claims', 'email_verified')
    }
    return { program: p }
  }
  if (m?.prefix === undefined || m.prefix === null) {
    errs.push(fieldRequired(`${field}.prefix`, 'prefix is required when claim is set. It can be set to an empty string to disable prefixing'))
    return undefined
  }
  return { claim, prefix: m.prefix }
}

/** Upstream validateJWTAuthenticator: every field's rules, the CEL expressions compiled once. */
function validateJwt(a: JwtAuthenticatorConfig, base: string, disallowed: string[], errs: FieldError[]): CompiledJwt | undefined {
  const start = errs.length
  const state: State = { usesEmail: false, usesEmailVerified: false }
  const iss = a.issuer ?? {}
  const ip = `${base}issuer`
  // issuer
  const url = iss.url ?? ''
  if (url === '') errs.push(fieldRequired(`${ip}.url`))
  else errs.push(...urlProblems(`${ip}.url`, url, disallowed))
  const discoveryURL = iss.discoveryURL ?? ''
  if (discoveryURL !== '') {
    if (url !== '' && url.replace(/\/+$/, '') === discoveryURL.replace(/\/+$/, '')) errs.push(fieldInvalid(`${ip}.discoveryURL`, discoveryURL, 'discoveryURL must be different from URL'))
    errs.push(...urlProblems(`${ip}.discoveryURL`, discoveryURL, []))
  }
  const audiences = iss.audiences ?? []
  const policy = iss.audienceMatchPolicy ?? ''
  if (audiences.length === 0) errs.push(fieldRequired(`${ip}.audiences`, `at least one ${ip}.audiences is required`))
  else {
    const seen = new Set<string>()
    audiences.forEach((aud, i) => {
      if (aud === '') errs.push(fieldRequired(`${ip}.audiences[${i}]`))
      if (seen.has(aud)) errs.push(fieldDuplicate(`${ip}.audiences[${i}]`, aud))
      seen.add(aud)
    })
    if (audiences.length > 1 && policy !== 'MatchAny') errs.push(fieldInvalid(`${ip}.audienceMatchPolicy`, policy, 'audienceMatchPolicy must be MatchAny for multiple audiences'))
    if (audiences.length === 1 && policy !== '' && policy !== 'MatchAny') errs.push(fieldInvalid(`${ip}.audienceMatchPolicy`, policy, 'audienceMatchPolicy must be empty or MatchAny for single audience'))
  }
  const ca = iss.certificateAuthority ?? ''
  if (ca !== '') {
    const why = caProblem(ca)
    if (why !== undefined) errs.push(fieldInvalid(`${ip}.certificateAuthority`, '<omitted>', why))
  }
  const egress = iss.egressSelectorType ?? ''
  if (egress !== '' && egress !== 'controlplane' && egress !== 'cluster') errs.push(fieldInvalid(`${ip}.egressSelectorType`, egress, 'egress selector must be either controlplane or cluster'))

  // claimValidationRules
  const requiredClaims: Array<[string, string]> = []
  const claimRules: CompiledExpression[] = []
  {
    const seenClaims = new Set<string>()
    const seenExpr = new Set<string>()
    ;(a.claimValidationRules ?? []).forEach((r, i) => {
      const f = `${base}claimValidationRules[${i}]`
      const claim = r.claim ?? ''
      const expression = r.expression ?? ''
      if (claim !== '' && expression !== '') errs.push(fieldInvalid(f, claim, "claim and expression can't both be set"))
      else if (claim === '' && expression === '') errs.push(fieldRequired(f, 'claim or expression is required'))
      else if (claim !== '') {
        if ((r.message ?? '') !== '') errs.push(fieldInvalid(`${f}.message`, r.message, 'may not be specified when claim is set'))
        if (seenClaims.has(claim)) errs.push(fieldDuplicate(`${f}.claim`, claim))
        seenClaims.add(claim)
        requiredClaims.push([claim, r.requiredValue ?? ''])
      } else {
        if ((r.requiredValue ?? '') !== '') errs.push(fieldInvalid(`${f}.requiredValue`, r.requiredValue, 'may not be specified when expression is set'))
        if (seenExpr.has(expression)) { errs.push(fieldDuplicate(`${f}.expression`, expression)); return }
        seenExpr.add(expression)
        const p = compile(`${f}.expression`, expression, 'bool', CLAIMS_VARS, errs)
        if (p !== undefined) {
          claimRules.push({ expression, program: p, message: r.message ?? '' })
          state.usesEmailVerified ||= celSelects(p.ast, 'claims', 'email_verified')
        }
      }
    })
  }

  // claimMappings
  const mp = `${base}claimMappings`
  const m = a.claimMappings ?? {}
  const username = prefixedClaimOrExpression(m.username, `${mp}.username`, true, errs, state)
  const groups = prefixedClaimOrExpression(m.groups, `${mp}.groups`, false, errs, undefined)
  let uid: CompiledJwt['uid']
  const uidClaim = m.uid?.claim ?? ''
  const uidExpr = m.uid?.expression ?? ''
  if (uidClaim !== '' && uidExpr !== '') errs.push(fieldInvalid(`${mp}.uid`, '', "claim and expression can't both be set"))
  else if (uidExpr !== '') {
    const p = compile(`${mp}.uid.expression`, uidExpr, 'any', CLAIMS_VARS, errs)
    if (p !== undefined) uid = { program: p }
  } else if (uidClaim !== '') uid = { claim: uidClaim }
  const extra: CompiledJwt['extra'] = []
  {
    const seen = new Set<string>()
    ;(m.extra ?? []).forEach((x, i) => {
      const f = `${mp}.extra[${i}]`
      const key = x.key ?? ''
      errs.push(...domainPrefixedPath(`${f}.key`, key))
      if (key !== key.toLowerCase()) errs.push(fieldInvalid(`${f}.key`, key, 'must be lowercase'))
      if (isReservedKey(key)) errs.push(fieldInvalid(`${f}.key`, key, 'orch.io and its subdomains are reserved for orch use'))
      if (seen.has(key)) { errs.push(fieldDuplicate(`${f}.key`, key)); return }
      seen.add(key)
      const ve = x.valueExpression ?? ''
      if (ve === '') { errs.push(fieldRequired(`${f}.valueExpression`)); return }
      const p = compile(`${f}.valueExpression`, ve, 'any', CLAIMS_VARS, errs)
      if (p !== undefined) {
        extra.push({ key, program: p })
        state.usesEmailVerified ||= celSelects(p.ast, 'claims', 'email_verified')
      }
    })
  }
  if (state.usesEmail && !state.usesEmailVerified) {
    errs.push(fieldInvalid(`${mp}.username.expression`, m.username?.expression ?? '',
      'claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression'))
  }

  // userValidationRules
  const userRules: CompiledExpression[] = []
  {
    const seen = new Set<string>()
    ;(a.userValidationRules ?? []).forEach((r, i) => {
      const f = `${base}userValidationRules[${i}]`
      const expression = r.expression ?? ''
      if (expression === '') { errs.push(fieldRequired(`${f}.expression`)); return }
      if (seen.has(expression)) { errs.push(fieldDuplicate(`${f}.expression`, expression)); return }
      seen.add(expression)
      const p = compile(`${f}.expression`, expression, 'bool', USER_VARS, errs)
      if (p !== undefined) userRules.push({ expression, program: p, message: r.message ?? '' })
    })
  }

  if (errs.length > start || username === undefined) return undefined
  const celClaims = 'program' in username || (groups !== undefined && 'program' in groups) || (uid !== undefined && 'program' in uid) || extra.length > 0 || claimRules.length > 0
  return { url, discoveryURL, certificateAuthority: ca, audiences: [...audiences], username, groups, uid, extra, requiredClaims, claimRules, userRules, celClaims }
}

export interface ValidatedConfiguration {
  jwt: CompiledJwt[]
  errors: FieldError[]
  /** the `anonymous` section: anonymous requests on or off, and the only paths they may use (none listed: any) */
  anonymous?: { enabled: boolean; paths: string[] }
}

/** Upstream ValidateAuthenticationConfiguration: at most 64 authenticators, unique issuers and discovery URLs. */
export function validateAuthenticationConfiguration(c: AuthenticationConfiguration, disallowedIssuers: string[]): ValidatedConfiguration {
  const errors: FieldError[] = []
  const list = c.jwt ?? []
  if (list.length > 64) return { jwt: [], errors: [fieldTooMany('jwt', list.length, 64)] }
  const jwt: CompiledJwt[] = []
  const issuers = new Set<string>()
  const discovery = new Set<string>()
  list.forEach((a, i) => {
    const compiled = validateJwt(a, `jwt[${i}].`, disallowedIssuers, errors)
    if (compiled) jwt.push(compiled)
    const url = a.issuer?.url ?? ''
    if (issuers.has(url)) errors.push(fieldDuplicate(`jwt[${i}].issuer.url`, url))
    issuers.add(url)
    const d = a.issuer?.discoveryURL ?? ''
    if (d !== '') {
      if (discovery.has(d)) errors.push(fieldDuplicate(`jwt[${i}].issuer.discoveryURL`, d))
      discovery.add(d)
    }
  })
  let anonymous: ValidatedConfiguration['anonymous']
  if (c.anonymous !== undefined) {
    const conditions = c.anonymous.conditions ?? []
    if (!c.anonymous.enabled && conditions.length > 0) errors.push(fieldInvalid('anonymous.conditions', conditions, 'enabled should be set to true when conditions are defined'))
    const paths = new Set<string>()
    conditions.forEach((cond, i) => {
      const path = cond.path ?? ''
      if (path === '') errors.push(fieldRequired(`anonymous.conditions[${i}].path`))
      else if (paths.has(path)) errors.push(fieldDuplicate(`anonymous.conditions[${i}].path`, path))
      paths.add(path)
    })
    anonymous = { enabled: c.anonymous.enabled === true, paths: [...paths] }
  }
  return { jwt, errors, anonymous }
}

/** field.ErrorList.ToAggregate().Error(): one message, or `[a, b]` (duplicates dropped). */
export function aggregateText(errors: FieldError[]): string {
  const lines: string[] = []
  for (const e of errors) {
    const line = `${e.field}: ${fieldErrorBody(e)}`
    if (!lines.includes(line)) lines.push(line)
  }
  return lines.length === 1 ? lines[0] : `[${lines.join(', ')}]`
}

