// RuntimeClass (node.orch.io/v1, cluster-scoped).
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj } from '../../define.js'
import { ageColumn, nameColumn } from '../_printers.js'
import { fieldDuplicate, fieldForbidden, fieldInvalid, GoValue } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { dns1123Label, validateLabels } from '../../../machinery/validation.js'
import { isHugePages, resourceEntries, validateContainerResourceName, validateResourceQuantityValue } from '../core/resource-names.js'
import { printedToleration, validateTolerations } from '../core/taints.js'

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)
const str = (v: unknown): string => (typeof v === 'string' ? v : '')

/** overhead.podFixed, checked as a container's limits (upstream reuses ValidateContainerResourceRequirements). */
function overheadErrors(podFixed: unknown): FieldError[] {
  const errs: FieldError[] = []
  let cpuOrMemory = false
  let hugePages = false
  for (const [name, q] of resourceEntries(podFixed)) {
    const f = `overhead.limits[${name}]`
    errs.push(...validateContainerResourceName(name, f), ...validateResourceQuantityValue(name, q, f))
    if (name === 'cpu' || name === 'memory') cpuOrMemory = true
    if (isHugePages(name)) hugePages = true
  }
  if (hugePages && !cpuOrMemory) errs.push(fieldForbidden('overhead', 'HugePages require cpu or memory'))
  return errs
}

/** upstream ValidateRuntimeClass: a DNS-label handler, the overhead, and the scheduling node selector and tolerations. */
function validateRuntimeClass(o: Obj): FieldError[] {
  const handler = str(o.handler)
  const errs = dns1123Label(handler).map((d) => fieldInvalid('handler', handler, d))
  if (isObj(o.overhead)) errs.push(...overheadErrors(o.overhead.podFixed))
  if (isObj(o.scheduling)) {
    const sc = o.scheduling
    if (sc.nodeSelector !== undefined && sc.nodeSelector !== null) errs.push(...validateLabels(sc.nodeSelector, 'scheduling.nodeSelector'))
    errs.push(...validateTolerations(sc.tolerations, 'scheduling.tolerations'))
    // Unique by key, operator, value and effect (the list's keys); the duplicate is shown whole.
    const seen = new Set<string>()
    ;(Array.isArray(sc.tolerations) ? sc.tolerations : []).forEach((x: unknown, i: number) => {
      const t = isObj(x) ? x : {}
      const id = [t.key, t.operator, t.value, t.effect].map(str).join('\u0000')
      if (seen.has(id)) errs.push(fieldDuplicate(`scheduling.tolerations[${i}]`, new GoValue(printedToleration(t))))
      else seen.add(id)
    })
  }
  return errs
}

function validateRuntimeClassUpdate(o: Obj, old: Obj): FieldError[] {
  const errs = validateRuntimeClass(o)
  if (str(o.handler) !== str(old.handler)) errs.push(fieldInvalid('handler', str(o.handler), 'field is immutable'))
  return errs
}

export default defineResource({
  group: 'node.orch.io', version: 'v1', kind: 'RuntimeClass', resource: 'runtimeclasses', singular: 'runtimeclass', scope: 'Cluster',
  verbs: ALL_VERBS,
  schemaRef: 'io.orch.api.node.v1.RuntimeClass',
  // handler has no omitempty upstream.
  zeroValues: { handler: '' },
  strategy: { validate: validateRuntimeClass, validateUpdate: validateRuntimeClassUpdate, allowUnconditionalUpdate: true, nameRule: 'subdomain' },
  table: [
    nameColumn(),
    { name: 'Handler', type: 'string', description: 'The container runtime configuration that runs the pods.', cell: (o) => o.handler ?? '' },
    ageColumn(),
  ],
})
