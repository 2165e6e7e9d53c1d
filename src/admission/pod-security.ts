// PodSecurity: the Pod Security Standards (privileged, baseline, restricted) enforced, warned about per namespace
// labels, on pods and on the pod templates of workload resources, with upstream's check texts.
import { fieldInvalid, forbidden, invalid, type FieldError } from '../machinery/errors.js'
import type { Obj } from '../registry/define.js'

/** Levels by strictness. */
export const PRIVILEGED = 0
export const BASELINE = 1
export const RESTRICTED = 2
export type Level = 0 | 1 | 2
const LEVEL_NAMES = ['privileged', 'baseline', 'restricted'] as const

/** The version of the standards: a minor of v1, LATEST for "latest" (newer than any). */
export const LATEST = Number.MAX_SAFE_INTEGER

export interface LevelVersion { level: Level; minor: number }
/** What a namespace's labels ask for, and their parse errors (field errors of metadata.labels). */
export interface NamespacePolicy { enforce: LevelVersion; audit: LevelVersion; warn: LevelVersion; errors: FieldError[] }

export function levelVersionString(lv: LevelVersion): string {
  return `${LEVEL_NAMES[lv.level]}:${lv.minor === LATEST ? 'latest' : `v1.${lv.minor}`}`
}

/** The label prefixes: ours, then upstream's (real manifests carry it). Where both name a mode, ours wins. */
const PREFIXES = ['pod-security.orch.io/', 'pod-security.kubernetes.io/'] as const

const VERSION_RE = /^v1\.([0-9]|[1-9][0-9]*)$/

function parseLevel(v: string): Level | undefined {
  return v === 'privileged' ? PRIVILEGED : v === 'baseline' ? BASELINE : v === 'restricted' ? RESTRICTED : undefined
}

function parseVersion(v: string): number | undefined {
  if (v === 'latest') return LATEST
  const m = VERSION_RE.exec(v)
  if (m === null) return undefined
  const n = Number(m[1])
  return Number.isSafeInteger(n) ? n : undefined
}

/** The label of `mode` (enforce, enforce-version, ...) and its key, ours first, undefined when neither is set. */
function label(labels: Record<string, unknown>, mode: string): [string, string] | undefined {
  for (const p of PREFIXES) {
    const k = p + mode
    const v = labels[k]
    if (typeof v === 'string') return [k, v]
  }
  return undefined
}

/**
 * The policy of a namespace's labels (upstream's PolicyToEvaluate, defaults privileged:latest): null when every mode is
 * privileged and nothing is wrong, which is what a namespace without pod-security labels gets (the hot path's test).
 * A bad enforce level is restricted, a bad audit or warn level privileged, a bad version latest, each with its error.
 */
export function namespacePolicy(labels: Record<string, unknown> | undefined): NamespacePolicy | null {
  if (labels === undefined || labels === null) return null
  let any = false
  for (const k in labels) if (k.startsWith('pod-security.')) { any = true; break }
  if (!any) return null
  const errors: FieldError[] = []
  // Which labels were set and parsed: [level set and valid, version set].
  const given = { level: false, version: false }
  const mode = (name: string, failLevel: Level): LevelVersion => {
    const lv: LevelVersion = { level: PRIVILEGED, minor: LATEST }
    given.level = false
    given.version = false
    const l = label(labels, name)
    if (l !== undefined) {
      const level = parseLevel(l[1])
      if (level === undefined) { errors.push(fieldInvalid(`metadata.labels[${l[0]}]`, l[1], 'must be one of privileged, baseline, restricted')); lv.level = failLevel } else { lv.level = level; given.level = true }
    }
    const v = label(labels, `${name}-version`)
    if (v !== undefined) {
      given.version = true
      const minor = parseVersion(v[1])
      if (minor === undefined) errors.push(fieldInvalid(`metadata.labels[${v[0]}]`, v[1], 'must be "latest" or "v1.x"'))
      else lv.minor = minor
    }
    return lv
  }
  const enforce = mode('enforce', RESTRICTED)
  const enforceGiven = given.level
  const audit = mode('audit', PRIVILEGED)
  const warn = mode('warn', PRIVILEGED)
  // As upstream: without a warn level, warn follows an enforce level set stricter (its version too, unless one is given).
  if (!given.level && label(labels, 'warn') === undefined && enforceGiven && enforce.level > warn.level) {
    warn.level = enforce.level
    if (!given.version) warn.minor = enforce.minor
  }
  if (errors.length === 0 && enforce.level === PRIVILEGED && audit.level === PRIVILEGED && warn.level === PRIVILEGED) return null
  return { enforce, audit, warn, errors }
}

