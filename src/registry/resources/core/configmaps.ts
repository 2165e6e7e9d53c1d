// ConfigMap (v1).
import { defineResource, ALL_VERBS } from '../../define.js'
import { ageColumn, nameColumn } from '../_printers.js'
import { validateConfigMap, validateConfigMapUpdate } from './config-data.js'

const count = (m: unknown) => (m !== null && typeof m === 'object' ? Object.keys(m).length : 0)

export default defineResource({
  group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps', singular: 'configmap', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['cm'],
  schemaRef: 'io.orch.api.core.v1.ConfigMap',
  strategy: { allowUnconditionalUpdate: true, nameRule: 'subdomain', validate: validateConfigMap, validateUpdate: validateConfigMapUpdate },
  table: [
    nameColumn(),
    { name: 'Data', type: 'integer', description: 'Data contains the configuration data.', cell: (o) => count(o.data) + count(o.binaryData) },
    ageColumn(),
  ],
})
