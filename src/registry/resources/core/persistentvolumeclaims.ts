// PersistentVolumeClaim (v1). DELETE answers with the deleted object.
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'
import { isDeepStrictEqual } from 'node:util'
import { fieldForbidden, fieldInvalid, fieldRequired } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { accessModeErrors, volumeModeAndClass } from './persistentvolumes.js'
import { parseQuantity } from './pod-qos.js'
import { accessModesString, ageColumn, nameColumn, quantityString, volumeStorageClass } from '../_printers.js'

/** Capacity and access modes are shown once the claim names its volume. */
function bound(o: Obj): boolean { return typeof o.spec?.volumeName === 'string' && o.spec.volumeName !== '' }

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** upstream ValidatePersistentVolumeClaimSpec: access modes, a positive storage request, volume mode and class. */
function validatePVC(o: Obj): FieldError[] {
  const errs: FieldError[] = []
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  const modes: unknown[] = Array.isArray(spec.accessModes) ? spec.accessModes : []
  if (modes.length === 0) errs.push(fieldRequired('spec.accessModes', 'at least 1 access mode is required'))
  errs.push(...accessModeErrors(modes, 'spec.accessModes'))
  errs.push(...volumeModeAndClass(spec, 'spec'))
  const requests: Obj = isObj(spec.resources) && isObj(spec.resources.requests) ? spec.resources.requests : {}
  const storage = requests.storage
  if (storage === undefined) errs.push(fieldRequired('spec.resources[storage]'))
  else if (!(parseQuantity(storage) > 0)) errs.push(fieldInvalid('spec.resources[storage]', String(storage), 'must be greater than zero'))
  return errs
}

/** The storage request of a claim, as a number (0 when absent). */
const requested = (o: Obj): number => { const q = parseQuantity(o.spec?.resources?.requests?.storage); return Number.isNaN(q) ? 0 : q }

/**
 * ValidatePersistentVolumeClaimUpdate: the spec is fixed at creation except volumeName (once), the storage request
 * of a bound claim (never below status.capacity) and volumeAttributesClassName; the volume mode never changes.
 */
function validatePVCUpdate(o: Obj, old: Obj): FieldError[] {
  const errs = validatePVC(o)
  const spec: Obj = isObj(o.spec) ? structuredClone(o.spec) : {}
  const oldSpec: Obj = isObj(old.spec) ? structuredClone(old.spec) : {}
  if (typeof oldSpec.volumeName !== 'string' || oldSpec.volumeName === '') {
    if (spec.volumeName === undefined) delete oldSpec.volumeName
    else oldSpec.volumeName = spec.volumeName
  }
  delete spec.volumeAttributesClassName
  delete oldSpec.volumeAttributesClassName
  const bound = o.status?.phase === 'Bound'
  if (bound && isObj(spec.resources) && isObj(spec.resources.requests)) {
    if (oldSpec.resources?.requests?.storage === undefined) delete spec.resources.requests.storage
    else spec.resources.requests.storage = oldSpec.resources.requests.storage
  }
  if (!isDeepStrictEqual(spec, oldSpec)) {
    errs.push(fieldForbidden('spec', 'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims'))
  }
  const capacity = parseQuantity(old.status?.capacity?.storage)
  const statusSize = Number.isNaN(capacity) ? 0 : capacity
  // Shrinking is allowed down to just above status.capacity (RecoverVolumeExpansionFailure, GA).
  if (requested(o) < requested(old) && requested(o) <= statusSize) {
    errs.push(fieldForbidden('spec.resources.requests.storage', 'field can not be less than status.capacity'))
  }
  if (!isDeepStrictEqual(o.spec?.volumeMode, old.spec?.volumeMode)) errs.push(fieldInvalid('volumeMode', o.spec?.volumeMode ?? null, 'field is immutable'))
  return errs
}

export default defineResource({
  group: '', version: 'v1', kind: 'PersistentVolumeClaim', resource: 'persistentvolumeclaims', singular: 'persistentvolumeclaim', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['pvc'],
  subresources: ['status'],
  schemaRef: 'io.orch.api.core.v1.PersistentVolumeClaim',
  // value structs upstream.
  zeroValues: { spec: { resources: {} }, status: {} },
  strategy: {
    ...statusSplit.strategy,
    default: (o) => { if (o.spec !== null && typeof o.spec === 'object') o.spec.volumeMode ??= 'Filesystem' },
    prepareForCreate: (o) => { o.status = { phase: 'Pending' } },
    validate: validatePVC,
    validateUpdate: validatePVCUpdate,
    allowUnconditionalUpdate: true,
    returnDeletedObject: true,
    nameRule: 'subdomain',
  },
  status: statusSplit.status,
  table: [
    nameColumn(),
    { name: 'Status', type: 'string', description: 'The phase of the claim (Terminating while it is being deleted).', cell: (o) => (o.metadata?.deletionTimestamp != null ? 'Terminating' : o.status?.phase ?? '') },
    { name: 'Volume', type: 'string', description: 'The volume the claim is bound to.', cell: (o) => o.spec?.volumeName ?? '' },
    { name: 'Capacity', type: 'string', description: 'The storage size of the bound volume.', cell: (o) => (bound(o) ? quantityString(o.status?.capacity?.storage) : '') },
    { name: 'Access Modes', type: 'string', description: 'How the bound volume may be mounted (RWO, ROX, RWX, RWOP).', cell: (o) => (bound(o) ? accessModesString(o.status?.accessModes) : '') },
    { name: 'StorageClass', type: 'string', description: 'The storage class the claim asks for.', cell: (o) => volumeStorageClass(o) },
    { name: 'VolumeAttributesClass', type: 'string', description: 'The VolumeAttributesClass of the claim.', cell: (o) => (typeof o.spec?.volumeAttributesClassName === 'string' ? o.spec.volumeAttributesClassName : '<unset>') },
    ageColumn(),
    { name: 'VolumeMode', type: 'string', priority: 1, description: 'Filesystem or Block.', cell: (o) => (typeof o.spec?.volumeMode === 'string' ? o.spec.volumeMode : '<unset>') },
  ],
})
