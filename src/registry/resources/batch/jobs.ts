// Job (batch/v1).
import { isDeepStrictEqual } from 'node:util'
import { defineResource, ALL_VERBS, statusSplit, generationStrategy } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldInvalid, fieldNotSupported } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { ageColumn, containerColumns, formatLabelSelector, humanDuration, int, nameColumn, parseTime } from '../_printers.js'
import { defaultPodTemplate, selectorMatches, validatePodSpec } from '../core/pods.js'

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** upstream batch.kubernetes.io labels, rebranded, and their legacy unprefixed forms. */
export const JOB_NAME_LABEL = 'batch.orch.io/job-name'
export const CONTROLLER_UID_LABEL = 'batch.orch.io/controller-uid'
export const LEGACY_JOB_NAME_LABEL = 'job-name'
export const LEGACY_CONTROLLER_UID_LABEL = 'controller-uid'

/** SetDefaults_Job. */
function defaultJob(o: Obj): void {
  const spec = o.spec
  if (!isObj(spec)) return
  if (spec.completions === undefined && spec.parallelism === undefined) { spec.completions = 1; spec.parallelism = 1 }
  spec.parallelism ??= 1
  spec.backoffLimit ??= spec.backoffLimitPerIndex !== undefined && spec.backoffLimitPerIndex !== null ? 2147483647 : 6
  spec.completionMode ??= 'NonIndexed'
  spec.suspend ??= false
  spec.podReplacementPolicy ??= isObj(spec.podFailurePolicy) ? 'Failed' : 'TerminatingOrFailed'
  if (isObj(spec.podFailurePolicy) && Array.isArray(spec.podFailurePolicy.rules)) {
    for (const r of spec.podFailurePolicy.rules) if (isObj(r) && Array.isArray(r.onPodConditions)) for (const p of r.onPodConditions) if (isObj(p)) p.status ??= 'True'
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

/** The job template checks, at `path` (`spec` for a Job, `spec.jobTemplate.spec` for a CronJob). */
export function validateJobSpec(spec: unknown, path: string): FieldError[] {
  const errs: FieldError[] = []
  const s: Obj = isObj(spec) ? spec : {}
  const template: Obj = isObj(s.template) ? s.template : {}
  if (isObj(s.selector)) {
    const labels = isObj(template.metadata) ? template.metadata.labels : undefined
    if (!selectorMatches(s.selector, labels)) errs.push(fieldInvalid(`${path}.template.metadata.labels`, labels ?? null, '`selector` does not match template `labels`'))
  }
  errs.push(...validatePodSpec(template.spec, `${path}.template.spec`))
  const rp = isObj(template.spec) ? template.spec.restartPolicy : undefined
  if (rp !== 'OnFailure' && rp !== 'Never') errs.push(fieldNotSupported(`${path}.template.spec.restartPolicy`, rp ?? '', ['OnFailure', 'Never']))
  return errs
}

function hasCondition(o: Obj, type: string): boolean {
  return Array.isArray(o.status?.conditions) && o.status.conditions.some((c: Obj) => c?.type === type && c?.status === 'True')
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

/** Template fields a suspended job that never started may still change (upstream's mutable scheduling directives). */
const SCHEDULING_DIRECTIVES = ['nodeSelector', 'affinity', 'tolerations', 'schedulingGates']

/** What a Job keeps once created (upstream ValidateJobSpecUpdate): its selector, template, completions and modes. */
export function validateJobUpdate(o: Obj, old: Obj): FieldError[] {
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  const prev: Obj = isObj(old.spec) ? old.spec : {}
  const errs: FieldError[] = []
  const immutable = (key: string) => {
    if (!isDeepStrictEqual(spec[key], prev[key])) errs.push(fieldInvalid(`spec.${key}`, spec[key] ?? null, 'field is immutable'))
  }
  immutable('selector')
  immutable('completionMode')
  immutable('podFailurePolicy')
  immutable('backoffLimitPerIndex')
  immutable('successPolicy')
  immutable('managedBy')
  // An Indexed job may scale its completions together with its parallelism (elastic indexed jobs).
  const elastic = spec.completionMode === 'Indexed' && spec.completions === spec.parallelism && prev.completions === prev.parallelism
  if (!elastic) immutable('completions')
  if (!isDeepStrictEqual(spec.template, prev.template)) {
    const suspendedNeverStarted = prev.suspend === true && old.status?.startTime === undefined
    let allowed = false
    if (suspendedNeverStarted && isObj(spec.template) && isObj(prev.template)) {
      const strip = (tpl: Obj): Obj => {
        const podSpec: Obj = { ...(isObj(tpl.spec) ? tpl.spec : {}) }
        for (const k of SCHEDULING_DIRECTIVES) delete podSpec[k]
        const meta: Obj = { ...(isObj(tpl.metadata) ? tpl.metadata : {}) }
        delete meta.labels
        delete meta.annotations
        return { ...tpl, metadata: meta, spec: podSpec }
      }
      allowed = isDeepStrictEqual(strip(spec.template), strip(prev.template))
    }
    if (!allowed) errs.push(fieldInvalid('spec.template', spec.template ?? null, 'field is immutable'))
  }
  return errs
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
  strategy: generationStrategy({
    defaultGarbageCollection: { policy: 'Orphan', warning: 'child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning' },
    default: defaultJob,
    prepareForCreate: (o) => { generateJobSelector(o); delete o.status },
    validate: (o) => validateJobSpec(o.spec, 'spec'),
    validateUpdate: (o, old) => [...validateJobSpec(o.spec, 'spec'), ...validateJobUpdate(o, old)],
  }),
  status: statusSplit.status,
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
