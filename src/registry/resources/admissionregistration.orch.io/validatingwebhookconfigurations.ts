// ValidatingWebhookConfiguration (admissionregistration.orch.io/v1, cluster-scoped).
// Also exports the defaulting shared by the admission registration types.
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldDuplicate, fieldInvalid, fieldNotSupported, fieldRequired, goStringSlice } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { dns1035Label, dns1123Subdomain, fullyQualifiedName, labelSelectorHasInvalidValue, portNumber, qualifiedName, validateLabelSelector } from '../../../machinery/validation.js'
import { celCompileProblem } from '../../../machinery/cel.js'
import { isDeepStrictEqual } from 'node:util'
import { ageColumn, nameColumn } from '../_printers.js'

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : String(x))) : [])
const str = (v: unknown): string => (typeof v === 'string' ? v : '')

// ---- validation (upstream pkg/apis/admissionregistration/validation, admission v1 rules) ----

const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE']
const SCOPES = ['*', 'Cluster', 'Namespaced']
const REVIEW_VERSIONS = ['v1', 'v1beta1']
const URL_FORM = '; desired format: https://host[/path]'

function resourcesErrors(resources: string[], path: string): FieldError[] {
  const errs: FieldError[] = []
  if (resources.length === 0) errs.push(fieldRequired(path))
  const withWildcardSub = new Set<string>()
  const subWithWildcardRes = new Set<string>()
  let doubleWildcard = false
  let singleWildcard = false
  let plainResource = false
  resources.forEach((r, i) => {
    if (r === '') { errs.push(fieldRequired(`${path}[${i}]`)); return }
    if (r === '*/*') doubleWildcard = true
    if (r === '*') singleWildcard = true
    const slash = r.indexOf('/')
    if (slash < 0) { plainResource = r !== '*'; return }
    const res = r.slice(0, slash)
    const sub = r.slice(slash + 1)
    if (withWildcardSub.has(res)) errs.push(fieldInvalid(`${path}[${i}]`, r, `if '${res}/*' is present, must not specify ${r}`))
    if (subWithWildcardRes.has(sub)) errs.push(fieldInvalid(`${path}[${i}]`, r, `if '*/${sub}' is present, must not specify ${r}`))
    if (sub === '*') withWildcardSub.add(res)
    if (res === '*') subWithWildcardRes.add(sub)
  })
  if (resources.length > 1 && doubleWildcard) errs.push(fieldInvalid(path, goStringSlice('string', resources), "if '*/*' is present, must not specify other resources"))
  if (singleWildcard && plainResource) errs.push(fieldInvalid(path, goStringSlice('string', resources), "if '*' is present, must not specify other resources without subresources"))
  return errs
}

/** validateRuleWithOperations: operations, groups, versions, resources (subresources allowed) and scope (webhooks and policies). */
export function ruleErrors(rule: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  const ops = strings(rule.operations)
  if (ops.length === 0) errs.push(fieldRequired(`${path}.operations`))
  if (ops.length > 1 && ops.includes('*')) errs.push(fieldInvalid(`${path}.operations`, goStringSlice('admissionregistration.OperationType', ops), "if '*' is present, must not specify other operations"))
  ops.forEach((op, i) => { if (!OPERATIONS.includes(op)) errs.push(fieldNotSupported(`${path}.operations[${i}]`, op, OPERATIONS)) })
  const groups = strings(rule.apiGroups)
  if (groups.length === 0) errs.push(fieldRequired(`${path}.apiGroups`))
  if (groups.length > 1 && groups.includes('*')) errs.push(fieldInvalid(`${path}.apiGroups`, goStringSlice('string', groups), "if '*' is present, must not specify other API groups"))
  const versions = strings(rule.apiVersions)
  if (versions.length === 0) errs.push(fieldRequired(`${path}.apiVersions`))
  if (versions.length > 1 && versions.includes('*')) errs.push(fieldInvalid(`${path}.apiVersions`, goStringSlice('string', versions), "if '*' is present, must not specify other API versions"))
  versions.forEach((v, i) => { if (v === '') errs.push(fieldRequired(`${path}.apiVersions[${i}]`)) })
  errs.push(...resourcesErrors(strings(rule.resources), `${path}.resources`))
  if (rule.scope !== undefined && rule.scope !== null && !SCOPES.includes(rule.scope)) errs.push(fieldNotSupported(`${path}.scope`, rule.scope, SCOPES))
  return errs
}

