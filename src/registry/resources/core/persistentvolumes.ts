// PersistentVolume (v1, cluster-scoped). DELETE answers with the deleted object.
import { isDeepStrictEqual } from 'node:util'
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldForbidden, fieldInvalid, fieldNotSupported, fieldRequired, GoValue } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { dns1123Subdomain } from '../../../machinery/validation.js'
import { isPositive } from '../../../machinery/quantity.js'
import { accessModesString, ageColumn, nameColumn, quantityString, volumeStorageClass } from '../_printers.js'

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }
const str = (v: unknown): string => (typeof v === 'string' ? v : '')

export const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod']

/** Each access mode supported, and ReadWriteOncePod alone (upstream ValidatePersistentVolumeSpec/ClaimSpec). */
export function accessModeErrors(modes: unknown[], path: string): FieldError[] {
  const errs: FieldError[] = []
  for (const m of modes) if (!ACCESS_MODES.includes(m as string)) errs.push(fieldNotSupported(path, m, ACCESS_MODES))
  if (modes.includes('ReadWriteOncePod') && modes.length > 1) errs.push(fieldForbidden(path, 'may not use ReadWriteOncePod with other access modes'))
  return errs
}

/** volumeMode and storageClassName, shared by volumes and claims. */
export function volumeModeAndClass(spec: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  if (spec.volumeMode !== undefined && spec.volumeMode !== null && spec.volumeMode !== 'Block' && spec.volumeMode !== 'Filesystem') {
    errs.push(fieldNotSupported(`${path}.volumeMode`, spec.volumeMode, ['Block', 'Filesystem']))
  }
  const sc = str(spec.storageClassName)
  if (sc !== '') for (const d of dns1123Subdomain(sc)) errs.push(fieldInvalid(`${path}.storageClassName`, sc, d))
  return errs
}

/** The volume sources of a PersistentVolume in the order upstream's validation meets them. */
const PV_SOURCES = [
  'hostPath', 'gcePersistentDisk', 'awsElasticBlockStore', 'glusterfs', 'flocker', 'nfs', 'rbd', 'quobyte', 'cephfs', 'iscsi',
  'cinder', 'fc', 'flexVolume', 'azureFile', 'vsphereVolume', 'photonPersistentDisk', 'portworxVolume', 'azureDisk', 'scaleIO',
  'local', 'storageos', 'csi',
]

/** The required fields of the common sources (hostPath, local, nfs, csi). */
function sourceErrors(key: string, src: Obj, path: string): FieldError[] {
  const errs: FieldError[] = []
  const need = (f: string) => { if (str(src[f]) === '') errs.push(fieldRequired(`${path}.${f}`)) }
  switch (key) {
    case 'hostPath': need('path'); break
    case 'local': need('path'); break
    case 'nfs':
      need('server'); need('path')
      if (str(src.path) !== '' && !src.path.startsWith('/')) errs.push(fieldInvalid(`${path}.path`, src.path, 'must be an absolute path'))
      break
    case 'csi': need('driver'); need('volumeHandle'); break
  }
  return errs
}

/** upstream ValidatePersistentVolumeSpec (the parts every volume meets). */
function validatePV(o: Obj): FieldError[] {
  const errs: FieldError[] = []
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  const modes: unknown[] = Array.isArray(spec.accessModes) ? spec.accessModes : []
  if (modes.length === 0) errs.push(fieldRequired('spec.accessModes'))
  errs.push(...accessModeErrors(modes, 'spec.accessModes'))
  const cap: Obj = isObj(spec.capacity) ? spec.capacity : {}
  const keys = Object.keys(cap)
  if (keys.length === 0) errs.push(fieldRequired('spec.capacity'))
  if (!keys.includes('storage') || keys.length > 1) {
    const printed = keys.length === 0 ? 'core.ResourceList(nil)' : `core.ResourceList{${keys.map((k) => `"${k}":${JSON.stringify(cap[k])}`).join(', ')}}`
    errs.push({ type: 'FieldValueNotSupported', field: 'spec.capacity', value: new GoValue(printed), supported: ['storage'] })
  }
  for (const k of keys) {
    if (!((typeof cap[k] === 'string' || typeof cap[k] === 'number') && isPositive(cap[k]))) errs.push(fieldInvalid(`spec.capacity[${k}]`, String(cap[k]), 'must be greater than zero'))
  }
  const policy = spec.persistentVolumeReclaimPolicy
  if (typeof policy === 'string' && policy !== '' && !['Delete', 'Recycle', 'Retain'].includes(policy)) {
    errs.push(fieldNotSupported('spec.persistentVolumeReclaimPolicy', policy, ['Delete', 'Recycle', 'Retain']))
  }
  let n = 0
  for (const key of PV_SOURCES) {
    if (spec[key] === undefined || spec[key] === null) continue
    if (n > 0) errs.push(fieldForbidden(`spec.${key}`, 'may not specify more than 1 volume type'))
    else errs.push(...sourceErrors(key, isObj(spec[key]) ? spec[key] : {}, `spec.${key}`))
    n++
  }
  if (n === 0) errs.push(fieldRequired('spec', 'must specify a volume type'))
  errs.push(...volumeModeAndClass(spec, 'spec'))
  return errs
}

