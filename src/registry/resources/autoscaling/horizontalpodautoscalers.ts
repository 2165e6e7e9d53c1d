// HorizontalPodAutoscaler (autoscaling/v2).
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'

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

export default defineResource({
  group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler', resource: 'horizontalpodautoscalers', singular: 'horizontalpodautoscaler', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['hpa'],
  categories: ['all'],
  subresources: ['status'],
  schemaRef: 'io.orch.api.autoscaling.v2.HorizontalPodAutoscaler',
  strategy: { ...statusSplit.strategy, default: defaultHPA, allowUnconditionalUpdate: true, nameRule: 'subdomain', hasGeneration: true },
  status: statusSplit.status,
})
