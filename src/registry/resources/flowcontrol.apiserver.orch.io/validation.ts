// Defaults and validation of FlowSchema and PriorityLevelConfiguration (upstream pkg/apis/flowcontrol/{v1/defaults,validation}).
import { fieldDuplicate, fieldForbidden, fieldInvalid, fieldNotSupported, fieldRequired, type FieldError } from '../../../machinery/errors.js'
import { dns1123Label, dns1123Subdomain } from '../../../machinery/validation.js'
import type { Obj } from '../../define.js'
import {
  FLOW_SCHEMA_DEFAULT_MATCHING_PRECEDENCE, FLOW_SCHEMA_MAX_MATCHING_PRECEDENCE, FLOW_SCHEMA_NAME_EXEMPT, PRIORITY_LEVEL_NAME_EXEMPT,
  mandatoryFlowSchema, mandatoryPriorityLevel,
} from './bootstrap.js'

/** Upstream shufflesharding.MaxHashBits. */
export const MAX_HASH_BITS = 60
/** Upstream priorityLevelConfigurationQueuingMaxQueues (10^7). */
export const MAX_QUEUES = 10_000_000
export const DEFAULT_NOMINAL_CONCURRENCY_SHARES = 30
export const DEFAULT_QUEUES = 64
export const DEFAULT_HAND_SIZE = 8
export const DEFAULT_QUEUE_LENGTH_LIMIT = 50

// sets.String.List() order (sorted).
const SUPPORTED_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'proxy', 'update', 'watch']
const SUPPORTED_DISTINGUISHERS = ['ByNamespace', 'ByUser']
const SUPPORTED_SUBJECT_KINDS = ['Group', 'ServiceAccount', 'User']
const SUPPORTED_PL_TYPES = ['Exempt', 'Limited']
const SUPPORTED_LIMIT_RESPONSES = ['Queue', 'Reject']
const NS_ERR_INTRO = "each member of this list must be '*' or a DNS-1123 label; "

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }
/** A Go pointer: present unless undefined or null. */
function present(v: unknown): boolean { return v !== undefined && v !== null }
function list(v: unknown): unknown[] { return Array.isArray(v) ? v : [] }
function str(v: unknown): string { return typeof v === 'string' ? v : '' }
/** An int32 field (the Go zero value when absent). */
function int(v: unknown): number { return typeof v === 'number' ? v : 0 }

/** Upstream shufflesharding.RequiredEntropyBits. */
export function requiredEntropyBits(deckSize: number, handSize: number): number {
  return Math.ceil(Math.log2(deckSize) * handSize)
}

// ---------------------------------------------------------------- defaults

/** SetDefaults_FlowSchemaSpec: an unset (zero) matchingPrecedence becomes 1000. */
export function defaultFlowSchema(o: Obj): void {
  const spec = o.spec
  if (!isObj(spec)) return
  if (spec.matchingPrecedence === undefined || spec.matchingPrecedence === null || spec.matchingPrecedence === 0) spec.matchingPrecedence = FLOW_SCHEMA_DEFAULT_MATCHING_PRECEDENCE
}

/**
 * The v1 defaults of a PriorityLevelConfiguration: limited.nominalConcurrencyShares 30 only when unspecified (an
 * explicit 0 stays 0), lendablePercent 0, exempt.nominalConcurrencyShares 0, queuing zeros become 64 / 8 / 50.
 */
export function defaultPriorityLevel(o: Obj): void {
  const spec = o.spec
  if (!isObj(spec)) return
  if (isObj(spec.exempt)) {
    spec.exempt.nominalConcurrencyShares ??= 0
    spec.exempt.lendablePercent ??= 0
  }
  if (isObj(spec.limited)) {
    const l = spec.limited
    l.nominalConcurrencyShares ??= DEFAULT_NOMINAL_CONCURRENCY_SHARES
    l.lendablePercent ??= 0
    if (isObj(l.limitResponse) && isObj(l.limitResponse.queuing)) {
      const q = l.limitResponse.queuing
      if (!q.handSize) q.handSize = DEFAULT_HAND_SIZE
      if (!q.queues) q.queues = DEFAULT_QUEUES
      if (!q.queueLengthLimit) q.queueLengthLimit = DEFAULT_QUEUE_LENGTH_LIMIT
    }
  }
}

