// Service (v1): defaults, validation, the type-change rules of updates, printers. DELETE answers with the deleted
// object; cluster IPs and node ports are allocated by the storage stage (src/pipeline/service-allocation.ts).
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldDuplicate, fieldForbidden, fieldInvalid, fieldNotSupported, fieldRequired, goStringSlice } from '../../../machinery/errors.js'
import { dns1123Label, dns1123Subdomain, IP_ADDRESS_MSG, isIPv4Bytes, parseIPSloppy } from '../../../machinery/validation.js'
import { oneOf } from './pod-validation.js'
import type { FieldError } from '../../../machinery/errors.js'
import { ageColumn, formatLabels, nameColumn } from '../_printers.js'

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** SetDefaults_Service. */
function defaultService(o: Obj): void {
  const spec = o.spec
  if (!isObj(spec)) return
  if (spec.sessionAffinity === undefined || spec.sessionAffinity === '') spec.sessionAffinity = 'None'
  if (spec.sessionAffinity === 'None') delete spec.sessionAffinityConfig
  if (spec.sessionAffinity === 'ClientIP') {
    spec.sessionAffinityConfig ??= {}
    if (isObj(spec.sessionAffinityConfig)) {
      spec.sessionAffinityConfig.clientIP ??= {}
      if (isObj(spec.sessionAffinityConfig.clientIP)) spec.sessionAffinityConfig.clientIP.timeoutSeconds ??= 10800
    }
  }
  if (spec.type === undefined || spec.type === '') spec.type = 'ClusterIP'
  if (Array.isArray(spec.ports)) {
    for (const p of spec.ports) {
      if (!isObj(p)) continue
      if (p.protocol === undefined || p.protocol === '') p.protocol = 'TCP'
      if (p.targetPort === undefined || p.targetPort === 0 || p.targetPort === '') p.targetPort = p.port
    }
  }
  const externallyAccessible = spec.type === 'LoadBalancer' || spec.type === 'NodePort' ||
    (spec.type === 'ClusterIP' && Array.isArray(spec.externalIPs) && spec.externalIPs.length > 0)
  if (externallyAccessible && (spec.externalTrafficPolicy === undefined || spec.externalTrafficPolicy === '')) spec.externalTrafficPolicy = 'Cluster'
  if (spec.internalTrafficPolicy === undefined && (spec.type === 'NodePort' || spec.type === 'LoadBalancer' || spec.type === 'ClusterIP')) spec.internalTrafficPolicy = 'Cluster'
  if (spec.type === 'LoadBalancer') spec.allocateLoadBalancerNodePorts ??= true
}

// ---- what a service needs, by type (upstream's pkg/api/service and the service REST's helpers) ----

export function isHeadless(spec: Obj): boolean {
  return Array.isArray(spec.clusterIPs) && spec.clusterIPs.length === 1 && spec.clusterIPs[0] === 'None'
}

/** Every type but ExternalName has a cluster IP (or is headless). */
export function needsClusterIP(spec: Obj): boolean { return spec.type !== 'ExternalName' }

/** NodePort, and LoadBalancer unless allocateLoadBalancerNodePorts is false. */
export function needsNodePort(spec: Obj): boolean {
  return spec.type === 'NodePort' || (spec.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false)
}

/** upstream's NeedsHealthCheck: a LoadBalancer whose externalTrafficPolicy is Local. */
export function needsHealthCheck(spec: Obj): boolean {
  return spec.type === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local'
}

function externallyAccessible(spec: Obj): boolean {
  return spec.type === 'LoadBalancer' || spec.type === 'NodePort' ||
    (spec.type === 'ClusterIP' && Array.isArray(spec.externalIPs) && spec.externalIPs.length > 0)
}

function listOf(v: unknown): any[] { return Array.isArray(v) ? v : [] }

/** The node ports a spec holds (nonzero ones, in port order). */
export function nodePortsOf(spec: Obj): number[] {
  const out: number[] = []
  for (const p of listOf(spec.ports)) if (isObj(p) && typeof p.nodePort === 'number' && p.nodePort !== 0) out.push(p.nodePort)
  return out
}

const isIPv6String = (ip: string): boolean => { const b = parseIPSloppy(ip); return b !== undefined && !isIPv4Bytes(b) }
const ipsValue = (ips: unknown[]) => goStringSlice('string', ips)