// ---- checks ----

type Spec = Obj
type Meta = Obj
/** A failed check: upstream's forbidden reason and detail. */
export interface Violation { reason: string; detail: string }

function quote(s: string): string { return JSON.stringify(s) }
function joinQuote(items: readonly string[]): string { return items.map(quote).join(', ') }
function plural(one: string, many: string, n: number): string { return n === 1 ? one : many }
function str(v: unknown): string { return typeof v === 'string' ? v : '' }
function sortedSet(s: Set<string>): string[] { return [...s].sort() }
function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** Init containers, containers, then ephemeral containers, as upstream visits them. */
function containers(spec: Spec): Obj[] {
  const out: Obj[] = []
  for (const f of ['initContainers', 'containers', 'ephemeralContainers']) {
    const list = spec[f]
    if (Array.isArray(list)) for (const c of list) if (isObj(c)) out.push(c)
  }
  return out
}
function sc(o: Obj): Obj | undefined { return isObj(o.securityContext) ? o.securityContext : undefined }
function named(cs: Obj[]): string { return `${plural('container', 'containers', cs.length)} ${joinQuote(cs.map((c) => str(c.name)))}` }
function containersPhrase(names: string[]): string { return `${plural('container', 'containers', names.length)} ${joinQuote(names)}` }

/** `overrides`: the baseline check this restricted one replaces at restricted, in the versions it applies to. */
interface Check { id: string; level: Level; minVersion: number; maxVersion?: number; overrides?: string; run: (meta: Meta, spec: Spec, minor: number) => Violation | undefined }

/** From v1.25 some restricted checks let Windows pods (spec.os.name) through: the fields are refused for them anyway. */
function windowsFrom25(spec: Spec, minor: number): boolean { return minor >= 25 && isObj(spec.os) && spec.os.name === 'windows' }

const BASELINE_CAPS = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT'])
const SELINUX_TYPES = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t'])
const SAFE_SYSCTLS = new Set(['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_unprivileged_port_start'])
const APPARMOR_PREFIX = 'container.apparmor.security.beta.kubernetes.io/'
const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod'
const SECCOMP_CONTAINER_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/'
/** Inline volume sources restricted allows, and the ones it names when refusing, in upstream's order. */
const ALLOWED_VOLUMES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret']
const RESTRICTED_VOLUMES = ['hostPath', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'nfs', 'iscsi', 'glusterfs', 'rbd', 'flexVolume', 'cinder', 'cephfs', 'flocker', 'fc', 'azureFile', 'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk', 'portworxVolume', 'scaleIO', 'storageos']

function validSeccompType(t: unknown): boolean { return t === 'Localhost' || t === 'RuntimeDefault' }
function validSeccompAnnotation(v: string): boolean { return v === 'runtime/default' || v === 'docker/default' || v.startsWith('localhost/') }

function volumes(spec: Spec): Obj[] { return Array.isArray(spec.volumes) ? spec.volumes.filter(isObj) : [] }

/** Setters ("pod", `containers "a"`) that explicitly set a field of their securityContext to a bad value. */
function badSetters(spec: Spec, bad: (s: Obj) => boolean): { setters: string[] } {
  const setters: string[] = []
  const podSc = sc(spec)
  if (podSc !== undefined && bad(podSc)) setters.push('pod')
  const cs = containers(spec).filter((c) => { const s = sc(c); return s !== undefined && bad(s) })
  if (cs.length > 0) setters.push(named(cs))
  return { setters }
}

