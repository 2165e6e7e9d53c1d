// PriorityClass (scheduling.orch.io/v1, cluster-scoped): the reserved system classes, value limits and update rules.
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldForbidden, fieldInvalid, fieldNotSupported, fieldRequired, type FieldError } from '../../../machinery/errors.js'
import { ageColumn, int, nameColumn } from '../_printers.js'

/** Names with this prefix belong to the built-in classes only. */
export const SYSTEM_PRIORITY_CLASS_PREFIX = 'system-'
/** The highest value a class that is not a system one may have. */
export const HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
/** The base of the system classes' values. */
export const SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
/** A pod's priority when it names no class and no class is the global default. */
export const DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS = 0
export const PREEMPTION_POLICIES = ['PreemptLowerPriority', 'Never']

export interface SystemPriorityClass { name: string; value: number; globalDefault: boolean; description: string }

/** The classes the server creates at start; a `system-` name must be one of these, with its value and globalDefault. */
export const SYSTEM_PRIORITY_CLASSES: readonly SystemPriorityClass[] = Object.freeze([
  {
    name: 'system-node-critical', value: SYSTEM_CRITICAL_PRIORITY + 1000, globalDefault: false,
    description: 'For pods a node cannot do without; they stay on the node they run on.',
  },
  {
    name: 'system-cluster-critical', value: SYSTEM_CRITICAL_PRIORITY, globalDefault: false,
    description: 'For pods the cluster cannot do without; they may be moved to another node when needed.',
  },
])

/** The PriorityClass object of a system class, as the server creates it. */
export function systemPriorityClassObject(c: SystemPriorityClass): Obj {
  const o: Obj = { apiVersion: 'scheduling.orch.io/v1', kind: 'PriorityClass', metadata: { name: c.name }, value: c.value, description: c.description, preemptionPolicy: 'PreemptLowerPriority' }
  if (c.globalDefault) o.globalDefault = true
  return o
}

/** Why a `system-` name is not acceptable, or '' when it names a system class with the right value and globalDefault. */
function systemClassProblem(name: string, value: unknown, globalDefault: boolean): string {
  const c = SYSTEM_PRIORITY_CLASSES.find((s) => s.name === name)
  if (c === undefined) return `${name} is not a known system priority class`
  if (c.value !== value) return `value of ${c.name} PriorityClass must be ${c.value}`
  if (c.globalDefault !== globalDefault) return `globalDefault of ${c.name} PriorityClass must be ${c.globalDefault}`
  return ''
}

function validatePriorityClass(o: Obj): FieldError[] {
  const errs: FieldError[] = []
  const name = typeof o.metadata?.name === 'string' ? o.metadata.name : ''
  if (name.startsWith(SYSTEM_PRIORITY_CLASS_PREFIX)) {
    const why = systemClassProblem(name, o.value, o.globalDefault === true)
    if (why !== '') errs.push(fieldForbidden('metadata.name', `priority class names with '${SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are reserved for system use only. error: ${why}`))
  } else if (typeof o.value === 'number' && o.value > HIGHEST_USER_DEFINABLE_PRIORITY) {
    errs.push(fieldForbidden('value', `maximum allowed value of a user defined priority is ${HIGHEST_USER_DEFINABLE_PRIORITY}`))
  }
  if (o.preemptionPolicy !== undefined && o.preemptionPolicy !== null) {
    if (o.preemptionPolicy === '') errs.push(fieldRequired('preemptionPolicy', ''))
    else if (!PREEMPTION_POLICIES.includes(o.preemptionPolicy)) errs.push(fieldNotSupported('preemptionPolicy', o.preemptionPolicy, PREEMPTION_POLICIES))
  }
  return errs
}

function validatePriorityClassUpdate(o: Obj, old: Obj): FieldError[] {
  const errs = validatePriorityClass(o)
  if (o.value !== old.value) errs.push(fieldForbidden('value', 'may not be changed in an update.'))
  if ((o.preemptionPolicy ?? null) !== (old.preemptionPolicy ?? null)) errs.push(fieldInvalid('preemptionPolicy', o.preemptionPolicy ?? null, 'field is immutable'))
  return errs
}

export default defineResource({
  group: 'scheduling.orch.io', version: 'v1', kind: 'PriorityClass', resource: 'priorityclasses', singular: 'priorityclass', scope: 'Cluster',
  verbs: ALL_VERBS,
  shortNames: ['pc'],
  schemaRef: 'io.orch.api.scheduling.v1.PriorityClass',
  // value has no omitempty upstream.
  zeroValues: { value: 0 },
  strategy: {
    // SetDefaults_PriorityClass
    default: (o) => { o.preemptionPolicy ??= 'PreemptLowerPriority' },
    validate: validatePriorityClass,
    validateUpdate: validatePriorityClassUpdate,
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
  },
  table: [
    nameColumn(),
    { name: 'Value', type: 'integer', description: 'The priority pods of this class get.', cell: (o) => int(o.value) },
    { name: 'Global-Default', type: 'boolean', description: 'Whether pods without a priority class get this one.', cell: (o) => o.globalDefault === true },
    ageColumn(),
    { name: 'PreemptionPolicy', type: 'string', description: 'Whether pods of this class may preempt lower-priority pods.', cell: (o) => (typeof o.preemptionPolicy === 'string' ? o.preemptionPolicy : '') },
  ],
})
