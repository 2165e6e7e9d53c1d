// Custom resources of a CRD whose conversion strategy is Webhook, requested in a version other than the storage
// version: the request runs on the storage version's definition and its edges are converted through the webhook
// (src/registry/crd-conversion.ts). Bodies of creates and updates are converted to the storage version before the
// handler; a patch is applied to the object converted to the requested version and converted back (patch.ts); the
// answer (an object, or a list's items in one review) is converted to the requested version. Watches convert each
// event (src/server/watch.ts). Server-side apply and non-JSON bodies are refused with a Status naming the limitation.
import { ApiError, invalid } from '../machinery/errors.js'
import { convertObjects, conversionWebhookOf, type ConversionWebhook } from '../registry/crd-conversion.js'
import type { CustomInfo, ResolvedDefinition } from '../registry/define.js'
import type { RequestContext, Response } from './context.js'
import { encodeValue, negotiate } from './encode.js'
import { buildTable, metadataFormOf, tableVersionOf } from './table.js'

type Obj = Record<string, any>
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)

/** A request converted through a CRD's conversion webhook: the requested (view) and the storage definitions. */
export interface WebhookConversion { hook: ConversionWebhook; view: ResolvedDefinition; stored: ResolvedDefinition }

const hooks = new WeakMap<CustomInfo, ConversionWebhook>()

export function webhookOf(def: ResolvedDefinition): ConversionWebhook {
  const c = def.custom!
  let h = hooks.get(c)
  if (h === undefined) { h = conversionWebhookOf(c.webhookSpec!, def.kind)!; hooks.set(c, h) }
  return h
}

/** Objects of the storage version as the requested version shows them (a list's in one review). */
export function toView(wc: WebhookConversion, objects: Obj[]): Promise<Obj[]> {
  return convertObjects(wc.hook, wc.stored.version, objects, wc.view.apiVersion)
}

/** Objects of the requested version in the storage version. */
export function toStored(wc: WebhookConversion, objects: Obj[]): Promise<Obj[]> {
  return convertObjects(wc.hook, wc.view.version, objects, wc.stored.apiVersion)
}

function limitation(code: number, reason: string, what: string, wc: WebhookConversion): ApiError {
  return new ApiError(code, reason, `${what} of ${wc.view.resource}.${wc.view.group} in version ${wc.view.version} is not supported by this server: its conversion webhook converts it from the storage version ${wc.stored.version}; use version ${wc.stored.version}`)
}

const JSON_TYPE = 'application/json'

/** Runs the request on the storage definition with its edges converted. */
export async function routeWebhookConverted(ctx: RequestContext, wc: WebhookConversion, run: (def: ResolvedDefinition) => Response | Promise<Response>): Promise<Response> {
  const i = ctx.info
  const ct = (ctx.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase()
  ctx.webhookConversion = wc
  // Answers are converted as JSON: another form (YAML, CBOR) asked for is refused rather than sent unconverted.
  if (i.verb !== 'watch' && !tableVersionOf(ctx.headers['accept']) && !metadataFormOf(ctx.headers['accept'], i.verb === 'list') && negotiate(ctx.headers['accept']) !== 'json') {
    throw limitation(406, 'NotAcceptable', 'an answer in another form than JSON', wc)
  }
  if (i.verb === 'patch' && ct === 'application/apply-patch+yaml') throw limitation(415, 'UnsupportedMediaType', 'server-side apply', wc)
  if ((i.verb === 'create' || i.verb === 'update') && i.subresource !== 'scale') {
    if (ct !== JSON_TYPE && ct !== '') throw limitation(415, 'UnsupportedMediaType', `a ${ct} body`, wc)
    let o: unknown
    try { o = JSON.parse(ctx.body.toString('utf8')) } catch { o = undefined }
    // What is not an object of the requested version is left to the handler's own errors.
    if (isObj(o) && (o.apiVersion === undefined || o.apiVersion === wc.view.apiVersion) && (o.kind === undefined || o.kind === wc.view.kind)) {
      o.apiVersion = wc.view.apiVersion
      o.kind = wc.view.kind
      if (!isObj(o.metadata)) o.metadata = {}
      // As upstream, the body is defaulted and checked against the schema of the version it was written in.
      if (i.subresource === '') viewValid(wc, o)
      const [s] = await toStored(wc, [o])
      ctx.body = Buffer.from(JSON.stringify(s))
    }
  }
  // A Table (kubectl get) is built from the converted objects with the requested version's columns: the handler
  // answers JSON, converted, then tabled here.
  const tv = i.verb === 'get' || i.verb === 'list' ? tableVersionOf(ctx.headers['accept']) : null
  if (tv) (ctx.headers as Record<string, string>)['accept'] = JSON_TYPE
  const r = await run(wc.stored)
  if (!tv) return viewResponse(ctx, wc, r)
  const v = await viewResponse(ctx, wc, r)
  if (v.status >= 300 || v.stream || !v.contentType.startsWith(JSON_TYPE)) return v
  const o = JSON.parse(v.body.toString()) as Obj
  v.release?.()
  const table = Array.isArray(o.items)
    ? buildTable(wc.view, o.items as Obj[], isObj(o.metadata) ? o.metadata : {}, ctx.query, tv)
    : buildTable(wc.view, [o], { resourceVersion: o.metadata?.resourceVersion ?? '' }, ctx.query, tv)
  return { ...v, body: encodeValue(table, 'json', ctx.pretty), release: undefined }
}

/** Defaults `o` (of the requested version) and checks it against that version's schema and rules (`old`: its update's). */
export function viewValid(wc: WebhookConversion, o: Obj, old?: Obj): void {
  const st = wc.view.strategy
  st.default?.(o)
  const errs = old === undefined ? st.validate?.(o) ?? [] : st.validateUpdate?.(o, old) ?? []
  if (errs.length > 0) throw invalid(wc.view.groupKind, wc.view.group, wc.view.kind, String(o.metadata?.name ?? ''), errs)
}

/** The answer with its object (or list items) converted to the requested version. */
async function viewResponse(ctx: RequestContext, wc: WebhookConversion, r: Response): Promise<Response> {
  if (r.stream || !r.contentType.startsWith(JSON_TYPE)) return r
  const text = r.body.toString()
  const stored = `"apiVersion":"${wc.stored.apiVersion}"`
  if (!text.includes(stored)) return r
  const o = JSON.parse(text) as Obj
  if (Array.isArray(o.items)) {
    o.items = await toView(wc, o.items as Obj[])
    if (o.apiVersion === wc.stored.apiVersion) o.apiVersion = wc.view.apiVersion
  } else if (o.kind === wc.view.kind && o.apiVersion === wc.stored.apiVersion) {
    const [v] = await toView(wc, [o])
    for (const k of Object.keys(o)) delete o[k]
    Object.assign(o, v)
  } else {
    return r
  }
  const body = ctx.pretty ? JSON.stringify(o, null, 2) + '\n' : JSON.stringify(o)
  r.release?.()
  return { ...r, body, release: undefined }
}