/** Every check, in upstream's order: baseline ids sorted, then restricted ids sorted (byte order). */
const CHECKS: Check[] = [
  { id: 'appArmorProfile', level: BASELINE, minVersion: 0, run: (meta, spec) => {
    const badValues = new Set<string>()
    const okType = (p: unknown) => !isObj(p) || p.type === 'RuntimeDefault' || p.type === 'Localhost'
    const { setters } = badSetters(spec, (s) => { if (okType(s.appArmorProfile)) return false; badValues.add(str((s.appArmorProfile as Obj).type)); return true })
    const values = sortedSet(badValues)
    const ann: string[] = []
    if (isObj(meta.annotations)) {
      for (const [k, v] of Object.entries(meta.annotations)) {
        const val = str(v)
        if (k.startsWith(APPARMOR_PREFIX) && !(val === '' || val === 'runtime/default' || val.startsWith('localhost/'))) ann.push(`${k}=${quote(val)}`)
      }
    }
    if (ann.length > 0) { ann.sort(); values.push(...ann); setters.push(plural('annotation', 'annotations', ann.length)) }
    if (setters.length === 0) return undefined
    return { reason: plural('forbidden AppArmor profile', 'forbidden AppArmor profiles', values.length), detail: `${setters.join(' and ')} must not set AppArmor profile type to ${joinQuote(values)}` }
  } },
  { id: 'capabilities_baseline', level: BASELINE, minVersion: 0, run: (_m, spec) => {
    const bad: string[] = []
    const caps = new Set<string>()
    for (const c of containers(spec)) {
      const add = sc(c)?.capabilities?.add
      if (!Array.isArray(add)) continue
      let ok = true
      for (const cap of add) if (!BASELINE_CAPS.has(String(cap))) { ok = false; caps.add(String(cap)) }
      if (!ok) bad.push(str(c.name))
    }
    if (bad.length === 0) return undefined
    return { reason: 'non-default capabilities', detail: `${containersPhrase(bad)} must not include ${joinQuote(sortedSet(caps))} in securityContext.capabilities.add` }
  } },
  { id: 'hostNamespaces', level: BASELINE, minVersion: 0, run: (_m, spec) => {
    const on: string[] = []
    if (spec.hostNetwork === true) on.push('hostNetwork=true')
    if (spec.hostPID === true) on.push('hostPID=true')
    if (spec.hostIPC === true) on.push('hostIPC=true')
    return on.length === 0 ? undefined : { reason: 'host namespaces', detail: on.join(', ') }
  } },
  { id: 'hostPathVolumes', level: BASELINE, minVersion: 0, run: (_m, spec) => {
    const names = volumes(spec).filter((v) => v.hostPath != null).map((v) => str(v.name))
    return names.length === 0 ? undefined : { reason: 'hostPath volumes', detail: `${plural('volume', 'volumes', names.length)} ${joinQuote(names)}` }
  } },
  { id: 'hostPorts', level: BASELINE, minVersion: 0, run: (_m, spec) => {
    const bad: string[] = []
    const ports = new Set<string>()
    for (const c of containers(spec)) {
      if (!Array.isArray(c.ports)) continue
      let ok = true
      for (const p of c.ports) if (isObj(p) && typeof p.hostPort === 'number' && p.hostPort !== 0) { ok = false; ports.add(String(p.hostPort)) }
      if (!ok) bad.push(str(c.name))
    }
    if (bad.length === 0) return undefined
    return { reason: 'hostPort', detail: `${containersPhrase(bad)} ${plural('uses', 'use', bad.length)} ${plural('hostPort', 'hostPorts', ports.size)} ${sortedSet(ports).join(', ')}` }
  } },
  // From v1.34: probes and lifecycle handlers may not name a host.
  { id: 'hostProbesAndHostLifecycle', level: BASELINE, minVersion: 34, run: (_m, spec) => {
    const bad = new Set<string>()
    const hosts = new Set<string>()
    const look = (handler: unknown, name: string) => {
      if (!isObj(handler)) return
      for (const k of ['httpGet', 'tcpSocket']) {
        const h = isObj(handler[k]) ? str(handler[k].host) : ''
        if (h !== '') { bad.add(name); hosts.add(h) }
      }
    }
    for (const c of containers(spec)) {
      const name = str(c.name)
      look(c.livenessProbe, name)
      look(c.readinessProbe, name)
      look(c.startupProbe, name)
      if (isObj(c.lifecycle)) { look(c.lifecycle.postStart, name); look(c.lifecycle.preStop, name) }
    }
    if (bad.size === 0) return undefined
    return { reason: 'probe or lifecycle host', detail: `${containersPhrase(sortedSet(bad))} ${plural('uses', 'use', bad.size)} ${plural('probe or lifecycle host', 'probe or lifecycle hosts', hosts.size)} ${joinQuote(sortedSet(hosts))}` }
  } },
  { id: 'privileged', level: BASELINE, minVersion: 0, run: (_m, spec) => {
    const bad = containers(spec).filter((c) => sc(c)?.privileged === true)
    return bad.length === 0 ? undefined : { reason: 'privileged', detail: `${named(bad)} must not set securityContext.privileged=true` }
  } },
  { id: 'procMount', level: BASELINE, minVersion: 0, run: (_m, spec) => {
    const types = new Set<string>()
    const bad = containers(spec).filter((c) => { const p = sc(c)?.procMount; if (typeof p !== 'string' || p === 'Default') return false; types.add(p); return true })
    return bad.length === 0 ? undefined : { reason: 'procMount', detail: `${named(bad)} must not set securityContext.procMount to ${joinQuote(sortedSet(types))}` }
  } },
  { id: 'seLinuxOptions', level: BASELINE, minVersion: 0, run: (_m, spec) => {
    const types = new Set<string>()
    let user = false
    let role = false
    const { setters } = badSetters(spec, (s) => {
      const o = s.seLinuxOptions
      if (!isObj(o)) return false
      let ok = true
      if (!SELINUX_TYPES.has(str(o.type))) { ok = false; types.add(str(o.type)) }
      if (str(o.user) !== '') { ok = false; user = true }
      if (str(o.role) !== '') { ok = false; role = true }
      return !ok
    })
    if (setters.length === 0) return undefined
    // As upstream: user and role are named only along with a bad type.
    const data: string[] = []
    if (types.size > 0) {
      data.push(`${plural('type', 'types', types.size)} ${joinQuote(sortedSet(types))}`)
      if (user) data.push('user may not be set')
      if (role) data.push('role may not be set')
    }
    return { reason: 'seLinuxOptions', detail: `${setters.join(' and ')} set forbidden securityContext.seLinuxOptions: ${data.join('; ')}` }
  } },
  // Before v1.19 the seccomp profile was given by annotations.
  { id: 'seccompProfile_baseline', level: BASELINE, minVersion: 0, maxVersion: 18, run: (meta, spec) => {
    const ann = isObj(meta.annotations) ? meta.annotations : {}
    const bad = new Set<string>()
    if (typeof ann[SECCOMP_POD_ANNOTATION] === 'string' && !validSeccompAnnotation(ann[SECCOMP_POD_ANNOTATION])) bad.add(`${SECCOMP_POD_ANNOTATION}=${quote(ann[SECCOMP_POD_ANNOTATION])}`)
    for (const c of containers(spec)) {
      const k = SECCOMP_CONTAINER_PREFIX + str(c.name)
      if (typeof ann[k] === 'string' && !validSeccompAnnotation(ann[k])) bad.add(`${k}=${quote(ann[k])}`)
    }
    return bad.size === 0 ? undefined : { reason: 'seccompProfile', detail: `forbidden ${plural('annotation', 'annotations', bad.size)} ${sortedSet(bad).join(', ')}` }
  } },
  { id: 'seccompProfile_baseline', level: BASELINE, minVersion: 19, run: (_m, spec) => {
    const values = new Set<string>()
    const { setters } = badSetters(spec, (s) => { if (!isObj(s.seccompProfile) || validSeccompType(s.seccompProfile.type)) return false; values.add(str(s.seccompProfile.type)); return true })
    return setters.length === 0 ? undefined : { reason: 'seccompProfile', detail: `${setters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(values))}` }
  } },
  { id: 'sysctls', level: BASELINE, minVersion: 0, run: (_m, spec) => {
    const list = sc(spec)?.sysctls
    if (!Array.isArray(list)) return undefined
    const bad = list.filter((s) => isObj(s) && !SAFE_SYSCTLS.has(str(s.name))).map((s) => str(s.name))
    return bad.length === 0 ? undefined : { reason: 'forbidden sysctls', detail: bad.join(', ') }
  } },
  { id: 'windowsHostProcess', level: BASELINE, minVersion: 0, run: (_m, spec) => {
    const { setters } = badSetters(spec, (s) => isObj(s.windowsOptions) && s.windowsOptions.hostProcess === true)
    return setters.length === 0 ? undefined : { reason: 'hostProcess', detail: `${setters.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true` }
  } },
  { id: 'allowPrivilegeEscalation', level: RESTRICTED, minVersion: 8, run: (_m, spec, minor) => {
    if (windowsFrom25(spec, minor)) return undefined
    const bad = containers(spec).filter((c) => sc(c)?.allowPrivilegeEscalation !== false)
    return bad.length === 0 ? undefined : { reason: 'allowPrivilegeEscalation != false', detail: `${named(bad)} must set securityContext.allowPrivilegeEscalation=false` }
  } },
  { id: 'capabilities_restricted', level: RESTRICTED, minVersion: 22, overrides: 'capabilities_baseline', run: (_m, spec, minor) => {
    if (windowsFrom25(spec, minor)) return undefined
    const missingDrop: string[] = []
    const adding: string[] = []
    const caps = new Set<string>()
    for (const c of containers(spec)) {
      const cap = sc(c)?.capabilities
      if (!isObj(cap)) { missingDrop.push(str(c.name)); continue }
      if (!(Array.isArray(cap.drop) && cap.drop.includes('ALL'))) missingDrop.push(str(c.name))
      let ok = true
      if (Array.isArray(cap.add)) for (const a of cap.add) if (a !== 'NET_BIND_SERVICE') { ok = false; caps.add(String(a)) }
      if (!ok) adding.push(str(c.name))
    }
    const details: string[] = []
    if (missingDrop.length > 0) details.push(`${containersPhrase(missingDrop)} must set securityContext.capabilities.drop=["ALL"]`)
    if (adding.length > 0) details.push(`${containersPhrase(adding)} must not include ${joinQuote(sortedSet(caps))} in securityContext.capabilities.add`)
    return details.length === 0 ? undefined : { reason: 'unrestricted capabilities', detail: details.join('; ') }
  } },
  { id: 'restrictedVolumes', level: RESTRICTED, minVersion: 0, overrides: 'hostPathVolumes', run: (_m, spec) => {
    const bad: string[] = []
    const types = new Set<string>()
    for (const v of volumes(spec)) {
      if (ALLOWED_VOLUMES.some((k) => v[k] != null)) continue
      bad.push(str(v.name))
      types.add(RESTRICTED_VOLUMES.find((k) => v[k] != null) ?? 'unknown')
    }
    if (bad.length === 0) return undefined
    return { reason: 'restricted volume types', detail: `${plural('volume', 'volumes', bad.length)} ${joinQuote(bad)} ${plural('uses', 'use', bad.length)} ${plural('restricted volume type', 'restricted volume types', types.size)} ${joinQuote(sortedSet(types))}` }
  } },
  { id: 'runAsNonRoot', level: RESTRICTED, minVersion: 0, run: (_m, spec) => {
    const setters: string[] = []
    let podTrue = false
    const p = sc(spec)?.runAsNonRoot
    if (p === false) setters.push('pod')
    else if (p === true) podTrue = true
    const explicit: string[] = []
    const implicit: string[] = []
    for (const c of containers(spec)) {
      const v = sc(c)?.runAsNonRoot
      if (typeof v === 'boolean') { if (!v) explicit.push(str(c.name)) } else if (!podTrue) implicit.push(str(c.name))
    }
    if (explicit.length > 0) setters.push(containersPhrase(explicit))
    if (setters.length > 0) return { reason: 'runAsNonRoot != true', detail: `${setters.join(' and ')} must not set securityContext.runAsNonRoot=false` }
    if (implicit.length > 0) return { reason: 'runAsNonRoot != true', detail: `pod or ${containersPhrase(implicit)} must set securityContext.runAsNonRoot=true` }
    return undefined
  } },
  { id: 'runAsUser', level: RESTRICTED, minVersion: 23, run: (_m, spec) => {
    const { setters } = badSetters(spec, (s) => s.runAsUser === 0)
    return setters.length === 0 ? undefined : { reason: 'runAsUser=0', detail: `${setters.join(' and ')} must not set runAsUser=0` }
  } },
  { id: 'seccompProfile_restricted', level: RESTRICTED, minVersion: 19, overrides: 'seccompProfile_baseline', run: (_m, spec, minor) => {
    if (windowsFrom25(spec, minor)) return undefined
    const setters: string[] = []
    const values = new Set<string>()
    let podSet = false
    const p = sc(spec)?.seccompProfile
    if (isObj(p)) { if (validSeccompType(p.type)) podSet = true; else { setters.push('pod'); values.add(str(p.type)) } }
    const explicit: string[] = []
    const implicit: string[] = []
    for (const c of containers(spec)) {
      const s = sc(c)?.seccompProfile
      if (isObj(s)) { if (!validSeccompType(s.type)) { explicit.push(str(c.name)); values.add(str(s.type)) } } else if (!podSet) implicit.push(str(c.name))
    }
    if (explicit.length > 0) setters.push(containersPhrase(explicit))
    if (setters.length > 0) return { reason: 'seccompProfile', detail: `${setters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(values))}` }
    if (implicit.length > 0) return { reason: 'seccompProfile', detail: `pod or ${containersPhrase(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"` }
    return undefined
  } },
]

