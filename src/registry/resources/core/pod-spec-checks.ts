// The parts of pod spec validation below the container names and enums (upstream pkg/apis/core/validation): volume
// mounts, env and envFrom, probes and lifecycle handlers, security contexts, affinity, DNS config and hostNetwork ports.
// Each check appends to the caller's error list in upstream's order; nothing here compiles a pattern per call.
import { fieldDuplicate, fieldForbidden, fieldInvalid, fieldInvalidPrinted, fieldNotFound, fieldNotSupported, fieldRequired, fieldTooLong, goPointer, goQuote, goStringSlice } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { BAD_SELECTOR_OPERATOR, requirementOperatorErrors, dns1123Label, dns1123Subdomain, labelValue, portName, portNumber, qualifiedName, legacyIPErrors, validateLabelSelector } from '../../../machinery/validation.js'
import type { Obj } from '../../define.js'
import { arr, int, isObj, objAt, set, str } from './pod-fields.js'
import { configKeyErrors } from './config-data.js'


const NEGATIVE = 'must be greater than or equal to 0'

// ---- paths (validateLocalDescendingPath) ----

/** A relative path without `..` elements; reported at `field` (upstream's path, which for mounts is not indexed). */
function localDescendingPath(errs: FieldError[], v: string, field: string): void {
  if (v.startsWith('/')) errs.push(fieldInvalid(field, v, 'must be a relative path'))
  if (v.split('/').includes('..')) errs.push(fieldInvalid(field, v, "must not contain '..'"))
}

// ---- volume mounts (ValidateVolumeMounts) ----

const PROPAGATIONS = ['Bidirectional', 'HostToContainer', 'None']
const RRO = ['Disabled', 'Enabled', 'IfPossible']

/**
 * A container's volume mounts. `volumes` holds the pod's volumes that passed their own checks, by name (only those
 * count, as upstream). Upstream reports subPath, subPathExpr, mountPropagation and recursiveReadOnly problems at the
 * list's path (`volumeMounts.subPath`), not the mount's: clients see that path, so it is kept.
 */
export function volumeMountErrors(errs: FieldError[], c: Obj, volumes: Map<string, Obj>, p: string): void {
  const mounts = arr(c.volumeMounts)
  if (mounts.length === 0) return
  const base = `${p}.volumeMounts`
  const devices = arr(c.volumeDevices)
  const paths = new Set<string>()
  const privileged = isObj(c.securityContext) && c.securityContext.privileged === true
  for (let i = 0; i < mounts.length; i++) {
    const m = objAt(mounts, i)
    const idx = `${base}[${i}]`
    const name = str(m.name)
    const mountPath = str(m.mountPath)
    if (name === '') errs.push(fieldRequired(`${idx}.name`))
    if (!volumes.has(name)) errs.push(fieldNotFound(`${idx}.name`, name))
    if (mountPath === '') errs.push(fieldRequired(`${idx}.mountPath`))
    if (paths.has(mountPath)) errs.push(fieldInvalid(`${idx}.mountPath`, mountPath, 'must be unique'))
    paths.add(mountPath)
    if (devices.length > 0) {
      if (devices.some((d) => isObj(d) && str(d.name) === name)) errs.push(fieldInvalid(`${idx}.name`, name, 'must not already exist in volumeDevices'))
      if (devices.some((d) => isObj(d) && str(d.devicePath) === mountPath)) errs.push(fieldInvalid(`${idx}.mountPath`, mountPath, 'must not already exist as a path in volumeDevices'))
    }
    const subPath = str(m.subPath)
    const subPathExpr = str(m.subPathExpr)
    if (isObj(volumes.get(name)?.image)) {
      if (subPath !== '') errs.push(fieldInvalid(`${idx}.subPath`, subPath, 'not allowed in image volume sources'))
      if (subPathExpr !== '') errs.push(fieldInvalid(`${idx}.subPathExpr`, subPathExpr, 'not allowed in image volume sources'))
    }
    if (subPath !== '') localDescendingPath(errs, subPath, `${base}.subPath`)
    if (subPathExpr !== '') {
      if (subPath !== '') errs.push(fieldInvalid(`${idx}.subPathExpr`, subPathExpr, 'subPathExpr and subPath are mutually exclusive'))
      localDescendingPath(errs, subPathExpr, `${base}.subPathExpr`)
    }
    const propagation = m.mountPropagation
    if (set(propagation)) {
      if (!PROPAGATIONS.includes(propagation)) errs.push(fieldNotSupported(`${base}.mountPropagation`, propagation, PROPAGATIONS))
      if (propagation === 'Bidirectional' && !privileged) errs.push(fieldForbidden(`${base}.mountPropagation`, 'Bidirectional mount propagation is available only to privileged containers'))
    }
    const rro = m.recursiveReadOnly
    if (set(rro) && rro !== 'Disabled') {
      if (rro === 'Enabled' || rro === 'IfPossible') {
        if (m.readOnly !== true) errs.push(fieldForbidden(`${base}.recursiveReadOnly`, 'may only be specified when readOnly is true'))
        if (set(propagation) && propagation !== 'None') errs.push(fieldForbidden(`${base}.recursiveReadOnly`, 'may only be specified when mountPropagation is None or not specified'))
      } else {
        errs.push(fieldNotSupported(`${base}.recursiveReadOnly`, rro, RRO))
      }
    }
  }
}

