// `metadata.managedFields`: decoding the entries into per-manager field sets and encoding them back in the upstream
// shape and order (Apply before Update, then time, manager, apiVersion, subresource).
import { isObject } from '../patch/schema-walk.js'
import { memoize } from '../memo.js'
import { FieldSet, goJSONString, sortInPlace } from './fieldpath.js'

export type Operation = 'Apply' | 'Update'

/** One `metadata.managedFields` entry as stored (keys in the upstream order). */
export interface ManagedFieldsEntry {
  manager?: string
  operation?: Operation
  apiVersion?: string
  time?: string
  fieldsType?: 'FieldsV1'
  fieldsV1?: Record<string, unknown>
  subresource?: string
}

/** Who owns a set: the identity of a managedFields entry. */
export interface ManagerInfo {
  manager: string
  operation: Operation
  /** Part of the identity for Update entries only. */
  apiVersion: string
  subresource?: string
}

export interface VersionedSet {
  set: FieldSet
  apiVersion: string
  applied: boolean
}

/** Decoded managedFields: field sets and times, keyed by manager identifier. */
export interface Managed {
  fields: Map<string, VersionedSet>
  times: Map<string, string | undefined>
  /**
   * The decoded entries' fieldsV1 objects that are already in the encoded form, by manager identifier, with the set
   * each decoded to: an entry whose set is still that set is encoded with that object (see decodeManagedFields).
   */
  sources?: Map<string, { set: FieldSet; fieldsV1: Record<string, unknown> }>
}

export function emptyManaged(): Managed {
  return { fields: new Map(), times: new Map() }
}

export function cloneManaged(m: Managed): Managed {
  const fields = new Map<string, VersionedSet>()
  for (const [k, v] of m.fields) fields.set(k, { set: v.set, apiVersion: v.apiVersion, applied: v.applied })
  const out: Managed = { fields, times: new Map(m.times) }
  if (m.sources) out.sources = m.sources
  return out
}

/**
 * The identity of an entry (upstream BuildManagerIdentifier): the JSON of manager, operation, apiVersion (Update only)
 * and subresource. Re-applying with another apiVersion updates the same Apply entry.
 */
export function managerIdentifier(info: ManagerInfo): string {
  // Nested maps by part: a look-up hashes the (usually interned) parts instead of a key built for it.
  const sub = info.subresource ?? ''
  let byOp = identifiers.get(info.manager)
  let byVersion = byOp?.get(info.operation)
  let bySub = byVersion?.get(info.apiVersion)
  let id = bySub?.get(sub)
  if (id === undefined) {
    id = buildIdentifier(info)
    if (info.manager.length + info.apiVersion.length + sub.length <= CACHED_IDENTIFIER_LENGTH) {
      if (identifiersCount >= IDENTIFIERS_LIMIT) { identifiers.clear(); identifiersCount = 0; byOp = byVersion = bySub = undefined }
      if (byOp === undefined) { byOp = new Map(); identifiers.set(info.manager, byOp) }
      if (byVersion === undefined) { byVersion = new Map(); byOp.set(info.operation, byVersion) }
      if (bySub === undefined) { bySub = new Map(); byVersion.set(info.apiVersion, bySub) }
      bySub.set(sub, id)
      identifiersCount++
    }
  }
  return id
}

/** Identifiers and their parts, both ways: a cluster has few managers, and every write names one or more. */
const identifiers = new Map<string, Map<Operation, Map<string, Map<string, string>>>>()
let identifiersCount = 0
const IDENTIFIERS_LIMIT = 4096
/** Longer ones (managers named in bodies have no length limit) are not kept. */
const CACHED_IDENTIFIER_LENGTH = 512

function buildIdentifier(info: ManagerInfo): string {
  const parts: string[] = []
  if (info.manager !== '') parts.push(`"manager":${goJSONString(info.manager)}`)
  parts.push(`"operation":${goJSONString(info.operation)}`)
  if (info.operation === 'Update' && info.apiVersion !== '') parts.push(`"apiVersion":${goJSONString(info.apiVersion)}`)
  if (info.subresource) parts.push(`"subresource":${goJSONString(info.subresource)}`)
  return `{${parts.join(',')}}`
}

/** The parts of an identifier. */
export const parseIdentifier: (id: string) => Readonly<ManagerInfo> =
  memoize((id) => Object.freeze(parseIdentifierText(id)), IDENTIFIERS_LIMIT, CACHED_IDENTIFIER_LENGTH)