function applies(c: Check, minor: number): boolean {
  return minor >= c.minVersion && (c.maxVersion === undefined || minor <= c.maxVersion)
}

/** The violations of a pod's metadata and spec at a level and version, in upstream's order (none at privileged). */
export function evaluatePod(lv: LevelVersion, meta: Meta | undefined, spec: Spec): Violation[] {
  if (lv.level === PRIVILEGED) return []
  const out: Violation[] = []
  const m = meta ?? {}
  for (const c of CHECKS) {
    if (c.level > lv.level || !applies(c, lv.minor)) continue
    if (lv.level === RESTRICTED && c.level === BASELINE && CHECKS.some((r) => r.overrides === c.id && applies(r, lv.minor))) continue
    const v = c.run(m, spec, lv.minor)
    if (v !== undefined) out.push(v)
  }
  return out
}

/** upstream's AggregateCheckResult.ForbiddenDetail: "reason (detail), ...". */
export function forbiddenDetail(vs: readonly Violation[]): string {
  return vs.map((v) => v.detail === '' ? v.reason : `${v.reason} (${v.detail})`).join(', ')
}

// ---- admission ----

/** The pod template of a workload resource (group/resource), undefined when it has none to check. */
export function podTemplateOf(group: string, resource: string, o: Obj): { meta: Meta | undefined; spec: Spec } | undefined {
  let tpl: unknown
  if (group === '' && (resource === 'replicationcontrollers')) tpl = o.spec?.template
  else if (group === '' && resource === 'podtemplates') tpl = o.template
  else if (group === 'apps' && (resource === 'deployments' || resource === 'replicasets' || resource === 'statefulsets' || resource === 'daemonsets')) tpl = o.spec?.template
  else if (group === 'batch' && resource === 'jobs') tpl = o.spec?.template
  else if (group === 'batch' && resource === 'cronjobs') tpl = o.spec?.jobTemplate?.spec?.template
  else return undefined
  if (!isObj(tpl)) return undefined
  return { meta: isObj(tpl.metadata) ? tpl.metadata : undefined, spec: isObj(tpl.spec) ? tpl.spec : {} }
}

