// HorizontalPodAutoscaler (autoscaling/v2).
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj, TableColumn } from '../../define.js'
import { fieldForbidden, fieldInvalid, fieldInvalidPrinted, fieldNotSupported, fieldRequired } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { dns1123Label, kindAndNameErrors, pathSegmentName } from '../../../machinery/validation.js'
import { ageColumn, int, nameColumn, quantityPtrString } from '../_printers.js'
import { isPositive } from '../../../machinery/quantity.js'

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** GenerateHPAScaleUpRules / GenerateHPAScaleDownRules: fill what the client left out. */
function scaleRules(rules: unknown, window: number, policies: Obj[]): Obj {
  const r: Obj = isObj(rules) ? rules : {}
  r.stabilizationWindowSeconds ??= window
  r.selectPolicy ??= 'Max'
  r.policies ??= policies
  return r
}

/** SetDefaults_HorizontalPodAutoscaler (autoscaling/v2). */
function defaultHPA(o: Obj): void {
  const spec = o.spec
  if (!isObj(spec)) return
  spec.minReplicas ??= 1
  if (!Array.isArray(spec.metrics) || spec.metrics.length === 0) {
    spec.metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }]
  }
  if (isObj(spec.behavior)) {
    spec.behavior.scaleUp = scaleRules(spec.behavior.scaleUp, 0, [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }])
    spec.behavior.scaleDown = scaleRules(spec.behavior.scaleDown, 300, [{ type: 'Percent', value: 100, periodSeconds: 15 }])
  }
}

// ---- validation (upstream pkg/apis/autoscaling/validation) ----

const MAX_PERIOD_SECONDS = 1800
const MAX_STABILIZATION_WINDOW_SECONDS = 3600
const METRIC_TYPES = ['ContainerResource', 'External', 'Object', 'Pods', 'Resource']
const SOURCE_FIELDS: Record<string, string> = { Object: 'object', Pods: 'pods', Resource: 'resource', External: 'external', ContainerResource: 'containerResource' }
const present = (v: unknown): boolean => v !== undefined && v !== null
const str = (v: unknown): string => (typeof v === 'string' ? v : '')

/** A Quantity's value as upstream prints it in a cause (its String()). */
function quantityCause(field: string, q: unknown, detail: string): FieldError {
  return fieldInvalidPrinted(field, String(q), detail)
}

/** A quantity field's value above zero (a value of the wrong type is not). */
function positiveQuantity(v: unknown): boolean { return (typeof v === 'string' || typeof v === 'number') && isPositive(v) }

function crossVersionRef(ref: unknown, path: string): FieldError[] {
  return kindAndNameErrors(isObj(ref) ? ref : {}, path)
}

function metricTarget(t: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  if (str(t.type) === '') errs.push(fieldRequired(`${path}.type`, 'must specify a metric target type'))
  if (!['Utilization', 'Value', 'AverageValue'].includes(t.type)) errs.push(fieldInvalid(`${path}.type`, t.type ?? '', 'must be either Utilization, Value, or AverageValue'))
  for (const key of ['value', 'averageValue']) {
    if (present(t[key]) && !positiveQuantity(t[key])) errs.push(quantityCause(`${path}.${key}`, t[key], 'must be positive'))
  }
  if (present(t.averageUtilization) && t.averageUtilization < 1) errs.push(fieldInvalid(`${path}.averageUtilization`, t.averageUtilization, 'must be greater than 0'))
  return errs
}

function metricIdentifier(m: unknown, path: string): FieldError[] {
  const name = str(isObj(m) ? m.name : undefined)
  if (name === '') return [fieldRequired(`${path}.name`, 'must specify a metric name')]
  return pathSegmentName(name).map((d) => fieldInvalid(`${path}.name`, name, d))
}

function metricSource(key: string, src: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  const target: Obj = isObj(src.target) ? src.target : {}
  const tp = `${path}.target`
  switch (key) {
    case 'object':
      errs.push(...crossVersionRef(src.describedObject, `${path}.describedObject`), ...metricIdentifier(src.metric, `${path}.metric`), ...metricTarget(target, tp))
      if (!present(target.value) && !present(target.averageValue)) errs.push(fieldRequired(`${tp}.averageValue`, 'must set either a target value or averageValue'))
      break
    case 'external':
      errs.push(...metricIdentifier(src.metric, `${path}.metric`), ...metricTarget(target, tp))
      if (!present(target.value) && !present(target.averageValue)) errs.push(fieldRequired(`${tp}.averageValue`, 'must set either a target value for metric or a per-pod target'))
      if (present(target.value) && present(target.averageValue)) errs.push(fieldForbidden(`${tp}.value`, 'may not set both a target value for metric and a per-pod target'))
      break
    case 'pods':
      errs.push(...metricIdentifier(src.metric, `${path}.metric`), ...metricTarget(target, tp))
      if (!present(target.averageValue)) errs.push(fieldRequired(`${tp}.averageValue`, 'must specify a positive target averageValue'))
      break
    case 'resource':
    case 'containerResource':
      if (str(src.name) === '') errs.push(fieldRequired(`${path}.name`, 'must specify a resource name'))
      if (key === 'containerResource') {
        const c = str(src.container)
        if (c === '') errs.push(fieldRequired(`${path}.container`, 'must specify a container'))
        else for (const d of dns1123Label(c)) errs.push(fieldInvalid(`${path}.container`, c, d))
      }
      errs.push(...metricTarget(target, tp))
      if (!present(target.averageUtilization) && !present(target.averageValue)) errs.push(fieldRequired(`${tp}.averageUtilization`, 'must set either a target raw value or a target utilization'))
      if (present(target.averageUtilization) && present(target.averageValue)) errs.push(fieldForbidden(`${tp}.averageValue`, 'may not set both a target raw value and a target utilization'))
      break
  }
  return errs
}

