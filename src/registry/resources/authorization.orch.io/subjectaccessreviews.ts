// SubjectAccessReview (authorization.orch.io/v1): may a given user do this (virtual: created and answered, never stored; see src/pipeline/reviews.ts).
import { defineResource } from '../../define.js'

export default defineResource({
  group: 'authorization.orch.io', version: 'v1', kind: 'SubjectAccessReview', resource: 'subjectaccessreviews', singular: 'subjectaccessreview', scope: 'Cluster',
  verbs: ['create'],
  schemaRef: 'io.orch.api.authorization.v1.SubjectAccessReview',
  virtual: true,
})
