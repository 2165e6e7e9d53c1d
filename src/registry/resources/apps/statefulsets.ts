// StatefulSet (apps/v1).
import { defineResource, ALL_VERBS, statusSplit, generationStrategy } from '../../define.js'
import type { Obj } from '../../define.js'
import { ageColumn, containerColumns, int, nameColumn } from '../_printers.js'
import { defaultPodTemplate } from '../core/pods.js'
import { validateWorkloadSpec } from '../core/pod-validation.js'
import { validateSelectorImmutable } from './deployments.js'

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** SetDefaults_StatefulSet (apps/v1). */
function defaultStatefulSet(o: Obj): void {
  const spec = o.spec
  if (!isObj(spec)) return
  if (spec.podManagementPolicy === undefined || spec.podManagementPolicy === '') spec.podManagementPolicy = 'OrderedReady'
  spec.updateStrategy ??= {}
  if (isObj(spec.updateStrategy)) {
    if (spec.updateStrategy.type === undefined || spec.updateStrategy.type === '') spec.updateStrategy.type = 'RollingUpdate'
    if (spec.updateStrategy.type === 'RollingUpdate') {
      spec.updateStrategy.rollingUpdate ??= {}
      if (isObj(spec.updateStrategy.rollingUpdate)) spec.updateStrategy.rollingUpdate.partition ??= 0
    }
  }
  spec.persistentVolumeClaimRetentionPolicy ??= {}
  if (isObj(spec.persistentVolumeClaimRetentionPolicy)) {
    const p = spec.persistentVolumeClaimRetentionPolicy
    if (p.whenDeleted === undefined || p.whenDeleted === '') p.whenDeleted = 'Retain'
    if (p.whenScaled === undefined || p.whenScaled === '') p.whenScaled = 'Retain'
  }
  spec.replicas ??= 1
  spec.revisionHistoryLimit ??= 10
  defaultPodTemplate(spec.template)
  if (Array.isArray(spec.volumeClaimTemplates)) {
    for (const t of spec.volumeClaimTemplates) {
      if (isObj(t) && isObj(t.spec)) t.spec.volumeMode ??= 'Filesystem'
      if (isObj(t)) { t.status ??= {}; if (isObj(t.status)) t.status.phase ??= 'Pending' }
    }
  }
}

export default defineResource({
  group: 'apps', version: 'v1', kind: 'StatefulSet', resource: 'statefulsets', singular: 'statefulset', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['sts'],
  categories: ['all'],
  subresources: ['status', 'scale'],
  // The scale selector is spec.selector, a LabelSelector: metav1.LabelSelectorAsSelector(spec.selector).String().
  scale: { specReplicasPath: 'spec.replicas', statusReplicasPath: 'status.replicas', labelSelectorPath: 'spec.selector' },
  schemaRef: 'io.orch.api.apps.v1.StatefulSet',
  // value structs upstream; spec.serviceName, status.replicas and status.availableReplicas have no omitempty.
  zeroValues: { spec: { template: { metadata: {}, spec: {} }, serviceName: '', updateStrategy: {} }, status: { replicas: 0, availableReplicas: 0 } },
  strategy: generationStrategy({
    default: defaultStatefulSet,
    validate: (o) => validateWorkloadSpec(o, 'statefulset'),
    validateUpdate: (o, old) => [...validateWorkloadSpec(o, 'statefulset'), ...validateSelectorImmutable(o, old)],
  }),
  status: statusSplit.status,
  table: [
    nameColumn(),
    { name: 'Ready', type: 'string', description: 'Number of the pod with ready state', cell: (o) => `${int(o.status?.readyReplicas)}/${int(o.spec?.replicas)}` },
    ageColumn(),
    ...containerColumns((o) => o.spec?.template?.spec),
  ],
})