/** ValidatePersistentVolumeUpdate: the volume mode may not change (upstream reports it at `volumeMode`). */
function validatePVUpdate(o: Obj, old: Obj): FieldError[] {
  const errs = validatePV(o)
  const mode = o.spec?.volumeMode
  if (!isDeepStrictEqual(mode, old.spec?.volumeMode)) errs.push(fieldInvalid('volumeMode', mode ?? null, 'field is immutable'))
  return errs
}

export default defineResource({
  group: '', version: 'v1', kind: 'PersistentVolume', resource: 'persistentvolumes', singular: 'persistentvolume', scope: 'Cluster',
  verbs: ALL_VERBS,
  shortNames: ['pv'],
  subresources: ['status'],
  schemaRef: 'io.orch.api.core.v1.PersistentVolume',
  // spec and status are value structs upstream.
  zeroValues: { spec: {}, status: {} },
  strategy: {
    ...statusSplit.strategy,
    default: (o) => {
      if (o.spec === null || typeof o.spec !== 'object') return
      o.spec.persistentVolumeReclaimPolicy ??= 'Retain'
      o.spec.volumeMode ??= 'Filesystem'
    },
    prepareForCreate: (o) => { o.status = { phase: 'Pending' } },
    validate: validatePV,
    validateUpdate: validatePVUpdate,
    allowUnconditionalUpdate: true,
    returnDeletedObject: true,
    nameRule: 'subdomain',
  },
  status: statusSplit.status,
  table: [
    nameColumn(),
    { name: 'Capacity', type: 'string', description: 'The storage size of the volume.', cell: (o) => quantityString(o.spec?.capacity?.storage) },
    { name: 'Access Modes', type: 'string', description: 'How the volume may be mounted (RWO, ROX, RWX, RWOP).', cell: (o) => accessModesString(o.spec?.accessModes) },
    { name: 'Reclaim Policy', type: 'string', description: 'What happens to the volume when its claim is released.', cell: (o) => o.spec?.persistentVolumeReclaimPolicy ?? '' },
    { name: 'Status', type: 'string', description: 'The phase of the volume (Terminating while it is being deleted).', cell: (o) => (o.metadata?.deletionTimestamp != null ? 'Terminating' : o.status?.phase ?? '') },
    {
      name: 'Claim', type: 'string', description: 'The claim bound to the volume (namespace/name).',
      cell: (o) => (o.spec?.claimRef != null ? `${o.spec.claimRef.namespace ?? ''}/${o.spec.claimRef.name ?? ''}` : ''),
    },
    { name: 'StorageClass', type: 'string', description: 'The storage class of the volume.', cell: (o) => volumeStorageClass(o) },
    { name: 'VolumeAttributesClass', type: 'string', description: 'The VolumeAttributesClass of the volume.', cell: (o) => (typeof o.spec?.volumeAttributesClassName === 'string' ? o.spec.volumeAttributesClassName : '<unset>') },
    { name: 'Reason', type: 'string', description: 'Why the volume is in its phase, if told.', cell: (o) => o.status?.reason ?? '' },
    ageColumn(),
    { name: 'VolumeMode', type: 'string', priority: 1, description: 'Filesystem or Block.', cell: (o) => (typeof o.spec?.volumeMode === 'string' ? o.spec.volumeMode : '<unset>') },
  ],
})
