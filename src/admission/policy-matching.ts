// What a ValidatingAdmissionPolicy or binding matches (upstream's matching.Matcher and rules.Matcher): resource rules
// with their excludes, scope and names, the namespace and object selectors, and matchPolicy Equivalent across the
// upstream `*.k8s.io` spelling of our groups.
import { labelSelectorOf, matchLabels, type LabelSelector } from '../machinery/selectors.js'
import type { Obj } from '../registry/define.js'

/** The attributes of a request that matching reads. */
export interface MatchAttributes {
  operation: string
  group: string
  version: string
  resource: string
  subresource: string
  /** The kind of the request's objects. */
  kind: { group: string; version: string; kind: string }
  /** As upstream: the namespace of the request; for a namespace itself (but on create), its name. */
  namespace: string
  name: string
  object: Obj | undefined
  oldObject: Obj | undefined
}

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])

export interface Rule {
  groups: string[]
  versions: string[]
  operations: string[]
  /** `pods/status` as ['pods', 'status']; `pods` as ['pods', '']. */
  resources: Array<[string, string]>
  names: string[]
  scope: string
}

export interface Match {
  /** undefined: no resource rules (a binding's match then narrows nothing by resource). */
  rules: Rule[] | undefined
  exclude: Rule[]
  equivalent: boolean
  /** The selectors as requirements; empty ones select everything. */
  namespace: LabelSelector
  object: LabelSelector
}

function ruleOf(v: unknown): Rule {
  const r: Obj = isObj(v) ? v : {}
  return {
    groups: strings(r.apiGroups),
    versions: strings(r.apiVersions),
    operations: strings(r.operations),
    resources: strings(r.resources).map((x): [string, string] => {
      const slash = x.indexOf('/')
      return slash < 0 ? [x, ''] : [x.slice(0, slash), x.slice(slash + 1)]
    }),
    names: strings(r.resourceNames),
    scope: typeof r.scope === 'string' ? r.scope : '*',
  }
}

export function matchOf(v: unknown): Match | undefined {
  if (!isObj(v)) return undefined
  return {
    rules: Array.isArray(v.resourceRules) && v.resourceRules.length > 0 ? v.resourceRules.map(ruleOf) : undefined,
    exclude: Array.isArray(v.excludeResourceRules) ? v.excludeResourceRules.map(ruleOf) : [],
    // Equivalent is the default; only an explicit Exact turns it off.
    equivalent: v.matchPolicy !== 'Exact',
    namespace: labelSelectorOf(v.namespaceSelector),
    object: labelSelectorOf(v.objectSelector),
  }
}

export interface Matched { group: string; version: string; resource: string; kind: { group: string; version: string; kind: string } }

/** The other name of the same resource: ours and the upstream `*.k8s.io` group the alias paths serve it as. */
function equivalentGroups(group: string): string[] {
  if (group.endsWith('.orch.io')) return [`${group.slice(0, -'.orch.io'.length)}.k8s.io`]
  if (group.endsWith('.k8s.io')) return [`${group.slice(0, -'.k8s.io'.length)}.orch.io`]
  return []
}

/** upstream rules.Matcher for one rule, against the request's resource under `group`. */
function ruleMatches(r: Rule, a: MatchAttributes, group: string): boolean {
  if (r.scope !== '*') {
    const isNamespace = a.group === '' && a.version === 'v1' && a.resource === 'namespaces'
    if (r.scope === 'Namespaced' && (isNamespace || a.namespace === '')) return false
    if (r.scope === 'Cluster' && !(isNamespace || a.namespace === '')) return false
    if (r.scope !== 'Namespaced' && r.scope !== 'Cluster') return false
  }
  if (!r.operations.includes('*') && !r.operations.includes(a.operation)) return false
  if (!r.groups.includes('*') && !r.groups.includes(group)) return false
  if (!r.versions.includes('*') && !r.versions.includes(a.version)) return false
  let resource = false
  for (const [res, sub] of r.resources) {
    if ((res === '*' || res === a.resource) && (sub === '*' || sub === a.subresource)) { resource = true; break }
  }
  if (!resource) return false
  return r.names.length === 0 || r.names.includes(a.name)
}

/** The first rule that matches, and the group it matched under (an equivalent one only with matchPolicy Equivalent). */
function rulesMatch(rules: Rule[], equivalent: boolean, a: MatchAttributes): string | undefined {
  for (const r of rules) if (ruleMatches(r, a, a.group)) return a.group
  if (!equivalent) return undefined
  for (const r of rules) for (const g of equivalentGroups(a.group)) if (ruleMatches(r, a, g)) return g
  return undefined
}

export function labelsOf(o: Obj | undefined): Record<string, string> | undefined {
  return isObj(o?.metadata?.labels) ? o!.metadata.labels : undefined
}

/**
 * upstream matching.Matcher.Matches: namespace selector, object selector, exclude rules, then the rules. `namespaceOf`
 * reads the request's namespace (null when there is none); `error` is a namespace the selector had to read and did not
 * find.
 */
export function matches(m: Match, a: MatchAttributes, namespaceOf: () => Obj | null): { matched: Matched | undefined; error?: string } {
  let nsError: string | undefined
  if (!(a.namespace === '' && a.resource !== 'namespaces') && m.namespace.length > 0) {
    let labels: Record<string, string> | undefined
    if (a.resource === 'namespaces' && a.subresource === '' && (a.operation === 'CREATE' || a.operation === 'UPDATE')) labels = labelsOf(a.object)
    else {
      const ns = namespaceOf()
      if (ns === null) nsError = `namespaces "${a.namespace}" not found`
      else labels = labelsOf(ns)
    }
    if (nsError === undefined && !matchLabels(m.namespace, labels ?? {})) return { matched: undefined }
  }
  if (m.object.length > 0) {
    const on = (o: Obj | undefined): boolean => o !== undefined && matchLabels(m.object, labelsOf(o) ?? {})
    if (!on(a.object) && !on(a.oldObject)) return { matched: undefined }
  }
  if (rulesMatch(m.exclude, m.equivalent, a) !== undefined) return { matched: undefined }
  let group: string | undefined = a.group
  if (m.rules !== undefined) group = rulesMatch(m.rules, m.equivalent, a)
  if (group === undefined) return { matched: undefined }
  if (nsError !== undefined) return { matched: undefined, error: nsError }
  // The kind of an equivalent resource is its kind in that group (the alias spelling of ours).
  return { matched: { group, version: a.version, resource: a.resource, kind: group === a.group || a.kind.group !== a.group ? a.kind : { ...a.kind, group } } }
}
