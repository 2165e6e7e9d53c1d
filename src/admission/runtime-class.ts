// RuntimeClass: a new pod that names a RuntimeClass gets its overhead and its scheduling (node selector, tolerations);
// a pod naming a class that does not exist, or whose overhead does not match its class's, is refused.
import { forbidden, type ApiError } from '../machinery/errors.js'
import type { Obj } from '../registry/define.js'
import { parseQuantity } from '../registry/resources/core/pod-qos.js'
import { mergeTolerations } from './tolerations.js'

const PODS = { group: '', resource: 'pods' }
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)

/** Two resource lists with the same names and equal quantities (nil and empty alike, as upstream's semantic equality). */
function sameResources(a: unknown, b: unknown): boolean {
  const ak = isObj(a) ? Object.keys(a) : []
  const bk = isObj(b) ? Object.keys(b) : []
  if (ak.length !== bk.length) return false
  for (const k of ak) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false
    const x = parseQuantity((a as Obj)[k])
    const y = parseQuantity((b as Obj)[k])
    if (x !== y && !(Number.isNaN(x) && Number.isNaN(y) && (a as Obj)[k] === (b as Obj)[k])) return false
  }
  return true
}

/** The pod's class, or the 403 of a pod naming one that does not exist; undefined class when it names none. */
function classOf(name: string, pod: Obj, runtimeClass: (name: string) => Obj | undefined): { rc?: Obj; err?: ApiError } {
  const rcName = pod.spec?.runtimeClassName
  if (typeof rcName !== 'string') return {}
  const rc = runtimeClass(rcName)
  if (rc === undefined) return { err: forbidden(PODS, name, `pod rejected: RuntimeClass ${JSON.stringify(rcName)} not found`) }
  return { rc }
}

/** The mutating half, on a pod's create: overhead, then node selector and tolerations, from the pod's class. */
export function admitRuntimeClass(name: string, pod: Obj, runtimeClass: (name: string) => Obj | undefined): ApiError | undefined {
  const { rc, err } = classOf(name, pod, runtimeClass)
  if (err !== undefined || rc === undefined) return err
  const spec = pod.spec
  if (isObj(rc.overhead)) {
    const fixed = rc.overhead.podFixed
    if (spec.overhead !== undefined && !sameResources(fixed, spec.overhead)) {
      return forbidden(PODS, name, 'pod rejected: Pod\'s Overhead doesn\'t match RuntimeClass\'s defined Overhead')
    }
    if (isObj(fixed)) spec.overhead = { ...fixed }
    else delete spec.overhead
  }
  const sched = rc.scheduling
  if (!isObj(sched)) return undefined
  const classSelector: Obj = isObj(sched.nodeSelector) ? sched.nodeSelector : {}
  if (isObj(spec.nodeSelector)) {
    const sel = spec.nodeSelector
    for (const [k, v] of Object.entries(classSelector)) {
      if (Object.prototype.hasOwnProperty.call(sel, k) && sel[k] !== v) {
        return forbidden(PODS, name, `conflict: runtimeClass.scheduling.nodeSelector[${k}] = ${v}; pod.spec.nodeSelector[${k}] = ${sel[k]}`)
      }
    }
    Object.assign(sel, classSelector)
  } else if (isObj(sched.nodeSelector)) {
    spec.nodeSelector = { ...classSelector }
  }
  const classTolerations: Obj[] = Array.isArray(sched.tolerations) ? sched.tolerations : []
  const podTolerations: Obj[] = Array.isArray(spec.tolerations) ? spec.tolerations : []
  if (classTolerations.length > 0 || podTolerations.length > 0) {
    const merged = mergeTolerations(podTolerations, classTolerations.map((t) => ({ ...t })))
    if (merged.length > 0) spec.tolerations = merged
  }
  return undefined
}

/** The validating half, on a pod's create: its overhead is its class's, or it has none when its class has none. */
export function validateRuntimeClass(name: string, pod: Obj, runtimeClass: (name: string) => Obj | undefined): ApiError | undefined {
  const { rc, err } = classOf(name, pod, runtimeClass)
  if (err !== undefined) return err
  if (rc !== undefined && isObj(rc.overhead)) {
    if (!sameResources(rc.overhead.podFixed, pod.spec?.overhead)) return forbidden(PODS, name, 'pod rejected: Pod\'s Overhead doesn\'t match RuntimeClass\'s defined Overhead')
  } else if (pod.spec?.overhead !== undefined) {
    return forbidden(PODS, name, 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead')
  }
  return undefined
}
