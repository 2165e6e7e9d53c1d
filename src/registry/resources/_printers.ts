// Shared pieces of the table printers (upstream pkg/printers/internalversion) and label formatting.
// Everything here is pure: the time of the request comes in as `now` (ms since epoch).
import { canonicalQuantity } from '../../machinery/quantity.js'
import type { Obj, TableColumn } from '../define.js'

/** kubectl's duration.HumanDuration: `5s`, `3m20s`, `45m`, `4h5m`, `20h`, `3d4h`, `30d`, `2y5d`, `9y`. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000)
  if (seconds < -1) return '<invalid>'
  if (seconds < 0) return '0s'
  if (seconds < 60 * 2) return `${seconds}s`
  const minutes = Math.floor(ms / 60_000)
  if (minutes < 10) {
    const s = seconds % 60
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`
  }
  if (minutes < 60 * 3) return `${minutes}m`
  const hours = Math.floor(ms / 3_600_000)
  if (hours < 8) {
    const m = minutes % 60
    return m === 0 ? `${hours}h` : `${hours}h${m}m`
  }
  if (hours < 48) return `${hours}h`
  const days = Math.floor(hours / 24)
  if (hours < 24 * 8) {
    const h = hours % 24
    return h === 0 ? `${days}d` : `${days}d${h}h`
  }
  if (hours < 24 * 365 * 2) return `${days}d`
  const years = Math.floor(days / 365)
  if (hours < 24 * 365 * 8) {
    const dy = days % 365
    return dy === 0 ? `${years}y` : `${years}y${dy}d`
  }
  return `${years}y`
}

/** Milliseconds since epoch of an RFC 3339 time, or undefined when unset or unparseable. */
export function parseTime(ts: unknown): number | undefined {
  if (typeof ts !== 'string' || ts === '') return undefined
  const t = Date.parse(ts)
  return Number.isNaN(t) ? undefined : t
}

/** upstream translateTimestampSince: `<unknown>` for a zero time, else the age. */
export function since(ts: unknown, now: number): string {
  const t = parseTime(ts)
  return t === undefined ? '<unknown>' : humanDuration(now - t)
}

export const NAME_DESCRIPTION = 'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated.'
export const AGE_DESCRIPTION = 'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists.'

export function nameColumn(priority = 0): TableColumn {
  const c: TableColumn = { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, cell: (o) => o.metadata?.name ?? '' }
  if (priority !== 0) c.priority = priority
  return c
}

export function ageColumn(): TableColumn {
  return { name: 'Age', type: 'string', description: AGE_DESCRIPTION, cell: (o, now) => since(o.metadata?.creationTimestamp, now) }
}

/** The `Created At` column of the default table (also used by roles and cluster roles). */
export function createdAtColumn(): TableColumn {
  return {
    name: 'Created At', type: 'date', description: AGE_DESCRIPTION,
    cell: (o) => {
      const t = parseTime(o.metadata?.creationTimestamp)
      return t === undefined ? '0001-01-01T00:00:00Z' : new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z')
    },
  }
}

function sortedKeys(m: Obj): string[] { return Object.keys(m).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)) }

/** labels.Set(m).String(): `a=1,b=2` sorted by key; '' when empty. */
export function labelsString(m: unknown): string {
  if (m === null || typeof m !== 'object') return ''
  return sortedKeys(m as Obj).map((k) => `${k}=${(m as Obj)[k]}`).join(',')
}

/** labels.FormatLabels: like labelsString but `<none>` when empty. */
export function formatLabels(m: unknown): string {
  const s = labelsString(m)
  return s === '' ? '<none>' : s
}

/** metav1.LabelSelectorAsSelector(sel).String(): '' for a nil or empty selector. */
export function labelSelectorString(sel: unknown): string {
  if (sel === null || typeof sel !== 'object') return ''
  const s = sel as Obj
  const reqs: Array<{ key: string; text: string }> = []
  const ml = s.matchLabels
  if (ml !== null && typeof ml === 'object') for (const k of Object.keys(ml)) reqs.push({ key: k, text: `${k}=${ml[k]}` })
  if (Array.isArray(s.matchExpressions)) {
    for (const e of s.matchExpressions) {
      const key = String(e?.key ?? '')
      const values = Array.isArray(e?.values) ? [...e.values].map(String).sort() : []
      switch (e?.operator) {
        case 'In': reqs.push({ key, text: `${key} in (${values.join(',')})` }); break
        case 'NotIn': reqs.push({ key, text: `${key} notin (${values.join(',')})` }); break
        case 'Exists': reqs.push({ key, text: key }); break
        case 'DoesNotExist': reqs.push({ key, text: `!${key}` }); break
        default: reqs.push({ key, text: `${key} ${String(e?.operator ?? '')} (${values.join(',')})` })
      }
    }
  }
  reqs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  return reqs.map((r) => r.text).join(',')
}

