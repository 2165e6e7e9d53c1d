// HTTP/1.1 keep-alive connections for load generation: a lean client on net.Socket (default) and an undici one.
//
// Why a client of our own: on the 2-core machine the load generator shares the CPU with the server, so its cost per
// request is taken from the server. Measured against the same GET: the raw client used about half the CPU of an
// undici Pool per request (44% of a core for 11k req/s against 84% for 11k req/s). `--client undici` switches.
import net from 'node:net'
import { StringDecoder } from 'node:string_decoder'
import { Client } from 'undici'

export interface HttpResult {
  status: number
  body: Buffer
}

export interface HttpConnection {
  request(method: string, path: string, body?: Buffer | string, headers?: Record<string, string>): Promise<HttpResult>
  close(): void
}

/** A target: host and port of a plain-HTTP server on loopback. */
export interface Target {
  host: string
  port: number
}

export function parseTarget(url: string): Target {
  const u = new URL(url)
  if (u.protocol !== 'http:') throw new Error(`only plain http targets are supported: ${url}`)
  return { host: u.hostname, port: Number(u.port || 80) }
}

export type ClientKind = 'raw' | 'undici'

export function connect(kind: ClientKind, target: Target): HttpConnection {
  return kind === 'undici' ? new UndiciConnection(target) : new RawConnection(target)
}

const enum State { Head, Length, ChunkSize, ChunkData, ChunkCrlf, Trailer, Close }

interface Pending {
  buf: Buffer
  /** already sent once on a kept-alive connection that the server closed before answering */
  retried?: boolean
  resolve: (r: HttpResult) => void
  reject: (e: Error) => void
  /** when set, the body is handed over piece by piece (watch streams) instead of being collected */
  onData?: (piece: Buffer) => void
}

/** One keep-alive connection, one request at a time (no pipelining); requests made while busy wait in order. */
export class RawConnection implements HttpConnection {
  private sock: net.Socket | undefined
  private queue: Pending[] = []
  private current: Pending | undefined
  private state = State.Head
  private head: Buffer | undefined
  private status = 0
  private remaining = 0
  private parts: Buffer[] = []
  private line: Buffer | undefined
  private closeAfter = false
  private closed = false
  /** requests answered on the current socket, and whether any byte of the current answer has arrived */
  private served = 0
  private gotBytes = false

  constructor(private readonly target: Target) {}

  request(method: string, path: string, body?: Buffer | string, headers?: Record<string, string>): Promise<HttpResult> {
    return this.send(buildRequest(this.target, method, path, body, headers))
  }

  /** Sends a ready request (see buildRequest); onData receives the body pieces as they arrive. */
  send(buf: Buffer, onData?: (piece: Buffer) => void): Promise<HttpResult> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new Error('connection closed'))
      this.queue.push({ buf, resolve, reject, onData })
      if (!this.current) this.next()
    })
  }

  private next(): void {
    const p = this.queue.shift()
    if (!p) return
    this.current = p
    this.gotBytes = false
    const sock = this.sock ?? this.open()
    sock.write(p.buf)
  }

  private open(): net.Socket {
    const s = net.connect({ host: this.target.host, port: this.target.port })
    s.setNoDelay(true)
    s.on('data', (d: Buffer) => this.onData(d))
    s.on('error', () => { /* the close event follows */ })
    s.on('close', () => {
      if (this.sock !== s) return
      this.sock = undefined
      // a server may close a kept-alive connection it found idle (uWS does after 10 s) just as a request goes out:
      // such a request never reached it, so it is sent once more on a new connection, as HTTP clients do
      const cur = this.current
      if (cur && !cur.retried && !this.gotBytes && this.served > 0 && !this.closed) {
        cur.retried = true
        this.current = undefined
        this.queue.unshift(cur)
        this.next()
        return
      }
      this.fail(new Error('connection closed by peer'))
    })
    this.sock = s
    this.served = 0
    this.state = State.Head
    this.head = undefined
    return s
  }

  private fail(err: Error): void {
    const cur = this.current
    this.current = undefined
    this.state = State.Head
    this.head = undefined
    this.parts = []
    if (cur) {
      if (cur.onData && this.status >= 200 && this.status < 300) cur.resolve({ status: this.status, body: Buffer.alloc(0) })
      else cur.reject(err)
    }
    if (this.closed) {
      for (const p of this.queue.splice(0)) p.reject(err)
    } else if (this.queue.length > 0) {
      this.next()
    }
  }

  private onData(d: Buffer): void {
    this.gotBytes = true
    while (d.length > 0) {
      switch (this.state) {
        case State.Head: {
          const h = this.head ? Buffer.concat([this.head, d]) : d
          const end = h.indexOf('\r\n\r\n')
          if (end < 0) { this.head = h; return }
          this.head = undefined
          this.parseHead(h.toString('latin1', 0, end))
          d = h.subarray(end + 4)
          if ((this.state as State) === State.Length && this.remaining === 0) this.complete()
          break
        }
        case State.Length: {
          const take = Math.min(this.remaining, d.length)
          this.piece(d.subarray(0, take))
          this.remaining -= take
          d = d.subarray(take)
          if (this.remaining === 0) this.complete()
          break
        }
        case State.ChunkSize:
        case State.Trailer: {
          const l = this.line ? Buffer.concat([this.line, d]) : d
          const nl = l.indexOf('\r\n')
          if (nl < 0) { this.line = l; return }
          this.line = undefined
          const text = l.toString('latin1', 0, nl)
          d = l.subarray(nl + 2)
          if (this.state === State.Trailer) {
            if (text === '') this.complete()
          } else {
            const size = parseInt(text, 16)
            if (size === 0) this.state = State.Trailer
            else { this.remaining = size; this.state = State.ChunkData }
          }
          break
        }
        case State.ChunkData: {
          const take = Math.min(this.remaining, d.length)
          this.piece(d.subarray(0, take))
          this.remaining -= take
          d = d.subarray(take)
          if (this.remaining === 0) { this.remaining = 2; this.state = State.ChunkCrlf }
          break
        }
        case State.ChunkCrlf: {
          const take = Math.min(this.remaining, d.length)
          this.remaining -= take
          d = d.subarray(take)
          if (this.remaining === 0) this.state = State.ChunkSize
          break
        }
        case State.Close: {
          this.piece(d)
          return
        }
      }
    }
  }

  private parseHead(head: string): void {
    this.status = Number(head.slice(9, 12))
    this.parts = []
    this.closeAfter = /\r\nconnection: *close/i.test(head)
    if (/\r\ntransfer-encoding: *chunked/i.test(head)) { this.state = State.ChunkSize; return }
    const m = /\r\ncontent-length: *(\d+)/i.exec(head)
    if (m) { this.remaining = Number(m[1]); this.state = State.Length; return }
    // no length: the body runs to the end of the connection
    this.closeAfter = true
    this.state = State.Close
  }

  private piece(b: Buffer): void {
    if (this.current?.onData) this.current.onData(b)
    else this.parts.push(b)
  }

  private complete(): void {
    const cur = this.current
    const body = this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts)
    this.parts = []
    this.state = State.Head
    this.current = undefined
    this.served++
    if (this.closeAfter && this.sock) { const s = this.sock; this.sock = undefined; s.destroy() }
    cur?.resolve({ status: this.status, body })
    if (this.queue.length > 0) this.next()
  }

  close(): void {
    this.closed = true
    this.sock?.destroy()
    this.sock = undefined
    this.fail(new Error('connection closed'))
  }
}