// ---- env and envFrom (ValidateEnv, ValidateEnvFrom) ----

/** What the relaxed rule (RelaxedEnvironmentVariableValidation, on by default since 1.32) refuses: '=' and anything but printable ASCII. */
const BAD_ENV_CHAR = /[^\x20-\x3c\x3e-\x7e]/
const ENV_NAME_MSG = "a valid environment variable name must consist only of printable ASCII characters other than '='"

/** The env fields a downward API reference may name (upstream validEnvDownwardAPIFieldPathExpressions, sorted). */
const ENV_FIELD_PATHS = ['metadata.name', 'metadata.namespace', 'metadata.uid', 'spec.nodeName', 'spec.serviceAccountName', 'status.hostIP', 'status.hostIPs', 'status.podIP', 'status.podIPs']
/** What the v1 downward API field label conversion accepts without a subscript (spec.host becomes spec.nodeName). */
const V1_FIELD_LABELS = new Set(['metadata.annotations', 'metadata.labels', 'metadata.name', 'metadata.namespace', 'metadata.uid', 'spec.nodeName', 'spec.restartPolicy', 'spec.serviceAccountName', 'spec.schedulerName', 'status.phase', 'status.hostIP', 'status.hostIPs', 'status.podIP', 'status.podIPs'])
const RESOURCE_FIELD_PATHS = ['limits.cpu', 'limits.ephemeral-storage', 'limits.memory', 'requests.cpu', 'requests.ephemeral-storage', 'requests.memory']

/** `path['subscript']` split (fieldpath.SplitMaybeSubscriptedPath); undefined when the path has no subscript. */
function splitSubscript(v: string): [string, string] | undefined {
  if (!v.endsWith("']")) return undefined
  const at = v.indexOf("['")
  if (at <= 0) return undefined
  return [v.slice(0, at), v.slice(at + 2, -2)]
}

function envNameErrors(errs: FieldError[], name: string, field: string): void {
  if (BAD_ENV_CHAR.test(name)) errs.push(fieldInvalid(field, name, ENV_NAME_MSG))
}

/** A downward API field reference of an env var (validateObjectFieldSelector with the env expressions). */
function objectFieldSelectorErrors(errs: FieldError[], fs: Obj, p: string): void {
  const apiVersion = str(fs.apiVersion)
  const fieldPath = str(fs.fieldPath)
  if (apiVersion === '') { errs.push(fieldRequired(`${p}.apiVersion`)); return }
  if (fieldPath === '') { errs.push(fieldRequired(`${p}.fieldPath`)); return }
  const sub = splitSubscript(fieldPath)
  let why = ''
  if (apiVersion !== 'v1') why = `unsupported pod version: ${apiVersion}`
  else if (sub !== undefined) { if (sub[0] !== 'metadata.annotations' && sub[0] !== 'metadata.labels') why = `field label does not support subscript: ${fieldPath}` }
  else if (!V1_FIELD_LABELS.has(fieldPath) && fieldPath !== 'spec.host') why = `field label not supported: ${fieldPath}`
  if (why !== '') { errs.push(fieldInvalid(`${p}.fieldPath`, fieldPath, `error converting fieldPath: ${why}`)); return }
  if (sub !== undefined) {
    const key = sub[0] === 'metadata.annotations' ? sub[1].toLowerCase() : sub[1]
    for (const d of qualifiedName(key)) errs.push(fieldInvalid(p, key, d))
    return
  }
  const internal = fieldPath === 'spec.host' ? 'spec.nodeName' : fieldPath
  if (!ENV_FIELD_PATHS.includes(internal)) errs.push(fieldNotSupported(`${p}.fieldPath`, internal, ENV_FIELD_PATHS))
}

/** A container resource reference of an env var (validateContainerResourceFieldSelector, not a volume's). */
function resourceFieldSelectorErrors(errs: FieldError[], fs: Obj, p: string): void {
  const resource = str(fs.resource)
  if (resource === '') errs.push(fieldRequired(`${p}.resource`))
  else if (!RESOURCE_FIELD_PATHS.includes(resource) && !resource.startsWith('limits.hugepages-') && !resource.startsWith('requests.hugepages-')) {
    errs.push(fieldNotSupported(`${p}.resource`, resource, RESOURCE_FIELD_PATHS))
  }
}

