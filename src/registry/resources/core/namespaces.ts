// Namespace (v1, cluster-scoped). No deletecollection upstream.
import { defineResource, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldInvalid } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { finalizerNameErrors } from '../../../machinery/validation.js'
import { ageColumn, nameColumn } from '../_printers.js'

/** upstream v1.LabelMetadataName (`kubernetes.io/metadata.name`), rebranded. */
export const LABEL_METADATA_NAME = 'orch.io/metadata.name'

function nameLabel(o: Obj): void {
  const name = o.metadata?.name
  if (typeof name !== 'string' || name === '') return
  o.metadata.labels ??= {}
  o.metadata.labels[LABEL_METADATA_NAME] = name
}

/**
 * namespaces/status keeps everything but the status, which SetDefaults_NamespaceStatus gives the phase Active when it
 * has none (the only status a main-resource write keeps is the stored one).
 */
function prepareStatusUpdate(o: Obj, old: Obj): void {
  statusSplit.status.prepareForUpdate(o, old)
  if (o.status === undefined || o.status === null) o.status = {}
  if (typeof o.status === 'object' && !Array.isArray(o.status) && (o.status.phase === undefined || o.status.phase === '')) o.status.phase = 'Active'
}

/** upstream ValidateNamespace: each spec.finalizers name qualified, and standard or domain-prefixed (reported at spec.finalizers, unindexed as upstream). */
function validateNamespace(o: Obj): FieldError[] {
  const fins: unknown[] = Array.isArray(o.spec?.finalizers) ? o.spec.finalizers : []
  return fins.flatMap((f) => (typeof f === 'string' ? finalizerNameErrors(f, 'spec.finalizers') : []))
}

/** upstream ValidateNamespaceStatusUpdate: the phase is Active until the namespace is being deleted, then Terminating. */
function validateNamespaceStatus(o: Obj): FieldError[] {
  const phase = o.status?.phase ?? ''
  if (!o.metadata?.deletionTimestamp) {
    return phase === 'Active' ? [] : [fieldInvalid('status.Phase', phase, "may only be 'Active' if `deletionTimestamp` is empty")]
  }
  return phase === 'Terminating' ? [] : [fieldInvalid('status.Phase', phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")]
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
    validate: validateNamespace,
    // Updates of the main resource keep the stored spec.finalizers (checked by namespaces/finalize) and status.
    validateUpdate: () => [],
    allowUnconditionalUpdate: true,
    nameRule: 'label',
  },
  status: { prepareForUpdate: prepareStatusUpdate, validateUpdate: validateNamespaceStatus },
  table: [
    nameColumn(),
    { name: 'Status', type: 'string', description: 'The status of the namespace', cell: (o) => o.status?.phase ?? '' },
    ageColumn(),
  ],
  // upstream's selectable set also has a legacy `name`, but its v1 field label conversion rejects it.
  fieldSelectors: { 'status.phase': (o) => o.status?.phase ?? '' },
})