// ---------------------------------------------------------------- semantic equality (mandatory objects)

/** Drops what Go's apiequality.Semantic.DeepEqual cannot tell from absent: nulls, "", false and empty lists. */
function normalize(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normalize)
  if (isObj(v)) {
    const out: Obj = {}
    for (const k of Object.keys(v).sort()) {
      const x = v[k]
      if (x === undefined || x === null || x === '' || x === false) continue
      if (Array.isArray(x) && x.length === 0) continue
      out[k] = normalize(x)
    }
    return out
  }
  return v
}

export function specEqualish(a: unknown, b: unknown): boolean {
  return JSON.stringify(normalize(a ?? {})) === JSON.stringify(normalize(b ?? {}))
}

// ---------------------------------------------------------------- FlowSchema

export function validateFlowSchema(o: Obj): FieldError[] {
  const name = str(o.metadata?.name)
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  const errs = validateFlowSchemaSpec(name, spec, 'spec')
  const mand = mandatoryFlowSchema(name)
  if (mand !== undefined && !specEqualish(spec, mand.spec)) {
    errs.push(fieldInvalid('spec', spec, `spec of '${name}' must equal the fixed value`))
  }
  errs.push(...validateFlowSchemaStatus(o.status))
  return errs
}

/** ValidateFlowSchemaUpdate is ValidateFlowSchema of the new object. */
export function validateFlowSchemaUpdate(o: Obj, _old?: Obj): FieldError[] { return validateFlowSchema(o) }

export function validateFlowSchemaSpec(fsName: string, spec: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  const prec = int(spec.matchingPrecedence)
  if (prec <= 0) errs.push(fieldInvalid(`${path}.matchingPrecedence`, prec, 'must be a positive value'))
  if (prec > FLOW_SCHEMA_MAX_MATCHING_PRECEDENCE) errs.push(fieldInvalid(`${path}.matchingPrecedence`, prec, `must not be greater than ${FLOW_SCHEMA_MAX_MATCHING_PRECEDENCE}`))
  if (prec === 1 && fsName !== FLOW_SCHEMA_NAME_EXEMPT) errs.push(fieldInvalid(`${path}.matchingPrecedence`, prec, "only the schema named 'exempt' may have matchingPrecedence 1"))
  if (present(spec.distinguisherMethod)) {
    const dm = isObj(spec.distinguisherMethod) ? spec.distinguisherMethod : {}
    if (!SUPPORTED_DISTINGUISHERS.includes(str(dm.type))) errs.push(fieldNotSupported(`${path}.distinguisherMethod.type`, dm, SUPPORTED_DISTINGUISHERS))
  }
  const plName = str(isObj(spec.priorityLevelConfiguration) ? spec.priorityLevelConfiguration.name : '')
  if (plName.length > 0) {
    for (const msg of dns1123Subdomain(plName)) errs.push(fieldInvalid(`${path}.priorityLevelConfiguration.name`, plName, msg))
  } else {
    errs.push(fieldRequired(`${path}.priorityLevelConfiguration.name`, 'must reference a priority level'))
  }
  list(spec.rules).forEach((rule, i) => errs.push(...validatePolicyRulesWithSubjects(isObj(rule) ? rule : {}, `${path}.rules[${i}]`)))
  return errs
}

function validatePolicyRulesWithSubjects(rule: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  const subjects = list(rule.subjects)
  if (subjects.length > 0) subjects.forEach((s, i) => errs.push(...validateSubject(isObj(s) ? s : {}, `${path}.subjects[${i}]`)))
  else errs.push(fieldRequired(`${path}.subjects`, 'subjects must contain at least one value'))
  const resourceRules = list(rule.resourceRules)
  const nonResourceRules = list(rule.nonResourceRules)
  if (resourceRules.length === 0 && nonResourceRules.length === 0) errs.push(fieldRequired(path, 'at least one of resourceRules and nonResourceRules has to be non-empty'))
  resourceRules.forEach((r, i) => errs.push(...validateResourcePolicyRule(isObj(r) ? r : {}, `${path}.resourceRules[${i}]`)))
  nonResourceRules.forEach((r, i) => errs.push(...validateNonResourcePolicyRule(isObj(r) ? r : {}, `${path}.nonResourceRules[${i}]`)))
  return errs
}

