// Go's regexp (RE2) syntax: the parse errors Go's regexp.Compile reports (in its words), and a translation of a valid
// RE2 pattern into an equivalent JavaScript RegExp (u flag) for matching; a pattern JS cannot run never throws.

/** Go's `error parsing regexp: <code>: `<expr>``. */
class Re2Error extends Error {}

function fail(code: string, expr: string): never { throw new Re2Error(`error parsing regexp: ${code}: \`${expr}\``) }

const GENERAL_CATEGORIES = new Set(['C', 'Cc', 'Cf', 'Co', 'Cs', 'L', 'Ll', 'Lm', 'Lo', 'Lt', 'Lu', 'M', 'Mc', 'Me', 'Mn', 'N', 'Nd', 'Nl', 'No', 'P', 'Pc', 'Pd', 'Pe', 'Pf', 'Pi', 'Po', 'Ps', 'S', 'Sc', 'Sk', 'Sm', 'So', 'Z', 'Zl', 'Zp', 'Zs'])

type Range = [number, number]
const MAX_CP = 0x10ffff

const PERL: Record<string, Range[]> = {
  d: [[0x30, 0x39]],
  s: [[0x09, 0x0a], [0x0c, 0x0d], [0x20, 0x20]],
  w: [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]],
}
const POSIX: Record<string, Range[]> = {
  alnum: [[0x30, 0x39], [0x41, 0x5a], [0x61, 0x7a]],
  alpha: [[0x41, 0x5a], [0x61, 0x7a]],
  ascii: [[0x00, 0x7f]],
  blank: [[0x09, 0x09], [0x20, 0x20]],
  cntrl: [[0x00, 0x1f], [0x7f, 0x7f]],
  digit: [[0x30, 0x39]],
  graph: [[0x21, 0x7e]],
  lower: [[0x61, 0x7a]],
  print: [[0x20, 0x7e]],
  punct: [[0x21, 0x2f], [0x3a, 0x40], [0x5b, 0x60], [0x7b, 0x7e]],
  space: [[0x09, 0x0d], [0x20, 0x20]],
  upper: [[0x41, 0x5a]],
  word: [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]],
  xdigit: [[0x30, 0x39], [0x41, 0x46], [0x61, 0x66]],
}

function complement(rs: Range[]): Range[] {
  const sorted = [...rs].sort((a, b) => a[0] - b[0])
  const out: Range[] = []
  let next = 0
  for (const [lo, hi] of sorted) {
    if (lo > next) out.push([next, lo - 1])
    next = Math.max(next, hi + 1)
  }
  if (next <= MAX_CP) out.push([next, MAX_CP])
  return out
}

/** The ASCII letters of a range in the other case (Go folds case for (?i); non-ASCII folding is not reproduced). */
function folded(rs: Range[]): Range[] {
  const out: Range[] = []
  for (const [lo, hi] of rs) {
    const a = Math.max(lo, 0x61), b = Math.min(hi, 0x7a)
    if (a <= b) out.push([a - 32, b - 32])
    const c = Math.max(lo, 0x41), d = Math.min(hi, 0x5a)
    if (c <= d) out.push([c + 32, d + 32])
  }
  return out
}

const hex = (cp: number): string => `\\u{${cp.toString(16)}}`
const isAlnum = (c: string | undefined): boolean => c !== undefined && /^[0-9A-Za-z]$/.test(c)
const isWord = (c: string | undefined): boolean => c !== undefined && /^[0-9A-Za-z_]$/.test(c)

interface Flags { i: boolean; m: boolean; s: boolean; U: boolean }

/** A JS class body (between brackets) for these ranges and extra pieces. */
function classBody(rs: Range[], pieces: string[]): string {
  return rs.map(([lo, hi]) => (lo === hi ? hex(lo) : `${hex(lo)}-${hex(hi)}`)).join('') + pieces.join('')
}