function parseIdentifierText(id: string): ManagerInfo {
  const o = JSON.parse(id) as Record<string, string>
  const info: ManagerInfo = { manager: o.manager ?? '', operation: o.operation === 'Apply' ? 'Apply' : 'Update', apiVersion: o.apiVersion ?? '' }
  if (o.subresource) info.subresource = o.subresource
  return info
}

/**
 * How a manager is named in conflict messages: `"name"`, `"name" with subresource "status"`, and for Update entries
 * ` using <apiVersion>`.
 */
export function printManager(id: string): string {
  let info: ManagerInfo
  try { info = parseIdentifier(id) } catch { return JSON.stringify(id) }
  let s = JSON.stringify(info.manager)
  if (info.subresource) s += ` with subresource ${JSON.stringify(info.subresource)}`
  if (info.operation === 'Update') s += ` using ${info.apiVersion}`
  return s
}

/** RFC 3339 in UTC with whole seconds, as metav1.Time serializes. */
export function formatTime(t: string | number | Date): string {
  if (typeof t === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(t)) return t
  const d = t instanceof Date ? t : new Date(t)
  if (Number.isNaN(d.getTime())) return String(t)
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z')
}

function seconds(t: string | undefined): number {
  return t === undefined ? 0 : secondsOf(t)
}

/** Entry times parsed (the entries of a write carry a few distinct times, most of them the current second's). */
const secondsOf = memoize((t) => {
  const ms = Date.parse(t)
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000)
}, 1024, 64)

/** True when an Update body asks to clear the tracking: `[{}]` (and, as upstream, `[]`). */
export function isResetManagedFields(v: unknown, emptyListResets = true): boolean {
  if (!Array.isArray(v)) return false
  if (v.length === 0) return emptyListResets
  if (v.length === 1) {
    const e = v[0]
    return isObject(e) && Object.keys(e).every((k) => e[k] === undefined || e[k] === null || e[k] === '')
  }
  return false
}

/**
 * Decodes `metadata.managedFields` (upstream DecodeManagedFields). Throws an Error with the upstream text for an
 * invalid entry (unknown operation, no apiVersion, missing or unknown fieldsType, undecodable fieldsV1).
 */
export function decodeManagedFields(entries: unknown, opts: { keepSources?: boolean } = {}): Managed {
  const managed = emptyManaged()
  if (entries === undefined || entries === null) return managed
  if (!Array.isArray(entries)) throw new Error('managedFields must be a list')
  entries.forEach((raw, i) => {
    const e = isObject(raw) ? raw : {}
    if (e.operation !== 'Apply' && e.operation !== 'Update') throw new Error('operation must be `Apply` or `Update`')
    if (typeof e.apiVersion !== 'string' || e.apiVersion.length < 1) throw new Error('apiVersion must not be empty')
    if (e.fieldsType === undefined || e.fieldsType === '' || e.fieldsType === null) throw new Error(`missing fieldsType in managed fields entry ${i}`)
    if (e.fieldsType !== 'FieldsV1') throw new Error(`invalid fieldsType ${JSON.stringify(e.fieldsType)} in managed fields entry ${i}`)
    const info: ManagerInfo = { manager: typeof e.manager === 'string' ? e.manager : '', operation: e.operation, apiVersion: e.apiVersion }
    if (typeof e.subresource === 'string' && e.subresource !== '') info.subresource = e.subresource
    const id = managerIdentifier(info)
    let decoded: DecodedSet
    try { decoded = decodeSet(e.fieldsV1) } catch (err) {
      throw new Error(`error decoding versioned set from ${JSON.stringify(e)}: error decoding set: ${(err as Error).message}`)
    }
    const set = decoded.set
    if (opts.keepSources && decoded.encoded) (managed.sources ??= new Map()).set(id, { set, fieldsV1: e.fieldsV1 as Record<string, unknown> })
    managed.fields.set(id, { set, apiVersion: e.apiVersion, applied: e.operation === 'Apply' })
    managed.times.set(id, typeof e.time === 'string' ? e.time : undefined)
  })
  return managed
}

interface DecodedSet {
  set: FieldSet
  /** Whether the decoded value is what encoding the set gives (same members in the same order). */
  encoded: boolean
}

/**
 * Sets decoded before, by the shape of their FieldsV1 value: the objects of a type share a few shapes, and each write
 * decodes the stored entries again. A trie of the value's tokens (each key, an opening and a closing mark per object,
 * a mark for null) leads to the set: a look-up is a Map step per token over keys JSON.parse interned, where a text
 * key would need the value printed and hashed. The sets are never modified (FieldSet operations make new ones).
 */
