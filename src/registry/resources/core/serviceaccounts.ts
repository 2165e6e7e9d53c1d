// ServiceAccount (v1). The token sub-resource (TokenRequest) is answered by src/pipeline/reviews.ts.
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj } from '../../define.js'
import { ageColumn, nameColumn } from '../_printers.js'

/**
 * upstream's cleanSecretReferences (on create and update): each secrets[] reference keeps its name only. Beyond this
 * and the metadata (a DNS-1123 subdomain name), upstream checks nothing of a ServiceAccount.
 */
function cleanSecretReferences(o: Obj): void {
  if (!Array.isArray(o.secrets)) return
  o.secrets = o.secrets.map((r: unknown) => {
    const name = r !== null && typeof r === 'object' ? (r as Obj).name : undefined
    return typeof name === 'string' && name !== '' ? { name } : {}
  })
}

export default defineResource({
  group: '', version: 'v1', kind: 'ServiceAccount', resource: 'serviceaccounts', singular: 'serviceaccount', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['sa'],
  schemaRef: 'io.orch.api.core.v1.ServiceAccount',
  strategy: { prepareForCreate: cleanSecretReferences, prepareForUpdate: cleanSecretReferences, allowUnconditionalUpdate: true, returnDeletedObject: true, nameRule: 'subdomain' },
  virtualSubresources: [{ name: 'token', group: 'authentication.orch.io', version: 'v1', kind: 'TokenRequest', verbs: ['create'] }],
  table: [
    nameColumn(),
    { name: 'Secrets', type: 'integer', description: 'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.', cell: (o) => (Array.isArray(o.secrets) ? o.secrets.length : 0) },
    ageColumn(),
  ],
})
