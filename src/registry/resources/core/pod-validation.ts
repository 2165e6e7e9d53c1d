// Pod spec validation in upstream ValidatePodSpec's order, for Pods and for every pod template (workloads, Jobs,
// PodTemplates, ReplicationControllers); the checks of single fields are pod-spec-checks.ts, pod-spec-scheduling.ts and
// pod-volume-devices.ts.
import type { Obj } from '../../define.js'
import { fieldDuplicate, fieldForbidden, fieldInvalid, fieldNotFound, fieldNotSupported, fieldRequired } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { labelSelectorOf, matchLabels } from '../../../machinery/selectors.js'
import { dns1123Label, dns1123Subdomain, portName, portNumber, validateAnnotations, validateLabels } from '../../../machinery/validation.js'
import { isObj, list } from './pod-fields.js'
import { parseQuantity } from './pod-qos.js'
import {
  affinityErrors, dnsConfigErrors, envErrors, envFromErrors, hostNetworkErrors, hostPortConflictErrors, lifecycleErrors,
  podSecurityContextErrors, probeErrors, securityContextErrors, volumeMountErrors, MAX_INT32, type ProbeKind,
} from './pod-spec-checks.js'
import { hostAliasErrors, placementErrors, runtimeClassNameErrors } from './pod-spec-scheduling.js'
import { volumeDeviceErrors } from './pod-volume-devices.js'
import { validateTolerations } from './taints.js'

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

