// Job (batch/v1).
import { defineResource, ALL_VERBS, statusSplit, generationStrategy } from '../../define.js'
import type { Obj } from '../../define.js'
import { ageColumn, containerColumns, formatLabelSelector, humanDuration, int, nameColumn, parseTime } from '../_printers.js'
import { defaultPodTemplate } from '../core/pods.js'
import { CONTROLLER_UID_LABEL, JOB_NAME_LABEL, LEGACY_CONTROLLER_UID_LABEL, LEGACY_JOB_NAME_LABEL, hasCondition, hasPrefixedLabels, validateJob, validateJobStatusUpdate, validateJobUpdate } from './job-validation.js'

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** SetDefaults_Job. */
function defaultJob(o: Obj): void {
  const spec = o.spec
  if (!isObj(spec)) return
  if (spec.completions === undefined && spec.parallelism === undefined) { spec.completions = 1; spec.parallelism = 1 }
  spec.parallelism ??= 1
  spec.backoffLimit ??= spec.backoffLimitPerIndex !== undefined && spec.backoffLimitPerIndex !== null ? 2147483647 : 6
  // A Job without labels of its own takes the labels its template was given (before any are generated).
  const templateLabels = isObj(spec.template) && isObj(spec.template.metadata) ? spec.template.metadata.labels : undefined
  if (isObj(templateLabels) && isObj(o.metadata) && (!isObj(o.metadata.labels) || Object.keys(o.metadata.labels).length === 0)) {
    o.metadata.labels = { ...templateLabels }
  }
  spec.completionMode ??= 'NonIndexed'
  spec.suspend ??= false
  spec.podReplacementPolicy ??= isObj(spec.podFailurePolicy) ? 'Failed' : 'TerminatingOrFailed'
  spec.manualSelector ??= false
  if (isObj(spec.podFailurePolicy) && Array.isArray(spec.podFailurePolicy.rules)) {
    for (const r of spec.podFailurePolicy.rules) {
      if (!isObj(r) || !Array.isArray(r.onPodConditions)) continue
      for (const p of r.onPodConditions) if (isObj(p) && (p.status === undefined || p.status === '')) p.status = 'True'
    }
  }
  defaultPodTemplate(spec.template)
}

/** generateSelector: without manualSelector the selector is the controller-uid label (needs metadata.uid). */
export function generateJobSelector(o: Obj): void {
  const spec = o.spec
  const uid = o.metadata?.uid
  if (!isObj(spec) || spec.manualSelector === true || typeof uid !== 'string' || uid === '') return
  spec.template ??= {}
  if (!isObj(spec.template)) return
  spec.template.metadata ??= {}
  const tm = spec.template.metadata
  tm.labels ??= {}
  const name = o.metadata?.name ?? ''
  for (const k of [LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL]) if (!(k in tm.labels)) tm.labels[k] = name
  for (const k of [LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL]) if (!(k in tm.labels)) tm.labels[k] = uid
  spec.selector ??= {}
  spec.selector.matchLabels ??= {}
  if (!(CONTROLLER_UID_LABEL in spec.selector.matchLabels)) spec.selector.matchLabels[CONTROLLER_UID_LABEL] = uid
}

function jobStatus(o: Obj): string {
  if (hasCondition(o, 'Complete')) return 'Complete'
  if (hasCondition(o, 'Failed')) return 'Failed'
  if (o.metadata?.deletionTimestamp) return 'Terminating'
  if (hasCondition(o, 'Suspended')) return 'Suspended'
  if (hasCondition(o, 'FailureTarget')) return 'FailureTarget'
  if (hasCondition(o, 'SuccessCriteriaMet')) return 'SuccessCriteriaMet'
  return 'Running'
}

function completions(o: Obj): string {
  const succeeded = int(o.status?.succeeded)
  if (typeof o.spec?.completions === 'number') return `${succeeded}/${o.spec.completions}`
  const parallelism = int(o.spec?.parallelism)
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`
}

function duration(o: Obj, now: number): string {
  const start = parseTime(o.status?.startTime)
  if (start === undefined) return ''
  const end = parseTime(o.status?.completionTime)
  return humanDuration((end ?? now) - start)
}

export default defineResource({
  group: 'batch', version: 'v1', kind: 'Job', resource: 'jobs', singular: 'job', scope: 'Namespaced',
  verbs: ALL_VERBS,
  categories: ['all'],
  subresources: ['status'],
  schemaRef: 'io.orch.api.batch.v1.Job',
  // value structs upstream; every status field is omitempty.
  zeroValues: { spec: { template: { metadata: {}, spec: {} } }, status: {} },
  strategy: generationStrategy({
    defaultGarbageCollection: { policy: 'Orphan', warning: 'child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning' },
    default: defaultJob,
    prepareForCreate: (o) => { generateJobSelector(o); delete o.status },
    validate: (o) => validateJob(o, true),
    // A job created before the batch.orch.io/ labels existed is not required to carry them.
    validateUpdate: (o, old) => [...validateJob(o, hasPrefixedLabels(old)), ...validateJobUpdate(o, old)],
  }),
  status: { ...statusSplit.status, validateUpdate: validateJobStatusUpdate },
  table: [
    nameColumn(),
    { name: 'Status', type: 'string', description: 'Status of the job.', cell: (o) => jobStatus(o) },
    { name: 'Completions', type: 'string', description: 'The number of pods which reached phase Succeeded.', cell: (o) => completions(o) },
    { name: 'Duration', type: 'string', description: 'Time required to complete the job.', cell: (o, now) => duration(o, now) },
    ageColumn(),
    ...containerColumns((o) => o.spec?.template?.spec, (o) => formatLabelSelector(o.spec?.selector)),
  ],
  fieldSelectors: { 'status.successful': (o) => String(int(o.status?.succeeded)) },
})
