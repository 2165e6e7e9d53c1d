// Name, label, annotation and object-metadata validation with upstream's rules and messages.
import { fieldInvalid, fieldRequired, fieldForbidden, fieldDuplicate, fieldNotSupported, fieldTooLong, type FieldError } from './errors.js'
// IP addresses and CIDRs are ip-validation.ts; re-exported for the callers that read every format check from here.
export { parseIPSloppy, isIPv4Bytes, IP_ADDRESS_MSG, legacyIPErrors, nonSpecialIPErrors, parseCidrSloppy, cidrContains, isIPv4, isIPv6, isIP, isCIDR, type Cidr } from './ip-validation.js'

const DNS1123_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?'
const DNS1123_SUBDOMAIN = `${DNS1123_LABEL}(\\.${DNS1123_LABEL})*`
const labelRe = new RegExp(`^${DNS1123_LABEL}$`)
const subdomainRe = new RegExp(`^${DNS1123_SUBDOMAIN}$`)
const QUALIFIED_NAME = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'
const qualifiedNameRe = new RegExp(`^${QUALIFIED_NAME}$`)
const LABEL_VALUE = `(${QUALIFIED_NAME})?`
const labelValueRe = new RegExp(`^${LABEL_VALUE}$`)

export const LABEL_MSG = `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '${DNS1123_LABEL}')`
export const SUBDOMAIN_MSG = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '${DNS1123_SUBDOMAIN}')`
const QUALIFIED_MSG = `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '${QUALIFIED_NAME}')`
const LABEL_VALUE_MSG = `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '${LABEL_VALUE}')`

/** Problems of a DNS-1123 label, as detail strings. */
export function dns1123Label(v: string): string[] {
  const errs: string[] = []
  if (v.length > 63) errs.push('must be no more than 63 characters')
  if (!labelRe.test(v)) errs.push(LABEL_MSG)
  return errs
}

export function dns1123Subdomain(v: string): string[] {
  const errs: string[] = []
  if (v.length > 253) errs.push('must be no more than 253 characters')
  if (!subdomainRe.test(v)) errs.push(SUBDOMAIN_MSG)
  return errs
}

/** Names used as path segments (RBAC objects): anything but '.', '..', or names with '/' or '%'. */
export function pathSegmentName(v: string): string[] {
  if (v === '.' || v === '..') return [`may not be '${v}'`]
  const errs: string[] = []
  for (const c of ['/', '%']) if (v.includes(c)) errs.push(`may not contain '${c}'`)
  return errs
}

export type NameRule = 'subdomain' | 'label' | 'path'

export function nameProblems(rule: NameRule, v: string): string[] {
  switch (rule) {
    case 'label': return dns1123Label(v)
    case 'path': return pathSegmentName(v)
    default: return dns1123Subdomain(v)
  }
}

/** Qualified names (label and annotation keys): optional DNS subdomain prefix and a name part. */
export function qualifiedName(v: string): string[] {
  const parts = v.split('/')
  let name: string
  const errs: string[] = []
  if (parts.length === 1) name = parts[0]
  else if (parts.length === 2) {
    const [prefix, n] = parts
    name = n
    if (prefix.length === 0) errs.push('prefix part must be non-empty')
    else for (const e of dns1123Subdomain(prefix)) errs.push(`prefix part ${e}`)
  } else {
    return [`a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '${QUALIFIED_NAME}') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`]
  }
  if (name.length === 0) errs.push('name part must be non-empty')
  else if (name.length > 63) errs.push('name part must be no more than 63 characters')
  // An empty name part also fails the pattern: upstream reports both.
  if (!qualifiedNameRe.test(name)) errs.push(QUALIFIED_MSG)
  return errs
}

export function labelValue(v: string): string[] {
  const errs: string[] = []
  if (v.length > 63) errs.push('must be no more than 63 characters')
  if (!labelValueRe.test(v)) errs.push(LABEL_VALUE_MSG)
  return errs
}

const ANNOTATIONS_MAX = 256 * 1024

function isStringMap(v: unknown): v is Record<string, string> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string')
}

export function validateLabels(labels: unknown, field = 'metadata.labels'): FieldError[] {
  if (labels === undefined) return []
  if (!isStringMap(labels)) return [fieldInvalid(field, labels, 'must be a map of string keys to string values')]
  const errs: FieldError[] = []
  for (const [k, v] of Object.entries(labels)) {
    for (const d of qualifiedName(k)) errs.push(fieldInvalid(field, k, d))
    for (const d of labelValue(v)) errs.push(fieldInvalid(field, v, d))
  }
  return errs
}

export function validateAnnotations(ann: unknown, field = 'metadata.annotations'): FieldError[] {
  if (ann === undefined) return []
  if (!isStringMap(ann)) return [fieldInvalid(field, ann, 'must be a map of string keys to string values')]
  const errs: FieldError[] = []
  let size = 0
  for (const [k, v] of Object.entries(ann)) {
    for (const d of qualifiedName(k.toLowerCase())) errs.push(fieldInvalid(field, k, d))
    size += k.length + v.length
  }
  if (size > ANNOTATIONS_MAX) errs.push({ type: 'FieldValueTooLong', field, max: ANNOTATIONS_MAX, detail: `must have at most ${ANNOTATIONS_MAX} bytes` })
  return errs
}

/** Standard finalizer names are qualified names; the bare `kubernetes` of namespaces is allowed too. */
export function validateFinalizers(f: unknown, field = 'metadata.finalizers'): FieldError[] {
  if (f === undefined) return []
  if (!Array.isArray(f)) return [fieldInvalid(field, f, 'must be a list of strings')]
  const errs: FieldError[] = []
  const seen = new Set<string>()
  f.forEach((x, i) => {
    if (typeof x !== 'string') { errs.push(fieldInvalid(`${field}[${i}]`, x, 'must be a string')); return }
    errs.push(...finalizerNameErrors(x, `${field}[${i}]`))
    if (seen.has(x)) errs.push({ type: 'FieldValueDuplicate', field: `${field}[${i}]`, value: x })
    seen.add(x)
  })
  if (f.includes('orphan') && f.includes('foregroundDeletion')) errs.push(fieldInvalid(field, f, 'finalizer orphan and foregroundDeletion cannot be both set'))
  return errs
}

/** The finalizer names without a domain that the API knows; any other name must be fully qualified (`example.com/x`). */
const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion'])

/** A finalizer name: a qualified name, and either a standard one or one with a domain prefix (upstream's core rule). */
export function finalizerNameErrors(x: string, field: string): FieldError[] {
  const errs = qualifiedName(x).map((d) => fieldInvalid(field, x, d))
  if (!x.includes('/') && !STANDARD_FINALIZERS.has(x)) errs.push(fieldInvalid(field, x, 'name is neither a standard finalizer name nor is it fully qualified'))
  return errs
}

export interface MetaRules { nameRule: NameRule; namespaced: boolean }

/** ObjectMeta checks shared by every type (name, generateName, namespace, labels, annotations, finalizers). */
export function validateObjectMeta(meta: Record<string, any>, rules: MetaRules): FieldError[] {
  const errs: FieldError[] = []
  const name = meta.name
  if (name === undefined || name === '') {
    if (!meta.generateName) errs.push(fieldRequired('metadata.name', 'name or generateName is required'))
  } else if (typeof name !== 'string') {
    errs.push(fieldInvalid('metadata.name', name, 'must be a string'))
  } else {
    for (const d of nameProblems(rules.nameRule, name)) errs.push(fieldInvalid('metadata.name', name, d))
  }
  if (meta.generateName !== undefined && meta.generateName !== '' && (name === undefined || name === '')) {
    const g = String(meta.generateName)
    const trimmed = g.replace(/-+$/, '')
    if (trimmed !== '') for (const d of nameProblems(rules.nameRule, trimmed)) errs.push(fieldInvalid('metadata.generateName', g, d))
  }
  if (rules.namespaced) {
    if (!meta.namespace) errs.push(fieldRequired('metadata.namespace'))
    else for (const d of dns1123Label(meta.namespace)) errs.push(fieldInvalid('metadata.namespace', meta.namespace, d))
  } else if (meta.namespace) {
    errs.push(fieldForbidden('metadata.namespace', 'not allowed on this type'))
  }
  errs.push(...validateLabels(meta.labels))
  errs.push(...validateAnnotations(meta.annotations))
  errs.push(...validateFinalizers(meta.finalizers))
  if (meta.ownerReferences !== undefined) {
    if (!Array.isArray(meta.ownerReferences)) errs.push(fieldInvalid('metadata.ownerReferences', meta.ownerReferences, 'must be a list'))
    else meta.ownerReferences.forEach((r: any, i: number) => {
      const f = `metadata.ownerReferences[${i}]`
      if (!r || typeof r !== 'object') { errs.push(fieldInvalid(f, r, 'must be an object')); return }
      if (!r.apiVersion) errs.push(fieldInvalid(`${f}.apiVersion`, r.apiVersion ?? '', 'version must not be empty'))
      if (!r.kind) errs.push(fieldInvalid(`${f}.kind`, r.kind ?? '', 'kind must not be empty'))
      if (!r.name) errs.push(fieldInvalid(`${f}.name`, r.name ?? '', 'name must not be empty'))
      if (!r.uid) errs.push(fieldInvalid(`${f}.uid`, r.uid ?? '', 'uid must not be empty'))
    })
  }
  return errs
}

// ---- more of upstream's format checks (apimachinery util/validation), each returning detail strings ----

const DNS1035_LABEL = '[a-z]([-a-z0-9]*[a-z0-9])?'
const dns1035Re = new RegExp(`^${DNS1035_LABEL}$`)
const DNS1035_MSG = `a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '${DNS1035_LABEL}')`

/** Problems of a DNS-1035 label (upstream IsDNS1035Label). */
export function dns1035Label(v: string): string[] {
  const errs: string[] = []
  if (v.length > 63) errs.push('must be no more than 63 characters')
  if (!dns1035Re.test(v)) errs.push(DNS1035_MSG)
  return errs
}

const WILDCARD_SUBDOMAIN = `\\*\\.${DNS1123_SUBDOMAIN}`
const wildcardRe = new RegExp(`^${WILDCARD_SUBDOMAIN}$`)
const WILDCARD_MSG = `a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '${WILDCARD_SUBDOMAIN}')`

/** `*.example.com`: a wildcard followed by a subdomain (RFC 1034 4.3.3). */
export function wildcardSubdomain(v: string): string[] {
  const errs: string[] = []
  if (v.length > 253) errs.push('must be no more than 253 characters')
  if (!wildcardRe.test(v)) errs.push(WILDCARD_MSG)
  return errs
}

/** The kind and name of a reference to another object: both required, each a path segment name. */
export function kindAndNameErrors(ref: Record<string, unknown>, path: string): FieldError[] {
  const errs: FieldError[] = []
  for (const key of ['kind', 'name']) {
    const v = typeof ref[key] === 'string' ? ref[key] as string : ''
    if (v === '') errs.push(fieldRequired(`${path}.${key}`))
    else for (const d of pathSegmentName(v)) errs.push(fieldInvalid(`${path}.${key}`, v, d))
  }
  return errs
}

/** The name of a CSI driver (upstream ValidateCSIDriverName): required, at most 63 bytes, a subdomain once lower-cased. */
export function csiDriverNameErrors(field: string, v: string): FieldError[] {
  const errs: FieldError[] = []
  if (v === '') errs.push(fieldRequired(field))
  if (Buffer.byteLength(v) > 63) errs.push(fieldTooLong(field, 63))
  for (const d of dns1123Subdomain(v.toLowerCase())) errs.push(fieldInvalid(field, v, d))
  return errs
}

/** Problems of an IANA_SVC_NAME port name (upstream IsValidPortName). */
export function portName(v: string): string[] {
  const errs: string[] = []
  if (v.length > 15) errs.push('must be no more than 15 characters')
  if (!/^[-a-z0-9]+$/.test(v)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)')
  if (!/[a-z]/.test(v)) errs.push('must contain at least one letter (a-z)')
  if (v.includes('--')) errs.push('must not contain consecutive hyphens')
  if (v.length > 0 && (v.startsWith('-') || v.endsWith('-'))) errs.push('must not begin or end with a hyphen')
  return errs
}

function isPlainObject(v: unknown): v is Record<string, any> { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** The error text of a selector requirement's operator that is none of those allowed (also quota scope selectors). */
export const BAD_SELECTOR_OPERATOR = 'not a valid selector operator'

/**
 * The operator and the number of values of one selector requirement at `f`: In and NotIn need values, Exists and
 * DoesNotExist take none, and with `numeric` (node selector terms) Gt and Lt take exactly one. Any other operator is
 * reported as `shown`.
 */
export function requirementOperatorErrors(errs: FieldError[], f: string, operator: unknown, shown: unknown, values: readonly unknown[], numeric: boolean): void {
  switch (operator) {
    case 'In': case 'NotIn':
      if (values.length === 0) errs.push(fieldRequired(`${f}.values`, "must be specified when `operator` is 'In' or 'NotIn'"))
      return
    case 'Exists': case 'DoesNotExist':
      if (values.length > 0) errs.push(fieldForbidden(`${f}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
      return
    case 'Gt': case 'Lt':
      if (!numeric) break
      if (values.length !== 1) errs.push(fieldRequired(`${f}.values`, "must be specified single value when `operator` is 'Lt' or 'Gt'"))
      return
  }
  errs.push(fieldInvalid(`${f}.operator`, shown, BAD_SELECTOR_OPERATOR))
}

