// Black-box: Job defaulting and validation as upstream's (SetDefaults_Job, ValidateJob, ValidateJobUpdateStatus).
import t, { type Test as Tap } from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'

type Obj = Record<string, any>

let s: TestServer
const JOBS = '/apis/batch/v1/namespaces/default/jobs'
const CRONJOBS = '/apis/batch/v1/namespaces/default/cronjobs'

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

const podSpec = (extra: Obj = {}) => ({ restartPolicy: 'Never', containers: [{ name: 'c', image: 'i' }], ...extra })
const job = (name: string, spec: Obj = {}, template: Obj = {}) => ({
  apiVersion: 'batch/v1', kind: 'Job', metadata: { name },
  spec: { template: { ...template, spec: podSpec(template.spec) }, ...spec },
})
const exitRule = (onExitCodes: Obj, action = 'FailJob') => ({ podFailurePolicy: { rules: [{ action, onExitCodes }] } })
const conditionRule = (n = 1) => ({ action: 'Ignore', onPodConditions: Array.from({ length: n }, (_, i) => ({ type: `Cond${i}` })) })
const indexed = (completions: number, extra: Obj = {}) => ({ completionMode: 'Indexed', completions, parallelism: 1, ...extra })

/** The whole 422 Status of a refused write; `lines` are the field errors in order (a RegExp matches the one line). */
function assertInvalid(t: Tap, r: { status: number; json: any; text: string }, name: string, lines: string[] | RegExp): void {
  t.equal(r.status, 422, r.text)
  const b = r.json ?? {}
  t.same({ kind: b.kind, apiVersion: b.apiVersion, status: b.status, reason: b.reason, code: b.code }, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Invalid', code: 422 })
  t.same({ name: b.details?.name, group: b.details?.group, kind: b.details?.kind }, { name, group: 'batch', kind: 'Job' })
  const causes: Obj[] = b.details?.causes ?? []
  if (lines instanceof RegExp) {
    t.match(b.message, new RegExp(`^Job\\.batch "${name}" is invalid: ${lines.source}$`))
    t.equal(causes.length, 1, 'one cause')
    return
  }
  const agg = lines.length === 1 ? lines[0] : `[${lines.join(', ')}]`
  t.equal(b.message, `Job.batch "${name}" is invalid: ${agg}`)
  t.same(causes.map((c) => `${c.field}: ${c.message}`), lines, 'causes: field and message of each error')
}

interface Refused { name: string; spec?: Obj; template?: Obj; meta?: Obj; lines: string[] | RegExp }

const INVALID: Refused[] = [
  { name: 'neg-parallelism', spec: { parallelism: -1 }, lines: ['spec.parallelism: Invalid value: -1: must be greater than or equal to 0'] },
  { name: 'neg-completions', spec: { completions: -1 }, lines: ['spec.completions: Invalid value: -1: must be greater than or equal to 0'] },
  { name: 'neg-backoff', spec: { backoffLimit: -1 }, lines: ['spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0'] },
  { name: 'neg-ttl', spec: { ttlSecondsAfterFinished: -1 }, lines: ['spec.ttlSecondsAfterFinished: Invalid value: -1: must be greater than or equal to 0'] },
  { name: 'zero-deadline', spec: { activeDeadlineSeconds: 0 }, lines: ['spec.activeDeadlineSeconds: Invalid value: 0: must be greater than 0'] },
  { name: 'neg-deadline', spec: { activeDeadlineSeconds: -5 }, lines: ['spec.activeDeadlineSeconds: Invalid value: -5: must be greater than or equal to 0'] },
  { name: 'mode-unknown', spec: { completionMode: 'Sometimes' }, lines: ['spec.completionMode: Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"'] },
  { name: 'indexed-no-completions', spec: { completionMode: 'Indexed', parallelism: 2 }, lines: ['spec.completions: Required value: when completion mode is Indexed'] },
  { name: 'indexed-parallelism', spec: { completionMode: 'Indexed', completions: 100001, parallelism: 100001 }, lines: ['spec.parallelism: Invalid value: 100001: must be less than or equal to 100000 when completion mode is Indexed'] },
  {
    name: 'indexed-high-completions', spec: indexed(200000, { parallelism: 20000, backoffLimitPerIndex: 1 }),
    lines: [
      'spec.maxFailedIndexes: Required value: must be specified when completions is above 100000',
      'spec.parallelism: Invalid value: 20000: must be less than or equal to 10000 when completions are above 100000 and used with backoff limit per index',
    ],
  },
  { name: 'high-max-failed', spec: indexed(200000, { backoffLimitPerIndex: 1, maxFailedIndexes: 20000 }), lines: ['spec.maxFailedIndexes: Invalid value: 20000: must be less than or equal to 10000 when completions are above 100000 and used with backoff limit per index'] },
  { name: 'max-failed-gt-completions', spec: indexed(3, { backoffLimitPerIndex: 1, maxFailedIndexes: 5 }), lines: ['spec.maxFailedIndexes: Invalid value: 5: must be less than or equal to completions'] },
  { name: 'max-failed-alone', spec: indexed(3, { maxFailedIndexes: 1 }), lines: ['spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified'] },
  { name: 'per-index-nonindexed', spec: { backoffLimitPerIndex: 1 }, lines: ['spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode'] },
  {
    name: 'template-annotations', spec: {}, template: { metadata: { annotations: { 'bad key!': 'x' } } },
    lines: [`spec.template.annotations: Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`],
  },
  {
    name: 'manual-no-selector', spec: { manualSelector: true },
    lines: ['spec.selector: Required value', 'spec.template.metadata.labels: Invalid value: null: `selector` does not match template `labels`'],
  },
  {
    name: 'not-generated', spec: { selector: { matchLabels: { app: 'x' } } }, template: { metadata: { labels: { app: 'x' } } },
    lines: /spec\.selector: Invalid value: \{"matchLabels":\{"app":"x","batch\.orch\.io\/controller-uid":"[0-9a-f-]{36}"\}\}: `selector` not auto-generated/,
  },
  { name: 'pfp-too-many', spec: { podFailurePolicy: { rules: Array.from({ length: 21 }, () => conditionRule()) } }, lines: ['spec.podFailurePolicy.rules: Too many: 21: must have at most 20 items'] },
  { name: 'pfp-action', spec: { podFailurePolicy: { rules: [{ ...conditionRule(), action: 'Retry' }] } }, lines: ['spec.podFailurePolicy.rules[0].action: Unsupported value: "Retry": supported values: "Count", "FailIndex", "FailJob", "Ignore"'] },
  { name: 'pfp-no-action', spec: { podFailurePolicy: { rules: [{ onPodConditions: [{ type: 'X' }] }] } }, lines: ['spec.podFailurePolicy.rules[0].action: Required value: valid values: ["Count" "FailIndex" "FailJob" "Ignore"]'] },
  { name: 'pfp-fail-index', spec: { podFailurePolicy: { rules: [{ ...conditionRule(), action: 'FailIndex' }] } }, lines: ['spec.podFailurePolicy.rules[0].action: Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set'] },
  {
    name: 'pfp-both', spec: { podFailurePolicy: { rules: [{ ...conditionRule(), onExitCodes: { operator: 'In', values: [1] } }] } },
    lines: ['spec.podFailurePolicy.rules[0]: Invalid value: specifying both OnExitCodes and OnPodConditions is not supported'],
  },
  { name: 'pfp-neither', spec: { podFailurePolicy: { rules: [{ action: 'Count' }] } }, lines: ['spec.podFailurePolicy.rules[0]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required'] },
  { name: 'exit-operator', spec: exitRule({ operator: 'Between', values: [1] }), lines: ['spec.podFailurePolicy.rules[0].onExitCodes.operator: Unsupported value: "Between": supported values: "In", "NotIn"'] },
  { name: 'exit-empty', spec: exitRule({ operator: 'In', values: [] }), lines: ['spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []int32{}: at least one value is required'] },
  { name: 'exit-too-many', spec: exitRule({ operator: 'NotIn', values: Array.from({ length: 256 }, (_, i) => i + 1) }), lines: ['spec.podFailurePolicy.rules[0].onExitCodes.values: Too many: 256: must have at most 255 items'] },
  { name: 'exit-unordered', spec: exitRule({ operator: 'In', values: [3, 1] }), lines: ['spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []int32{3, 1}: must be ordered'] },
  { name: 'exit-duplicate', spec: exitRule({ operator: 'In', values: [2, 2] }), lines: ['spec.podFailurePolicy.rules[0].onExitCodes.values[1]: Duplicate value: 2'] },
  { name: 'exit-zero-in', spec: exitRule({ operator: 'In', values: [0, 1] }), lines: ['spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator'] },
  {
    name: 'exit-container', spec: exitRule({ operator: 'In', values: [1], containerName: 'sidecar' }),
    lines: ['spec.podFailurePolicy.rules[0].onExitCodes.containerName: Invalid value: "sidecar": must be one of the container or initContainer names in the pod template'],
  },
  { name: 'conditions-too-many', spec: { podFailurePolicy: { rules: [conditionRule(21)] } }, lines: ['spec.podFailurePolicy.rules[0].onPodConditions: Too many: 21: must have at most 20 items'] },
  {
    name: 'condition-status', spec: { podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'X', status: 'Maybe' }] }] } },
    lines: ['spec.podFailurePolicy.rules[0].onPodConditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"'],
  },
  {
    name: 'pfp-on-failure', spec: { podFailurePolicy: { rules: [conditionRule()] } }, template: { spec: { restartPolicy: 'OnFailure' } },
    lines: ['spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified'],
  },
  { name: 'replacement-unknown', spec: { podReplacementPolicy: 'Sometimes' }, lines: ['spec.podReplacementPolicy: Unsupported value: "Sometimes": supported values: "Failed", "TerminatingOrFailed"'] },
  {
    name: 'replacement-with-pfp', spec: { podReplacementPolicy: 'TerminatingOrFailed', podFailurePolicy: { rules: [conditionRule()] } },
    lines: ['spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: "Failed"'],
  },
  { name: 'success-nonindexed', spec: { successPolicy: { rules: [{ succeededCount: 1 }] } }, lines: /spec\.successPolicy: Invalid value: .*: requires indexed completion mode/ },
  { name: 'success-no-rules', spec: indexed(5, { successPolicy: { rules: [] } }), lines: ['spec.successPolicy.rules: Required value: at least one rules must be specified when the successPolicy is specified'] },
  { name: 'success-too-many', spec: indexed(5, { successPolicy: { rules: Array.from({ length: 21 }, () => ({ succeededCount: 1 })) } }), lines: ['spec.successPolicy.rules: Too many: 21: must have at most 20 items'] },
  { name: 'success-empty-rule', spec: indexed(5, { successPolicy: { rules: [{}] } }), lines: ['spec.successPolicy.rules[0]: Required value: at least one of succeededCount or succeededIndexes must be specified'] },
  { name: 'success-order', spec: indexed(5, { successPolicy: { rules: [{ succeededIndexes: '3-1' }] } }), lines: ['spec.successPolicy.rules[0].succeededIndexes: Invalid value: "3-1": error parsing succeededIndexes: non-increasing order, previous: 3, current: 1'] },
  { name: 'success-large', spec: indexed(5, { successPolicy: { rules: [{ succeededIndexes: '0,7' }] } }), lines: ['spec.successPolicy.rules[0].succeededIndexes: Invalid value: "0,7": error parsing succeededIndexes: too large index: "7"'] },
  { name: 'success-count', spec: indexed(5, { successPolicy: { rules: [{ succeededCount: 6 }] } }), lines: ['spec.successPolicy.rules[0].succeededCount: Invalid value: 6: must be less than or equal to 5 (the number of specified completions)'] },
  {
    name: 'success-count-indexes', spec: indexed(5, { successPolicy: { rules: [{ succeededIndexes: '0-1', succeededCount: 3 }] } }),
    lines: ['spec.successPolicy.rules[0].succeededCount: Invalid value: 3: must be less than or equal to 2 (the number of indexes in the specified succeededIndexes field)'],
  },
  { name: 'managed-by-path', spec: { managedBy: 'controller' }, lines: ['spec.managedBy: Invalid value: "controller": must be a domain-prefixed path (such as "acme.io/foo")'] },
  { name: 'managed-by-long', spec: { managedBy: `example.com/${'a'.repeat(52)}` }, lines: ['spec.managedBy: Too long: may not be more than 63 bytes'] },
  { name: 'restart-always', template: { spec: { restartPolicy: 'Always' } }, lines: ['spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'] },
  { name: 'restart-omitted', template: { spec: { restartPolicy: undefined } }, lines: ['spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'] },
  {
    name: `indexed-${'h'.repeat(54)}`, spec: indexed(10),
    lines: [`metadata.name: Invalid value: "indexed-${'h'.repeat(54)}": will not able to create pod with invalid DNS label: indexed-${'h'.repeat(54)}-9`],
  },
]