function validateSubject(s: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  const forbidUser = (): void => { if (present(s.user)) errs.push(fieldForbidden(`${path}.user`, "user is forbidden when subject kind is not 'User'")) }
  const forbidGroup = (): void => { if (present(s.group)) errs.push(fieldForbidden(`${path}.group`, "group is forbidden when subject kind is not 'Group'")) }
  const forbidSA = (): void => { if (present(s.serviceAccount)) errs.push(fieldForbidden(`${path}.serviceAccount`, "serviceAccount is forbidden when subject kind is not 'ServiceAccount'")) }
  switch (s.kind) {
    case 'ServiceAccount':
      errs.push(...validateServiceAccountSubject(s.serviceAccount, `${path}.serviceAccount`))
      forbidUser(); forbidGroup()
      break
    case 'User':
      errs.push(...validateNamedSubject(s.user, `${path}.user`, "user is required when subject kind is 'User'"))
      forbidSA(); forbidGroup()
      break
    case 'Group':
      errs.push(...validateNamedSubject(s.group, `${path}.group`, "group is required when subject kind is 'Group'"))
      forbidSA(); forbidUser()
      break
    default:
      errs.push(fieldNotSupported(`${path}.kind`, s.kind ?? '', SUPPORTED_SUBJECT_KINDS))
  }
  return errs
}

function validateServiceAccountSubject(sa: unknown, path: string): FieldError[] {
  if (!present(sa)) return [fieldRequired(path, "serviceAccount is required when subject kind is 'ServiceAccount'")]
  const o: Obj = isObj(sa) ? sa : {}
  const errs: FieldError[] = []
  const name = str(o.name)
  if (name.length === 0) errs.push(fieldRequired(`${path}.name`, ''))
  else if (name !== '*') for (const msg of dns1123Subdomain(name)) errs.push(fieldInvalid(`${path}.name`, name, msg))
  const ns = str(o.namespace)
  if (ns.length > 0) for (const msg of dns1123Label(ns)) errs.push(fieldInvalid(`${path}.namespace`, ns, msg))
  else errs.push(fieldRequired(`${path}.namespace`, 'must specify namespace for service account'))
  return errs
}

function validateNamedSubject(subject: unknown, path: string, missing: string): FieldError[] {
  if (!present(subject)) return [fieldRequired(path, missing)]
  const name = str(isObj(subject) ? subject.name : '')
  return name.length === 0 ? [fieldRequired(`${path}.name`, '')] : []
}

function validateVerbs(verbs: string[], path: string): FieldError[] {
  if (verbs.length === 0) return [fieldRequired(path, 'verbs must contain at least one value')]
  if (verbs.includes('*')) return verbs.length > 1 ? [fieldInvalid(path, verbs, "if '*' is present, must not specify other verbs")] : []
  if (!verbs.every((v) => SUPPORTED_VERBS.includes(v))) return [fieldNotSupported(path, verbs, SUPPORTED_VERBS)]
  return []
}

function strings(v: unknown): string[] { return list(v).map((x) => (typeof x === 'string' ? x : String(x))) }

function validateNonResourcePolicyRule(rule: Obj, path: string): FieldError[] {
  const errs = validateVerbs(strings(rule.verbs), `${path}.verbs`)
  const urls = strings(rule.nonResourceURLs)
  if (urls.length === 0) errs.push(fieldRequired(`${path}.nonResourceURLs`, 'nonResourceURLs must contain at least one value'))
  else if (urls.includes('*')) {
    if (urls.length > 1) errs.push(fieldInvalid(`${path}.nonResourceURLs`, urls, "if '*' is present, must not specify other non-resource URLs"))
  } else {
    urls.forEach((u, i) => { const e = validateNonResourceURLPath(u, `${path}.nonResourceURLs[${i}]`); if (e) errs.push(e) })
  }
  return errs
}

