// PriorityClass (scheduling.orch.io/v1, cluster-scoped).
import { defineResource, ALL_VERBS } from '../../define.js'
import { ageColumn, int, nameColumn } from '../_printers.js'

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
  table: [
    nameColumn(),
    { name: 'Value', type: 'integer', description: 'The priority pods of this class get.', cell: (o) => int(o.value) },
    { name: 'Global-Default', type: 'boolean', description: 'Whether pods without a priority class get this one.', cell: (o) => o.globalDefault === true },
    ageColumn(),
    { name: 'PreemptionPolicy', type: 'string', description: 'Whether pods of this class may preempt lower-priority pods.', cell: (o) => (typeof o.preemptionPolicy === 'string' ? o.preemptionPolicy : '') },
  ],
})
