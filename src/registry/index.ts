// Look-ups over every served resource type: by group/version/resource, by kind, and the group list for discovery.
// Built-in types are fixed at load; custom resource types (one per served version of each Established CRD) form a
// dynamic part read again from the stored CRDs whenever the shared count of CRD writes moves (see attachCustom).
import { resources, virtualResources } from './resources/index.js'
import { resolveDefinition, type Obj, type ResolvedDefinition } from './define.js'
import { conditionTrue, definitionsOf } from './custom.js'

/** Where the dynamic part comes from: a count that moves on every CRD write, and the stored CRDs. */
export interface CustomSource {
  stamp(): bigint
  load(): Obj[]
}

type GVRMap = Map<string, Map<string, Map<string, ResolvedDefinition>>>

function addGVR(m: GVRMap, d: ResolvedDefinition): void {
  let versions = m.get(d.group)
  if (versions === undefined) { versions = new Map(); m.set(d.group, versions) }
  let byResource = versions.get(d.version)
  if (byResource === undefined) { byResource = new Map(); versions.set(d.version, byResource) }
  byResource.set(d.resource, d)
}

/** upstream's version priority: GA > beta > alpha, higher numbers first; other names after, alphabetically. */
function versionRank(v: string): [number, number, number, string] {
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v)
  if (!m) return [3, 0, 0, v]
  const level = m[2] === undefined ? 0 : m[2] === 'beta' ? 1 : 2
  return [level, -Number(m[1]), -(m[3] === undefined ? 0 : Number(m[3])), '']
}

function compareVersions(a: string, b: string): number {
  const x = versionRank(a)
  const y = versionRank(b)
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number)
  return x[3] < y[3] ? -1 : x[3] > y[3] ? 1 : 0
}

export class Registry {
  readonly #builtin: ResolvedDefinition[]
  /** Virtual types (nothing stored: access reviews, SelfSubjectReview, TokenReview); looked up and discovered like the rest. */
  readonly virtual: ResolvedDefinition[]
  readonly #builtinServed: ResolvedDefinition[]
  /** group → version → resource: nested maps, so a look-up hashes the request's own strings and builds none. */
  #byGVR: GVRMap = new Map()
  #byGR = new Map<string, ResolvedDefinition>()
  #byGVK = new Map<string, ResolvedDefinition>()
  readonly #builtinGroups = new Map<string, string[]>()

  // The dynamic part: custom resource types, rebuilt when the source's stamp moves.
  #source: CustomSource | undefined
  #stamp = -1n
  #customGVR: GVRMap = new Map()
  #customGR = new Map<string, ResolvedDefinition>()
  #customGVK = new Map<string, ResolvedDefinition>()
  #custom: ResolvedDefinition[] = []
  #all: ResolvedDefinition[]
  #served: ResolvedDefinition[]
  #groups: Map<string, string[]>
  /** Moves each time the set of served types changes (discovery and OpenAPI documents are built again). */
  #generation = 0
  #listeners: Array<() => void> = []
  /** The definitions of each CRD as last built, by uid, with what they were built from: a CRD write compiles only what changed. */
  #built = new Map<string, { from: string; defs: ResolvedDefinition[] }>()

