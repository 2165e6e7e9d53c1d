// LimitRange (v1).
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldDuplicate, fieldForbidden, fieldInvalid, fieldRequired, type FieldError } from '../../../machinery/errors.js'
import { qualifiedName } from '../../../machinery/validation.js'
import { compareQuantities, parseQuantity, scaledValue, type Quantity } from '../../../machinery/quantity.js'
import { isOvercommitAllowed, quantityText, resourceEntries, validateContainerResourceName, validateResourceName } from './resource-names.js'

const LIMIT_TYPES = new Set(['Pod', 'Container', 'PersistentVolumeClaim'])
/** (2^63-1)/1000: beyond it upstream compares whole values instead of milli-values. */
const MAX_MILLI_VALUE = 9223372036854775n

/** A qualified name; a bare one must be a standard limit type (upstream validateLimitRangeTypeName). */
function validateLimitType(type: string, field: string): FieldError[] {
  const errs = qualifiedName(type).map((d) => fieldInvalid(field, type, d))
  if (errs.length > 0) return errs
  if (!type.includes('/') && !LIMIT_TYPES.has(type)) return [fieldInvalid(field, type, 'must be a standard limit type or fully qualified')]
  return []
}

function validateLimitResourceName(type: string, name: string, field: string): FieldError[] {
  return type === 'Pod' || type === 'Container' ? validateContainerResourceName(name, field) : validateResourceName(name, field)
}

/** Go's %f of a float64. */
function goFloat(x: number): string {
  if (Number.isNaN(x)) return 'NaN'
  if (!Number.isFinite(x)) return x > 0 ? '+Inf' : '-Inf'
  return x.toFixed(6)
}

