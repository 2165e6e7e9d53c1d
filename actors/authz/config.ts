// The authorizer chain as data: built from --authorization-mode and the webhook flags, or read and validated from an
// AuthorizationConfiguration file (--authorization-config), with upstream's field paths and texts.
import { readFileSync, statSync } from 'node:fs'
import { isAbsolute } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { fieldErrorBody, fieldRequired, fieldInvalid, fieldNotSupported, fieldDuplicate, fieldTooMany, type FieldError } from '../../src/machinery/errors.js'
import { dns1123Subdomain } from '../../src/machinery/validation.js'
import { celCompileProblem } from '../../src/machinery/cel.js'
import { goDuration, parseGoDuration as goParseDuration } from '../../src/machinery/tabwriter.js'

export interface WebhookSpec {
  authorizedTtlMs: number
  unauthorizedTtlMs: number
  timeoutMs: number
  version: string
  failurePolicy: 'NoOpinion' | 'Deny'
  kubeConfigFile: string
  matchConditions: string[]
}

export interface AuthorizerSpec { type: string; name: string; webhook?: WebhookSpec }

/** The webhook flags of --authorization-mode=...,Webhook. */
export interface WebhookFlags { configFile: string; version: string; authorizedTtlMs: number; unauthorizedTtlMs: number }

/** Upstream's name of the webhook an --authorization-mode list makes. */
export const FLAG_WEBHOOK_NAME = 'default'
export const MATCH_CONDITIONS_LIMIT = 64
const KNOWN_TYPES = ['ABAC', 'AlwaysAllow', 'AlwaysDeny', 'Node', 'RBAC', 'Webhook']
const GROUP = 'apiserver.config.orch.io'
const VERSIONS = ['v1alpha1', 'v1beta1', 'v1']

/** The chain of an --authorization-mode list (upstream buildAuthorizationConfiguration: a flag webhook fails open, 30 s). */
export function chainFromFlags(modes: readonly string[], webhook: WebhookFlags | undefined): AuthorizerSpec[] {
  return modes.map((m) => m !== 'Webhook' ? { type: m, name: m.toLowerCase() } : {
    type: 'Webhook', name: FLAG_WEBHOOK_NAME,
    webhook: {
      authorizedTtlMs: webhook?.authorizedTtlMs ?? 300_000, unauthorizedTtlMs: webhook?.unauthorizedTtlMs ?? 30_000,
      timeoutMs: 30_000, version: webhook?.version ?? 'v1beta1', failurePolicy: 'NoOpinion', kubeConfigFile: webhook?.configFile ?? '', matchConditions: [],
    },
  })
}

// ---------------------------------------------------------------- Go durations

/** time.ParseDuration, in milliseconds; undefined when it does not parse. */
export function parseGoDuration(s: string): number | undefined {
  const r = goParseDuration(s)
  return 'error' in r ? undefined : r.ns / 1e6
}

const showDuration = (ms: number): string => goDuration(ms * 1e6)

// ---------------------------------------------------------------- decoding (strict, as upstream's scheme decodes it)

type Shape = { [key: string]: Shape | 'scalar' | [Shape] }
const MATCH_CONDITION: Shape = { expression: 'scalar' }
const WEBHOOK: Shape = {
  authorizedTTL: 'scalar', cacheAuthorizedRequests: 'scalar', unauthorizedTTL: 'scalar', cacheUnauthorizedRequests: 'scalar', timeout: 'scalar',
  subjectAccessReviewVersion: 'scalar', matchConditionSubjectAccessReviewVersion: 'scalar', failurePolicy: 'scalar',
  connectionInfo: { type: 'scalar', kubeConfigFile: 'scalar' }, matchConditions: [MATCH_CONDITION],
}
const FILE: Shape = { apiVersion: 'scalar', kind: 'scalar', authorizers: [{ type: 'scalar', name: 'scalar', webhook: WEBHOOK }] }

function unknownFields(v: unknown, shape: Shape, path: string, out: string[]): void {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const p = path === '' ? k : `${path}.${k}`
    const s = shape[k]
    if (s === undefined) { out.push(`unknown field "${p}"`); continue }
    if (s === 'scalar') continue
    if (Array.isArray(s)) {
      if (Array.isArray(x)) x.forEach((e, i) => unknownFields(e, s[0], `${p}[${i}]`, out))
    } else unknownFields(x, s, p, out)
  }
}

