// PriorityClass (scheduling.orch.io/v1, cluster-scoped).
import { defineResource, ALL_VERBS } from '../../define.js'

export default defineResource({
  group: 'scheduling.orch.io', version: 'v1', kind: 'PriorityClass', resource: 'priorityclasses', singular: 'priorityclass', scope: 'Cluster',
  verbs: ALL_VERBS,
  shortNames: ['pc'],
  schemaRef: 'io.orch.api.scheduling.v1.PriorityClass',
  strategy: {
    // SetDefaults_PriorityClass
    default: (o) => { o.preemptionPolicy ??= 'PreemptLowerPriority' },
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
  },
})
