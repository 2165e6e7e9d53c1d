// ControllerRevision (apps/v1).
import { defineResource, ALL_VERBS } from '../../define.js'

export default defineResource({
  group: 'apps', version: 'v1', kind: 'ControllerRevision', resource: 'controllerrevisions', singular: 'controllerrevision', scope: 'Namespaced',
  verbs: ALL_VERBS,
  schemaRef: 'io.orch.api.apps.v1.ControllerRevision',
  strategy: { allowUnconditionalUpdate: true, nameRule: 'subdomain' },
})