type Obj = Record<string, any>

interface Decoded { authorizers: Array<{ type: string; name: string; webhook?: Obj | null }> }

/** Upstream's decode of the file's bytes: JSON or YAML, a known version of the kind, no unknown fields. */
function decode(data: string): Decoded {
  let doc: unknown
  try { doc = parseYaml(data) } catch (err) { throw new Error(`failed to load AuthorizationConfiguration from file: ${(err as Error).message.split('\n')[0]}`) }
  if (doc === null || doc === undefined) doc = {}
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new Error('failed to load AuthorizationConfiguration from file: couldn\'t get version/kind; json parse error: json: cannot unmarshal into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }')
  const o = doc as Obj
  if (typeof o.kind !== 'string' || o.kind === '') throw new Error(`failed to load AuthorizationConfiguration from file: Object 'Kind' is missing in '${JSON.stringify(o)}'`)
  const av = typeof o.apiVersion === 'string' ? o.apiVersion : ''
  if (av === '') throw new Error(`failed to load AuthorizationConfiguration from file: Object 'apiVersion' is missing in '${JSON.stringify(o)}'`)
  const slash = av.lastIndexOf('/')
  if (o.kind !== 'AuthorizationConfiguration' || av.slice(0, slash) !== GROUP || !VERSIONS.includes(av.slice(slash + 1))) {
    throw new Error(`failed to load AuthorizationConfiguration from file: no kind "${o.kind}" is registered for version "${av}" in scheme`)
  }
  const unknown: string[] = []
  unknownFields(o, FILE, '', unknown)
  if (unknown.length > 0) throw new Error(`failed to load AuthorizationConfiguration from file: strict decoding error: ${unknown.join(', ')}`)
  const list = o.authorizers ?? []
  if (!Array.isArray(list)) throw new Error('failed to load AuthorizationConfiguration from file: json: cannot unmarshal object into Go struct field AuthorizationConfiguration.authorizers of type []v1.AuthorizerConfiguration')
  const str = (v: unknown, field: string): string => {
    if (v === undefined || v === null) return ''
    if (typeof v !== 'string') throw new Error(`failed to load AuthorizationConfiguration from file: json: cannot unmarshal ${typeof v === 'number' ? 'number' : typeof v === 'boolean' ? 'bool' : Array.isArray(v) ? 'array' : 'object'} into Go struct field ${field} of type string`)
    return v
  }
  return {
    authorizers: list.map((a: unknown) => {
      const x = (a ?? {}) as Obj
      return { type: str(x.type, 'AuthorizerConfiguration.authorizers.type'), name: str(x.name, 'AuthorizerConfiguration.authorizers.name'), webhook: x.webhook }
    }),
  }
}

// ---------------------------------------------------------------- validation

function duration(w: Obj, key: string, path: string, errs: FieldError[]): number {
  const v = w[key]
  if (v === undefined || v === null || v === '') return 0
  if (typeof v !== 'string') throw new Error(`failed to load AuthorizationConfiguration from file: json: cannot unmarshal ${typeof v === 'number' ? 'number' : typeof v} into Go struct field WebhookConfiguration.authorizers.webhook.${key} of type string`)
  const ms = parseGoDuration(v)
  if (ms === undefined) throw new Error(`failed to load AuthorizationConfiguration from file: time: invalid duration ${JSON.stringify(v)}`)
  void path; void errs
  return ms
}

