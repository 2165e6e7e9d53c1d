// The optional admission plugins upstream has off by default: AlwaysAdmit (nothing), AlwaysDeny (every write
// refused), NamespaceExists (a namespaced write needs its namespace), AlwaysPullImages (every container pulls its
// image), PodNodeSelector (a namespace's node selector) and PodTolerationRestriction (a namespace's default and
// allowed tolerations).
import { forbidden, notFound, type ApiError } from '../machinery/errors.js'
import type { Obj } from '../registry/define.js'
import { brandedAnnotation } from '../registry/resources/_printers.js'
import { podQOSClass } from '../registry/resources/core/pod-qos.js'
import { qualifiedName, labelValue } from '../machinery/validation.js'
import { covers, mergeTolerations } from './tolerations.js'

const PODS = { group: '', resource: 'pods' }
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)

/** AlwaysDeny: every write is refused. */
export function denyAll(gr: { group: string; resource: string }, name: string): ApiError {
  return forbidden(gr, name, 'admission control is denying all modifications')
}

/** NamespaceExists: the 404 of a write into a namespace that does not exist. */
export function namespaceMissing(ns: string): ApiError {
  return notFound({ group: '', resource: 'namespaces' }, ns)
}

/** Every container, init container and ephemeral container of a pod spec, with its field path. */
function visitContainers(spec: Obj, fn: (c: Obj, path: string) => void): void {
  for (const [field, list] of [['initContainers', spec.initContainers], ['containers', spec.containers], ['ephemeralContainers', spec.ephemeralContainers]] as const) {
    if (!Array.isArray(list)) continue
    list.forEach((c: unknown, i: number) => { if (isObj(c)) fn(c, `spec.${field}[${i}]`) })
  }
}

/** An update whose containers use only images the old pod used: AlwaysPullImages leaves it alone. */
function noNewImages(pod: Obj, old: Obj | undefined): boolean {
  if (old === undefined || !isObj(old.spec) || !isObj(pod.spec)) return false
  const images = new Set<unknown>()
  visitContainers(old.spec, (c) => images.add(c.image))
  let fresh = false
  visitContainers(pod.spec, (c) => { if (!images.has(c.image)) fresh = true })
  return !fresh
}

/** AlwaysPullImages, mutating: every container pulls its image always (a create, or an update with a new image). */
export function forcePullAlways(pod: Obj, old: Obj | undefined): void {
  if (!isObj(pod.spec) || noNewImages(pod, old)) return
  visitContainers(pod.spec, (c) => { c.imagePullPolicy = 'Always' })
}

