// CEL compile checks for admission policy expressions (@marcbachmann/cel-js): syntax, undeclared identifiers and the
// result type, reported in the text of upstream's compiler (cel-go issues: `ERROR: <input>:line:col: ...` plus a snippet).
import { Environment } from '@marcbachmann/cel-js'
import { registerFormatLibrary } from './cel-format.js'

/** The result an expression must have: a condition, a message, an audit annotation value, or anything (a variable). */
export type CelResult = 'bool' | 'string' | 'string-or-null' | 'any'

/**
 * Which optional variables the expression may use (upstream OptionalVariableDeclarations, plus composition).
 * `variableTypes`: the policy's variables the expression may read, with their result types (upstream's composition
 * declares each variable with the type it compiled to, and a variable sees only those before it); without it,
 * `variables` is untyped.
 */
export interface CelDeclarations { params: boolean; authorizer: boolean; variables: boolean; variableTypes?: ReadonlyArray<readonly [string, string]>; only?: readonly string[] }

/** The identifiers a type-checked expression is resolved against besides its variables: type names and function namespaces. */
const TYPE_NAMES = new Set(['bool', 'int', 'uint', 'double', 'string', 'bytes', 'list', 'map', 'null_type', 'type', 'dyn', 'google', 'optional_type'])
const FUNCTION_NAMESPACES = new Set(['cel', 'optional', 'math', 'strings', 'base64', 'sets', 'lists', 'format'])
/** Macros whose leading arguments bind iteration variables: how many at most. */
const COMPREHENSIONS: Record<string, number> = { all: 2, exists: 2, exists_one: 2, existsOne: 2, filter: 1, map: 1, sortBy: 1, transformList: 2, transformMap: 2, transformMapEntry: 2 }

const envs = new Map<string, Environment>()

function environment(d: CelDeclarations): Environment {
  const typed = d.variables && d.variableTypes !== undefined
  const key = `${+d.params}${+d.authorizer}${+d.variables}${typed ? JSON.stringify(d.variableTypes) : ''}${d.only ? `|${d.only.join(',')}` : ''}`
  let env = envs.get(key)
  if (env === undefined) {
    env = new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false })
    for (const name of declaredNames(d)) if (!(typed && name === 'variables')) env.registerVariable(name, 'dyn')
    if (typed) registerVariables(env, d.variableTypes!)
    // Typed declarations differ per policy: only the untyped environments are kept.
    if (!typed) envs.set(key, env)
  }
  return env
}

/** `variables` as an object of the given fields; a type the library cannot declare is declared dyn. */
function registerVariables(env: Environment, types: ReadonlyArray<readonly [string, string]>): void {
  const schema: Record<string, string> = {}
  for (const [name, type] of types) schema[name] = type
  try {
    env.registerVariable({ name: 'variables', schema })
  } catch {
    for (const name of Object.keys(schema)) schema[name] = 'dyn'
    env.registerVariable({ name: 'variables', schema })
  }
}

/** The result type of an expression that compiles (for a variable's declaration): the checker's, else dyn. */
export function celResultType(expr: string, decls: CelDeclarations): string {
  try {
    const checked = environment(decls).check(expr) as { valid: boolean; type?: unknown }
    return checked.valid && checked.type !== undefined ? String(checked.type) : 'dyn'
  } catch {
    return 'dyn'
  }
}

function declaredNames(d: CelDeclarations): string[] {
  // Another environment than admission's (an authorization webhook's matchConditions see only `request`).
  if (d.only) return [...d.only]
  const names = ['object', 'oldObject', 'request', 'namespaceObject']
  if (d.params) names.push('params')
  if (d.authorizer) names.push('authorizer')
  if (d.variables) names.push('variables')
  return names
}

interface Issue { pos: number; message: string }

/** cel-go's display form of one issue: location, message, the source line and a caret under the column. */
function display(expr: string, issue: Issue): string {
  const before = expr.slice(0, issue.pos)
  const line = before.split('\n').length
  const lineStart = before.lastIndexOf('\n') + 1
  const column = issue.pos - lineStart
  const snippet = expr.slice(lineStart).split('\n')[0].replace(/\t/g, ' ')
  let caret = ''
  for (const ch of Array.from(snippet.slice(0, column))) caret += ch.length > 1 || ch.charCodeAt(0) > 0x7f ? '\uff0e' : '.'
  const at = Array.from(snippet.slice(column))[0]
  caret += at !== undefined && at.charCodeAt(0) > 0x7f ? '\uff3e' : '^'
  return `ERROR: <input>:${line}:${column + 1}: ${issue.message}\n | ${snippet}\n | ${caret}`
}

