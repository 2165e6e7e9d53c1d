// SelfSubjectAccessReview (authorization.orch.io/v1): may the requesting user do this (virtual: created and answered, never stored; see src/pipeline/reviews.ts).
import { defineResource } from '../../define.js'

export default defineResource({
  group: 'authorization.orch.io', version: 'v1', kind: 'SelfSubjectAccessReview', resource: 'selfsubjectaccessreviews', singular: 'selfsubjectaccessreview', scope: 'Cluster',
  verbs: ['create'],
  schemaRef: 'io.orch.api.authorization.v1.SelfSubjectAccessReview',
  virtual: true,
})
