// CEL expressions over other variables than admission's: the authentication configuration's `claims` and `user`, and a CRD rule's typed `self` and `oldSelf`.
import { Environment } from '@marcbachmann/cel-js'
import { compileProblem, isNode, type CelResult } from './cel-compile.js'
import { errorText, type CelProgram } from './cel-evaluate.js'
import { RUNTIME_VARIABLES, runtime, library } from './cel-library.js'

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
