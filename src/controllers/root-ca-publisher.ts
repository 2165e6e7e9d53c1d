// The root CA publisher: every active namespace has the ConfigMap orch-root-ca.crt holding the cluster CA (ca.crt), put back when changed or deleted.
import type { Logger } from 'pino'
import { typePrefix } from '../machinery/storage-format.js'
import { ROOT_CA_CONFIGMAP } from '../machinery/node-refs.js'
import type { Obj } from '../registry/define.js'
import type { InternalClient } from '../server/internal-client.js'
import { QueueController } from './queue.js'

export const ROOT_CA_DESCRIPTION_ANNOTATION = 'orch.io/description'
const DESCRIPTION = 'The CA bundle that verifies the serving certificate of this cluster\'s API server, for clients inside the cluster. No other use is promised.'

export class RootCaPublisher extends QueueController {
  readonly #caPem: string

  constructor(client: InternalClient, log: Logger, caPem: string) {
    super(client, log, 'namespace', 1000)
    this.#caPem = caPem
  }

  protected work(ns: string): Promise<boolean> { return this.#sync(ns) }

  async start(): Promise<void> {
    const cmDef = this.client.pipeline.registry.byGroupResource('', 'configmaps')!
    const cmPrefix = typePrefix('', 'configmaps').length
    const suffix = `/${ROOT_CA_CONFIGMAP}`
    // Every ConfigMap write passes here: only the name is looked at.
    this.unlisten.push(await this.client.listen(cmDef, (events) => {
      for (const [type, key] of events) {
        if (type === 'ADDED' || !key.endsWith(suffix)) continue
        this.queue.add(key.slice(cmPrefix, key.length - suffix.length))
      }
    }, { attrsOnly: true }))
    await this.queueActiveNamespaces()
  }

  /** Creates the ConfigMap, or puts back its data and description; true when done, false to be retried. */
  async #sync(ns: string): Promise<boolean> {
    if (!this.namespaceActive(ns)) return true
    const def = this.client.pipeline.registry.byGroupResource('', 'configmaps')!
    const cur = await this.client.request('GET', this.client.path(def, ns, ROOT_CA_CONFIGMAP))
    if (cur.status === 404) {
      const r = await this.client.request('POST', this.client.path(def, ns), {
        apiVersion: 'v1', kind: 'ConfigMap',
        metadata: { name: ROOT_CA_CONFIGMAP, annotations: { [ROOT_CA_DESCRIPTION_ANNOTATION]: DESCRIPTION } },
        data: { 'ca.crt': this.#caPem },
      })
      return this.#done(ns, r.status, r.body, 201)
    }
    if (cur.status !== 200) return this.#done(ns, cur.status, cur.body, 200)
    const cm = cur.body
    if (cm.metadata?.deletionTimestamp) return true
    const data = cm.data as Record<string, string> | undefined
    const sameData = data !== undefined && Object.keys(data).length === 1 && data['ca.crt'] === this.#caPem
    if (sameData && cm.metadata?.annotations?.[ROOT_CA_DESCRIPTION_ANNOTATION]) return true
    cm.data = { 'ca.crt': this.#caPem }
    cm.metadata.annotations = { ...(cm.metadata.annotations ?? {}), [ROOT_CA_DESCRIPTION_ANNOTATION]: DESCRIPTION }
    const r = await this.client.request('PUT', this.client.path(def, ns, ROOT_CA_CONFIGMAP), cm)
    if (r.status === 409) return false
    return this.#done(ns, r.status, r.body, 200)
  }

  #done(ns: string, status: number, body: Obj, ok: number): boolean {
    // 409 on create: made meanwhile, so look at its content again; 403/404: the namespace is terminating or gone.
    if (status === ok || status === 403 || status === 404) return true
    if (status === 409) { this.queue.add(ns); return true }
    this.log.warn({ namespace: ns, status, message: body.message }, `could not publish ${ROOT_CA_CONFIGMAP}`)
    return false
  }
}
