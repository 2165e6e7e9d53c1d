// Plain JSON value trees (what the body decoders and JSON.parse make): an emptiness check without a key array, a copy
// that shares the strings, and a comparison of two trees' JSON.stringify texts without writing them out.

/**
 * Sets an own data property, as JSON.parse and a spread copy make them: `__proto__` too, which plain assignment would
 * take as the object's prototype (a ConfigMap may hold a `__proto__` key).
 */
export function setOwn(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true })
  else o[k] = v
}

/** Whether an object has no own enumerable keys, found without listing them (no key array per call). */
export function noOwnKeys(o: object): boolean {
  for (const k in o) if (Object.prototype.hasOwnProperty.call(o, k)) return false
  return true
}

/**
 * A deep copy of a JSON value tree: new objects and arrays, the same strings (immutable, so shared instead of copied
 * byte by byte as structuredClone does). Every own enumerable key is kept as an own property (`__proto__` too).
 * Values that are not plain JSON (class instances, typed arrays, Dates) are copied with structuredClone.
 */
export function cloneJson<T>(v: T): T {
  if (v === null || typeof v !== 'object') return v
  if (Array.isArray(v)) {
    const out = new Array(v.length)
    for (let i = 0; i < v.length; i++) out[i] = cloneJson(v[i])
    return out as T
  }
  const proto = Object.getPrototypeOf(v)
  if (proto !== Object.prototype && proto !== null) return structuredClone(v)
  const src = v as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(src)) {
    if (k === '__proto__') Object.defineProperty(out, k, { value: cloneJson(src[k]), enumerable: true, writable: true, configurable: true })
    else out[k] = cloneJson(src[k])
  }
  return out as T
}

/**
 * Whether JSON.stringify(a) === JSON.stringify(b), found by walking both trees: true or false when the walk is sure,
 * undefined when a value's text needs JSON.stringify's own rules (undefined members, non-finite numbers, toJSON,
 * anything but plain objects, arrays, strings, finite numbers, booleans and null); the caller then compares texts.
 */
export function sameJsonText(a: unknown, b: unknown): boolean | undefined {
  // One value prints one text (a write shares the parts it kept with the stored object it read).
  if (a === b && a !== undefined) return true
  if (typeof a === 'string' || typeof b === 'string') {
    if (typeof a === 'string' && typeof b === 'string') return a === b
    return plainLeaf(a) && plainLeaf(b) ? false : undefined
  }
  if (typeof a === 'number' && typeof b === 'number') {
    if (!Number.isFinite(a) || !Number.isFinite(b)) return undefined
    // 0 and -0 both print as 0; other distinct finite numbers print differently.
    return a === b
  }
  if (a === null || b === null || typeof a === 'boolean' || typeof b === 'boolean') {
    if (a === b) return true
    return plainLeaf(a) && plainLeaf(b) ? false : undefined
  }
  if (typeof a !== 'object' || typeof b !== 'object') return undefined
  const aa = Array.isArray(a)
  const ba = Array.isArray(b)
  if (aa !== ba) return plainContainer(a) && plainContainer(b) ? false : undefined
  if (aa) {
    // Value texts are self-delimiting: arrays print the same exactly when every member does (undefined prints null).
    const x = a as unknown[]
    const y = b as unknown[]
    if (x.length !== y.length) return false
    for (let i = 0; i < x.length; i++) {
      const r = sameJsonText(x[i], y[i])
      if (r !== true) return r
    }
    return true
  }
  if (!plainContainer(a) || !plainContainer(b)) return undefined
  // Members print in key order; a member is left out only when its value prints as nothing (undefined, a function),
  // so a different key list is a different text only when every member of both is shown.
  const x = a as Record<string, unknown>
  const y = b as Record<string, unknown>
  const xk = Object.keys(x)
  const yk = Object.keys(y)
  let differ = xk.length !== yk.length
  for (let i = 0; i < xk.length && !differ; i++) {
    const k = xk[i]
    if (yk[i] !== k) { differ = true; break }
    const r = sameJsonText(x[k], y[k])
    if (r === undefined) return undefined
    if (!r) return false
  }
  if (!differ) return true
  for (const k of xk) if (!shown(x[k])) return undefined
  for (const k of yk) if (!shown(y[k])) return undefined
  return false
}

/** A value whose text is its own (never left out, never replaced through toJSON). */
function plainLeaf(v: unknown): boolean {
  return v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)) || plainContainer(v)
}

/** An array, or an object of the plain prototype (or none) without a toJSON of its own. */
function plainContainer(v: unknown): boolean {
  if (v === null || typeof v !== 'object') return false
  if (Array.isArray(v)) return true
  const p = Object.getPrototypeOf(v)
  return (p === Object.prototype || p === null) && typeof (v as { toJSON?: unknown }).toJSON !== 'function'
}

const shown = plainLeaf
