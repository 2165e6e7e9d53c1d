// DefaultTolerationSeconds (a pod tolerates the not-ready and unreachable NoExecute taints for a while), and the merge
// of toleration lists that RuntimeClass and PodTolerationRestriction use.
import type { Obj } from '../registry/define.js'

/** upstream's node.kubernetes.io/not-ready and node.kubernetes.io/unreachable, in this brand (as node.orch.io/instance-type). */
export const TAINT_NODE_NOT_READY = 'node.orch.io/not-ready'
export const TAINT_NODE_UNREACHABLE = 'node.orch.io/unreachable'

let notReadySeconds = 300
let unreachableSeconds = 300

/** --default-not-ready-toleration-seconds and --default-unreachable-toleration-seconds. */
export function configureDefaultTolerations(notReady: number, unreachable: number): void {
  notReadySeconds = notReady
  unreachableSeconds = unreachable
}

/**
 * A pod that does not already tolerate node.orch.io/not-ready:NoExecute (by that key or an empty one, with that effect
 * or an empty one) gets the toleration for the configured seconds; the same for unreachable. A pod with both costs one
 * walk of its tolerations and nothing else.
 */
export function addDefaultTolerations(pod: Obj): void {
  const spec = pod.spec
  if (spec === null || typeof spec !== 'object') return
  const list = spec.tolerations
  let notReady = false
  let unreachable = false
  if (Array.isArray(list)) {
    for (let i = 0; i < list.length; i++) {
      const t = list[i]
      if (t === null || typeof t !== 'object') continue
      const effect = t.effect
      if (effect !== undefined && effect !== '' && effect !== 'NoExecute') continue
      const key = t.key
      if (key === undefined || key === '') return
      if (key === TAINT_NODE_NOT_READY) notReady = true
      else if (key === TAINT_NODE_UNREACHABLE) unreachable = true
    }
    if (notReady && unreachable) return
  }
  const out: Obj[] = Array.isArray(list) ? list : (spec.tolerations = [])
  if (!notReady) out.push({ key: TAINT_NODE_NOT_READY, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: notReadySeconds })
  if (!unreachable) out.push({ key: TAINT_NODE_UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: unreachableSeconds })
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '')

function sameToleration(a: Obj, b: Obj): boolean {
  return str(a.key) === str(b.key) && str(a.operator) === str(b.operator) && str(a.value) === str(b.value) &&
    str(a.effect) === str(b.effect) && (a.tolerationSeconds ?? null) === (b.tolerationSeconds ?? null)
}

/** Whether `ss` tolerates every taint `t` tolerates (upstream's tolerations.isSuperset). */
export function covers(ss: Obj, t: Obj): boolean {
  if (sameToleration(ss, t)) return true
  const ssKey = str(ss.key)
  const ssOp = str(ss.operator)
  // An empty key with Exists matches every key.
  if (str(t.key) !== ssKey && (ssKey !== '' || ssOp !== 'Exists')) return false
  const ssEffect = str(ss.effect)
  if (str(t.effect) !== ssEffect && ssEffect !== '') return false
  if (ssEffect === 'NoExecute' && typeof ss.tolerationSeconds === 'number') {
    if (typeof t.tolerationSeconds !== 'number' || t.tolerationSeconds > ss.tolerationSeconds) return false
  }
  if (ssOp === 'Equal' || ssOp === '') return str(t.operator) === 'Equal' && str(t.value) === str(ss.value)
  return ssOp === 'Exists'
}

/**
 * `first` then `second`, less every toleration another one covers (of two equal ones, the first stays), as upstream's
 * tolerations.MergeTolerations.
 */
export function mergeTolerations(first: readonly Obj[], second: readonly Obj[]): Obj[] {
  const all = [...first, ...second]
  const merged: Obj[] = []
  next: for (let i = 0; i < all.length; i++) {
    const t = all[i]
    for (const m of merged) if (covers(m, t)) continue next
    for (let j = i + 1; j < all.length; j++) if (!sameToleration(t, all[j]) && covers(all[j], t)) continue next
    merged.push(t)
  }
  return merged
}
