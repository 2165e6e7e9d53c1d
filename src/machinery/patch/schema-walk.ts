// The "type tree" of a kind: what the schema data says about every step of a path (struct / map / list / scalar /
// untyped), with the list and map semantics of server-side apply and the patch strategies of strategic merge patch.
// Resolution is lazy and cached per schema node, so each kind's tree is built once and every later step is a lookup.
import type { SchemaNode } from '../../registry/schema.js'
import { setOwn } from '../json-tree.js'

export type NodeKind = 'scalar' | 'struct' | 'map' | 'list' | 'untyped'
/** Server-side apply list semantics. */
export type ListType = 'atomic' | 'set' | 'map'
/** Server-side apply map / struct semantics. */
export type MapType = 'atomic' | 'granular'

const REF_PREFIX = '#/definitions/'

/** Definitions whose values are scalars whatever their schema says. */
function scalarDefinition(name: string): boolean {
  return /\.(IntOrString|Quantity|Time|MicroTime)$/.test(name)
}
/** Definitions that hold arbitrary JSON. */
function untypedDefinition(name: string): boolean {
  return /\.JSON$/.test(name)
}

/**
 * Key fields of list-map items with a default (upstream: the `default` of the OpenAPI v3 models). Our schema data is
 * the v2 document, which has none, so the defaults that matter for keys are listed here.
 */
const KEY_DEFAULTS: Record<string, Record<string, unknown>> = {
  'io.orch.api.core.v1.ContainerPort': { protocol: 'TCP' },
  'io.orch.api.core.v1.ServicePort': { protocol: 'TCP' },
}

/**
 * Struct fields that the Go types hold by value (never omitted when serialized), besides the `required` ones: their
 * node is "already there" in any object, so an Update never records it as added (no `.` entry).
 */
const VALUE_STRUCT_FIELDS = new Set([
  'metadata', 'spec', 'status', 'template', 'strategy', 'updateStrategy', 'jobTemplate', 'resources', 'nodeInfo', 'daemonEndpoints',
  'kubeletEndpoint', 'state', 'lastState', 'source', 'loadBalancer', 'conditions',
])
const POINTER_STRUCT_FIELDS = new Set(['io.orch.api.core.v1.ReplicationControllerSpec.template', 'io.orch.api.core.v1.PodSpec.resources'])

function splitStrategies(v: unknown): string[] {
  return typeof v === 'string' && v !== '' ? v.split(',').map((s) => s.trim()).filter((s) => s !== '') : []
}

function refName(s: SchemaNode): string | undefined {
  if (typeof s.$ref === 'string' && s.$ref.startsWith(REF_PREFIX)) return s.$ref.slice(REF_PREFIX.length)
  if (Array.isArray(s.allOf) && s.allOf.length === 1 && typeof s.allOf[0]?.$ref === 'string') return refName(s.allOf[0])
  return undefined
}

function schemaType(s: SchemaNode): string | undefined {
  if (typeof s.type === 'string') return s.type
  if (Array.isArray(s.type)) {
    const t = s.type.filter((x: unknown) => x !== 'null')
    return t.length === 1 ? t[0] : undefined
  }
  return undefined
}

/** Shared, lazily filled part of a node: the shape of the type behind it. */
class Shape {
  readonly fieldCache = new Map<string, TypeNode>()
  /** alwaysPresent answers by field name (asked for every key one side of an update lacks). */
  readonly presentCache = new Map<string, boolean>()
  elemNode: TypeNode | undefined
  constructor(
    readonly resolver: Resolver | undefined,
    readonly kind: NodeKind,
    readonly name: string | undefined,
    readonly props: Record<string, SchemaNode> | undefined,
    readonly required: ReadonlySet<string>,
    /** list items, map values, or the type of unknown struct fields (preserve-unknown-fields). */
    readonly elemSchema: SchemaNode | undefined,
    readonly preserveUnknownFields: boolean,
  ) {}
}

export interface NodeMarkers {
  patchStrategies: readonly string[]
  patchMergeKey: string | undefined
  listType: ListType
  listMapKeys: readonly string[]
  mapType: MapType
}

