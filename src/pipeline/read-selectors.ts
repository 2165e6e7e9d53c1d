// Label and field selectors of a read (list, watch, deletecollection): parsed and checked against the kind, matched against stored records, and the indexed field a read can start from.
import { badRequest } from '../machinery/errors.js'
import { recordAttrs, type Attrs } from '../machinery/storage-format.js'
import { parseFieldSelector, parseLabelSelector, matchFields, matchLabels, SelectorError, type FieldRequirement, type LabelSelector } from '../machinery/selectors.js'
import type { ResolvedDefinition } from '../registry/define.js'
import type { RequestContext } from './context.js'
import { storedFieldRequirements } from './convert.js'

export interface Selectors { labels: LabelSelector | null; fields: FieldRequirement[] | null }

export function parseSelectors(ctx: RequestContext, def: ResolvedDefinition): Selectors {
  let labels: LabelSelector | null = null
  let fields: FieldRequirement[] | null = null
  const ls = ctx.query.get('labelSelector')
  const fs = ctx.query.get('fieldSelector')
  try {
    if (ls) { labels = parseLabelSelector(ls); if (labels.length === 0) labels = null }
    if (fs) { fields = parseFieldSelector(fs); if (fields.length === 0) fields = null }
  } catch (err) {
    if (err instanceof SelectorError) throw badRequest(err.message)
    throw err
  }
  if (fields) {
    // A type served over another's storage: its field names are the stored type's (convert.ts).
    if (ctx.conversion !== undefined) fields = storedFieldRequirements(ctx.conversion, fields)
    for (const f of fields) {
      if (f.field === 'metadata.name') continue
      // Cluster-scoped kinds with selectable fields of their own (nodes, namespaces, CSRs) know no namespace field.
      if (f.field === 'metadata.namespace' && !(def.scope === 'Cluster' && def.fieldSelectors)) continue
      if (def.fieldSelectors && f.field in def.fieldSelectors) continue
      if (def.fieldSelectors) throw badRequest(`field label not supported: ${f.field}`)
      throw badRequest(`"${f.field}" is not a known field selector: only "metadata.name", "metadata.namespace"`)
    }
  }
  return { labels, fields }
}

function fieldValue(key: string, attrs: Attrs, field: string): string {
  if (field === 'metadata.name') return key.slice(key.lastIndexOf('/') + 1)
  if (field === 'metadata.namespace') { const p = key.split('/'); return p[2] }
  return attrs.f?.[field] ?? ''
}

export function matches(sel: Selectors, key: string, rec: Uint8Array): boolean {
  if (!sel.labels && !sel.fields) return true
  return matchesAttrs(sel, key, recordAttrs(rec))
}

/** matches() on attributes decoded once (watch fan-out checks one event against many watchers). */
export function matchesAttrs(sel: Selectors, key: string, a: Attrs): boolean {
  if (sel.labels && !matchLabels(sel.labels, a.l)) return false
  if (sel.fields && !matchFields(sel.fields, (f) => fieldValue(key, a, f))) return false
  return true
}

/**
 * The equality on an indexed field a read can start from (the shard's secondary index), if the selector has one.
 * Reads of an older version (a rollback overlay) scan the collection instead: the index holds current values.
 */
export function indexedRequirement(def: ResolvedDefinition, sel: Selectors): { field: string; value: string } | undefined {
  if (!def.indexedFields || !sel.fields) return undefined
  const f = sel.fields.find((r) => r.op === 'eq' && def.indexedFields!.includes(r.field))
  return f ? { field: f.field, value: f.value } : undefined
}