/** A configMapKeyRef or secretKeyRef: a subdomain name (even an empty one fails it, as upstream) and a config key. */
function keySelectorErrors(errs: FieldError[], s: Obj, p: string): void {
  const name = str(s.name)
  for (const d of dns1123Subdomain(name)) errs.push(fieldInvalid(`${p}.name`, name, d))
  const key = str(s.key)
  if (key === '') errs.push(fieldRequired(`${p}.key`))
  else for (const d of configKeyErrors(key)) errs.push(fieldInvalid(`${p}.key`, key, d))
}

export function envErrors(errs: FieldError[], env: unknown, p: string): void {
  const vars = arr(env)
  for (let i = 0; i < vars.length; i++) {
    const ev = objAt(vars, i)
    const idx = `${p}.env[${i}]`
    const name = str(ev.name)
    if (name === '') errs.push(fieldRequired(`${idx}.name`))
    else envNameErrors(errs, name, `${idx}.name`)
    const vf = ev.valueFrom
    if (!isObj(vf)) continue
    const vp = `${idx}.valueFrom`
    let sources = 0
    if (isObj(vf.fieldRef)) { sources++; objectFieldSelectorErrors(errs, vf.fieldRef, `${vp}.fieldRef`) }
    if (isObj(vf.resourceFieldRef)) { sources++; resourceFieldSelectorErrors(errs, vf.resourceFieldRef, `${vp}.resourceFieldRef`) }
    if (isObj(vf.configMapKeyRef)) { sources++; keySelectorErrors(errs, vf.configMapKeyRef, `${vp}.configMapKeyRef`) }
    if (isObj(vf.secretKeyRef)) { sources++; keySelectorErrors(errs, vf.secretKeyRef, `${vp}.secretKeyRef`) }
    // fileKeyRef (EnvFiles, beta and on by default in 1.35) counts as a source; its own fields are not checked here.
    if (isObj(vf.fileKeyRef)) sources++
    if (sources === 0) errs.push(fieldInvalid(vp, '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'))
    else if (str(ev.value) !== '') errs.push(fieldInvalid(vp, '', 'may not be specified when `value` is not empty'))
    else if (sources > 1) errs.push(fieldInvalid(vp, '', 'may not have more than one field specified at a time'))
  }
}

/**
 * The name of an envFrom source, checked as upstream checks a name prefix (maskTrailingDash): a trailing '-' and the
 * character before it are replaced by 'a', then the rest must be a subdomain.
 */
function envSourceNameErrors(errs: FieldError[], src: Obj, field: string): void {
  const name = str(src.name)
  if (name === '') { errs.push(fieldRequired(field)); return }
  const masked = name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name
  for (const d of dns1123Subdomain(masked)) errs.push(fieldInvalid(field, name, d))
}

export function envFromErrors(errs: FieldError[], envFrom: unknown, p: string): void {
  const sources = arr(envFrom)
  const base = `${p}.envFrom`
  for (let i = 0; i < sources.length; i++) {
    const ev = objAt(sources, i)
    const idx = `${base}[${i}]`
    const prefix = str(ev.prefix)
    if (prefix !== '') envNameErrors(errs, prefix, `${idx}.prefix`)
    let n = 0
    if (isObj(ev.configMapRef)) { n++; envSourceNameErrors(errs, ev.configMapRef, `${idx}.configMapRef.name`) }
    if (isObj(ev.secretRef)) { n++; envSourceNameErrors(errs, ev.secretRef, `${idx}.secretRef.name`) }
    // Upstream reports these two at the list, not the entry.
    if (n === 0) errs.push(fieldInvalid(base, '', 'must specify one of: `configMapRef` or `secretRef`'))
    else if (n > 1) errs.push(fieldInvalid(base, '', 'may not have more than one field specified at a time'))
  }
}

// ---- probes and lifecycle handlers (validateProbe, validateHandler, validateLifecycle) ----

const HTTP_HEADER = /^[-A-Za-z0-9]+$/
const HTTP_HEADER_MSG = "a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')"
const SCHEMES = ['HTTP', 'HTTPS']
const ONE_HANDLER = 'may not specify more than 1 handler type'

/** An IntOrString port (ValidatePortNumOrName): a number 1-65535 or an IANA service name; absent is the number 0. */
function portNumOrNameErrors(errs: FieldError[], port: unknown, field: string): void {
  if (typeof port === 'string') { for (const d of portName(port)) errs.push(fieldInvalid(field, port, d)); return }
  const n = int(port)
  for (const d of portNumber(n)) errs.push(fieldInvalid(field, n, d))
}

function httpGetErrors(errs: FieldError[], h: Obj, p: string): void {
  if (str(h.path) === '') errs.push(fieldRequired(`${p}.path`))
  portNumOrNameErrors(errs, h.port, `${p}.port`)
  if (!SCHEMES.includes(h.scheme)) errs.push(fieldNotSupported(`${p}.scheme`, str(h.scheme), SCHEMES))
  for (const header of arr(h.httpHeaders)) {
    const name = str(isObj(header) ? header.name : undefined)
    if (!HTTP_HEADER.test(name)) errs.push(fieldInvalid(`${p}.httpHeaders`, name, HTTP_HEADER_MSG))
  }
}

