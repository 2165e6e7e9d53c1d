// ValidatingAdmissionPolicy (admissionregistration.orch.io/v1, cluster-scoped).
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'
import { defaultMatchResources, matchConditionErrors, ruleErrors } from './validatingwebhookconfigurations.js'
import { fieldDuplicate, fieldInvalid, fieldNotSupported, fieldRequired, goQuote, GoValue, type FieldError } from '../../../machinery/errors.js'
import { dns1035Label, dns1123Subdomain, pathSegmentName, qualifiedName, validateLabelSelector } from '../../../machinery/validation.js'
import { celCompileProblem, celResultType, type CelDeclarations, type CelResult } from '../../../machinery/cel.js'
import { isDeepStrictEqual } from 'node:util'
import { ageColumn, nameColumn } from '../_printers.js'

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }
function list(v: unknown): unknown[] { return Array.isArray(v) ? v : [] }
function str(v: unknown): string { return typeof v === 'string' ? v : '' }

// ---- rules and match resources (shared with the binding) ----

/** upstream validateNamedRuleWithOperations: resource names, then the rule as webhooks have it. */
function validateNamedRule(rule: Obj, f: string): FieldError[] {
  const errs: FieldError[] = []
  const names = new Set<string>()
  list(rule.resourceNames).forEach((x, i) => {
    const n = str(x)
    for (const d of pathSegmentName(n)) errs.push(fieldInvalid(`${f}.resourceNames[${i}]`, n, d))
    if (names.has(n)) errs.push(fieldDuplicate(`${f}.resourceNames[${i}]`, n))
    names.add(n)
  })
  errs.push(...ruleErrors(rule, f))
  return errs
}

/** upstream validateMatchResources (matchPolicy and both selectors are defaulted, so required here means explicitly null). */
export function validateMatchResources(m: unknown, f: string): FieldError[] {
  if (!isObj(m)) return []
  const errs: FieldError[] = []
  if (m.matchPolicy === undefined || m.matchPolicy === null) errs.push(fieldRequired(`${f}.matchPolicy`))
  else if (m.matchPolicy !== 'Equivalent' && m.matchPolicy !== 'Exact') errs.push(fieldNotSupported(`${f}.matchPolicy`, m.matchPolicy, ['Equivalent', 'Exact']))
  for (const k of ['namespaceSelector', 'objectSelector']) {
    if (!isObj(m[k])) errs.push(fieldRequired(`${f}.${k}`))
    else errs.push(...validateLabelSelector(m[k], `${f}.${k}`))
  }
  list(m.resourceRules).forEach((r, i) => errs.push(...validateNamedRule(isObj(r) ? r : {}, `${f}.resourceRules[${i}]`)))
  list(m.excludeResourceRules).forEach((r, i) => errs.push(...validateNamedRule(isObj(r) ? r : {}, `${f}.excludeResourceRules[${i}]`)))
  return errs
}

// ---- the policy ----

const FAILURE_POLICIES = ['Fail', 'Ignore']
/** Upstream's v1 validation allows Forbidden, Invalid and RequestEntityTooLarge; spec 3 lists Unauthorized as well. */
const REASONS = ['Forbidden', 'Invalid', 'RequestEntityTooLarge', 'Unauthorized']
const MAX_AUDIT_ANNOTATIONS = 20
const MAX_VALUE_EXPRESSION = 5 * 1024
const CEL_RESERVED = new Set(['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while'])
const hasNewlines = (s: string): boolean => /[\n\r]/.test(s)

/** An Invalid cause for an expression that does not compile, or none. */
function celCause(f: string, expr: string, result: CelResult, decls: CelDeclarations, shown = expr): FieldError[] {
  const problem = celCompileProblem(expr, result, decls)
  return problem === undefined ? [] : [fieldInvalid(f, shown, problem)]
}

/** upstream validateParamKind: apiVersion `group/version` (group a DNS subdomain, version a DNS-1035 label) and kind. */
function validateParamKind(pk: Obj, f: string): FieldError[] {
  const errs: FieldError[] = []
  const av = str(pk.apiVersion)
  if (av === '') errs.push(fieldRequired(`${f}.apiVersion`))
  else {
    const slashes = av.split('/').length - 1
    if (slashes > 1) errs.push(fieldInvalid(`${f}.apiVersion`, av, `unexpected GroupVersion string: ${av}`))
    else {
      const [group, version] = av === '/' ? ['', ''] : slashes === 0 ? ['', av] : av.split('/')
      if (group !== '') { const e = dns1123Subdomain(group); if (e.length > 0) errs.push(fieldInvalid(`${f}.apiVersion`, group, e.join(','))) }
      if (version === '') errs.push(fieldInvalid(`${f}.apiVersion`, av, 'version must be specified'))
      else { const e = dns1035Label(version); if (e.length > 0) errs.push(fieldInvalid(`${f}.apiVersion`, version, e.join(','))) }
    }
  }
  const kind = str(pk.kind)
  if (kind === '') errs.push(fieldRequired(`${f}.kind`))
  else { const e = dns1035Label(kind.toLowerCase()); if (e.length > 0) errs.push(fieldInvalid(`${f}.kind`, kind, `may have mixed case, but should otherwise match: ${e.join(',')}`)) }
  return errs
}

