// Field sets of server-side apply (structured-merge-diff fieldpath): path elements (`f:` field or map key, `k:` list-map
// item by its key fields, `v:` set item, `i:` index), sets of paths as a trie, the FieldsV1 JSON encoding (exact key
// order: `.` first, then elements sorted f < k < v < i), the text form of paths used in conflict messages, and the
// set of paths an object sets according to the schema's list and map types.
import type { TypeNode } from '../patch/schema-walk.js'
import { isObject, UNTYPED } from '../patch/schema-walk.js'
import { memoize } from '../memo.js'

export type PathElementKind = 'f' | 'k' | 'v' | 'i'

export interface PathElement {
  readonly kind: PathElementKind
  /** The serialized form, also the identity: `f:spec`, `k:{"name":"a"}`, `v:"x"`, `i:0`. */
  readonly key: string
  /** f: the field name or map key. */
  readonly name?: string
  /** k: key fields sorted by name. */
  readonly fields?: ReadonlyArray<readonly [string, unknown]>
  /** v: the set item. */
  readonly value?: unknown
  /** i: the index. */
  readonly index?: number
}

export type Path = readonly PathElement[]

/** A value that cannot be mapped onto the schema (list-map key missing, duplicate, wrong item kind). */
export class TypedError extends Error {
  readonly errors: string[]
  constructor(errors: string[]) {
    super(errors.length === 1 ? errors[0]! : ['errors:', ...errors.map((e) => `  ${e}`)].join('\n'))
    this.name = 'TypedError'
    this.errors = errors
  }
}

// ---- Go-compatible JSON and value text ----

/** A string as Go's encoding/json writes it (HTML characters escaped). */
export function goJSONString(s: string): string {
  if (!/[<>&\u2028\u2029]/.test(s)) return JSON.stringify(s)
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** Compact JSON as Go's encoding/json writes it: object keys sorted, HTML characters escaped. */
export function goJSON(v: unknown): string {
  if (v === null || v === undefined) return 'null'
  if (typeof v === 'string') return goJSONString(v)
  if (typeof v === 'number') return Number.isFinite(v) ? JSON.stringify(v) : 'null'
  if (typeof v === 'boolean') return v ? 'true' : 'false'
  if (Array.isArray(v)) return `[${v.map(goJSON).join(',')}]`
  if (isObject(v)) return `{${Object.keys(v).sort(compareStrings).map((k) => `${goJSONString(k)}:${goJSON(v[k])}`).join(',')}}`
  return 'null'
}

/** structured-merge-diff value.ToString: strings Go-quoted, numbers bare. */
export function valueString(v: unknown): string {
  if (v === null || v === undefined) return 'null'
  if (typeof v === 'string') return JSON.stringify(v)
  if (typeof v === 'number' || typeof v === 'boolean') return String(v)
  if (Array.isArray(v)) return `[${v.map(valueString).join(',')}]`
  if (isObject(v)) return Object.keys(v).map((k) => `${k}=${valueString(v[k])}`).join('')
  return '{{undefined}}'
}

/** Byte order of the UTF-8 encodings (Go strings.Compare). */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i)
    const cb = b.charCodeAt(i)
    if (ca === cb) continue
    const sa = ca >= 0xd800 && ca <= 0xdfff
    const sb = cb >= 0xd800 && cb <= 0xdfff
    if (sa !== sb) return sa ? 1 : -1 // a surrogate encodes a code point above every BMP character
    return ca < cb ? -1 : 1
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0
}

function typeRank(v: unknown): number {
  if (typeof v === 'number') return 0
  if (typeof v === 'string') return 1
  if (typeof v === 'boolean') return 2
  if (Array.isArray(v)) return 3
  if (isObject(v)) return 4
  return 5 // null
}

