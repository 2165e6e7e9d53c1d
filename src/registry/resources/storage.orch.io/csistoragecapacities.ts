// CSIStorageCapacity (storage.orch.io/v1).
import { defineResource, ALL_VERBS } from '../../define.js'

export default defineResource({
  group: 'storage.orch.io', version: 'v1', kind: 'CSIStorageCapacity', resource: 'csistoragecapacities', singular: 'csistoragecapacity', scope: 'Namespaced',
  verbs: ALL_VERBS,
  schemaRef: 'io.orch.api.storage.v1.CSIStorageCapacity',
  // storageClassName has no omitempty upstream.
  zeroValues: { storageClassName: '' },
  strategy: { allowUnconditionalUpdate: true, nameRule: 'subdomain' },
})
