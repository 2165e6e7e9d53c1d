// ClusterRole (rbac.authorization.orch.io/v1, cluster-scoped). Aggregated rules are filled by a controller.
import { defineResource, ALL_VERBS } from '../../define.js'
import { createdAtColumn, nameColumn } from '../_printers.js'
import { RBAC_GROUP, validateRules } from './rolebindings.js'

export default defineResource({
  group: RBAC_GROUP, version: 'v1', kind: 'ClusterRole', resource: 'clusterroles', singular: 'clusterrole', scope: 'Cluster',
  verbs: ALL_VERBS,
  schemaRef: 'io.orch.api.rbac.v1.ClusterRole',
  strategy: { allowUnconditionalUpdate: true, nameRule: 'path', validate: (o) => validateRules(o, false) },
  table: [nameColumn(), createdAtColumn()],
})
