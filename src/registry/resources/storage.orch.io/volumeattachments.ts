// VolumeAttachment (storage.orch.io/v1, cluster-scoped). DELETE answers with the deleted object.
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'
import { isDeepStrictEqual } from 'node:util'
import { ageColumn, nameColumn } from '../_printers.js'
import { fieldForbidden, fieldInvalid, fieldRequired, fieldTooLong } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { csiDriverNameErrors, dns1123Subdomain } from '../../../machinery/validation.js'

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)
const str = (v: unknown): string => (typeof v === 'string' ? v : '')
const EXACTLY_ONE = 'must specify exactly one of inlineVolumeSpec and persistentVolumeName'
const MAX_METADATA = 256 * 1024
const MAX_ERROR_MESSAGE = 1024

function volumeErrorErrors(e: unknown, f: string): FieldError[] {
  if (!isObj(e)) return []
  const errs: FieldError[] = []
  // Upstream names the metadata limit (256 KiB) in this message, not the 1024 it checks.
  if (Buffer.byteLength(str(e.message)) > MAX_ERROR_MESSAGE) errs.push(fieldTooLong(`${f}.message`, MAX_METADATA))
  if (typeof e.errorCode === 'number' && e.errorCode < 0) errs.push(fieldInvalid(`${f}.errorCode`, e.errorCode, 'must be between 0 and 2147483647, inclusive'))
  return errs
}

/** upstream ValidateVolumeAttachment: attacher, exactly one source, node name; status metadata size and error fields. */
function validateVolumeAttachment(o: Obj): FieldError[] {
  const errs: FieldError[] = []
  const spec = isObj(o.spec) ? o.spec : {}
  if (str(spec.attacher) === '') errs.push(fieldRequired('spec.attacher'))
  const src = isObj(spec.source) ? spec.source : {}
  const hasPV = src.persistentVolumeName !== undefined && src.persistentVolumeName !== null
  const hasInline = isObj(src.inlineVolumeSpec)
  if (!hasPV && !hasInline) errs.push(fieldRequired('spec.source', EXACTLY_ONE))
  else if (hasPV && hasInline) errs.push(fieldForbidden('spec.source', EXACTLY_ONE))
  else if (hasPV && str(src.persistentVolumeName) === '') errs.push(fieldRequired('spec.source.persistentVolumeName', 'must specify non empty persistentVolumeName'))
  const nodeName = str(spec.nodeName)
  for (const d of dns1123Subdomain(nodeName)) errs.push(fieldInvalid('spec.nodeName', nodeName, d))
  const st = isObj(o.status) ? o.status : {}
  if (isObj(st.attachmentMetadata)) {
    let size = 0
    for (const [k, v] of Object.entries(st.attachmentMetadata)) size += Buffer.byteLength(k) + Buffer.byteLength(str(v))
    if (size > MAX_METADATA) errs.push(fieldTooLong('status.attachmentMetadata', MAX_METADATA))
  }
  errs.push(...volumeErrorErrors(st.attachError, 'status.attachError'), ...volumeErrorErrors(st.detachError, 'status.detachError'))
  return errs
}

/** upstream ValidateVolumeAttachmentV1, for creates: the attacher is a CSI driver name, the volume name a subdomain. */
function validateVolumeAttachmentV1(o: Obj): FieldError[] {
  const errs = csiDriverNameErrors('spec.attacher', str(o.spec?.attacher))
  const pv = o.spec?.source?.persistentVolumeName
  if (typeof pv === 'string') for (const d of dns1123Subdomain(pv)) errs.push(fieldInvalid('spec.source.persistentVolumeName', pv, d))
  return errs
}

/** Spec is read-only. Upstream's update check repeats the object's own checks, so their problems are reported twice. */
function validateVolumeAttachmentUpdate(o: Obj, old: Obj): FieldError[] {
  const errs = [...validateVolumeAttachment(o), ...validateVolumeAttachment(o)]
  if (!isDeepStrictEqual(o.spec, old.spec)) errs.push(fieldInvalid('spec', o.spec ?? null, 'field is immutable'))
  return errs
}

export default defineResource({
  group: 'storage.orch.io', version: 'v1', kind: 'VolumeAttachment', resource: 'volumeattachments', singular: 'volumeattachment', scope: 'Cluster',
  verbs: ALL_VERBS,
  subresources: ['status'],
  schemaRef: 'io.orch.api.storage.v1.VolumeAttachment',
  // value structs upstream; attacher, nodeName and status.attached have no omitempty.
  zeroValues: { spec: { attacher: '', source: {}, nodeName: '' }, status: { attached: false } },
  strategy: {
    ...statusSplit.strategy, allowUnconditionalUpdate: true, returnDeletedObject: true, nameRule: 'subdomain',
    validate: (o) => [...validateVolumeAttachment(o), ...validateVolumeAttachmentV1(o)],
    validateUpdate: validateVolumeAttachmentUpdate,
  },
  status: { ...statusSplit.status, validateUpdate: validateVolumeAttachmentUpdate },
  table: [
    nameColumn(),
    // Upstream gives this column the name format too.
    { name: 'Attacher', type: 'string', format: 'name', description: 'The volume driver that attaches the volume.', cell: (o) => o.spec?.attacher ?? '' },
    { name: 'PV', type: 'string', description: 'The persistent volume to attach.', cell: (o) => o.spec?.source?.persistentVolumeName ?? '' },
    { name: 'Node', type: 'string', description: 'The node to attach the volume to.', cell: (o) => o.spec?.nodeName ?? '' },
    { name: 'Attached', type: 'boolean', description: 'Whether the volume is attached.', cell: (o) => o.status?.attached === true },
    ageColumn(),
  ],
})
