// Role (rbac.authorization.orch.io/v1).
import { defineResource, ALL_VERBS } from '../../define.js'
import { createdAtColumn, nameColumn } from '../_printers.js'
import { RBAC_GROUP, validateRules } from './rolebindings.js'

export default defineResource({
  group: RBAC_GROUP, version: 'v1', kind: 'Role', resource: 'roles', singular: 'role', scope: 'Namespaced',
  verbs: ALL_VERBS,
  schemaRef: 'io.orch.api.rbac.v1.Role',
  strategy: { allowUnconditionalUpdate: true, nameRule: 'path', validate: (o) => validateRules(o, true) },
  table: [nameColumn(), createdAtColumn()],
})
