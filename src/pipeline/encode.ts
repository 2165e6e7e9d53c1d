// The encode stage: choose the response media type from Accept, and write objects, lists and Status in it.
import { stringify as yamlStringify } from 'yaml'
import { notAcceptable } from '../machinery/errors.js'
import { encodeObject, encodeObjectJson, JsonListEncoder } from '../machinery/codecs/protobuf.js'
import { cborFromJson, CborListEncoder } from '../machinery/codecs/cbor.js'
import { byteFieldsOf } from '../registry/byte-fields.js'

/** `protobuf` answers in the upstream spelling clients decode; `orch-protobuf` when only ours was asked for. */
export type MediaType = 'json' | 'yaml' | 'protobuf' | 'orch-protobuf' | 'cbor'

export const PROTOBUF = 'application/vnd.kubernetes.protobuf'
export const ORCH_PROTOBUF = 'application/vnd.orch.protobuf'
export const CBOR = 'application/cbor'
/** A watch in CBOR: a CBOR sequence (RFC 8742) of watch events. */
export const CBOR_SEQ = 'application/cbor-seq'
const BASE_MEDIA_TYPES = ['application/json', 'application/yaml', ORCH_PROTOBUF, PROTOBUF]
const WITH_CBOR = [...BASE_MEDIA_TYPES, CBOR]

/** CBOR is served (responses, request bodies, apply patches) only with gate CBORServingAndStorage. */
let cborServed = false
/** gate APIResponseCompression: gzip for get and list answers when asked */
let gzipServed = false
export function configureEncode(opts: { cbor: boolean; gzip?: boolean }): void { cborServed = opts.cbor; gzipServed = opts.gzip ?? false }
export function cborEnabled(): boolean { return cborServed }
/** Whether a streamed answer to these request headers goes out gzipped (the gate is on and the client asked). */
export function gzipWanted(headers: Record<string, string>): boolean { return gzipServed && /\bgzip\b/i.test(headers['accept-encoding'] ?? '') }

/** The media types answers are served in (the list a 406 names). */
export function servedMediaTypes(): string[] { return cborServed ? WITH_CBOR : BASE_MEDIA_TYPES }

interface AcceptEntry { type: string; sub: string; params: Record<string, string>; q: number }

/** Parsed Accept headers by their text: clients send the same few over and over (read-only results). */
const acceptCache = new Map<string, readonly AcceptEntry[]>()
const ACCEPT_CACHE_LIMIT = 256

export function parseAccept(accept: string): readonly AcceptEntry[] {
  let entries = acceptCache.get(accept)
  if (entries === undefined) {
    entries = Object.freeze(parseAcceptText(accept))
    if (acceptCache.size >= ACCEPT_CACHE_LIMIT) acceptCache.clear()
    acceptCache.set(accept, entries)
  }
  return entries
}

function parseAcceptText(accept: string): AcceptEntry[] {
  const out: AcceptEntry[] = []
  for (const part of accept.split(',')) {
    const [mt, ...ps] = part.split(';').map((s) => s.trim())
    if (!mt) continue
    const [type, sub = ''] = mt.toLowerCase().split('/')
    const params: Record<string, string> = {}
    let q = 1
    for (const p of ps) {
      const eq = p.indexOf('=')
      if (eq < 0) continue
      const k = p.slice(0, eq).trim().toLowerCase()
      const v = p.slice(eq + 1).trim().replace(/^"|"$/g, '')
      if (k === 'q') q = Number(v)
      else params[k] = v
    }
    if (!(q > 0)) continue
    out.push({ type, sub, params, q })
  }
  return out.sort((a, b) => b.q - a.q)
}

/** The response form for an Accept header; 406 when none of the entries is served. */
export function negotiate(accept: string | undefined): MediaType {
  if (accept === undefined || accept.trim() === '') return 'json'
  for (const e of parseAccept(accept)) {
    // Table, discovery and other `as=` forms are not served yet: the client's plain fallback follows.
    if (e.params.as !== undefined) continue
    if (e.type === '*' && (e.sub === '*' || e.sub === '')) return 'json'
    if (e.type !== 'application') continue
    if (e.sub === 'json' || e.sub === '*') return 'json'
    if (e.sub === 'yaml') return 'yaml'
    if (e.sub === 'vnd.kubernetes.protobuf') return 'protobuf'
    if (e.sub === 'vnd.orch.protobuf') return 'orch-protobuf'
    if (e.sub === 'cbor' && cborServed) return 'cbor'
  }
  throw notAcceptable(servedMediaTypes())
}

