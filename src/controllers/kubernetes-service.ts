// The API server's own Service, default/kubernetes (the service range's first address, port 443 "https" to this
// server's port), with its Endpoints and EndpointSlice pointing at the server's advertised address; made at start and
// put back when deleted or changed (upstream's kubernetes-service controller and endpoint reconciler).
import os from 'node:os'
import type { Logger } from 'pino'
import type { Obj } from '../registry/define.js'
import type { InternalClient } from '../server/internal-client.js'
import { ipv4Number } from '../machinery/service-ranges.js'
import { QueueController } from './queue.js'

/** What in-cluster clients look up (KUBERNETES_SERVICE_HOST, kubernetes.default.svc): upstream's name, kept. */
export const API_SERVICE_NAME = 'kubernetes'
const NAMESPACE = 'default'
const SERVICE_LABELS = { component: 'apiserver', provider: 'kubernetes' }
/** upstream's endpointslice.kubernetes.io/skip-mirror and kubernetes.io/service-name, in this brand. */
export const SKIP_MIRROR_LABEL = 'endpointslice.orch.io/skip-mirror'
export const SERVICE_NAME_LABEL = 'orch.io/service-name'

export interface ApiServiceTarget {
  /** The service range's first address. */
  clusterIP: string
  /** The port the service forwards to: the secure port (the plain one when no TLS is served). */
  port: number
  /** The address the endpoints name; undefined when there is none to advertise (no endpoints are written then). */
  address: string | undefined
}

/**
 * upstream's advertise address: the bind address, unless it is unspecified or loopback (endpoints may not name a
 * loopback address); then the first IPv4 address of a non-internal interface.
 */
export function advertiseAddress(bindAddress: string): string | undefined {
  const n = ipv4Number(bindAddress)
  const usable = n !== undefined && n !== 0 && (n >>> 24) !== 127
  if (usable) return bindAddress
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal && !a.address.startsWith('169.254.')) return a.address
  }
  return undefined
}

const KEYS = ['service', 'endpoints', 'endpointslice'] as const
type Key = typeof KEYS[number]

export class KubernetesServiceController extends QueueController {
  readonly #target: ApiServiceTarget

  constructor(client: InternalClient, log: Logger, target: ApiServiceTarget) {
    super(client, log, 'object', 1000)
    this.#target = target
  }

