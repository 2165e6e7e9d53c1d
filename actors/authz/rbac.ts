// The RBAC authorizer: an in-memory index of Roles, ClusterRoles and their bindings, rule matching, escalation checks and aggregation.
import { forbidden, goQuote, type ApiError } from '../../src/machinery/errors.js'
import type { Attributes, Decision } from './messages.js'

export const RBAC_GROUP = 'rbac.authorization.orch.io'

export interface PolicyRule {
  verbs: string[]
  apiGroups?: string[] | null
  resources?: string[] | null
  resourceNames?: string[] | null
  nonResourceURLs?: string[] | null
}

export interface Subject { kind: string; name: string; namespace?: string; apiGroup?: string }
export interface RoleRef { kind: string; name: string; apiGroup?: string }

export interface LabelSelectorRequirement { key: string; operator: string; values?: string[] | null }
export interface LabelSelectorObject { matchLabels?: Record<string, string> | null; matchExpressions?: LabelSelectorRequirement[] | null }

export interface RbacMeta {
  name: string
  namespace?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
  [k: string]: unknown
}

export interface RoleObject {
  apiVersion?: string
  kind: 'Role' | 'ClusterRole' | string
  metadata: RbacMeta
  rules?: PolicyRule[] | null
  aggregationRule?: { clusterRoleSelectors?: LabelSelectorObject[] | null } | null
}

export interface BindingObject {
  apiVersion?: string
  kind: 'RoleBinding' | 'ClusterRoleBinding' | string
  metadata: RbacMeta
  subjects?: Subject[] | null
  roleRef: RoleRef
}

export type RbacObject = RoleObject | BindingObject

/** The requesting user as escalation checks see it. */
export interface RbacUser { name: string; groups: string[] }

export interface RbacDecision { decision: Decision; reason: string }

/** The source a rule was resolved from (upstream's describer), for allow reasons. */
interface RuleSource { binding: BindingObject; subject: Subject }

// ---------------------------------------------------------------- rule matching

const arr = (a: string[] | null | undefined): string[] => a ?? []

export function verbMatches(rule: PolicyRule, verb: string): boolean {
  for (const v of arr(rule.verbs)) if (v === '*' || v === verb) return true
  return false
}

export function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  for (const g of arr(rule.apiGroups)) if (g === '*' || g === group) return true
  return false
}

/** `*` matches everything; an exact `resource/subresource`; or `*\/<sub>` any resource's `<sub>`. `pods/*` is not a wildcard. */
export function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  for (const r of arr(rule.resources)) {
    if (r === '*' || r === combined) return true
    if (subresource === '') continue
    if (r.length === subresource.length + 2 && r.startsWith('*/') && r.endsWith(subresource)) return true
  }
  return false
}

export function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = arr(rule.resourceNames)
  if (names.length === 0) return true
  return names.includes(name)
}

export function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  for (const u of arr(rule.nonResourceURLs)) {
    if (u === '*' || u === path) return true
    if (u.endsWith('*') && path.startsWith(u.replace(/\*+$/, ''))) return true
  }
  return false
}

/** Whether one rule allows the request (upstream RuleAllows). */
export function ruleAllows(a: Attributes, rule: PolicyRule): boolean {
  if (a.isResourceRequest) {
    const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource
    return verbMatches(rule, a.verb) && apiGroupMatches(rule, a.apiGroup) &&
      resourceMatches(rule, combined, a.subresource) && resourceNameMatches(rule, a.name)
  }
  return verbMatches(rule, a.verb) && nonResourceURLMatches(rule, a.path)
}

export function rulesAllow(a: Attributes, rules: readonly PolicyRule[]): boolean {
  for (const r of rules) if (ruleAllows(a, r)) return true
  return false
}

// ---------------------------------------------------------------- subjects

