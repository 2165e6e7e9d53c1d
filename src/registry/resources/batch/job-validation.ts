// Job (batch/v1) validation: the spec (upstream ValidateJob / validateJobSpec, with the limits of spec 3), the spec
// update rules (ValidateJobSpecUpdate) and the status sub-resource (ValidateJobUpdateStatus). CronJob job templates
// use the spec checks too.
import { isDeepStrictEqual } from 'node:util'
import type { Obj } from '../../define.js'
import { fieldDuplicate, fieldInvalid, fieldInvalidOmitted, fieldNotSupported, fieldRequired, fieldTooLong, fieldTooMany, goQuote, GoValue } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { dns1123Label, domainPrefixedPath, qualifiedName } from '../../../machinery/validation.js'
import { selectorMatches, validatePodTemplateSpec } from '../core/pod-validation.js'

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** upstream batch.kubernetes.io labels, rebranded, and their legacy unprefixed forms (generated and checked here). */
export const JOB_NAME_LABEL = 'batch.orch.io/job-name'
export const CONTROLLER_UID_LABEL = 'batch.orch.io/controller-uid'
export const LEGACY_JOB_NAME_LABEL = 'job-name'
export const LEGACY_CONTROLLER_UID_LABEL = 'controller-uid'

export function hasCondition(o: Obj, type: string): boolean {
  return Array.isArray(o.status?.conditions) && o.status.conditions.some((c: Obj) => c?.type === type && c?.status === 'True')
}

// ---- validation (upstream ValidateJob / validateJobSpec, with the limits of spec 3) ----

/** An Indexed job's parallelism cap; completions may go higher (then per-index limits need maxFailedIndexes). */
const INDEXED_PARALLELISM_MAX = 100_000
const INDEXED_MAX_FAILED_INDEXES_MAX = 100_000
const COMPLETIONS_SOFT_LIMIT = 100_000
const HIGH_COMPLETIONS_PARALLELISM_MAX = 10_000
const HIGH_COMPLETIONS_MAX_FAILED_INDEXES_MAX = 10_000
const POD_FAILURE_RULES_MAX = 20
const EXIT_CODE_VALUES_MAX = 255
const CONDITION_PATTERNS_MAX = 20
const MANAGED_BY_MAX = 63
const SUCCEEDED_INDEXES_MAX_LENGTH = 64 * 1024
const SUCCESS_RULES_MAX = 20

/** Enumerations in the sorted order upstream lists them. */
const POD_FAILURE_ACTIONS = ['Count', 'FailIndex', 'FailJob', 'Ignore']
const EXIT_CODE_OPERATORS = ['In', 'NotIn']
const CONDITION_STATUSES = ['False', 'True', 'Unknown']
const POD_REPLACEMENT_POLICIES = ['Failed', 'TerminatingOrFailed']

function isSet(v: unknown): boolean { return v !== undefined && v !== null }
function list(v: unknown): any[] { return Array.isArray(v) ? v : [] }
/** Go's %q of a string slice: `["a" "b"]`. */
function quotedList(xs: string[]): string { return `[${xs.map(goQuote).join(' ')}]` }

/** upstream ValidateNonnegativeField for an optional number. */
export function nonNegative(errs: FieldError[], field: string, v: unknown): void {
  if (typeof v === 'number' && v < 0) errs.push(fieldInvalid(field, v, 'must be greater than or equal to 0'))
}

/** Go's strconv.Atoi, as far as index texts need it. */
function atoi(s: string): number | undefined {
  return /^[+-]?[0-9]+$/.test(s) ? Number(s) : undefined
}

/** One `x` or `x-y` interval of an index text, below `completions`. */
function parseIndexInterval(text: string, completions: number): [number, number] | string {
  const parts = text.split('-')
  if (parts.length > 2) return `the fragment ${goQuote(text)} violates the requirement that an index interval can have at most two parts separated by '-'`
  const x = atoi(parts[0])
  if (x === undefined) return `cannot convert string to integer for index: ${goQuote(parts[0])}`
  if (x >= completions) return `too large index: ${goQuote(parts[0])}`
  if (parts.length === 1) return [x, x]
  const y = atoi(parts[1])
  if (y === undefined) return `cannot convert string to integer for index: ${goQuote(parts[1])}`
  if (y >= completions) return `too large index: ${goQuote(parts[1])}`
  if (x >= y) return `non-increasing order, previous: ${x}, current: ${y}`
  return [x, y]
}

