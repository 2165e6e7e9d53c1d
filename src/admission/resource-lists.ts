// Resource lists (name → quantity) as quota and the limit ranger use them: upstream's quota helpers (Add, Mask, LessThanOrEqual, ...) and a pod's summed requests and limits.
import { addQuantities, compareQuantities, formatQuantity, parseQuantity, subtractQuantities, ZERO, type Quantity } from '../machinery/quantity.js'

type Obj = Record<string, any>

export type ResourceList = Map<string, Quantity>

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** A stored resource map as a list; amounts that do not parse are left out. */
export function resourceList(m: unknown): ResourceList {
  const out: ResourceList = new Map()
  if (!isObj(m)) return out
  for (const [k, v] of Object.entries(m)) {
    const q = typeof v === 'string' || typeof v === 'number' ? parseQuantity(typeof v === 'string' ? v.trim() : v) : undefined
    if (q !== undefined) out.set(k, q)
  }
  return out
}

/** The list as a stored map, names sorted (as Go prints a map). */
export function resourceMap(l: ResourceList): Record<string, string> {
  const out: Record<string, string> = {}
  for (const k of [...l.keys()].sort()) out[k] = formatQuantity(l.get(k)!)
  return out
}

/** a + b, name by name (upstream quota.Add). */
export function addLists(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map()
  for (const [k, q] of a) { const o = b.get(k); out.set(k, o === undefined ? q : addQuantities(q, o)) }
  for (const [k, q] of b) if (!out.has(k)) out.set(k, q)
  return out
}

/** a - b, each at least zero, over the names of both (upstream quota.SubtractWithNonNegativeResult). */
export function subtractNonNegative(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map()
  for (const [k, q] of a) {
    const o = b.get(k)
    const d = o === undefined ? q : subtractQuantities(q, o)
    out.set(k, compareQuantities(d, ZERO) > 0 ? d : ZERO)
  }
  for (const k of b.keys()) if (!out.has(k)) out.set(k, ZERO)
  return out
}

/** The entries of `a` whose names are in `names` (upstream quota.Mask). */
export function maskList(a: ResourceList, names: Iterable<string>): ResourceList {
  const out: ResourceList = new Map()
  for (const k of names) { const q = a.get(k); if (q !== undefined) out.set(k, q) }
  return out
}

/** The names of `a` above their amount in `b` (names `b` lacks are fine), upstream quota.LessThanOrEqual. */
export function exceededNames(a: ResourceList, b: ResourceList): string[] {
  const out: string[] = []
  for (const [k, q] of a) { const lim = b.get(k); if (lim !== undefined && compareQuantities(q, lim) > 0) out.push(k) }
  return out
}

/** Same names with equal amounts (upstream quota.Equals). */
export function equalLists(a: ResourceList, b: ResourceList): boolean {
  if (a.size !== b.size) return false
  for (const [k, q] of a) { const o = b.get(k); if (o === undefined || compareQuantities(q, o) !== 0) return false }
  return true
}

export function negativeNames(a: ResourceList): string[] {
  return [...a].filter(([, q]) => q.mantissa < 0n).map(([k]) => k)
}

/** `name=amount` sorted by name, comma-joined (upstream prettyPrint of quota messages). */
export function prettyPrint(a: ResourceList): string {
  return [...a.keys()].sort().map((k) => `${k}=${formatQuantity(a.get(k)!)}`).join(',')
}

/** Names sorted, comma-joined (upstream prettyPrintResourceNames). */
export function prettyNames(names: Iterable<string>): string {
  return [...names].sort().join(',')
}

function addInto(into: ResourceList, from: ResourceList): void {
  for (const [k, q] of from) { const cur = into.get(k); into.set(k, cur === undefined ? q : addQuantities(cur, q)) }
}

function maxInto(into: ResourceList, from: ResourceList): void {
  for (const [k, q] of from) { const cur = into.get(k); if (cur === undefined || compareQuantities(q, cur) > 0) into.set(k, q) }
}

/**
 * A pod's requests or limits summed over its containers (upstream PodRequests/PodLimits without pod-level resources
 * and overhead): containers and sidecars (init containers with restartPolicy Always) add up; a plain init container
 * needs its own amount plus the sidecars started before it; the pod needs the larger of the two.
 */
export function containerTotals(spec: Obj, bag: 'requests' | 'limits'): ResourceList {
  const total: ResourceList = new Map()
  for (const c of Array.isArray(spec.containers) ? spec.containers : []) if (isObj(c)) addInto(total, resourceList(c.resources?.[bag]))
  const sidecars: ResourceList = new Map()
  const inits: ResourceList = new Map()
  for (const c of Array.isArray(spec.initContainers) ? spec.initContainers : []) {
    if (!isObj(c)) continue
    const own = resourceList(c.resources?.[bag])
    let need: ResourceList
    if (c.restartPolicy === 'Always') {
      addInto(total, own)
      addInto(sidecars, own)
      need = sidecars
    } else {
      need = new Map()
      addInto(need, own)
      addInto(need, sidecars)
    }
    maxInto(inits, need)
  }
  maxInto(total, inits)
  return total
}
