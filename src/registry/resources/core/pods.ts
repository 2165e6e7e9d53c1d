// Pod (v1). Also exports the pod-spec defaulting and validation that workload types apply to their templates.
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldDuplicate, fieldForbidden, fieldInvalid, fieldNotFound, fieldNotSupported, fieldRequired } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { ageColumn, nameColumn, parseTime, since } from '../_printers.js'
import { labelSelectorOf, matchLabels } from '../../../machinery/selectors.js'
import { dns1123Label, dns1123Subdomain, portName, portNumber, validateAnnotations, validateLabels } from '../../../machinery/validation.js'
import { validateEphemeralContainersUpdate, validatePodUpdate } from './pod-update.js'
import {
  affinityErrors, dnsConfigErrors, envErrors, envFromErrors, hostNetworkErrors, hostPortConflictErrors, lifecycleErrors,
  podSecurityContextErrors, probeErrors, securityContextErrors, volumeMountErrors, MAX_INT32, type ProbeKind,
} from './pod-spec-checks.js'
import { gatedNodeNameErrors, hostAliasErrors, placementErrors, runtimeClassNameErrors } from './pod-spec-scheduling.js'
import { volumeDeviceErrors } from './pod-volume-devices.js'
import { validateTolerations } from './taints.js'

// ---- defaulting (upstream pkg/apis/core/v1/defaults.go) ----

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }
function list(v: unknown): Obj[] { return Array.isArray(v) ? v.filter(isObj) : [] }

/** The tag the image pull policy looks at: `latest` when neither tag nor digest is given, '' when unparseable. */
export function imageTag(image: unknown): string {
  if (typeof image !== 'string' || image === '') return ''
  const at = image.indexOf('@')
  const name = at >= 0 ? image.slice(0, at) : image
  const lastPart = name.slice(name.lastIndexOf('/') + 1)
  const colon = lastPart.lastIndexOf(':')
  if (colon >= 0) return lastPart.slice(colon + 1)
  return at >= 0 ? '' : 'latest'
}

/** Whether an int field holds Go's zero value (absent, null or 0): what upstream's defaulting replaces. */
const zeroInt = (v: unknown): boolean => v === undefined || v === null || v === 0
const emptyString = (v: unknown): boolean => v === undefined || v === null || v === ''

function defaultProbe(p: unknown): void {
  if (!isObj(p)) return
  if (zeroInt(p.timeoutSeconds)) p.timeoutSeconds = 1
  if (zeroInt(p.periodSeconds)) p.periodSeconds = 10
  if (zeroInt(p.successThreshold)) p.successThreshold = 1
  if (zeroInt(p.failureThreshold)) p.failureThreshold = 3
  if (isObj(p.httpGet)) defaultHTTPGet(p.httpGet)
}

function defaultHTTPGet(h: Obj): void {
  if (emptyString(h.path)) h.path = '/'
  if (emptyString(h.scheme)) h.scheme = 'HTTP'
}

/** A lifecycle handler's httpGet is defaulted as a probe's is (SetDefaults_HTTPGetAction). */
function defaultLifecycle(l: unknown): void {
  if (!isObj(l)) return
  for (const h of [l.postStart, l.preStop]) if (isObj(h) && isObj(h.httpGet)) defaultHTTPGet(h.httpGet)
}

function defaultContainer(c: Obj): void {
  // resources is a value struct upstream: every container carries it, `{}` when none was given.
  if (!isObj(c.resources)) c.resources = {}
  if (c.imagePullPolicy === undefined || c.imagePullPolicy === '') c.imagePullPolicy = imageTag(c.image) === 'latest' ? 'Always' : 'IfNotPresent'
  if (c.terminationMessagePath === undefined || c.terminationMessagePath === '') c.terminationMessagePath = '/dev/termination-log'
  if (c.terminationMessagePolicy === undefined || c.terminationMessagePolicy === '') c.terminationMessagePolicy = 'File'
  for (const p of list(c.ports)) p.protocol ??= 'TCP'
  defaultProbe(c.livenessProbe)
  defaultProbe(c.readinessProbe)
  defaultProbe(c.startupProbe)
  defaultLifecycle(c.lifecycle)
  for (const e of list(c.env)) if (isObj(e.valueFrom) && isObj(e.valueFrom.fieldRef)) e.valueFrom.fieldRef.apiVersion ??= 'v1'
}

/**
 * spec.serviceAccount is a deprecated alias of spec.serviceAccountName (upstream's v1 conversion): a body with only the
 * alias names the account through it, serviceAccountName wins when both are given, and the alias always mirrors it.
 */