/** An index text such as `1,3-5,7`: the number of indexes it names, or what is wrong with it. */
function indexesCount(text: string, completions: number): { total: number } | { error: string } {
  if (text === '') return { total: 0 }
  let last: number | undefined
  let total = 0
  for (const interval of text.split(',')) {
    const r = parseIndexInterval(interval, completions)
    if (typeof r === 'string') return { error: r }
    if (last !== undefined && last >= r[0]) return { error: `non-increasing order, previous: ${last}, current: ${r[0]}` }
    total += r[1] - r[0] + 1
    last = r[1]
  }
  return { total }
}

/** The first index both texts name, walking their intervals in order (intervals that do not parse are skipped). */
function indexesOverlap(completed: string, failed: string, completions: number): number | undefined {
  if (completed === '' || failed === '') return undefined
  const parse = (text: string) => text.split(',').map((i) => parseIndexInterval(i, completions))
  const cs = parse(completed)
  const fs = parse(failed)
  let ci = 0
  let fi = 0
  while (ci < cs.length && fi < fs.length) {
    const c = cs[ci]
    const f = fs[fi]
    if (typeof c === 'string') { ci++; continue }
    if (typeof f === 'string') { fi++; continue }
    if (c[0] <= f[1] && f[0] <= c[1]) return Math.max(c[0], f[0])
    if (c[0] <= f[0]) ci++
    else fi++
  }
  return undefined
}

function podFailurePolicyErrors(s: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  const policy: Obj = isObj(s.podFailurePolicy) ? s.podFailurePolicy : {}
  const rules = list(policy.rules)
  const rulesPath = `${path}.rules`
  if (rules.length > POD_FAILURE_RULES_MAX) errs.push(fieldTooMany(rulesPath, rules.length, POD_FAILURE_RULES_MAX))
  const podSpec: Obj = isObj(s.template) && isObj(s.template.spec) ? s.template.spec : {}
  const containerNames = new Set([...list(podSpec.containers), ...list(podSpec.initContainers)].map((c) => c?.name))
  rules.forEach((raw, i) => {
    const rule: Obj = isObj(raw) ? raw : {}
    const rp = `${rulesPath}[${i}]`
    const action = rule.action ?? ''
    if (action === '') errs.push(fieldRequired(`${rp}.action`, `valid values: ${quotedList(POD_FAILURE_ACTIONS)}`))
    else if (action === 'FailIndex') {
      if (!isSet(s.backoffLimitPerIndex)) errs.push(fieldInvalid(`${rp}.action`, action, 'requires the backoffLimitPerIndex to be set'))
    } else if (!POD_FAILURE_ACTIONS.includes(action)) errs.push(fieldNotSupported(`${rp}.action`, action, POD_FAILURE_ACTIONS))
    const onExitCodes = isObj(rule.onExitCodes) ? rule.onExitCodes : undefined
    const onPodConditions = list(rule.onPodConditions)
    if (onExitCodes) errs.push(...onExitCodesErrors(onExitCodes, `${rp}.onExitCodes`, containerNames))
    if (onPodConditions.length > 0) errs.push(...onPodConditionsErrors(onPodConditions, `${rp}.onPodConditions`))
    if (onExitCodes && onPodConditions.length > 0) errs.push(fieldInvalidOmitted(rp, 'specifying both OnExitCodes and OnPodConditions is not supported'))
    if (!onExitCodes && onPodConditions.length === 0) errs.push(fieldInvalidOmitted(rp, 'specifying one of OnExitCodes and OnPodConditions is required'))
  })
  return errs
}