/** AlwaysPullImages, validating: a container that does not pull always is refused (each one named). */
export function checkPullAlways(name: string, pod: Obj, old: Obj | undefined): ApiError | undefined {
  if (!isObj(pod.spec) || noNewImages(pod, old)) return undefined
  const errs: string[] = []
  visitContainers(pod.spec, (c, p) => {
    if (c.imagePullPolicy !== 'Always') errs.push(`${p}.imagePullPolicy: Unsupported value: ${JSON.stringify(String(c.imagePullPolicy ?? ''))}: supported values: "Always"`)
  })
  if (errs.length === 0) return undefined
  return forbidden(PODS, name, errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`)
}

/** upstream labels.ConvertSelectorToLabelsMap: `k=v,k2=v2` (`==` too), each key and value checked. */
function selectorMap(text: string): Record<string, string> {
  const out: Record<string, string> = {}
  if (text.trim() === '') return out
  for (const part of text.split(',')) {
    const kv = part.trim().split(/==?/)
    if (kv.length !== 2) throw new Error(`invalid selector: ${JSON.stringify([part.trim()])}`)
    const key = kv[0].trim()
    const value = kv[1].trim()
    const bad = [...qualifiedName(key), ...labelValue(value)]
    if (bad.length > 0) throw new Error(`invalid label key or value ${JSON.stringify(key)}=${JSON.stringify(value)}: ${bad.join('; ')}`)
    out[key] = value
  }
  return out
}

const conflicts = (a: Record<string, string>, b: Record<string, string>): boolean => Object.keys(a).some((k) => k in b && b[k] !== a[k])

/** upstream's scheduler.alpha.kubernetes.io/node-selector, in this brand (the upstream spelling is read too). */
export const NODE_SELECTOR_ANNOTATION = 'scheduler.alpha.orch.io/node-selector'

/**
 * PodNodeSelector on a pod's create: the namespace's node selector (its annotation) is merged into the pod's, which
 * wins; a pod selector that conflicts with it is refused.
 */
export function admitPodNodeSelector(name: string, pod: Obj, namespace: Obj | undefined, ns: string): ApiError | undefined {
  if (namespace === undefined) return namespaceMissing(ns)
  const text = brandedAnnotation(namespace, NODE_SELECTOR_ANNOTATION)
  if (text === undefined) return undefined
  let nsSel: Record<string, string>
  try {
    nsSel = selectorMap(text)
  } catch (err) {
    return forbidden(PODS, name, (err as Error).message)
  }
  const podSel: Record<string, string> = isObj(pod.spec?.nodeSelector) ? pod.spec.nodeSelector : {}
  if (conflicts(nsSel, podSel)) return forbidden(PODS, name, 'pod node label selector conflicts with its namespace node label selector')
  if (Object.keys(nsSel).length > 0 && isObj(pod.spec)) pod.spec.nodeSelector = { ...nsSel, ...podSel }
  return undefined
}

/** upstream's scheduler.alpha.kubernetes.io/defaultTolerations and tolerationsWhitelist, in this brand. */
export const DEFAULT_TOLERATIONS_ANNOTATION = 'scheduler.alpha.orch.io/defaultTolerations'
export const TOLERATIONS_WHITELIST_ANNOTATION = 'scheduler.alpha.orch.io/tolerationsWhitelist'
/** upstream's node.kubernetes.io/memory-pressure, in this brand. */
export const TAINT_NODE_MEMORY_PRESSURE = 'node.orch.io/memory-pressure'

/** The tolerations of a namespace annotation: undefined when absent, [] when empty. */
function namespaceTolerations(namespace: Obj, key: string): Obj[] | undefined {
  const text = brandedAnnotation(namespace, key)
  if (text === undefined) return undefined
  if (text === '') return []
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch (err) {
    throw new Error(`${key}: ${(err as Error).message}`)
  }
  if (!Array.isArray(v) || !v.every(isObj)) throw new Error(`${key}: cannot unmarshal into []Toleration`)
  return v as Obj[]
}

/**
 * PodTolerationRestriction on a pod's create and update: on create the namespace's default tolerations are merged in,
 * and a pod that is not BestEffort tolerates memory pressure; then every toleration must be one the namespace's
 * whitelist allows (when it has one).
 */
export function admitPodTolerations(name: string, pod: Obj, create: boolean, namespace: Obj | undefined, ns: string): ApiError | undefined {
  if (namespace === undefined) return namespaceMissing(ns)
  if (!isObj(pod.spec)) return undefined
  let extra: Obj[] = []
  let whitelist: Obj[] | undefined
  try {
    if (create) extra = [...(namespaceTolerations(namespace, DEFAULT_TOLERATIONS_ANNOTATION) ?? [])]
    whitelist = namespaceTolerations(namespace, TOLERATIONS_WHITELIST_ANNOTATION)
  } catch (err) {
    return forbidden(PODS, name, (err as Error).message)
  }
  if (podQOSClass(pod.spec) !== 'BestEffort') extra.push({ key: TAINT_NODE_MEMORY_PRESSURE, operator: 'Exists', effect: 'NoSchedule' })
  if (extra.length > 0) pod.spec.tolerations = mergeTolerations(Array.isArray(pod.spec.tolerations) ? pod.spec.tolerations : [], extra)
  const ts: Obj[] = Array.isArray(pod.spec.tolerations) ? pod.spec.tolerations : []
  if (ts.length === 0 || whitelist === undefined || whitelist.length === 0) return undefined
  if (!ts.every((t) => whitelist!.some((w) => covers(w, t)))) {
    return forbidden(PODS, name, 'pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist')
  }
  return undefined
}

