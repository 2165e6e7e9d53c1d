// x-orch-validations rules of a CRD schema: their fields and field paths checked, rules and message expressions compiled with `self` typed by the schema.
import type { Obj } from './define.js'
import { fieldInvalid, fieldInvalidPrinted, fieldNotSupported, fieldRequired } from '../machinery/errors.js'
import { celCompileSelf, type CelSelfType } from '../machinery/cel.js'
import { isObj, REASONS, child, goRule, type SchemaOptions } from './crd-schema-common.js'
import type { Ssv, Walk } from './crd-schema-openapi.js'

/** A field path of a rule (`.a.b`, `['a']`, `[0]`) that names something the schema declares. */
function fieldPathValid(s: Obj, fp: string): boolean {
  let rest = fp.trim()
  let cur: Obj | undefined = s
  if (rest === '') return false
  while (rest !== '') {
    if (cur === undefined) return false
    let m = /^\.([A-Za-z_][A-Za-z0-9_-]*)/.exec(rest) ?? /^\[\s*'((?:[^'\\]|\\.)*)'\s*\]/.exec(rest)
    if (m) {
      const name = m[1]
      rest = rest.slice(m[0].length)
      const props: Obj = isObj(cur.properties) ? cur.properties : {}
      cur = isObj(props[name]) ? props[name] : isObj(cur.additionalProperties) ? cur.additionalProperties : undefined
      continue
    }
    m = /^\[\s*(\d+)\s*\]/.exec(rest)
    if (m) {
      rest = rest.slice(m[0].length)
      cur = isObj(cur.items) ? cur.items : undefined
      continue
    }
    return false
  }
  return cur !== undefined
}

const CEL_RESERVED = new Set(['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while'])
const CEL_ESCAPABLE = /^[A-Za-z_.\-/][A-Za-z0-9_.\-/]*$/

