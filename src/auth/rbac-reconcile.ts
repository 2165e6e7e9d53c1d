// Start-up reconciliation of the default RBAC objects against the stored ones (upstream reconciliation of bootstrap
// policy): what to create, update or recreate, what an object protected from auto-update lacks.
import type { BindingObject, LabelSelectorObject, PolicyRule, RbacObject, RoleObject, Subject } from '../../actors/authz/rbac.js'
import { AUTOUPDATE_ANNOTATION, RBAC_GROUP } from './rbac-defaults.js'

export type ReconcileOperation = 'create' | 'update' | 'recreate' | 'none'

export interface ReconcileResult {
  /** What to do: create the wanted object, update to `object`, delete and create `object` (roleRef changed), or nothing. */
  operation: ReconcileOperation
  /** The object to write (for 'none', the existing one). */
  object: RbacObject
  /** The existing object carries `rbac.authorization.orch.io/autoupdate: "false"`: nothing is written. */
  protected: boolean
  /** Default rules the object lacks (for roles; reported even when protected, for the warning). */
  missingRules: PolicyRule[]
  /** Default subjects the binding lacks. */
  missingSubjects: Subject[]
}

function clone<T>(o: T): T { return structuredClone(o) }

/** upstream merge(expected, existing): keys of both, values already on the object win. */
function mergeMaps(wanted: Record<string, string> | undefined, existing: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!wanted && !existing) return undefined
  return { ...(wanted ?? {}), ...(existing ?? {}) }
}

function sameMap(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const ka = Object.keys(a ?? {}); const kb = Object.keys(b ?? {})
  if (ka.length !== kb.length) return false
  for (const k of ka) if ((a ?? {})[k] !== (b ?? {})[k]) return false
  return true
}

function isProtected(o: RbacObject): boolean { return o.metadata.annotations?.[AUTOUPDATE_ANNOTATION] === 'false' }

function isBinding(o: RbacObject): o is BindingObject { return o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding' }

/**
 * Start-up auto-reconciliation of one default object (upstream reconciliation, union mode):
 * absent → create; autoupdate "false" → protected, untouched; otherwise add missing label/annotation keys (existing
 * values win), missing rules (not covered by the existing ones), missing aggregation selectors, missing subjects;
 * a binding whose roleRef differs is recreated.
 */
export function reconcile(existing: RbacObject | undefined, wanted: RbacObject): ReconcileResult {
  if (!existing) {
    return {
      operation: 'create', object: clone(wanted), protected: false,
      missingRules: isBinding(wanted) ? [] : [...((wanted as RoleObject).rules ?? [])],
      missingSubjects: isBinding(wanted) ? [...(wanted.subjects ?? [])] : [],
    }
  }
  return isBinding(wanted) ? reconcileBinding(existing as BindingObject, wanted) : reconcileRole(existing as RoleObject, wanted as RoleObject)
}

function mergeMetadata(out: RbacObject, existing: RbacObject, wanted: RbacObject): boolean {
  let changed = false
  const ann = mergeMaps(wanted.metadata.annotations, existing.metadata.annotations)
  if (!sameMap(ann, existing.metadata.annotations)) changed = true
  if (ann) out.metadata.annotations = ann
  const labels = mergeMaps(wanted.metadata.labels, existing.metadata.labels)
  if (!sameMap(labels, existing.metadata.labels)) changed = true
  if (labels) out.metadata.labels = labels
  return changed
}

function selectorEqual(a: LabelSelectorObject, b: LabelSelectorObject): boolean {
  return JSON.stringify(normSelector(a)) === JSON.stringify(normSelector(b))
}

function normSelector(s: LabelSelectorObject): unknown {
  const ml = Object.entries(s.matchLabels ?? {}).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))
  return [ml, (s.matchExpressions ?? []).map((e) => [e.key, e.operator, e.values ?? []])]
}

function reconcileRole(existing: RoleObject, wanted: RoleObject): ReconcileResult {
  const prot = isProtected(existing)
  const out = clone(existing)
  let changed = mergeMetadata(out, existing, wanted)
  const missingRules = coversMissing(existing.rules ?? [], wanted.rules ?? [])
  if (missingRules.length > 0) {
    out.rules = [...(out.rules ?? []), ...missingRules]
    changed = true
  }
  const wantedSel = wanted.aggregationRule?.clusterRoleSelectors ?? []
  const haveSel = existing.aggregationRule?.clusterRoleSelectors ?? []
  if (!wanted.aggregationRule && existing.aggregationRule) {
    delete out.aggregationRule
    changed = true
  } else {
    const missingSel = wantedSel.filter((w) => !haveSel.some((h) => selectorEqual(h, w)))
    if (missingSel.length > 0) {
      out.aggregationRule = { ...(out.aggregationRule ?? {}), clusterRoleSelectors: [...haveSel, ...missingSel] }
      changed = true
    }
  }
  if (prot) return { operation: 'none', object: existing, protected: true, missingRules, missingSubjects: [] }
  return { operation: changed ? 'update' : 'none', object: changed ? out : existing, protected: false, missingRules, missingSubjects: [] }
}

