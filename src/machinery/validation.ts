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

// ---- CIDRs as Go's pre-1.17 net.ParseCIDR reads them (k8s.io/utils/net ParseCIDRSloppy) ----

/** A parsed CIDR: the masked network as 16 bytes (IPv4 as IPv4-mapped), its prefix length over those 16 bytes, and the prefix length as written. */
export interface Cidr { net: Uint8Array; bits: number; maskLen: number; v4: boolean }

function parseDecimal(s: string): number | undefined {
  if (!/^[0-9]+$/.test(s)) return undefined
  const n = Number(s.length > 8 ? s.replace(/^0+(?=.)/, '') : s)
  return Number.isSafeInteger(n) && n < 0xffffff ? n : undefined
}

/** IPv4 with leading zeros allowed (read as decimal). */
function parseIPv4Sloppy(s: string): number[] | undefined {
  const parts = s.split('.')
  if (parts.length !== 4) return undefined
  const out: number[] = []
  for (const p of parts) {
    const n = parseDecimal(p)
    if (n === undefined || n > 255) return undefined
    out.push(n)
  }
  return out
}

function parseIPv6Sloppy(s: string): Uint8Array | undefined {
  const ip = new Uint8Array(16)
  let ellipsis = -1
  let i = 0
  let rest = s
  if (rest.startsWith('::')) { ellipsis = 0; rest = rest.slice(2); if (rest === '') return ip }
  while (i < 16) {
    const m = /^[0-9a-fA-F]+/.exec(rest)
    if (!m) return undefined
    // An embedded IPv4 address in the last 32 bits.
    if (rest.length > m[0].length && rest[m[0].length] === '.') {
      if (ellipsis < 0 && i !== 12) return undefined
      if (i + 4 > 16) return undefined
      const v4 = parseIPv4Sloppy(rest)
      if (!v4) return undefined
      ip.set(v4, i)
      i += 4
      rest = ''
      break
    }
    const digits = m[0].replace(/^0+(?=.)/, '')
    if (digits.length > 4) return undefined
    const n = parseInt(digits, 16)
    ip[i] = n >> 8; ip[i + 1] = n & 0xff
    i += 2
    rest = rest.slice(m[0].length)
    if (rest === '') break
    if (rest[0] !== ':' || rest.length === 1) return undefined
    rest = rest.slice(1)
    if (rest[0] === ':') {
      if (ellipsis >= 0) return undefined
      ellipsis = i
      rest = rest.slice(1)
      if (rest === '') break
    }
  }
  if (rest !== '') return undefined
  if (i < 16) {
    if (ellipsis < 0) return undefined
    const n = 16 - i
    for (let j = i - 1; j >= ellipsis; j--) ip[j + n] = ip[j]
    for (let j = ellipsis + n - 1; j >= ellipsis; j--) ip[j] = 0
  } else if (ellipsis >= 0) {
    return undefined
  }
  return ip
}

/** Go's (sloppy) ParseIP: the address as 16 bytes (IPv4 as IPv4-mapped), undefined when it is not an IP. */
export function parseIPSloppy(s: string): Uint8Array | undefined {
  const v4 = parseIPv4Sloppy(s)
  if (v4) { const b = new Uint8Array(16); b[10] = 0xff; b[11] = 0xff; b.set(v4, 12); return b }
  return s.includes(':') ? parseIPv6Sloppy(s) : undefined
}

/** Go's IP.To4() != nil: an IPv4 address, or an IPv4-mapped IPv6 one. */
export function isIPv4Bytes(ip: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (ip[i] !== 0) return false
  return ip[10] === 0xff && ip[11] === 0xff
}

/** upstream IsValidIP's text for what Go's ParseIP does not read. */
export const IP_ADDRESS_MSG = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'

/**
 * upstream IsValidIPForLegacyField while StrictIPCIDRValidation is off (its default through 1.35): anything Go's
 * ParseIP reads is accepted as written (leading zeros, IPv4-mapped, not canonical); only an unreadable one is refused.
 */
export function legacyIPErrors(field: string, v: string): FieldError[] {
  return parseIPSloppy(v) === undefined ? [fieldInvalid(field, v, IP_ADDRESS_MSG)] : []
}

/**
 * upstream ValidateNonSpecialIP (Endpoints, EndpointSlices): an address that makes sense as a destination, so not
 * unspecified, loopback, link-local or link-local multicast; an unreadable one is only said to be no IP.
 */
