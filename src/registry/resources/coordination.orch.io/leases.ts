// Lease (coordination.orch.io/v1).
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldForbidden, fieldInvalid, fieldNotSupported } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { qualifiedName } from '../../../machinery/validation.js'
import { ageColumn, nameColumn } from '../_printers.js'

const LEASE_STRATEGIES = ['OldestEmulationVersion']

/**
 * upstream ValidateLeaseSpec: a positive duration, non-negative transitions, a known or domain-qualified strategy,
 * and preferredHolder only with a strategy. The strategy's causes sit at `spec.strategy.strategy`, as upstream's do.
 */
function validateLease(o: Obj): FieldError[] {
  const errs: FieldError[] = []
  const spec: Obj = o.spec !== null && typeof o.spec === 'object' ? o.spec : {}
  const d = spec.leaseDurationSeconds
  if (d !== undefined && d !== null && d <= 0) errs.push(fieldInvalid('spec.leaseDurationSeconds', d, 'must be greater than 0'))
  const tr = spec.leaseTransitions
  if (tr !== undefined && tr !== null && tr < 0) errs.push(fieldInvalid('spec.leaseTransitions', tr, 'must be greater than or equal to 0'))
  const strategy = spec.strategy
  if (typeof strategy === 'string') {
    if (!strategy.includes('/')) {
      if (!LEASE_STRATEGIES.includes(strategy)) errs.push(fieldNotSupported('spec.strategy.strategy', strategy, LEASE_STRATEGIES))
    } else for (const m of qualifiedName(strategy)) errs.push(fieldInvalid('spec.strategy.strategy', strategy, m))
  }
  if (typeof spec.preferredHolder === 'string' && spec.preferredHolder !== '' && (typeof strategy !== 'string' || strategy === '')) {
    errs.push(fieldForbidden('spec.preferredHolder', 'may only be specified if `strategy` is defined'))
  }
  return errs
}

export default defineResource({
  group: 'coordination.orch.io', version: 'v1', kind: 'Lease', resource: 'leases', singular: 'lease', scope: 'Namespaced',
  verbs: ALL_VERBS,
  schemaRef: 'io.orch.api.coordination.v1.Lease',
  // spec is a value struct upstream.
  zeroValues: { spec: {} },
  strategy: { validate: validateLease, validateUpdate: (o) => validateLease(o), allowUnconditionalUpdate: true, nameRule: 'subdomain' },
  table: [
    nameColumn(),
    { name: 'Holder', type: 'string', description: 'holderIdentity contains the identity of the holder of a current lease.', cell: (o) => o.spec?.holderIdentity ?? '' },
    ageColumn(),
  ],
})
