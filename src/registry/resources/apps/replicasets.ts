// ReplicaSet (apps/v1).
import { defineResource, ALL_VERBS, statusSplit, generationStrategy } from '../../define.js'
import { ageColumn, containerColumns, formatLabelSelector, int, nameColumn } from '../_printers.js'
import { defaultPodTemplate } from '../core/pods.js'
import { validateWorkloadSpec } from '../core/pod-validation.js'
import { validateSelectorImmutable } from './deployments.js'

export default defineResource({
  group: 'apps', version: 'v1', kind: 'ReplicaSet', resource: 'replicasets', singular: 'replicaset', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['rs'],
  categories: ['all'],
  subresources: ['status', 'scale'],
  // The scale selector is spec.selector, a LabelSelector: metav1.LabelSelectorAsSelector(spec.selector).String().
  scale: { specReplicasPath: 'spec.replicas', statusReplicasPath: 'status.replicas', labelSelectorPath: 'spec.selector' },
  schemaRef: 'io.orch.api.apps.v1.ReplicaSet',
  // value structs upstream; status.replicas has no omitempty.
  zeroValues: { spec: { template: { metadata: {}, spec: {} } }, status: { replicas: 0 } },
  strategy: generationStrategy({
    // SetDefaults_ReplicaSet
    default: (o) => {
      if (o.spec === null || typeof o.spec !== 'object') return
      o.spec.replicas ??= 1
      defaultPodTemplate(o.spec.template)
    },
    // upstream says "deployment" in this message for replica sets too.
    validate: (o) => validateWorkloadSpec(o, 'deployment'),
    validateUpdate: (o, old) => [...validateWorkloadSpec(o, 'deployment'), ...validateSelectorImmutable(o, old)],
  }),
  status: statusSplit.status,
  table: [
    nameColumn(),
    { name: 'Desired', type: 'integer', description: 'Replicas is the number of desired replicas.', cell: (o) => int(o.spec?.replicas) },
    { name: 'Current', type: 'integer', description: 'Replicas is the most recently observed number of replicas.', cell: (o) => int(o.status?.replicas) },
    { name: 'Ready', type: 'integer', description: 'The number of ready replicas for this replica set.', cell: (o) => int(o.status?.readyReplicas) },
    ageColumn(),
    ...containerColumns((o) => o.spec?.template?.spec, (o) => formatLabelSelector(o.spec?.selector)),
  ],
  fieldSelectors: { 'status.replicas': (o) => String(int(o.status?.replicas)) },
})