t.test('each spec rule refuses with its field and text, and nothing is stored', async (t) => {
  for (const c of INVALID) {
    const r = await s.request('POST', JOBS, job(c.name, c.spec, c.template))
    t.test(c.name, async (t) => {
      assertInvalid(t, r, c.name, c.lines)
      t.equal((await s.request('GET', `${JOBS}/${c.name}`)).status, 404, 'not stored')
    })
  }
})

t.test('a valid job gets the defaults: labels from its template, manualSelector false, generated selector', async (t) => {
  const r = await s.request('POST', JOBS, job('ok', {}, { metadata: { labels: { app: 'demo' } } }))
  t.equal(r.status, 201, r.text)
  const o = r.json
  const uid = o.metadata.uid
  t.same(o.metadata.labels, { app: 'demo' }, 'the template labels the user gave, without the generated ones')
  t.match(o.spec, {
    completions: 1, parallelism: 1, backoffLimit: 6, completionMode: 'NonIndexed', suspend: false,
    manualSelector: false, podReplacementPolicy: 'TerminatingOrFailed',
  })
  t.same(o.spec.selector, { matchLabels: { 'batch.orch.io/controller-uid': uid } })
  t.same(o.spec.template.metadata.labels, { app: 'demo', 'job-name': 'ok', 'batch.orch.io/job-name': 'ok', 'controller-uid': uid, 'batch.orch.io/controller-uid': uid })
  // The generated selector is accepted on update.
  const u = await s.request('PUT', `${JOBS}/ok`, { ...o, spec: { ...o.spec, parallelism: 2 } })
  t.equal(u.status, 200, u.text)

  const own = await s.request('POST', JOBS, { ...job('own', {}, { metadata: { labels: { app: 'demo' } } }), metadata: { name: 'own', labels: { team: 'x' } } })
  t.equal(own.status, 201, own.text)
  t.same(own.json.metadata.labels, { team: 'x' }, 'labels of its own are kept')

  const manual = await s.request('POST', JOBS, job('manual', { manualSelector: true, selector: { matchLabels: { app: 'x' } } }, { metadata: { labels: { app: 'x' } } }))
  t.equal(manual.status, 201, manual.text)
  t.same(manual.json.spec.selector, { matchLabels: { app: 'x' } }, 'a manual selector is kept as given')
  t.same(manual.json.spec.template.metadata.labels, { app: 'x' }, 'and no labels are generated')
})

