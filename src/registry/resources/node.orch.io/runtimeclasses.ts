// RuntimeClass (node.orch.io/v1, cluster-scoped).
import { defineResource, ALL_VERBS } from '../../define.js'
import { ageColumn, nameColumn } from '../_printers.js'

export default defineResource({
  group: 'node.orch.io', version: 'v1', kind: 'RuntimeClass', resource: 'runtimeclasses', singular: 'runtimeclass', scope: 'Cluster',
  verbs: ALL_VERBS,
  schemaRef: 'io.orch.api.node.v1.RuntimeClass',
  // handler has no omitempty upstream.
  zeroValues: { handler: '' },
  strategy: { allowUnconditionalUpdate: true, nameRule: 'subdomain' },
  table: [
    nameColumn(),
    { name: 'Handler', type: 'string', description: 'The container runtime configuration that runs the pods.', cell: (o) => o.handler ?? '' },
    ageColumn(),
  ],
})
