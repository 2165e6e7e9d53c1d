// ReplicationController (v1).
import { defineResource, ALL_VERBS, statusSplit, generationStrategy } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldInvalid, fieldNotSupported, fieldRequired } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { ageColumn, containerColumns, formatLabels, int, nameColumn } from '../_printers.js'
import { defaultPodTemplate } from './pods.js'
import { validatePodTemplateSpec } from './pod-validation.js'

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** SetDefaults_ReplicationController. */
function defaultRC(o: Obj): void {
  if (!isObj(o.spec)) return
  const spec = o.spec
  const labels = isObj(spec.template) && isObj(spec.template.metadata) && isObj(spec.template.metadata.labels) ? spec.template.metadata.labels : undefined
  if (labels) {
    if (!isObj(spec.selector) || Object.keys(spec.selector).length === 0) spec.selector = { ...labels }
    o.metadata ??= {}
    if (!isObj(o.metadata.labels) || Object.keys(o.metadata.labels).length === 0) o.metadata.labels = { ...labels }
  }
  spec.replicas ??= 1
  defaultPodTemplate(spec.template)
}

function validateRC(o: Obj): FieldError[] {
  const errs: FieldError[] = []
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  const selector: Obj = isObj(spec.selector) ? spec.selector : {}
  if (Object.keys(selector).length === 0) errs.push(fieldRequired('spec.selector'))
  if (!isObj(spec.template)) {
    errs.push(fieldRequired('spec.template'))
    return errs
  }
  const labels = isObj(spec.template.metadata) ? spec.template.metadata.labels : undefined
  const l: Obj = isObj(labels) ? labels : {}
  if (Object.keys(selector).length > 0 && !Object.entries(selector).every(([k, v]) => l[k] === v)) {
    errs.push(fieldInvalid('spec.template.metadata.labels', labels ?? null, '`selector` does not match template `labels`'))
  }
  errs.push(...validatePodTemplateSpec(spec.template, 'spec.template'))
  const rp = isObj(spec.template.spec) ? spec.template.spec.restartPolicy : undefined
  if (rp !== undefined && rp !== 'Always') errs.push(fieldNotSupported('spec.template.spec.restartPolicy', rp, ['Always']))
  return errs
}

export default defineResource({
  group: '', version: 'v1', kind: 'ReplicationController', resource: 'replicationcontrollers', singular: 'replicationcontroller', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['rc'],
  categories: ['all'],
  subresources: ['status', 'scale'],
  // The scale selector is spec.selector, a label map: labels.SelectorFromSet(spec.selector).String().
  scale: { specReplicasPath: 'spec.replicas', statusReplicasPath: 'status.replicas', labelSelectorPath: 'spec.selector', selectorIsSet: true },
  schemaRef: 'io.orch.api.core.v1.ReplicationController',
  // value structs upstream (the template is a pointer); status.replicas has no omitempty.
  zeroValues: { spec: {}, status: { replicas: 0 } },
  strategy: generationStrategy({
    defaultGarbageCollection: { policy: 'Orphan' },
    default: defaultRC,
    validate: validateRC,
    validateUpdate: (o) => validateRC(o),
  }),
  status: statusSplit.status,
  table: [
    nameColumn(),
    { name: 'Desired', type: 'integer', description: 'Replicas is the number of desired replicas.', cell: (o) => int(o.spec?.replicas) },
    { name: 'Current', type: 'integer', description: 'Replicas is the most recently observed number of replicas.', cell: (o) => int(o.status?.replicas) },
    { name: 'Ready', type: 'integer', description: 'The number of ready replicas for this replication controller.', cell: (o) => int(o.status?.readyReplicas) },
    ageColumn(),
    ...containerColumns((o) => o.spec?.template?.spec, (o) => formatLabels(o.spec?.selector)),
  ],
  fieldSelectors: { 'status.replicas': (o) => String(int(o.status?.replicas)) },
})
