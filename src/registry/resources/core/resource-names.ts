// Resource names and amounts of quotas and limit ranges (upstream core/helper and validateResourceName & co.).
import { fieldInvalid, type FieldError } from '../../../machinery/errors.js'
import { qualifiedName } from '../../../machinery/validation.js'
import { canonicalQuantity, isInteger, isNegative, parseQuantity } from '../../../machinery/quantity.js'

/** Resources the system knows by a bare name (upstream standardResources). */
const STANDARD_RESOURCES = new Set([
  'cpu', 'memory', 'ephemeral-storage', 'requests.cpu', 'requests.memory', 'requests.ephemeral-storage',
  'limits.cpu', 'limits.memory', 'limits.ephemeral-storage', 'pods', 'resourcequotas', 'services',
  'replicationcontrollers', 'secrets', 'configmaps', 'persistentvolumeclaims', 'storage', 'requests.storage',
  'services.nodeports', 'services.loadbalancers',
])

/** Resources a quota tracks by a bare name (upstream standardQuotaResources): the above but `storage`. */
const STANDARD_QUOTA_RESOURCES = new Set([...STANDARD_RESOURCES].filter((r) => r !== 'storage'))

const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage'])

/** Counted in whole units (upstream integerResources; extended resources too). */
const INTEGER_RESOURCES = new Set([
  'pods', 'resourcequotas', 'services', 'replicationcontrollers', 'secrets', 'configmaps', 'persistentvolumeclaims',
  'services.nodeports', 'services.loadbalancers',
])

export const isHugePages = (name: string): boolean => name.startsWith('hugepages-')
const isQuotaHugePages = (name: string): boolean => name.startsWith('hugepages-') || name.startsWith('requests.hugepages-')

/**
 * In the default namespace: a bare name, or one under `kubernetes.io/` or the brand's `orch.io/`. A storage-class or
 * volume-attributes-class quota name (`<class>.storageclass.storage.orch.io/...`) stays outside it, as upstream's
 * `storage.k8s.io` spelling of it does.
 */
export function isNativeResource(name: string): boolean {
  if (!name.includes('/')) return true
  const n = name.replace('.storage.orch.io/', '.storage.k8s.io/')
  return n.includes('kubernetes.io/') || n.includes('orch.io/')
}

export function isExtendedResource(name: string): boolean {
  if (isNativeResource(name) || name.startsWith('requests.')) return false
  return qualifiedName(`requests.${name}`).length === 0
}

export const isStandardQuotaResource = (name: string): boolean => STANDARD_QUOTA_RESOURCES.has(name) || isQuotaHugePages(name)
export const isIntegerResource = (name: string): boolean => INTEGER_RESOURCES.has(name) || isExtendedResource(name)
export const isOvercommitAllowed = (name: string): boolean => isNativeResource(name) && !isHugePages(name)

/** A qualified name; a bare one must be a standard resource (upstream validateResourceName). */
export function validateResourceName(name: string, field: string): FieldError[] {
  const errs = qualifiedName(name).map((d) => fieldInvalid(field, name, d))
  if (errs.length > 0) return errs
  if (!name.includes('/') && !STANDARD_RESOURCES.has(name) && !isQuotaHugePages(name)) {
    return [fieldInvalid(field, name, 'must be a standard resource type or fully qualified')]
  }
  return []
}

/** A resource a container may ask for (upstream validateContainerResourceName). */
export function validateContainerResourceName(name: string, field: string): FieldError[] {
  const errs = validateResourceName(name, field)
  if (!name.includes('/')) {
    if (!STANDARD_CONTAINER_RESOURCES.has(name) && !isHugePages(name)) errs.push(fieldInvalid(field, name, 'must be a standard resource for containers'))
  } else if (!isNativeResource(name) && !isExtendedResource(name)) {
    errs.push(fieldInvalid(field, name, 'doesn\'t follow extended resource name standard'))
  }
  return errs
}

/** A resource a quota may name (upstream ValidateResourceQuotaResourceName). */
export function validateQuotaResourceName(name: string, field: string): FieldError[] {
  const errs = validateResourceName(name, field)
  if (!name.includes('/') && !isStandardQuotaResource(name)) errs.push(fieldInvalid(field, name, 'must be a standard resource for quota'))
  return errs
}

/** The canonical text of a quantity, as upstream prints one in a message; the raw value when it does not parse. */
export function quantityText(q: unknown): string {
  return (typeof q === 'string' || typeof q === 'number' ? canonicalQuantity(q) : undefined) ?? String(q)
}

/** Not negative, and whole for counted resources (upstream ValidateResourceQuantityValue). */
export function validateResourceQuantityValue(name: string, q: unknown, field: string): FieldError[] {
  if (typeof q !== 'string' && typeof q !== 'number') return []
  if (parseQuantity(typeof q === 'string' ? q.trim() : q) === undefined) return []
  const v = typeof q === 'string' ? q.trim() : q
  const errs: FieldError[] = []
  if (isNegative(v)) errs.push(fieldInvalid(field, quantityText(q), 'must be greater than or equal to 0'))
  if (isIntegerResource(name) && !isInteger(v)) errs.push(fieldInvalid(field, quantityText(q), 'must be an integer'))
  return errs
}

/** A map of resource name to quantity as a list of entries in a stable order (upstream walks Go maps in random order). */
export function resourceEntries(m: unknown): Array<[string, unknown]> {
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return []
  return Object.entries(m as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
}