/**
 * A metav1.LabelSelector (upstream ValidateLabelSelector): label keys and values of matchLabels, and per requirement
 * the operator, the values it needs or forbids, the key, and (unless allowed to be invalid) each value.
 * A missing selector (null) has no problems.
 */
export function validateLabelSelector(sel: unknown, field: string, opts: { allowInvalidLabelValue?: boolean } = {}): FieldError[] {
  if (!isPlainObject(sel)) return []
  const errs: FieldError[] = []
  if (sel.matchLabels !== undefined && sel.matchLabels !== null) errs.push(...validateLabels(sel.matchLabels, `${field}.matchLabels`))
  if (Array.isArray(sel.matchExpressions)) {
    sel.matchExpressions.forEach((r: unknown, i: number) => {
      const f = `${field}.matchExpressions[${i}]`
      const req = isPlainObject(r) ? r : {}
      const values: unknown[] = Array.isArray(req.values) ? req.values : []
      requirementOperatorErrors(errs, f, req.operator, req.operator ?? '', values, false)
      const key = typeof req.key === 'string' ? req.key : ''
      for (const d of qualifiedName(key)) errs.push(fieldInvalid(`${f}.key`, key, d))
      if (!opts.allowInvalidLabelValue) {
        values.forEach((v, j) => { for (const d of labelValue(String(v))) errs.push(fieldInvalid(`${f}.values[${j}]`, v, d)) })
      }
    })
  }
  return errs
}

