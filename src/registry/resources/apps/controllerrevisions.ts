// ControllerRevision (apps/v1).
import { isDeepStrictEqual } from 'node:util'
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldInvalid, fieldInvalidPrinted, fieldRequired, goByteSlice } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { ageColumn, int, nameColumn } from '../_printers.js'

/** upstream ValidateControllerRevision: data present (a JSON null is none), revision not negative. */
function validateRevision(o: Obj): FieldError[] {
  const errs: FieldError[] = []
  if (o.data === undefined || o.data === null) errs.push(fieldRequired('data', 'data is mandatory'))
  if (typeof o.revision === 'number' && o.revision < 0) errs.push(fieldInvalid('revision', o.revision, 'must be greater than or equal to 0'))
  return errs
}

/**
 * How upstream prints a changed data in its "field is immutable" error: the decoded runtime.Unknown holding the JSON
 * bytes, by Go's %#v; null when the update has none.
 */
function printedData(data: unknown): string {
  if (data === undefined || data === null) return 'null'
  const raw = goByteSlice(Buffer.from(JSON.stringify(data)), 'uint8').text
  return `runtime.Unknown{TypeMeta:runtime.TypeMeta{APIVersion:"", Kind:""}, Raw:${raw}, ContentEncoding:"", ContentType:"application/json"}`
}

/** upstream ValidateControllerRevisionUpdate: the checks of a new revision, and data never changes (compared as JSON values). */
function validateRevisionUpdate(o: Obj, old: Obj): FieldError[] {
  const errs = validateRevision(o)
  if (!isDeepStrictEqual(o.data ?? null, old.data ?? null)) errs.push(fieldInvalidPrinted('data', printedData(o.data), 'field is immutable'))
  return errs
}

/** The controlling owner as `kind.group/name` in lower case (`kind/name` for the core group); `<none>` without one. */
function controller(o: Obj): string {
  const refs: Obj[] = Array.isArray(o.metadata?.ownerReferences) ? o.metadata.ownerReferences : []
  const ref = refs.find((r) => r?.controller === true)
  if (!ref) return '<none>'
  const apiVersion = typeof ref.apiVersion === 'string' ? ref.apiVersion : ''
  const slash = apiVersion.indexOf('/')
  const group = slash < 0 ? '' : apiVersion.slice(0, slash)
  const kind = typeof ref.kind === 'string' ? ref.kind : ''
  const name = ref.name ?? ''
  if (group === '' && kind === '') return name
  return `${(group === '' ? kind : `${kind}.${group}`).toLowerCase()}/${name}`
}

export default defineResource({
  group: 'apps', version: 'v1', kind: 'ControllerRevision', resource: 'controllerrevisions', singular: 'controllerrevision', scope: 'Namespaced',
  verbs: ALL_VERBS,
  schemaRef: 'io.orch.api.apps.v1.ControllerRevision',
  // revision has no omitempty upstream.
  zeroValues: { revision: 0 },
  strategy: { validate: validateRevision, validateUpdate: validateRevisionUpdate, allowUnconditionalUpdate: true, nameRule: 'subdomain' },
  table: [
    nameColumn(),
    { name: 'Controller', type: 'string', description: 'The object that controls this revision.', cell: (o) => controller(o) },
    { name: 'Revision', type: 'string', description: 'The revision number of the state it holds.', cell: (o) => int(o.revision) },
    ageColumn(),
  ],
})
