// The connect sub-resources (pods/log, exec, attach, portforward, proxy; services/proxy; nodes/proxy): what upstream
// decides before it dials a kubelet or a pod, answered as upstream does; past that point, a 503 naming what this server
// cannot reach, since it runs no kubelets and proxies to no node or pod.
import { badRequest, invalid, methodNotAllowed, notFound, serviceUnavailable, fieldForbidden, fieldInvalid, type FieldError } from '../machinery/errors.js'
import type { Obj, ResolvedDefinition } from '../registry/define.js'
import { gr, keyFor, parseStored, registry, shardOfDef, store } from './dispatch.js'
import { admitPolicyOnly } from '../admission/chain.js'
import type { RequestContext, Response } from './context.js'

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : [])

/** The connect sub-resources by parent resource (core group), and the verbs each serves. */
const CONNECT: Record<string, Record<string, string[]>> = {
  pods: { log: ['get'], exec: ['get', 'create'], attach: ['get', 'create'], portforward: ['get', 'create'], proxy: ['get', 'create', 'update', 'patch', 'delete'] },
  services: { proxy: ['get', 'create', 'update', 'patch', 'delete'] },
  nodes: { proxy: ['get', 'create', 'update', 'patch', 'delete'] },
}

/** The connect sub-resource a request is for (`proxy/a/b` is proxy), or undefined. */
export function connectSubresource(def: ResolvedDefinition, subresource: string): string | undefined {
  if (def.group !== '' || subresource === '') return undefined
  const subs = CONNECT[def.resource]
  if (!subs) return undefined
  const first = subresource.split('/')[0]
  if (first !== subresource && first !== 'proxy') return undefined
  return Object.prototype.hasOwnProperty.call(subs, first) ? first : undefined
}

export async function connect(ctx: RequestContext, def: ResolvedDefinition, sub: string): Promise<Response> {
  const i = ctx.info
  const verbs = CONNECT[def.resource][sub]
  // HEAD and OPTIONS reach only a proxy (upstream registers them for proxy paths alone).
  const verb = ctx.method === 'HEAD' || ctx.method === 'OPTIONS' ? (sub === 'proxy' ? 'get' : '') : i.verb
  if (!verbs.includes(verb)) throw methodNotAllowed()
  if (i.name === '') throw notFound(gr(def), '')
  // As upstream's connect handler: admission (CONNECT, the options as the object) before the connection is set up;
  // pods/log is a read, not a connect.
  if (sub !== 'log') {
    const admitted = admitPolicyOnly(ctx, def, 'CONNECT', { group: '', version: 'v1', kind: CONNECT_KINDS[`${def.resource}/${sub}`] }, connectOptions(ctx, def, sub), undefined, null)
    if (admitted) await admitted
  }
  if (def.resource === 'pods') {
    switch (sub) {
      case 'log': return podLog(ctx, def)
      case 'exec': case 'attach': return podStream(ctx, def, sub)
      case 'portforward': return podPortForward(ctx, def)
      default: return podProxy(ctx, def)
    }
  }
  if (def.resource === 'services') return serviceProxy(ctx, def)
  return nodeProxy(ctx)
}

/** The kind of each connect sub-resource's options. */
const CONNECT_KINDS: Record<string, string> = {
  'pods/exec': 'PodExecOptions', 'pods/attach': 'PodAttachOptions', 'pods/portforward': 'PodPortForwardOptions',
  'pods/proxy': 'PodProxyOptions', 'services/proxy': 'ServiceProxyOptions', 'nodes/proxy': 'NodeProxyOptions',
}

/** A boolean query option as upstream's parameter codec reads it (strconv.ParseBool); absent or unreadable is false. */
function boolOption(ctx: RequestContext, name: string): boolean {
  return ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(ctx.query.get(name) ?? '')
}

/** The options a connect request carries (upstream decodes them from the query), as admission sees them. */
function connectOptions(ctx: RequestContext, def: ResolvedDefinition, sub: string): Obj {
  const o: Obj = { kind: CONNECT_KINDS[`${def.resource}/${sub}`], apiVersion: 'v1' }
  if (sub === 'exec' || sub === 'attach') {
    for (const k of ['stdin', 'stdout', 'stderr', 'tty']) if (boolOption(ctx, k)) o[k] = true
    const container = ctx.query.get('container')
    if (container) o.container = container
    if (sub === 'exec') o.command = ctx.query.getAll('command')
  } else if (sub === 'portforward') {
    const ports = ctx.query.getAll('ports').filter((p) => /^\d+$/.test(p)).map(Number)
    if (ports.length > 0) o.ports = ports
  } else {
    const slash = ctx.info.subresource.indexOf('/')
    const path = slash < 0 ? '' : ctx.info.subresource.slice(slash + 1)
    if (path !== '') o.path = path
  }
  return o
}