export function buildRequest(target: Target, method: string, path: string, body?: Buffer | string, headers?: Record<string, string>): Buffer {
  let h = `${method} ${path} HTTP/1.1\r\nhost: ${target.host}:${target.port}\r\n`
  if (headers) for (const k in headers) h += `${k}: ${headers[k]}\r\n`
  if (body === undefined) return Buffer.from(h + '\r\n', 'latin1')
  const b = typeof body === 'string' ? Buffer.from(body) : body
  if (!headers || !Object.keys(headers).some((k) => k.toLowerCase() === 'content-type')) h += 'content-type: application/json\r\n'
  h += `content-length: ${b.length}\r\n\r\n`
  return Buffer.concat([Buffer.from(h, 'latin1'), b])
}

/** The same interface on an undici Client (one connection each). */
export class UndiciConnection implements HttpConnection {
  private readonly client: Client

  constructor(target: Target) {
    this.client = new Client(`http://${target.host}:${target.port}`, { pipelining: 1, keepAliveTimeout: 60_000 })
  }

  async request(method: string, path: string, body?: Buffer | string, headers?: Record<string, string>): Promise<HttpResult> {
    const h: Record<string, string> = { ...headers }
    if (body !== undefined && !Object.keys(h).some((k) => k.toLowerCase() === 'content-type')) h['content-type'] = 'application/json'
    const r = await this.client.request({ method: method as 'GET', path, body, headers: h })
    return { status: r.statusCode, body: Buffer.from(await r.body.arrayBuffer()) }
  }

  close(): void {
    void this.client.destroy().catch(() => undefined)
  }
}

/**
 * Splits a byte stream into lines (watch events: one JSON object per line), without decoding them: a line within one
 * piece is a view of it, a line across pieces is copied once. Empty lines (a stream's leading white space) are skipped.
 */
export class LineSplitter {
  private rest: Buffer | null = null
  constructor(private readonly onLine: (line: Buffer) => void) {}
  push(b: Buffer): void {
    let start = 0
    let nl = b.indexOf(10)
    if (this.rest !== null) {
      if (nl < 0) { this.rest = Buffer.concat([this.rest, b]); return }
      const line = Buffer.concat([this.rest, b.subarray(0, nl)])
      this.rest = null
      this.emit(line)
      start = nl + 1
      nl = b.indexOf(10, start)
    }
    while (nl >= 0) {
      this.emit(b.subarray(start, nl))
      start = nl + 1
      nl = b.indexOf(10, start)
    }
    if (start < b.length) this.rest = Buffer.from(b.subarray(start))
  }
  private emit(line: Buffer): void {
    let s = 0
    let e = line.length
    while (s < e && line[s] <= 32) s++
    while (e > s && line[e - 1] <= 32) e--
    if (e > s) this.onLine(s === 0 && e === line.length ? line : line.subarray(s, e))
  }
}
