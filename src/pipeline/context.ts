// RequestContext: everything one request carries through the stages, with the same shape for every request.
// The global `performance` is a lazy getter on every read: the module's binding is read directly.
import { performance } from 'node:perf_hooks'
import type { WebhookConversion } from './crd-convert.js'
import type { Logger } from 'pino'
import type { RequestInfo } from '../server/request-info.js'
import type { ResolvedDefinition } from '../registry/define.js'
import type { Allocation } from './service-allocation.js'
import type { PeerRequest } from '../auth/x509.js'

export interface UserInfo { username: string; uid: string; groups: string[]; extra?: Record<string, string[]> }

/**
 * A response header: name and value as text, or as bytes prepared once by whoever adds it (uWS takes bytes as they
 * are; the stages' fixed headers need no conversion per request).
 */
export type ResponseHeader = [string, string] | [Buffer, Buffer]

export interface Response {
  status: number
  /** The body: bytes or a string ready to send. */
  body: Buffer | string
  contentType: string
  headers: ResponseHeader[]
  /** A long-running answer (watch): the front-end hands it the socket instead of writing body. */
  stream?: (res: any, ctx: RequestContext) => void
  /** Called once the body has been written or dropped (a pooled body buffer goes back; the body is invalid then). */
  release?: () => void
}

/** The query of every request that has none (nothing writes to a request's query), one shared instance. */
export const EMPTY_QUERY = new URLSearchParams()

export class RequestContext {
  readonly method: string
  readonly url: string
  readonly query: URLSearchParams
  readonly headers: Record<string, string>
  body: Buffer
  info: RequestInfo
  def: ResolvedDefinition | undefined
  /** The upstream group spelling the client used (`rbac.authorization.k8s.io`) when it came through an alias path. */
  aliasGroup: string | undefined
  /**
   * A custom resource served in a version other than its storage version: [stored apiVersion, asked apiVersion], each
   * with its closing quote, so the answers' apiVersion is rewritten as for an alias path (src/pipeline/encode.ts aliased).
   */
  versionAlias: [string, string, ((objectJson: string) => string)?] | undefined
  /**
   * The served definition of a type served over another's storage (ResourceDefinition.sharedStorage): the verb
   * handlers get the stored definition, and the edges convert (src/pipeline/convert.ts). Undefined for every other type.
   */
  conversion: ResolvedDefinition | undefined
  /** A custom resource converted through its CRD's conversion webhook (src/pipeline/crd-convert.ts); else undefined. */
  webhookConversion: WebhookConversion | undefined
  user: UserInfo | undefined
  readonly reqId: string
  #root: Logger
  #log: Logger | undefined
  /** Which in-flight counter holds a seat for this request (released in finally), -1 = none; under APF the priority level's index. */
  seat: number
  /** APF: initial seats on that level, and the flow-control actor's ticket when the request was queued there (0 = none). */
  seatCount: number
  flowTicket: number
  /**
   * APF: final seats of a write whose events reach many watchers, held with the initial ones while it runs and for
   * additionalLatencyMs after it answered (upstream's work estimate). The request holds max(seatCount, finalSeats).
   */
  finalSeats: number
  additionalLatencyMs: number
  /** APF: when a queued request got its seats (performance.now()); 0 when it took them on arrival. */
  seatedAt: number
  /** APF: the FlowSchema of a request holding or waiting for seats, and its neighbours in the list of those. */
  apfSchema: unknown
  apfPrev: RequestContext | undefined
  apfNext: RequestContext | undefined
  /** Per-stage durations in milliseconds. */
  timings: Record<string, number>
  readonly start: number
  /** Extra response headers (Warning, Retry-After, ...). */
  responseHeaders: ResponseHeader[]
  /** The pretty query flag. */
  pretty: boolean
  aborted: boolean
  /** Called once when the client goes away before the answer (a stage waiting on something withdraws it). */
  onAbort: (() => void) | undefined
  /** Keys the body repeats (field validation reports them). */
  duplicateFields: string[] | undefined
  /** What a service write took from the shared allocation maps, until the write is settled (settleAllocation). */
  allocation: Allocation | undefined
  /** The client certificate the connection sent (the node front-end of the secure port only), for the certificate authenticators. */
  peer: PeerRequest | undefined

  constructor(method: string, url: string, query: URLSearchParams, headers: Record<string, string>, info: RequestInfo, root: Logger, reqId = '') {
    this.method = method
    this.url = url
    this.query = query
    this.headers = headers
    this.body = EMPTY
    this.info = info
    this.def = undefined
    this.aliasGroup = undefined
    this.versionAlias = undefined
    this.conversion = undefined
    this.webhookConversion = undefined
    this.user = undefined
    this.reqId = reqId
    this.#root = root
    this.#log = undefined
    this.seat = -1
    this.seatCount = 0
    this.flowTicket = 0
    this.finalSeats = 0
    this.additionalLatencyMs = 0
    this.seatedAt = 0
    this.apfSchema = undefined
    this.apfPrev = undefined
    this.apfNext = undefined
    this.timings = {}
    this.start = performance.now()
    this.responseHeaders = []
    const p = query === EMPTY_QUERY ? null : query.get('pretty')
    this.pretty = p !== null && p !== 'false' && p !== '0'
    this.aborted = false
    this.onAbort = undefined
    this.duplicateFields = undefined
    this.allocation = undefined
    this.peer = undefined
  }

  /** A `Warning: 299 - "<text>"` response header (quotes and backslashes escaped), once per text. */
  addWarning(text: string): void {
    const value = `299 - "${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`
    for (const h of this.responseHeaders) if (h[0] === 'Warning' && h[1] === value) return
    this.responseHeaders.push(['Warning', value])
  }

  /** The request's child logger, made on first use (most requests log nothing but their access line). */
  get log(): Logger {
    if (this.#log === undefined) {
      const i = this.info
      this.#log = this.#root.child({ reqId: this.reqId, verb: i.verb, resource: i.resource || undefined, namespace: i.namespace || undefined, user: this.user?.username })
    }
    return this.#log
  }

  /** Whether a line at this level would be written, without making the child logger. */
  logs(level: string): boolean { return this.#root.isLevelEnabled(level) }
}

const EMPTY = Buffer.alloc(0)
