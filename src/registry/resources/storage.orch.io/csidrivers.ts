// CSIDriver (storage.orch.io/v1, cluster-scoped): defaults, upstream's validation, printers. DELETE answers with the
// deleted object.
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldDuplicate, fieldInvalid, fieldNotSupported, fieldRequired, goStringSliceOrNil } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { ageColumn, nameColumn } from '../_printers.js'

function flag(o: Obj, key: string, unset: boolean): boolean { const v = o.spec?.[key]; return typeof v === 'boolean' ? v : unset }

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)
const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])
const unset = (v: unknown): boolean => v === undefined || v === null
const FS_GROUP_POLICIES = ['File', 'None', 'ReadWriteOnceWithFSType']
/** In upstream's order, not sorted. */
const LIFECYCLE_MODES = ['Persistent', 'Ephemeral']
const MIN_TOKEN_SECONDS = 10 * 60
const MAX_TOKEN_SECONDS = 2 ** 32

/**
 * upstream validateCSIDriverSpec with release 1.35's default gates (SELinuxMountReadWriteOncePod on): the flags the
 * defaults fill are required, known fsGroupPolicy and lifecycle modes, token requests with distinct audiences and a
 * sane expiry, a refresh period of 10 s or more, and serviceAccountTokenInSecrets only with token requests.
 */
function validateSpec(spec: Obj): FieldError[] {
  const errs: FieldError[] = []
  // Upstream's path says attachedRequired.
  if (unset(spec.attachRequired)) errs.push(fieldRequired('spec.attachedRequired'))
  if (unset(spec.podInfoOnMount)) errs.push(fieldRequired('spec.podInfoOnMount'))
  if (unset(spec.storageCapacity)) errs.push(fieldRequired('spec.storageCapacity'))
  if (!unset(spec.fsGroupPolicy) && !FS_GROUP_POLICIES.includes(spec.fsGroupPolicy)) errs.push(fieldNotSupported('spec.fsGroupPolicy', spec.fsGroupPolicy, FS_GROUP_POLICIES))
  const audiences = new Set<string>()
  const tokenRequests = listOf(spec.tokenRequests)
  tokenRequests.forEach((x, i) => {
    const tr = isObj(x) ? x : {}
    const p = `spec.tokenRequests[${i}]`
    const audience = typeof tr.audience === 'string' ? tr.audience : ''
    if (audiences.has(audience)) { errs.push(fieldDuplicate(`${p}.audience`, audience)); return }
    audiences.add(audience)
    const secs = tr.expirationSeconds
    if (typeof secs !== 'number') return
    if (secs < MIN_TOKEN_SECONDS) errs.push(fieldInvalid(`${p}.expirationSeconds`, secs, 'may not specify a duration less than 10 minutes'))
    if (secs > MAX_TOKEN_SECONDS) errs.push(fieldInvalid(`${p}.expirationSeconds`, secs, 'may not specify a duration larger than 2^32 seconds'))
  })
  for (const mode of listOf(spec.volumeLifecycleModes)) {
    if (!LIFECYCLE_MODES.includes(mode as string)) errs.push(fieldNotSupported('spec.volumeLifecycleModes', mode, LIFECYCLE_MODES))
  }
  if (unset(spec.seLinuxMount)) errs.push(fieldRequired('spec.seLinuxMount'))
  const period = spec.nodeAllocatableUpdatePeriodSeconds
  if (typeof period === 'number' && period < 10) errs.push(fieldInvalid('spec.nodeAllocatableUpdatePeriodSeconds', period, 'must be greater than or equal to 10 seconds'))
  if (!unset(spec.serviceAccountTokenInSecrets) && tokenRequests.length === 0) {
    errs.push(fieldInvalid('spec.serviceAccountTokenInSecrets', spec.serviceAccountTokenInSecrets, 'serviceAccountTokenInSecrets is set but no tokenRequests are specified'))
  }
  return errs
}

const specOf = (o: Obj): Obj => (isObj(o.spec) ? o.spec : {})

/** ValidateCSIDriverUpdate: the spec again; attachRequired and volumeLifecycleModes are immutable (the rest changes since 1.29). */
function validateUpdate(o: Obj, old: Obj): FieldError[] {
  const spec = specOf(o)
  const prev = specOf(old)
  const errs = validateSpec(spec)
  if ((spec.attachRequired ?? null) !== (prev.attachRequired ?? null)) errs.push(fieldInvalid('spec.attachedRequired', spec.attachRequired ?? null, 'field is immutable'))
  const modes = listOf(spec.volumeLifecycleModes)
  const oldModes = listOf(prev.volumeLifecycleModes)
  if (modes.length !== oldModes.length || modes.some((m, i) => m !== oldModes[i])) errs.push(fieldInvalid('spec.volumeLifecycleModes', goStringSliceOrNil('storage.VolumeLifecycleMode', spec.volumeLifecycleModes), 'field is immutable'))
  return errs
}

export default defineResource({
  group: 'storage.orch.io', version: 'v1', kind: 'CSIDriver', resource: 'csidrivers', singular: 'csidriver', scope: 'Cluster',
  verbs: ALL_VERBS,
  schemaRef: 'io.orch.api.storage.v1.CSIDriver',
  // spec is a value struct upstream.
  zeroValues: { spec: {} },
  strategy: {
    // SetDefaults_CSIDriver
    default: (o) => {
      const s = o.spec
      if (s === null || typeof s !== 'object') return
      s.attachRequired ??= true
      s.podInfoOnMount ??= false
      s.storageCapacity ??= false
      s.fsGroupPolicy ??= 'ReadWriteOnceWithFSType'
      if (!Array.isArray(s.volumeLifecycleModes) || s.volumeLifecycleModes.length === 0) s.volumeLifecycleModes = ['Persistent']
      s.requiresRepublish ??= false
      s.seLinuxMount ??= false
    },
    validate: (o) => validateSpec(specOf(o)),
    validateUpdate,
    allowUnconditionalUpdate: true,
    returnDeletedObject: true,
    nameRule: 'subdomain',
  },
  table: [
    nameColumn(),
    { name: 'AttachRequired', type: 'boolean', description: 'Whether volumes need an attach step.', cell: (o) => flag(o, 'attachRequired', true) },
    { name: 'PodInfoOnMount', type: 'boolean', description: 'Whether the driver gets pod information on mount.', cell: (o) => flag(o, 'podInfoOnMount', false) },
    { name: 'StorageCapacity', type: 'boolean', description: 'Whether the scheduler considers the storage capacity the driver reports.', cell: (o) => flag(o, 'storageCapacity', false) },
    {
      name: 'TokenRequests', type: 'string', description: 'Audiences of the service account tokens passed to the driver.',
      cell: (o) => (Array.isArray(o.spec?.tokenRequests) && o.spec.tokenRequests.length > 0 ? o.spec.tokenRequests.map((t: Obj) => t?.audience ?? '').join(',') : '<unset>'),
    },
    { name: 'RequiresRepublish', type: 'boolean', description: 'Whether the driver wants volumes mounted again periodically.', cell: (o) => flag(o, 'requiresRepublish', false) },
    {
      name: 'Modes', type: 'string', description: 'The volume lifecycle modes the driver supports.',
      cell: (o) => (Array.isArray(o.spec?.volumeLifecycleModes) && o.spec.volumeLifecycleModes.length > 0 ? o.spec.volumeLifecycleModes.join(',') : '<none>'),
    },
    ageColumn(),
  ],
})