/**
 * Exactly one handler, in upstream's order (exec, httpGet, tcpSocket, grpc, sleep; a later one is the one refused).
 * `lifecycle` handlers have sleep and no grpc; probes the other way round.
 */
function handlerErrors(errs: FieldError[], h: Obj, grace: unknown, p: string, lifecycle: boolean): void {
  let n = 0
  if (set(h.exec)) {
    n++
    if (arr(isObj(h.exec) ? h.exec.command : undefined).length === 0) errs.push(fieldRequired(`${p}.exec.command`))
  }
  if (set(h.httpGet)) {
    if (n > 0) errs.push(fieldForbidden(`${p}.httpGet`, ONE_HANDLER))
    else { n++; httpGetErrors(errs, isObj(h.httpGet) ? h.httpGet : {}, `${p}.httpGet`) }
  }
  if (set(h.tcpSocket)) {
    if (n > 0) errs.push(fieldForbidden(`${p}.tcpSocket`, ONE_HANDLER))
    else { n++; portNumOrNameErrors(errs, isObj(h.tcpSocket) ? h.tcpSocket.port : undefined, `${p}.tcpSocket.port`) }
  }
  if (!lifecycle && set(h.grpc)) {
    if (n > 0) errs.push(fieldForbidden(`${p}.grpc`, ONE_HANDLER))
    else { n++; portNumOrNameErrors(errs, int(isObj(h.grpc) ? h.grpc.port : undefined), `${p}.grpc.port`) }
  }
  if (lifecycle && set(h.sleep)) {
    if (n > 0) errs.push(fieldForbidden(`${p}.sleep`, ONE_HANDLER))
    else {
      n++
      // A zero-second sleep is allowed (PodLifecycleSleepActionAllowZero, on by default since 1.33).
      const seconds = int(isObj(h.sleep) ? h.sleep.seconds : undefined)
      if (typeof grace === 'number' && (seconds < 0 || seconds > grace)) {
        errs.push(fieldInvalid(`${p}.sleep`, seconds, `must be non-negative and less than terminationGracePeriodSeconds (${grace})`))
      }
    }
  }
  if (n === 0) errs.push(fieldRequired(p, 'must specify a handler type'))
}

export type ProbeKind = 'livenessProbe' | 'readinessProbe' | 'startupProbe'

const PROBE_COUNTS = ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold']

/** A probe (validateLivenessProbe, validateReadinessProbe, validateStartupProbe); absent is fine. */
export function probeErrors(errs: FieldError[], kind: ProbeKind, probe: unknown, grace: unknown, container: string): void {
  if (!isObj(probe)) return
  const p = `${container}.${kind}`
  handlerErrors(errs, probe, grace, p, false)
  for (const f of PROBE_COUNTS) {
    const v = int(probe[f])
    if (v < 0) errs.push(fieldInvalid(`${p}.${f}`, v, NEGATIVE))
  }
  const tgps = probe.terminationGracePeriodSeconds
  if (typeof tgps === 'number' && tgps <= 0) errs.push(fieldInvalid(`${p}.terminationGracePeriodSeconds`, tgps, 'must be greater than 0'))
  if (kind === 'readinessProbe') {
    if (set(tgps)) errs.push(fieldInvalid(`${p}.terminationGracePeriodSeconds`, tgps, 'must not be set for readinessProbes'))
  } else if (int(probe.successThreshold) !== 1) {
    errs.push(fieldInvalid(`${p}.successThreshold`, int(probe.successThreshold), 'must be 1'))
  }
}

/** postStart and preStop handlers (validateLifecycle). */
export function lifecycleErrors(errs: FieldError[], lc: unknown, grace: unknown, container: string): void {
  if (!isObj(lc)) return
  if (isObj(lc.postStart)) handlerErrors(errs, lc.postStart, grace, `${container}.lifecycle.postStart`, true)
  if (isObj(lc.preStop)) handlerErrors(errs, lc.preStop, grace, `${container}.lifecycle.preStop`, true)
}

// ---- security contexts (ValidateSecurityContext, validatePodSpecSecurityContext) ----

/** Go's math.MaxInt32: the bound of user and group IDs, and of a pod's activeDeadlineSeconds. */
export const MAX_INT32 = 2147483647
const ID_RANGE = `must be between 0 and ${MAX_INT32}, inclusive`
const SECCOMP_TYPES = ['Localhost', 'RuntimeDefault', 'Unconfined']
const APPARMOR_TYPES = SECCOMP_TYPES
const PROC_MOUNTS = ['Default', 'Unmasked']

