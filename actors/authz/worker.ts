// The authz actor: owns the authorizer chain of --authorization-mode or --authorization-config (reloaded), the RBAC
// index and the Node graph fed by the shards' watch events, the authorization webhooks and the token webhook.
import type { MessagePort } from 'node:worker_threads'
import { watch as watchFile, readFileSync, type FSWatcher } from 'node:fs'
import { dirname, basename } from 'node:path'
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
import { chainGenerationSlot, type TokenReviewAnswer } from './messages.js'
import { loadAuthorizationConfig, loadAuthorizationConfigFile, builtinTypes, type AuthorizerSpec } from './config.js'
import { WebhookAuthorizer, type Verdict } from './webhook.js'
import { TokenWebhook, type TokenWebhookOptions } from './token-webhook.js'
import { abacAuthorize, abacRules, type AbacPolicy } from './abac.js'

export interface AuthzInit {
  op: 'init'
  /** The types of the chain in order (which indexes to keep: Node needs the graph). */
  modes: string[]
  /** The chain (from the flags or the file); without it, `modes` with no webhooks. */
  chain?: AuthorizerSpec[]
  /** --authorization-config: reloaded when it changes and every 60 s. */
  configFile?: string
  /** The authz version counters: the actor bumps the chain's generation when it replaces the chain. */
  versions?: SharedArrayBuffer
  shards?: number
  tokenWebhook?: TokenWebhookOptions
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

export type Authorizer = (a: Attributes) => Verdict | Promise<Verdict>

const index = new RbacIndex()
const graph = new NodeGraph()
const nodeAuthorizer = new NodeAuthorizer(graph)

let abacPolicies: AbacPolicy[] = []

const builtins: Record<string, Authorizer> = {
  ABAC: (a) => abacAuthorize(abacPolicies, a),
  AlwaysAllow: () => ({ decision: 'allow', reason: '' }),
  // Upstream's AlwaysDeny has no opinion (with a reason): a later authorizer may still allow.
  AlwaysDeny: () => ({ decision: 'noopinion', reason: 'Everything is forbidden.' }),
  RBAC: (a) => index.authorize(a),
  Node: (a) => nodeAuthorizer.authorize(a),
}

let modes: string[] = []
let chain: Authorizer[] = []
/** The webhooks of the chain in force (closed when a reload replaces them). */
let webhooks: WebhookAuthorizer[] = []
let tokenWebhook: TokenWebhook | undefined
let log: Logger = pino({ level: 'silent' })

interface Tally { reasons?: string[]; failures?: string[]; ttl?: number }

function fold(t: Tally, d: Verdict): void {
  if (d.reason) (t.reasons ??= []).push(d.reason)
  if (d.failure) (t.failures ??= []).push(d.failure)
  if (d.ttl !== undefined) t.ttl = t.ttl === undefined ? d.ttl : Math.min(t.ttl, d.ttl)
}

function outcome(t: Tally, d: Verdict | undefined): Verdict {
  // A failed call is asked again next time: such a decision is not kept anywhere.
  const ttl = t.failures ? 0 : t.ttl
  const v: Verdict = d ? { decision: d.decision, reason: d.reason } : { decision: 'noopinion', reason: t.reasons ? t.reasons.join('\n') : '' }
  const failure = d ? d.failure : t.failures ? (t.failures.length === 1 ? t.failures[0] : `[${t.failures.join(', ')}]`) : undefined
  if (failure) v.failure = failure
  if (ttl !== undefined) v.ttl = ttl
  return v
}

/** The chain from authorizer `from` on, synchronously until an authorizer answers with a promise. */
function continueFrom(chain: Authorizer[], a: Attributes, from: number, t: Tally): Verdict | Promise<Verdict> {
  for (let i = from; i < chain.length; i++) {
    const d = chain[i](a)
    if (d instanceof Promise) {
      return d.then((r) => {
        fold(t, r)
        return r.decision !== 'noopinion' ? outcome(t, r) : continueFrom(chain, a, i + 1, t)
      })
    }
    fold(t, d)
    if (d.decision !== 'noopinion') return outcome(t, d)
  }
  return outcome(t, undefined)
}

/**
 * The first allow or deny decides; no opinion from all is no opinion, with every reason and error given (upstream
 * union authorizer). Synchronous unless a webhook has to be called.
 */
export function decide(chain: Authorizer[], a: Attributes): Verdict | Promise<Verdict> {
  // system:masters is allowed before any authorizer runs (upstream's privileged-group authorizer).
  if (a.groups.includes('system:masters')) return { decision: 'allow', reason: '' }
  return continueFrom(chain, a, 0, {})
}

/** A synchronous decision for the escalation checks: a webhook that would have to be called has no opinion. */
function decideNow(a: Attributes): { decision: Decision; reason: string } {
  const d = decide(chain.map((z) => (x: Attributes) => {
    const r = z(x)
    return r instanceof Promise ? { decision: 'noopinion' as Decision, reason: '' } : r
  }), a)
  return d instanceof Promise ? { decision: 'noopinion', reason: '' } : d
}

/** The chain of a configuration; throws when a webhook's kubeconfig cannot be used. */
function buildChain(specs: readonly AuthorizerSpec[]): { chain: Authorizer[]; webhooks: WebhookAuthorizer[] } {
  const made: WebhookAuthorizer[] = []
  try {
    const c = specs.map((s): Authorizer => {
      if (s.type === 'Webhook') {
        const w = new WebhookAuthorizer(s.name, s.webhook!, (failure) => log.error({ authorizer: s.name, err: failure }, 'Failed to make webhook authorizer request'))
        made.push(w)
        return (a) => w.authorize(a)
      }
      const z = builtins[s.type]
      if (!z) throw new Error(`unsupported authorization mode ${s.type}`)
      return z
    })
    return { chain: c, webhooks: made }
  } catch (err) {
    for (const w of made) w.close()
    throw err
  }
}

function install(specs: readonly AuthorizerSpec[], versions: BigInt64Array | undefined, shards: number): void {
  const built = buildChain(specs)
  const old = webhooks
  chain = built.chain
  webhooks = built.webhooks
  modes = specs.map((s) => s.type)
  for (const w of old) w.close()
  // Front-ends drop their cached decisions when the generation moves.
  if (versions) Atomics.add(versions, chainGenerationSlot(shards), 1n)
}

/** --authorization-config: reread when the file changes and every 60 s; a bad file leaves the chain in force. */
function watchConfig(file: string, required: Set<string>, lastData: string, versions: BigInt64Array | undefined, shards: number): void {
  // As upstream: the same bytes are not looked at again (a bad file is reported once, not every minute).
  let lastRead = lastData
  const check = (): void => {
    let data: string
    try { data = readFileSync(file, 'utf8') } catch (err) {
      log.error({ err: (err as Error).message, file }, 'reloading authorization config')
      return
    }
    if (data === lastRead) return
    lastRead = data
    try {
      const specs = loadAuthorizationConfig(data, required)
      install(specs, versions, shards)
      log.info({ file, authorizers: specs.map((s) => s.name) }, 'reloaded authz config')
    } catch (err) {
      log.error({ err: (err as Error).message, file }, 'reloading authorization config')
    }
  }
  setInterval(check, RELOAD_INTERVAL_MS).unref()
  let pending: NodeJS.Timeout | undefined
  let watcher: FSWatcher | undefined
  try {
    // The directory is watched: editors and config managers replace the file by a rename.
    watcher = watchFile(dirname(file), (_event, name) => {
      if (name !== null && name !== basename(file)) return
      clearTimeout(pending)
      pending = setTimeout(check, 100)
    })
    watcher.unref()
  } catch (err) {
    log.warn({ err: (err as Error).message, file }, 'cannot watch the authorization config; it is reread every 60 s')
  }
}

const RELOAD_INTERVAL_MS = 60_000

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
      case 'Webhook':
        out.incomplete = true
        errors.push('webhook authorizer does not support user rule resolution')
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
      whenCaughtUp(req.versions, () => {
        const d = decide(chain, req.attrs)
        if (d instanceof Promise) d.then((r) => peer.reply({ id: req.id, ...r }), (err) => peer.reply({ id: req.id, decision: 'noopinion', reason: '', failure: String((err as Error)?.message ?? err), ttl: 0 }))
        else peer.reply({ id: req.id, ...d })
      })
      return
    case 'tokenReview': {
      if (!tokenWebhook) { peer.reply({ id: req.id, tokenReview: { ok: false, error: '', expires: 0 } }); return }
      const r = tokenWebhook.review(req.token, req.audiences)
      if (r instanceof Promise) r.then((tr: TokenReviewAnswer) => peer.reply({ id: req.id, tokenReview: tr }), (err) => peer.reply({ id: req.id, tokenReview: { ok: false, error: String((err as Error)?.message ?? err), expires: 0 } }))
      else peer.reply({ id: req.id, tokenReview: r })
      return
    }
    case 'rules':
      whenCaughtUp(req.versions, () => peer.reply({ id: req.id, rules: rulesFor(req.user, req.groups, req.namespace) }))
      return
    case 'writeCheck':
      whenCaughtUp(req.versions, () => {
        const obj = JSON.parse(req.object) as RoleObject | BindingObject
        const old = req.old !== undefined ? JSON.parse(req.old) as RoleObject | BindingObject : undefined
        const user = { name: req.user, groups: req.groups }
        const check = (authorize: (a: Attributes) => { decision: Decision; reason: string }) => obj.kind === 'Role' || obj.kind === 'ClusterRole'
          ? checkRoleWrite(index, authorize, user, obj as RoleObject, old as RoleObject | undefined)
          : checkBindingWrite(index, authorize, user, obj as BindingObject, old as BindingObject | undefined)
        const send = (err: ReturnType<typeof check>) => peer.reply({ id: req.id, error: err ? { code: err.code, reason: err.reason, message: err.message, details: err.details as Record<string, unknown> | undefined } : undefined })
        // The escalate/bind check asks the whole chain: when a webhook has to be called, its answer is awaited and
        // the check runs again with it.
        const answers = new Map<string, Verdict>()
        const pending: Promise<unknown>[] = []
        const keyOf = (a: Attributes) => JSON.stringify(a)
        const first = check((a) => {
          const d = decide(chain, a)
          if (!(d instanceof Promise)) return d
          pending.push(d.then((r) => answers.set(keyOf(a), r), () => undefined))
          return { decision: 'noopinion', reason: '' }
        })
        if (pending.length === 0) { send(first); return }
        Promise.all(pending).then(() => send(check((a) => answers.get(keyOf(a)) ?? decideNow(a))), () => send(first))
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
      abacPolicies = task.abacPolicies ?? []
      const specs = task.chain ?? task.modes.map((m) => ({ type: m, name: m.toLowerCase() }))
      const versions = task.versions ? new BigInt64Array(task.versions) : undefined
      install(specs, versions, task.shards ?? 0)
      if (task.configFile) {
        let data = ''
        try { data = loadAuthorizationConfigFile(task.configFile).data } catch { /* validated at start; the watcher reports */ }
        watchConfig(task.configFile, builtinTypes(specs), data, versions, task.shards ?? 0)
      }
      if (task.tokenWebhook) tokenWebhook = new TokenWebhook(task.tokenWebhook, (failure) => log.error({ err: failure }, 'Failed to make webhook authenticator request'))
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
