// CSINode (storage.orch.io/v1, cluster-scoped): upstream's validation of the registered drivers, printers. DELETE
// answers with the deleted object.
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldDuplicate, fieldInvalid, fieldRequired, goQuote, goStringSliceOrNil, GoValue } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { csiDriverNameErrors, qualifiedName } from '../../../machinery/validation.js'
import { ageColumn, nameColumn } from '../_printers.js'

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)
const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])
const str = (v: unknown): string => (typeof v === 'string' ? v : '')
/** Upstream's strategy allows the longer node IDs on create and update alike. */
const MAX_NODE_ID = 256

/**
 * upstream validateCSINodeDriver: a CSI driver name not seen before in the list, a node ID of at most 256 bytes, a
 * count that is not negative, and topology keys that are unique qualified names (reported at the driver's path).
 */
function driverErrors(d: Obj, seen: Set<string>, p: string): FieldError[] {
  const name = str(d.name)
  const errs = csiDriverNameErrors(`${p}.name`, name)
  const nodeID = str(d.nodeID)
  if (nodeID === '') errs.push(fieldRequired(`${p}.nodeID`))
  if (Buffer.byteLength(nodeID) > MAX_NODE_ID) errs.push(fieldInvalid(`${p}.nodeID`, nodeID, `must be ${MAX_NODE_ID} characters or less`))
  const count = isObj(d.allocatable) ? d.allocatable.count : undefined
  if (typeof count === 'number' && count < 0) errs.push(fieldInvalid(`${p}.allocatable.count`, count, 'must be greater than or equal to 0'))
  if (seen.has(name)) errs.push(fieldDuplicate(`${p}.name`, name))
  seen.add(name)
  const keys = new Set<string>()
  for (const k of listOf(d.topologyKeys)) {
    const key = str(k)
    if (key === '') errs.push(fieldRequired(p))
    if (keys.has(key)) errs.push(fieldDuplicate(p, key))
    keys.add(key)
    for (const msg of qualifiedName(key)) errs.push(fieldInvalid(p, key, msg))
  }
  return errs
}

function driversOf(o: Obj): Obj[] { return listOf(isObj(o.spec) ? o.spec.drivers : undefined).map((d) => (isObj(d) ? d : {})) }

function validateCSINode(o: Obj): FieldError[] {
  const seen = new Set<string>()
  return driversOf(o).flatMap((d, i) => driverErrors(d, seen, `spec.drivers[${i}]`))
}

/** Go's %#v of a driver without its allocatable count, which is what upstream compares and shows. */
function driverValue(d: Obj): GoValue {
  const keys = goStringSliceOrNil('string', d.topologyKeys).text
  return new GoValue(`storage.CSINodeDriver{Name:${goQuote(str(d.name))}, NodeID:${goQuote(str(d.nodeID))}, TopologyKeys:${keys}, Allocatable:(*storage.VolumeNodeResources)(nil)}`)
}

function sameDriver(a: Obj, b: Obj): boolean {
  const ka = listOf(a.topologyKeys)
  const kb = listOf(b.topologyKeys)
  return str(a.name) === str(b.name) && str(a.nodeID) === str(b.nodeID) && ka.length === kb.length && ka.every((k, i) => k === kb[i])
}

/**
 * ValidateCSINodeUpdate: the object again; a driver that stays registered (same name) keeps its node ID and topology
 * keys. Its allocatable count may change (MutableCSINodeAllocatableCount, on by default in release 1.35).
 */
function validateCSINodeUpdate(o: Obj, old: Obj): FieldError[] {
  const errs = validateCSINode(o)
  const drivers = driversOf(o)
  for (const before of driversOf(old)) {
    for (const d of drivers) if (str(d.name) === str(before.name) && !sameDriver(d, before)) errs.push(fieldInvalid('spec.drivers', driverValue(d), 'field is immutable'))
  }
  return errs
}

export default defineResource({
  group: 'storage.orch.io', version: 'v1', kind: 'CSINode', resource: 'csinodes', singular: 'csinode', scope: 'Cluster',
  verbs: ALL_VERBS,
  schemaRef: 'io.orch.api.storage.v1.CSINode',
  // spec is a value struct upstream.
  zeroValues: { spec: {} },
  strategy: {
    validate: validateCSINode,
    validateUpdate: validateCSINodeUpdate,
    allowUnconditionalUpdate: true,
    returnDeletedObject: true,
    nameRule: 'subdomain',
  },
  table: [
    nameColumn(),
    { name: 'Drivers', type: 'integer', description: 'How many CSI drivers are registered on the node.', cell: (o) => (Array.isArray(o.spec?.drivers) ? o.spec.drivers.length : 0) },
    ageColumn(),
  ],
})