t.test('a valid Indexed job with every policy is created with its defaults', async (t) => {
  const spec = indexed(100001, {
    parallelism: 10, backoffLimitPerIndex: 1, maxFailedIndexes: 10, managedBy: 'example.com/queue',
    podFailurePolicy: { rules: [{ action: 'FailIndex', onExitCodes: { containerName: 'c', operator: 'In', values: [1, 2, 42] } }, { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }] },
    successPolicy: { rules: [{ succeededIndexes: '0-2,5', succeededCount: 3 }] },
  })
  const r = await s.request('POST', JOBS, job('big', spec))
  t.equal(r.status, 201, r.text)
  t.equal(r.json.spec.backoffLimit, 2147483647, 'backoffLimit with per-index limits')
  t.equal(r.json.spec.podReplacementPolicy, 'Failed', 'Failed with a pod failure policy')
  t.equal(r.json.spec.podFailurePolicy.rules[1].onPodConditions[0].status, 'True', 'condition patterns default to True')
})

t.test('CronJob job templates: no selector, no manualSelector, and the job rules', async (t) => {
  const cj = (name: string, spec: Obj) => ({ apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name }, spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: { spec: podSpec() }, ...spec } } } })
  let r = await s.request('POST', CRONJOBS, cj('cj-ok', {}))
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', CRONJOBS, cj('cj-sel', { selector: { matchLabels: { a: 'b' } }, manualSelector: true }))
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.message, 'CronJob.batch "cj-sel" is invalid: [spec.jobTemplate.spec.selector: Invalid value: {"matchLabels":{"a":"b"}}: `selector` will be auto-generated, spec.jobTemplate.spec.manualSelector: Unsupported value: true: supported values: "nil", "false"]')
  r = await s.request('POST', CRONJOBS, cj('cj-neg', { backoffLimit: -1 }))
  t.equal(r.json?.message, 'CronJob.batch "cj-neg" is invalid: spec.jobTemplate.spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0')
})

