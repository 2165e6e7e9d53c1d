// PersistentVolumeClaim (v1). DELETE answers with the deleted object.
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'
import { accessModesString, ageColumn, nameColumn, quantityString, volumeStorageClass } from '../_printers.js'

/** Capacity and access modes are shown once the claim names its volume. */
function bound(o: Obj): boolean { return typeof o.spec?.volumeName === 'string' && o.spec.volumeName !== '' }

export default defineResource({
  group: '', version: 'v1', kind: 'PersistentVolumeClaim', resource: 'persistentvolumeclaims', singular: 'persistentvolumeclaim', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['pvc'],
  subresources: ['status'],
  schemaRef: 'io.orch.api.core.v1.PersistentVolumeClaim',
  strategy: {
    ...statusSplit.strategy,
    default: (o) => { if (o.spec !== null && typeof o.spec === 'object') o.spec.volumeMode ??= 'Filesystem' },
    prepareForCreate: (o) => { o.status = { phase: 'Pending' } },
    allowUnconditionalUpdate: true,
    returnDeletedObject: true,
    nameRule: 'subdomain',
  },
  status: statusSplit.status,
  table: [
    nameColumn(),
    { name: 'Status', type: 'string', description: 'The phase of the claim (Terminating while it is being deleted).', cell: (o) => (o.metadata?.deletionTimestamp != null ? 'Terminating' : o.status?.phase ?? '') },
    { name: 'Volume', type: 'string', description: 'The volume the claim is bound to.', cell: (o) => o.spec?.volumeName ?? '' },
    { name: 'Capacity', type: 'string', description: 'The storage size of the bound volume.', cell: (o) => (bound(o) ? quantityString(o.status?.capacity?.storage) : '') },
    { name: 'Access Modes', type: 'string', description: 'How the bound volume may be mounted (RWO, ROX, RWX, RWOP).', cell: (o) => (bound(o) ? accessModesString(o.status?.accessModes) : '') },
    { name: 'StorageClass', type: 'string', description: 'The storage class the claim asks for.', cell: (o) => volumeStorageClass(o) },
    { name: 'VolumeAttributesClass', type: 'string', description: 'The VolumeAttributesClass of the claim.', cell: (o) => (typeof o.spec?.volumeAttributesClassName === 'string' ? o.spec.volumeAttributesClassName : '<unset>') },
    ageColumn(),
    { name: 'VolumeMode', type: 'string', priority: 1, description: 'Filesystem or Block.', cell: (o) => (typeof o.spec?.volumeMode === 'string' ? o.spec.volumeMode : '<unset>') },
  ],
})
