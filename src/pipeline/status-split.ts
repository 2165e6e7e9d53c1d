// A status write that leaves everything but metadata and status alone, worked on without the rest.
//
// The status endpoint of most types keeps every top-level field of the stored object but metadata and status (the
// generic status strategy: spec and the like come from the stored object, whatever the request says). A patch of
// status alone (the kubelet's pod status patch, a controller's status patch) then needs the stored spec only to copy
// it: parsing, copying, scrubbing, checking and printing it again cost about a tenth of such a write's front-end time
// on a pod (measured: bench/RESULTS.md, twenty-fourth session). Such a write parses the stored text without those fields, runs the whole pipeline on what is left, and
// prints the new object with the stored fields' text put back in place. Where something asks for them (an admission
// plugin, a field selector), they are parsed from the stored text when first read. Field validation (Strict, Warn)
// then sees what the request sent and not the stored spec: unknown fields an earlier build left there are kept as
// stored and not reported, as upstream never reports them (it drops them when it decodes the stored object).
import { statusSplit, type Obj, type ResolvedDefinition } from '../registry/define.js'
import { loadDefinitions } from '../registry/schema.js'
import { mutatingWebhooksExist } from '../admission/chain.js'
import { enabled as admissionPlugins } from '../admission/plugins.js'
import type { Attrs } from '../machinery/storage-format.js'
import { attrsOf } from './admission.js'

/** The stored object cut in two: the parsed head (kind, apiVersion, metadata, status) and the text of the rest. */
export interface StatusSplit {
  /** The stored object without the kept fields. */
  head: Obj
  /** The kept top-level members as stored, comma-separated (`"spec":{...}`), in stored order. */
  kept: string
  /** The names the kept members may have (the type's top-level fields but the head's and status). */
  names: readonly string[]
  /** Their values, parsed when first asked for. */
  values?: Obj
}

/** The members a split keeps parsed (the status endpoint takes them from the request or keeps them by rule). */
export function isHeadMember(k: string): boolean {
  return k === 'metadata' || k === 'status' || k === 'apiVersion' || k === 'kind'
}

/**
 * The stored object of a status write, split (`text`: its JSON bytes), when its type's status endpoint keeps every
 * member but the head (the generic status strategy, no status checks of its own), nothing that sees the whole object
 * takes part (mutating webhooks), and the object is not being deleted (a write may remove it); else undefined.
 */
export function splitFor(def: ResolvedDefinition, text: Buffer): StatusSplit | undefined {
  const names = keptNames(def)
  if (names === undefined || (admissionPlugins.mutatingAdmissionWebhook && mutatingWebhooksExist())) return undefined
  const s = splitStored(text.toString('utf8'), names)
  return s === undefined || s.head.metadata?.deletionTimestamp !== undefined ? undefined : s
}

/** The kept members' possible names of a type whose status writes may be split; undefined for other types. */
function keptNames(def: ResolvedDefinition): readonly string[] | undefined {
  let names = splitNames.get(def)
  if (names === undefined) {
    const st = def.status
    const schema = loadDefinitions()[def.schemaRef]
    // A type whose schema requires a kept member (spec) would fail its type check without it.
    const required: unknown = schema?.required
    const needsKept = Array.isArray(required) && required.some((k) => !isHeadMember(String(k)))
    const ok = def.custom === undefined && st !== undefined && st.prepareForUpdate === statusSplit.status.prepareForUpdate && st.validateUpdate === undefined && !needsKept
    names = ok && schema?.properties !== undefined ? Object.keys(schema.properties as object).filter((k) => !isHeadMember(k)) : null
    splitNames.set(def, names)
  }
  return names ?? undefined
}
const splitNames = new WeakMap<ResolvedDefinition, readonly string[] | null>()

/** Index of the quote that closes the string opening at `i`; -1 when there is none. */
function stringClose(t: string, i: number): number {
  let j = t.indexOf('"', i + 1)
  while (j > 0 && t.charCodeAt(j - 1) === 92 && escaped(t, j)) j = t.indexOf('"', j + 1)
  return j
}