function idErrors(errs: FieldError[], v: unknown, field: string): void {
  if (typeof v === 'number' && (v < 0 || v > MAX_INT32)) errs.push(fieldInvalid(field, v, ID_RANGE))
}

/** Go's %#v of a core.SeccompProfile. */
function printedSeccomp(sp: Obj): string {
  return `core.SeccompProfile{Type:${goQuote(str(sp.type))}, LocalhostProfile:${goPointer('string', sp.localhostProfile)}}`
}

function seccompErrors(errs: FieldError[], sp: unknown, p: string): void {
  if (!isObj(sp)) return
  const type = str(sp.type)
  if (type === '') errs.push(fieldRequired(`${p}.type`, 'type is required when seccompProfile is set'))
  else if (!SECCOMP_TYPES.includes(type)) errs.push(fieldNotSupported(`${p}.type`, type, SECCOMP_TYPES))
  if (type === 'Localhost') {
    if (!set(sp.localhostProfile)) errs.push(fieldRequired(`${p}.localhostProfile`, 'must be set when seccomp type is Localhost'))
    else localDescendingPath(errs, str(sp.localhostProfile), `${p}.localhostProfile`)
  } else if (set(sp.localhostProfile)) {
    errs.push(fieldInvalidPrinted(`${p}.localhostProfile`, printedSeccomp(sp), 'can only be set when seccomp type is Localhost'))
  }
}

function appArmorErrors(errs: FieldError[], ap: unknown, p: string): void {
  if (!isObj(ap)) return
  const type = str(ap.type)
  const profile = ap.localhostProfile
  if (type === 'Localhost') {
    if (!set(profile)) { errs.push(fieldRequired(`${p}.localhostProfile`, 'must be set when AppArmor type is Localhost')); return }
    const text = str(profile)
    if (text.trim() !== text) errs.push(fieldInvalid(`${p}.localhostProfile`, text, 'must not be padded with whitespace'))
    else if (text === '') errs.push(fieldRequired(`${p}.localhostProfile`, 'must be set when AppArmor type is Localhost'))
    if (Buffer.byteLength(text) > 4095) errs.push(fieldTooLong(`${p}.localhostProfile`, 4095))
  } else if (type === 'RuntimeDefault' || type === 'Unconfined') {
    if (set(profile)) errs.push(fieldInvalid(`${p}.localhostProfile`, str(profile), 'can only be set when AppArmor type is Localhost'))
  } else if (type === '') {
    errs.push(fieldRequired(`${p}.type`, 'type is required when appArmorProfile is set'))
  } else {
    errs.push(fieldNotSupported(`${p}.type`, type, APPARMOR_TYPES))
  }
}

/** Go's %#v of a core.SecurityContext (the value upstream shows for a contradictory container security context). */
function printedSecurityContext(sc: Obj): string {
  return 'core.SecurityContext{' + [
    `Capabilities:${goPointer('core.Capabilities', sc.capabilities)}`, `Privileged:${goPointer('bool', sc.privileged)}`,
    `SELinuxOptions:${goPointer('core.SELinuxOptions', sc.seLinuxOptions)}`, `WindowsOptions:${goPointer('core.WindowsSecurityContextOptions', sc.windowsOptions)}`,
    `RunAsUser:${goPointer('int64', sc.runAsUser)}`, `RunAsGroup:${goPointer('int64', sc.runAsGroup)}`, `RunAsNonRoot:${goPointer('bool', sc.runAsNonRoot)}`,
    `ReadOnlyRootFilesystem:${goPointer('bool', sc.readOnlyRootFilesystem)}`, `AllowPrivilegeEscalation:${goPointer('bool', sc.allowPrivilegeEscalation)}`,
    `ProcMount:${goPointer('core.ProcMountType', sc.procMount)}`, `SeccompProfile:${goPointer('core.SeccompProfile', sc.seccompProfile)}`,
    `AppArmorProfile:${goPointer('core.AppArmorProfile', sc.appArmorProfile)}`,
  ].join(', ') + '}'
}

/**
 * A container's security context. Upstream refuses `privileged` only when the cluster disallows privileged containers
 * (its --allow-privileged flag); this server has no such policy, so privileged containers are allowed.
 */
