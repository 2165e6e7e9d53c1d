// EndpointSlice (discovery.orch.io/v1).
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj } from '../../define.js'
import { ageColumn, listWithMore, nameColumn } from '../_printers.js'
import { fieldDuplicate, fieldInvalid, fieldNotSupported, fieldRequired, fieldTooMany } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { dns1123Label, dns1123Subdomain, fullyQualifiedDomainName, isIPv4Bytes, labelValue, nonSpecialIPErrors, parseIPSloppy, qualifiedName, validateLabels } from '../../../machinery/validation.js'

function list(v: unknown): Obj[] { return Array.isArray(v) ? v : [] }
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)
const str = (v: unknown): string => (typeof v === 'string' ? v : '')

const ADDRESS_TYPES = ['FQDN', 'IPv4', 'IPv6']
const PROTOCOLS = ['SCTP', 'TCP', 'UDP']
const MAX_ENDPOINTS = 1000
const MAX_ADDRESSES = 100
const MAX_PORTS = 20000
const MAX_TOPOLOGY_LABELS = 16
const MAX_ZONE_HINTS = 8
/** The zone label the v1beta1 conversion moves out of the topology map (upstream topology.kubernetes.io/zone). */
const ZONE_LABEL = 'topology.orch.io/zone'

function addressErrors(type: string, v: string, field: string): FieldError[] {
  switch (type) {
    case 'IPv4': case 'IPv6': {
      const ip = parseIPSloppy(v)
      const ok = ip !== undefined && (type === 'IPv4') === isIPv4Bytes(ip)
      return [...(ok ? [] : [fieldInvalid(field, v, `must be a valid ${type} address`)]), ...nonSpecialIPErrors(field, v)]
    }
    case 'FQDN': return fullyQualifiedDomainName(field, v)
    default: return []
  }
}

function endpointErrors(e: Obj, type: string, p: string): FieldError[] {
  const errs: FieldError[] = []
  const addrs = Array.isArray(e.addresses) ? e.addresses : []
  if (addrs.length === 0) errs.push(fieldRequired(`${p}.addresses`, 'must contain at least 1 address'))
  else if (addrs.length > MAX_ADDRESSES) errs.push(fieldTooMany(`${p}.addresses`, addrs.length, MAX_ADDRESSES))
  addrs.forEach((a: unknown, i: number) => errs.push(...addressErrors(type, str(a), `${p}.addresses[${i}]`)))
  if (typeof e.nodeName === 'string') for (const d of dns1123Subdomain(e.nodeName)) errs.push(fieldInvalid(`${p}.nodeName`, e.nodeName, d))
  const topo = e.deprecatedTopology
  if (isObj(topo)) {
    const n = Object.keys(topo).length
    if (n > MAX_TOPOLOGY_LABELS) errs.push(fieldTooMany(`${p}.deprecatedTopology`, n, MAX_TOPOLOGY_LABELS))
    errs.push(...validateLabels(topo, `${p}.deprecatedTopology`))
    if (ZONE_LABEL in topo) errs.push({ type: 'InternalError', field: `${p}.deprecatedTopology[${ZONE_LABEL}]`, detail: 'reserved key was not removed in conversion' })
  }
  if (typeof e.hostname === 'string') for (const d of dns1123Label(e.hostname)) errs.push(fieldInvalid(`${p}.hostname`, e.hostname, d))
  if (isObj(e.hints)) {
    const zones = Array.isArray(e.hints.forZones) ? e.hints.forZones : []
    const zp = `${p}.hints.forZones`
    if (zones.length > MAX_ZONE_HINTS) errs.push(fieldTooMany(zp, zones.length, MAX_ZONE_HINTS))
    else {
      const seen = new Set<string>()
      zones.forEach((z: unknown, i: number) => {
        const name = isObj(z) ? str(z.name) : ''
        const f = `${zp}[${i}].name`
        if (seen.has(name)) errs.push(fieldDuplicate(f, name))
        else seen.add(name)
        for (const d of labelValue(name)) errs.push(fieldInvalid(f, name, d))
      })
    }
  }
  return errs
}

