// Deployment (apps/v1).
import { isDeepStrictEqual } from 'node:util'
import { defineResource, ALL_VERBS, statusSplit, generationStrategy } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldForbidden, fieldInvalid, fieldNotSupported } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { ageColumn, containerColumns, formatLabelSelector, int, nameColumn } from '../_printers.js'
import { defaultPodTemplate } from '../core/pods.js'
import { validateWorkloadSpec } from '../core/pod-validation.js'

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** SetDefaults_Deployment (apps/v1). */
function defaultDeployment(o: Obj): void {
  const spec = o.spec
  if (!isObj(spec)) return
  spec.replicas ??= 1
  spec.strategy ??= {}
  const strategy = spec.strategy
  if (isObj(strategy)) {
    if (strategy.type === undefined || strategy.type === '') strategy.type = 'RollingUpdate'
    if (strategy.type === 'RollingUpdate') {
      strategy.rollingUpdate ??= {}
      if (isObj(strategy.rollingUpdate)) {
        strategy.rollingUpdate.maxUnavailable ??= '25%'
        strategy.rollingUpdate.maxSurge ??= '25%'
      }
    }
  }
  spec.revisionHistoryLimit ??= 10
  spec.progressDeadlineSeconds ??= 600
  defaultPodTemplate(spec.template)
}

/** The strategy of a Deployment (upstream ValidateDeploymentStrategy): its type, and no rollingUpdate with Recreate. */
function validateStrategy(o: Obj): FieldError[] {
  const strategy = isObj(o.spec?.strategy) ? o.spec.strategy : {}
  const types = ['Recreate', 'RollingUpdate']
  // Absent, the defaults fill it in before validation.
  if (strategy.type !== undefined && !types.includes(strategy.type)) return [fieldNotSupported('spec.strategy.type', strategy.type, types)]
  if (strategy.type === 'Recreate' && strategy.rollingUpdate !== undefined) {
    return [fieldForbidden('spec.strategy.rollingUpdate', 'may not be specified when strategy `type` is \'Recreate\'')]
  }
  return []
}

/** apps/v1 selectors are immutable. */
export function validateSelectorImmutable(o: Obj, old: Obj): FieldError[] {
  const sel = o.spec?.selector
  return isDeepStrictEqual(sel, old.spec?.selector) ? [] : [fieldInvalid('spec.selector', sel ?? null, 'field is immutable')]
}

export default defineResource({
  group: 'apps', version: 'v1', kind: 'Deployment', resource: 'deployments', singular: 'deployment', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['deploy'],
  categories: ['all'],
  subresources: ['status', 'scale'],
  // The scale selector is spec.selector, a LabelSelector: metav1.LabelSelectorAsSelector(spec.selector).String().
  scale: { specReplicasPath: 'spec.replicas', statusReplicasPath: 'status.replicas', labelSelectorPath: 'spec.selector' },
  schemaRef: 'io.orch.api.apps.v1.Deployment',
  // value structs upstream; every status field is omitempty.
  zeroValues: { spec: { template: { metadata: {}, spec: {} }, strategy: {} }, status: {} },
  strategy: generationStrategy({
    default: defaultDeployment,
    validate: (o) => [...validateWorkloadSpec(o, 'deployment'), ...validateStrategy(o)],
    validateUpdate: (o, old) => [...validateWorkloadSpec(o, 'deployment'), ...validateStrategy(o), ...validateSelectorImmutable(o, old)],
  }),
  // deployments/status also resets the labels (upstream's reset fields: spec, metadata.labels).
  status: { ...statusSplit.status, resetPaths: [['metadata', 'labels']] },
  table: [
    nameColumn(),
    { name: 'Ready', type: 'string', description: 'Number of the pod with ready state', cell: (o) => `${int(o.status?.readyReplicas)}/${int(o.spec?.replicas)}` },
    { name: 'Up-to-date', type: 'string', description: 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.', cell: (o) => int(o.status?.updatedReplicas) },
    { name: 'Available', type: 'string', description: 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.', cell: (o) => int(o.status?.availableReplicas) },
    ageColumn(),
    ...containerColumns((o) => o.spec?.template?.spec, (o) => formatLabelSelector(o.spec?.selector)),
  ],
})