/** ValidateWebhookURL with https forced, on Go url.Parse's split of the text. */
export function urlErrors(raw: string, path: string): FieldError[] {
  const errs: FieldError[] = []
  let rest = raw
  let fragment = ''
  const hash = rest.indexOf('#')
  if (hash >= 0) { fragment = rest.slice(hash + 1); rest = rest.slice(0, hash) }
  let query = ''
  const q = rest.indexOf('?')
  if (q >= 0) { query = rest.slice(q + 1); rest = rest.slice(0, q) }
  let scheme = ''
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(rest)
  if (m) { scheme = m[1].toLowerCase(); rest = rest.slice(m[0].length) }
  let host = ''
  let user: string | undefined
  if (rest.startsWith('//')) {
    const authority = rest.slice(2).split('/')[0]
    const at = authority.lastIndexOf('@')
    if (at >= 0) user = authority.slice(0, at)
    host = at >= 0 ? authority.slice(at + 1) : authority
  }
  if (scheme !== 'https') errs.push(fieldInvalid(path, scheme, `'https' is the only allowed URL scheme${URL_FORM}`))
  if (host === '') errs.push(fieldInvalid(path, host, `host must be specified${URL_FORM}`))
  if (user !== undefined) errs.push(fieldInvalid(path, user, 'user information is not permitted in the URL'))
  if (fragment !== '') errs.push(fieldInvalid(path, fragment, 'fragments are not permitted in the URL'))
  if (query !== '') errs.push(fieldInvalid(path, query, 'query parameters are not permitted in the URL'))
  return errs
}

/**
 * ValidateWebhookService. Upstream calls it with the service's name and namespace in the opposite order of its
 * parameters, so a missing namespace is reported at `.name` and a missing name at `.namespace`; we answer the same.
 */
export function serviceErrors(svc: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  if (str(svc.namespace) === '') errs.push(fieldRequired(`${path}.name`))
  if (str(svc.name) === '') errs.push(fieldRequired(`${path}.namespace`))
  const port = svc.port ?? 443
  const portProblems = portNumber(port)
  if (portProblems.length > 0) errs.push(fieldInvalid(`${path}.port`, port, `port is not valid: ${portProblems.join(', ')}`))
  if (typeof svc.path !== 'string') return errs
  const p = svc.path
  if (p === '/' || p === '') return errs
  if (p === '//') return [...errs, fieldInvalid(`${path}.path`, p, 'segment[0] may not be empty')]
  if (!p.startsWith('/')) errs.push(fieldInvalid(`${path}.path`, p, "must start with a '/'"))
  let check = p.slice(1)
  if (check.endsWith('/')) check = check.slice(0, -1)
  check.split('/').forEach((step, i) => {
    if (step === '') { errs.push(fieldInvalid(`${path}.path`, p, `segment[${i}] may not be empty`)); return }
    for (const d of dns1123Subdomain(step)) errs.push(fieldInvalid(`${path}.path`, p, `segment[${i}]: ${d}`))
  })
  return errs
}

/**
 * upstream validateMatchConditions: at most 64, each with a qualified name (unique) and a CEL expression that compiles
 * to a bool against object, oldObject, request and authorizer (and params, for a policy with a paramKind).
 */
export function matchConditionErrors(conditions: unknown[], path: string, params: boolean): FieldError[] {
  const errs: FieldError[] = []
  if (conditions.length > 64) errs.push({ type: 'FieldValueTooMany', field: path, value: conditions.length, max: 64 })
  const names = new Set<string>()
  conditions.forEach((x, i) => {
    const c = isObj(x) ? x : {}
    const f = `${path}[${i}]`
    const expr = str(c.expression).trim()
    if (expr === '') errs.push(fieldRequired(`${f}.expression`))
    else {
      const problem = celCompileProblem(expr, 'bool', { params, authorizer: true, variables: false })
      if (problem !== undefined) errs.push(fieldInvalid(`${f}.expression`, expr, problem))
    }
    const n = str(c.name)
    if (n === '') errs.push(fieldRequired(`${f}.name`))
    else for (const d of qualifiedName(n)) errs.push(fieldInvalid(`${f}.name`, n, d))
    if (n !== '') { if (names.has(n)) errs.push(fieldDuplicate(`${f}.name`, n)); names.add(n) }
  })
  return errs
}

