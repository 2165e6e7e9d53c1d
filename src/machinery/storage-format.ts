// Store keys and the stored record layout: [rv f64][attrs length u32][attrs JSON][object JSON], so a get or list serves bytes without a parse.
import { RECORD_DICTIONARY_1 } from './record-dictionary.js'

/** Key of one object: `<group>/<resource>/<namespace>/<name>` (namespace empty for cluster-scoped types). */
export function objectKey(group: string, resource: string, namespace: string, name: string): string {
  return `${group}/${resource}/${namespace}/${name}`
}

/** Key prefix of a type (all namespaces) or of one namespace of it. */
export function typePrefix(group: string, resource: string, namespace?: string): string {
  return namespace === undefined ? `${group}/${resource}/` : `${group}/${resource}/${namespace}/`
}

/**
 * A secondary-index entry of a field selector value: the type prefix, `field=value`, a NUL, then the object key, so
 * the entries of one value are a key range in object-key order. Kept by the shard in the transaction of the write.
 */
export function indexKey(typePrefix: string, field: string, value: string, objectKey: string): string {
  return `${typePrefix}${field}=${value}\u0000${objectKey}`
}

/** The range of the index entries of one field value: [start, end). */
export function indexRange(typePrefix: string, field: string, value: string): [string, string] {
  const head = `${typePrefix}${field}=${value}`
  return [`${head}\u0000`, `${head}\u0001`]
}

/** The first key after every key that starts with `prefix` (which ends in '/'). */
export function prefixEnd(prefix: string): string {
  return prefix.slice(0, -1) + '0'
}

export function splitKey(key: string): { group: string; resource: string; namespace: string; name: string } {
  const [group, resource, namespace, name] = key.split('/')
  return { group, resource, namespace, name }
}

/** What selectors need of an object, kept beside its bytes. */
export interface Attrs {
  /** labels */
  l?: Record<string, string>
  /** field selector values */
  f?: Record<string, string>
  /** uid */
  u?: string
  /** the object is being deleted (deletionTimestamp set) */
  d?: 1
  /** uids of its owners (ownerReferences), for the garbage collector */
  o?: string[]
  /** its finalizers */
  z?: string[]
}

export const RV_MARKER = '@@RV@@'

/** Options of a shard's LMDB environment, the same for every thread that opens it. */
export function envOptions(path: string): { path: string; mapSize: number; maxDbs: number } {
  return { path, mapSize: 64 * 1024 ** 3, maxDbs: 4 }
}

/**
 * Options of the `objects` database, the same for every thread that opens it (a reader opened without them would see
 * compressed bytes). lmdb-js compresses a value of `threshold` bytes or more with lz4 against the dictionary, in native
 * code on write and transparently on every read (get, getBinaryFast, getRange), so records keep their layout in memory
 * and only their stored form shrinks: a 1 KB ConfigMap's record of 1.46 KB takes 0.9-1.1 KB on disk, a Pod's of 2.4 KB 0.9 KB.
 *
 * lmdb-js marks a compressed value by its first byte (254 or 255) and takes values whose first byte is below 250 as
 * stored plain. A record's first byte is the low byte of its resourceVersion as a float64, which is 0 for every
 * integer below 2^44, so the records of data dirs written before compression read as they are, with no migration;
 * lmdb-js compresses any value that begins with 250 or more whatever its size, so no record is ever misread.
 */
export function objectsDbOptions(compressWrites = false): { encoding: 'binary'; compression: { threshold: number; dictionary: Buffer } } {
  return { encoding: 'binary', compression: { threshold: compressWrites ? COMPRESS_THRESHOLD : NEVER, dictionary: RECORD_DICTIONARY_1 } }
}

/**
 * The threshold of a database that compresses nothing it writes (--storage-compression off, and every reader: only
 * the shard writes): it still reads compressed records, so a data dir written with compression opens without it.
 */
const NEVER = 0x7fffffff

/**
 * With --storage-compression, records smaller than this are stored plain: small objects are the ones written most often (leases, every ten
 * seconds per node) and lz4 costs ~10-25 us of the shard's CPU per value compressed, for a few hundred bytes saved.
 */
const COMPRESS_THRESHOLD = 1024

const HEADER = 12

export function encodeRecord(rv: number, attrsJson: string, objectJson: string): Buffer {
  const aLen = Buffer.byteLength(attrsJson)
  const oLen = Buffer.byteLength(objectJson)
  // Its own ArrayBuffer (not a slice of the shared pool): records travel to other threads by structured clone.
  const buf = Buffer.allocUnsafeSlow(HEADER + aLen + oLen)
  buf.writeDoubleLE(rv, 0)
  buf.writeUInt32LE(aLen, 8)
  buf.write(attrsJson, HEADER, 'utf8')
  buf.write(objectJson, HEADER + aLen, 'utf8')
  return buf
}

export function recordRv(rec: Uint8Array): number {
  return Buffer.from(rec.buffer, rec.byteOffset, rec.byteLength).readDoubleLE(0)
}

export function recordAttrs(rec: Uint8Array): Attrs {
  const b = Buffer.from(rec.buffer, rec.byteOffset, rec.byteLength)
  const aLen = b.readUInt32LE(8)
  return JSON.parse(b.toString('utf8', HEADER, HEADER + aLen)) as Attrs
}

/**
 * The record cut after its attributes (a view, not a copy): `recordRv` and `recordAttrs` read it, `recordObject` gives
 * no bytes. Watch events for listeners that need no more than the attributes carry this.
 */
export function recordWithoutObject(rec: Uint8Array): Uint8Array {
  // A copy with its own ArrayBuffer: structured clone would carry a view's whole backing store to the other thread.
  return rec.slice(0, recordObjectOffset(rec))
}

/** Where the object's JSON bytes begin in a record (they run to its end). */
export function recordObjectOffset(rec: Uint8Array): number {
  return HEADER + ((rec[8] | (rec[9] << 8) | (rec[10] << 16) | (rec[11] << 24)) >>> 0)
}

/** The object's JSON bytes (a view, not a copy). */
export function recordObject(rec: Uint8Array): Buffer {
  return Buffer.from(rec.buffer, rec.byteOffset, rec.byteLength).subarray(recordObjectOffset(rec))
}
