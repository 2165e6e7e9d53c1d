// PodDisruptionBudget (policy/v1).
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'

export default defineResource({
  group: 'policy', version: 'v1', kind: 'PodDisruptionBudget', resource: 'poddisruptionbudgets', singular: 'poddisruptionbudget', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['pdb'],
  subresources: ['status'],
  schemaRef: 'io.orch.api.policy.v1.PodDisruptionBudget',
  strategy: { ...statusSplit.strategy, allowUnconditionalUpdate: true, nameRule: 'subdomain', hasGeneration: true },
  status: statusSplit.status,
})
