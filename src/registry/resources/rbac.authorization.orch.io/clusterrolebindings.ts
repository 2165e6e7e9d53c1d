// ClusterRoleBinding (rbac.authorization.orch.io/v1, cluster-scoped).
import { defineResource, ALL_VERBS } from '../../define.js'
import { bindingColumns, defaultBinding, RBAC_GROUP, validateBinding, validateRoleRefUnchanged } from './rolebindings.js'

export default defineResource({
  group: RBAC_GROUP, version: 'v1', kind: 'ClusterRoleBinding', resource: 'clusterrolebindings', singular: 'clusterrolebinding', scope: 'Cluster',
  verbs: ALL_VERBS,
  schemaRef: 'io.orch.api.rbac.v1.ClusterRoleBinding',
  // roleRef is a value struct upstream, its fields without omitempty.
  zeroValues: { roleRef: { apiGroup: '', kind: '', name: '' } },
  strategy: {
    default: defaultBinding,
    validate: (o) => validateBinding(o, ['ClusterRole'], false),
    validateUpdate: (o, old) => [...validateBinding(o, ['ClusterRole'], false), ...validateRoleRefUnchanged(o, old)],
    allowUnconditionalUpdate: true,
    nameRule: 'path',
  },
  table: bindingColumns(),
})
