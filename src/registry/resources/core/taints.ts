// Taints and tolerations (upstream validateNodeTaints, validateTaintEffect, ValidateTolerations), shared by nodes and
// runtime classes.
import { fieldDuplicate, fieldInvalid, fieldInvalidPrinted, fieldNotSupported, fieldRequired, goPointer, goQuote, GoValue } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { labelValue, qualifiedName } from '../../../machinery/validation.js'
import type { Obj } from '../../define.js'

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute']

const str = (v: unknown): string => (typeof v === 'string' ? v : '')
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)

/** Go's %#v of a core.Taint. */
function printedTaint(t: Obj): GoValue {
  return new GoValue(`core.Taint{Key:${goQuote(str(t.key))}, Value:${goQuote(str(t.value))}, Effect:${goQuote(str(t.effect))}, TimeAdded:${goPointer('v1.Time', t.timeAdded)}}`)
}

/** Go's %#v of a core.Toleration. */
export function printedToleration(t: Obj): string {
  return `core.Toleration{Key:${goQuote(str(t.key))}, Operator:${goQuote(str(t.operator))}, Value:${goQuote(str(t.value))}, Effect:${goQuote(str(t.effect))}, TolerationSeconds:${goPointer('int64', t.tolerationSeconds)}}`
}

function taintEffectErrors(effect: string, allowEmpty: boolean, field: string): FieldError[] {
  if (!allowEmpty && effect === '') return [fieldRequired(field)]
  return TAINT_EFFECTS.includes(effect) ? [] : [fieldNotSupported(field, effect, TAINT_EFFECTS)]
}

/** Each taint: a qualified-name key, a label value, a known effect; unique by key and effect. */
export function validateTaints(taints: unknown, field: string): FieldError[] {
  if (!Array.isArray(taints) || taints.length === 0) return []
  const errs: FieldError[] = []
  const seen = new Set<string>()
  taints.forEach((x: unknown, i: number) => {
    const t = isObj(x) ? x : {}
    const p = `${field}[${i}]`
    const key = str(t.key)
    for (const d of qualifiedName(key)) errs.push(fieldInvalid(`${p}.key`, key, d))
    const value = str(t.value)
    const vd = labelValue(value)
    if (vd.length > 0) errs.push(fieldInvalid(`${p}.value`, value, vd.join(';')))
    const effect = str(t.effect)
    errs.push(...taintEffectErrors(effect, false, `${p}.effect`))
    const id = `${effect}\u0000${key}`
    if (seen.has(id)) { errs.push(fieldDuplicate(p, printedTaint(t), 'taints must be unique by key and effect pair')); return }
    seen.add(id)
  })
  return errs
}

/** Each toleration: key, the operator with its value, tolerationSeconds only for NoExecute, a known effect. */
export function validateTolerations(tolerations: unknown, field: string): FieldError[] {
  if (!Array.isArray(tolerations)) return []
  const errs: FieldError[] = []
  tolerations.forEach((x: unknown, i: number) => {
    const t = isObj(x) ? x : {}
    const p = `${field}[${i}]`
    const key = str(t.key)
    const op = str(t.operator)
    const effect = str(t.effect)
    if (key !== '') for (const d of qualifiedName(key)) errs.push(fieldInvalid(`${p}.key`, key, d))
    if (key === '' && op !== 'Exists') errs.push(fieldInvalid(`${p}.operator`, op, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'))
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null && effect !== 'NoExecute') {
      errs.push(fieldInvalid(`${p}.effect`, effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
    }
    const value = str(t.value)
    if (op === 'Equal' || op === '') {
      const vd = labelValue(value)
      if (vd.length > 0) errs.push(fieldInvalid(`${p}.operator`, value, vd.join(';')))
    } else if (op === 'Exists') {
      if (value !== '') errs.push(fieldInvalidPrinted(`${p}.operator`, printedToleration(t), "value must be empty when `operator` is 'Exists'"))
    } else {
      errs.push(fieldNotSupported(`${p}.operator`, op, ['Equal', 'Exists']))
    }
    if (effect !== '') errs.push(...taintEffectErrors(effect, true, `${p}.effect`))
  })
  return errs
}
