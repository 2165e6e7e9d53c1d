// ControllerRevision (apps/v1).
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj } from '../../define.js'
import { ageColumn, int, nameColumn } from '../_printers.js'

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
  strategy: { allowUnconditionalUpdate: true, nameRule: 'subdomain' },
  table: [
    nameColumn(),
    { name: 'Controller', type: 'string', description: 'The object that controls this revision.', cell: (o) => controller(o) },
    { name: 'Revision', type: 'string', description: 'The revision number of the state it holds.', cell: (o) => int(o.revision) },
    ageColumn(),
  ],
})
