// VolumeAttachment (storage.orch.io/v1, cluster-scoped). DELETE answers with the deleted object.
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import { ageColumn, nameColumn } from '../_printers.js'

export default defineResource({
  group: 'storage.orch.io', version: 'v1', kind: 'VolumeAttachment', resource: 'volumeattachments', singular: 'volumeattachment', scope: 'Cluster',
  verbs: ALL_VERBS,
  subresources: ['status'],
  schemaRef: 'io.orch.api.storage.v1.VolumeAttachment',
  // value structs upstream; attacher, nodeName and status.attached have no omitempty.
  zeroValues: { spec: { attacher: '', source: {}, nodeName: '' }, status: { attached: false } },
  strategy: { ...statusSplit.strategy, allowUnconditionalUpdate: true, returnDeletedObject: true, nameRule: 'subdomain' },
  status: statusSplit.status,
  table: [
    nameColumn(),
    // Upstream gives this column the name format too.
    { name: 'Attacher', type: 'string', format: 'name', description: 'The volume driver that attaches the volume.', cell: (o) => o.spec?.attacher ?? '' },
    { name: 'PV', type: 'string', description: 'The persistent volume to attach.', cell: (o) => o.spec?.source?.persistentVolumeName ?? '' },
    { name: 'Node', type: 'string', description: 'The node to attach the volume to.', cell: (o) => o.spec?.nodeName ?? '' },
    { name: 'Attached', type: 'boolean', description: 'Whether the volume is attached.', cell: (o) => o.status?.attached === true },
    ageColumn(),
  ],
})