function onExitCodesErrors(req: Obj, path: string, containerNames: Set<unknown>): FieldError[] {
  const errs: FieldError[] = []
  const op = req.operator ?? ''
  if (op === '') errs.push(fieldRequired(`${path}.operator`, `valid values: ${quotedList(EXIT_CODE_OPERATORS)}`))
  else if (!EXIT_CODE_OPERATORS.includes(op)) errs.push(fieldNotSupported(`${path}.operator`, op, EXIT_CODE_OPERATORS))
  if (isSet(req.containerName) && !containerNames.has(req.containerName)) {
    errs.push(fieldInvalid(`${path}.containerName`, req.containerName, 'must be one of the container or initContainer names in the pod template'))
  }
  const values: unknown[] = list(req.values)
  const vp = `${path}.values`
  // Go prints the list as a Go value: []int32{1, 2}, or []int32(nil) when it is missing.
  const shown = new GoValue(Array.isArray(req.values) ? `[]int32{${values.join(', ')}}` : '[]int32(nil)')
  if (values.length === 0) errs.push(fieldInvalid(vp, shown, 'at least one value is required'))
  else if (values.length > EXIT_CODE_VALUES_MAX) errs.push(fieldTooMany(vp, values.length, EXIT_CODE_VALUES_MAX))
  const seen = new Set<unknown>()
  let ordered = true
  values.forEach((v, j) => {
    if (op === 'In' && v === 0) errs.push(fieldInvalid(`${vp}[${j}]`, v, 'must not be 0 for the In operator'))
    if (seen.has(v)) errs.push(fieldDuplicate(`${vp}[${j}]`, v))
    else seen.add(v)
    if (j > 0 && (values[j - 1] as number) > (v as number)) ordered = false
  })
  if (!ordered) errs.push(fieldInvalid(vp, shown, 'must be ordered'))
  return errs
}

function onPodConditionsErrors(patterns: unknown[], path: string): FieldError[] {
  const errs: FieldError[] = []
  if (patterns.length > CONDITION_PATTERNS_MAX) errs.push(fieldTooMany(path, patterns.length, CONDITION_PATTERNS_MAX))
  patterns.forEach((raw, j) => {
    const p: Obj = isObj(raw) ? raw : {}
    const pp = `${path}[${j}]`
    const type = typeof p.type === 'string' ? p.type : ''
    for (const d of qualifiedName(type)) errs.push(fieldInvalid(`${pp}.type`, type, d))
    const status = p.status ?? ''
    if (status === '') errs.push(fieldRequired(`${pp}.status`, `valid values: ${quotedList(CONDITION_STATUSES)}`))
    else if (!CONDITION_STATUSES.includes(status)) errs.push(fieldNotSupported(`${pp}.status`, status, CONDITION_STATUSES))
  })
  return errs
}

function successPolicyErrors(s: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  const rules = list(isObj(s.successPolicy) ? s.successPolicy.rules : undefined)
  const rulesPath = `${path}.rules`
  if (rules.length === 0) errs.push(fieldRequired(rulesPath, 'at least one rules must be specified when the successPolicy is specified'))
  if (rules.length > SUCCESS_RULES_MAX) errs.push(fieldTooMany(rulesPath, rules.length, SUCCESS_RULES_MAX))
  const completions = typeof s.completions === 'number' ? s.completions : undefined
  rules.forEach((raw, i) => {
    const rule: Obj = isObj(raw) ? raw : {}
    const rp = `${rulesPath}[${i}]`
    if (!isSet(rule.succeededCount) && !isSet(rule.succeededIndexes)) {
      errs.push(fieldRequired(rp, 'at least one of succeededCount or succeededIndexes must be specified'))
    }
    let total = 0
    if (typeof rule.succeededIndexes === 'string') {
      const ip = `${rp}.succeededIndexes`
      if (rule.succeededIndexes.length > SUCCEEDED_INDEXES_MAX_LENGTH) errs.push(fieldTooLong(ip, SUCCEEDED_INDEXES_MAX_LENGTH))
      if (completions !== undefined) {
        const r = indexesCount(rule.succeededIndexes, completions)
        if ('error' in r) errs.push(fieldInvalid(ip, rule.succeededIndexes, `error parsing succeededIndexes: ${r.error}`))
        else total = r.total
      }
    }
    if (typeof rule.succeededCount === 'number') {
      const cp = `${rp}.succeededCount`
      nonNegative(errs, cp, rule.succeededCount)
      if (completions !== undefined && rule.succeededCount > completions) {
        errs.push(fieldInvalid(cp, rule.succeededCount, `must be less than or equal to ${completions} (the number of specified completions)`))
      }
      if (typeof rule.succeededIndexes === 'string' && rule.succeededCount > total) {
        errs.push(fieldInvalid(cp, rule.succeededCount, `must be less than or equal to ${total} (the number of indexes in the specified succeededIndexes field)`))
      }
    }
  })
  return errs
}

