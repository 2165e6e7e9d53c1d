// Look-ups over every served resource type: by group/version/resource, by kind, and the group list for discovery.
import { resources, virtualResources } from './resources/index.js'
import { resolveDefinition, type ResolvedDefinition } from './define.js'

export class Registry {
  /** Every stored type (what controllers, OpenAPI and the conformance suite walk). */
  readonly all: ResolvedDefinition[]
  /** Virtual types (nothing stored: access reviews, SelfSubjectReview, TokenReview); looked up and discovered like the rest. */
  readonly virtual: ResolvedDefinition[]
  readonly #served: ResolvedDefinition[]
  /** group → version → resource: nested maps, so a look-up hashes the request's own strings and builds none. */
  #byGVR = new Map<string, Map<string, Map<string, ResolvedDefinition>>>()
  #byGR = new Map<string, ResolvedDefinition>()
  #byGVK = new Map<string, ResolvedDefinition>()
  /** group → versions in preference order */
  readonly groups = new Map<string, string[]>()

  constructor(defs = resources, virtualDefs = virtualResources) {
    this.all = defs.map(resolveDefinition)
    this.virtual = virtualDefs.map(resolveDefinition)
    this.#served = [...this.all, ...this.virtual]
    for (const d of this.#served) {
      let versions = this.#byGVR.get(d.group)
      if (versions === undefined) { versions = new Map(); this.#byGVR.set(d.group, versions) }
      let byResource = versions.get(d.version)
      if (byResource === undefined) { byResource = new Map(); versions.set(d.version, byResource) }
      byResource.set(d.resource, d)
      this.#byGR.set(`${d.group}/${d.resource}`, d)
      this.#byGVK.set(`${d.group}/${d.version}/${d.kind}`, d)
      const vs = this.groups.get(d.group) ?? []
      if (!vs.includes(d.version)) vs.push(d.version)
      this.groups.set(d.group, vs)
    }
  }

  lookup(group: string, version: string, resource: string): ResolvedDefinition | undefined {
    return this.#byGVR.get(group)?.get(version)?.get(resource)
  }

  byGroupResource(group: string, resource: string): ResolvedDefinition | undefined {
    return this.#byGR.get(`${group}/${resource}`)
  }

  byKind(group: string, version: string, kind: string): ResolvedDefinition | undefined {
    return this.#byGVK.get(`${group}/${version}/${kind}`)
  }

  servesGroupVersion(group: string, version: string): boolean {
    return this.#byGVR.get(group)?.has(version) ?? false
  }

  inGroupVersion(group: string, version: string): ResolvedDefinition[] {
    return this.#served.filter((d) => d.group === group && d.version === version)
  }
}
