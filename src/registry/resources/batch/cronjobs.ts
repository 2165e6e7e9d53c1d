// CronJob (batch/v1).
import { defineResource, ALL_VERBS, statusSplit, generationStrategy } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldInvalid, fieldNotSupported, fieldRequired } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { cronScheduleError, goLocationError } from '../../../machinery/cron-schedule.js'
import { ageColumn, containerColumns, formatLabelSelector, nameColumn, since } from '../_printers.js'
import { defaultPodTemplate } from '../core/pods.js'
import { nonNegative, validateJobSpec } from './job-validation.js'

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** A CronJob name leaves room for the 11-character suffix of its jobs. */
export const CRONJOB_NAME_MAX = 52

const CONCURRENCY_POLICIES = ['Allow', 'Forbid', 'Replace']
/** Characters of one part of a zone name (IANA's naming rules, plus digits and '+' of legacy names). */
const ZONE_PART = /^[A-Za-z.\-_0-9+]{1,14}$/

/** SetDefaults_CronJob. */
function defaultCronJob(o: Obj): void {
  const spec = o.spec
  if (!isObj(spec)) return
  if (spec.concurrencyPolicy === undefined || spec.concurrencyPolicy === '') spec.concurrencyPolicy = 'Allow'
  spec.suspend ??= false
  spec.successfulJobsHistoryLimit ??= 3
  spec.failedJobsHistoryLimit ??= 1
  if (isObj(spec.jobTemplate) && isObj(spec.jobTemplate.spec)) defaultPodTemplate(spec.jobTemplate.spec.template)
}

/**
 * The schedule parses; TZ= or CRON_TZ= in it is refused on create (spec.timeZone says that now), and tolerated on an
 * update of a schedule that already had it, unless spec.timeZone is set too.
 */
