// CRD conversion webhooks (spec.conversion.strategy Webhook): objects are stored in the storage version; another
// version is converted through a ConversionReview posted to the webhook (a list's items in one review), and the
// answer is checked as upstream checks it (uid, count, kind and apiVersion, metadata changes only in labels and
// annotations).
import { randomUUID } from 'node:crypto'
import { WebhookCallError, WebhookClient } from '../machinery/webhook-client.js'
import { ApiError, internal } from '../machinery/errors.js'
import { resolveService } from '../admission/webhooks.js'

type Obj = Record<string, any>
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)
const str = (v: unknown): string => (typeof v === 'string' ? v : '')

const REVIEW_GROUP = 'apiextensions.orch.io'
const REVIEW_GROUP_UPSTREAM = 'apiextensions.k8s.io'
/** Upstream's timeout of a conversion call. */
const TIMEOUT_SECONDS = 30

interface Service { namespace: string; name: string; port: number; path: string }

/** A CRD's conversion webhook. */
export interface ConversionWebhook {
  group: string
  kind: string
  /** The review version sent (the first of conversionReviewVersions the server knows), or undefined. */
  reviewVersion: string | undefined
  client: WebhookClient | undefined
  error: string
  service: Service | undefined
}

const clients = new Map<string, WebhookClient>()

/** The webhook of a CRD spec whose conversion strategy is Webhook; undefined otherwise. */
export function conversionWebhookOf(spec: Obj, kind: string): ConversionWebhook | undefined {
  const c = isObj(spec.conversion) ? spec.conversion : undefined
  if (c === undefined || c.strategy !== 'Webhook') return undefined
  const hook: Obj = isObj(c.webhook) ? c.webhook : {}
  const versions: unknown[] = Array.isArray(hook.conversionReviewVersions) ? hook.conversionReviewVersions : []
  const reviewVersion = versions.find((v) => v === 'v1' || v === 'v1beta1') as string | undefined
  const cc: Obj = isObj(hook.clientConfig) ? hook.clientConfig : {}
  const caText = str(cc.caBundle)
  const svc = isObj(cc.service) ? cc.service : undefined
  const service = svc === undefined ? undefined : { namespace: str(svc.namespace), name: str(svc.name), port: typeof svc.port === 'number' ? svc.port : 443, path: str(svc.path) }
  const url = service !== undefined ? `https://${service.name}.${service.namespace}.svc:${service.port}${service.path || '/'}` : str(cc.url)
  const key = JSON.stringify([url, caText])
  let client = clients.get(key)
  let error = ''
  if (client === undefined) {
    try {
      const ca = caText === '' ? undefined : Buffer.from(caText, 'base64')
      client = new WebhookClient({ url: new URL(url), ca: ca !== undefined && ca.length > 0 ? ca : undefined, insecure: false, serverName: service !== undefined ? `${service.name}.${service.namespace}.svc` : undefined }, TIMEOUT_SECONDS * 1000)
      clients.set(key, client)
    } catch (err) {
      error = url === '' ? 'webhook configuration must have either service or URL' : `Unparsable URL: ${(err as Error).message}`
    }
  }
  return { group: str(spec.group), kind, reviewVersion, client, error, service }
}

/** upstream's error of a failed conversion: 500, naming the group/version and kind converted from. */
function failure(w: ConversionWebhook, fromVersion: string, detail: string): ApiError {
  return internal(`conversion webhook for ${w.group}/${fromVersion}, Kind=${w.kind} failed: ${detail}`)
}

const sameMeta = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null)

/**
 * Converts objects (all of one version, `fromVersion`) to `desiredAPIVersion` in one review. Objects already in the
 * desired version are not sent. Rejects with a 500 ApiError as upstream answers a failed conversion.
 */
