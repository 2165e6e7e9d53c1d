// Typed operations on plain JSON values (structured-merge-diff typed.TypedValue): compare two values into the paths
// added, modified and removed, merge an applied configuration into a live object, and remove a set of paths. What
// apply.ts builds ownership from; pure, no managedFields.
import { isObject, jsonEqual } from '../patch/schema-walk.js'
import { noOwnKeys } from '../json-tree.js'
import type { TypeNode } from '../patch/schema-walk.js'
import { FieldSet, TypedError, fieldElement, listItemElement, nodeFor, pathString } from './fieldpath.js'
import type { Path, PathElement } from './fieldpath.js'
import { setOwn } from '../json-tree.js'

type Obj = Record<string, any>

export interface Comparison { added: FieldSet; modified: FieldSet; removed: FieldSet }

type Shape = 'none' | 'map' | 'list' | 'scalar'
function shapeOf(v: unknown): Shape {
  if (v === undefined || v === null) return 'none'
  if (Array.isArray(v)) return 'list'
  if (isObject(v)) return 'map'
  return 'scalar'
}

/** The kind of walk for a pair of values: a leaf unless both sides fit a granular map or list. */
function walkKind(n: TypeNode, l: unknown, r: unknown): 'leaf' | 'map' | 'list' {
  const sample = r !== undefined && r !== null ? r : l
  const k = nodeFor(n, sample)
  if (k !== 'map' && k !== 'list') return 'leaf'
  const sl = shapeOf(l)
  const sr = shapeOf(r)
  if ((sl !== 'none' && sl !== k) || (sr !== 'none' && sr !== k)) return 'leaf'
  const emptyL = sl === 'none' || (k === 'map' ? noOwnKeys(l as Obj) : (l as unknown[]).length === 0)
  const emptyR = sr === 'none' || (k === 'map' ? noOwnKeys(r as Obj) : (r as unknown[]).length === 0)
  if (emptyL && emptyR) return 'leaf'
  return k
}

const hasOwn = (o: Obj, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k)

function zeroOf(n: TypeNode): unknown { return n.kind === 'struct' ? {} : null }

function listElements(n: TypeNode, list: unknown[], path: Path): PathElement[] {
  return list.map((item, i) => {
    try { return listItemElement(n, item) } catch (e) { throw new TypedError([`${pathString(path)}: element ${i}: ${(e as Error).message}`]) }
  })
}

/**
 * Throws what compareObjects would throw walking a value against itself (an item of a walked associative list that
 * cannot be keyed), without comparing anything: a value compared with itself has no changes.
 */
function checkListKeys(v: unknown, n: TypeNode): void {
  const k = walkKind(n, v, v)
  if (k === 'leaf') return
  if (k === 'map') {
    if (!isObject(v)) return
    // for-in, not Object.keys: no key array per map (plain JSON objects inherit nothing enumerable)
    for (const key in v) checkListKeys(v[key], n.child(key))
    return
  }
  const list = Array.isArray(v) ? v : []
  const pes = listElements(n, list, [])
  if (list.length === 1) { checkListKeys(list[0], n.item); return }
  // Items whose key occurs more than once are compared whole, not walked.
  const count = new Map<string, number>()
  for (const pe of pes) count.set(pe.key, (count.get(pe.key) ?? 0) + 1)
  for (let i = 0; i < list.length; i++) if (count.get(pes[i]!.key) === 1) checkListKeys(list[i], n.item)
}

/**
 * Fields added, modified and removed from `lhs` to `rhs` (upstream TypedValue.Compare). `sameIsUnchanged`: a value
 * that is the very same object on both sides (shared by a write that kept it) is not walked, only checked for
 * unkeyable list items; the error thrown for one then names no path.
 */
