// PriorityLevelConfiguration (flowcontrol.apiserver.orch.io/v1, cluster-scoped).
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** SetDefaults_PriorityLevelConfiguration and the defaults of its parts (v1). */
function defaultPLC(o: Obj): void {
  const spec = o.spec
  if (!isObj(spec)) return
  if (isObj(spec.exempt)) {
    spec.exempt.nominalConcurrencyShares ??= 0
    spec.exempt.lendablePercent ??= 0
  }
  if (isObj(spec.limited)) {
    const l = spec.limited
    l.nominalConcurrencyShares ??= 30
    l.lendablePercent ??= 0
    if (isObj(l.limitResponse) && isObj(l.limitResponse.queuing)) {
      const q = l.limitResponse.queuing
      if (q.handSize === undefined || q.handSize === 0) q.handSize = 8
      if (q.queues === undefined || q.queues === 0) q.queues = 64
      if (q.queueLengthLimit === undefined || q.queueLengthLimit === 0) q.queueLengthLimit = 50
    }
  }
}

export default defineResource({
  group: 'flowcontrol.apiserver.orch.io', version: 'v1', kind: 'PriorityLevelConfiguration', resource: 'prioritylevelconfigurations', singular: 'prioritylevelconfiguration', scope: 'Cluster',
  verbs: ALL_VERBS,
  subresources: ['status'],
  schemaRef: 'io.orch.api.flowcontrol.v1.PriorityLevelConfiguration',
  strategy: { ...statusSplit.strategy, default: defaultPLC, allowUnconditionalUpdate: true, nameRule: 'subdomain', hasGeneration: true },
  status: statusSplit.status,
})
