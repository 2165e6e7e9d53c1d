// The generated schema data: loaded once, adapted for ajv, compiled per kind on first use; type errors become FieldErrors.
import { existsSync, readFileSync } from 'node:fs'
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import type { FieldError } from '../machinery/errors.js'
import { canonicalQuantity, ERR_QUANTITY_FORMAT, QUANTITY_REGEX, quantityParseError } from '../machinery/quantity.js'

export type SchemaNode = Record<string, any>

let definitions: Record<string, SchemaNode> | undefined

/** The renamed upstream definitions (src/registry/schemas/definitions.json, written by scripts/gen-schemas.mjs). */
export function loadDefinitions(): Record<string, SchemaNode> {
  if (!definitions) {
    // Next to this module when run from source; from dist/, the source tree holds the data.
    const here = new URL('./schemas/definitions.json', import.meta.url)
    const url = existsSync(here) ? here : new URL('../../../src/registry/schemas/definitions.json', import.meta.url)
    definitions = (JSON.parse(readFileSync(url, 'utf8')) as { definitions: Record<string, SchemaNode> }).definitions
  }
  return definitions
}

/** The grammar a Quantity string must match to decode (upstream's message quotes it). */
export const QUANTITY_PATTERN = QUANTITY_REGEX

/** Swagger 2 leaves to JSON Schema for ajv: int-or-string, quantities, free-form JSON, integer ranges, no formats. */
function adapt(name: string, node: SchemaNode): SchemaNode {
  if (name.endsWith('.IntOrString')) return { type: ['integer', 'string'] }
  if (name.endsWith('.Quantity')) return { type: ['string', 'number'], pattern: QUANTITY_PATTERN, orchQuantity: true }
  if (/\.JSON(SchemaPropsOr\w+)?$/.test(name)) return {}
  return strip(node)
}

function strip(node: unknown): any {
  if (Array.isArray(node)) return node.map(strip)
  if (node === null || typeof node !== 'object') return node
  const out: SchemaNode = {}
  const n = node as SchemaNode
  if (n.type === 'integer' && n.format === 'int32') { out.minimum = -2147483648; out.maximum = 2147483647 }
  for (const [k, v] of Object.entries(n)) {
    if (k === 'format' || k.startsWith('x-') || k === 'description') continue
    if (k === 'required') continue // Go decoding does not require fields; the strategies check what must be set.
    out[k] = k === 'properties' ? Object.fromEntries(Object.entries(v as SchemaNode).map(([pk, pv]) => [pk, strip(pv)])) : strip(v)
  }
  if (out.format === 'int-or-string') return { type: ['integer', 'string'] }
  return out
}

/** Drops null-valued object keys in place: a JSON null decodes to the zero value, as in Go. */
export function dropNulls(v: unknown): void {
  if (Array.isArray(v)) { for (const x of v) dropNulls(x); return }
  if (v === null || typeof v !== 'object') return
  const o = v as Record<string, unknown>
  for (const k of Object.keys(o)) {
    if (o[k] === null) delete o[k]
    else dropNulls(o[k])
  }
}

const typeNames: Record<string, string> = { string: 'string', integer: 'integer', number: 'number', boolean: 'boolean', object: 'object', array: 'array' }

function jsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array'
  if (v === null) return 'null'
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number'
  return typeof v
}

/** `/spec/containers/0/image` → `spec.containers[0].image`, using the object to tell list indices from keys. */
export function fieldPath(obj: unknown, instancePath: string): string {
  const segs = instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
  let out = ''
  let cur: any = obj
  for (const s of segs) {
    if (Array.isArray(cur)) out += `[${s}]`
    else if (cur !== null && typeof cur === 'object' && /[^A-Za-z0-9_-]/.test(s) && out !== '') out += `[${s}]`
    else out += out === '' ? s : `.${s}`
    cur = cur?.[s]
  }
  return out
}

