// CEL evaluation (admission policies at request time): programs compiled once, run synchronously or after a pending authorizer check, errors worded as cel-go's.
import { celCompileProblem } from './cel-compile.js'
import { CelRuntimeError, runtime } from './cel-library.js'

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
export function errorText(err: unknown): string {
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
