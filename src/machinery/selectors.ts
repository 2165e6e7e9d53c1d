// Label selectors (=, ==, !=, in, notin, exists, !key) and field selectors (=, ==, !=): parsing and matching.
import { qualifiedName, labelValue } from './validation.js'

export type LabelRequirement =
  | { key: string; op: 'eq' | 'neq'; value: string }
  | { key: string; op: 'gt' | 'lt'; value: number }
  | { key: string; op: 'in' | 'notin'; values: string[] }
  | { key: string; op: 'exists' | 'notexists' }

export type LabelSelector = LabelRequirement[]

export class SelectorError extends Error {}

function isKeyChar(c: string): boolean { return /[A-Za-z0-9._\-/]/.test(c) }

/** Parses the string form of a label selector; throws SelectorError with upstream-like text on bad input. */
export function parseLabelSelector(s: string): LabelSelector {
  const reqs: LabelSelector = []
  let i = 0
  const n = s.length
  const ws = () => { while (i < n && s[i] === ' ') i++ }
  const ident = (): string => {
    ws()
    const st = i
    while (i < n && isKeyChar(s[i])) i++
    return s.slice(st, i)
  }
  while (true) {
    ws()
    if (i >= n) break
    let neg = false
    if (s[i] === '!') { neg = true; i++ }
    const key = ident()
    if (key === '') throw new SelectorError(`unable to parse requirement: found '${s[i] ?? ''}', expected: identifier`)
    ws()
    if (neg) {
      checkKey(key)
      reqs.push({ key, op: 'notexists' })
    } else if (i >= n || s[i] === ',') {
      checkKey(key)
      reqs.push({ key, op: 'exists' })
    } else if (s[i] === '>' || s[i] === '<') {
      const op = s[i] === '>' ? 'gt' : 'lt'
      i++
      const raw = ident()
      if (!/^-?\d+$/.test(raw)) throw new SelectorError(`unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer`)
      checkKey(key)
      reqs.push({ key, op, value: Number(raw) })
    } else if (s.startsWith('==', i) || s.startsWith('!=', i) || s[i] === '=') {
      const op = s.startsWith('!=', i) ? 'neq' : 'eq'
      i += s.startsWith('==', i) || s.startsWith('!=', i) ? 2 : 1
      const value = ident()
      checkKey(key)
      checkValue(key, value)
      reqs.push({ key, op, value })
    } else if (/^in\s*\(/.test(s.slice(i)) || /^notin\s*\(/.test(s.slice(i))) {
      const op = s.startsWith('notin', i) ? 'notin' : 'in'
      i += op.length
      ws()
      i++ // (
      const values: string[] = []
      while (true) {
        const v = ident()
        values.push(v)
        ws()
        if (s[i] === ',') { i++; continue }
        if (s[i] === ')') { i++; break }
        throw new SelectorError(`unable to parse requirement: found '${s[i] ?? ''}', expected: ',', ')'`)
      }
      checkKey(key)
      for (const v of values) checkValue(key, v)
      reqs.push({ key, op, values })
    } else {
      throw new SelectorError(`unable to parse requirement: found '${s[i]}', expected: in, notin, =, ==, !=, gt, lt`)
    }
    ws()
    if (i < n) {
      if (s[i] !== ',') throw new SelectorError(`found '${s[i]}', expected: ',' or 'end of string'`)
      i++
      ws()
      if (i >= n) throw new SelectorError(`found '', expected: identifier after ','`)
    }
  }
  return reqs
}

/** Keys are qualified names and values label values, as upstream validates them when parsing. */
function checkKey(key: string): void {
  const errs = qualifiedName(key)
  if (errs.length > 0) throw new SelectorError(`unable to parse requirement: key: Invalid value: ${JSON.stringify(key)}: ${errs.join('; ')}`)
}

function checkValue(key: string, value: string): void {
  const errs = labelValue(value)
  if (errs.length > 0) throw new SelectorError(`unable to parse requirement: values[0][${key}]: Invalid value: ${JSON.stringify(value)}: ${errs.join('; ')}`)
}

export function matchLabels(sel: LabelSelector, labels: Record<string, string> | undefined): boolean {
  for (const r of sel) {
    const v = labels?.[r.key]
    switch (r.op) {
      case 'eq': if (v !== r.value) return false; break
      case 'neq': if (v === r.value) return false; break
      case 'in': if (v === undefined || !r.values.includes(v)) return false; break
      case 'notin': if (v !== undefined && r.values.includes(v)) return false; break
      case 'exists': if (v === undefined) return false; break
      case 'notexists': if (v !== undefined) return false; break
      case 'gt': if (v === undefined || !/^-?\d+$/.test(v) || Number(v) <= r.value) return false; break
      case 'lt': if (v === undefined || !/^-?\d+$/.test(v) || Number(v) >= r.value) return false; break
    }
  }
  return true
}

export interface FieldRequirement { field: string; op: 'eq' | 'neq'; value: string }

/** Field selectors: comma-separated `field=value`, `field==value`, `field!=value`; backslash escapes. */
export function parseFieldSelector(s: string): FieldRequirement[] {
  const out: FieldRequirement[] = []
  if (s.trim() === '') return out
  for (const part of splitUnescaped(s, ',')) {
    const m = /^([^=!]+?)(==|!=|=)(.*)$/.exec(part)
    if (!m) throw new SelectorError(`invalid selector: '${s}'; can't understand '${part}'`)
    out.push({ field: m[1].trim(), op: m[2] === '!=' ? 'neq' : 'eq', value: unescapeValue(m[3]) })
  }
  return out
}

function splitUnescaped(s: string, sep: string): string[] {
  const parts: string[] = []
  let cur = ''
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\' && i + 1 < s.length) { cur += s[i] + s[i + 1]; i++; continue }
    if (s[i] === sep) { parts.push(cur); cur = '' } else cur += s[i]
  }
  parts.push(cur)
  return parts
}

function unescapeValue(v: string): string { return v.replace(/\\(.)/g, '$1') }

export function matchFields(reqs: FieldRequirement[], get: (field: string) => string): boolean {
  for (const r of reqs) {
    const v = get(r.field)
    if (r.op === 'eq' ? v !== r.value : v === r.value) return false
  }
  return true
}
