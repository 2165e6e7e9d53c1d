// FlowSchema (flowcontrol.apiserver.orch.io/v1, cluster-scoped).
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import { ageColumn, nameColumn } from '../_printers.js'
import { defaultFlowSchema, validateFlowSchema, validateFlowSchemaStatus, validateFlowSchemaUpdate } from './validation.js'

export default defineResource({
  group: 'flowcontrol.apiserver.orch.io', version: 'v1', kind: 'FlowSchema', resource: 'flowschemas', singular: 'flowschema', scope: 'Cluster',
  verbs: ALL_VERBS,
  subresources: ['status'],
  schemaRef: 'io.orch.api.flowcontrol.v1.FlowSchema',
  // value structs upstream; matchingPrecedence (defaulted first) has no omitempty.
  zeroValues: { spec: { priorityLevelConfiguration: { name: '' }, matchingPrecedence: 0 }, status: {} },
  strategy: {
    ...statusSplit.strategy,
    default: defaultFlowSchema,
    validate: validateFlowSchema,
    validateUpdate: validateFlowSchemaUpdate,
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
    hasGeneration: true,
  },
  status: { ...statusSplit.status, validateUpdate: (o) => validateFlowSchemaStatus(o.status) },
  table: [
    nameColumn(),
    { name: 'PriorityLevel', type: 'string', cell: (o) => o.spec?.priorityLevelConfiguration?.name ?? '' },
    { name: 'MatchingPrecedence', type: 'integer', cell: (o) => o.spec?.matchingPrecedence ?? 0 },
    { name: 'DistinguisherMethod', type: 'string', cell: (o) => o.spec?.distinguisherMethod?.type ?? '<none>' },
    ageColumn(),
    { name: 'MissingPL', type: 'string', cell: (o) => missingPL(o) },
  ],
})

/** The Dangling condition's status, as upstream's MissingPL column shows it. */
function missingPL(o: Record<string, any>): string {
  const c = (Array.isArray(o.status?.conditions) ? o.status.conditions : []).find((x: Record<string, any>) => x?.type === 'Dangling')
  return c?.status ?? '?'
}
