// Pod (v1): its definition, defaulting and table. The pod spec validation (for Pods and every pod template) is
// pod-validation.ts, quantities and the QoS class pod-qos.ts.
import { defineResource, ALL_VERBS, statusSplit } from '../../define.js'
import type { Obj } from '../../define.js'
import { fieldForbidden } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { ageColumn, nameColumn, parseTime, since } from '../_printers.js'
import { validateEphemeralContainersUpdate, validatePodUpdate } from './pod-update.js'
import { gatedNodeNameErrors } from './pod-spec-scheduling.js'
import { isObj, list } from './pod-fields.js'
import { podQOSClass } from './pod-qos.js'
import { validatePodSpec } from './pod-validation.js'

// ---- defaulting (upstream pkg/apis/core/v1/defaults.go) ----

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
