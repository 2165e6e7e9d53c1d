// The CEL evaluation environment: the authorizer library and the Kubernetes list and string functions cel-js lacks, with cel-go's runtime error texts.
import { Environment } from '@marcbachmann/cel-js'
import { registerFormatLibrary } from './cel-format.js'
import { CelAuthorizer, CelGroupCheck, CelPathCheck, CelResourceCheck, CelAuthzDecision, decided, checkAttributes } from './cel-authorizer.js'

/** An error the evaluation reports with exactly this text (cel-go's wording, not the library's). */
export class CelRuntimeError extends Error {}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

/** CEL equality of the values this evaluation handles (JSON data with BigInt integers). */
function celEqual(a: unknown, b: unknown): boolean {
  if (typeof a === 'bigint' && typeof b === 'number') return Number(a) === b
  if (typeof a === 'number' && typeof b === 'bigint') return a === Number(b)
  if (a === b) return true
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((x, i) => celEqual(x, (b as unknown[])[i]))
  const ka = Object.keys(a as object)
  const kb = Object.keys(b as object)
  return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && celEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
}

function comparable(list: unknown[], fn: string): Array<bigint | number | string> {
  for (const v of list) {
    if (typeof v !== 'bigint' && typeof v !== 'number' && typeof v !== 'string') throw new CelRuntimeError(`no such overload: ${fn}`)
  }
  return list as Array<bigint | number | string>
}

function less(a: bigint | number | string, b: bigint | number | string): boolean {
  if (typeof a === 'string' || typeof b === 'string') return String(a) < String(b)
  return a < b
}

export const RUNTIME_VARIABLES = ['object', 'oldObject', 'request', 'namespaceObject', 'params', 'authorizer', 'variables', 'self', 'oldSelf']
let runtimeEnv: Environment | undefined

let libraryEnv: Environment | undefined

/** The evaluation environment: the variables as dyn, the authorizer library and the Kubernetes list and string functions cel-js lacks. */
export function runtime(): Environment {
  if (runtimeEnv !== undefined) return runtimeEnv
  const env = library().clone()
  // self and oldSelf: the value a CRD schema's x-orch-validations rule sits on (src/registry/custom-cel.ts).
  for (const name of RUNTIME_VARIABLES) env.registerVariable(name, 'dyn')
  runtimeEnv = env
  return env
}

