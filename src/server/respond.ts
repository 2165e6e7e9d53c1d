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

/** Writes a complete response (the caller has checked the request was not aborted). */
export function writeResponse(res: HttpResponse, r: Response, head: boolean): void {
  res.cork(() => {
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
  })
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
