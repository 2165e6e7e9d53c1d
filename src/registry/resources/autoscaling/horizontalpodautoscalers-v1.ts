// HorizontalPodAutoscaler (autoscaling/v1): the autoscaling/v2 objects, converted as upstream's autoscaling/v1 conversion.
//
// v1 knows one target, spec.targetCPUUtilizationPercentage: the first cpu Resource metric's utilization target. What
// v1 cannot express travels in annotations of the v1 object, so that a v1 client's read-modify-write keeps it (upstream
// `autoscaling.alpha.kubernetes.io/*`, here `autoscaling.alpha.orch.io/*`): the other metrics and every current metric
// in the autoscaling/v1 MetricSpec and MetricStatus shapes (the v2beta1 field names), the behavior and the conditions.
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'
import { badRequest } from '../../../machinery/errors.js'
import { hpaTable } from './horizontalpodautoscalers.js'

export const METRICS_ANNOTATION = 'autoscaling.alpha.orch.io/metrics'
export const CURRENT_METRICS_ANNOTATION = 'autoscaling.alpha.orch.io/current-metrics'
export const BEHAVIOR_ANNOTATION = 'autoscaling.alpha.orch.io/behavior'
export const CONDITIONS_ANNOTATION = 'autoscaling.alpha.orch.io/conditions'
const ROUND_TRIP = [METRICS_ANNOTATION, CURRENT_METRICS_ANNOTATION, BEHAVIOR_ANNOTATION, CONDITIONS_ANNOTATION]

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }
const objOf = (v: unknown): Obj => (isObj(v) ? v : {})

/** An object of the given entries in their order, those undefined left out (Go's omitempty of pointers). */
function ordered(entries: Array<[string, unknown]>): Obj {
  const o: Obj = {}
  for (const [k, v] of entries) if (v !== undefined) o[k] = v
  return o
}

const isCpuResource = (m: Obj): boolean => m.type === 'Resource' && isObj(m.resource) && m.resource.name === 'cpu'

// ---- metric shapes: v2 (stored) <-> the autoscaling/v1 annotation shapes ----

/**
 * A v2 metric spec (`p` target) or status (`p` current) in the autoscaling/v1 annotation shape, whose names carry the
 * prefix (targetValue, currentAverageUtilization, ...).
 */
function metricToV1(m: Obj, p: 'target' | 'current'): Obj {
  const out: Obj = { type: m.type }
  const v = (src: Obj): Obj => objOf(src[p])
  if (isObj(m.object)) {
    const s = m.object
    out.object = ordered([['target', s.describedObject], ['metricName', objOf(s.metric).name], [`${p}Value`, v(s).value], ['selector', objOf(s.metric).selector], ['averageValue', v(s).averageValue]])
  }
  if (isObj(m.pods)) {
    const s = m.pods
    out.pods = ordered([['metricName', objOf(s.metric).name], [`${p}AverageValue`, v(s).averageValue], ['selector', objOf(s.metric).selector]])
  }
  if (isObj(m.resource)) {
    const s = m.resource
    out.resource = ordered([['name', s.name], [`${p}AverageUtilization`, v(s).averageUtilization], [`${p}AverageValue`, v(s).averageValue]])
  }
  if (isObj(m.containerResource)) {
    const s = m.containerResource
    out.containerResource = ordered([['name', s.name], [`${p}AverageUtilization`, v(s).averageUtilization], [`${p}AverageValue`, v(s).averageValue], ['container', s.container]])
  }
  if (isObj(m.external)) {
    const s = m.external
    out.external = ordered([['metricName', objOf(s.metric).name], ['metricSelector', objOf(s.metric).selector], [`${p}Value`, v(s).value], [`${p}AverageValue`, v(s).averageValue]])
  }
  return out
}

const metricSpecToV1 = (m: Obj): Obj => metricToV1(m, 'target')

function metric(name: unknown, selector: unknown): Obj { return ordered([['name', name], ['selector', selector]]) }

/** A value target: AverageValue when a per-pod value is given, else Value (upstream's v1 conversion). */
function valueTarget(value: unknown, average: unknown): Obj {
  return ordered([['type', average !== undefined ? 'AverageValue' : 'Value'], ['value', value], ['averageValue', average]])
}

function utilizationTarget(utilization: unknown, average: unknown): Obj {
  return utilization !== undefined ? { type: 'Utilization', averageUtilization: utilization } : ordered([['type', 'AverageValue'], ['averageValue', average]])
}

