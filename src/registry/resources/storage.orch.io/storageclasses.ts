// StorageClass (storage.orch.io/v1, cluster-scoped). DELETE answers with the deleted object.
import { defineResource, ALL_VERBS } from '../../define.js'

export default defineResource({
  group: 'storage.orch.io', version: 'v1', kind: 'StorageClass', resource: 'storageclasses', singular: 'storageclass', scope: 'Cluster',
  verbs: ALL_VERBS,
  shortNames: ['sc'],
  schemaRef: 'io.orch.api.storage.v1.StorageClass',
  strategy: {
    // SetDefaults_StorageClass
    default: (o) => {
      if (o.reclaimPolicy === undefined || o.reclaimPolicy === '') o.reclaimPolicy = 'Delete'
      if (o.volumeBindingMode === undefined || o.volumeBindingMode === '') o.volumeBindingMode = 'Immediate'
    },
    allowUnconditionalUpdate: true,
    returnDeletedObject: true,
    nameRule: 'subdomain',
  },
})
