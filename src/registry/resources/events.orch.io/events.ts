// Event (events.orch.io/v1): the same events as core v1 Event (stored as those), in the newer shape.
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj } from '../../define.js'
import { eventColumns } from '../_printers.js'
import type { EventView } from '../_printers.js'
import { isDeepStrictEqual } from 'node:util'
import { fieldInvalid, fieldRequired } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { isSet } from '../core/events.js'

function eventView(o: Obj): EventView {
  const r: Obj = o.regarding ?? {}
  const series = o.series !== null && typeof o.series === 'object' ? o.series : undefined
  return {
    firstTimestamp: o.deprecatedFirstTimestamp ?? undefined,
    lastTimestamp: o.deprecatedLastTimestamp ?? undefined,
    eventTime: o.eventTime ?? undefined,
    hasSeries: series !== undefined,
    seriesCount: series?.count,
    seriesLastObservedTime: series?.lastObservedTime,
    count: o.deprecatedCount,
    kind: r.kind,
    name: r.name,
    fieldPath: r.fieldPath,
    type: o.type,
    reason: o.reason,
    message: o.note,
    sourceComponent: o.deprecatedSource?.component,
    sourceHost: o.deprecatedSource?.host,
    reportingController: o.reportingController,
    reportingInstance: o.reportingInstance,
  }
}

/** events.orch.io/v1 field → core v1 field (upstream's Convert_v1_Event_To_core_Event); the others keep their names. */
const TO_CORE: Record<string, string> = {
  regarding: 'involvedObject', note: 'message', deprecatedSource: 'source', deprecatedFirstTimestamp: 'firstTimestamp',
  deprecatedLastTimestamp: 'lastTimestamp', deprecatedCount: 'count', reportingController: 'reportingComponent',
}
const FROM_CORE: Record<string, string> = Object.fromEntries(Object.entries(TO_CORE).map(([k, v]) => [v, k]))
/** The fields of each shape in Go's order (the order upstream writes them in). */
const CORE_FIELDS = ['metadata', 'involvedObject', 'reason', 'message', 'source', 'firstTimestamp', 'lastTimestamp', 'count', 'type',
  'eventTime', 'series', 'action', 'related', 'reportingComponent', 'reportingInstance']
const EVENTS_FIELDS = ['metadata', 'eventTime', 'series', 'reportingController', 'reportingInstance', 'action', 'reason', 'regarding',
  'related', 'note', 'type', 'deprecatedSource', 'deprecatedFirstTimestamp', 'deprecatedLastTimestamp', 'deprecatedCount']
/** events.orch.io/v1 fields upstream omits when empty (core writes reportingComponent and reportingInstance always). */
const OMIT_EMPTY = new Set(['reportingController', 'reportingInstance', 'action', 'reason', 'note', 'type', 'deprecatedCount'])

/** events.orch.io/v1 → core v1: only the fields present (it may be an apply configuration). */
export function eventToCore(o: Obj): Obj {
  const out: Obj = {}
  for (const k of CORE_FIELDS) {
    const v = o[FROM_CORE[k] ?? k]
    if (v !== undefined) out[k] = v
  }
  return out
}

/** core v1 → events.orch.io/v1. */
export function eventFromCore(o: Obj): Obj {
  const out: Obj = {}
  for (const k of EVENTS_FIELDS) {
    const v = o[TO_CORE[k] ?? k]
    if (v === undefined || (OMIT_EMPTY.has(k) && (v === '' || v === 0))) continue
    out[k] = v
  }
  return out
}

// ---- upstream's ValidateEventCreate/Update for events.k8s.io/v1 requests, on the stored (core) shape and names ----

function validateSeries(o: Obj): FieldError[] {
  const s = o.series
  if (s === undefined || s === null) return []
  const errs: FieldError[] = []
  if (!((s.count ?? 0) >= 2)) errs.push(fieldInvalid('series.count', '', 'should be at least 2'))
  if (!isSet(s.lastObservedTime)) errs.push(fieldRequired('series.lastObservedTime'))
  return errs
}

/** A create through events.orch.io/v1: besides core's checks, a new-style event with nothing of the old fields. */
export function validateEventsV1(o: Obj): FieldError[] {
  const errs = validateSeries(o)
  if (!isSet(o.eventTime)) errs.push(fieldRequired('eventTime'))
  if (o.type !== 'Normal' && o.type !== 'Warning') errs.push(fieldInvalid('type', '', `has invalid value: ${o.type ?? ''}`))
  if (isSet(o.firstTimestamp)) errs.push(fieldInvalid('firstTimestamp', '', 'needs to be unset'))
  if (isSet(o.lastTimestamp)) errs.push(fieldInvalid('lastTimestamp', '', 'needs to be unset'))
  if ((o.count ?? 0) !== 0) errs.push(fieldInvalid('count', '', 'needs to be unset'))
  if ((o.source?.component ?? '') !== '' || (o.source?.host ?? '') !== '') errs.push(fieldInvalid('source', '', 'needs to be unset'))
  return errs
}

/** The fields an update through events.orch.io/v1 may not change (upstream checks reason twice, and says so twice). */
const IMMUTABLE: Array<[string, string]> = [
  ['involvedObject', 'involvedObject'], ['reason', 'reason'], ['message', 'message'], ['source', 'source'], ['firstTimestamp', 'firstTimestamp'],
  ['lastTimestamp', 'lastTimestamp'], ['count', 'count'], ['reason', 'reason'], ['type', 'type'], ['eventTime', 'eventTime'], ['action', 'action'],
  ['related', 'related'], ['reportingComponent', 'reportingController'], ['reportingInstance', 'reportingInstance'],
]

/** An update through events.orch.io/v1: a changed series is checked again, and what was reported stays. */
export function validateEventsV1Update(o: Obj, old: Obj): FieldError[] {
  const errs = isDeepStrictEqual(o.series ?? null, old.series ?? null) ? [] : validateSeries(o)
  for (const [k, path] of IMMUTABLE) {
    if (!isDeepStrictEqual(o[k] ?? null, old[k] ?? null)) errs.push(fieldInvalid(path, o[k] ?? null, 'field is immutable'))
  }
  return errs
}

export default defineResource({
  group: 'events.orch.io', version: 'v1', kind: 'Event', resource: 'events', singular: 'event', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['ev'],
  schemaRef: 'io.orch.api.events.v1.Event',
  // value structs upstream.
  zeroValues: { regarding: {}, deprecatedSource: {} },
  strategy: { allowUnconditionalUpdate: true, nameRule: 'subdomain' },
  table: eventColumns(eventView),
  sharedStorage: {
    group: '', resource: 'events', toStored: eventToCore, fromStored: eventFromCore,
    validate: validateEventsV1, validateUpdate: validateEventsV1Update,
    // upstream's field label conversion for events.k8s.io/v1: these names select on the core ones.
    fieldLabels: {
      'regarding.kind': 'involvedObject.kind',
      'regarding.namespace': 'involvedObject.namespace',
      'regarding.name': 'involvedObject.name',
      'regarding.uid': 'involvedObject.uid',
      'regarding.apiVersion': 'involvedObject.apiVersion',
      'regarding.resourceVersion': 'involvedObject.resourceVersion',
      'regarding.fieldPath': 'involvedObject.fieldPath',
      reason: 'reason',
      reportingController: 'reportingComponent',
      type: 'type',
    },
  },
})