function metricSpecFromV1(m: Obj): Obj {
  const out: Obj = { type: m.type }
  if (isObj(m.object)) {
    const s = m.object
    out.object = ordered([['describedObject', s.target], ['target', valueTarget(s.targetValue, s.averageValue)], ['metric', metric(s.metricName, s.selector)]])
  }
  if (isObj(m.pods)) {
    const s = m.pods
    out.pods = { metric: metric(s.metricName, s.selector), target: ordered([['type', 'AverageValue'], ['averageValue', s.targetAverageValue]]) }
  }
  if (isObj(m.resource)) {
    const s = m.resource
    out.resource = { name: s.name, target: utilizationTarget(s.targetAverageUtilization, s.targetAverageValue) }
  }
  if (isObj(m.containerResource)) {
    const s = m.containerResource
    out.containerResource = { name: s.name, target: utilizationTarget(s.targetAverageUtilization, s.targetAverageValue), container: s.container }
  }
  if (isObj(m.external)) {
    const s = m.external
    out.external = { metric: metric(s.metricName, s.metricSelector), target: valueTarget(s.targetValue, s.targetAverageValue) }
  }
  return out
}

const metricStatusToV1 = (m: Obj): Obj => metricToV1(m, 'current')

function metricStatusFromV1(m: Obj): Obj {
  const out: Obj = { type: m.type }
  if (isObj(m.object)) {
    const s = m.object
    out.object = { metric: metric(s.metricName, s.selector), current: ordered([['value', s.currentValue], ['averageValue', s.averageValue]]), describedObject: s.target }
  }
  if (isObj(m.pods)) {
    const s = m.pods
    out.pods = { metric: metric(s.metricName, s.selector), current: ordered([['averageValue', s.currentAverageValue]]) }
  }
  if (isObj(m.resource)) {
    const s = m.resource
    out.resource = { name: s.name, current: ordered([['averageValue', s.currentAverageValue], ['averageUtilization', s.currentAverageUtilization]]) }
  }
  if (isObj(m.containerResource)) {
    const s = m.containerResource
    out.containerResource = { name: s.name, current: ordered([['averageValue', s.currentAverageValue], ['averageUtilization', s.currentAverageUtilization]]), container: s.container }
  }
  if (isObj(m.external)) {
    const s = m.external
    out.external = { metric: metric(s.metricName, s.metricSelector), current: ordered([['value', s.currentValue], ['averageValue', s.currentAverageValue]]) }
  }
  return out
}

// ---- the objects ----

/** autoscaling/v2 (stored) to autoscaling/v1. */
export function hpaToV1(o: Obj): Obj {
  const spec = objOf(o.spec)
  const status = objOf(o.status)
  const metrics: Obj[] = Array.isArray(spec.metrics) ? spec.metrics.filter(isObj) : []
  const current: Obj[] = Array.isArray(status.currentMetrics) ? status.currentMetrics.filter(isObj) : []
  const conditions: unknown[] = Array.isArray(status.conditions) ? status.conditions : []
  // The round-trip annotations are only ever the ones made here.
  const annotations: Record<string, string> = {}
  for (const [k, v] of Object.entries(objOf(o.metadata?.annotations))) if (!ROUND_TRIP.includes(k)) annotations[k] = v as string
  const others = metrics.filter((m) => !(isCpuResource(m) && objOf(m.resource.target).averageUtilization != null))
  if (others.length > 0) annotations[METRICS_ANNOTATION] = JSON.stringify(others.map(metricSpecToV1))
  if (current.length > 0) annotations[CURRENT_METRICS_ANNOTATION] = JSON.stringify(current.map(metricStatusToV1))
  if (isObj(spec.behavior)) annotations[BEHAVIOR_ANNOTATION] = JSON.stringify(spec.behavior)
  if (conditions.length > 0) annotations[CONDITIONS_ANNOTATION] = JSON.stringify(conditions)
  const metadata: Obj = { ...objOf(o.metadata) }
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations
  else delete metadata.annotations
  const cpu = metrics.find(isCpuResource)
  let currentCpu: unknown
  for (const m of current) if (isCpuResource(m) && objOf(m.resource.current).averageUtilization != null) currentCpu = m.resource.current.averageUtilization
  const out: Obj = { metadata }
  if (o.spec !== undefined) {
    out.spec = ordered([['scaleTargetRef', spec.scaleTargetRef], ['minReplicas', spec.minReplicas], ['maxReplicas', spec.maxReplicas],
      ['targetCPUUtilizationPercentage', cpu !== undefined ? objOf(cpu.resource.target).averageUtilization ?? undefined : undefined]])
  }
  if (o.status !== undefined) {
    out.status = ordered([['observedGeneration', status.observedGeneration], ['lastScaleTime', status.lastScaleTime],
      ['currentReplicas', status.currentReplicas ?? 0], ['desiredReplicas', status.desiredReplicas ?? 0], ['currentCPUUtilizationPercentage', currentCpu]])
  }
  return out
}

