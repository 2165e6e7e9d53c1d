// PodTemplate (v1). DELETE answers with the deleted object.
import { defineResource, ALL_VERBS } from '../../define.js'
import { defaultPodTemplate } from './pods.js'

export default defineResource({
  group: '', version: 'v1', kind: 'PodTemplate', resource: 'podtemplates', singular: 'podtemplate', scope: 'Namespaced',
  verbs: ALL_VERBS,
  schemaRef: 'io.orch.api.core.v1.PodTemplate',
  strategy: {
    default: (o) => defaultPodTemplate(o.template),
    allowUnconditionalUpdate: true,
    returnDeletedObject: true,
    nameRule: 'subdomain',
  },
})
