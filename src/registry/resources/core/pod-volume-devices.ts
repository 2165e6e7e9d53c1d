// A container's raw block devices (upstream ValidateVolumeDevices): the device side of the volumeMounts and
// volumeDevices overlap rules, whose mount side is in pod-spec-checks.ts (volumeMountErrors).
import { fieldInvalid, fieldNotFound, fieldRequired } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import type { Obj } from '../../define.js'
import { arr, isObj, set, str } from './pod-fields.js'


const NOT_BLOCK = 'can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode'

/**
 * `c.volumeDevices`, in upstream's order per device: a name (required, unique, of a pod volume in `volumes` that is a
 * persistentVolumeClaim or ephemeral volume), a devicePath (required, unique, without a `..` element), and neither
 * the name nor the path one of a volume mount's. `volumes` holds the pod's volumes that passed their own checks.
 * Mounts are looked up by name as upstream's map of them is, so of two mounts with one name the later one counts.
 */
export function volumeDeviceErrors(errs: FieldError[], c: Obj, volumes: Map<string, Obj>, p: string): void {
  const devices = arr(c.volumeDevices)
  if (devices.length === 0) return
  const mounts = new Map<string, string>()
  for (const m of arr(c.volumeMounts)) if (isObj(m)) mounts.set(str(m.name), str(m.mountPath))
  const mountPaths = new Set(mounts.values())
  const names = new Set<string>()
  const paths = new Set<string>()
  for (let i = 0; i < devices.length; i++) {
    const d = isObj(devices[i]) ? devices[i] as Obj : {}
    const idx = `${p}.volumeDevices[${i}]`
    const name = str(d.name)
    const path = str(d.devicePath)
    const volume = volumes.get(name)
    if (name === '') errs.push(fieldRequired(`${idx}.name`))
    if (names.has(name)) errs.push(fieldInvalid(`${idx}.name`, name, 'must be unique'))
    if (volume !== undefined && !set(volume.persistentVolumeClaim) && !set(volume.ephemeral)) errs.push(fieldInvalid(`${idx}.name`, name, NOT_BLOCK))
    if (volume === undefined) errs.push(fieldNotFound(`${idx}.name`, name))
    if (path === '') errs.push(fieldRequired(`${idx}.devicePath`))
    if (paths.has(path)) errs.push(fieldInvalid(`${idx}.devicePath`, path, 'must be unique'))
    // A path with backsteps is refused and, as upstream, not remembered for the uniqueness of later ones.
    if (path !== '' && path.split('/').includes('..')) errs.push(fieldInvalid(`${idx}.devicePath`, path, "can not contain backsteps ('..')"))
    else paths.add(path)
    if (mounts.has(name)) errs.push(fieldInvalid(`${idx}.name`, name, 'must not already exist in volumeMounts'))
    if (mountPaths.has(path)) errs.push(fieldInvalid(`${idx}.devicePath`, path, 'must not already exist as a path in volumeMounts'))
    if (name !== '') names.add(name)
  }
}
