// The authz actor: owns the authorizer chain of --authorization-mode, the RBAC index and the Node graph, fed by the shards' watch events.
import type { MessagePort } from 'node:worker_threads'
import { open, type RootDatabase, type Database } from 'lmdb'
import { pino, type Logger } from 'pino'
import { PortClient, PortPeer } from '../../src/machinery/port-rpc.js'
import { shardOf } from '../../src/machinery/sharding.js'
import { nodeIdentity } from '../../src/machinery/node-refs.js'
import { envOptions, objectsDbOptions, prefixEnd, recordObject } from '../../src/machinery/storage-format.js'
import type { ShardRequest, ShardReply, WatchEvent } from '../shard/messages.js'
import {
  RBAC_TYPES, GRAPH_TYPES, typePrefixOf,
  type AuthzRequest, type AuthzReply, type Attributes, type Decision, type ResourceRule, type NonResourceRule, type RulesAnswer,
} from './messages.js'
import { RbacIndex, checkRoleWrite, checkBindingWrite, aggregateMessages, type PolicyRule, type RoleObject, type BindingObject } from './rbac.js'
import { NodeAuthorizer, NodeGraph, nodeRules } from './node.js'
import { abacAuthorize, abacRules, type AbacPolicy } from './abac.js'

export interface AuthzInit {
  op: 'init'
  modes: string[]
  /** The policies of --authorization-policy-file (mode ABAC), parsed by the main thread at start. */
  abacPolicies?: AbacPolicy[]
  logLevel: string
  heartbeats: SharedArrayBuffer
  heartbeatSlot: number
  /** The data dir: the actor reads the shards' environments for its initial state. */
  dataDir?: string
  /** One port per shard (transferred): the actor subscribes to the events of the types it indexes. */
  shardPorts?: MessagePort[]
}
export interface AuthzAttach { op: 'attach'; port: MessagePort; name: string }
export type AuthzTask = AuthzInit | AuthzAttach | { op: 'ping' }

export type Authorizer = (a: Attributes) => { decision: Decision; reason: string }

const index = new RbacIndex()
const graph = new NodeGraph()
const nodeAuthorizer = new NodeAuthorizer(graph)

let abacPolicies: AbacPolicy[] = []

const authorizers: Record<string, Authorizer> = {
  ABAC: (a) => abacAuthorize(abacPolicies, a),
  AlwaysAllow: () => ({ decision: 'allow', reason: '' }),
  // Upstream's AlwaysDeny has no opinion (with a reason): a later authorizer may still allow.
  AlwaysDeny: () => ({ decision: 'noopinion', reason: 'Everything is forbidden.' }),
  RBAC: (a) => index.authorize(a),
  Node: (a) => nodeAuthorizer.authorize(a),
}

let modes: string[] = []
let chain: Authorizer[] = []
let log: Logger = pino({ level: 'silent' })

/** The first allow or deny decides; no opinion from all is no opinion, with every reason given (upstream union authorizer). */
export function decide(chain: Authorizer[], a: Attributes): { decision: Decision; reason: string } {
  // system:masters is allowed before any authorizer runs (upstream's privileged-group authorizer).
  if (a.groups.includes('system:masters')) return { decision: 'allow', reason: '' }
  let reasons: string[] | undefined
  for (const z of chain) {
    const d = z(a)
    if (d.decision !== 'noopinion') return d
    if (d.reason) (reasons ??= []).push(d.reason)
  }
  return { decision: 'noopinion', reason: reasons ? reasons.join('\n') : '' }
}

// ---------------------------------------------------------------- state fed by the shards

interface Indexed { kind: string; graph: boolean }
/** type prefix → what it feeds */
const fed = new Map<string, Indexed>()
/** Per shard: every subscribed event with a resourceVersion up to this is applied. */
let applied: number[] = []
let loadedShards: boolean[] = []
let buffered: WatchEvent[][] = []
let loaded = false

function prefixOfKey(key: string): string {
  const a = key.indexOf('/')
  return key.slice(0, key.indexOf('/', a + 1) + 1)
}

function applyEvent(ev: WatchEvent): void {
  const [type, key, , rec] = ev
  const what = fed.get(prefixOfKey(key))
  if (!what) return
  if (type === 'DELETED') {
    const parts = key.split('/')
    if (what.graph) graph.remove(what.kind, parts[2], parts[3])
    else index.remove(what.kind, parts[2], parts[3])
    return
  }
  let obj: Record<string, any>
  try { obj = JSON.parse(recordObject(rec).toString('utf8')) } catch (err) { log.error({ err, key }, 'unreadable object'); return }
  if (what.graph) graph.upsert(obj)
  else index.upsert(obj as RoleObject | BindingObject)
}