export function securityContextErrors(errs: FieldError[], sc: unknown, hostUsers: boolean, container: string): void {
  if (!isObj(sc)) return
  const p = `${container}.securityContext`
  idErrors(errs, sc.runAsUser, `${p}.runAsUser`)
  idErrors(errs, sc.runAsGroup, `${p}.runAsGroup`)
  if (set(sc.procMount)) {
    if (!PROC_MOUNTS.includes(sc.procMount)) errs.push(fieldNotSupported(`${p}.procMount`, sc.procMount, PROC_MOUNTS))
    if (hostUsers && sc.procMount === 'Unmasked') errs.push(fieldInvalid(`${p}.procMount`, sc.procMount, '`hostUsers` must be false to use `Unmasked`'))
  }
  seccompErrors(errs, sc.seccompProfile, `${p}.seccompProfile`)
  if (sc.allowPrivilegeEscalation === false) {
    if (sc.privileged === true) errs.push(fieldInvalidPrinted(p, printedSecurityContext(sc), 'cannot set `allowPrivilegeEscalation` to false and `privileged` to true'))
    const caps = isObj(sc.capabilities) ? arr(sc.capabilities.add) : []
    for (const cap of caps) {
      if (cap === 'CAP_SYS_ADMIN') errs.push(fieldInvalidPrinted(p, printedSecurityContext(sc), 'cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN'))
    }
  }
  appArmorErrors(errs, sc.appArmorProfile, `${p}.appArmorProfile`)
}

const SYSCTL_FMT = '^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$'
const SYSCTL = new RegExp(SYSCTL_FMT)
const SYSCTL_MSG = `must have at most 253 characters and match regex ${SYSCTL_FMT}`
const FS_GROUP_POLICIES = ['Always', 'OnRootMismatch']
const SUPPLEMENTAL_POLICIES = ['Merge', 'Strict']
const SELINUX_POLICIES = ['MountOption', 'Recursive']

/** The namespace a sysctl belongs to (component-helpers GetNamespace), after the name is written with dots. */
function sysctlNamespace(name: string): 'net' | 'ipc' | '' {
  const slash = name.indexOf('/')
  const dot = name.indexOf('.')
  const n = slash >= 0 && (dot < 0 || slash < dot) ? name.replace(/[./]/g, (c) => (c === '/' ? '.' : '/')) : name
  if (n.startsWith('net.')) return 'net'
  if (n === 'kernel.sem' || n.startsWith('kernel.shm') || n.startsWith('kernel.msg') || n.startsWith('fs.mqueue.')) return 'ipc'
  return ''
}

/** The pod's security context; hostNetwork, hostPID and hostIPC live in the spec in v1. */
export function podSecurityContextErrors(errs: FieldError[], spec: Obj, path: string): void {
  const sc = spec.securityContext
  if (!isObj(sc)) return
  const p = `${path}.securityContext`
  idErrors(errs, sc.fsGroup, `${p}.fsGroup`)
  idErrors(errs, sc.runAsUser, `${p}.runAsUser`)
  idErrors(errs, sc.runAsGroup, `${p}.runAsGroup`)
  const groups = arr(sc.supplementalGroups)
  for (let i = 0; i < groups.length; i++) idErrors(errs, groups[i], `${p}.supplementalGroups[${i}]`)
  if (spec.shareProcessNamespace === true && spec.hostPID === true) {
    errs.push(fieldInvalid(`${p}.shareProcessNamespace`, true, 'ShareProcessNamespace and HostPID cannot both be enabled'))
  }
  const sysctls = arr(sc.sysctls)
  if (sysctls.length > 0) {
    const names = new Set<string>()
    for (let i = 0; i < sysctls.length; i++) {
      const name = str(objAt(sysctls, i).name)
      const f = `${p}.sysctls[${i}].name`
      if (name === '') errs.push(fieldRequired(f))
      else if (name.length > 253 || !SYSCTL.test(name)) errs.push(fieldInvalid(f, name, SYSCTL_MSG))
      else if (names.has(name)) errs.push(fieldDuplicate(f, name))
      const ns = sysctlNamespace(name)
      if (spec.hostNetwork === true && ns === 'net') errs.push(fieldInvalid(f, name, "may not be specified when 'hostNetwork' is true"))
      else if (spec.hostIPC === true && ns === 'ipc') errs.push(fieldInvalid(f, name, "may not be specified when 'hostIPC' is true"))
      names.add(name)
    }
  }
  if (set(sc.fsGroupChangePolicy) && !FS_GROUP_POLICIES.includes(sc.fsGroupChangePolicy)) errs.push(fieldNotSupported(`${p}.fsGroupChangePolicy`, sc.fsGroupChangePolicy, FS_GROUP_POLICIES))
  seccompErrors(errs, sc.seccompProfile, `${p}.seccompProfile`)
  appArmorErrors(errs, sc.appArmorProfile, `${p}.appArmorProfile`)
  if (set(sc.supplementalGroupsPolicy) && !SUPPLEMENTAL_POLICIES.includes(sc.supplementalGroupsPolicy)) errs.push(fieldNotSupported(`${p}.supplementalGroupsPolicy`, sc.supplementalGroupsPolicy, SUPPLEMENTAL_POLICIES))
  if (set(sc.seLinuxChangePolicy) && !SELINUX_POLICIES.includes(sc.seLinuxChangePolicy)) errs.push(fieldNotSupported(`${p}.seLinuxChangePolicy`, sc.seLinuxChangePolicy, SELINUX_POLICIES))
}