/** Subject comparison after defaulting (User/Group apiGroup defaults to the RBAC group). */
function normSubject(s: Subject): string {
  const apiGroup = s.apiGroup ? s.apiGroup : s.kind === 'User' || s.kind === 'Group' ? RBAC_GROUP : ''
  return JSON.stringify([s.kind, apiGroup, s.name, s.namespace ?? ''])
}

function normRoleRef(b: BindingObject): string {
  return JSON.stringify([b.roleRef.apiGroup || RBAC_GROUP, b.roleRef.kind, b.roleRef.name])
}

function reconcileBinding(existing: BindingObject, wanted: BindingObject): ReconcileResult {
  const prot = isProtected(existing)
  const have = new Set((existing.subjects ?? []).map(normSubject))
  const missingSubjects = (wanted.subjects ?? []).filter((s) => !have.has(normSubject(s)))
  if (normRoleRef(existing) !== normRoleRef(wanted)) {
    if (prot) return { operation: 'none', object: existing, protected: true, missingRules: [], missingSubjects }
    return { operation: 'recreate', object: clone(wanted), protected: false, missingRules: [], missingSubjects: [...(wanted.subjects ?? [])] }
  }
  const out = clone(existing)
  let changed = mergeMetadata(out, existing, wanted)
  if (missingSubjects.length > 0) {
    out.subjects = [...(out.subjects ?? []), ...missingSubjects.map(clone)]
    changed = true
  }
  if (prot) return { operation: 'none', object: existing, protected: true, missingRules: [], missingSubjects }
  return { operation: changed ? 'update' : 'none', object: changed ? out : existing, protected: false, missingRules: [], missingSubjects }
}

// The Covers check, repeated here so src/auth does not import actor code at run time.
function hasAll(set: readonly string[], contains: readonly string[]): boolean { return contains.every((c) => set.includes(c)) }
function resourceCoversAll(set: readonly string[], covers: readonly string[]): boolean {
  if (set.includes('*') || hasAll(set, covers)) return true
  return covers.every((p) => set.includes(p) || (p.includes('/') && set.includes(`*/${p.slice(p.indexOf('/') + 1)}`)))
}
function urlCovers(owner: string, sub: string): boolean { return owner === sub || (owner.endsWith('*') && sub.startsWith(owner.replace(/\*+$/, ''))) }
function ruleCovers(o: PolicyRule, s: PolicyRule): boolean {
  const a = (x: string[] | null | undefined): string[] => x ?? []
  const on = a(o.resourceNames); const sn = a(s.resourceNames)
  return (a(o.verbs).includes('*') || hasAll(a(o.verbs), a(s.verbs))) &&
    (a(o.apiGroups).includes('*') || hasAll(a(o.apiGroups), a(s.apiGroups))) &&
    resourceCoversAll(a(o.resources), a(s.resources)) &&
    a(s.nonResourceURLs).every((u) => a(o.nonResourceURLs).some((ou) => urlCovers(ou, u))) &&
    (sn.length === 0 ? on.length === 0 : on.length === 0 || hasAll(on, sn))
}
function breakdown(r: PolicyRule): PolicyRule[] {
  const a = (x: string[] | null | undefined): string[] => x ?? []
  const out: PolicyRule[] = []
  for (const g of a(r.apiGroups)) for (const res of a(r.resources)) for (const v of a(r.verbs)) {
    if (a(r.resourceNames).length > 0) for (const n of a(r.resourceNames)) out.push({ verbs: [v], apiGroups: [g], resources: [res], resourceNames: [n] })
    else out.push({ verbs: [v], apiGroups: [g], resources: [res] })
  }
  for (const u of a(r.nonResourceURLs)) for (const v of a(r.verbs)) out.push({ verbs: [v], nonResourceURLs: [u] })
  return out
}
/** The atoms of `wanted` that `owner` does not cover (upstream Covers' second result). */
export function coversMissing(owner: readonly PolicyRule[], wanted: readonly PolicyRule[]): PolicyRule[] {
  const missing: PolicyRule[] = []
  for (const r of wanted) for (const atom of breakdown(r)) if (!owner.some((o) => ruleCovers(o, atom))) missing.push(atom)
  return missing
}
