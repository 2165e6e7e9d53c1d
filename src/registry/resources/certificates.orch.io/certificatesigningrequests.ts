// CertificateSigningRequest (certificates.orch.io/v1, cluster-scoped).
// The requesting user's identity (spec.username, uid, groups, extra) is the creator's; the approval sub-resource
// (status.conditions only) is served by the generic update (pipeline/admission.ts).
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldDuplicate, fieldForbidden, fieldInvalid, fieldNotSupported, fieldRequired, fieldTooLong, goByteSlice, type FieldError } from '../../../machinery/errors.js'
import { certificateChainError, parseCertificateRequest } from '../../../machinery/pem.js'
import { dns1123Label, dns1123Subdomain } from '../../../machinery/validation.js'
import { ageColumn, humanDuration, nameColumn } from '../_printers.js'

/** The status conditions, and those of `type`, in order. */
const conditionList = (o: Obj): Obj[] => (Array.isArray(o.status?.conditions) ? o.status.conditions : [])
const conditionsOf = (o: Obj, type: string): Obj[] => conditionList(o).filter((c) => c?.type === type)

/** Denied, Approved or Pending, then `,Failed` and `,Issued` when they apply. */
function condition(o: Obj): string {
  const has = (type: string) => conditionsOf(o, type).length > 0
  let s = has('Denied') ? 'Denied' : has('Approved') ? 'Approved' : 'Pending'
  if (has('Failed')) s += ',Failed'
  if (typeof o.status?.certificate === 'string' && o.status.certificate.length > 0) s += ',Issued'
  return s
}

/**
 * Upstream's checks of a write through /status or /approval: an Approved, Denied or Failed condition is never
 * removed; only /approval adds Approved or Denied (through /status an added one is refused, a changed one is put
 * back as stored); only /status sets the certificate, once.
 */
function subresourceRules(o: Obj, old: Obj, via: 'status' | 'approval'): FieldError[] {
  const errs: FieldError[] = []
  for (const type of ['Approved', 'Denied', 'Failed']) {
    if (conditionsOf(o, type).length < conditionsOf(old, type).length) errs.push(fieldForbidden('status.conditions', `updates may not remove a condition of type "${type}"`))
  }
  if (via === 'status') {
    for (const type of ['Approved', 'Denied']) {
      if (conditionsOf(o, type).length > conditionsOf(old, type).length) errs.push(fieldForbidden('status.conditions', `updates may not add a condition of type "${type}"`))
    }
    const cert = old.status?.certificate
    if (typeof cert === 'string' && cert !== '' && o.status?.certificate !== cert) errs.push(fieldForbidden('status.certificate', 'updates may not modify existing certificate content'))
  }
  return errs
}

// ---- upstream's validation of a request (create, and every update through any endpoint)

/** The key usages a request may ask for (upstream's KeyUsage values), sorted as upstream lists them in errors. */
const USAGES = [
  'any', 'cert sign', 'client auth', 'code signing', 'content commitment', 'crl sign', 'data encipherment', 'decipher only',
  'digital signature', 'email protection', 'encipher only', 'ipsec end system', 'ipsec tunnel', 'ipsec user', 'key agreement',
  'key encipherment', 'microsoft sgc', 'netscape sgc', 'ocsp signing', 's/mime', 'server auth', 'signing', 'timestamping',
]
const USAGE_SET = new Set(USAGES)
/** upstream's kubernetes.io/legacy-unknown, in this brand: only certificates/v1beta1 could ask for it. */
const LEGACY_SIGNER = 'orch.io/legacy-unknown'

const bytesOf = (v: unknown): Buffer | null => (typeof v === 'string' ? Buffer.from(v, 'base64') : null)
const usagesOf = (o: Obj): unknown[] => (Array.isArray(o.spec?.usages) ? o.spec.usages : [])

