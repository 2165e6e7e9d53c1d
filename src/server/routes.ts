// Paths outside the resource tree: version, discovery, OpenAPI and health, each document built once.
import type { Logger } from 'pino'
import { notAcceptable, pageNotFound } from '../machinery/errors.js'
import type { Registry } from '../registry/index.js'
import { loadDefinitions } from '../registry/schema.js'
import { customDefinitions } from '../registry/custom.js'
import type { RequestContext, Response } from '../pipeline/context.js'
import type { NonResourceHandler, NonResourceRouter } from '../pipeline/index.js'
import type { Store } from '../pipeline/store.js'
import { parseAccept, negotiateDiscovery, CBOR } from '../pipeline/encode.js'
import { cborFromJson } from '../machinery/codecs/cbor.js'
import { flowClient, maxInFlightCounts } from '../pipeline/flow-control.js'
import { typePrefix } from '../machinery/storage-format.js'
import { renderMetrics } from './metrics.js'
import type { DumpKind } from '../../actors/flow-control/messages.js'
import { versionInfo, apiVersions, apiGroupList, apiGroup, apiResourceList } from './discovery.js'
import { openapiV2, buildOpenapiV3 } from './openapi.js'
import { healthAggregate, healthSingle, heartbeatSlots, STATE_SHUTTING_DOWN, STATE_BOOTSTRAPPED, STATE_RBAC_BOOTSTRAPPED, type HealthCheck } from './health.js'
import type { FrontendData } from './setup.js'

interface RouterDeps { registry: Registry; store: Store; data: FrontendData; log: Logger }

function json(body: string, status = 200, headers: Array<[string, string]> = []): Response {
  return { status, body, contentType: 'application/json', headers }
}