function read(def: ResolvedDefinition, namespace: string, name: string): Obj {
  const rec = store.getFresh(shardOfDef(def), keyFor(def, def.scope === 'Namespaced' ? namespace : '', name))
  if (!rec) throw notFound(gr(def), name)
  return parseStored(rec)
}

function containerNames(spec: Obj): string[] {
  return [...list(spec.initContainers), ...list(spec.containers), ...list(spec.ephemeralContainers)].map((c) => String(c.name ?? ''))
}

/**
 * The container a request names, or the pod's only container (upstream validateContainer); upstream's texts, the list
 * printed as Go prints a string slice.
 */
function containerOf(pod: Obj, asked: string): string {
  const spec: Obj = isObj(pod.spec) ? pod.spec : {}
  const name = pod.metadata.name
  if (asked === '') {
    const containers = list(spec.containers)
    if (containers.length === 1) return String(containers[0].name ?? '')
    if (containers.length === 0) throw badRequest(`a container name must be specified for pod ${name}`)
    throw badRequest(`a container name must be specified for pod ${name}, choose one of: [${containerNames(spec).join(' ')}]`)
  }
  if (!containerNames(spec).includes(asked)) throw badRequest(`container ${asked} is not valid for pod ${name}`)
  return asked
}

/** The node a pod runs on must exist (upstream GetConnectionInfo reads it); then it cannot be reached from here. */
function unreachableNode(nodeName: string, what: string): never {
  const nodes = registry.byGroupResource('', 'nodes')!
  read(nodes, '', nodeName)
  throw serviceUnavailable(`cannot reach the kubelet of node "${nodeName}": this API server does not connect to kubelets, so ${what} is not available`)
}

function nodeOf(pod: Obj): string {
  const n = pod.spec?.nodeName
  return typeof n === 'string' ? n : ''
}

