// The patch verb: JSON patch, merge patch, strategic merge patch and server-side apply, through the guaranteed update.
import { ApiError, badRequest, conflict, invalid, notFound, unsupportedMediaType, fieldRequired, fieldForbidden } from '../machinery/errors.js'
import { apply as applyJsonPatch, PatchError } from '../machinery/patch/json-patch.js'
import { apply as applyMergePatch } from '../machinery/patch/merge-patch.js'
import { apply as applyStrategic } from '../machinery/patch/strategic-merge.js'
import type { TypeNode } from '../machinery/patch/schema-walk.js'
import { applyPatch, conflictError, ApplyError } from '../machinery/apply/apply.js'
import { treeOf, type Obj, type ResolvedDefinition } from '../registry/define.js'
import type { RequestContext, Response } from './context.js'
import { type UpdateTarget } from './admission.js'
import { checkFields, decodeCborBody, parseYaml, scrubFields } from './decode.js'
import { hasDuplicateKeys, duplicateKeys } from '../machinery/field-validation.js'
import { authorizeVerb } from './authorize.js'
import { gr, keyFor, shardOfDef, storeOf } from './dispatch.js'
import { create, guaranteedUpdate, resetFields, type Mutated } from './write.js'
import { toStored, toView, viewValid } from './crd-convert.js'
import { storedBody, storedObject, viewObject } from './convert.js'
import { isHeadMember } from './status-split.js'

const JSON_PATCH = 'application/json-patch+json'
const MERGE_PATCH = 'application/merge-patch+json'
const STRATEGIC = 'application/strategic-merge-patch+json'
const APPLY_YAML = 'application/apply-patch+yaml'
const APPLY_CBOR = 'application/apply-patch+cbor'

let cborApply = false
export function configurePatch(opts: { cbor: boolean }): void { cborApply = opts.cbor }

/** The patch types of a type: no strategic merge patch for custom resources (upstream's CRD handler leaves it out). */
function patchTypes(def?: ResolvedDefinition): string[] {
  const t = def?.custom !== undefined ? [JSON_PATCH, MERGE_PATCH, APPLY_YAML] : [JSON_PATCH, MERGE_PATCH, STRATEGIC, APPLY_YAML]
  if (cborApply) t.push(APPLY_CBOR)
  return t
}

function parseBody(ctx: RequestContext, yaml: boolean): unknown {
  // An apply body in CBOR (apply-patch+cbor); after a create race the body is JSON again (see serverSideApply).
  if (yaml && cborApply && contentTypeOf(ctx) === APPLY_CBOR) return decodeCborBody(ctx.body, 'the apply patch')
  const text = ctx.body.toString('utf8')
  if (yaml) return parseYaml(ctx, text)
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch (err) {
    throw badRequest(`error decoding patch: ${(err as Error).message}`)
  }
  if (hasDuplicateKeys(text, v)) ctx.duplicateFields = duplicateKeys(text)
  return v
}

function asApiError(err: unknown): unknown {
  if (err instanceof PatchError || err instanceof ApplyError) return err.toApiError()
  return err
}

function isForce(ctx: RequestContext): boolean {
  const f = ctx.query.get('force')
  if (f === null || f === '' || f === 'false') return false
  if (f === 'true') return true
  throw badRequest(`invalid force value: "${f}"`)
}

