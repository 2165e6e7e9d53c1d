// The objects of CEL's authorizer library (the `authorizer` variable, its group, path and resource checks, their decisions) and the attributes of one check.

/** An authorization decision as the authorizer library's `check()` gives it. */
export interface CelDecision { allowed: boolean; reason: string; error: string }

/** The attributes of one check of the authorizer library (upstream authorizer.AttributesRecord). */
export interface CelAuthzAttributes {
  user: string; groups: string[]; uid: string; extra?: Record<string, string[]>
  isResourceRequest: boolean; verb: string
  apiGroup: string; apiVersion: string; resource: string; subresource: string; namespace: string; name: string; path: string
}

/** Whoever answers the checks: synchronously when it can (a cached decision), else later. */
export type CelAuthorize = (a: CelAuthzAttributes) => CelDecision | Promise<CelDecision>

interface CelUser { user: string; groups: string[]; uid: string; extra?: Record<string, string[]> }

/** The `authorizer` variable: checks made as the requesting user (or a service account, `serviceAccount(ns, name)`). */
export class CelAuthorizer {
  /** `authorizer.requestResource`: the request's own resource, checked with another verb. */
  readonly requestResource: CelResourceCheck | undefined
  constructor(readonly who: CelUser, readonly authorize: CelAuthorize, request?: { group: string; resource: string; subresource: string; namespace: string; name: string }) {
    this.requestResource = request === undefined ? undefined : new CelResourceCheck(this, request.group, request.resource, request.subresource, request.namespace, request.name)
  }
}
export class CelGroupCheck { constructor(readonly authz: CelAuthorizer, readonly group: string) {} }
export class CelPathCheck { constructor(readonly authz: CelAuthorizer, readonly path: string) {} }
/** `authorizer.group(g).resource(r)` with what the calls after it set; also the `authorizer.requestResource` variable. */
export class CelResourceCheck {
  constructor(readonly authz: CelAuthorizer, readonly group: string, readonly resource: string, readonly subresource = '', readonly namespace = '', readonly name = '') {}
  with(part: 'subresource' | 'namespace' | 'name', v: string): CelResourceCheck {
    return new CelResourceCheck(this.authz, this.group, this.resource, part === 'subresource' ? v : this.subresource, part === 'namespace' ? v : this.namespace, part === 'name' ? v : this.name)
  }
}
export class CelAuthzDecision { constructor(readonly d: CelDecision) {} }

export function decided(d: CelDecision | Promise<CelDecision>): CelAuthzDecision | Promise<CelAuthzDecision> {
  return d instanceof Promise ? d.then((x) => new CelAuthzDecision(x), (err) => new CelAuthzDecision({ allowed: false, reason: '', error: String((err as Error)?.message ?? err) })) : new CelAuthzDecision(d)
}

export function checkAttributes(who: CelUser, verb: string): CelAuthzAttributes {
  return { user: who.user, groups: who.groups, uid: who.uid, extra: who.extra, isResourceRequest: false, verb, apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '', path: '' }
}
