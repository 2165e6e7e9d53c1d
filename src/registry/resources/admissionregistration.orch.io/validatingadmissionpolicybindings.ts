// ValidatingAdmissionPolicyBinding (admissionregistration.orch.io/v1, cluster-scoped).
import { defineResource, ALL_VERBS } from '../../define.js'
import { defaultMatchResources } from './validatingwebhookconfigurations.js'
import type { Obj } from '../../define.js'
import { ageColumn, labelSelectorStructString, nameColumn } from '../_printers.js'

/** The parameter object: namespace/name (namespace `*` when not given), else the selector; `<unset>` without a paramRef. */
function paramRef(o: Obj): string {
  const pr = o.spec?.paramRef
  if (pr === null || typeof pr !== 'object') return '<unset>'
  if (typeof pr.name === 'string' && pr.name !== '') return `${typeof pr.namespace === 'string' && pr.namespace !== '' ? pr.namespace : '*'}/${pr.name}`
  // Upstream prints the selector with the Go struct's String().
  if (pr.selector !== null && typeof pr.selector === 'object') return labelSelectorStructString(pr.selector)
  return '<unset>'
}

export default defineResource({
  group: 'admissionregistration.orch.io', version: 'v1', kind: 'ValidatingAdmissionPolicyBinding', resource: 'validatingadmissionpolicybindings', singular: 'validatingadmissionpolicybinding', scope: 'Cluster',
  verbs: ALL_VERBS,
  categories: ['api-extensions'],
  schemaRef: 'io.orch.api.admissionregistration.v1.ValidatingAdmissionPolicyBinding',
  strategy: {
    default: (o) => { if (o.spec !== null && typeof o.spec === 'object') defaultMatchResources(o.spec.matchResources) },
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
    hasGeneration: true,
  },
  table: [
    nameColumn(),
    { name: 'PolicyName', type: 'string', description: 'The policy this binding applies.', cell: (o) => o.spec?.policyName ?? '' },
    { name: 'ParamRef', type: 'string', description: 'The object that holds the parameters of the policy.', cell: (o) => paramRef(o) },
    ageColumn(),
  ],
})
