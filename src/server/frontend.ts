// A front-end thread: its own uWS App(s) on the shared ports, parse → pipeline → respond, guarded so no request can take the process down.
import { workerData, parentPort } from 'node:worker_threads'
import { createRequire } from 'node:module'
import { pino } from 'pino'
import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js'
import { entityTooLarge, BODY_LIMIT } from '../machinery/errors.js'
import { gzipSync } from 'node:zlib'
import { readFileSync } from 'node:fs'
import { EMPTY_QUERY, RequestContext, type Response } from '../pipeline/context.js'
import { handle } from '../pipeline/index.js'
import { requestInfoOf } from './request-info.js'
import { writeResponse, errorResponse } from './respond.js'
import { buildRouter } from './routes.js'
import { setupPipeline, type FrontendData } from './setup.js'
import { closeAllWatches } from './watch.js'
import { joinMetrics, leaveMetrics, observeRequest } from './metrics.js'
import { JwtController } from '../auth/jwt-setup.js'
import { setAnonymous, setJwtAuthenticators } from '../pipeline/authenticate.js'
import { listenNodeSecure, type NodeSecureServer } from './node-frontend.js'
import type { PeerRequest } from '../auth/x509.js'

const data = workerData as FrontendData
const log = pino({ level: data.options.logLevel, redact: ['req.headers.authorization'] }).child({ frontend: data.index })

