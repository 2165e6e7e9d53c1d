// Shared pieces of the CRD schema checks: the require* options (relaxed on update), path and node helpers, and Go printing of values and rules.
import type { Obj } from './define.js'
import { GoValue } from '../machinery/errors.js'
import { goSharp } from './custom-schema.js'

export function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

export const TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string']
export const META_FIELDS = new Set(['metadata', 'kind', 'apiVersion'])
export const REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired']

export const key = (path: string, k: string): string => `${path}[${k}]`
export const child = (path: string, c: string): string => (path === '' ? c : `${path}.${c}`)

/** What upstream relaxes on update when the stored CRD already broke the rule (its require* options). */
export interface SchemaOptions {
  requireValidPropertyType: boolean
  requireStructural: boolean
  requirePrunedDefaults: boolean
  requireAtomicSetType: boolean
  requireMapListKeysMapSet: boolean
  /** Rules and message expressions the stored CRD already had (compiled with the stored-expressions environment upstream). */
  preexisting: Set<string>
  /** Conversion review versions must include one this server speaks (not required of a CRD stored without one). */
  requireRecognizedReviewVersion: boolean
}

export const CREATE_OPTIONS: SchemaOptions = {
  requireValidPropertyType: true, requireStructural: true, requirePrunedDefaults: true, requireAtomicSetType: true, requireMapListKeysMapSet: true, preexisting: new Set(), requireRecognizedReviewVersion: true,
}

// ---- walking ----

/** Every schema node (through properties, items, additionalProperties, junctors, definitions, dependencies). */
export function someNode(s: unknown, pred: (n: Obj) => boolean): boolean {
  if (!isObj(s)) return false
  if (pred(s)) return true
  const items = s.items
  if (isObj(items) && someNode(items, pred)) return true
  if (Array.isArray(items) && items.some((x) => someNode(x, pred))) return true
  for (const k of ['allOf', 'anyOf', 'oneOf']) if (Array.isArray(s[k]) && s[k].some((x: unknown) => someNode(x, pred))) return true
  if (someNode(s.not, pred)) return true
  for (const k of ['properties', 'patternProperties', 'definitions', 'dependencies']) {
    if (isObj(s[k]) && Object.values(s[k]).some((x) => someNode(x, pred))) return true
  }
  if (someNode(s.additionalProperties, pred)) return true
  if (someNode(s.additionalItems, pred)) return true
  return false
}

/** Whether upstream's NewStructural refuses the schema (fields it does not model); the OpenAPI checks report them. */
export function unconvertible(s: unknown): boolean {
  return someNode(s, (n) => n.id !== undefined || n.$ref !== undefined || n.additionalItems !== undefined || n.patternProperties !== undefined || n.definitions !== undefined || n.dependencies !== undefined || Array.isArray(n.items))
}

/** A decoded JSON value as field.Invalid prints it (strings quoted, numbers and booleans bare, the rest as %#v). */
export function goValue(v: unknown): unknown {
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v
  return new GoValue(goSharp(v))
}

export function goRule(r: Obj): GoValue {
  const s = (x: unknown) => JSON.stringify(typeof x === 'string' ? x : '')
  const reason = r.reason === undefined ? '(*apiextensions.FieldValueErrorReason)(nil)' : `(*apiextensions.FieldValueErrorReason)(${JSON.stringify(r.reason)})`
  const optional = r.optionalOldSelf === undefined ? '(*bool)(nil)' : `(*bool)(${r.optionalOldSelf === true})`
  return new GoValue(`apiextensions.ValidationRule{Rule:${s(r.rule)}, Message:${s(r.message)}, MessageExpression:${s(r.messageExpression)}, Reason:${reason}, FieldPath:${s(r.fieldPath)}, OptionalOldSelf:${optional}}`)
}