function onEvents(shard: number, events: WatchEvent[]): void {
  if (!loadedShards[shard]) { buffered[shard].push(...events); return }
  for (const ev of events) {
    if (ev[2] <= applied[shard]) continue
    applyEvent(ev)
    applied[shard] = ev[2]
  }
  runWaiting()
}

async function load(dataDir: string, ports: MessagePort[]): Promise<void> {
  const shards = ports.length
  applied = new Array(shards).fill(0)
  loadedShards = new Array(shards).fill(false)
  buffered = Array.from({ length: shards }, () => [])
  const types: Array<readonly [string, string, string, boolean]> = RBAC_TYPES.map((t) => [...t, false] as const)
  if (modes.includes('Node')) types.push(...GRAPH_TYPES.map((t) => [...t, true] as const))
  const byShard = new Map<number, string[]>()
  for (const [group, resource, kind, isGraph] of types) {
    const prefix = typePrefixOf(group, resource)
    fed.set(prefix, { kind, graph: isGraph })
    const s = shardOf(group, resource, shards)
    byShard.set(s, [...(byShard.get(s) ?? []), prefix])
  }
  await Promise.all(ports.map(async (port, s) => {
    const prefixes = byShard.get(s)
    if (!prefixes) { loadedShards[s] = true; port.close(); return }
    const client = new PortClient<ShardRequest, ShardReply, WatchEvent>(port)
    client.onPush((events) => onEvents(s, events))
    // Subscribe first, then read a snapshot: every event after the snapshot arrives as a push.
    await Promise.all(prefixes.map((prefix) => client.request({ op: 'watchSubscribe', prefix })))
    const root: RootDatabase = open(envOptions(`${dataDir}/shard-${s}`))
    const objects: Database<Buffer, string> = root.openDB<Buffer, string>('objects', objectsDbOptions())
    const meta: Database<number, string> = root.openDB<number, string>('meta', { encoding: 'msgpack' })
    root.resetReadTxn()
    const snapshotRv = meta.get('rv') ?? 0
    for (const prefix of prefixes) {
      for (const { key, value } of objects.getRange({ start: prefix, end: prefixEnd(prefix) })) {
        applyEvent(['ADDED', key as string, 0, value as Buffer, null])
      }
    }
    applied[s] = snapshotRv
    loadedShards[s] = true
    const pending = buffered[s]
    buffered[s] = []
    onEvents(s, pending)
  }))
  loaded = true
  log.info({ applied }, 'authz state loaded')
}

// ---------------------------------------------------------------- answering once the state is recent enough

interface Waiting { versions: number[]; run: () => void; deadline: number }
const waiting: Waiting[] = []
const WAIT_LIMIT_MS = 5000

function caughtUp(versions: number[]): boolean {
  if (!loaded) return false
  for (let s = 0; s < versions.length; s++) if (versions[s] > (applied[s] ?? 0)) return false
  return true
}

function whenCaughtUp(versions: number[], run: () => void): void {
  if (caughtUp(versions)) { run(); return }
  waiting.push({ versions, run, deadline: Date.now() + WAIT_LIMIT_MS })
}

function runWaiting(): void {
  if (waiting.length === 0) return
  const now = Date.now()
  for (let i = 0; i < waiting.length;) {
    const w = waiting[i]
    if (caughtUp(w.versions) || now > w.deadline) {
      if (now > w.deadline && !caughtUp(w.versions)) log.warn({ versions: w.versions, applied }, 'authz state did not catch up in time; answering from what it has')
      waiting.splice(i, 1)
      w.run()
    } else i++
  }
}

// ---------------------------------------------------------------- rules (SelfSubjectRulesReview)

const FULL_RESOURCE: ResourceRule = { verbs: ['*'], apiGroups: ['*'], resources: ['*'] }
const FULL_NON_RESOURCE: NonResourceRule = { verbs: ['*'], nonResourceURLs: ['*'] }

