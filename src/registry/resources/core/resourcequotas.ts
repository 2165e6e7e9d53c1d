// ResourceQuota (v1). DELETE answers with the deleted object.
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'

export default defineResource({
  group: '', version: 'v1', kind: 'ResourceQuota', resource: 'resourcequotas', singular: 'resourcequota', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['quota'],
  subresources: ['status'],
  schemaRef: 'io.orch.api.core.v1.ResourceQuota',
  strategy: { ...statusSplit.strategy, allowUnconditionalUpdate: true, returnDeletedObject: true, nameRule: 'subdomain' },
  status: statusSplit.status,
})