// ---- label selectors, percentages and metav1 conditions (upstream meta/v1/validation and util/validation) ----

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v)
const strings = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])

/** Whether a selector's matchExpressions hold a value that is no label value (old objects may keep such values). */
export function labelSelectorHasInvalidValue(sel: unknown): boolean {
  if (!isObject(sel)) return false
  return strings(sel.matchExpressions).some((e) => isObject(e) && strings(e.values).some((v) => labelValue(String(v)).length > 0))
}

/** Go's validation.RegexError: the message, examples and the pattern. */
export function regexError(msg: string, pattern: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${pattern}')`
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${pattern}')`
}

const PERCENT_FMT = '[0-9]+%'
const percentRe = new RegExp(`^${PERCENT_FMT}$`)

/** Problems of a percentage text such as `25%` (upstream IsValidPercent). */
export function percentProblems(v: string): string[] {
  return percentRe.test(v) ? [] : [regexError('a valid percent string must be a numeric string followed by an ending \'%\'', PERCENT_FMT, '1%', '93%')]
}

/** An int-or-percent that must not be negative nor above 100% (upstream ValidatePositiveIntOrPercent, IsNotMoreThan100Percent). */
export function validateIntOrPercent(v: unknown, field: string): FieldError[] {
  if (typeof v === 'number') return v < 0 ? [fieldInvalid(field, v, 'must be greater than or equal to 0')] : []
  if (typeof v !== 'string') return []
  const problems = percentProblems(v)
  if (problems.length > 0) return problems.map((d) => fieldInvalid(field, v, d))
  return Number(v.slice(0, -1)) > 100 ? [fieldInvalid(field, v, 'must not be greater than 100%')] : []
}

