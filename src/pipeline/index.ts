// The stages in the order they run, and handle(): one request through all of them to a Response.
// The global `performance` is a lazy getter on every read: the module's binding is read directly.
import { performance } from 'node:perf_hooks'
import { ApiError, methodNotAllowed, notAcceptable, notFound, pageNotFound, resourceNotFound, unsupportedMediaType } from '../machinery/errors.js'
import type { Registry } from '../registry/index.js'
import type { ResolvedDefinition } from '../registry/define.js'
import { authenticate } from './authenticate.js'
import { flowControl, releaseSeat } from './flow-control.js'
import { authorize } from './authorize.js'
import { get, list } from './read.js'
import { create, update } from './write.js'
import { deleteCollection, remove } from './delete.js'
import { getScale, patchScale, updateScale } from './scale.js'
import { patch } from './patch.js'
import { negotiate, servedMediaTypes } from './encode.js'
import { bodyTypes } from './decode.js'
import { virtualRoute } from './reviews.js'
import { connect, connectSubresource } from './connect.js'
import { metadataFormOf, tableVersionOf } from './table.js'
import type { RequestContext, Response } from './context.js'
import { routeWebhookConverted, webhookOf, type WebhookConversion } from './crd-convert.js'

type Stage = (ctx: RequestContext) => void | Promise<void>

/** The order is data: authenticate, flow control, authorize; admission and storage run inside the verb handlers. */
export const stages: Stage[] = [authenticate, flowControl, authorize]

export type NonResourceHandler = (ctx: RequestContext) => Response | Promise<Response>
/** A handler for paths outside the resource tree (discovery, OpenAPI, health, version); null when it does not know the path. */
export type NonResourceRouter = (ctx: RequestContext) => NonResourceHandler | null

let registry: Registry
let aliases = true
let nonResource: NonResourceRouter = () => null
let watchHandler: ((ctx: RequestContext, def: ResolvedDefinition) => Promise<Response>) | null = null

export function configurePipeline(r: Registry, router: NonResourceRouter, upstreamAliases = true): void {
  registry = r
  nonResource = router
  aliases = upstreamAliases
}

const UPSTREAM_SUFFIX = '.k8s.io'

/** `/apis/<name>.k8s.io/...` is served as `<name>.orch.io`: the request is rewritten before any stage sees it. */
function resolveAlias(ctx: RequestContext): void {
  const i = ctx.info
  if (!aliases || i.apiPrefix !== 'apis' || !i.group.endsWith(UPSTREAM_SUFFIX)) return
  const ours = i.group.slice(0, -UPSTREAM_SUFFIX.length) + '.orch.io'
  if (!registry.groups.has(ours)) return
  ctx.aliasGroup = i.group
  i.group = ours
}

/** Objects answered through an alias path carry the alias apiVersion. */
function rewriteAlias(ctx: RequestContext, r: Response): Response {
  if ((!ctx.aliasGroup && !ctx.versionAlias) || r.stream || !r.contentType.startsWith('application/json')) return r
  if (ctx.versionAlias !== undefined && ctx.versionAlias[0] === ctx.versionAlias[1]) return r
  const from = ctx.versionAlias ? `"apiVersion":"${ctx.versionAlias[0]}` : `"apiVersion":"${ctx.info.group}/`
  const to = ctx.versionAlias ? `"apiVersion":"${ctx.versionAlias[1]}` : `"apiVersion":"${ctx.aliasGroup}/`
  const body = r.body.toString()
  return body.includes(from) ? { ...r, body: body.split(from).join(to) } : r
}

export function configureWatch(h: (ctx: RequestContext, def: ResolvedDefinition) => Promise<Response>): void { watchHandler = h }

/**
 * One request through the stages and the verb handler. Synchronous from end to end when every part is (a cached
 * identity and decision, a free seat, a get): then no promise is made and the answer goes out in the same turn.
 * The seat is given back once the answer is built, on either path.
 */
export function handle(ctx: RequestContext): Response | Promise<Response> {
  let r: Response | Promise<Response>
  try {
    resolveAlias(ctx)
    r = fromStage(ctx, 0)
  } catch (err) {
    releaseSeat(ctx)
    throw err
  }
  if (r instanceof Promise) return r.finally(() => releaseSeat(ctx))
  releaseSeat(ctx)
  return r
}

/** The stages' names, the keys of their timings (a function's name is read through a getter). */
const stageNames = stages.map((s) => s.name)

/**
 * The stages from the k-th on, then the handler: synchronous while each part is, a promise from the first that waits.
 * Each stage's time runs from the end of the one before (one clock read per stage).
 */