/**
 * upstream's ValidateServiceClusterIPsRelatedFields: clusterIP and clusterIPs agree, the IPs are IPs (one of each family
 * at most), ipFamilies and ipFamilyPolicy are known values that match the IPs. Also run before allocation. `oldIPs`:
 * the stored object's clusterIPs, which pass as they are.
 */
export function validateClusterIPsRelatedFields(spec: Obj, oldIPs: unknown[] = []): FieldError[] {
  if (spec.type === 'ExternalName') return []
  const errs: FieldError[] = []
  const ips = listOf(spec.clusterIPs)
  const families = listOf(spec.ipFamilies)
  const clusterIP = typeof spec.clusterIP === 'string' ? spec.clusterIP : ''
  if (clusterIP !== '') {
    if (ips.length === 0) errs.push(fieldRequired('spec.clusterIPs'))
    else if (ips[0] !== clusterIP) errs.push(fieldInvalid('spec.clusterIPs', ipsValue(ips), 'first value must match `clusterIP`'))
  } else if (ips.length !== 0) {
    errs.push(fieldInvalid('spec.clusterIPs', ipsValue(ips), 'must be empty when `clusterIP` is not specified'))
  }
  const seen = new Set<unknown>()
  families.forEach((f, i) => {
    if (f !== 'IPv4' && f !== 'IPv6') errs.push(fieldNotSupported(`spec.ipFamilies[${i}]`, f, ['IPv4', 'IPv6']))
    if (seen.has(f)) errs.push(fieldDuplicate(`spec.ipFamilies[${i}]`, f))
    seen.add(f)
  })
  oneOf(errs, 'spec.ipFamilyPolicy', spec.ipFamilyPolicy, ['PreferDualStack', 'RequireDualStack', 'SingleStack'])
  let badIPs = false
  ips.forEach((ip, i) => {
    if (i === 0 && ip === 'None') {
      if (ips.length > 1) { badIPs = true; errs.push(fieldInvalid('spec.clusterIPs', ipsValue(ips), "'None' must be the first and only value")) }
      return
    }
    if (oldIPs.includes(ip)) return
    if (typeof ip !== 'string' || parseIPSloppy(ip) === undefined) { badIPs = true; errs.push(fieldInvalid(`spec.clusterIPs[${i}]`, ip, IP_ADDRESS_MSG)) }
  })
  if (ips.length > 2) errs.push(fieldInvalid('spec.clusterIPs', ipsValue(ips), 'may only hold up to 2 values'))
  if (badIPs) return errs
  if (ips.length > 1) {
    const v6 = ips.filter((ip) => isIPv6String(ip)).length
    if (v6 === 0 || v6 === ips.length) errs.push(fieldInvalid('spec.clusterIPs', ipsValue(ips), 'may specify no more than one IP for each IP family'))
  }
  if (!isHeadless(spec) && ips.length > 0 && families.length > 0) {
    for (let i = 0; i < ips.length && i < families.length; i++) {
      if (families[i] === 'IPv4' && isIPv6String(ips[i])) errs.push(fieldInvalid(`spec.clusterIPs[${i}]`, ips[i], `expected an IPv4 value as indicated by \`ipFamilies[${i}]\``))
      if (families[i] === 'IPv6' && !isIPv6String(ips[i])) errs.push(fieldInvalid(`spec.clusterIPs[${i}]`, ips[i], `expected an IPv6 value as indicated by \`ipFamilies[${i}]\``))
    }
  }
  return errs
}

