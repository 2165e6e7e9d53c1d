// The scale sub-resource: an autoscaling/v1 Scale view of a workload's replicas, read and written through the owning object.
import { badRequest, conflict, internal, invalid, notFound, fieldInvalid, unsupportedMediaType } from '../machinery/errors.js'
import { apply as applyJsonPatch, PatchError } from '../machinery/patch/json-patch.js'
import { apply as applyMergePatch } from '../machinery/patch/merge-patch.js'
import { objectKey, recordObject, recordRv } from '../machinery/storage-format.js'
import type { Obj, ResolvedDefinition } from '../registry/define.js'
import { admitUpdate, attrsOf, toStoredJson } from './admission.js'
import { decodeBody } from './decode.js'
import { contentTypeOf, encodeValue, negotiate } from './encode.js'
import { isDryRun, storeOf } from './dispatch.js'
import { trackFields } from './write.js'
import { admitMutatingHooksOn, admitPolicyOnly } from '../admission/chain.js'
import type { RequestContext, Response } from './context.js'

function at(o: Obj, path: string): unknown {
  let cur: any = o
  for (const p of path.split('.')) cur = cur?.[p]
  return cur
}

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)
const byKey = (a: [string, string], b: [string, string]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)

/** A label set as a selector string (upstream labels.SelectorFromSet(set).String()): `k=v` sorted by key. */
function setSelectorString(set: Obj): string {
  return Object.entries(set).map(([k, v]): [string, string] => [k, `${k}=${String(v)}`]).sort(byKey).map((e) => e[1]).join(',')
}

/**
 * A metav1.LabelSelector as a selector string (upstream LabelSelectorAsSelector(...).String()): one requirement per
 * matchLabels entry and per expression, sorted by key; values of in/notin sorted.
 */
function labelSelectorString(sel: Obj): string {
  const reqs: Array<[string, string]> = []
  if (isObj(sel.matchLabels)) for (const [k, v] of Object.entries(sel.matchLabels)) reqs.push([k, `${k}=${String(v)}`])
  for (const e of Array.isArray(sel.matchExpressions) ? sel.matchExpressions : []) {
    if (!isObj(e) || typeof e.key !== 'string') continue
    const values = (Array.isArray(e.values) ? e.values.map(String) : []).sort().join(',')
    switch (e.operator) {
      case 'In': reqs.push([e.key, `${e.key} in (${values})`]); break
      case 'NotIn': reqs.push([e.key, `${e.key} notin (${values})`]); break
      case 'Exists': reqs.push([e.key, e.key]); break
      case 'DoesNotExist': reqs.push([e.key, `!${e.key}`]); break
    }
  }
  return reqs.sort(byKey).map((r) => r[1]).join(',')
}

const SCALE_KIND = { group: 'autoscaling', version: 'v1', kind: 'Scale' }

function scaleOf(def: ResolvedDefinition, o: Obj): Obj {
  const s = def.scale ?? { specReplicasPath: 'spec.replicas', statusReplicasPath: 'status.replicas', labelSelectorPath: 'status.selector' }
  const m = o.metadata
  const meta: Obj = { name: m.name }
  if (m.namespace) meta.namespace = m.namespace
  meta.uid = m.uid
  meta.resourceVersion = m.resourceVersion
  meta.creationTimestamp = m.creationTimestamp
  const status: Obj = { replicas: (at(o, s.statusReplicasPath) as number | undefined) ?? 0 }
  const sel = s.labelSelectorPath ? at(o, s.labelSelectorPath) : undefined
  const text = typeof sel === 'string' ? sel : isObj(sel) ? (s.selectorIsSet ? setSelectorString(sel) : labelSelectorString(sel)) : ''
  if (text !== '') status.selector = text
  return { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: meta, spec: { replicas: (at(o, s.specReplicasPath) as number | undefined) ?? 0 }, status }
}

function respond(ctx: RequestContext, value: Obj): Response {
  const mt = negotiate(ctx.headers['accept'])
  return { status: 200, body: encodeValue(value, mt, ctx.pretty), contentType: contentTypeOf(mt), headers: ctx.responseHeaders }
}

function read(def: ResolvedDefinition, ctx: RequestContext): { rec: Buffer; o: Obj; shard: number; key: string } {
  const store = storeOf()
  const shard = store.shardFor(def.group, def.resource)
  const key = objectKey(def.group, def.resource, def.scope === 'Namespaced' ? ctx.info.namespace : '', ctx.info.name)
  const rec = store.getFresh(shard, key)
  if (!rec) throw notFound({ group: def.group, resource: def.resource }, ctx.info.name)
  return { rec, o: JSON.parse(recordObject(rec).toString('utf8')) as Obj, shard, key }
}

export async function getScale(ctx: RequestContext, def: ResolvedDefinition): Promise<Response> {
  return respond(ctx, scaleOf(def, read(def, ctx).o))
}

