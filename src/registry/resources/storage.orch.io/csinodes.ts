// CSINode (storage.orch.io/v1, cluster-scoped). DELETE answers with the deleted object.
import { defineResource, ALL_VERBS } from '../../define.js'
import { ageColumn, nameColumn } from '../_printers.js'

export default defineResource({
  group: 'storage.orch.io', version: 'v1', kind: 'CSINode', resource: 'csinodes', singular: 'csinode', scope: 'Cluster',
  verbs: ALL_VERBS,
  schemaRef: 'io.orch.api.storage.v1.CSINode',
  // spec is a value struct upstream.
  zeroValues: { spec: {} },
  strategy: { allowUnconditionalUpdate: true, returnDeletedObject: true, nameRule: 'subdomain' },
  table: [
    nameColumn(),
    { name: 'Drivers', type: 'integer', description: 'How many CSI drivers are registered on the node.', cell: (o) => (Array.isArray(o.spec?.drivers) ? o.spec.drivers.length : 0) },
    ageColumn(),
  ],
})
