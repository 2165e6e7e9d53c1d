// PodTemplate (v1). DELETE answers with the deleted object.
import { defineResource, ALL_VERBS } from '../../define.js'
import { defaultPodTemplate } from './pods.js'
import { validatePodTemplateSpec } from './pod-validation.js'
import { containerColumns, formatLabels, nameColumn } from '../_printers.js'

export default defineResource({
  group: '', version: 'v1', kind: 'PodTemplate', resource: 'podtemplates', singular: 'podtemplate', scope: 'Namespaced',
  verbs: ALL_VERBS,
  schemaRef: 'io.orch.api.core.v1.PodTemplate',
  // the template is a value struct upstream.
  zeroValues: { template: { metadata: {}, spec: {} } },
  strategy: {
    default: (o) => defaultPodTemplate(o.template),
    // upstream ValidatePodTemplate / ValidatePodTemplateUpdate: the template as any pod template, on create and update.
    validate: (o) => validatePodTemplateSpec(o.template, 'template'),
    validateUpdate: (o) => validatePodTemplateSpec(o.template, 'template'),
    allowUnconditionalUpdate: true,
    returnDeletedObject: true,
    nameRule: 'subdomain',
    // upstream's strategy sets generation 1 on create and bumps it when the template changes.
    hasGeneration: true,
  },
  table: [
    nameColumn(),
    // The container columns of the workloads, shown here without -o wide.
    ...containerColumns((o) => o.template?.spec).map((c) => ({ ...c, priority: 0 })),
    { name: 'Pod Labels', type: 'string', description: 'The labels of the pods made from the template.', cell: (o) => formatLabels(o.template?.metadata?.labels) },
  ],
})