function syncServiceAccount(spec: Obj): void {
  const alias = spec.serviceAccount
  if ((spec.serviceAccountName === undefined || spec.serviceAccountName === null || spec.serviceAccountName === '') && typeof alias === 'string' && alias !== '') {
    spec.serviceAccountName = alias
  }
  if (typeof spec.serviceAccountName === 'string' && spec.serviceAccountName !== '') spec.serviceAccount = spec.serviceAccountName
  else delete spec.serviceAccount
}

/** SetDefaults_PodSpec and the defaults of everything inside a pod spec; applies to pods and pod templates. */
export function defaultPodSpec(spec: unknown): void {
  if (!isObj(spec)) return
  if (spec.dnsPolicy === undefined || spec.dnsPolicy === '') spec.dnsPolicy = 'ClusterFirst'
  if (spec.restartPolicy === undefined || spec.restartPolicy === '') spec.restartPolicy = 'Always'
  spec.securityContext ??= {}
  spec.terminationGracePeriodSeconds ??= 30
  if (spec.schedulerName === undefined || spec.schedulerName === '') spec.schedulerName = 'default-scheduler'
  syncServiceAccount(spec)
  for (const c of [...list(spec.initContainers), ...list(spec.containers), ...list(spec.ephemeralContainers)]) defaultContainer(c)
  for (const v of list(spec.volumes)) {
    for (const k of ['secret', 'configMap', 'downwardAPI', 'projected']) if (isObj(v[k])) v[k].defaultMode ??= 420
    if (isObj(v.downwardAPI)) for (const i of list(v.downwardAPI.items)) if (isObj(i.fieldRef)) i.fieldRef.apiVersion ??= 'v1'
  }
}

/** Defaults of a PodTemplateSpec (`spec.template` of workloads). */
export function defaultPodTemplate(template: unknown): void {
  if (isObj(template)) defaultPodSpec(template.spec)
}

/** SetDefaults_Pod: only for Pod objects, not for templates. */
function defaultPod(o: Obj): void {
  const spec = o.spec
  if (!isObj(spec)) return
  for (const c of [...list(spec.containers), ...list(spec.initContainers)]) {
    if (isObj(c.resources) && isObj(c.resources.limits)) {
      const req: Obj = isObj(c.resources.requests) ? c.resources.requests : (c.resources.requests = {})
      for (const [k, v] of Object.entries(c.resources.limits)) if (!(k in req)) req[k] = v
    }
  }
  spec.enableServiceLinks ??= true
  if (spec.hostNetwork === true) {
    for (const c of [...list(spec.initContainers), ...list(spec.containers)]) for (const p of list(c.ports)) if (p.hostPort === undefined || p.hostPort === 0) p.hostPort = p.containerPort
  }
  defaultPodSpec(spec)
}

// ---- quality of service (upstream pkg/apis/core/helper/qos) ----

const SUFFIX: Record<string, number> = {
  n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
}

/** A Quantity as a number (close enough to compare); NaN when malformed. */
export function parseQuantity(q: unknown): number {
  if (typeof q === 'number') return q
  if (typeof q !== 'string') return NaN
  const m = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?)$/.exec(q.trim())
  if (!m) return NaN
  const n = Number(m[1])
  if (m[2] !== undefined) return n * 10 ** Number(m[2].slice(1))
  return n * SUFFIX[m[3] ?? '']
}

function sameQuantity(a: number, b: number): boolean { return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b)) }