/** Whether the quote at `j` is escaped: preceded by an odd number of backslashes. */
function escaped(t: string, j: number): boolean {
  let n = 0
  for (let k = j - 1; k >= 0 && t.charCodeAt(k) === 92; k--) n++
  return (n & 1) === 1
}

/** Index just past the value starting at `i` (a string, object, array or scalar); -1 when malformed. */
function valueEnd(t: string, i: number): number {
  const c0 = t.charCodeAt(i)
  if (c0 === 34) { const e = stringClose(t, i); return e < 0 ? -1 : e + 1 }
  if (c0 !== 123 && c0 !== 91) {
    for (let j = i; j < t.length; j++) { const c = t.charCodeAt(j); if (c === 44 || c === 125 || c === 93) return j }
    return -1
  }
  let depth = 0
  for (let j = i; j < t.length; j++) {
    const c = t.charCodeAt(j)
    if (c === 34) { j = stringClose(t, j); if (j < 0) return -1 } else if (c === 123 || c === 91) depth++
    else if ((c === 125 || c === 93) && --depth === 0) return j + 1
  }
  return -1
}

/** Index of the opening quote of the string whose closing quote is at `e`; -1 when there is none. */
function stringOpen(t: string, e: number): number {
  let j = t.lastIndexOf('"', e - 1)
  while (j > 0 && t.charCodeAt(j - 1) === 92 && escaped(t, j)) j = t.lastIndexOf('"', j - 1)
  return j
}

/** Index of the first character of the value ending at `e` (inclusive), scanning backwards; -1 when malformed. */
function valueStart(t: string, e: number): number {
  const c0 = t.charCodeAt(e)
  if (c0 === 34) return stringOpen(t, e)
  if (c0 !== 125 && c0 !== 93) {
    for (let j = e; j >= 0; j--) if (t.charCodeAt(j) === 58) return j + 1
    return -1
  }
  let depth = 0
  for (let j = e; j >= 0; j--) {
    const c = t.charCodeAt(j)
    if (c === 34) { j = stringOpen(t, j); if (j < 0) return -1 } else if (c === 125 || c === 93) depth++
    else if ((c === 123 || c === 91) && --depth === 0) return j
  }
  return -1
}

const HEAD = new Set(['"kind"', '"apiVersion"', '"metadata"'])
const STATUS_KEY = ',"status":'

/**
 * Cuts a stored object's canonical text (as toStoredJson prints it: kind, apiVersion and metadata first, status last,
 * no white space) into its head and the members between metadata and status. Reads the head's members forwards and
 * the status backwards, so the kept members' text is not scanned. Undefined when there are no kept members, no status,
 * or the text is not laid out so: the write then takes the whole object.
 */
export function splitStored(t: string, names: readonly string[]): StatusSplit | undefined {
  const n = t.length
  if (n < 2 || t.charCodeAt(0) !== 123 || t.charCodeAt(n - 1) !== 125) return undefined
  // Forwards over the head's members, to the first other one.
  let i = 1
  let heads = 0
  for (;;) {
    if (t.charCodeAt(i) !== 34) return undefined
    const ke = stringClose(t, i)
    if (ke < 0 || t.charCodeAt(ke + 1) !== 58) return undefined
    if (!HEAD.has(t.slice(i, ke + 1))) break
    heads++
    const ve = valueEnd(t, ke + 2)
    if (ve < 0 || t.charCodeAt(ve) !== 44) return undefined
    i = ve + 1
  }
  if (heads === 0) return undefined
  const keptStart = i
  // Backwards over the last member, which must be status.
  const vs = valueStart(t, n - 2)
  const keptEnd = vs - STATUS_KEY.length
  if (vs < 0 || keptEnd <= keptStart || !t.startsWith(STATUS_KEY, keptEnd)) return undefined
  const head = JSON.parse(t.slice(0, keptStart - 1) + t.slice(keptEnd)) as Obj
  return { head, kept: t.slice(keptStart, keptEnd), names }
}

