// MutatingWebhookConfiguration (admissionregistration.orch.io/v1, cluster-scoped).
import { defineResource, ALL_VERBS } from '../../define.js'
import { defaultWebhooks, validateWebhookConfiguration } from './validatingwebhookconfigurations.js'
import { ageColumn, nameColumn } from '../_printers.js'

export default defineResource({
  group: 'admissionregistration.orch.io', version: 'v1', kind: 'MutatingWebhookConfiguration', resource: 'mutatingwebhookconfigurations', singular: 'mutatingwebhookconfiguration', scope: 'Cluster',
  verbs: ALL_VERBS,
  categories: ['api-extensions'],
  schemaRef: 'io.orch.api.admissionregistration.v1.MutatingWebhookConfiguration',
  strategy: {
    default: (o) => defaultWebhooks(o, true),
    validate: (o) => validateWebhookConfiguration(o, true),
    validateUpdate: (o) => validateWebhookConfiguration(o, true),
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
    hasGeneration: true,
  },
  table: [
    nameColumn(),
    { name: 'Webhooks', type: 'integer', description: 'How many webhooks the configuration registers.', cell: (o) => (Array.isArray(o.webhooks) ? o.webhooks.length : 0) },
    ageColumn(),
  ],
})