interface Node { op: string; args: unknown; pos?: number; start?: number }

function isNode(v: unknown): v is Node { return v !== null && typeof v === 'object' && typeof (v as Node).op === 'string' }

/** The identifiers the expression reads that nothing declares or binds (upstream's checker: undeclared reference). */
function undeclared(ast: unknown, declared: Set<string>): Issue[] {
  const issues: Issue[] = []
  const visit = (v: unknown, bound: Set<string>): void => {
    if (Array.isArray(v)) { for (const x of v) visit(x, bound); return }
    if (!isNode(v)) return
    if (v.op === 'id') {
      const name = v.args as string
      if (!declared.has(name) && !bound.has(name) && !TYPE_NAMES.has(name)) {
        issues.push({ pos: v.pos ?? v.start ?? 0, message: `undeclared reference to '${name}' (in container '')` })
      }
      return
    }
    if (v.op === 'rcall' && Array.isArray(v.args)) {
      const [name, receiver, callArgs] = v.args as [string, unknown, unknown[]]
      if (isNode(receiver) && receiver.op === 'id' && FUNCTION_NAMESPACES.has(receiver.args as string) && !declared.has(receiver.args as string)) {
        // A namespaced function (cel.bind, optional.of, math.greatest, ...); cel.bind binds its first argument.
        if (receiver.args === 'cel' && name === 'bind' && Array.isArray(callArgs) && isNode(callArgs[0]) && callArgs[0].op === 'id') {
          visit(callArgs.slice(1), new Set([...bound, callArgs[0].args as string]))
        } else visit(callArgs, bound)
        return
      }
      visit(receiver, bound)
      const vars = COMPREHENSIONS[name]
      if (vars !== undefined && Array.isArray(callArgs) && callArgs.length >= 2) {
        const inner = new Set(bound)
        let n = 0
        while (n < vars && n < callArgs.length - 1 && isNode(callArgs[n]) && (callArgs[n] as Node).op === 'id') { inner.add((callArgs[n] as Node).args as string); n++ }
        visit(callArgs.slice(n), inner)
        return
      }
      visit(callArgs, bound)
      return
    }
    visit(v.args, bound)
  }
  visit(ast, new Set())
  return issues.sort((a, b) => a.pos - b.pos)
}

const RESULT_TEXT: Record<Exclude<CelResult, 'any'>, string> = { bool: 'must evaluate to bool', string: 'must evaluate to string', 'string-or-null': 'must evaluate to one of [string null_type]' }

/**
 * Compiles one expression as upstream's validation does and returns the detail of its Invalid cause, or undefined.
 * Syntax errors and undeclared identifiers are reported with cel-go's layout; the result type is checked when the
 * library's checker types the whole expression (it lacks Kubernetes' CEL libraries, so where it cannot resolve a
 * function the expression is accepted rather than refused).
 */
export function celCompileProblem(expr: string, result: CelResult, decls: CelDeclarations): string | undefined {
  // A variable not declared before this expression (a later one, itself, or none): upstream's undefined field.
  const missingVariable = (missing: string): number | undefined => {
    if (decls.variableTypes === undefined) return undefined
    const at = new RegExp(`\\bvariables\\s*\\.\\s*${missing}\\b`).exec(expr)
    return at === null ? undefined : at.index + at[0].length - missing.length - 1
  }
  return compileProblem(environment(decls), expr, result, declaredNames(decls), missingVariable)
}

/**
 * The shared steps of the compile checks: parse (syntax errors), undeclared identifiers, the library's type check
 * (a "no such key" failure reported at the position `missingAt` finds, other failures not: the library lacks
 * Kubernetes' CEL libraries), then the result type.
 */