function valueAt(obj: unknown, instancePath: string): unknown {
  let cur: any = obj
  for (const s of instancePath.split('/').slice(1)) cur = cur?.[s.replace(/~1/g, '/').replace(/~0/g, '~')]
  return cur
}

/**
 * Go's decoder error for a JSON value that does not fit its target: `json: cannot unmarshal <value> into Go struct
 * field <Struct.path> of type <type>`. A number an integer cannot hold (a fraction, or too large) is named with its text.
 */
export function unmarshalText(value: unknown, field: string, target: string, overflow = false): string {
  const word = typeof value === 'number' ? (target.startsWith('int') && (!Number.isInteger(value) || overflow) ? `number ${value}` : 'number')
    : typeof value === 'boolean' ? 'bool' : typeof value === 'string' ? 'string' : Array.isArray(value) ? 'array' : 'object'
  return `json: cannot unmarshal ${word} into Go struct field ${field} of type ${target}`
}

const DEF_REF = '#/definitions/'

/** The Go type upstream decodes a schema node into, as its decoder names it (`string`, `int32`, `[]v1.Container`). */
function goType(node: SchemaNode | undefined, defs: Record<string, SchemaNode>): string {
  if (node === undefined) return 'interface {}'
  if (typeof node.$ref === 'string') {
    const parts = node.$ref.slice(DEF_REF.length).split('.')
    return `${parts[parts.length - 2]}.${parts[parts.length - 1]}`
  }
  switch (node.type) {
    case 'string': return 'string'
    case 'boolean': return 'bool'
    case 'number': return 'float64'
    case 'integer': return node.format === 'int32' ? 'int32' : 'int64'
    case 'array': return `[]${goType(node.items, defs)}`
    case 'object': return node.additionalProperties !== undefined ? `map[string]${goType(node.additionalProperties, defs)}` : 'map[string]interface {}'
  }
  return 'interface {}'
}

/**
 * Go's text for a JSON value of the wrong type (`json: cannot unmarshal number into Go struct field ConfigMap.data of
 * type string`): the innermost struct's name, the path of field names from the root (no indices, no map keys), and
 * the type of the target. Undefined when the path does not resolve in the schema.
 */
function unmarshalTypeText(defs: Record<string, SchemaNode>, root: string, instancePath: string, value: unknown, overflow = false): string | undefined {
  let node: SchemaNode | undefined = defs[root]
  let struct = root
  const fields: string[] = []
  const resolve = () => {
    while (node !== undefined && typeof node.$ref === 'string') {
      struct = node.$ref.slice(DEF_REF.length)
      node = defs[struct]
    }
  }
  resolve()
  const segs = instancePath.split('/').slice(1)
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i].replace(/~1/g, '/').replace(/~0/g, '~')
    if (node === undefined) return undefined
    if (node.properties !== undefined && Object.prototype.hasOwnProperty.call(node.properties, seg)) {
      fields.push(seg)
      node = node.properties[seg]
    } else if (node.type === 'array') node = node.items
    else if (node.additionalProperties !== undefined) node = node.additionalProperties
    else return undefined
    // The target of the last segment is named as it is declared ($ref included); only the way there resolves.
    if (i < segs.length - 1) resolve()
  }
  if (fields.length === 0) return undefined
  const target = goType(node, defs)
  return unmarshalText(value, `${struct.split('.').at(-1)}.${fields.join('.')}`, target, overflow)
}