export function compareObjects(lhs: unknown, rhs: unknown, node: TypeNode, sameIsUnchanged = false): Comparison {
  const c: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() }
  const path: PathElement[] = []
  const visit = (key: string, lm: Obj | undefined, rm: Obj | undefined, n: TypeNode): void => {
    const child = n.child(key)
    const lv = lm && hasOwn(lm, key) ? lm[key] : lm && n.alwaysPresent(key) ? zeroOf(child) : undefined
    const rv = rm && hasOwn(rm, key) ? rm[key] : rm && n.alwaysPresent(key) ? zeroOf(child) : undefined
    path.push(fieldElement(key))
    walk(lv, rv, child)
    path.pop()
  }
  const walk = (l: unknown, r: unknown, n: TypeNode): void => {
    if (sameIsUnchanged && l === r && l !== undefined) {
      if (l !== null && typeof l === 'object') checkListKeys(l, n)
      return
    }
    const k = walkKind(n, l, r)
    if (k === 'leaf') {
      if (l === undefined) c.added.insert(path)
      else if (r === undefined) c.removed.insert(path)
      else if (!jsonEqual(l, r)) c.modified.insert(path)
      return
    }
    if (k === 'map') {
      const lm = isObject(l) ? l : undefined
      const rm = isObject(r) ? r : undefined
      // The keys of both sides, left first, each once (the order of a Set of both key lists, without building it).
      // (for-in: no key arrays; the values compared are plain objects, which inherit nothing enumerable)
      if (lm) for (const key in lm) visit(key, lm, rm, n)
      if (rm) for (const key in rm) if (!(lm && hasOwn(lm, key))) visit(key, lm, rm, n)
    } else {
      const ll = Array.isArray(l) ? l : []
      const rl = Array.isArray(r) ? r : []
      const lpes = listElements(n, ll, path)
      const rpes = listElements(n, rl, path)
      const all: PathElement[] = []
      const lv = new Map<string, unknown[]>()
      const rv = new Map<string, unknown[]>()
      ll.forEach((item, i) => {
        const pe = lpes[i]!
        const got = lv.get(pe.key)
        if (got) got.push(item)
        else { lv.set(pe.key, [item]); all.push(pe) }
      })
      rl.forEach((item, i) => {
        const pe = rpes[i]!
        const got = rv.get(pe.key)
        if (got) got.push(item)
        else { rv.set(pe.key, [item]); if (!lv.has(pe.key)) all.push(pe) }
      })
      const item = n.item
      for (const pe of all) {
        const ls = lv.get(pe.key) ?? []
        const rs = rv.get(pe.key) ?? []
        path.push(pe)
        if (ls.length <= 1 && rs.length <= 1) walk(ls[0], rs[0], item)
        else if (ls.length >= 2 && rs.length >= 2) { if (!jsonEqual(ls, rs)) c.modified.insert(path) }
        else if (ls.length >= 2) { if (rs.length !== 0) walk(undefined, rs[0], item); c.removed.insert(path) }
        else { if (ls.length !== 0) walk(ls[0], undefined, item); c.added.insert(path) }
        path.pop()
      }
    }
    if (l === undefined) c.added.insert(path)
    else if (r === undefined) c.removed.insert(path)
  }
  walk(lhs, rhs, node)
  return c
}