/** upstream's validateService (the parts this server checks); `old` on update. */
function validateService(o: Obj, old?: Obj): FieldError[] {
  const errs: FieldError[] = []
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  const ports: unknown[] = listOf(spec.ports)
  const headless = isHeadless(spec)
  if (ports.length === 0 && !headless && spec.type !== 'ExternalName') errs.push(fieldRequired('spec.ports'))
  if (headless && (spec.type === 'LoadBalancer' || spec.type === 'NodePort')) {
    errs.push(fieldInvalid('spec.clusterIPs[0]', 'None', `may not be set to 'None' for ${spec.type} services`))
  }
  if (spec.type === 'ExternalName') {
    if (listOf(spec.clusterIPs).length > 0) errs.push(fieldForbidden('spec.clusterIPs', 'may not be set for ExternalName services'))
    if (listOf(spec.ipFamilies).length > 0) errs.push(fieldForbidden('spec.ipFamilies', 'may not be set for ExternalName services'))
    if (spec.ipFamilyPolicy !== undefined) errs.push(fieldForbidden('spec.ipFamilyPolicy', 'may not be set for ExternalName services'))
    const cname = typeof spec.externalName === 'string' ? spec.externalName.replace(/\.$/, '') : ''
    if (cname === '') errs.push(fieldRequired('spec.externalName'))
    else for (const msg of dns1123Subdomain(cname)) errs.push(fieldInvalid('spec.externalName', cname, msg))
  }
  oneOf(errs, 'spec.type', spec.type, ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'])
  oneOf(errs, 'spec.sessionAffinity', spec.sessionAffinity, ['ClientIP', 'None'])
  const names = new Set<string>()
  ports.forEach((p, i) => {
    const port = isObj(p) ? p : {}
    if (ports.length > 1 && (typeof port.name !== 'string' || port.name === '')) errs.push(fieldRequired(`spec.ports[${i}].name`))
    else if (typeof port.name === 'string' && port.name !== '') {
      for (const msg of dns1123Label(port.name)) errs.push(fieldInvalid(`spec.ports[${i}].name`, port.name, msg))
      if (names.has(port.name)) errs.push(fieldDuplicate(`spec.ports[${i}].name`, port.name))
      names.add(port.name)
    }
    const n = port.port ?? 0
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 65535) errs.push(fieldInvalid(`spec.ports[${i}].port`, n, 'must be between 1 and 65535, inclusive'))
    oneOf(errs, `spec.ports[${i}].protocol`, port.protocol, ['SCTP', 'TCP', 'UDP'])
  })
  errs.push(...validateClusterIPsRelatedFields(spec, old ? listOf(old.spec?.clusterIPs) : []))
  if (spec.type === 'ClusterIP') {
    ports.forEach((p, i) => { if (isObj(p) && typeof p.nodePort === 'number' && p.nodePort !== 0) errs.push(fieldForbidden(`spec.ports[${i}].nodePort`, "may not be used when `type` is 'ClusterIP'")) })
  }
  // Node ports are unique per protocol.
  const nodePorts = new Set<string>()
  ports.forEach((p, i) => {
    if (!isObj(p) || typeof p.nodePort !== 'number' || p.nodePort === 0) return
    const key = `${p.protocol}/${p.nodePort}`
    if (nodePorts.has(key)) errs.push(fieldDuplicate(`spec.ports[${i}].nodePort`, p.nodePort))
    nodePorts.add(key)
  })
  if (spec.allocateLoadBalancerNodePorts !== undefined && spec.type !== 'LoadBalancer') {
    errs.push(fieldForbidden('spec.allocateLoadBalancerNodePorts', "may only be used when `type` is 'LoadBalancer'"))
  }
  // validateServiceExternalTrafficPolicy
  if (!externallyAccessible(spec)) {
    if (spec.externalTrafficPolicy !== undefined && spec.externalTrafficPolicy !== '') errs.push(fieldInvalid('spec.externalTrafficPolicy', spec.externalTrafficPolicy, 'may only be set for externally-accessible services'))
  } else if (spec.externalTrafficPolicy === undefined || spec.externalTrafficPolicy === '') {
    errs.push(fieldRequired('spec.externalTrafficPolicy'))
  } else {
    oneOf(errs, 'spec.externalTrafficPolicy', spec.externalTrafficPolicy, ['Cluster', 'Local'])
  }
  const hc = spec.healthCheckNodePort ?? 0
  if (!needsHealthCheck(spec)) {
    if (hc !== 0) errs.push(fieldInvalid('spec.healthCheckNodePort', hc, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
  } else if (hc === 0) {
    errs.push(fieldRequired('spec.healthCheckNodePort'))
  } else if (typeof hc !== 'number' || hc < 1 || hc > 65535) {
    errs.push(fieldInvalid('spec.healthCheckNodePort', hc, 'must be between 1 and 65535, inclusive'))
  }
  oneOf(errs, 'spec.internalTrafficPolicy', spec.internalTrafficPolicy, ['Cluster', 'Local'])
  return errs
}

/** upstream's ValidateServiceUpdate: the cluster IPs and families may not change (but to and from ExternalName), then validateService. */
function validateServiceUpdate(o: Obj, old: Obj): FieldError[] {
  const errs: FieldError[] = []
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  const oldSpec: Obj = isObj(old.spec) ? old.spec : {}
  const ips = listOf(spec.clusterIPs)
  // A service stored with clusterIP only (an older writer) has that as its clusterIPs (upstream's normalization on read).
  const oldIPs = listOf(oldSpec.clusterIPs).length > 0 || !oldSpec.clusterIP ? listOf(oldSpec.clusterIPs) : [oldSpec.clusterIP]
  if (spec.type !== 'ExternalName' && oldSpec.type !== 'ExternalName' && !(isHeadless(spec) && oldIPs.length === 1 && oldIPs[0] === 'None')) {
    if (oldIPs.length === ips.length) {
      oldIPs.forEach((ip, i) => { if (ip !== ips[i]) errs.push(fieldInvalid(`spec.clusterIPs[${i}]`, ipsValue(ips), 'may not change once set')) })
    } else if (oldIPs.length > ips.length) {
      if (ips.length === 0) errs.push(fieldInvalid('spec.clusterIPs[0]', ipsValue(ips), 'primary clusterIP can not be unset'))
      else if (ips[0] !== oldIPs[0]) errs.push(fieldInvalid('spec.clusterIPs[0]', ipsValue(ips), 'may not change once set'))
      if (ips.length === 1 && spec.ipFamilyPolicy !== 'SingleStack') errs.push(fieldInvalid('spec.ipFamilyPolicy', spec.ipFamilyPolicy ?? null, "must be set to 'SingleStack' when releasing the secondary clusterIP"))
    } else if (oldIPs.length > 0 && ips[0] !== oldIPs[0]) {
      errs.push(fieldInvalid('spec.clusterIPs[0]', ipsValue(ips), 'may not change once set'))
    }
  }
  if (needsHealthCheck(spec) && needsHealthCheck(oldSpec) && (spec.healthCheckNodePort ?? 0) !== (oldSpec.healthCheckNodePort ?? 0)) {
    errs.push(fieldForbidden('spec.healthCheckNodePort', 'field is immutable'))
  }
  return [...errs, ...validateService(o, old)]
}

const sameList = (a: unknown, b: unknown): boolean => JSON.stringify(listOf(a)) === JSON.stringify(listOf(b))

/**
 * upstream's PrepareForUpdate: the stored status, and dropTypeDependentFields: a type change that no longer needs a
 * field clears it when the client left it as it was (what the allocation gave back; a changed value is left for
 * validation to refuse). A type but LoadBalancer has no load-balancer status.
 */
function prepareServiceUpdate(o: Obj, old: Obj): void {
  if (old.status === undefined) delete o.status
  else o.status = old.status
  const spec = o.spec
  const oldSpec = old.spec
  if (!isObj(spec) || !isObj(oldSpec)) return
  if (needsClusterIP(oldSpec) && !needsClusterIP(spec)) {
    if (sameList(spec.clusterIPs, oldSpec.clusterIPs)) { delete spec.clusterIP; delete spec.clusterIPs }
    if (sameList(spec.ipFamilies, oldSpec.ipFamilies)) delete spec.ipFamilies
    if (spec.ipFamilyPolicy === oldSpec.ipFamilyPolicy) delete spec.ipFamilyPolicy
  }
  if (needsNodePort(oldSpec) && !needsNodePort(spec) && sameList(nodePortsOfAll(spec), nodePortsOfAll(oldSpec))) {
    for (const p of listOf(spec.ports)) if (isObj(p)) delete p.nodePort
  }
  if (needsHealthCheck(oldSpec) && !needsHealthCheck(spec) && spec.healthCheckNodePort === oldSpec.healthCheckNodePort) delete spec.healthCheckNodePort
  if (oldSpec.type === 'LoadBalancer' && spec.type !== 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== undefined &&
    spec.allocateLoadBalancerNodePorts === oldSpec.allocateLoadBalancerNodePorts) delete spec.allocateLoadBalancerNodePorts
  if (oldSpec.type === 'LoadBalancer' && spec.type !== 'LoadBalancer' && spec.loadBalancerClass === oldSpec.loadBalancerClass) delete spec.loadBalancerClass
  if (externallyAccessible(oldSpec) && !externallyAccessible(spec) && spec.externalTrafficPolicy === oldSpec.externalTrafficPolicy) delete spec.externalTrafficPolicy
  if (spec.type !== 'LoadBalancer' && isObj(o.status)) o.status = { ...o.status, loadBalancer: {} }
}

/** Each port's node port, 0 where none (upstream's sameNodePorts compares them port by port). */
function nodePortsOfAll(spec: Obj): number[] {
  return listOf(spec.ports).map((p) => (isObj(p) && typeof p.nodePort === 'number' ? p.nodePort : 0))
}

function externalIP(o: Obj): string {
  const spec: Obj = o.spec ?? {}
  const ext: string[] = Array.isArray(spec.externalIPs) ? spec.externalIPs : []
  switch (spec.type) {
    case 'ClusterIP':
    case 'NodePort':
      return ext.length > 0 ? ext.join(',') : '<none>'
    case 'LoadBalancer': {
      const ingress: Obj[] = Array.isArray(o.status?.loadBalancer?.ingress) ? o.status.loadBalancer.ingress : []
      const lb = [...new Set(ingress.map((i) => (i?.ip ? i.ip : i?.hostname ? i.hostname : '')).filter((s) => s !== ''))].sort()
      if (ext.length > 0) return [...lb, ...ext].join(',')
      return lb.length > 0 ? lb.join(',') : '<pending>'
    }
    case 'ExternalName':
      return spec.externalName ?? ''
  }
  return '<unknown>'
}

function portString(o: Obj): string {
  const ports: Obj[] = Array.isArray(o.spec?.ports) ? o.spec.ports : []
  const s = ports.map((p) => (p?.nodePort > 0 ? `${p.port ?? 0}:${p.nodePort}/${p.protocol ?? ''}` : `${p?.port ?? 0}/${p?.protocol ?? ''}`)).join(',')
  return s === '' ? '<none>' : s
}

export default defineResource({
  group: '', version: 'v1', kind: 'Service', resource: 'services', singular: 'service', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['svc'],
  categories: ['all'],
  subresources: ['status'],
  // Listed for clients; answered by src/pipeline/connect.ts (this server proxies to no node or pod).
  virtualSubresources: [{ name: 'proxy', group: '', version: 'v1', kind: 'ServiceProxyOptions', verbs: ['create', 'delete', 'get', 'patch', 'update'] }],
  schemaRef: 'io.orch.api.core.v1.Service',
  // value structs upstream.
  zeroValues: { spec: {}, status: { loadBalancer: {} } },
  strategy: {
    ...statusSplit.strategy,
    default: defaultService,
    prepareForUpdate: prepareServiceUpdate,
    validate: (o) => validateService(o),
    validateUpdate: validateServiceUpdate,
    allowUnconditionalUpdate: true,
    returnDeletedObject: true,
    nameRule: 'label',
  },
  status: statusSplit.status,
  table: [
    nameColumn(),
    { name: 'Type', type: 'string', description: 'type determines how the Service is exposed.', cell: (o) => o.spec?.type ?? '' },
    {
      name: 'Cluster-IP', type: 'string', description: 'clusterIP is the IP address of the service and is usually assigned randomly.',
      cell: (o) => (Array.isArray(o.spec?.clusterIPs) && o.spec.clusterIPs.length > 0 ? o.spec.clusterIPs[0] : o.spec?.clusterIP || '<none>'),
    },
    { name: 'External-IP', type: 'string', description: 'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.', cell: (o) => externalIP(o) },
    { name: 'Port(s)', type: 'string', description: 'The list of ports that are exposed by this service.', cell: (o) => portString(o) },
    ageColumn(),
    { name: 'Selector', type: 'string', priority: 1, description: 'Route service traffic to pods with label keys and values matching this selector.', cell: (o) => formatLabels(o.spec?.selector) },
  ],
  // upstream's selectable fields of services (a service stored by an earlier build has no value for them until written)
  fieldSelectors: {
    'spec.clusterIP': (o) => (typeof o.spec?.clusterIP === 'string' ? o.spec.clusterIP : ''),
    'spec.type': (o) => (typeof o.spec?.type === 'string' ? o.spec.type : ''),
  },
})
