// ResourceQuota (v1). DELETE answers with the deleted object.
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'
import { ageColumn, nameColumn, quantityString } from '../_printers.js'
import { fieldInvalid, fieldRequired, type FieldError } from '../../../machinery/errors.js'
import { isStandardQuotaResource, resourceEntries, validateQuotaResourceName, validateResourceQuantityValue } from './resource-names.js'
import { BAD_SELECTOR_OPERATOR } from '../../../machinery/validation.js'

/**
 * Quota scopes (upstream standardResourceQuotaScopes plus CrossNamespacePodAffinity). VolumeAttributesClass is listed
 * as the spec lists it; it applies to claims.
 */
const SCOPES = new Set(['Terminating', 'NotTerminating', 'BestEffort', 'NotBestEffort', 'PriorityClass', 'CrossNamespacePodAffinity', 'VolumeAttributesClass'])
const POD_COMPUTE = new Set(['pods', 'cpu', 'memory', 'limits.cpu', 'limits.memory', 'requests.cpu', 'requests.memory'])
const CLAIMS = new Set(['persistentvolumeclaims', 'requests.storage'])
/** Scopes a selector may only test for existence. */
const EXISTS_ONLY = new Set(['BestEffort', 'NotBestEffort', 'Terminating', 'NotTerminating', 'CrossNamespacePodAffinity'])
const CONFLICTS: Array<[string, string]> = [['BestEffort', 'NotBestEffort'], ['Terminating', 'NotTerminating']]

/** Whether a scope can track a resource (upstream IsResourceQuotaScopeValidForResource). */
function scopeFitsResource(scope: string, resource: string): boolean {
  switch (scope) {
    case 'Terminating': case 'NotTerminating': case 'NotBestEffort': case 'PriorityClass': case 'CrossNamespacePodAffinity':
      return POD_COMPUTE.has(resource)
    case 'BestEffort': return resource === 'pods'
    case 'VolumeAttributesClass': return CLAIMS.has(resource)
    default: return true
  }
}

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])
const str = (v: unknown): string => (typeof v === 'string' ? v : '')

/** Names and amounts of one resource map (spec.hard, status.hard, status.used). */
function validateAmounts(m: unknown, field: string): FieldError[] {
  const errs: FieldError[] = []
  for (const [k, v] of resourceEntries(m)) {
    errs.push(...validateQuotaResourceName(k, `${field}[${k}]`), ...validateResourceQuantityValue(k, v, `${field}[${k}]`))
  }
  return errs
}

/** spec.scopes: known, fitting every standard hard resource, and not both halves of a pair. */
function validateScopes(spec: Record<string, any>): FieldError[] {
  const scopes = list(spec.scopes)
  if (scopes.length === 0) return []
  const errs: FieldError[] = []
  const hard = resourceEntries(spec.hard).map(([k]) => k)
  for (const scope of scopes) {
    if (!SCOPES.has(str(scope))) errs.push(fieldInvalid('spec.scopes', scopes, 'unsupported scope'))
    for (const k of hard) {
      if (isStandardQuotaResource(k) && !scopeFitsResource(str(scope), k)) errs.push(fieldInvalid('spec.scopes', scopes, 'unsupported scope applied to resource'))
    }
  }
  for (const [a, b] of CONFLICTS) if (scopes.includes(a) && scopes.includes(b)) errs.push(fieldInvalid('spec.scopes', scopes, 'conflicting scopes'))
  return errs
}

/** The selector as upstream's message prints it: its internal Go type, whose JSON field names are capitalised. */
function internalScopeSelector(sel: Record<string, any>): unknown {
  return { MatchExpressions: Array.isArray(sel.matchExpressions) ? sel.matchExpressions.map((e: any) => ({ ScopeName: str(e?.scopeName), Operator: str(e?.operator), Values: Array.isArray(e?.values) ? e.values : null })) : null }
}

