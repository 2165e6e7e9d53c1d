// The main thread's in-process client: requests through the same pipeline as HTTP, as the privileged loopback user.
import type { Logger } from 'pino'
import { RequestContext } from '../pipeline/context.js'
import { handle } from '../pipeline/index.js'
import { ApiError } from '../machinery/errors.js'
import type { Obj, ResolvedDefinition } from '../registry/define.js'
import type { WatchEvent } from '../../actors/shard/messages.js'
import { parseRequestInfo } from './request-info.js'
import { setupPipeline, type Pipeline, type ThreadData } from './setup.js'
import { listenType } from './watch.js'

export interface InternalData extends ThreadData { loopbackToken: string }

export interface InternalResult { status: number; body: Obj }

export class InternalClient {
  readonly pipeline: Pipeline
  readonly log: Logger
  #token: string

  constructor(data: InternalData, log: Logger) {
    this.log = log.child({ component: 'internal-client' })
    this.#token = data.loopbackToken
    this.pipeline = setupPipeline(data, this.log, () => () => null)
  }

  /** One request through the whole pipeline; errors come back as Status bodies with their code, as over HTTP. */
  async request(method: string, path: string, body?: Obj, query: Record<string, string> = {}): Promise<InternalResult> {
    const q = new URLSearchParams(query)
    const headers: Record<string, string> = { authorization: `Bearer ${this.#token}`, accept: 'application/json', 'content-type': 'application/json', 'user-agent': 'orch-apiserver/controllers' }
    const ctx = new RequestContext(method, path, q, headers, parseRequestInfo(method, path, q), this.log)
    if (body !== undefined) ctx.body = Buffer.from(JSON.stringify(body))
    try {
      const r = await handle(ctx)
      return { status: r.status, body: JSON.parse(r.body.toString()) as Obj }
    } catch (err) {
      if (err instanceof ApiError) return { status: err.code, body: err.toStatus() }
      throw err
    }
  }

  async bootstrapNamespaces(names: string[]): Promise<void> {
    for (const name of names) {
      const r = await this.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } })
      if (r.status !== 201 && r.status !== 409) throw new Error(`bootstrap of namespace ${name} failed: ${r.status} ${r.body.message}`)
    }
  }

  /** The URL path of a type's collection (optionally in a namespace) or of one object. */
  path(def: ResolvedDefinition, namespace: string, name?: string): string {
    const base = def.group === '' ? `/api/${def.version}` : `/apis/${def.group}/${def.version}`
    const ns = def.scope === 'Namespaced' && namespace !== '' ? `/namespaces/${namespace}` : ''
    return `${base}${ns}/${def.resource}${name !== undefined ? `/${name}` : ''}`
  }

  /** Every event of a type (see `listenType`; `attrsOnly` for listeners that read the records' attributes only). */
  listen(def: ResolvedDefinition, fn: (events: WatchEvent[]) => void, opts: { attrsOnly?: boolean } = {}): Promise<() => void> { return listenType(def, fn, opts) }

  close(): void {
    for (const c of this.pipeline.store.clients) c.close()
    this.pipeline.authz.close()
  }
}
