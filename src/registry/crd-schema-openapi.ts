// The OpenAPI subset a CRD schema may use (upstream's ValidateCustomResourceDefinitionOpenAPISchema): the walk over every node, its forbidden fields, list and map markers.
import type { Obj } from './define.js'
import { fieldForbidden, fieldInvalid, fieldNotSupported, fieldRequired, goStringSlice, type FieldError } from '../machinery/errors.js'
import { isObj, TYPES, META_FIELDS, key, child, goValue, type SchemaOptions } from './crd-schema-common.js'
import { ruleErrors } from './crd-schema-rules.js'

// ---- the OpenAPI subset (upstream's ValidateCustomResourceDefinitionOpenAPISchema) ----

export interface Ssv { allowDefaults: boolean; disallowReason: string; insideMeta: boolean; uncorrelatable: string | undefined }

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


export interface Walk { schema: FieldError[]; cel: FieldError[] }

export function walk(s: Obj, path: string, ssv: Ssv, isRoot: boolean, cel: boolean, opts: SchemaOptions): Walk {
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
export function mapListKeysMapSet(s: Obj, path: string): FieldError[] {
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