/** Whether the Accept list takes JSON at all: application/json, application or any type with any subtype (not an `as=` form). */
export function acceptsJson(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true
  for (const e of parseAccept(accept)) {
    if (e.params.as !== undefined) continue
    if (e.type === '*' && (e.sub === '*' || e.sub === '')) return true
    if (e.type === 'application' && (e.sub === 'json' || e.sub === '*')) return true
  }
  return false
}

/**
 * Discovery documents: CBOR when that is the client's first choice (and served), else JSON whatever was asked for
 * (they have no protobuf form, and an Accept nothing matches still gets JSON, as before CBOR).
 */
export function negotiateDiscovery(accept: string | undefined): 'json' | 'cbor' {
  if (!cborServed || accept === undefined) return 'json'
  try { return negotiate(accept) === 'cbor' ? 'cbor' : 'json' } catch { return 'json' }
}

export function isProtobuf(mt: MediaType): boolean { return mt === 'protobuf' || mt === 'orch-protobuf' }

export function contentTypeOf(mt: MediaType): string {
  switch (mt) {
    case 'yaml': return 'application/yaml'
    case 'protobuf': return PROTOBUF
    case 'orch-protobuf': return ORCH_PROTOBUF
    case 'cbor': return CBOR
    default: return 'application/json'
  }
}

/**
 * [what follows `"apiVersion":"` in stored objects, what answers carry there instead]: `<our group>/` and the upstream
 * spelling the client used (`<theirs>/`) for answers through an alias path; `<group>/<storage version>"` and
 * `<group>/<asked version>"` for a custom resource asked for in another version than it is stored in.
 */
export type Alias = [ours: string, theirs: string, transform?: (objectJson: string) => string]

/**
 * Objects answered through an upstream alias path (or another version of a custom resource) carry its apiVersion; a
 * custom resource whose schema has defaults gets them filled on read too (`transform`, one object's JSON at a time).
 */
export function aliased(json: string, alias?: Alias): string {
  if (!alias) return json
  const s = alias[0] === alias[1] ? json : json.split(`"apiVersion":"${alias[0]}`).join(`"apiVersion":"${alias[1]}`)
  return alias[2] ? alias[2](s) : s
}

/** Bytes of stored JSON in the negotiated form; JSON stays as it is unless pretty output is asked for. */
export function encodeJsonBytes(json: Buffer | string, mt: MediaType, pretty: boolean, alias?: Alias): Buffer | string {
  if (mt === 'json') {
    // The apiVersion of JSON answers is rewritten as a whole (pipeline/index.ts); read defaults are filled here.
    if (alias?.[2]) json = alias[2](json.toString())
    if (!pretty) return json
    return JSON.stringify(JSON.parse(json.toString()), null, 2) + '\n'
  }
  if (isProtobuf(mt)) return encodeObjectJson(alias ? aliased(json.toString(), alias) : json)
  if (mt === 'cbor') return cborFromJson(aliased(json.toString(), alias), byteFieldsOf)
  return yamlStringify(JSON.parse(alias ? aliased(json.toString(), alias) : json.toString()))
}

export function encodeValue(value: unknown, mt: MediaType, pretty: boolean): Buffer | string {
  if (mt === 'yaml') return yamlStringify(value)
  // Through JSON text: the same value tree as the JSON answer (undefined members dropped, toJSON applied).
  if (mt === 'cbor') return cborFromJson(JSON.stringify(value), byteFieldsOf)
  if (isProtobuf(mt)) return encodeObject(value as Record<string, unknown>)
  return pretty ? JSON.stringify(value, null, 2) + '\n' : JSON.stringify(value)
}

/** A list from its items' stored JSON: JSON is stitched from the bytes; protobuf and CBOR encode item by item. */
export function encodeList(apiVersion: string, kind: string, meta: Record<string, unknown>, items: Array<Buffer | string>, mt: MediaType, pretty: boolean, alias?: Alias): Buffer | string {
  const slices = itemEncoder(apiVersion, kind, meta, items, mt, alias)
  if (slices) {
    slices.add(0, items.length)
    return slices.finish()
  }
  return jsonList(apiVersion, kind, meta, items, mt, pretty, alias)
}

/**
 * encodeList in slices of the items, giving the event loop back between slices once a slice has run for
 * SLICE_MS, so that a large list does not hold the thread (other requests, watch deliveries) for its whole
 * encoding. Resolves to null when `aborted` says the client has gone.
 */