function auditAnnotationsValue(items: unknown[]): GoValue {
  const one = (a: unknown): string => { const o = isObj(a) ? a : {}; return `admissionregistration.AuditAnnotation{Key:${goQuote(str(o.key))}, ValueExpression:${goQuote(str(o.valueExpression))}}` }
  return new GoValue(`[]admissionregistration.AuditAnnotation{${items.map(one).join(', ')}}`)
}

/** upstream validateValidatingAdmissionPolicySpec plus spec 3's rules; `old` is the stored policy on update. */
function validatePolicy(o: Obj, old?: Obj): FieldError[] {
  const errs: FieldError[] = []
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  const name = str(o.metadata?.name)
  const hasParams = isObj(spec.paramKind)
  const variables = list(spec.variables)
  const hasVariables = variables.length > 0
  if (spec.failurePolicy === undefined || spec.failurePolicy === null) errs.push(fieldRequired('spec.failurePolicy'))
  else if (!FAILURE_POLICIES.includes(spec.failurePolicy)) errs.push(fieldNotSupported('spec.failurePolicy', spec.failurePolicy, FAILURE_POLICIES))
  if (hasParams) errs.push(...validateParamKind(spec.paramKind, 'spec.paramKind'))
  if (!isObj(spec.matchConstraints)) errs.push(fieldRequired('spec.matchConstraints'))
  else {
    errs.push(...validateMatchResources(spec.matchConstraints, 'spec.matchConstraints'))
    // At least one resource rule gives the expressions their type information.
    if (list(spec.matchConstraints.resourceRules).length === 0) errs.push(fieldRequired('spec.matchConstraints.resourceRules'))
  }
  // Upstream skips the match conditions of an update that keeps them and the paramKind as they were.
  const keepConditions = old !== undefined && isDeepStrictEqual(spec.paramKind, old.spec?.paramKind) && isDeepStrictEqual(spec.matchConditions, old.spec?.matchConditions)
  if (!keepConditions) errs.push(...matchConditionErrors(list(spec.matchConditions), 'spec.matchConditions', hasParams))
  const varNames = new Set<string>()
  // Each variable is declared with the type it compiles to, and an expression sees only the variables before it.
  const varTypes: Array<[string, string]> = []
  variables.forEach((x, i) => {
    const v = isObj(x) ? x : {}
    const f = `spec.variables[${i}]`
    const n = str(v.name)
    if (n.trim() === '') errs.push(fieldRequired(`${f}.name`, 'name is not specified'))
    else {
      if (!/^[_a-zA-Z][_a-zA-Z0-9]*$/.test(n) || CEL_RESERVED.has(n)) errs.push(fieldInvalid(`${f}.name`, n, 'name is not a valid CEL identifier'))
      // variables is a list map keyed by name (spec 3); upstream's hand-written validation does not check this.
      if (varNames.has(n)) errs.push(fieldDuplicate(`${f}.name`, n))
      varNames.add(n)
    }
    const expr = str(v.expression)
    if (expr.trim() === '') errs.push(fieldRequired(`${f}.expression`, 'expression is not specified'))
    else {
      const decls = { params: hasParams, authorizer: true, variables: true, variableTypes: [...varTypes] }
      const problem = celCause(`${f}.expression`, expr, 'any', decls)
      errs.push(...problem)
      if (n.trim() !== '') varTypes.push([n, problem.length === 0 ? celResultType(expr, decls) : 'dyn'])
    }
  })
  const validations = list(spec.validations)
  const annotations = list(spec.auditAnnotations)
  if (validations.length === 0 && annotations.length === 0) {
    errs.push(fieldRequired('spec.validations', 'validations or auditAnnotations must contain at least one item'))
    errs.push(fieldRequired('spec.auditAnnotations', 'validations or auditAnnotations must contain at least one item'))
    return errs
  }
  validations.forEach((x, i) => {
    const v = isObj(x) ? x : {}
    const f = `spec.validations[${i}]`
    const expr = str(v.expression)
    if (expr.trim() === '') errs.push(fieldRequired(`${f}.expression`, 'expression is not specified'))
    else errs.push(...celCause(`${f}.expression`, expr, 'bool', { params: hasParams, authorizer: true, variables: hasVariables, variableTypes: varTypes }))
    const me = str(v.messageExpression)
    if (me.length > 0 && me.trim() === '') errs.push(fieldInvalid(`${f}.messageExpression`, me, 'must be non-empty if specified'))
    else if (me.trim() !== '') errs.push(...celCause(`${f}.messageExpression`, me, 'string', { params: hasParams, authorizer: false, variables: hasVariables, variableTypes: varTypes }))
    const msg = str(v.message)
    if (msg.length > 0 && msg.trim() === '') errs.push(fieldInvalid(`${f}.message`, msg, 'message must be non-empty if specified'))
    else if (hasNewlines(msg.trim())) errs.push(fieldInvalid(`${f}.message`, msg, 'message must not contain line breaks'))
    // Spec 3: a message is required when the expression has line breaks (upstream documents this but never checks it).
    else if (msg.trim() === '' && hasNewlines(expr.trim())) errs.push(fieldRequired(`${f}.message`, 'message must be specified if expression contains line breaks'))
    if (v.reason !== undefined && v.reason !== null && !REASONS.includes(v.reason)) errs.push(fieldNotSupported(`${f}.reason`, v.reason, REASONS))
  })
  if (annotations.length > MAX_AUDIT_ANNOTATIONS) errs.push(fieldInvalid('spec.auditAnnotations', auditAnnotationsValue(annotations), `must not have more than ${MAX_AUDIT_ANNOTATIONS} auditAnnotations`))
  const keys = new Set<string>()
  annotations.forEach((x, i) => {
    const a = isObj(x) ? x : {}
    const f = `spec.auditAnnotations[${i}]`
    const key = str(a.key)
    if (name !== '') { for (const d of qualifiedName(`${name}/${key}`)) errs.push(fieldInvalid(`${f}.key`, `${name}/${key}`, d)) }
    else errs.push(fieldInvalid(`${f}.key`, key, 'requires metadata.name be non-empty'))
    const ve = str(a.valueExpression)
    const trimmed = ve.trim()
    if (trimmed === '') errs.push(fieldRequired(`${f}.valueExpression`, 'valueExpression is not specified'))
    else if (Buffer.byteLength(trimmed) > MAX_VALUE_EXPRESSION) errs.push(fieldRequired(`${f}.valueExpression`, `must not exceed ${MAX_VALUE_EXPRESSION} bytes in length`))
    else errs.push(...celCause(`${f}.valueExpression`, trimmed, 'string-or-null', { params: hasParams, authorizer: true, variables: hasVariables, variableTypes: varTypes }, ve))
    if (keys.has(key)) errs.push(fieldDuplicate(`${f}.key`, key))
    keys.add(key)
  })
  return errs
}