/** An integer query option as upstream's parameter codec reads it: absent is undefined, a non-integer is 400. */
function intOption(ctx: RequestContext, name: string): number | undefined {
  const v = ctx.query.get(name)
  if (v === null) return undefined
  if (!/^[+-]?\d+$/.test(v)) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`)
  return Number(v)
}

/** upstream ValidatePodLogOptions. */
function logOptionErrors(ctx: RequestContext): FieldError[] {
  const errs: FieldError[] = []
  const tail = intOption(ctx, 'tailLines')
  if (tail !== undefined && tail < 0) errs.push(fieldInvalid('tailLines', tail, 'must be greater than or equal to 0'))
  const limit = intOption(ctx, 'limitBytes')
  if (limit !== undefined && limit < 1) errs.push(fieldInvalid('limitBytes', limit, 'must be greater than 0'))
  const since = intOption(ctx, 'sinceSeconds')
  const sinceTime = ctx.query.get('sinceTime')
  if (since !== undefined && sinceTime !== null) errs.push(fieldForbidden('', 'at most one of `sinceTime` or `sinceSeconds` may be specified'))
  else if (since !== undefined && since < 1) errs.push(fieldInvalid('sinceSeconds', since, 'must be greater than 0'))
  return errs
}

/**
 * pods/log: options checked first, then the pod and its container; a pod without a node has no log yet, which upstream
 * answers with an empty 204.
 */
function podLog(ctx: RequestContext, def: ResolvedDefinition): Response {
  const errs = logOptionErrors(ctx)
  if (errs.length > 0) throw invalid('PodLogOptions', '', 'PodLogOptions', ctx.info.name, errs)
  const pod = read(def, ctx.info.namespace, ctx.info.name)
  containerOf(pod, ctx.query.get('container') ?? '')
  const node = nodeOf(pod)
  if (node === '') return { status: 204, body: '', contentType: 'text/plain', headers: ctx.responseHeaders }
  unreachableNode(node, 'pods/log')
}

function podStream(ctx: RequestContext, def: ResolvedDefinition, sub: 'exec' | 'attach'): Response {
  const pod = read(def, ctx.info.namespace, ctx.info.name)
  containerOf(pod, ctx.query.get('container') ?? '')
  const node = nodeOf(pod)
  if (node === '') throw badRequest(`pod ${ctx.info.name} does not have a host assigned`)
  unreachableNode(node, `pods/${sub}`)
}

function podPortForward(ctx: RequestContext, def: ResolvedDefinition): Response {
  const pod = read(def, ctx.info.namespace, ctx.info.name)
  const node = nodeOf(pod)
  if (node === '') throw badRequest(`pod ${ctx.info.name} does not have a host assigned`)
  unreachableNode(node, 'pods/portforward')
}

/** `name`, `name:port` or `scheme:name:port` (upstream SplitSchemeNamePort); undefined when malformed. */
function splitSchemeNamePort(id: string): { name: string; port: string } | undefined {
  const parts = id.split(':')
  if (parts.length === 1) return parts[0] === '' ? undefined : { name: parts[0], port: '' }
  if (parts.length === 2) return parts[0] === '' ? undefined : { name: parts[0], port: parts[1] }
  if (parts.length === 3 && (parts[0] === 'http' || parts[0] === 'https' || parts[0] === '') && parts[1] !== '') return { name: parts[1], port: parts[2] }
  return undefined
}

/** Whether an address is a global unicast IP (what upstream proxies to): not unspecified, loopback, link-local or multicast. */
function globalUnicast(ip: string): boolean {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip)
  if (v4) {
    const b = v4.slice(1).map(Number)
    if (b.some((x) => x > 255)) return false
    if (b.every((x) => x === 0) || b[0] === 127 || (b[0] === 169 && b[1] === 254) || b[0] >= 224) return false
    return true
  }
  if (!ip.includes(':') || !/^[0-9a-fA-F:.]+$/.test(ip)) return false
  const l = ip.toLowerCase()
  return !(l === '::' || l === '::1' || l.startsWith('fe8') || l.startsWith('fe9') || l.startsWith('fea') || l.startsWith('feb') || l.startsWith('ff'))
}

/** pods/proxy goes from this server to the pod's IP; a pod without a usable IP is upstream's 400. */
function podProxy(ctx: RequestContext, def: ResolvedDefinition): Response {
  const id = splitSchemeNamePort(ctx.info.name)
  if (!id) throw badRequest(`invalid pod request ${JSON.stringify(ctx.info.name)}`)
  const pod = read(def, ctx.info.namespace, id.name)
  let port = id.port
  if (port === '') for (const c of list(pod.spec?.containers)) { const p = list(c.ports)[0]; if (p) { port = String(p.containerPort); break } }
  const ips = list(pod.status?.podIPs)
  const ip = String(ips[0]?.ip ?? '')
  if (!globalUnicast(ip)) throw badRequest('address not allowed')
  throw serviceUnavailable(`cannot reach pod "${id.name}" at ${port === '' ? ip : `${ip}:${port}`}: this API server does not proxy to pods`)
}

/**
 * services/proxy picks an address from the service's Endpoints (upstream's service ResourceLocation): a port number must
 * be one of the service's ports, the Endpoints must exist and hold an address on the named port.
 */
function serviceProxy(ctx: RequestContext, def: ResolvedDefinition): Response {
  const id = splitSchemeNamePort(ctx.info.name)
  if (!id) throw badRequest(`invalid service request ${JSON.stringify(ctx.info.name)}`)
  let portName = id.port
  if (/^[+-]?\d+$/.test(id.port)) {
    const svc = read(def, ctx.info.namespace, id.name)
    const p = list(svc.spec?.ports).find((x) => x.port === Number(id.port))
    if (!p) throw serviceUnavailable(`no service port ${Number(id.port)} found for service ${JSON.stringify(id.name)}`)
    portName = String(p.name ?? '')
  }
  const endpoints = read(registry.byGroupResource('', 'endpoints')!, ctx.info.namespace, id.name)
  const subsets = list(endpoints.subsets)
  if (subsets.length === 0) throw serviceUnavailable(`no endpoints available for service ${JSON.stringify(id.name)}`)
  const usable = subsets.some((s) => list(s.addresses).length > 0 && list(s.ports).some((p) => String(p.name ?? '') === portName))
  if (!usable) throw serviceUnavailable(`no endpoints available for service ${JSON.stringify(ctx.info.name)}`)
  throw serviceUnavailable(`cannot reach the endpoints of service "${id.name}": this API server does not proxy to services`)
}

/** nodes/proxy goes to the node's kubelet: the node must exist. */
function nodeProxy(ctx: RequestContext): Response {
  const id = splitSchemeNamePort(ctx.info.name)
  if (!id) throw badRequest(`invalid node request ${JSON.stringify(ctx.info.name)}`)
  unreachableNode(id.name, 'nodes/proxy')
}