export function serviceAccountUsername(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`
}

/** Whether a subject names this user; `bindingNamespace` defaults a ServiceAccount subject's namespace ("" for cluster bindings). */
export function subjectApplies(s: Subject, user: string, groups: readonly string[], bindingNamespace: string): boolean {
  switch (s.kind) {
    case 'User': return user === s.name
    case 'Group': return groups.includes(s.name)
    case 'ServiceAccount': {
      const ns = s.namespace ? s.namespace : bindingNamespace
      if (ns === '') return false
      return serviceAccountUsername(ns, s.name) === user
    }
    default: return false
  }
}

function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount') return `${s.kind} ${goQuote(`${s.name}/${s.namespace ? s.namespace : bindingNamespace}`)}`
  return `${s.kind} ${goQuote(s.name)}`
}

function describeSource(src: RuleSource): string {
  const b = src.binding
  if (b.kind === 'ClusterRoleBinding') {
    return `ClusterRoleBinding ${goQuote(b.metadata.name)} of ${b.roleRef.kind} ${goQuote(b.roleRef.name)} to ${describeSubject(src.subject, '')}`
  }
  const ns = b.metadata.namespace ?? ''
  return `RoleBinding ${goQuote(`${b.metadata.name}/${ns}`)} of ${b.roleRef.kind} ${goQuote(b.roleRef.name)} to ${describeSubject(src.subject, ns)}`
}

/** utilerrors.NewAggregate's text: one message alone, several as `[a, b]`, duplicates dropped. */
export function aggregateMessages(msgs: string[]): string {
  const seen = [...new Set(msgs)]
  return seen.length === 1 ? seen[0] : `[${seen.join(', ')}]`
}

// ---------------------------------------------------------------- label selectors (metav1.LabelSelector)

/** Matches a metav1.LabelSelector object; an invalid selector matches nothing (upstream errors out of the sync). */
export function labelSelectorMatches(sel: LabelSelectorObject | null | undefined, labels: Record<string, string> | undefined): boolean {
  if (!sel) return false
  const l = labels ?? {}
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (l[k] !== v) return false
  for (const e of sel.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(l, e.key)
    const vals = e.values ?? []
    switch (e.operator) {
      case 'In': if (!has || !vals.includes(l[e.key])) return false; break
      case 'NotIn': if (has && vals.includes(l[e.key])) return false; break
      case 'Exists': if (!has) return false; break
      case 'DoesNotExist': if (has) return false; break
      default: return false
    }
  }
  return true
}

// ---------------------------------------------------------------- the index

type NameMap<T> = Map<string, T>

/** Subject index keys: `u:<user name>` (users and service accounts) and `g:<group>`. */
function subjectKeys(b: BindingObject, bindingNamespace: string): string[] {
  const keys: string[] = []
  for (const s of b.subjects ?? []) {
    if (s.kind === 'User') keys.push(`u:${s.name}`)
    else if (s.kind === 'Group') keys.push(`g:${s.name}`)
    else if (s.kind === 'ServiceAccount') {
      const ns = s.namespace ? s.namespace : bindingNamespace
      if (ns !== '') keys.push(`u:${serviceAccountUsername(ns, s.name)}`)
    }
  }
  return keys
}

class BindingSet {
  readonly byName: NameMap<BindingObject> = new Map()
  /** subject key → binding names */
  readonly bySubject = new Map<string, Set<string>>()
  /** insertion sequence, so candidates are visited in a stable order */
  readonly seq = new Map<string, number>()
  #next = 0

  constructor(readonly namespace: string) {}

  put(b: BindingObject): void {
    const name = b.metadata.name
    this.delete(name)
    this.byName.set(name, b)
    this.seq.set(name, this.#next++)
    for (const k of subjectKeys(b, this.namespace)) {
      let s = this.bySubject.get(k)
      if (!s) { s = new Set(); this.bySubject.set(k, s) }
      s.add(name)
    }
  }

  delete(name: string): boolean {
    const old = this.byName.get(name)
    if (!old) return false
    this.byName.delete(name)
    this.seq.delete(name)
    for (const k of subjectKeys(old, this.namespace)) {
      const s = this.bySubject.get(k)
      if (s) { s.delete(name); if (s.size === 0) this.bySubject.delete(k) }
    }
    return true
  }

  /** Bindings that may apply to the user, in insertion order. */
  candidates(user: string, groups: readonly string[]): BindingObject[] {
    const names = new Set<string>()
    for (const n of this.bySubject.get(`u:${user}`) ?? []) names.add(n)
    for (const g of groups) for (const n of this.bySubject.get(`g:${g}`) ?? []) names.add(n)
    if (names.size === 0) return []
    const list = [...names]
    if (list.length > 1) list.sort((x, y) => this.seq.get(x)! - this.seq.get(y)!)
    return list.map((n) => this.byName.get(n)!)
  }
}

export interface ResolvedRules { rules: PolicyRule[]; errors: string[] }

export interface EscalationOk { ok: true }
export interface EscalationDenied { ok: false; missing: PolicyRule[]; message: string }
export type EscalationResult = EscalationOk | EscalationDenied

export class RbacIndex {
  readonly #clusterRoles: NameMap<RoleObject> = new Map()
  readonly #roles = new Map<string, NameMap<RoleObject>>()
  readonly #clusterBindings = new BindingSet('')
  readonly #bindings = new Map<string, BindingSet>()
  /** Bumped on every change (for decision caches). */
  generation = 0

  /** Adds or replaces a Role, ClusterRole, RoleBinding or ClusterRoleBinding; returns false for other kinds. */
  upsert(obj: RbacObject): boolean {
    const name = obj.metadata?.name
    if (!name) return false
    const ns = obj.metadata.namespace ?? ''
    switch (obj.kind) {
      case 'ClusterRole': this.#clusterRoles.set(name, obj as RoleObject); break
      case 'Role': {
        let m = this.#roles.get(ns)
        if (!m) { m = new Map(); this.#roles.set(ns, m) }
        m.set(name, obj as RoleObject)
        break
      }
      case 'ClusterRoleBinding': this.#clusterBindings.put(obj as BindingObject); break
      case 'RoleBinding': {
        let s = this.#bindings.get(ns)
        if (!s) { s = new BindingSet(ns); this.#bindings.set(ns, s) }
        s.put(obj as BindingObject)
        break
      }
      default: return false
    }
    this.generation++
    return true
  }

  remove(kind: string, namespace: string, name: string): boolean {
    let removed = false
    switch (kind) {
      case 'ClusterRole': removed = this.#clusterRoles.delete(name); break
      case 'Role': {
        const m = this.#roles.get(namespace)
        removed = m?.delete(name) ?? false
        if (m && m.size === 0) this.#roles.delete(namespace)
        break
      }
      case 'ClusterRoleBinding': removed = this.#clusterBindings.delete(name); break
      case 'RoleBinding': {
        const s = this.#bindings.get(namespace)
        removed = s?.delete(name) ?? false
        if (s && s.byName.size === 0) this.#bindings.delete(namespace)
        break
      }
    }
    if (removed) this.generation++
    return removed
  }

  getClusterRole(name: string): RoleObject | undefined { return this.#clusterRoles.get(name) }
  getRole(namespace: string, name: string): RoleObject | undefined { return this.#roles.get(namespace)?.get(name) }
  clusterRoles(): RoleObject[] { return [...this.#clusterRoles.values()] }

  /** The rules a role reference points at (upstream GetRoleReferenceRules); errors in upstream's wording. */
  roleReferenceRules(ref: RoleRef, bindingNamespace: string): { rules: PolicyRule[] } | { error: string } {
    switch (ref.kind) {
      case 'Role': {
        const r = this.getRole(bindingNamespace, ref.name)
        if (!r) return { error: `role.${RBAC_GROUP} ${goQuote(ref.name)} not found` }
        return { rules: r.rules ?? [] }
      }
      case 'ClusterRole': {
        const r = this.getClusterRole(ref.name)
        if (!r) return { error: `clusterrole.${RBAC_GROUP} ${goQuote(ref.name)} not found` }
        return { rules: r.rules ?? [] }
      }
      default: return { error: `unsupported role reference kind: ${goQuote(ref.kind)}` }
    }
  }

  /**
   * Visits rules for the user: ClusterRoleBindings first, then RoleBindings of `namespace` (when not "").
   * The visitor returns false to stop. A missing role is reported as an error and the walk goes on.
   */
  visitRulesFor(user: string, groups: readonly string[], namespace: string,
    visit: (source: RuleSource | undefined, rule: PolicyRule | undefined, err: string | undefined) => boolean): void {
    for (const b of this.#clusterBindings.candidates(user, groups)) {
      const subject = (b.subjects ?? []).find((s) => subjectApplies(s, user, groups, ''))
      if (!subject) continue
      const res = this.roleReferenceRules(b.roleRef, '')
      if ('error' in res) { if (!visit(undefined, undefined, res.error)) return; continue }
      const src: RuleSource = { binding: b, subject }
      for (const r of res.rules) if (!visit(src, r, undefined)) return
    }
    if (namespace === '') return
    const set = this.#bindings.get(namespace)
    if (!set) return
    for (const b of set.candidates(user, groups)) {
      const subject = (b.subjects ?? []).find((s) => subjectApplies(s, user, groups, namespace))
      if (!subject) continue
      const res = this.roleReferenceRules(b.roleRef, namespace)
      if ('error' in res) { if (!visit(undefined, undefined, res.error)) return; continue }
      const src: RuleSource = { binding: b, subject }
      for (const r of res.rules) if (!visit(src, r, undefined)) return
    }
  }

  /** The RBAC decision: allow with the binding that allowed it, else no opinion (with resolution errors as the reason). */
  authorize(a: Attributes): RbacDecision {
    let allowedBy: RuleSource | undefined
    const errors: string[] = []
    this.visitRulesFor(a.user, a.groups, a.namespace, (src, rule, err) => {
      if (rule && src && ruleAllows(a, rule)) { allowedBy = src; return false }
      if (err) errors.push(err)
      return true
    })
    if (allowedBy) return { decision: 'allow', reason: `RBAC: allowed by ${describeSource(allowedBy)}` }
    return { decision: 'noopinion', reason: errors.length > 0 ? `RBAC: ${aggregateMessages(errors)}` : '' }
  }

  /** Every rule that applies to the user in the namespace ("" = cluster bindings only), with resolution errors. */
  rulesFor(user: string, groups: readonly string[], namespace: string): ResolvedRules {
    const rules: PolicyRule[] = []
    const errors: string[] = []
    this.visitRulesFor(user, groups, namespace, (_src, rule, err) => {
      if (rule) rules.push(rule)
      if (err) errors.push(err)
      return true
    })
    return { rules, errors }
  }

  /**
   * Whether the user holds every permission in `rulesWanted` at `namespace` (upstream ConfirmNoEscalation).
   * Does not consult `escalate`/`bind` or system:masters: see checkRoleWrite / checkBindingWrite.
   */
  escalationCheck(user: RbacUser, rulesWanted: readonly PolicyRule[], namespace: string): EscalationResult {
    const owner = this.rulesFor(user.name, user.groups, namespace)
    const { covered, missing } = covers(owner.rules, rulesWanted)
    if (covered) return { ok: true }
    const lines = [...new Set(compactRules(missing).map(compactString))].sort()
    let message = `user ${goQuote(user.name)} (groups=${goQuoteList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`
    if (owner.errors.length > 0) message += `; resolution errors: [${aggregateMessages(owner.errors)}]`
    return { ok: false, missing, message }
  }
}

// ---------------------------------------------------------------- the authorizer as a chain member

/** An Authorizer (worker.ts shape) over an index. */
export function rbacAuthorizer(index: RbacIndex): (a: Attributes) => RbacDecision {
  return (a) => index.authorize(a)
}

// ---------------------------------------------------------------- Covers (policy comparator)

function hasAll(set: readonly string[], contains: readonly string[]): boolean {
  if (contains.length === 0) return true
  const s = new Set(set)
  for (const c of contains) if (!s.has(c)) return false
  return true
}

function resourceCoversAll(set: readonly string[], covers: readonly string[]): boolean {
  if (set.includes('*') || hasAll(set, covers)) return true
  for (const path of covers) {
    if (set.includes(path)) continue
    const slash = path.indexOf('/')
    if (slash < 0) return false
    if (!set.includes(`*/${path.slice(slash + 1)}`)) return false
  }
  return true
}

function nonResourceURLCovers(owner: string, sub: string): boolean {
  if (owner === sub) return true
  return owner.endsWith('*') && sub.startsWith(owner.replace(/\*+$/, ''))
}

function nonResourceURLsCoverAll(set: readonly string[], covers: readonly string[]): boolean {
  for (const p of covers) if (!set.some((o) => nonResourceURLCovers(o, p))) return false
  return true
}

/** Splits a rule into atoms: one group × resource × verb (× name), and one URL × verb. */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = []
  const names = arr(rule.resourceNames)
  for (const g of arr(rule.apiGroups)) {
    for (const r of arr(rule.resources)) {
      for (const v of arr(rule.verbs)) {
        if (names.length > 0) for (const n of names) out.push({ apiGroups: [g], resources: [r], verbs: [v], resourceNames: [n] })
        else out.push({ apiGroups: [g], resources: [r], verbs: [v] })
      }
    }
  }
  for (const u of arr(rule.nonResourceURLs)) for (const v of arr(rule.verbs)) out.push({ nonResourceURLs: [u], verbs: [v] })
  return out
}

/** Whether an owner rule covers one atom. */
export function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const ov = arr(owner.verbs); const og = arr(owner.apiGroups); const on = arr(owner.resourceNames)
  const verbs = ov.includes('*') || hasAll(ov, arr(sub.verbs))
  const groups = og.includes('*') || hasAll(og, arr(sub.apiGroups))
  const resources = resourceCoversAll(arr(owner.resources), arr(sub.resources))
  const urls = nonResourceURLsCoverAll(arr(owner.nonResourceURLs), arr(sub.nonResourceURLs))
  const sn = arr(sub.resourceNames)
  const names = sn.length === 0 ? on.length === 0 : on.length === 0 || hasAll(on, sn)
  return verbs && groups && resources && names && urls
}

/** Whether the owner rules cover every servant rule; the uncovered atoms otherwise. */
export function covers(owner: readonly PolicyRule[], servant: readonly PolicyRule[]): { covered: boolean; missing: PolicyRule[] } {
  const missing: PolicyRule[] = []
  for (const r of servant) {
    for (const atom of breakdownRule(r)) if (!owner.some((o) => ruleCovers(o, atom))) missing.push(atom)
  }
  return { covered: missing.length === 0, missing }
}

/** Merges simple single-group/single-resource rules that differ only in verbs (upstream CompactRules). */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = []
  const simple = new Map<string, PolicyRule>()
  for (const r of rules) {
    const names = arr(r.resourceNames)
    const isSimple = names.length <= 1 && arr(r.nonResourceURLs).length === 0 && arr(r.apiGroups).length === 1 && arr(r.resources).length === 1
    if (!isSimple) { out.push(r); continue }
    const key = JSON.stringify([r.apiGroups![0], r.resources![0], names.length > 0, names[0] ?? ''])
    const e = simple.get(key)
    if (e) { for (const v of arr(r.verbs)) if (!e.verbs.includes(v)) e.verbs.push(v) }
    else simple.set(key, { ...r, verbs: [...arr(r.verbs)] })
  }
  out.push(...simple.values())
  return out
}

/** Go's %q of a []string: `["a" "b"]`. */
export function goQuoteList(list: readonly string[]): string {
  return `[${list.map(goQuote).join(' ')}]`
}

/** upstream CompactString: `{APIGroups:["apps"], Resources:["deployments"], Verbs:["create"]}`. */
export function compactString(r: PolicyRule): string {
  const parts: string[] = []
  if (arr(r.apiGroups).length > 0) parts.push(`APIGroups:${goQuoteList(arr(r.apiGroups))}`)
  if (arr(r.resources).length > 0) parts.push(`Resources:${goQuoteList(arr(r.resources))}`)
  if (arr(r.nonResourceURLs).length > 0) parts.push(`NonResourceURLs:${goQuoteList(arr(r.nonResourceURLs))}`)
  if (arr(r.resourceNames).length > 0) parts.push(`ResourceNames:${goQuoteList(arr(r.resourceNames))}`)
  if (arr(r.verbs).length > 0) parts.push(`Verbs:${goQuoteList(arr(r.verbs))}`)
  return `{${parts.join(', ')}}`
}

// ---------------------------------------------------------------- registry-side write checks

/** The whole authorizer chain (used for the `escalate` and `bind` checks). */
export type AuthorizeFn = (a: Attributes) => { decision: Decision; reason?: string }

export const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
]

function specialVerbAttrs(user: RbacUser, verb: string, resource: string, namespace: string, name: string): Attributes {
  return {
    user: user.name, groups: user.groups, uid: '', verb, isResourceRequest: true, apiGroup: RBAC_GROUP, apiVersion: '',
    namespace, resource, subresource: '', name, path: '',
  }
}

/** Upstream IsOnlyMutatingGCFields: the objects differ only in ownerReferences/finalizers/managedFields (and resourceVersion). */
export function isOnlyMutatingGCFields(obj: RbacObject, old: RbacObject | undefined): boolean {
  if (!old) return false
  const strip = (o: RbacObject): unknown => {
    const m = { ...o.metadata }
    delete m.ownerReferences; delete m.finalizers; delete m.managedFields; delete m.resourceVersion; delete m.selfLink
    return { ...o, metadata: m }
  }
  return semanticEqual(strip(obj), strip(old))
}

/** Deep equality where null/undefined/empty arrays and empty objects are the same (apimachinery's Semantic.DeepEqual). */
export function semanticEqual(a: unknown, b: unknown): boolean {
  const empty = (v: unknown): boolean => v === undefined || v === null || (Array.isArray(v) && v.length === 0) ||
    (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0)
  if (empty(a) && empty(b)) return true
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!semanticEqual(a[i], b[i])) return false
    return true
  }
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)])
    for (const k of keys) if (!semanticEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false
    return true
  }
  return a === b
}

function hasAggregationRule(o: RoleObject | undefined): boolean { return !!o?.aggregationRule }

/**
 * Create/update of a Role or ClusterRole (policybased storage): allowed for system:masters, for `escalate` on the role,
 * or when the user covers every rule; a ClusterRole aggregationRule (new or old) needs full authority.
 * Returns the 403 to answer, or undefined to go on.
 */
export function checkRoleWrite(index: RbacIndex, authorize: AuthorizeFn, user: RbacUser, obj: RoleObject, old?: RoleObject): ApiError | undefined {
  if (user.groups.includes('system:masters')) return undefined
  const cluster = obj.kind === 'ClusterRole'
  const resource = cluster ? 'clusterroles' : 'roles'
  const namespace = cluster ? '' : (obj.metadata.namespace ?? '')
  const name = obj.metadata.name
  if (authorize(specialVerbAttrs(user, 'escalate', resource, namespace, name)).decision === 'allow') return undefined
  if (old && isOnlyMutatingGCFields(obj, old)) return undefined
  const gr = { group: RBAC_GROUP, resource }
  const res = index.escalationCheck(user, obj.rules ?? [], namespace)
  if (!res.ok) return forbidden(gr, name, res.message)
  if (cluster && (hasAggregationRule(obj) || hasAggregationRule(old))) {
    if (!index.escalationCheck(user, FULL_AUTHORITY, '').ok) return forbidden(gr, name, 'must have cluster-admin privileges to use the aggregationRule')
  }
  return undefined
}

/**
 * Create/update of a RoleBinding or ClusterRoleBinding: allowed for system:masters, for `bind` on the referenced role
 * (in the binding's namespace), or when the user covers every rule of the referenced role there.
 */
export function checkBindingWrite(index: RbacIndex, authorize: AuthorizeFn, user: RbacUser, obj: BindingObject, old?: BindingObject): ApiError | undefined {
  if (user.groups.includes('system:masters')) return undefined
  if (old && isOnlyMutatingGCFields(obj, old)) return undefined
  const cluster = obj.kind === 'ClusterRoleBinding'
  const namespace = cluster ? '' : (obj.metadata.namespace ?? '')
  const gr = { group: RBAC_GROUP, resource: cluster ? 'clusterrolebindings' : 'rolebindings' }
  const ref = obj.roleRef
  const refResource = ref.kind === 'ClusterRole' ? 'clusterroles' : ref.kind === 'Role' ? 'roles' : ''
  if (refResource !== '' && authorize(specialVerbAttrs(user, 'bind', refResource, namespace, ref.name)).decision === 'allow') return undefined
  const rules = index.roleReferenceRules(ref, namespace)
  if ('error' in rules) return forbidden(gr, obj.metadata.name, rules.error)
  const res = index.escalationCheck(user, rules.rules, namespace)
  if (!res.ok) return forbidden(gr, obj.metadata.name, res.message)
  return undefined
}

// ---------------------------------------------------------------- aggregation

function ruleExists(rules: readonly PolicyRule[], r: PolicyRule): boolean {
  return rules.some((x) => semanticEqual(x, r))
}

/** The rules one aggregated ClusterRole should have, given all ClusterRoles (upstream syncClusterRole). */
export function aggregatedRules(role: RoleObject, all: readonly RoleObject[]): PolicyRule[] {
  const out: PolicyRule[] = []
  const sorted = [...all].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0))
  for (const sel of role.aggregationRule?.clusterRoleSelectors ?? []) {
    for (const cr of sorted) {
      if (cr.metadata.name === role.metadata.name) continue
      if (!labelSelectorMatches(sel, cr.metadata.labels)) continue
      for (const r of cr.rules ?? []) if (!ruleExists(out, r)) out.push(r)
    }
  }
  return out
}

/**
 * Runs the aggregation controller to a fixed point over the given ClusterRoles and returns the ClusterRoles whose
 * rules changed (copies with the new `rules`), in name order. The inputs are not modified.
 */
export function aggregate(clusterRoles: readonly RoleObject[]): RoleObject[] {
  const current = new Map<string, RoleObject>()
  for (const cr of clusterRoles) current.set(cr.metadata.name, cr)
  const changed = new Set<string>()
  const aggregated = [...current.values()].filter((c) => c.aggregationRule).map((c) => c.metadata.name).sort()
  for (let round = 0; round <= current.size; round++) {
    let any = false
    for (const name of aggregated) {
      const cr = current.get(name)!
      const rules = aggregatedRules(cr, [...current.values()])
      if (semanticEqual(rules, cr.rules)) continue
      current.set(name, { ...cr, rules })
      changed.add(name)
      any = true
    }
    if (!any) break
  }
  return [...changed].sort().map((n) => current.get(n)!)
}
