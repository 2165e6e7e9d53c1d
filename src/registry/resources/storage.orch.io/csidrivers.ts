// CSIDriver (storage.orch.io/v1, cluster-scoped). DELETE answers with the deleted object.
import { defineResource, ALL_VERBS } from '../../define.js'

export default defineResource({
  group: 'storage.orch.io', version: 'v1', kind: 'CSIDriver', resource: 'csidrivers', singular: 'csidriver', scope: 'Cluster',
  verbs: ALL_VERBS,
  schemaRef: 'io.orch.api.storage.v1.CSIDriver',
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
})
