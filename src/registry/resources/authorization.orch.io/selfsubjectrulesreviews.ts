// SelfSubjectRulesReview (authorization.orch.io/v1): what the requesting user may do in a namespace (virtual: created and answered, never stored; see src/pipeline/reviews.ts).
import { defineResource } from '../../define.js'

export default defineResource({
  group: 'authorization.orch.io', version: 'v1', kind: 'SelfSubjectRulesReview', resource: 'selfsubjectrulesreviews', singular: 'selfsubjectrulesreview', scope: 'Cluster',
  verbs: ['create'],
  schemaRef: 'io.orch.api.authorization.v1.SelfSubjectRulesReview',
  virtual: true,
})
