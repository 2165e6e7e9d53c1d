// TaintNodesByCondition: a node is created with the not-ready NoSchedule taint, which the node lifecycle controller takes
// off once the node is ready (so that nothing is scheduled on it before).
import type { Obj } from '../registry/define.js'
import { TAINT_NODE_NOT_READY } from './tolerations.js'

/** Adds node.orch.io/not-ready:NoSchedule to a node being created, unless a taint of that key and effect is there. */
export function taintNewNode(node: Obj): void {
  let spec = node.spec
  if (spec === null || typeof spec !== 'object') spec = node.spec = {}
  let taints = spec.taints
  if (Array.isArray(taints)) {
    for (const t of taints) if (t !== null && typeof t === 'object' && t.key === TAINT_NODE_NOT_READY && t.effect === 'NoSchedule') return
  } else {
    taints = spec.taints = []
  }
  taints.push({ key: TAINT_NODE_NOT_READY, effect: 'NoSchedule' })
}
