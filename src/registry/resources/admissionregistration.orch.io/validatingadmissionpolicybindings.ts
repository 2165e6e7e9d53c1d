// ValidatingAdmissionPolicyBinding (admissionregistration.orch.io/v1, cluster-scoped).
import { defineResource, ALL_VERBS } from '../../define.js'
import { defaultMatchResources } from './validatingwebhookconfigurations.js'
import { validateMatchResources } from './validatingadmissionpolicies.js'
import type { Obj } from '../../define.js'
import { fieldDuplicate, fieldForbidden, fieldInvalid, fieldNotSupported, fieldRequired, goStringSlice, type FieldError } from '../../../machinery/errors.js'
import { dns1123Subdomain, pathSegmentName, validateLabelSelector } from '../../../machinery/validation.js'
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

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

const ACTIONS = ['Audit', 'Deny', 'Warn']

/** upstream validateParamRef: name xor selector, parameterNotFoundAction required. */
function validateParamRef(pr: unknown, f: string): FieldError[] {
  if (!isObj(pr)) return []
  const errs: FieldError[] = []
  const name = typeof pr.name === 'string' ? pr.name : ''
  const hasSelector = isObj(pr.selector)
  if (name !== '') {
    for (const d of pathSegmentName(name)) errs.push(fieldInvalid(`${f}.name`, name, d))
    if (hasSelector) errs.push(fieldForbidden(`${f}.name`, 'name and selector are mutually exclusive'))
  }
  if (hasSelector) {
    errs.push(...validateLabelSelector(pr.selector, `${f}.selector`))
    if (name !== '') errs.push(fieldForbidden(`${f}.selector`, 'name and selector are mutually exclusive'))
  }
  if (name === '' && !hasSelector) errs.push(fieldRequired(f, 'one of name or selector must be specified'))
  const action = pr.parameterNotFoundAction
  if (action === undefined || action === null || action === '') errs.push(fieldRequired(`${f}.parameterNotFoundAction`))
  else if (action !== 'Deny' && action !== 'Allow') errs.push(fieldNotSupported(`${f}.parameterNotFoundAction`, action, ['Deny', 'Allow']))
  return errs
}

/** upstream validateValidationActions: required, known, unique, not both Deny and Warn. */
function validateActions(v: unknown, f: string): FieldError[] {
  const errs: FieldError[] = []
  const actions: unknown[] = Array.isArray(v) ? v : []
  const seen = new Set<unknown>()
  actions.forEach((a, i) => {
    if (!ACTIONS.includes(a as string)) errs.push(fieldNotSupported(`${f}[${i}]`, a, ACTIONS))
    if (seen.has(a)) errs.push(fieldDuplicate(`${f}[${i}]`, a))
    seen.add(a)
  })
  if (seen.has('Deny') && seen.has('Warn')) errs.push(fieldInvalid(f, goStringSlice('admissionregistration.ValidationAction', actions), 'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)'))
  if (seen.size === 0) errs.push(fieldRequired(f, 'at least one validation action is required'))
  return errs
}

/** upstream validateValidatingAdmissionPolicyBindingSpec. */
function validateBinding(o: Obj): FieldError[] {
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  const errs: FieldError[] = []
  const policy = typeof spec.policyName === 'string' ? spec.policyName : ''
  if (policy === '') errs.push(fieldRequired('spec.policyName'))
  else for (const d of dns1123Subdomain(policy)) errs.push(fieldInvalid('spec.policyName', policy, d))
  errs.push(...validateParamRef(spec.paramRef, 'spec.paramRef'))
  // Upstream names this path `spec.matchResouces` (sic); clients see that spelling, so it is kept.
  errs.push(...validateMatchResources(spec.matchResources, 'spec.matchResouces'))
  errs.push(...validateActions(spec.validationActions, 'spec.validationActions'))
  return errs
}

export default defineResource({
  group: 'admissionregistration.orch.io', version: 'v1', kind: 'ValidatingAdmissionPolicyBinding', resource: 'validatingadmissionpolicybindings', singular: 'validatingadmissionpolicybinding', scope: 'Cluster',
  verbs: ALL_VERBS,
  categories: ['api-extensions'],
  schemaRef: 'io.orch.api.admissionregistration.v1.ValidatingAdmissionPolicyBinding',
  // spec is a value struct upstream.
  zeroValues: { spec: {} },
  strategy: {
    default: (o) => { if (o.spec !== null && typeof o.spec === 'object') defaultMatchResources(o.spec.matchResources) },
    validate: validateBinding,
    validateUpdate: (o) => validateBinding(o),
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
