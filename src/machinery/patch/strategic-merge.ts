// Strategic merge patch (`application/strategic-merge-patch+json`) for built-in types, as upstream
// apimachinery strategicpatch.StrategicMergeMapPatch (MergeParallelList and IgnoreUnmatchedNulls on): merge keys and
// strategies come from the schema walker; directives `$patch` (replace / delete; merge is rejected), `$retainKeys`,
// `$deleteFromPrimitiveList/<field>` and `$setElementOrder/<field>`. Errors are PatchErrors with the upstream texts
// and the upstream status mapping (400 for bad directive formats, 422 for lists of lists), except that what upstream
// answers with a 500 (a missing merge key, an unknown `$patch`, a value of the wrong type) is a 400 here with the same
// text: it is the client's patch that is wrong, and a 500 tells a client to retry.
import { PatchError } from './json-patch.js'
import { isObject, jsonClone } from './schema-walk.js'
import type { TypeNode } from './schema-walk.js'
import { setOwn } from '../json-tree.js'

type Obj = Record<string, unknown>

const DIRECTIVE = '$patch'
const DELETE = 'delete'
const REPLACE = 'replace'
const MERGE = 'merge'
const RETAIN_KEYS_STRATEGY = 'retainKeys'
const RETAIN_KEYS = '$retainKeys'
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList'
const SET_ELEMENT_ORDER = '$setElementOrder'

export const ErrBadJSONDoc = 'invalid JSON document'
export const ErrNoListOfLists = 'lists of lists are not supported'
export const ErrBadPatchFormatForPrimitiveList = 'invalid patch format of primitive list'
export const ErrBadPatchFormatForRetainKeys = 'invalid patch format of retainKeys'
export const ErrBadPatchFormatForSetElementOrderList = 'invalid patch format of setElementOrder list'
export const ErrPatchContentNotMatchRetainKeys = "patch content doesn't match retainKeys list"

// ---- Go-style %v rendering for error texts ----

function goFmt(v: unknown): string {
  if (v === null || v === undefined) return '<nil>'
  if (Array.isArray(v)) return `[${v.map(goFmt).join(' ')}]`
  if (isObject(v)) return `map[${Object.keys(v).sort().map((k) => `${k}:${goFmt(v[k])}`).join(' ')}]`
  return String(v)
}

function goTypeName(v: unknown): string {
  if (v === null || v === undefined) return '<nil>'
  if (Array.isArray(v)) return '[]interface {}'
  if (isObject(v)) return 'map[string]interface {}'
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64'
  return typeof v
}

function patchErr(text: string): PatchError { return new PatchError('BadRequest', text) }
function errNoMergeKey(m: unknown, k: string): PatchError { return patchErr(`map: ${goFmt(m)} does not contain declared merge key: ${k}`) }
function errBadArgType(expected: string, actual: unknown): PatchError { return patchErr(`expected a ${expected}, but received a ${goTypeName(actual)}`) }
function errBadPatchType(t: unknown, m: unknown): PatchError { return patchErr(`unknown patch type: ${goFmt(t)} in map: ${goFmt(m)}`) }

// ---- helpers ----

type ElemKind = 'map' | 'list' | 'scalar'

function valueKind(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'list'
  if (isObject(v)) return 'map'
  return typeof v
}

function has(o: Obj, k: string): boolean { return Object.prototype.hasOwnProperty.call(o, k) }

function isDirectiveKey(k: string): boolean {
  return k === DIRECTIVE || k === RETAIN_KEYS || k.startsWith(`${SET_ELEMENT_ORDER}/`) || k.startsWith(`${DELETE_FROM_PRIMITIVE_LIST}/`)
}

/** Drops objects carrying `$patch` and the other directive keys from a value that is added as is. */
function removeDirectives(v: unknown): [unknown, boolean] {
  if (Array.isArray(v)) {
    const out: unknown[] = []
    for (const x of v) {
      const [nv, keep] = removeDirectives(x)
      if (keep) out.push(nv)
    }
    return [out, true]
  }
  if (isObject(v)) {
    if (has(v, DIRECTIVE)) return [undefined, false]
    for (const k of Object.keys(v)) {
      if (isDirectiveKey(k)) { delete v[k]; continue }
      const [nv, keep] = removeDirectives(v[k])
      if (keep) v[k] = nv
      else delete v[k]
    }
    return [v, true]
  }
  return [v, true]
}

function discardNulls(v: unknown): void {
  if (Array.isArray(v)) { for (const x of v) discardNulls(x); return }
  if (isObject(v)) {
    for (const k of Object.keys(v)) {
      if (v[k] === null) delete v[k]
      else discardNulls(v[k])
    }
  }
}