/**
 * The checks of a job spec shared by Jobs and CronJob job templates (upstream validateJobSpec), at `path` (`spec`
 * for a Job, `spec.jobTemplate.spec` for a CronJob). The selector is checked by the callers.
 */
export function validateJobSpec(spec: unknown, path: string): FieldError[] {
  const errs: FieldError[] = []
  const s: Obj = isObj(spec) ? spec : {}
  nonNegative(errs, `${path}.parallelism`, s.parallelism)
  nonNegative(errs, `${path}.completions`, s.completions)
  // Spec 3 says positive; upstream's own check stops at negative numbers, whose text is kept.
  if (s.activeDeadlineSeconds === 0) errs.push(fieldInvalid(`${path}.activeDeadlineSeconds`, 0, 'must be greater than 0'))
  else nonNegative(errs, `${path}.activeDeadlineSeconds`, s.activeDeadlineSeconds)
  nonNegative(errs, `${path}.backoffLimit`, s.backoffLimit)
  nonNegative(errs, `${path}.ttlSecondsAfterFinished`, s.ttlSecondsAfterFinished)
  nonNegative(errs, `${path}.backoffLimitPerIndex`, s.backoffLimitPerIndex)
  const perIndex = isSet(s.backoffLimitPerIndex)
  const maxFailed = typeof s.maxFailedIndexes === 'number' ? s.maxFailedIndexes : undefined
  if (isSet(s.maxFailedIndexes)) {
    nonNegative(errs, `${path}.maxFailedIndexes`, s.maxFailedIndexes)
    if (!perIndex) errs.push(fieldRequired(`${path}.backoffLimitPerIndex`, 'when maxFailedIndexes is specified'))
  }
  if (typeof s.managedBy === 'string') {
    errs.push(...domainPrefixedPath(`${path}.managedBy`, s.managedBy))
    if (s.managedBy.length > MANAGED_BY_MAX) errs.push(fieldTooLong(`${path}.managedBy`, MANAGED_BY_MAX))
  }
  const mode = s.completionMode
  const completions = typeof s.completions === 'number' ? s.completions : undefined
  const parallelism = typeof s.parallelism === 'number' ? s.parallelism : undefined
  if (isSet(mode)) {
    if (mode !== 'NonIndexed' && mode !== 'Indexed') errs.push(fieldNotSupported(`${path}.completionMode`, mode, ['NonIndexed', 'Indexed']))
    if (mode === 'Indexed') {
      if (!isSet(s.completions)) errs.push(fieldRequired(`${path}.completions`, 'when completion mode is Indexed'))
      if (parallelism !== undefined && parallelism > INDEXED_PARALLELISM_MAX) {
        errs.push(fieldInvalid(`${path}.parallelism`, parallelism, `must be less than or equal to ${INDEXED_PARALLELISM_MAX} when completion mode is Indexed`))
      }
      if (completions !== undefined && maxFailed !== undefined && maxFailed > completions) {
        errs.push(fieldInvalid(`${path}.maxFailedIndexes`, maxFailed, 'must be less than or equal to completions'))
      }
      if (maxFailed !== undefined && maxFailed > INDEXED_MAX_FAILED_INDEXES_MAX) {
        errs.push(fieldInvalid(`${path}.maxFailedIndexes`, maxFailed, `must be less than or equal to ${INDEXED_MAX_FAILED_INDEXES_MAX}`))
      }
      if (completions !== undefined && completions > COMPLETIONS_SOFT_LIMIT && perIndex) {
        const why = `when completions are above ${COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index`
        if (!isSet(s.maxFailedIndexes)) errs.push(fieldRequired(`${path}.maxFailedIndexes`, `must be specified when completions is above ${COMPLETIONS_SOFT_LIMIT}`))
        if (parallelism !== undefined && parallelism > HIGH_COMPLETIONS_PARALLELISM_MAX) {
          errs.push(fieldInvalid(`${path}.parallelism`, parallelism, `must be less than or equal to ${HIGH_COMPLETIONS_PARALLELISM_MAX} ${why}`))
        }
        if (maxFailed !== undefined && maxFailed > HIGH_COMPLETIONS_MAX_FAILED_INDEXES_MAX) {
          errs.push(fieldInvalid(`${path}.maxFailedIndexes`, maxFailed, `must be less than or equal to ${HIGH_COMPLETIONS_MAX_FAILED_INDEXES_MAX} ${why}`))
        }
      }
    }
  }
  if (!isSet(mode) || mode === 'NonIndexed') {
    if (perIndex) errs.push(fieldInvalid(`${path}.backoffLimitPerIndex`, s.backoffLimitPerIndex, 'requires indexed completion mode'))
    if (isSet(s.maxFailedIndexes)) errs.push(fieldInvalid(`${path}.maxFailedIndexes`, s.maxFailedIndexes, 'requires indexed completion mode'))
  }
  if (isSet(s.podFailurePolicy)) errs.push(...podFailurePolicyErrors(s, `${path}.podFailurePolicy`))
  if (isSet(s.successPolicy)) {
    if (mode !== 'Indexed') errs.push(fieldInvalid(`${path}.successPolicy`, s.successPolicy, 'requires indexed completion mode'))
    else errs.push(...successPolicyErrors(s, `${path}.successPolicy`))
  }
  if (isSet(s.podReplacementPolicy)) {
    if (isSet(s.podFailurePolicy)) {
      if (s.podReplacementPolicy !== 'Failed') errs.push(fieldNotSupported(`${path}.podReplacementPolicy`, s.podReplacementPolicy, ['Failed']))
    } else if (!POD_REPLACEMENT_POLICIES.includes(s.podReplacementPolicy)) {
      errs.push(fieldNotSupported(`${path}.podReplacementPolicy`, s.podReplacementPolicy, POD_REPLACEMENT_POLICIES))
    }
  }
  const template: Obj = isObj(s.template) ? s.template : {}
  // The template as any pod template: labels and annotations (at <path>.template.labels, as upstream names them), the pod spec.
  errs.push(...validatePodTemplateSpec(template, `${path}.template`))
  // An omitted restartPolicy was defaulted to Always, so both are answered with the valid values.
  const rp = isObj(template.spec) ? template.spec.restartPolicy : undefined
  const rpPath = `${path}.template.spec.restartPolicy`
  if (rp === undefined || rp === '' || rp === 'Always') errs.push(fieldRequired(rpPath, 'valid values: "OnFailure", "Never"'))
  else if (rp !== 'OnFailure' && rp !== 'Never') errs.push(fieldNotSupported(rpPath, rp, ['OnFailure', 'Never']))
  else if (isSet(s.podFailurePolicy) && rp !== 'Never') errs.push(fieldInvalid(rpPath, rp, 'only "Never" is supported when podFailurePolicy is specified'))
  return errs
}

