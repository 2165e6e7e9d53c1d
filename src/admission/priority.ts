// The Priority admission plugin: a new pod's priority and preemption policy come from its PriorityClass (or the global default), and at most one class is the global default.
import { forbidden, type ApiError } from '../machinery/errors.js'
import {
  DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS,
} from '../registry/resources/scheduling.orch.io/priorityclasses.js'
import type { AdmissionOperation } from './node-restriction.js'

export const PLUGIN_NAME = 'Priority'

type Obj = Record<string, any>

/** What the plugin needs of one class. */
export interface PriorityClassInfo { name: string; value: number; preemptionPolicy: string | undefined; globalDefault: boolean }

/** The classes as the plugin sees them: by name, and the global default (the lowest-valued one if several claim it). */
export interface PriorityClassView {
  byName: ReadonlyMap<string, PriorityClassInfo>
  globalDefault: PriorityClassInfo | undefined
}

/** Builds the view from the stored classes. */
export function priorityClassView(classes: Iterable<Obj>): PriorityClassView {
  const byName = new Map<string, PriorityClassInfo>()
  let globalDefault: PriorityClassInfo | undefined
  for (const o of classes) {
    const name = o.metadata?.name
    if (typeof name !== 'string') continue
    const info: PriorityClassInfo = {
      name,
      value: typeof o.value === 'number' ? o.value : 0,
      preemptionPolicy: typeof o.preemptionPolicy === 'string' ? o.preemptionPolicy : undefined,
      globalDefault: o.globalDefault === true,
    }
    byName.set(name, info)
    if (info.globalDefault && (globalDefault === undefined || globalDefault.value > info.value)) globalDefault = info
  }
  return { byName, globalDefault }
}

const PODS = { group: '', resource: 'pods' }
const PRIORITY_CLASSES = { group: 'scheduling.orch.io', resource: 'priorityclasses' }

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** The name a refusal names: the object's name, else its generateName, else "Unknown" (as upstream's admission errors). */
function subjectName(o: Obj | undefined, urlName: string): string {
  if (urlName !== '') return urlName
  const m = o?.metadata
  if (typeof m?.name === 'string' && m.name !== '') return m.name
  if (typeof m?.generateName === 'string' && m.generateName !== '') return m.generateName
  return 'Unknown'
}

/**
 * The mutating half, for pods (not their sub-resources). On create: resolves spec.priorityClassName (or the global
 * default) into spec.priority and spec.preemptionPolicy, refusing an unknown class or a priority or policy that differs
 * from the computed one. On update: a body without the two fields keeps the stored ones (pod validation then refuses
 * any change of them). Returns the error to answer, or undefined.
 */
export function admitPodPriority(operation: AdmissionOperation, urlName: string, pod: Obj, oldPod: Obj | undefined, view: () => PriorityClassView): ApiError | undefined {
  const spec = pod.spec
  if (!isObj(spec)) return undefined
  if (operation === 'UPDATE') {
    const prev = oldPod?.spec
    if (!isObj(prev)) return undefined
    if ((spec.priority === undefined || spec.priority === null) && typeof prev.priority === 'number') spec.priority = prev.priority
    if ((spec.preemptionPolicy === undefined || spec.preemptionPolicy === null) && typeof prev.preemptionPolicy === 'string') spec.preemptionPolicy = prev.preemptionPolicy
    return undefined
  }
  if (operation !== 'CREATE') return undefined
  let priority: number
  let policy: string | undefined
  const className = typeof spec.priorityClassName === 'string' ? spec.priorityClassName : ''
  if (className === '') {
    const d = view().globalDefault
    if (d !== undefined) {
      spec.priorityClassName = d.name
      priority = d.value
      policy = d.preemptionPolicy
    } else {
      priority = DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS
      policy = 'PreemptLowerPriority'
    }
  } else {
    const pc = view().byName.get(className)
    if (pc === undefined) return forbidden(PODS, subjectName(pod, urlName), `no PriorityClass with name ${className} was found`)
    priority = pc.value
    policy = pc.preemptionPolicy
  }
  if (spec.priority !== undefined && spec.priority !== null && spec.priority !== priority) {
    return forbidden(PODS, subjectName(pod, urlName), `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`)
  }
  spec.priority = priority
  if (policy !== undefined) {
    if (spec.preemptionPolicy !== undefined && spec.preemptionPolicy !== null && spec.preemptionPolicy !== policy) {
      return forbidden(PODS, subjectName(pod, urlName), `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`)
    }
    spec.preemptionPolicy = policy
  }
  return undefined
}

/**
 * The validating half, for PriorityClass creates and updates: a class may become the global default only while no
 * other class is one.
 */
export function validatePriorityClassDefault(operation: AdmissionOperation, urlName: string, pc: Obj, view: () => PriorityClassView): ApiError | undefined {
  if ((operation !== 'CREATE' && operation !== 'UPDATE') || pc.globalDefault !== true) return undefined
  const d = view().globalDefault
  if (d === undefined) return undefined
  if (operation === 'CREATE' || d.name !== pc.metadata?.name) {
    return forbidden(PRIORITY_CLASSES, subjectName(pc, urlName), `PriorityClass ${d.name} is already marked as default. Only one default can exist`)
  }
  return undefined
}
