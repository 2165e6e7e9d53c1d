// StorageObjectInUseProtection (claims and volumes are created with their protection finalizers) and
// PersistentVolumeClaimResize (a claim grows only when its class allows volume expansion).
import { forbidden, type ApiError } from '../machinery/errors.js'
import type { Obj } from '../registry/define.js'
import { volumeStorageClass } from '../registry/resources/_printers.js'
import { parseQuantity } from '../registry/resources/core/pod-qos.js'

/** upstream's kubernetes.io/pvc-protection and kubernetes.io/pv-protection, in this brand. */
export const PVC_PROTECTION_FINALIZER = 'orch.io/pvc-protection'
export const PV_PROTECTION_FINALIZER = 'orch.io/pv-protection'

/** Adds `finalizer` to a new object's finalizers, unless it is there. */
export function addProtectionFinalizer(o: Obj, finalizer: string): void {
  const m = o.metadata
  const list = m.finalizers
  if (!Array.isArray(list)) { m.finalizers = [finalizer]; return }
  if (!list.includes(finalizer)) list.push(finalizer)
}

const PVCS = { group: '', resource: 'persistentvolumeclaims' }

const storageOf = (o: Obj): number => {
  const q = parseQuantity(o.spec?.resources?.requests?.storage)
  return Number.isNaN(q) ? 0 : q
}

/**
 * PersistentVolumeClaimResize on a claim's update: a larger storage request is refused unless the claim is bound and
 * its class (the same before and after) allows volume expansion. `storageClass` reads a class by name.
 */
export function validateClaimResize(name: string, claim: Obj, old: Obj, storageClass: (name: string) => Obj | undefined): ApiError | undefined {
  if (storageOf(claim) <= storageOf(old)) return undefined
  if (old.status?.phase !== 'Bound') return forbidden(PVCS, name, 'Only bound persistent volume claims can be expanded')
  const cls = volumeStorageClass(claim)
  const oldCls = volumeStorageClass(old)
  const sc = cls !== '' && cls === oldCls ? storageClass(cls) : undefined
  if (sc?.allowVolumeExpansion !== true) {
    return forbidden(PVCS, name, 'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize')
  }
  return undefined
}