function unicodeClass(name: string, negated: boolean, expr: string): { js: string; any: boolean } {
  let neg = negated
  let n = name
  if (n.startsWith('^')) { neg = !neg; n = n.slice(1) }
  if (n === 'Any') return { js: neg ? '[]' : '[\\s\\S]', any: true }
  let js: string
  if (GENERAL_CATEGORIES.has(n)) js = `\\${neg ? 'P' : 'p'}{${n}}`
  else {
    js = `\\${neg ? 'P' : 'p'}{Script=${n}}`
    try { new RegExp(js, 'u') } catch { fail('invalid character class range', expr) }
  }
  return { js, any: false }
}

class Parser {
  readonly cs: string[]
  pos = 0
  out = ''
  flags: Flags = { i: false, m: false, s: false, U: false }
  constructor(readonly src: string) { this.cs = Array.from(src) }

  text(from: number, to = this.pos): string { return this.cs.slice(from, to).join('') }

  parse(): string {
    this.alternation(0)
    if (this.pos < this.cs.length) fail('unexpected )', this.src)
    return this.out
  }

  /** A sequence of alternatives up to an unmatched `)` or the end; `depth` > 0 inside a group. */
  alternation(depth: number): void {
    // Whether the last thing emitted can take a repetition, and where it started in `out` (for wrapping).
    let operand = false
    let lastOpStart = -1
    let lastOpEnd = -1
    while (this.pos < this.cs.length) {
      const c = this.cs[this.pos]
      if (c === ')') {
        if (depth === 0) fail('unexpected )', this.src)
        return
      }
      if (c === '|') { this.out += '|'; this.pos++; operand = false; continue }
      const rep = this.repeatAt(this.pos)
      if (rep !== undefined) {
        const start = this.pos
        this.pos = rep.end
        let lazy = false
        if (this.cs[this.pos] === '?') { lazy = true; this.pos++ }
        if (!operand) fail('missing argument to repetition operator', this.text(start))
        if (lastOpEnd === start) fail('invalid nested repetition operator', this.text(lastOpStart))
        if (rep.max !== undefined && (rep.max > 1000 || rep.max < (rep.min ?? 0))) fail('invalid repeat count', rep.text)
        if ((rep.min ?? 0) > 1000) fail('invalid repeat count', rep.text)
        if (this.flags.U) lazy = !lazy
        this.out += rep.js + (lazy ? '?' : '')
        lastOpStart = start
        lastOpEnd = this.pos
        continue
      }
      const before = this.out.length
      const produced = this.atom(depth)
      if (produced === 'operand') { operand = true }
      else if (produced === 'assertion') {
        // JS (u flag) refuses a quantifier on an assertion; Go repeats it as an empty-width operand.
        this.out = `${this.out.slice(0, before)}(?:${this.out.slice(before)})`
        operand = true
      } else operand = false
    }
    if (depth > 0) fail('missing closing )', this.src)
  }

  /** A repetition operator at i (`*`, `+`, `?`, or a well-formed `{n}`, `{n,}`, `{n,m}`), else undefined. */
  repeatAt(i: number): { end: number; js: string; text: string; min?: number; max?: number } | undefined {
    const c = this.cs[i]
    if (c === '*' || c === '+' || c === '?') return { end: i + 1, js: c, text: c }
    if (c !== '{') return undefined
    let j = i + 1
    let a = ''
    while (/^[0-9]$/.test(this.cs[j] ?? '')) a += this.cs[j++]
    if (a === '') return undefined
    let b: string | undefined
    if (this.cs[j] === ',') {
      j++
      b = ''
      while (/^[0-9]$/.test(this.cs[j] ?? '')) b += this.cs[j++]
    }
    if (this.cs[j] !== '}') return undefined
    j++
    const min = Number(a)
    const max = b === undefined ? min : b === '' ? undefined : Number(b)
    const text = this.text(i, j)
    if (min > 1000 || (max !== undefined && (max > 1000 || max < min))) fail('invalid repeat count', text)
    return { end: j, js: b === undefined ? `{${min}}` : b === '' ? `{${min},}` : `{${min},${max}}`, text, min, max }
  }

  literal(cp: number): void {
    const ch = String.fromCodePoint(cp)
    if (this.flags.i && /^[A-Za-z]$/.test(ch)) {
      this.out += `[${ch.toLowerCase()}${ch.toUpperCase()}]`
      return
    }
    this.out += isAlnum(ch) ? ch : hex(cp)
  }