function fromStage(ctx: RequestContext, k: number): Response | Promise<Response> {
  let t0 = performance.now()
  for (; k < stages.length; k++) {
    const pending = stages[k](ctx)
    if (pending !== undefined) {
      const name = stageNames[k]
      const next = k + 1
      const from = t0
      return pending.then(() => {
        ctx.timings[name] = performance.now() - from
        return fromStage(ctx, next)
      })
    }
    const t1 = performance.now()
    ctx.timings[stageNames[k]] = t1 - t0
    t0 = t1
  }
  const r = route(ctx)
  if (r instanceof Promise) {
    const from = t0
    return r.then((res) => {
      ctx.timings.dispatch = performance.now() - from
      return rewriteAlias(ctx, res)
    })
  }
  ctx.timings.dispatch = performance.now() - t0
  return rewriteAlias(ctx, r)
}

/** Resolves the type of a resource path; the 404 forms follow upstream (plain page vs Status). */
export function resolveType(ctx: RequestContext): ResolvedDefinition {
  const i = ctx.info
  const group = i.apiPrefix === 'api' ? '' : i.group
  if (i.apiPrefix === 'api' && i.version !== 'v1') throw pageNotFound()
  // One integer comparison unless a CustomResourceDefinition was written since the last request.
  registry.refresh()
  if (!registry.servesGroupVersion(group, i.version)) throw pageNotFound()
  const def = registry.lookup(group, i.version, i.resource)
  if (!def) throw resourceNotFound()
  return def
}

function route(ctx: RequestContext): Response | Promise<Response> {
  const i = ctx.info
  if (!i.isResourceRequest) {
    const h = nonResource(ctx)
    if (!h) throw pageNotFound()
    return h(ctx)
  }
  const def = resolveType(ctx)
  ctx.def = def
  // Virtual resources (access reviews, SelfSubjectReview, TokenReview, serviceaccounts/token) store nothing.
  const virtual = virtualRoute(ctx, def)
  if (virtual) return virtual
  // Connect sub-resources (log, exec, attach, portforward, proxy) answer what they can without a kubelet.
  const connectSub = connectSubresource(def, i.subresource)
  if (connectSub !== undefined) return connect(ctx, def, connectSub)
  if (ctx.method === 'HEAD') throw methodNotAllowed()
  let wc: WebhookConversion | undefined
  if (def.custom !== undefined) {
    customRequest(ctx, def)
    // Conversion Webhook: another version than the storage version is converted through the webhook (crd-convert.ts).
    if (def.custom.webhookSpec !== undefined && def.custom.storageVersion !== def.version && def.custom.storageVersion !== '') {
      const stored = def.custom.unservedStorage ?? registry.lookup(def.group, def.custom.storageVersion, def.resource)
      if (stored !== undefined) {
        wc = { hook: webhookOf(def), view: def, stored }
        // Answers are not streamed nor written by the fast paths: they are converted whole (same apiVersion: no rewrite).
        ctx.versionAlias = [`${stored.apiVersion}"`, `${stored.apiVersion}"`, stored.custom!.readDefaults]
      }
    }
  }
  if (wc === undefined && def.custom !== undefined) {
    // Conversion None: only apiVersion differs between versions; objects are stored in the storage version.
    // A schema with defaults has them filled in what is read too (upstream defaults objects read from storage).
    const other = def.custom.storageVersion !== def.version && def.custom.storageVersion !== ''
    if (other || def.custom.readDefaults) ctx.versionAlias = [other ? `${def.group}/${def.custom.storageVersion}"` : `${def.apiVersion}"`, `${def.apiVersion}"`, def.custom.readDefaults]
  }
  // The response form is settled before anything is written: a 406 must change nothing.
  const accept = ctx.headers['accept']
  if (!tableVersionOf(accept) && !metadataFormOf(accept, i.verb === 'list')) negotiate(accept)
  if ((i.verb === 'update' || i.verb === 'patch') && i.name === '') throw methodNotAllowed()
  // A type served over another's storage: the handlers run on the stored type, the edges convert (convert.ts).
  if (def.stored !== undefined) return routeConverted(ctx, def, def.stored)
  if (wc !== undefined) return routeWebhookConverted(ctx, wc, (stored) => routeVerb(ctx, stored))
  return routeVerb(ctx, def)
}

/** The verb (or sub-resource) handler of a resource request. */
function routeVerb(ctx: RequestContext, def: ResolvedDefinition): Response | Promise<Response> {
  const i = ctx.info
  if (i.subresource !== '') return routeSubresource(ctx, def)
  if (i.verb !== 'watch' && !def.verbs.includes(i.verb as never)) {
    if (i.verb === '') throw methodNotAllowed()
    throw methodNotAllowed(i.verb, { group: def.group, resource: def.resource })
  }
  // A namespaced type's single-object paths need a namespace; cluster-scoped types take none.
  if (def.scope === 'Cluster' && i.namespace !== '') throw resourceNotFound()
  if (def.scope === 'Namespaced' && i.namespace === '' && i.name !== '') throw resourceNotFound()
  switch (i.verb) {
    case 'get': return get(ctx, def)
    case 'list': return list(ctx, def)
    case 'watch':
      if (!def.verbs.includes('watch') || !watchHandler) throw methodNotAllowed('watch', { group: def.group, resource: def.resource })
      return watchHandler(ctx, def)
    case 'create':
      if (def.scope === 'Namespaced' && i.namespace === '') throw methodNotAllowed()
      return create(ctx, def)
    case 'update': return update(ctx, def, 'main')
    case 'patch': return patch(ctx, def, 'main')
    case 'delete': return remove(ctx, def)
    case 'deletecollection': return deleteCollection(ctx, def)
    default: throw methodNotAllowed()
  }
}

