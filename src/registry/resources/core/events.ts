// Event (v1). The same events are also served as events.orch.io/v1 Event.
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj } from '../../define.js'
import { eventColumns } from '../_printers.js'
import type { EventView } from '../_printers.js'
import { fieldInvalid, fieldRequired } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { qualifiedName } from '../../../machinery/validation.js'

const str = (v: unknown): string => (typeof v === 'string' ? v : '')

/** A time that is set: neither missing nor Go's zero time. */
export function isSet(t: unknown): boolean { return typeof t === 'string' && t !== '' && !t.startsWith('0001-01-01T00:00:00') }

/**
 * upstream legacyValidateEvent, all that a v1 (core) Event gets on create and update (the stricter rules apply only to
 * events.orch.io/v1 writes). An event without eventTime is an old-style one: its involved object's namespace must be
 * its own (or, for a cluster-scoped object, the event lives in default). With eventTime it is a new-style one: a
 * cluster-scoped object's event lives in default or orch-system (upstream's kube-system), the reporting controller,
 * instance, action and reason are required, and lengths are capped (in bytes, as Go's len).
 */
export function validateLegacyEvent(o: Obj): FieldError[] {
  const errs: FieldError[] = []
  const ns = str(o.metadata?.namespace)
  const ioNs = str(o.involvedObject?.namespace)
  const mismatch = () => errs.push(fieldInvalid('involvedObject.namespace', ioNs, 'does not match event.namespace'))
  if (!isSet(o.eventTime)) {
    if (ioNs === '' ? ns !== '' && ns !== 'default' : ns !== ioNs) mismatch()
    return errs
  }
  if (ioNs === '' && ns !== 'default' && ns !== 'orch-system') mismatch()
  const controller = str(o.reportingComponent)
  if (controller === '') errs.push(fieldRequired('reportingController'))
  for (const d of qualifiedName(controller)) errs.push(fieldInvalid('reportingController', controller, d))
  const instance = str(o.reportingInstance)
  if (instance === '') errs.push(fieldRequired('reportingInstance'))
  if (Buffer.byteLength(instance) > 128) errs.push(fieldInvalid('reportingInstance', '', 'can have at most 128 characters'))
  const action = str(o.action)
  if (action === '') errs.push(fieldRequired('action'))
  if (Buffer.byteLength(action) > 128) errs.push(fieldInvalid('action', '', 'can have at most 128 characters'))
  const reason = str(o.reason)
  if (reason === '') errs.push(fieldRequired('reason'))
  if (Buffer.byteLength(reason) > 128) errs.push(fieldInvalid('reason', '', 'can have at most 128 characters'))
  if (Buffer.byteLength(str(o.message)) > 1024) errs.push(fieldInvalid('message', '', 'can have at most 1024 characters'))
  return errs
}

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
  strategy: { validate: validateLegacyEvent, allowUnconditionalUpdate: true, nameRule: 'subdomain' },
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