function contentTypeOf(ctx: RequestContext): string { return (ctx.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase() }

export async function patch(ctx: RequestContext, def: ResolvedDefinition, target: UpdateTarget): Promise<Response> {
  const ct = contentTypeOf(ctx)
  if (!patchTypes(def).includes(ct)) throw unsupportedMediaType(patchTypes(def))
  const name = ctx.info.name
  if (ct === APPLY_YAML || ct === APPLY_CBOR) return serverSideApply(ctx, def, target, name, treeOf(def))
  // A type served over another's storage is patched in its own shape (convert.ts): the stored object is converted to
  // it, patched, checked and defaulted as the served type, and converted back.
  const view = ctx.conversion
  const shown = view ?? def
  const schema = treeOf(shown)
  if (ctx.query.get('force') !== null) {
    throw invalid('PatchOptions.meta.orch.io', 'meta.orch.io', 'PatchOptions', '', [fieldForbidden('force', 'may not be specified for non-apply patch')])
  }
  const body = parseBody(ctx, false)
  const wc = ctx.webhookConversion
  // A version converted by a CRD's conversion webhook: the stored object converted to it through the webhook, patched,
  // and converted back (crd-convert.ts).
  if (wc !== undefined) {
    return guaranteedUpdate(ctx, def, target, name, 0, async (stored, curRv) => {
      const [old] = await toView(wc, [stored])
      const m = patched(ctx, def, ct, structuredClone(old), body, wc.view, undefined, treeOf(wc.view), curRv, name)
      if (target === 'main') viewValid(wc, m.object, old)
      const [o] = await toStored(wc, [m.object])
      return { object: o, tracked: false }
    }, { leavesOldAlone: true })
  }
  return guaranteedUpdate(ctx, def, target, name, 0, (stored, curRv) => {
    const old = view === undefined ? stored : viewObject(view, stored)
    return patched(ctx, def, ct, old, body, shown, view, schema, curRv, name)
  // The three patch forms apply to a copy of the stored object and share nothing with it.
  }, { leavesOldAlone: true, statusOnly: target === 'status' && view === undefined && ct !== JSON_PATCH && touchesStatusOnly(body) })
}

/**
 * Whether a strategic merge or merge patch names nothing at its top but metadata, status and the type meta (no spec, no
 * directive): the status endpoint then needs the stored spec only to keep it (see status-split.ts).
 */
function touchesStatusOnly(body: unknown): boolean {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false
  for (const k in body) if (!isHeadMember(k)) return false
  return true
}

/** A patch applied to `old` (in the shape of `shown`), checked, and (for a type over another's storage) converted. */
function patched(ctx: RequestContext, def: ResolvedDefinition, ct: string, old: Obj, body: unknown, shown: ResolvedDefinition, view: ResolvedDefinition | undefined, schema: TypeNode, curRv: number, name: string): Mutated {
  {
    let out: unknown
    try {
      if (ct === JSON_PATCH) out = applyJsonPatch(old, body)
      else if (ct === MERGE_PATCH) out = applyMergePatch(old, body)
      else out = applyStrategic(old, body, schema)
    } catch (err) { throw asApiError(err) }
    if (out === null || typeof out !== 'object' || Array.isArray(out)) throw badRequest('the patched object is not an object')
    const o = out as Obj
    // A patch that pins a resourceVersion is conditional on it.
    const pinned = o.metadata?.resourceVersion
    if (pinned !== undefined && pinned !== '' && String(pinned) !== String(curRv)) throw conflict(gr(def), name)
    // As upstream's checkName on the patched object: a patch that removes the name (or metadata) does not match.
    const patchedName = o.metadata !== null && typeof o.metadata === 'object' ? o.metadata.name ?? '' : ''
    if (patchedName !== name) throw badRequest(`the name of the object (${typeof patchedName === 'string' ? patchedName : JSON.stringify(patchedName)}) does not match the name on the URL (${name})`)
    // Nulls dropped and unknown fields pruned in one walk (the type meta set after it is what it walked past).
    scrubFields(ctx, shown, o)
    o.apiVersion = shown.apiVersion
    o.kind = shown.kind
    if (view !== undefined) return { object: storedBody(view, def, o), tracked: false }
    return { object: o, tracked: false }
  }
}

async function serverSideApply(ctx: RequestContext, def: ResolvedDefinition, target: UpdateTarget, name: string, schema: TypeNode): Promise<Response> {
  const manager = ctx.query.get('fieldManager')
  if (!manager) {
    throw invalid('PatchOptions.meta.orch.io', 'meta.orch.io', 'PatchOptions', '', [fieldRequired('fieldManager', 'is required for apply patch')])
  }
  const applied = parseBody(ctx, true)
  if (applied === null || typeof applied !== 'object' || Array.isArray(applied)) throw badRequest('error decoding patch: the apply body must be an object')
  let body = applied as Obj
  // A type served over another's storage: the configuration is checked as the served type, then applied in the stored
  // shape (its managedFields name the stored apiVersion and the stored type's fields).
  const view = ctx.conversion
  const shown = view ?? def
  checkFields(ctx, shown, body)
  if (ctx.aliasGroup !== undefined && body.apiVersion === `${ctx.aliasGroup}/${shown.version}`) body.apiVersion = shown.apiVersion
  if (view !== undefined) {
    if (body.apiVersion !== view.apiVersion) {
      throw badRequest(`Incorrect version specified in apply patch. Specified patch version: ${typeof body.apiVersion === 'string' ? body.apiVersion : ''}, expected: ${view.apiVersion}`)
    }
    body = storedObject(view, def, body)
  }
  if (body.metadata?.name !== undefined && body.metadata.name !== name) {
    throw badRequest(`the name of the object (${body.metadata.name}) does not match the name on the URL (${name})`)
  }
  const force = isForce(ctx)
  const store = storeOf()
  const exists = store.getFresh(shardOfDef(def), keyFor(def, ctx.info.namespace, name)) !== undefined
  if (!exists) {
    if (target !== 'main') throw notFound(gr(def), name)
    // Apply creates: that needs the create permission too.
    await authorizeVerb(ctx, 'create')
    let r: ReturnType<typeof applyPatch>
    try {
      r = applyPatch(undefined, body, manager, { force, apiVersion: def.apiVersion, kind: def.kind, now: new Date().toISOString(), schema, ignoredFields: resetFields(def, target) })
    } catch (err) { throw asApiError(err) }
    const o = r.object
    o.metadata = { ...(o.metadata ?? {}), name }
    // The create runs as a POST of the applied object; the request stays what it was for its log line and metrics.
    const asSent = { info: ctx.info, contentType: ctx.headers['content-type'] }
    ctx.body = Buffer.from(JSON.stringify(o))
    ctx.headers['content-type'] = 'application/json'
    ctx.info = { ...ctx.info, name: '' }
    try {
      return await create(ctx, def, { tracked: true, stored: true })
    } catch (err) {
      if (err instanceof ApiError && err.code === 409 && err.reason === 'AlreadyExists') {
        // Created meanwhile: apply onto it.
        ctx.info = asSent.info
        ctx.body = Buffer.from(JSON.stringify(applied))
        return await serverSideApply(ctx, def, target, name, schema)
      }
      throw err
    } finally {
      ctx.info = asSent.info
      ctx.headers['content-type'] = asSent.contentType
    }
  }
  return guaranteedUpdate(ctx, def, target, name, 0, (old) => {
    let r: ReturnType<typeof applyPatch>
    try {
      r = applyPatch(old, structuredClone(body), manager, { force, apiVersion: def.apiVersion, kind: def.kind, now: new Date().toISOString(), schema, subresource: target === 'main' ? undefined : target, ignoredFields: resetFields(def, target) })
    } catch (err) { throw asApiError(err) }
    if (r.conflicts.length > 0) throw conflictError(r.conflicts, manager)
    return { object: r.object, tracked: true }
  })
}
