// Endpoints (v1).
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj } from '../../define.js'
import { ageColumn, joinHostPort, nameColumn } from '../_printers.js'

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
    // SetDefaults_EndpointPort
    default: (o) => {
      if (!Array.isArray(o.subsets)) return
      for (const s of o.subsets) if (s && Array.isArray(s.ports)) for (const p of s.ports) if (p && typeof p === 'object') p.protocol ??= 'TCP'
    },
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
  },
  table: [
    nameColumn(),
    { name: 'Endpoints', type: 'string', description: 'The addresses and ports of the endpoints.', cell: (o) => endpointsText(o) },
    ageColumn(),
  ],
})
