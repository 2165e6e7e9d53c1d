// Legacy discovery documents (/version, /api, /apis, /apis/<g>, /api/v1, /apis/<g>/<v>) built as plain data from the Registry.
import { createHash } from 'node:crypto'
import type { Registry } from '../registry/index.js'
import type { ResolvedDefinition } from '../registry/define.js'

/** What the builders read from a Registry (a structural subset, so tests may pass a stand-in). */
export type RegistryView = Pick<Registry, 'all' | 'groups' | 'inGroupVersion'>

export interface VersionInfo {
  major: string
  minor: string
  gitVersion: string
  gitCommit: string
  gitTreeState: string
  buildDate: string
  goVersion: string
  compiler: string
  platform: string
}

export interface GroupVersionForDiscovery { groupVersion: string; version: string }

export interface APIGroup {
  name: string
  versions: GroupVersionForDiscovery[]
  preferredVersion: GroupVersionForDiscovery
}

export interface APIResource {
  name: string
  singularName: string
  namespaced: boolean
  group?: string
  version?: string
  kind: string
  verbs: string[]
  shortNames?: string[]
  categories?: string[]
  storageVersionHash?: string
}

export interface APIResourceList {
  kind: 'APIResourceList'
  apiVersion?: 'v1'
  groupVersion: string
  resources: APIResource[]
}

/** The verbs of a custom resource type, as upstream's CRD discovery lists them. */
const CUSTOM_VERBS = ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch']

/** Verbs of the status and scale sub-resources. */
const SUBRESOURCE_VERBS = ['get', 'patch', 'update']

/** Node's process.arch → Go's GOARCH. */
const GOARCH: Record<string, string> = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64', loong64: 'loong64' }

/** `linux/amd64` for the running process. */
export function platform(): string {
  return `${process.platform}/${GOARCH[process.arch] ?? process.arch}`
}

/** The `/version` body; all nine keys are always present. */
export function versionInfo(overrides: Partial<Pick<VersionInfo, 'gitCommit' | 'gitTreeState' | 'buildDate'>> = {}): VersionInfo {
  return {
    major: '1',
    minor: '32',
    gitVersion: 'v1.32.0+orch',
    gitCommit: overrides.gitCommit ?? '0000000000000000000000000000000000000000',
    gitTreeState: overrides.gitTreeState ?? 'clean',
    buildDate: overrides.buildDate ?? '2025-01-01T00:00:00Z',
    goVersion: `node${process.versions.node}`,
    compiler: 'gc',
    platform: platform(),
  }
}

/** The `/api` body (legacy core group); upstream sets no apiVersion here. */
export function apiVersions(serverAddress: string): { kind: 'APIVersions'; versions: string[]; serverAddressByClientCIDRs: Array<{ clientCIDR: string; serverAddress: string }> } {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] }
}

function groupEntry(group: string, versions: string[]): APIGroup {
  const vs = versions.map((version) => ({ groupVersion: `${group}/${version}`, version }))
  return { name: group, versions: vs, preferredVersion: vs[0] }
}

/** The `/apis` body: every named group (the core group is served at /api and not listed), versions in preference order. */
export function apiGroupList(registry: RegistryView): { kind: 'APIGroupList'; apiVersion: 'v1'; groups: APIGroup[] } {
  const groups: APIGroup[] = []
  for (const [group, versions] of registry.groups) {
    if (group === '' || versions.length === 0) continue
    groups.push(groupEntry(group, versions))
  }
  return { kind: 'APIGroupList', apiVersion: 'v1', groups }
}

/** The `/apis/<group>` body, or undefined when the group is not served (the caller answers 404). */
export function apiGroup(registry: RegistryView, group: string): ({ kind: 'APIGroup'; apiVersion: 'v1' } & APIGroup) | undefined {
  if (group === '') return undefined
  const versions = registry.groups.get(group)
  if (!versions || versions.length === 0) return undefined
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(group, versions) }
}

/** Upstream StorageVersionHash: base64 (std, padded) of the first 8 bytes of sha256("<group>/<version>/<kind>"). */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64')
}

/** The discovery entries of one resource type: the resource itself, then its sub-resources. */
export function apiResources(d: ResolvedDefinition): APIResource[] {
  const namespaced = d.scope === 'Namespaced'
  // A custom resource's verbs in the order upstream's CRD discovery lists them.
  const verbs = d.custom !== undefined ? [...CUSTOM_VERBS] : [...d.verbs].sort()
  const main: APIResource = { name: d.resource, singularName: d.singular, namespaced, kind: d.kind, verbs }
  if (d.shortNames && d.shortNames.length > 0) main.shortNames = [...d.shortNames]
  if (d.categories && d.categories.length > 0) main.categories = [...d.categories]
  // Nothing is stored for a virtual type: upstream lists no storage version hash for it. A type served over another's
  // storage has that one's (its objects are stored in that version).
  if (d.stored !== undefined) main.storageVersionHash = storageVersionHash(d.stored.group, d.stored.version, d.stored.kind)
  else if (!d.virtual) main.storageVersionHash = storageVersionHash(d.group, d.custom?.storageVersion || d.version, d.kind)
  const out = [main]
  for (const sub of d.subresources ?? []) {
    if (sub === 'status') {
      out.push({ name: `${d.resource}/status`, singularName: '', namespaced, kind: d.kind, verbs: [...SUBRESOURCE_VERBS] })
    } else if (sub === 'scale') {
      out.push({ name: `${d.resource}/scale`, singularName: '', namespaced, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: [...SUBRESOURCE_VERBS] })
    }
  }
  for (const v of d.virtualSubresources ?? []) {
    // group and version only when they differ from the parent's (upstream leaves them empty, and omits them, then).
    // In upstream's key order: group and version (when they differ) come before kind.
    const differs = v.group !== d.group || v.version !== d.version
    const r: APIResource = differs
      ? { name: `${d.resource}/${v.name}`, singularName: '', namespaced, group: v.group, version: v.version, kind: v.kind, verbs: [...v.verbs] }
      : { name: `${d.resource}/${v.name}`, singularName: '', namespaced, kind: v.kind, verbs: [...v.verbs] }
    out.push(r)
  }
  return out
}

/**
 * The `/api/v1` or `/apis/<group>/<version>` body, resources sorted by name; undefined when the group/version
 * is not served. Upstream omits apiVersion on `/api/v1` and sets "v1" on the named groups.
 */
export function apiResourceList(registry: RegistryView, group: string, version: string): APIResourceList | undefined {
  if (!(registry.groups.get(group)?.includes(version) ?? false)) return undefined
  const resources = registry.inGroupVersion(group, version).flatMap(apiResources)
  resources.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const groupVersion = group === '' ? version : `${group}/${version}`
  return group === ''
    ? { kind: 'APIResourceList', groupVersion, resources }
    : { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources }
}

/** Every served group/version as [group, version], core first, in the Registry's order. */
export function groupVersions(registry: RegistryView): Array<[string, string]> {
  const out: Array<[string, string]> = []
  for (const v of registry.groups.get('') ?? []) out.push(['', v])
  for (const [g, vs] of registry.groups) if (g !== '') for (const v of vs) out.push([g, v])
  return out
}