/** The libraries (types and functions) without variables, to clone and declare variables in. */
export function library(): Environment {
  if (libraryEnv !== undefined) return libraryEnv
  const env = new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false })
  env.registerType('Authorizer', CelAuthorizer as never)
  env.registerType('GroupCheck', CelGroupCheck as never)
  env.registerType('PathCheck', CelPathCheck as never)
  env.registerType('ResourceCheck', CelResourceCheck as never)
  env.registerType('AuthorizationDecision', CelAuthzDecision as never)
  registerFormatLibrary(env)
  env.registerFunction('Authorizer.group(string): GroupCheck', (a: CelAuthorizer, g: string) => new CelGroupCheck(a, g))
  env.registerFunction('Authorizer.path(string): PathCheck', (a: CelAuthorizer, p: string) => {
    if (p.trim() === '') throw new CelRuntimeError('path must not be empty')
    return new CelPathCheck(a, p)
  })
  env.registerFunction('Authorizer.serviceAccount(string, string): Authorizer', (a: CelAuthorizer, ns: string, name: string) => {
    if (name.length > 253 || !DNS_SUBDOMAIN.test(name)) throw new CelRuntimeError('Invalid service account name')
    if (ns.length > 63 || !DNS_LABEL.test(ns)) throw new CelRuntimeError('Invalid service account namespace')
    return new CelAuthorizer({ user: `system:serviceaccount:${ns}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`], uid: '' }, a.authorize)
  })
  env.registerFunction('GroupCheck.resource(string): ResourceCheck', (g: CelGroupCheck, r: string) => {
    if (r.trim() === '') throw new CelRuntimeError('resource must not be empty')
    return new CelResourceCheck(g.authz, g.group, r)
  })
  env.registerFunction('ResourceCheck.subresource(string): ResourceCheck', (r: CelResourceCheck, v: string) => r.with('subresource', v))
  env.registerFunction('ResourceCheck.namespace(string): ResourceCheck', (r: CelResourceCheck, v: string) => r.with('namespace', v))
  env.registerFunction('ResourceCheck.name(string): ResourceCheck', (r: CelResourceCheck, v: string) => r.with('name', v))
  env.registerFunction('ResourceCheck.check(string): AuthorizationDecision', (r: CelResourceCheck, verb: string) => {
    const a = checkAttributes(r.authz.who, verb)
    a.isResourceRequest = true
    a.apiGroup = r.group
    a.apiVersion = '*'
    a.resource = r.resource
    a.subresource = r.subresource
    a.namespace = r.namespace
    a.name = r.name
    return decided(r.authz.authorize(a))
  })
  env.registerFunction('PathCheck.check(string): AuthorizationDecision', (p: CelPathCheck, verb: string) => {
    const a = checkAttributes(p.authz.who, verb)
    a.path = p.path
    return decided(p.authz.authorize(a))
  })
  env.registerFunction('AuthorizationDecision.allowed(): bool', (d: CelAuthzDecision) => d.d.allowed)
  env.registerFunction('AuthorizationDecision.reason(): string', (d: CelAuthzDecision) => d.d.reason)
  env.registerFunction('AuthorizationDecision.errored(): bool', (d: CelAuthzDecision) => d.d.error !== '')
  env.registerFunction('AuthorizationDecision.error(): string', (d: CelAuthzDecision) => d.d.error)
  // Kubernetes' lists library.
  env.registerFunction('list.isSorted(): bool', (l: unknown[]) => {
    const v = comparable(l, 'isSorted')
    for (let i = 1; i < v.length; i++) if (less(v[i], v[i - 1])) return false
    return true
  })
  env.registerFunction('list.sum(): dyn', (l: unknown[]) => {
    if (l.length === 0) return 0n
    let acc: unknown = l[0]
    for (let i = 1; i < l.length; i++) {
      const x = l[i]
      if (typeof acc === 'bigint' && typeof x === 'bigint') acc = acc + x
      else if (typeof acc === 'number' && typeof x === 'number') acc = acc + x
      else throw new CelRuntimeError('no such overload: sum')
    }
    return acc
  })
  for (const fn of ['min', 'max'] as const) {
    env.registerFunction(`list.${fn}(): dyn`, (l: unknown[]) => {
      if (l.length === 0) throw new CelRuntimeError(`${fn}(list) argument must not be empty`)
      const v = comparable(l, fn)
      let best = v[0]
      for (const x of v) if (fn === 'min' ? less(x, best) : less(best, x)) best = x
      return best
    })
  }
  env.registerFunction('list.indexOf(dyn): int', (l: unknown[], x: unknown) => BigInt(l.findIndex((y) => celEqual(y, x))))
  env.registerFunction('list.lastIndexOf(dyn): int', (l: unknown[], x: unknown) => {
    for (let i = l.length - 1; i >= 0; i--) if (celEqual(l[i], x)) return BigInt(i)
    return -1n
  })
  // Kubernetes' strings and regex libraries (the parts cel-js lacks).
  env.registerFunction('string.charAt(int): string', (s: string, i: bigint) => {
    const cps = Array.from(s)
    if (i < 0n || i > BigInt(cps.length)) throw new CelRuntimeError(`index out of range: ${i}`)
    return cps[Number(i)] ?? ''
  })
  env.registerFunction('string.replace(string, string): string', (s: string, a: string, b: string) => s.split(a).join(b))
  env.registerFunction('string.replace(string, string, int): string', (s: string, a: string, b: string, n: bigint) => {
    if (n < 0n) return s.split(a).join(b)
    let out = ''
    let rest = s
    for (let k = 0n; k < n; k++) {
      const at = rest.indexOf(a)
      if (at < 0) break
      out += rest.slice(0, at) + b
      rest = rest.slice(at + a.length)
      if (a === '') { out += rest.slice(0, 1); rest = rest.slice(1) }
    }
    return out + rest
  })
  env.registerFunction('string.reverse(): string', (s: string) => Array.from(s).reverse().join(''))
  env.registerFunction('string.find(string): string', (s: string, re: string) => new RegExp(re, 'u').exec(s)?.[0] ?? '')
  env.registerFunction('string.findAll(string): list<string>', (s: string, re: string) => Array.from(s.matchAll(new RegExp(re, 'gu')), (m) => m[0]))
  env.registerFunction('string.findAll(string, int): list<string>', (s: string, re: string, n: bigint) => {
    const all = Array.from(s.matchAll(new RegExp(re, 'gu')), (m) => m[0])
    return n < 0n ? all : all.slice(0, Number(n))
  })
  libraryEnv = env
  return env
}
