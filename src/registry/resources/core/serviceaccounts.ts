// ServiceAccount (v1). The token sub-resource (TokenRequest) is answered by src/pipeline/reviews.ts.
import { defineResource, ALL_VERBS } from '../../define.js'
import { ageColumn, nameColumn } from '../_printers.js'

export default defineResource({
  group: '', version: 'v1', kind: 'ServiceAccount', resource: 'serviceaccounts', singular: 'serviceaccount', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['sa'],
  schemaRef: 'io.orch.api.core.v1.ServiceAccount',
  strategy: { allowUnconditionalUpdate: true, returnDeletedObject: true, nameRule: 'subdomain' },
  virtualSubresources: [{ name: 'token', group: 'authentication.orch.io', version: 'v1', kind: 'TokenRequest', verbs: ['create'] }],
  table: [
    nameColumn(),
    { name: 'Secrets', type: 'integer', description: 'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.', cell: (o) => (Array.isArray(o.secrets) ? o.secrets.length : 0) },
    ageColumn(),
  ],
})
