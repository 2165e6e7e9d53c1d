// Watch stream writing: event frames encoded once and shared by every watcher, gathered and corked writes, the queue of a full socket, bookmark and error frames, the end of a stream.
import { ApiError } from '../machinery/errors.js'
import { recordObject } from '../machinery/storage-format.js'
import { isProtobuf, aliased, type MediaType, type Alias } from '../pipeline/encode.js'
import { encodeObjectJson, encodeWatchEvent } from '../machinery/codecs/protobuf.js'
import { cborWatchEvent } from '../machinery/codecs/cbor.js'
import { byteFieldsOf } from '../registry/byte-fields.js'
import { buildTable } from '../pipeline/table.js'
import { toView, type WebhookConversion } from '../pipeline/crd-convert.js'
import { log, delivering, dirty, type Watcher } from './watch.js'

/** A watcher whose unsent bytes pass this is cut off (its client relists); writers never wait for it. */
export const MAX_BUFFERED = 8 * 1024 * 1024

export const watchMetrics = { started: 0, active: 0, slowTerminated: 0 }

// ---- encoding: once per event, shared by every watcher ----

export const encoded = new WeakMap<Uint8Array, Map<string, Buffer>>()

/** One event in the watcher's form: a JSON line, a length-prefixed protobuf WatchEvent frame, or a CBOR data item. */
export function frame(mt: MediaType, type: string, objectJson: Buffer | string, alias?: Alias): Buffer {
  if (isProtobuf(mt)) {
    return encodeWatchEvent(type, encodeObjectJson(alias ? aliased(objectJson.toString(), alias) : objectJson))
  }
  if (mt === 'cbor') return cborWatchEvent(type, aliased(objectJson.toString(), alias), byteFieldsOf)
  const body = alias ? aliased(objectJson.toString(), alias) : objectJson
  return Buffer.concat([Buffer.from(`{"type":"${type}","object":`), typeof body === 'string' ? Buffer.from(body) : body, NEWLINE_END])
}
const NEWLINE_END = Buffer.from('}\n')

/** Encoded once per event, type and media type, and shared by every watcher that gets it. */
export function encodeEvent(mt: MediaType, type: string, rec: Uint8Array): Buffer {
  let m = encoded.get(rec)
  if (!m) { m = new Map(); encoded.set(rec, m) }
  const k = `${mt}:${type}`
  let b = m.get(k)
  if (!b) { b = frame(mt, type, recordObject(rec)); m.set(k, b) }
  return b
}

export function write(w: Watcher, buf: Buffer | string): void {
  if (w.closed) return
  if (w.wc !== null) { writeConverted(w, w.wc, buf); return }
  w.wrote = true
  // During a delivery the frames of one watcher are gathered and go out in one corked write (one send).
  if (delivering) {
    if (w.out.length === 0) dirty.push(w)
    w.out.push(buf)
    return
  }
  writeNow(w, buf)
}

/**
 * write() for a watch of a webhook-converted version: the frame's object converted through the webhook (one review per
 * event), frames kept in order; a failed conversion ends the watch with an ERROR event carrying the Status.
 */
function writeConverted(w: Watcher, wc: WebhookConversion, buf: Buffer | string): void {
  const step = async (): Promise<void> => {
    if (w.closed) return
    const text = buf.toString()
    let out: Buffer | string = buf
    if (text.includes(`"apiVersion":"${wc.stored.apiVersion}"`)) {
      const ev = JSON.parse(text) as { type: string; object?: Record<string, any> }
      if (ev.object !== undefined && ev.object.apiVersion === wc.stored.apiVersion && ev.object.kind === wc.view.kind) {
        // A bookmark carries no object to convert: only its apiVersion is the requested one.
        if (ev.type === 'BOOKMARK') ev.object.apiVersion = wc.view.apiVersion
        else ev.object = (await toView(wc, [ev.object]))[0]
        if (w.table && ev.type !== 'BOOKMARK') {
          ev.object = buildTable(wc.view, [ev.object!], { resourceVersion: ev.object!.metadata?.resourceVersion ?? '' }, w.query, w.table, !w.tableColumnsSent)
          w.tableColumnsSent = true
        }
        out = `${JSON.stringify(ev)}\n`
      }
    }
    if (w.closed) return
    w.wrote = true
    writeNow(w, out)
  }
  const failed = (err: unknown): void => {
    if (w.closed) return
    const e = err instanceof ApiError ? err : new ApiError(500, 'InternalError', `Internal error occurred: ${(err as Error).message}`)
    w.wrote = true
    writeNow(w, errorFrame(w, e))
    end(w)
  }
  w.chain = (w.chain ?? Promise.resolve()).then(step).catch(failed)
}

export function flushDirty(): void {
  for (let i = 0; i < dirty.length; i++) {
    const w = dirty[i]
    const out = w.out
    w.out = []
    if (w.closed) continue
    writeNow(w, out.length === 1 ? out[0] : out)
  }
  dirty.length = 0
}

function noop(): void {}

const byteLength = (b: Buffer | string): number => typeof b === 'string' ? Buffer.byteLength(b) : b.length

/** uWS's cork buffer (16 KB) less a margin, and the chunk framing uWS adds around each write (CRLF, hex size, CRLF). */
const CORK_ROOM = 16 * 1024 - 256
const CHUNK_FRAMING = 12
const single: Array<Buffer | string> = ['']

