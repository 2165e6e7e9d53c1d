// DaemonSet (apps/v1).
import { defineResource, ALL_VERBS, statusSplit, generationStrategy } from '../../define.js'
import type { Obj } from '../../define.js'
import { ageColumn, containerColumns, formatLabelSelector, formatLabels, int, nameColumn } from '../_printers.js'
import { defaultPodTemplate } from '../core/pods.js'
import { validateWorkloadSpec } from '../core/pod-validation.js'
import { validateSelectorImmutable } from './deployments.js'

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** SetDefaults_DaemonSet (apps/v1). */
function defaultDaemonSet(o: Obj): void {
  const spec = o.spec
  if (!isObj(spec)) return
  spec.updateStrategy ??= {}
  if (isObj(spec.updateStrategy)) {
    const u = spec.updateStrategy
    if (u.type === undefined || u.type === '') u.type = 'RollingUpdate'
    if (u.type === 'RollingUpdate') {
      u.rollingUpdate ??= {}
      if (isObj(u.rollingUpdate)) {
        u.rollingUpdate.maxUnavailable ??= 1
        u.rollingUpdate.maxSurge ??= 0
      }
    }
  }
  spec.revisionHistoryLimit ??= 10
  defaultPodTemplate(spec.template)
}

const st = (o: Obj, k: string) => int(o.status?.[k])

export default defineResource({
  group: 'apps', version: 'v1', kind: 'DaemonSet', resource: 'daemonsets', singular: 'daemonset', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['ds'],
  categories: ['all'],
  subresources: ['status'],
  schemaRef: 'io.orch.api.apps.v1.DaemonSet',
  // value structs upstream; the four status counters have no omitempty.
  zeroValues: { spec: { template: { metadata: {}, spec: {} }, updateStrategy: {} }, status: { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 } },
  strategy: generationStrategy({
    default: defaultDaemonSet,
    validate: (o) => validateWorkloadSpec(o, 'daemonset', { selectorRequired: false }),
    validateUpdate: (o, old) => [...validateWorkloadSpec(o, 'daemonset', { selectorRequired: false }), ...validateSelectorImmutable(o, old)],
  }),
  status: statusSplit.status,
  table: [
    nameColumn(),
    { name: 'Desired', type: 'integer', description: 'The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod).', cell: (o) => st(o, 'desiredNumberScheduled') },
    { name: 'Current', type: 'integer', description: 'The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.', cell: (o) => st(o, 'currentNumberScheduled') },
    { name: 'Ready', type: 'integer', description: 'numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition.', cell: (o) => st(o, 'numberReady') },
    { name: 'Up-to-date', type: 'integer', description: 'The total number of nodes that are running updated daemon pod', cell: (o) => st(o, 'updatedNumberScheduled') },
    { name: 'Available', type: 'integer', description: 'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)', cell: (o) => st(o, 'numberAvailable') },
    { name: 'Node Selector', type: 'string', description: "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node.", cell: (o) => formatLabels(o.spec?.template?.spec?.nodeSelector) },
    ageColumn(),
    ...containerColumns((o) => o.spec?.template?.spec, (o) => formatLabelSelector(o.spec?.selector)),
  ],
})
