// ValidatingAdmissionPolicy (admissionregistration.orch.io/v1, cluster-scoped).
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import { defaultMatchResources } from './validatingwebhookconfigurations.js'
import { ageColumn, nameColumn } from '../_printers.js'

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
  table: [
    nameColumn(),
    { name: 'Validations', type: 'integer', description: 'How many validation rules the policy has.', cell: (o) => (Array.isArray(o.spec?.validations) ? o.spec.validations.length : 0) },
    {
      name: 'ParamKind', type: 'string', description: 'The kind of the objects that parameterize the policy (apiVersion/kind).',
      cell: (o) => { const k = o.spec?.paramKind; return k !== null && typeof k === 'object' ? `${k.apiVersion ?? ''}/${k.kind ?? ''}` : '<unset>' },
    },
    ageColumn(),
  ],
})
