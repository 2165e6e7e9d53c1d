// CSIStorageCapacity (storage.orch.io/v1): upstream's validation; the inputs of the capacity query are immutable.
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldInvalid, goQuote, goStringSliceOrNil, GoValue } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { canonicalQuantity, isNegative, parseQuantity } from '../../../machinery/quantity.js'
import { dns1123Subdomain, labelSelectorHasInvalidValue, validateLabelSelector } from '../../../machinery/validation.js'

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)
const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])
const str = (v: unknown): string => (typeof v === 'string' ? v : '')

/**
 * upstream ValidateCSIStorageCapacity: a valid nodeTopology selector (label values that are invalid only when the
 * stored object already had such), a storage class name that is a subdomain, and a capacity that is not negative.
 */
function validateCapacity(o: Obj, allowInvalidLabelValue = false): FieldError[] {
  const errs = validateLabelSelector(o.nodeTopology, 'nodeTopology', { allowInvalidLabelValue })
  const className = str(o.storageClassName)
  for (const d of dns1123Subdomain(className)) errs.push(fieldInvalid('storageClassName', className, d))
  const capacity = o.capacity
  if ((typeof capacity === 'string' || typeof capacity === 'number') && parseQuantity(capacity) !== undefined && isNegative(capacity)) {
    errs.push(fieldInvalid('capacity', canonicalQuantity(capacity) ?? String(capacity), 'must be greater than or equal to 0'))
  }
  return errs
}

/** A selector as upstream's semantic equality sees it: a missing map or list is the same as an empty one. */
function selectorKey(sel: unknown): string {
  if (!isObj(sel)) return 'nil'
  const labels: Obj = isObj(sel.matchLabels) ? sel.matchLabels : {}
  const exprs = listOf(sel.matchExpressions).map((e) => (isObj(e) ? [e.key ?? '', e.operator ?? '', listOf(e.values)] : ['', '', []]))
  return JSON.stringify([Object.keys(labels).sort().map((k) => [k, labels[k]]), exprs])
}

/** Go's %#v of a metav1.LabelSelector (what an immutable-field error on a selector pointer shows); null when unset. */
function selectorValue(sel: unknown): GoValue | null {
  if (!isObj(sel)) return null
  const labels = isObj(sel.matchLabels)
    ? `map[string]string{${Object.keys(sel.matchLabels).sort().map((k) => `${goQuote(k)}:${goQuote(str(sel.matchLabels[k]))}`).join(', ')}}`
    : 'map[string]string(nil)'
  const exprs = Array.isArray(sel.matchExpressions)
    ? `[]v1.LabelSelectorRequirement{${sel.matchExpressions.map((e: unknown) => {
      const r = isObj(e) ? e : {}
      return `v1.LabelSelectorRequirement{Key:${goQuote(str(r.key))}, Operator:${goQuote(str(r.operator))}, Values:${goStringSliceOrNil('string', r.values).text}}`
    }).join(', ')}}`
    : '[]v1.LabelSelectorRequirement(nil)'
  return new GoValue(`v1.LabelSelector{MatchLabels:${labels}, MatchExpressions:${exprs}}`)
}

/** ValidateCSIStorageCapacityUpdate: nodeTopology and storageClassName, the inputs of GetCapacity, are immutable. */
function validateCapacityUpdate(o: Obj, old: Obj): FieldError[] {
  const errs = validateCapacity(o, labelSelectorHasInvalidValue(old.nodeTopology))
  if (selectorKey(o.nodeTopology) !== selectorKey(old.nodeTopology)) errs.push(fieldInvalid('nodeTopology', selectorValue(o.nodeTopology), 'field is immutable'))
  if (str(o.storageClassName) !== str(old.storageClassName)) errs.push(fieldInvalid('storageClassName', str(o.storageClassName), 'field is immutable'))
  return errs
}

export default defineResource({
  group: 'storage.orch.io', version: 'v1', kind: 'CSIStorageCapacity', resource: 'csistoragecapacities', singular: 'csistoragecapacity', scope: 'Namespaced',
  verbs: ALL_VERBS,
  schemaRef: 'io.orch.api.storage.v1.CSIStorageCapacity',
  // storageClassName has no omitempty upstream.
  zeroValues: { storageClassName: '' },
  strategy: {
    validate: (o) => validateCapacity(o),
    validateUpdate: validateCapacityUpdate,
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
  },
})
