// CustomResourceDefinition (apiextensions.orch.io/v1, cluster-scoped). Serving the defined types lives elsewhere.
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldInvalid, fieldInvalidPrinted, fieldNotSupported, fieldRequired } from '../../../machinery/errors.js'
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

/**
 * The common parts of upstream's ValidateCustomResourceDefinitionSpec: group, scope, versions (unique DNS-1035 names,
 * one storage version, a schema each), the names. Schemas themselves are not checked for structure here.
 */
function validateSpec(spec: Obj): FieldError[] {
  const errs: FieldError[] = []
  const group = str(spec.group)
  if (group === '') errs.push(fieldRequired('spec.group', ''))
  else {
    for (const e of dns1123Subdomain(group)) errs.push(fieldInvalid('spec.group', group, e))
    if (group.split('.').length < 2) errs.push(fieldInvalid('spec.group', group, 'should be a domain with at least one dot'))
  }
  const scope = str(spec.scope)
  if (scope === '') errs.push(fieldRequired('spec.scope', ''))
  else if (scope !== 'Cluster' && scope !== 'Namespaced') errs.push(fieldNotSupported('spec.scope', scope, ['Cluster', 'Namespaced']))
  const versions: Obj[] = Array.isArray(spec.versions) ? spec.versions.filter(isObj) : []
  if (versions.length === 0) errs.push(fieldInvalidPrinted('spec.versions', '[]apiextensions.CustomResourceDefinitionVersion(nil)', 'must have exactly one version marked as storage version'))
  else {
    const seen = new Set<string>()
    let unique = true
    let storage = 0
    versions.forEach((v, i) => {
      const name = str(v.name)
      if (v.storage === true) storage++
      if (seen.has(name)) unique = false
      seen.add(name)
      const e = dns1035Label(name)
      if (e.length > 0) errs.push(fieldInvalid(`spec.versions[${i}].name`, name, e.join(',')))
      if (!isObj(v.schema) || !isObj(v.schema.openAPIV3Schema)) errs.push(fieldRequired(`spec.versions[${i}].schema.openAPIV3Schema`, 'schemas are required'))
    })
    const shown = goVersions(versions)
    if (!unique) errs.push(fieldInvalidPrinted('spec.versions', shown, 'must contain unique version names'))
    if (storage !== 1) errs.push(fieldInvalidPrinted('spec.versions', shown, 'must have exactly one version marked as storage version'))
  }
  const n: Obj = isObj(spec.names) ? spec.names : {}
  for (const k of ['plural', 'singular', 'kind', 'listKind']) if (str(n[k]) === '') errs.push(fieldRequired(`spec.names.${k}`, ''))
  for (const k of ['plural', 'singular']) {
    const v = str(n[k])
    const e = v === '' ? [] : dns1035Label(v)
    if (e.length > 0) errs.push(fieldInvalid(`spec.names.${k}`, v, e.join(',')))
  }
  const kind = str(n.kind)
  const ke = kind === '' ? [] : dns1035Label(kind.toLowerCase())
  if (ke.length > 0) errs.push(fieldInvalid('spec.names.kind', kind, `may have mixed case, but should otherwise match: ${ke.join(',')}`))
  const listKind = str(n.listKind)
  const le = listKind === '' ? [] : dns1035Label(listKind.toLowerCase())
  if (le.length > 0) errs.push(fieldInvalid('spec.names.listKind', listKind, `may have mixed case, but should otherwise match: ${le.join(',')}`))
  if (kind !== '' && kind === listKind) errs.push(fieldInvalid('spec.names.listKind', listKind, 'kind and listKind may not be the same'))
  const shortNames: unknown[] = Array.isArray(n.shortNames) ? n.shortNames : []
  shortNames.forEach((s, i) => {
    const e = dns1035Label(str(s))
    if (e.length > 0) errs.push(fieldInvalid(`spec.names.shortNames[${i}]`, s, e.join(',')))
  })
  return errs
}

/** The versions as Go's %#v would start to print them (upstream's text holds pointer addresses: no exact form exists). */
function goVersions(vs: Obj[]): string {
  return `[]apiextensions.CustomResourceDefinitionVersion{${vs.map((v) => `apiextensions.CustomResourceDefinitionVersion{Name:${JSON.stringify(str(v.name))}, Served:${v.served === true}, Storage:${v.storage === true}}`).join(', ')}}`
}

function validateCRD(o: Obj): FieldError[] {
  const name = o.metadata?.name
  const plural = o.spec?.names?.plural
  const group = o.spec?.group
  const errs: FieldError[] = []
  if (typeof name === 'string' && typeof plural === 'string' && typeof group === 'string' && name !== `${plural}.${group}`) {
    errs.push(fieldInvalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group'))
  }
  if (isObj(o.spec)) errs.push(...validateSpec(o.spec))
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
    validate: validateCRD,
    validateUpdate: (o) => validateCRD(o),
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
    hasGeneration: true,
  },
  status: statusSplit.status,
})