/** A Job's selector: required, and it must select the template (upstream ValidateJobSpec). */
function jobSelectorErrors(s: Obj): FieldError[] {
  const errs: FieldError[] = []
  if (!isObj(s.selector)) errs.push(fieldRequired('spec.selector'))
  // A missing selector selects nothing, so it never matches the template either.
  const labels = isObj(s.template) && isObj(s.template.metadata) ? s.template.metadata.labels : undefined
  if (!selectorMatches(s.selector, labels)) errs.push(fieldInvalid('spec.template.metadata.labels', labels ?? null, '`selector` does not match template `labels`'))
  return errs
}

/**
 * Without manualSelector the selector must be the generated one: the template carries the job's name and uid labels
 * and the selector matches them (upstream validateGeneratedSelector). `prefixed` also requires the batch.orch.io/
 * labels; an update of a job created without them does not.
 */
function generatedSelectorErrors(o: Obj, prefixed: boolean): FieldError[] {
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  if (spec.manualSelector === true || !isObj(spec.selector)) return []
  const errs: FieldError[] = []
  const uid = typeof o.metadata?.uid === 'string' ? o.metadata.uid : ''
  const name = typeof o.metadata?.name === 'string' ? o.metadata.name : ''
  if (uid === '') errs.push(fieldRequired('metadata.uid'))
  const labels = isObj(spec.template) && isObj(spec.template.metadata) && isObj(spec.template.metadata.labels) ? spec.template.metadata.labels : undefined
  const hasLabel = (key: string, want: string) => {
    const field = `spec.template.metadata.labels[${key}]`
    if (labels === undefined || !(key in labels)) errs.push(fieldRequired(field, `must be '${want}'`))
    else if (labels[key] !== want) errs.push(fieldInvalid(field, labels, `must be '${want}'`))
  }
  hasLabel(LEGACY_CONTROLLER_UID_LABEL, uid)
  hasLabel(LEGACY_JOB_NAME_LABEL, name)
  const expected: Record<string, string> = {}
  if (prefixed) {
    hasLabel(CONTROLLER_UID_LABEL, uid)
    hasLabel(JOB_NAME_LABEL, name)
    expected[CONTROLLER_UID_LABEL] = uid
    expected[JOB_NAME_LABEL] = name
  }
  expected[LEGACY_CONTROLLER_UID_LABEL] = uid
  expected[LEGACY_JOB_NAME_LABEL] = name
  if (!selectorMatches(spec.selector, expected)) errs.push(fieldInvalid('spec.selector', spec.selector, '`selector` not auto-generated'))
  return errs
}

