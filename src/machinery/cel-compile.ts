// CEL compile checks for admission policy expressions (@marcbachmann/cel-js): syntax, undeclared identifiers and the
// result type, reported in the text of upstream's compiler (cel-go issues: `ERROR: <input>:line:col: ...` plus a snippet).
import { Environment } from '@marcbachmann/cel-js'

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

export function isNode(v: unknown): v is Node { return v !== null && typeof v === 'object' && typeof (v as Node).op === 'string' }

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
export function compileProblem(env: ReturnType<typeof environment>, expr: string, result: CelResult, names: Iterable<string>, missingAt: (key: string) => number | undefined): string | undefined {
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
