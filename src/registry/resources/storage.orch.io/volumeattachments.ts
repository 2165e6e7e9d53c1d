// VolumeAttachment (storage.orch.io/v1, cluster-scoped). DELETE answers with the deleted object.
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'

export default defineResource({
  group: 'storage.orch.io', version: 'v1', kind: 'VolumeAttachment', resource: 'volumeattachments', singular: 'volumeattachment', scope: 'Cluster',
  verbs: ALL_VERBS,
  subresources: ['status'],
  schemaRef: 'io.orch.api.storage.v1.VolumeAttachment',
  strategy: { ...statusSplit.strategy, allowUnconditionalUpdate: true, returnDeletedObject: true, nameRule: 'subdomain' },
  status: statusSplit.status,
})