/** PATCH of the scale sub-resource: the patch applies to the current Scale, the result is written like a PUT. */
export async function patchScale(ctx: RequestContext, def: ResolvedDefinition): Promise<Response> {
  const ct = (ctx.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase()
  let patchBody: unknown
  try { patchBody = JSON.parse(ctx.body.toString('utf8')) } catch (err) { throw badRequest(`error decoding patch: ${(err as Error).message}`) }
  const current = scaleOf(def, read(def, ctx).o)
  let patched: unknown
  try {
    if (ct === 'application/json-patch+json') patched = applyJsonPatch(current, patchBody)
    else if (ct === 'application/merge-patch+json' || ct === 'application/strategic-merge-patch+json') patched = applyMergePatch(current, patchBody)
    else throw unsupportedMediaType(['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json'])
  } catch (err) {
    if (err instanceof PatchError) throw err.toApiError()
    throw err
  }
  return writeScale(ctx, def, patched as Obj)
}

export async function updateScale(ctx: RequestContext, def: ResolvedDefinition): Promise<Response> {
  return writeScale(ctx, def, decodeBody(ctx) as Obj)
}

async function writeScale(ctx: RequestContext, def: ResolvedDefinition, body: Obj): Promise<Response> {
  if (!body || typeof body !== 'object') throw badRequest('the body must be a Scale object')
  if (body.apiVersion !== undefined && body.apiVersion !== 'autoscaling/v1') throw badRequest(`the API version in the data (${body.apiVersion}) does not match the expected API version (autoscaling/v1)`)
  const replicas = body.spec?.replicas
  if (!Number.isInteger(replicas) || replicas < 0) {
    throw invalid('Scale.autoscaling', 'autoscaling', 'Scale', ctx.info.name, [fieldInvalid('spec.replicas', replicas ?? null, 'must be greater than or equal to 0')])
  }
  const dry = isDryRun(ctx)
  const clientRv = body.metadata?.resourceVersion ? Number(body.metadata.resourceVersion) : 0
  const gr = { group: def.group, resource: def.resource }
  for (let attempt = 0; attempt < 16; attempt++) {
    const { rec, o, shard, key } = read(def, ctx)
    const curRv = recordRv(rec)
    if (clientRv !== 0 && clientRv !== curRv) throw conflict(gr, ctx.info.name)
    const old = structuredClone(o)
    const path = (def.scale?.specReplicasPath ?? 'spec.replicas').split('.')
    let cur: Obj = o
    for (const p of path.slice(0, -1)) cur = (cur[p] ??= {})
    cur[path[path.length - 1]] = replicas
    // Mutating webhooks see the Scale (upstream's scale storage admits it); the replicas they leave are written.
    const scale = scaleOf(def, o)
    const hooks = admitMutatingHooksOn(ctx, def, 'UPDATE', SCALE_KIND, scale, scaleOf(def, old))
    if (hooks !== undefined && await hooks) {
      const mutatedReplicas = scale.spec?.replicas
      if (!Number.isInteger(mutatedReplicas) || mutatedReplicas < 0) {
        throw invalid('Scale.autoscaling', 'autoscaling', 'Scale', ctx.info.name, [fieldInvalid('spec.replicas', mutatedReplicas ?? null, 'must be greater than or equal to 0')])
      }
      cur[path[path.length - 1]] = mutatedReplicas
    }
    // The parent object itself is not sent to mutating webhooks (admitUpdate leaves a scale's alone).
    const mutated = admitUpdate(ctx, def, o, old, 'main')
    if (mutated) await mutated
    // Admission sees the Scale, as upstream's scale sub-resource hands it on.
    const admitted = admitPolicyOnly(ctx, def, 'UPDATE', SCALE_KIND, scaleOf(def, o), scaleOf(def, old))
    if (admitted) await admitted
    // The writer owns what it changed, under the scale sub-resource (upstream: manager, Update, subresource scale).
    const next = trackFields(ctx, def, old, o, 'scale', Date.now())
    // A dry run answers what the write would store, and stores nothing.
    if (dry) { next.metadata.resourceVersion = String(curRv); return respond(ctx, scaleOf(def, next)) }
    const json = toStoredJson(next)
    const r = await storeOf().put(shard, key, curRv, JSON.stringify(attrsOf(def, next)), json)
    if (r.ok) { next.metadata.resourceVersion = String(r.rv); return respond(ctx, scaleOf(def, next)) }
    if (r.reason === 'conflict') { if (clientRv !== 0) throw conflict(gr, ctx.info.name); continue }
    if (r.reason === 'notfound') throw notFound(gr, ctx.info.name)
    throw internal(r.message ?? r.reason)
  }
  throw conflict(gr, ctx.info.name)
}