/** upstream ValidateEndpointSlice: the address type, each endpoint and its addresses of that type, and the ports. */
function validateEndpointSlice(o: Obj): FieldError[] {
  const errs: FieldError[] = []
  const type = str(o.addressType)
  if (type === '') errs.push(fieldRequired('addressType'))
  else if (!ADDRESS_TYPES.includes(type)) errs.push(fieldNotSupported('addressType', type, ADDRESS_TYPES))
  const endpoints = Array.isArray(o.endpoints) ? o.endpoints : []
  if (endpoints.length > MAX_ENDPOINTS) errs.push(fieldTooMany('endpoints', endpoints.length, MAX_ENDPOINTS))
  else endpoints.forEach((e: unknown, i: number) => errs.push(...endpointErrors(isObj(e) ? e : {}, type, `endpoints[${i}]`)))
  const ports = Array.isArray(o.ports) ? o.ports : []
  if (ports.length > MAX_PORTS) errs.push(fieldTooMany('ports', ports.length, MAX_PORTS))
  else {
    const names = new Set<string>()
    ports.forEach((x: unknown, i: number) => {
      const port = isObj(x) ? x : {}
      const p = `ports[${i}]`
      const name = str(port.name)
      if (name !== '') for (const d of dns1123Label(name)) errs.push(fieldInvalid(`${p}.name`, name, d))
      if (names.has(name)) errs.push(fieldDuplicate(`${p}.name`, name))
      else names.add(name)
      if (port.protocol === undefined || port.protocol === null) errs.push(fieldRequired(`${p}.protocol`))
      else if (!PROTOCOLS.includes(port.protocol)) errs.push(fieldNotSupported(`${p}.protocol`, port.protocol, PROTOCOLS))
      if (typeof port.appProtocol === 'string') for (const d of qualifiedName(port.appProtocol)) errs.push(fieldInvalid(`${p}.appProtocol`, port.appProtocol, d))
    })
  }
  return errs
}

function validateEndpointSliceUpdate(o: Obj, old: Obj): FieldError[] {
  const errs = validateEndpointSlice(o)
  if (o.addressType !== old.addressType) errs.push(fieldInvalid('addressType', o.addressType ?? '', 'field is immutable'))
  return errs
}

export default defineResource({
  group: 'discovery.orch.io', version: 'v1', kind: 'EndpointSlice', resource: 'endpointslices', singular: 'endpointslice', scope: 'Namespaced',
  verbs: ALL_VERBS,
  schemaRef: 'io.orch.api.discovery.v1.EndpointSlice',
  // addressType has no omitempty upstream.
  zeroValues: { addressType: '' },
  strategy: {
    // SetDefaults_EndpointPort: name '' and protocol TCP.
    default: (o) => {
      if (!Array.isArray(o.ports)) return
      for (const p of o.ports) if (p !== null && typeof p === 'object') { p.name ??= ''; p.protocol ??= 'TCP' }
    },
    validate: validateEndpointSlice,
    validateUpdate: validateEndpointSliceUpdate,
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
  },
  table: [
    nameColumn(),
    { name: 'AddressType', type: 'string', description: 'The kind of the addresses: IPv4, IPv6 or FQDN.', cell: (o) => o.addressType ?? '' },
    {
      name: 'Ports', type: 'string', description: 'The ports of the slice (number, else name, else *).',
      cell: (o) => listWithMore(list(o.ports).map((p) => (p?.port != null ? String(p.port) : p?.name != null ? String(p.name) : '*'))),
    },
    {
      name: 'Endpoints', type: 'string', description: 'The addresses of the endpoints.',
      cell: (o) => listWithMore(list(o.endpoints).flatMap((e) => (Array.isArray(e?.addresses) ? e.addresses.map(String) : []))),
    },
    ageColumn(),
  ],
})
