// Reading a request body: the media types taken (JSON, YAML, protobuf, CBOR), decoding into an object of the
// request's type, and field validation (unknown and duplicate fields: Strict, Warn, Ignore).
import { parse as yamlParse, parseDocument, isMap, isSeq, isScalar, visit as yamlVisit } from 'yaml'
import { pruneUnknown, hasDuplicateKeys, duplicateKeys, scrubDecoded, countTextKeys } from '../machinery/field-validation.js'
import { decodeObject as decodePb } from '../machinery/codecs/protobuf.js'
import { decodeCbor, cborTypeOf, CborError } from '../machinery/codecs/cbor.js'
import { PROTOBUF, ORCH_PROTOBUF, CBOR, cborEnabled } from './encode.js'
import { badRequest, invalid, unsupportedMediaType, fieldInvalid } from '../machinery/errors.js'
import { dropNulls } from '../registry/schema.js'
import { treeOf, type Obj, type ResolvedDefinition } from '../registry/define.js'
import type { RequestContext } from './context.js'
import { storedBody } from './convert.js'

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k)

const BODY_TYPES = ['application/json', 'application/yaml', ORCH_PROTOBUF, PROTOBUF]
const BODY_TYPES_CBOR = [...BODY_TYPES, CBOR]

/** The media types request bodies are read in (the list a 415 names). */
export function bodyTypes(): string[] { return cborEnabled() ? BODY_TYPES_CBOR : BODY_TYPES }

/**
 * A CBOR body (gate CBORServingAndStorage): one data item, a map at the top. Unlike JSON, duplicate keys are refused
 * outright (a map with duplicate keys is invalid CBOR), as upstream's decoder does.
 */