  /** One atom; what it was: something a repetition may follow, an assertion, or nothing (a flag group). */
  atom(depth: number): 'operand' | 'assertion' | 'none' {
    const c = this.cs[this.pos]
    switch (c) {
      case '(': return this.group(depth)
      case '[': this.charClass(); return 'operand'
      case '.': this.pos++; this.out += this.flags.s ? '[\\s\\S]' : '[^\\n]'; return 'operand'
      case '^': this.pos++; this.out += this.flags.m ? '(?<![^\\n])' : '(?<![\\s\\S])'; return 'assertion'
      case '$': this.pos++; this.out += this.flags.m ? '(?![^\\n])' : '(?![\\s\\S])'; return 'assertion'
      case '\\': return this.escape()
      default:
        this.pos++
        this.literal(c.codePointAt(0)!)
        return 'operand'
    }
  }

  group(depth: number): 'operand' | 'none' {
    const start = this.pos
    this.pos++
    if (this.cs[this.pos] !== '?') {
      this.out += '(?:'
      this.inner(depth)
      return 'operand'
    }
    // (?P<name>re), (?<name>re), (?flags), (?flags:re)
    const next = this.cs[this.pos + 1]
    if ((next === 'P' && this.cs[this.pos + 2] === '<') || (next === '<' && this.cs[this.pos + 2] !== '=' && this.cs[this.pos + 2] !== '!')) {
      const open = next === 'P' ? this.pos + 3 : this.pos + 2
      let j = open
      while (j < this.cs.length && this.cs[j] !== '>') j++
      if (j >= this.cs.length) fail('invalid named capture', this.text(start, this.cs.length))
      const name = this.text(open, j)
      if (name === '' || !Array.from(name).every(isWord)) fail('invalid named capture', this.text(start, j + 1))
      this.pos = j + 1
      this.out += '(?:'
      this.inner(depth)
      return 'operand'
    }
    let j = this.pos + 1
    const saved = { ...this.flags }
    const flags = { ...this.flags }
    let sign = true
    let sawFlag = false
    let sawMinus = false
    for (;;) {
      const f = this.cs[j]
      if (f === undefined) fail('missing closing )', this.src)
      if (f === 'i' || f === 'm' || f === 's' || f === 'U') { flags[f] = sign; sawFlag = true; j++; continue }
      if (f === '-') {
        if (sawMinus) fail('invalid or unsupported Perl syntax', this.text(start, j + 1))
        sawMinus = true; sign = false; sawFlag = false; j++; continue
      }
      if (f === ':' || f === ')') {
        if (sawMinus && !sawFlag) fail('invalid or unsupported Perl syntax', this.text(start, j + 1))
        if (f === ')' && !sawFlag && !sawMinus) fail('missing argument to repetition operator', '?')
        break
      }
      fail('invalid or unsupported Perl syntax', this.text(start, j + 1))
    }
    if (this.cs[j] === ')') {
      // (?flags): the rest of the enclosing group
      this.flags = flags
      this.pos = j + 1
      return 'none'
    }
    this.pos = j + 1
    this.flags = flags
    this.out += '(?:'
    this.inner(depth)
    this.flags = saved
    return 'operand'
  }

  /** A group's body and its `)`; flags set inside it end with it. */
  inner(depth: number): void {
    const saved = { ...this.flags }
    this.alternation(depth + 1)
    this.pos++ // ')'
    this.out += ')'
    this.flags = saved
  }

