// The x-orch-validations rules of a CRD schema (upstream's x-kubernetes-validations): CEL expressions over `self` (the
// value the rule sits on) and `oldSelf` (its value before an update; rules naming it run only when there was one).
import { celEvaluate, celProgram, toCelValue, type CelProgram } from '../machinery/cel.js'
import type { FieldError, CauseType } from '../machinery/errors.js'
import type { SchemaNode } from './schema.js'

type Obj = Record<string, any>
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)

interface Rule {
  rule: string
  program: CelProgram
  message: string | undefined
  messageExpression: CelProgram | undefined
  reason: string | undefined
  fieldPath: string | undefined
  transition: boolean
}

const compiled = new WeakMap<object, Rule[]>()

function rulesOf(s: SchemaNode): Rule[] {
  let r = compiled.get(s)
  if (r !== undefined) return r
  const list: unknown[] = Array.isArray(s['x-orch-validations']) ? s['x-orch-validations'] : []
  r = []
  for (const x of list) {
    if (!isObj(x) || typeof x.rule !== 'string') continue
    r.push({
      rule: x.rule, program: celProgram(x.rule),
      message: typeof x.message === 'string' && x.message !== '' ? x.message : undefined,
      messageExpression: typeof x.messageExpression === 'string' && x.messageExpression !== '' ? celProgram(x.messageExpression) : undefined,
      reason: typeof x.reason === 'string' ? x.reason : undefined,
      fieldPath: typeof x.fieldPath === 'string' && x.fieldPath !== '' ? x.fieldPath : undefined,
      transition: /\boldSelf\b/.test(x.rule) && x.optionalOldSelf !== true,
    })
  }
  compiled.set(s, r)
  return r
}

/** Whether any node of the schema carries rules (only then is an object walked for them). */
export function hasRules(s: unknown): boolean {
  if (Array.isArray(s)) return s.some(hasRules)
  if (!isObj(s)) return false
  if (Array.isArray(s['x-orch-validations']) && s['x-orch-validations'].length > 0) return true
  return Object.values(s).some((v) => typeof v === 'object' && hasRules(v))
}

function join(path: string, child: string): string { return path === '' ? child : `${path}.${child}` }

/** `.spec.x` or `spec.x` under the rule's node. */
function withFieldPath(path: string, fp: string | undefined): string {
  if (fp === undefined) return path
  const rel = fp.replace(/^\./, '').replace(/\['([^']*)'\]/g, '.$1')
  return rel === '' ? path : join(path, rel)
}

function errorFor(reason: string | undefined, field: string, type: string, detail: string): FieldError {
  const t: CauseType = reason === 'FieldValueForbidden' ? 'FieldValueForbidden' : reason === 'FieldValueRequired' ? 'FieldValueRequired' : reason === 'FieldValueDuplicate' ? 'FieldValueDuplicate' : 'FieldValueInvalid'
  if (t === 'FieldValueForbidden' || t === 'FieldValueRequired') return { type: t, field, detail }
  if (t === 'FieldValueDuplicate') return { type: t, field, value: type }
  return { type: t, field, value: type, detail }
}

const RESERVED = new Set(['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while'])

/**
 * A property name as rules name it (upstream's escaping): `__` is `__underscores__`, `.` `__dot__`, `-` `__dash__`,
 * `/` `__slash__`, a reserved word `__{word}__`. Undefined for a name that needs none.
 */
function escapedName(k: string): string | undefined {
  if (RESERVED.has(k)) return `__${k}__`
  if (!/__|[.\-/]/.test(k)) return undefined
  return k.replace(/__|[.\-/]/g, (m) => m === '__' ? '__underscores__' : m === '.' ? '__dot__' : m === '-' ? '__dash__' : '__slash__')
}

function needsEscapes(s: unknown): boolean {
  if (Array.isArray(s)) return s.some(needsEscapes)
  if (!isObj(s)) return false
  if (isObj(s.properties) && Object.keys(s.properties).some((k) => escapedName(k) !== undefined)) return true
  return Object.values(s).some((v) => typeof v === 'object' && needsEscapes(v))
}