/** 304 Not Modified when the client already holds this version (If-None-Match names the ETag, or is `*`). */
function conditional(ctx: RequestContext, etag: string, headers: Array<[string, string]>): Response | undefined {
  const inm = ctx.headers['if-none-match']
  if (inm === undefined) return undefined
  const tags = inm.split(',').map((x) => x.trim().replace(/^W\//, ''))
  if (!tags.includes(etag) && !tags.includes('*')) return undefined
  return { status: 304, body: '', contentType: 'application/json', headers: headers.some(([k]) => k === 'Etag') ? headers : [...headers, ['Etag', etag]] }
}

const cborDocs = new Map<string, Buffer>()

/** A discovery document in JSON, or in CBOR when the client prefers it (gate CBORServingAndStorage); each encoded once. */
function discovery(ctx: RequestContext, body: string): Response {
  if (negotiateDiscovery(ctx.headers['accept']) !== 'cbor') return json(body)
  let b = cborDocs.get(body)
  if (!b) { b = cborFromJson(body); cborDocs.set(body, b) }
  return { status: 200, body: b, contentType: CBOR, headers: [] }
}

function text(body: string, status = 200): Response {
  return { status, body, contentType: 'text/plain; charset=utf-8', headers: [['X-Content-Type-Options', 'nosniff']] }
}

function lazy(build: () => string): () => string {
  let v: string | undefined
  return () => (v ??= build())
}

export function buildRouter({ registry, store, data, log }: RouterDeps): NonResourceRouter {
  const version = lazy(() => JSON.stringify(versionInfo()))
  const api = lazy(() => JSON.stringify(apiVersions(`${data.options.bindAddress}:${data.httpsPort || data.httpPort}`)))
  let apisDoc: string | undefined
  const apis = () => (apisDoc ??= JSON.stringify(apiGroupList(registry)))
  const groupDocs = new Map<string, string>()
  const resourceDocs = new Map<string, string>()
  let v2Doc: string | undefined
  // The schema data, with the definitions of the custom resource types served now.
  const schemaData = () => (registry.custom.length === 0 ? loadDefinitions() : { ...loadDefinitions(), ...customDefinitions(registry.custom) })
  const v2 = () => (v2Doc ??= JSON.stringify(openapiV2(registry, schemaData())))
  let v3: ReturnType<typeof buildOpenapiV3> | undefined
  const openapi3 = () => (v3 ??= buildOpenapiV3(registry, schemaData()))
  // The documents are built again once the served types change (a CustomResourceDefinition was established or removed).
  let generation = registry.generation
  const fresh = (): void => {
    const g = registry.generation
    if (g === generation) return
    generation = g
    apisDoc = undefined
    v2Doc = undefined
    v3 = undefined
    groupDocs.clear()
    resourceDocs.clear()
  }

  const state = new Int32Array(data.state)
  const beats = new Float64Array(data.heartbeats)
  const slots = heartbeatSlots(data.shardPorts.length)
  const started = Date.now()
  const alive = (slot: number, what: string) => () => (Date.now() - beats[slot] < 5000 ? null : `${what} has not reported for ${Math.round((Date.now() - beats[slot]) / 1000)}s`)
  const checks: HealthCheck[] = [
    { name: 'ping', run: () => null, livez: true, readyz: true },
    { name: 'log', run: () => { log.level; return null }, livez: true, readyz: true },
    { name: 'lmdb', run: () => { store.check(); return null }, livez: true, readyz: true },
    ...data.shardPorts.map((_, i): HealthCheck => ({ name: `shard-${i}`, run: alive(slots.shard(i), `shard ${i}`), livez: true, readyz: true })),
    { name: 'authz-actor', run: alive(slots.authz, 'the authz actor'), livez: true, readyz: true },
    { name: 'flow-control-actor', run: alive(slots.flow, 'the flow-control actor'), livez: true, readyz: true },
    { name: 'poststarthook/bootstrap-namespaces', run: () => (Atomics.load(state, STATE_BOOTSTRAPPED) ? null : 'not finished'), livez: true, readyz: true, startup: true },
    { name: 'poststarthook/start-frontends', run: () => null, livez: true, readyz: true, startup: true },
    { name: 'poststarthook/rbac/bootstrap-roles', run: () => (Atomics.load(state, STATE_RBAC_BOOTSTRAPPED) ? null : 'not finished'), livez: true, readyz: true, startup: true },
    // Every API group is registered before the front-end listens (the registry is built at load).
    { name: 'autoregister-completion', run: () => (registry.all.length > 0 ? null : 'no API groups registered'), livez: true, readyz: true },
    { name: 'shutdown', run: () => (Atomics.load(state, STATE_SHUTTING_DOWN) ? 'process is shutting down' : null), livez: false, readyz: true },
  ]
  const grace = () => Date.now() - started < data.options.livezGracePeriod

  const health = (endpoint: 'livez' | 'readyz' | 'healthz'): NonResourceHandler => (ctx) => {
    const r = healthAggregate(endpoint, checks, ctx.query, grace())
    return text(r.body, r.status)
  }

  /** apiserver_storage_objects: keys under each stored type's prefix, counted in lmdb. */
  const storedObjects = (): Array<[string, number]> => {
    const out = new Map<string, number>()
    for (const def of registry.all) {
      if (!def.verbs.includes('list')) continue
      const label = def.group === '' ? def.resource : `${def.resource}.${def.group}`
      if (out.has(label)) continue
      out.set(label, store.count(store.shardFor(def.group, def.resource), typePrefix(def.group, def.resource)))
    }
    return [...out]
  }

  return (ctx: RequestContext): NonResourceHandler | null => {
    const p = ctx.info.path.replace(/\/+$/, '') || '/'
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return null
    fresh()
    switch (p) {
      case '/version': return () => json(version())
      case '/api': return (c) => discovery(c, api())
      case '/apis': return (c) => discovery(c, apis())
      case '/livez': return health('livez')
      case '/readyz': return health('readyz')
      case '/healthz': return health('healthz')
      case '/metrics': return async () => ({
        status: 200, body: await renderMetrics({ flow: () => flowClient()?.metrics() ?? null, storedObjects, inflight: maxInFlightCounts }),
        contentType: 'text/plain; version=0.0.4; charset=utf-8', headers: [],
      })
      case '/openapi/v2': return (c) => {
        const accept = c.headers['accept']
        if (accept && !parseAccept(accept).some((e) => (e.type === 'application' && e.sub === 'json') || e.type === '*' || (e.type === 'application' && e.sub === '*'))) {
          throw notAcceptable(['application/json'])
        }
        return json(v2())
      }
      case '/openapi/v3': return (c) => {
        const set = openapi3()
        return conditional(c, set.indexEtag, []) ?? json(set.index, 200, [['Etag', set.indexEtag]])
      }
    }
    const apf = /^\/debug\/api_priority_and_fairness\/dump_(priority_levels|queues|requests)$/.exec(p)
    if (apf) {
      // Installed only with APF on (upstream installs them with its config controller).
      const flow = flowClient()
      if (flow === null) return null
      const what = apf[1] as DumpKind
      return async (c) => {
        const details = (c.query.get('includeRequestDetails') ?? '') !== ''
        return { status: 200, body: await flow.dump(what, details), contentType: 'text/plain; charset=utf-8', headers: [] }
      }
    }
    const hm = /^\/(livez|readyz|healthz)\/(.+)$/.exec(p)
    if (hm) {
      return () => {
        const r = healthSingle(hm[1] as 'livez', hm[2], checks, grace())
        if (!r) throw pageNotFound()
        return text(r.body, r.status)
      }
    }
    if (p.startsWith('/openapi/v3/')) {
      const key = p.slice('/openapi/v3/'.length)
      const doc = openapi3().docs.get(key)
      if (!doc) return null
      return (c) => {
        const accept = c.headers['accept']
        if (accept && !parseAccept(accept).some((e) => (e.type === 'application' && (e.sub === 'json' || e.sub === '*' || e.sub.startsWith('com.github.proto-openapi.spec.v3'))) || e.type === '*')) {
          throw notAcceptable(['application/json'])
        }
        const want = c.query.get('hash')
        if (want !== null && want !== doc.hash) {
          return { status: 301, body: '', contentType: 'text/plain', headers: [['Location', `/openapi/v3/${key}?hash=${doc.hash}`]] }
        }
        const headers: Array<[string, string]> = [['Etag', `"${doc.hash}"`], ['Vary', 'Accept']]
        if (want !== null) {
          headers.push(['Cache-Control', 'public, immutable'])
          headers.push(['Expires', new Date(Date.now() + 365 * 86400_000).toUTCString()])
        }
        return conditional(c, `"${doc.hash}"`, headers) ?? json(doc.json, 200, headers)
      }
    }
    const parts = p.split('/').filter(Boolean)
    if (parts[0] === 'api' && parts.length === 2 && parts[1] === 'v1') {
      return (c) => discovery(c, cached(resourceDocs, '/v1', () => JSON.stringify(apiResourceList(registry, '', 'v1'))))
    }
    if (parts[0] === 'apis' && parts.length === 2 && registry.groups.has(parts[1]) && parts[1] !== '') {
      return (c) => discovery(c, cached(groupDocs, parts[1], () => JSON.stringify(apiGroup(registry, parts[1]))))
    }
    if (parts[0] === 'apis' && parts.length === 3 && registry.servesGroupVersion(parts[1], parts[2])) {
      return (c) => discovery(c, cached(resourceDocs, `${parts[1]}/${parts[2]}`, () => JSON.stringify(apiResourceList(registry, parts[1], parts[2]))))
    }
    return null
  }
}

function cached(m: Map<string, string>, k: string, build: () => string): string {
  let v = m.get(k)
  if (v === undefined) { v = build(); m.set(k, v) }
  return v
}