function compileProblem(env: ReturnType<typeof environment>, expr: string, result: CelResult, names: Iterable<string>, missingAt: (key: string) => number | undefined): string | undefined {
  let parsed: { ast: unknown }
  try {
    parsed = env.parse(expr) as unknown as { ast: unknown }
  } catch (err) {
    const e = err as { range?: { start?: number }; summary?: string; message?: string }
    const summary = e.summary ?? String(e.message ?? err).split('\n')[0]
    return `compilation failed: ${display(expr, { pos: e.range?.start ?? 0, message: `Syntax error: ${summary}` })}`
  }
  const issues = undeclared(parsed.ast, new Set(names))
  if (issues.length > 0) return `compilation failed: ${issues.map((i) => display(expr, i)).join('\n')}`
  let checked: { valid: boolean; type?: unknown; error?: { message?: string } }
  try { checked = env.check(expr) as typeof checked } catch { return undefined }
  if (!checked.valid) {
    const missing = /^No such key: (\w+)/.exec(checked.error?.message ?? '')?.[1]
    const pos = missing !== undefined ? missingAt(missing) : undefined
    if (pos !== undefined) return `compilation failed: ${display(expr, { pos, message: `undefined field '${missing}'` })}`
    return undefined
  }
  if (result === 'any') return undefined
  const type = String(checked.type)
  const ok = result === 'string-or-null' ? type === 'string' || type === 'null' : type === result
  return ok ? undefined : RESULT_TEXT[result]
}

// ---- evaluation (admission policies at request time) ----

/** An expression compiled for evaluation: its program, or the text of why it does not compile. */
export interface CelProgram {
  readonly expression: string
  readonly run: ((activation: Record<string, unknown>) => unknown) | undefined
  readonly error: string | undefined
}

/**
 * What one evaluation gave: a value, or the error it met (`error` the text upstream reports for the expression,
 * `detail` the error alone, as a variable's error reads through the expression that uses it).
 */
export type CelOutcome = { ok: true; value: unknown } | { ok: false; error: string; detail: string }

/**
 * Thrown inside an evaluation by what cannot answer yet (a lazily evaluated variable whose own evaluation waits for the
 * authorizer): the evaluation is run again once `wait` settles.
 */
export class CelPending extends Error {
  constructor(readonly wait: Promise<unknown>) { super('pending') }
}

/** An authorization decision as the authorizer library's `check()` gives it. */
export interface CelDecision { allowed: boolean; reason: string; error: string }

/** The attributes of one check of the authorizer library (upstream authorizer.AttributesRecord). */
export interface CelAuthzAttributes {
  user: string; groups: string[]; uid: string; extra?: Record<string, string[]>
  isResourceRequest: boolean; verb: string
  apiGroup: string; apiVersion: string; resource: string; subresource: string; namespace: string; name: string; path: string
}

/** Whoever answers the checks: synchronously when it can (a cached decision), else later. */
export type CelAuthorize = (a: CelAuthzAttributes) => CelDecision | Promise<CelDecision>

interface CelUser { user: string; groups: string[]; uid: string; extra?: Record<string, string[]> }

/** The `authorizer` variable: checks made as the requesting user (or a service account, `serviceAccount(ns, name)`). */
export class CelAuthorizer {
  /** `authorizer.requestResource`: the request's own resource, checked with another verb. */
  readonly requestResource: CelResourceCheck | undefined
  constructor(readonly who: CelUser, readonly authorize: CelAuthorize, request?: { group: string; resource: string; subresource: string; namespace: string; name: string }) {
    this.requestResource = request === undefined ? undefined : new CelResourceCheck(this, request.group, request.resource, request.subresource, request.namespace, request.name)
  }
}
class CelGroupCheck { constructor(readonly authz: CelAuthorizer, readonly group: string) {} }
class CelPathCheck { constructor(readonly authz: CelAuthorizer, readonly path: string) {} }
/** `authorizer.group(g).resource(r)` with what the calls after it set; also the `authorizer.requestResource` variable. */
export class CelResourceCheck {
  constructor(readonly authz: CelAuthorizer, readonly group: string, readonly resource: string, readonly subresource = '', readonly namespace = '', readonly name = '') {}
  with(part: 'subresource' | 'namespace' | 'name', v: string): CelResourceCheck {
    return new CelResourceCheck(this.authz, this.group, this.resource, part === 'subresource' ? v : this.subresource, part === 'namespace' ? v : this.namespace, part === 'name' ? v : this.name)
  }
}
class CelAuthzDecision { constructor(readonly d: CelDecision) {} }

function decided(d: CelDecision | Promise<CelDecision>): CelAuthzDecision | Promise<CelAuthzDecision> {
  return d instanceof Promise ? d.then((x) => new CelAuthzDecision(x), (err) => new CelAuthzDecision({ allowed: false, reason: '', error: String((err as Error)?.message ?? err) })) : new CelAuthzDecision(d)
}