/** upstream's ValidateSignerName: `<DNS subdomain of two labels or more>/<path of DNS subdomains>`. */
function signerNameErrors(field: string, name: string): FieldError[] {
  if (name === '') return [fieldRequired(field, '')]
  const segments = name.split('/')
  if (segments.length !== 2) return [fieldInvalid(field, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")]
  const errs: FieldError[] = []
  const [domain, path] = segments
  if (domain.length > 253) errs.push(fieldTooLong(field, 253))
  const domainLabels = domain.split('.')
  for (const l of domainLabels) {
    const problems = dns1123Label(l)
    if (problems.length === 0) continue
    for (const p of problems) errs.push(fieldInvalid(field, domain, `validating label ${JSON.stringify(l)}: ${p}`))
    break
  }
  if (domainLabels.length < 2) errs.push(fieldInvalid(field, domain, 'should be a domain with at least two segments separated by dots'))
  for (const l of path.split('.')) {
    const problems = dns1123Subdomain(l)
    if (problems.length === 0) continue
    for (const p of problems) errs.push(fieldInvalid(field, path, `validating label ${JSON.stringify(l)}: ${p}`))
    break
  }
  if (name.length > 253 + 253 + 63 + 1 + 1) errs.push(fieldTooLong(field, 253 + 253 + 63 + 1 + 1))
  return errs
}

/** What an update may keep that a create may not: stored data written under older rules stays writable (upstream). */
interface Lenience { unknownUsages: boolean; duplicateUsages: boolean; legacySigner: boolean; duplicateTypes: boolean; emptyType: boolean; approvedAndDenied: boolean; arbitraryCertificate: boolean }

function lenienceFor(o: Obj, old: Obj | undefined): Lenience {
  if (old === undefined) return { unknownUsages: false, duplicateUsages: false, legacySigner: false, duplicateTypes: false, emptyType: false, approvedAndDenied: false, arbitraryCertificate: false }
  const usages = usagesOf(old)
  const types = conditionList(old).map((c) => c?.type)
  const cert = old.status?.certificate ?? ''
  return {
    unknownUsages: usages.some((u) => !USAGE_SET.has(u as string)),
    duplicateUsages: new Set(usages).size !== usages.length,
    legacySigner: old.spec?.signerName === LEGACY_SIGNER,
    duplicateTypes: new Set(types).size !== types.length,
    emptyType: types.some((t) => t === '' || t === undefined),
    approvedAndDenied: types.includes('Approved') && types.includes('Denied'),
    arbitraryCertificate: (o.status?.certificate ?? '') === cert || certificateChainError(bytesOf(cert) ?? Buffer.alloc(0)) !== undefined,
  }
}

/** upstream's validateCertificateSigningRequest (`old`: the stored object of an update). */
function validateRequest(o: Obj, old?: Obj): FieldError[] {
  const lenient = lenienceFor(o, old)
  const errs: FieldError[] = []
  const request = bytesOf(o.spec?.request)
  try {
    parseCertificateRequest(request ?? Buffer.alloc(0)).checkSignature()
  } catch (err) {
    errs.push(fieldInvalid('spec.request', goByteSlice(request), (err as Error).message))
  }
  const usages = usagesOf(o)
  if (usages.length === 0) errs.push(fieldRequired('spec.usages', ''))
  if (!lenient.unknownUsages) usages.forEach((u, i) => { if (!USAGE_SET.has(u as string)) errs.push(fieldNotSupported(`spec.usages[${i}]`, u, USAGES)) })
  if (!lenient.duplicateUsages) usages.forEach((u, i) => { if (usages.indexOf(u) < i) errs.push(fieldDuplicate(`spec.usages[${i}]`, u)) })
  const signer = typeof o.spec?.signerName === 'string' ? o.spec.signerName : ''
  if (!lenient.legacySigner && signer === LEGACY_SIGNER) errs.push(fieldInvalid('spec.signerName', signer, 'the legacy signerName is not allowed via this API version'))
  else errs.push(...signerNameErrors('spec.signerName', signer))
  const exp = o.spec?.expirationSeconds
  if (typeof exp === 'number' && exp < 600) errs.push(fieldInvalid('spec.expirationSeconds', exp, 'may not specify a duration less than 600 seconds (10 minutes)'))
  const seen = new Set<unknown>()
  let approved = false
  let denied = false
  conditionList(o).forEach((c, i) => {
    const at = `status.conditions[${i}]`
    const type = c?.type ?? ''
    if (!lenient.emptyType && type === '') errs.push(fieldRequired(`${at}.type`, ''))
    const allowed = type === 'Approved' || type === 'Denied' ? ['True'] : ['False', 'True', 'Unknown']
    const status = c?.status ?? ''
    if (status === '') errs.push(fieldRequired(`${at}.status`, ''))
    else if (!allowed.includes(status)) errs.push(fieldNotSupported(`${at}.status`, status, allowed))
    if (!lenient.approvedAndDenied) {
      if (type === 'Approved') { approved = true; if (denied) errs.push(fieldInvalid(`${at}.type`, type, 'Approved and Denied conditions are mutually exclusive')) }
      if (type === 'Denied') { denied = true; if (approved) errs.push(fieldInvalid(`${at}.type`, type, 'Approved and Denied conditions are mutually exclusive')) }
    }
    if (!lenient.duplicateTypes) {
      if (seen.has(type)) errs.push(fieldDuplicate(`${at}.type`, type))
      seen.add(type)
    }
  })
  if (!lenient.arbitraryCertificate) {
    const problem = certificateChainError(bytesOf(o.status?.certificate) ?? Buffer.alloc(0))
    if (problem !== undefined) errs.push(fieldInvalid('status.certificate', '<certificate data>', problem))
  }
  return errs
}

/** upstream's populateConditionTimestamps: a condition without times gets now, or the transition time it had. */
function stampConditions(o: Obj, old: Obj): void {
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z')
  for (const c of conditionList(o)) {
    if (c === null || typeof c !== 'object') continue
    if (!c.lastUpdateTime) c.lastUpdateTime = now
    if (!c.lastTransitionTime) {
      const was = conditionList(old).find((p) => p?.type === c.type && p?.status === c.status && p?.lastTransitionTime)
      c.lastTransitionTime = was?.lastTransitionTime ?? now
    }
  }
}

/** Through /status the stored instances of Approved and Denied stay as they are when their number did not change. */
function keepApprovalConditions(o: Obj, old: Obj): void {
  for (const type of ['Approved', 'Denied']) {
    const was = conditionsOf(old, type)
    const now = conditionsOf(o, type)
    if (was.length !== now.length || was.length === 0) continue
    let i = 0
    o.status.conditions = o.status.conditions.map((c: Obj) => (c?.type === type ? was[i++] : c))
  }
}

export default defineResource({
  group: 'certificates.orch.io', version: 'v1', kind: 'CertificateSigningRequest', resource: 'certificatesigningrequests', singular: 'certificatesigningrequest', scope: 'Cluster',
  verbs: ALL_VERBS,
  shortNames: ['csr'],
  subresources: ['status'],
  virtualSubresources: [{ name: 'approval', group: 'certificates.orch.io', version: 'v1', kind: 'CertificateSigningRequest', verbs: ['get', 'patch', 'update'] }],
  schemaRef: 'io.orch.api.certificates.v1.CertificateSigningRequest',
  // value structs upstream; spec.signerName has no omitempty.
  zeroValues: { spec: { signerName: '' }, status: {} },
  strategy: {
    // Any name a URL path can carry (upstream validates none: the kubelet's node-csr-<base64url digest> has capitals).
    ...statusSplit.strategy, allowUnconditionalUpdate: true, nameRule: 'path',
    // Who asked is the requesting user, whatever the body says (no one creates a pre-approved request for another).
    prepareForCreate: (o, user) => {
      statusSplit.strategy.prepareForCreate?.(o)
      const spec = o.spec !== null && typeof o.spec === 'object' ? o.spec : (o.spec = {})
      for (const k of ['username', 'uid', 'groups', 'extra']) delete spec[k]
      if (user === undefined) return
      spec.username = user.username
      if (user.uid) spec.uid = user.uid
      if (user.groups.length > 0) spec.groups = [...user.groups]
      if (user.extra && Object.keys(user.extra).length > 0) spec.extra = structuredClone(user.extra)
    },
    // Requests are immutable but through /status and /approval: the main resource keeps the stored spec and status.
    prepareForUpdate: (o, old) => {
      statusSplit.strategy.prepareForUpdate?.(o, old)
      o.spec = structuredClone(old.spec)
    },
    validate: (o) => validateRequest(o),
    validateUpdate: (o, old) => validateRequest(o, old),
  },
  status: {
    prepareForUpdate: (o, old) => {
      statusSplit.status.prepareForUpdate(o, old)
      keepApprovalConditions(o, old)
      stampConditions(o, old)
    },
    validateUpdate: (o, old) => [...validateRequest(o, old), ...subresourceRules(o, old, 'status')],
  },
  approval: {
    prepareForUpdate: stampConditions,
    validateUpdate: (o, old) => [...validateRequest(o, old), ...subresourceRules(o, old, 'approval')],
  },
  table: [
    nameColumn(),
    ageColumn(),
    { name: 'SignerName', type: 'string', description: 'The signer asked to sign the certificate.', cell: (o) => (typeof o.spec?.signerName === 'string' && o.spec.signerName !== '' ? o.spec.signerName : '<none>') },
    { name: 'Requestor', type: 'string', description: 'The user who created the request.', cell: (o) => o.spec?.username ?? '' },
    {
      name: 'RequestedDuration', type: 'string', description: 'The validity the requestor asked for.',
      cell: (o) => (typeof o.spec?.expirationSeconds === 'number' ? humanDuration(Math.trunc(o.spec.expirationSeconds) * 1000) : '<none>'),
    },
    { name: 'Condition', type: 'string', description: 'Whether the request is approved, denied, failed or issued.', cell: (o) => condition(o) },
  ],
  fieldSelectors: { 'spec.signerName': (o) => o.spec?.signerName ?? '' },
})