/** Whether a resource is one PodSecurity looks at (pods, namespaces, the workload kinds). */
export function podSecurityResource(group: string, resource: string): boolean {
  if (group === '') return resource === 'pods' || resource === 'namespaces' || resource === 'replicationcontrollers' || resource === 'podtemplates'
  if (group === 'apps') return resource === 'deployments' || resource === 'replicasets' || resource === 'statefulsets' || resource === 'daemonsets'
  return group === 'batch' && (resource === 'jobs' || resource === 'cronjobs')
}

/** Pod subresources whose writes are not a pod spec (upstream's ignored list); any other subresource is checked. */
const IGNORED_POD_SUBRESOURCES = new Set(['exec', 'attach', 'binding', 'eviction', 'log', 'portforward', 'proxy', 'status'])

function ann(o: Obj, k: string): unknown { return isObj(o.metadata?.annotations) ? o.metadata.annotations[k] : undefined }

/** upstream's isSignificantPodUpdate: only images, seccomp annotations and ephemeral containers matter. */
export function significantPodUpdate(pod: Obj, old: Obj): boolean {
  if (ann(pod, SECCOMP_POD_ANNOTATION) !== ann(old, SECCOMP_POD_ANNOTATION)) return true
  const list = (o: Obj, f: string): Obj[] => Array.isArray(o.spec?.[f]) ? o.spec[f] : []
  const changed = (c: Obj, oc: Obj) => c.image !== oc.image || ann(pod, SECCOMP_CONTAINER_PREFIX + str(c.name)) !== ann(old, SECCOMP_CONTAINER_PREFIX + str(c.name))
  for (const f of ['containers', 'initContainers']) {
    const a = list(pod, f)
    const b = list(old, f)
    if (a.length !== b.length) return true
    for (let i = 0; i < a.length; i++) if (changed(a[i], b[i])) return true
  }
  const olds = list(old, 'ephemeralContainers')
  for (const c of list(pod, 'ephemeralContainers')) {
    const oc = olds.find((o) => o.name === c.name)
    if (oc === undefined || changed(c, oc)) return true
  }
  return false
}