/** A round-trip annotation's JSON, or 400 naming it. */
function annotationValue(annotations: Obj, key: string): unknown {
  const text = annotations[key]
  if (text === undefined) return undefined
  try {
    return JSON.parse(String(text))
  } catch (err) {
    throw badRequest(`metadata.annotations[${key}]: ${(err as Error).message}`)
  }
}

const listOf = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : [])

/**
 * autoscaling/v1 to autoscaling/v2 (stored). Only what the object has is converted (it may be an apply configuration):
 * without a cpu target or other metrics there are no metrics, and v2's defaulting makes the cpu 80 % target upstream's
 * conversion adds.
 */
export function hpaFromV1(o: Obj): Obj {
  const meta = objOf(o.metadata)
  const ann = objOf(meta.annotations)
  const others = listOf(annotationValue(ann, METRICS_ANNOTATION))
  const current = annotationValue(ann, CURRENT_METRICS_ANNOTATION)
  const behavior = annotationValue(ann, BEHAVIOR_ANNOTATION)
  const conditions = annotationValue(ann, CONDITIONS_ANNOTATION)
  const out: Obj = {}
  if (o.metadata !== undefined) {
    const metadata: Obj = { ...meta }
    if (isObj(meta.annotations)) {
      const kept: Obj = {}
      for (const [k, v] of Object.entries(meta.annotations)) if (!ROUND_TRIP.includes(k)) kept[k] = v
      if (Object.keys(kept).length > 0) metadata.annotations = kept
      else delete metadata.annotations
    }
    out.metadata = metadata
  }
  if (o.spec !== undefined) {
    const spec = objOf(o.spec)
    const metrics: Obj[] = []
    if (spec.targetCPUUtilizationPercentage != null) metrics.push({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: spec.targetCPUUtilizationPercentage } } })
    for (const m of others) metrics.push(metricSpecFromV1(m))
    out.spec = ordered([['scaleTargetRef', spec.scaleTargetRef], ['minReplicas', spec.minReplicas], ['maxReplicas', spec.maxReplicas],
      ['metrics', metrics.length > 0 ? metrics : undefined], ['behavior', isObj(behavior) ? behavior : undefined]])
  }
  if (o.status !== undefined) {
    const status = objOf(o.status)
    let currentMetrics: Obj[] | undefined
    if (current !== undefined) currentMetrics = listOf(current).map(metricStatusFromV1)
    else if (status.currentCPUUtilizationPercentage != null) currentMetrics = [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: status.currentCPUUtilizationPercentage } } }]
    out.status = ordered([['observedGeneration', status.observedGeneration], ['lastScaleTime', status.lastScaleTime],
      ['currentReplicas', status.currentReplicas], ['desiredReplicas', status.desiredReplicas],
      ['currentMetrics', currentMetrics !== undefined && currentMetrics.length > 0 ? currentMetrics : undefined],
      ['conditions', Array.isArray(conditions) && conditions.length > 0 ? conditions : undefined]])
  }
  return out
}

/**
 * v1 objects shown through the v2 columns (converted once per object, whatever the number of columns): spec and
 * status converted, metadata the object's own (a cell reads no more of it than the v2 cells do).
 */
const asV2 = new WeakMap<Obj, Obj>()
function v2Of(o: Obj): Obj {
  let v = asV2.get(o)
  if (v === undefined) {
    const m = o.metadata
    try { v = hpaFromV1({ metadata: { annotations: isObj(m) ? m.annotations : undefined }, spec: o.spec, status: o.status }) } catch { v = {} }
    v.metadata = m
    asV2.set(o, v)
  }
  return v
}

export default defineResource({
  group: 'autoscaling', version: 'v1', kind: 'HorizontalPodAutoscaler', resource: 'horizontalpodautoscalers', singular: 'horizontalpodautoscaler', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['hpa'],
  categories: ['all'],
  subresources: ['status'],
  schemaRef: 'io.orch.api.autoscaling.v1.HorizontalPodAutoscaler',
  // value structs upstream; spec.maxReplicas, scaleTargetRef's kind and name have no omitempty (nor v1's replica counts).
  zeroValues: { spec: { scaleTargetRef: { kind: '', name: '' }, maxReplicas: 0 } },
  // Defaulting of v1 bodies (SetDefaults_HorizontalPodAutoscaler); validation is the stored v2 type's.
  strategy: { ...statusSplit.strategy, default: (o) => { if (isObj(o.spec)) o.spec.minReplicas ??= 1 }, allowUnconditionalUpdate: true, nameRule: 'subdomain', hasGeneration: true },
  status: statusSplit.status,
  table: hpaTable.map((c) => ({ ...c, cell: (o: Obj, now: number) => c.cell(v2Of(o), now) })),
  sharedStorage: { group: 'autoscaling', resource: 'horizontalpodautoscalers', toStored: hpaFromV1, fromStored: hpaToV1 },
})
