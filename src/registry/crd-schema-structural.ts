// Structural schema checks of a CRD version's schema (upstream's ValidateStructural): the invariants per level, value validations, completeness.
import type { Obj } from './define.js'
import { fieldForbidden, fieldInvalid, fieldRequired, type FieldError } from '../machinery/errors.js'
import { re2Problem } from '../machinery/re2.js'
import { isObj, key, child } from './crd-schema-common.js'

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
