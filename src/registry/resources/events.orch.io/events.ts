// Event (events.orch.io/v1): the same events as core v1 Event, in the newer shape.
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

export default defineResource({
  group: 'events.orch.io', version: 'v1', kind: 'Event', resource: 'events', singular: 'event', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['ev'],
  schemaRef: 'io.orch.api.events.v1.Event',
  // value structs upstream.
  zeroValues: { regarding: {}, deprecatedSource: {} },
  strategy: { allowUnconditionalUpdate: true, nameRule: 'subdomain' },
  table: eventColumns(eventView),
  // upstream's field label conversion for events.k8s.io/v1 maps these onto the core names.
  fieldSelectors: {
    'regarding.kind': (o) => o.regarding?.kind ?? '',
    'regarding.namespace': (o) => o.regarding?.namespace ?? '',
    'regarding.name': (o) => o.regarding?.name ?? '',
    'regarding.uid': (o) => o.regarding?.uid ?? '',
    'regarding.apiVersion': (o) => o.regarding?.apiVersion ?? '',
    'regarding.resourceVersion': (o) => o.regarding?.resourceVersion ?? '',
    'regarding.fieldPath': (o) => o.regarding?.fieldPath ?? '',
    reason: (o) => o.reason ?? '',
    reportingController: (o) => o.reportingController ?? '',
    type: (o) => o.type ?? '',
  },
})