function validateResourcePolicyRule(rule: Obj, path: string): FieldError[] {
  const errs = validateVerbs(strings(rule.verbs), `${path}.verbs`)
  const groups = strings(rule.apiGroups)
  if (groups.length === 0) errs.push(fieldRequired(`${path}.apiGroups`, 'resource rules must supply at least one api group'))
  else if (groups.length > 1 && groups.includes('*')) errs.push(fieldInvalid(`${path}.apiGroups`, groups, "if '*' is present, must not specify other api groups"))
  const resources = strings(rule.resources)
  if (resources.length === 0) errs.push(fieldRequired(`${path}.resources`, 'resource rules must supply at least one resource'))
  else if (resources.length > 1 && resources.includes('*')) errs.push(fieldInvalid(`${path}.resources`, resources, "if '*' is present, must not specify other resources"))
  const namespaces = strings(rule.namespaces)
  if (namespaces.length === 0 && rule.clusterScope !== true) {
    errs.push(fieldRequired(`${path}.namespaces`, 'resource rules that are not cluster scoped must supply at least one namespace'))
  } else if (namespaces.includes('*')) {
    if (namespaces.length > 1) errs.push(fieldInvalid(`${path}.namespaces`, namespaces, "if '*' is present, must not specify other namespaces"))
  } else {
    namespaces.forEach((ns, i) => { for (const msg of dns1123Label(ns)) errs.push(fieldInvalid(`${path}.namespaces[${i}]`, ns, NS_ERR_INTRO + msg)) })
  }
  return errs
}

/** ValidateNonResourceURLPath: leading slash, no white-space, no '//', '*' only as a final '/*'. */
export function validateNonResourceURLPath(p: string, path: string): FieldError | undefined {
  if (p.length === 0) return fieldInvalid(path, p, 'must not be empty')
  if (p === '/') return undefined
  if (!p.startsWith('/')) return fieldInvalid(path, p, 'must start with slash')
  if (p.includes(' ')) return fieldInvalid(path, p, 'must not contain white-space')
  if (p.includes('//')) return fieldInvalid(path, p, 'must not contain double slash')
  const wildcards = p.split('*').length - 1
  if (wildcards > 1 || (wildcards === 1 && !p.endsWith('/*'))) return fieldInvalid(path, p, 'wildcard can only do suffix matching')
  return undefined
}

function validateConditions(status: unknown, path: string): FieldError[] {
  const errs: FieldError[] = []
  const seen = new Set<string>()
  list(isObj(status) ? status.conditions : undefined).forEach((c, i) => {
    const type = str(isObj(c) ? c.type : '')
    if (seen.has(type)) errs.push(fieldDuplicate(`${path}.conditions[${i}].type`, type))
    seen.add(type)
    if (type.length === 0) errs.push(fieldRequired(`${path}.conditions[${i}].type`, 'must not be empty'))
  })
  return errs
}

export function validateFlowSchemaStatus(status: unknown): FieldError[] { return validateConditions(status, 'status') }

// ---------------------------------------------------------------- PriorityLevelConfiguration

export function validatePriorityLevel(o: Obj): FieldError[] {
  const name = str(o.metadata?.name)
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  const errs = validatePriorityLevelSpec(spec, name, 'spec')
  errs.push(...validateIfMandatoryPriorityLevel(name, spec))
  errs.push(...validatePriorityLevelStatus(o.status))
  return errs
}

export function validatePriorityLevelUpdate(o: Obj, _old?: Obj): FieldError[] { return validatePriorityLevel(o) }

function validateIfMandatoryPriorityLevel(name: string, spec: Obj): FieldError[] {
  const mand = mandatoryPriorityLevel(name)
  if (mand === undefined) return []
  if (name === PRIORITY_LEVEL_NAME_EXEMPT) {
    // Operators may change spec.exempt of the exempt level; nothing else.
    const have = { ...spec, exempt: mand.spec.exempt }
    if (!specEqualish(have, mand.spec)) return [fieldInvalid('spec', spec, `spec of '${name}' except the 'spec.exempt' field must equal the fixed value`)]
    return []
  }
  if (!specEqualish(spec, mand.spec)) return [fieldInvalid('spec', spec, `spec of '${name}' must equal the fixed value`)]
  return []
}

