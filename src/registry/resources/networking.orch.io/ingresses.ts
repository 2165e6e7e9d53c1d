// Ingress (networking.orch.io/v1).
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'

export default defineResource({
  group: 'networking.orch.io', version: 'v1', kind: 'Ingress', resource: 'ingresses', singular: 'ingress', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['ing'],
  subresources: ['status'],
  schemaRef: 'io.orch.api.networking.v1.Ingress',
  strategy: { ...statusSplit.strategy, allowUnconditionalUpdate: true, nameRule: 'subdomain', hasGeneration: true },
  status: statusSplit.status,
})
