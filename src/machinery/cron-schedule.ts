// Checks of a CronJob schedule as upstream's parser reads it (five fields, or a descriptor, optionally after TZ=/CRON_TZ=), and of a time zone name as Go's time.LoadLocation accepts it.
import { parseGoDuration } from './tabwriter.js'

/** The range and names of one cron field. */
interface Bounds { min: number; max: number; names?: Record<string, number> }

const MINUTES: Bounds = { min: 0, max: 59 }
const HOURS: Bounds = { min: 0, max: 23 }
const DAYS_OF_MONTH: Bounds = { min: 1, max: 31 }
const MONTHS: Bounds = {
  min: 1, max: 12,
  names: { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 },
}
const DAYS_OF_WEEK: Bounds = { min: 0, max: 6, names: { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 } }
const FIELDS = [MINUTES, HOURS, DAYS_OF_MONTH, MONTHS, DAYS_OF_WEEK]

const DESCRIPTORS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'])
const EVERY = '@every '

class CronError extends Error {}

/** Go's %q of a string (close enough for the ASCII a schedule holds). */
const goQuote = (s: string): string => JSON.stringify(s)

const INT64_MAX = 9223372036854775807n

/** Go's strconv.Atoi: an optional sign, then decimal digits, within int64. */
function atoi(s: string): number {
  if (!/^[+-]?\d+$/.test(s)) throw new CronError(`failed to parse int from ${s}: strconv.Atoi: parsing ${goQuote(s)}: invalid syntax`)
  const n = BigInt(s)
  if (n > INT64_MAX || n < -INT64_MAX - 1n) throw new CronError(`failed to parse int from ${s}: strconv.Atoi: parsing ${goQuote(s)}: value out of range`)
  if (n < 0n) throw new CronError(`negative number (${n}) not allowed: ${s}`)
  return Number(n)
}

function intOrName(s: string, b: Bounds): number {
  const named = b.names?.[s.toLowerCase()]
  return named !== undefined ? named : atoi(s)
}

/** One comma-separated part of a field: `*`, `?`, `n`, `a-b`, each optionally `/step`. */
function checkRange(expr: string, b: Bounds): void {
  const rangeAndStep = expr.split('/')
  const lowAndHigh = rangeAndStep[0].split('-')
  let start: number
  let end: number
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
    start = b.min
    end = b.max
  } else {
    start = intOrName(lowAndHigh[0], b)
    if (lowAndHigh.length === 1) end = start
    else if (lowAndHigh.length === 2) end = intOrName(lowAndHigh[1], b)
    else throw new CronError(`too many hyphens: ${expr}`)
  }
  let step = 1
  if (rangeAndStep.length === 2) {
    step = atoi(rangeAndStep[1])
    // `n/step` runs from n to the maximum.
    if (lowAndHigh.length === 1) end = b.max
  } else if (rangeAndStep.length > 2) {
    throw new CronError(`too many slashes: ${expr}`)
  }
  if (start < b.min) throw new CronError(`beginning of range (${start}) below minimum (${b.min}): ${expr}`)
  if (end > b.max) throw new CronError(`end of range (${end}) above maximum (${b.max}): ${expr}`)
  if (start > end) throw new CronError(`beginning of range (${start}) beyond end of range (${end}): ${expr}`)
  if (step === 0) throw new CronError(`step of range should be a positive number: ${expr}`)
}

/** Go's time.ParseDuration, as far as its errors go: the error text, or '' when the text is a duration. */
export function goDurationError(text: string): string {
  const r = parseGoDuration(text)
  return 'error' in r ? r.error : ''
}

/**
 * Go's time.LoadLocation against the zone database Node's Intl carries: the error text, or '' when the zone is known.
 * "" and "UTC" are UTC and "Local" the local zone, as in Go. Names are matched case-sensitively, as Go's zone files are.
 */
export function goLocationError(name: string): string {
  if (name === '' || name === 'UTC' || name === 'Local') return ''
  let resolved: string
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone
  } catch {
    return `unknown time zone ${name}`
  }
  // Intl ignores case ("america/new_york"); a resolved name that differs from the given one only in case means the
  // given spelling is not a zone file's name.
  if (resolved !== name && resolved.toLowerCase() === name.toLowerCase()) return `unknown time zone ${name}`
  return ''
}

/**
 * Why a schedule does not parse as upstream's standard parser reads it, or '' when it does. Accepted: an optional
 * `TZ=<zone> ` or `CRON_TZ=<zone> ` prefix, then a descriptor (@yearly, @annually, @monthly, @weekly, @daily,
 * @midnight, @hourly, `@every <duration>`) or five fields (minute, hour, day of month, month, day of week), each a
 * comma-separated list of `*`, `?`, numbers, names (jan-dec, sun-sat), ranges and steps.
 */
export function cronScheduleError(schedule: string): string {
  try {
    checkSchedule(schedule)
    return ''
  } catch (err) {
    if (err instanceof CronError) return err.message
    throw err
  }
}

function checkSchedule(schedule: string): void {
  let spec = schedule
  if (spec === '') throw new CronError('empty spec string')
  if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
    // Upstream's parser takes the zone up to the first space (it fails without one; here the rest is the zone).
    const space = spec.indexOf(' ')
    const zone = spec.slice(spec.indexOf('=') + 1, space < 0 ? undefined : space)
    const bad = goLocationError(zone)
    if (bad !== '') throw new CronError(`provided bad location ${zone}: ${bad}`)
    spec = space < 0 ? '' : spec.slice(space).trim()
  }
  if (spec.startsWith('@')) {
    if (DESCRIPTORS.has(spec)) return
    if (spec.startsWith(EVERY)) {
      const bad = goDurationError(spec.slice(EVERY.length))
      if (bad !== '') throw new CronError(`failed to parse duration ${spec}: ${bad}`)
      return
    }
    throw new CronError(`unrecognized descriptor: ${spec}`)
  }
  const fields = spec.split(/\s+/).filter((f) => f !== '')
  if (fields.length !== FIELDS.length) throw new CronError(`expected exactly ${FIELDS.length} fields, found ${fields.length}: [${fields.join(' ')}]`)
  fields.forEach((f, i) => {
    for (const expr of f.split(',')) if (expr !== '') checkRange(expr, FIELDS[i])
  })
}
