// ValidatingAdmissionPolicy (admissionregistration.orch.io/v1, cluster-scoped).
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import { defaultMatchResources } from './validatingwebhookconfigurations.js'

export default defineResource({
  group: 'admissionregistration.orch.io', version: 'v1', kind: 'ValidatingAdmissionPolicy', resource: 'validatingadmissionpolicies', singular: 'validatingadmissionpolicy', scope: 'Cluster',
  verbs: ALL_VERBS,
  categories: ['api-extensions'],
  subresources: ['status'],
  schemaRef: 'io.orch.api.admissionregistration.v1.ValidatingAdmissionPolicy',
  strategy: {
    ...statusSplit.strategy,
    // SetDefaults_ValidatingAdmissionPolicySpec
    default: (o) => {
      if (o.spec === null || typeof o.spec !== 'object') return
      o.spec.failurePolicy ??= 'Fail'
      defaultMatchResources(o.spec.matchConstraints)
    },
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
    hasGeneration: true,
  },
  status: statusSplit.status,
})