/** metav1.FormatLabelSelector: `<none>` for a nil or empty selector. */
export function formatLabelSelector(sel: unknown): string {
  const s = labelSelectorString(sel)
  return s === '' ? '<none>' : s
}

function containersOf(podSpec: unknown): Obj[] {
  const c = (podSpec as Obj | undefined)?.containers
  return Array.isArray(c) ? c : []
}

/** The wide `Containers`, `Images` and `Selector` columns of workload tables. */
export function containerColumns(podSpec: (o: Obj) => unknown, selector?: (o: Obj) => string): TableColumn[] {
  const cols: TableColumn[] = [
    { name: 'Containers', type: 'string', priority: 1, description: 'Names of each container in the template.', cell: (o) => containersOf(podSpec(o)).map((c) => c?.name ?? '').join(',') },
    { name: 'Images', type: 'string', priority: 1, description: 'Images referenced by each container in the template.', cell: (o) => containersOf(podSpec(o)).map((c) => c?.image ?? '').join(',') },
  ]
  if (selector) cols.push({ name: 'Selector', type: 'string', priority: 1, description: 'Label query over pods that should match the replica count.', cell: (o) => selector(o) })
  return cols
}

export function int(v: unknown): number { return typeof v === 'number' && Number.isFinite(v) ? Math.trunc(v) : 0 }

/** The fields of an event as the shared event printer reads them (core/v1 and events.orch.io/v1 map onto this). */
export interface EventView {
  firstTimestamp?: string
  lastTimestamp?: string
  eventTime?: string
  seriesCount?: number
  seriesLastObservedTime?: string
  hasSeries: boolean
  count?: number
  kind?: string
  name?: string
  fieldPath?: string
  type?: string
  reason?: string
  message?: string
  sourceComponent?: string
  sourceHost?: string
  reportingController?: string
  reportingInstance?: string
}

/** upstream printEvent columns; `view` maps the stored object onto the internal event fields. */
export function eventColumns(view: (o: Obj) => EventView): TableColumn[] {
  const first = (e: EventView, now: number) => (parseTime(e.firstTimestamp) === undefined ? since(e.eventTime, now) : since(e.firstTimestamp, now))
  const last = (e: EventView, now: number) => {
    if (e.hasSeries) return since(e.seriesLastObservedTime, now)
    return parseTime(e.lastTimestamp) === undefined ? first(e, now) : since(e.lastTimestamp, now)
  }
  const first1 = (s: string | undefined, t: string | undefined) => (s !== undefined && s !== '' ? s : t ?? '')
  return [
    { name: 'Last Seen', type: 'string', description: 'The time at which the most recent occurrence of this event was recorded.', cell: (o, now) => last(view(o), now) },
    { name: 'Type', type: 'string', description: 'Type of this event (Normal, Warning), new types could be added in the future', cell: (o) => view(o).type ?? '' },
    { name: 'Reason', type: 'string', description: "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.", cell: (o) => view(o).reason ?? '' },
    {
      name: 'Object', type: 'string', description: 'The object that this event is about.',
      cell: (o) => { const e = view(o); const k = (e.kind ?? '').toLowerCase(); return e.name ? `${k}/${e.name}` : k },
    },
    { name: 'Subobject', type: 'string', priority: 1, description: 'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement.', cell: (o) => view(o).fieldPath ?? '' },
    {
      name: 'Source', type: 'string', priority: 1, description: 'The component reporting this event. Should be a short machine understandable string.',
      cell: (o) => {
        const e = view(o)
        const component = first1(e.sourceComponent, e.reportingController)
        const instance = first1(e.sourceHost, e.reportingInstance)
        return instance === '' ? component : `${component}, ${instance}`
      },
    },
    { name: 'Message', type: 'string', description: 'A human-readable description of the status of this operation.', cell: (o) => (view(o).message ?? '').trim() },
    { name: 'First Seen', type: 'string', priority: 1, description: 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)', cell: (o, now) => first(view(o), now) },
    {
      name: 'Count', type: 'string', priority: 1, description: 'The number of times this event has occurred.',
      cell: (o) => { const e = view(o); if (e.hasSeries) return int(e.seriesCount); const c = int(e.count); return c === 0 ? 1 : c },
    },
    nameColumn(1),
  ]
}