function hookErrors(w: Obj, path: string, mutating: boolean, checkConditions: boolean, allowInvalidLabelValue: boolean): FieldError[] {
  const errs: FieldError[] = []
  errs.push(...fullyQualifiedName(`${path}.name`, str(w.name)))
  ;(Array.isArray(w.rules) ? w.rules : []).forEach((r: unknown, i: number) => errs.push(...ruleErrors(isObj(r) ? r : {}, `${path}.rules[${i}]`)))
  const present = (v: unknown): boolean => v !== undefined && v !== null
  if (present(w.failurePolicy) && !['Fail', 'Ignore'].includes(w.failurePolicy)) errs.push(fieldNotSupported(`${path}.failurePolicy`, w.failurePolicy, ['Fail', 'Ignore']))
  if (present(w.matchPolicy) && !['Equivalent', 'Exact'].includes(w.matchPolicy)) errs.push(fieldNotSupported(`${path}.matchPolicy`, w.matchPolicy, ['Equivalent', 'Exact']))
  const sideEffects = ['None', 'NoneOnDryRun']
  if (!present(w.sideEffects)) errs.push(fieldRequired(`${path}.sideEffects`, `must specify one of ${sideEffects.join(', ')}`))
  else if (!sideEffects.includes(w.sideEffects)) errs.push(fieldNotSupported(`${path}.sideEffects`, w.sideEffects, sideEffects))
  if (present(w.timeoutSeconds) && (w.timeoutSeconds > 30 || w.timeoutSeconds < 1)) errs.push(fieldInvalid(`${path}.timeoutSeconds`, w.timeoutSeconds, 'the timeout value must be between 1 and 30 seconds'))
  if (mutating && present(w.reinvocationPolicy) && !['IfNeeded', 'Never'].includes(w.reinvocationPolicy)) errs.push(fieldNotSupported(`${path}.reinvocationPolicy`, w.reinvocationPolicy, ['IfNeeded', 'Never']))
  if (present(w.namespaceSelector)) errs.push(...validateLabelSelector(w.namespaceSelector, `${path}.namespaceSelector`, { allowInvalidLabelValue }))
  if (present(w.objectSelector)) errs.push(...validateLabelSelector(w.objectSelector, `${path}.objectSelector`, { allowInvalidLabelValue }))
  const cc: Obj = isObj(w.clientConfig) ? w.clientConfig : {}
  const hasUrl = present(cc.url)
  const hasService = present(cc.service)
  if (hasUrl === hasService) errs.push(fieldRequired(`${path}.clientConfig`, 'exactly one of url or service is required'))
  else if (hasUrl) errs.push(...urlErrors(str(cc.url), `${path}.clientConfig.url`))
  else errs.push(...serviceErrors(isObj(cc.service) ? cc.service : {}, `${path}.clientConfig.service`))
  if (checkConditions) errs.push(...matchConditionErrors(Array.isArray(w.matchConditions) ? w.matchConditions : [], `${path}.matchConditions`, false))
  return errs
}

function reviewVersionErrors(versions: string[], path: string): FieldError[] {
  if (versions.length === 0) return [fieldRequired(path, `must specify one of ${REVIEW_VERSIONS.join(', ')}`)]
  const errs: FieldError[] = []
  const seen = new Set<string>()
  versions.forEach((v, i) => {
    if (seen.has(v)) { errs.push(fieldInvalid(`${path}[${i}]`, v, 'duplicate version')); return }
    seen.add(v)
    for (const d of dns1035Label(v)) errs.push(fieldInvalid(`${path}[${i}]`, v, d))
  })
  if (!versions.some((v) => REVIEW_VERSIONS.includes(v))) errs.push(fieldInvalid(path, goStringSlice('string', versions), `must include at least one of ${REVIEW_VERSIONS.join(', ')}`))
  return errs
}

const hooksOf = (o: Obj | undefined): unknown[] => (Array.isArray(o?.webhooks) ? o.webhooks : [])

