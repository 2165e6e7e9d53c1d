// PersistentVolume (v1, cluster-scoped). DELETE answers with the deleted object.
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import { accessModesString, ageColumn, nameColumn, quantityString, volumeStorageClass } from '../_printers.js'

export default defineResource({
  group: '', version: 'v1', kind: 'PersistentVolume', resource: 'persistentvolumes', singular: 'persistentvolume', scope: 'Cluster',
  verbs: ALL_VERBS,
  shortNames: ['pv'],
  subresources: ['status'],
  schemaRef: 'io.orch.api.core.v1.PersistentVolume',
  strategy: {
    ...statusSplit.strategy,
    default: (o) => {
      if (o.spec === null || typeof o.spec !== 'object') return
      o.spec.persistentVolumeReclaimPolicy ??= 'Retain'
      o.spec.volumeMode ??= 'Filesystem'
    },
    prepareForCreate: (o) => { o.status = { phase: 'Pending' } },
    allowUnconditionalUpdate: true,
    returnDeletedObject: true,
    nameRule: 'subdomain',
  },
  status: statusSplit.status,
  table: [
    nameColumn(),
    { name: 'Capacity', type: 'string', description: 'The storage size of the volume.', cell: (o) => quantityString(o.spec?.capacity?.storage) },
    { name: 'Access Modes', type: 'string', description: 'How the volume may be mounted (RWO, ROX, RWX, RWOP).', cell: (o) => accessModesString(o.spec?.accessModes) },
    { name: 'Reclaim Policy', type: 'string', description: 'What happens to the volume when its claim is released.', cell: (o) => o.spec?.persistentVolumeReclaimPolicy ?? '' },
    { name: 'Status', type: 'string', description: 'The phase of the volume (Terminating while it is being deleted).', cell: (o) => (o.metadata?.deletionTimestamp != null ? 'Terminating' : o.status?.phase ?? '') },
    {
      name: 'Claim', type: 'string', description: 'The claim bound to the volume (namespace/name).',
      cell: (o) => (o.spec?.claimRef != null ? `${o.spec.claimRef.namespace ?? ''}/${o.spec.claimRef.name ?? ''}` : ''),
    },
    { name: 'StorageClass', type: 'string', description: 'The storage class of the volume.', cell: (o) => volumeStorageClass(o) },
    { name: 'VolumeAttributesClass', type: 'string', description: 'The VolumeAttributesClass of the volume.', cell: (o) => (typeof o.spec?.volumeAttributesClassName === 'string' ? o.spec.volumeAttributesClassName : '<unset>') },
    { name: 'Reason', type: 'string', description: 'Why the volume is in its phase, if told.', cell: (o) => o.status?.reason ?? '' },
    ageColumn(),
    { name: 'VolumeMode', type: 'string', priority: 1, description: 'Filesystem or Block.', cell: (o) => (typeof o.spec?.volumeMode === 'string' ? o.spec.volumeMode : '<unset>') },
  ],
})