interface ShapeNode { next: Map<string | symbol, ShapeNode>; decoded?: DecodedSet }
const OPEN = Symbol('{')
const CLOSE = Symbol('}')
const NULL = Symbol('null')
let shapes: ShapeNode = { next: new Map() }
let shapeNodes = 0
const SHAPE_NODES_LIMIT = 1 << 16
/** Keys longer than this (a client can send any) are not kept: such values are decoded without the cache. */
const CACHED_KEY_LENGTH = 256

function decodeSet(v: unknown): DecodedSet {
  const node = shapeOf(v, shapes)
  if (node === undefined) return { set: FieldSet.fromFieldsV1(v), encoded: false }
  if (node.decoded !== undefined) return node.decoded
  const set = FieldSet.fromFieldsV1(v)
  const decoded = { set, encoded: sameShape(set.toFieldsV1(), v) }
  node.decoded = decoded
  return decoded
}

function step(node: ShapeNode, token: string | symbol): ShapeNode {
  let n = node.next.get(token)
  if (n === undefined) {
    if (shapeNodes >= SHAPE_NODES_LIMIT) { shapes = { next: new Map() }; shapeNodes = 0 }
    n = { next: new Map() }
    node.next.set(token, n)
    shapeNodes++
  }
  return n
}

/**
 * The trie node of a FieldsV1 value made of plain objects and nulls only (what a valid one is); undefined for
 * anything else (arrays, scalars, class instances, long keys): that is decoded without the cache, and fails as it should.
 */
function shapeOf(v: unknown, node: ShapeNode): ShapeNode | undefined {
  if (v === null) return step(node, NULL)
  if (typeof v !== 'object' || Object.getPrototypeOf(v) !== Object.prototype) return undefined
  const o = v as Record<string, unknown>
  let n: ShapeNode | undefined = step(node, OPEN)
  // for-in, not Object.keys: no key array per object (a plain object inherits nothing enumerable; same order)
  for (const k in o) {
    if (k.length > CACHED_KEY_LENGTH) return undefined
    n = shapeOf(o[k], step(n, k))
    if (n === undefined) return undefined
  }
  return step(n, CLOSE)
}

/** Whether two FieldsV1 values have the same keys in the same order throughout. */
function sameShape(a: unknown, b: unknown): boolean {
  if (a === null || b === null) return a === b
  if (typeof a !== 'object' || typeof b !== 'object') return false
  const ak = Object.keys(a as object)
  const bk = Object.keys(b as object)
  if (ak.length !== bk.length) return false
  for (let i = 0; i < ak.length; i++) {
    if (ak[i] !== bk[i] || !sameShape((a as Record<string, unknown>)[ak[i]], (b as Record<string, unknown>)[bk[i]])) return false
  }
  return true
}

/** Encodes decoded managedFields back into entries, sorted as upstream; undefined when there are none. */
export function encodeManagedFields(managed: Managed): ManagedFieldsEntry[] | undefined {
  if (managed.fields.size === 0) return undefined
  const out: ManagedFieldsEntry[] = []
  for (const [id, vs] of managed.fields) {
    const info = parseIdentifier(id)
    const e: ManagedFieldsEntry = {}
    if (info.manager !== '') e.manager = info.manager
    e.operation = vs.applied ? 'Apply' : info.operation
    e.apiVersion = vs.apiVersion
    const t = managed.times.get(id)
    if (t !== undefined) e.time = formatTime(t)
    e.fieldsType = 'FieldsV1'
    // A set with the paths it was decoded with is encoded as it was read (the write handed it back and forth).
    const src = managed.sources?.get(id)
    e.fieldsV1 = src !== undefined && src.set.samePaths(vs.set) ? src.fieldsV1 : vs.set.toFieldsV1()
    if (info.subresource) e.subresource = info.subresource
    out.push(e)
  }
  return sortEntries(out)
}

/** Upstream order: operation (Apply first), time, manager, apiVersion, subresource. */
export function sortEntries(entries: ManagedFieldsEntry[]): ManagedFieldsEntry[] {
  if (entries.length < 2) return entries
  return sortInPlace(entries, (p, q) => {
    if (p.operation !== q.operation) return (p.operation ?? '') < (q.operation ?? '') ? -1 : 1
    const ps = seconds(p.time)
    const qs = seconds(q.time)
    if (ps !== qs) return ps < qs ? -1 : 1
    if (p.manager !== q.manager) return (p.manager ?? '') < (q.manager ?? '') ? -1 : 1
    if (p.apiVersion !== q.apiVersion) return (p.apiVersion ?? '') < (q.apiVersion ?? '') ? -1 : 1
    if (p.subresource !== q.subresource) return (p.subresource ?? '') < (q.subresource ?? '') ? -1 : 1
    return 0
  })
}
