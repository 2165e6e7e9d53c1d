// The secure port on node:http2 (HTTP/1.1 too) for client certificates, which this uWS build cannot read: node requests and responses behind the part of the uWS API the front-end uses.
import http2 from 'node:http2'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { TLSSocket } from 'node:tls'
import { X509Certificate } from 'node:crypto'
import type { Logger } from 'pino'
import type { HttpRequest, HttpResponse } from 'uWebSockets.js'
import { PeerCertificate, type PeerRequest } from '../auth/x509.js'

type NodeReq = IncomingMessage | http2.Http2ServerRequest
type NodeRes = ServerResponse | http2.Http2ServerResponse

/** The front-end's request handler: uWS's two arguments, plus the client certificate when the connection sent one. */
export type Handler = (res: HttpResponse, req: HttpRequest, peer: PeerRequest) => void

const EMPTY = new ArrayBuffer(0)
const NON_LATIN1 = /[^\u0000-\u00ff]/
/** How long an HTTP/1.1 client may go on sending a body the server has already answered. */
const DRAIN_MS = 5000

/** The request as uWS's HttpRequest shows it: method, path, query, and the headers (lower-case, repeated lines joined by commas). */
class NodeRequest {
  readonly #req: NodeReq
  readonly #path: string
  readonly #query: string

  constructor(req: NodeReq) {
    this.#req = req
    const url = req.url ?? '/'
    const q = url.indexOf('?')
    this.#path = q < 0 ? url : url.slice(0, q)
    this.#query = q < 0 ? '' : url.slice(q + 1)
  }

