// EndpointSlice (discovery.orch.io/v1).
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj } from '../../define.js'
import { ageColumn, listWithMore, nameColumn } from '../_printers.js'

function list(v: unknown): Obj[] { return Array.isArray(v) ? v : [] }

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