  protected work(key: string): Promise<boolean> { return this.#sync(key as Key) }

  /** Listens for changes of the three objects, then makes them as they should be (awaited: before the server is ready). */
  async start(): Promise<void> {
    const { registry } = this.client.pipeline
    const watched: Array<[Key, string, string]> = [['service', '', 'services'], ['endpoints', '', 'endpoints'], ['endpointslice', 'discovery.orch.io', 'endpointslices']]
    for (const [key, group, resource] of watched) {
      const own = `${group}/${resource}/${NAMESPACE}/${API_SERVICE_NAME}`
      // Every write of the type passes here (the garbage collector listens to them all anyway): one comparison each.
      this.unlisten.push(await this.client.listen(registry.byGroupResource(group, resource)!, (events) => {
        for (const ev of events) if (ev[1] === own) this.queue.add(key)
      }, { attrsOnly: true }))
    }
    for (const key of KEYS) if (!await this.#sync(key)) this.queue.addAfter(key, 1000)
  }

  async #sync(key: Key): Promise<boolean> {
    if (key === 'service') return this.#syncService()
    if (this.#target.address === undefined) return true
    return key === 'endpoints' ? this.#syncEndpoints() : this.#syncSlice()
  }

  #ports(): Obj[] { return [{ name: 'https', protocol: 'TCP', port: 443, targetPort: this.#target.port }] }

  /** Created when missing; ports and type put back when changed (upstream's reconcile of the master service). */
  async #syncService(): Promise<boolean> {
    const path = `/api/v1/namespaces/${NAMESPACE}/services`
    const cur = await this.client.request('GET', `${path}/${API_SERVICE_NAME}`)
    if (cur.status === 404) {
      const r = await this.client.request('POST', path, {
        apiVersion: 'v1', kind: 'Service',
        metadata: { name: API_SERVICE_NAME, labels: SERVICE_LABELS },
        spec: { type: 'ClusterIP', clusterIP: this.#target.clusterIP, ports: this.#ports(), sessionAffinity: 'None' },
      })
      return this.#done('service', r.status, r.body, 201)
    }
    if (cur.status !== 200) return this.#done('service', cur.status, cur.body, 200)
    const svc = cur.body
    if (svc.metadata?.deletionTimestamp) return true
    const want = this.#ports()
    const have: Obj[] = Array.isArray(svc.spec?.ports) ? svc.spec.ports : []
    const same = svc.spec?.type === 'ClusterIP' && have.length === want.length &&
      have.every((p, i) => p.name === want[i].name && p.port === want[i].port && p.protocol === want[i].protocol && p.targetPort === want[i].targetPort)
    if (same) return true
    svc.spec = { ...svc.spec, type: 'ClusterIP', ports: want }
    if (!svc.spec.clusterIP) { svc.spec.clusterIP = this.#target.clusterIP; delete svc.spec.clusterIPs }
    const r = await this.client.request('PUT', `${path}/${API_SERVICE_NAME}`, svc)
    return this.#done('service', r.status, r.body, 200)
  }

  async #syncEndpoints(): Promise<boolean> {
    const path = `/api/v1/namespaces/${NAMESPACE}/endpoints`
    const subsets = [{ addresses: [{ ip: this.#target.address }], ports: [{ name: 'https', port: this.#target.port, protocol: 'TCP' }] }]
    return this.#ensure('endpoints', path, { apiVersion: 'v1', kind: 'Endpoints' }, SKIP_MIRROR_LABEL, 'true', { subsets })
  }

  async #syncSlice(): Promise<boolean> {
    const path = `/apis/discovery.orch.io/v1/namespaces/${NAMESPACE}/endpointslices`
    return this.#ensure('endpointslice', path, { apiVersion: 'discovery.orch.io/v1', kind: 'EndpointSlice' }, SERVICE_NAME_LABEL, API_SERVICE_NAME, {
      addressType: 'IPv4',
      endpoints: [{ addresses: [this.#target.address], conditions: { ready: true } }],
      ports: [{ name: 'https', protocol: 'TCP', port: this.#target.port }],
    })
  }

  /** Creates the object with `fields` and the label, or writes them back when they differ. */
  async #ensure(key: Key, path: string, type: Obj, label: string, value: string, fields: Obj): Promise<boolean> {
    const cur = await this.client.request('GET', `${path}/${API_SERVICE_NAME}`)
    if (cur.status === 404) {
      const r = await this.client.request('POST', path, { ...type, metadata: { name: API_SERVICE_NAME, labels: { [label]: value } }, ...fields })
      return this.#done(key, r.status, r.body, 201)
    }
    if (cur.status !== 200) return this.#done(key, cur.status, cur.body, 200)
    const o = cur.body
    if (o.metadata?.deletionTimestamp) return true
    const same = o.metadata?.labels?.[label] === value && Object.entries(fields).every(([k, v]) => JSON.stringify(o[k]) === JSON.stringify(v))
    if (same) return true
    o.metadata.labels = { ...(o.metadata.labels ?? {}), [label]: value }
    const r = await this.client.request('PUT', `${path}/${API_SERVICE_NAME}`, { ...o, ...fields })
    return this.#done(key, r.status, r.body, 200)
  }

  #done(key: Key, status: number, body: Obj, ok: number): boolean {
    if (status === ok) return true
    // Made or changed meanwhile: look again.
    if (status === 409) { this.queue.add(key); return true }
    this.log.warn({ object: key, status, message: body.message }, `could not reconcile ${NAMESPACE}/${API_SERVICE_NAME}`)
    return false
  }
}