const escapes = new WeakMap<object, boolean>()

/**
 * The value a rule sees: CEL values, with the properties of object schemas under their escaped names (a map's keys,
 * additionalProperties, stay as they are: rules index them).
 */
function ruleValue(s: SchemaNode, v: unknown): unknown {
  let e = escapes.get(s)
  if (e === undefined) { e = needsEscapes(s); escapes.set(s, e) }
  if (!e) return toCelValue(v)
  return escapedValue(s, v)
}

function escapedValue(s: unknown, v: unknown): unknown {
  if (!isObj(s)) return toCelValue(v)
  if (Array.isArray(v)) return v.map((x) => escapedValue(s.items, x))
  if (!isObj(v)) return toCelValue(v)
  const props = isObj(s.properties) ? s.properties : undefined
  const out: Obj = {}
  for (const k of Object.keys(v)) {
    if (v[k] === undefined) continue
    if (props !== undefined && k in props) out[escapedName(k) ?? k] = escapedValue(props[k], v[k])
    else out[k] = escapedValue(s.additionalProperties, v[k])
  }
  return out
}

/** Evaluates the rules of `s` on `v` (and below it); `old` is the value before the update, when there is one. */
export function validateRules(s: SchemaNode, v: unknown, old: unknown, path: string, errs: FieldError[]): void {
  if (!isObj(s) || v === undefined || v === null) return
  const rules = rulesOf(s)
  if (rules.length > 0) {
    const self = ruleValue(s, v)
    const oldSelf = old === undefined ? undefined : ruleValue(s, old)
    const type = typeof s.type === 'string' ? s.type : ''
    for (const r of rules) {
      if (r.transition && old === undefined) continue
      const activation: Record<string, unknown> = { self }
      if (oldSelf !== undefined) activation.oldSelf = oldSelf
      const out = celEvaluate(r.program, activation)
      if (out instanceof Promise) continue
      const field = withFieldPath(path, r.fieldPath)
      if (!out.ok) {
        errs.push({ type: 'FieldValueInvalid', field, value: type, detail: out.detail })
        continue
      }
      if (out.value === true) continue
      let msg = r.message ?? `failed rule: ${r.rule.trim()}`
      if (r.messageExpression) {
        const m = celEvaluate(r.messageExpression, activation)
        if (!(m instanceof Promise) && m.ok && typeof m.value === 'string' && m.value.trim() !== '' && !m.value.includes('\n')) msg = m.value
      }
      errs.push(errorFor(r.reason, field, type, msg))
    }
  }
  if (Array.isArray(v)) {
    if (isObj(s.items)) v.forEach((x, i) => validateRules(s.items, x, undefined, `${path}[${i}]`, errs))
    return
  }
  if (!isObj(v)) return
  const props = isObj(s.properties) ? s.properties : undefined
  if (props) {
    for (const k of Object.keys(props)) {
      if (v[k] === undefined) continue
      validateRules(props[k], v[k], isObj(old) ? old[k] : undefined, join(path, k), errs)
    }
  }
  if (isObj(s.additionalProperties)) {
    for (const k of Object.keys(v)) {
      if (props && k in props) continue
      validateRules(s.additionalProperties, v[k], isObj(old) ? old[k] : undefined, `${path}[${k}]`, errs)
    }
  }
}

/** upstream's hasBlockingErr: a type, required, enum or size error leaves the rules unchecked, with this note. */
export function blockingNote(errs: FieldError[]): FieldError | undefined {
  const blocking = errs.some((e) => e.type === 'FieldValueNotSupported' || e.type === 'FieldValueRequired' || e.type === 'FieldValueTooLong' || e.type === 'FieldValueTooMany' || e.type === 'FieldValueTypeInvalid')
  if (!blocking) return undefined
  return { type: 'FieldValueInvalid', field: '', value: 'null', detail: 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation' }
}
