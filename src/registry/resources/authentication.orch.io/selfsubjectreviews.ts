// SelfSubjectReview (authentication.orch.io/v1): the attributes of the requesting user (virtual: created and answered, never stored; see src/pipeline/reviews.ts).
import { defineResource } from '../../define.js'

export default defineResource({
  group: 'authentication.orch.io', version: 'v1', kind: 'SelfSubjectReview', resource: 'selfsubjectreviews', singular: 'selfsubjectreview', scope: 'Cluster',
  verbs: ['create'],
  schemaRef: 'io.orch.api.authentication.v1.SelfSubjectReview',
  virtual: true,
})