export function nonSpecialIPErrors(field: string, v: string): FieldError[] {
  const ip = parseIPSloppy(v)
  if (ip === undefined) return [fieldInvalid(field, v, 'must be a valid IP address')]
  const errs: FieldError[] = []
  const v4 = isIPv4Bytes(ip)
  if (v4 ? ip[12] === 0 && ip[13] === 0 && ip[14] === 0 && ip[15] === 0 : ip.every((b) => b === 0)) errs.push(fieldInvalid(field, v, `may not be unspecified (${v})`))
  if (v4 ? ip[12] === 127 : ip.slice(0, 15).every((b) => b === 0) && ip[15] === 1) errs.push(fieldInvalid(field, v, 'may not be in the loopback range (127.0.0.0/8, ::1/128)'))
  if (v4 ? ip[12] === 169 && ip[13] === 254 : ip[0] === 0xfe && (ip[1] & 0xc0) === 0x80) errs.push(fieldInvalid(field, v, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)'))
  if (v4 ? ip[12] === 224 && ip[13] === 0 && ip[14] === 0 : ip[0] === 0xff && (ip[1] & 0x0f) === 0x02) errs.push(fieldInvalid(field, v, 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'))
  return errs
}

/** Go's (sloppy) ParseCIDR: undefined when the value is not a CIDR. */
export function parseCidrSloppy(s: string): Cidr | undefined {
  const slash = s.indexOf('/')
  if (slash < 0) return undefined
  const addr = s.slice(0, slash)
  const mask = parseDecimal(s.slice(slash + 1))
  let bytes: Uint8Array | undefined
  let v4Notation = false
  const v4 = parseIPv4Sloppy(addr)
  if (v4) { bytes = new Uint8Array(16); bytes[10] = 0xff; bytes[11] = 0xff; bytes.set(v4, 12); v4Notation = true }
  else bytes = parseIPv6Sloppy(addr)
  if (!bytes || mask === undefined || mask > (v4Notation ? 32 : 128)) return undefined
  const bits = v4Notation ? mask + 96 : mask
  const net = new Uint8Array(16)
  for (let b = 0; b < 16; b++) {
    const keep = Math.max(0, Math.min(8, bits - b * 8))
    net[b] = bytes[b] & ((0xff << (8 - keep)) & 0xff)
  }
  const isV4 = net.slice(0, 10).every((x) => x === 0) && net[10] === 0xff && net[11] === 0xff
  return { net, bits, maskLen: mask, v4: isV4 }
}

/** Go's IPNet.Contains(ip) for a network and another CIDR's network address (families must agree). */
export function cidrContains(outer: Cidr, inner: Cidr): boolean {
  if (outer.v4 !== inner.v4) return false
  for (let b = 0; b < 16; b++) {
    const keep = Math.max(0, Math.min(8, outer.bits - b * 8))
    const m = (0xff << (8 - keep)) & 0xff
    if ((outer.net[b] & m) !== (inner.net[b] & m)) return false
  }
  return true
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

/** IPv4 dotted quad without leading zeros (what Go's netip accepts). */
export function isIPv4(v: string): boolean {
  const parts = v.split('.')
  return parts.length === 4 && parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255)
}

/** IPv6 in any of its textual forms (an embedded IPv4 tail allowed, no zone). */
export function isIPv6(v: string): boolean {
  if (v.includes('%') || !v.includes(':')) return false
  let head = v
  let groupsFromV4 = 0
  const lastColon = v.lastIndexOf(':')
  if (v.slice(lastColon + 1).includes('.')) {
    if (!isIPv4(v.slice(lastColon + 1))) return false
    head = v.slice(0, lastColon + 1) + '0:0'
    groupsFromV4 = 0
  }
  const dbl = head.split('::')
  if (dbl.length > 2) return false
  const group = /^[0-9a-fA-F]{1,4}$/
  const side = (s: string) => (s === '' ? [] : s.split(':'))
  const left = side(dbl[0])
  const right = dbl.length === 2 ? side(dbl[1]) : []
  if (![...left, ...right].every((g) => group.test(g))) return false
  const n = left.length + right.length + groupsFromV4
  return dbl.length === 2 ? n < 8 : n === 8
}

export function isIP(v: string): boolean { return isIPv4(v) || isIPv6(v) }

/** A CIDR: an address of either family and a prefix length within its size. */
export function isCIDR(v: string): boolean {
  const slash = v.indexOf('/')
  if (slash < 0) return false
  const ip = v.slice(0, slash)
  const bits = v.slice(slash + 1)
  if (!/^(0|[1-9]\d*)$/.test(bits)) return false
  if (isIPv4(ip)) return Number(bits) <= 32
  if (isIPv6(ip)) return Number(bits) <= 128
  return false
}
