// Ingress (networking.orch.io/v1).
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldInvalid, fieldInvalidPrinted, fieldNotSupported, fieldRequired } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { dns1035Label, dns1123Subdomain, isIP, kindAndNameErrors, portName, portNumber, wildcardSubdomain } from '../../../machinery/validation.js'
import { ageColumn, brandedAnnotation, nameColumn } from '../_printers.js'

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }
function list(v: unknown): unknown[] { return Array.isArray(v) ? v : [] }
const str = (v: unknown): string => (typeof v === 'string' ? v : '')

const PATH_TYPES = ['Exact', 'ImplementationSpecific', 'Prefix']
const BAD_SEQUENCES = ['//', '/./', '/../', '%2f', '%2F']
const BAD_SUFFIXES = ['/..', '/.']

/** A host: a subdomain, or `*.` and a subdomain; never an IP address. */
function hostErrors(field: string, host: string, rejectIP: boolean): FieldError[] {
  const errs: FieldError[] = []
  if (rejectIP && isIP(host)) errs.push(fieldInvalid(field, host, 'must be a DNS name, not an IP address'))
  const problems = host.includes('*') ? wildcardSubdomain(host) : dns1123Subdomain(host)
  for (const d of problems) errs.push(fieldInvalid(field, host, d))
  return errs
}

/** An apiGroup/kind/name reference (a resource backend, or IngressClass parameters). */
export function typedReferenceErrors(ref: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  if (typeof ref.apiGroup === 'string') for (const d of dns1123Subdomain(ref.apiGroup)) errs.push(fieldInvalid(`${path}.apiGroup`, ref.apiGroup, d))
  errs.push(...kindAndNameErrors(ref, path))
  return errs
}

/** Exactly one of service and resource; a service has a DNS-1035 name and a port name or number. */
function backendErrors(b: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  const hasResource = b.resource !== undefined && b.resource !== null
  const hasService = b.service !== undefined && b.service !== null
  if (hasResource && hasService) return [fieldInvalid(path, '', 'cannot set both resource and service backends')]
  if (hasResource) return typedReferenceErrors(isObj(b.resource) ? b.resource : {}, `${path}.resource`)
  if (!hasService) return [fieldInvalid(path, '', 'resource or service backend is required')]
  const svc: Obj = isObj(b.service) ? b.service : {}
  const name = str(svc.name)
  if (name === '') errs.push(fieldRequired(`${path}.service.name`))
  else for (const d of dns1035Label(name)) errs.push(fieldInvalid(`${path}.service.name`, name, d))
  const port: Obj = isObj(svc.port) ? svc.port : {}
  const portName_ = str(port.name)
  const portNum = port.number ?? 0
  if (portName_ !== '' && portNum !== 0) errs.push(fieldInvalid(path, '', 'cannot set both port name & port number'))
  else if (portName_ !== '') for (const d of portName(portName_)) errs.push(fieldInvalid(`${path}.service.port.name`, portName_, d))
  else if (portNum !== 0) for (const d of portNumber(portNum)) errs.push(fieldInvalid(`${path}.service.port.number`, portNum, d))
  else errs.push(fieldRequired(path, 'port name or number is required'))
  return errs
}

function httpPathErrors(p: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  const pt = p.pathType
  if (pt === undefined || pt === null) return [fieldRequired(`${path}.pathType`, 'pathType must be specified')]
  const value = str(p.path)
  if (pt === 'Exact' || pt === 'Prefix') {
    if (!value.startsWith('/')) errs.push(fieldInvalid(`${path}.path`, value, 'must be an absolute path'))
    if (value.length > 0) {
      for (const seq of BAD_SEQUENCES) if (value.includes(seq)) errs.push(fieldInvalid(`${path}.path`, value, `must not contain '${seq}'`))
      for (const suf of BAD_SUFFIXES) if (value.endsWith(suf)) errs.push(fieldInvalid(`${path}.path`, value, `cannot end with '${suf}'`))
    }
  } else if (pt === 'ImplementationSpecific') {
    if (value.length > 0 && !value.startsWith('/')) errs.push(fieldInvalid(`${path}.path`, value, 'must be an absolute path'))
  } else {
    errs.push(fieldNotSupported(`${path}.pathType`, pt, PATH_TYPES))
  }
  errs.push(...backendErrors(isObj(p.backend) ? p.backend : {}, `${path}.backend`))
  return errs
}

