// DefaultStorageClass and DefaultIngressClass: a new claim (ingress) that names no class gets the default one, the class
// annotated is-default-class "true" (the newest, then the first by name, when several are).
import type { Obj } from '../registry/define.js'
import { brandedAnnotation } from '../registry/resources/_printers.js'

/** The newest of the classes `isDefault` accepts (of those created the same second, the first by name), or undefined. */
export function newestDefault(classes: Iterable<Obj>, isDefault: (o: Obj) => boolean): Obj | undefined {
  let best: Obj | undefined
  let bestTime = 0
  for (const c of classes) {
    if (!isDefault(c)) continue
    const t = Date.parse(String(c.metadata?.creationTimestamp ?? ''))
    const time = Number.isNaN(t) ? 0 : t
    if (best === undefined || time > bestTime || (time === bestTime && String(c.metadata?.name) < String(best.metadata?.name))) {
      best = c
      bestTime = time
    }
  }
  return best
}

/** upstream storageutil.IsDefaultAnnotation: is-default-class, or its beta form, is "true". */
export function isDefaultStorageClass(o: Obj): boolean {
  return brandedAnnotation(o, 'storageclass.orch.io/is-default-class') === 'true' ||
    brandedAnnotation(o, 'storageclass.beta.orch.io/is-default-class') === 'true'
}

/** upstream networkingv1.AnnotationIsDefaultIngressClass is "true". */
export function isDefaultIngressClass(o: Obj): boolean {
  return brandedAnnotation(o, 'ingressclass.orch.io/is-default-class') === 'true'
}

const hasAnnotation = (o: Obj, key: string): boolean => brandedAnnotation(o, key) !== undefined

/**
 * DefaultStorageClass on a claim's create: a claim with spec.storageClassName (even "") or the beta storage-class
 * annotation keeps it; any other gets the default class's name, when there is one.
 */
export function defaultClaimClass(claim: Obj, storageClasses: () => Iterable<Obj>): void {
  const spec = claim.spec
  if (spec === null || typeof spec !== 'object' || typeof spec.storageClassName === 'string') return
  if (hasAnnotation(claim, 'volume.beta.orch.io/storage-class')) return
  const d = newestDefault(storageClasses(), isDefaultStorageClass)
  if (d !== undefined) spec.storageClassName = d.metadata.name
}

/**
 * DefaultIngressClass on an ingress's create: one with spec.ingressClassName or the ingress.class annotation keeps it;
 * any other gets the default class's name, when there is one.
 */
export function defaultIngressClass(ingress: Obj, ingressClasses: () => Iterable<Obj>): void {
  const spec = ingress.spec
  if (spec === null || typeof spec !== 'object' || typeof spec.ingressClassName === 'string') return
  if (hasAnnotation(ingress, 'orch.io/ingress.class')) return
  const d = newestDefault(ingressClasses(), isDefaultIngressClass)
  if (d !== undefined) spec.ingressClassName = d.metadata.name
}
