// Black-box: CronJob schedule, time zone, policy and limit checks (upstream ValidateCronJobCreate/Update), and the pod spec's serviceAccount alias.
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'

type Test = import('tap').Test
let s: TestServer
const CJS = '/apis/batch/v1/namespaces/default/cronjobs'
const MERGE = { 'content-type': 'application/merge-patch+json' }

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

const cj = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name },
  spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'i' }] } } } }, ...spec },
})

async function refused(t: Test, name: string, spec: Record<string, unknown>, field: string, detail: string): Promise<void> {
  const r = await s.request('POST', CJS, cj(name, spec))
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.reason, 'Invalid')
  t.equal(r.json?.details?.causes?.[0]?.field, field, `${name}: field`)
  t.equal(r.json?.message, `CronJob.batch "${name}" is invalid: ${field}: ${detail}`)
  t.equal((await s.request('GET', `${CJS}/${name}`)).status, 404, `${name} not stored`)
}

t.test('schedules upstream parses are accepted', async (t) => {
  const ok = ['0 0 1 1 *', '*/15 9-17 * * MON-FRI', '0 12 * jan,jul sun', '3/10 * ? * *', '@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly', '@every 1h30m']
  for (const [i, schedule] of ok.entries()) {
    const r = await s.request('POST', CJS, cj(`ok-${i}`, { schedule }))
    t.equal(r.status, 201, `${schedule}: ${r.text}`)
  }
})

t.test('schedules that do not parse', async (t) => {
  await refused(t, 'fields', { schedule: '* * * *' }, 'spec.schedule', 'Invalid value: "* * * *": expected exactly 5 fields, found 4: [* * * *]')
  await refused(t, 'range', { schedule: '60 * * * *' }, 'spec.schedule', 'Invalid value: "60 * * * *": end of range (60) above maximum (59): 60')
  await refused(t, 'dom', { schedule: '0 0 0 * *' }, 'spec.schedule', 'Invalid value: "0 0 0 * *": beginning of range (0) below minimum (1): 0')
  await refused(t, 'step', { schedule: '*/0 * * * *' }, 'spec.schedule', 'Invalid value: "*/0 * * * *": step of range should be a positive number: */0')
  await refused(t, 'word', { schedule: '0 0 * * someday' }, 'spec.schedule', 'Invalid value: "0 0 * * someday": failed to parse int from someday: strconv.Atoi: parsing "someday": invalid syntax')
  await refused(t, 'descriptor', { schedule: '@fortnightly' }, 'spec.schedule', 'Invalid value: "@fortnightly": unrecognized descriptor: @fortnightly')
  await refused(t, 'every', { schedule: '@every 5' }, 'spec.schedule', 'Invalid value: "@every 5": failed to parse duration @every 5: time: missing unit in duration "5"')
})

t.test('TZ in the schedule and spec.timeZone', async (t) => {
  await refused(t, 'tz', { schedule: 'TZ=UTC 0 * * * *' }, 'spec.schedule', 'Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead')
  await refused(t, 'crontz', { schedule: 'CRON_TZ=Europe/Paris 0 * * * *' }, 'spec.schedule', 'Invalid value: "CRON_TZ=Europe/Paris 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead')
  await refused(t, 'zone', { timeZone: 'Mars/Olympus' }, 'spec.timeZone', 'Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus')
  await refused(t, 'zone-chars', { timeZone: 'Europe/Par is' }, 'spec.timeZone', 'Invalid value: "Europe/Par is": unknown time zone Europe/Par is')
  await refused(t, 'zone-empty', { timeZone: '' }, 'spec.timeZone', 'Invalid value: "": timeZone must be nil or non-empty string')
  await refused(t, 'zone-local', { timeZone: 'Local' }, 'spec.timeZone', 'Invalid value: "Local": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones')
  let r = await s.request('POST', CJS, cj('zoned', { timeZone: 'America/New_York' }))
  t.equal(r.status, 201, r.text)
  r = await s.request('PATCH', `${CJS}/zoned`, { spec: { timeZone: 'Etc/UTC', schedule: '@hourly' } }, MERGE)
  t.equal(r.status, 200, r.text)
  r = await s.request('PATCH', `${CJS}/zoned`, { spec: { timeZone: 'Nowhere/Land' } }, MERGE)
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.details?.causes?.[0]?.field, 'spec.timeZone')
  t.equal((await s.request('GET', `${CJS}/zoned`)).json.spec.timeZone, 'Etc/UTC', 'nothing refused was stored')
})

