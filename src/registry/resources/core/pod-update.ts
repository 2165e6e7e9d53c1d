// What an update may change in a Pod's spec (upstream ValidatePodUpdate): container and init container images,
// activeDeadlineSeconds (set, or lowered), tolerations (only added), terminationGracePeriodSeconds (to 1 from a
// negative value), scheduling gates (only removed) and, while gates remain, nodeSelector additions and node affinity.
// Everything else in spec is fixed once the pod exists.
import { isDeepStrictEqual } from 'node:util'
import { MIRROR_POD_ANNOTATION } from '../../../machinery/node-refs.js'
import { fieldForbidden, fieldInvalid, fieldRequired, type FieldError } from '../../../machinery/errors.js'
import type { Obj } from '../../define.js'

const UPDATABLE = [
  '`spec.containers[*].image`',
  '`spec.initContainers[*].image`',
  '`spec.activeDeadlineSeconds`',
  '`spec.tolerations` (only additions to existing tolerations)',
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
].join(',')

const MAX_INT32 = 2147483647
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? v : [])
const isMap = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)

/** The containers of a list keep their count; each keeps an image. */
function containerErrors(next: unknown, prev: unknown, path: string): FieldError[] {
  const n = arr(next)
  const p = arr(prev)
  if (n.length !== p.length) return [fieldForbidden(path, 'pod updates may not add or remove containers')]
  const errs: FieldError[] = []
  n.forEach((c, i) => { if (typeof c?.image !== 'string' || c.image === '') errs.push(fieldRequired(`${path}[${i}].image`, '')) })
  return errs
}

/** Each toleration of the old pod is still there (a NoExecute one may shorten its tolerationSeconds). */
function onlyAddedTolerations(next: unknown, prev: unknown): boolean {
  const n = arr(next)
  return arr(prev).every((old) => n.some((t) => {
    const { tolerationSeconds: ts, ...rest } = t ?? {}
    const { tolerationSeconds: oldTs, ...oldRest } = old ?? {}
    if (!isDeepStrictEqual(rest, oldRest)) return false
    if (oldTs === undefined) return ts === undefined
    return typeof ts === 'number' && (ts === oldTs || (old.effect === 'NoExecute' && ts <= oldTs))
  }))
}

/** Paths where two JSON values differ (for the message; upstream prints a Go diff of the specs). */
function differences(a: unknown, b: unknown, path: string, out: string[]): void {
  if (out.length >= 8 || isDeepStrictEqual(a, b)) return
  if (isMap(a) && isMap(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) differences(a[k], b[k], `${path}.${k}`, out)
    return
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    a.forEach((v, i) => differences(v, b[i], `${path}[${i}]`, out))
    return
  }
  out.push(`${path}: ${JSON.stringify(b) ?? '<unset>'} -> ${JSON.stringify(a) ?? '<unset>'}`)
}

