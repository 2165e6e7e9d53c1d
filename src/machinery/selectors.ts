// Label selectors (=, ==, !=, in, notin, exists, !key) and field selectors (=, ==, !=): parsing and matching.
import { qualifiedName, labelValue } from './validation.js'

export type LabelRequirement =
  | { key: string; op: 'eq' | 'neq'; value: string }
  | { key: string; op: 'gt' | 'lt'; value: number }
  | { key: string; op: 'in' | 'notin'; values: string[] }
  | { key: string; op: 'exists' | 'notexists' }

export type LabelSelector = LabelRequirement[]

export class SelectorError extends Error {}

// ---- label selectors: upstream's lexer and parser (apimachinery labels), so errors name the tokens it names ----

type Tok = 'end' | 'id' | 'in' | 'notin' | '(' | ')' | ',' | '!' | '=' | '==' | '!=' | '>' | '<'
const SPECIAL = new Set(['=', '!', '(', ')', ',', '>', '<'])
const SYMBOLS = new Set<string>(['(', ')', ',', '!', '=', '==', '!=', '>', '<'])
const isSpace = (c: string): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n'

/** The selector's tokens with their literal text; `in` and `notin` are keywords, everything else not special is an identifier. */
function tokenize(s: string): Array<[Tok, string]> {
  const out: Array<[Tok, string]> = []
  let i = 0
  while (i < s.length) {
    const c = s[i]!
    if (isSpace(c)) { i++; continue }
    if (SPECIAL.has(c)) {
      // The longest run of special characters that is a symbol ("!=", "=="), as upstream's scanner reads them.
      let sym = c
      if (i + 1 < s.length && SYMBOLS.has(c + s[i + 1])) sym = c + s[i + 1]
      out.push([sym as Tok, sym])
      i += sym.length
      continue
    }
    const st = i
    while (i < s.length && !isSpace(s[i]!) && !SPECIAL.has(s[i]!)) i++
    const word = s.slice(st, i)
    out.push([word === 'in' || word === 'notin' ? word : 'id', word])
  }
  out.push(['end', ''])
  return out
}

/** Parses the string form of a label selector; throws SelectorError with upstream's texts on bad input. */
export function parseLabelSelector(s: string): LabelSelector {
  const toks = tokenize(s)
  let at = 0
  // In the value context (keys and values) the keywords are identifiers, as upstream's parser reads them.
  const peek = (): [Tok, string] => { const [t, l] = toks[at]!; return [t === 'in' || t === 'notin' ? 'id' : t, l] }
  const next = (): [Tok, string] => { const r = peek(); if (at < toks.length - 1) at++; return r }
  const nextOperator = (): [Tok, string] => { const r = toks[at]!; if (at < toks.length - 1) at++; return r }
  const fail = (text: string): never => { throw new SelectorError(`unable to parse requirement: ${text}`) }
  const reqs: LabelSelector = []
  for (;;) {
    const [t, l] = peek()
    if (t === 'end') return reqs
    if (t !== 'id' && t !== '!') throw new SelectorError(`found '${l}', expected: !, identifier, or 'end of string'`)
    reqs.push(requirement())
    const [t2, l2] = next()
    if (t2 === 'end') return reqs
    if (t2 !== ',') throw new SelectorError(`found '${l2}', expected: ',' or 'end of string'`)
    const [t3, l3] = peek()
    if (t3 !== 'id' && t3 !== '!') throw new SelectorError(`found '${l3}', expected: identifier after ','`)
  }

  function requirement(): LabelRequirement {
    let [t, key] = next()
    let missing = false
    if (t === '!') { missing = true; [t, key] = next() }
    if (t !== 'id') fail(`found '${key}', expected: identifier`)
    const [after] = peek()
    if (missing) return checked({ key, op: 'notexists' }, [])
    if (after === 'end' || after === ',') return checked({ key, op: 'exists' }, [])
    const [op, lit] = nextOperator()
    switch (op) {
      case 'in': case 'notin': return checked({ key, op, values: [] }, values())
      case '=': case '==': case '!=': return checked({ key, op: op === '!=' ? 'neq' : 'eq', value: '' }, exactValue())
      case '>': case '<': return checked({ key, op: op === '>' ? 'gt' : 'lt', value: 0 }, exactValue())
      default: return fail(`found '${lit}', expected: in, notin, =, ==, !=, gt, lt`)
    }
  }

  function values(): string[] {
    const [t, l] = next()
    if (t !== '(') fail(`found '${l}' expected: '('`)
    const [t2, l2] = peek()
    if (t2 === ')') { next(); return [''] }
    if (t2 !== 'id' && t2 !== ',') fail(`found '${l2}', expected: ',', ')' or identifier`)
    const set = new Set<string>()
    for (;;) {
      const [t3, l3] = next()
      if (t3 === 'id') {
        set.add(l3)
        const [t4, l4] = peek()
        if (t4 === ',') continue
        if (t4 === ')') break
        fail(`found '${l4}', expected: ',' or ')'`)
      } else if (t3 === ',') {
        // "(,", ",,", ",)": empty values.
        if (set.size === 0) set.add('')
        const [t4] = peek()
        if (t4 === ')') { set.add(''); break }
        if (t4 === ',') { next(); set.add('') }
      } else {
        fail(`found '${l3}', expected: ',', or identifier`)
      }
    }
    const [t5, l5] = next()
    if (t5 !== ')') fail(`found '${l5}', expected: ')'`)
    return [...set].sort()
  }

  function exactValue(): string[] {
    const [t] = peek()
    if (t === 'end' || t === ',') return ['']
    const [t2, l2] = next()
    if (t2 !== 'id') fail(`found '${l2}', expected: identifier`)
    return [l2]
  }
}

