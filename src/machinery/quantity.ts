// resource.Quantity: exact parsing (bigint mantissa, base-10 exponent), comparison, and upstream's serialisation.

/**
 * The three notations upstream keeps from the text a quantity was parsed from: `12e6`, `12Mi`, `12M`.
 */
export type QuantityFormat = 'DecimalExponent' | 'BinarySI' | 'DecimalSI'

/**
 * A parsed quantity: the value is exactly `mantissa × 10^exponent`. `text` is the input itself when upstream keeps
 * it as the serialisation (its parser does so for inputs it considers already canonical, see `canonicalQuantity`).
 */
export interface Quantity {
  readonly mantissa: bigint
  readonly exponent: number
  readonly format: QuantityFormat
  readonly text?: string
}

/** The regular expression upstream's error messages quote (its scanner accepts a subset of it). */
export const QUANTITY_REGEX = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'
export const ERR_QUANTITY_FORMAT = `quantities must match the regular expression '${QUANTITY_REGEX}'`
export const ERR_QUANTITY_NUMERIC = 'unable to parse numeric part of quantity'
export const ERR_QUANTITY_SUFFIX = 'unable to parse quantity\'s suffix'

const DECIMAL_SUFFIX: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 }
const BINARY_SUFFIX: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 }
const DECIMAL_SUFFIX_BY_EXPONENT = new Map(Object.entries(DECIMAL_SUFFIX).map(([s, e]) => [e, s]))
const BINARY_SUFFIX_BY_POWER = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei']
const SUFFIX_CHARS = 'eEinumkKMGTP'
/** 2^63 - 1: binary-suffixed values are capped here, as upstream caps them. */
const MAX_INT64 = (1n << 63n) - 1n
const NANO = -9

type Scan = { negative: boolean; num: string; denom: string; suffix: string }
type Parsed = { ok: true; q: Quantity } | { ok: false; error: string }

function isDigit(c: string): boolean { return c >= '0' && c <= '9' }

/** Splits a quantity text into sign, integer digits (leading zeros dropped), fraction digits and suffix. */
function scan(s: string): Scan | undefined {
  let i = 0
  let negative = false
  if (s[0] === '-') { negative = true; i++ } else if (s[0] === '+') i++
  while (i < s.length && s[i] === '0') i++
  if (i >= s.length) return { negative, num: '0', denom: '', suffix: '' }
  let start = i
  while (i < s.length && isDigit(s[i])) i++
  const num = s.slice(start, i) || '0'
  let denom = ''
  if (s[i] === '.') {
    start = ++i
    while (i < s.length && isDigit(s[i])) i++
    denom = s.slice(start, i)
  }
  const suffixStart = i
  while (i < s.length && SUFFIX_CHARS.includes(s[i])) i++
  if (s[i] === '-' || s[i] === '+') i++
  while (i < s.length && isDigit(s[i])) i++
  if (i < s.length) return undefined
  return { negative, num, denom, suffix: s.slice(suffixStart) }
}

/** The suffix as base and exponent; a decimal exponent wraps to 32 bits as upstream's does. */
function interpret(suffix: string): { base: 2 | 10; exponent: number; format: QuantityFormat } | undefined {
  if (suffix in DECIMAL_SUFFIX) return { base: 10, exponent: DECIMAL_SUFFIX[suffix], format: 'DecimalSI' }
  if (suffix in BINARY_SUFFIX) return { base: 2, exponent: BINARY_SUFFIX[suffix], format: 'BinarySI' }
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E')) {
    const digits = suffix.slice(1)
    if (!/^[+-]?[0-9]+$/.test(digits)) return undefined
    const n = BigInt(digits)
    if (n > MAX_INT64 || n < -MAX_INT64 - 1n) return undefined
    return { base: 10, exponent: Number(BigInt.asIntN(32, n)), format: 'DecimalExponent' }
  }
  return undefined
}

function digitCount(n: bigint): number { return (n < 0n ? -n : n).toString().length }
function abs(n: bigint): bigint { return n < 0n ? -n : n }

/** Rounds |mantissa| up (away from zero) so that the exponent is at least `to`. */
function roundUpTo(mantissa: bigint, exponent: number, to: number): { mantissa: bigint; exponent: number; exact: boolean } {
  if (exponent >= to || mantissa === 0n) return { mantissa, exponent, exact: true }
  const shift = to - exponent
  const sign = mantissa < 0n ? -1n : 1n
  const m = abs(mantissa)
  if (digitCount(m) <= shift) return { mantissa: sign, exponent: to, exact: false }
  const div = 10n ** BigInt(shift)
  const q = m / div
  const exact = q * div === m
  return { mantissa: sign * (exact ? q : q + 1n), exponent: to, exact }
}

