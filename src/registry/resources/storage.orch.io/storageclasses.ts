// StorageClass (storage.orch.io/v1, cluster-scoped). DELETE answers with the deleted object.
import { isDeepStrictEqual } from 'node:util'
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldForbidden, fieldInvalid, fieldNotSupported, fieldRequired } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { qualifiedName } from '../../../machinery/validation.js'
import { ageColumn, brandedAnnotation, nameColumn } from '../_printers.js'

const MAX_PARAMETERS = 512
const MAX_PARAMETERS_SIZE = 256 * 1024

/** upstream ValidateStorageClass: a qualified provisioner, parameters within bounds, enumerated policy and binding mode. */
function validateStorageClass(o: Obj): FieldError[] {
  const errs: FieldError[] = []
  const provisioner = typeof o.provisioner === 'string' ? o.provisioner : ''
  if (provisioner === '') errs.push(fieldRequired('provisioner'))
  else for (const d of qualifiedName(provisioner.toLowerCase())) errs.push(fieldInvalid('provisioner', provisioner.toLowerCase(), d))
  const params: Obj = o.parameters !== null && typeof o.parameters === 'object' ? o.parameters : {}
  const keys = Object.keys(params)
  if (keys.length > MAX_PARAMETERS) errs.push({ type: 'FieldValueTooLong', field: 'parameters', max: MAX_PARAMETERS })
  else {
    let size = 0
    for (const k of keys) {
      if (k.length < 1) errs.push(fieldInvalid('parameters', k, 'field can not be empty.'))
      size += k.length + String(params[k]).length
    }
    if (size > MAX_PARAMETERS_SIZE) errs.push({ type: 'FieldValueTooLong', field: 'parameters', max: MAX_PARAMETERS_SIZE })
  }
  if (typeof o.reclaimPolicy === 'string' && o.reclaimPolicy !== '' && !['Delete', 'Retain'].includes(o.reclaimPolicy)) {
    errs.push(fieldNotSupported('reclaimPolicy', o.reclaimPolicy, ['Delete', 'Retain']))
  }
  if (o.volumeBindingMode === undefined || o.volumeBindingMode === null) errs.push(fieldRequired('volumeBindingMode'))
  else if (!['Immediate', 'WaitForFirstConsumer'].includes(o.volumeBindingMode)) errs.push(fieldNotSupported('volumeBindingMode', o.volumeBindingMode, ['Immediate', 'WaitForFirstConsumer']))
  return errs
}

/** ValidateStorageClassUpdate: parameters, provisioner, reclaim policy and binding mode are fixed. */
function validateStorageClassUpdate(o: Obj, old: Obj): FieldError[] {
  const errs: FieldError[] = []
  if (!isDeepStrictEqual(o.parameters ?? {}, old.parameters ?? {})) errs.push(fieldForbidden('parameters', 'updates to parameters are forbidden.'))
  if ((o.provisioner ?? '') !== (old.provisioner ?? '')) errs.push(fieldForbidden('provisioner', 'updates to provisioner are forbidden.'))
  if (o.reclaimPolicy !== old.reclaimPolicy) errs.push(fieldForbidden('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'))
  if (o.volumeBindingMode !== old.volumeBindingMode) errs.push(fieldInvalid('volumeBindingMode', o.volumeBindingMode ?? null, 'field is immutable'))
  return [...validateStorageClass(o), ...errs]
}

export default defineResource({
  group: 'storage.orch.io', version: 'v1', kind: 'StorageClass', resource: 'storageclasses', singular: 'storageclass', scope: 'Cluster',
  verbs: ALL_VERBS,
  shortNames: ['sc'],
  schemaRef: 'io.orch.api.storage.v1.StorageClass',
  // provisioner has no omitempty upstream.
  zeroValues: { provisioner: '' },
  strategy: {
    // SetDefaults_StorageClass
    default: (o) => {
      if (o.reclaimPolicy === undefined || o.reclaimPolicy === '') o.reclaimPolicy = 'Delete'
      if (o.volumeBindingMode === undefined || o.volumeBindingMode === '') o.volumeBindingMode = 'Immediate'
    },
    validate: validateStorageClass,
    validateUpdate: validateStorageClassUpdate,
    allowUnconditionalUpdate: true,
    returnDeletedObject: true,
    nameRule: 'subdomain',
  },
  table: [
    {
      // The default class (annotation is-default-class, or its beta form, "true") is marked after its name.
      ...nameColumn(),
      cell: (o) => {
        const isDefault = brandedAnnotation(o, 'storageclass.orch.io/is-default-class') === 'true' ||
          brandedAnnotation(o, 'storageclass.beta.orch.io/is-default-class') === 'true'
        return `${o.metadata?.name ?? ''}${isDefault ? ' (default)' : ''}`
      },
    },
    { name: 'Provisioner', type: 'string', description: 'The volume plugin that provisions the volumes.', cell: (o) => o.provisioner ?? '' },
    { name: 'ReclaimPolicy', type: 'string', description: 'What happens to provisioned volumes when released.', cell: (o) => (typeof o.reclaimPolicy === 'string' ? o.reclaimPolicy : 'Delete') },
    { name: 'VolumeBindingMode', type: 'string', description: 'When volumes are bound and provisioned.', cell: (o) => (typeof o.volumeBindingMode === 'string' ? o.volumeBindingMode : 'Immediate') },
    { name: 'AllowVolumeExpansion', type: 'string', description: 'Whether volumes of the class may be resized.', cell: (o) => o.allowVolumeExpansion === true },
    ageColumn(),
  ],
})