/** What PodSecurity says about a write: the error to answer (enforce), else the warnings to add. */
export interface PodSecurityOutcome { error?: Error; warnings: string[] }

/**
 * PodSecurity for a pod or workload write in a namespace with policy `p` (not null: the caller skips namespaces without
 * pod-security labels). Enforce applies to pods only; warn to both; audit is not recorded (no audit log here).
 */
export function admitPodSecurity(p: NamespacePolicy, group: string, resource: string, subresource: string, operation: string, name: string, object: Obj, oldObject: Obj | undefined): PodSecurityOutcome | undefined {
  if (operation !== 'CREATE' && operation !== 'UPDATE') return undefined
  const isPod = group === '' && resource === 'pods'
  let meta: Meta | undefined
  let spec: Spec
  if (isPod) {
    if (IGNORED_POD_SUBRESOURCES.has(subresource)) return undefined
    if (p.enforce.level === PRIVILEGED && p.warn.level === PRIVILEGED) return undefined
    if (operation === 'UPDATE' && oldObject !== undefined && !significantPodUpdate(object, oldObject)) return undefined
    meta = isObj(object.metadata) ? object.metadata : undefined
    spec = isObj(object.spec) ? object.spec : {}
  } else {
    if (subresource !== '' || p.warn.level === PRIVILEGED) return undefined
    const t = podTemplateOf(group, resource, object)
    if (t === undefined) return undefined
    meta = t.meta
    spec = t.spec
  }
  let enforced: Violation[] | undefined
  if (isPod && p.enforce.level !== PRIVILEGED) {
    enforced = evaluatePod(p.enforce, meta, spec)
    if (enforced.length > 0) {
      return { error: forbidden({ group: '', resource: 'pods' }, name, `violates PodSecurity ${quote(levelVersionString(p.enforce))}: ${forbiddenDetail(enforced)}`), warnings: [] }
    }
  }
  if (p.warn.level === PRIVILEGED) return undefined
  const same = enforced !== undefined && p.warn.level === p.enforce.level && p.warn.minor === p.enforce.minor
  const warned = same ? enforced! : evaluatePod(p.warn, meta, spec)
  if (warned.length === 0) return undefined
  return { warnings: [`would violate PodSecurity ${quote(levelVersionString(p.warn))}: ${forbiddenDetail(warned)}`] }
}

