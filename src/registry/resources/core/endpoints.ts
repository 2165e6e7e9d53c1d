// Endpoints (v1): defaults, upstream's validation of subsets, printers.
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldInvalid, fieldNotSupported, fieldRequired } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { dns1123Label, dns1123Subdomain, legacyIPErrors, nonSpecialIPErrors, portNumber, qualifiedName } from '../../../machinery/validation.js'
import { ageColumn, joinHostPort, nameColumn } from '../_printers.js'

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)
const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])
const str = (v: unknown): string => (typeof v === 'string' ? v : '')
const PROTOCOLS = ['SCTP', 'TCP', 'UDP']

/** upstream validateEndpointAddress: an IP that makes sense as a destination, a DNS-label hostname, a node name. */
function addressErrors(a: Obj, p: string): FieldError[] {
  const errs: FieldError[] = []
  const ip = str(a.ip)
  errs.push(...legacyIPErrors(`${p}.ip`, ip))
  const hostname = str(a.hostname)
  if (hostname !== '') for (const d of dns1123Label(hostname)) errs.push(fieldInvalid(`${p}.hostname`, hostname, d))
  if (typeof a.nodeName === 'string') for (const d of dns1123Subdomain(a.nodeName)) errs.push(fieldInvalid(`${p}.nodeName`, a.nodeName, d))
  // An IP Go cannot read is reported a second time here, as upstream does.
  errs.push(...nonSpecialIPErrors(`${p}.ip`, ip))
  return errs
}

/** upstream validateEndpointPort: a DNS-label name (required when the subset has several ports), number, protocol, appProtocol. */
function portErrors(port: Obj, requireName: boolean, p: string): FieldError[] {
  const errs: FieldError[] = []
  const name = str(port.name)
  if (requireName && name === '') errs.push(fieldRequired(`${p}.name`))
  else if (name !== '') for (const d of dns1123Label(name)) errs.push(fieldInvalid(`${p}.name`, name, d))
  for (const d of portNumber(port.port ?? 0)) errs.push(fieldInvalid(`${p}.port`, port.port ?? 0, d))
  const protocol = str(port.protocol)
  if (protocol === '') errs.push(fieldRequired(`${p}.protocol`))
  else if (!PROTOCOLS.includes(protocol)) errs.push(fieldNotSupported(`${p}.protocol`, protocol, PROTOCOLS))
  if (typeof port.appProtocol === 'string') for (const d of qualifiedName(port.appProtocol)) errs.push(fieldInvalid(`${p}.appProtocol`, port.appProtocol, d))
  return errs
}

/**
 * upstream ValidateEndpoints (create and update alike, nothing is immutable): each subset names at least one
 * address, ready or not, and its addresses and ports are valid. Port names need not be unique upstream.
 */
function validateEndpoints(o: Obj): FieldError[] {
  const errs: FieldError[] = []
  listOf(o.subsets).forEach((x, i) => {
    const ss = isObj(x) ? x : {}
    const p = `subsets[${i}]`
    const addresses = listOf(ss.addresses)
    const notReady = listOf(ss.notReadyAddresses)
    if (addresses.length === 0 && notReady.length === 0) errs.push(fieldRequired(p, 'must specify `addresses` or `notReadyAddresses`'))
    addresses.forEach((a, j) => errs.push(...addressErrors(isObj(a) ? a : {}, `${p}.addresses[${j}]`)))
    notReady.forEach((a, j) => errs.push(...addressErrors(isObj(a) ? a : {}, `${p}.notReadyAddresses[${j}]`)))
    const ports = listOf(ss.ports)
    ports.forEach((x, j) => errs.push(...portErrors(isObj(x) ? x : {}, ports.length > 1, `${p}.ports[${j}]`)))
  })
  return errs
}

/** Up to three `ip:port` (or bare IPs for subsets without ports) and `+ N more...`; `<none>` without subsets. */
function endpointsText(o: Obj): string {
  const subsets: Obj[] = Array.isArray(o.subsets) ? o.subsets : []
  if (subsets.length === 0) return '<none>'
  const max = 3
  const list: string[] = []
  let more = false
  let count = 0
  for (const ss of subsets) {
    const addresses: Obj[] = Array.isArray(ss?.addresses) ? ss.addresses : []
    const ports: Obj[] = Array.isArray(ss?.ports) ? ss.ports : []
    if (ports.length === 0) {
      count += addresses.length
      for (const a of addresses) {
        if (list.length === max) { more = true; break }
        list.push(a?.ip ?? '')
      }
      continue
    }
    for (const p of ports) {
      count += addresses.length
      for (const a of addresses) {
        if (list.length === max) { more = true; break }
        list.push(joinHostPort(a?.ip ?? '', p?.port ?? 0))
      }
    }
  }
  return more ? `${list.join(',')} + ${count - max} more...` : list.join(',')
}

export default defineResource({
  group: '', version: 'v1', kind: 'Endpoints', resource: 'endpoints', singular: 'endpoints', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['ep'],
  schemaRef: 'io.orch.api.core.v1.Endpoints',
  strategy: {
    // SetDefaults_EndpointPort: an empty protocol is TCP.
    default: (o) => {
      if (!Array.isArray(o.subsets)) return
      for (const s of o.subsets) if (s && Array.isArray(s.ports)) for (const p of s.ports) if (isObj(p) && (p.protocol === undefined || p.protocol === null || p.protocol === '')) p.protocol = 'TCP'
    },
    validate: validateEndpoints,
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
  },
  table: [
    nameColumn(),
    { name: 'Endpoints', type: 'string', description: 'The addresses and ports of the endpoints.', cell: (o) => endpointsText(o) },
    ageColumn(),
  ],
})