export async function encodeListInSlices(apiVersion: string, kind: string, meta: Record<string, unknown>, items: Array<Buffer | string>, mt: MediaType, pretty: boolean, alias?: Alias, aborted?: () => boolean): Promise<Buffer | string | null> {
  const slices = itemEncoder(apiVersion, kind, meta, items, mt, alias)
  if (!slices) return jsonList(apiVersion, kind, meta, items, mt, pretty, alias)
  if (!(await inSlices(items.length, (from, to) => slices.add(from, to), aborted))) return null
  return slices.finish()
}

/** Items at a time: a slice ends after this many items once SLICE_MS has passed since the last turn of the event loop. */
const SLICE_ITEMS = 64
/** How long a slice of list work may hold the event loop. */
export const SLICE_MS = 10

/** Runs fn over [0, n) in slices (see encodeListInSlices); false when aborted between slices. */
export async function inSlices(n: number, fn: (from: number, to: number) => void, aborted?: () => boolean): Promise<boolean> {
  let since = performance.now()
  for (let from = 0; from < n; from += SLICE_ITEMS) {
    fn(from, Math.min(n, from + SLICE_ITEMS))
    if (from + SLICE_ITEMS < n && performance.now() - since >= SLICE_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve))
      if (aborted?.()) return false
      since = performance.now()
    }
  }
  return true
}

interface ItemSlices { add(from: number, to: number): void; finish(): Buffer }

/** The protobuf or CBOR encoder of a list, fed items by index; null for the JSON forms (stitched in one go). */
function itemEncoder(apiVersion: string, kind: string, meta: Record<string, unknown>, items: Array<Buffer | string>, mt: MediaType, alias?: Alias): ItemSlices | null {
  if (!isProtobuf(mt) && mt !== 'cbor') return null
  const av = alias && apiVersion.startsWith(alias[0]) ? `${alias[1]}${apiVersion.slice(alias[0].length)}` : apiVersion
  const texts = alias ? items.map((it) => aliased(it.toString(), alias)) : items
  let size = 0
  for (const it of texts) size += it.length
  if (isProtobuf(mt)) {
    const enc = new JsonListEncoder(av, kind, meta, size)
    return { add: (from, to) => enc.add(texts, from, to), finish: () => enc.finish() }
  }
  const enc = new CborListEncoder(kind, av, meta, texts.length, byteFieldsOf, size)
  return { add: (from, to) => enc.add(texts, from, to), finish: () => enc.finish() }
}

function jsonList(apiVersion: string, kind: string, meta: Record<string, unknown>, items: Array<Buffer | string>, mt: MediaType, pretty: boolean, alias?: Alias): Buffer | string {
  const head = `{"kind":"${kind}","apiVersion":"${apiVersion}","metadata":${JSON.stringify(meta)},"items":[`
  const chunks: Buffer[] = [Buffer.from(head)]
  // Read defaults item by item (the apiVersion of the whole list is rewritten after, as for any JSON answer).
  const fill = alias?.[2]
  items.forEach((it, i) => {
    if (i > 0) chunks.push(COMMA)
    if (fill) chunks.push(Buffer.from(fill(it.toString())))
    else chunks.push(typeof it === 'string' ? Buffer.from(it) : it)
  })
  chunks.push(TAIL)
  return encodeJsonBytes(Buffer.concat(chunks), mt, pretty)
}

const COMMA = Buffer.from(',')
const TAIL = Buffer.from(']}')

/** Room kept before the items of a JSON list body for its head, written last (it carries the continue token). */
const HEAD_ROOM = 4096
const STORED_HEADER = 12

/**
 * Body buffers of JSON lists, reused: a page of 500 objects is ~0.7 MB, and allocating that afresh per page puts
 * enough external memory on V8's books to trigger a full collection every few pages. Sizes are powers of two; only
 * buffers up to POOL_MAX_BUFFER are kept, at most POOL_MAX_BYTES in all.
 */
const pool: Buffer[] = []
let pooledBytes = 0
const POOL_MAX_BUFFER = 8 << 20
const POOL_MAX_BYTES = 32 << 20

function takeBuffer(min: number): Buffer {
  let best = -1
  for (let i = 0; i < pool.length; i++) {
    if (pool[i].length >= min && (best < 0 || pool[i].length < pool[best].length)) best = i
  }
  if (best >= 0) {
    const b = pool[best]
    pool[best] = pool[pool.length - 1]
    pool.pop()
    pooledBytes -= b.length
    return b
  }
  let size = 64 * 1024
  while (size < min) size *= 2
  return Buffer.allocUnsafeSlow(size)
}