/** structured-merge-diff value.Compare: numbers < strings < booleans < lists < maps < null. */
export function compareValues(a: unknown, b: unknown): number {
  const ra = typeRank(a)
  const rb = typeRank(b)
  if (ra !== rb) return ra < rb ? -1 : 1
  switch (ra) {
    case 0: return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0
    case 1: return compareStrings(a as string, b as string)
    case 2: return a === b ? 0 : a ? 1 : -1
    case 3: {
      const la = a as unknown[]
      const lb = b as unknown[]
      for (let i = 0; i < la.length && i < lb.length; i++) {
        const c = compareValues(la[i], lb[i])
        if (c !== 0) return c
      }
      return la.length < lb.length ? -1 : la.length > lb.length ? 1 : 0
    }
    case 4: {
      const ma = a as Record<string, unknown>
      const mb = b as Record<string, unknown>
      const keys = [...new Set([...Object.keys(ma), ...Object.keys(mb)])].sort(compareStrings)
      for (const k of keys) {
        if (!(k in ma)) return 1
        if (!(k in mb)) return -1
        const c = compareValues(ma[k], mb[k])
        if (c !== 0) return c
      }
      return 0
    }
    default: return 0
  }
}

// ---- path elements ----

/**
 * Field elements by name: elements are never modified, so every write's walks share one per field name. Only short
 * names are kept (a client's long keys must not stay in memory), at most FIELD_ELEMENTS_LIMIT of them.
 */
const FIELD_ELEMENTS_LIMIT = 8192
const CACHED_NAME_LENGTH = 256

export const fieldElement: (name: string) => PathElement =
  memoize((name) => ({ kind: 'f', key: `f:${name}`, name }), FIELD_ELEMENTS_LIMIT, CACHED_NAME_LENGTH)

export function keyElement(fields: Array<readonly [string, unknown]>): PathElement {
  const sorted = fields.slice().sort((x, y) => compareStrings(x[0], y[0]))
  return { kind: 'k', key: `k:{${sorted.map(([n, v]) => `${goJSONString(n)}:${goJSON(v)}`).join(',')}}`, fields: sorted }
}

export function valueElement(value: unknown): PathElement {
  return { kind: 'v', key: `v:${goJSON(value)}`, value }
}

export function indexElement(index: number): PathElement {
  return { kind: 'i', key: `i:${index}`, index }
}

const KIND_RANK: Record<PathElementKind, number> = { f: 0, k: 1, v: 2, i: 3 }

/** The order of path elements: fields (by name), then keys, then values, then indices. */
export function compareElements(a: PathElement, b: PathElement): number {
  if (a.kind !== b.kind) return KIND_RANK[a.kind] < KIND_RANK[b.kind] ? -1 : 1
  switch (a.kind) {
    case 'f': return compareStrings(a.name!, b.name!)
    case 'k': {
      const fa = a.fields!
      const fb = b.fields!
      for (let i = 0; i < fa.length && i < fb.length; i++) {
        const c = compareStrings(fa[i]![0], fb[i]![0]) || compareValues(fa[i]![1], fb[i]![1])
        if (c !== 0) return c
      }
      return fa.length < fb.length ? -1 : fa.length > fb.length ? 1 : 0
    }
    case 'v': return compareValues(a.value, b.value)
    default: return a.index! < b.index! ? -1 : a.index! > b.index! ? 1 : 0
  }
}

/**
 * Parses a FieldsV1 key (`f:…`, `k:{…}`, `v:…`, `i:N`); undefined for an unknown prefix (ignored, as upstream).
 * Remembered by key: every write decodes the stored managedFields again.
 */
export const parseElement: (s: string) => PathElement | undefined = memoize(parseElementText, FIELD_ELEMENTS_LIMIT, CACHED_NAME_LENGTH)