  /** An escape outside a class. */
  escape(): 'operand' | 'assertion' {
    const start = this.pos
    const c = this.cs[this.pos + 1]
    if (c === undefined) fail('trailing backslash at end of expression', '')
    switch (c) {
      case 'A': this.pos += 2; this.out += '(?<![\\s\\S])'; return 'assertion'
      case 'z': this.pos += 2; this.out += '(?![\\s\\S])'; return 'assertion'
      case 'b': this.pos += 2; this.out += '\\b'; return 'assertion'
      case 'B': this.pos += 2; this.out += '\\B'; return 'assertion'
      case 'Q': {
        this.pos += 2
        let end = this.pos
        while (end < this.cs.length && !(this.cs[end] === '\\' && this.cs[end + 1] === 'E')) end++
        const lits = this.cs.slice(this.pos, end)
        this.pos = end < this.cs.length ? end + 2 : end
        if (lits.length === 0) { this.out += '(?:)'; return 'operand' }
        // A repetition after \Q...\E applies to its last character only.
        for (const l of lits) this.literal(l.codePointAt(0)!)
        return 'operand'
      }
    }
    const item = this.classEscape(start)
    if (item.js !== undefined) this.out += item.js
    else if (item.ranges.length === 1 && item.ranges[0][0] === item.ranges[0][1] && !item.perl) this.literal(item.ranges[0][0])
    else this.out += `[${classBody(this.flags.i ? [...item.ranges, ...folded(item.ranges)] : item.ranges, [])}]`
    return 'operand'
  }

  /**
   * An escape as a set of code points (a literal is a one-point set), or as a JS class piece (Unicode classes);
   * `this.pos` moves past it. Go's parseEscape and its Perl / Unicode class escapes.
   */
  classEscape(start: number): { ranges: Range[]; js?: string; piece?: string; perl?: boolean } {
    const c = this.cs[start + 1]
    if (c === undefined) fail('trailing backslash at end of expression', '')
    this.pos = start + 2
    const lower = c.toLowerCase()
    if ((lower === 'd' || lower === 's' || lower === 'w') && PERL[lower]) {
      const rs = PERL[lower]
      return { ranges: c === lower ? rs : complement(rs), perl: true }
    }
    if (c === 'p' || c === 'P') {
      let name: string
      if (this.cs[this.pos] === '{') {
        let j = this.pos + 1
        while (j < this.cs.length && this.cs[j] !== '}') j++
        if (j >= this.cs.length) fail('invalid character class range', this.text(start, this.cs.length))
        name = this.text(this.pos + 1, j)
        this.pos = j + 1
      } else {
        if (this.cs[this.pos] === undefined) fail('invalid character class range', this.text(start))
        name = this.cs[this.pos]
        this.pos++
      }
      const u = unicodeClass(name, c === 'P', this.text(start))
      return { ranges: [], js: u.js, piece: u.any ? (u.js === '[]' ? '' : '\\s\\S') : u.js }
    }
    if (c >= '1' && c <= '7' && !(this.cs[this.pos] >= '0' && this.cs[this.pos] <= '7')) fail('invalid escape sequence', this.text(start))
    if (c >= '0' && c <= '7') {
      let v = c
      for (let k = 0; k < 2 && this.cs[this.pos] >= '0' && this.cs[this.pos] <= '7'; k++) v += this.cs[this.pos++]
      return { ranges: [[parseInt(v, 8), parseInt(v, 8)]] }
    }
    if (c === 'x') {
      if (this.cs[this.pos] === '{') {
        let j = this.pos + 1
        let h = ''
        while (j < this.cs.length && /^[0-9A-Fa-f]$/.test(this.cs[j])) h += this.cs[j++]
        if (this.cs[j] !== '}' || h === '' || parseInt(h, 16) > MAX_CP) fail('invalid escape sequence', this.text(start, Math.min(j + 1, this.cs.length)))
        this.pos = j + 1
        const v = parseInt(h, 16)
        return { ranges: [[v, v]] }
      }
      const h = this.text(this.pos, this.pos + 2)
      if (!/^[0-9A-Fa-f]{2}$/.test(h)) fail('invalid escape sequence', this.text(start, Math.min(this.pos + 2, this.cs.length)))
      this.pos += 2
      const v = parseInt(h, 16)
      return { ranges: [[v, v]] }
    }
    const simple: Record<string, number> = { a: 7, f: 12, t: 9, n: 10, r: 13, v: 11 }
    if (simple[c] !== undefined) return { ranges: [[simple[c], simple[c]]] }
    const cp = c.codePointAt(0)!
    if (cp < 0x80 && !isAlnum(c)) return { ranges: [[cp, cp]] }
    fail('invalid escape sequence', this.text(start))
  }

