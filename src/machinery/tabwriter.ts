// Text tables aligned the way Go's text/tabwriter aligns them (the debug dumps upstream writes), plus Go's spellings of a duration and of an RFC 3339 time.

export interface TabwriterOptions {
  /** Minimal cell width, padding included. */
  minWidth: number
  /** Added to the widest cell of a column. */
  padding: number
}

/**
 * Aligns tab-terminated cells into columns: a column block is a run of consecutive lines that have a cell in that
 * column; each cell of a block is padded with spaces to the block's width (widest cell + padding, at least
 * minWidth). The text after a line's last tab is not part of any column. Lines end with '\n'.
 */
export function tabwrite(text: string, opts: TabwriterOptions = { minWidth: 8, padding: 1 }): string {
  const raw = text.split('\n')
  const trailing = raw[raw.length - 1] === '' ? raw.pop() : undefined
  const lines = raw.map((l) => l.split('\t'))
  const out: string[] = []
  const widths: number[] = []

  const writeLines = (from: number, to: number): void => {
    for (let i = from; i < to; i++) {
      const cells = lines[i]
      let s = ''
      for (let j = 0; j < cells.length; j++) {
        const c = cells[j]
        s += c
        if (j < widths.length && j < cells.length - 1) s += ' '.repeat(Math.max(0, widths[j] - runeCount(c)))
      }
      out.push(s)
    }
  }

  const format = (line0: number, line1: number): void => {
    const column = widths.length
    for (let cur = line0; cur < line1; cur++) {
      if (column >= lines[cur].length - 1) continue
      // A block of this column starts at `cur`: write the lines before it, then size the block.
      writeLines(line0, cur)
      line0 = cur
      let width = opts.minWidth
      for (; cur < line1; cur++) {
        const cells = lines[cur]
        if (column >= cells.length - 1) break
        width = Math.max(width, runeCount(cells[column]) + opts.padding)
      }
      widths.push(width)
      format(line0, cur)
      widths.pop()
      line0 = cur
      cur--
    }
    writeLines(line0, line1)
  }

  format(0, lines.length)
  return out.join('\n') + (trailing !== undefined ? '\n' : '')
}

function runeCount(s: string): number {
  let n = 0
  for (const _ of s) n++
  return n
}

function fraction(v: number, digits: number): string {
  const f = String(v).padStart(digits, '0').replace(/0+$/, '')
  return f === '' ? '' : `.${f}`
}

const DURATION_NS: Record<string, number> = { ns: 1, us: 1e3, 'µs': 1e3, 'μs': 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 }

/** Go's time.ParseDuration: the duration in nanoseconds, or the error text Go gives. */
export function parseGoDuration(text: string): { ns: number } | { error: string } {
  const q = JSON.stringify
  const invalid = { error: `time: invalid duration ${q(text)}` }
  let s = text
  let sign = 1
  if (s.startsWith('-') || s.startsWith('+')) { sign = s[0] === '-' ? -1 : 1; s = s.slice(1) }
  if (s === '0') return { ns: 0 }
  if (s === '') return invalid
  let total = 0
  while (s !== '') {
    const num = /^(\d*)(?:\.(\d*))?/.exec(s)!
    if (num[1] === '' && (num[2] === undefined || num[2] === '')) return invalid
    s = s.slice(num[0].length)
    const unit = /^[^0-9.]*/.exec(s)![0]
    if (unit === '') return { error: `time: missing unit in duration ${q(text)}` }
    if (!(unit in DURATION_NS)) return { error: `time: unknown unit ${q(unit)} in duration ${q(text)}` }
    s = s.slice(unit.length)
    total += Number(`${num[1] || '0'}.${num[2] ?? '0'}`) * DURATION_NS[unit]
    if (total > 9.223372036854775807e18) return invalid
  }
  return { ns: sign * total }
}

/** A duration in nanoseconds the way Go's time.Duration prints it: 0s, 750ns, 1.5µs, 5ms, 2.25s, 1m30s, 2h0m0s. */
export function goDuration(nanoseconds: number): string {
  let ns = Math.round(nanoseconds)
  if (ns === 0) return '0s'
  const sign = ns < 0 ? '-' : ''
  ns = Math.abs(ns)
  if (ns < 1e3) return `${sign}${ns}ns`
  if (ns < 1e6) return `${sign}${Math.floor(ns / 1e3)}${fraction(ns % 1e3, 3)}µs`
  if (ns < 1e9) return `${sign}${Math.floor(ns / 1e6)}${fraction(ns % 1e6, 6)}ms`
  const seconds = Math.floor(ns / 1e9)
  let s = `${seconds % 60}${fraction(ns % 1e9, 9)}s`
  const minutes = Math.floor(seconds / 60)
  if (minutes > 0) {
    s = `${minutes % 60}m${s}`
    const hours = Math.floor(minutes / 60)
    if (hours > 0) s = `${hours}h${s}`
  }
  return sign + s
}

/** Go's zero time.Time in RFC 3339 (what an unset start time prints as). */
export const GO_ZERO_TIME = '0001-01-01T00:00:00Z'

/** Milliseconds since the epoch (fractions kept to the nanosecond) as Go's time.RFC3339Nano in UTC. */
export function rfc3339Nano(epochMs: number): string {
  const whole = Math.floor(epochMs / 1000)
  const ns = Math.min(999_999_999, Math.round((epochMs - whole * 1000) * 1e6))
  const base = new Date(whole * 1000).toISOString().slice(0, 19)
  return `${base}${fraction(ns, 9)}Z`
}