function parseElementText(s: string): PathElement | undefined {
  if (s.length < 2) throw new Error('key must be 2 characters long:')
  if (s[1] !== ':') throw new Error(`missing colon: ${s}`)
  const body = s.slice(2)
  switch (s[0]) {
    case 'f': return fieldElement(body)
    case 'v': return valueElement(JSON.parse(body))
    case 'k': {
      const obj = JSON.parse(body)
      if (!isObject(obj)) throw new Error(`expected an object key, got ${body}`)
      return keyElement(Object.entries(obj))
    }
    case 'i': {
      if (!/^-?\d+$/.test(body)) throw new Error(`strconv.Atoi: parsing ${JSON.stringify(body)}: invalid syntax`)
      return indexElement(Number(body))
    }
    default: return undefined
  }
}

/** The text form of a path element (`.name`, `[name="a",port=80]`, `[="v"]`, `[0]`). */
export function elementString(pe: PathElement): string {
  switch (pe.kind) {
    case 'f': return `.${pe.name}`
    case 'k': return `[${pe.fields!.map(([n, v]) => `${n}=${valueString(v)}`).join(',')}]`
    case 'v': return `[=${valueString(pe.value)}]`
    default: return `[${pe.index}]`
  }
}

/** The text form of a path (fieldpath.Path.String): `.spec.containers[name="app"].image`. */
export function pathString(path: Path): string {
  return path.map(elementString).join('')
}

/** Builds a path from field names (strings) and ready path elements. */
export function makePath(...parts: Array<string | PathElement>): PathElement[] {
  return parts.map((p) => (typeof p === 'string' ? fieldElement(p) : p))
}

// ---- sets of paths ----

interface ChildNode { pe: PathElement; set: FieldSet }

/** An empty map that refuses writes: what a set without members (or without children) reads. */
class NoEntries<K, V> extends Map<K, V> {
  override set(): this { throw new Error('FieldSet: write to a shared empty map') }
  override delete(): boolean { throw new Error('FieldSet: write to a shared empty map') }
  override clear(): void { throw new Error('FieldSet: write to a shared empty map') }
}
const NO_MEMBERS: Map<string, PathElement> = new NoEntries()
const NO_CHILDREN: Map<string, ChildNode> = new NoEntries()

/**
 * A set of paths, stored as a trie: `members` are the paths ending here, `children` the longer ones. Both are read
 * through the getters and written through setMember/setChild: a node gets a Map of its own only once it holds
 * something of that kind (most nodes have members only, or children only; every write builds many sets).
 */
export class FieldSet {
  #members: Map<string, PathElement> = NO_MEMBERS
  #children: Map<string, ChildNode> = NO_CHILDREN