/**
 * A namespace create or update: its pod-security labels must parse (on update, unless the same errors stood before),
 * else 422. Returns the error, or undefined.
 */
export function validateNamespaceLabels(name: string, operation: string, object: Obj, oldObject: Obj | undefined): Error | undefined {
  const p = namespacePolicy(object.metadata?.labels)
  if (p === null || p.errors.length === 0) return undefined
  if (operation === 'UPDATE' && oldObject !== undefined) {
    const old = namespacePolicy(oldObject.metadata?.labels)
    if (old !== null && JSON.stringify(old.errors) === JSON.stringify(p.errors)) return undefined
  }
  return invalid('Namespace', '', 'Namespace', name, p.errors)
}

/**
 * Warnings for a namespace update that tightens its enforce level (upstream's EvaluatePodsInNamespace): the existing
 * pods (`pods`, the first `limit` of them looked at) that the new level would refuse, grouped by their reasons.
 */
export function namespaceUpdateWarnings(name: string, object: Obj, oldObject: Obj, listPods: () => Obj[], limit = 3000): string[] {
  const p = namespacePolicy(object.metadata?.labels)
  const old = namespacePolicy(oldObject.metadata?.labels)
  const enforce = p?.enforce ?? { level: PRIVILEGED, minor: LATEST }
  const oldEnforce = old?.enforce ?? { level: PRIVILEGED, minor: LATEST }
  if (enforce.level === oldEnforce.level && enforce.minor === oldEnforce.minor) return []
  if (enforce.level === PRIVILEGED) return []
  if (enforce.minor === oldEnforce.minor && enforce.level <= oldEnforce.level) return []
  const all = listPods()
  const pods = all.length > limit ? all.slice(0, limit) : all
  const byReason = new Map<string, { first: string; count: number }>()
  const order: string[] = []
  for (const pod of pods) {
    const vs = evaluatePod(enforce, isObj(pod.metadata) ? pod.metadata : undefined, isObj(pod.spec) ? pod.spec : {})
    if (vs.length === 0) continue
    const reason = vs.map((v) => v.reason).join(', ')
    const podName = str(pod.metadata?.name)
    const seen = byReason.get(reason)
    if (seen === undefined) { byReason.set(reason, { first: podName, count: 1 }); order.push(reason) } else {
      seen.count++
      if (podName < seen.first) seen.first = podName
    }
  }
  const out: string[] = []
  if (pods.length < all.length) out.push(`new PodSecurity enforce level only checked against the first ${pods.length} of ${all.length} existing pods`)
  if (order.length > 0) out.push(`existing pods in namespace ${quote(name)} violate the new PodSecurity enforce level ${quote(levelVersionString(enforce))}`)
  const decorated = order.map((r) => {
    const c = byReason.get(r)!
    if (c.count === 1) return `${c.first}: ${r}`
    if (c.count === 2) return `${c.first} (and 1 other pod): ${r}`
    return `${c.first} (and ${c.count - 1} other pods): ${r}`
  })
  decorated.sort()
  return [...out, ...decorated]
}