/** upstream NewRequirement's checks, all of them (one error alone, several as a list): the key, the values the operator takes, each value. */
function checked(r: LabelRequirement, vals: string[]): LabelRequirement {
  const errs: string[] = []
  const keyErrs = qualifiedName(r.key)
  if (keyErrs.length > 0) errs.push(`key: Invalid value: ${JSON.stringify(r.key)}: ${keyErrs.join('; ')}`)
  const list = `[]string{${vals.map((v) => JSON.stringify(v)).join(', ')}}`
  switch (r.op) {
    case 'in': case 'notin':
      if (vals.length === 0) errs.push(`values: Invalid value: ${list}: for 'in', 'notin' operators, values set can't be empty`)
      r.values = vals
      break
    case 'eq': case 'neq':
      if (vals.length !== 1) errs.push(`values: Invalid value: ${list}: exact-match compatibility requires one single value`)
      r.value = vals[0] ?? ''
      break
    case 'gt': case 'lt':
      if (vals.length !== 1) errs.push(`values: Invalid value: ${list}: for 'Gt', 'Lt' operators, exactly one value is required`)
      vals.forEach((v, i) => { if (!/^[+-]?\d+$/.test(v)) errs.push(`values[${i}]: Invalid value: ${JSON.stringify(v)}: for 'Gt', 'Lt' operators, the value must be an integer`) })
      r.value = Number(vals[0])
      break
  }
  vals.forEach((v, i) => {
    const e = labelValue(v)
    if (e.length > 0) errs.push(`values[${i}][${r.key}]: Invalid value: ${JSON.stringify(v)}: ${e.join('; ')}`)
  })
  if (errs.length > 0) throw new SelectorError(`unable to parse requirement: ${errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`}`)
  return r
}

/**
 * metav1.LabelSelectorAsSelector: a LabelSelector object's matchLabels and matchExpressions as requirements (an
 * unknown operator matches nothing; no selector, or an empty one, selects everything).
 */
export function labelSelectorOf(v: unknown): LabelSelector {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return []
  const o = v as Record<string, unknown>
  const reqs: LabelSelector = []
  const ml = o.matchLabels
  if (ml !== null && typeof ml === 'object' && !Array.isArray(ml)) for (const [key, value] of Object.entries(ml)) reqs.push({ key, op: 'eq', value: String(value) })
  for (const e of Array.isArray(o.matchExpressions) ? o.matchExpressions as unknown[] : []) {
    if (e === null || typeof e !== 'object') continue
    const x = e as Record<string, unknown>
    const key = typeof x.key === 'string' ? x.key : ''
    const values = Array.isArray(x.values) ? x.values.filter((y): y is string => typeof y === 'string') : []
    switch (x.operator) {
      case 'In': reqs.push({ key, op: 'in', values }); break
      case 'NotIn': reqs.push({ key, op: 'notin', values }); break
      case 'Exists': reqs.push({ key, op: 'exists' }); break
      case 'DoesNotExist': reqs.push({ key, op: 'notexists' }); break
      default: reqs.push({ key, op: 'in', values: [] })
    }
  }
  return reqs
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