/** spec.scopeSelector (upstream validateScopedResourceSelectorRequirement): field paths carry no index, as upstream's. */
function validateScopeSelector(spec: Record<string, any>): FieldError[] {
  const sel = spec.scopeSelector
  if (sel === null || typeof sel !== 'object') return []
  const errs: FieldError[] = []
  const p = 'spec.scopeSelector.matchExpressions'
  const hard = resourceEntries(spec.hard).map(([k]) => k)
  const seen = new Set<string>()
  for (const e of list(sel.matchExpressions)) {
    const r = (e !== null && typeof e === 'object' ? e : {}) as Record<string, any>
    const scope = str(r.scopeName)
    const operator = str(r.operator)
    const values = list(r.values)
    if (!SCOPES.has(scope)) errs.push(fieldInvalid(`${p}.scopeName`, scope, 'unsupported scope'))
    for (const k of hard) {
      if (isStandardQuotaResource(k) && !scopeFitsResource(scope, k)) errs.push(fieldInvalid(p, internalScopeSelector(sel), 'unsupported scope applied to resource'))
    }
    if (EXISTS_ONLY.has(scope) && operator !== 'Exists') {
      errs.push(fieldInvalid(`${p}.operator`, operator, 'must be \'Exists\' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity'))
    }
    switch (operator) {
      case 'In': case 'NotIn':
        if (values.length === 0) errs.push(fieldRequired(`${p}.values`, 'must be at least one value when `operator` is \'In\' or \'NotIn\' for scope selector'))
        break
      case 'Exists': case 'DoesNotExist':
        if (values.length !== 0) errs.push(fieldInvalid(`${p}.values`, values, 'must be no value when `operator` is \'Exist\' or \'DoesNotExist\' for scope selector'))
        break
      default:
        errs.push(fieldInvalid(`${p}.operator`, operator, BAD_SELECTOR_OPERATOR))
    }
    seen.add(scope)
  }
  // Upstream prints spec.scopes here (not the selector), null when unset.
  for (const [a, b] of CONFLICTS) if (seen.has(a) && seen.has(b)) errs.push(fieldInvalid(p, Array.isArray(spec.scopes) ? spec.scopes : null, 'conflicting scopes'))
  return errs
}

/** upstream ValidateResourceQuotaSpec. */
export function validateResourceQuotaSpec(o: Obj): FieldError[] {
  const spec = (o.spec !== null && typeof o.spec === 'object' ? o.spec : {}) as Record<string, any>
  return [...validateAmounts(spec.hard, 'spec.hard'), ...validateScopes(spec), ...validateScopeSelector(spec)]
}

/** upstream ValidateResourceQuotaUpdate: the spec, and scopes that stay the same set. */
function validateResourceQuotaUpdate(o: Obj, old: Obj): FieldError[] {
  const errs = validateResourceQuotaSpec(o)
  const next = new Set(list(o.spec?.scopes).map(String))
  const prev = new Set(list(old.spec?.scopes).map(String))
  if (next.size !== prev.size || [...next].some((s) => !prev.has(s))) errs.push(fieldInvalid('spec.scopes', Array.isArray(o.spec?.scopes) ? o.spec.scopes : null, 'field is immutable'))
  return errs
}

/** upstream ValidateResourceQuotaStatusUpdate: names and amounts of status.hard and status.used. */
function validateResourceQuotaStatus(o: Obj): FieldError[] {
  return [...validateAmounts(o.status?.hard, 'status.hard'), ...validateAmounts(o.status?.used, 'status.used')]
}

/** `resource: used/hard` for each hard limit in status, sorted by name: limits.* in one column, the rest in the other. */
function usage(o: Obj, limits: boolean): string {
  const hard = o.status?.hard
  if (hard === null || typeof hard !== 'object') return ''
  const used = o.status?.used !== null && typeof o.status?.used === 'object' ? o.status.used : {}
  return Object.keys(hard).sort()
    .filter((r) => { const p = r.split('.'); return (p.length > 1 && p[0] === 'limits') === limits })
    .map((r) => `${r}: ${quantityString(used[r])}/${quantityString(hard[r])}`)
    .join(', ')
}

export default defineResource({
  group: '', version: 'v1', kind: 'ResourceQuota', resource: 'resourcequotas', singular: 'resourcequota', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['quota'],
  subresources: ['status'],
  schemaRef: 'io.orch.api.core.v1.ResourceQuota',
  // spec and status are value structs upstream.
  zeroValues: { spec: {}, status: {} },
  strategy: {
    ...statusSplit.strategy, allowUnconditionalUpdate: true, returnDeletedObject: true, nameRule: 'subdomain',
    validate: validateResourceQuotaSpec,
    validateUpdate: validateResourceQuotaUpdate,
  },
  status: { ...statusSplit.status, validateUpdate: (o) => validateResourceQuotaStatus(o) },
  table: [
    nameColumn(),
    { name: 'Request', type: 'string', description: 'Used and hard amounts of the quota\'s resources other than limits.*.', cell: (o) => usage(o, false) },
    { name: 'Limit', type: 'string', description: 'Used and hard amounts of the quota\'s limits.* resources.', cell: (o) => usage(o, true) },
    ageColumn(),
  ],
})