const CONDITION_REASON_FMT = '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?'
const conditionReasonRe = new RegExp(`^${CONDITION_REASON_FMT}$`)
const CONDITION_REASON_MSG = 'a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or \'_,:\', and must end with an alphanumeric character or \'_\''

/** metav1.Condition lists (upstream ValidateConditions): unique types, status enum, reason format, required times. */
export function validateConditions(conditions: unknown, field: string): FieldError[] {
  const errs: FieldError[] = []
  const seen = new Set<string>()
  strings(conditions).forEach((c, i) => {
    const p = `${field}[${i}]`
    const cond = isObject(c) ? c : {}
    const type = typeof cond.type === 'string' ? cond.type : ''
    if (seen.has(type)) errs.push(fieldDuplicate(p, type))
    else seen.add(type)
    if (type === '') errs.push(fieldRequired(`${p}.type`, 'is required'))
    else for (const d of qualifiedName(type)) errs.push(fieldInvalid(`${p}.type`, type, d))
    const status = typeof cond.status === 'string' ? cond.status : ''
    if (status === '') errs.push(fieldRequired(`${p}.status`))
    else if (!['True', 'False', 'Unknown'].includes(status)) errs.push(fieldNotSupported(`${p}.status`, status, ['False', 'True', 'Unknown']))
    if (typeof cond.observedGeneration === 'number' && cond.observedGeneration < 0) {
      errs.push(fieldInvalid(`${p}.observedGeneration`, cond.observedGeneration, 'must be greater than or equal to zero'))
    }
    if (cond.lastTransitionTime === undefined || cond.lastTransitionTime === '') errs.push(fieldRequired(`${p}.lastTransitionTime`))
    const reason = typeof cond.reason === 'string' ? cond.reason : ''
    if (reason === '') errs.push(fieldRequired(`${p}.reason`))
    else {
      if (!conditionReasonRe.test(reason)) {
        errs.push(fieldInvalid(`${p}.reason`, reason, regexError(CONDITION_REASON_MSG, CONDITION_REASON_FMT, 'my_name', 'MY_NAME', 'MyName', 'ReasonA,ReasonB', 'ReasonA:ReasonB')))
      }
      if (reason.length > 1024) errs.push(fieldTooLong(`${p}.reason`, 1024))
    }
    if (typeof cond.message === 'string' && cond.message.length > 32 * 1024) errs.push(fieldTooLong(`${p}.message`, 32 * 1024))
  })
  return errs
}