/** A patch value taken over as is: nulls and directives out. */
function takeAsIs(v: unknown): [unknown, boolean] {
  discardNulls(v)
  return removeDirectives(v)
}

function extractKey(s: string, prefix: string): string {
  const slash = s.indexOf('/')
  if (slash < 0 || s.slice(0, slash) !== prefix) {
    if (prefix === DELETE_FROM_PRIMITIVE_LIST) throw new PatchError('BadRequest', ErrBadPatchFormatForPrimitiveList)
    if (prefix === SET_ELEMENT_ORDER) throw new PatchError('BadRequest', ErrBadPatchFormatForSetElementOrderList)
    throw patchErr(`fail to find unknown prefix "${prefix}" in ${s}\n`)
  }
  return s.slice(slash + 1)
}

/** The non-retainKeys strategy of a field ('' when none). */
function strategyOf(strategies: readonly string[]): string {
  switch (strategies.length) {
    case 0: return ''
    case 1: return strategies[0] === RETAIN_KEYS_STRATEGY ? '' : strategies[0]!
    case 2:
      if (strategies[0] === RETAIN_KEYS_STRATEGY) return strategies[1]!
      if (strategies[1] === RETAIN_KEYS_STRATEGY) return strategies[0]!
      throw patchErr(`unexpected patch strategy: ${goFmt(strategies)}`)
    default: throw patchErr(`unexpected patch strategy: ${goFmt(strategies)}`)
  }
}

function sliceElementKind(...slices: unknown[][]): ElemKind {
  let prev: string | undefined
  for (const s of slices) {
    for (const v of s) {
      const k = valueKind(v)
      if (prev === undefined) {
        prev = k
        if (k === 'list') throw new PatchError('Invalid', ErrNoListOfLists)
      } else if (prev !== k) {
        throw patchErr(`list element types are not identical: ${goFmt(slices)}`)
      }
    }
  }
  if (prev === undefined) throw patchErr('no elements in any of the given slices')
  return prev === 'map' ? 'map' : 'scalar'
}

function keyOf(item: unknown, mergeKey: string, kind: ElemKind): unknown {
  if (kind === 'map') return isObject(item) ? item[mergeKey] : undefined
  return item
}

/** Position of each key's first occurrence in a list (upstream `index`, precomputed). */
function orderIndex(list: unknown[], mergeKey: string, kind: ElemKind): Map<unknown, number> {
  const m = new Map<unknown, number>()
  list.forEach((x, i) => {
    const k = keyOf(x, mergeKey, kind)
    if (!m.has(k)) m.set(k, i)
  })
  return m
}

function findMapByKey(list: unknown[], key: string, value: unknown): number {
  for (let i = 0; i < list.length; i++) {
    const item = list[i]
    if (!isObject(item)) throw patchErr(`value for key ${i} is not a map`)
    if (has(item, key) && item[key] === value) return i
  }
  return -1
}

function validateMergeKeyInLists(mergeKey: string, ...lists: unknown[][]): void {
  for (const l of lists) {
    for (const item of l) {
      if (!isObject(item)) throw errBadArgType('map[string]interface {}', item)
      if (!has(item, mergeKey)) throw errNoMergeKey(item, mergeKey)
    }
  }
}

function extractToDeleteItems(l: unknown[]): [unknown[], unknown[]] {
  const keep: unknown[] = []
  const del: unknown[] = []
  for (const v of l) {
    if (!isObject(v)) throw errBadArgType('map[string]interface {}', v)
    if (has(v, DIRECTIVE) && v[DIRECTIVE] === DELETE) del.push(v)
    else keep.push(v)
  }
  return [keep, del]
}

/** Sorts `toSort` by the positions in `order` (stable; upstream's predicate when an item is not in `order`). */
function normalizeSliceOrder(toSort: unknown[], order: unknown[], mergeKey: string, kind: ElemKind): unknown[] {
  let items = toSort
  let toDelete: unknown[] = []
  if (kind === 'map') {
    validateMergeKeyInLists(mergeKey, items, order)
    ;[items, toDelete] = extractToDeleteItems(items)
  }
  const pos = orderIndex(order, mergeKey, kind)
  const idx = items.map((x) => pos.get(keyOf(x, mergeKey, kind)) ?? -1)
  let sorted: unknown[]
  if (idx.every((i) => i >= 0)) {
    sorted = items.map((x, i) => [x, idx[i]!] as const).sort((a, b) => a[1] - b[1]).map((e) => e[0])
  } else {
    // Go's sort.SliceStable (insertion sort) with a predicate that is true whenever an item is not in `order`.
    const a = items.map((x, i) => [x, idx[i]!] as const)
    const less = (x: readonly [unknown, number], y: readonly [unknown, number]): boolean => (x[1] >= 0 && y[1] >= 0 ? x[1] < y[1] : true)
    for (let i = 1; i < a.length; i++) {
      for (let j = i; j > 0 && less(a[j]!, a[j - 1]!); j--) { const t = a[j]!; a[j] = a[j - 1]!; a[j - 1] = t }
    }
    sorted = a.map((e) => e[0])
  }
  return sorted.concat(toDelete)
}

