// Shared storage: a type served over another type's objects (ResourceDefinition.sharedStorage) is converted at the edges of its requests.
//
// route() hands the verb handlers the stored definition and keeps the served one in ctx.conversion: keys, shard,
// watch ring, field attributes, validation and managedFields are the stored type's. What comes in (bodies, patches,
// apply configurations, field selectors) is converted to the stored shape; what goes out (objects, list items, watch
// events, bookmarks, Table rows) to the served one. A request of any other type pays one property check at each edge.
import { badRequest } from '../machinery/errors.js'
import type { FieldRequirement } from '../machinery/selectors.js'
import { fillZeroValues, type Obj, type ResolvedDefinition } from '../registry/define.js'

/** `o` with its type meta set to `def`'s, first (kind, apiVersion, metadata, the rest: the order of every answer). */
function typed(def: ResolvedDefinition, o: Obj): Obj {
  const out: Obj = { kind: def.kind, apiVersion: def.apiVersion }
  if (o.metadata !== undefined) out.metadata = o.metadata
  for (const k of Object.keys(o)) if (k !== 'kind' && k !== 'apiVersion' && k !== 'metadata') out[k] = o[k]
  return out
}

/** A stored object as the served type `view` shows it. */
export function viewObject(view: ResolvedDefinition, stored: Obj): Obj {
  return typed(view, view.sharedStorage!.fromStored(stored))
}

/** A stored object's JSON as the served type `view` shows it. */
export function viewJson(view: ResolvedDefinition, storedJson: Buffer | Uint8Array | string): string {
  const text = typeof storedJson === 'string' ? storedJson : Buffer.from(storedJson.buffer, storedJson.byteOffset, storedJson.byteLength).toString('utf8')
  return JSON.stringify(viewObject(view, JSON.parse(text) as Obj))
}

/** An object (or apply configuration) of the served type `view` in the shape of `stored`. */
export function storedObject(view: ResolvedDefinition, stored: ResolvedDefinition, o: Obj): Obj {
  return typed(stored, view.sharedStorage!.toStored(o))
}

/**
 * A decoded body of the served type made a body of the stored one: defaulted in its own shape first (upstream
 * defaults the version the client wrote, then converts), then converted.
 */
export function storedBody(view: ResolvedDefinition, stored: ResolvedDefinition, o: Obj): Obj {
  view.strategy.default?.(o)
  if (view.zeroSpec !== undefined) fillZeroValues(o, view.zeroSpec)
  return storedObject(view, stored, o)
}

/**
 * Field selector requirements of the served type as the stored type's field names (upstream's field label
 * conversion); metadata.name and metadata.namespace are the same in both. A name the served type does not convert is
 * 400, as upstream's conversion refuses it.
 */
export function storedFieldRequirements(view: ResolvedDefinition, fields: FieldRequirement[]): FieldRequirement[] {
  const labels = view.sharedStorage!.fieldLabels
  return fields.map((f) => {
    if (f.field === 'metadata.name' || f.field === 'metadata.namespace') return f
    const to = labels?.[f.field]
    if (to === undefined) throw badRequest(`field label not supported: ${f.field}`)
    return { ...f, field: to }
  })
}