export function validatePodUpdate(o: Obj, old: Obj): FieldError[] {
  const spec: Obj = isMap(o.spec) ? o.spec : {}
  const prev: Obj = isMap(old.spec) ? old.spec : {}
  const errs = [...containerErrors(spec.containers, prev.containers, 'spec.containers'), ...containerErrors(spec.initContainers, prev.initContainers, 'spec.initContainers')]
  if (errs.length > 0) return errs

  const ads = spec.activeDeadlineSeconds
  if (ads !== undefined && ads !== null) {
    if (typeof ads !== 'number' || ads < 0 || ads > MAX_INT32) return [fieldInvalid('spec.activeDeadlineSeconds', ads, `must be between 0 and ${MAX_INT32}, inclusive`)]
    if (typeof prev.activeDeadlineSeconds === 'number' && prev.activeDeadlineSeconds < ads) {
      return [fieldInvalid('spec.activeDeadlineSeconds', ads, 'must be less than or equal to previous value')]
    }
  } else if (prev.activeDeadlineSeconds !== undefined) {
    errs.push(fieldInvalid('spec.activeDeadlineSeconds', null, 'must not update from a positive integer to nil value'))
  }

  // The spec with every change that is allowed taken back: it must then be the old spec.
  const munged: Obj = structuredClone(spec)
  const keepImages = (key: 'containers' | 'initContainers') => {
    if (munged[key] === undefined) return
    munged[key] = arr(munged[key]).map((c, i) => ({ ...c, image: arr(prev[key])[i]?.image }))
  }
  keepImages('containers')
  keepImages('initContainers')
  const restore = (key: string) => { if (prev[key] === undefined) delete munged[key]; else munged[key] = prev[key] }
  restore('activeDeadlineSeconds')
  // The deprecated alias follows serviceAccountName (compared itself); a pod stored before the alias was filled in
  // lacks it.
  restore('serviceAccount')
  if (onlyAddedTolerations(spec.tolerations, prev.tolerations)) restore('tolerations')
  if (typeof prev.terminationGracePeriodSeconds === 'number' && prev.terminationGracePeriodSeconds < 0 && spec.terminationGracePeriodSeconds === 1) restore('terminationGracePeriodSeconds')
  const oldGates = arr(prev.schedulingGates)
  if (oldGates.length > 0) {
    const newGates = arr(spec.schedulingGates)
    if (newGates.every((g) => oldGates.some((og) => og?.name === g?.name))) restore('schedulingGates')
    else errs.push(fieldForbidden('spec.schedulingGates', 'only deletion is allowed, but found new scheduling gate'))
    // A pod still gated may gain node selector terms and have its node affinity set (it is not scheduled yet).
    const oldSel = isMap(prev.nodeSelector) ? prev.nodeSelector : {}
    const newSel = isMap(spec.nodeSelector) ? spec.nodeSelector : {}
    if (Object.entries(oldSel).every(([k, v]) => newSel[k] === v)) restore('nodeSelector')
    if (isMap(munged.affinity) || isMap(prev.affinity)) {
      const a: Obj = { ...(isMap(munged.affinity) ? munged.affinity : {}) }
      if (isMap(prev.affinity) && prev.affinity.nodeAffinity !== undefined) a.nodeAffinity = prev.affinity.nodeAffinity
      else delete a.nodeAffinity
      munged.affinity = a
      if (Object.keys(a).length === 0 && prev.affinity === undefined) delete munged.affinity
    }
  } else if (arr(spec.schedulingGates).length > 0) {
    errs.push(fieldForbidden('spec.schedulingGates', 'only deletion is allowed, but found new scheduling gate'))
    restore('schedulingGates')
  }
  if (!isDeepStrictEqual(munged, prev)) {
    const diff: string[] = []
    differences(munged, prev, 'spec', diff)
    errs.push(fieldForbidden('spec', `pod updates may not change fields other than ${UPDATABLE}\n${diff.join('\n')}`))
  }
  return errs
}


/**
 * An update through pods/ephemeralcontainers (upstream ValidatePodEphemeralContainersUpdate): the pod's spec must be
 * valid (`specErrors`), a mirror pod takes none, and the ephemeral containers already there stay, unchanged (patches
 * may reorder them, so each is found by name).
 */
export function validateEphemeralContainersUpdate(o: Obj, old: Obj, specErrors: FieldError[]): FieldError[] {
  const annotations = isMap(old.metadata?.annotations) ? old.metadata.annotations : {}
  if (Object.prototype.hasOwnProperty.call(annotations, MIRROR_POD_ANNOTATION)) return [fieldForbidden('[]', 'static pods do not support ephemeral containers')]
  const errs = [...specErrors]
  const next = new Map<string, Obj>()
  for (const c of arr(o.spec?.ephemeralContainers)) if (isMap(c) && typeof c.name === 'string') next.set(c.name, c)
  for (const prev of arr(old.spec?.ephemeralContainers)) {
    const now = next.get(prev?.name)
    if (now === undefined) errs.push(fieldForbidden('spec.ephemeralContainers', `existing ephemeral containers ${JSON.stringify(prev?.name)} may not be removed\n`))
    else if (!isDeepStrictEqual(now, prev)) {
      const diff: string[] = []
      differences(now, prev, 'ephemeralContainer', diff)
      errs.push(fieldForbidden('spec.ephemeralContainers', `existing ephemeral containers ${JSON.stringify(prev.name)} may not be changed\n${diff.join('\n')}`))
    }
  }
  return errs
}