export function podQOSClass(spec: unknown): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const requests = new Map<string, number>()
  const limits = new Map<string, number>()
  let guaranteed = true
  const add = (into: Map<string, number>, rl: unknown, found?: Set<string>) => {
    if (!isObj(rl)) return
    for (const [name, q] of Object.entries(rl)) {
      if (name !== 'cpu' && name !== 'memory') continue
      const v = parseQuantity(q)
      if (!(v > 0)) continue
      found?.add(name)
      into.set(name, (into.get(name) ?? 0) + v)
    }
  }
  const s = isObj(spec) ? spec : {}
  if (isObj(s.resources) && (isObj(s.resources.requests) || isObj(s.resources.limits))) {
    add(requests, s.resources.requests)
    if (isObj(s.resources.limits) && Object.keys(s.resources.limits).length > 0) {
      const found = new Set<string>()
      add(limits, s.resources.limits, found)
      if (!found.has('cpu') || !found.has('memory')) guaranteed = false
    } else guaranteed = false
  } else {
    for (const c of [...list(s.containers), ...list(s.initContainers)]) {
      const r = isObj(c.resources) ? c.resources : {}
      add(requests, r.requests)
      const found = new Set<string>()
      add(limits, r.limits, found)
      if (!found.has('cpu') || !found.has('memory')) guaranteed = false
    }
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort'
  if (guaranteed) {
    for (const [name, req] of requests) {
      const lim = limits.get(name)
      if (lim === undefined || !sameQuantity(lim, req)) { guaranteed = false; break }
    }
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable'
}

// ---- validation (upstream ValidatePodSpec, for the fields it checks here) ----

/** What the container checks need from the pod: its volumes that passed their checks, the grace period, hostUsers. */
interface PodContext { volumes: Map<string, Obj>; grace: unknown; hostUsers: boolean }

const ACTIVE_DEADLINE_RANGE = `must be between 1 and ${MAX_INT32}, inclusive`
const INIT_ONLY_ALWAYS = 'may not be set for init containers without restartPolicy=Always'
const PROBES: ProbeKind[] = ['livenessProbe', 'readinessProbe', 'startupProbe']
const INIT_FORBIDDEN = ['lifecycle', ...PROBES]
const DNS_LABEL_FIELDS = ['hostname', 'subdomain']

/**
 * A pod spec at `path` in upstream ValidatePodSpec's order: volumes; containers (each container's own checks, a name
 * unique among containers, lifecycle and probes), their host ports; init containers; ephemeral containers; then the
 * pod's fields (hostNetwork ports, restartPolicy, dnsPolicy, nodeSelector, security context, affinity, dnsConfig,
 * schedulingGates, topologySpreadConstraints, serviceAccountName, nodeName, activeDeadlineSeconds, hostname, subdomain,
 * tolerations, hostAliases, priorityClassName, runtimeClassName). `isPod`: the spec is a Pod's, not a
 * template's (upstream's ResourceIsPod).
 */
export function validatePodSpec(spec: unknown, path: string, isPod = false): FieldError[] {
  const s = isObj(spec) ? spec : {}
  const volumes = new Map<string, Obj>()
  const errs = volumeErrors(s.volumes, `${path}.volumes`, volumes)
  const ctx: PodContext = { volumes, grace: s.terminationGracePeriodSeconds, hostUsers: s.hostUsers !== false }
  const containers = Array.isArray(s.containers) ? s.containers : []
  if (containers.length === 0) errs.push(fieldRequired(`${path}.containers`))
  const seen = new Set<string>()
  for (let i = 0; i < containers.length; i++) {
    const p = `${path}.containers[${i}]`
    const c: Obj = isObj(containers[i]) ? containers[i] : {}
    containerErrors(errs, c, p, ctx)
    uniqueName(errs, c, p, seen)
    lifecycleErrors(errs, c.lifecycle, ctx.grace, p)
    for (const kind of PROBES) probeErrors(errs, kind, c[kind], ctx.grace, p)
    if (c.restartPolicy !== undefined && c.restartPolicy !== null) errs.push(fieldForbidden(`${p}.restartPolicy`, 'may not be set for non-init containers'))
  }
  hostPortConflictErrors(errs, containers, `${path}.containers`)
  const inits = Array.isArray(s.initContainers) ? s.initContainers : []
  for (let i = 0; i < inits.length; i++) {
    const p = `${path}.initContainers[${i}]`
    const c: Obj = isObj(inits[i]) ? inits[i] : {}
    containerErrors(errs, c, p, ctx)
    const restartPolicy = c.restartPolicy
    if (restartPolicy !== undefined && restartPolicy !== null && restartPolicy !== 'Always') errs.push(fieldNotSupported(`${p}.restartPolicy`, restartPolicy, ['Always']))
    // An init container's name may not repeat a container's either.
    uniqueName(errs, c, p, seen)
    // Init containers run one at a time: only one's own ports can clash (upstream reports them at index 0).
    hostPortConflictErrors(errs, [c], `${path}.initContainers`)
    if (restartPolicy === 'Always') {
      lifecycleErrors(errs, c.lifecycle, ctx.grace, p)
      for (const kind of PROBES) probeErrors(errs, kind, c[kind], ctx.grace, p)
    } else {
      for (const key of INIT_FORBIDDEN) if (c[key] !== undefined && c[key] !== null) errs.push(fieldForbidden(`${p}.${key}`, INIT_ONLY_ALWAYS))
    }
  }
  ephemeralContainerErrors(errs, s, seen, path, ctx)
  hostNetworkErrors(errs, s, path, isPod)
  oneOf(errs, `${path}.restartPolicy`, s.restartPolicy, ['Always', 'OnFailure', 'Never'])
  oneOf(errs, `${path}.dnsPolicy`, s.dnsPolicy, ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'])
  if (isObj(s.nodeSelector)) errs.push(...validateLabels(s.nodeSelector, `${path}.nodeSelector`))
  podSecurityContextErrors(errs, s, path)
  affinityErrors(errs, s.affinity, path)
  dnsConfigErrors(errs, s, path)
  placementErrors(errs, s, path)
  const ads = s.activeDeadlineSeconds
  if (typeof ads === 'number' && (ads < 1 || ads > MAX_INT32)) errs.push(fieldInvalid(`${path}.activeDeadlineSeconds`, ads, ACTIVE_DEADLINE_RANGE))
  for (const key of DNS_LABEL_FIELDS) {
    const v = s[key]
    if (typeof v === 'string' && v !== '') for (const d of dns1123Label(v)) errs.push(fieldInvalid(`${path}.${key}`, v, d))
  }
  if (Array.isArray(s.tolerations) && s.tolerations.length > 0) errs.push(...validateTolerations(s.tolerations, `${path}.tolerations`))
  hostAliasErrors(errs, s.hostAliases, `${path}.hostAliases`)
  const pc = s.priorityClassName
  if (typeof pc === 'string' && pc !== '') for (const d of dns1123Subdomain(pc)) errs.push(fieldInvalid(`${path}.priorityClassName`, pc, d))
  runtimeClassNameErrors(errs, s, path)
  return errs
}

/** A container's name: required, a DNS label, and not used by an earlier container of the pod (`seen`). */
function uniqueName(errs: FieldError[], c: Obj, p: string, seen: Set<string>): void {
  const name = c.name
  if (typeof name !== 'string' || name === '') return
  if (seen.has(name)) errs.push(fieldDuplicate(`${p}.name`, name))
  else seen.add(name)
}

/**
 * A PodTemplateSpec at `path` (upstream ValidatePodTemplateSpec): its labels and annotations (reported at
 * `<path>.labels` and `<path>.annotations`, as upstream names them), its pod spec, and no ephemeral containers.
 */
export function validatePodTemplateSpec(template: unknown, path: string): FieldError[] {
  const t: Obj = isObj(template) ? template : {}
  const meta: Obj = isObj(t.metadata) ? t.metadata : {}
  const errs = [...validateLabels(meta.labels, `${path}.labels`), ...validateAnnotations(meta.annotations, `${path}.annotations`)]
  errs.push(...validatePodSpec(t.spec, `${path}.spec`))
  if (isObj(t.spec) && list(t.spec.ephemeralContainers).length > 0) errs.push(fieldForbidden(`${path}.spec.ephemeralContainers`, 'ephemeral containers not allowed in pod template'))
  return errs
}

/**
 * The fields of an ephemeral container that may be set (upstream's allow list): everything else, such as ports, probes,
 * lifecycle, resources and restartPolicy, is forbidden, in the order of the container's fields.
 */
const EPHEMERAL_FORBIDDEN = ['ports', 'resources', 'resizePolicy', 'restartPolicy', 'livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle']
const EPHEMERAL_TEXT = 'cannot be set for an Ephemeral Container'

/** Whether a field holds its zero value (absent, null; `resources` also when it sets nothing). */
function unset(key: string, v: unknown): boolean {
  if (v === undefined || v === null) return true
  if (key === 'resources' && isObj(v)) return Object.values(v).every((x) => x === undefined || x === null)
  return false
}

/**
 * Ephemeral containers (upstream validateEphemeralContainers): the checks of any container, a name unique among all
 * containers of the pod, a targetContainerName naming a container or init container, none of the forbidden fields, and
 * no subPath or subPathExpr on volume mounts. `names` holds the names of the containers and init containers.
 */
function ephemeralContainerErrors(errs: FieldError[], s: Obj, names: Set<string>, path: string, ctx: PodContext): void {
  const ephemeral = list(s.ephemeralContainers)
  if (ephemeral.length === 0) return
  const others = new Set(names)
  ephemeral.forEach((c, i) => {
    const p = `${path}.ephemeralContainers[${i}]`
    containerErrors(errs, c, p, ctx)
    if (typeof c.name === 'string' && c.name !== '') {
      if (names.has(c.name)) errs.push(fieldDuplicate(`${p}.name`, c.name))
      else names.add(c.name)
    }
    const target = c.targetContainerName
    if (typeof target === 'string' && target !== '' && !others.has(target)) errs.push(fieldNotFound(`${p}.targetContainerName`, target))
    for (const key of EPHEMERAL_FORBIDDEN) if (!unset(key, c[key])) errs.push(fieldForbidden(`${p}.${key}`, EPHEMERAL_TEXT))
    list(c.volumeMounts).forEach((m, j) => {
      if (typeof m.subPath === 'string' && m.subPath !== '') errs.push(fieldForbidden(`${p}.volumeMounts[${j}].subPath`, EPHEMERAL_TEXT))
      if (typeof m.subPathExpr === 'string' && m.subPathExpr !== '') errs.push(fieldForbidden(`${p}.volumeMounts[${j}].subPathExpr`, EPHEMERAL_TEXT))
    })
  })
}

/** The volume sources in the order upstream's validation looks at them (a second one is reported where it is met). */
const VOLUME_SOURCES = [
  'hostPath', 'emptyDir', 'gitRepo', 'gcePersistentDisk', 'awsElasticBlockStore', 'secret', 'nfs', 'iscsi', 'glusterfs',
  'flocker', 'persistentVolumeClaim', 'rbd', 'flexVolume', 'cinder', 'cephfs', 'quobyte', 'downwardAPI', 'fc', 'azureFile',
  'vsphereVolume', 'photonPersistentDisk', 'portworxVolume', 'azureDisk', 'storageos', 'configMap', 'projected', 'scaleIO',
  'csi', 'ephemeral', 'image',
]

/**
 * Volumes: a unique DNS label name each, and exactly one source (upstream ValidateVolumes / validateVolumeSource). The
 * volumes without errors are put in `valid` by name: only those can be mounted, as upstream.
 */
function volumeErrors(volumes: unknown, path: string, valid: Map<string, Obj>): FieldError[] {
  const errs: FieldError[] = []
  list(volumes).forEach((v, i) => {
    const p = `${path}[${i}]`
    const own: FieldError[] = []
    const sources = VOLUME_SOURCES.filter((k) => v[k] !== undefined && v[k] !== null)
    if (sources.length === 0) own.push(fieldRequired(p, 'must specify a volume type'))
    for (const extra of sources.slice(1)) own.push(fieldForbidden(`${p}.${extra}`, 'may not specify more than 1 volume type'))
    const name = typeof v.name === 'string' ? v.name : ''
    if (name === '') own.push(fieldRequired(`${p}.name`))
    else for (const d of dns1123Label(name)) own.push(fieldInvalid(`${p}.name`, name, d))
    if (valid.has(name)) own.push(fieldDuplicate(`${p}.name`, name))
    // As upstream, only a volume without errors counts for the duplicate check of later ones and for mounts.
    if (own.length === 0) valid.set(name, v)
    errs.push(...own)
  })
  return errs
}

/** An enumerated field: absent is fine (defaults fill it), anything else must be one of the values. */
export function oneOf(errs: FieldError[], field: string, v: unknown, values: string[]): void {
  if (v !== undefined && !values.includes(v as string)) errs.push(fieldNotSupported(field, v, values))
}

/**
 * The checks of any container, regular, init or ephemeral (upstream validateContainerCommon), in its order: name,
 * image, terminationMessagePolicy, ports, env, envFrom, volumeMounts, volumeDevices, imagePullPolicy, resources,
 * securityContext.
 */
function containerErrors(errs: FieldError[], c: Obj, p: string, ctx: PodContext): void {
  const name = c.name
  if (typeof name !== 'string' || name === '') errs.push(fieldRequired(`${p}.name`))
  else for (const d of dns1123Label(name)) errs.push(fieldInvalid(`${p}.name`, name, d))
  if (typeof c.image !== 'string' || c.image === '') errs.push(fieldRequired(`${p}.image`))
  oneOf(errs, `${p}.terminationMessagePolicy`, c.terminationMessagePolicy, ['File', 'FallbackToLogsOnError'])
  const ports = list(c.ports)
  let portNames: Set<string> | undefined
  ports.forEach((port, j) => {
    const pp = `${p}.ports[${j}]`
    const pn = port.name
    if (typeof pn === 'string' && pn !== '') {
      const problems = portName(pn)
      if (problems.length > 0) for (const d of problems) errs.push(fieldInvalid(`${pp}.name`, pn, d))
      else if ((portNames ??= new Set()).has(pn)) errs.push(fieldDuplicate(`${pp}.name`, pn))
      else portNames.add(pn)
    }
    const cp = port.containerPort
    if (cp === undefined || cp === null || cp === 0) errs.push(fieldRequired(`${pp}.containerPort`))
    else for (const d of portNumber(cp)) errs.push(fieldInvalid(`${pp}.containerPort`, cp, d))
    const hp = port.hostPort
    if (hp !== undefined && hp !== null && hp !== 0) for (const d of portNumber(hp)) errs.push(fieldInvalid(`${pp}.hostPort`, hp, d))
    oneOf(errs, `${pp}.protocol`, port.protocol, ['SCTP', 'TCP', 'UDP'])
  })
  envErrors(errs, c.env, p)
  envFromErrors(errs, c.envFrom, p)
  volumeMountErrors(errs, c, ctx.volumes, p)
  volumeDeviceErrors(errs, c, ctx.volumes, p)
  oneOf(errs, `${p}.imagePullPolicy`, c.imagePullPolicy, ['Always', 'IfNotPresent', 'Never'])
  const res = isObj(c.resources) ? c.resources : {}
  const limits = isObj(res.limits) ? res.limits : {}
  const requests = isObj(res.requests) ? res.requests : {}
  for (const [bag, m] of [['limits', limits], ['requests', requests]] as const) {
    for (const [rn, q] of Object.entries(m)) {
      if (parseQuantity(q) < 0) errs.push(fieldInvalid(`${p}.resources.${bag}[${rn}]`, q, 'must be greater than or equal to 0'))
    }
  }
  for (const [rn, q] of Object.entries(requests)) {
    if (limits[rn] === undefined) continue
    if (parseQuantity(q) > parseQuantity(limits[rn])) errs.push(fieldInvalid(`${p}.resources.requests`, q, `must be less than or equal to ${rn} limit of ${limits[rn]}`))
  }
  securityContextErrors(errs, c.securityContext, ctx.hostUsers, p)
}

/** Whether a metav1.LabelSelector matches a label set (nil selects nothing, empty selects everything). */
export function selectorMatches(sel: unknown, labels: unknown): boolean {
  return isObj(sel) && matchLabels(labelSelectorOf(sel), isObj(labels) ? labels as Record<string, string> : {})
}

function selectorIsEmpty(sel: Obj): boolean {
  return Object.keys(isObj(sel.matchLabels) ? sel.matchLabels : {}).length + (Array.isArray(sel.matchExpressions) ? sel.matchExpressions.length : 0) === 0
}

/**
 * The selector and template checks of apps/v1 workloads (ValidateDeploymentSpec, ValidateReplicaSetSpec,
 * ValidateStatefulSetSpec, ValidateDaemonSetSpec): `kind` is the word of the "empty selector" message.
 */
export function validateWorkloadSpec(o: Obj, kind: 'deployment' | 'statefulset' | 'daemonset', opts: { selectorRequired: boolean; restartAlways?: boolean } = { selectorRequired: true }): FieldError[] {
  const errs: FieldError[] = []
  const spec = isObj(o.spec) ? o.spec : {}
  const sel = spec.selector
  if (!isObj(sel)) {
    if (opts.selectorRequired) errs.push(fieldRequired('spec.selector'))
  } else if (selectorIsEmpty(sel)) {
    errs.push(fieldInvalid('spec.selector', sel, `empty selector is invalid for ${kind}`))
  }
  const template = isObj(spec.template) ? spec.template : {}
  const labels = isObj(template.metadata) ? template.metadata.labels : undefined
  // A nil selector selects nothing, so the template never matches it; an empty one skips the check.
  if ((!isObj(sel) || !selectorIsEmpty(sel)) && !selectorMatches(sel, labels)) {
    errs.push(fieldInvalid('spec.template.metadata.labels', labels ?? null, '`selector` does not match template `labels`'))
  }
  // The template as any pod template (its labels and annotations, no ephemeral containers; upstream ValidatePodTemplateSpec).
  errs.push(...validatePodTemplateSpec(template, 'spec.template'))
  if (spec.replicas !== undefined && (typeof spec.replicas !== 'number' || spec.replicas < 0)) errs.push(fieldInvalid('spec.replicas', spec.replicas, 'must be greater than or equal to 0'))
  if (opts.restartAlways !== false) {
    const rp = isObj(template.spec) ? template.spec.restartPolicy : undefined
    if (rp !== undefined && rp !== 'Always') errs.push(fieldNotSupported('spec.template.spec.restartPolicy', rp, ['Always']))
  }
  return errs
}

/** Ephemeral containers are added through pods/ephemeralcontainers only (upstream ValidatePodCreate). */
function ephemeralOnCreate(o: Obj): FieldError[] {
  return list(o.spec?.ephemeralContainers).length > 0 ? [fieldForbidden('spec.ephemeralContainers', 'cannot be set on create')] : []
}

// ---- the table (upstream printPod) ----

interface PodRow { ready: string; status: string; restarts: string }

function podRow(o: Obj, now: number): PodRow {
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  const status: Obj = isObj(o.status) ? o.status : {}
  const conditions = list(status.conditions)
  let restarts = 0
  let sidecarRestarts = 0
  let totalContainers = list(spec.containers).length
  let readyContainers = 0
  let lastRestart = 0
  let lastSidecarRestart = 0
  const phase: string = status.phase ?? ''
  let reason: string = status.reason ? status.reason : phase
  for (const c of conditions) if (c.type === 'PodScheduled' && c.reason === 'SchedulingGated') reason = 'SchedulingGated'

  const initContainers = new Map<string, Obj>()
  for (const c of list(spec.initContainers)) {
    initContainers.set(c.name, c)
    if (c.restartPolicy === 'Always') totalContainers++
  }
  const isSidecar = (name: unknown) => initContainers.get(name as string)?.restartPolicy === 'Always'
  const finishedAt = (cs: Obj) => parseTime(cs.lastState?.terminated?.finishedAt) ?? 0

  let initializing = false
  const initStatuses = list(status.initContainerStatuses)
  const nInit = list(spec.initContainers).length
  for (let i = 0; i < initStatuses.length; i++) {
    const cs = initStatuses[i]
    const rc = Number(cs.restartCount ?? 0)
    restarts += rc
    lastRestart = Math.max(lastRestart, finishedAt(cs))
    if (isSidecar(cs.name)) {
      sidecarRestarts += rc
      lastSidecarRestart = Math.max(lastSidecarRestart, finishedAt(cs))
    }
    const term = cs.state?.terminated
    const waiting = cs.state?.waiting
    if (term && Number(term.exitCode ?? 0) === 0) continue
    if (isSidecar(cs.name) && cs.started === true) {
      if (cs.ready === true) readyContainers++
      continue
    }
    if (term) {
      if (!term.reason) reason = term.signal ? `Init:Signal:${term.signal}` : `Init:ExitCode:${term.exitCode ?? 0}`
      else reason = `Init:${term.reason}`
    } else if (waiting && waiting.reason && waiting.reason !== 'PodInitializing') {
      reason = `Init:${waiting.reason}`
    } else {
      reason = `Init:${i}/${nInit}`
    }
    initializing = true
    break
  }

  const initialized = conditions.some((c) => c.type === 'Initialized' && c.status === 'True')
  if (!initializing || initialized) {
    restarts = sidecarRestarts
    lastRestart = lastSidecarRestart
    let hasRunning = false
    const statuses = list(status.containerStatuses)
    for (let i = statuses.length - 1; i >= 0; i--) {
      const cs = statuses[i]
      restarts += Number(cs.restartCount ?? 0)
      lastRestart = Math.max(lastRestart, finishedAt(cs))
      const waiting = cs.state?.waiting
      const term = cs.state?.terminated
      if (waiting && waiting.reason) reason = waiting.reason
      else if (term && term.reason) reason = term.reason
      else if (term) reason = term.signal ? `Signal:${term.signal}` : `ExitCode:${term.exitCode ?? 0}`
      else if (cs.ready === true && cs.state?.running) { hasRunning = true; readyContainers++ }
    }
    if (reason === 'Completed' && hasRunning) {
      reason = conditions.some((c) => c.type === 'Ready' && c.status === 'True') ? 'Running' : 'NotReady'
    }
  }

  const deleting = o.metadata?.deletionTimestamp !== undefined && o.metadata?.deletionTimestamp !== null
  if (deleting && status.reason === 'NodeLost') reason = 'Unknown'
  else if (deleting && phase !== 'Failed' && phase !== 'Succeeded') reason = 'Terminating'

  const restartsText = restarts !== 0 && lastRestart !== 0 ? `${restarts} (${since(new Date(lastRestart).toISOString(), now)} ago)` : String(restarts)
  return { ready: `${readyContainers}/${totalContainers}`, status: reason, restarts: restartsText }
}

function podIP(o: Obj): string {
  const ips = list(o.status?.podIPs)
  if (ips.length > 0) return ips[0].ip ?? ''
  return o.status?.podIP ?? ''
}

export default defineResource({
  group: '', version: 'v1', kind: 'Pod', resource: 'pods', singular: 'pod', scope: 'Namespaced',
  verbs: ALL_VERBS,
  shortNames: ['po'],
  categories: ['all'],
  subresources: ['status'],
  virtualSubresources: [
    { name: 'attach', group: '', version: 'v1', kind: 'PodAttachOptions', verbs: ['create', 'get'] },
    { name: 'binding', group: '', version: 'v1', kind: 'Binding', verbs: ['create'] },
    { name: 'ephemeralcontainers', group: '', version: 'v1', kind: 'Pod', verbs: ['get', 'patch', 'update'] },
    { name: 'eviction', group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] },
    { name: 'exec', group: '', version: 'v1', kind: 'PodExecOptions', verbs: ['create', 'get'] },
    { name: 'log', group: '', version: 'v1', kind: 'Pod', verbs: ['get'] },
    { name: 'portforward', group: '', version: 'v1', kind: 'PodPortForwardOptions', verbs: ['create', 'get'] },
    { name: 'proxy', group: '', version: 'v1', kind: 'PodProxyOptions', verbs: ['create', 'delete', 'get', 'patch', 'update'] },
  ],
  schemaRef: 'io.orch.api.core.v1.Pod',
  // spec and status are value structs upstream (each container's resources: defaultContainer).
  zeroValues: { spec: {}, status: {} },
  strategy: {
    ...statusSplit.strategy,
    default: defaultPod,
    prepareForCreate: (o) => { o.status = { phase: 'Pending', qosClass: podQOSClass(o.spec) } },
    validate: (o) => [...validatePodSpec(o.spec, 'spec', true), ...ephemeralOnCreate(o), ...gatedNodeNameErrors(o.spec)],
    validateUpdate: (o, old) => [...validatePodSpec(o.spec, 'spec', true), ...validatePodUpdate(o, old)],
    allowUnconditionalUpdate: true,
    returnDeletedObject: true,
    nameRule: 'subdomain',
    hasGeneration: false,
  },
  status: statusSplit.status,
  ephemeralContainers: { validateUpdate: (o, old) => validateEphemeralContainersUpdate(o, old, validatePodSpec(o.spec, 'spec', true)) },
  table: [
    nameColumn(),
    { name: 'Ready', type: 'string', description: 'The aggregate readiness state of this pod for accepting traffic.', cell: (o, now) => podRow(o, now).ready },
    { name: 'Status', type: 'string', description: 'The aggregate status of the containers in this pod.', cell: (o, now) => podRow(o, now).status },
    { name: 'Restarts', type: 'string', description: 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.', cell: (o, now) => podRow(o, now).restarts },
    ageColumn(),
    { name: 'IP', type: 'string', priority: 1, description: 'podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.', cell: (o) => podIP(o) || '<none>' },
    { name: 'Node', type: 'string', priority: 1, description: 'NodeName indicates in which node this pod is scheduled.', cell: (o) => o.spec?.nodeName || '<none>' },
    { name: 'Nominated Node', type: 'string', priority: 1, description: 'nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods.', cell: (o) => o.status?.nominatedNodeName || '<none>' },
    {
      name: 'Readiness Gates', type: 'string', priority: 1, description: 'If specified, all readiness gates will be evaluated for pod readiness.',
      cell: (o) => {
        const gates = list(o.spec?.readinessGates)
        if (gates.length === 0) return '<none>'
        const conditions = list(o.status?.conditions)
        let n = 0
        for (const g of gates) {
          const c = conditions.find((x) => x.type === g.conditionType)
          if (c && c.status === 'True') n++
        }
        return `${n}/${gates.length}`
      },
    },
  ],
  // A kubelet lists and watches its node's pods: 5,000 nodes must not each scan 150,000 pods.
  indexedFields: ['spec.nodeName'],
  fieldSelectors: {
    'spec.nodeName': (o) => o.spec?.nodeName ?? '',
    // Old clients send spec.host; upstream converts it to spec.nodeName.
    'spec.host': (o) => o.spec?.nodeName ?? '',
    'spec.restartPolicy': (o) => o.spec?.restartPolicy ?? '',
    'spec.schedulerName': (o) => o.spec?.schedulerName ?? '',
    'spec.serviceAccountName': (o) => o.spec?.serviceAccountName ?? '',
    'spec.hostNetwork': (o) => String(o.spec?.hostNetwork === true),
    'status.phase': (o) => o.status?.phase ?? '',
    'status.podIP': (o) => podIP(o),
    // Upstream accepts this label but never fills it in the selectable field set, so it is always ''.
    'status.podIPs': () => '',
    'status.nominatedNodeName': (o) => o.status?.nominatedNodeName ?? '',
  },
})
