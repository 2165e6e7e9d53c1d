// The client of the authentication and authorization webhooks: a kubeconfig-format file (server, CA, client
// certificate, token), one JSON POST with a timeout, upstream's retries with exponential backoff.
import { readFileSync } from 'node:fs'
import { dirname, isAbsolute, join } from 'node:path'
import https from 'node:https'
import http from 'node:http'
import { parse as parseYaml } from 'yaml'
import { goDuration } from './tabwriter.js'

export class WebhookConfigError extends Error {}

/** What a kubeconfig file says about how to reach the webhook. */
export interface WebhookTarget {
  url: URL
  ca?: Buffer
  insecure: boolean
  serverName?: string
  cert?: Buffer
  key?: Buffer
  token?: string
}

type Obj = Record<string, any>

function named(list: unknown, name: string, field: string): Obj | undefined {
  if (!Array.isArray(list)) return undefined
  const hit = list.find((e) => e && typeof e === 'object' && (e as Obj).name === name) as Obj | undefined
  return hit?.[field] as Obj | undefined
}

function fileOrData(base: string, o: Obj, fileKey: string, dataKey: string): Buffer | undefined {
  if (typeof o[dataKey] === 'string' && o[dataKey] !== '') return Buffer.from(o[dataKey], 'base64')
  if (typeof o[fileKey] === 'string' && o[fileKey] !== '') {
    const p = isAbsolute(o[fileKey]) ? o[fileKey] : join(base, o[fileKey])
    try { return readFileSync(p) } catch (err) { throw new WebhookConfigError(`unable to read ${fileKey} ${JSON.stringify(p)}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (err as Error).message}`) }
  }
  return undefined
}

/** Reads a kubeconfig: current-context's cluster and user (the first of each when the file names no context). */
export function loadWebhookKubeconfig(file: string): WebhookTarget {
  let text: string
  try { text = readFileSync(file, 'utf8') } catch (err) {
    throw new WebhookConfigError(`stat ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (err as Error).message}`)
  }
  let doc: Obj
  try { doc = (parseYaml(text) ?? {}) as Obj } catch (err) { throw new WebhookConfigError(`error loading config file "${file}": ${(err as Error).message.split('\n')[0]}`) }
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new WebhookConfigError(`error loading config file "${file}": not a kubeconfig object`)
  const base = dirname(file)
  let cluster: Obj | undefined
  let user: Obj | undefined
  const ctxName = typeof doc['current-context'] === 'string' ? doc['current-context'] : ''
  if (ctxName !== '') {
    const ctx = named(doc.contexts, ctxName, 'context')
    if (!ctx) throw new WebhookConfigError(`invalid configuration: context was not found for specified context: ${ctxName}`)
    cluster = named(doc.clusters, String(ctx.cluster ?? ''), 'cluster')
    if (!cluster) throw new WebhookConfigError(`invalid configuration: cluster "${String(ctx.cluster ?? '')}" not found for context "${ctxName}"`)
    if (ctx.user) user = named(doc.users, String(ctx.user), 'user')
  } else {
    cluster = Array.isArray(doc.clusters) ? (doc.clusters[0] as Obj | undefined)?.cluster : undefined
    user = Array.isArray(doc.users) ? (doc.users[0] as Obj | undefined)?.user : undefined
  }
  if (!cluster || typeof cluster.server !== 'string' || cluster.server === '') {
    throw new WebhookConfigError('invalid configuration: no configuration has been provided')
  }
  let url: URL
  try { url = new URL(cluster.server) } catch { throw new WebhookConfigError(`invalid configuration: host must be a URL or a host:port pair: ${JSON.stringify(cluster.server)}`) }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new WebhookConfigError(`invalid configuration: unsupported scheme ${JSON.stringify(url.protocol.slice(0, -1))} in server ${JSON.stringify(cluster.server)}`)
  const t: WebhookTarget = { url, insecure: cluster['insecure-skip-tls-verify'] === true }
  t.ca = fileOrData(base, cluster, 'certificate-authority', 'certificate-authority-data')
  if (typeof cluster['tls-server-name'] === 'string' && cluster['tls-server-name'] !== '') t.serverName = cluster['tls-server-name']
  if (user && typeof user === 'object') {
    t.cert = fileOrData(base, user, 'client-certificate', 'client-certificate-data')
    t.key = fileOrData(base, user, 'client-key', 'client-key-data')
    if ((t.cert === undefined) !== (t.key === undefined)) throw new WebhookConfigError('invalid configuration: client-cert-data and client-key-data must be specified together')
    if (typeof user.token === 'string' && user.token !== '') t.token = user.token
    else if (typeof user.tokenFile === 'string' && user.tokenFile !== '') {
      try { t.token = readFileSync(isAbsolute(user.tokenFile) ? user.tokenFile : join(base, user.tokenFile), 'utf8').trim() } catch (err) { throw new WebhookConfigError(`unable to read tokenFile: ${(err as Error).message}`) }
    }
  }
  if (t.insecure && t.ca !== undefined) throw new WebhookConfigError('invalid configuration: specifying a root certificates file with the insecure flag is not allowed')
  return t
}

