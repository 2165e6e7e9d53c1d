// The APF configuration controller: creates the mandatory and suggested FlowSchemas and priority levels and keeps them as upstream's config producer does (auto-update annotation, mandatory objects restored), and keeps each FlowSchema's Dangling condition current.
import type { Logger } from 'pino'
import type { Obj } from '../registry/define.js'
import type { InternalClient } from '../server/internal-client.js'
import { FLOWCONTROL_GROUP } from '../registry/resources/flowcontrol.apiserver.orch.io/bootstrap.js'
import { CONFIG_CONSUMER_FIELD_MANAGER, CONFIG_PRODUCER_FIELD_MANAGER, planConfigProducer, statusConditions, type FlowClient } from '../../actors/flow-control/client.js'
import { WorkQueue } from './queue.js'

const BASE = `/apis/${FLOWCONTROL_GROUP}/v1`
const PATHS = { FlowSchema: `${BASE}/flowschemas`, PriorityLevelConfiguration: `${BASE}/prioritylevelconfigurations` } as const
/** Upstream retries the producer every second at first, then every minute forever; changes also trigger a pass here. */
const FIRST_PASS_ATTEMPTS = 30
const RESYNC_MS = 60_000
/**
 * Status writes wait for a quiet moment after the last change of a FlowSchema or level: a client that creates a
 * FlowSchema and updates it right away is not raced by the Dangling condition (a conflict on its update).
 */
const STATUS_DELAY_MS = 2000
const PRODUCE = 'produce'
const STATUS = 'status'

export class ApfController {
  readonly #client: InternalClient
  readonly #flow: FlowClient | null
  readonly #log: Logger
  readonly #queue: WorkQueue
  readonly #unlisten: Array<() => void> = []
  #timer: NodeJS.Timeout | null = null
  #statusTimer: NodeJS.Timeout | null = null
  #stopped = false

  constructor(client: InternalClient, flow: FlowClient | null, log: Logger) {
    this.#client = client
    this.#flow = flow
    this.#log = log
    this.#queue = new WorkQueue((key) => (key === STATUS ? this.#updateStatus() : this.#produce()), (err, key) => log.error({ err, key }, 'APF configuration sync failed'), 1000)
  }

  /** Subscribes to both types, runs the first pass (the server is not ready before it), then keeps watching. */
  async start(): Promise<void> {
    const { registry } = this.#client.pipeline
    for (const resource of ['flowschemas', 'prioritylevelconfigurations']) {
      const def = registry.byGroupResource(FLOWCONTROL_GROUP, resource)
      if (def === undefined) throw new Error(`${resource}.${FLOWCONTROL_GROUP} is not registered`)
      this.#unlisten.push(await this.#client.listen(def, () => this.#changed(), { attrsOnly: true }))
    }
    for (let attempt = 1; ; attempt++) {
      let done = false
      try { done = await this.#sync() } catch (err) { this.#log.warn({ err, attempt }, 'APF configuration pass failed') }
      if (done || this.#stopped) break
      if (attempt >= FIRST_PASS_ATTEMPTS) { this.#log.error('APF configuration not in place yet; retrying in the background'); this.#queue.add(PRODUCE); break }
      await new Promise((r) => setTimeout(r, 1000))
    }
    // The flow-control actor re-reads the store, so the server reports ready with the configuration in force.
    await this.#flow?.sync()
    this.#timer = setInterval(() => { this.#queue.add(PRODUCE); this.#queue.add(STATUS) }, RESYNC_MS)
    this.#timer.unref()
  }

  /** A FlowSchema or level changed: the producer looks at once, the status after a quiet moment. */
  #changed(): void {
    this.#queue.add(PRODUCE)
    if (this.#statusTimer !== null) clearTimeout(this.#statusTimer)
    this.#statusTimer = setTimeout(() => { this.#statusTimer = null; this.#queue.add(STATUS) }, STATUS_DELAY_MS)
    this.#statusTimer.unref()
  }

  stop(): void {
    this.#stopped = true
    if (this.#timer) clearInterval(this.#timer)
    if (this.#statusTimer) clearTimeout(this.#statusTimer)
    this.#queue.stop()
    for (const u of this.#unlisten) u()
    this.#flow?.close()
  }

  /** One pass: the producer's plan, then the status of every FlowSchema. False to be retried. */
  async #sync(): Promise<boolean> {
    if (this.#stopped) return true
    const produced = await this.#produce()
    const status = await this.#updateStatus()
    return produced && status
  }

  async #list(kind: keyof typeof PATHS): Promise<Obj[]> {
    const r = await this.#client.request('GET', PATHS[kind])
    if (r.status !== 200) throw new Error(`list ${kind}: ${r.status} ${r.body.message ?? ''}`)
    return ((r.body.items ?? []) as Obj[]).map((o) => ({ ...o, apiVersion: `${FLOWCONTROL_GROUP}/v1`, kind }))
  }

  async #produce(): Promise<boolean> {
    const plan = planConfigProducer(await this.#list('FlowSchema'), await this.#list('PriorityLevelConfiguration'))
    const query = { fieldManager: CONFIG_PRODUCER_FIELD_MANAGER }
    let ok = true
    for (const o of plan.create) {
      const r = await this.#client.request('POST', PATHS[o.kind as keyof typeof PATHS], o, query)
      if (r.status === 201) this.#log.info({ kind: o.kind, name: o.metadata.name }, 'created APF bootstrap object')
      else if (r.status !== 409) { ok = false; this.#log.warn({ kind: o.kind, name: o.metadata.name, status: r.status, message: r.body.message }, 'could not create APF bootstrap object') }
    }
    for (const o of plan.update) {
      const r = await this.#client.request('PUT', `${PATHS[o.kind as keyof typeof PATHS]}/${o.metadata.name}`, o, query)
      if (r.status === 200) this.#log.info({ kind: o.kind, name: o.metadata.name }, 'updated APF bootstrap object')
      else { ok = false; if (r.status !== 409) this.#log.warn({ kind: o.kind, name: o.metadata.name, status: r.status, message: r.body.message }, 'could not update APF bootstrap object') }
    }
    for (const d of plan.delete) {
      const r = await this.#client.request('DELETE', `${PATHS[d.kind]}/${d.name}`)
      if (r.status === 200 || r.status === 202) this.#log.info({ kind: d.kind, name: d.name }, 'deleted APF object that is no longer a bootstrap object')
      else if (r.status !== 404) { ok = false; this.#log.warn({ kind: d.kind, name: d.name, status: r.status, message: r.body.message }, 'could not delete APF object') }
    }
    return ok
  }

  /** The Dangling condition of every FlowSchema (upstream's config consumer writes it). */
  async #updateStatus(): Promise<boolean> {
    const levels = new Set((await this.#list('PriorityLevelConfiguration')).map((p) => String(p.metadata?.name ?? '')))
    let ok = true
    for (const fs of await this.#list('FlowSchema')) {
      const { conditions, changed } = statusConditions(fs, levels)
      if (!changed) continue
      const o = { ...fs, status: { ...(fs.status ?? {}), conditions } }
      const r = await this.#client.request('PUT', `${PATHS.FlowSchema}/${fs.metadata.name}/status`, o, { fieldManager: CONFIG_CONSUMER_FIELD_MANAGER })
      if (r.status !== 200) { ok = false; if (r.status !== 409 && r.status !== 404) this.#log.warn({ name: fs.metadata.name, status: r.status, message: r.body.message }, 'could not write FlowSchema status') }
    }
    return ok
  }
}