/** A property's name as CEL sees it (upstream's escaping: `__underscores__`, `__dot__`, `__dash__`, `__slash__`, `__<keyword>__`); undefined when CEL cannot name it. */
function celFieldName(k: string): string | undefined {
  if (CEL_RESERVED.has(k)) return `__${k}__`
  if (!CEL_ESCAPABLE.test(k)) return undefined
  return k.replace(/__/g, '__underscores__').replace(/\./g, '__dot__').replace(/-/g, '__dash__').replace(/\//g, '__slash__')
}

/**
 * The CEL type of a value under a schema node, as upstream declares `self`: scalars by type, lists and maps by their
 * items, objects by their properties (the root's metadata holding only name and generateName). What upstream types
 * otherwise than plainly (formats as timestamps, durations, bytes; int-or-string; unknown fields; embedded
 * resources; nullable) is `dyn`, so a rule is never refused for a type we do not model.
 */
function celSelfType(s: unknown, root = false): CelSelfType {
  if (!isObj(s)) return 'dyn'
  if (s['x-orch-int-or-string'] === true || s['x-orch-preserve-unknown-fields'] === true || s['x-orch-embedded-resource'] === true || s.nullable === true) return 'dyn'
  switch (s.type) {
    case 'string': return typeof s.format === 'string' && s.format !== '' ? 'dyn' : 'string'
    case 'integer': return 'int'
    case 'number': return 'double'
    case 'boolean': return 'bool'
    case 'array': {
      const item = celSelfType(s.items)
      return typeof item === 'string' ? `list<${item}>` : 'list<dyn>'
    }
    case 'object': {
      if (isObj(s.properties) && Object.keys(s.properties).length > 0) {
        const out: { [k: string]: CelSelfType } = {}
        for (const [k, p] of Object.entries(s.properties)) {
          const name = celFieldName(k)
          if (name !== undefined) out[name] = celSelfType(p)
        }
        if (root) {
          out.apiVersion = 'string'
          out.kind = 'string'
          out.metadata = { name: 'string', generateName: 'string' }
        }
        return out
      }
      if (isObj(s.additionalProperties)) {
        const v = celSelfType(s.additionalProperties)
        return typeof v === 'string' ? `map<string, ${v}>` : 'map<string, dyn>'
      }
      return 'dyn'
    }
  }
  return 'dyn'
}

const NEWLINE = /[\n\r]+/

export function ruleErrors(s: Obj, path: string, ssv: Ssv, cel: boolean, isRoot: boolean, opts: SchemaOptions, out: Walk): void {
  const list: unknown[] = s['x-orch-validations']
  const base = child(path, 'x-orch-validations')
  list.forEach((x, i) => {
    const at = `${base}[${i}]`
    const r: Obj = isObj(x) ? x : {}
    const rule = typeof r.rule === 'string' ? r.rule : ''
    const message = typeof r.message === 'string' ? r.message : ''
    const trimmedRule = rule.trim()
    const trimmedMsg = message.trim()
    if (trimmedRule === '') out.schema.push(fieldRequired(child(at, 'rule'), 'rule is not specified'))
    else if (message !== '' && trimmedMsg === '') out.schema.push(fieldInvalid(child(at, 'message'), message, 'must be non-empty if specified'))
    else if (NEWLINE.test(trimmedMsg)) out.schema.push(fieldInvalid(child(at, 'message'), message, 'must not contain line breaks'))
    else if (NEWLINE.test(trimmedRule) && trimmedMsg === '') out.schema.push(fieldRequired(child(at, 'message'), 'message must be specified if rule contains line breaks'))
    const msgExpr = typeof r.messageExpression === 'string' ? r.messageExpression : ''
    if (msgExpr !== '' && msgExpr.trim() === '') out.schema.push(fieldRequired(child(at, 'messageExpression'), 'messageExpression must be non-empty if specified'))
    if (r.reason !== undefined && !REASONS.includes(r.reason)) out.schema.push(fieldNotSupported(child(at, 'reason'), r.reason, REASONS))
    const fp = typeof r.fieldPath === 'string' ? r.fieldPath : ''
    if (fp !== '' && fp.trim() === '') out.schema.push(fieldInvalid(child(at, 'fieldPath'), fp, 'must be non-empty if specified'))
    if (NEWLINE.test(fp)) out.schema.push(fieldInvalid(child(at, 'fieldPath'), fp, 'must not contain line breaks'))
    if (fp !== '' && !fieldPathValid(s, fp)) out.schema.push(fieldInvalid(child(at, 'fieldPath'), fp, 'must be a valid path'))
  })
  // Rules are compiled only where the schema below them is sound (upstream: no schema error at this level or deeper).
  if (!cel || out.schema.length > 0) return
  let selfType: CelSelfType | undefined
  list.forEach((x, i) => {
    if (!isObj(x) || typeof x.rule !== 'string' || x.rule.trim() === '') return
    const at = `${base}[${i}]`
    if (!opts.preexisting.has(x.rule)) {
      const c = celCompileSelf(x.rule, selfType ??= celSelfType(s, isRoot))
      if (c.problem !== undefined) out.cel.push(fieldInvalidPrinted(child(at, 'rule'), goRule(x).text, c.problem))
      else if (c.type !== 'bool' && c.type !== 'dyn') out.cel.push(fieldInvalidPrinted(child(at, 'rule'), goRule(x).text, 'cel expression must evaluate to a bool'))
    }
    const me = typeof x.messageExpression === 'string' ? x.messageExpression : ''
    if (me.trim() !== '' && !opts.preexisting.has(me)) {
      const c = celCompileSelf(me, selfType ??= celSelfType(s, isRoot))
      if (c.problem !== undefined) out.cel.push(fieldInvalidPrinted(child(at, 'messageExpression'), goRule(x).text, `messageExpression ${c.problem}`))
      else if (c.type !== 'string' && c.type !== 'dyn') out.cel.push(fieldInvalidPrinted(child(at, 'messageExpression'), goRule(x).text, 'messageExpression must evaluate to a string'))
    }
    const usesOldSelf = /\boldSelf\b/.test(x.rule)
    if (usesOldSelf) {
      if (ssv.uncorrelatable !== undefined) out.cel.push(fieldInvalid(child(at, 'rule'), x.rule, `oldSelf cannot be used on the uncorrelatable portion of the schema within ${ssv.uncorrelatable}`))
    } else if (x.optionalOldSelf !== undefined && x.optionalOldSelf !== null) {
      out.cel.push(fieldInvalid(child(at, 'optionalOldSelf'), x.optionalOldSelf, 'may not be set if oldSelf is not used in rule'))
    }
  })
}
