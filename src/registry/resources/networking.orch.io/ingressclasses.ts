// IngressClass (networking.orch.io/v1, cluster-scoped).
import { isDeepStrictEqual } from 'node:util'
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldForbidden, fieldInvalid, fieldNotSupported, fieldRequired, fieldTooLong } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { dns1123Label, domainPrefixedPath } from '../../../machinery/validation.js'
import { typedReferenceErrors } from './ingresses.js'
import { ageColumn, nameColumn } from '../_printers.js'

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** upstream validateIngressClassSpec: a domain-prefixed controller of at most 250 bytes, and the parameters reference. */
function validateIngressClass(o: Obj): FieldError[] {
  const errs: FieldError[] = []
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  const controller = typeof spec.controller === 'string' ? spec.controller : ''
  if (controller === '') errs.push(fieldRequired('spec.controller'))
  else {
    if (controller.length > 250) errs.push(fieldTooLong('spec.controller', 250))
    errs.push(...domainPrefixedPath('spec.controller', controller))
  }
  if (isObj(spec.parameters)) {
    const p = spec.parameters
    errs.push(...typedReferenceErrors(p, 'spec.parameters'))
    if (p.scope === undefined || p.scope === null) errs.push(fieldRequired('spec.parameters.scope'))
    else if (p.scope !== 'Cluster' && p.scope !== 'Namespace') errs.push(fieldNotSupported('spec.parameters.scope', p.scope, ['Cluster', 'Namespace']))
    else if (p.scope === 'Namespace') {
      if (typeof p.namespace !== 'string') errs.push(fieldRequired('spec.parameters.namespace', "`parameters.scope` is set to 'Namespace'"))
      else for (const d of dns1123Label(p.namespace)) errs.push(fieldInvalid('spec.parameters.namespace', p.namespace, d))
    } else if (p.namespace !== undefined && p.namespace !== null) errs.push(fieldForbidden('spec.parameters.namespace', "`parameters.scope` is set to 'Cluster'"))
  }
  return errs
}

function validateIngressClassUpdate(o: Obj, old: Obj): FieldError[] {
  const errs: FieldError[] = []
  if (!isDeepStrictEqual(o.spec?.controller, old.spec?.controller)) errs.push(fieldInvalid('spec.controller', o.spec?.controller ?? '', 'field is immutable'))
  return [...errs, ...validateIngressClass(o)]
}

export default defineResource({
  group: 'networking.orch.io', version: 'v1', kind: 'IngressClass', resource: 'ingressclasses', singular: 'ingressclass', scope: 'Cluster',
  verbs: ALL_VERBS,
  schemaRef: 'io.orch.api.networking.v1.IngressClass',
  // spec is a value struct upstream.
  zeroValues: { spec: {} },
  strategy: {
    // SetDefaults_IngressClass: parameters without a scope are cluster-scoped.
    default: (o) => { if (isObj(o.spec) && isObj(o.spec.parameters)) o.spec.parameters.scope ??= 'Cluster' },
    validate: validateIngressClass,
    validateUpdate: validateIngressClassUpdate,
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
    hasGeneration: true,
  },
  table: [
    nameColumn(),
    { name: 'Controller', type: 'string', description: 'The controller that implements this class.', cell: (o) => o.spec?.controller ?? '' },
    {
      name: 'Parameters', type: 'string', description: 'The object holding extra configuration for the class (Kind[.group]/name).',
      cell: (o) => {
        const p = o.spec?.parameters
        if (p === null || typeof p !== 'object') return '<none>'
        const kind = typeof p.apiGroup === 'string' ? `${p.kind ?? ''}.${p.apiGroup}` : `${p.kind ?? ''}`
        return `${kind}/${p.name ?? ''}`
      },
    },
    ageColumn(),
  ],
})