/** upstream ValidateLimitRange (it does not check signs of the amounts). */
export function validateLimitRange(o: Obj): FieldError[] {
  const errs: FieldError[] = []
  const limits = Array.isArray(o.spec?.limits) ? o.spec.limits : []
  const types = new Set<string>()
  limits.forEach((item: unknown, i: number) => {
    const p = `spec.limits[${i}]`
    const limit = (item !== null && typeof item === 'object' ? item : {}) as Record<string, any>
    const type = typeof limit.type === 'string' ? limit.type : ''
    errs.push(...validateLimitType(type, `${p}.type`))
    if (types.has(type)) errs.push(fieldDuplicate(`${p}.type`, type))
    types.add(type)

    const keys = new Set<string>()
    const bags: Record<'max' | 'min' | 'default' | 'defaultRequest' | 'maxLimitRequestRatio', Map<string, { raw: unknown; q: Quantity | undefined }>> = {
      max: new Map(), min: new Map(), default: new Map(), defaultRequest: new Map(), maxLimitRequestRatio: new Map(),
    }
    const collect = (bag: keyof typeof bags) => {
      for (const [k, v] of resourceEntries(limit[bag])) {
        errs.push(...validateLimitResourceName(type, k, `${p}.${bag}[${k}]`))
        keys.add(k)
        bags[bag].set(k, { raw: v, q: typeof v === 'string' || typeof v === 'number' ? parseQuantity(typeof v === 'string' ? v.trim() : v) : undefined })
      }
    }
    collect('max')
    collect('min')
    if (type === 'Pod') {
      if (resourceEntries(limit.default).length > 0) errs.push(fieldForbidden(`${p}.default`, 'may not be specified when `type` is \'Pod\''))
      if (resourceEntries(limit.defaultRequest).length > 0) errs.push(fieldForbidden(`${p}.defaultRequest`, 'may not be specified when `type` is \'Pod\''))
    } else {
      collect('default')
      collect('defaultRequest')
    }
    if (type === 'PersistentVolumeClaim' && !bags.min.has('storage') && !bags.max.has('storage')) {
      // Upstream names the item's `limits` child here, a field that does not exist.
      errs.push(fieldRequired(`${p}.limits`, 'either minimum or maximum storage value is required, but neither was provided'))
    }
    collect('maxLimitRequestRatio')

    for (const k of [...keys].sort()) {
      const get = (bag: keyof typeof bags) => bags[bag].get(k)?.q
      const min = get('min')
      const max = get('max')
      const def = get('default')
      const req = get('defaultRequest')
      const ratio = get('maxLimitRequestRatio')
      const raw = (bag: keyof typeof bags) => quantityText(bags[bag].get(k)?.raw)
      const tx = { min: raw('min'), max: raw('max'), def: raw('default'), req: raw('defaultRequest'), ratio: raw('maxLimitRequestRatio') }
      if (min && max && compareQuantities(min, max) > 0) errs.push(fieldInvalid(`${p}.min[${k}]`, tx.min, `min value ${tx.min} is greater than max value ${tx.max}`))
      if (req && min && compareQuantities(min, req) > 0) errs.push(fieldInvalid(`${p}.defaultRequest[${k}]`, tx.req, `min value ${tx.min} is greater than default request value ${tx.req}`))
      if (req && max && compareQuantities(req, max) > 0) errs.push(fieldInvalid(`${p}.defaultRequest[${k}]`, tx.req, `default request value ${tx.req} is greater than max value ${tx.max}`))
      if (req && def && compareQuantities(req, def) > 0) errs.push(fieldInvalid(`${p}.defaultRequest[${k}]`, tx.req, `default request value ${tx.req} is greater than default limit value ${tx.def}`))
      // Upstream's value here is min (for default) and max (for default above max), as written.
      if (def && min && compareQuantities(min, def) > 0) errs.push(fieldInvalid(`${p}.default[${k}]`, tx.min, `min value ${tx.min} is greater than default value ${tx.def}`))
      if (def && max && compareQuantities(def, max) > 0) errs.push(fieldInvalid(`${p}.default[${k}]`, tx.max, `default value ${tx.def} is greater than max value ${tx.max}`))
      if (ratio && compareQuantities(ratio, '1') < 0) errs.push(fieldInvalid(`${p}.maxLimitRequestRatio[${k}]`, tx.ratio, `ratio ${tx.ratio} is less than 1`))
      if (ratio && min && max) {
        let ratioValue = Number(scaledValue(ratio, 0))
        let minValue = scaledValue(min, 0)
        let maxValue = scaledValue(max, 0)
        if (scaledValue(ratio, 0) < MAX_MILLI_VALUE && minValue < MAX_MILLI_VALUE && maxValue < MAX_MILLI_VALUE) {
          ratioValue = Number(scaledValue(ratio, -3)) / 1000
          minValue = scaledValue(min, -3)
          maxValue = scaledValue(max, -3)
        }
        const limit = Number(maxValue) / Number(minValue)
        if (ratioValue > limit) errs.push(fieldInvalid(`${p}.maxLimitRequestRatio[${k}]`, tx.ratio, `ratio ${tx.ratio} is greater than max/min = ${goFloat(limit)}`))
      }
      if (!isOvercommitAllowed(k) && def && req && compareQuantities(def, req) !== 0) {
        errs.push(fieldInvalid(`${p}.defaultRequest[${k}]`, tx.req, `default value ${tx.def} must equal to defaultRequest value ${tx.req} in ${k}`))
      }
    }
  })
  return errs
}

const isMap = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/**
 * upstream SetDefaults_LimitRangeItem: a Container item's default limit is its max where unset, and its default
 * request the default limit, else the min, where unset.
 */
export function defaultLimitRange(o: Obj): void {
  for (const it of Array.isArray(o.spec?.limits) ? o.spec.limits : []) {
    if (!isMap(it) || it.type !== 'Container') continue
    const def: Record<string, unknown> = isMap(it.default) ? { ...it.default } : {}
    const req: Record<string, unknown> = isMap(it.defaultRequest) ? { ...it.defaultRequest } : {}
    if (isMap(it.max)) for (const [k, v] of Object.entries(it.max)) if (!(k in def)) def[k] = v
    for (const [k, v] of Object.entries(def)) if (!(k in req)) req[k] = v
    if (isMap(it.min)) for (const [k, v] of Object.entries(it.min)) if (!(k in req)) req[k] = v
    if (Object.keys(def).length > 0) it.default = def
    if (Object.keys(req).length > 0) it.defaultRequest = req
  }
}

export default defineResource({
  group: '', version: 'v1', kind: 'LimitRange', resource: 'limitranges', singular: 'limitrange', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['limits'],
  schemaRef: 'io.orch.api.core.v1.LimitRange',
  // spec is a value struct upstream.
  zeroValues: { spec: {} },
  strategy: { allowUnconditionalUpdate: true, nameRule: 'subdomain', default: defaultLimitRange, validate: validateLimitRange, validateUpdate: (o) => validateLimitRange(o) },
})