export async function convertObjects(w: ConversionWebhook, fromVersion: string, objects: Obj[], desiredAPIVersion: string): Promise<Obj[]> {
  const todo = objects.filter((o) => o.apiVersion !== desiredAPIVersion)
  if (todo.length === 0) return objects
  if (w.reviewVersion === undefined) throw failure(w, fromVersion, 'webhook does not accept known ConversionReview versions (v1, v1beta1)')
  if (w.client === undefined) throw failure(w, fromVersion, `could not get REST client: ${w.error}`)
  const uid = randomUUID()
  const review = { kind: 'ConversionReview', apiVersion: `${REVIEW_GROUP}/${w.reviewVersion}`, request: { uid, desiredAPIVersion, objects: todo } }
  let at: { url: string; shown: string } | undefined
  if (w.service !== undefined) {
    const path = `${w.service.path || '/'}?timeout=${TIMEOUT_SECONDS}s`
    const shown = `https://${w.service.name}.${w.service.namespace}.svc:${w.service.port}${path}`
    try {
      const ep = resolveService(w.service)
      at = { url: `https://${ep.host.includes(':') ? `[${ep.host}]` : ep.host}:${ep.port}${path}`, shown }
    } catch (err) {
      throw failure(w, fromVersion, `Post "${shown}": ${(err as Error).message}`)
    }
  }
  let body: Obj
  try {
    body = (await w.client.postOnce(review, at)).body
  } catch (err) {
    if (err instanceof WebhookCallError) throw failure(w, fromVersion, err.message)
    throw err
  }
  const r = body.response
  if (body.kind !== 'ConversionReview' || (body.apiVersion !== `${REVIEW_GROUP}/${w.reviewVersion}` && body.apiVersion !== `${REVIEW_GROUP_UPSTREAM}/${w.reviewVersion}`)) {
    throw failure(w, fromVersion, `expected webhook response of ${REVIEW_GROUP}/${w.reviewVersion}, Kind=ConversionReview, got ${str(body.apiVersion)}, Kind=${str(body.kind)}`)
  }
  if (!isObj(r)) throw failure(w, fromVersion, 'no response provided')
  if (r.uid !== uid) throw failure(w, fromVersion, `expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(str(r.uid))}`)
  const result: Obj = isObj(r.result) ? r.result : {}
  if (result.status !== 'Success') throw failure(w, fromVersion, str(result.message) || 'the webhook did not report Success')
  const out: unknown[] = Array.isArray(r.convertedObjects) ? r.convertedObjects : []
  if (out.length !== todo.length) throw failure(w, fromVersion, `returned ${out.length} objects, expected ${todo.length}`)
  const converted = new Map<Obj, Obj>()
  todo.forEach((inObj, i) => {
    const o = out[i]
    if (!isObj(o)) throw failure(w, fromVersion, `invalid converted object at index ${i}: not an object`)
    if (o.apiVersion !== desiredAPIVersion) throw failure(w, fromVersion, `invalid converted object at index ${i}: invalid apiVersion ${JSON.stringify(str(o.apiVersion))}, expected ${JSON.stringify(desiredAPIVersion)}`)
    if (o.kind !== inObj.kind) throw failure(w, fromVersion, `invalid converted object at index ${i}: invalid kind ${JSON.stringify(str(o.kind))}, expected ${JSON.stringify(str(inObj.kind))}`)
    const im: Obj = isObj(inObj.metadata) ? inObj.metadata : {}
    const om: Obj = isObj(o.metadata) ? o.metadata : {}
    for (const f of ['uid', 'name', 'namespace'] as const) {
      if (str(om[f]) !== str(im[f])) throw failure(w, fromVersion, `invalid converted object at index ${i}: expected metadata.${f}=${JSON.stringify(str(im[f]))}, got ${JSON.stringify(str(om[f]))}`)
    }
    for (const f of ['labels', 'annotations'] as const) {
      const v = om[f]
      if (v !== undefined && v !== null && (!isObj(v) || Object.values(v).some((x) => typeof x !== 'string'))) {
        throw failure(w, fromVersion, `invalid converted object at index ${i}: invalid metadata.${f}: must be a map of strings`)
      }
    }
    // As upstream: only labels and annotations may change; the rest of metadata is the original's.
    const meta: Obj = { ...im }
    for (const f of ['labels', 'annotations'] as const) {
      if (om[f] === undefined || om[f] === null || Object.keys(om[f]).length === 0) delete meta[f]
      else if (!sameMeta(om[f], im[f])) meta[f] = om[f]
    }
    converted.set(inObj, { ...o, metadata: meta })
  })
  return objects.map((o) => converted.get(o) ?? o)
}
