// Ingress (networking.orch.io/v1).
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'
import { ageColumn, nameColumn } from '../_printers.js'

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
  strategy: { ...statusSplit.strategy, allowUnconditionalUpdate: true, nameRule: 'subdomain', hasGeneration: true },
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