// ---- the status sub-resource ----

const T0 = '2025-01-01T00:00:00Z'
const T1 = '2025-01-01T00:01:00Z'
const cond = (type: string, status = 'True') => ({ type, status, lastProbeTime: T1, lastTransitionTime: T1 })

async function putStatus(name: string, status: Obj) {
  const got = await s.request('GET', `${JOBS}/${name}`)
  return s.request('PUT', `${JOBS}/${name}/status`, { ...got.json, status })
}

async function refusedStatus(t: Tap, name: string, status: Obj, lines: string[]): Promise<void> {
  const before = (await s.request('GET', `${JOBS}/${name}`)).json
  assertInvalid(t, await putStatus(name, status), name, lines)
  const after = (await s.request('GET', `${JOBS}/${name}`)).json
  t.same(after.status ?? {}, before.status ?? {}, 'status not stored')
  t.equal(after.metadata.resourceVersion, before.metadata.resourceVersion, 'nothing written')
}

t.test('status: counters, uncounted pods and index texts', async (t) => {
  t.equal((await s.request('POST', JOBS, job('st1'))).status, 201)
  await refusedStatus(t, 'st1', { active: -1 }, ['status.active: Invalid value: -1: must be greater than or equal to 0'])
  await refusedStatus(t, 'st1', { active: 1, ready: 2 }, ['status.ready: Invalid value: 2: cannot set more ready pods than active'])
  await refusedStatus(t, 'st1', { uncountedTerminatedPods: { succeeded: ['a', ''], failed: ['a'] } }, [
    'status.uncountedTerminatedPods.succeeded[1]: Invalid value: "": must not be empty',
    'status.uncountedTerminatedPods.failed[0]: Duplicate value: "a"',
  ])
  await refusedStatus(t, 'st1', { completedIndexes: '0' }, ['status.completedIndexes: Invalid value: "0": cannot set non-empty completedIndexes when non-indexed completion mode'])
  await refusedStatus(t, 'st1', { failedIndexes: '0' }, ['status.failedIndexes: Invalid value: "0": cannot set non-null failedIndexes when backoffLimitPerIndex is null'])
  await refusedStatus(t, 'st1', { completionTime: T1 }, ['status.completionTime: Invalid value: 2025-01-01 00:01:00 +0000 UTC: cannot set completionTime when there is no Complete=True condition'])

  t.equal((await s.request('POST', JOBS, job('st2', indexed(3, { backoffLimitPerIndex: 1 })))).status, 201)
  await refusedStatus(t, 'st2', { completedIndexes: '0,5' }, ['status.completedIndexes: Invalid value: "0,5": error parsing completedIndexes: too large index: "5"'])
  await refusedStatus(t, 'st2', { completedIndexes: '0-1', failedIndexes: '1' }, ['status.failedIndexes: Invalid value: "1": failedIndexes and completedIndexes overlap at index: 1'])
  const ok = await putStatus('st2', { completedIndexes: '0-1', failedIndexes: '2', succeeded: 2, failed: 1 })
  t.equal(ok.status, 200, ok.text)
})

