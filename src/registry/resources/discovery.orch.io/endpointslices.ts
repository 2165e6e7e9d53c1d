// EndpointSlice (discovery.orch.io/v1).
import { defineResource, ALL_VERBS } from '../../define.js'

export default defineResource({
  group: 'discovery.orch.io', version: 'v1', kind: 'EndpointSlice', resource: 'endpointslices', singular: 'endpointslice', scope: 'Namespaced',
  verbs: ALL_VERBS,
  schemaRef: 'io.orch.api.discovery.v1.EndpointSlice',
  strategy: {
    // SetDefaults_EndpointPort: name '' and protocol TCP.
    default: (o) => {
      if (!Array.isArray(o.ports)) return
      for (const p of o.ports) if (p !== null && typeof p === 'object') { p.name ??= ''; p.protocol ??= 'TCP' }
    },
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
  },
})