function split(rules: readonly PolicyRule[], into: RulesAnswer): void {
  for (const r of rules) {
    if ((r.nonResourceURLs ?? []).length > 0) into.nonResourceRules.push({ verbs: [...r.verbs], nonResourceURLs: [...r.nonResourceURLs!] })
    if ((r.resources ?? []).length > 0 || (r.apiGroups ?? []).length > 0) {
      const rr: ResourceRule = { verbs: [...r.verbs] }
      if (r.apiGroups) rr.apiGroups = [...r.apiGroups]
      if (r.resources) rr.resources = [...r.resources]
      if (r.resourceNames && r.resourceNames.length > 0) rr.resourceNames = [...r.resourceNames]
      into.resourceRules.push(rr)
    }
  }
}

/** Every authorizer's rules for the user (upstream union RulesFor). */
export function rulesFor(user: string, groups: string[], namespace: string): RulesAnswer {
  const out: RulesAnswer = { resourceRules: [], nonResourceRules: [], incomplete: false, evaluationError: '' }
  if (groups.includes('system:masters')) {
    out.resourceRules.push(FULL_RESOURCE)
    out.nonResourceRules.push(FULL_NON_RESOURCE)
    return out
  }
  const errors: string[] = []
  for (const m of modes) {
    switch (m) {
      case 'AlwaysAllow':
        out.resourceRules.push(FULL_RESOURCE)
        out.nonResourceRules.push(FULL_NON_RESOURCE)
        break
      case 'RBAC': {
        const r = index.rulesFor(user, groups, namespace)
        split(r.rules, out)
        if (r.errors.length > 0) { out.incomplete = true; errors.push(...r.errors) }
        break
      }
      case 'ABAC': {
        const r = abacRules(abacPolicies, user, groups, namespace)
        out.resourceRules.push(...r.resourceRules)
        out.nonResourceRules.push(...r.nonResourceRules)
        break
      }
      case 'Node':
        if (nodeIdentity(user, groups).isNode) {
          split(nodeRules(), out)
          out.incomplete = true
        }
        break
    }
  }
  if (errors.length > 0) out.evaluationError = aggregateMessages(errors)
  return out
}

// ---------------------------------------------------------------- requests

function handle(peer: PortPeer<AuthzRequest, AuthzReply>, req: AuthzRequest): void {
  switch (req.op) {
    case 'authorize':
      whenCaughtUp(req.versions, () => peer.reply({ id: req.id, ...decide(chain, req.attrs) }))
      return
    case 'rules':
      whenCaughtUp(req.versions, () => peer.reply({ id: req.id, rules: rulesFor(req.user, req.groups, req.namespace) }))
      return
    case 'writeCheck':
      whenCaughtUp(req.versions, () => {
        const obj = JSON.parse(req.object) as RoleObject | BindingObject
        const old = req.old !== undefined ? JSON.parse(req.old) as RoleObject | BindingObject : undefined
        const user = { name: req.user, groups: req.groups }
        const authorize = (a: Attributes) => decide(chain, a)
        const err = obj.kind === 'Role' || obj.kind === 'ClusterRole'
          ? checkRoleWrite(index, authorize, user, obj as RoleObject, old as RoleObject | undefined)
          : checkBindingWrite(index, authorize, user, obj as BindingObject, old as BindingObject | undefined)
        peer.reply({ id: req.id, error: err ? { code: err.code, reason: err.reason, message: err.message, details: err.details as Record<string, unknown> | undefined } : undefined })
      })
      return
    default:
      peer.reply({ id: req.id })
  }
}

export default async function run(task: AuthzTask): Promise<unknown> {
  switch (task.op) {
    case 'init': {
      const beats = new Float64Array(task.heartbeats)
      beats[task.heartbeatSlot] = Date.now()
      setInterval(() => { beats[task.heartbeatSlot] = Date.now(); runWaiting() }, 100).unref()
      log = pino({ level: task.logLevel }).child({ actor: 'authz' })
      modes = task.modes
      abacPolicies = task.abacPolicies ?? []
      chain = task.modes.map((m) => {
        const z = authorizers[m]
        if (!z) throw new Error(`unsupported authorization mode ${m}`)
        return z
      })
      if (task.dataDir && task.shardPorts) await load(task.dataDir, task.shardPorts)
      else loaded = true
      return { ok: true }
    }
    case 'attach':
      new PortPeer<AuthzRequest, AuthzReply>(task.port, task.name, handle, (err, req) => {
        log.error({ err }, 'authz request failed')
        return req ? { id: req.id, decision: 'noopinion', reason: 'internal error' } : undefined
      })
      return { ok: true }
    case 'ping':
      return { ok: true }
  }
}
