// The checks of a CustomResourceDefinition version's openAPIV3Schema (upstream's validateCustomResourceDefinitionValidation):
// the OpenAPI subset allowed, structural schema invariants and completeness, Go (RE2) patterns, defaults that
// validate and are pruned, list/map markers, and x-orch-validations rules that compile; with upstream's paths and texts.
import type { Obj } from './define.js'
import { GoValue, fieldErrorBody, fieldForbidden, fieldInvalid, fieldInvalidPrinted, fieldNotSupported, fieldRequired, goStringSlice, type FieldError } from '../machinery/errors.js'
import { re2Problem } from '../machinery/re2.js'
import { celCompileSelf, type CelSelfType } from '../machinery/cel.js'
import { compile, goSharp, toFieldError } from './custom-schema.js'

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

const TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string']
const META_FIELDS = new Set(['metadata', 'kind', 'apiVersion'])
const REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired']

const key = (path: string, k: string): string => `${path}[${k}]`
const child = (path: string, c: string): string => (path === '' ? c : `${path}.${c}`)

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
function someNode(s: unknown, pred: (n: Obj) => boolean): boolean {
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
function unconvertible(s: unknown): boolean {
  return someNode(s, (n) => n.id !== undefined || n.$ref !== undefined || n.additionalItems !== undefined || n.patternProperties !== undefined || n.definitions !== undefined || n.dependencies !== undefined || Array.isArray(n.items))
}

/** A decoded JSON value as field.Invalid prints it (strings quoted, numbers and booleans bare, the rest as %#v). */
function goValue(v: unknown): unknown {
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v
  return new GoValue(goSharp(v))
}

function goRule(r: Obj): GoValue {
  const s = (x: unknown) => JSON.stringify(typeof x === 'string' ? x : '')
  const reason = r.reason === undefined ? '(*apiextensions.FieldValueErrorReason)(nil)' : `(*apiextensions.FieldValueErrorReason)(${JSON.stringify(r.reason)})`
  const optional = r.optionalOldSelf === undefined ? '(*bool)(nil)' : `(*bool)(${r.optionalOldSelf === true})`
  return new GoValue(`apiextensions.ValidationRule{Rule:${s(r.rule)}, Message:${s(r.message)}, MessageExpression:${s(r.messageExpression)}, Reason:${reason}, FieldPath:${s(r.fieldPath)}, OptionalOldSelf:${optional}}`)
}

// ---- structural invariants (upstream's ValidateStructural) ----

type Level = 'root' | 'item' | 'field'

const INT_OR_STRING = (a: unknown): boolean =>
  Array.isArray(a) && a.length === 2 && isObj(a[0]) && isObj(a[1]) &&
  Object.keys(a[0]).length === 1 && a[0].type === 'integer' && Object.keys(a[1]).length === 1 && a[1].type === 'string'

function structuralInvariants(s: Obj, lvl: Level, path: string, errs: FieldError[]): void {
  const type = typeof s.type === 'string' ? s.type : ''
  if (type === 'array' && s.items === undefined) errs.push(fieldRequired(child(path, 'items'), 'must be specified'))
  if (isObj(s.items)) structuralInvariants(s.items, 'item', child(path, 'items'), errs)
  const props: Obj = isObj(s.properties) ? s.properties : {}
  // A null property schema decodes as an empty one (Go's zero JSONSchemaProps).
  for (const [k, v] of Object.entries(props)) if (isObj(v) || v === null) structuralInvariants(isObj(v) ? v : {}, 'field', key(child(path, 'properties'), k), errs)
  if (s.additionalProperties !== undefined) {
    if (lvl === 'root') errs.push(fieldForbidden(child(path, 'additionalProperties'), 'must not be used at the root'))
    if (isObj(s.additionalProperties)) structuralInvariants(s.additionalProperties, 'field', child(path, 'additionalProperties'), errs)
  }
  const intOrString = s['x-orch-int-or-string'] === true
  const preserve = s['x-orch-preserve-unknown-fields'] === true
  const embedded = s['x-orch-embedded-resource'] === true
  if (intOrString && preserve) errs.push(fieldInvalid(child(path, 'x-orch-preserve-unknown-fields'), true, 'must be false if x-orch-int-or-string is true'))
  if (intOrString && embedded) errs.push(fieldInvalid(child(path, 'x-orch-embedded-resource'), true, 'must be false if x-orch-int-or-string is true'))
  const skipAnyOf = INT_OR_STRING(s.anyOf)
  const skipFirstAllOfAnyOf = Array.isArray(s.allOf) && isObj(s.allOf[0]) && INT_OR_STRING(s.allOf[0].anyOf)
  valueValidation(s, skipAnyOf, skipFirstAllOfAnyOf, lvl, path, errs)
  const checkMetadata = lvl === 'root' || embedded
  if (embedded && type !== 'object') {
    if (type === '') errs.push(fieldRequired(child(path, 'type'), 'must be object if x-orch-embedded-resource is true'))
    else errs.push(fieldInvalid(child(path, 'type'), type, 'must be object if x-orch-embedded-resource is true'))
  } else if (type === '' && !intOrString && !preserve) {
    errs.push(fieldRequired(child(path, 'type'), lvl === 'root' ? 'must not be empty at the root' : lvl === 'item' ? 'must not be empty for specified array items' : 'must not be empty for specified object fields'))
  }
  if (embedded && s.additionalProperties !== undefined) errs.push(fieldForbidden(child(path, 'additionalProperties'), 'must not be used if x-orch-embedded-resource is set'))
  if (lvl === 'root' && type !== '' && type !== 'object') errs.push(fieldInvalid(child(path, 'type'), type, 'must be object at the root'))
  for (const k of ['kind', 'apiVersion']) {
    if (checkMetadata && isObj(props[k]) && props[k].type !== 'string') errs.push(fieldInvalid(child(key(child(path, 'properties'), k), 'type'), typeof props[k].type === 'string' ? props[k].type : '', 'must be string'))
  }
  if (isObj(props.metadata)) {
    const m = props.metadata
    const mPath = key(child(path, 'properties'), 'metadata')
    if (checkMetadata && m.type !== 'object') errs.push(fieldInvalid(child(mPath, 'type'), typeof m.type === 'string' ? m.type : '', 'must be object'))
    if (lvl === 'root') {
      const mp = isObj(m.properties) ? Object.keys(m.properties) : []
      const onlyNames = mp.every((k) => k === 'name' || k === 'generateName')
      const other = Object.keys(m).some((k) => k !== 'type' && k !== 'default' && k !== 'properties' && !(k === 'nullable' && m.nullable === false))
      if (other || !onlyNames) errs.push(fieldForbidden(mPath, 'must not specify anything other than name and generateName, but metadata is implicitly specified'))
    }
  }
  if (embedded && !preserve && Object.keys(props).length === 0) errs.push(fieldRequired(child(path, 'properties'), 'must not be empty if x-orch-embedded-resource is true without x-orch-preserve-unknown-fields'))
}

/** The value validations of a node: the junctors (nested checks) and the pattern. */
function valueValidation(v: Obj, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean, lvl: Level, path: string, errs: FieldError[]): void {
  if (!skipAnyOf && Array.isArray(v.anyOf)) v.anyOf.forEach((x: unknown, i: number) => { if (isObj(x)) nested(x, false, false, lvl, `${child(path, 'anyOf')}[${i}]`, errs) })
  if (Array.isArray(v.allOf)) v.allOf.forEach((x: unknown, i: number) => { if (isObj(x)) nested(x, skipFirstAllOfAnyOf && i === 0, false, lvl, `${child(path, 'allOf')}[${i}]`, errs) })
  if (Array.isArray(v.oneOf)) v.oneOf.forEach((x: unknown, i: number) => { if (isObj(x)) nested(x, false, false, lvl, `${child(path, 'oneOf')}[${i}]`, errs) })
  if (isObj(v.not)) nested(v.not, false, false, lvl, child(path, 'not'), errs)
  if (typeof v.pattern === 'string' && v.pattern !== '') {
    const p = re2Problem(v.pattern)
    if (p !== undefined) errs.push(fieldInvalid(child(path, 'pattern'), v.pattern, `must be a valid regular expression, but isn't: ${p}`))
  }
}

/** A schema under a junctor: value validations only (upstream's NestedValueValidation). */
function nested(v: Obj, skipAnyOf: boolean, skipAllOfAnyOf: boolean, lvl: Level, path: string, errs: FieldError[]): void {
  valueValidation(v, skipAnyOf, skipAllOfAnyOf, lvl, path, errs)
  if (isObj(v.items)) nested(v.items, false, false, lvl, child(path, 'items'), errs)
  if (isObj(v.properties)) for (const [k, f] of Object.entries(v.properties)) if (isObj(f)) nested(f, false, false, 'field', key(child(path, 'properties'), k), errs)
  const forbid = (f: string, why: string) => errs.push(fieldForbidden(child(path, f), why))
  if (typeof v.type === 'string' && v.type !== '') forbid('type', 'must be empty to be structural')
  if (v.additionalProperties !== undefined) forbid('additionalProperties', 'must be undefined to be structural')
  if (v.default !== undefined && v.default !== null) forbid('default', 'must be undefined to be structural')
  if (typeof v.title === 'string' && v.title !== '') forbid('title', 'must be empty to be structural')
  if (typeof v.description === 'string' && v.description !== '') forbid('description', 'must be empty to be structural')
  if (v.nullable === true) forbid('nullable', 'must be false to be structural')
  if (v['x-orch-preserve-unknown-fields'] === true) forbid('x-orch-preserve-unknown-fields', 'must be false to be structural')
  if (v['x-orch-embedded-resource'] === true) forbid('x-orch-embedded-resource', 'must be false to be structural')
  if (v['x-orch-int-or-string'] === true) forbid('x-orch-int-or-string', 'must be false to be structural')
  if (Array.isArray(v['x-orch-list-map-keys']) && v['x-orch-list-map-keys'].length > 0) forbid('x-orch-list-map-keys', 'must be empty to be structural')
  if (v['x-orch-list-type'] !== undefined) forbid('x-orch-list-type', 'must be undefined to be structural')
  if (v['x-orch-map-type'] !== undefined) forbid('x-orch-map-type', 'must be undefined to be structural')
  if (Array.isArray(v['x-orch-validations']) && v['x-orch-validations'].length > 0) forbid('x-orch-validations', 'must be empty to be structural')
  if (isObj(v.properties) && v.properties.metadata !== undefined) forbid(`properties[metadata]`, 'must not be specified in a nested context')
}

/** Every field or array a root junctor speaks of is specified in the structural part too (upstream's completeness). */
function completeness(v: Obj, s: Obj | undefined, sPath: string, vPath: string, errs: FieldError[]): void {
  const junctors = (x: Obj, vp: string) => {
    if (isObj(x.not)) nestedCompleteness(x.not, s, sPath, child(vp, 'not'), errs)
    for (const j of ['allOf', 'anyOf', 'oneOf']) if (Array.isArray(x[j])) x[j].forEach((n: unknown, i: number) => { if (isObj(n)) nestedCompleteness(n, s, sPath, `${child(vp, j)}[${i}]`, errs) })
  }
  const hasJunctors = isObj(v.not) || ['allOf', 'anyOf', 'oneOf'].some((j) => Array.isArray(v[j]) && v[j].length > 0)
  if (!hasJunctors) return
  if (s === undefined) { errs.push(fieldRequired(sPath, `because it is defined in ${vPath}`)); return }
  junctors(v, vPath)
}

function nestedCompleteness(v: Obj, s: Obj | undefined, sPath: string, vPath: string, errs: FieldError[]): void {
  if (s === undefined) { errs.push(fieldRequired(sPath, `because it is defined in ${vPath}`)); return }
  completeness(v, s, sPath, vPath, errs)
  if (isObj(v.items)) nestedCompleteness(v.items, isObj(s.items) ? s.items : undefined, child(sPath, 'items'), child(vPath, 'items'), errs)
  if (isObj(v.properties)) {
    const sp: Obj = isObj(s.properties) ? s.properties : {}
    for (const [k, f] of Object.entries(v.properties)) {
      if (!isObj(f)) continue
      if (!isObj(sp[k])) errs.push(fieldRequired(key(child(sPath, 'properties'), k), `because it is defined in ${key(child(vPath, 'properties'), k)}`))
      else nestedCompleteness(f, sp[k], key(child(sPath, 'properties'), k), key(child(vPath, 'properties'), k), errs)
    }
  }
}

/** upstream's ValidateStructural: the invariants and completeness violations, sorted by their text. */
export function structuralErrors(schema: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  structuralInvariants(schema, 'root', path, errs)
  completeness(schema, schema, path, path, errs)
  return sortByText(errs)
}

function sortByText(errs: FieldError[]): FieldError[] {
  const text = (e: FieldError) => `${e.field}: ${e.type}${e.detail ?? ''}`
  return errs.map((e) => [text(e), e] as const).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map((x) => x[1])
}

// ---- defaults (upstream's ValidateDefaults) ----

/** A copy of `v` with what the schema would prune removed. */
function pruned(v: unknown, s: Obj | undefined, root: boolean): unknown {
  if (!isObj(s)) return v
  if (Array.isArray(v)) return isObj(s.items) ? v.map((x) => pruned(x, s.items, false)) : v
  if (!isObj(v)) return v
  if (s['x-orch-preserve-unknown-fields'] === true && !isObj(s.properties) && !isObj(s.additionalProperties)) return v
  const out: Obj = {}
  const props: Obj = isObj(s.properties) ? s.properties : {}
  const embedded = root || s['x-orch-embedded-resource'] === true
  for (const [k, x] of Object.entries(v)) {
    if (embedded && META_FIELDS.has(k)) { out[k] = x; continue }
    if (isObj(props[k])) out[k] = pruned(x, props[k], false)
    else if (isObj(s.additionalProperties)) out[k] = pruned(x, s.additionalProperties, false)
    else if (s.additionalProperties === true || s['x-orch-preserve-unknown-fields'] === true) out[k] = x
  }
  return out
}

function sameJson(a: unknown, b: unknown): boolean { return JSON.stringify(a) === JSON.stringify(b) }

function defaultErrors(s: Obj, path: string, insideMeta: boolean, opts: SchemaOptions, errs: FieldError[]): void {
  if (s.default !== undefined && s.default !== null && !insideMeta) {
    const d = s.default
    const at = child(path, 'default')
    if (opts.requirePrunedDefaults && !sameJson(pruned(d, s, false), d)) errs.push(fieldInvalid(at, goValue(d), 'must not have unknown fields'))
    const validator = compile(s as any, false)
    if (validator && !validator(d)) {
      for (const e of validator.errors ?? []) {
        const fe = toFieldError(d, e)
        if (!fe) continue
        fe.field = fe.field === '' ? at : fe.field.startsWith('[') ? `${at}${fe.field}` : `${at}.${fe.field}`
        errs.push(fe)
      }
    }
  }
  if (isObj(s.items)) defaultErrors(s.items, child(path, 'items'), insideMeta, opts, errs)
  if (isObj(s.properties)) {
    for (const [k, p] of Object.entries(s.properties)) {
      if (!isObj(p)) continue
      const meta = insideMeta || (s['x-orch-embedded-resource'] === true && META_FIELDS.has(k))
      defaultErrors(p, key(child(path, 'properties'), k), meta, opts, errs)
    }
  }
}

// ---- the OpenAPI subset (upstream's ValidateCustomResourceDefinitionOpenAPISchema) ----

interface Ssv { allowDefaults: boolean; disallowReason: string; insideMeta: boolean; uncorrelatable: string | undefined }

function ssvCheck(s: Obj, path: string, ssv: Ssv, opts: SchemaOptions, errs: FieldError[]): void {
  const type = typeof s.type === 'string' ? s.type : ''
  if (opts.requireValidPropertyType && type !== '' && !TYPES.includes(type)) errs.push(fieldNotSupported(child(path, 'type'), type, TYPES))
  if (s.default !== undefined && s.default !== null && !ssv.allowDefaults) errs.push(fieldForbidden(child(path, 'default'), `must not be set${ssv.disallowReason ? ` ${ssv.disallowReason}` : ''}`))
  if (typeof s.id === 'string' && s.id !== '') errs.push(fieldForbidden(child(path, 'id'), 'id is not supported'))
  if (s.additionalItems !== undefined) errs.push(fieldForbidden(child(path, 'additionalItems'), 'additionalItems is not supported'))
  if (isObj(s.patternProperties) && Object.keys(s.patternProperties).length > 0) errs.push(fieldForbidden(child(path, 'patternProperties'), 'patternProperties is not supported'))
  if (isObj(s.definitions) && Object.keys(s.definitions).length > 0) errs.push(fieldForbidden(child(path, 'definitions'), 'definitions is not supported'))
  if (s.dependencies !== undefined) errs.push(fieldForbidden(child(path, 'dependencies'), 'dependencies is not supported'))
  if (s.$ref !== undefined) errs.push(fieldForbidden(child(path, '$ref'), '$ref is not supported'))
  if (type === 'null') errs.push(fieldForbidden(child(path, 'type'), 'type cannot be set to null, use nullable as an alternative'))
  if (Array.isArray(s.items) && s.items.length > 0) errs.push(fieldForbidden(child(path, 'items'), 'items must be a schema object and not an array'))
  if (ssv.insideMeta && s['x-orch-embedded-resource'] === true) errs.push(fieldForbidden(child(path, 'x-orch-embedded-resource'), 'must not be used inside of resource meta'))
  // Counts below zero: our validator (ajv) cannot be built from them (upstream's kube-openapi would take them).
  for (const k of ['maxLength', 'minLength', 'maxItems', 'minItems', 'maxProperties', 'minProperties']) {
    if (typeof s[k] === 'number' && s[k] < 0) errs.push(fieldInvalid(child(path, k), s[k], 'must be greater than or equal to 0'))
  }
  if (typeof s.multipleOf === 'number' && s.multipleOf <= 0) errs.push(fieldInvalid(child(path, 'multipleOf'), s.multipleOf, 'must be greater than 0'))
}

function withForbidOldSelf(ssv: Ssv, path: string): Ssv { return ssv.uncorrelatable !== undefined ? ssv : { ...ssv, uncorrelatable: path } }

/** A field path of a rule (`.a.b`, `['a']`, `[0]`) that names something the schema declares. */
function fieldPathValid(s: Obj, fp: string): boolean {
  let rest = fp.trim()
  let cur: Obj | undefined = s
  if (rest === '') return false
  while (rest !== '') {
    if (cur === undefined) return false
    let m = /^\.([A-Za-z_][A-Za-z0-9_-]*)/.exec(rest) ?? /^\[\s*'((?:[^'\\]|\\.)*)'\s*\]/.exec(rest)
    if (m) {
      const name = m[1]
      rest = rest.slice(m[0].length)
      const props: Obj = isObj(cur.properties) ? cur.properties : {}
      cur = isObj(props[name]) ? props[name] : isObj(cur.additionalProperties) ? cur.additionalProperties : undefined
      continue
    }
    m = /^\[\s*(\d+)\s*\]/.exec(rest)
    if (m) {
      rest = rest.slice(m[0].length)
      cur = isObj(cur.items) ? cur.items : undefined
      continue
    }
    return false
  }
  return cur !== undefined
}