export function hasPrefixedLabels(o: Obj): boolean {
  const labels = o.spec?.template?.metadata?.labels
  return isObj(labels) && JOB_NAME_LABEL in labels && CONTROLLER_UID_LABEL in labels
}

/** Upstream ValidateJob: the generated selector, the spec, and the hostname of an Indexed job's last pod. */
export function validateJob(o: Obj, prefixedLabels: boolean): FieldError[] {
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  const errs = [...generatedSelectorErrors(o, prefixedLabels), ...validateJobSpec(spec, 'spec'), ...jobSelectorErrors(spec)]
  const name = typeof o.metadata?.name === 'string' ? o.metadata.name : ''
  if (spec.completionMode === 'Indexed' && typeof spec.completions === 'number' && spec.completions > 0) {
    const hostname = `${name}-${spec.completions - 1}`
    if (dns1123Label(hostname).length > 0) errs.push(fieldInvalid('metadata.name', name, `will not able to create pod with invalid DNS label: ${hostname}`))
  }
  return errs
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
  // An Indexed job may scale its completions together with its parallelism (elastic indexed jobs); a missing
  // completions of an Indexed job is already reported by validateJobSpec.
  if (spec.completionMode !== 'Indexed') immutable('completions')
  else if (!isDeepStrictEqual(spec.completions, prev.completions) && isSet(spec.completions) && spec.completions !== spec.parallelism) {
    errs.push(fieldInvalid('spec.completions', spec.completions, 'can only be modified in tandem with spec.parallelism'))
  }
  immutable('selector')
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
  immutable('completionMode')
  immutable('podFailurePolicy')
  immutable('backoffLimitPerIndex')
  immutable('managedBy')
  immutable('successPolicy')
  return errs
}

// ---- the status sub-resource (upstream ValidateJobUpdateStatus with the JobManagedBy options, on by default) ----

/** A time as Go prints a metav1.Time in an error (time.String() in UTC), or null. */
function shownTime(v: unknown): GoValue {
  if (typeof v !== 'string') return new GoValue('null')
  const ms = Date.parse(v)
  if (Number.isNaN(ms)) return new GoValue(goQuote(v))
  const iso = new Date(ms).toISOString() // 2025-01-02T03:04:05.678Z
  const frac = iso.slice(19, 23).replace(/\.?0+$/, '')
  return new GoValue(`${iso.slice(0, 10)} ${iso.slice(11, 19)}${frac} +0000 UTC`)
}

function sameTime(a: unknown, b: unknown): boolean {
  if (!isSet(a) || !isSet(b)) return !isSet(a) && !isSet(b)
  const x = Date.parse(String(a))
  const y = Date.parse(String(b))
  return Number.isNaN(x) || Number.isNaN(y) ? a === b : x === y
}

function uncountedUids(st: Obj): { succeeded: unknown[]; failed: unknown[] } {
  const u: Obj = isObj(st.uncountedTerminatedPods) ? st.uncountedTerminatedPods : {}
  return { succeeded: list(u.succeeded), failed: list(u.failed) }
}

/**
 * A status write may not contradict itself or undo what the job already reached. As upstream does since its
 * JobManagedBy gate is on by default, most rules run only when a field they read changes, so an update unrelated to
 * a stale inconsistency still goes through.
 */