// ---- affinity (validateAffinity) ----

const WEIGHT_MSG = 'must be in the range 1-100'

function nodeSelectorTermErrors(errs: FieldError[], term: Obj, allowInvalidValues: boolean, p: string): void {
  const exprs = arr(term.matchExpressions)
  for (let j = 0; j < exprs.length; j++) {
    const rq = objAt(exprs, j)
    const f = `${p}.matchExpressions[${j}]`
    const values = arr(rq.values)
    requirementOperatorErrors(errs, f, rq.operator, str(rq.operator), values, true)
    const key = str(rq.key)
    for (const d of qualifiedName(key)) errs.push(fieldInvalid(`${f}.key`, key, d))
    if (!allowInvalidValues) {
      for (let k = 0; k < values.length; k++) {
        const v = str(values[k])
        for (const d of labelValue(v)) errs.push(fieldInvalid(`${f}.values[${k}]`, v, d))
      }
    }
  }
  const fields = arr(term.matchFields)
  for (let j = 0; j < fields.length; j++) {
    const rq = objAt(fields, j)
    const f = `${p}.matchFields[${j}]`
    const values = arr(rq.values)
    if (rq.operator === 'In' || rq.operator === 'NotIn') {
      if (values.length !== 1) errs.push(fieldRequired(`${f}.values`, "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
    } else {
      errs.push(fieldInvalid(`${f}.operator`, str(rq.operator), BAD_SELECTOR_OPERATOR))
    }
    if (rq.key !== 'metadata.name') errs.push(fieldInvalid(`${f}.key`, str(rq.key), 'not a valid field selector key'))
    else for (let k = 0; k < values.length; k++) for (const d of dns1123Subdomain(str(values[k]))) errs.push(fieldInvalid(`${f}.values[${k}]`, str(values[k]), d))
  }
}

function podAffinityTermErrors(errs: FieldError[], term: Obj, p: string): void {
  errs.push(...validateLabelSelector(term.labelSelector, `${p}.labelSelector`))
  errs.push(...validateLabelSelector(term.namespaceSelector, `${p}.namespaceSelector`))
  // Upstream names the field `namespace` (singular) for a bad entry of `namespaces`.
  for (const ns of arr(term.namespaces)) for (const d of dns1123Label(str(ns))) errs.push(fieldInvalid(`${p}.namespace`, str(ns), d))
  const key = str(term.topologyKey)
  if (key === '') errs.push(fieldRequired(`${p}.topologyKey`, 'can not be empty'))
  for (const d of qualifiedName(key)) errs.push(fieldInvalid(`${p}.topologyKey`, key, d))
}

function podAffinityErrors(errs: FieldError[], a: Obj, p: string): void {
  const required = arr(a.requiredDuringSchedulingIgnoredDuringExecution)
  for (let i = 0; i < required.length; i++) podAffinityTermErrors(errs, objAt(required, i), `${p}.requiredDuringSchedulingIgnoredDuringExecution[${i}]`)
  const preferred = arr(a.preferredDuringSchedulingIgnoredDuringExecution)
  for (let i = 0; i < preferred.length; i++) {
    const w = objAt(preferred, i)
    const f = `${p}.preferredDuringSchedulingIgnoredDuringExecution[${i}]`
    const weight = int(w.weight)
    if (weight <= 0 || weight > 100) errs.push(fieldInvalid(`${f}.weight`, weight, WEIGHT_MSG))
    podAffinityTermErrors(errs, isObj(w.podAffinityTerm) ? w.podAffinityTerm : {}, `${f}.podAffinityTerm`)
  }
}

export function affinityErrors(errs: FieldError[], affinity: unknown, path: string): void {
  if (!isObj(affinity)) return
  const p = `${path}.affinity`
  const na = affinity.nodeAffinity
  if (isObj(na)) {
    const required = na.requiredDuringSchedulingIgnoredDuringExecution
    if (isObj(required)) {
      const rp = `${p}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`
      const terms = arr(required.nodeSelectorTerms)
      if (terms.length === 0) errs.push(fieldRequired(rp, 'must have at least one node selector term'))
      for (let i = 0; i < terms.length; i++) nodeSelectorTermErrors(errs, objAt(terms, i), false, `${rp}[${i}]`)
    }
    const preferred = arr(na.preferredDuringSchedulingIgnoredDuringExecution)
    for (let i = 0; i < preferred.length; i++) {
      const term = objAt(preferred, i)
      const f = `${p}.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[${i}]`
      const weight = int(term.weight)
      if (weight <= 0 || weight > 100) errs.push(fieldInvalid(`${f}.weight`, weight, WEIGHT_MSG))
      // Preferred terms may hold any label value: they can match when the cluster has a single node.
      nodeSelectorTermErrors(errs, isObj(term.preference) ? term.preference : {}, true, `${f}.preference`)
    }
  }
  if (isObj(affinity.podAffinity)) podAffinityErrors(errs, affinity.podAffinity, `${p}.podAffinity`)
  if (isObj(affinity.podAntiAffinity)) podAffinityErrors(errs, affinity.podAntiAffinity, `${p}.podAntiAffinity`)
}

// ---- DNS config (validatePodDNSConfig) ----

/** The searches and nameservers of dnsConfig, required with dnsPolicy None; bad values are shown as Go prints a []string. */
export function dnsConfigErrors(errs: FieldError[], spec: Obj, path: string): void {
  const p = `${path}.dnsConfig`
  const dc = spec.dnsConfig
  if (spec.dnsPolicy === 'None') {
    if (!isObj(dc)) { errs.push(fieldRequired(p, 'must provide `dnsConfig` when `dnsPolicy` is None')); return }
    if (arr(dc.nameservers).length === 0) { errs.push(fieldRequired(`${p}.nameservers`, 'must provide at least one DNS nameserver when `dnsPolicy` is None')); return }
  }
  if (!isObj(dc)) return
  const nameservers = arr(dc.nameservers)
  if (nameservers.length > 3) errs.push(fieldInvalid(`${p}.nameservers`, goStringSlice('string', nameservers), 'must not have more than 3 nameservers'))
  for (let i = 0; i < nameservers.length; i++) errs.push(...legacyIPErrors(`${p}.nameservers[${i}]`, str(nameservers[i])))
  const searches = arr(dc.searches)
  if (searches.length > 32) errs.push(fieldInvalid(`${p}.searches`, goStringSlice('string', searches), 'must not have more than 32 search paths'))
  if (searches.map(str).join(' ').length > 2048) errs.push(fieldInvalid(`${p}.searches`, goStringSlice('string', searches), 'must not have more than 2048 characters (including spaces) in the search list'))
  for (let i = 0; i < searches.length; i++) {
    const s = str(searches[i])
    // The relaxed rule (RelaxedDNSSearchValidation, on by default since 1.33): '.' alone, and underscores.
    if (s === '.') continue
    const name = s.endsWith('.') ? s.slice(0, -1) : s
    for (const d of subdomainWithUnderscore(name)) errs.push(fieldInvalid(`${p}.searches[${i}]`, name, d))
  }
  const options = arr(dc.options)
  for (let i = 0; i < options.length; i++) if (str(objAt(options, i).name) === '') errs.push(fieldRequired(`${p}.options[${i}]`, 'must not be empty'))
}

const UNDERSCORE_LABEL = '_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?'
const UNDERSCORE_SUBDOMAIN = `${UNDERSCORE_LABEL}(\\.${UNDERSCORE_LABEL})*`
const underscoreSubdomainRe = new RegExp(`^${UNDERSCORE_SUBDOMAIN}$`)
const UNDERSCORE_MSG = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '${UNDERSCORE_SUBDOMAIN}')`

/** upstream IsDNS1123SubdomainWithUnderscore. */
function subdomainWithUnderscore(v: string): string[] {
  const out: string[] = []
  if (v.length > 253) out.push('must be no more than 253 characters')
  if (!underscoreSubdomainRe.test(v)) out.push(UNDERSCORE_MSG)
  return out
}

// ---- ports ----

/**
 * With hostNetwork, each container port's hostPort must equal its containerPort (validatePodHostNetworkDeps); in a
 * template (not a pod) an unset hostPort is fine, defaulting fills it in when the pod is made.
 */
export function hostNetworkErrors(errs: FieldError[], spec: Obj, path: string, isPod: boolean): void {
  if (spec.hostNetwork !== true) return
  const containers = arr(spec.containers)
  for (let i = 0; i < containers.length; i++) {
    const ports = arr(objAt(containers, i).ports)
    for (let j = 0; j < ports.length; j++) {
      const port = objAt(ports, j)
      const hp = int(port.hostPort)
      if ((isPod || hp !== 0) && hp !== int(port.containerPort)) errs.push(fieldInvalid(`${path}.containers[${i}].ports[${j}].hostPort`, hp, 'must match `containerPort` when `hostNetwork` is true'))
    }
  }
}

/** Host ports a list of containers claims twice, by protocol, host IP and port (checkHostPortConflicts). */
export function hostPortConflictErrors(errs: FieldError[], containers: unknown[], path: string): void {
  let seen: Set<string> | undefined
  for (let i = 0; i < containers.length; i++) {
    const ports = arr(objAt(containers, i).ports)
    for (let j = 0; j < ports.length; j++) {
      const port = objAt(ports, j)
      const hp = int(port.hostPort)
      if (hp === 0) continue
      const key = `${str(port.protocol)}/${str(port.hostIP)}/${hp}`
      seen ??= new Set()
      if (seen.has(key)) errs.push(fieldDuplicate(`${path}[${i}].ports[${j}].hostPort`, key))
      else seen.add(key)
    }
  }
}
