// CertificateSigningRequest (certificates.orch.io/v1, cluster-scoped).
// The requesting user's identity (spec.username, uid, groups, extra) is the creator's; the approval sub-resource
// (status.conditions only) is served by the generic update (pipeline/admission.ts).
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldForbidden, type FieldError } from '../../../machinery/errors.js'
import { ageColumn, humanDuration, nameColumn } from '../_printers.js'

/** The status conditions of `type`, in order. */
const conditionsOf = (o: Obj, type: string): unknown[] =>
  (Array.isArray(o.status?.conditions) ? o.status.conditions : []).filter((c: Obj) => c?.type === type)

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
    ...statusSplit.strategy, allowUnconditionalUpdate: true, nameRule: 'subdomain',
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
  },
  status: {
    prepareForUpdate: (o, old) => {
      statusSplit.status.prepareForUpdate(o, old)
      keepApprovalConditions(o, old)
    },
    validateUpdate: (o, old) => subresourceRules(o, old, 'status'),
  },
  approval: { validateUpdate: (o, old) => subresourceRules(o, old, 'approval') },
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