export function validateJobStatusUpdate(o: Obj, old: Obj): FieldError[] {
  const errs: FieldError[] = []
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  const st: Obj = isObj(o.status) ? o.status : {}
  const prev: Obj = isObj(old.status) ? old.status : {}
  const cond = (x: Obj, type: string) => hasCondition(x, type)
  const complete = cond(o, 'Complete')
  const failed = cond(o, 'Failed')
  const failureTarget = cond(o, 'FailureTarget')
  const criteriaMet = cond(o, 'SuccessCriteriaMet')
  const finished = complete || failed
  const wasComplete = cond(old, 'Complete')
  const wasFinished = wasComplete || cond(old, 'Failed')
  const wasCriteriaMet = cond(old, 'SuccessCriteriaMet')
  const indexed = spec.completionMode === 'Indexed'
  const completions = typeof spec.completions === 'number' ? spec.completions : undefined
  const active = typeof st.active === 'number' ? st.active : 0
  const completed = typeof st.completedIndexes === 'string' ? st.completedIndexes : ''
  const failedIndexes = isSet(st.failedIndexes) ? String(st.failedIndexes) : undefined

  const finishedChanged = finished !== wasFinished
  const completeChanged = complete !== wasComplete
  const failedChanged = failed !== cond(old, 'Failed')
  const failureTargetChanged = failureTarget !== cond(old, 'FailureTarget')
  const criteriaMetChanged = criteriaMet !== wasCriteriaMet
  const completedChanged = completed !== (typeof prev.completedIndexes === 'string' ? prev.completedIndexes : '')
  const failedIndexesChanged = failedIndexes !== (isSet(prev.failedIndexes) ? String(prev.failedIndexes) : undefined)
  const activeChanged = active !== (typeof prev.active === 'number' ? prev.active : 0)
  const readyChanged = (st.ready ?? null) !== (prev.ready ?? null)
  const terminatingChanged = (st.terminating ?? null) !== (prev.terminating ?? null)
  const startChanged = !sameTime(st.startTime, prev.startTime)
  const completionChanged = !sameTime(st.completionTime, prev.completionTime)
  const uncounted = uncountedUids(st)
  const uncountedChanged = !isDeepStrictEqual(uncounted, uncountedUids(prev))

  // Counters.
  for (const k of ['active', 'succeeded', 'failed', 'ready', 'terminating']) nonNegative(errs, `status.${k}`, st[k])
  const seen = new Set<unknown>()
  for (const kind of ['succeeded', 'failed'] as const) {
    uncounted[kind].forEach((uid, i) => {
      const field = `status.uncountedTerminatedPods.${kind}[${i}]`
      if (uid === '' || !isSet(uid)) errs.push(fieldInvalid(field, uid ?? '', 'must not be empty'))
      else if (seen.has(uid)) errs.push(fieldDuplicate(field, uid))
      else seen.add(uid)
    })
  }
  // Conditions and times that go together.
  if ((completeChanged || failedChanged) && complete && failed) errs.push(fieldInvalidOmitted('status.conditions', 'cannot set Complete=True and Failed=true conditions'))
  if ((completeChanged || failureTargetChanged) && complete && failureTarget) errs.push(fieldInvalidOmitted('status.conditions', 'cannot set Complete=True and FailureTarget=true conditions'))
  if (completeChanged || completionChanged) {
    if (isSet(st.completionTime) && !complete) errs.push(fieldInvalid('status.completionTime', shownTime(st.completionTime), 'cannot set completionTime when there is no Complete=True condition'))
    if (!isSet(st.completionTime) && complete) errs.push(fieldRequired('status.completionTime', 'completionTime is required for Complete jobs'))
  }
  if ((startChanged || completionChanged) && isSet(st.startTime) && isSet(st.completionTime) && Date.parse(st.completionTime) < Date.parse(st.startTime)) {
    errs.push(fieldInvalid('status.completionTime', shownTime(st.completionTime), 'completionTime cannot be set before startTime'))
  }
  if ((failedChanged || failureTargetChanged) && failed && !failureTarget) errs.push(fieldInvalidOmitted('status.conditions', 'cannot set Failed=True condition without the FailureTarget=true condition'))
  if ((completeChanged || criteriaMetChanged) && complete && !criteriaMet) errs.push(fieldInvalidOmitted('status.conditions', 'cannot set Complete=True condition without the SuccessCriteriaMet=true condition'))
  if ((finishedChanged || activeChanged) && finished && active > 0) errs.push(fieldInvalid('status.active', active, 'active>0 is invalid for finished job'))
  if ((finishedChanged || startChanged) && finished && !isSet(st.startTime)) errs.push(fieldRequired('status.startTime', 'startTime is required for finished job'))
  if ((finishedChanged || uncountedChanged) && finished && uncounted.succeeded.length + uncounted.failed.length > 0) {
    errs.push(fieldInvalid('status.uncountedTerminatedPods', st.uncountedTerminatedPods, 'uncountedTerminatedPods needs to be empty for finished job'))
  }
  // Index texts.
  if (completedChanged && completions !== undefined) {
    const r = indexesCount(completed, completions)
    if ('error' in r) errs.push(fieldInvalid('status.completedIndexes', completed, `error parsing completedIndexes: ${r.error}`))
  }
  if (failedIndexesChanged && completions !== undefined && isSet(spec.backoffLimitPerIndex) && failedIndexes !== undefined) {
    const r = indexesCount(failedIndexes, completions)
    if ('error' in r) errs.push(fieldInvalid('status.failedIndexes', failedIndexes, `error parsing failedIndexes: ${r.error}`))
  }
  if (completedChanged && completed !== '' && !indexed) errs.push(fieldInvalid('status.completedIndexes', completed, 'cannot set non-empty completedIndexes when non-indexed completion mode'))
  if (failedIndexesChanged && !isSet(spec.backoffLimitPerIndex) && failedIndexes !== undefined) {
    errs.push(fieldInvalid('status.failedIndexes', failedIndexes, 'cannot set non-null failedIndexes when backoffLimitPerIndex is null'))
  }
  if ((failedIndexesChanged || completedChanged) && completions !== undefined && failedIndexes !== undefined) {
    const at = indexesOverlap(completed, failedIndexes, completions)
    if (at !== undefined) errs.push(fieldInvalid('status.failedIndexes', failedIndexes, `failedIndexes and completedIndexes overlap at index: ${at}`))
  }
  if ((finishedChanged || terminatingChanged) && finished && typeof st.terminating === 'number' && st.terminating > 0) {
    errs.push(fieldInvalid('status.terminating', st.terminating, 'terminating>0 is invalid for finished job'))
  }
  if ((readyChanged || activeChanged) && typeof st.ready === 'number' && st.ready > active) errs.push(fieldInvalid('status.ready', st.ready, 'cannot set more ready pods than active'))
  if (criteriaMet && failed) errs.push(fieldInvalidOmitted('status.conditions', 'cannot set SuccessCriteriaMet=True and Failed=true conditions'))
  if (criteriaMet && failureTarget) errs.push(fieldInvalidOmitted('status.conditions', 'cannot set SuccessCriteriaMet=True and FailureTarget=true conditions'))
  if (isSet(spec.successPolicy) && !criteriaMet && complete) errs.push(fieldInvalidOmitted('status.conditions', 'cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True'))

  // Transitions from the stored status.
  for (const type of ['Failed', 'Complete', 'FailureTarget']) {
    if (cond(old, type) && !cond(o, type)) errs.push(fieldInvalidOmitted('status.conditions', `cannot disable the terminal ${type}=True condition`))
  }
  const num = (v: unknown) => (typeof v === 'number' ? v : 0)
  if (num(st.failed) < num(prev.failed)) errs.push(fieldInvalid('status.failed', num(st.failed), 'cannot decrease the failed counter'))
  // An elastic Indexed job (completions equal to parallelism) may scale down, and its succeeded counter with it.
  const elastic = indexed && isSet(spec.completions) && spec.completions === spec.parallelism
  if (!elastic && num(st.succeeded) < num(prev.succeeded)) errs.push(fieldInvalid('status.succeeded', num(st.succeeded), 'cannot decrease the succeeded counter'))
  if (isSet(st.completionTime) && isSet(prev.completionTime) && completionChanged) {
    errs.push(fieldInvalid('status.completionTime', shownTime(st.completionTime), 'completionTime cannot be mutated'))
  }
  if (startChanged && isSet(prev.startTime) && spec.suspend !== true) {
    errs.push(fieldInvalid('status.startTime', shownTime(st.startTime), 'field is immutable for unsuspended job once set'))
  }
  if (wasCriteriaMet && !criteriaMet) errs.push(fieldInvalidOmitted('status.conditions', 'cannot disable the SuccessCriteriaMet=True condition'))
  if (wasComplete && !wasCriteriaMet && criteriaMet) errs.push(fieldInvalidOmitted('status.conditions', 'cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions'))
  return errs
}