/** A failed call: the text upstream's client reports, and whether upstream's DefaultShouldRetry retries it. */
export class WebhookCallError extends Error {
  constructor(message: string, readonly retry: boolean) { super(message) }
}

export interface WebhookReply { status: number; body: Obj }

/** Upstream's retry backoff of both webhooks: 500ms, x1.5, jitter 0.2, 5 attempts. */
const BACKOFF = { initialMs: 500, factor: 1.5, jitter: 0.2, steps: 5 }

/** Go's net/http error text; `connected` is the address the call went to when it is not the host of `url`. */
function goNetError(err: NodeJS.ErrnoException, url: string, connected?: string): string {
  const host = connected ?? new URL(url).host
  switch (err.code) {
    case 'ECONNREFUSED': return `Post "${url}": dial tcp ${host}: connect: connection refused`
    case 'ECONNRESET': return `Post "${url}": read tcp ${host}: read: connection reset by peer`
    case 'ENOTFOUND': return `Post "${url}": dial tcp: lookup ${new URL(url).hostname}: no such host`
    default:
      if (err.code?.startsWith('ERR_TLS') || /certificate|self.signed|unable to verify/i.test(err.message)) return `Post "${url}": tls: failed to verify certificate: ${err.message}`
      return `Post "${url}": ${err.message}`
  }
}

function statusText(status: number, text: string, body: Obj | undefined): string {
  if (body && body.kind === 'Status' && typeof body.message === 'string' && body.message !== '') return body.message
  switch (status) {
    case 401: return 'the server has asked for the client to provide credentials'
    case 403: return `forbidden: ${text.trim()}`
    case 404: return 'the server could not find the requested resource'
    case 429: return 'the server has received too many requests and has asked us to try again later'
    case 500: return `an error on the server (${JSON.stringify(text.trim())}) has prevented the request from succeeding`
    case 503: return 'the server is currently unable to handle the request'
    case 504: return 'the server was unable to return a response in the time allotted, but may still be processing the request'
    default: return `the server responded with the status code ${status} but did not return more information`
  }
}

/** A webhook endpoint: one agent (TLS settings, kept-alive connections) for every call. */
export class WebhookClient {
  readonly target: WebhookTarget
  readonly #agent: http.Agent
  readonly #timeoutMs: number
  readonly #url: string

  constructor(target: WebhookTarget, timeoutMs: number) {
    this.target = target
    this.#timeoutMs = timeoutMs
    const u = new URL(target.url.href)
    // Upstream's REST client names its timeout in the query of every call.
    u.searchParams.set('timeout', goDuration(timeoutMs * 1e6))
    this.#url = u.href
    this.#agent = target.url.protocol === 'https:'
      ? new https.Agent({ keepAlive: true, ca: target.ca, cert: target.cert, key: target.key, rejectUnauthorized: !target.insecure, servername: target.serverName })
      : new http.Agent({ keepAlive: true })
  }