function metricSpec(m: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  const type = str(m.type)
  if (type === '') errs.push(fieldRequired(`${path}.type`, 'must specify a metric source type'))
  if (!METRIC_TYPES.includes(type)) errs.push(fieldNotSupported(`${path}.type`, type, METRIC_TYPES))
  // Only the first source present (in upstream's order) is looked into.
  const found: string[] = []
  for (const key of ['object', 'external', 'pods', 'resource', 'containerResource']) {
    if (!present(m[key])) continue
    found.push(key)
    if (found.length === 1) errs.push(...metricSource(key, isObj(m[key]) ? m[key] : {}, `${path}.${key}`))
  }
  const expected = SOURCE_FIELDS[type]
  if (expected === undefined) errs.push(fieldNotSupported(`${path}.type`, type, METRIC_TYPES))
  else if (!present(m[expected])) errs.push(fieldRequired(`${path}.${expected}`, 'must populate information for the given metric source'))
  if (found.length !== 1) for (const key of found.filter((k) => k !== expected).sort()) errs.push(fieldForbidden(`${path}.${key}`, 'must populate the given metric source only'))
  return errs
}

function scalingRules(rules: unknown, path: string): FieldError[] {
  if (!isObj(rules)) return []
  const errs: FieldError[] = []
  const w = rules.stabilizationWindowSeconds
  if (present(w) && w < 0) errs.push(fieldInvalid(`${path}.stabilizationWindowSeconds`, w, 'must be greater than or equal to zero'))
  if (present(w) && w > MAX_STABILIZATION_WINDOW_SECONDS) errs.push(fieldInvalid(`${path}.stabilizationWindowSeconds`, w, `must be less than or equal to ${MAX_STABILIZATION_WINDOW_SECONDS}`))
  if (present(rules.selectPolicy) && !['Disabled', 'Max', 'Min'].includes(rules.selectPolicy)) errs.push(fieldNotSupported(`${path}.selectPolicy`, rules.selectPolicy, ['Disabled', 'Max', 'Min']))
  const policies: unknown[] = Array.isArray(rules.policies) ? rules.policies : []
  if (policies.length === 0) errs.push(fieldRequired(`${path}.policies`, 'must specify at least one Policy'))
  policies.forEach((p, i) => {
    const pol: Obj = isObj(p) ? p : {}
    const pp = `${path}.policies[${i}]`
    if (pol.type !== 'Pods' && pol.type !== 'Percent') errs.push(fieldNotSupported(`${pp}.type`, pol.type ?? '', ['Percent', 'Pods']))
    const value = pol.value ?? 0
    if (!(value > 0)) errs.push(fieldInvalid(`${pp}.value`, value, 'must be greater than zero'))
    const period = pol.periodSeconds ?? 0
    if (!(period > 0)) errs.push(fieldInvalid(`${pp}.periodSeconds`, period, 'must be greater than zero'))
    if (period > MAX_PERIOD_SECONDS) errs.push(fieldInvalid(`${pp}.periodSeconds`, period, `must be less than or equal to ${MAX_PERIOD_SECONDS}`))
  })
  return errs
}

/**
 * validateHorizontalPodAutoscalerSpec. `minLower` is 1: the HPAScaleToZero gate (alpha) is not served, so 0 is only
 * kept by an autoscaler that already has it (upstream's update rule).
 */
function validateHPA(o: Obj, minLower: number): FieldError[] {
  const errs: FieldError[] = []
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  const min = spec.minReplicas
  const max = spec.maxReplicas ?? 0
  if (present(min) && min < minLower) errs.push(fieldInvalid('spec.minReplicas', min, `must be greater than or equal to ${minLower}`))
  if (max < 1) errs.push(fieldInvalid('spec.maxReplicas', max, 'must be greater than 0'))
  if (present(min) && max < min) errs.push(fieldInvalid('spec.maxReplicas', max, 'must be greater than or equal to `minReplicas`'))
  errs.push(...crossVersionRef(spec.scaleTargetRef, 'spec.scaleTargetRef'))
  const metrics: unknown[] = Array.isArray(spec.metrics) ? spec.metrics : []
  metrics.forEach((m, i) => errs.push(...metricSpec(isObj(m) ? m : {}, `spec.metrics[${i}]`)))
  if (min === 0 && !metrics.some((m) => isObj(m) && (m.type === 'Object' || m.type === 'External'))) {
    errs.push(fieldForbidden('spec.metrics', 'must specify at least one Object or External metric to support scaling to zero replicas'))
  }
  if (isObj(spec.behavior)) errs.push(...scalingRules(spec.behavior.scaleUp, 'spec.behavior.scaleUp'), ...scalingRules(spec.behavior.scaleDown, 'spec.behavior.scaleDown'))
  return errs
}