function giveBuffer(b: Buffer): void {
  if (b.length > POOL_MAX_BUFFER) return
  // When full, the smallest buffer makes room for a larger one.
  while (pooledBytes + b.length > POOL_MAX_BYTES && pool.length > 0) {
    let small = 0
    for (let i = 1; i < pool.length; i++) if (pool[i].length < pool[small].length) small = i
    if (pool[small].length >= b.length) return
    pooledBytes -= pool[small].length
    pool[small] = pool[pool.length - 1]
    pool.pop()
  }
  pool.push(b)
  pooledBytes += b.length
}

/**
 * A JSON list stitched straight from stored records: each item's object bytes are copied from the record (which may
 * sit in lmdb's shared read buffer) into one growing buffer, with no Buffer per item. The head goes in front of the
 * items once the metadata is known (finish), or first when the body is streamed (head, take, finish). The buffer
 * comes from a pool: release() gives it back once the bytes are written (views of it are invalid then).
 */
export class JsonListBody {
  #buf: Buffer
  /** where the bytes not yet taken start */
  #from: number
  #pos: number
  #items = 0
  #headAt = -1

  constructor(capacity: number) {
    this.#buf = takeBuffer(HEAD_ROOM + Math.max(capacity, 1024))
    this.#from = HEAD_ROOM
    this.#pos = HEAD_ROOM
  }

  get items(): number { return this.#items }
  /** bytes held and not yet taken */
  get size(): number { return this.#pos - this.#from }

  /** Makes sure `n` more bytes fit (doubling, so that growth costs a copy of the body at most once over). */
  #room(n: number): void {
    if (this.#pos + n <= this.#buf.length) return
    const next = takeBuffer(Math.max(this.#buf.length * 2, this.#pos + n + 1024))
    this.#buf.copy(next, this.#from, this.#from, this.#pos)
    giveBuffer(this.#buf)
    this.#buf = next
  }

  /** The buffer back to the pool: the body's bytes have been written (or will never be). */
  release(): void {
    giveBuffer(this.#buf)
    this.#buf = EMPTY_BUFFER
    this.#from = this.#pos = 0
  }

  /** Grows the buffer once to hold about `bytes` more (a hint from the first item and the expected count). */
  reserve(bytes: number): void {
    if (this.#pos + bytes > this.#buf.length) this.#room(bytes)
  }

  /** Appends the object of a stored record `rec[0, size)`. */
  addRecord(rec: Uint8Array, size: number): void {
    const start = STORED_HEADER + (rec[8] | (rec[9] << 8) | (rec[10] << 16) | (rec[11] << 24)) >>> 0
    const len = size - start
    this.#room(len + 1)
    if (this.#items++ > 0) this.#buf[this.#pos++] = 0x2c
    this.#buf.set(rec.subarray(start, size), this.#pos)
    this.#pos += len
  }

  /** The head of the list, written before the items taken so far (call once, before take or finish). */
  head(apiVersion: string, kind: string, meta: Record<string, unknown>): void {
    const head = `{"kind":"${kind}","apiVersion":"${apiVersion}","metadata":${JSON.stringify(meta)},"items":[`
    const len = Buffer.byteLength(head)
    if (len <= this.#from) {
      this.#from -= len
      this.#buf.write(head, this.#from, len === head.length ? 'latin1' : 'utf8')
    } else {
      const b = takeBuffer(len + this.#buf.length - this.#from)
      b.write(head, 0, 'utf8')
      this.#buf.copy(b, len, this.#from, this.#pos)
      giveBuffer(this.#buf)
      this.#pos = len + this.#pos - this.#from
      this.#from = 0
      this.#buf = b
    }
    this.#headAt = this.#from
  }

  /** The bytes held so far (a view, valid until the next call); the buffer is reused for what follows. */
  take(): Buffer {
    const out = this.#buf.subarray(this.#from, this.#pos)
    this.#from = 0
    this.#pos = 0
    return out
  }

  /** The rest of the body with the closing `]}` (a view of the buffer). */
  finish(): Buffer {
    if (this.#headAt < 0) throw new Error('JsonListBody: finish before head')
    this.#room(2)
    this.#buf[this.#pos++] = 0x5d
    this.#buf[this.#pos++] = 0x7d
    return this.#buf.subarray(this.#from, this.#pos)
  }
}

const EMPTY_BUFFER = Buffer.alloc(0)