/**
 * A request of a type served over another's storage: run on the stored type (ctx.conversion converts at the edges);
 * its errors name the served group/resource where they name the stored one (`events.events.orch.io "x" not found`).
 */
function routeConverted(ctx: RequestContext, view: ResolvedDefinition, stored: ResolvedDefinition): Response | Promise<Response> {
  ctx.conversion = view
  if (view.groupResource === stored.groupResource) return routeVerb(ctx, stored)
  try {
    const r = routeVerb(ctx, stored)
    return r instanceof Promise ? r.catch((err: unknown) => { throw servedError(err, view, stored) }) : r
  } catch (err) {
    throw servedError(err, view, stored)
  }
}

function servedError(err: unknown, view: ResolvedDefinition, stored: ResolvedDefinition): unknown {
  if (!(err instanceof ApiError) || err.details === undefined || err.details.kind !== stored.resource || (err.details.group ?? '') !== stored.group) return err
  const { name, kind, group: _, ...rest } = err.details
  const e = new ApiError(err.code, err.reason, err.message.split(`${stored.groupResource} "`).join(`${view.groupResource} "`),
    { name, group: view.group, kind, ...rest }, { headers: err.headers, plainText: err.plainText })
  e.continueToken = err.continueToken
  return e
}

/**
 * What differs for a custom resource before the verb runs: no protobuf (an Accept that names it falls back to what
 * else it names; only protobuf is 406; a protobuf body is 415), and no creates while its CRD is being deleted.
 */
function customRequest(ctx: RequestContext, def: ResolvedDefinition): void {
  const accept = ctx.headers['accept']
  if (accept !== undefined && accept.includes('protobuf')) {
    const kept = accept.split(',').filter((p) => !/^\s*application\/vnd\.(kubernetes|orch)\.protobuf/i.test(p)).join(',')
    if (kept.trim() === '') throw notAcceptable(servedMediaTypes().filter((t) => !t.includes('protobuf')))
    ctx.headers['accept'] = kept
  }
  const ct = (ctx.headers['content-type'] ?? '').toLowerCase()
  if (ct.includes('protobuf')) throw unsupportedMediaType(bodyTypes().filter((t) => !t.includes('protobuf')))
  const w = def.custom!.warning
  if (w !== undefined) ctx.addWarning(w)
  if (def.custom!.terminating && ctx.info.verb === 'create') {
    const e = methodNotAllowed(ctx.info.verb, { group: def.group, resource: def.resource })
    throw new ApiError(e.code, e.reason, `${ctx.info.verb} not allowed while custom resource definition is terminating`, e.details)
  }
}

function routeSubresource(ctx: RequestContext, def: ResolvedDefinition): Response | Promise<Response> {
  const i = ctx.info
  const sub = i.subresource as 'status' | 'scale'
  const isNamespaceFinalize = def.group === '' && def.resource === 'namespaces' && i.subresource === 'finalize'
  const isEphemeral = def.ephemeralContainers !== undefined && i.subresource === 'ephemeralcontainers'
  const isApproval = def.approval !== undefined && i.subresource === 'approval'
  if (!def.subresources?.includes(sub) && !isNamespaceFinalize && !isEphemeral && !isApproval) {
    // upstream's CRD handler: a sub-resource the version does not have is the object's NotFound.
    if (def.custom !== undefined) throw notFound({ group: def.group, resource: def.resource }, i.name)
    throw resourceNotFound()
  }
  if (i.name === '') throw resourceNotFound()
  switch (`${sub} ${i.verb}`) {
    case 'status get': return get(ctx, def)
    case 'status update': return update(ctx, def, 'status')
    case 'status patch': return patch(ctx, def, 'status')
    case 'scale get': return getScale(ctx, def)
    case 'scale update': return updateScale(ctx, def)
    case 'scale patch': return patchScale(ctx, def)
    case 'finalize update': return update(ctx, def, 'finalize')
    case 'ephemeralcontainers get': return get(ctx, def)
    case 'ephemeralcontainers update': return update(ctx, def, 'ephemeralcontainers')
    case 'ephemeralcontainers patch': return patch(ctx, def, 'ephemeralcontainers')
    case 'approval get': return get(ctx, def)
    case 'approval update': return update(ctx, def, 'approval')
    case 'approval patch': return patch(ctx, def, 'approval')
    default: throw methodNotAllowed()
  }
}

