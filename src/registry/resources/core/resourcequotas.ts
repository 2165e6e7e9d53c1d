// ResourceQuota (v1). DELETE answers with the deleted object.
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'
import { ageColumn, nameColumn, quantityString } from '../_printers.js'

/** `resource: used/hard` for each hard limit in status, sorted by name: limits.* in one column, the rest in the other. */
function usage(o: Obj, limits: boolean): string {
  const hard = o.status?.hard
  if (hard === null || typeof hard !== 'object') return ''
  const used = o.status?.used !== null && typeof o.status?.used === 'object' ? o.status.used : {}
  return Object.keys(hard).sort()
    .filter((r) => { const p = r.split('.'); return (p.length > 1 && p[0] === 'limits') === limits })
    .map((r) => `${r}: ${quantityString(used[r])}/${quantityString(hard[r])}`)
    .join(', ')
}

export default defineResource({
  group: '', version: 'v1', kind: 'ResourceQuota', resource: 'resourcequotas', singular: 'resourcequota', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['quota'],
  subresources: ['status'],
  schemaRef: 'io.orch.api.core.v1.ResourceQuota',
  strategy: { ...statusSplit.strategy, allowUnconditionalUpdate: true, returnDeletedObject: true, nameRule: 'subdomain' },
  status: statusSplit.status,
  table: [
    nameColumn(),
    { name: 'Request', type: 'string', description: 'Used and hard amounts of the quota\'s resources other than limits.*.', cell: (o) => usage(o, false) },
    { name: 'Limit', type: 'string', description: 'Used and hard amounts of the quota\'s limits.* resources.', cell: (o) => usage(o, true) },
    ageColumn(),
  ],
})