  getCaseSensitiveMethod(): string { return this.#req.method ?? 'GET' }
  getMethod(): string { return (this.#req.method ?? 'GET').toLowerCase() }
  getUrl(): string { return this.#path }
  getQuery(): string { return this.#query }
  getHeader(name: string): string { const v = this.#req.headers[name.toLowerCase()]; return Array.isArray(v) ? v.join(',') : v ?? '' }

  forEach(cb: (key: string, value: string) => void): void {
    const raw = this.#req.rawHeaders
    let host = false
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const k = raw[i].toLowerCase()
      if (k.charCodeAt(0) === 58 /* ':' */) continue
      if (k === 'host') host = true
      cb(k, raw[i + 1])
    }
    // HTTP/2 names the host in :authority.
    if (!host) {
      const a = (this.#req.headers as Record<string, string | string[] | undefined>)[':authority']
      if (typeof a === 'string') cb('host', a)
    }
  }
}

/**
 * A node response driven through uWS's HttpResponse calls: status and headers are gathered and sent with the first
 * body bytes; `write` reports backpressure as uWS does (false: buffered, `onWritable` runs once it drains); the client
 * going away before the end runs `onAborted`.
 */
class NodeResponse {
  readonly #req: NodeReq
  readonly #res: NodeRes
  readonly #h1: boolean
  readonly #peer: PeerRequest
  #status = 200
  #headers = new Map<string, string[]>()
  #started = false
  #done = false
  #written = 0
  #aborted: (() => void) | null = null
  #writable: ((offset: number) => boolean) | null = null

  constructor(req: NodeReq, res: NodeRes, peer: PeerRequest) {
    this.#req = req
    this.#res = res
    this.#peer = peer
    this.#h1 = !('stream' in res)
    res.on('close', () => {
      if (this.#done) return
      this.#done = true
      const f = this.#aborted
      this.#aborted = null
      f?.()
    })
    res.on('drain', () => { const f = this.#writable; if (f && !this.#done) f(this.#written) })
  }

  /** The status may carry header lines after it (`200 OK\r\nName: value`): the front-end packs a whole head that way. */
  writeStatus(s: string | Buffer): this {
    const text = typeof s === 'string' ? s : s.toString('latin1')
    this.#status = parseInt(text, 10) || 500
    if (text.includes('\r\n')) this.#addLines(text.split('\r\n'))
    return this
  }

  /** A value may carry further header lines (`value\r\nName: value`): the front-end packs fixed pairs that way. */
  writeHeader(k: string | Buffer, v: string | Buffer): this {
    const name = typeof k === 'string' ? k : k.toString('latin1')
    const value = typeof v === 'string' ? v : v.toString('latin1')
    if (!value.includes('\r\n')) { this.#add(name, value); return this }
    const lines = value.split('\r\n')
    this.#add(name, lines[0])
    this.#addLines(lines)
    return this
  }

  /** The header lines after the first. */
  #addLines(lines: string[]): void {
    for (let i = 1; i < lines.length; i++) {
      const c = lines[i].indexOf(':')
      if (c > 0) this.#add(lines[i].slice(0, c).trim(), lines[i].slice(c + 1).trim())
    }
  }

  #add(name: string, value: string): void {
    const k = name.toLowerCase()
    const l = this.#headers.get(k)
    if (l) l.push(value)
    else this.#headers.set(k, [value])
  }

  #start(): void {
    if (this.#started) return
    this.#started = true
    const r = this.#res
    r.statusCode = this.#status
    for (const [k, vs] of this.#headers) {
      // uWS writes a string's UTF-8 bytes; node takes header values as latin1 text: the same bytes go out.
      const v = vs.map((x) => NON_LATIN1.test(x) ? Buffer.from(x, 'utf8').toString('latin1') : x)
      try { r.setHeader(k, v.length === 1 ? v[0] : v) } catch { /* a name or value node refuses (control characters) is left out */ }
    }
    // upstream's UnauthenticatedHTTP2DOSMitigation: an unauthenticated client (a 401, or system:anonymous) may not keep
    // an HTTP/2 connection open: it is closed (GOAWAY, running streams finish) once this answer is out.
    if (!this.#h1 && (this.#status === 401 || this.#peer.anonymous)) {
      const session = (r as http2.Http2ServerResponse).stream.session
      r.once('finish', () => { if (session && !session.closed) session.close() })
    }
  }

  cork(fn: () => void): this {
    if (this.#h1 && !this.#done) {
      const r = this.#res as ServerResponse
      r.cork()
      try { fn() } finally { r.uncork() }
    } else {
      fn()
    }
    return this
  }

  write(chunk: string | Buffer | ArrayBuffer | Uint8Array): boolean {
    if (this.#done) return true
    this.#start()
    const b = typeof chunk === 'string' ? chunk : chunk instanceof ArrayBuffer ? Buffer.from(chunk) : chunk
    this.#written += typeof b === 'string' ? Buffer.byteLength(b) : b.byteLength
    return (this.#res as ServerResponse).write(b)
  }

  end(body?: string | Buffer | ArrayBuffer | Uint8Array): this {
    if (this.#done) return this
    this.#start()
    this.#done = true
    const b = body === undefined ? undefined : body instanceof ArrayBuffer ? Buffer.from(body) : body
    ;(this.#res as ServerResponse).end(b)
    this.#afterEnd()
    return this
  }

  endWithoutBody(): this {
    if (this.#done) return this
    this.#start()
    this.#done = true
    ;(this.#res as ServerResponse).end()
    this.#afterEnd()
    return this
  }

  tryEnd(body: string | Buffer, _total: number): [boolean, boolean] {
    this.end(body)
    return [true, true]
  }

  /**
   * A request body still coming after the answer (a 413): HTTP/2 resets the stream with NO_ERROR once the answer is
   * out (the client stops sending); HTTP/1.1 reads and drops the rest (node's server does) while the client sends it,
   * and closes the connection if that takes more than a few seconds.
   */
  #afterEnd(): void {
    const req = this.#req
    if (req.complete) return
    if (!this.#h1) {
      const stream = (this.#res as http2.Http2ServerResponse).stream
      this.#res.once('finish', () => { if (!stream.closed) stream.close(http2.constants.NGHTTP2_NO_ERROR) })
      return
    }
    const timer = setTimeout(() => { if (!req.complete) req.socket.destroy() }, DRAIN_MS)
    timer.unref()
    req.once('end', () => clearTimeout(timer))
    req.once('close', () => clearTimeout(timer))
  }

  close(): this {
    this.#done = true
    if (this.#h1) (this.#res as ServerResponse).destroy()
    else (this.#res as http2.Http2ServerResponse).stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR)
    return this
  }

  onAborted(fn: () => void): this { this.#aborted = fn; return this }
  onWritable(fn: (offset: number) => boolean): this { this.#writable = fn; return this }
  getWriteOffset(): number { return this.#written }

  onData(fn: (chunk: ArrayBuffer | Uint8Array, isLast: boolean) => void): this {
    const req = this.#req
    req.on('data', (c: Buffer) => { if (!this.#done) fn(c, false) })
    req.on('end', () => { if (!this.#done) fn(EMPTY, true) })
    return this
  }
}

/** The intermediates sent with each leaf in full handshakes (by SHA-256 fingerprint), for resumed sessions; bounded. */
const chains = new Map<string, X509Certificate[]>()
const CHAINS_LIMIT = 4096

function rememberChain(leaf: X509Certificate, intermediates: X509Certificate[]): void {
  const k = leaf.fingerprint256
  if (chains.has(k)) return
  if (chains.size >= CHAINS_LIMIT) chains.delete(chains.keys().next().value!)
  chains.set(k, intermediates)
}

/** The client certificate of a connection, read once (null: it sent none). */
const peers = new WeakMap<object, PeerCertificate | null>()

function peerOf(req: NodeReq): PeerCertificate | null {
  // HTTP/2: one session per connection (its socket is a proxy per session); HTTP/1.1: the socket itself.
  const key: object = 'stream' in req ? (req as http2.Http2ServerRequest).stream.session! : req.socket
  let p = peers.get(key)
  if (p !== undefined) return p
  const sock = ('stream' in req ? (req as http2.Http2ServerRequest).stream.session!.socket : req.socket) as TLSSocket
  p = null
  try {
    // One call only: node reports the chain (issuerCertificate links) on the first detailed call of a connection, and
    // getPeerX509Certificate before it loses the chain too.
    const detailed = sock.getPeerCertificate(true) as { raw?: Buffer; issuerCertificate?: unknown } | null
    if (detailed?.raw) {
      const leaf = new X509Certificate(detailed.raw)
      // The certificates the peer sent after its own (the chain node reports may end with a root it found).
      const intermediates: X509Certificate[] = []
      let c = detailed.issuerCertificate as typeof detailed | undefined
      let prev: unknown = detailed
      for (let n = 0; c && c !== prev && n < 10; n++) {
        if (c.raw) intermediates.push(new X509Certificate(c.raw))
        prev = c
        c = c.issuerCertificate as typeof detailed | undefined
      }
      if (intermediates.length > 0) rememberChain(leaf, intermediates)
      // A resumed TLS session reports the leaf only (Go keeps the whole chain in its session): the chain of the
      // handshake that made the session stands in.
      else if (sock.isSessionReused()) intermediates.push(...(chains.get(leaf.fingerprint256) ?? []))
      p = new PeerCertificate(leaf, intermediates)
    }
  } catch {
    p = null
  }
  peers.set(key, p)
  return p
}

export interface NodeSecureServer { close(): Promise<void> }

export interface NodeSecureOptions {
  host: string
  port: number
  cert: string | Buffer
  key: string | Buffer
  /** the CAs advertised to clients (client and request-header CAs); verification is the authenticators' */
  ca: string[]
  handler: Handler
  log: Logger
}

/**
 * Listens with a TLS server that asks for a client certificate and admits clients without one (or with one that does
 * not verify: the authenticators judge it, as upstream's server does with RequestClientCert).
 */
export function listenNodeSecure(o: NodeSecureOptions): Promise<NodeSecureServer> {
  const server = http2.createSecureServer({
    cert: o.cert, key: o.key, ca: o.ca.length > 0 ? o.ca : undefined,
    allowHTTP1: true, requestCert: true, rejectUnauthorized: false,
    // kube-apiserver's streams per connection since its HTTP/2 rapid-reset fix (Go's client default); node's is unlimited.
    settings: { maxConcurrentStreams: 100 },
  })
  // No idle timeout: a watch may stream quietly for an hour (uWS has none on an answered stream either).
  server.setTimeout(0)
  server.on('request', (req: NodeReq, res: NodeRes) => {
    const peer: PeerRequest = { cert: peerOf(req), rawHeaders: req.rawHeaders, anonymous: false }
    o.handler(new NodeResponse(req, res, peer) as unknown as HttpResponse, new NodeRequest(req) as unknown as HttpRequest, peer)
  })
  server.on('sessionError', (err) => o.log.debug({ err }, 'http2 session error'))
  server.on('tlsClientError', (err) => o.log.debug({ err }, 'TLS handshake failed'))
  const sessions = new Set<http2.ServerHttp2Session>()
  server.on('session', (s) => { sessions.add(s); s.once('close', () => sessions.delete(s)) })
  const sockets = new Set<import('node:net').Socket>()
  server.on('secureConnection', (s) => { sockets.add(s); s.once('close', () => sockets.delete(s)) })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen({ host: o.host, port: o.port }, () => {
      server.off('error', reject)
      server.on('error', (err) => o.log.error({ err }, 'secure server error'))
      resolve({
        close: () => new Promise<void>((done) => {
          server.close(() => done())
          for (const s of sessions) s.close()
          // Connections still open (HTTP/1.1 keep-alive, streams) end after a short grace.
          setTimeout(() => { for (const s of sockets) s.destroy(); done() }, 1000).unref()
        }),
      })
    })
  })
}
