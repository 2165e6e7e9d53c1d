// PodDisruptionBudget (policy/v1).
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import { ageColumn, int, intOrStringText, nameColumn } from '../_printers.js'

export default defineResource({
  group: 'policy', version: 'v1', kind: 'PodDisruptionBudget', resource: 'poddisruptionbudgets', singular: 'poddisruptionbudget', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['pdb'],
  subresources: ['status'],
  schemaRef: 'io.orch.api.policy.v1.PodDisruptionBudget',
  strategy: { ...statusSplit.strategy, allowUnconditionalUpdate: true, nameRule: 'subdomain', hasGeneration: true },
  status: statusSplit.status,
  table: [
    nameColumn(),
    { name: 'Min Available', type: 'string', description: 'Pods that must stay available (a count or a percentage).', cell: (o) => (o.spec?.minAvailable == null ? 'N/A' : intOrStringText(o.spec.minAvailable)) },
    { name: 'Max Unavailable', type: 'string', description: 'Pods that may be unavailable at once (a count or a percentage).', cell: (o) => (o.spec?.maxUnavailable == null ? 'N/A' : intOrStringText(o.spec.maxUnavailable)) },
    { name: 'Allowed Disruptions', type: 'integer', description: 'How many pod disruptions the budget allows right now.', cell: (o) => int(o.status?.disruptionsAllowed) },
    ageColumn(),
  ],
})