export const PORT_RANGE_MSG = 'must be between 1 and 65535, inclusive'

/** Problems of a port number (upstream IsValidPortNum). */
export function portNumber(v: unknown): string[] {
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 65535 ? [] : [PORT_RANGE_MSG]
}

const HTTP_PATH = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+"
const httpPathRe = new RegExp(`^${HTTP_PATH}$`)

/** `acme.io/foo`: a subdomain, a slash, and HTTP path characters (IsDomainPrefixedPath). */
export function domainPrefixedPath(field: string, v: string): FieldError[] {
  if (v.length === 0) return [fieldRequired(field)]
  const slash = v.indexOf('/')
  if (slash <= 0 || slash === v.length - 1) return [fieldInvalid(field, v, 'must be a domain-prefixed path (such as "acme.io/foo")')]
  const host = v.slice(0, slash)
  const errs = dns1123Subdomain(host).map((d) => fieldInvalid(field, host, d))
  const path = v.slice(slash + 1)
  if (!httpPathRe.test(path)) errs.push(fieldInvalid(field, path, `Invalid path (regex used for validation is '${HTTP_PATH}')`))
  return errs
}

/** A domain of at least three dot-separated segments (IsFullyQualifiedName). */
export function fullyQualifiedName(field: string, v: string): FieldError[] {
  if (v.length === 0) return [fieldRequired(field)]
  const errs = dns1123Subdomain(v)
  if (errs.length > 0) return [fieldInvalid(field, v, errs.join(','))]
  if (v.split('.').length < 3) return [fieldInvalid(field, v, 'should be a domain with at least three segments separated by dots')]
  return []
}

/**
 * A domain of at least two dot-separated labels, a trailing dot allowed (IsFullyQualifiedDomainName); the value an
 * error shows is the name without that dot, or the first bad label.
 */
export function fullyQualifiedDomainName(field: string, v: string): FieldError[] {
  if (v.length === 0) return [fieldRequired(field)]
  const name = v.endsWith('.') ? v.slice(0, -1) : v
  const errs = dns1123Subdomain(name)
  if (errs.length > 0) return [fieldInvalid(field, name, errs.join(','))]
  const labels = name.split('.')
  if (labels.length < 2) return [fieldInvalid(field, name, 'should be a domain with at least two segments separated by dots')]
  for (const l of labels) {
    const le = dns1123Label(l)
    if (le.length > 0) return [fieldInvalid(field, l, le.join(','))]
  }
  return []
}
