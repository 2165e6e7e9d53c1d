// Namespace (v1, cluster-scoped). No deletecollection upstream.
import { defineResource, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'
import { ageColumn, nameColumn } from '../_printers.js'

/** upstream v1.LabelMetadataName (`kubernetes.io/metadata.name`), rebranded. */
export const LABEL_METADATA_NAME = 'orch.io/metadata.name'

function nameLabel(o: Obj): void {
  const name = o.metadata?.name
  if (typeof name !== 'string' || name === '') return
  o.metadata.labels ??= {}
  o.metadata.labels[LABEL_METADATA_NAME] = name
}

export default defineResource({
  group: '', version: 'v1', kind: 'Namespace', resource: 'namespaces', singular: 'namespace', scope: 'Cluster',
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  shortNames: ['ns'],
  subresources: ['status'],
  virtualSubresources: [{ name: 'finalize', group: '', version: 'v1', kind: 'Namespace', verbs: ['update'] }],
  schemaRef: 'io.orch.api.core.v1.Namespace',
  // spec and status are value structs upstream.
  zeroValues: { spec: {}, status: {} },
  strategy: {
    // SetDefaults_Namespace and the strategy's Canonicalize keep the name label equal to the name.
    default: nameLabel,
    prepareForCreate: (o) => {
      o.status = { phase: 'Active' }
      // The lifecycle finalizer: the namespace controller removes it (namespaces/finalize) once the namespace is empty.
      const fins: string[] = Array.isArray(o.spec?.finalizers) ? o.spec.finalizers : []
      o.spec = { ...(o.spec ?? {}), finalizers: fins.includes('kubernetes') ? fins : [...fins, 'kubernetes'] }
      nameLabel(o)
    },
    prepareForUpdate: (o, old) => {
      statusSplit.strategy.prepareForUpdate(o, old)
      // spec.finalizers change only through the finalize sub-resource.
      const oldFinalizers = old.spec?.finalizers
      if (oldFinalizers === undefined) { if (o.spec) delete o.spec.finalizers } else { o.spec ??= {}; o.spec.finalizers = oldFinalizers }
      nameLabel(o)
    },
    allowUnconditionalUpdate: true,
    nameRule: 'label',
  },
  status: statusSplit.status,
  table: [
    nameColumn(),
    { name: 'Status', type: 'string', description: 'The status of the namespace', cell: (o) => o.status?.phase ?? '' },
    ageColumn(),
  ],
  // upstream's selectable set also has a legacy `name`, but its v1 field label conversion rejects it.
  fieldSelectors: { 'status.phase': (o) => o.status?.phase ?? '' },
})
