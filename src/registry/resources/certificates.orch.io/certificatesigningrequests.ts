// CertificateSigningRequest (certificates.orch.io/v1, cluster-scoped).
// The requesting user's identity (spec.username, uid, groups, extra) and the approval sub-resource are filled elsewhere.
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'

export default defineResource({
  group: 'certificates.orch.io', version: 'v1', kind: 'CertificateSigningRequest', resource: 'certificatesigningrequests', singular: 'certificatesigningrequest', scope: 'Cluster',
  verbs: ALL_VERBS,
  shortNames: ['csr'],
  subresources: ['status'],
  schemaRef: 'io.orch.api.certificates.v1.CertificateSigningRequest',
  strategy: { ...statusSplit.strategy, allowUnconditionalUpdate: true, nameRule: 'subdomain' },
  status: statusSplit.status,
  fieldSelectors: { 'spec.signerName': (o) => o.spec?.signerName ?? '' },
})