/** Merges an applied configuration into a live object (upstream TypedValue.Merge): the right side wins on leaves. */
export function mergeObjects(lhs: unknown, rhs: unknown, node: TypeNode): unknown {
  const path: PathElement[] = []
  const walk = (l: unknown, r: unknown, n: TypeNode): unknown => {
    if (r === undefined) return l
    if (l === undefined) return r
    const k = walkKind(n, l, r)
    if (k === 'leaf') return r
    if (k === 'map') {
      const lm = isObject(l) ? l : {}
      const rm = isObject(r) ? r : {}
      const out: Obj = {}
      for (const key of Object.keys(lm)) {
        if (Object.prototype.hasOwnProperty.call(rm, key)) {
          path.push(fieldElement(key))
          const v = walk(lm[key], rm[key], n.child(key))
          path.pop()
          if (v !== undefined) setOwn(out, key, v)
        } else setOwn(out, key, lm[key])
      }
      for (const key of Object.keys(rm)) if (!Object.prototype.hasOwnProperty.call(lm, key)) setOwn(out, key, rm[key])
      return Object.keys(out).length > 0 ? out : undefined
    }
    return mergeList(Array.isArray(l) ? l : [], Array.isArray(r) ? r : [], n)
  }
  const mergeList = (lhsList: unknown[], rhsList: unknown[], n: TypeNode): unknown => {
    const rpes = listElements(n, rhsList, path)
    const lpes = listElements(n, lhsList, path)
    const observedR = new Map<string, unknown>()
    rpes.forEach((pe, i) => {
      if (observedR.has(pe.key)) throw new TypedError([`${pathString(path)}: duplicate entries for key ${pathString([pe])}`])
      observedR.set(pe.key, rhsList[i])
    })
    const observedL = new Map<string, unknown>()
    lpes.forEach((pe, i) => { observedL.set(pe.key, observedL.has(pe.key) ? null : lhsList[i]) })
    const shared = rpes.filter((pe) => observedL.has(pe.key))
    let sharedAt = 0
    const shift = (): PathElement | undefined => (sharedAt < shared.length ? shared[sharedAt++] : undefined)
    let nextShared: PathElement | undefined = shift()
    const mergedR = new Set<string>()
    const out: unknown[] = []
    const item = n.item
    const mergeItem = (pe: PathElement, lc: unknown, rc: unknown): void => {
      path.push(pe)
      const v = walk(lc === null ? undefined : lc, rc, item)
      path.pop()
      if (v !== undefined) out.push(v)
    }
    let lI = 0
    let rI = 0
    while (lI < lpes.length || rI < rpes.length) {
      if (lI < lpes.length && rI < rpes.length) {
        const pe = lpes[lI]!
        if (pe.key === rpes[rI]!.key) {
          mergedR.add(pe.key)
          mergeItem(pe, observedL.get(pe.key), observedR.get(pe.key))
          lI++
          rI++
          nextShared = shift()
          continue
        }
        if (observedR.has(pe.key) && nextShared !== undefined && nextShared.key !== pe.key) { lI++; continue }
      }
      if (lI < lpes.length) {
        const pe = lpes[lI]!
        if (!observedR.has(pe.key)) {
          mergeItem(pe, lhsList[lI], undefined)
          lI++
          continue
        } else if (mergedR.has(pe.key)) lI++
      }
      if (rI < rpes.length) {
        const pe = rpes[rI]!
        mergedR.add(pe.key)
        mergeItem(pe, observedL.get(pe.key), observedR.get(pe.key))
        rI++
        if (nextShared !== undefined && nextShared.key === pe.key) nextShared = shift()
      }
    }
    return out.length > 0 ? out : undefined
  }
  return walk(lhs, rhs, node)
}

/** Removes the paths of `set` from a value (upstream TypedValue.RemoveItems); emptied containers become null. */
export function removeItems(value: unknown, set: FieldSet, node: TypeNode): unknown {
  const k = nodeFor(node, value)
  if (k === 'scalar') return value
  if (k === 'leaf') return undefined
  if (k === 'list') {
    if (!Array.isArray(value) || value.length === 0) return undefined
    const out: unknown[] = []
    for (const item of value) {
      const pe = listItemElement(node, item)
      if (set.members.has(pe.key)) continue
      const sub = set.withPrefix(pe)
      out.push(sub.empty() ? item : removeItems(item, sub, node.item) ?? null)
    }
    return out.length > 0 ? out : undefined
  }
  if (!isObject(value) || Object.keys(value).length === 0) return undefined
  const out: Obj = {}
  for (const key of Object.keys(value)) {
    const pe = fieldElement(key)
    if (set.members.has(pe.key)) continue
    const sub = set.withPrefix(pe)
    setOwn(out, key, sub.empty() ? value[key] : removeItems(value[key], sub, node.child(key)) ?? null)
  }
  return Object.keys(out).length > 0 ? out : undefined
}
