// JSON Patch (RFC 6902, `application/json-patch+json`) through fast-json-patch, with the upstream error mapping:
// an undecodable patch document is 400, more than 10000 operations 413, and any failure while applying (a failed
// `test`, a missing path, an unknown op) 422 Invalid with the generic message. Also home of PatchError, the typed
// error of all patch libraries.
import jsonpatch from 'fast-json-patch'
import type { Operation } from 'fast-json-patch'
import { ApiError, internal } from '../errors.js'
import { jsonClone } from './schema-walk.js'

export type PatchErrorKind = 'BadRequest' | 'Invalid' | 'TooLarge' | 'Internal'

/** The server's generic 422 text (upstream NewGenericServerResponse for StatusUnprocessableEntity). */
export const GENERIC_INVALID_MESSAGE = 'the server rejected our request due to an error in our request'

/**
 * A patch that cannot be applied. `detail` is the underlying error text (upstream `err.Error()`); `toApiError()` gives
 * the Status the server answers with:
 * - BadRequest → 400 BadRequest, message = detail;
 * - Invalid → 422 Invalid, generic message, empty details (the detail is not shown, as upstream);
 * - TooLarge → 413 RequestEntityTooLarge, `Request entity too large: <detail>`;
 * - Internal → 500 InternalError, `Internal error occurred: <detail>`.
 */
export class PatchError extends Error {
  readonly kind: PatchErrorKind
  readonly detail: string
  /** A Status that replaces the generic one of the kind (e.g. the 422 on field `patch` of an undecodable result). */
  readonly status: ApiError | undefined

  constructor(kind: PatchErrorKind, detail: string, status?: ApiError) {
    super(detail)
    this.name = 'PatchError'
    this.kind = kind
    this.detail = detail
    this.status = status
  }

  get code(): number {
    switch (this.kind) {
      case 'BadRequest': return 400
      case 'Invalid': return 422
      case 'TooLarge': return 413
      default: return 500
    }
  }

  toApiError(): ApiError {
    if (this.status) return this.status
    switch (this.kind) {
      case 'BadRequest': return new ApiError(400, 'BadRequest', this.detail)
      // Upstream's NewGenericServerResponse(422, ...): the generic message, the error itself as the one cause.
      case 'Invalid': return new ApiError(422, 'Invalid', GENERIC_INVALID_MESSAGE, { causes: [{ reason: 'UnexpectedServerResponse', message: this.detail }] })
      case 'TooLarge': return new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: ${this.detail}`)
      default: return internal(new Error(this.detail))
    }
  }
}

export const MAX_JSON_PATCH_OPERATIONS = 10000

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test'])

function goKind(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'array'
  if (typeof v === 'object') return 'object'
  return typeof v // string, number, boolean
}

/** Decodes a JSON Patch document (already JSON-parsed): 400 unless it is an array of objects, 413 past 10000 ops. */
export function decode(patch: unknown): Operation[] {
  if (!Array.isArray(patch)) throw new PatchError('BadRequest', `json: cannot unmarshal ${goKind(patch)} into Go value of type jsonpatch.Patch`)
  for (const op of patch) {
    if (op === null || typeof op !== 'object' || Array.isArray(op)) {
      if (op === null) continue // Go decodes a null element to a nil Operation; it fails when applied.
      throw new PatchError('BadRequest', `json: cannot unmarshal ${goKind(op)} into Go value of type jsonpatch.Operation`)
    }
  }
  if (patch.length > MAX_JSON_PATCH_OPERATIONS) {
    throw new PatchError('TooLarge', `The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${patch.length}`)
  }
  return patch as Operation[]
}

/**
 * Applies an RFC 6902 patch to `original` (not modified) and returns the new document. Throws PatchError:
 * BadRequest / TooLarge for the document itself, Invalid (422) for every failure while applying, `test` included.
 */
export function apply<T = unknown>(original: T, patch: unknown): T {
  const ops = decode(patch)
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i] as unknown as Record<string, unknown> | null
    if (op === null) throw new PatchError('Invalid', 'Unexpected kind: unknown')
    if (typeof op.op !== 'string' || !OPS.has(op.op)) throw new PatchError('Invalid', `Unexpected kind: ${String(op.op)}`)
    if (typeof op.path !== 'string') throw new PatchError('Invalid', `${op.op} operation failed to decode path`)
  }
  try {
    const res = jsonpatch.applyPatch(jsonClone(original), ops, true, true, true)
    return res.newDocument
  } catch (e) {
    if (e instanceof PatchError) throw e
    const name = (e as { name?: string }).name
    const text = e instanceof Error ? e.message.split('\n')[0]! : String(e)
    if (name === 'TEST_OPERATION_FAILED') {
      const op = (e as { operation?: { path?: string } }).operation
      throw new PatchError('Invalid', `testing value ${op?.path ?? ''} failed: test failed`)
    }
    throw new PatchError('Invalid', upstreamText(e as JsonPatchFailure) ?? text)
  }
}

interface JsonPatchFailure { name?: string; operation?: { op?: string; path?: string; from?: string }; tree?: unknown }

/** The value at a JSON pointer, or `missing`. */
function at(doc: unknown, pointer: string): unknown {
  if (pointer === '') return doc
  let cur: unknown = doc
  for (const raw of pointer.slice(1).split('/')) {
    const k = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    if (cur === null || typeof cur !== 'object' || !Object.prototype.hasOwnProperty.call(cur, k)) return missing
    cur = (cur as Record<string, unknown>)[k]
  }
  return cur
}
const missing = Symbol('missing')

/**
 * The text upstream's JSON patch library gives for a path that does not resolve (what kubectl shows as the cause):
 * a missing parent says the document lacks the path, a missing last key names the key.
 */
function upstreamText(e: JsonPatchFailure): string | undefined {
  const op = e.operation
  if (op?.path === undefined || (e.name !== 'OPERATION_PATH_UNRESOLVABLE' && e.name !== 'OPERATION_FROM_UNRESOLVABLE')) return undefined
  if (e.name === 'OPERATION_FROM_UNRESOLVABLE') return `${op.op} operation does not apply: doc is missing from path: ${op.from ?? ''}: missing value`
  const path = op.path
  const parent = at(e.tree, path.slice(0, path.lastIndexOf('/')))
  const parentMissing = parent === missing || parent === null || typeof parent !== 'object'
  switch (op.op) {
    case 'remove':
      if (parentMissing) return `remove operation does not apply: doc is missing path: "${path}": missing value`
      return `error in remove for path: '${path}': Unable to remove nonexistent key: ${path.slice(path.lastIndexOf('/') + 1)}: missing value`
    case 'replace':
      if (parentMissing) return `replace operation does not apply: doc is missing path: ${path}: missing value`
      return `replace operation does not apply: doc is missing key: ${path}: missing value`
    case 'add':
      return `add operation does not apply: doc is missing path: "${path}": missing value`
    default:
      return undefined
  }
}