function validateWebhook(w: Obj, path: string, errs: FieldError[]): WebhookSpec {
  const timeoutMs = duration(w, 'timeout', path, errs)
  // Defaults of the versioned types: a TTL of 0 (or none) is 5m / 30s.
  const authorizedTtlMs = duration(w, 'authorizedTTL', path, errs) || 300_000
  const unauthorizedTtlMs = duration(w, 'unauthorizedTTL', path, errs) || 30_000
  if (timeoutMs === 0) errs.push(fieldRequired(`${path}.timeout`))
  else if (timeoutMs > 30_000 || timeoutMs < 0) errs.push(fieldInvalid(`${path}.timeout`, showDuration(timeoutMs), 'must be > 0s and <= 30s'))
  if (authorizedTtlMs < 0) errs.push(fieldInvalid(`${path}.authorizedTTL`, showDuration(authorizedTtlMs), 'must be > 0s'))
  if (unauthorizedTtlMs < 0) errs.push(fieldInvalid(`${path}.unauthorizedTTL`, showDuration(unauthorizedTtlMs), 'must be > 0s'))
  const version = typeof w.subjectAccessReviewVersion === 'string' ? w.subjectAccessReviewVersion : ''
  if (version === '') errs.push(fieldRequired(`${path}.subjectAccessReviewVersion`))
  else if (version !== 'v1' && version !== 'v1beta1') errs.push(fieldNotSupported(`${path}.subjectAccessReviewVersion`, version, ['v1', 'v1beta1']))
  const conditions: unknown[] = Array.isArray(w.matchConditions) ? w.matchConditions : []
  const mcVersion = typeof w.matchConditionSubjectAccessReviewVersion === 'string' ? w.matchConditionSubjectAccessReviewVersion : ''
  if (mcVersion === '') {
    if (conditions.length > 0) errs.push(fieldRequired(`${path}.matchConditionSubjectAccessReviewVersion`, 'required if match conditions are specified'))
  } else if (mcVersion !== 'v1') errs.push(fieldNotSupported(`${path}.matchConditionSubjectAccessReviewVersion`, mcVersion, ['v1']))
  const fp = typeof w.failurePolicy === 'string' ? w.failurePolicy : ''
  if (fp === '') errs.push(fieldRequired(`${path}.failurePolicy`))
  else if (fp !== 'NoOpinion' && fp !== 'Deny') errs.push(fieldNotSupported(`${path}.failurePolicy`, fp, ['NoOpinion', 'Deny']))
  const ci = (w.connectionInfo ?? {}) as Obj
  const ciType = typeof ci.type === 'string' ? ci.type : ''
  const file = typeof ci.kubeConfigFile === 'string' ? ci.kubeConfigFile : undefined
  if (ciType === '') errs.push(fieldRequired(`${path}.connectionInfo.type`))
  else if (ciType === 'InClusterConfig') {
    if (file !== undefined) errs.push(fieldInvalid(`${path}.connectionInfo.kubeConfigFile`, file, 'can only be set when type=KubeConfigFile'))
    // kube-apiserver cannot call itself through the in-cluster configuration.
    else errs.push(fieldNotSupported(`${path}.connectionInfo.type`, ciType, ['KubeConfigFile']))
  } else if (ciType === 'KubeConfigFile') {
    if (file === undefined || file === '') errs.push(fieldRequired(`${path}.connectionInfo.kubeConfigFile`))
    else if (!isAbsolute(file)) errs.push(fieldInvalid(`${path}.connectionInfo.kubeConfigFile`, file, 'must be an absolute path'))
    else {
      try {
        if (!statSync(file).isFile()) errs.push(fieldInvalid(`${path}.connectionInfo.kubeConfigFile`, file, 'must be a regular file'))
      } catch (err) {
        const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (err as Error).message
        errs.push(fieldInvalid(`${path}.connectionInfo.kubeConfigFile`, file, `error loading file: stat ${file}: ${why}`))
      }
    }
  } else errs.push(fieldNotSupported(`${path}.connectionInfo.type`, ciType, ['InClusterConfig', 'KubeConfigFile']))
  const expressions: string[] = []
  if (conditions.length > MATCH_CONDITIONS_LIMIT) errs.push(fieldTooMany(`${path}.matchConditions`, conditions.length, MATCH_CONDITIONS_LIMIT))
  else {
    const seen = new Set<string>()
    conditions.forEach((c, i) => {
      const p = `${path}.matchConditions[${i}].expression`
      const expr = typeof (c as Obj)?.expression === 'string' ? (c as Obj).expression as string : ''
      if (expr.trim() === '') { errs.push(fieldRequired(p)); return }
      if (seen.has(expr)) { errs.push(fieldDuplicate(p, expr)); return }
      seen.add(expr)
      const problem = celCompileProblem(expr, 'bool', { params: false, authorizer: false, variables: false, only: ['request'] })
      if (problem) { errs.push(fieldInvalid(p, expr, problem)); return }
      expressions.push(expr)
    })
  }
  const cacheAuthorized = w.cacheAuthorizedRequests !== false
  const cacheUnauthorized = w.cacheUnauthorizedRequests !== false
  return {
    authorizedTtlMs: cacheAuthorized ? authorizedTtlMs : 0, unauthorizedTtlMs: cacheUnauthorized ? unauthorizedTtlMs : 0, timeoutMs, version,
    failurePolicy: fp === 'Deny' ? 'Deny' : 'NoOpinion', kubeConfigFile: file ?? '', matchConditions: expressions,
  }
}