function checkAttributes(who: CelUser, verb: string): CelAuthzAttributes {
  return { user: who.user, groups: who.groups, uid: who.uid, extra: who.extra, isResourceRequest: false, verb, apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '', path: '' }
}

/** An error the evaluation reports with exactly this text (cel-go's wording, not the library's). */
class CelRuntimeError extends Error {}

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

const RUNTIME_VARIABLES = ['object', 'oldObject', 'request', 'namespaceObject', 'params', 'authorizer', 'variables', 'self', 'oldSelf']
let runtimeEnv: Environment | undefined

let libraryEnv: Environment | undefined

/** The evaluation environment: the variables as dyn, the authorizer library and the Kubernetes list and string functions cel-js lacks. */
function runtime(): Environment {
  if (runtimeEnv !== undefined) return runtimeEnv
  const env = library().clone()
  // self and oldSelf: the value a CRD schema's x-orch-validations rule sits on (src/registry/custom-cel.ts).
  for (const name of RUNTIME_VARIABLES) env.registerVariable(name, 'dyn')
  runtimeEnv = env
  return env
}

/** The libraries (types and functions) without variables, to clone and declare variables in. */
function library(): Environment {
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

/** Compiles an expression for evaluation once (the caller keeps the program): syntax errors are kept as its error. */
export function celProgram(expression: string): CelProgram {
  try {
    const run = runtime().parse(expression) as unknown as (activation: Record<string, unknown>) => unknown
    return { expression, run, error: undefined }
  } catch (err) {
    const shown = celCompileProblem(expression, 'any', { params: true, authorizer: true, variables: true })
    return { expression, run: undefined, error: shown ?? errorText(err) }
  }
}

/** The text of an evaluation error, worded as cel-go words the common ones. */
function errorText(err: unknown): string {
  if (err instanceof CelRuntimeError) return err.message
  const e = err as { summary?: unknown; message?: unknown }
  const text = typeof e?.summary === 'string' ? e.summary : String(e?.message ?? err).split('\n')[0]
  const bounds = /^No such key: index out of bounds, index (-?\d+)/.exec(text)
  if (bounds !== null) return `index out of bounds: ${bounds[1]}`
  if (text.startsWith('No such key: ')) return `no such key: ${text.slice('No such key: '.length)}`
  return text
}

/**
 * Runs a program. Synchronous unless an authorizer check has to ask the authorizer (a decision not cached): then the
 * outcome comes later. Never throws.
 */
export function celEvaluate(p: CelProgram, activation: Record<string, unknown>): CelOutcome | Promise<CelOutcome> {
  if (p.run === undefined) {
    const detail = `compilation error: ${p.error ?? ''}`
    return { ok: false, error: detail, detail }
  }
  let v: unknown
  try {
    v = p.run(activation)
  } catch (err) {
    if (err instanceof CelPending) return err.wait.then(() => celEvaluate(p, activation), () => celEvaluate(p, activation))
    return failed(p, err)
  }
  if (v instanceof Promise) {
    return v.then((value): CelOutcome => ({ ok: true, value }), (err): CelOutcome | Promise<CelOutcome> => {
      if (err instanceof CelPending) return err.wait.then(() => celEvaluate(p, activation), () => celEvaluate(p, activation))
      return failed(p, err)
    })
  }
  return { ok: true, value: v }
}

function failed(p: CelProgram, err: unknown): CelOutcome {
  const detail = errorText(err)
  return { ok: false, error: `expression '${p.expression}' resulted in error: ${detail}`, detail }
}

/** Fails the evaluation under way with exactly this text (a lazily evaluated variable passes its own error on so). */
export function celThrow(text: string): never { throw new CelRuntimeError(text) }

/**
 * JSON data as CEL sees it: a copy with integral numbers as int (BigInt), others as double, as upstream decodes
 * unstructured objects.
 */
export function toCelValue(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v
  if (v === null || typeof v !== 'object') return v
  if (Array.isArray(v)) return v.map(toCelValue)
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(v)) {
    const x = (v as Record<string, unknown>)[k]
    if (x !== undefined) out[k] = toCelValue(x)
  }
  return out
}

// ---- expressions over other variables (the authentication configuration's `claims` and `user`) ----

/** Variables by name: a type name (`map<string, dyn>`) or an object's field types. */
export type CelVariables = Readonly<Record<string, string | Readonly<Record<string, string>>>>