/** Interleaves server-only items (left) into the patch items (right) by the live order, keeping both relative orders. */
function mergeSortedSlice(left: unknown[], right: unknown[], serverOrder: unknown[], mergeKey: string, kind: ElemKind): unknown[] {
  const pos = orderIndex(serverOrder, mergeKey, kind)
  const at = (x: unknown): number => pos.get(keyOf(x, mergeKey, kind)) ?? -1
  const out: unknown[] = []
  let i = 0
  let j = 0
  while (i < left.length || j < right.length) {
    if (i >= left.length) { out.push(right[j++]); continue }
    if (j >= right.length) { out.push(left[i++]); continue }
    const li = at(left[i])
    const ri = at(right[j])
    if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++])
    else out.push(right[j++])
  }
  return out
}

function normalizeElementOrder(patch: unknown[], serverOnly: unknown[], patchOrder: unknown[], serverOrder: unknown[], mergeKey: string, kind: ElemKind): unknown[] {
  const p = normalizeSliceOrder(patch, patchOrder, mergeKey, kind)
  const s = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, kind)
  return mergeSortedSlice(s, p, serverOrder, mergeKey, kind)
}

function partitionPrimitives(merged: unknown[], by: unknown[]): [unknown[], unknown[]] {
  const inBy = new Set(by)
  const patch: unknown[] = []
  const serverOnly: unknown[] = []
  for (const v of merged) (inBy.has(v) ? patch : serverOnly).push(v)
  return [patch, serverOnly]
}

function partitionMaps(merged: unknown[], by: unknown[], mergeKey: string): [unknown[], unknown[]] {
  const keys = new Set<unknown>()
  by.forEach((x, i) => {
    if (!isObject(x)) throw patchErr(`value for key ${i} is not a map`)
    if (has(x, mergeKey)) keys.add(x[mergeKey])
  })
  const patch: unknown[] = []
  const serverOnly: unknown[] = []
  for (const v of merged) {
    if (!isObject(v)) throw errBadArgType('map[string]interface {}', v)
    if (!has(v, mergeKey)) throw errNoMergeKey(v, mergeKey)
    ;(keys.has(v[mergeKey]) ? patch : serverOnly).push(v)
  }
  return [patch, serverOnly]
}

function dedupeScalars(s: unknown[]): unknown[] {
  const seen = new Set<unknown>()
  const out: unknown[] = []
  for (const v of s) if (!seen.has(v)) { seen.add(v); out.push(v) }
  return out
}

// ---- the merge ----

function handleDirectiveInMergeMap(directive: unknown, patch: Obj): Obj {
  if (directive === REPLACE) {
    delete patch[DIRECTIVE]
    const [v] = takeAsIs(patch)
    return v as Obj
  }
  if (directive === DELETE) return {}
  throw errBadPatchType(directive, patch)
}

function applyRetainKeys(original: Obj, patch: Obj): void {
  if (!has(patch, RETAIN_KEYS)) return
  const list = patch[RETAIN_KEYS]
  delete patch[RETAIN_KEYS]
  if (!Array.isArray(list)) throw new PatchError('BadRequest', ErrBadPatchFormatForRetainKeys)
  const keep = new Set<unknown>(list)
  for (const k of Object.keys(patch)) {
    const v = patch[k]
    if (v === null || k.startsWith(DELETE_FROM_PRIMITIVE_LIST) || k.startsWith(SET_ELEMENT_ORDER)) continue
    if (!keep.has(k)) throw new PatchError('BadRequest', ErrBadPatchFormatForRetainKeys)
  }
  for (const k of Object.keys(original)) if (!keep.has(k)) delete original[k]
}