/**
 * Whether upstream's parser keeps the input text as the serialisation: its fast path (a small exact value) reuses the
 * string when it already looks canonical, which is judged on the digits alone (so `010`, `+1`, `1.500` and `1E3` are
 * kept as written).
 */
function keepsText(sc: Scan, base: 2 | 10, exponent: number): boolean {
  const shifted = sc.num + sc.denom
  if (base === 10) {
    if (18 - shifted.length < 0) return false
    const scale = exponent - sc.denom.length
    if (scale < NANO) return false
    return scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0'
  }
  if (sc.denom.length !== 0) return false
  const precision = 15 - sc.num.length - Math.trunc(Math.fround(Math.fround(exponent) * 3) / 10) - 1
  if (precision < 0) return false
  const value = BigInt(sc.num)
  if ((value << BigInt(exponent)) > MAX_INT64) return false
  return (value & 7n) !== 0n
}

function parse(s: string): Parsed {
  if (s.length === 0) return { ok: false, error: ERR_QUANTITY_FORMAT }
  if (s === '0') return { ok: true, q: { mantissa: 0n, exponent: 0, format: 'DecimalSI', text: '0' } }
  const sc = scan(s)
  if (sc === undefined) return { ok: false, error: ERR_QUANTITY_FORMAT }
  const suf = interpret(sc.suffix)
  if (suf === undefined) return { ok: false, error: ERR_QUANTITY_SUFFIX }
  const digits = BigInt(sc.num + sc.denom)
  let mantissa: bigint
  let exponent: number
  if (suf.base === 10) { mantissa = digits; exponent = suf.exponent - sc.denom.length }
  else { mantissa = digits << BigInt(suf.exponent); exponent = -sc.denom.length }
  // Below a nano the magnitude is rounded up: asking for some of a resource gets some.
  ;({ mantissa, exponent } = roundUpTo(mantissa, exponent, NANO))
  let format = suf.format
  if (format === 'BinarySI') {
    if (compareMagnitude(mantissa, exponent, MAX_INT64, 0) > 0) { mantissa = MAX_INT64; exponent = 0 }
    if (mantissa !== 0n && compareMagnitude(mantissa, exponent, 1n, 0) < 0) format = 'DecimalSI'
  }
  if (sc.negative) mantissa = -mantissa
  const q: Quantity = keepsText(sc, suf.base, suf.exponent) ? { mantissa, exponent, format, text: s } : { mantissa, exponent, format }
  return { ok: true, q }
}

/** Compares |a·10^ae| with |b·10^be| without expanding large exponents. */
function compareMagnitude(a: bigint, ae: number, b: bigint, be: number): -1 | 0 | 1 {
  a = abs(a); b = abs(b)
  if (a === 0n || b === 0n) return a === b ? 0 : a === 0n ? -1 : 1
  const oa = a.toString().length + ae
  const ob = b.toString().length + be
  if (oa !== ob) return oa < ob ? -1 : 1
  if (ae > be) a *= 10n ** BigInt(ae - be)
  else if (be > ae) b *= 10n ** BigInt(be - ae)
  return a === b ? 0 : a < b ? -1 : 1
}

function asText(s: string | number): string | undefined {
  if (typeof s === 'number') return Number.isFinite(s) ? String(s) : undefined
  return typeof s === 'string' ? s : undefined
}

/**
 * Parses a quantity as upstream's ParseQuantity does (no surrounding spaces; a number is read through its JS text).
 * Returns undefined when upstream refuses it; `quantityParseError` says why.
 */
export function parseQuantity(s: string | number): Quantity | undefined {
  const text = asText(s)
  if (text === undefined) return undefined
  const r = parse(text)
  return r.ok ? r.q : undefined
}

/** Upstream's error text for a quantity it cannot parse, or undefined when it parses. */
export function quantityParseError(s: string | number): string | undefined {
  const text = asText(s)
  if (text === undefined) return ERR_QUANTITY_FORMAT
  const r = parse(text)
  return r.ok ? undefined : r.error
}

function toQuantity(q: Quantity | string | number): Quantity | undefined {
  return typeof q === 'object' ? q : parseQuantity(q)
}

/** -1, 0 or 1 as a < b, a = b, a > b. Unparseable inputs compare as zero. */
export function compareQuantities(a: Quantity | string | number, b: Quantity | string | number): -1 | 0 | 1 {
  const x = toQuantity(a) ?? ZERO
  const y = toQuantity(b) ?? ZERO
  const sx = x.mantissa < 0n ? -1 : x.mantissa > 0n ? 1 : 0
  const sy = y.mantissa < 0n ? -1 : y.mantissa > 0n ? 1 : 0
  if (sx !== sy) return sx < sy ? -1 : 1
  if (sx === 0) return 0
  const c = compareMagnitude(x.mantissa, x.exponent, y.mantissa, y.exponent)
  return (sx < 0 ? -c : c) as -1 | 0 | 1
}

