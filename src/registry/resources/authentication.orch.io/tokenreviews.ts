// TokenReview (authentication.orch.io/v1): runs a bearer token through the token authenticators (virtual: created and answered, never stored; see src/pipeline/reviews.ts).
import { defineResource } from '../../define.js'

export default defineResource({
  group: 'authentication.orch.io', version: 'v1', kind: 'TokenReview', resource: 'tokenreviews', singular: 'tokenreview', scope: 'Cluster',
  verbs: ['create'],
  schemaRef: 'io.orch.api.authentication.v1.TokenReview',
  virtual: true,
})
