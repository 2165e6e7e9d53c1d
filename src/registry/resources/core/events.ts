// Event (v1). The same events are also served as events.orch.io/v1 Event.
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj } from '../../define.js'
import { eventColumns } from '../_printers.js'
import type { EventView } from '../_printers.js'

export function coreEventView(o: Obj): EventView {
  const io: Obj = o.involvedObject ?? {}
  const series = o.series !== null && typeof o.series === 'object' ? o.series : undefined
  return {
    firstTimestamp: o.firstTimestamp ?? undefined,
    lastTimestamp: o.lastTimestamp ?? undefined,
    eventTime: o.eventTime ?? undefined,
    hasSeries: series !== undefined,
    seriesCount: series?.count,
    seriesLastObservedTime: series?.lastObservedTime,
    count: o.count,
    kind: io.kind,
    name: io.name,
    fieldPath: io.fieldPath,
    type: o.type,
    reason: o.reason,
    message: o.message,
    sourceComponent: o.source?.component,
    sourceHost: o.source?.host,
    reportingController: o.reportingComponent,
    reportingInstance: o.reportingInstance,
  }
}

export default defineResource({
  group: '', version: 'v1', kind: 'Event', resource: 'events', singular: 'event', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['ev'],
  schemaRef: 'io.orch.api.core.v1.Event',
  // value structs upstream; reportingComponent and reportingInstance have no omitempty.
  zeroValues: { involvedObject: {}, source: {}, reportingComponent: '', reportingInstance: '' },
  strategy: { allowUnconditionalUpdate: true, nameRule: 'subdomain' },
  table: eventColumns(coreEventView),
  fieldSelectors: {
    'involvedObject.kind': (o) => o.involvedObject?.kind ?? '',
    'involvedObject.namespace': (o) => o.involvedObject?.namespace ?? '',
    'involvedObject.name': (o) => o.involvedObject?.name ?? '',
    'involvedObject.uid': (o) => o.involvedObject?.uid ?? '',
    'involvedObject.apiVersion': (o) => o.involvedObject?.apiVersion ?? '',
    'involvedObject.resourceVersion': (o) => o.involvedObject?.resourceVersion ?? '',
    'involvedObject.fieldPath': (o) => o.involvedObject?.fieldPath ?? '',
    reason: (o) => o.reason ?? '',
    reportingComponent: (o) => o.reportingComponent ?? '',
    source: (o) => o.source?.component || o.reportingComponent || '',
    type: (o) => o.type ?? '',
  },
})
