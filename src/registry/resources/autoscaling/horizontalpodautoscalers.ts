// HorizontalPodAutoscaler (autoscaling/v2).
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'
import { ageColumn, int, nameColumn, quantityPtrString } from '../_printers.js'

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

export default defineResource({
  group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler', resource: 'horizontalpodautoscalers', singular: 'horizontalpodautoscaler', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['hpa'],
  categories: ['all'],
  subresources: ['status'],
  schemaRef: 'io.orch.api.autoscaling.v2.HorizontalPodAutoscaler',
  strategy: { ...statusSplit.strategy, default: defaultHPA, allowUnconditionalUpdate: true, nameRule: 'subdomain', hasGeneration: true },
  status: statusSplit.status,
  table: [
    nameColumn(),
    { name: 'Reference', type: 'string', description: 'The scaled object (Kind/name).', cell: (o) => `${o.spec?.scaleTargetRef?.kind ?? ''}/${o.spec?.scaleTargetRef?.name ?? ''}` },
    { name: 'Targets', type: 'string', description: 'Current and target values of the metrics.', cell: (o) => targets(o) },
    { name: 'MinPods', type: 'string', description: 'The fewest replicas the autoscaler keeps.', cell: (o) => (o.spec?.minReplicas == null ? '<unset>' : String(int(o.spec.minReplicas))) },
    { name: 'MaxPods', type: 'string', description: 'The most replicas the autoscaler scales to.', cell: (o) => int(o.spec?.maxReplicas) },
    { name: 'Replicas', type: 'string', description: 'The replicas the target has now.', cell: (o) => int(o.status?.currentReplicas) },
    ageColumn(),
  ],
})