function mergeKeyValueEqual(left: unknown, right: unknown, mergeKey: string): boolean {
  if (mergeKey === '') return left === right
  if (!isObject(left)) throw errBadArgType('map[string]interface {}', left)
  if (!isObject(right)) throw errBadArgType('map[string]interface {}', right)
  if (!has(left, mergeKey)) throw errNoMergeKey(left, mergeKey)
  if (!has(right, mergeKey)) throw errNoMergeKey(right, mergeKey)
  return left[mergeKey] === right[mergeKey]
}

/** Every patch item (deletions aside) must appear in the `$setElementOrder` list, in the same relative order. */
function validatePatchWithSetOrderList(patchList: unknown[], order: unknown[], mergeKey: string): void {
  if (order.length === 0 || patchList.length === 0) return
  const nonDelete = mergeKey !== '' ? extractToDeleteItems(patchList)[0] : patchList
  let pi = 0
  let si = 0
  while (pi < nonDelete.length && si < order.length) {
    const item = nonDelete[pi]
    if (isObject(item) && has(item, DIRECTIVE)) { pi++; continue }
    if (mergeKeyValueEqual(item, order[si], mergeKey)) pi++
    si++
  }
  if (pi < nonDelete.length && si >= order.length) throw new PatchError('BadRequest', ErrBadPatchFormatForSetElementOrderList)
}

/** Handles `$setElementOrder/<field>` with its list (merged here, then removed from the patch). */
function mergeSetElementOrder(original: Obj, patch: Obj, node: TypeNode): void {
  for (const key of Object.keys(patch)) {
    if (!key.startsWith(SET_ELEMENT_ORDER)) continue
    const order = patch[key]
    delete patch[key]
    if (!Array.isArray(order)) throw new PatchError('BadRequest', ErrBadPatchFormatForSetElementOrderList)
    const field = extractKey(key, SET_ELEMENT_ORDER)
    const foundOriginal = has(original, field)
    const foundPatch = has(patch, field) && patch[field] !== null
    const originalList = foundOriginal ? original[field] : undefined
    const patchList = foundPatch ? patch[field] : undefined
    if (foundOriginal && !Array.isArray(originalList)) throw errBadArgType('[]interface {}', originalList)
    if (foundPatch && !Array.isArray(patchList)) throw errBadArgType('[]interface {}', patchList)
    const child = node.child(field)
    const strategy = strategyOf(child.patchStrategies)
    const mergeKey = child.patchMergeKey ?? ''
    validatePatchWithSetOrderList((patchList as unknown[] | undefined) ?? [], order, mergeKey)

    let merged: unknown[]
    if (foundOriginal && !foundPatch) merged = originalList as unknown[]
    else if (!foundOriginal && foundPatch) merged = takeAsIs(patchList)[0] as unknown[]
    else if (foundOriginal && foundPatch) merged = mergeSliceHandler(originalList as unknown[], patchList as unknown[], child.item, strategy, mergeKey, false)
    else continue

    const [patchItems, serverOnly] = mergeKey === '' ? partitionPrimitives(merged, order) : partitionMaps(merged, order, mergeKey)
    const all = [...((originalList as unknown[] | undefined) ?? []), ...((patchList as unknown[] | undefined) ?? [])]
    if (all.length === 0) { original[field] = merged; delete patch[field]; continue }
    const kind = sliceElementKind(all)
    original[field] = normalizeElementOrder(patchItems, serverOnly, order, (originalList as unknown[] | undefined) ?? [], mergeKey, kind)
    delete patch[field]
  }
}

function mergeMap(original: Obj, patch: Obj, node: TypeNode): Obj {
  if (has(patch, DIRECTIVE)) return handleDirectiveInMergeMap(patch[DIRECTIVE], patch)
  applyRetainKeys(original, patch)
  mergeSetElementOrder(original, patch, node)

  for (const pk of Object.keys(patch)) {
    const patchV = patch[pk]
    let k = pk
    let isDeleteList = false
    if (pk.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      k = extractKey(pk, DELETE_FROM_PRIMITIVE_LIST)
      isDeleteList = true
    }
    if (patchV === null) { delete original[k]; continue }
    if (!has(original, k)) {
      if (!isDeleteList) {
        const [v, keep] = takeAsIs(patchV)
        if (keep) setOwn(original, k, v)
      }
      continue
    }
    const ov = original[k]
    const ok = valueKind(ov)
    if (ok !== valueKind(patchV)) {
      if (!isDeleteList) {
        const [v, keep] = takeAsIs(patchV)
        if (keep) setOwn(original, k, v)
        else delete original[k]
      }
      continue
    }
    if (ok === 'map') {
      const child = node.child(k)
      const strategy = strategyOf(child.patchStrategies)
      setOwn(original, k, strategy !== REPLACE ? mergeMap(ov as Obj, patchV as Obj, child) : takeAsIs(patchV)[0])
    } else if (ok === 'list') {
      const child = node.child(k)
      const strategy = strategyOf(child.patchStrategies)
      setOwn(original, k, mergeSliceHandler(ov as unknown[], patchV as unknown[], child.item, strategy, child.patchMergeKey ?? '', isDeleteList))
    } else if (!isDeleteList) {
      setOwn(original, k, patchV)
    }
  }
  return original
}