function aggregate(lines: string[]): string { return lines.length === 1 ? lines[0] : `[${lines.join(', ')}]` }

/**
 * Reads and validates an AuthorizationConfiguration; throws an Error with upstream's text. `required`: the
 * non-webhook types the chain must keep (those of the first load: a reload may not drop them or add Node or RBAC).
 */
export function loadAuthorizationConfig(data: string, required?: ReadonlySet<string>): AuthorizerSpec[] {
  const d = decode(data)
  const errs: FieldError[] = []
  const out: AuthorizerSpec[] = []
  if (d.authorizers.length === 0) errs.push(fieldRequired('authorizers', 'at least one authorization mode must be defined'))
  const seenTypes = new Set<string>()
  const seenNames = new Set<string>()
  d.authorizers.forEach((a, i) => {
    const path = `authorizers[${i}]`
    if (a.type === '') { errs.push(fieldRequired(`${path}.type`)); return }
    if (!KNOWN_TYPES.includes(a.type)) { errs.push(fieldNotSupported(`${path}.type`, a.type, KNOWN_TYPES)); return }
    if (seenTypes.has(a.type) && a.type !== 'Webhook') { errs.push(fieldDuplicate(`${path}.type`, a.type)); return }
    seenTypes.add(a.type)
    if (a.name === '') errs.push(fieldRequired(`${path}.name`))
    else if (seenNames.has(a.name)) errs.push(fieldDuplicate(`${path}.name`, a.name))
    else {
      const bad = dns1123Subdomain(a.name)
      if (bad.length > 0) errs.push(fieldInvalid(`${path}.name`, a.name, `authorizer name is invalid: ${bad.join(', ')}`))
    }
    seenNames.add(a.name)
    if (a.type === 'Webhook') {
      if (a.webhook === undefined || a.webhook === null) { errs.push(fieldRequired(`${path}.webhook`, 'required when type=Webhook')); return }
      out.push({ type: a.type, name: a.name, webhook: validateWebhook(a.webhook, `${path}.webhook`, errs) })
    } else {
      if (a.webhook !== undefined && a.webhook !== null) errs.push(fieldInvalid(`${path}.webhook`, 'non-null', 'may only be specified when type=Webhook'))
      out.push({ type: a.type, name: a.name })
    }
  })
  if (errs.length > 0) return fail(errs.map((e) => `${e.field}: ${fieldErrorBody(e)}`))
  // kube-apiserver's own checks: the names of the built-in types, the types it must keep, the types it has.
  const more: string[] = []
  const present = new Set<string>()
  for (const a of out) {
    if (a.type === 'Webhook') continue
    present.add(a.type)
    if (a.name !== a.type.toLowerCase()) more.push(`expected name ${a.type.toLowerCase()} for authorizer ${a.type} instead of ${a.name}`)
  }
  if (required) {
    const missing = [...required].filter((t) => !present.has(t)).sort()
    if (missing.length > 0) more.push(`missing required types: [${missing.join(' ')}]`)
    for (const t of ['Node', 'RBAC']) if (present.has(t) && !required.has(t)) more.push(`authorizer type ${t} is not allowed if it was not enabled at initial server startup`)
  }
  if (present.has('ABAC')) more.push('authorizer type ABAC is not supported by this server')
  if (more.length > 0) return fail(more)
  return out
}

function fail(lines: string[]): never { throw new Error(aggregate(lines)) }

export function loadAuthorizationConfigFile(file: string, required?: ReadonlySet<string>): { specs: AuthorizerSpec[]; data: string } {
  let data: string
  try { data = readFileSync(file, 'utf8') } catch (err) {
    throw new Error(`open ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (err as Error).message}`)
  }
  return { specs: loadAuthorizationConfig(data, required), data }
}

/** The non-webhook types of a chain (a reload must keep them). */
export function builtinTypes(specs: readonly AuthorizerSpec[]): Set<string> {
  return new Set(specs.filter((s) => s.type !== 'Webhook').map((s) => s.type))
}