/** One metric as `current/target`: averages get `(avg)` for object and external metrics, resources are named. */
function metricText(spec: Obj, status: Obj | undefined): string {
  const pct = (n: unknown) => `${int(n)}%`
  const src = (key: string): Obj => (isObj(spec[key]) ? spec[key] : {})
  const cur = (key: string): Obj | undefined => (status !== undefined && isObj(status[key]) ? status[key] : undefined)
  switch (spec.type) {
    case 'External':
    case 'Object': {
      const key = spec.type === 'External' ? 'external' : 'object'
      const target: Obj = isObj(src(key).target) ? src(key).target : {}
      const c = cur(key)
      if (target.averageValue != null) {
        const current = c !== undefined && c.current?.averageValue != null ? quantityPtrString(c.current.averageValue) : '<unknown>'
        return `${current}/${quantityPtrString(target.averageValue)} (avg)`
      }
      const current = c !== undefined ? quantityPtrString(c.current?.value) : '<unknown>'
      return `${current}/${quantityPtrString(target.value)}`
    }
    case 'Pods': {
      const c = cur('pods')
      const current = c !== undefined ? quantityPtrString(c.current?.averageValue) : '<unknown>'
      return `${current}/${quantityPtrString(src('pods').target?.averageValue)}`
    }
    case 'Resource':
    case 'ContainerResource': {
      const key = spec.type === 'Resource' ? 'resource' : 'containerResource'
      const s = src(key)
      const target: Obj = isObj(s.target) ? s.target : {}
      const c = cur(key)
      if (target.averageValue != null) {
        const current = c !== undefined ? quantityPtrString(c.current?.averageValue) : '<unknown>'
        return `${s.name ?? ''}: ${current}/${quantityPtrString(target.averageValue)}`
      }
      const current = c !== undefined && c.current?.averageUtilization != null ? pct(c.current.averageUtilization) : '<unknown>'
      const goal = target.averageUtilization != null ? pct(target.averageUtilization) : '<auto>'
      return `${s.name ?? ''}: ${current}/${goal}`
    }
  }
  return '<unknown type>'
}

/** The first two metrics with their current values (status.currentMetrics, by position) and `+ N more...`. */
function targets(o: Obj): string {
  const specs: unknown[] = Array.isArray(o.spec?.metrics) ? o.spec.metrics : []
  if (specs.length === 0) return '<none>'
  const statuses: unknown[] = Array.isArray(o.status?.currentMetrics) ? o.status.currentMetrics : []
  const list = specs.map((m, i) => metricText(isObj(m) ? m : {}, isObj(statuses[i]) ? statuses[i] as Obj : undefined))
  const max = 2
  return list.length > max ? `${list.slice(0, max).join(', ')} + ${list.length - max} more...` : list.join(', ')
}

/** The columns of `kubectl get hpa` (autoscaling/v1 shows its objects through these, converted to v2). */
export const hpaTable: TableColumn[] = [
  nameColumn(),
  { name: 'Reference', type: 'string', description: 'The scaled object (Kind/name).', cell: (o) => `${o.spec?.scaleTargetRef?.kind ?? ''}/${o.spec?.scaleTargetRef?.name ?? ''}` },
  { name: 'Targets', type: 'string', description: 'Current and target values of the metrics.', cell: (o) => targets(o) },
  { name: 'MinPods', type: 'string', description: 'The fewest replicas the autoscaler keeps.', cell: (o) => (o.spec?.minReplicas == null ? '<unset>' : String(int(o.spec.minReplicas))) },
  { name: 'MaxPods', type: 'string', description: 'The most replicas the autoscaler scales to.', cell: (o) => int(o.spec?.maxReplicas) },
  { name: 'Replicas', type: 'string', description: 'The replicas the target has now.', cell: (o) => int(o.status?.currentReplicas) },
  ageColumn(),
]

export default defineResource({
  group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler', resource: 'horizontalpodautoscalers', singular: 'horizontalpodautoscaler', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['hpa'],
  categories: ['all'],
  subresources: ['status'],
  schemaRef: 'io.orch.api.autoscaling.v2.HorizontalPodAutoscaler',
  // value structs upstream; spec.maxReplicas, scaleTargetRef's kind and name, status.desiredReplicas have no omitempty.
  zeroValues: { spec: { scaleTargetRef: { kind: '', name: '' }, maxReplicas: 0 }, status: { desiredReplicas: 0 } },
  strategy: {
    ...statusSplit.strategy,
    default: defaultHPA,
    validate: (o) => validateHPA(o, 1),
    validateUpdate: (o, old) => validateHPA(o, old.spec?.minReplicas === 0 ? 0 : 1),
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
    hasGeneration: true,
  },
  status: statusSplit.status,
  table: hpaTable,
})