  close(): void { this.#agent.destroy() }

  /**
   * One POST without retries (admission webhooks are called once); rejects with a WebhookCallError. `at`: where to
   * send it instead of the configured URL: `url` the address connected to, `shown` the URL errors name (a service's
   * `https://<name>.<namespace>.svc:<port>/<path>` whose endpoint `url` is).
   */
  postOnce(body: unknown, at?: { url: string; shown: string }): Promise<WebhookReply> {
    return this.#once(JSON.stringify(body), at)
  }

  /** One POST; rejects with a WebhookCallError. */
  #once(payload: string, at?: { url: string; shown: string }): Promise<WebhookReply> {
    const target = at === undefined ? this.#url : at.url
    const url = at === undefined ? this.#url : at.shown
    const connected = at === undefined ? undefined : new URL(at.url).host
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json, */*', 'User-Agent': 'orch-apiserver', 'Content-Length': String(Buffer.byteLength(payload)) }
      if (this.target.token) headers.Authorization = `Bearer ${this.target.token}`
      const mod = target.startsWith('https:') ? https : http
      let done = false
      const finish = (f: () => void) => { if (!done) { done = true; clearTimeout(timer); f() } }
      const req = mod.request(target, { method: 'POST', agent: this.#agent, headers }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('error', (err) => finish(() => reject(new WebhookCallError(goNetError(err as NodeJS.ErrnoException, url, connected), (err as NodeJS.ErrnoException).code === 'ECONNRESET'))))
        res.on('end', () => finish(() => {
          const text = Buffer.concat(chunks).toString('utf8')
          let body: Obj | undefined
          try { body = JSON.parse(text) as Obj } catch { body = undefined }
          const status = res.statusCode ?? 0
          if (status < 200 || status > 299) {
            const retryAfter = res.headers['retry-after'] !== undefined && (status === 429 || status >= 500)
            reject(new WebhookCallError(statusText(status, text, body), status === 500 || status === 504 || status === 429 || retryAfter))
            return
          }
          if (body === undefined || typeof body !== 'object' || Array.isArray(body)) {
            reject(new WebhookCallError(`couldn't get version/kind; json parse error: ${text.trim() === '' ? 'unexpected end of JSON input' : 'invalid character in the response body'}`, false))
            return
          }
          resolve({ status, body })
        }))
      })
      const timer = setTimeout(() => {
        finish(() => reject(new WebhookCallError(`Post "${url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`, false)))
        req.destroy()
      }, this.#timeoutMs)
      req.on('error', (err) => finish(() => reject(new WebhookCallError(goNetError(err as NodeJS.ErrnoException, url, connected), (err as NodeJS.ErrnoException).code === 'ECONNRESET'))))
      req.end(payload)
    })
  }

  /** POST with upstream's retries (connection reset, 500, 504, 429, Retry-After), at most 5 attempts. */
  async post(body: unknown): Promise<WebhookReply> {
    const payload = JSON.stringify(body)
    let delay = BACKOFF.initialMs
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#once(payload)
      } catch (err) {
        if (!(err instanceof WebhookCallError) || !err.retry || attempt >= BACKOFF.steps) throw err
      }
      await new Promise((r) => setTimeout(r, delay * (1 + Math.random() * BACKOFF.jitter)))
      delay *= BACKOFF.factor
    }
  }
}

/**
 * The reply's object must be the kind and version asked for (upstream decodes it with a scheme that knows only that
 * version); the `k8s.io` spelling of the group is taken too. An object without apiVersion and kind is read as asked.
 */
export function checkReplyKind(body: Obj, group: string, version: string, kind: string): string | undefined {
  const av = body.apiVersion
  const k = body.kind
  if (av === undefined && k === undefined) return undefined
  const upstream = group.replace(/\.orch\.io$/, '.k8s.io')
  if (av !== `${group}/${version}` && av !== `${upstream}/${version}`) return `no kind "${String(k ?? kind)}" is registered for version "${String(av ?? '')}"; expected ${group}/${version}`
  if (k !== kind) return `no kind "${String(k ?? '')}" is registered for version "${String(av)}"; expected ${kind}`
  return undefined
}
