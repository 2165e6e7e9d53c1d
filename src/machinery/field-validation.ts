// Unknown fields (pruned against the type tree) and duplicate JSON keys (a cheap count first, a full scan only on mismatch).
import type { TypeNode } from './patch/schema-walk.js'

/** Removes fields the schema does not declare, in place; returns their paths (`spec.foo`, `spec.containers[0].bar`). */
export function pruneUnknown(value: unknown, node: TypeNode, path = ''): string[] {
  const out: string[] = []
  walk(value, node, path, out)
  return out
}

function walk(value: unknown, node: TypeNode, path: string, out: string[]): void {
  // A struct that preserves unknown fields keeps them, but its declared fields are pruned as any (upstream's pruning).
  if (value === null || typeof value !== 'object' || (node.preserveUnknownFields && node.kind !== 'struct')) return
  if (Array.isArray(value)) {
    if (node.kind !== 'list') return
    const item = node.item
    value.forEach((v, i) => walk(v, item, `${path}[${i}]`, out))
    return
  }
  const o = value as Record<string, unknown>
  if (node.kind === 'struct') {
    for (const k of Object.keys(o)) {
      const f = node.field(k)
      const p = path === '' ? k : `${path}.${k}`
      if (f) { walk(o[k], f, p, out); continue }
      if (!node.allowsAdditional) { out.push(p); delete o[k]; continue }
      walk(o[k], node.child(k), p, out)
    }
  } else if (node.kind === 'map') {
    const elem = node.child('')
    for (const k of Object.keys(o)) walk(o[k], elem, `${path}[${k}]`, out)
  }
}

/**
 * One walk over a decoded object doing what dropNulls, then pruneUnknown, then countValueKeys of the value as decoded
 * do: null-valued keys are dropped; fields the schema does not declare are pruned and their paths pushed to
 * `unknown` (null-valued ones are dropped first, so never reported); the returned count is of the keys the value had
 * before either (every key at every depth: compare with countTextKeys of its text).
 */
export function scrubDecoded(value: Record<string, unknown>, node: TypeNode, unknown: string[]): number {
  return scrub(value, node, [], true, unknown)
}

/** `node` undefined: an untyped part (nulls are dropped and keys counted, nothing pruned); `atRoot`: the path so far prints empty. */
function scrub(value: object, node: TypeNode | undefined, path: string[], atRoot: boolean, unknown: string[]): number {
  const typed = node !== undefined && (!node.preserveUnknownFields || node.kind === 'struct') ? node : undefined
  let n = 0
  if (Array.isArray(value)) {
    const item = typed !== undefined && typed.kind === 'list' ? typed.item : undefined
    for (let i = 0; i < value.length; i++) {
      const x = value[i]
      if (x === null || typeof x !== 'object') continue
      if (item === undefined) { n += scrub(x, undefined, path, false, unknown); continue }
      path.push(`[${i}]`)
      n += scrub(x, item, path, false, unknown)
      path.pop()
    }
    return n
  }
  const o = value as Record<string, unknown>
  const kind = typed?.kind
  const elem = kind === 'map' ? typed!.child('') : undefined
  // for-in, not Object.keys: no key array per object of every write (a decoded object inherits nothing enumerable;
  // deleting the key being visited is allowed)
  for (const k in o) {
    n++
    const x = o[k]
    if (x === null) { delete o[k]; continue }
    if (kind === 'struct') {
      const f = typed!.field(k)
      if (f === undefined && !typed!.allowsAdditional) {
        unknown.push(`${path.join('')}${atRoot ? k : `.${k}`}`)
        n += countValueKeys(x)
        delete o[k]
        continue
      }
      if (typeof x !== 'object') continue
      path.push(atRoot ? k : `.${k}`)
      n += scrub(x, f ?? typed!.child(k), path, atRoot && k === '', unknown)
      path.pop()
    } else if (kind === 'map') {
      if (typeof x !== 'object') continue
      path.push(`[${k}]`)
      n += scrub(x, elem, path, false, unknown)
      path.pop()
    } else if (typeof x === 'object') {
      n += scrub(x, undefined, path, false, unknown)
    }
  }
  return n
}

/** Keys in the text (`"x":` outside strings) against keys in the parsed value: unequal counts mean a duplicate. */
export function hasDuplicateKeys(text: string, parsed: unknown): boolean {
  return countTextKeys(text) !== countValueKeys(parsed)
}

export function countValueKeys(v: unknown): number {
  if (v === null || typeof v !== 'object') return 0
  let n = 0
  if (Array.isArray(v)) { for (const x of v) n += countValueKeys(x); return n }
  for (const k in v as object) n += 1 + countValueKeys((v as Record<string, unknown>)[k])
  return n
}

/**
 * `"…":` occurrences of a JSON text that parsed: strings are found with indexOf (a long value is skipped in one
 * native scan instead of a loop over its characters); a quote ends a string when an even number of backslashes
 * precedes it.
 */
export function countTextKeys(s: string): number {
  let n = 0
  let i = 0
  const len = s.length
  for (;;) {
    const open = s.indexOf('"', i)
    if (open < 0) return n
    let close = open
    for (;;) {
      close = s.indexOf('"', close + 1)
      if (close < 0) return n
      let b = close - 1
      while (s.charCodeAt(b) === 92 /* \ */) b--
      if ((close - 1 - b) % 2 === 0) break
    }
    let j = close + 1
    while (j < len) { const d = s.charCodeAt(j); if (d === 32 || d === 9 || d === 10 || d === 13) j++; else break }
    if (s.charCodeAt(j) === 58 /* : */) n++
    i = close + 1
  }
}

/** The duplicated keys of a JSON text with their paths (slow path: a small parser that keeps every key). */
export function duplicateKeys(text: string): string[] {
  const out: string[] = []
  let i = 0
  const ws = () => { while (i < text.length && ' \t\r\n'.includes(text[i])) i++ }
  const str = (): string => {
    const start = i
    i++
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1
    i++
    return JSON.parse(text.slice(start, i)) as string
  }
  const value = (path: string): void => {
    ws()
    const c = text[i]
    if (c === '{') {
      i++
      const seen = new Set<string>()
      ws()
      if (text[i] === '}') { i++; return }
      for (;;) {
        ws()
        const k = str()
        const p = path === '' ? k : `${path}.${k}`
        if (seen.has(k)) out.push(p)
        seen.add(k)
        ws(); i++ // :
        value(p)
        ws()
        if (text[i] === ',') { i++; continue }
        i++
        return
      }
    }
    if (c === '[') {
      i++
      ws()
      if (text[i] === ']') { i++; return }
      for (let n = 0; ; n++) {
        value(`${path}[${n}]`)
        ws()
        if (text[i] === ',') { i++; continue }
        i++
        return
      }
    }
    if (c === '"') { str(); return }
    while (i < text.length && !',}] \t\r\n'.includes(text[i])) i++
  }
  value('')
  return out
}
