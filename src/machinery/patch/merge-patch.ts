// JSON Merge Patch (RFC 7386, `application/merge-patch+json`) with the semantics of the library upstream uses
// (evanphx/json-patch MergePatch): objects merge recursively, `null` deletes a key, anything else (arrays included)
// replaces; nulls inside newly added values are pruned.
import { ApiError } from '../errors.js'
import { PatchError } from './json-patch.js'
import { isObject, jsonClone } from './schema-walk.js'
import { setOwn } from '../json-tree.js'

function pruneNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map((x) => (x === null ? null : pruneNulls(x)))
  if (isObject(v)) {
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(v)) if (v[k] !== null) setOwn(out, k, pruneNulls(v[k]))
    return out
  }
  return v
}

function mergeInto(doc: Record<string, unknown>, patch: Record<string, unknown>): void {
  for (const k of Object.keys(patch)) {
    const pv = patch[k]
    if (pv === null) { delete doc[k]; continue }
    const cur = doc[k]
    if (cur === undefined || cur === null || !isObject(cur) || !isObject(pv)) {
      setOwn(doc, k, pruneNulls(jsonClone(pv)))
      continue
    }
    mergeInto(cur, pv)
  }
}

/**
 * Applies a merge patch to `original` (not modified) and returns the result. A `null` patch is 400
 * `Invalid JSON Patch` (as upstream); a patch that is not an object replaces the whole document, which the caller's
 * decoding then rejects (upstream: 422 Invalid on field `patch`), so it is reported here as PatchError Invalid.
 */
export function apply<T = unknown>(original: T, patch: unknown): T {
  if (patch === null || patch === undefined) throw new PatchError('BadRequest', 'Invalid JSON Patch')
  if (!isObject(patch)) {
    // Upstream takes the patch as the new document, whose decoding fails: 422 on field `patch` (empty group kind).
    const text = JSON.stringify(patch)
    const detail = `json: cannot unmarshal ${Array.isArray(patch) ? 'array' : typeof patch} into Go value of type map[string]interface {}`
    const body = `Invalid value: ${JSON.stringify(text)}: ${detail}`
    throw new PatchError('Invalid', detail, new ApiError(422, 'Invalid', ` "" is invalid: patch: ${body}`, { causes: [{ reason: 'FieldValueInvalid', message: body, field: 'patch' }] }))
  }
  const doc = isObject(original) ? jsonClone(original) : {}
  mergeInto(doc as Record<string, unknown>, patch)
  return doc as T
}
