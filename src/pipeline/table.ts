// Table responses (kubectl get): column definitions from the type's file, one row per object, metadata copied from the list.
import type { Obj, ResolvedDefinition, TableColumn } from '../registry/define.js'
import { badRequest, notAcceptable } from '../machinery/errors.js'
import { REJECT, scanString, skipValue } from '../machinery/codecs/json-scan.js'
import { parseAccept } from './encode.js'

const TABLE_GROUPS = new Set(['meta.orch.io', 'meta.k8s.io'])
const TABLE_VERSIONS = new Set(['v1', 'v1beta1'])

const DEFAULT_COLUMNS: TableColumn[] = [
  { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace.', cell: (o) => o.metadata?.name ?? '' },
  { name: 'Created At', type: 'date', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.', cell: (o) => o.metadata?.creationTimestamp ?? '' },
]

/**
 * The meta group/version of the transformed form `as` (Table, PartialObjectMetadata...) when the first acceptable
 * Accept entry asks for it in JSON (`meta.k8s.io/v1`, ours, or v1beta1); null when the client prefers a plain form.
 * Entries of other forms are passed over.
 */
function transformedFormOf(accept: string, as: string): string | null {
  for (const e of parseAccept(accept)) {
    if (e.params.as === as) {
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

/** The Table apiVersion asked for, when the client's first acceptable choice is a Table. */
export function tableVersionOf(accept: string | undefined): string | null {
  return accept ? transformedFormOf(accept, 'Table') : null
}

/**
 * The metadata-only form asked for (`PartialObjectMetadata` for a get or watch, `PartialObjectMetadataList` for a
 * list; client-go's metadata client and controller-runtime send these): its apiVersion, or null.
 */
export function metadataFormOf(accept: string | undefined, list: boolean): string | null {
  // Most requests ask for no such form: a substring test spares them a second parse of the header.
  if (!accept || !accept.includes('PartialObjectMetadata')) return null
  return transformedFormOf(accept, list ? 'PartialObjectMetadataList' : 'PartialObjectMetadata')
}

/** An object as PartialObjectMetadata: its whole metadata, nothing else. */
export function partialObjectMetadata(o: Obj, apiVersion: string): Obj {
  return { kind: 'PartialObjectMetadata', apiVersion, metadata: o.metadata ?? {} }
}

function columnsOf(def: ResolvedDefinition): TableColumn[] { return def.table && def.table.length > 0 ? def.table : DEFAULT_COLUMNS }

function columnDefinitions(def: ResolvedDefinition): Obj[] {
  return columnsOf(def).map((c) => ({ name: c.name, type: c.type === 'date' && !c.printerColumn ? 'string' : c.type, format: c.type === 'date' && !c.printerColumn ? 'date' : (c.format ?? ''), description: c.description ?? '', priority: c.priority ?? 0 }))
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

function rowOf(cols: TableColumn[], o: Obj, include: 'None' | 'Metadata' | 'Object', tableApiVersion: string, now: number): Obj {
  const row: Obj = { cells: cols.map((c) => { try { return c.cell(o, now) ?? (c.printerColumn ? null : '') } catch { return c.printerColumn ? null : '' } }) }
  const ro = rowObject(o, include, tableApiVersion)
  if (ro) row.object = ro
  return row
}

export function buildRows(def: ResolvedDefinition, objects: Obj[], query: URLSearchParams, tableApiVersion: string, now: number): Obj[] {
  const include = includeObjectOf(query)
  const cols = columnsOf(def)
  return objects.map((o) => rowOf(cols, o, include, tableApiVersion, now))
}

/** A whole Table for a list or one object; `listMeta` is the list's metadata (resourceVersion, continue, remainingItemCount). */
export function buildTable(def: ResolvedDefinition, objects: Obj[], listMeta: Obj, query: URLSearchParams, tableApiVersion: string, withColumns = true): Obj {
  return {
    kind: 'Table', apiVersion: tableApiVersion, metadata: listMeta,
    columnDefinitions: withColumns ? columnDefinitions(def) : null,
    rows: buildRows(def, objects, query, tableApiVersion, Date.now()),
  }
}

/**
 * A Table for a list from its items' stored JSON, built in slices (`add`), so that other work may run in between.
 * Unless the rows carry whole objects, items are parsed without metadata.managedFields (no column reads it, and the
 * row's metadata leaves it out): in stored pods that is about half the text and most of the parsing. The table is
 * the same as buildTable's of the parsed items.
 */
export class TableListBuilder {
  /** Each row as JSON text (written as it is built, in the slices). */
  readonly #rows: string[] = []
  readonly #cols: TableColumn[]
  readonly #include: 'None' | 'Metadata' | 'Object'
  readonly #now = Date.now()

  constructor(readonly def: ResolvedDefinition, readonly listMeta: Obj, query: URLSearchParams, readonly tableApiVersion: string) {
    this.#include = includeObjectOf(query)
    this.#cols = columnsOf(def)
  }

  add(items: ReadonlyArray<Buffer | string>, from = 0, to = items.length): void {
    const full = this.#include === 'Object'
    for (let i = from; i < to; i++) {
      const it = items[i]
      const o = full ? JSON.parse(it.toString()) as Obj : parseWithoutManagedFields(it)
      this.#rows.push(JSON.stringify(rowOf(this.#cols, o, this.#include, this.tableApiVersion, this.#now)))
    }
  }

  /** The Table as JSON text: JSON.stringify of the Table object (indented by two and a newline when pretty). */
  finishJson(pretty: boolean): string {
    const head = `{"kind":"Table","apiVersion":${JSON.stringify(this.tableApiVersion)},"metadata":${JSON.stringify(this.listMeta)},"columnDefinitions":${JSON.stringify(columnDefinitions(this.def))},"rows":[`
    const text = `${head}${this.#rows.join(',')}]}`
    return pretty ? JSON.stringify(JSON.parse(text), null, 2) + '\n' : text
  }

  /** The Table as an object. */
  finish(): Obj {
    return JSON.parse(this.finishJson(false)) as Obj
  }
}

const METADATA = Buffer.from('"metadata"')
const MANAGED_FIELDS = Buffer.from('"managedFields"')

function keyIs(b: Buffer, start: number, end: number, key: Buffer): boolean {
  return end - start === key.length && b.compare(key, 0, key.length, start, end) === 0
}

/**
 * A stored object parsed without its metadata.managedFields: the text is cut around that member before JSON.parse.
 * When the text is not as expected (not compact JSON), the whole object is parsed and the member deleted.
 */
export function parseWithoutManagedFields(json: Buffer | string): Obj {
  if (typeof json === 'string') return dropManagedFields(JSON.parse(json) as Obj)
  const cut = managedFieldsSpan(json)
  if (cut === null) return dropManagedFields(JSON.parse(json.toString('utf8')) as Obj)
  return JSON.parse(json.toString('utf8', 0, cut[0]) + json.toString('utf8', cut[1])) as Obj
}

function dropManagedFields(o: Obj): Obj {
  const m = o?.metadata
  if (m !== null && typeof m === 'object' && !Array.isArray(m)) delete m.managedFields
  return o
}

/**
 * The bytes to cut out of a stored object so that its metadata has no managedFields: the member with the comma
 * before it (or after it, when it comes first); null when there is none or the text is not compact JSON.
 */
function managedFieldsSpan(b: Buffer): [number, number] | null {
  if (b[0] !== 0x7b) return null
  let i = 1
  while (i < b.length && b[i] !== 0x7d) {
    const ks = i
    const ke = scanString(b, i)
    if (ke === REJECT || b[ke] !== 0x3a) return null
    if (keyIs(b, ks, ke, METADATA) && b[ke + 1] === 0x7b) return managedFieldsIn(b, ke + 1)
    i = skipValue(b, ke + 1)
    if (i === REJECT) return null
    if (b[i] === 0x2c) i++
    else if (b[i] !== 0x7d) return null
  }
  return null
}

function managedFieldsIn(b: Buffer, open: number): [number, number] | null {
  let i = open + 1
  let first = true
  while (i < b.length && b[i] !== 0x7d) {
    const ks = i
    const ke = scanString(b, i)
    if (ke === REJECT || b[ke] !== 0x3a) return null
    const ve = skipValue(b, ke + 1)
    if (ve === REJECT) return null
    if (keyIs(b, ks, ke, MANAGED_FIELDS)) {
      if (!first) return [ks - 1, ve]
      return b[ve] === 0x2c ? [ks, ve + 1] : [ks, ve]
    }
    first = false
    i = ve
    if (b[i] === 0x2c) i++
    else if (b[i] !== 0x7d) return null
  }
  return null
}

export function tableNotSupported(def: ResolvedDefinition) {
  return notAcceptable([`the resource ${def.groupResource} does not support being converted to a Table`])
}