/**
 * Frames from `from` on to the socket, in corked groups that fit uWS's cork buffer, until the socket is full (a write
 * answers false and uWS keeps the rest of that frame: `w.blocked`). Returns the index after the last frame handed over.
 * A write that does not fit in the cork buffer makes uWS send the corked bytes first, and when that send finds the
 * socket full this uWS build keeps the corked bytes but drops the write's own (its AsyncSocket::uncork): the stream's
 * chunk framing broke (the client read the next chunk's size line where it expected data) and the event was lost. So a
 * corked group never outgrows the cork buffer, and a frame too large for it is corked alone: only its few bytes of
 * chunk framing are corked before it, which a socket that took the last write whole has room for. (An uncorked write
 * would be safe but makes uWS print a warning on stderr for every such response.)
 */
function writeFrames(w: Watcher, frames: ArrayLike<Buffer | string>, from: number): number {
  const res = w.res
  let i = from
  while (i < frames.length && !w.blocked) {
    res.cork(() => {
      let room = CORK_ROOM
      do {
        const n = byteLength(frames[i]) + CHUNK_FRAMING
        // the first frame of a group goes in whatever its size (a large one alone)
        if (n > room && room < CORK_ROOM) break
        room -= n
        if (!res.write(frames[i++])) { w.blocked = true; break }
      } while (i < frames.length)
    })
  }
  return i
}

/**
 * Frames to the socket (writeFrames). Once the socket is full the remaining frames and later ones queue until the
 * writable handler has sent what uWS holds; a watcher whose queue passes MAX_BUFFERED is too slow and is ended.
 */
function writeNow(w: Watcher, data: Buffer | string | Array<Buffer | string>): void {
  if (w.blocked) { enqueue(w, data, 0); return }
  let frames: Array<Buffer | string>
  if (Array.isArray(data)) frames = data
  else { single[0] = data; frames = single }
  const i = writeFrames(w, frames, 0)
  if (w.blocked) enqueue(w, frames, i)
  single[0] = ''
}

function enqueue(w: Watcher, data: Buffer | string | Array<Buffer | string>, from: number): void {
  if (Array.isArray(data)) for (let i = from; i < data.length; i++) { w.queue.push(data[i]); w.queued += byteLength(data[i]) }
  else { w.queue.push(data); w.queued += byteLength(data) }
  if (w.queued > MAX_BUFFERED) {
    // Past the cap this watcher is too slow: it is ended (its client relists); writers never wait for it.
    watchMetrics.slowTerminated++
    log.warn({ prefix: w.prefix, buffered: w.queued }, 'watcher too slow, terminated')
    w.queue = []
    w.queueAt = 0
    w.queued = 0
    end(w)
  }
}

/**
 * The writable handler of every watch, registered when it starts. uWS leaves what it holds for a response alone on a
 * writable socket once the response has a writable handler (the handler is expected to write), and without one it
 * gives the socket a short idle timeout after draining, which would end a quiet watch. So this handler moves the data
 * on: queued frames are written until the socket is full again (the first write sends what uWS holds first); with none
 * queued, a cork with nothing in it ends in an uncork, which sends what uWS holds. Without it the tail of a large
 * backlog or initial state waited for the watch's next event, however long that took.
 */
export function drain(w: Watcher): boolean {
  if (w.closed) return true
  const q = w.queue
  const from = w.queueAt
  // A corked send that found the socket full is not seen by write() (it answers for the cork buffer), only here.
  if (from >= q.length) { w.res.cork(noop); w.blocked = false; return true }
  w.blocked = false
  const to = writeFrames(w, q, from)
  for (let j = from; j < to; j++) { w.queued -= byteLength(q[j]); q[j] = '' }
  if (to < q.length) w.queueAt = to
  else { w.queue = []; w.queueAt = 0 }
  return true
}

export function bookmarkFrame(w: Watcher, rv: number, initialEventsEnd = false): Buffer {
  const meta: Record<string, unknown> = { resourceVersion: String(rv) }
  if (initialEventsEnd) meta.annotations = { 'orch.io/initial-events-end': 'true', 'k8s.io/initial-events-end': 'true' }
  const shown = w.view ?? w.def
  const [kind, apiVersion] = w.metadataOnly ? ['PartialObjectMetadata', w.metadataOnly] : [shown.kind, shown.apiVersion]
  // A bookmark is no stored object: no read defaults for it (only the apiVersion of an alias path).
  const alias: Alias | undefined = w.alias ? [w.alias[0], w.alias[1]] : undefined
  return frame(w.mt, 'BOOKMARK', `{"kind":"${kind}","apiVersion":"${apiVersion}","metadata":${JSON.stringify(meta)}}`, alias)
}

export function errorFrame(w: Watcher, err: ApiError): Buffer {
  return frame(w.mt, 'ERROR', JSON.stringify(err.toStatus()))
}

export function end(w: Watcher): void {
  if (w.closed) return
  w.closed = true
  for (const t of w.timers) clearTimeout(t)
  w.hub.remove(w)
  watchMetrics.active--
  w.finish()
  // Frames still queued go out before the end (uWS keeps what the socket does not take; writeFrames says how).
  const rest = w.queue.slice(w.queueAt)
  w.queue = []
  try {
    for (let i = 0; i < rest.length;) { w.blocked = false; i = writeFrames(w, rest, i) }
    w.res.cork(() => w.res.end())
  } catch { /* aborted */ }
}