// ---- helpers of the printers of storage, policy, networking and admission types ----

/**
 * resource.Quantity's String(): the form upstream prints (`1024Mi` is `1Gi`, `0.5` is `500m`, a text its parser keeps
 * stays as written). Unset is `0` (the zero Quantity); a text that is no quantity is printed as it is.
 */
export function quantityString(q: unknown): string {
  if (q === undefined || q === null) return '0'
  if (typeof q !== 'string' && typeof q !== 'number') return String(q)
  return canonicalQuantity(q) ?? String(q).trim()
}

/** A *Quantity's String(): `<nil>` when unset. */
export function quantityPtrString(q: unknown): string {
  return q === undefined || q === null ? '<nil>' : quantityString(q)
}

/** An IntOrString as text (a number in decimal, a string as it is). */
export function intOrStringText(v: unknown): string {
  return typeof v === 'number' ? String(Math.trunc(v)) : String(v ?? '')
}

/** Access modes as `RWO,ROX,RWX,RWOP` (each once, always in this order); '' when none. */
export function accessModesString(modes: unknown): string {
  const set = new Set(Array.isArray(modes) ? modes : [])
  const out: string[] = []
  if (set.has('ReadWriteOnce')) out.push('RWO')
  if (set.has('ReadOnlyMany')) out.push('ROX')
  if (set.has('ReadWriteMany')) out.push('RWX')
  if (set.has('ReadWriteOncePod')) out.push('RWOP')
  return out.join(',')
}

/** The value of an annotation under the brand's spelling (`x.orch.io/...`) or upstream's (`x.kubernetes.io/...`). */
export function brandedAnnotation(o: Obj, orchKey: string): string | undefined {
  const a = o.metadata?.annotations
  if (a === null || typeof a !== 'object') return undefined
  if (typeof a[orchKey] === 'string') return a[orchKey]
  const upstream = orchKey.replace(/orch\.io\//, 'kubernetes.io/')
  return typeof a[upstream] === 'string' ? a[upstream] : undefined
}

/** The storage class of a volume or claim: the beta annotation wins over spec.storageClassName. */
export function volumeStorageClass(o: Obj): string {
  const beta = brandedAnnotation(o, 'volume.beta.orch.io/storage-class')
  if (beta !== undefined) return beta
  const sc = o.spec?.storageClassName
  return typeof sc === 'string' ? sc : ''
}

/** The first `max` entries joined by commas and `+ N more...` for the rest; `<unset>` when there are none. */
export function listWithMore(items: string[], max = 3): string {
  const shown = items.slice(0, max).join(',')
  if (items.length > max) return `${shown} + ${items.length - max} more...`
  return shown === '' ? '<unset>' : shown
}

/** net.JoinHostPort: IPv6 addresses in brackets. */
export function joinHostPort(host: string, port: unknown): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`
}

/** A LabelSelector as the Go struct's generated String() writes it (`&LabelSelector{MatchLabels:map[string]string{a: b,},...}`). */
export function labelSelectorStructString(sel: unknown): string {
  if (sel === null || typeof sel !== 'object') return 'nil'
  const s = sel as Obj
  const ml: Obj = s.matchLabels !== null && typeof s.matchLabels === 'object' ? s.matchLabels : {}
  const labels = sortedKeys(ml).map((k) => `${k}: ${ml[k]},`).join('')
  const exprs = (Array.isArray(s.matchExpressions) ? s.matchExpressions : []).map((e: Obj) => {
    const values = Array.isArray(e?.values) ? e.values.join(' ') : ''
    return `LabelSelectorRequirement{Key:${e?.key ?? ''},Operator:${e?.operator ?? ''},Values:[${values}],},`
  }).join('')
  return `&LabelSelector{MatchLabels:map[string]string{${labels}},MatchExpressions:[]LabelSelectorRequirement{${exprs}},}`
}
