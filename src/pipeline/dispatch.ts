// The storage stage's shared parts: the store, keys, responses in the negotiated form, dry run and resourceVersion parsing (reads in read.ts, writes in write.ts).
import { badRequest, fieldNotSupported, invalid, tooLargeResourceVersion } from '../machinery/errors.js'
import { objectKey, recordObject, RV_MARKER } from '../machinery/storage-format.js'
import type { Obj, ResolvedDefinition } from '../registry/define.js'
import type { Registry } from '../registry/index.js'
import type { Store } from './store.js'
import type { RequestContext, Response } from './context.js'
import { contentTypeOf, encodeJsonBytes, encodeValue, negotiate, type Alias } from './encode.js'
import { buildTable, metadataFormOf, partialObjectMetadata, tableVersionOf } from './table.js'
import { viewJson } from './convert.js'

/** Live bindings: set once per thread by configureDispatch. */
export let store: Store
export let registry: Registry

export function configureDispatch(s: Store, r: Registry): void { store = s; registry = r }
export function storeOf(): Store { return store }

export function gr(def: ResolvedDefinition) { return { group: def.group, resource: def.resource } }

export function shardOfDef(def: ResolvedDefinition): number { return store.shardFor(def.group, def.resource) }

export function keyFor(def: ResolvedDefinition, namespace: string, name: string): string {
  return objectKey(def.group, def.resource, def.scope === 'Namespaced' ? namespace : '', name)
}

export function objectResponse(ctx: RequestContext, status: number, json: Buffer | string): Response {
  if (ctx.conversion !== undefined) json = viewJson(ctx.conversion, json)
  const tv = ctx.info.verb === 'get' ? tableVersionOf(ctx.headers['accept']) : null
  if (tv && ctx.def) {
    const o = JSON.parse(json.toString()) as Obj
    const table = buildTable(ctx.def, [o], { resourceVersion: o.metadata?.resourceVersion ?? '' }, ctx.query, tv)
    return { status, body: encodeValue(table, 'json', ctx.pretty), contentType: 'application/json', headers: ctx.responseHeaders }
  }
  const pm = ctx.info.verb === 'get' ? metadataFormOf(ctx.headers['accept'], false) : null
  if (pm) {
    const o = JSON.parse(json.toString()) as Obj
    return { status, body: encodeValue(partialObjectMetadata(o, pm), 'json', ctx.pretty), contentType: 'application/json', headers: ctx.responseHeaders }
  }
  const mt = negotiate(ctx.headers['accept'])
  return { status, body: encodeJsonBytes(json, mt, ctx.pretty, aliasOf(ctx)), contentType: contentTypeOf(mt), headers: ctx.responseHeaders }
}

export function valueResponse(ctx: RequestContext, status: number, value: unknown): Response {
  const mt = negotiate(ctx.headers['accept'])
  return { status, body: encodeValue(value, mt, ctx.pretty), contentType: contentTypeOf(mt), headers: ctx.responseHeaders }
}

export function withRv(json: string, rv: number): string {
  const at = json.indexOf(RV_MARKER)
  return at < 0 ? json : json.slice(0, at) + String(rv) + json.slice(at + RV_MARKER.length)
}

const OPTIONS_KIND: Record<string, string> = { create: 'CreateOptions', update: 'UpdateOptions', patch: 'PatchOptions', delete: 'DeleteOptions', deletecollection: 'DeleteOptions' }

export function isDryRun(ctx: RequestContext, opts?: Obj): boolean {
  const qs = ctx.query.getAll('dryRun')
  const vals = [...qs, ...(Array.isArray(opts?.dryRun) ? opts!.dryRun : [])].filter((v) => v !== '')
  if (vals.some((v) => v !== 'All')) {
    // upstream's ValidateDryRun, in the options kind of the verb
    const kind = OPTIONS_KIND[ctx.info.verb] ?? 'CreateOptions'
    throw invalid(`${kind}.meta.orch.io`, 'meta.orch.io', kind, '', [fieldNotSupported('dryRun', vals, ['All'])])
  }
  return vals.length > 0
}

// ---- resourceVersion waits ----

/**
 * An integer query parameter of the options types (timeoutSeconds, gracePeriodSeconds): absent or empty is undefined;
 * anything else not an integer is 400 with the text of Go's strconv (upstream decodes query parameters that way).
 */
export function queryInt(ctx: RequestContext, name: string): number | undefined {
  const v = ctx.query.get(name)
  if (v === null || v === '') return undefined
  if (!/^[+-]?\d+$/.test(v) || !Number.isSafeInteger(Number(v))) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: ${/^[+-]?\d+$/.test(v) ? 'value out of range' : 'invalid syntax'}`)
  return Number(v)
}

/** A boolean query parameter as Go's strconv.ParseBool reads it; absent or empty is undefined, anything else 400. */
export function queryBool(ctx: RequestContext, name: string): boolean | undefined {
  const v = ctx.query.get(name)
  if (v === null || v === '') return undefined
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false
  throw badRequest(`strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`)
}

export function parseRv(s: string, what = 'resourceVersion'): number {
  if (!/^\d+$/.test(s)) throw badRequest(`invalid ${what}: "${s}"`)
  return Number(s)
}

/** Waits until the shard has committed through `rv` (NotOlderThan), or answers 504 Too large resource version. */
export async function waitForVersion(shard: number, rv: number): Promise<void> {
  const deadline = Date.now() + 3000
  for (;;) {
    const wm = store.snapshot(shard)
    if (wm >= rv) return
    if (rv > store.counter() + 1 || Date.now() > deadline) throw tooLargeResourceVersion(rv, wm)
    await new Promise((r) => setTimeout(r, 5))
  }
}

/** The alias pair of a request through an upstream alias path (protobuf answers need it at encode time). */
export function aliasOf(ctx: RequestContext): Alias | undefined {
  if (ctx.versionAlias !== undefined) return ctx.versionAlias
  return ctx.aliasGroup ? [`${ctx.info.group}/`, `${ctx.aliasGroup}/`] : undefined
}


export function parseStored(rec: Buffer): Obj { return JSON.parse(recordObject(rec).toString('utf8')) as Obj }