export const ZERO: Quantity = Object.freeze({ mantissa: 0n, exponent: 0, format: 'DecimalSI' as QuantityFormat })

export function isNegative(q: Quantity | string | number): boolean {
  const x = toQuantity(q)
  return x !== undefined && x.mantissa < 0n
}

/** Whether the value parses and is above zero (upstream's `must be positive` / `must be greater than zero` checks). */
export function isPositive(q: Quantity | string | number): boolean {
  const x = toQuantity(q)
  return x !== undefined && x.mantissa > 0n
}

export function isZero(q: Quantity | string | number): boolean {
  const x = toQuantity(q)
  return x !== undefined && x.mantissa === 0n
}

/** Whether the value has no fractional part (upstream's integer-resource check, without its int64 overflow). */
export function isInteger(q: Quantity | string | number): boolean {
  const x = toQuantity(q)
  if (x === undefined) return false
  return roundUpTo(x.mantissa, x.exponent, 0).exact
}

/** ceil(q / 10^scale), rounding away from zero (upstream ScaledValue; Value is scale 0, MilliValue scale -3). */
export function scaledValue(q: Quantity | string | number, scale: number): bigint {
  const x = toQuantity(q) ?? ZERO
  const r = roundUpTo(x.mantissa, x.exponent, scale)
  const e = r.exponent - scale
  return e > 0 ? r.mantissa * 10n ** BigInt(e) : r.mantissa
}

/** The canonical text of a parsed quantity (upstream Quantity.String / MarshalJSON). */
export function formatQuantity(q: Quantity): string {
  if (q.text !== undefined) return q.text
  if (q.mantissa === 0n) return '0'
  let format = q.format
  if (format === 'BinarySI') {
    if (compareMagnitude(q.mantissa, q.exponent, 1024n, 0) < 0) format = 'DecimalSI'
    else {
      const whole = roundUpTo(q.mantissa, q.exponent, 0)
      if (!whole.exact) format = 'DecimalSI'
      else {
        let m = whole.mantissa * 10n ** BigInt(whole.exponent)
        let power = 0
        while (m % 1024n === 0n) { m /= 1024n; power++ }
        return `${m}${BINARY_SUFFIX_BY_POWER[power] ?? ''}`
      }
    }
  }
  let m = q.mantissa
  let e = q.exponent
  while (m % 10n === 0n) { m /= 10n; e++ }
  while (e % 3 !== 0) { m *= 10n; e-- }
  if (format === 'DecimalExponent') return e === 0 ? `${m}` : `${m}e${e}`
  // Upstream prints no suffix when none exists for the exponent (values of 1000E and more).
  return `${m}${DECIMAL_SUFFIX_BY_EXPONENT.get(e) ?? ''}`
}

/**
 * The text upstream serialises a quantity as, after decoding it from JSON (surrounding spaces are trimmed first, as
 * its UnmarshalJSON does): `1000m` → `1`, `1024Mi` → `1Gi`, `0.5` → `500m`, `1.5Gi` → `1536Mi`, `1e-12` → `1e-9`.
 * Texts its parser deems canonical are kept as written (`010`, `+1`, `1.500`, `2e3`). Undefined when it does not parse.
 */
export function canonicalQuantity(s: string | number): string | undefined {
  const q = parseQuantity(typeof s === 'string' ? s.trim() : s)
  return q === undefined ? undefined : formatQuantity(q)
}

/** 10^n as a bigint (n >= 0). */
function pow10(n: number): bigint { return 10n ** BigInt(n) }

/**
 * a + b exactly, as upstream's Quantity.Add: the result keeps a's format unless a is zero (then b's), and is printed
 * canonically (no text is kept).
 */
export function addQuantities(a: Quantity, b: Quantity): Quantity {
  const e = Math.min(a.exponent, b.exponent)
  const mantissa = a.mantissa * pow10(a.exponent - e) + b.mantissa * pow10(b.exponent - e)
  return { mantissa, exponent: e, format: a.mantissa === 0n ? b.format : a.format }
}

/** a - b exactly, as upstream's Quantity.Sub (a zero a takes b's format). */
export function subtractQuantities(a: Quantity, b: Quantity): Quantity {
  return addQuantities(a, { mantissa: -b.mantissa, exponent: b.exponent, format: b.format })
}

/** An integer count as upstream's NewQuantity(n, DecimalSI). */
export function countQuantity(n: number | bigint): Quantity {
  return { mantissa: BigInt(n), exponent: 0, format: 'DecimalSI' }
}
