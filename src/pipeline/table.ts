// Table responses (kubectl get): column definitions from the type's file, one row per object, metadata copied from the list.
import type { Obj, ResolvedDefinition, TableColumn } from '../registry/define.js'
import { badRequest, notAcceptable } from '../machinery/errors.js'
import { parseAccept } from './encode.js'

const TABLE_GROUPS = new Set(['meta.orch.io', 'meta.k8s.io'])
const TABLE_VERSIONS = new Set(['v1', 'v1beta1'])

const DEFAULT_COLUMNS: TableColumn[] = [
  { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace.', cell: (o) => o.metadata?.name ?? '' },
  { name: 'Created At', type: 'date', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.', cell: (o) => o.metadata?.creationTimestamp ?? '' },
]

/**
 * The Table apiVersion asked for (`meta.k8s.io/v1` or ours), when the first acceptable Accept entry is a Table;
 * null when the client prefers a plain form.
 */
export function tableVersionOf(accept: string | undefined): string | null {
  if (!accept) return null
  for (const e of parseAccept(accept)) {
    if (e.params.as === 'Table') {
      const g = e.params.g ?? ''
      const v = e.params.v ?? ''
      if (e.type === 'application' && e.sub === 'json' && TABLE_GROUPS.has(g) && TABLE_VERSIONS.has(v)) return `${g}/${v}`
      continue
    }
    if (e.params.as !== undefined) continue
    if ((e.type === 'application' && (e.sub === 'json' || e.sub === 'yaml' || e.sub === '*')) || e.type === '*') return null
  }
  return null
}

function columnsOf(def: ResolvedDefinition): TableColumn[] { return def.table && def.table.length > 0 ? def.table : DEFAULT_COLUMNS }

function columnDefinitions(def: ResolvedDefinition): Obj[] {
  return columnsOf(def).map((c) => ({ name: c.name, type: c.type === 'date' ? 'string' : c.type, format: c.type === 'date' ? 'date' : (c.format ?? ''), description: c.description ?? '', priority: c.priority ?? 0 }))
}

function includeObjectOf(query: URLSearchParams): 'None' | 'Metadata' | 'Object' {
  const v = query.get('includeObject') ?? 'Metadata'
  if (v !== 'None' && v !== 'Metadata' && v !== 'Object') throw badRequest(`includeObject: Unsupported value: "${v}": supported values: "Metadata", "None", "Object"`)
  return v
}

function rowObject(o: Obj, include: 'None' | 'Metadata' | 'Object', tableApiVersion: string): Obj | undefined {
  if (include === 'None') return undefined
  if (include === 'Object') return o
  const m = { ...o.metadata }
  delete m.managedFields
  return { kind: 'PartialObjectMetadata', apiVersion: tableApiVersion, metadata: m }
}

export function buildRows(def: ResolvedDefinition, objects: Obj[], query: URLSearchParams, tableApiVersion: string, now: number): Obj[] {
  const include = includeObjectOf(query)
  const cols = columnsOf(def)
  return objects.map((o) => {
    const row: Obj = { cells: cols.map((c) => { try { return c.cell(o, now) ?? '' } catch { return '' } }) }
    const ro = rowObject(o, include, tableApiVersion)
    if (ro) row.object = ro
    return row
  })
}

/** A whole Table for a list or one object; `listMeta` is the list's metadata (resourceVersion, continue, remainingItemCount). */
export function buildTable(def: ResolvedDefinition, objects: Obj[], listMeta: Obj, query: URLSearchParams, tableApiVersion: string, withColumns = true): Obj {
  return {
    kind: 'Table', apiVersion: tableApiVersion, metadata: listMeta,
    columnDefinitions: withColumns ? columnDefinitions(def) : null,
    rows: buildRows(def, objects, query, tableApiVersion, Date.now()),
  }
}

export function tableNotSupported(def: ResolvedDefinition) {
  return notAcceptable([`the resource ${def.groupResource} does not support being converted to a Table`])
}