export function validatePriorityLevelSpec(spec: Obj, name: string, path: string): FieldError[] {
  const errs: FieldError[] = []
  const type = spec.type ?? ''
  if ((name === PRIORITY_LEVEL_NAME_EXEMPT) !== (type === 'Exempt')) errs.push(fieldInvalid(`${path}.type`, type, "type must be 'Exempt' if and only if name is 'exempt'"))
  switch (type) {
    case 'Exempt':
      if (present(spec.limited)) errs.push(fieldForbidden(`${path}.limited`, 'must be nil if the type is not Limited'))
      if (present(spec.exempt)) errs.push(...validateExempt(isObj(spec.exempt) ? spec.exempt : {}, `${path}.exempt`))
      break
    case 'Limited':
      if (present(spec.exempt)) errs.push(fieldForbidden(`${path}.exempt`, 'must be nil if the type is Limited'))
      if (!present(spec.limited)) errs.push(fieldRequired(`${path}.limited`, 'must not be empty when type is Limited'))
      else errs.push(...validateLimited(isObj(spec.limited) ? spec.limited : {}, `${path}.limited`))
      break
    default:
      errs.push(fieldNotSupported(`${path}.type`, type, SUPPORTED_PL_TYPES))
  }
  return errs
}

function validateLimited(l: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  // v1 allows an explicit 0 (AllowZeroLimitedNominalConcurrencyShares).
  const ncs = int(l.nominalConcurrencyShares)
  if (ncs < 0) errs.push(fieldInvalid(`${path}.nominalConcurrencyShares`, ncs, 'must be a non-negative integer'))
  errs.push(...validateLimitResponse(isObj(l.limitResponse) ? l.limitResponse : {}, `${path}.limitResponse`))
  if (present(l.lendablePercent) && !(int(l.lendablePercent) >= 0 && int(l.lendablePercent) <= 100)) {
    errs.push(fieldInvalid(`${path}.lendablePercent`, int(l.lendablePercent), 'must be between 0 and 100, inclusive'))
  }
  if (present(l.borrowingLimitPercent) && int(l.borrowingLimitPercent) < 0) {
    errs.push(fieldInvalid(`${path}.borrowingLimitPercent`, int(l.borrowingLimitPercent), 'if specified, must be a non-negative integer'))
  }
  return errs
}

function validateExempt(e: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  if (present(e.nominalConcurrencyShares) && int(e.nominalConcurrencyShares) < 0) {
    errs.push(fieldInvalid(`${path}.nominalConcurrencyShares`, int(e.nominalConcurrencyShares), 'must be a non-negative integer'))
  }
  if (present(e.lendablePercent) && !(int(e.lendablePercent) >= 0 && int(e.lendablePercent) <= 100)) {
    errs.push(fieldInvalid(`${path}.lendablePercent`, int(e.lendablePercent), 'must be between 0 and 100, inclusive'))
  }
  return errs
}

function validateLimitResponse(lr: Obj, path: string): FieldError[] {
  switch (lr.type ?? '') {
    case 'Reject':
      return present(lr.queuing) ? [fieldForbidden(`${path}.queuing`, 'must be nil if limited.limitResponse.type is not Limited')] : []
    case 'Queue':
      if (!present(lr.queuing)) return [fieldRequired(`${path}.queuing`, 'must not be empty if limited.limitResponse.type is Limited')]
      return validateQueuing(isObj(lr.queuing) ? lr.queuing : {}, `${path}.queuing`)
    default:
      return [fieldNotSupported(`${path}.type`, lr.type ?? '', SUPPORTED_LIMIT_RESPONSES)]
  }
}

function validateQueuing(q: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  const qll = int(q.queueLengthLimit)
  const queues = int(q.queues)
  const handSize = int(q.handSize)
  if (qll <= 0) errs.push(fieldInvalid(`${path}.queueLengthLimit`, qll, 'must be positive'))
  if (queues <= 0) errs.push(fieldInvalid(`${path}.queues`, queues, 'must be positive'))
  else if (queues > MAX_QUEUES) errs.push(fieldInvalid(`${path}.queues`, queues, `must not be greater than ${MAX_QUEUES}`))
  if (handSize <= 0) errs.push(fieldInvalid(`${path}.handSize`, handSize, 'must be positive'))
  else if (handSize > queues) errs.push(fieldInvalid(`${path}.handSize`, handSize, `should not be greater than queues (${queues})`))
  else if (requiredEntropyBits(queues, handSize) > MAX_HASH_BITS) {
    errs.push(fieldInvalid(`${path}.handSize`, handSize, `required entropy bits of deckSize ${queues} and handSize ${handSize} should not be greater than ${MAX_HASH_BITS}`))
  }
  return errs
}

export function validatePriorityLevelStatus(status: unknown): FieldError[] { return validateConditions(status, 'status') }
