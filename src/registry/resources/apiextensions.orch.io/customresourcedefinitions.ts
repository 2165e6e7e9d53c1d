// CustomResourceDefinition (apiextensions.orch.io/v1, cluster-scoped). Serving the defined types lives elsewhere.
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldDuplicate, fieldForbidden, fieldInvalid, fieldInvalidPrinted, fieldNotSupported, fieldRequired, fieldTooMany, goStringSlice } from '../../../machinery/errors.js'
import { CREATE_OPTIONS, updateOptions, validateVersionSchema, type SchemaOptions } from '../../crd-schema.js'
import { serviceErrors, urlErrors } from '../admissionregistration.orch.io/validatingwebhookconfigurations.js'
import { dns1035Label, dns1123Subdomain } from '../../../machinery/validation.js'
import type { FieldError } from '../../../machinery/errors.js'

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** SetDefaults_CustomResourceDefinitionSpec (the parts outside the schemas). */
function defaultCRD(o: Obj): void {
  const spec = o.spec
  if (!isObj(spec)) return
  if (isObj(spec.names)) {
    const n = spec.names
    if ((n.singular === undefined || n.singular === '') && typeof n.kind === 'string') n.singular = n.kind.toLowerCase()
    if ((n.listKind === undefined || n.listKind === '') && typeof n.kind === 'string' && n.kind !== '') n.listKind = `${n.kind}List`
  }
  spec.conversion ??= { strategy: 'None' }
  if (isObj(spec.conversion) && isObj(spec.conversion.webhook) && isObj(spec.conversion.webhook.clientConfig) && isObj(spec.conversion.webhook.clientConfig.service)) {
    spec.conversion.webhook.clientConfig.service.port ??= 443
  }
}

/** The storage version joins status.storedVersions (PrepareForCreate / PrepareForUpdate). */
function addStoredVersion(o: Obj): void {
  const versions: unknown[] = Array.isArray(o.spec?.versions) ? o.spec.versions : []
  const storage = versions.find((v) => isObj(v) && v.storage === true) as Obj | undefined
  if (!storage || typeof storage.name !== 'string') return
  if (!isObj(o.status)) o.status = {}
  const stored: string[] = Array.isArray(o.status.storedVersions) ? o.status.storedVersions : (o.status.storedVersions = [])
  if (!stored.includes(storage.name)) stored.push(storage.name)
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '')

const COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string']
const COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password']
const MAX_SELECTABLE_FIELDS = 8
const REVIEW_VERSIONS = ['v1', 'v1beta1']

/** upstream's validateSimpleJSONPath. */
function simpleJsonPath(p: string, path: string): FieldError[] {
  if (p === '') return [fieldInvalid(path, p, 'must not be empty')]
  if (!p.startsWith('.')) return [fieldInvalid(path, p, 'must be a simple json path starting with .')]
  return []
}

function columnErrors(c: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  if (str(c.name) === '') errs.push(fieldRequired(`${path}.name`, ''))
  const type = str(c.type)
  if (type === '') errs.push(fieldRequired(`${path}.type`, `must be one of ${COLUMN_TYPES.join(',')}`))
  else if (!COLUMN_TYPES.includes(type)) errs.push(fieldInvalid(`${path}.type`, type, `must be one of ${COLUMN_TYPES.join(',')}`))
  const format = str(c.format)
  if (format !== '' && !COLUMN_FORMATS.includes(format)) errs.push(fieldInvalid(`${path}.format`, format, `must be one of ${COLUMN_FORMATS.join(',')}`))
  const jp = str(c.jsonPath)
  if (jp === '') errs.push(fieldRequired(`${path}.JSONPath`, ''))
  else errs.push(...simpleJsonPath(jp, `${path}.JSONPath`))
  return errs
}

/** upstream's ValidateCustomResourceDefinitionSubresources (the scale paths). */
function subresourceErrors(sub: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  if (!isObj(sub.scale)) return errs
  const sc = sub.scale
  const spec = str(sc.specReplicasPath)
  if (spec === '') errs.push(fieldRequired(`${path}.scale.specReplicasPath`, ''))
  else {
    const e = simpleJsonPath(spec, `${path}.scale.specReplicasPath`)
    if (e.length > 0) errs.push(...e)
    else if (!spec.startsWith('.spec.')) errs.push(fieldInvalid(`${path}.scale.specReplicasPath`, spec, 'should be a json path under .spec'))
  }
  const status = str(sc.statusReplicasPath)
  if (status === '') errs.push(fieldRequired(`${path}.scale.statusReplicasPath`, ''))
  else {
    const e = simpleJsonPath(status, `${path}.scale.statusReplicasPath`)
    if (e.length > 0) errs.push(...e)
    else if (!status.startsWith('.status.')) errs.push(fieldInvalid(`${path}.scale.statusReplicasPath`, status, 'should be a json path under .status'))
  }
  const sel = str(sc.labelSelectorPath)
  if (sel !== '') {
    const e = simpleJsonPath(sel, `${path}.scale.labelSelectorPath`)
    if (e.length > 0) errs.push(...e)
    else if (!sel.startsWith('.spec.') && !sel.startsWith('.status.')) errs.push(fieldInvalid(`${path}.scale.labelSelectorPath`, sel, 'should be a json path under either .spec or .status'))
  }
  return errs
}

