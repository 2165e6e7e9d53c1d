// Cluster IPs and node ports of services, as kube-apiserver's service REST allocates them (its beginCreate,
// beginUpdate and afterDelete): the IP family fields, then the addresses and ports, taken from allocation maps that
// every thread shares (SharedBitmap over SharedArrayBuffers the main thread makes and fills from the stored services
// before any front-end serves). A write takes what it needs before its checks and gives it back unless it commits;
// what an update or a delete frees is given back once the write is committed.
import { SharedBitmap } from '../machinery/shared-bitmap.js'
import { ipv4Number, ipv4String, parseNodePortRange, parseServiceIPRange, type NodePortRange, type ServiceIPRange } from '../machinery/service-ranges.js'
import { fieldInvalid, goStringSlice, internal, invalid, type FieldError } from '../machinery/errors.js'
import type { Obj, ResolvedDefinition } from '../registry/define.js'
import { isHeadless, needsClusterIP, needsHealthCheck, needsNodePort, nodePortsOf, validateClusterIPsRelatedFields } from '../registry/resources/core/services.js'
import type { RequestContext } from './context.js'

/** What a thread needs to allocate: the two flags' values and the shared maps. */
export interface ServiceAllocationData {
  ipRange: string
  portRange: string
  ipBits: SharedArrayBuffer
  portBits: SharedArrayBuffer
}

/** What a write took and what it will free: settled once, when the write is committed or not. */
export interface Allocation { commit(): void; revert(): void }

interface Maps { ip: ServiceIPRange; ipMap: SharedBitmap; ports: NodePortRange; portMap: SharedBitmap }

let servicesDef: ResolvedDefinition | undefined
let maps: Maps | undefined

/** The shared allocation maps of a range (made by the main thread, one pair per process). */
export function allocationBuffers(ip: ServiceIPRange, ports: NodePortRange): { ipBits: SharedArrayBuffer; portBits: SharedArrayBuffer } {
  return { ipBits: new SharedArrayBuffer(SharedBitmap.bytesFor(ip.max)), portBits: new SharedArrayBuffer(SharedBitmap.bytesFor(ports.size)) }
}

function mapsOf(data: ServiceAllocationData): Maps {
  const ip = parseServiceIPRange(data.ipRange)
  const ports = parseNodePortRange(data.portRange)
  return { ip, ipMap: new SharedBitmap(data.ipBits, ip.max), ports, portMap: new SharedBitmap(data.portBits, ports.size) }
}

export function configureServiceAllocation(def: ResolvedDefinition | undefined, data: ServiceAllocationData): void {
  servicesDef = def
  maps = mapsOf(data)
}

/** Whether writes of this kind allocate (a pointer comparison: every other kind pays nothing more). */
export function allocates(def: ResolvedDefinition): boolean { return def === servicesDef }

/** The Service the API server keeps for itself, which alone holds the range's first address. */
function isApiServerService(o: Obj): boolean {
  return o.metadata?.namespace === 'default' && o.metadata?.name === 'kubernetes'
}

// ---- the transaction of one write ----

const ADDRESS = 0
const PORT = 1

/**
 * What one write took and what it frees on commit, as upstream's metaTransaction of an IP transaction and a
 * PortAllocationOperation. A dry run takes nothing: an address it would allocate is the range's network address, a
 * port it would allocate counts up from 32769, a port asked for is refused only when taken (upstream's dry-run
 * allocators).
 */
class Txn implements Allocation {
  readonly dry: boolean
  readonly #m: Maps
  /** [kind, member] pairs taken by this write. */
  #taken: number[] = []
  /** [kind, member] pairs to free when the write is committed. */
  #freed: number[] = []
  /** Ports a dry run would have taken. */
  #dryPorts: number[] = []
  #settled = false

