// Quantities and a pod's quality of service class (upstream pkg/apis/core/helper/qos).
import { isObj, list } from './pod-fields.js'

const SUFFIX: Record<string, number> = {
  n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
}

/** A Quantity as a number (close enough to compare); NaN when malformed. */
export function parseQuantity(q: unknown): number {
  if (typeof q === 'number') return q
  if (typeof q !== 'string') return NaN
  const m = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?)$/.exec(q.trim())
  if (!m) return NaN
  const n = Number(m[1])
  if (m[2] !== undefined) return n * 10 ** Number(m[2].slice(1))
  return n * SUFFIX[m[3] ?? '']
}

function sameQuantity(a: number, b: number): boolean { return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b)) }

export function podQOSClass(spec: unknown): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const requests = new Map<string, number>()
  const limits = new Map<string, number>()
  let guaranteed = true
  const add = (into: Map<string, number>, rl: unknown, found?: Set<string>) => {
    if (!isObj(rl)) return
    for (const [name, q] of Object.entries(rl)) {
      if (name !== 'cpu' && name !== 'memory') continue
      const v = parseQuantity(q)
      if (!(v > 0)) continue
      found?.add(name)
      into.set(name, (into.get(name) ?? 0) + v)
    }
  }
  const s = isObj(spec) ? spec : {}
  if (isObj(s.resources) && (isObj(s.resources.requests) || isObj(s.resources.limits))) {
    add(requests, s.resources.requests)
    if (isObj(s.resources.limits) && Object.keys(s.resources.limits).length > 0) {
      const found = new Set<string>()
      add(limits, s.resources.limits, found)
      if (!found.has('cpu') || !found.has('memory')) guaranteed = false
    } else guaranteed = false
  } else {
    for (const c of [...list(s.containers), ...list(s.initContainers)]) {
      const r = isObj(c.resources) ? c.resources : {}
      add(requests, r.requests)
      const found = new Set<string>()
      add(limits, r.limits, found)
      if (!found.has('cpu') || !found.has('memory')) guaranteed = false
    }
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort'
  if (guaranteed) {
    for (const [name, req] of requests) {
      const lim = limits.get(name)
      if (lim === undefined || !sameQuantity(lim, req)) { guaranteed = false; break }
    }
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable'
}

