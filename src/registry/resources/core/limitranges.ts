// LimitRange (v1).
import { defineResource, ALL_VERBS } from '../../define.js'

export default defineResource({
  group: '', version: 'v1', kind: 'LimitRange', resource: 'limitranges', singular: 'limitrange', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['limits'],
  schemaRef: 'io.orch.api.core.v1.LimitRange',
  strategy: { allowUnconditionalUpdate: true, nameRule: 'subdomain' },
})
