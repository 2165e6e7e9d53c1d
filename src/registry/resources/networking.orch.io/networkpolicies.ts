// NetworkPolicy (networking.orch.io/v1).
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldForbidden, fieldInvalid, fieldNotSupported, fieldRequired, goStringSlice, type FieldError } from '../../../machinery/errors.js'
import { cidrContains, parseCidrSloppy, portName, portNumber, validateLabelSelector } from '../../../machinery/validation.js'
import { ageColumn, formatLabelSelector, nameColumn } from '../_printers.js'

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** SetDefaults_NetworkPolicy and SetDefaults_NetworkPolicyPort. */
function defaultNetworkPolicy(o: Obj): void {
  // spec and spec.podSelector are structs, not pointers, upstream: they are always written, empty when not given.
  if (!isObj(o.spec)) o.spec = {}
  const spec = o.spec
  if (!isObj(spec.podSelector)) spec.podSelector = {}
  for (const rules of [spec.ingress, spec.egress]) {
    if (!Array.isArray(rules)) continue
    for (const r of rules) if (isObj(r) && Array.isArray(r.ports)) for (const p of r.ports) if (isObj(p)) p.protocol ??= 'TCP'
  }
  if (!Array.isArray(spec.policyTypes) || spec.policyTypes.length === 0) {
    spec.policyTypes = ['Ingress']
    if (Array.isArray(spec.egress) && spec.egress.length > 0) spec.policyTypes.push('Egress')
  }
}

interface Options { allowInvalidLabelValue: boolean }

/** ValidateNetworkPolicyPort. */
function validatePort(p: Obj, f: string): FieldError[] {
  const errs: FieldError[] = []
  const protocols = ['TCP', 'UDP', 'SCTP']
  if (p.protocol !== undefined && p.protocol !== null && !protocols.includes(p.protocol)) errs.push(fieldNotSupported(`${f}.protocol`, p.protocol, protocols))
  const end = p.endPort
  const hasEnd = end !== undefined && end !== null
  if (typeof p.port === 'number') {
    for (const d of portNumber(p.port)) errs.push(fieldInvalid(`${f}.port`, p.port, d))
    if (hasEnd) {
      if (end < p.port) errs.push(fieldInvalid(`${f}.endPort`, end, 'must be greater than or equal to `port`'))
      for (const d of portNumber(end)) errs.push(fieldInvalid(`${f}.endPort`, end, d))
    }
  } else if (typeof p.port === 'string') {
    if (hasEnd) errs.push(fieldInvalid(`${f}.endPort`, end, 'may not be specified when `port` is non-numeric'))
    for (const d of portName(p.port)) errs.push(fieldInvalid(`${f}.port`, p.port, d))
  } else if (hasEnd) {
    errs.push(fieldInvalid(`${f}.endPort`, end, 'may not be specified when `port` is not specified'))
  }
  return errs
}

/** ValidateIPBlock, with CIDRs read as upstream reads them while StrictIPCIDRValidation is off (its default through 1.35). */
function validateIPBlock(b: Obj, f: string): FieldError[] {
  const cidr = typeof b.cidr === 'string' ? b.cidr : ''
  if (cidr === '') return [fieldRequired(`${f}.cidr`)]
  const net = parseCidrSloppy(cidr)
  if (net === undefined) return [fieldInvalid(`${f}.cidr`, cidr, 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)')]
  const errs: FieldError[] = []
  ;(Array.isArray(b.except) ? b.except : []).forEach((x: unknown, i: number) => {
    const ef = `${f}.except[${i}]`
    const s = typeof x === 'string' ? x : ''
    const ex = parseCidrSloppy(s)
    if (ex === undefined) { errs.push(fieldInvalid(ef, s, 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)')); return }
    if (!cidrContains(net, ex) || net.maskLen >= ex.maskLen) errs.push(fieldInvalid(ef, s, 'must be a strict subset of `cidr`'))
  })
  return errs
}

/** ValidateNetworkPolicyPeer: exactly one kind of peer; ipBlock stands alone. */
function validatePeer(p: Obj, f: string, opts: Options): FieldError[] {
  const errs: FieldError[] = []
  let peers = 0
  if (isObj(p.podSelector)) { peers++; errs.push(...validateLabelSelector(p.podSelector, `${f}.podSelector`, opts)) }
  if (isObj(p.namespaceSelector)) { peers++; errs.push(...validateLabelSelector(p.namespaceSelector, `${f}.namespaceSelector`, opts)) }
  if (isObj(p.ipBlock)) { peers++; errs.push(...validateIPBlock(p.ipBlock, `${f}.ipBlock`)) }
  if (peers === 0) errs.push(fieldRequired(f, 'must specify a peer'))
  else if (peers > 1 && isObj(p.ipBlock)) errs.push(fieldForbidden(f, 'may not specify both ipBlock and another peer'))
  return errs
}

/** ValidateNetworkPolicySpec. */
function validateNetworkPolicy(o: Obj, opts: Options): FieldError[] {
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  const errs = validateLabelSelector(spec.podSelector, 'spec.podSelector', opts)
  for (const [dir, peersKey] of [['ingress', 'from'], ['egress', 'to']] as const) {
    const rules: unknown[] = Array.isArray(spec[dir]) ? spec[dir] : []
    rules.forEach((r, i) => {
      if (!isObj(r)) return
      const f = `spec.${dir}[${i}]`
      if (Array.isArray(r.ports)) r.ports.forEach((p: unknown, j: number) => { if (isObj(p)) errs.push(...validatePort(p, `${f}.ports[${j}]`)) })
      if (Array.isArray(r[peersKey])) r[peersKey].forEach((p: unknown, j: number) => errs.push(...validatePeer(isObj(p) ? p : {}, `${f}.${peersKey}[${j}]`, opts)))
    })
  }
  const types: unknown[] = Array.isArray(spec.policyTypes) ? spec.policyTypes : []
  if (types.length > 2) {
    errs.push(fieldInvalid('spec.policyTypes', goStringSlice('networking.PolicyType', types), 'may not specify more than two policyTypes'))
    return errs
  }
  types.forEach((t, i) => { if (t !== 'Ingress' && t !== 'Egress') errs.push(fieldNotSupported(`spec.policyTypes[${i}]`, t, ['Ingress', 'Egress'])) })
  return errs
}

export default defineResource({
  group: 'networking.orch.io', version: 'v1', kind: 'NetworkPolicy', resource: 'networkpolicies', singular: 'networkpolicy', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['netpol'],
  schemaRef: 'io.orch.api.networking.v1.NetworkPolicy',
  strategy: {
    default: defaultNetworkPolicy,
    validate: (o) => validateNetworkPolicy(o, { allowInvalidLabelValue: false }),
    // An update may keep invalid label values in selectors when the stored pod selector already had them
    // (upstream ValidationOptionsForNetworking).
    validateUpdate: (o, old) => validateNetworkPolicy(o, { allowInvalidLabelValue: validateLabelSelector(old.spec?.podSelector, 'spec.podSelector').length > 0 }),
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
    hasGeneration: true,
  },
  table: [
    nameColumn(),
    { name: 'Pod-Selector', type: 'string', description: 'The pods the policy applies to.', cell: (o) => formatLabelSelector(o.spec?.podSelector) },
    ageColumn(),
  ],
})