const envsWith = new Map<string, Environment>()

/** The evaluation environment (with its Kubernetes libraries) declaring these variables; kept per set. */
function environmentWith(vars: CelVariables): Environment {
  const key = JSON.stringify(vars)
  let env = envsWith.get(key)
  if (env === undefined) {
    env = runtime().clone()
    for (const [name, type] of Object.entries(vars)) {
      // The runtime environment already declares the admission and CRD rule variables (self, oldSelf, ...) as dyn.
      if (type === 'dyn' && RUNTIME_VARIABLES.includes(name)) continue
      if (typeof type === 'string') env.registerVariable(name, type)
      else env.registerVariable({ name, schema: { ...type } })
    }
    envsWith.set(key, env)
  }
  return env
}

/**
 * The Invalid detail of an expression over `vars` (cel-go's text: syntax errors, undeclared references, unknown fields
 * of an object variable, the result type), or undefined when it compiles. A check failure the library cannot explain
 * (a function it lacks) is not reported, as for admission expressions.
 */
export function celCompileProblemWith(expr: string, result: CelResult, vars: CelVariables): string | undefined {
  const missingField = (missing: string): number | undefined => new RegExp(`\\.\\s*${missing}\\b`).exec(expr)?.index
  return compileProblem(environmentWith(vars), expr, result, Object.keys(vars), missingField)
}

/** A CEL type of a CRD rule's `self`: a type name (`int`, `list<string>`, `dyn`) or an object's field types. */
export type CelSelfType = string | { [field: string]: CelSelfType }

/**
 * A CRD schema rule compiled with `self` and `oldSelf` typed by its schema node (upstream declares them from the
 * structural schema): the Invalid detail (syntax, undeclared references, fields the schema does not declare) or
 * undefined, and the result type (`dyn` when the checker cannot tell). A fresh environment each time: the types are
 * the schema's own and are not kept.
 */
export function celCompileSelf(expr: string, self: CelSelfType): { problem: string | undefined; type: string } {
  let env: Environment
  try {
    env = library().clone()
    if (typeof self === 'string') { env.registerVariable('self', self); env.registerVariable('oldSelf', self) }
    else { env.registerVariable({ name: 'self', schema: self as Record<string, never> }); env.registerVariable('oldSelf', '$self') }
  } catch {
    env = runtime()
  }
  const missingField = (missing: string): number | undefined => new RegExp(`\\.\\??\\s*${missing}\\b`).exec(expr)?.index
  const problem = compileProblem(env, expr, 'any', ['self', 'oldSelf'], missingField)
  let type = 'dyn'
  if (problem === undefined) {
    try {
      const checked = env.check(expr) as { valid: boolean; type?: unknown }
      if (checked.valid && checked.type !== undefined) type = String(checked.type)
    } catch { /* dyn */ }
  }
  return { problem, type }
}

/** The checker's result type of an expression over `vars` that compiles (`dyn` when it cannot tell). */
export function celResultTypeWith(expr: string, vars: CelVariables): string {
  try {
    const checked = environmentWith(vars).check(expr) as { valid: boolean; type?: unknown }
    return checked.valid && checked.type !== undefined ? String(checked.type) : 'dyn'
  } catch {
    return 'dyn'
  }
}

/** A program over `vars` for celEvaluate, with its syntax tree (for checks of which fields it reads). */
export function celProgramWith(expression: string, vars: CelVariables): CelProgram & { ast: unknown } {
  try {
    const parsed = environmentWith(vars).parse(expression) as unknown as ((activation: Record<string, unknown>) => unknown) & { ast: unknown }
    return { expression, run: parsed, error: undefined, ast: parsed.ast }
  } catch (err) {
    return { expression, run: undefined, error: errorText(err), ast: undefined }
  }
}

/** Whether the syntax tree selects `field` of the identifier `operand` (`claims.email`, `claims.?email`, `has(claims.email)`). */
export function celSelects(ast: unknown, operand: string, field: string): boolean {
  if (Array.isArray(ast)) return ast.some((x) => celSelects(x, operand, field))
  if (!isNode(ast)) return false
  if ((ast.op === '.' || ast.op === '.?') && Array.isArray(ast.args)) {
    const [target, name] = ast.args as [unknown, unknown]
    if (isNode(target) && target.op === 'id' && target.args === operand && name === field) return true
    return celSelects(target, operand, field)
  }
  return celSelects(ast.args, operand, field)
}