  /** A bracketed class (Go's parseClass). */
  charClass(): void {
    const start = this.pos
    this.pos++
    let negated = false
    if (this.cs[this.pos] === '^') { negated = true; this.pos++ }
    const ranges: Range[] = []
    const pieces: string[] = []
    let first = true
    for (;;) {
      const c = this.cs[this.pos]
      if (c === undefined) fail('missing closing ]', this.text(start, this.cs.length))
      if (c === ']' && !first) { this.pos++; break }
      first = false
      // POSIX class [:name:] / [:^name:]
      if (c === '[' && this.cs[this.pos + 1] === ':') {
        const rest = this.text(this.pos + 2, this.cs.length)
        const end = rest.indexOf(':]')
        if (end >= 0) {
          const raw = rest.slice(0, end)
          const neg = raw.startsWith('^')
          const name = neg ? raw.slice(1) : raw
          const whole = `[:${raw}:]`
          if (POSIX[name] === undefined) fail('invalid character class range', whole)
          ranges.push(...(neg ? complement(POSIX[name]) : POSIX[name]))
          this.pos += Array.from(whole).length
          continue
        }
      }
      const itemStart = this.pos
      const lo = this.classAtom()
      if (lo.ranges.length !== 1 || lo.ranges[0][0] !== lo.ranges[0][1] || lo.perl || lo.piece !== undefined) {
        if (lo.piece !== undefined) pieces.push(lo.piece)
        ranges.push(...lo.ranges)
        continue
      }
      if (this.cs[this.pos] === '-' && this.cs[this.pos + 1] !== undefined && this.cs[this.pos + 1] !== ']') {
        this.pos++
        const hi = this.classAtom()
        if (hi.ranges.length !== 1 || hi.ranges[0][0] !== hi.ranges[0][1] || hi.perl || hi.piece !== undefined) fail('invalid character class range', this.text(itemStart))
        if (hi.ranges[0][0] < lo.ranges[0][0]) fail('invalid character class range', this.text(itemStart))
        ranges.push([lo.ranges[0][0], hi.ranges[0][0]])
        continue
      }
      ranges.push(lo.ranges[0])
    }
    const all = this.flags.i ? [...ranges, ...folded(ranges)] : ranges
    this.out += `[${negated ? '^' : ''}${classBody(all, pieces)}]`
  }

  classAtom(): { ranges: Range[]; piece?: string; perl?: boolean } {
    const c = this.cs[this.pos]
    if (c === '\\') {
      const e = this.classEscape(this.pos)
      return e.js !== undefined ? { ranges: [], piece: e.piece ?? '' } : { ranges: e.ranges, perl: e.perl }
    }
    this.pos++
    const cp = c.codePointAt(0)!
    return { ranges: [[cp, cp]] }
  }
}

/** Go's regexp.Compile error text for the pattern (`error parsing regexp: ...`), or undefined when Go accepts it. */
export function re2Problem(pattern: string): string | undefined {
  try {
    new Parser(pattern).parse()
    return undefined
  } catch (err) {
    if (err instanceof Re2Error) return err.message
    return undefined
  }
}

/** A JavaScript source (for `new RegExp(source, 'u')`) that matches as the RE2 pattern does, or undefined when it is not valid RE2. */
export function re2ToJs(pattern: string): string | undefined {
  try {
    return new Parser(pattern).parse()
  } catch {
    return undefined
  }
}

const NEVER: { test: (s: string) => boolean } = { test: () => false }

/**
 * An RE2 pattern as something to test strings with (ajv's regExp engine): the translated RegExp; a pattern that is
 * not RE2 (refused when its CRD is written) or that JS cannot compile matches nothing rather than throwing.
 */
export function re2RegExp(pattern: string): { test: (s: string) => boolean } {
  const js = re2ToJs(pattern)
  if (js === undefined) return NEVER
  try {
    return new RegExp(js, 'u')
  } catch {
    return NEVER
  }
}
re2RegExp.code = 're2RegExp'
