// Secret (v1).
import { defineResource, ALL_VERBS } from '../../define.js'
import { ageColumn, nameColumn } from '../_printers.js'
import { foldStringData, validateSecret, validateSecretUpdate } from './config-data.js'

export default defineResource({
  group: '', version: 'v1', kind: 'Secret', resource: 'secrets', singular: 'secret', scope: 'Namespaced',
  verbs: ALL_VERBS,
  schemaRef: 'io.orch.api.core.v1.Secret',
  strategy: {
    default: (o) => {
      foldStringData(o)
      if (o.type === undefined || o.type === '') o.type = 'Opaque'
    },
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
    validate: validateSecret,
    validateUpdate: validateSecretUpdate,
  },
  table: [
    nameColumn(),
    { name: 'Type', type: 'string', description: 'Used to facilitate programmatic handling of secret data.', cell: (o) => o.type ?? '' },
    { name: 'Data', type: 'integer', description: 'Contains the secret data.', cell: (o) => (o.data !== null && typeof o.data === 'object' ? Object.keys(o.data).length : 0) },
    ageColumn(),
  ],
  fieldSelectors: { type: (o) => o.type ?? '' },
})