interface Walk { schema: FieldError[]; cel: FieldError[] }

function walk(s: Obj, path: string, ssv: Ssv, isRoot: boolean, cel: boolean, opts: SchemaOptions): Walk {
  const out: Walk = { schema: [], cel: [] }
  const add = (w: Walk) => { out.schema.push(...w.schema); out.cel.push(...w.cel) }
  ssvCheck(s, path, ssv, opts, out.schema)
  if (s.uniqueItems === true) out.schema.push(fieldForbidden(child(path, 'uniqueItems'), 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'))
  const props: Obj = isObj(s.properties) ? s.properties : {}
  const hasProps = Object.keys(props).length > 0
  if (s.additionalProperties !== undefined) {
    if (hasProps && (s.additionalProperties === false || isObj(s.additionalProperties))) out.schema.push(fieldForbidden(child(path, 'additionalProperties'), 'additionalProperties and properties are mutual exclusive'))
    const sub = ssv.insideMeta ? { ...ssv, allowDefaults: false, disallowReason: 'inside additionalProperties applying to object metadata' } : ssv
    if (isObj(s.additionalProperties)) add(walk(s.additionalProperties, child(path, 'additionalProperties'), sub, false, cel, opts))
  }
  for (const [k, raw] of Object.entries(props)) {
    if (!isObj(raw) && raw !== null) continue
    const p: Obj = isObj(raw) ? raw : {}
    let sub = ssv
    if (s['x-orch-map-type'] === 'atomic') sub = withForbidOldSelf(sub, path)
    if ((isRoot || s['x-orch-embedded-resource'] === true) && META_FIELDS.has(k)) {
      sub = { ...sub, insideMeta: true }
      if (isRoot) sub = { ...sub, allowDefaults: false, disallowReason: `in top-level ${k}` }
    }
    add(walk(p, key(child(path, 'properties'), k), sub, false, cel, opts))
  }
  if (isObj(s.not)) add(walk(s.not, child(path, 'not'), ssv, false, false, opts))
  for (const j of ['allOf', 'oneOf', 'anyOf']) {
    if (Array.isArray(s[j])) s[j].forEach((x: unknown, i: number) => { if (isObj(x)) add(walk(x, `${child(path, j)}[${i}]`, ssv, false, false, opts)) })
  }
  if (isObj(s.definitions)) for (const [k, d] of Object.entries(s.definitions)) if (isObj(d)) add(walk(d, key(child(path, 'definitions'), k), ssv, false, false, opts))
  if (s.items !== undefined) {
    const sub = s['x-orch-list-type'] !== 'map' ? withForbidOldSelf(ssv, path) : ssv
    if (isObj(s.items)) add(walk(s.items, child(path, 'items'), sub, false, cel, opts))
    else if (Array.isArray(s.items)) s.items.forEach((x: unknown, i: number) => { if (isObj(x)) add(walk(x, `${child(path, 'items')}[${i}]`, sub, false, cel, opts)) })
  }
  if (isObj(s.dependencies)) for (const [k, d] of Object.entries(s.dependencies)) if (isObj(d)) add(walk(d, key(child(path, 'dependencies'), k), ssv, false, false, opts))
  if (s['x-orch-preserve-unknown-fields'] === false) out.schema.push(fieldInvalid(child(path, 'x-orch-preserve-unknown-fields'), false, 'must be true or undefined'))
  markerErrors(s, path, opts, out.schema)
  if (Array.isArray(s['x-orch-validations']) && s['x-orch-validations'].length > 0) ruleErrors(s, path, ssv, cel, isRoot, opts, out)
  return out
}

function markerErrors(s: Obj, path: string, opts: SchemaOptions, errs: FieldError[]): void {
  const type = typeof s.type === 'string' ? s.type : ''
  const mapType = s['x-orch-map-type']
  if (mapType !== undefined && type !== 'object') {
    if (type === '') errs.push(fieldRequired(child(path, 'type'), 'must be object if x-orch-map-type is specified'))
    else errs.push(fieldInvalid(child(path, 'type'), type, 'must be object if x-orch-map-type is specified'))
  }
  if (mapType !== undefined && mapType !== 'atomic' && mapType !== 'granular') errs.push(fieldNotSupported(child(path, 'x-orch-map-type'), mapType, ['atomic', 'granular']))
  const listType = s['x-orch-list-type']
  const items = s.items
  if (listType !== undefined && type !== 'array') {
    if (type === '') errs.push(fieldRequired(child(path, 'type'), 'must be array if x-orch-list-type is specified'))
    else errs.push(fieldInvalid(child(path, 'type'), type, 'must be array if x-orch-list-type is specified'))
  } else if (opts.requireAtomicSetType && listType === 'set' && isObj(items)) {
    if (items.type === 'array' && items['x-orch-list-type'] !== undefined && items['x-orch-list-type'] !== 'atomic') {
      errs.push(fieldInvalid(child(child(path, 'items'), 'x-orch-list-type'), items['x-orch-list-type'], 'must be atomic as item of a list with x-orch-list-type=set'))
    } else if (items.type === 'object' && items['x-orch-map-type'] !== 'atomic') {
      errs.push(fieldInvalid(child(child(path, 'items'), 'x-orch-map-type'), items['x-orch-map-type'] ?? null, 'must be atomic as item of a list with x-orch-list-type=set'))
    }
  }
  if (listType !== undefined && listType !== 'atomic' && listType !== 'set' && listType !== 'map') errs.push(fieldNotSupported(child(path, 'x-orch-list-type'), listType, ['atomic', 'set', 'map']))
  const keys: unknown[] = Array.isArray(s['x-orch-list-map-keys']) ? s['x-orch-list-map-keys'] : []
  if (keys.length > 0) {
    if (listType === undefined) errs.push(fieldRequired(child(path, 'x-orch-list-type'), 'must be map if x-orch-list-map-keys is non-empty'))
    else if (listType !== 'map') errs.push(fieldInvalid(child(path, 'x-orch-list-type'), listType, 'must be map if x-orch-list-map-keys is non-empty'))
  }
  if (listType === 'map') {
    if (keys.length === 0) errs.push(fieldRequired(child(path, 'x-orch-list-map-keys'), 'must not be empty if x-orch-list-type is map'))
    if (items === undefined) errs.push(fieldRequired(child(path, 'items'), 'must have a schema if x-orch-list-type is map'))
    if (Array.isArray(items)) errs.push(fieldInvalid(child(path, 'items'), goValue(items), 'must only have a single schema if x-orch-list-type is map'))
    if (isObj(items) && items.type !== 'object') errs.push(fieldInvalid(child(child(path, 'items'), 'type'), typeof items.type === 'string' ? items.type : '', "must be object if parent array's x-orch-list-type is map"))
    if (isObj(items) && items.type === 'object') {
      const seen = new Set<unknown>()
      const ip: Obj = isObj(items.properties) ? items.properties : {}
      const shown = goStringSlice('string', keys)
      for (const k of keys) {
        const ks = String(k)
        if (isObj(ip[ks])) {
          if (ip[ks].type === 'array' || ip[ks].type === 'object') errs.push(fieldInvalid(child(key(child(child(path, 'items'), 'properties'), ks), 'type'), items.type, "must be a scalar type if parent array's x-orch-list-type is map"))
        } else errs.push(fieldInvalid(child(path, 'x-orch-list-map-keys'), shown, 'entries must all be names of item properties'))
        if (seen.has(k)) errs.push(fieldInvalid(child(path, 'x-orch-list-map-keys'), shown, 'must not contain duplicate entries'))
        seen.add(k)
      }
    }
  }
  if (opts.requireMapListKeysMapSet) errs.push(...mapListKeysMapSet(s, path))
}

/** Map and set lists: items not nullable; a map key required or defaulted, and not nullable. */
function mapListKeysMapSet(s: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  const items = s.items
  const lt = s['x-orch-list-type']
  if (!isObj(items) || (lt !== 'set' && lt !== 'map')) return errs
  if (items.nullable === true) errs.push(fieldForbidden(child(child(path, 'items'), 'nullable'), `cannot be nullable when x-orch-list-type is ${lt}`))
  if (lt === 'map') {
    const required = new Set(Array.isArray(items.required) ? items.required : [])
    const ip: Obj = isObj(items.properties) ? items.properties : {}
    for (const k of Array.isArray(s['x-orch-list-map-keys']) ? s['x-orch-list-map-keys'] : []) {
      const p = ip[String(k)]
      if (!isObj(p)) continue
      const at = key(child(child(path, 'items'), 'properties'), String(k))
      if (!required.has(k) && (p.default === undefined || p.default === null)) errs.push(fieldRequired(child(at, 'default'), 'this property is in x-orch-list-map-keys, so it must have a default or be a required property'))
      if (p.nullable === true) errs.push(fieldForbidden(child(at, 'nullable'), 'this property is in x-orch-list-map-keys, so it cannot be nullable'))
    }
  }
  return errs
}

const CEL_RESERVED = new Set(['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while'])
const CEL_ESCAPABLE = /^[A-Za-z_.\-/][A-Za-z0-9_.\-/]*$/

/** A property's name as CEL sees it (upstream's escaping: `__underscores__`, `__dot__`, `__dash__`, `__slash__`, `__<keyword>__`); undefined when CEL cannot name it. */
function celFieldName(k: string): string | undefined {
  if (CEL_RESERVED.has(k)) return `__${k}__`
  if (!CEL_ESCAPABLE.test(k)) return undefined
  return k.replace(/__/g, '__underscores__').replace(/\./g, '__dot__').replace(/-/g, '__dash__').replace(/\//g, '__slash__')
}

/**
 * The CEL type of a value under a schema node, as upstream declares `self`: scalars by type, lists and maps by their
 * items, objects by their properties (the root's metadata holding only name and generateName). What upstream types
 * otherwise than plainly (formats as timestamps, durations, bytes; int-or-string; unknown fields; embedded
 * resources; nullable) is `dyn`, so a rule is never refused for a type we do not model.
 */
function celSelfType(s: unknown, root = false): CelSelfType {
  if (!isObj(s)) return 'dyn'
  if (s['x-orch-int-or-string'] === true || s['x-orch-preserve-unknown-fields'] === true || s['x-orch-embedded-resource'] === true || s.nullable === true) return 'dyn'
  switch (s.type) {
    case 'string': return typeof s.format === 'string' && s.format !== '' ? 'dyn' : 'string'
    case 'integer': return 'int'
    case 'number': return 'double'
    case 'boolean': return 'bool'
    case 'array': {
      const item = celSelfType(s.items)
      return typeof item === 'string' ? `list<${item}>` : 'list<dyn>'
    }
    case 'object': {
      if (isObj(s.properties) && Object.keys(s.properties).length > 0) {
        const out: { [k: string]: CelSelfType } = {}
        for (const [k, p] of Object.entries(s.properties)) {
          const name = celFieldName(k)
          if (name !== undefined) out[name] = celSelfType(p)
        }
        if (root) {
          out.apiVersion = 'string'
          out.kind = 'string'
          out.metadata = { name: 'string', generateName: 'string' }
        }
        return out
      }
      if (isObj(s.additionalProperties)) {
        const v = celSelfType(s.additionalProperties)
        return typeof v === 'string' ? `map<string, ${v}>` : 'map<string, dyn>'
      }
      return 'dyn'
    }
  }
  return 'dyn'
}

const NEWLINE = /[\n\r]+/

function ruleErrors(s: Obj, path: string, ssv: Ssv, cel: boolean, isRoot: boolean, opts: SchemaOptions, out: Walk): void {
  const list: unknown[] = s['x-orch-validations']
  const base = child(path, 'x-orch-validations')
  list.forEach((x, i) => {
    const at = `${base}[${i}]`
    const r: Obj = isObj(x) ? x : {}
    const rule = typeof r.rule === 'string' ? r.rule : ''
    const message = typeof r.message === 'string' ? r.message : ''
    const trimmedRule = rule.trim()
    const trimmedMsg = message.trim()
    if (trimmedRule === '') out.schema.push(fieldRequired(child(at, 'rule'), 'rule is not specified'))
    else if (message !== '' && trimmedMsg === '') out.schema.push(fieldInvalid(child(at, 'message'), message, 'must be non-empty if specified'))
    else if (NEWLINE.test(trimmedMsg)) out.schema.push(fieldInvalid(child(at, 'message'), message, 'must not contain line breaks'))
    else if (NEWLINE.test(trimmedRule) && trimmedMsg === '') out.schema.push(fieldRequired(child(at, 'message'), 'message must be specified if rule contains line breaks'))
    const msgExpr = typeof r.messageExpression === 'string' ? r.messageExpression : ''
    if (msgExpr !== '' && msgExpr.trim() === '') out.schema.push(fieldRequired(child(at, 'messageExpression'), 'messageExpression must be non-empty if specified'))
    if (r.reason !== undefined && !REASONS.includes(r.reason)) out.schema.push(fieldNotSupported(child(at, 'reason'), r.reason, REASONS))
    const fp = typeof r.fieldPath === 'string' ? r.fieldPath : ''
    if (fp !== '' && fp.trim() === '') out.schema.push(fieldInvalid(child(at, 'fieldPath'), fp, 'must be non-empty if specified'))
    if (NEWLINE.test(fp)) out.schema.push(fieldInvalid(child(at, 'fieldPath'), fp, 'must not contain line breaks'))
    if (fp !== '' && !fieldPathValid(s, fp)) out.schema.push(fieldInvalid(child(at, 'fieldPath'), fp, 'must be a valid path'))
  })
  // Rules are compiled only where the schema below them is sound (upstream: no schema error at this level or deeper).
  if (!cel || out.schema.length > 0) return
  let selfType: CelSelfType | undefined
  list.forEach((x, i) => {
    if (!isObj(x) || typeof x.rule !== 'string' || x.rule.trim() === '') return
    const at = `${base}[${i}]`
    if (!opts.preexisting.has(x.rule)) {
      const c = celCompileSelf(x.rule, selfType ??= celSelfType(s, isRoot))
      if (c.problem !== undefined) out.cel.push(fieldInvalidPrinted(child(at, 'rule'), goRule(x).text, c.problem))
      else if (c.type !== 'bool' && c.type !== 'dyn') out.cel.push(fieldInvalidPrinted(child(at, 'rule'), goRule(x).text, 'cel expression must evaluate to a bool'))
    }
    const me = typeof x.messageExpression === 'string' ? x.messageExpression : ''
    if (me.trim() !== '' && !opts.preexisting.has(me)) {
      const c = celCompileSelf(me, selfType ??= celSelfType(s, isRoot))
      if (c.problem !== undefined) out.cel.push(fieldInvalidPrinted(child(at, 'messageExpression'), goRule(x).text, `messageExpression ${c.problem}`))
      else if (c.type !== 'string' && c.type !== 'dyn') out.cel.push(fieldInvalidPrinted(child(at, 'messageExpression'), goRule(x).text, 'messageExpression must evaluate to a string'))
    }
    const usesOldSelf = /\boldSelf\b/.test(x.rule)
    if (usesOldSelf) {
      if (ssv.uncorrelatable !== undefined) out.cel.push(fieldInvalid(child(at, 'rule'), x.rule, `oldSelf cannot be used on the uncorrelatable portion of the schema within ${ssv.uncorrelatable}`))
    } else if (x.optionalOldSelf !== undefined && x.optionalOldSelf !== null) {
      out.cel.push(fieldInvalid(child(at, 'optionalOldSelf'), x.optionalOldSelf, 'may not be set if oldSelf is not used in rule'))
    }
  })
}

// ---- one version's schema ----

const ROOT_ALLOWED_WITH_STATUS = new Set(['description', 'type', 'format', 'title', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'maxLength', 'minLength', 'pattern', 'maxItems', 'minItems', 'uniqueItems', 'multipleOf', 'required', 'items', 'properties', 'externalDocs', 'example', 'x-orch-preserve-unknown-fields', 'x-orch-validations'])
const ROOT_ALLOWED_TEXT = '[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations]'

/** A JSON value's zero-ness as Go's reflect.DeepEqual against the field's zero value sees it. */
function isZero(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === '' || v === 0) return true
  if (Array.isArray(v)) return v.length === 0
  if (isObj(v)) return Object.keys(v).length === 0
  return false
}

/**
 * The errors of `spec.versions[i].schema` (`path`), upstream's validateCustomResourceDefinitionValidation: the status
 * sub-resource's root restrictions, structural invariants, defaults, the OpenAPI subset and markers, rules, and
 * finally whether a validator can be built at all.
 */
export function validateVersionSchema(schema: Obj, path: string, statusEnabled: boolean, opts: SchemaOptions): FieldError[] {
  const errs: FieldError[] = []
  const P = child(path, 'openAPIV3Schema')
  if (statusEnabled) {
    for (const [k, v] of Object.entries(schema)) {
      if (isZero(v)) continue
      if (k === 'type') {
        if (v !== 'object') { errs.push(fieldInvalid(`${P}.type`, v, 'only "object" is allowed as the type at the root of the schema if the status subresource is enabled')); break }
        continue
      }
      if (!ROOT_ALLOWED_WITH_STATUS.has(k)) { errs.push(fieldInvalidPrinted(P, 'apiextensions.JSONSchemaProps{...}', `only ${ROOT_ALLOWED_TEXT} fields are allowed at the root of the schema if the status subresource is enabled`)); break }
    }
  }
  if (schema.nullable === true) errs.push(fieldForbidden(`${P}.nullable`, 'nullable cannot be true at the root'))
  let cel = false
  if (opts.requireStructural && !unconvertible(schema)) {
    const se = structuralErrors(schema, P)
    if (se.length > 0) errs.push(...se)
    else {
      const de: FieldError[] = []
      // The resource root is an embedded resource as far as defaults go.
      defaultErrors({ ...schema, 'x-orch-embedded-resource': true }, P, false, opts, de)
      if (de.length > 0) errs.push(...de)
      else cel = true
    }
  }
  const w = walk(schema, P, { allowDefaults: true, disallowReason: '', insideMeta: false, uncorrelatable: undefined }, true, cel, opts)
  errs.push(...w.schema, ...w.cel)
  if (errs.length === 0 && compile(schema as any) === undefined) errs.push(fieldInvalid(path, '', 'error building validator: the schema cannot be compiled'))
  return errs
}

// ---- ratcheting (what the stored CRD already broke is not required of an update) ----

function schemasOf(spec: unknown): Obj[] {
  const vs: unknown[] = isObj(spec) && Array.isArray(spec.versions) ? spec.versions : []
  return vs.filter(isObj).map((v) => (isObj(v.schema) && isObj(v.schema.openAPIV3Schema) ? v.schema.openAPIV3Schema : undefined)).filter(isObj)
}

/** upstream's require* options of an update, from the stored spec. */
export function updateOptions(oldSpec: unknown): SchemaOptions {
  const schemas = schemasOf(oldSpec)
  const preexisting = new Set<string>()
  for (const s of schemas) someNode(s, (n) => {
    if (Array.isArray(n['x-orch-validations'])) for (const r of n['x-orch-validations']) {
      if (isObj(r) && typeof r.rule === 'string') preexisting.add(r.rule)
      if (isObj(r) && typeof r.messageExpression === 'string' && r.messageExpression !== '') preexisting.add(r.messageExpression)
    }
    return false
  })
  const nonStructural = schemas.some((s) => unconvertible(s) || structuralErrors(s, '').length > 0)
  const invalidTypes = schemas.some((s) => someNode(s, (n) => typeof n.type === 'string' && n.type !== '' && !TYPES.includes(n.type)))
  const nonAtomicSet = schemas.some((s) => someNode(s, (n) => {
    if (n['x-orch-list-type'] !== 'set' || !isObj(n.items)) return false
    if (n.items.type === 'array') return n.items['x-orch-list-type'] !== undefined && n.items['x-orch-list-type'] !== 'atomic'
    if (n.items.type === 'object') return n.items['x-orch-map-type'] !== 'atomic'
    return false
  }))
  const badMapSet = schemas.some((s) => someNode(s, (n) => mapListKeysMapSet(n, '').length > 0))
  const unpruned = !nonStructural && schemas.some((s) => someNode(s, (n) => n.default !== undefined && n.default !== null && !sameJson(pruned(n.default, n, false), n.default)))
  const hook = isObj(oldSpec) && isObj(oldSpec.conversion) && isObj(oldSpec.conversion.webhook) ? oldSpec.conversion.webhook : undefined
  const reviewVersions: unknown[] = hook && Array.isArray(hook.conversionReviewVersions) ? hook.conversionReviewVersions : []
  return {
    requireRecognizedReviewVersion: reviewVersions.length === 0 || reviewVersions.some((v) => v === 'v1' || v === 'v1beta1'),
    requireValidPropertyType: !invalidTypes,
    requireStructural: !nonStructural,
    requirePrunedDefaults: !unpruned,
    requireAtomicSetType: !nonAtomicSet,
    requireMapListKeysMapSet: !badMapSet,
    preexisting,
  }
}

/**
 * upstream's NonStructuralSchema condition (its nonstructuralschema controller): the structural violations of every
 * version's schema, in v1 paths, as one aggregate message; undefined when every schema is structural. A v1 CRD is
 * refused when it is not structural, so only one stored before (or kept by update ratcheting) ever has it.
 */
export function nonStructuralMessage(spec: unknown): string | undefined {
  const lines: string[] = []
  if (isObj(spec) && spec.preserveUnknownFields === true) lines.push('spec.preserveUnknownFields: Invalid value: true: must be false')
  const versions: unknown[] = isObj(spec) && Array.isArray(spec.versions) ? spec.versions : []
  for (let i = 0; i < versions.length; i++) {
    const v = versions[i]
    if (!isObj(v) || !isObj(v.schema) || !isObj(v.schema.openAPIV3Schema)) continue
    const s = v.schema.openAPIV3Schema
    if (unconvertible(s)) return `failed to check validation schema for version ${String(v.name ?? '')}: the schema holds fields a structural schema cannot have`
    for (const e of structuralErrors(s, `spec.versions[${i}].schema.openAPIV3Schema`)) lines.push(`${e.field}: ${fieldErrorBody(e)}`)
  }
  if (lines.length === 0) return undefined
  return lines.length === 1 ? lines[0] : `[${lines.join(', ')}]`
}
