// One event to one watcher: key and selector checks, the event's type for that watcher (a change can stop or start a match), and its frame (shared, Table, metadata-only or converted).
import { recordAttrs, recordObject, type Attrs } from '../machinery/storage-format.js'
import type { WatchEvent } from '../../actors/shard/messages.js'
import type { ResolvedDefinition } from '../registry/define.js'
import { matchesAttrs } from '../pipeline/read-selectors.js'
import { buildTable, partialObjectMetadata } from '../pipeline/table.js'
import { viewJson, viewObject } from '../pipeline/convert.js'
import type { Watcher } from './watch.js'
import { encoded, frame, encodeEvent, write } from './watch-stream.js'

/** Attributes of a record decoded once per event, whatever the number of watchers that check them. */
const attrsCache = new WeakMap<Uint8Array, Attrs>()
export function attrsOf(rec: Uint8Array): Attrs {
  let a = attrsCache.get(rec)
  if (!a) { a = recordAttrs(rec); attrsCache.set(rec, a) }
  return a
}

export function keyMatchesWatcher(w: Watcher, key: string): boolean {
  if (!key.startsWith(w.prefix)) return false
  if (w.name !== '' && key.slice(key.lastIndexOf('/') + 1) !== w.name) return false
  return true
}

/** A Table watch event: one row, column definitions only in the watcher's first event. */
function tableEvent(w: Watcher, type: string, rec: Uint8Array, query: URLSearchParams): Buffer {
  const o = JSON.parse(recordObject(rec).toString('utf8'))
  const t = buildTable(w.def, [o], { resourceVersion: o.metadata?.resourceVersion ?? '' }, query, w.table!, !w.tableColumnsSent)
  w.tableColumnsSent = true
  return Buffer.from(`{"type":"${type}","object":${JSON.stringify(t)}}\n`)
}

/**
 * A metadata-only watch event: the object as PartialObjectMetadata (client-go's metadata informers ask for these).
 * Made once per event, type and apiVersion, in the same cache as the other encodings, and shared by its watchers.
 */
function metadataEvent(type: string, rec: Uint8Array, apiVersion: string): Buffer {
  let m = encoded.get(rec)
  if (!m) { m = new Map(); encoded.set(rec, m) }
  const k = `meta:${apiVersion}:${type}`
  let b = m.get(k)
  if (!b) {
    const o = JSON.parse(recordObject(rec).toString('utf8'))
    b = Buffer.from(`{"type":"${type}","object":${JSON.stringify(partialObjectMetadata(o, apiVersion))}}\n`)
    m.set(k, b)
  }
  return b
}

export function emit(w: Watcher, type: string, rec: Uint8Array): void {
  if (w.view !== null) { emitConverted(w, w.view, type, rec); return }
  // A webhook-converted watch's Table is built after the conversion (writeConverted), from the plain event.
  if (w.table && w.wc === null) { write(w, tableEvent(w, type, rec, w.query)); return }
  if (w.metadataOnly) { write(w, metadataEvent(type, rec, w.metadataOnly)); return }
  // Through an upstream alias path the objects carry the alias apiVersion (encoded for this watcher alone).
  write(w, w.alias ? frame(w.mt, type, recordObject(rec), w.alias) : encodeEvent(w.mt, type, rec))
}

/**
 * emit() for a type served over another's storage: the stored object converted to the served type, once per event,
 * type and form for every plain watcher of it (a Table row or metadata is made per watcher).
 */
function emitConverted(w: Watcher, view: ResolvedDefinition, type: string, rec: Uint8Array): void {
  const plain = !w.table && !w.metadataOnly && !w.alias
  let m: Map<string, Buffer> | undefined
  const k = `conv:${view.apiVersion}:${w.mt}:${type}`
  if (plain) {
    m = encoded.get(rec)
    const b = m?.get(k)
    if (b !== undefined) { write(w, b); return }
  }
  const o = viewObject(view, JSON.parse(recordObject(rec).toString('utf8')))
  if (w.table) {
    const t = buildTable(view, [o], { resourceVersion: o.metadata?.resourceVersion ?? '' }, w.query, w.table, !w.tableColumnsSent)
    w.tableColumnsSent = true
    write(w, Buffer.from(`{"type":"${type}","object":${JSON.stringify(t)}}\n`))
    return
  }
  if (w.metadataOnly) { write(w, Buffer.from(`{"type":"${type}","object":${JSON.stringify(partialObjectMetadata(o, w.metadataOnly))}}\n`)); return }
  const b = frame(w.mt, type, JSON.stringify(o), w.alias ?? undefined)
  if (plain) {
    if (m === undefined) { m = new Map(); encoded.set(rec, m) }
    m.set(k, b)
  }
  write(w, b)
}

/** An object that stopped matching: DELETED with its previous content and the version of the change. */
function emitStopMatching(w: Watcher, prev: Uint8Array, rv: number): void {
  let json = recordObject(prev).toString('utf8').replace(/"resourceVersion":"\d+"/, `"resourceVersion":"${rv}"`)
  if (w.view !== null) json = viewJson(w.view, json)
  if (w.metadataOnly) json = JSON.stringify(partialObjectMetadata(JSON.parse(json), w.metadataOnly))
  write(w, frame(w.mt, 'DELETED', json, w.alias ?? undefined))
}

export function sendEvent(w: Watcher, ev: WatchEvent): void {
  const [type, key, rv, rec, prev] = ev
  if (rv <= w.sentRv) return
  if (!keyMatchesWatcher(w, key)) return
  const filtered = w.sel.labels !== null || w.sel.fields !== null
  const now = !filtered || matchesAttrs(w.sel, key, attrsOf(rec))
  const before = prev !== null && (!filtered || matchesAttrs(w.sel, key, attrsOf(prev)))
  let t: string | null = null
  if (type === 'DELETED') t = before ? 'DELETED' : null
  else if (type === 'ADDED') t = now ? 'ADDED' : null
  else if (now && before) t = 'MODIFIED'
  else if (now) t = 'ADDED'
  else if (before) { w.sentRv = rv; emitStopMatching(w, prev!, rv); return }
  w.sentRv = rv
  if (t === null) return
  emit(w, t, rec)
}