t.test('policy, deadlines, history limits and the name', async (t) => {
  await refused(t, 'policy', { concurrencyPolicy: 'Sometimes' }, 'spec.concurrencyPolicy', 'Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"')
  await refused(t, 'deadline', { startingDeadlineSeconds: -1 }, 'spec.startingDeadlineSeconds', 'Invalid value: -1: must be greater than or equal to 0')
  await refused(t, 'succ', { successfulJobsHistoryLimit: -1 }, 'spec.successfulJobsHistoryLimit', 'Invalid value: -1: must be greater than or equal to 0')
  await refused(t, 'fail', { failedJobsHistoryLimit: -2 }, 'spec.failedJobsHistoryLimit', 'Invalid value: -2: must be greater than or equal to 0')
  const long = 'x'.repeat(53)
  await refused(t, long, {}, 'metadata.name', `Invalid value: "${long}": must be no more than 52 characters`)
  const r = await s.request('POST', CJS, cj('x'.repeat(52), { concurrencyPolicy: 'Forbid', startingDeadlineSeconds: 0, successfulJobsHistoryLimit: 0, failedJobsHistoryLimit: 0 }))
  t.equal(r.status, 201, r.text)
})

t.test('spec.serviceAccount is an alias of spec.serviceAccountName', async (t) => {
  const PODS = '/api/v1/namespaces/default/pods'
  const pod = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'i' }], ...spec } })
  // The ServiceAccount admission plugin admits pods of accounts that exist.
  for (const name of ['builder', 'runner']) {
    const sa = await s.request('POST', '/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } })
    t.equal(sa.status, 201, sa.text)
  }
  let r = await s.request('POST', PODS, pod('alias-only', { serviceAccount: 'builder' }))
  t.equal(r.status, 201, r.text)
  t.equal(r.json.spec.serviceAccountName, 'builder')
  t.equal(r.json.spec.serviceAccount, 'builder')
  r = await s.request('POST', PODS, pod('name-only', { serviceAccountName: 'runner' }))
  t.equal(r.json.spec.serviceAccount, 'runner', 'the alias mirrors the name on output')
  r = await s.request('POST', PODS, pod('both', { serviceAccountName: 'runner', serviceAccount: 'other' }))
  t.equal(r.json.spec.serviceAccountName, 'runner', 'the name wins')
  t.equal(r.json.spec.serviceAccount, 'runner')
  r = await s.request('GET', `${PODS}?fieldSelector=spec.serviceAccountName%3Dbuilder`)
  t.same(r.json.items.map((p: { metadata: { name: string } }) => p.metadata.name), ['alias-only'], 'selected by the name it got from the alias')
  r = await s.request('PATCH', `${PODS}/name-only`, { metadata: { labels: { a: 'b' } } }, MERGE)
  t.equal(r.status, 200, r.text)
  // Pod templates too.
  r = await s.request('POST', CJS, cj('templated', { jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', serviceAccount: 'cron-sa', containers: [{ name: 'c', image: 'i' }] } } } } }))
  t.equal(r.status, 201, r.text)
  t.equal(r.json.spec.jobTemplate.spec.template.spec.serviceAccountName, 'cron-sa')
  r = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' },
    spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { serviceAccountName: 'web', containers: [{ name: 'c', image: 'i' }] } } },
  })
  t.equal(r.status, 201, r.text)
  t.equal(r.json.spec.template.spec.serviceAccount, 'web')
})
