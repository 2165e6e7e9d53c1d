// Name, label, annotation and object-metadata validation with upstream's rules and messages.
import { fieldInvalid, fieldRequired, fieldForbidden, fieldDuplicate, fieldNotSupported, fieldTooLong, type FieldError } from './errors.js'

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
    for (const d of qualifiedName(x)) errs.push(fieldInvalid(`${field}[${i}]`, x, d))
    if (seen.has(x)) errs.push({ type: 'FieldValueDuplicate', field: `${field}[${i}]`, value: x })
    seen.add(x)
  })
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

// ---- label selectors, percentages and metav1 conditions (upstream meta/v1/validation and util/validation) ----

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v)
const strings = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])

/** Whether a selector's matchExpressions hold a value that is no label value (old objects may keep such values). */
export function labelSelectorHasInvalidValue(sel: unknown): boolean {
  if (!isObject(sel)) return false
  return strings(sel.matchExpressions).some((e) => isObject(e) && strings(e.values).some((v) => labelValue(String(v)).length > 0))
}

/** A metav1.LabelSelector: label keys and values, operators and their values (upstream ValidateLabelSelector). */
export function validateLabelSelector(sel: unknown, field: string, opts: { allowInvalidLabelValue?: boolean } = {}): FieldError[] {
  if (!isObject(sel)) return []
  const errs: FieldError[] = []
  if (isObject(sel.matchLabels)) errs.push(...validateLabels(sel.matchLabels, `${field}.matchLabels`))
  strings(sel.matchExpressions).forEach((e, i) => {
    const p = `${field}.matchExpressions[${i}]`
    const r = isObject(e) ? e : {}
    const values = strings(r.values)
    const operator = typeof r.operator === 'string' ? r.operator : ''
    switch (operator) {
      case 'In': case 'NotIn':
        if (values.length === 0) errs.push(fieldRequired(`${p}.values`, 'must be specified when `operator` is \'In\' or \'NotIn\''))
        break
      case 'Exists': case 'DoesNotExist':
        if (values.length > 0) errs.push(fieldForbidden(`${p}.values`, 'may not be specified when `operator` is \'Exists\' or \'DoesNotExist\''))
        break
      default:
        errs.push(fieldInvalid(`${p}.operator`, operator, 'not a valid selector operator'))
    }
    const key = typeof r.key === 'string' ? r.key : ''
    for (const d of qualifiedName(key)) errs.push(fieldInvalid(`${p}.key`, key, d))
    if (!opts.allowInvalidLabelValue) {
      values.forEach((v, j) => { for (const d of labelValue(String(v))) errs.push(fieldInvalid(`${p}.values[${j}]`, v, d)) })
    }
  })
  return errs
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
