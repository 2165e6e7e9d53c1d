// PersistentVolumeClaim (v1). DELETE answers with the deleted object.
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'

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
})
