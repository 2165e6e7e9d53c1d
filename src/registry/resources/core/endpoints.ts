// Endpoints (v1).
import { defineResource, ALL_VERBS } from '../../define.js'

export default defineResource({
  group: '', version: 'v1', kind: 'Endpoints', resource: 'endpoints', singular: 'endpoints', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['ep'],
  schemaRef: 'io.orch.api.core.v1.Endpoints',
  strategy: {
    // SetDefaults_EndpointPort
    default: (o) => {
      if (!Array.isArray(o.subsets)) return
      for (const s of o.subsets) if (s && Array.isArray(s.ports)) for (const p of s.ports) if (p && typeof p === 'object') p.protocol ??= 'TCP'
    },
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
  },
})