/** The kept members' values (parsed once per write). */
export function keptValues(s: StatusSplit): Obj {
  s.values ??= JSON.parse(`{${s.kept}}`) as Obj
  return s.values
}

/**
 * The stored text of `o`, an object of the split's shape (kind, apiVersion, metadata, then status at most), with the
 * kept members put back between metadata and status.
 */
export function joinStored(o: Obj, s: StatusSplit): string {
  const head: Obj = { kind: o.kind, apiVersion: o.apiVersion, metadata: o.metadata }
  const text = JSON.stringify(head)
  const status = o.status === undefined ? '' : `,"status":${JSON.stringify(o.status)}`
  return `${text.slice(0, -1)},${s.kept}${status}}`
}

/**
 * `o` as admission plugins see it: the kept members are there, parsed when first read (a plugin may read a pod's
 * spec). A view, not a change of `o`: what a plugin sets lands on `o` (and is dropped by takeBack).
 */
export function lend(o: Obj, s: StatusSplit): Obj {
  const kept = (k: string | symbol): k is string => typeof k === 'string' && s.names.includes(k) && !Object.prototype.hasOwnProperty.call(o, k)
  return new Proxy(o, {
    get: (t, k, r) => kept(k) ? keptValues(s)[k] : Reflect.get(t, k, r),
    has: (t, k) => kept(k) ? Object.prototype.hasOwnProperty.call(keptValues(s), k) : Reflect.has(t, k),
    ownKeys: (t) => {
      // In the stored order: the head's members, the kept ones, status.
      const own = Reflect.ownKeys(t)
      const extra = Object.keys(keptValues(s)).filter((k) => !own.includes(k))
      const at = own.indexOf('status')
      return at < 0 ? [...own, ...extra] : [...own.slice(0, at), ...extra, ...own.slice(at)]
    },
    getOwnPropertyDescriptor: (t, k) => kept(k) && Object.prototype.hasOwnProperty.call(keptValues(s), k)
      ? { value: keptValues(s)[k], writable: true, enumerable: true, configurable: true }
      : Reflect.getOwnPropertyDescriptor(t, k),
  })
}

/** Drops what was set on `o` under a kept member's name while it was lent: the stored members are written. */
export function takeBack(o: Obj, s: StatusSplit): void {
  for (const k of s.names) if (Object.prototype.hasOwnProperty.call(o, k)) delete o[k]
}

/**
 * attrsOf for the head of a status split, whose kept members (spec) are the stored object's: a field
 * selector that reads nothing but them takes the stored record's value, which it computed from the same members; one
 * that reads none of them is computed from the head; one that reads both (or whose stored value is missing) from the
 * whole object, the kept members parsed for it. So a pod's spec is not parsed for its spec.nodeName. `stored` reads the
 * stored record's attributes, called only when a selector needs them.
 */
export function attrsOfSplit(def: ResolvedDefinition, o: Obj, s: StatusSplit, stored: () => Attrs): Attrs {
  if (!def.fieldSelectors) return attrsOf(def, o)
  const names = s.names
  let keptRead = false
  let otherRead = false
  const probe = new Proxy(o, {
    get(target, key) {
      if (typeof key === 'string' && names.includes(key)) { keptRead = true; return undefined }
      otherRead = true
      return target[key as string]
    },
  })
  let whole: Obj | undefined
  let storedAttrs: Attrs | undefined
  return attrsOf(def, o, (fn, k) => {
    keptRead = false
    otherRead = false
    let v: string | undefined
    try { v = fn(probe) } catch { v = undefined }
    if (!keptRead && v !== undefined) return v
    if (keptRead && !otherRead) {
      storedAttrs ??= stored()
      const was = storedAttrs.f?.[k]
      if (was !== undefined) return was
    }
    if (whole === undefined) { whole = Object.create(o) as Obj; Object.assign(whole, keptValues(s)) }
    return fn(whole)
  })
}