t.test('status: conditions, times and transitions', async (t) => {
  t.equal((await s.request('POST', JOBS, job('st3'))).status, 201)
  await refusedStatus(t, 'st3', { startTime: T0, completionTime: T1, conditions: [cond('SuccessCriteriaMet'), cond('Complete'), cond('FailureTarget'), cond('Failed')] }, [
    'status.conditions: Invalid value: cannot set Complete=True and Failed=true conditions',
    'status.conditions: Invalid value: cannot set Complete=True and FailureTarget=true conditions',
    'status.conditions: Invalid value: cannot set SuccessCriteriaMet=True and Failed=true conditions',
    'status.conditions: Invalid value: cannot set SuccessCriteriaMet=True and FailureTarget=true conditions',
  ])
  await refusedStatus(t, 'st3', { startTime: T0, conditions: [cond('SuccessCriteriaMet'), cond('Complete')] }, ['status.completionTime: Required value: completionTime is required for Complete jobs'])
  await refusedStatus(t, 'st3', { completionTime: T1, conditions: [cond('SuccessCriteriaMet'), cond('Complete')] }, ['status.startTime: Required value: startTime is required for finished job'])
  await refusedStatus(t, 'st3', { startTime: T0, completionTime: T1, conditions: [cond('Complete')] }, ['status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition'])
  await refusedStatus(t, 'st3', { startTime: T1, completionTime: T0, conditions: [cond('SuccessCriteriaMet'), cond('Complete')] }, ['status.completionTime: Invalid value: 2025-01-01 00:00:00 +0000 UTC: completionTime cannot be set before startTime'])

  let r = await putStatus('st3', { startTime: T0, active: 1, ready: 1, failed: 2 })
  t.equal(r.status, 200, r.text)
  await refusedStatus(t, 'st3', { startTime: '2025-01-01T00:00:05Z', active: 1, ready: 1, failed: 2 }, ['status.startTime: Invalid value: 2025-01-01 00:00:05 +0000 UTC: field is immutable for unsuspended job once set'])
  await refusedStatus(t, 'st3', { active: 1, ready: 1, failed: 2 }, ['status.startTime: Invalid value: null: field is immutable for unsuspended job once set'])
  await refusedStatus(t, 'st3', { startTime: T0, active: 1, ready: 1, failed: 1 }, ['status.failed: Invalid value: 1: cannot decrease the failed counter'])
  r = await putStatus('st3', { startTime: T0, completionTime: T1, succeeded: 1, failed: 2, conditions: [cond('SuccessCriteriaMet'), cond('Complete')] })
  t.equal(r.status, 200, `complete: ${r.text}`)
  await refusedStatus(t, 'st3', { startTime: T0, completionTime: T1, succeeded: 0, failed: 2, conditions: [cond('SuccessCriteriaMet'), cond('Complete')] }, ['status.succeeded: Invalid value: 0: cannot decrease the succeeded counter'])
  await refusedStatus(t, 'st3', { startTime: T0, completionTime: '2025-01-01T00:02:00Z', succeeded: 1, failed: 2, conditions: [cond('SuccessCriteriaMet'), cond('Complete')] }, ['status.completionTime: Invalid value: 2025-01-01 00:02:00 +0000 UTC: completionTime cannot be mutated'])
  await refusedStatus(t, 'st3', { startTime: T0, succeeded: 1, failed: 2, conditions: [cond('SuccessCriteriaMet')] }, ['status.conditions: Invalid value: cannot disable the terminal Complete=True condition'])
  await refusedStatus(t, 'st3', { startTime: T0, completionTime: T1, succeeded: 1, failed: 2, active: 1, conditions: [cond('SuccessCriteriaMet'), cond('Complete')] }, ['status.active: Invalid value: 1: active>0 is invalid for finished job'])
})