/** upstream's ValidateCustomResourceSelectableFields: a dotted path to a string, boolean or integer field outside metadata. */
function selectableFieldErrors(fields: unknown[], schema: Obj | undefined, path: string): FieldError[] {
  const errs: FieldError[] = []
  const unique = new Set<string>()
  fields.forEach((f, i) => {
    const at = `${path}[${i}].jsonPath`
    const jp = isObj(f) ? str(f.jsonPath) : ''
    if (jp === '') { errs.push(fieldRequired(at, '')); return }
    const m = /^\.([A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*)$/.exec(jp)
    let cur: Obj | undefined = schema
    const steps = m ? m[1].split('.') : []
    for (const step of steps) cur = cur && isObj(cur.properties) && isObj(cur.properties[step]) ? cur.properties[step] : undefined
    if (!m || cur === undefined) { errs.push(fieldInvalid(at, jp, 'is an invalid path: does not refer to a valid field')); return }
    if (steps[0] === 'metadata') errs.push(fieldInvalid(at, jp, 'must not point to fields in metadata'))
    if (!['string', 'boolean', 'integer'].includes(str(cur.type))) errs.push(fieldInvalid(at, jp, 'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.'))
    if (unique.has(steps.join('.'))) errs.push(fieldDuplicate(at, jp))
    else unique.add(steps.join('.'))
  })
  if (unique.size > MAX_SELECTABLE_FIELDS) errs.push(fieldTooMany(path, unique.size, MAX_SELECTABLE_FIELDS))
  return errs
}

function deprecationWarningErrors(v: Obj, path: string): FieldError[] {
  const w = v.deprecationWarning
  if (w === undefined || w === null) return []
  if (v.deprecated !== true) return [fieldInvalid(`${path}.deprecationWarning`, w, 'can only be set for deprecated versions')]
  const text = str(w)
  const errs: FieldError[] = []
  if (Buffer.byteLength(text) > 256) errs.push(fieldInvalid(`${path}.deprecationWarning`, text, 'must be <= 256 characters long'))
  if (text === '') errs.push(fieldInvalid(`${path}.deprecationWarning`, text, 'must not be an empty string'))
  let byte = 0
  for (const ch of text) {
    if (/[\p{Cc}]/u.test(ch)) { errs.push(fieldInvalid(`${path}.deprecationWarning`, text, `must only contain printable UTF-8 characters; non-printable character found at index ${byte}`)); break }
    byte += Buffer.byteLength(ch)
  }
  return errs
}

/** upstream's validateCustomResourceConversion (paths of the internal type, as upstream reports them). */
function conversionErrors(c: Obj, path: string, requireRecognized: boolean): FieldError[] {
  const errs: FieldError[] = []
  const strategy = str(c.strategy)
  if (strategy === '') errs.push(fieldRequired(`${path}.strategy`, ''))
  else if (strategy !== 'None' && strategy !== 'Webhook') errs.push(fieldNotSupported(`${path}.strategy`, strategy, ['None', 'Webhook']))
  const hook: Obj | undefined = isObj(c.webhook) ? c.webhook : undefined
  const cc: Obj | undefined = hook && isObj(hook.clientConfig) ? hook.clientConfig : undefined
  const versions: unknown[] = hook && Array.isArray(hook.conversionReviewVersions) ? hook.conversionReviewVersions : []
  if (strategy === 'Webhook') {
    if (cc === undefined) errs.push(fieldRequired(`${path}.webhookClientConfig`, 'required when strategy is set to Webhook'))
    else {
      const hasUrl = cc.url !== undefined && cc.url !== null
      const hasService = cc.service !== undefined && cc.service !== null
      if (hasUrl === hasService) errs.push(fieldRequired(`${path}.webhookClientConfig`, 'exactly one of url or service is required'))
      else if (hasUrl) errs.push(...urlErrors(str(cc.url), `${path}.webhookClientConfig.url`))
      else errs.push(...serviceErrors(isObj(cc.service) ? cc.service : {}, `${path}.webhookClientConfig.service`))
    }
    const at = `${path}.conversionReviewVersions`
    if (versions.length === 0) errs.push(fieldRequired(at, ''))
    else {
      const seen = new Set<string>()
      let accepted = false
      versions.forEach((x, i) => {
        const v = str(x)
        if (seen.has(v)) { errs.push(fieldInvalid(`${at}[${i}]`, v, 'duplicate version')); return }
        seen.add(v)
        for (const d of dns1035Label(v)) errs.push(fieldInvalid(`${at}[${i}]`, v, d))
        if (REVIEW_VERSIONS.includes(v)) accepted = true
      })
      if (!accepted && requireRecognized) errs.push(fieldInvalid(at, goStringSlice('string', versions), `must include at least one of ${REVIEW_VERSIONS.join(', ')}`))
    }
  } else {
    if (cc !== undefined) errs.push(fieldForbidden(`${path}.webhookClientConfig`, 'should not be set when strategy is not set to Webhook'))
    if (versions.length > 0) errs.push(fieldForbidden(`${path}.conversionReviewVersions`, 'should not be set when strategy is not set to Webhook'))
  }
  return errs
}

/** JSON with sorted keys (Go's semantic equality of two decoded schemas). */
function canonical(v: unknown): string {
  if (v === undefined) return 'undefined'
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`
  if (isObj(v)) return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`
  return JSON.stringify(v)
}

function columnsErrors(cols: unknown, path: string): FieldError[] {
  const errs: FieldError[] = []
  ;(Array.isArray(cols) ? cols : []).forEach((c: unknown, j: number) => errs.push(...columnErrors(isObj(c) ? c : {}, `${path}[${j}]`)))
  return errs
}

function selectableErrors(fields: unknown, schema: Obj | undefined, path: string, noSchema: string): FieldError[] {
  const sf: unknown[] = Array.isArray(fields) ? fields : []
  if (sf.length === 0) return []
  if (!schema) return [fieldInvalid(path, '', noSchema)]
  return selectableFieldErrors(sf, schema, path)
}

/** upstream's ValidateCustomResourceDefinitionNames (spec.names and status.acceptedNames). */
function namesErrors(n: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  for (const k of ['plural', 'singular']) {
    const v = str(n[k])
    const e = v === '' ? [] : dns1035Label(v)
    if (e.length > 0) errs.push(fieldInvalid(`${path}.${k}`, v, e.join(',')))
  }
  for (const k of ['kind', 'listKind']) {
    const v = str(n[k])
    const e = v === '' ? [] : dns1035Label(v.toLowerCase())
    if (e.length > 0) errs.push(fieldInvalid(`${path}.${k}`, v, `may have mixed case, but should otherwise match: ${e.join(',')}`))
  }
  ;(Array.isArray(n.shortNames) ? n.shortNames : []).forEach((s: unknown, i: number) => {
    const e = dns1035Label(str(s))
    if (e.length > 0) errs.push(fieldInvalid(`${path}.shortNames[${i}]`, s, e.join(',')))
  })
  const kind = str(n.kind)
  if (kind !== '' && kind === str(n.listKind)) errs.push(fieldInvalid(`${path}.listKind`, kind, 'kind and listKind may not be the same'))
  ;(Array.isArray(n.categories) ? n.categories : []).forEach((s: unknown, i: number) => {
    const e = dns1035Label(str(s))
    if (e.length > 0) errs.push(fieldInvalid(`${path}.categories[${i}]`, s, e.join(',')))
  })
  return errs
}

/**
 * upstream's validateCustomResourceDefinitionSpec for the v1 shape: group, scope, each version (name, deprecation
 * warning, schema, sub-resources, printer columns, selectable fields), unique names and one storage version, the
 * names, the conversion. `opts` relaxes on update what the stored CRD already broke.
 */
function validateSpec(spec: Obj, opts: SchemaOptions): FieldError[] {
  const errs: FieldError[] = []
  const group = str(spec.group)
  if (group === '') errs.push(fieldRequired('spec.group', ''))
  else {
    const ge = dns1123Subdomain(group)
    if (ge.length > 0) errs.push(fieldInvalid('spec.group', group, ge.join(',')))
    else if (group.split('.').length < 2) errs.push(fieldInvalid('spec.group', group, 'should be a domain with at least one dot'))
  }
  const scope = str(spec.scope)
  if (scope === '') errs.push(fieldRequired('spec.scope', ''))
  else if (scope !== 'Cluster' && scope !== 'Namespaced') errs.push(fieldNotSupported('spec.scope', scope, ['Cluster', 'Namespaced']))
  const versions: Obj[] = Array.isArray(spec.versions) ? spec.versions.filter(isObj) : []
  versions.forEach((v, i) => {
    if (!isObj(v.schema) || !isObj(v.schema.openAPIV3Schema)) errs.push(fieldRequired(`spec.versions[${i}].schema.openAPIV3Schema`, 'schemas are required'))
  })
  // upstream validates the internal type, into which the v1 conversion moves what every version has the same (the
  // schema, sub-resources, printer columns, selectable fields) to the top level: its errors are reported there.
  const same = (k: string) => versions.length > 0 && versions.every((v) => canonical(v[k]) === canonical(versions[0][k]))
  const top = { schema: same('schema'), subresources: same('subresources'), columns: same('additionalPrinterColumns') }
  const topSelectable = top.schema && same('selectableFields')
  const statusOf = (sub: unknown) => isObj(sub) && isObj(sub.status)
  const anyStatus = versions.some((v) => statusOf(v.subresources))
  const seen = new Set<string>()
  let unique = true
  let storage = 0
  versions.forEach((v, i) => {
    const name = str(v.name)
    if (v.storage === true) storage++
    if (seen.has(name)) unique = false
    seen.add(name)
    const at = `spec.versions[${i}]`
    const e = dns1035Label(name)
    if (e.length > 0) errs.push(fieldInvalid(`${at}.name`, name, e.join(',')))
    errs.push(...deprecationWarningErrors(v, at))
    const schema: Obj | undefined = isObj(v.schema) && isObj(v.schema.openAPIV3Schema) ? v.schema.openAPIV3Schema : undefined
    if (!top.schema && schema) errs.push(...validateVersionSchema(schema, `${at}.schema`, statusOf(top.subresources ? versions[0].subresources : v.subresources), opts))
    if (!top.subresources && isObj(v.subresources)) errs.push(...subresourceErrors(v.subresources, `${at}.subresources`))
    if (!top.columns) errs.push(...columnsErrors(v.additionalPrinterColumns, `${at}.additionalPrinterColumns`))
    // Checked against the version's schema even where the schemas are all the same (kept per version, not moved).
    if (!topSelectable) errs.push(...selectableErrors(v.selectableFields, schema, `${at}.selectableFields`, 'may only be set when `version.schema.openAPIV3Schema` is not included'))
  })
  const shown = goVersions(versions)
  if (!unique) errs.push(fieldInvalidPrinted('spec.versions', shown, 'must contain unique version names'))
  if (storage !== 1) errs.push(fieldInvalidPrinted('spec.versions', versions.length === 0 ? '[]apiextensions.CustomResourceDefinitionVersion(nil)' : shown, 'must have exactly one version marked as storage version'))
  const n: Obj = isObj(spec.names) ? spec.names : {}
  for (const k of ['plural', 'singular', 'kind', 'listKind']) if (str(n[k]) === '') errs.push(fieldRequired(`spec.names.${k}`, ''))
  errs.push(...namesErrors(n, 'spec.names'))
  const first = versions[0] ?? {}
  const topSchema: Obj | undefined = top.schema && isObj(first.schema) && isObj(first.schema.openAPIV3Schema) ? first.schema.openAPIV3Schema : undefined
  if (topSchema) errs.push(...validateVersionSchema(topSchema, 'spec.validation', anyStatus, opts))
  if (top.subresources && isObj(first.subresources)) errs.push(...subresourceErrors(first.subresources, 'spec.subresources'))
  if (top.columns) errs.push(...columnsErrors(first.additionalPrinterColumns, 'spec.additionalPrinterColumns'))
  if (topSelectable) errs.push(...selectableErrors(first.selectableFields, topSchema, 'spec.selectableFields', 'may only be set when validations.schema is included'))
  if (isObj(spec.conversion)) {
    if (spec.preserveUnknownFields === true && str(spec.conversion.strategy) !== 'None') errs.push(fieldInvalid('spec.conversion.strategy', str(spec.conversion.strategy), 'must be None if spec.preserveUnknownFields is true'))
    errs.push(...conversionErrors(spec.conversion, 'spec.conversion', opts.requireRecognizedReviewVersion))
  }
  return errs
}

/** The versions as Go's %#v would start to print them (upstream's text holds pointer addresses: no exact form exists). */
function goVersions(vs: Obj[]): string {
  return `[]apiextensions.CustomResourceDefinitionVersion{${vs.map((v) => `apiextensions.CustomResourceDefinitionVersion{Name:${JSON.stringify(str(v.name))}, Served:${v.served === true}, Storage:${v.storage === true}}`).join(', ')}}`
}

function validateCRD(o: Obj, opts: SchemaOptions = CREATE_OPTIONS): FieldError[] {
  const name = o.metadata?.name
  const plural = o.spec?.names?.plural
  const group = o.spec?.group
  const errs: FieldError[] = []
  if (typeof name === 'string' && typeof plural === 'string' && typeof group === 'string' && name !== `${plural}.${group}`) {
    errs.push(fieldInvalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group'))
  }
  if (isObj(o.spec)) errs.push(...validateSpec(o.spec, opts))
  if (isObj(o.status) && isObj(o.status.acceptedNames)) errs.push(...namesErrors(o.status.acceptedNames, 'status.acceptedNames'))
  if (o.spec?.preserveUnknownFields === true) errs.push(fieldInvalid('spec.preserveUnknownFields', true, 'cannot set to true, set x-orch-preserve-unknown-fields to true in spec.versions[*].schema instead'))
  return errs
}

function immutable(path: string, v: unknown, old: unknown): FieldError[] {
  return v === old ? [] : [fieldInvalid(path, v, 'field is immutable')]
}

/** upstream's ValidateCustomResourceDefinitionUpdate: the create checks relaxed by what the stored CRD broke, and the immutable fields. */
function validateCRDUpdate(o: Obj, old: Obj): FieldError[] {
  // A spec the update leaves as it was is not judged again: a CRD stored before a check existed keeps taking
  // metadata updates (labels, the controller's removal of its cleanup finalizer) instead of being stuck.
  const unchanged = canonical(o.spec) === canonical(old.spec)
  const errs = unchanged ? validateCRD({ metadata: o.metadata, status: o.status }) : validateCRD(o, updateOptions(old.spec))
  // Only a stored CRD without the flag set can be refused for setting it (upstream's validatePreserveUnknownFields).
  if (old.spec?.preserveUnknownFields === true) {
    const i = errs.findIndex((e) => e.field === 'spec.preserveUnknownFields')
    if (i >= 0) errs.splice(i, 1)
  }
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  const oldSpec: Obj = isObj(old.spec) ? old.spec : {}
  const established = Array.isArray(old.status?.conditions) && old.status.conditions.some((c: Obj) => isObj(c) && c.type === 'Established' && c.status === 'True')
  if (established) {
    errs.push(...immutable('spec.scope', str(spec.scope), str(oldSpec.scope)))
    errs.push(...immutable('spec.names.kind', str(spec.names?.kind), str(oldSpec.names?.kind)))
  }
  errs.push(...immutable('spec.group', str(spec.group), str(oldSpec.group)))
  errs.push(...immutable('spec.names.plural', str(spec.names?.plural), str(oldSpec.names?.plural)))
  const stored: unknown[] = Array.isArray(o.status?.storedVersions) ? o.status.storedVersions : []
  const names = new Set((Array.isArray(spec.versions) ? spec.versions : []).filter(isObj).map((v: Obj) => str(v.name)))
  stored.forEach((v, i) => {
    const s = str(v)
    if (!names.has(s)) errs.push(fieldInvalid(`status.storedVersions[${i}]`, s, `missing from spec.versions; ${s} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in ${s} and removes ${s} from status.storedVersions`))
  })
  return errs
}

export default defineResource({
  group: 'apiextensions.orch.io', version: 'v1', kind: 'CustomResourceDefinition', resource: 'customresourcedefinitions', singular: 'customresourcedefinition', scope: 'Cluster',
  verbs: ALL_VERBS,
  shortNames: ['crd', 'crds'],
  categories: ['api-extensions'],
  subresources: ['status'],
  schemaRef: 'io.orch.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition',
  // status is a value struct upstream; acceptedNames too, its plural and kind without omitempty.
  zeroValues: { status: { acceptedNames: { plural: '', kind: '' } } },
  strategy: {
    default: defaultCRD,
    prepareForCreate: (o) => { delete o.status; addStoredVersion(o) },
    prepareForUpdate: (o, old) => { statusSplit.strategy.prepareForUpdate(o, old); if (isObj(o.status)) o.status = structuredClone(o.status); addStoredVersion(o) },
    validate: (o) => validateCRD(o),
    validateUpdate: validateCRDUpdate,
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
    hasGeneration: true,
  },
  status: statusSplit.status,
})