function scheduleErrors(schedule: string, allowTZ: boolean, timeZone: unknown): FieldError[] {
  const errs: FieldError[] = []
  const bad = cronScheduleError(schedule)
  if (bad !== '') errs.push(fieldInvalid('spec.schedule', schedule, bad))
  const hasTZ = schedule.includes('TZ')
  if (allowTZ && hasTZ && timeZone !== undefined && timeZone !== null) {
    errs.push(fieldInvalid('spec.schedule', schedule, 'cannot use both timeZone field and TZ or CRON_TZ in schedule'))
  } else if (!allowTZ && hasTZ) {
    errs.push(fieldInvalid('spec.schedule', schedule, 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead'))
  }
  return errs
}

/** spec.timeZone: absent, or a zone of the IANA database by its name (not "Local"). */
function timeZoneErrors(tz: unknown): FieldError[] {
  if (tz === undefined || tz === null || typeof tz !== 'string') return []
  const path = 'spec.timeZone'
  if (tz === '') return [fieldInvalid(path, tz, 'timeZone must be nil or non-empty string')]
  for (const part of tz.split('/')) {
    if (part === '.' || part === '..' || part.startsWith('-') || !ZONE_PART.test(part)) return [fieldInvalid(path, tz, `unknown time zone ${tz}`)]
  }
  const errs: FieldError[] = []
  if (tz.toLowerCase() === 'local') errs.push(fieldInvalid(path, tz, 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones'))
  const bad = goLocationError(tz)
  if (bad !== '') errs.push(fieldInvalid(path, tz, bad))
  return errs
}

/** ValidateCronJobSpec; `old` is the stored spec on update. */
function validateCronJobSpec(spec: Obj, old: Obj | undefined): FieldError[] {
  const errs: FieldError[] = []
  if (typeof spec.schedule !== 'string' || spec.schedule === '') errs.push(fieldRequired('spec.schedule'))
  else errs.push(...scheduleErrors(spec.schedule, typeof old?.schedule === 'string' && old.schedule.includes('TZ'), spec.timeZone))
  nonNegative(errs, 'spec.startingDeadlineSeconds', spec.startingDeadlineSeconds)
  if (old === undefined || (old.timeZone ?? null) !== (spec.timeZone ?? null)) errs.push(...timeZoneErrors(spec.timeZone))
  if (spec.concurrencyPolicy === '') errs.push(fieldRequired('spec.concurrencyPolicy'))
  else if (spec.concurrencyPolicy !== undefined && !CONCURRENCY_POLICIES.includes(spec.concurrencyPolicy)) errs.push(fieldNotSupported('spec.concurrencyPolicy', spec.concurrencyPolicy, CONCURRENCY_POLICIES))
  const jobSpec = isObj(spec.jobTemplate) && isObj(spec.jobTemplate.spec) ? spec.jobTemplate.spec : undefined
  errs.push(...validateJobSpec(jobSpec, 'spec.jobTemplate.spec'))
  // The jobs a CronJob creates always get a generated selector (upstream ValidateJobTemplateSpec).
  if (isObj(jobSpec?.selector)) errs.push(fieldInvalid('spec.jobTemplate.spec.selector', jobSpec.selector, '`selector` will be auto-generated'))
  if (jobSpec?.manualSelector === true) errs.push(fieldNotSupported('spec.jobTemplate.spec.manualSelector', true, ['nil', 'false']))
  nonNegative(errs, 'spec.successfulJobsHistoryLimit', spec.successfulJobsHistoryLimit)
  nonNegative(errs, 'spec.failedJobsHistoryLimit', spec.failedJobsHistoryLimit)
  return errs
}

/** ValidateCronJobCreate: the spec, and a name short enough for the jobs' names (not checked on update). */
function validateCronJob(o: Obj): FieldError[] {
  const errs = validateCronJobSpec(isObj(o.spec) ? o.spec : {}, undefined)
  const name = o.metadata?.name
  if (typeof name === 'string' && name.length > CRONJOB_NAME_MAX) errs.push(fieldInvalid('metadata.name', name, `must be no more than ${CRONJOB_NAME_MAX} characters`))
  return errs
}

function validateCronJobUpdate(o: Obj, old: Obj): FieldError[] {
  return validateCronJobSpec(isObj(o.spec) ? o.spec : {}, isObj(old.spec) ? old.spec : {})
}

const boolPtr = (v: unknown) => (typeof v === 'boolean' ? (v ? 'True' : 'False') : '<unset>')

export default defineResource({
  group: 'batch', version: 'v1', kind: 'CronJob', resource: 'cronjobs', singular: 'cronjob', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['cj'],
  categories: ['all'],
  subresources: ['status'],
  schemaRef: 'io.orch.api.batch.v1.CronJob',
  // value structs upstream (the job template and its pod template too); spec.schedule has no omitempty.
  zeroValues: { spec: { schedule: '', jobTemplate: { metadata: {}, spec: { template: { metadata: {}, spec: {} } } } }, status: {} },
  strategy: generationStrategy({
    default: defaultCronJob,
    validate: validateCronJob,
    validateUpdate: validateCronJobUpdate,
  }),
  status: statusSplit.status,
  table: [
    nameColumn(),
    { name: 'Schedule', type: 'string', description: 'The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.', cell: (o) => o.spec?.schedule ?? '' },
    { name: 'Timezone', type: 'string', description: 'The time zone name for the given schedule. If not specified, this will default to the time zone of the controller manager process.', cell: (o) => (typeof o.spec?.timeZone === 'string' ? o.spec.timeZone : '<none>') },
    { name: 'Suspend', type: 'boolean', description: 'This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.', cell: (o) => boolPtr(o.spec?.suspend) },
    { name: 'Active', type: 'integer', description: 'A list of pointers to currently running jobs.', cell: (o) => (Array.isArray(o.status?.active) ? o.status.active.length : 0) },
    { name: 'Last Schedule', type: 'string', description: 'Information when was the last time the job was successfully scheduled.', cell: (o, now) => (o.status?.lastScheduleTime ? since(o.status.lastScheduleTime, now) : '<none>') },
    ageColumn(),
    ...containerColumns((o) => o.spec?.jobTemplate?.spec?.template?.spec, (o) => formatLabelSelector(o.spec?.jobTemplate?.spec?.selector)),
  ],
})
