// The checks of a CustomResourceDefinition version's openAPIV3Schema (upstream's validateCustomResourceDefinitionValidation):
// the OpenAPI subset allowed, structural schema invariants and completeness, Go (RE2) patterns, defaults that
// validate and are pruned, list/map markers, and x-orch-validations rules that compile; with upstream's paths and texts.
import type { Obj } from './define.js'
import { fieldErrorBody, fieldForbidden, fieldInvalid, fieldInvalidPrinted, type FieldError } from '../machinery/errors.js'
import { compile } from './custom-schema.js'
import { isObj, TYPES, child, someNode, unconvertible, type SchemaOptions } from './crd-schema-common.js'
import { structuralErrors } from './crd-schema-structural.js'
import { pruned, sameJson, defaultErrors } from './crd-schema-defaults.js'
import { walk, mapListKeysMapSet } from './crd-schema-openapi.js'

export { CREATE_OPTIONS, type SchemaOptions } from './crd-schema-common.js'
export { structuralErrors } from './crd-schema-structural.js'

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