/** The native uWS binary, loaded directly: the package would otherwise fall back to a slow JavaScript server silently. */
function loadUws(): typeof import('uWebSockets.js') {
  const require = createRequire(import.meta.url)
  const name = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`
  return require(`uWebSockets.js/binaries/${name}`)
}

const uws = loadUws()
joinMetrics(data.index, data.options.frontends)
const { store, authz } = setupPipeline(data, log, ({ registry, store }) => buildRouter({ registry, store, data, log }))
const jwt = data.jwt ? new JwtController(data.jwt, log.child({ authenticator: 'jwt' }), setJwtAuthenticators) : undefined
if (jwt) setJwtAuthenticators(jwt.current)
if (data.jwt?.anonymous) setAnonymous(data.jwt.anonymous)

const compress = data.options.featureGates.APIResponseCompression
/** Upstream compresses get and list answers from this size on, at gzip level 1. */
const GZIP_THRESHOLD = 128 * 1024

function maybeGzip(ctx: RequestContext, r: Response): void {
  const size = typeof r.body === 'string' ? Buffer.byteLength(r.body) : r.body.length
  if (size < GZIP_THRESHOLD || !/\bgzip\b/i.test(ctx.headers['accept-encoding'] ?? '')) return
  r.body = gzipSync(r.body, { level: 1 })
  r.headers = [...r.headers, ['Content-Encoding', 'gzip'], ['Vary', 'Accept-Encoding']]
}

let nextReq = 0
const HAS_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

function onRequest(res: HttpResponse, req: HttpRequest, peer: PeerRequest | undefined): void {
  let ctx: RequestContext | undefined
  try {
    // Everything is copied out of req before the first await: req is invalid after this function returns.
    const sent = req.getCaseSensitiveMethod()
    const method = sent === 'GET' ? sent : sent.toUpperCase()
    const url = req.getUrl()
    const q = req.getQuery() ?? ''
    const headers: Record<string, string> = {}
    req.forEach((k, v) => { headers[k] = headers[k] === undefined ? v : `${headers[k]},${v}` })
    // Nothing writes to a request's query: requests without one share one empty instance.
    const query = q === '' ? EMPTY_QUERY : new URLSearchParams(q)
    const info = requestInfoOf(method, url, query)
    const reqId = `${data.index}-${++nextReq}`
    ctx = new RequestContext(method, url, query, headers, info, log, reqId)
    ctx.peer = peer
    if (HAS_BODY.has(method)) {
      watchAbort(res, ctx)
      readBody(res, ctx)
    } else {
      run(res, ctx, false)
    }
  } catch (err) {
    fail(res, ctx, err)
  }
}

/**
 * The client going away marks the context (and runs its onAbort). uWS needs this before a handler returns without
 * having answered, so it is attached then: a request answered within the handler's own call (a cached get) skips it.
 */
function watchAbort(res: HttpResponse, c: RequestContext): void {
  res.onAborted(() => {
    c.aborted = true
    const f = c.onAbort
    c.onAbort = undefined
    if (f) try { f() } catch (err) { log.error({ err }, 'abort callback failed') }
  })
}

function readBody(res: HttpResponse, ctx: RequestContext): void {
  const declared = Number(ctx.headers['content-length'] ?? 0)
  if (declared > BODY_LIMIT) { fail(res, ctx, entityTooLarge()); return }
  const chunks: Buffer[] = []
  let size = 0
  let over = false
  res.onData((ab, isLast) => {
    if (over) return
    try {
      size += ab.byteLength
      if (size > BODY_LIMIT) {
        over = true
        fail(res, ctx, entityTooLarge())
        return
      }
      // A copy (ab is uWS's, valid during this call only); small bodies land in Buffer's pool, not a new ArrayBuffer.
      chunks.push(Buffer.from(new Uint8Array(ab)))
      if (isLast) {
        ctx.body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)
        run(res, ctx, true)
      }
    } catch (err) {
      fail(res, ctx, err)
    }
  })
}

/** `watched`: the abort handler is attached already (a body was read, or this is a later turn). */
function run(res: HttpResponse, ctx: RequestContext, watched: boolean): void {
  try {
    const r = handle(ctx)
    if (r instanceof Promise) {
      if (!watched) watchAbort(res, ctx)
      r.then((done) => respond(res, ctx, done, true), (err) => fail(res, ctx, err))
    } else {
      respond(res, ctx, r, watched)
    }
  } catch (err) {
    fail(res, ctx, err)
  }
}

function respond(res: HttpResponse, ctx: RequestContext, r: Response, watched: boolean): void {
  try {
    if (ctx.aborted) { r.release?.(); return }
    if (r.stream) {
      // A stream answers over later turns (a watch attaches its own handler over this one).
      if (!watched) watchAbort(res, ctx)
      r.stream(res, ctx)
      // A streamed list logs and counts when its body starts (a watch does neither here: it lasts).
      if (ctx.info.verb === 'list') { accessLog(ctx, r.status); observeRequest(ctx, r.status, undefined) }
      return
    }
    // Answers built outside the resource handlers (discovery, health) still carry the stages' headers (APF's).
    if (r.headers !== ctx.responseHeaders && ctx.responseHeaders.length > 0) r.headers = [...ctx.responseHeaders, ...r.headers]
    if (compress && (ctx.info.verb === 'get' || ctx.info.verb === 'list')) maybeGzip(ctx, r)
    // Not watched: this is still uWS's own call of the handler (the node front-end's requests carry their peer).
    writeResponse(res, r, ctx.method === 'HEAD', !watched && ctx.peer === undefined)
    r.release?.()
    accessLog(ctx, r.status)
    observeRequest(ctx, r.status, typeof r.body === 'string' ? r.body.length : r.body.length)
  } catch (err) {
    fail(res, ctx, err)
  }
}

function fail(res: HttpResponse, ctx: RequestContext | undefined, err: unknown): void {
  try {
    const { response, bug } = errorResponse(ctx, err)
    if (bug) (ctx?.log ?? log).error({ err }, 'request failed with an unexpected error')
    if (ctx?.aborted) return
    writeResponse(res, response, false)
    if (ctx) { accessLog(ctx, response.status); observeRequest(ctx, response.status, undefined) }
  } catch (e) {
    log.error({ err: e }, 'could not write an error response')
  }
}

/** One line per request, written through the root logger with the request's fields (no child logger is made). */
function accessLog(ctx: RequestContext, status: number): void {
  if (!log.isLevelEnabled('info')) return
  const i = ctx.info
  log.info({
    reqId: ctx.reqId, verb: i.verb, resource: i.resource || undefined, namespace: i.namespace || undefined, user: ctx.user?.username,
    method: ctx.method, url: ctx.url, status, ms: Math.round((performance.now() - ctx.start) * 1000) / 1000, timings: ctx.timings,
  }, 'access')
}

/** `peer`: what the node front-end knows of the connection (client certificate, header lines); uWS calls with two arguments. */
function guarded(res: HttpResponse, req: HttpRequest, peer?: PeerRequest): void {
  try { onRequest(res, req, peer) } catch (err) {
    log.error({ err }, 'handler threw')
    try { res.cork(() => { res.writeStatus('500 Internal Server Error').end() }) } catch { /* the socket is gone */ }
  }
}

const apps: Array<{ app: TemplatedApp; socket: us_listen_socket | null }> = []
let nodeSecure: NodeSecureServer | null = null

function listen(app: TemplatedApp, host: string, port: number): Promise<us_listen_socket> {
  return new Promise((resolve, reject) => {
    app.any('/*', guarded)
    app.listen(host, port, (s) => { if (s) resolve(s); else reject(new Error(`front-end ${data.index} could not listen on ${host}:${port}`)) })
  })
}

async function main(): Promise<void> {
  if (data.httpsPort > 0 && data.certAuth) {
    // Client certificates: the secure port is node's (one listener per port in Node 20: front-end 0 serves it).
    if (data.index === 0) {
      nodeSecure = await listenNodeSecure({
        host: data.options.bindAddress, port: data.httpsPort, cert: readFileSync(data.tls.certFile), key: readFileSync(data.tls.keyFile),
        ca: data.certAuth.caPems, handler: guarded, log,
      })
    }
  } else if (data.httpsPort > 0) {
    const app = uws.SSLApp({ cert_file_name: data.tls.certFile, key_file_name: data.tls.keyFile })
    apps.push({ app, socket: await listen(app, data.options.bindAddress, data.httpsPort) })
  }
  if (data.httpPort > 0) {
    const app = uws.App()
    apps.push({ app, socket: await listen(app, data.options.bindAddress, data.httpPort) })
  }
  parentPort!.postMessage({ type: 'listening' })
}

parentPort!.on('message', async (m: { type: string }) => {
  if (m.type === 'close') {
    // Never terminate a worker whose app listens: close the sockets and let the loop drain.
    for (const a of apps) if (a.socket) { uws.us_listen_socket_close(a.socket); a.socket = null }
    const closingNode = nodeSecure?.close()
    await closeAllWatches().catch((err) => log.error({ err }, 'closing watches failed'))
    for (const a of apps) try { (a.app as unknown as { close?: () => void }).close?.() } catch { /* older builds lack close */ }
    await closingNode
    store.clients.forEach((c) => c.close())
    authz.close()
    leaveMetrics()
    jwt?.close()
    parentPort!.postMessage({ type: 'closed' })
  }
})

main().catch((err) => {
  log.fatal({ err }, 'front-end failed to start')
  parentPort!.postMessage({ type: 'failed', message: err instanceof Error ? err.message : String(err) })
})