export default defineResource({
  group: 'admissionregistration.orch.io', version: 'v1', kind: 'ValidatingAdmissionPolicy', resource: 'validatingadmissionpolicies', singular: 'validatingadmissionpolicy', scope: 'Cluster',
  verbs: ALL_VERBS,
  categories: ['api-extensions'],
  subresources: ['status'],
  schemaRef: 'io.orch.api.admissionregistration.v1.ValidatingAdmissionPolicy',
  // spec and status are value structs upstream.
  zeroValues: { spec: {}, status: {} },
  strategy: {
    ...statusSplit.strategy,
    // SetDefaults_ValidatingAdmissionPolicySpec
    default: (o) => {
      if (o.spec === null || typeof o.spec !== 'object') return
      o.spec.failurePolicy ??= 'Fail'
      defaultMatchResources(o.spec.matchConstraints)
    },
    validate: (o) => validatePolicy(o),
    validateUpdate: (o, old) => validatePolicy(o, old),
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
    hasGeneration: true,
  },
  status: statusSplit.status,
  table: [
    nameColumn(),
    { name: 'Validations', type: 'integer', description: 'How many validation rules the policy has.', cell: (o) => (Array.isArray(o.spec?.validations) ? o.spec.validations.length : 0) },
    {
      name: 'ParamKind', type: 'string', description: 'The kind of the objects that parameterize the policy (apiVersion/kind).',
      cell: (o) => { const k = o.spec?.paramKind; return k !== null && typeof k === 'object' ? `${k.apiVersion ?? ''}/${k.kind ?? ''}` : '<unset>' },
    },
    ageColumn(),
  ],
})
