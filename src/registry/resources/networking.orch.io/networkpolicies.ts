// NetworkPolicy (networking.orch.io/v1).
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj } from '../../define.js'
import { ageColumn, formatLabelSelector, nameColumn } from '../_printers.js'

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** SetDefaults_NetworkPolicy and SetDefaults_NetworkPolicyPort. */
function defaultNetworkPolicy(o: Obj): void {
  const spec = o.spec
  if (!isObj(spec)) return
  for (const rules of [spec.ingress, spec.egress]) {
    if (!Array.isArray(rules)) continue
    for (const r of rules) if (isObj(r) && Array.isArray(r.ports)) for (const p of r.ports) if (isObj(p)) p.protocol ??= 'TCP'
  }
  if (!Array.isArray(spec.policyTypes) || spec.policyTypes.length === 0) {
    spec.policyTypes = ['Ingress']
    if (Array.isArray(spec.egress) && spec.egress.length > 0) spec.policyTypes.push('Egress')
  }
}

export default defineResource({
  group: 'networking.orch.io', version: 'v1', kind: 'NetworkPolicy', resource: 'networkpolicies', singular: 'networkpolicy', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['netpol'],
  schemaRef: 'io.orch.api.networking.v1.NetworkPolicy',
  strategy: { default: defaultNetworkPolicy, allowUnconditionalUpdate: true, nameRule: 'subdomain', hasGeneration: true },
  table: [
    nameColumn(),
    { name: 'Pod-Selector', type: 'string', description: 'The pods the policy applies to.', cell: (o) => formatLabelSelector(o.spec?.podSelector) },
    ageColumn(),
  ],
})