export function decodeCborBody(body: Buffer, what = 'the body of the request'): Record<string, unknown> {
  let v: unknown
  try {
    v = decodeCbor(body)
  } catch (err) {
    if (err instanceof CborError) throw badRequest(`${what} could not be decoded as CBOR: ${err.message}`)
    throw err
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw badRequest(`${what} must be a CBOR map (an object), found ${cborTypeOf(body)}`)
  return v as Record<string, unknown>
}

/** Decode a JSON, YAML, protobuf or CBOR request body into plain data. */
export function decodeBody(ctx: RequestContext): unknown {
  const d = decodeBodyDeferred(ctx)
  if (d.json !== undefined && hasDuplicateKeys(d.json, d.value)) ctx.duplicateFields = duplicateKeys(d.json)
  return d.value
}

/**
 * decodeBody without the duplicate-key check of a JSON body: `json` is its text, for the caller to check (with the
 * key count of the value as decoded).
 */
function decodeBodyDeferred(ctx: RequestContext): { value: unknown; json?: string } {
  const ct = (ctx.headers['content-type'] ?? 'application/json').split(';')[0].trim().toLowerCase()
  if (ct === CBOR && cborEnabled()) return { value: decodeCborBody(ctx.body) }
  const text = ct === PROTOBUF || ct === ORCH_PROTOBUF ? '' : ctx.body.toString('utf8')
  if (ct === 'application/json' || ct === '' || ct === '*/*') {
    let v: unknown
    try {
      v = JSON.parse(text)
    } catch (err) {
      throw badRequest(`couldn't get version/kind; json parse error: ${(err as Error).message}`)
    }
    return { value: v, json: text }
  }
  return { value: decodeOtherBody(ctx, ct, text) }
}

function decodeOtherBody(ctx: RequestContext, ct: string, text: string): unknown {
  if (ct === 'application/yaml' || ct === 'application/x-yaml' || ct === 'text/yaml') {
    return parseYaml(ctx, text)
  }
  if (ct === PROTOBUF || ct === ORCH_PROTOBUF) {
    try {
      return decodePb(ctx.body)
    } catch (err) {
      throw badRequest(`the body of the request could not be decoded as protobuf: ${(err as Error).message}`)
    }
  }
  throw unsupportedMediaType(bodyTypes())
}

/** YAML with duplicate keys is accepted and the duplicates are recorded for field validation. */
export function parseYaml(ctx: RequestContext, text: string): unknown {
  // An alias inside the node it names (`a: &x [*x]`) makes a value that contains itself; go-yaml refuses it.
  if (text.includes('*')) refuseSelfContainingAnchors(text)
  try {
    return yamlParse(text)
  } catch (err) {
    const m = /Map keys must be unique/.exec((err as Error).message)
    if (!m) throw badRequest(`error converting YAML to JSON: ${(err as Error).message}`)
  }
  const doc = parseDocument(text, { uniqueKeys: false })
  if (doc.errors.length > 0) throw badRequest(`error converting YAML to JSON: ${doc.errors[0].message}`)
  const v = doc.toJS() as unknown
  ctx.duplicateFields = duplicateKeys(yamlAsJsonWithDuplicates(doc))
  return v
}

function refuseSelfContainingAnchors(text: string): void {
  const doc = parseDocument(text, { uniqueKeys: false })
  if (doc.errors.length > 0) return
  yamlVisit(doc, {
    Alias(_key, node, path) {
      const target = node.resolve(doc)
      if (target !== undefined && path.includes(target)) throw badRequest(`error converting YAML to JSON: yaml: anchor '${node.source}' value contains itself`)
    },
  })
}

/** The YAML document as JSON text that keeps duplicate keys, so the JSON scanner can name them. */
function yamlAsJsonWithDuplicates(doc: ReturnType<typeof parseDocument>): string {
  const emit = (n: unknown): string => {
    if (isMap(n)) return `{${n.items.map((p) => `${JSON.stringify(String(isScalar(p.key) ? p.key.value : p.key))}:${emit(p.value)}`).join(',')}}`
    if (isSeq(n)) return `[${n.items.map(emit).join(',')}]`
    if (isScalar(n)) return JSON.stringify(n.value ?? null)
    return 'null'
  }
  return emit(doc.contents)
}

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict'

export function fieldValidationOf(ctx: RequestContext): FieldValidation {
  const v = ctx.query.get('fieldValidation') ?? ''
  if (v === '' || v === 'Warn') return 'Warn'
  if (v === 'Ignore' || v === 'Strict') return v
  throw badRequest(`fieldValidation: Unsupported value: "${v}": supported values: "Ignore", "Strict", "Warn"`)
}

/**
 * Unknown fields are pruned from the object and, with duplicate keys of the body, warned about (Warn, the default),
 * refused with one 400 naming them all (Strict), or dropped silently (Ignore).
 */
export function checkFields(ctx: RequestContext, def: ResolvedDefinition, o: Obj): void {
  const mode = fieldValidationOf(ctx)
  reportFields(ctx, def, mode, pruneUnknown(o, treeOf(def)))
}

/**
 * dropNulls, then checkFields, in one walk (a patched object): null-valued keys dropped, unknown fields pruned and
 * reported as checkFields reports them.
 */
export function scrubFields(ctx: RequestContext, def: ResolvedDefinition, o: Obj): void {
  const mode = fieldValidationOf(ctx)
  const unknown: string[] = []
  scrubDecoded(o, treeOf(def), unknown)
  reportFields(ctx, def, mode, unknown)
}

function reportFields(ctx: RequestContext, def: ResolvedDefinition, mode: FieldValidation, unknown: string[]): void {
  if (mode === 'Ignore') return
  const problems = [...(ctx.duplicateFields ?? []).map((f) => `duplicate field "${f}"`), ...unknown.map((f) => `unknown field "${f}"`)]
  if (problems.length === 0) return
  if (mode === 'Strict') {
    throw badRequest(`${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: strict decoding error: ${problems.join(', ')}`)
  }
  for (const p of problems) ctx.addWarning(p)
}

/**
 * The body as an object of the path's kind: type meta filled from the path when absent, checked when present. For a
 * type served over another's storage (ctx.conversion; `asStored`: the body is in the stored shape already) the
 * body is decoded and defaulted as the served type, then converted to the stored one (`def`).
 */
export function decodeObject(ctx: RequestContext, def: ResolvedDefinition, asStored = false): Obj {
  if (ctx.conversion !== undefined && !asStored) return storedBody(ctx.conversion, def, decodeObject(ctx, ctx.conversion, true))
  const { value: v, json } = decodeBodyDeferred(ctx)
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw badRequest(`couldn't get version/kind; json parse error: the body is not a JSON object`)
  }
  const o = v as Obj
  if (ctx.aliasGroup !== undefined && o.apiVersion === `${ctx.aliasGroup}/${def.version}`) o.apiVersion = def.apiVersion
  if (o.apiVersion !== undefined && o.apiVersion !== def.apiVersion) {
    throw badRequest(`the API version in the data (${o.apiVersion}) does not match the expected API version (${def.apiVersion})`)
  }
  if (o.kind !== undefined && o.kind !== def.kind) {
    // A custom resource decodes whatever its kind says; upstream's ValidateTypeMeta then refuses it (422).
    if (def.custom !== undefined) {
      const name = o.metadata !== null && typeof o.metadata === 'object' ? String(o.metadata.name ?? '') : ''
      throw invalid(def.groupKind, def.group, def.kind, name, [fieldInvalid('kind', o.kind, `must be ${def.kind}`)])
    }
    throw badRequest(`${o.kind} in version "${def.version}" cannot be handled as a ${def.kind}: no kind "${o.kind}" is registered for version "${def.apiVersion}"`)
  }
  // Keys set here were not in the body (the key count of the decoded value leaves them out).
  const added = (hasOwn(o, 'apiVersion') ? 0 : 1) + (hasOwn(o, 'kind') ? 0 : 1) + (hasOwn(o, 'metadata') ? 0 : 1)
  o.apiVersion = def.apiVersion
  o.kind = def.kind
  if (o.metadata === undefined) o.metadata = {}
  if (o.metadata === null || typeof o.metadata !== 'object' || Array.isArray(o.metadata)) {
    throw invalid(def.groupKind, def.group, def.kind, '', [fieldInvalid('metadata', o.metadata, 'must be an object')])
  }
  if (json === undefined) {
    dropNulls(o)
    if (o.metadata === undefined) o.metadata = {}
    checkFields(ctx, def, o)
    return o
  }
  // A JSON body: nulls dropped, unknown fields pruned and the keys counted for the duplicate check in one walk.
  const mode = fieldValidationOf(ctx)
  const unknown: string[] = []
  const keys = scrubDecoded(o, treeOf(def), unknown) - added
  if (countTextKeys(json) !== keys) ctx.duplicateFields = duplicateKeys(json)
  reportFields(ctx, def, mode, unknown)
  return o
}
