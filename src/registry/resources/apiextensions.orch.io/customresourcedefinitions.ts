// CustomResourceDefinition (apiextensions.orch.io/v1, cluster-scoped). Serving the defined types lives elsewhere.
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldInvalid } from '../../../machinery/errors.js'
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

function validateCRD(o: Obj): FieldError[] {
  const name = o.metadata?.name
  const plural = o.spec?.names?.plural
  const group = o.spec?.group
  if (typeof name === 'string' && typeof plural === 'string' && typeof group === 'string' && name !== `${plural}.${group}`) {
    return [fieldInvalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group')]
  }
  return []
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