  get members(): ReadonlyMap<string, PathElement> { return this.#members }
  get children(): ReadonlyMap<string, ChildNode> { return this.#children }

  setMember(k: string, pe: PathElement): void {
    if (this.#members === NO_MEMBERS) this.#members = new Map()
    this.#members.set(k, pe)
  }

  setChild(k: string, c: ChildNode): void {
    if (this.#children === NO_CHILDREN) this.#children = new Map()
    this.#children.set(k, c)
  }

  static of(...paths: Path[]): FieldSet {
    const s = new FieldSet()
    for (const p of paths) s.insert(p)
    return s
  }

  insert(path: Path): void {
    if (path.length === 0) return
    let s: FieldSet = this
    for (let i = 0; i < path.length - 1; i++) {
      const pe = path[i]!
      let c = s.children.get(pe.key)
      if (!c) { c = { pe, set: new FieldSet() }; s.setChild(pe.key, c) }
      s = c.set
    }
    const last = path[path.length - 1]!
    s.setMember(last.key, last)
  }

  has(path: Path): boolean {
    if (path.length === 0) return false
    let s: FieldSet | undefined = this
    for (let i = 0; i < path.length - 1; i++) {
      s = s.children.get(path[i]!.key)?.set
      if (!s) return false
    }
    return s.members.has(path[path.length - 1]!.key)
  }

  empty(): boolean {
    if (this.members.size > 0) return false
    for (const c of this.children.values()) if (!c.set.empty()) return false
    return true
  }

  /** The number of paths. */
  size(): number {
    let n = this.members.size
    for (const c of this.children.values()) n += c.set.size()
    return n
  }

  /** The subset under one path element (paths relative to it). */
  withPrefix(pe: PathElement): FieldSet {
    return this.children.get(pe.key)?.set ?? EMPTY
  }

  copy(): FieldSet {
    const out = new FieldSet()
    for (const [k, pe] of this.members) out.setMember(k, pe)
    for (const [k, c] of this.children) out.setChild(k, { pe: c.pe, set: c.set.copy() })
    return out
  }

  // The set operations return new sets that may share unchanged subtrees with their inputs: sets are not
  // modified once built (insert is for building only).

  /** Whether every path of this set is in `o`. */
  subsetOf(o: FieldSet): boolean {
    if (this === o) return true
    for (const k of this.members.keys()) if (!o.members.has(k)) return false
    for (const [k, c] of this.children) {
      const oc = o.children.get(k)
      if (oc === undefined ? !c.set.empty() : !c.set.subsetOf(oc.set)) return false
    }
    return true
  }

  /** Whether both sets have the same paths. */
  samePaths(o: FieldSet): boolean {
    return this === o || (this.subsetOf(o) && o.subsetOf(this))
  }

  // difference and recursiveDifference return the set itself when they remove nothing, union returns the side that
  // holds the other, and intersection allocates only when the sets share paths. A writer that changes the fields it
  // already owns (a kubelet's status updates) then keeps its very set, which is encoded as it was read.

  union(o: FieldSet): FieldSet {
    if (o.members.size === 0 && o.children.size === 0) return this
    if (this.members.size === 0 && this.children.size === 0) return o
    if (o.subsetOf(this)) return this
    if (this.subsetOf(o)) return o
    const out = new FieldSet()
    for (const [k, pe] of this.members) out.setMember(k, pe)
    for (const [k, pe] of o.members) out.setMember(k, pe)
    for (const [k, c] of this.children) out.setChild(k, c)
    for (const [k, c] of o.children) {
      const mine = this.children.get(k)
      out.setChild(k, mine ? { pe: c.pe, set: mine.set.union(c.set) } : c)
    }
    return out
  }

  intersection(o: FieldSet): FieldSet {
    let out: FieldSet | undefined
    const [small, big] = this.members.size <= o.members.size ? [this.members, o.members] : [o.members, this.members]
    for (const [k, pe] of small) if (big.has(k)) (out ??= new FieldSet()).setMember(k, pe)
    const [fewer, more] = this.children.size <= o.children.size ? [this, o] : [o, this]
    for (const [k, c] of fewer.children) {
      const oc = more.children.get(k)
      if (!oc) continue
      const r = c.set.intersection(oc.set)
      // EMPTY is the only empty result; the element as this set has it (both sides have the same key)
      if (r !== EMPTY) (out ??= new FieldSet()).setChild(k, { pe: (fewer === this ? c : oc).pe, set: r })
    }
    return out ?? EMPTY
  }

  /** Paths of this set not in `o` (members removed one by one; a member of `o` does not remove longer paths). */
  difference(o: FieldSet): FieldSet {
    return this.#without(o, false)
  }

  /** Like difference, but a member of `o` also removes every path below it. */
  recursiveDifference(o: FieldSet): FieldSet {
    return this.#without(o, true)
  }

  /** difference (or recursiveDifference): this set itself when nothing goes, a new set built only once something does. */
  #without(o: FieldSet, recursive: boolean): FieldSet {
    if (o.members.size === 0 && o.children.size === 0) return this
    // Nothing is allocated until something goes (filtering a write's changes by the reset fields usually removes
    // nothing): `out` is started at the first removal, with what came before it.
    let out: FieldSet | undefined
    for (const k of this.members.keys()) if (o.members.has(k)) { out = this.#membersWithout(o); break }
    for (const [k, c] of this.children) {
      let next: ChildNode | undefined
      const oc = o.children.get(k)
      if (recursive && o.members.has(k)) next = undefined
      else if (!oc) next = c
      else {
        const r = recursive ? c.set.recursiveDifference(oc.set) : c.set.difference(oc.set)
        next = r === c.set ? (r.empty() ? undefined : c) : r.empty() ? undefined : { pe: c.pe, set: r }
        // An empty child the other set leaves alone stays while nothing else goes (the set itself is the answer).
        if (r === c.set && out === undefined) continue
      }
      if (out === undefined) {
        if (next === c) continue
        out = this.#membersWithout(o)
        for (const [k2, c2] of this.children) {
          if (k2 === k) break
          // what the loop kept before this child: untouched children, and touched ones left non-empty
          if (!o.children.has(k2) || !c2.set.empty()) out.setChild(k2, c2)
        }
      }
      if (next !== undefined) out.setChild(k, next)
    }
    return out ?? this
  }

  /** A new set with this set's members that are not members of `o` (no children). */
  #membersWithout(o: FieldSet): FieldSet {
    const out = new FieldSet()
    for (const [k, pe] of this.members) if (!o.members.has(k)) out.setMember(k, pe)
    return out
  }

  /** Adds as members the declared struct fields that only appear as parents (upstream EnsureNamedFieldsAreMembers). */
  ensureNamedFieldsAreMembers(node: TypeNode | undefined): FieldSet {
    const out = new FieldSet()
    for (const [k, pe] of this.members) out.setMember(k, pe)
    for (const [k, c] of this.children) {
      if (node && c.pe.kind === 'f' && node.kind === 'struct' && node.hasField(c.pe.name!)) out.setMember(k, c.pe)
      const childType = !node ? undefined : c.pe.kind === 'f' ? node.child(c.pe.name!) : c.pe.kind === 'k' ? node.item : undefined
      out.setChild(k, { pe: c.pe, set: c.set.ensureNamedFieldsAreMembers(childType) })
    }
    return out
  }

  /** Every path, in upstream iteration order (members, then children, each sorted). */
  paths(): PathElement[][] {
    const out: PathElement[][] = []
    const walk = (s: FieldSet, prefix: PathElement[]): void => {
      for (const pe of sortElements([...s.members.values()])) out.push([...prefix, pe])
      const byKey = new Map([...s.children.values()].map((c) => [c.pe.key, c]))
      for (const pe of sortElements([...s.children.values()].map((c) => c.pe))) walk(byKey.get(pe.key)!.set, [...prefix, pe])
    }
    walk(this, [])
    return out
  }

  equals(o: FieldSet): boolean {
    return JSON.stringify(this.toFieldsV1()) === JSON.stringify(o.toFieldsV1())
  }

  /** The FieldsV1 JSON object of this set. */
  toFieldsV1(): Record<string, unknown> {
    return emit(this, false)
  }

  /** Parses a FieldsV1 JSON object (unknown element prefixes are dropped, as upstream). */
  static fromFieldsV1(v: unknown): FieldSet {
    if (v === null || v === undefined) return new FieldSet()
    const [set] = read(v)
    return set ?? new FieldSet()
  }
}

const EMPTY = new FieldSet()

/** Elements in FieldsV1 order (field names alone, the usual case, compare by name only), sorted in place. */
function sortElements(pes: PathElement[]): PathElement[] {
  let names = true
  for (let i = 0; i < pes.length; i++) if (pes[i]!.kind !== 'f') { names = false; break }
  return sortInPlace(pes, names ? compareNames : compareElements)
}

function compareNames(a: PathElement, b: PathElement): number {
  return compareStrings(a.name!, b.name!)
}

/**
 * Sorts in place. Short arrays (what a set's level and a write's managedFields entries are) by insertion, which
 * allocates nothing: Array.prototype.sort copies every array it sorts into a work array first, and the managedFields
 * of each write sort many short arrays (about 4 % of the front-end's allocated bytes in mixed).
 */
export function sortInPlace<T>(a: T[], cmp: (x: T, y: T) => number): T[] {
  if (a.length > 16) return a.sort(cmp)
  for (let i = 1; i < a.length; i++) {
    const x = a[i]!
    let j = i - 1
    while (j >= 0 && cmp(a[j]!, x) > 0) { a[j + 1] = a[j]!; j-- }
    a[j + 1] = x
  }
  return a
}

function emit(s: FieldSet, includeSelf: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  if (includeSelf && (s.members.size > 0 || s.children.size > 0)) out['.'] = {}
  const pes: PathElement[] = [...s.members.values()]
  for (const c of s.children.values()) if (!s.members.has(c.pe.key) && !c.set.empty()) pes.push(c.pe)
  for (const pe of sortElements(pes)) {
    const child = s.children.get(pe.key)
    out[pe.key] = child && !child.set.empty() ? emit(child.set, s.members.has(pe.key)) : {}
  }
  return out
}

function read(v: unknown): [FieldSet | undefined, boolean] {
  if (v === null) return [undefined, true]
  if (!isObject(v)) throw new Error(`ReadMapCB: expect { or n, but found ${JSON.stringify(v)}`)
  let children: FieldSet | undefined
  let isMember = false
  for (const [k, sub] of Object.entries(v)) {
    if (k === '.') { isMember = true; continue }
    const pe = parseElement(k)
    if (!pe) continue
    const [grand, childIsMember] = read(sub)
    if (childIsMember) (children ??= new FieldSet()).setMember(pe.key, pe)
    if (grand) (children ??= new FieldSet()).setChild(pe.key, { pe, set: grand })
  }
  if (!children) isMember = true
  return [children, isMember]
}

// ---- from objects ----

/** The effective kind of a node for a value: untyped nodes follow the value (objects granular, lists atomic). */
export function nodeFor(node: TypeNode, v: unknown): 'scalar' | 'map' | 'list' | 'leaf' {
  switch (node.kind) {
    case 'scalar': return 'scalar'
    case 'list': return node.listType === 'atomic' ? 'leaf' : 'list'
    case 'struct':
    case 'map': return node.mapType === 'atomic' ? 'leaf' : 'map'
    default:
      if (isObject(v)) return node.mapType === 'atomic' ? 'leaf' : 'map'
      if (Array.isArray(v)) return 'leaf'
      return 'scalar'
  }
}

/**
 * The path element of an item of an associative list (list-map: its key fields, defaults filled in; set: its value).
 * Throws an Error with the upstream text for items that cannot be keyed.
 */
export function listItemElement(list: TypeNode, item: unknown): PathElement {
  return computeItemElement(list, item)
}

/**
 * Key elements of list-map items by list type and key values (scalars only), one Map level per key field: items are
 * new objects on every write, their keys (container names, condition types) the same few values.
 */
let keyElements = new Map<TypeNode, Map<unknown, unknown>>()
let keyElementsCount = 0
const KEY_ELEMENTS_LIMIT = 16384

function cacheableKeyValue(v: unknown): boolean {
  return (typeof v === 'string' && v.length <= CACHED_NAME_LENGTH) || typeof v === 'number' || typeof v === 'boolean'
}

function computeItemElement(list: TypeNode, item: unknown): PathElement {
  const keys = list.listMapKeys
  if (list.listType === 'map' && keys.length > 0) {
    if (item === null) throw new Error('associative list with keys may not have a null element')
    if (!isObject(item)) throw new Error('associative list with keys may not have non-map elements')
    const fields: Array<readonly [string, unknown]> = []
    const itemType = list.item
    let cacheable = true
    for (const k of keys) {
      if (Object.prototype.hasOwnProperty.call(item, k)) fields.push([k, item[k]])
      else {
        const def = itemType.keyDefault(k)
        if (def === undefined || def === null) throw new Error(`associative list with keys has an element that omits key field ${JSON.stringify(k)} (and doesn't have default value)`)
        fields.push([k, def])
      }
      if (!cacheableKeyValue(fields[fields.length - 1]![1])) cacheable = false
    }
    if (!cacheable) return keyElement(fields)
    if (keyElementsCount >= KEY_ELEMENTS_LIMIT) { keyElements = new Map(); keyElementsCount = 0 }
    let level = keyElements.get(list)
    if (level === undefined) { level = new Map(); keyElements.set(list, level) }
    for (let i = 0; i < fields.length - 1; i++) {
      let next = level.get(fields[i]![1]) as Map<unknown, unknown> | undefined
      if (next === undefined) { next = new Map(); level.set(fields[i]![1], next) }
      level = next
    }
    const last = fields[fields.length - 1]![1]
    let pe = level.get(last) as PathElement | undefined
    if (pe === undefined) {
      pe = keyElement(fields)
      level.set(last, pe)
      keyElementsCount++
    }
    return pe
  }
  if (isObject(item)) throw new Error("associative list without keys has an element that's a map type")
  if (Array.isArray(item)) throw new Error('not supported: associative list with lists as elements')
  if (item === null) throw new Error("associative list without keys has an element that's an explicit null")
  return valueElement(item)
}

/**
 * Validates an object against the list semantics of the schema (keys present, no duplicates unless allowed), as the
 * typed conversion upstream does. Throws TypedError with upstream-shaped messages (`.spec.containers: element 0: …`).
 */
export function validateTyped(value: unknown, node: TypeNode, allowDuplicates: boolean): void {
  const errors: string[] = []
  const walk = (v: unknown, n: TypeNode, path: string): void => {
    if (v === null || v === undefined) return
    const k = nodeFor(n, v)
    if (k === 'map') {
      if (!isObject(v)) return
      for (const key of Object.keys(v)) walk(v[key], n.child(key), `${path}.${key}`)
    } else if (k === 'list') {
      if (!Array.isArray(v)) return
      const seen = new Set<string>()
      v.forEach((item, i) => {
        let pe: PathElement
        try { pe = listItemElement(n, item) } catch (e) { errors.push(`${path}: element ${i}: ${(e as Error).message}`); return }
        if (seen.has(pe.key)) {
          if (!allowDuplicates) errors.push(`${path}: duplicate entries for key ${elementString(pe)}`)
          return
        }
        seen.add(pe.key)
        walk(item, n.item, `${path}${elementString(pe)}`)
      })
    }
  }
  walk(value, node, '')
  if (errors.length > 0) throw new TypedError(errors)
}

/**
 * The set of paths an object sets (upstream TypedValue.ToFieldSet): scalars and atomic values are leaves, struct fields
 * holding a non-empty object contribute only their children, map keys and list items are members themselves (with
 * their children), empty or null values are leaves.
 */
export function toFieldSet(value: unknown, node: TypeNode): FieldSet {
  const set = new FieldSet()
  const path: PathElement[] = []
  const walk = (v: unknown, n: TypeNode): void => {
    const k = nodeFor(n, v)
    if (k === 'scalar' || k === 'leaf') { set.insert(path); return }
    if (v === null || v === undefined) return
    if (k === 'list') {
      if (!Array.isArray(v)) { set.insert(path); return }
      const pes = v.map((item) => listItemElement(n, item))
      const seen = new Set<string>()
      const dups = new Set<string>()
      for (const pe of pes) {
        if (seen.has(pe.key)) {
          if (!dups.has(pe.key)) { path.push(pe); set.insert(path); path.pop(); dups.add(pe.key) }
        } else seen.add(pe.key)
      }
      v.forEach((item, i) => {
        const pe = pes[i]!
        if (dups.has(pe.key)) return
        path.push(pe)
        walk(item, n.item)
        set.insert(path)
        path.pop()
      })
      return
    }
    if (!isObject(v)) { set.insert(path); return }
    for (const key of Object.keys(v)) {
      const val = v[key]
      path.push(fieldElement(key))
      walk(val, n.child(key))
      if (val === null || (isObject(val) && Object.keys(val).length === 0) || !n.hasField(key)) set.insert(path)
      path.pop()
    }
  }
  walk(value, node)
  return set
}

export { UNTYPED }