function mergeSliceHandler(original: unknown[], patch: unknown[], elem: TypeNode, strategy: string, mergeKey: string, isDeleteList: boolean): unknown[] {
  if (strategy === MERGE || isDeleteList) return mergeSlice(original, patch, elem, mergeKey, isDeleteList)
  return takeAsIs(patch)[0] as unknown[]
}

function mergeSlice(original: unknown[], patch: unknown[], elem: TypeNode, mergeKey: string, isDeleteList: boolean): unknown[] {
  if (original.length === 0 && patch.length === 0) return original
  const kind = sliceElementKind(original, patch)
  let merged: unknown[]
  let orig = original
  let pat = patch
  if (kind !== 'map') {
    if (isDeleteList) {
      const del = new Set(patch)
      return original.filter((v) => !del.has(v))
    }
    merged = dedupeScalars([...original, ...patch])
  } else {
    if (mergeKey === '') throw patchErr('cannot merge lists without merge key for struct')
    ;[orig, pat] = mergeSliceWithSpecialElements(original, patch, mergeKey)
    merged = mergeSliceWithoutSpecialElements(orig.slice(), pat, mergeKey, elem)
  }
  const [patchItems, serverOnly] = mergeKey === '' ? partitionPrimitives(merged, pat) : partitionMaps(merged, pat, mergeKey)
  return normalizeElementOrder(patchItems, serverOnly, pat, orig, mergeKey, kind)
}

function mergeSliceWithSpecialElements(original: unknown[], patch: unknown[], mergeKey: string): [unknown[], unknown[]] {
  const rest: unknown[] = []
  let replace = false
  let orig = original
  for (const v of patch) {
    const m = v as Obj
    if (!has(m, DIRECTIVE)) { rest.push(v); continue }
    const directive = m[DIRECTIVE]
    if (directive === DELETE) {
      if (!has(m, mergeKey)) throw errNoMergeKey(m, mergeKey)
      const want = m[mergeKey]
      for (let i = findMapByKey(orig, mergeKey, want); i >= 0; i = findMapByKey(orig, mergeKey, want)) orig = [...orig.slice(0, i), ...orig.slice(i + 1)]
    } else if (directive === REPLACE) {
      replace = true
    } else if (directive === MERGE) {
      throw patchErr('merging lists cannot yet be specified in the patch')
    } else {
      throw errBadPatchType(directive, m)
    }
  }
  if (replace) return [rest.map((x) => takeAsIs(x)[0]), []]
  return [orig, rest]
}

function mergeSliceWithoutSpecialElements(original: unknown[], patch: unknown[], mergeKey: string, elem: TypeNode): unknown[] {
  const pos = new Map<unknown, number>()
  original.forEach((item, i) => {
    if (!isObject(item)) throw patchErr(`value for key ${i} is not a map`)
    if (has(item, mergeKey) && !pos.has(item[mergeKey])) pos.set(item[mergeKey], i)
  })
  for (const v of patch) {
    const m = v as Obj
    if (!has(m, mergeKey)) throw errNoMergeKey(m, mergeKey)
    const i = pos.get(m[mergeKey])
    if (i !== undefined) original[i] = mergeMap(original[i] as Obj, m, elem)
    else {
      pos.set(m[mergeKey], original.length)
      original.push(takeAsIs(m)[0])
    }
  }
  return original
}

/**
 * Applies a strategic merge patch to `original` (not modified) and returns the patched object. `schema` is the type
 * tree of the kind (typeTree(defs, schemaRef)). Throws PatchError (see toApiError for the status of each case).
 */
export function apply<T = unknown>(original: T, patch: unknown, schema: TypeNode): T {
  if (!isObject(patch)) {
    throw new PatchError('BadRequest', `json: cannot unmarshal ${patch === null ? 'null' : Array.isArray(patch) ? 'array' : typeof patch} into Go value of type map[string]interface {}`)
  }
  const orig = isObject(original) ? jsonClone(original) as Obj : {}
  return mergeMap(orig, jsonClone(patch), schema) as T
}
