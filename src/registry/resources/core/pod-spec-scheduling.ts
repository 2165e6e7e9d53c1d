// The pod spec fields about where a pod runs and as whom (upstream pkg/apis/core/validation, ValidatePodSpec):
// scheduling gates, topology spread constraints, serviceAccountName, nodeName, hostAliases and runtimeClassName.
// Each check appends to the caller's error list; validatePodSpec calls them at upstream's places in its order.
import { fieldDuplicate, fieldForbidden, fieldInvalid, fieldNotSupported, fieldRequired } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { dns1123Subdomain, qualifiedName, legacyIPErrors, validateLabelSelector } from '../../../machinery/validation.js'
import type { Obj } from '../../define.js'
import { arr, int, isObj, objAt, set, str } from './pod-fields.js'


const NOT_POSITIVE = 'must be greater than zero'
/** Sorted, as upstream lists a set's members. */
const SCHEDULE_ACTIONS = ['DoNotSchedule', 'ScheduleAnyway']
const NODE_INCLUSION_POLICIES = ['Honor', 'Ignore']

/** A subdomain name `v` at `field` (upstream's NameIsDNSSubdomain names: nodes, service accounts, runtime classes). */
function subdomainErrors(errs: FieldError[], v: string, field: string): void {
  for (const d of dns1123Subdomain(v)) errs.push(fieldInvalid(field, v, d))
}

/** spec.schedulingGates (validateSchedulingGates): each name a qualified name, none twice; reported at the entry. */
function schedulingGateErrors(errs: FieldError[], gates: unknown, path: string): void {
  const list = arr(gates)
  const seen = new Set<string>()
  for (let i = 0; i < list.length; i++) {
    const name = str(objAt(list, i).name)
    const f = `${path}[${i}]`
    for (const d of qualifiedName(name)) errs.push(fieldInvalid(f, name, d))
    if (seen.has(name)) errs.push(fieldDuplicate(f, name))
    seen.add(name)
  }
}

/**
 * matchLabelKeys of a constraint (upstream validateMatchLabelKeysInTopologySpread): not without a labelSelector, each
 * key a label key and none a key the selector already uses (in matchLabels or matchExpressions).
 */
function matchLabelKeysErrors(errs: FieldError[], keys: unknown, selector: unknown, path: string): void {
  const list = arr(keys)
  if (list.length === 0) return
  const selectorKeys = new Set<string>()
  if (isObj(selector)) {
    if (isObj(selector.matchLabels)) for (const k of Object.keys(selector.matchLabels)) selectorKeys.add(k)
    for (const e of arr(selector.matchExpressions)) if (isObj(e)) selectorKeys.add(str(e.key))
  } else {
    errs.push(fieldForbidden(path, 'must not be specified when labelSelector is not set'))
  }
  for (let i = 0; i < list.length; i++) {
    const key = str(list[i])
    const f = `${path}[${i}]`
    for (const d of qualifiedName(key)) errs.push(fieldInvalid(f, key, d))
    if (selectorKeys.has(key)) errs.push(fieldInvalid(f, key, 'exists in both matchLabelKeys and labelSelector'))
  }
}

/**
 * spec.topologySpreadConstraints (validateTopologySpreadConstraints), per constraint in upstream's order: maxSkew,
 * topologyKey, whenUnsatisfiable, a {topologyKey, whenUnsatisfiable} pair that a later constraint repeats (reported at
 * the earlier one), minDomains, the two node inclusion policies, matchLabelKeys, and the labelSelector.
 */
function topologySpreadErrors(errs: FieldError[], constraints: unknown, path: string): void {
  const list = arr(constraints)
  for (let i = 0; i < list.length; i++) {
    const c = objAt(list, i)
    const p = `${path}[${i}]`
    const maxSkew = int(c.maxSkew)
    if (maxSkew <= 0) errs.push(fieldInvalid(`${p}.maxSkew`, maxSkew, NOT_POSITIVE))
    const key = str(c.topologyKey)
    if (key === '') errs.push(fieldRequired(`${p}.topologyKey`, 'can not be empty'))
    const action = str(c.whenUnsatisfiable)
    if (!SCHEDULE_ACTIONS.includes(action)) errs.push(fieldNotSupported(`${p}.whenUnsatisfiable`, action, SCHEDULE_ACTIONS))
    for (let j = i + 1; j < list.length; j++) {
      const later = objAt(list, j)
      if (str(later.topologyKey) === key && str(later.whenUnsatisfiable) === action) {
        errs.push(fieldDuplicate(`${p}.{topologyKey, whenUnsatisfiable}`, `{${key}, ${action}}`))
        break
      }
    }
    if (set(c.minDomains)) {
      const minDomains = int(c.minDomains)
      if (minDomains <= 0) errs.push(fieldInvalid(`${p}.minDomains`, minDomains, NOT_POSITIVE))
      if (action !== 'DoNotSchedule') errs.push(fieldInvalid(`${p}.minDomains`, minDomains, `can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ${action}`))
    }
    for (const policy of ['nodeAffinityPolicy', 'nodeTaintsPolicy']) {
      const v = c[policy]
      if (set(v) && !NODE_INCLUSION_POLICIES.includes(v)) errs.push(fieldNotSupported(`${p}.${policy}`, v, NODE_INCLUSION_POLICIES))
    }
    matchLabelKeysErrors(errs, c.matchLabelKeys, c.labelSelector, `${p}.matchLabelKeys`)
    errs.push(...validateLabelSelector(c.labelSelector, `${p}.labelSelector`))
  }
}

/**
 * The placement fields that upstream checks between dnsConfig and activeDeadlineSeconds: schedulingGates,
 * topologySpreadConstraints, then the serviceAccountName and nodeName formats (subdomain names, when set).
 */
export function placementErrors(errs: FieldError[], spec: Obj, path: string): void {
  schedulingGateErrors(errs, spec.schedulingGates, `${path}.schedulingGates`)
  topologySpreadErrors(errs, spec.topologySpreadConstraints, `${path}.topologySpreadConstraints`)
  for (const key of ['serviceAccountName', 'nodeName']) {
    const v = str(spec[key])
    if (v !== '') subdomainErrors(errs, v, `${path}.${key}`)
  }
}

/** spec.hostAliases (ValidateHostAliases): each ip a valid IP in canonical form, each hostname a subdomain. */
export function hostAliasErrors(errs: FieldError[], aliases: unknown, path: string): void {
  const list = arr(aliases)
  for (let i = 0; i < list.length; i++) {
    const a = objAt(list, i)
    const p = `${path}[${i}]`
    errs.push(...legacyIPErrors(`${p}.ip`, str(a.ip)))
    const hostnames = arr(a.hostnames)
    for (let j = 0; j < hostnames.length; j++) subdomainErrors(errs, str(hostnames[j]), `${p}.hostnames[${j}]`)
  }
}

/** spec.runtimeClassName (ValidateRuntimeClassName): a subdomain name whenever it is given, the empty string too. */
export function runtimeClassNameErrors(errs: FieldError[], spec: Obj, path: string): void {
  const v = spec.runtimeClassName
  if (typeof v === 'string') subdomainErrors(errs, v, `${path}.runtimeClassName`)
}

/** A new Pod (not a template) that names its node while it still has scheduling gates (upstream ValidatePodCreate). */
export function gatedNodeNameErrors(spec: unknown): FieldError[] {
  if (!isObj(spec) || str(spec.nodeName) === '' || arr(spec.schedulingGates).length === 0) return []
  return [fieldForbidden('spec.nodeName', 'cannot be set until all schedulingGates have been cleared')]
}
