// Service (v1). DELETE answers with the deleted object; cluster IP and node port allocation live elsewhere.
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldInvalid, fieldRequired } from '../../../machinery/errors.js'
import { oneOf } from './pods.js'
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

function validateService(o: Obj): FieldError[] {
  const errs: FieldError[] = []
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  const ports: unknown[] = Array.isArray(spec.ports) ? spec.ports : []
  const headless = spec.clusterIP === 'None'
  if (ports.length === 0 && !headless && spec.type !== 'ExternalName') errs.push(fieldRequired('spec.ports'))
  oneOf(errs, 'spec.type', spec.type, ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'])
  oneOf(errs, 'spec.sessionAffinity', spec.sessionAffinity, ['ClientIP', 'None'])
  oneOf(errs, 'spec.externalTrafficPolicy', spec.externalTrafficPolicy, ['Cluster', 'Local'])
  oneOf(errs, 'spec.internalTrafficPolicy', spec.internalTrafficPolicy, ['Cluster', 'Local'])
  ports.forEach((p, i) => {
    const port = isObj(p) ? p : {}
    oneOf(errs, `spec.ports[${i}].protocol`, port.protocol, ['SCTP', 'TCP', 'UDP'])
    if (ports.length > 1 && (typeof port.name !== 'string' || port.name === '')) errs.push(fieldRequired(`spec.ports[${i}].name`))
    const n = port.port ?? 0
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 65535) errs.push(fieldInvalid(`spec.ports[${i}].port`, n, 'must be between 1 and 65535, inclusive'))
  })
  return errs
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
    validate: validateService,
    validateUpdate: (o) => validateService(o),
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