/** upstream ValidateIngressSpec (create and update alike; the leniency for stored invalid data is not needed here). */
function validateIngress(o: Obj, create: boolean): FieldError[] {
  const errs: FieldError[] = []
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  const rules = list(spec.rules)
  const hasDefault = spec.defaultBackend !== undefined && spec.defaultBackend !== null
  if (rules.length === 0 && !hasDefault) {
    errs.push(fieldInvalidPrinted('spec', Array.isArray(spec.rules) ? '[]networking.IngressRule{}' : '[]networking.IngressRule(nil)', 'either `defaultBackend` or `rules` must be specified'))
  }
  if (hasDefault) errs.push(...backendErrors(isObj(spec.defaultBackend) ? spec.defaultBackend : {}, 'spec.defaultBackend'))
  rules.forEach((r, i) => {
    const rule: Obj = isObj(r) ? r : {}
    const host = str(rule.host)
    if (host !== '') errs.push(...hostErrors(`spec.rules[${i}].host`, host, true))
    if (!isObj(rule.http)) return
    const paths = list(rule.http.paths)
    if (paths.length === 0) errs.push(fieldRequired(`spec.rules[${i}].http.paths`))
    paths.forEach((p, j) => errs.push(...httpPathErrors(isObj(p) ? p : {}, `spec.rules[${i}].http.paths[${j}]`)))
  })
  list(spec.tls).forEach((t, i) => {
    const tls: Obj = isObj(t) ? t : {}
    list(tls.hosts).forEach((h, j) => errs.push(...hostErrors(`spec.tls[${i}].hosts[${j}]`, str(h), false)))
    const secret = str(tls.secretName)
    if (secret !== '') for (const d of dns1123Subdomain(secret)) errs.push(fieldInvalid(`spec.tls[${i}].secretName`, secret, d))
  })
  if (typeof spec.ingressClassName === 'string') {
    for (const d of dns1123Subdomain(spec.ingressClassName)) errs.push(fieldInvalid('spec.ingressClassName', spec.ingressClassName, d))
  }
  if (create) {
    // The class annotation (upstream kubernetes.io/ingress.class) must agree with ingressClassName.
    const ann = brandedAnnotation(o, 'orch.io/ingress.class')
    if (ann !== undefined && typeof spec.ingressClassName === 'string' && ann !== spec.ingressClassName) {
      const key = typeof o.metadata?.annotations?.['orch.io/ingress.class'] === 'string' ? 'orch.io/ingress.class' : 'kubernetes.io/ingress.class'
      errs.push(fieldInvalid(`annotations.${key}`, ann, 'must match `ingressClassName` when both are specified'))
    }
  }
  return errs
}

/** The hosts of the first three rules that name one, `+ N more...` past three rules; `*` when none names a host. */
function hosts(o: Obj): string {
  const rules: Obj[] = Array.isArray(o.spec?.rules) ? o.spec.rules : []
  const max = 3
  const list: string[] = []
  let more = false
  for (const r of rules) {
    if (list.length === max) more = true
    if (!more && typeof r?.host === 'string' && r.host !== '') list.push(r.host)
  }
  if (list.length === 0) return '*'
  return more ? `${list.join(',')} + ${rules.length - max} more...` : list.join(',')
}

/** The load balancer's IPs (or host names where no IP is given), each once, sorted. */
function address(o: Obj): string {
  const ingress: Obj[] = Array.isArray(o.status?.loadBalancer?.ingress) ? o.status.loadBalancer.ingress : []
  const set = new Set<string>()
  for (const i of ingress) {
    if (typeof i?.ip === 'string' && i.ip !== '') set.add(i.ip)
    else if (typeof i?.hostname === 'string' && i.hostname !== '') set.add(i.hostname)
  }
  return [...set].sort().join(',')
}

export default defineResource({
  group: 'networking.orch.io', version: 'v1', kind: 'Ingress', resource: 'ingresses', singular: 'ingress', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['ing'],
  subresources: ['status'],
  schemaRef: 'io.orch.api.networking.v1.Ingress',
  // value structs upstream.
  zeroValues: { spec: {}, status: { loadBalancer: {} } },
  strategy: {
    ...statusSplit.strategy,
    validate: (o) => validateIngress(o, true),
    validateUpdate: (o) => validateIngress(o, false),
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
    hasGeneration: true,
  },
  status: statusSplit.status,
  table: [
    nameColumn(),
    { name: 'Class', type: 'string', description: 'The IngressClass that handles this ingress.', cell: (o) => (typeof o.spec?.ingressClassName === 'string' ? o.spec.ingressClassName : '<none>') },
    { name: 'Hosts', type: 'string', description: 'Host names the rules match.', cell: (o) => hosts(o) },
    { name: 'Address', type: 'string', description: 'Where the load balancer receives the traffic.', cell: (o) => address(o) },
    { name: 'Ports', type: 'string', description: 'Ports served: 80, and 443 when TLS is configured.', cell: (o) => (Array.isArray(o.spec?.tls) && o.spec.tls.length > 0 ? '80, 443' : '80') },
    ageColumn(),
  ],
})
