// FlowSchema (flowcontrol.apiserver.orch.io/v1, cluster-scoped).
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'

export default defineResource({
  group: 'flowcontrol.apiserver.orch.io', version: 'v1', kind: 'FlowSchema', resource: 'flowschemas', singular: 'flowschema', scope: 'Cluster',
  verbs: ALL_VERBS,
  subresources: ['status'],
  schemaRef: 'io.orch.api.flowcontrol.v1.FlowSchema',
  strategy: {
    ...statusSplit.strategy,
    // SetDefaults_FlowSchemaSpec: an unset (zero) precedence becomes 1000.
    default: (o) => {
      if (o.spec === null || typeof o.spec !== 'object') return
      if (o.spec.matchingPrecedence === undefined || o.spec.matchingPrecedence === 0) o.spec.matchingPrecedence = 1000
    },
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
    hasGeneration: true,
  },
  status: statusSplit.status,
})