/** One node of the type tree. */
export class TypeNode {
  readonly #shape: Shape
  readonly kind: NodeKind
  /** The definition name behind this node, when it came from a `$ref`. */
  readonly name: string | undefined
  /** Strategic-merge-patch strategies of the field holding this value (`merge`, `replace`, `retainKeys`). */
  readonly patchStrategies: readonly string[]
  /** Strategic-merge-patch merge key of the list held by this field. */
  readonly patchMergeKey: string | undefined
  /** SSA list semantics (lists only; atomic otherwise). */
  readonly listType: ListType
  /** SSA key fields of a list-map. */
  readonly listMapKeys: readonly string[]
  /** SSA element relationship of a struct or map (granular unless marked atomic). */
  readonly mapType: MapType

  constructor(shape: Shape, markers: NodeMarkers) {
    this.#shape = shape
    this.kind = shape.kind
    this.name = shape.name
    this.patchStrategies = markers.patchStrategies
    this.patchMergeKey = markers.patchMergeKey
    this.listType = markers.listType
    this.listMapKeys = markers.listMapKeys
    this.mapType = markers.mapType
  }

  /** The same type with other field-level markers (a `$ref` property carrying its own extensions). */
  withMarkers(m: Partial<NodeMarkers>): TypeNode {
    return new TypeNode(this.#shape, {
      patchStrategies: m.patchStrategies ?? this.patchStrategies,
      patchMergeKey: m.patchMergeKey ?? this.patchMergeKey,
      listType: m.listType ?? this.listType,
      listMapKeys: m.listMapKeys ?? this.listMapKeys,
      mapType: m.mapType ?? this.mapType,
    })
  }

  get preserveUnknownFields(): boolean { return this.#shape.preserveUnknownFields }

  /** True for nodes whose value is owned as one unit by SSA (scalars, atomic lists/maps/structs). */
  get atomic(): boolean {
    if (this.kind === 'scalar') return true
    if (this.kind === 'list') return this.listType === 'atomic'
    if (this.kind === 'struct' || this.kind === 'map') return this.mapType === 'atomic'
    return false
  }

  /** Whether `name` is a declared field of this struct. */
  hasField(name: string): boolean {
    return this.kind === 'struct' && this.#shape.props !== undefined && Object.prototype.hasOwnProperty.call(this.#shape.props, name)
  }

  /** Whether a struct also takes keys it does not declare (additionalProperties). */
  get allowsAdditional(): boolean { return this.#shape.elemSchema !== undefined }

  /** Declared field names of a struct. */
  fieldNames(): string[] { return this.kind === 'struct' && this.#shape.props ? Object.keys(this.#shape.props) : [] }

  /** The declared field of a struct, or undefined. */
  field(name: string): TypeNode | undefined {
    if (!this.hasField(name)) return undefined
    const shape = this.#shape
    let n = shape.fieldCache.get(name)
    if (!n) {
      n = resolveNode(shape.resolver, shape.props![name]!)
      shape.fieldCache.set(name, n)
    }
    return n
  }

  /** The type at key `name` of an object value: struct field, map element, or untyped. */
  child(name: string): TypeNode {
    if (this.kind === 'struct') {
      const f = this.field(name)
      if (f) return f
      return this.#shape.elemSchema !== undefined ? this.elem() : UNTYPED
    }
    if (this.kind === 'map') return this.elem()
    return UNTYPED
  }

  /** The item type of a list (untyped for anything else). */
  get item(): TypeNode {
    return this.kind === 'list' ? this.elem() : UNTYPED
  }

  private elem(): TypeNode {
    const shape = this.#shape
    if (!shape.elemNode) shape.elemNode = shape.elemSchema === undefined ? UNTYPED : resolveNode(shape.resolver, shape.elemSchema)
    return shape.elemNode
  }

  /** The schema default of a field of this struct (used for list-map key fields the item omits). */
  keyDefault(field: string): unknown {
    const shape = this.#shape
    const p = shape.props?.[field]
    if (p && Object.prototype.hasOwnProperty.call(p, 'default')) return p.default
    if (shape.name !== undefined) return KEY_DEFAULTS[shape.name]?.[field]
    return undefined
  }

  /**
   * Whether the Go type of this struct always serializes field `name` (non-omitempty, or a struct held by value):
   * such a node exists in every object, so its own path is never "added" or "removed" by an update.
   */
  alwaysPresent(name: string): boolean {
    if (this.kind !== 'struct') return false
    const shape = this.#shape
    let p = shape.presentCache.get(name)
    if (p === undefined) {
      p = this.#alwaysPresent(name)
      // Declared fields only: undeclared names come from clients and are answered without being kept.
      if (this.hasField(name)) shape.presentCache.set(name, p)
    }
    return p
  }

  #alwaysPresent(name: string): boolean {
    const shape = this.#shape
    if (shape.required.has(name)) return true
    if (!VALUE_STRUCT_FIELDS.has(name)) return false
    if (shape.name !== undefined && POINTER_STRUCT_FIELDS.has(`${shape.name}.${name}`)) return false
    const f = this.field(name)
    return f !== undefined && f.kind === 'struct'
  }
}

const NO_MARKERS: NodeMarkers = { patchStrategies: [], patchMergeKey: undefined, listType: 'atomic', listMapKeys: [], mapType: 'granular' }

/** Any JSON: objects are granular maps of untyped values, lists are atomic, the rest scalars. */
export const UNTYPED: TypeNode = new TypeNode(new Shape(undefined, 'untyped', undefined, undefined, new Set(), undefined, true), NO_MARKERS)
/** A scalar leaf. */
export const SCALAR: TypeNode = new TypeNode(new Shape(undefined, 'scalar', undefined, undefined, new Set(), undefined, false), NO_MARKERS)

class Resolver {
  readonly defs: Record<string, SchemaNode>
  readonly byDef = new Map<string, TypeNode>()
  readonly bySchema = new WeakMap<object, TypeNode>()
  constructor(defs: Record<string, SchemaNode>) { this.defs = defs }

  def(name: string): TypeNode {
    let n = this.byDef.get(name)
    if (n) return n
    if (scalarDefinition(name)) n = SCALAR
    else if (untypedDefinition(name)) n = UNTYPED
    else {
      const s = this.defs[name]
      n = s === undefined ? UNTYPED : buildNode(this, s, name)
    }
    this.byDef.set(name, n)
    return n
  }
}

function markersOf(s: SchemaNode, base: NodeMarkers): NodeMarkers {
  const strategies = s['x-orch-patch-strategy'] !== undefined ? splitStrategies(s['x-orch-patch-strategy']) : base.patchStrategies
  const mergeKey = typeof s['x-orch-patch-merge-key'] === 'string' ? s['x-orch-patch-merge-key'] as string : base.patchMergeKey
  let listType = base.listType
  let keys = base.listMapKeys
  const lt = s['x-orch-list-type']
  if (lt === 'atomic' || lt === 'set' || lt === 'map') {
    listType = lt
    keys = lt === 'map' && Array.isArray(s['x-orch-list-map-keys']) ? (s['x-orch-list-map-keys'] as unknown[]).filter((k): k is string => typeof k === 'string') : []
  } else if (s['x-orch-patch-strategy'] !== undefined) {
    // No list type: a `merge` strategy reads as a list-map keyed by the merge key (a set without a key).
    if (strategies.includes('merge')) {
      if (mergeKey !== undefined) { listType = 'map'; keys = [mergeKey] } else { listType = 'set'; keys = [] }
    } else { listType = 'atomic'; keys = [] }
  }
  const mt = s['x-orch-map-type']
  const mapType: MapType = mt === 'atomic' ? 'atomic' : mt === 'granular' ? 'granular' : base.mapType
  return { patchStrategies: strategies, patchMergeKey: mergeKey, listType, listMapKeys: keys, mapType }
}

const MARKER_KEYS = ['x-orch-patch-strategy', 'x-orch-patch-merge-key', 'x-orch-list-type', 'x-orch-list-map-keys', 'x-orch-map-type']

function resolveNode(resolver: Resolver | undefined, s: SchemaNode): TypeNode {
  if (s === null || typeof s !== 'object') return UNTYPED
  if (resolver) {
    const cached = resolver.bySchema.get(s)
    if (cached) return cached
  }
  let n: TypeNode
  const ref = refName(s)
  if (ref !== undefined) {
    const base = resolver ? resolver.def(ref) : UNTYPED
    n = MARKER_KEYS.some((k) => s[k] !== undefined) ? base.withMarkers(markersOf(s, base)) : base
  } else {
    n = buildNode(resolver, s, undefined)
  }
  if (resolver) resolver.bySchema.set(s, n)
  return n
}

function buildNode(resolver: Resolver | undefined, s: SchemaNode, name: string | undefined): TypeNode {
  const markers = markersOf(s, NO_MARKERS)
  const preserve = s['x-orch-preserve-unknown-fields'] === true
  if (s['x-orch-int-or-string'] === true || s.format === 'int-or-string') return SCALAR.withMarkers(markers)
  const t = schemaType(s)
  if (t === 'array') {
    return new TypeNode(new Shape(resolver, 'list', name, undefined, new Set(), s.items ?? {}, false), markers)
  }
  const props = s.properties !== null && typeof s.properties === 'object' && !Array.isArray(s.properties) ? s.properties as Record<string, SchemaNode> : undefined
  const additional = s.additionalProperties
  if (props && Object.keys(props).length > 0) {
    const required = new Set<string>(Array.isArray(s.required) ? s.required.filter((x: unknown): x is string => typeof x === 'string') : [])
    const extra = preserve ? {} : additional !== undefined && additional !== false ? (additional === true ? {} : additional) : undefined
    return new TypeNode(new Shape(resolver, 'struct', name, props, required, extra, preserve), markers)
  }
  if (t === 'object' || additional !== undefined) {
    const elem = additional === undefined || additional === true || additional === false ? {} : additional
    return new TypeNode(new Shape(resolver, 'map', name, undefined, new Set(), elem, preserve), markers)
  }
  if (t === 'string' || t === 'integer' || t === 'number' || t === 'boolean') return SCALAR.withMarkers(markers)
  return UNTYPED.withMarkers(markers)
}

const resolvers = new WeakMap<object, Resolver>()

function resolverFor(defs: Record<string, SchemaNode>): Resolver {
  let r = resolvers.get(defs)
  if (!r) { r = new Resolver(defs); resolvers.set(defs, r) }
  return r
}

/** The type tree of a definition (e.g. a kind's `schemaRef`), cached per definitions map. */
export function typeTree(defs: Record<string, SchemaNode>, rootName: string): TypeNode {
  return resolverFor(defs).def(rootName)
}

/** The type tree of an inline schema (e.g. a CRD's structural schema); `$ref`s resolve against `defs`. */
export function typeFromSchema(schema: SchemaNode, defs?: Record<string, SchemaNode>): TypeNode {
  return resolveNode(defs ? resolverFor(defs) : new Resolver({}), schema)
}

/** The type at a path of keys (object keys as strings, list positions as numbers). */
export function typeAt(root: TypeNode, path: ReadonlyArray<string | number>): TypeNode {
  let n = root
  for (const step of path) n = typeof step === 'number' ? n.item : n.child(step)
  return n
}

// ---- small JSON helpers shared by the patch and apply code ----

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json }

export function isObject(v: unknown): v is Record<string, any> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

const hasOwn = Object.prototype.hasOwnProperty

/** Deep copy of JSON data. */
export function jsonClone<T>(v: T): T {
  if (v === null || typeof v !== 'object') return v
  if (Array.isArray(v)) {
    const n = v.length
    const out = new Array(n)
    for (let i = 0; i < n; i++) out[i] = jsonClone(v[i])
    return out as unknown as T
  }
  // for-in over own keys, not Object.keys: no key array per object (the same keys in the same order, assigned alike)
  const src = v as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const k in src) if (hasOwn.call(src, k)) setOwn(out, k, jsonClone(src[k]))
  return out as T
}

/** Deep equality of JSON data (object key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false
    return true
  }
  if (isObject(a)) {
    if (!isObject(b)) return false
    const ka = Object.keys(a)
    if (ka.length !== Object.keys(b).length) return false
    for (const k of ka) if (!Object.prototype.hasOwnProperty.call(b, k) || !jsonEqual(a[k], b[k])) return false
    return true
  }
  return false
}
