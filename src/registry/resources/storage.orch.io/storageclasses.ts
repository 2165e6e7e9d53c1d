// StorageClass (storage.orch.io/v1, cluster-scoped). DELETE answers with the deleted object.
import { defineResource, ALL_VERBS } from '../../define.js'
import { ageColumn, brandedAnnotation, nameColumn } from '../_printers.js'

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
  table: [
    {
      // The default class (annotation is-default-class, or its beta form, "true") is marked after its name.
      ...nameColumn(),
      cell: (o) => {
        const isDefault = brandedAnnotation(o, 'storageclass.orch.io/is-default-class') === 'true' ||
          brandedAnnotation(o, 'storageclass.beta.orch.io/is-default-class') === 'true'
        return `${o.metadata?.name ?? ''}${isDefault ? ' (default)' : ''}`
      },
    },
    { name: 'Provisioner', type: 'string', description: 'The volume plugin that provisions the volumes.', cell: (o) => o.provisioner ?? '' },
    { name: 'ReclaimPolicy', type: 'string', description: 'What happens to provisioned volumes when released.', cell: (o) => (typeof o.reclaimPolicy === 'string' ? o.reclaimPolicy : 'Delete') },
    { name: 'VolumeBindingMode', type: 'string', description: 'When volumes are bound and provisioned.', cell: (o) => (typeof o.volumeBindingMode === 'string' ? o.volumeBindingMode : 'Immediate') },
    { name: 'AllowVolumeExpansion', type: 'string', description: 'Whether volumes of the class may be resized.', cell: (o) => o.allowVolumeExpansion === true },
    ageColumn(),
  ],
})
