// Strict scanning of compact JSON text in a byte buffer, for encoders that work from stored JSON bytes without parsing
// them (protobuf, CBOR, Table lists). Stored objects are JSON.stringify output: no whitespace, canonical escapes and
// numbers, no duplicate keys. The scanner accepts only JSON (whatever JSON.parse would reject is rejected here too)
// and, to keep callers simple, no whitespace at all: a caller falls back to JSON.parse on anything it rejects.

/** Returned for text the scanner does not accept (not JSON, or JSON with whitespace). */
export const REJECT = -1

/** Flags of the last string scanned by scanString. */
export const ESCAPED = 1
export const NON_ASCII = 2
/** An escape JSON.stringify does not write (`\/`, any `\u`): the text differs from JSON.stringify(JSON.parse(text)). */
export const ODD_ESCAPE = 4
export let stringFlags = 0

/** Byte classes inside strings: 0 plain ASCII, then the bytes that end a run of plain ones. */
const QUOTE = 1
const BACKSLASH = 2
const CONTROL = 3
const HIGH = 4
const STRING_CLASS = new Uint8Array(256)
for (let c = 0; c < 0x20; c++) STRING_CLASS[c] = CONTROL
for (let c = 0x80; c < 0x100; c++) STRING_CLASS[c] = HIGH
STRING_CLASS[0x22] = QUOTE
STRING_CLASS[0x5c] = BACKSLASH

/** i at an opening quote: the index after the closing quote (REJECT if malformed); sets stringFlags. */
export function scanString(b: Uint8Array, i: number): number {
  const n = b.length
  let flags = 0
  i++
  for (;;) {
    while (i < n && STRING_CLASS[b[i]] === 0) i++
    if (i >= n) return REJECT
    const k = STRING_CLASS[b[i++]]
    if (k === QUOTE) { stringFlags = flags; return i }
    if (k === HIGH) { flags |= NON_ASCII; continue }
    if (k === CONTROL || i >= n) return REJECT
    const e = b[i++]
    flags |= ESCAPED
    if (e === 0x75) { // \uXXXX
      if (i + 4 > n || !isHex(b[i]) || !isHex(b[i + 1]) || !isHex(b[i + 2]) || !isHex(b[i + 3])) return REJECT
      i += 4
      flags |= ODD_ESCAPE
    } else if (e === 0x2f) {
      flags |= ODD_ESCAPE
    } else if (e !== 0x22 && e !== 0x5c && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74) {
      return REJECT
    }
  }
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46)
}

/** Whether the last number scanned by scanNumber is written as JSON.stringify writes its value. */
export let numberCanonical = true
/** Whether the last number scanned is an integer literal (`-?digits`, no fraction or exponent). */
export let numberIsIntLiteral = true

/** i at a number: the index after it (REJECT if malformed). Sets numberCanonical and numberIsIntLiteral. */
export function scanNumber(b: Uint8Array, i: number): number {
  const n = b.length
  const start = i
  if (b[i] === 0x2d) i++
  if (i >= n) return REJECT
  let c = b[i]
  if (c === 0x30) {
    i++
  } else if (c >= 0x31 && c <= 0x39) {
    i++
    while (i < n && (c = b[i]) >= 0x30 && c <= 0x39) i++
  } else {
    return REJECT
  }
  const intEnd = i
  c = i < n ? b[i] : 0
  let plain = true
  if (c === 0x2e) {
    plain = false
    i++
    const f = i
    while (i < n && (c = b[i]) >= 0x30 && c <= 0x39) i++
    if (i === f) return REJECT
    c = i < n ? b[i] : 0
  }
  if (c === 0x65 || c === 0x45) {
    plain = false
    i++
    if (i < n && (b[i] === 0x2b || b[i] === 0x2d)) i++
    const e = i
    while (i < n && (c = b[i]) >= 0x30 && c <= 0x39) i++
    if (i === e) return REJECT
  }
  numberIsIntLiteral = plain
  const digits = intEnd - start - (b[start] === 0x2d ? 1 : 0)
  if (plain && digits <= 15) {
    // Exact as a double; only `-0` is not what JSON.stringify writes.
    numberCanonical = !(digits === 1 && b[start] === 0x2d && b[start + 1] === 0x30)
  } else {
    const text = latin1(b, start, i)
    numberCanonical = String(Number(text)) === text
  }
  return i
}

function latin1(b: Uint8Array, start: number, end: number): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1', start, end)
}

/** The value of the number at [start, end) (already scanned). */
export function numberValue(b: Uint8Array, start: number, end: number): number {
  let i = start
  const neg = b[i] === 0x2d
  if (neg) i++
  if (end - i <= 15) {
    let v = 0
    for (; i < end; i++) {
      const c = b[i] - 0x30
      if (c < 0 || c > 9) return Number(latin1(b, start, end))
      v = v * 10 + c
    }
    return neg ? -v : v
  }
  return Number(latin1(b, start, end))
}

