// ValidatingAdmissionPolicyBinding (admissionregistration.orch.io/v1, cluster-scoped).
import { defineResource, ALL_VERBS } from '../../define.js'
import { defaultMatchResources } from './validatingwebhookconfigurations.js'

export default defineResource({
  group: 'admissionregistration.orch.io', version: 'v1', kind: 'ValidatingAdmissionPolicyBinding', resource: 'validatingadmissionpolicybindings', singular: 'validatingadmissionpolicybinding', scope: 'Cluster',
  verbs: ALL_VERBS,
  categories: ['api-extensions'],
  schemaRef: 'io.orch.api.admissionregistration.v1.ValidatingAdmissionPolicyBinding',
  strategy: {
    default: (o) => { if (o.spec !== null && typeof o.spec === 'object') defaultMatchResources(o.spec.matchResources) },
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
    hasGeneration: true,
  },
})
