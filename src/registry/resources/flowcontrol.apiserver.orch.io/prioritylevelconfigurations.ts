// PriorityLevelConfiguration (flowcontrol.apiserver.orch.io/v1, cluster-scoped).
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import { ageColumn, nameColumn } from '../_printers.js'
import { defaultPriorityLevel, validatePriorityLevel, validatePriorityLevelStatus, validatePriorityLevelUpdate } from './validation.js'

export default defineResource({
  group: 'flowcontrol.apiserver.orch.io', version: 'v1', kind: 'PriorityLevelConfiguration', resource: 'prioritylevelconfigurations', singular: 'prioritylevelconfiguration', scope: 'Cluster',
  verbs: ALL_VERBS,
  subresources: ['status'],
  schemaRef: 'io.orch.api.flowcontrol.v1.PriorityLevelConfiguration',
  // value structs upstream; spec.type has no omitempty.
  zeroValues: { spec: { type: '' }, status: {} },
  strategy: {
    ...statusSplit.strategy,
    default: defaultPriorityLevel,
    validate: validatePriorityLevel,
    validateUpdate: validatePriorityLevelUpdate,
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
    hasGeneration: true,
  },
  status: { ...statusSplit.status, validateUpdate: (o) => validatePriorityLevelStatus(o.status) },
  table: [
    nameColumn(),
    { name: 'Type', type: 'string', cell: (o) => o.spec?.type ?? '' },
    { name: 'NominalConcurrencyShares', type: 'string', cell: (o) => String(o.spec?.limited?.nominalConcurrencyShares ?? o.spec?.exempt?.nominalConcurrencyShares ?? '<none>') },
    { name: 'Queues', type: 'string', cell: (o) => String(o.spec?.limited?.limitResponse?.queuing?.queues ?? '<none>') },
    { name: 'HandSize', type: 'string', cell: (o) => String(o.spec?.limited?.limitResponse?.queuing?.handSize ?? '<none>') },
    { name: 'QueueLengthLimit', type: 'string', cell: (o) => String(o.spec?.limited?.limitResponse?.queuing?.queueLengthLimit ?? '<none>') },
    ageColumn(),
  ],
})