/**
 * validateValidatingWebhookConfiguration / validateMutatingWebhookConfiguration with the v1 (strict) options. An update
 * whose webhooks keep their match conditions as stored (same count, same conditions at each index) does not compile
 * them again (upstream's ignoreMatchConditions).
 */
export function validateWebhookConfiguration(o: Obj, mutating: boolean, old?: Obj): FieldError[] {
  const errs: FieldError[] = []
  const names = new Set<string>()
  const hooks = hooksOf(o)
  const was = hooksOf(old)
  const checkConditions = old === undefined || hooks.length !== was.length ||
    hooks.some((h, i) => !isDeepStrictEqual(isObj(h) ? h.matchConditions : undefined, isObj(was[i]) ? (was[i] as Obj).matchConditions : undefined))
  // Stored selectors with label values upstream no longer accepts stay writable.
  const allowInvalidLabelValue = was.some((h) => isObj(h) && (labelSelectorHasInvalidValue(h.namespaceSelector) || labelSelectorHasInvalidValue(h.objectSelector)))
  hooks.forEach((h: unknown, i: number) => {
    const w: Obj = isObj(h) ? h : {}
    const path = `webhooks[${i}]`
    errs.push(...hookErrors(w, path, mutating, checkConditions, allowInvalidLabelValue))
    errs.push(...reviewVersionErrors(strings(w.admissionReviewVersions), `${path}.admissionReviewVersions`))
    const name = str(w.name)
    if (name !== '') {
      if (names.has(name)) errs.push(fieldDuplicate(`${path}.name`, name))
      else names.add(name)
    }
  })
  return errs
}

/** SetDefaults_Rule on each rule: scope `*`. */
export function defaultRules(rules: unknown): void {
  if (!Array.isArray(rules)) return
  for (const r of rules) if (isObj(r) && (r.scope === undefined || r.scope === null)) r.scope = '*'
}

/** SetDefaults_MatchResources. */
export function defaultMatchResources(m: unknown): void {
  if (!isObj(m)) return
  m.matchPolicy ??= 'Equivalent'
  m.namespaceSelector ??= {}
  m.objectSelector ??= {}
  defaultRules(m.resourceRules)
  defaultRules(m.excludeResourceRules)
}

/** SetDefaults_ValidatingWebhook / SetDefaults_MutatingWebhook (the shared part) and SetDefaults_ServiceReference. */
export function defaultWebhooks(o: Obj, mutating: boolean): void {
  if (!Array.isArray(o.webhooks)) return
  for (const w of o.webhooks) {
    if (!isObj(w)) continue
    w.failurePolicy ??= 'Fail'
    w.matchPolicy ??= 'Equivalent'
    w.namespaceSelector ??= {}
    w.objectSelector ??= {}
    w.timeoutSeconds ??= 10
    if (mutating) w.reinvocationPolicy ??= 'Never'
    defaultRules(w.rules)
    if (isObj(w.clientConfig) && isObj(w.clientConfig.service)) w.clientConfig.service.port ??= 443
  }
}

/** The resource of a webhook configuration: validating and mutating ones differ in kind and in the mutating fields. */
export function webhookConfigurationResource(kind: 'ValidatingWebhookConfiguration' | 'MutatingWebhookConfiguration', mutating: boolean) {
  const resource = `${kind.toLowerCase()}s`
  return defineResource({
    group: 'admissionregistration.orch.io', version: 'v1', kind, resource, singular: kind.toLowerCase(), scope: 'Cluster',
    verbs: ALL_VERBS,
    categories: ['api-extensions'],
    schemaRef: `io.orch.api.admissionregistration.v1.${kind}`,
    strategy: {
      default: (o) => defaultWebhooks(o, mutating),
      validate: (o) => validateWebhookConfiguration(o, mutating),
      validateUpdate: (o, old) => validateWebhookConfiguration(o, mutating, old),
      allowUnconditionalUpdate: true,
      nameRule: 'subdomain',
      hasGeneration: true,
    },
    table: [
      nameColumn(),
      { name: 'Webhooks', type: 'integer', description: 'How many webhooks the configuration registers.', cell: (o) => (Array.isArray(o.webhooks) ? o.webhooks.length : 0) },
      ageColumn(),
    ],
  })
}

export default webhookConfigurationResource('ValidatingWebhookConfiguration', false)