const MAX_DEPTH = 1000
/** Open containers of skipValue: 1 object, 2 array. */
const OBJECT = 1
const ARRAY = 2
let stack = new Uint8Array(64)
/** Set by skipString when the string has an odd escape or a non-ASCII byte. */
let oddString = false

/** i after an opening quote: the index after the closing quote, or REJECT. */
function skipString(b: Uint8Array, i: number, n: number): number {
  for (;;) {
    while (i < n && STRING_CLASS[b[i]] === 0) i++
    if (i >= n) return REJECT
    const k = STRING_CLASS[b[i++]]
    if (k === QUOTE) return i
    if (k === HIGH) { oddString = true; continue }
    if (k === CONTROL || i >= n) return REJECT
    const e = b[i++]
    if (e === 0x75) {
      if (i + 4 > n || !isHex(b[i]) || !isHex(b[i + 1]) || !isHex(b[i + 2]) || !isHex(b[i + 3])) return REJECT
      i += 4
      oddString = true
    } else if (e === 0x2f) {
      oddString = true
    } else if (e !== 0x22 && e !== 0x5c && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74) {
      return REJECT
    }
  }
}

/**
 * i at a value: the index after it, or REJECT when the text there is not JSON (or holds whitespace). With
 * `canonical`, also REJECT what is not exactly JSON.stringify(JSON.parse(text)): odd escapes, non-ASCII bytes (not
 * checked for valid UTF-8 here), numbers not in their shortest form, and object keys that start with a digit (an
 * integer-like key moves to the front of a parsed object). Duplicate keys are not looked for (JSON.stringify never
 * writes them). One loop with a stack of open containers.
 */
export function skipValue(b: Uint8Array, i: number, canonical = false): number {
  const n = b.length
  let depth = 0
  oddString = false
  for (;;) {
    // A value at i.
    if (i >= n) return REJECT
    let c = b[i]
    if (c === 0x22) {
      i = skipString(b, i + 1, n)
      if (i === REJECT) return REJECT
    } else if (c === 0x7b) {
      if (b[i + 1] === 0x7d) {
        i += 2
      } else {
        if (depth >= MAX_DEPTH) return REJECT
        if (depth === stack.length) { const s = new Uint8Array(stack.length * 2); s.set(stack); stack = s }
        stack[depth++] = OBJECT
        i = skipKey(b, i + 1, n, canonical)
        if (i === REJECT) return REJECT
        continue
      }
    } else if (c === 0x5b) {
      if (b[i + 1] === 0x5d) {
        i += 2
      } else {
        if (depth >= MAX_DEPTH) return REJECT
        if (depth === stack.length) { const s = new Uint8Array(stack.length * 2); s.set(stack); stack = s }
        stack[depth++] = ARRAY
        i++
        continue
      }
    } else if (c === 0x74) {
      if (b[i + 1] !== 0x72 || b[i + 2] !== 0x75 || b[i + 3] !== 0x65) return REJECT
      i += 4
    } else if (c === 0x66) {
      if (b[i + 1] !== 0x61 || b[i + 2] !== 0x6c || b[i + 3] !== 0x73 || b[i + 4] !== 0x65) return REJECT
      i += 5
    } else if (c === 0x6e) {
      if (b[i + 1] !== 0x75 || b[i + 2] !== 0x6c || b[i + 3] !== 0x6c) return REJECT
      i += 4
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      i = scanNumber(b, i)
      if (i === REJECT || (canonical && !numberCanonical)) return REJECT
    } else {
      return REJECT
    }
    // After a value: close what ends here; a comma leads to the next value (after its key, in an object).
    for (;;) {
      if (depth === 0) return canonical && oddString ? REJECT : i
      c = b[i++]
      const top = stack[depth - 1]
      if (c === 0x2c) {
        if (top === OBJECT) {
          i = skipKey(b, i, n, canonical)
          if (i === REJECT) return REJECT
        }
        break
      }
      if ((c === 0x7d && top === OBJECT) || (c === 0x5d && top === ARRAY)) { depth--; continue }
      return REJECT
    }
  }
}

/** i at a key: the index after its colon, or REJECT. */
function skipKey(b: Uint8Array, i: number, n: number, canonical: boolean): number {
  if (b[i] !== 0x22) return REJECT
  if (canonical && b[i + 1] >= 0x30 && b[i + 1] <= 0x39) return REJECT
  i = skipString(b, i + 1, n)
  if (i === REJECT || b[i] !== 0x3a) return REJECT
  return i + 1
}

/** The JS string of the string token at [start, end) (quotes included), as JSON.parse reads it. */
export function stringValue(b: Uint8Array, start: number, end: number, flags: number): string {
  const buf = Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength)
  if ((flags & ESCAPED) === 0) return flags === 0 ? buf.toString('latin1', start + 1, end - 1) : buf.toString('utf8', start + 1, end - 1)
  return JSON.parse(buf.toString('utf8', start, end)) as string
}
