// APF classification: the FlowSchema and priority level of a request (in matching order), and its flow distinguisher.
import type { Obj } from '../../src/registry/define.js'
import {
  FLOW_SCHEMA_NAME_CATCH_ALL, PRIORITY_LEVEL_NAME_CATCH_ALL, mandatoryFlowSchemas, mandatoryPriorityLevels, suggestedPriorityLevels,
} from '../../src/registry/resources/flowcontrol.apiserver.orch.io/bootstrap.js'
import { flowHash } from './dealer.js'
import { digestConfig, isObj, str, strings, type FlowConfig, type PriorityLevelInfo } from './config.js'

// ---------------------------------------------------------------- classification

export interface UserLike { username: string; groups: readonly string[] }
export interface RequestInfoLike {
  isResourceRequest: boolean
  /** RequestInfo verb; the lower-case HTTP method for non-resource requests. */
  verb: string
  /** API group ('' = core). */
  group: string
  namespace: string
  resource: string
  subresource: string
  path: string
}
/** What classification looks at (upstream RequestDigest): the request info and the (impersonated) user. */
export interface RequestDigest { info: RequestInfoLike; user: UserLike }

export interface Classification {
  flowSchema: Obj
  priorityLevel: PriorityLevelInfo
  /** '' unless the level is a Queue level with more than one queue. */
  flowDistinguisher: string
  /** flowHash(schema, distinguisher), or 0n when the level does not shuffle-shard. */
  hash: bigint
}

/** `*` counts only as the sole element of a list (upstream containsString). */
function containsString(x: string, list: readonly string[], wildcard: string): boolean {
  if (list.length === 1 && list[0] === wildcard) return true
  return list.includes(x)
}

const SA_PREFIX = 'system:serviceaccount:'

export function matchesSubject(user: UserLike, subject: Obj): boolean {
  switch (subject.kind) {
    case 'User':
      return isObj(subject.user) && (subject.user.name === '*' || subject.user.name === user.username)
    case 'Group': {
      if (!isObj(subject.group)) return false
      const seek = subject.group.name
      return seek === '*' || user.groups.includes(seek)
    }
    case 'ServiceAccount': {
      if (!isObj(subject.serviceAccount)) return false
      const ns = str(subject.serviceAccount.namespace)
      const name = str(subject.serviceAccount.name)
      if (name === '*') return user.username.startsWith(`${SA_PREFIX}${ns}:`)
      return user.username === `${SA_PREFIX}${ns}:${name}`
    }
    default:
      return false
  }
}

export function matchesResourceRule(info: RequestInfoLike, rule: Obj): boolean {
  if (!containsString(info.verb, strings(rule.verbs), '*')) return false
  const rs = info.subresource === '' ? info.resource : `${info.resource}/${info.subresource}`
  if (!containsString(rs, strings(rule.resources), '*')) return false
  if (!containsString(info.group, strings(rule.apiGroups), '*')) return false
  if (info.namespace === '') return rule.clusterScope === true
  return containsString(info.namespace, strings(rule.namespaces), '*')
}

export function matchesNonResourceRule(info: RequestInfoLike, rule: Obj): boolean {
  if (!containsString(info.verb, strings(rule.verbs), '*')) return false
  for (const url of strings(rule.nonResourceURLs)) {
    if (url === '*' || url === info.path) return true
    let prefix = url.endsWith('*') ? url.slice(0, -1) : url
    if (!prefix.endsWith('/')) prefix += '/'
    if (info.path.startsWith(prefix)) return true
  }
  return false
}

export function matchesFlowSchema(fs: Obj, digest: RequestDigest): boolean {
  const rules = Array.isArray(fs.spec?.rules) ? fs.spec.rules as unknown[] : []
  for (const r of rules) {
    if (!isObj(r)) continue
    const subjects = Array.isArray(r.subjects) ? r.subjects as unknown[] : []
    if (!subjects.some((s) => isObj(s) && matchesSubject(digest.user, s))) continue
    const list = digest.info.isResourceRequest ? r.resourceRules : r.nonResourceRules
    if (!Array.isArray(list)) continue
    const match = digest.info.isResourceRequest ? matchesResourceRule : matchesNonResourceRule
    if ((list as unknown[]).some((rule) => isObj(rule) && match(digest.info, rule))) return true
  }
  return false
}

/** A list under APF's wildcard rule: null = everything (`*` as the sole element), else the literal members. */
function wildSet(v: unknown): Set<string> | null {
  const l = strings(v)
  return l.length === 1 && l[0] === '*' ? null : new Set(l)
}

interface CompiledResourceRule { verbs: Set<string> | null; resources: Set<string> | null; groups: Set<string> | null; clusterScope: boolean; namespaces: Set<string> | null }
interface CompiledNonResourceRule { verbs: Set<string> | null; all: boolean; exact: Set<string>; prefixes: string[] }
interface CompiledRule {
  anyone: boolean
  users: Set<string>
  groups: Set<string>
  /** Exact service-account user names, and `system:serviceaccount:<ns>:` prefixes of `*` subjects. */
  serviceAccounts: Set<string>
  serviceAccountPrefixes: string[]
  resourceRules: CompiledResourceRule[]
  nonResourceRules: CompiledNonResourceRule[]
}

/**
 * The FlowSchema as a matcher with the same answers as matchesFlowSchema, built once per configuration: sets instead
 * of list scans, no allocation per request (the front-end classifies every request against it).
 */
