// PodDisruptionBudget (policy/v1).
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'
import { ageColumn, int, intOrStringText, nameColumn } from '../_printers.js'
import { fieldInvalid, fieldNotSupported, type FieldError } from '../../../machinery/errors.js'
import { labelSelectorHasInvalidValue, validateConditions, validateIntOrPercent, validateLabelSelector } from '../../../machinery/validation.js'

const EVICTION_POLICIES = ['AlwaysAllow', 'IfHealthyBudget']

/** The spec as upstream's message prints it: its internal Go type (capitalised names; the selector keeps its JSON names). */
function internalSpec(spec: Record<string, any>): unknown {
  return { MinAvailable: spec.minAvailable ?? null, Selector: spec.selector ?? null, MaxUnavailable: spec.maxUnavailable ?? null, UnhealthyPodEvictionPolicy: spec.unhealthyPodEvictionPolicy ?? null }
}

/** upstream ValidatePodDisruptionBudgetSpec; an update may keep selector values that are no label values. */
function validateSpec(o: Obj, allowInvalidLabelValue = false): FieldError[] {
  const spec = (o.spec !== null && typeof o.spec === 'object' ? o.spec : {}) as Record<string, any>
  const errs: FieldError[] = []
  if (spec.minAvailable != null && spec.maxUnavailable != null) errs.push(fieldInvalid('spec', internalSpec(spec), 'minAvailable and maxUnavailable cannot be both set'))
  if (spec.minAvailable != null) errs.push(...validateIntOrPercent(spec.minAvailable, 'spec.minAvailable'))
  if (spec.maxUnavailable != null) errs.push(...validateIntOrPercent(spec.maxUnavailable, 'spec.maxUnavailable'))
  errs.push(...validateLabelSelector(spec.selector, 'spec.selector', { allowInvalidLabelValue }))
  const policy = spec.unhealthyPodEvictionPolicy
  if (policy != null && !EVICTION_POLICIES.includes(policy)) errs.push(fieldNotSupported('spec.unhealthyPodEvictionPolicy', policy, EVICTION_POLICIES))
  return errs
}

/** upstream ValidatePodDisruptionBudgetStatusUpdate (policy/v1): conditions and counters that are not negative. */
function validateStatus(o: Obj): FieldError[] {
  const status = (o.status !== null && typeof o.status === 'object' ? o.status : {}) as Record<string, any>
  const errs = validateConditions(status.conditions, 'status.conditions')
  for (const f of ['disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods']) {
    const v = status[f]
    if (typeof v === 'number' && v < 0) errs.push(fieldInvalid(`status.${f}`, v, 'must be greater than or equal to 0'))
  }
  return errs
}

export default defineResource({
  group: 'policy', version: 'v1', kind: 'PodDisruptionBudget', resource: 'poddisruptionbudgets', singular: 'poddisruptionbudget', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['pdb'],
  subresources: ['status'],
  schemaRef: 'io.orch.api.policy.v1.PodDisruptionBudget',
  // value structs upstream; the four status counters have no omitempty.
  zeroValues: { spec: {}, status: { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 } },
  strategy: {
    ...statusSplit.strategy, allowUnconditionalUpdate: true, nameRule: 'subdomain', hasGeneration: true,
    validate: (o) => validateSpec(o),
    validateUpdate: (o, old) => validateSpec(o, labelSelectorHasInvalidValue(old.spec?.selector)),
  },
  status: { ...statusSplit.status, validateUpdate: (o) => validateStatus(o) },
  table: [
    nameColumn(),
    { name: 'Min Available', type: 'string', description: 'Pods that must stay available (a count or a percentage).', cell: (o) => (o.spec?.minAvailable == null ? 'N/A' : intOrStringText(o.spec.minAvailable)) },
    { name: 'Max Unavailable', type: 'string', description: 'Pods that may be unavailable at once (a count or a percentage).', cell: (o) => (o.spec?.maxUnavailable == null ? 'N/A' : intOrStringText(o.spec.maxUnavailable)) },
    { name: 'Allowed Disruptions', type: 'integer', description: 'How many pod disruptions the budget allows right now.', cell: (o) => int(o.status?.disruptionsAllowed) },
    ageColumn(),
  ],
})
