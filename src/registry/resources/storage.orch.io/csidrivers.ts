// CSIDriver (storage.orch.io/v1, cluster-scoped). DELETE answers with the deleted object.
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj } from '../../define.js'
import { ageColumn, nameColumn } from '../_printers.js'

function flag(o: Obj, key: string, unset: boolean): boolean { const v = o.spec?.[key]; return typeof v === 'boolean' ? v : unset }

export default defineResource({
  group: 'storage.orch.io', version: 'v1', kind: 'CSIDriver', resource: 'csidrivers', singular: 'csidriver', scope: 'Cluster',
  verbs: ALL_VERBS,
  schemaRef: 'io.orch.api.storage.v1.CSIDriver',
  // spec is a value struct upstream.
  zeroValues: { spec: {} },
  strategy: {
    // SetDefaults_CSIDriver
    default: (o) => {
      const s = o.spec
      if (s === null || typeof s !== 'object') return
      s.attachRequired ??= true
      s.podInfoOnMount ??= false
      s.storageCapacity ??= false
      s.fsGroupPolicy ??= 'ReadWriteOnceWithFSType'
      if (!Array.isArray(s.volumeLifecycleModes) || s.volumeLifecycleModes.length === 0) s.volumeLifecycleModes = ['Persistent']
      s.requiresRepublish ??= false
      s.seLinuxMount ??= false
    },
    allowUnconditionalUpdate: true,
    returnDeletedObject: true,
    nameRule: 'subdomain',
  },
  table: [
    nameColumn(),
    { name: 'AttachRequired', type: 'boolean', description: 'Whether volumes need an attach step.', cell: (o) => flag(o, 'attachRequired', true) },
    { name: 'PodInfoOnMount', type: 'boolean', description: 'Whether the driver gets pod information on mount.', cell: (o) => flag(o, 'podInfoOnMount', false) },
    { name: 'StorageCapacity', type: 'boolean', description: 'Whether the scheduler considers the storage capacity the driver reports.', cell: (o) => flag(o, 'storageCapacity', false) },
    {
      name: 'TokenRequests', type: 'string', description: 'Audiences of the service account tokens passed to the driver.',
      cell: (o) => (Array.isArray(o.spec?.tokenRequests) && o.spec.tokenRequests.length > 0 ? o.spec.tokenRequests.map((t: Obj) => t?.audience ?? '').join(',') : '<unset>'),
    },
    { name: 'RequiresRepublish', type: 'boolean', description: 'Whether the driver wants volumes mounted again periodically.', cell: (o) => flag(o, 'requiresRepublish', false) },
    {
      name: 'Modes', type: 'string', description: 'The volume lifecycle modes the driver supports.',
      cell: (o) => (Array.isArray(o.spec?.volumeLifecycleModes) && o.spec.volumeLifecycleModes.length > 0 ? o.spec.volumeLifecycleModes.join(',') : '<none>'),
    },
    ageColumn(),
  ],
})