function toFieldError(obj: unknown, e: ErrorObject, defs: Record<string, SchemaNode>, root: string): FieldError {
  const field = fieldPath(obj, e.instancePath)
  const value = valueAt(obj, e.instancePath)
  if (e.keyword === 'type') {
    // A built-in type fails to decode a value of the wrong JSON type: upstream answers 400 with Go's text.
    const text = unmarshalTypeText(defs, root, e.instancePath, value)
    if (text !== undefined) return { type: 'FieldValueTypeInvalid', field, value, decode: true, detail: text }
    const want = ([] as string[]).concat((e.params as { type: string | string[] }).type).map((t) => typeNames[t] ?? t).join(' or ')
    return { type: 'FieldValueTypeInvalid', field, value, detail: `${field} in body must be of type ${want}: ${JSON.stringify(jsonType(value))}` }
  }
  if (e.keyword === 'pattern' && (e.params as { pattern?: string }).pattern === QUANTITY_PATTERN) {
    // Upstream fails to decode these (a quantity that does not parse, an int32 out of range): `decode` marks them.
    return { type: 'FieldValueInvalid', field, value, decode: true, detail: ERR_QUANTITY_FORMAT }
  }
  if (e.keyword === 'orchQuantity') return { type: 'FieldValueInvalid', field, value, decode: true, detail: e.message ?? 'unable to parse quantity' }
  if (e.keyword === 'minimum' || e.keyword === 'maximum') {
    const text = unmarshalTypeText(defs, root, e.instancePath, value, true) ?? `json: cannot unmarshal number ${String(value)} into Go struct field ${field} of type int32`
    return { type: 'FieldValueInvalid', field, value, decode: true, detail: text }
  }
  if (e.keyword === 'enum') {
    return { type: 'FieldValueNotSupported', field, value, supported: (e.params as { allowedValues: unknown[] }).allowedValues.map(String) }
  }
  return { type: 'FieldValueInvalid', field, value, detail: e.message ?? e.keyword }
}

/**
 * The `orchQuantity` keyword: a quantity that matches the grammar but does not parse is a decode error (upstream's
 * text); one that parses is replaced by upstream's serialisation of it (`1000m` → `1`, `0.5` → `500m`), as a Go
 * client reads it back. What fails the type or the pattern is left to those keywords.
 */
function canonicalizeQuantity(this: unknown, _schema: unknown, data: unknown, _parent?: unknown, cxt?: { parentData: any; parentDataProperty: string | number }): boolean {
  if (typeof data !== 'string' && typeof data !== 'number') return true
  if (typeof data === 'string' && !QUANTITY_RE.test(data)) return true
  // One parse when it is good; the error text is worked out only for a quantity that fails.
  const c = canonicalQuantity(data)
  if (c === undefined) {
    (canonicalizeQuantity as unknown as { errors: unknown[] }).errors = [{ keyword: 'orchQuantity', message: quantityParseError(data) ?? ERR_QUANTITY_FORMAT, params: {} }]
    return false
  }
  if (c !== data && cxt !== undefined) cxt.parentData[cxt.parentDataProperty] = c
  return true
}
const QUANTITY_RE = new RegExp(QUANTITY_PATTERN)

export class SchemaSet {
  #ajv: Ajv
  #compiled = new Map<string, ValidateFunction>()
  #defs: Record<string, SchemaNode>

  constructor(defs: Record<string, SchemaNode> = loadDefinitions()) {
    this.#defs = defs
    this.#ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false })
    this.#ajv.addKeyword({ keyword: 'orchQuantity', modifying: true, errors: true, validate: canonicalizeQuantity })
    const adapted: Record<string, SchemaNode> = {}
    for (const [k, v] of Object.entries(defs)) adapted[k] = adapt(k, v)
    this.#ajv.addSchema({ $id: 'orch', definitions: adapted })
  }

  /** Type errors of an object against a definition (nulls must already be dropped). */
  validate(ref: string, obj: unknown): FieldError[] {
    let fn = this.#compiled.get(ref)
    if (!fn) {
      fn = this.#ajv.compile({ $ref: `orch#/definitions/${ref}` })
      this.#compiled.set(ref, fn)
    }
    if (fn(obj)) return []
    return (fn.errors ?? []).filter((e) => e.keyword !== 'anyOf' && e.keyword !== 'oneOf').map((e) => toFieldError(obj, e, this.#defs, ref))
  }
}
