// IngressClass (networking.orch.io/v1, cluster-scoped).
import { defineResource, ALL_VERBS } from '../../define.js'

export default defineResource({
  group: 'networking.orch.io', version: 'v1', kind: 'IngressClass', resource: 'ingressclasses', singular: 'ingressclass', scope: 'Cluster',
  verbs: ALL_VERBS,
  schemaRef: 'io.orch.api.networking.v1.IngressClass',
  strategy: { allowUnconditionalUpdate: true, nameRule: 'subdomain', hasGeneration: true },
})