export function compileFlowSchema(fs: Obj): (digest: RequestDigest) => boolean {
  const rules: CompiledRule[] = []
  for (const r of Array.isArray(fs.spec?.rules) ? fs.spec.rules as unknown[] : []) {
    if (!isObj(r)) continue
    const c: CompiledRule = { anyone: false, users: new Set(), groups: new Set(), serviceAccounts: new Set(), serviceAccountPrefixes: [], resourceRules: [], nonResourceRules: [] }
    for (const sub of Array.isArray(r.subjects) ? r.subjects as unknown[] : []) {
      if (!isObj(sub)) continue
      if (sub.kind === 'User' && isObj(sub.user)) {
        if (sub.user.name === '*') c.anyone = true
        else if (typeof sub.user.name === 'string') c.users.add(sub.user.name)
      } else if (sub.kind === 'Group' && isObj(sub.group)) {
        if (sub.group.name === '*') c.anyone = true
        else if (typeof sub.group.name === 'string') c.groups.add(sub.group.name)
      } else if (sub.kind === 'ServiceAccount' && isObj(sub.serviceAccount)) {
        const ns = str(sub.serviceAccount.namespace)
        const name = str(sub.serviceAccount.name)
        if (name === '*') c.serviceAccountPrefixes.push(`${SA_PREFIX}${ns}:`)
        else c.serviceAccounts.add(`${SA_PREFIX}${ns}:${name}`)
      }
    }
    for (const rr of Array.isArray(r.resourceRules) ? r.resourceRules as unknown[] : []) {
      if (!isObj(rr)) continue
      c.resourceRules.push({ verbs: wildSet(rr.verbs), resources: wildSet(rr.resources), groups: wildSet(rr.apiGroups), clusterScope: rr.clusterScope === true, namespaces: wildSet(rr.namespaces) })
    }
    for (const nr of Array.isArray(r.nonResourceRules) ? r.nonResourceRules as unknown[] : []) {
      if (!isObj(nr)) continue
      const urls = strings(nr.nonResourceURLs)
      const prefixes = urls.map((u) => { const p = u.endsWith('*') ? u.slice(0, -1) : u; return p.endsWith('/') ? p : `${p}/` })
      c.nonResourceRules.push({ verbs: wildSet(nr.verbs), all: urls.includes('*'), exact: new Set(urls), prefixes })
    }
    rules.push(c)
  }
  const subjectMatches = (c: CompiledRule, user: UserLike): boolean => {
    if (c.anyone || c.users.has(user.username) || c.serviceAccounts.has(user.username)) return true
    if (c.groups.size > 0) for (const g of user.groups) if (c.groups.has(g)) return true
    for (const p of c.serviceAccountPrefixes) if (user.username.startsWith(p)) return true
    return false
  }
  return (digest: RequestDigest): boolean => {
    const info = digest.info
    for (const c of rules) {
      if (info.isResourceRequest) {
        if (c.resourceRules.length === 0 || !subjectMatches(c, digest.user)) continue
        const rs = info.subresource === '' ? info.resource : `${info.resource}/${info.subresource}`
        for (const rr of c.resourceRules) {
          if (rr.verbs !== null && !rr.verbs.has(info.verb)) continue
          if (rr.resources !== null && !rr.resources.has(rs)) continue
          if (rr.groups !== null && !rr.groups.has(info.group)) continue
          if (info.namespace === '' ? rr.clusterScope : rr.namespaces === null || rr.namespaces.has(info.namespace)) return true
        }
      } else {
        if (c.nonResourceRules.length === 0 || !subjectMatches(c, digest.user)) continue
        for (const nr of c.nonResourceRules) {
          if (nr.verbs !== null && !nr.verbs.has(info.verb)) continue
          if (nr.all || nr.exact.has(info.path)) return true
          for (const p of nr.prefixes) if (info.path.startsWith(p)) return true
        }
      }
    }
    return false
  }
}

/** The flow distinguisher of a request under a schema's distinguisherMethod. */
export function flowDistinguisher(fs: Obj, digest: RequestDigest): string {
  switch (fs.spec?.distinguisherMethod?.type) {
    case 'ByUser': return digest.user.username
    case 'ByNamespace': return digest.info.namespace
    default: return ''
  }
}

/**
 * Picks the first matching FlowSchema (matchingPrecedence, then name), falling back to catch-all, and the flow
 * within it. With raw arrays the configuration is digested first (priority levels default to the bootstrap ones).
 */
export function classify(config: FlowConfig, digest: RequestDigest): Classification
export function classify(flowSchemas: readonly Obj[], digest: RequestDigest, priorityLevels?: readonly Obj[]): Classification
export function classify(cfg: FlowConfig | readonly Obj[], digest: RequestDigest, priorityLevels?: readonly Obj[]): Classification {
  const config = Array.isArray(cfg) ? digestConfig(cfg, priorityLevels ?? [...mandatoryPriorityLevels, ...suggestedPriorityLevels]) : cfg as FlowConfig
  let selected: Obj | undefined
  let catchAll: Obj | undefined
  for (const fs of config.flowSchemas) {
    if (matchesFlowSchema(fs, digest)) { selected = fs; break }
    if (fs.metadata?.name === FLOW_SCHEMA_NAME_CATCH_ALL) catchAll = fs
  }
  selected ??= catchAll ?? mandatoryFlowSchemas[1]
  const pl = config.priorityLevels.get(str(selected.spec?.priorityLevelConfiguration?.name))
    ?? config.priorityLevels.get(PRIORITY_LEVEL_NAME_CATCH_ALL) as PriorityLevelInfo
  let distinguisher = ''
  let hash = 0n
  if (pl.kind === 'Queue' && pl.queues > 1) {
    distinguisher = flowDistinguisher(selected, digest)
    hash = flowHash(str(selected.metadata?.name), distinguisher)
  }
  return { flowSchema: selected, priorityLevel: pl, flowDistinguisher: distinguisher, hash }
}
