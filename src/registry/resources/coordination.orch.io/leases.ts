// Lease (coordination.orch.io/v1).
import { defineResource, ALL_VERBS } from '../../define.js'
import { ageColumn, nameColumn } from '../_printers.js'

export default defineResource({
  group: 'coordination.orch.io', version: 'v1', kind: 'Lease', resource: 'leases', singular: 'lease', scope: 'Namespaced',
  verbs: ALL_VERBS,
  schemaRef: 'io.orch.api.coordination.v1.Lease',
  strategy: { allowUnconditionalUpdate: true, nameRule: 'subdomain' },
  table: [
    nameColumn(),
    { name: 'Holder', type: 'string', description: 'holderIdentity contains the identity of the holder of a current lease.', cell: (o) => o.spec?.holderIdentity ?? '' },
    ageColumn(),
  ],
})
