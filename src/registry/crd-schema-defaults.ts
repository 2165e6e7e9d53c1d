// Defaults in a CRD schema (upstream's ValidateDefaults): each default free of what the schema prunes and valid against its own schema.
import type { Obj } from './define.js'
import { fieldInvalid, type FieldError } from '../machinery/errors.js'
import { compile, toFieldError } from './custom-schema.js'
import { isObj, META_FIELDS, key, child, goValue, type SchemaOptions } from './crd-schema-common.js'

// ---- defaults (upstream's ValidateDefaults) ----

/** A copy of `v` with what the schema would prune removed. */
export function pruned(v: unknown, s: Obj | undefined, root: boolean): unknown {
  if (!isObj(s)) return v
  if (Array.isArray(v)) return isObj(s.items) ? v.map((x) => pruned(x, s.items, false)) : v
  if (!isObj(v)) return v
  if (s['x-orch-preserve-unknown-fields'] === true && !isObj(s.properties) && !isObj(s.additionalProperties)) return v
  const out: Obj = {}
  const props: Obj = isObj(s.properties) ? s.properties : {}
  const embedded = root || s['x-orch-embedded-resource'] === true
  for (const [k, x] of Object.entries(v)) {
    if (embedded && META_FIELDS.has(k)) { out[k] = x; continue }
    if (isObj(props[k])) out[k] = pruned(x, props[k], false)
    else if (isObj(s.additionalProperties)) out[k] = pruned(x, s.additionalProperties, false)
    else if (s.additionalProperties === true || s['x-orch-preserve-unknown-fields'] === true) out[k] = x
  }
  return out
}

export function sameJson(a: unknown, b: unknown): boolean { return JSON.stringify(a) === JSON.stringify(b) }

export function defaultErrors(s: Obj, path: string, insideMeta: boolean, opts: SchemaOptions, errs: FieldError[]): void {
  if (s.default !== undefined && s.default !== null && !insideMeta) {
    const d = s.default
    const at = child(path, 'default')
    if (opts.requirePrunedDefaults && !sameJson(pruned(d, s, false), d)) errs.push(fieldInvalid(at, goValue(d), 'must not have unknown fields'))
    const validator = compile(s as any, false)
    if (validator && !validator(d)) {
      for (const e of validator.errors ?? []) {
        const fe = toFieldError(d, e)
        if (!fe) continue
        fe.field = fe.field === '' ? at : fe.field.startsWith('[') ? `${at}${fe.field}` : `${at}.${fe.field}`
        errs.push(fe)
      }
    }
  }
  if (isObj(s.items)) defaultErrors(s.items, child(path, 'items'), insideMeta, opts, errs)
  if (isObj(s.properties)) {
    for (const [k, p] of Object.entries(s.properties)) {
      if (!isObj(p)) continue
      const meta = insideMeta || (s['x-orch-embedded-resource'] === true && META_FIELDS.has(k))
      defaultErrors(p, key(child(path, 'properties'), k), meta, opts, errs)
    }
  }
}
