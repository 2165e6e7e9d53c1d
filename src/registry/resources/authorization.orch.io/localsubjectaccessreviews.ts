// LocalSubjectAccessReview (authorization.orch.io/v1): may a given user do this in the request's namespace (virtual: created and answered, never stored; see src/pipeline/reviews.ts).
import { defineResource } from '../../define.js'

export default defineResource({
  group: 'authorization.orch.io', version: 'v1', kind: 'LocalSubjectAccessReview', resource: 'localsubjectaccessreviews', singular: 'localsubjectaccessreview', scope: 'Namespaced',
  verbs: ['create'],
  schemaRef: 'io.orch.api.authorization.v1.LocalSubjectAccessReview',
  virtual: true,
})
