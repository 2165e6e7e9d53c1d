// The protobuf codec's time conversions: meta.v1.Time is whole seconds (`2006-01-02T15:04:05Z`), MicroTime keeps
// microseconds (`….000000Z`); on the wire both are seconds and nanoseconds since the epoch.

const DIGITS2: string[] = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'))

/** `YYYY-MM-DDTHH:MM:SS` (UTC) of seconds since the epoch, for years 0000-9999 (calendar arithmetic, no Date). */
function formatSeconds(seconds: number): string {
  const days = Math.floor(seconds / 86400)
  let rem = seconds - days * 86400
  const hh = Math.floor(rem / 3600)
  rem -= hh * 3600
  const mm = Math.floor(rem / 60)
  const ss = rem - mm * 60
  // days -> civil date (H. Hinnant's algorithm).
  const z = days + 719468
  const era = Math.floor(z / 146097)
  const doe = z - era * 146097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1
  const m = mp < 10 ? mp + 3 : mp - 9
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0)
  if (y < 0 || y > 9999) {
    const iso = new Date(seconds * 1000).toISOString()
    return iso.slice(0, iso.length - 5)
  }
  return `${DIGITS2[Math.floor(y / 100)]}${DIGITS2[y % 100]}-${DIGITS2[m]}-${DIGITS2[d]}T${DIGITS2[hh]}:${DIGITS2[mm]}:${DIGITS2[ss]}`
}

let lastSeconds = NaN
let lastTime = ''

export function formatTime(seconds: number): string {
  if (seconds !== lastSeconds) {
    lastTime = formatSeconds(seconds) + 'Z'
    lastSeconds = seconds
  }
  return lastTime
}

export function formatMicroTime(seconds: number, nanos: number): string {
  return `${formatSeconds(seconds)}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`
}

const TIME_RE = /^(\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?([Zz]|[+-]\d\d:\d\d)$/

function digit(s: string, i: number): number {
  const c = s.charCodeAt(i) - 48
  return c >= 0 && c <= 9 ? c : NaN
}

/** Seconds since the epoch of `YYYY-MM-DDTHH:MM:SS` at the start of s (NaN when it is not that). */
function civilSeconds(s: string): number {
  if (s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58) return NaN
  const t = s.charCodeAt(10)
  if (t !== 84 && t !== 116) return NaN
  let y = digit(s, 0) * 1000 + digit(s, 1) * 100 + digit(s, 2) * 10 + digit(s, 3)
  const m = digit(s, 5) * 10 + digit(s, 6)
  const d = digit(s, 8) * 10 + digit(s, 9)
  const hh = digit(s, 11) * 10 + digit(s, 12)
  const mm = digit(s, 14) * 10 + digit(s, 15)
  const ss = digit(s, 17) * 10 + digit(s, 18)
  if (!(m >= 1 && m <= 12 && d >= 1 && d <= 31 && hh <= 23 && mm <= 59 && ss <= 59)) return NaN
  // civil date -> days (H. Hinnant's algorithm).
  if (m <= 2) y -= 1
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return (era * 146097 + doe - 719468) * 86400 + hh * 3600 + mm * 60 + ss
}

/** Seconds since the epoch of an RFC 3339 time, fractions dropped (NaN when it is not one). */
export function parseTime(s: string): number {
  if (s.length === 20 && (s.charCodeAt(19) === 90 || s.charCodeAt(19) === 122)) return civilSeconds(s)
  const m = TIME_RE.exec(s)
  if (!m) return NaN
  return Math.floor(Date.parse(m[1] + m[3]) / 1000)
}

/** What the last successful parseMicroTime read (module state: no result object per time). */
export let parsedSeconds = 0
export let parsedNanos = 0

export function parseMicroTime(s: string): boolean {
  const m = TIME_RE.exec(s)
  if (!m) return false
  const sec = m[3] === 'Z' || m[3] === 'z' ? civilSeconds(m[1]) : Math.floor(Date.parse(m[1] + m[3]) / 1000)
  if (Number.isNaN(sec)) return false
  parsedSeconds = sec
  parsedNanos = m[2] ? Number(m[2].padEnd(9, '0')) : 0
  return true
}
