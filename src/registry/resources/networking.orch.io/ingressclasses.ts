// IngressClass (networking.orch.io/v1, cluster-scoped).
import { defineResource, ALL_VERBS } from '../../define.js'
import { ageColumn, nameColumn } from '../_printers.js'

export default defineResource({
  group: 'networking.orch.io', version: 'v1', kind: 'IngressClass', resource: 'ingressclasses', singular: 'ingressclass', scope: 'Cluster',
  verbs: ALL_VERBS,
  schemaRef: 'io.orch.api.networking.v1.IngressClass',
  strategy: { allowUnconditionalUpdate: true, nameRule: 'subdomain', hasGeneration: true },
  table: [
    nameColumn(),
    { name: 'Controller', type: 'string', description: 'The controller that implements this class.', cell: (o) => o.spec?.controller ?? '' },
    {
      name: 'Parameters', type: 'string', description: 'The object holding extra configuration for the class (Kind[.group]/name).',
      cell: (o) => {
        const p = o.spec?.parameters
        if (p === null || typeof p !== 'object') return '<none>'
        const kind = typeof p.apiGroup === 'string' ? `${p.kind ?? ''}.${p.apiGroup}` : `${p.kind ?? ''}`
        return `${kind}/${p.name ?? ''}`
      },
    },
    ageColumn(),
  ],
})
