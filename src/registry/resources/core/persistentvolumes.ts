// PersistentVolume (v1, cluster-scoped). DELETE answers with the deleted object.
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'

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
})