  constructor(defs = resources, virtualDefs = virtualResources) {
    const builtin = defs.map(resolveDefinition)
    this.virtual = virtualDefs.map(resolveDefinition)
    this.#builtinServed = [...builtin, ...this.virtual]
    for (const d of this.#builtinServed) {
      addGVR(this.#byGVR, d)
      if (d.sharedStorage === undefined) this.#byGR.set(`${d.group}/${d.resource}`, d)
      this.#byGVK.set(`${d.group}/${d.version}/${d.kind}`, d)
      const vs = this.#builtinGroups.get(d.group) ?? []
      if (!vs.includes(d.version)) vs.push(d.version)
      this.#builtinGroups.set(d.group, vs)
    }
    for (const vs of this.#builtinGroups.values()) if (vs.length > 1) vs.sort(compareVersions)
    // A type served over another's storage is linked to it; its group/resource names that storage.
    for (const d of builtin) {
      const sh = d.sharedStorage
      if (sh === undefined) continue
      const stored = this.#byGR.get(`${sh.group}/${sh.resource}`)
      if (stored === undefined || stored.scope !== d.scope) throw new Error(`${d.groupResource}: no ${d.scope} type ${sh.resource} in group "${sh.group}" to share the storage of`)
      d.stored = stored
      if (!this.#byGR.has(`${d.group}/${d.resource}`)) this.#byGR.set(`${d.group}/${d.resource}`, stored)
    }
    // Every stored type: those served over another's storage store nothing of their own.
    this.#builtin = builtin.filter((d) => d.sharedStorage === undefined)
    this.#all = this.#builtin
    this.#served = this.#builtinServed
    this.#groups = this.#builtinGroups
  }

  /** Serve the custom resource types of the CRDs `source` reads (read now, and again whenever its stamp moves). */
  attachCustom(source: CustomSource): void {
    this.#source = source
    this.#stamp = -1n
    this.refresh()
  }

  /** Called after the served types changed (in the thread that noticed). */
  onChange(fn: () => void): void { this.#listeners.push(fn) }

  /** One integer comparison while no CRD was written; the dynamic part is read again when one was. */
  refresh(): void {
    const src = this.#source
    if (src === undefined) return
    const stamp = src.stamp()
    if (stamp === this.#stamp) return
    this.#stamp = stamp
    this.#rebuild(src.load())
  }

  get generation(): number { this.refresh(); return this.#generation }

  #rebuild(crds: Obj[]): void {
    const gvr: GVRMap = new Map()
    const gr = new Map<string, ResolvedDefinition>()
    const gvk = new Map<string, ResolvedDefinition>()
    const custom: ResolvedDefinition[] = []
    const stored: ResolvedDefinition[] = []
    const groupVersions = new Map<string, Set<string>>()
    const built = new Map<string, { from: string; defs: ResolvedDefinition[] }>()
    for (const crd of crds) {
      const uid = String(crd.metadata?.uid ?? crd.metadata?.name)
      const from = JSON.stringify([crd.spec, crd.status?.acceptedNames, conditionTrue(crd, 'Established'), crd.metadata?.deletionTimestamp !== undefined])
      let defs: ResolvedDefinition[]
      const prev = this.#built.get(uid)
      if (prev !== undefined && prev.from === from) defs = prev.defs
      else {
        try { defs = definitionsOf(crd) } catch { defs = [] }
      }
      built.set(uid, { from, defs })
      for (const d of defs) {
        // A built-in type keeps its names.
        if (this.#byGVR.get(d.group)?.get(d.version)?.has(d.resource)) continue
        addGVR(gvr, d)
        gvk.set(`${d.group}/${d.version}/${d.kind}`, d)
        custom.push(d)
        const vs = groupVersions.get(d.group) ?? new Set<string>()
        vs.add(d.version)
        groupVersions.set(d.group, vs)
        if (d.version === d.custom!.storageVersion || !defs.some((x) => x.version === x.custom!.storageVersion)) {
          if (!gr.has(`${d.group}/${d.resource}`)) { gr.set(`${d.group}/${d.resource}`, d); stored.push(d) }
        }
      }
      // The preferred version answers group/resource look-ups when the storage version is not served.
      for (const d of defs) if (!gr.has(`${d.group}/${d.resource}`)) { gr.set(`${d.group}/${d.resource}`, d); stored.push(d) }
    }
    this.#built = built
    this.#customGVR = gvr
    this.#customGR = gr
    this.#customGVK = gvk
    this.#custom = custom
    this.#all = stored.length === 0 ? this.#builtin : [...this.#builtin, ...stored]
    this.#served = custom.length === 0 ? this.#builtinServed : [...this.#builtinServed, ...custom]
    if (groupVersions.size === 0) {
      this.#groups = this.#builtinGroups
    } else {
      const groups = new Map(this.#builtinGroups)
      for (const [g, vs] of groupVersions) {
        const have = groups.get(g) ?? []
        const merged = [...have, ...[...vs].filter((v) => !have.includes(v))]
        groups.set(g, have.length === 0 ? merged.sort(compareVersions) : merged)
      }
      this.#groups = groups
    }
    this.#generation++
    for (const fn of this.#listeners) fn()
  }

  /** Every stored type (what controllers, OpenAPI and the conformance suite walk): custom types once, in their storage version. */
  get all(): ResolvedDefinition[] { this.refresh(); return this.#all }

  /** The custom resource types, one per served version. */
  get custom(): ResolvedDefinition[] { this.refresh(); return this.#custom }

  /** group → versions in preference order */
  get groups(): Map<string, string[]> { this.refresh(); return this.#groups }

  lookup(group: string, version: string, resource: string): ResolvedDefinition | undefined {
    return this.#byGVR.get(group)?.get(version)?.get(resource) ?? (this.#custom.length === 0 ? undefined : this.#customGVR.get(group)?.get(version)?.get(resource))
  }

  byGroupResource(group: string, resource: string): ResolvedDefinition | undefined {
    const k = `${group}/${resource}`
    return this.#byGR.get(k) ?? (this.#source === undefined ? undefined : (this.refresh(), this.#customGR.get(k)))
  }

  byKind(group: string, version: string, kind: string): ResolvedDefinition | undefined {
    const k = `${group}/${version}/${kind}`
    return this.#byGVK.get(k) ?? (this.#source === undefined ? undefined : (this.refresh(), this.#customGVK.get(k)))
  }

  servesGroupVersion(group: string, version: string): boolean {
    return (this.#byGVR.get(group)?.has(version) ?? false) || (this.#custom.length > 0 && (this.#customGVR.get(group)?.has(version) ?? false))
  }

  inGroupVersion(group: string, version: string): ResolvedDefinition[] {
    this.refresh()
    return this.#served.filter((d) => d.group === group && d.version === version)
  }
}
