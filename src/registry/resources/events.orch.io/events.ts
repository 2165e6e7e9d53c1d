// Event (events.orch.io/v1): the same events as core v1 Event (stored as those), in the newer shape.
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj } from '../../define.js'
import { eventColumns } from '../_printers.js'
import type { EventView } from '../_printers.js'

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
