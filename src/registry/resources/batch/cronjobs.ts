// CronJob (batch/v1).
import { defineResource, ALL_VERBS, statusSplit, generationStrategy } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldInvalid, fieldNotSupported, fieldRequired } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { ageColumn, containerColumns, formatLabelSelector, nameColumn, since } from '../_printers.js'
import { defaultPodTemplate } from '../core/pods.js'
import { validateJobSpec } from './jobs.js'

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** A CronJob name leaves room for the 11-character suffix of its jobs. */
export const CRONJOB_NAME_MAX = 52

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

function validateCronJob(o: Obj): FieldError[] {
  const errs: FieldError[] = []
  const name = o.metadata?.name
  if (typeof name === 'string' && name.length > CRONJOB_NAME_MAX) errs.push(fieldInvalid('metadata.name', name, `must be no more than ${CRONJOB_NAME_MAX} characters`))
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  if (typeof spec.schedule !== 'string' || spec.schedule === '') errs.push(fieldRequired('spec.schedule'))
  const jobSpec = isObj(spec.jobTemplate) && isObj(spec.jobTemplate.spec) ? spec.jobTemplate.spec : undefined
  errs.push(...validateJobSpec(jobSpec, 'spec.jobTemplate.spec'))
  // The jobs a CronJob creates always get a generated selector (upstream ValidateJobTemplateSpec).
  if (isObj(jobSpec?.selector)) errs.push(fieldInvalid('spec.jobTemplate.spec.selector', jobSpec.selector, '`selector` will be auto-generated'))
  if (jobSpec?.manualSelector === true) errs.push(fieldNotSupported('spec.jobTemplate.spec.manualSelector', true, ['nil', 'false']))
  return errs
}

const boolPtr = (v: unknown) => (typeof v === 'boolean' ? (v ? 'True' : 'False') : '<unset>')

export default defineResource({
  group: 'batch', version: 'v1', kind: 'CronJob', resource: 'cronjobs', singular: 'cronjob', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['cj'],
  categories: ['all'],
  subresources: ['status'],
  schemaRef: 'io.orch.api.batch.v1.CronJob',
  strategy: generationStrategy({
    default: defaultCronJob,
    validate: validateCronJob,
    validateUpdate: (o) => validateCronJob(o),
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
