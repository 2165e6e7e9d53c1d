// The ABAC authorizer (--authorization-mode=...,ABAC): the policy file of --authorization-policy-file, one JSON policy a line, and its matching (upstream pkg/auth/authorizer/abac).
import type { Attributes, Decision, ResourceRule, NonResourceRule } from './messages.js'

/** A policy as upstream's internal form holds it (both file forms convert to it). */
export interface AbacPolicy {
  user: string
  group: string
  readonly: boolean
  apiGroup: string
  resource: string
  namespace: string
  nonResourcePath: string
}

/** The versioned form's group, in this brand, and upstream's spelling (accepted too, as the API accepts its aliases). */
const GROUPS = ['abac.authorization.orch.io', 'abac.authorization.kubernetes.io']
const ALL_AUTHENTICATED = 'system:authenticated'

export class PolicyFileError extends Error {}

function str(v: unknown): string { return typeof v === 'string' ? v : '' }
function isObj(v: unknown): v is Record<string, unknown> { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** A v1beta1 Policy's spec; user or group `*` means every authenticated subject (upstream's conversion). */
function fromV1beta1(spec: Record<string, unknown>): AbacPolicy {
  const p: AbacPolicy = {
    user: str(spec.user), group: str(spec.group), readonly: spec.readonly === true, apiGroup: str(spec.apiGroup),
    resource: str(spec.resource), namespace: str(spec.namespace), nonResourcePath: str(spec.nonResourcePath),
  }
  if (p.user === '*' || p.group === '*') { p.group = ALL_AUTHENTICATED; p.user = '' }
  return p
}

/**
 * The unversioned (v0) form: user, group, readonly, resource, namespace at the top. As upstream converts it: no
 * subject, or `*`, is every authenticated subject; no namespace or resource is any; every API group; neither namespace
 * nor resource also allows every non-resource path.
 */
function fromV0(o: Record<string, unknown>): AbacPolicy {
  const user = str(o.user)
  const group = str(o.group)
  const namespace = str(o.namespace)
  const resource = str(o.resource)
  const p: AbacPolicy = { user, group, readonly: o.readonly === true, apiGroup: '*', resource: resource || '*', namespace: namespace || '*', nonResourcePath: '' }
  if (user === '' && group === '') p.group = ALL_AUTHENTICATED
  if (user === '*' || group === '*') { p.group = ALL_AUTHENTICATED; p.user = '' }
  if (namespace === '' && resource === '') p.nonResourcePath = '*'
  return p
}

/**
 * The policies of a policy file's text: one JSON object a line; blank lines and lines starting with `#` are skipped.
 * A line that is not a policy throws, naming the file, the line number and the line, as upstream's loader does.
 */
export function parsePolicyFile(path: string, text: string): AbacPolicy[] {
  const out: AbacPolicy[] = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].replace(/\r$/, '')
    const trimmed = line.trim()
    if (trimmed === '' || trimmed.startsWith('#')) continue
    const fail = (why: string): never => { throw new PolicyFileError(`error reading policy file ${path}, line ${i + 1}: ${line}: ${why}`) }
    let o: unknown
    try {
      o = JSON.parse(line)
    } catch (err) {
      fail((err as Error).message)
    }
    if (!isObj(o)) fail('a policy must be a JSON object')
    const obj = o as Record<string, unknown>
    const apiVersion = str(obj.apiVersion)
    const kind = str(obj.kind)
    if (apiVersion === '' && kind === '') { out.push(fromV0(obj)); continue }
    const slash = apiVersion.indexOf('/')
    const group = slash >= 0 ? apiVersion.slice(0, slash) : ''
    const version = slash >= 0 ? apiVersion.slice(slash + 1) : apiVersion
    if (!GROUPS.includes(group) || (version !== 'v1beta1' && version !== 'v0')) fail(`no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)}`)
    if (kind !== 'Policy') fail(`no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)}`)
    if (version === 'v0') { out.push(fromV0(obj)); continue }
    if (obj.spec !== undefined && !isObj(obj.spec)) fail('spec must be an object')
    out.push(fromV1beta1(isObj(obj.spec) ? obj.spec : {}))
  }
  return out
}

function subjectMatches(p: AbacPolicy, user: string, groups: readonly string[]): boolean {
  let matched = false
  if (p.user !== '') {
    if (p.user === '*') matched = true
    else if (p.user === user) matched = true
    else return false
  }
  if (p.group !== '') {
    if (p.group === '*') matched = true
    else if (groups.includes(p.group)) matched = true
    else return false
  }
  return matched
}

function readOnly(verb: string): boolean { return verb === 'get' || verb === 'list' || verb === 'watch' }

function matches(p: AbacPolicy, a: Attributes): boolean {
  if (!subjectMatches(p, a.user, a.groups)) return false
  if (p.readonly && !readOnly(a.verb)) return false
  if (a.isResourceRequest) {
    return (p.namespace === '*' || p.namespace === a.namespace) && (p.resource === '*' || p.resource === a.resource) &&
      (p.apiGroup === '*' || p.apiGroup === a.apiGroup)
  }
  const np = p.nonResourcePath
  return np === '*' || np === a.path || (np.endsWith('*') && a.path.startsWith(np.replace(/\*+$/, '')))
}

/** The first policy that matches allows; none is no opinion (a later authorizer may still decide). */
export function abacAuthorize(policies: readonly AbacPolicy[], a: Attributes): { decision: Decision; reason: string } {
  for (const p of policies) if (matches(p, a)) return { decision: 'allow', reason: '' }
  return { decision: 'noopinion', reason: 'No policy matched.' }
}

/** The rules the policies give a user in a namespace (upstream PolicyList.RulesFor). */
export function abacRules(policies: readonly AbacPolicy[], user: string, groups: readonly string[], namespace: string): { resourceRules: ResourceRule[]; nonResourceRules: NonResourceRule[] } {
  const resourceRules: ResourceRule[] = []
  const nonResourceRules: NonResourceRule[] = []
  for (const p of policies) {
    if (!subjectMatches(p, user, groups) || (p.namespace !== '*' && p.namespace !== namespace)) continue
    const verbs = p.readonly ? ['get', 'list', 'watch'] : ['*']
    if (p.resource !== '') resourceRules.push({ verbs, apiGroups: [p.apiGroup], resources: [p.resource] })
    if (p.nonResourcePath !== '') nonResourceRules.push({ verbs: [...verbs], nonResourceURLs: [p.nonResourcePath] })
  }
  return { resourceRules, nonResourceRules }
}