  constructor(m: Maps, dry: boolean) { this.#m = m; this.dry = dry }

  commit(): void {
    if (this.#settled) return
    this.#settled = true
    if (!this.dry) give(this.#m, this.#freed)
  }

  revert(): void {
    if (this.#settled) return
    this.#settled = true
    if (!this.dry) give(this.#m, this.#taken)
  }

  /** Takes `ip` (a valid IP string); the error text of upstream's Allocate, or undefined. */
  takeIP(ip: string, owner: Obj): string | undefined {
    const m = this.#m
    const n = ipv4Number(ip)
    const member = n === undefined ? -1 : n - m.ip.base
    if (!(member >= 0 && member < m.ip.max)) return `the provided IP (${n === undefined ? ip : ipv4String(n)}) is not in the valid range. The range of valid IPs is ${m.ip.cidr}`
    if (this.dry) return undefined
    // The first address is the API server's own Service's: it holds it without taking it (it is reserved for good).
    if (member === 0 && isApiServerService(owner)) return undefined
    if (!m.ipMap.take(member)) return 'provided IP is already allocated'
    this.#taken.push(ADDRESS, member)
    return undefined
  }

  /** A free address from the dynamic band first (KEP-3070), then the static one; undefined when the range is full. */
  nextIP(): string | undefined {
    const m = this.#m
    if (this.dry) return ipv4String(m.ip.network)
    const { offset, max } = m.ip
    let member = m.ipMap.takeIn(offset, max, offset + Math.floor(Math.random() * (max - offset)))
    if (member < 0 && offset > 0) member = m.ipMap.takeIn(0, offset, Math.floor(Math.random() * offset))
    if (member < 0) return undefined
    this.#taken.push(ADDRESS, member)
    return ipv4String(m.ip.base + member)
  }

  freeIPLater(ip: unknown): void {
    const n = typeof ip === 'string' ? ipv4Number(ip) : undefined
    if (n !== undefined) this.#freed.push(ADDRESS, n - this.#m.ip.base)
  }

  /** Takes `port`; the error text of upstream's port allocator, or undefined. */
  takePort(port: number): string | undefined {
    const m = this.#m
    const member = port - m.ports.base
    if (this.dry) {
      if (m.portMap.has(member) || this.#dryPorts.includes(port)) return 'provided port is already allocated'
      this.#dryPorts.push(port)
      return undefined
    }
    if (!(Number.isInteger(port) && member >= 0 && member < m.ports.size)) return `provided port is not in the valid range. The range of valid ports is ${m.ports.text}`
    if (!m.portMap.take(member)) return 'provided port is already allocated'
    this.#taken.push(PORT, member)
    return undefined
  }

  /** A free port from the dynamic band first (KEP-3668), then the static one; undefined when the range is full. */
  nextPort(): number | undefined {
    const m = this.#m
    if (this.dry) {
      const port = (this.#dryPorts.length === 0 ? 32768 : Math.max(...this.#dryPorts)) + 1
      this.#dryPorts.push(port)
      return port
    }
    const { offset, size } = m.ports
    let member = m.portMap.takeIn(offset, size, offset + Math.floor(Math.random() * (size - offset)))
    if (member < 0 && offset > 0) member = m.portMap.takeIn(0, offset, Math.floor(Math.random() * offset))
    if (member < 0) return undefined
    this.#taken.push(PORT, member)
    return m.ports.base + member
  }

  freePortLater(port: number): void { this.#freed.push(PORT, port - this.#m.ports.base) }
}

/** Gives back [kind, member] pairs. The first address stays reserved whatever a service held. */
function give(m: Maps, pairs: number[]): void {
  for (let i = 0; i < pairs.length; i += 2) {
    if (pairs[i] === ADDRESS) { if (pairs[i + 1] !== 0) m.ipMap.release(pairs[i + 1]) } else m.portMap.release(pairs[i + 1])
  }
}

const NOTHING: Allocation = { commit() {}, revert() {} }

// ---- helpers on specs ----

function listOf(v: unknown): any[] { return Array.isArray(v) ? v : [] }
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)
const sameList = (a: unknown, b: unknown): boolean => {
  const x = listOf(a)
  const y = listOf(b)
  return x.length === y.length && x.every((v, i) => v === y[i])
}
const hasSelector = (spec: Obj): boolean => isObj(spec.selector) && Object.keys(spec.selector).length > 0
const familyOf = (ip: string): string => (ipv4Number(ip) !== undefined ? 'IPv4' : ip.includes(':') ? 'IPv6' : 'unknown')

function fail(o: Obj, errs: FieldError[]): never {
  throw invalid('Service', '', 'Service', String(o.metadata?.name ?? ''), errs)
}

/** upstream's normalizeClusterIPs: keep clusterIP and clusterIPs in step for clients that set only the first. */
function normalizeClusterIPs(spec: Obj, old: Obj | undefined): void {
  const ip = typeof spec.clusterIP === 'string' ? spec.clusterIP : ''
  const ips = listOf(spec.clusterIPs)
  if (old === undefined) {
    if (ip !== '' && ips.length === 0) spec.clusterIPs = [ip]
    return
  }
  const oldIP = typeof old.clusterIP === 'string' ? old.clusterIP : ''
  if (listOf(old.clusterIPs).length > 0 && ips.length === 0 && oldIP === ip) spec.clusterIPs = [...old.clusterIPs]
  if (oldIP !== ip) {
    if (oldIP !== '' && ip === '') {
      if (sameList(old.clusterIPs, spec.clusterIPs)) delete spec.clusterIPs
    } else if (sameList(old.clusterIPs, spec.clusterIPs)) {
      spec.clusterIPs = [ip]
    }
  }
}

/** upstream's defaultOnRead for the stored object of an update: clusterIPs and the IP family fields an older writer left out. */
function storedSpec(old: Obj): Obj {
  const spec: Obj = { ...(isObj(old.spec) ? old.spec : {}) }
  normalizeClusterIPs(spec, undefined)
  if (needsClusterIP(spec) && listOf(spec.ipFamilies).length === 0) {
    if (spec.clusterIP === 'None') {
      if (!hasSelector(spec)) { spec.ipFamilyPolicy = 'RequireDualStack'; spec.ipFamilies = ['IPv4', 'IPv6'] } else { spec.ipFamilyPolicy = 'SingleStack'; spec.ipFamilies = ['IPv4'] }
    } else {
      const ips = listOf(spec.clusterIPs)
      spec.ipFamilies = ips.map((ip) => (typeof ip === 'string' && ip.includes(':') ? 'IPv6' : 'IPv4'))
      if (ips.length === 1) spec.ipFamilyPolicy = 'SingleStack'
      else if (ips.length === 2) spec.ipFamilyPolicy = 'RequireDualStack'
    }
  }
  return spec
}

/** upstream's patchAllocatedValues: an update that leaves out what was allocated keeps it (a resubmitted manifest works). */
function patchAllocatedValues(spec: Obj, old: Obj): void {
  if (needsClusterIP(old) && needsClusterIP(spec)) {
    if ((spec.clusterIP === undefined || spec.clusterIP === '') && old.clusterIP !== undefined) spec.clusterIP = old.clusterIP
    if (listOf(spec.clusterIPs).length === 0 && listOf(old.clusterIPs).length > 0) spec.clusterIPs = [...old.clusterIPs]
  }
  if (needsNodePort(old) && needsNodePort(spec)) {
    const inNew = new Set(nodePortsOf(spec))
    const used = new Set(nodePortsOf(old).filter((p) => inNew.has(p)))
    const byName = new Map<string, number>()
    for (const p of listOf(old.ports)) if (isObj(p)) byName.set(p.name ?? '', typeof p.nodePort === 'number' ? p.nodePort : 0)
    for (const p of listOf(spec.ports)) {
      if (!isObj(p) || (p.nodePort ?? 0) !== 0) continue
      const was = byName.get(p.name ?? '') ?? 0
      if (was !== 0 && !used.has(was)) p.nodePort = was
    }
  }
  if (needsHealthCheck(old) && needsHealthCheck(spec) && (spec.healthCheckNodePort ?? 0) === 0 && old.healthCheckNodePort !== undefined) {
    spec.healthCheckNodePort = old.healthCheckNodePort
  }
}

/** upstream's isMatchingPreferDualStackClusterIPFields: an unchanged PreferDualStack service is left as it is. */
function unchangedPreferDualStack(spec: Obj, old: Obj | undefined): boolean {
  if (old === undefined || spec.ipFamilyPolicy === undefined || old.type !== spec.type) return false
  if (spec.type !== 'ClusterIP' && spec.type !== 'NodePort' && spec.type !== 'LoadBalancer') return false
  if (spec.ipFamilyPolicy !== 'PreferDualStack') return false
  if (old.ipFamilyPolicy !== undefined && old.ipFamilyPolicy !== 'PreferDualStack') return false
  return sameList(old.clusterIPs, spec.clusterIPs) && sameList(old.ipFamilies, spec.ipFamilies)
}

/**
 * upstream's initIPFamilyFields on a single-stack IPv4 cluster: ipFamilyPolicy defaults (SingleStack; the old policy on
 * update; RequireDualStack for a headless service without selector), ipFamilies follow the cluster IPs, and what the
 * cluster cannot give (IPv6, dual-stack) is refused.
 */
function initIPFamilyFields(o: Obj, spec: Obj, old: Obj | undefined): void {
  if (spec.type === 'ExternalName' || unchangedPreferDualStack(spec, old)) return
  const headlessNoSelector = spec.clusterIP === 'None' && !hasSelector(spec)
  if (spec.ipFamilyPolicy === undefined) {
    if (old?.ipFamilyPolicy !== undefined) spec.ipFamilyPolicy = old.ipFamilyPolicy
    else spec.ipFamilyPolicy = headlessNoSelector ? 'RequireDualStack' : 'SingleStack'
  }
  const pre = validateClusterIPsRelatedFields(spec)
  if (pre.length > 0) fail(o, pre)
  const errs: FieldError[] = []
  const policy = spec.ipFamilyPolicy
  if (old !== undefined) {
    if (policy === 'SingleStack') {
      if (sameList(old.clusterIPs, spec.clusterIPs) && listOf(spec.clusterIPs).length > 1) spec.clusterIPs = spec.clusterIPs.slice(0, 1)
      if (sameList(old.ipFamilies, spec.ipFamilies) && listOf(spec.ipFamilies).length > 1) spec.ipFamilies = spec.ipFamilies.slice(0, 1)
    } else {
      if (listOf(spec.clusterIPs).length > 0 && listOf(spec.clusterIPs).length < listOf(old.clusterIPs).length) errs.push(fieldInvalid('spec.ipFamilyPolicy', policy, "must be 'SingleStack' to release the secondary cluster IP"))
      if (listOf(spec.ipFamilies).length > 0 && listOf(spec.ipFamilies).length < listOf(old.ipFamilies).length) errs.push(fieldInvalid('spec.ipFamilyPolicy', policy, "must be 'SingleStack' to release the secondary IP family"))
    }
  }
  const ips = listOf(spec.clusterIPs)
  if (policy === 'SingleStack') {
    if (ips.length === 2) errs.push(fieldInvalid('spec.ipFamilyPolicy', policy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"))
    if (listOf(spec.ipFamilies).length === 2) errs.push(fieldInvalid('spec.ipFamilyPolicy', policy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"))
  }
  for (let i = 0; i < ips.length; i++) {
    if (ips[i] === 'None') break
    const fam = familyOf(ips[i])
    if (i >= listOf(spec.ipFamilies).length) {
      if (fam !== 'IPv4') errs.push(fieldInvalid(`spec.clusterIPs[${i}]`, goStringSlice('string', ips), `${fam} is not configured on this cluster`))
      else spec.ipFamilies = [...listOf(spec.ipFamilies), fam]
    }
  }
  if (errs.length > 0) fail(o, errs)
  if (headlessNoSelector) {
    // Headless without selector: any family the endpoints may have, whatever the cluster serves.
    if (listOf(spec.ipFamilies).length === 0) spec.ipFamilies = ['IPv4']
    if (spec.ipFamilies.length < 2 && policy !== 'SingleStack') spec.ipFamilies = [...spec.ipFamilies, spec.ipFamilies[0] === 'IPv4' ? 'IPv6' : 'IPv4']
    return
  }
  if (policy === 'RequireDualStack') errs.push(fieldInvalid('spec.ipFamilyPolicy', policy, 'this cluster is not configured for dual-stack services'))
  listOf(spec.ipFamilies).forEach((f, i) => { if (f !== 'IPv4') errs.push(fieldInvalid(`spec.ipFamilies[${i}]`, f, 'not configured on this cluster')) })
  if (errs.length > 0) fail(o, errs)
  if (listOf(spec.ipFamilies).length === 0) spec.ipFamilies = ['IPv4']
}

/** upstream's allocClusterIPs: the cluster IP asked for, or a free one (none for ExternalName and headless services). */
function allocClusterIPs(o: Obj, spec: Obj, txn: Txn): void {
  if (spec.type === 'ExternalName') return
  const ips = [...listOf(spec.clusterIPs)]
  if (ips.length > 0 && ips[0] === 'None') return
  if (ips.length === 0) ips.push('')
  const asked = ips[0]
  if (asked === '') {
    const ip = txn.nextIP()
    if (ip === undefined) throw internal('failed to allocate a serviceIP: range is full')
    ips[0] = ip
  } else {
    const why = txn.takeIP(asked, o)
    if (why !== undefined) fail(o, [fieldInvalid('spec.clusterIPs', goStringSlice('string', listOf(spec.clusterIPs)), `failed to allocate IP ${asked}: ${why}`)])
  }
  spec.clusterIPs = ips
  spec.clusterIP = ips[0]
}

/** upstream's initNodePorts: a node port for each port (one per port number), the ones asked for checked. */
function initNodePorts(o: Obj, spec: Obj, txn: Txn): void {
  const ports = listOf(spec.ports)
  const byPort = new Map<unknown, number>()
  const allocate = spec.type === 'NodePort' || spec.allocateLoadBalancerNodePorts !== false
  ports.forEach((p, i) => {
    if (!isObj(p)) return
    const own = typeof p.nodePort === 'number' ? p.nodePort : 0
    if (own === 0 && !allocate) return
    const given = byPort.get(p.port) ?? 0
    if (given === 0) {
      // The first port of this number that asks for a node port decides it for all of them.
      const asked = ports.find((q) => isObj(q) && q.port === p.port && typeof q.nodePort === 'number' && q.nodePort !== 0)?.nodePort ?? 0
      if (asked !== 0) {
        const why = txn.takePort(asked)
        if (why !== undefined) fail(o, [fieldInvalid(`spec.ports[${i}].nodePort`, asked, why)])
        p.nodePort = asked
        byPort.set(p.port, asked)
      } else {
        const port = txn.nextPort()
        if (port === undefined) throw internal('failed to allocate a nodePort: range is full')
        p.nodePort = port
        byPort.set(p.port, port)
      }
    } else if (own !== given) {
      if (own === 0) p.nodePort = given
      else {
        const why = txn.takePort(own)
        if (why !== undefined) fail(o, [fieldInvalid(`spec.ports[${i}].nodePort`, own, why)])
      }
    }
  })
}

/** upstream's allocHealthCheckNodePort (its errors are internal ones). */
function allocHealthCheckNodePort(spec: Obj, txn: Txn): void {
  const asked = typeof spec.healthCheckNodePort === 'number' ? spec.healthCheckNodePort : 0
  if (asked !== 0) {
    const why = txn.takePort(asked)
    if (why !== undefined) throw internal(`failed to allocate requested HealthCheck NodePort ${asked}: ${why}`)
    return
  }
  const port = txn.nextPort()
  if (port === undefined) throw internal('failed to allocate a HealthCheck NodePort 0: range is full')
  spec.healthCheckNodePort = port
}

/** upstream's updateNodePorts: ports kept from the stored object stay, new ones are taken, dropped ones freed on commit. */
function updateNodePorts(o: Obj, spec: Obj, old: Obj, txn: Txn): void {
  const oldPorts = nodePortsOf(old)
  const taken = new Set<number>()
  const seen = new Set<string>()
  const allocate = spec.type === 'NodePort' || spec.allocateLoadBalancerNodePorts !== false
  listOf(spec.ports).forEach((p, i) => {
    if (!isObj(p)) return
    let np = typeof p.nodePort === 'number' ? p.nodePort : 0
    if (np === 0 && !allocate) return
    if (np !== 0) {
      if (!oldPorts.includes(np) && !taken.has(np)) {
        const why = txn.takePort(np)
        if (why !== undefined) fail(o, [fieldInvalid(`spec.ports[${i}].nodePort`, np, why)])
        taken.add(np)
      }
    } else {
      const port = txn.nextPort()
      if (port === undefined) throw internal('failed to allocate a nodePort: range is full')
      p.nodePort = np = port
    }
    const key = `${p.protocol} ${np}`
    if (seen.has(key)) throw internal(`duplicate nodePort: {${key}}`)
    seen.add(key)
  })
  const now = new Set(nodePortsOf(spec))
  for (const p of oldPorts) if (!now.has(p)) txn.freePortLater(p)
}

// ---- the hooks of the storage stage ----

/** Whether the request is a dry run (its values were checked by the write's first stage). */
function dryRunOf(ctx: RequestContext): boolean {
  for (const v of ctx.query.getAll('dryRun')) if (v !== '') return true
  return false
}

/**
 * upstream's beginCreate: the IP family fields, a cluster IP, node ports and a health-check node port as the type needs
 * them. Throws the error to answer (having given back what it took); the Allocation is settled by the write.
 */
export function allocateCreate(ctx: RequestContext, o: Obj): Allocation {
  if (maps === undefined) return NOTHING
  if (!isObj(o.spec)) o.spec = {}
  const spec = o.spec
  normalizeClusterIPs(spec, undefined)
  initIPFamilyFields(o, spec, undefined)
  const txn = new Txn(maps, dryRunOf(ctx))
  try {
    allocClusterIPs(o, spec, txn)
    if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') initNodePorts(o, spec, txn)
    if (needsHealthCheck(spec)) allocHealthCheckNodePort(spec, txn)
  } catch (err) {
    txn.revert()
    throw err
  }
  return txn
}

/**
 * upstream's beginUpdate: what the client left out of the allocated values is kept, a type change takes or frees a
 * cluster IP (to and from ExternalName) and node ports, a health-check node port follows externalTrafficPolicy.
 */
export function allocateUpdate(ctx: RequestContext, o: Obj, stored: Obj): Allocation {
  if (maps === undefined) return NOTHING
  if (!isObj(o.spec)) o.spec = {}
  const spec = o.spec
  const old = storedSpec(stored)
  patchAllocatedValues(spec, old)
  normalizeClusterIPs(spec, old)
  initIPFamilyFields(o, spec, old)
  const txn = new Txn(maps, dryRunOf(ctx))
  try {
    if (!unchangedPreferDualStack(spec, old)) {
      if (old.type === 'ExternalName' && spec.type !== 'ExternalName') allocClusterIPs(o, spec, txn)
      else if (!isHeadless(old) && old.type !== 'ExternalName' && spec.type === 'ExternalName') for (const ip of listOf(old.clusterIPs)) txn.freeIPLater(ip)
    }
    if ((old.type === 'NodePort' || old.type === 'LoadBalancer') && (spec.type === 'ExternalName' || spec.type === 'ClusterIP')) {
      for (const p of nodePortsOf(old)) txn.freePortLater(p)
    }
    if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') updateNodePorts(o, spec, old, txn)
    const had = needsHealthCheck(old)
    const needs = needsHealthCheck(spec)
    if (!had && needs) allocHealthCheckNodePort(spec, txn)
    else if (had && !needs && typeof old.healthCheckNodePort === 'number' && old.healthCheckNodePort !== 0) txn.freePortLater(old.healthCheckNodePort)
  } catch (err) {
    txn.revert()
    throw err
  }
  return txn
}

/** What a service holds: its cluster IPs, node ports and health-check node port (upstream's releaseAllocatedResources). */
function heldBy(m: Maps, spec: Obj): number[] {
  const pairs: number[] = []
  if (spec.type !== 'ExternalName' && !isHeadless(spec)) {
    const ips = listOf(spec.clusterIPs).length > 0 ? listOf(spec.clusterIPs) : [spec.clusterIP]
    for (const ip of ips) {
      const n = typeof ip === 'string' ? ipv4Number(ip) : undefined
      if (n !== undefined && n - m.ip.base >= 0 && n - m.ip.base < m.ip.max) pairs.push(ADDRESS, n - m.ip.base)
    }
  }
  const ports = nodePortsOf(spec)
  if (needsHealthCheck(spec) && typeof spec.healthCheckNodePort === 'number' && spec.healthCheckNodePort > 0) ports.push(spec.healthCheckNodePort)
  for (const p of ports) if (p - m.ports.base >= 0 && p - m.ports.base < m.ports.size) pairs.push(PORT, p - m.ports.base)
  return pairs
}

/** upstream's afterDelete: a removed service gives back what it held (call once its removal is committed). */
export function releaseService(o: Obj): void {
  if (maps === undefined || !isObj(o.spec)) return
  give(maps, heldBy(maps, o.spec))
}

/**
 * An update that removes the object (its last finalizer gone): what the update took goes back, and once the removal
 * is committed, what the stored object held.
 */
export function removalOf(prev: Allocation | undefined, stored: Obj): Allocation {
  return {
    commit() { prev?.revert(); releaseService(stored) },
    revert() { prev?.revert() },
  }
}

/** Settles the allocation of a write: commit when it was stored, revert otherwise. Costs nothing for other kinds. */
export function settleAllocation(ctx: RequestContext, stored: boolean): void {
  const a = ctx.allocation
  if (a === undefined) return
  ctx.allocation = undefined
  if (stored) a.commit()
  else a.revert()
}

// ---- the start of the process ----

/**
 * Fills the shared maps from the stored services before any front-end serves (the main thread, once): the range's
 * first address is reserved, then each service's addresses and ports are marked. Returns what was found held twice
 * or outside the ranges (a range changed between runs), for the log.
 */
export function fillAllocationMaps(data: ServiceAllocationData, services: Iterable<Obj>): { services: number; conflicts: string[]; outside: string[] } {
  const m = mapsOf(data)
  m.ipMap.take(0)
  const conflicts: string[] = []
  const outside: string[] = []
  let count = 0
  for (const o of services) {
    count++
    if (!isObj(o.spec)) continue
    const id = `${o.metadata?.namespace}/${o.metadata?.name}`
    const spec = o.spec
    const pairs = heldBy(m, spec)
    for (let i = 0; i < pairs.length; i += 2) {
      const [kind, member] = [pairs[i], pairs[i + 1]]
      const what = kind === ADDRESS ? ipv4String(m.ip.base + member) : String(m.ports.base + member)
      if (kind === ADDRESS && member === 0) { if (!isApiServerService(o)) conflicts.push(`${id}: ${what}`); continue }
      if (!(kind === ADDRESS ? m.ipMap : m.portMap).take(member)) conflicts.push(`${id}: ${what}`)
    }
    if (spec.type !== 'ExternalName' && !isHeadless(spec)) {
      for (const ip of listOf(spec.clusterIPs)) {
        const n = typeof ip === 'string' ? ipv4Number(ip) : undefined
        if (n === undefined || n - m.ip.base < 0 || n - m.ip.base >= m.ip.max) outside.push(`${id}: ${ip}`)
      }
    }
    for (const p of nodePortsOf(spec)) if (p - m.ports.base < 0 || p - m.ports.base >= m.ports.size) outside.push(`${id}: ${p}`)
  }
  return { services: count, conflicts, outside }
}
