// respond and respondError: the only places that turn a Response or an error into bytes on a uWS socket.
import { STATUS_CODES } from 'node:http'
import type { HttpResponse } from 'uWebSockets.js'
import { ApiError, internal } from '../machinery/errors.js'
import type { RequestContext, Response, ResponseHeader } from '../pipeline/context.js'
import { contentTypeOf, encodeValue, negotiate, type MediaType } from '../pipeline/encode.js'

const statusLines = new Map<number, string>()
export function statusLine(code: number): string {
  let s = statusLines.get(code)
  if (!s) { s = `${code} ${STATUS_CODES[code] ?? 'Unknown'}`; statusLines.set(code, s) }
  return s
}

/**
 * Status lines, header names and the common header values as bytes: uWS copies a string argument to UTF-8 on every
 * call, a buffer it takes as it is. Only texts the server itself uses are kept (bounded: values vary a little).
 */
const asBytes = new Map<string, Buffer>()
const AS_BYTES_LIMIT = 512
function bytesOf(s: string): Buffer {
  let b = asBytes.get(s)
  if (b === undefined) {
    b = Buffer.from(s)
    if (asBytes.size >= AS_BYTES_LIMIT) asBytes.clear()
    asBytes.set(s, b)
  }
  return b
}
const CONTENT_TYPE = Buffer.from('Content-Type')

/**
 * A Content-Type value that carries the default Cache-Control header after it (uWS writes name, ": ", value, CRLF),
 * so the two go in one native call; the bytes on the wire are those of two headers. The server's own media types
 * only (bounded as bytesOf).
 */
const withNoCache = new Map<string, Buffer>()
function contentTypeAndNoCache(contentType: string): Buffer {
  let b = withNoCache.get(contentType)
  if (b === undefined) {
    b = Buffer.from(`${contentType}\r\nCache-Control: no-cache, private`)
    if (withNoCache.size >= AS_BYTES_LIMIT) withNoCache.clear()
    withNoCache.set(contentType, b)
  }
  return b
}

/**
 * The head of an answer whose headers are all prepared pairs (APF's): the status line, Content-Type, the default
 * Cache-Control and each pair, packed into one status value (uWS writes "HTTP/1.1 ", the status and CRLF; a header is
 * name, ": ", value, CRLF), so the head goes in one native call and its bytes on the wire are those of the status and
 * the separate headers (the node front-end's response reads the lines back). Built once per content type, status and
 * list of pairs; the pairs are compared by identity (whoever prepares a pair keeps and reuses it). Bounded as bytesOf.
 */
interface PackedHead { status: number; pairs: ResponseHeader[]; bytes: Buffer }
const packed = new Map<string, PackedHead[]>()
let packedCount = 0

function packedHead(status: number, contentType: string, headers: ResponseHeader[]): Buffer | undefined {
  const n = headers.length
  for (let i = 0; i < n; i++) if (typeof headers[i][0] === 'string') return undefined
  let list = packed.get(contentType)
  if (list !== undefined) {
    for (const p of list) {
      if (p.status !== status || p.pairs.length !== n) continue
      let same = true
      for (let i = 0; i < n; i++) if (p.pairs[i] !== headers[i]) { same = false; break }
      if (same) return p.bytes
    }
  }
  const parts: Buffer[] = [Buffer.from(statusLine(status)), CRLF, CONTENT_TYPE, COLON_SPACE, contentTypeAndNoCache(contentType)]
  for (const [k, v] of headers as Array<[Buffer, Buffer]>) parts.push(CRLF, k, COLON_SPACE, v)
  const bytes = Buffer.concat(parts)
  if (packedCount >= AS_BYTES_LIMIT) { packed.clear(); packedCount = 0; list = undefined }
  if (list === undefined) { list = []; packed.set(contentType, list) }
  list.push({ status, pairs: headers.slice(), bytes })
  packedCount++
  return bytes
}
const CRLF = Buffer.from('\r\n')
const COLON_SPACE = Buffer.from(': ')

/**
 * Writes a complete response (the caller has checked the request was not aborted). `corked`: the caller runs inside
 * uWS's own request handler, which corks the socket around it (a res.cork would only call back): the writes go as they are.
 */
export function writeResponse(res: HttpResponse, r: Response, head: boolean, corked = false): void {
  if (!head) {
    const block = packedHead(r.status, r.contentType, r.headers)
    if (block !== undefined) {
      if (corked) writePacked(res, block, r.body)
      else res.cork(() => writePacked(res, block, r.body))
      return
    }
  }
  if (corked) writeHeaders(res, r, head)
  else res.cork(() => writeHeaders(res, r, head))
}

function writePacked(res: HttpResponse, head: Buffer, body: Buffer | string): void {
  res.writeStatus(head)
  res.end(body)
}

function writeHeaders(res: HttpResponse, r: Response, head: boolean): void {
  res.writeStatus(bytesOf(statusLine(r.status)))
  let cache = false
  for (const h of r.headers) if (h[0] === 'Cache-Control') { cache = true; break }
  res.writeHeader(CONTENT_TYPE, cache ? bytesOf(r.contentType) : contentTypeAndNoCache(r.contentType))
  for (const [k, v] of r.headers) {
    // Prepared bytes (APF's) go as they are.
    if (typeof k !== 'string') { res.writeHeader(k, v); continue }
    // Short values repeat (Content-Encoding, Etag): as bytes too; long ones (Warning) as they are.
    res.writeHeader(bytesOf(k), v.length <= 64 ? bytesOf(v as string) : v)
  }
  if (head) {
    const len = typeof r.body === 'string' ? Buffer.byteLength(r.body) : r.body.length
    res.writeHeader('Content-Length', String(len))
    res.endWithoutBody()
  } else {
    res.end(r.body)
  }
}

/** The error as a Response: a Status in the negotiated media type (JSON when negotiation itself failed), or plain text. */
export function errorResponse(ctx: RequestContext | undefined, err: unknown): { response: Response; bug: boolean } {
  let e: ApiError
  let bug = false
  if (err instanceof ApiError) e = err
  else { e = internal(err); bug = true }
  const headers: ResponseHeader[] = ctx ? [...ctx.responseHeaders] : []
  if (e.headers) for (const [k, v] of Object.entries(e.headers)) headers.push([k, v])
  if (e.plainText) {
    return { response: { status: e.code, body: e.code === 404 ? e.message + '\n' : e.message, contentType: 'text/plain; charset=utf-8', headers }, bug }
  }
  let mt: MediaType = 'json'
  if (ctx && e.code !== 406) { try { mt = negotiate(ctx.headers['accept']) } catch { mt = 'json' } }
  return { response: { status: e.code, body: encodeValue(e.toStatus(), mt, ctx?.pretty ?? false), contentType: contentTypeOf(mt), headers }, bug }
}
