// start(): boot the process — data dir, certificates, actors, front-ends, bootstrap objects, controllers — and stop it again.
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs'
import { resolve as resolvePath } from 'node:path'
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads'
import { randomBytes } from 'node:crypto'
import net from 'node:net'
import v8 from 'node:v8'
import { Piscina } from 'piscina'
import type { Logger } from 'pino'
import type { Options } from '../options.js'
import { OptionsError, serviceRangesOf, checkAdmissionPlugins } from '../options.js'
import { parsePolicyFile, PolicyFileError, type AbacPolicy } from '../../actors/authz/abac.js'
import { ensurePki, ensureAdminToken, writeAdminKubeconfig } from '../bootstrap/pki.js'
import { readTokenFile } from '../auth/token-file.js'
import { loadServiceAccountKeys, type ServiceAccountKeys } from '../auth/service-account.js'
import { prepareJwtSetup, type JwtSetup } from '../auth/jwt-setup.js'
import { certAuthnData, requestHeaderWarnings, CaBundleError, type CertAuthnData } from '../auth/x509.js'
import type { UserInfo } from '../pipeline/context.js'
import type { FrontendData, ServiceAccountData } from './setup.js'
import { SEAT_SLOTS } from '../../actors/flow-control/messages.js'
import { counterSlots } from '../../actors/shard/messages.js'
import { authzVersionSlots, rbacVersionSlot, graphVersionSlot, RBAC_TYPES, GRAPH_TYPES, typePrefixOf } from '../../actors/authz/messages.js'
import { heartbeatSlots, STATE_SLOTS, STATE_SHUTTING_DOWN, STATE_BOOTSTRAPPED, STATE_RBAC_BOOTSTRAPPED } from './health.js'
import { InternalClient } from './internal-client.js'
import { startControllers, type Controllers } from '../controllers/index.js'
import { ApfController } from '../controllers/apf.js'
import { FlowClient } from '../../actors/flow-control/client.js'
import { reconcileRbacDefaults } from '../bootstrap/rbac.js'
import { ensureSystemPriorityClasses } from '../bootstrap/priority-classes.js'
import { authenticationInfoData, publishAuthenticationInfo } from '../bootstrap/authentication-info.js'
import { Registry } from '../registry/index.js'
import { shardOf } from '../machinery/sharding.js'
import { LOOPBACK_USER } from '../machinery/node-refs.js'
import { allocationBuffers, fillAllocationMaps, type ServiceAllocationData } from '../pipeline/service-allocation.js'
import { envOptions, objectsDbOptions, prefixEnd, recordObject, typePrefix } from '../machinery/storage-format.js'
import { open as openLmdb } from 'lmdb'
import { ipv4String } from '../machinery/service-ranges.js'
import { advertiseAddress } from '../controllers/kubernetes-service.js'
import { chainFromFlags, loadAuthorizationConfigFile, type AuthorizerSpec } from '../../actors/authz/config.js'
import { loadWebhookKubeconfig } from '../machinery/webhook-client.js'
import type { TokenWebhookOptions } from '../../actors/authz/token-webhook.js'


export interface Server {
  httpPort: number
  httpsPort: number
  kubeconfig: string
  close(): Promise<void>
}

/**
 * Heap settings of the threads. V8's defaults suit one isolate per process, and this process runs one per front-end and
 * per actor: each may grow its young generation to 3 x 16 MiB, and its old generation (where big strings and buffers
 * land) to up to 4x what survived the last full collection before it collects again. Under writes of big objects
 * (200 KiB ConfigMaps: each write parses, copies and serialises the object several times on a front-end and again on
 * its shard) that garbage grew the RSS by 170-245 MiB in the stalled-watcher test of test/http/watch.test.ts. Worker
 * threads got semi-spaces of 4 MiB (young generations of 12 MiB; today's sizes below), and every isolate (the main
 * thread's too) grows its old generation by half between full collections: 115-125 MiB there instead (92-134 with
 * today's young generations, under the test's limit of 192). Both are soft: no thread gets a hard heap ceiling.
 * Growing by a fifth (55-130 MiB there, 107 in two runs of the tenth session) cost too much CPU under steady writes:
 * in `bench mixed` at 1,750 writes/s the front-end holds about 38 MiB and promotes about 6 MiB/s, so it ran a full
 * collection every 0.6 s (each 50-140 ms of incremental marking, pauses up to 21 ms); growing by half, the server
 * spent 806-839 us of CPU per pod write against 875-932 (alternating runs), and `bench memory` stayed at ~1.5 KB per
 * object (1,495 vs 1,505 B).
 * Semi-spaces of 4 MiB in turn cost CPU at the `bench mixed` target (a front-end saturated by pod status patches): a
 * request lives across its shard's commit, and with the loop busy that outlasts a scavenge or two, so the front-end
 * promoted ~35 MiB/s and ran a full collection every 0.7 s, and garbage collection took 18% of its time. The threads
 * that do the requests' work get bigger young generations, which V8 grows only under such load: a front-end 32 MiB, an
 * actor 16. In alternating runs of the twenty-fifth session `bench mixed` served 2,065-2,134 pod writes/s against
 * 1,662-1,898 with 12 MiB everywhere, at 10-50 MiB more peak RSS. Bigger ones served more (64/32: 2,100-2,162; 96 in
 * every thread: 2,332-2,621) but stay committed once grown: `bench memory` (RSS growth while creating 100k 1 KB
 * objects) went from 1,399 B per object to 2,044 with 64/32, over its 1.8 KB target, and to 1,654 with 32/16.
 */
const ACTOR_YOUNG_GENERATION_MB = 16
const FRONTEND_YOUNG_GENERATION_MB = 32
const HEAP_GROWING_PERCENT = 50

const here = new URL('.', import.meta.url)
const distRoot = new URL('../../', here)

function actorPool(name: string, log: Logger): Piscina {
  const pool = new Piscina({
    filename: new URL(`actors/${name}/worker.js`, distRoot).href,
    minThreads: 1, maxThreads: 1, idleTimeout: Infinity, atomics: 'disabled', concurrentTasksPerWorker: 16,
    resourceLimits: { maxYoungGenerationSizeMb: ACTOR_YOUNG_GENERATION_MB },
  })
  pool.on('error', (err) => log.error({ err, actor: name }, 'actor thread failed'))
  return pool
}

/** An exclusive bind proves the port is free (SO_REUSEPORT would let a second server share it silently); 0 picks one. */
function probePort(host: string, port: number, flag: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.once('error', (err: NodeJS.ErrnoException) => reject(new OptionsError(`--${flag} ${port}: cannot listen on ${host}:${port}: ${err.code === 'EADDRINUSE' ? 'address already in use' : err.message}`)))
    s.listen({ host, port, exclusive: true }, () => {
      const p = (s.address() as net.AddressInfo).port
      s.close(() => resolve(p))
    })
  })
}

/** Every stored service, read from its shard's environment (the main thread, before the front-ends start). */
function* storedServices(dataDir: string, shard: number): Generator<Record<string, any>> {
  const root = openLmdb(envOptions(`${dataDir}/shard-${shard}`))
  const objects = root.openDB<Buffer, string>('objects', objectsDbOptions())
  const prefix = typePrefix('', 'services')
  for (const { value } of objects.getRange({ start: prefix, end: prefixEnd(prefix) })) {
    yield JSON.parse(recordObject(value as Buffer).toString('utf8')) as Record<string, any>
  }
}

function checkShardCount(dataDir: string, shards: number): void {
  const f = `${dataDir}/cluster.json`
  if (existsSync(f)) {
    const prev = JSON.parse(readFileSync(f, 'utf8')) as { shards: number }
    if (prev.shards !== shards) throw new OptionsError(`--shards ${shards}: the data in ${dataDir} was written with --shards ${prev.shards}; start with that value`)
  } else {
    writeFileSync(f, JSON.stringify({ shards }) + '\n')
  }
}

/**
 * The authorizer chain (from --authorization-config, checked as upstream checks it, or from the flags) and the token
 * webhook; a file that does not load or validate stops the start. With a file, `opts.authorizationMode` becomes its types.
 */
function authorizationSetup(opts: Options, apiAudiences: string[]): { chain: AuthorizerSpec[]; tokenWebhook?: TokenWebhookOptions } {
  let chain: AuthorizerSpec[]
  if (opts.authorizationConfig) {
    try { chain = loadAuthorizationConfigFile(opts.authorizationConfig).specs } catch (err) { throw new OptionsError((err as Error).message) }
    opts.authorizationMode = chain.map((a) => a.type)
  } else {
    chain = chainFromFlags(opts.authorizationMode, {
      configFile: opts.authorizationWebhookConfigFile, version: opts.authorizationWebhookVersion,
      authorizedTtlMs: opts.authorizationWebhookCacheAuthorizedTtl, unauthorizedTtlMs: opts.authorizationWebhookCacheUnauthorizedTtl,
    })
  }
  for (const a of chain) {
    if (!a.webhook) continue
    try { loadWebhookKubeconfig(a.webhook.kubeConfigFile) } catch (err) {
      throw new OptionsError(opts.authorizationConfig ? `authorizer ${JSON.stringify(a.name)}: ${(err as Error).message}` : `--authorization-webhook-config-file: ${(err as Error).message}`)
    }
  }
  let tokenWebhook: TokenWebhookOptions | undefined
  if (opts.authenticationTokenWebhookConfigFile) {
    try { loadWebhookKubeconfig(opts.authenticationTokenWebhookConfigFile) } catch (err) { throw new OptionsError(`--authentication-token-webhook-config-file: ${(err as Error).message}`) }
    tokenWebhook = { file: opts.authenticationTokenWebhookConfigFile, version: opts.authenticationTokenWebhookVersion, ttlMs: opts.authenticationTokenWebhookCacheTtl, apiAudiences }
  }
  return { chain, tokenWebhook }
}

/** The ABAC policy file, read and checked: a file that cannot be read or holds a line that is no policy stops the start. */
function readAbacPolicies(path: string): AbacPolicy[] {
  if (path === '') throw new OptionsError("authorization-mode ABAC's authorization policy file not passed")
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    throw new OptionsError(`error reading policy file ${path}: ${(err as Error).message}`)
  }
  try {
    return parsePolicyFile(path, text)
  } catch (err) {
    if (err instanceof PolicyFileError) throw new OptionsError(err.message)
    throw err
  }
}

export async function start(options: Options, log: Logger): Promise<Server> {
  // A V8 flag that every isolate of the process reads after each full collection (the threads started below too);
  // one given to node itself (node --heap-growing-percent=N, NODE_OPTIONS) is left as it is.
  if (!/heap[-_]growing[-_]percent/.test(`${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`)) {
    v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`)
  }
  const dataDir = resolvePath(options.dataDir)
  const opts: Options = { ...options, dataDir }
  mkdirSync(dataDir, { recursive: true })
  checkShardCount(dataDir, opts.shards)
  const serviceRanges = serviceRangesOf(opts)
  checkAdmissionPlugins(opts)
  const abacPolicies = opts.authorizationMode.includes('ABAC') ? readAbacPolicies(opts.authorizationPolicyFile) : undefined

  // The actors' threads start here, each loading its module while this thread reads (or generates) keys and
  // certificates; their init messages come below, in order. (A start refused below waits for them, then exits the process.)
  const shardPools = Array.from({ length: opts.shards }, () => actorPool('shard', log))
  const authzPool = actorPool('authz', log)
  const flowPool = actorPool('flow-control', log)
  try {
    return await startActors(opts, log, abacPolicies, serviceRanges, shardPools, authzPool, flowPool)
  } catch (err) {
    // A refused start ends the process: first each actor thread finishes loading its module, since a thread ended in the
    // middle of a module's instantiation aborts node (v8::Module::IsGraphAsync, exit 134) instead of the refusal's exit 2.
    // 'loaded' is an op no actor knows: a thread answers it (with nothing) once its module is loaded.
    await Promise.all([...shardPools, authzPool, flowPool].map((p) => p.run({ op: 'loaded' }).then(() => p.destroy(), () => p.destroy()).catch(() => undefined)))
    throw err
  }
}

async function startActors(
  opts: Options, log: Logger, abacPolicies: AbacPolicy[] | undefined, serviceRanges: ReturnType<typeof serviceRangesOf>,
  shardPools: Piscina[], authzPool: Piscina, flowPool: Piscina,
): Promise<Server> {
  const dataDir = opts.dataDir
  const httpsPort = opts.securePort > 0 ? await probePort(opts.bindAddress, opts.securePort, 'secure-port') : 0
  const httpPort = opts.port > 0 ? await probePort(opts.bindAddress, opts.port, 'port') : 0

  // Tokens: the admin's, the static file's, and the loopback token of the in-process controllers.
  const tokens = new Map<string, UserInfo>()
  const adminToken = ensureAdminToken(dataDir)
  tokens.set(adminToken, { username: 'orch-admin', uid: 'orch-admin', groups: ['system:masters'] })
  if (opts.tokenAuthFile) {
    try {
      for (const [t, u] of readTokenFile(opts.tokenAuthFile, (msg) => log.warn(msg))) tokens.set(t, u)
    } catch (err) {
      throw new OptionsError(`--token-auth-file: ${(err as Error).message}`)
    }
  }
  const loopbackToken = randomBytes(32).toString('base64url')
  tokens.set(loopbackToken, LOOPBACK_USER)

  // Service-account keys: the signing key (generated in the data dir when none is given) and the verification keys.
  let saKeys: ServiceAccountKeys
  try {
    saKeys = loadServiceAccountKeys({ signingKeyFile: opts.serviceAccountSigningKeyFile || undefined, keyFiles: opts.serviceAccountKeyFile, tlsPrivateKeyFile: opts.tlsPrivateKeyFile || undefined, dataDir })
  } catch (err) {
    const flag = opts.serviceAccountSigningKeyFile ? 'service-account-signing-key-file' : 'service-account-key-file'
    throw new OptionsError(`--${flag}: ${(err as Error).message}`)
  }
  if (saKeys.generated) log.info({ file: saKeys.signingKeyFile }, 'generated a service-account signing key')
  const serviceAccounts: ServiceAccountData = {
    signingKeyPem: saKeys.signing.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    verificationKeyPems: saKeys.verification.map((k) => k.publicKey.export({ type: 'spki', format: 'pem' }).toString()),
    issuers: opts.serviceAccountIssuer,
    apiAudiences: opts.apiAudiences.length > 0 ? opts.apiAudiences : opts.serviceAccountIssuer,
    lookup: opts.serviceAccountLookup,
    maxExpirationSeconds: Math.floor(opts.serviceAccountMaxTokenExpiration / 1000),
  }

  const { chain: authzChain, tokenWebhook } = authorizationSetup(opts, serviceAccounts.apiAudiences)
  // JWT authenticators (--authentication-config or --oidc-*): loaded and validated here, run by each front-end.
  let jwt: JwtSetup | undefined
  try { jwt = prepareJwtSetup(opts) } catch (err) { throw new OptionsError((err as Error).message) }
  // Client certificates (--client-ca-file, --requestheader-client-ca-file): bundles checked here, before anything starts.
  let certAuth: CertAuthnData | undefined
  try {
    certAuth = certAuthnData(opts)
  } catch (err) {
    if (err instanceof CaBundleError) throw new OptionsError(err.message)
    throw err
  }
  if (certAuth?.requestHeader) for (const w of requestHeaderWarnings(opts)) log.warn(w)
  if (certAuth && httpsPort > 0) log.info({ port: httpsPort, frontend: 0 }, 'client certificates: the secure port is served by node:http2 on front-end 0 (the other front-ends serve --port only)')

  let tls = { certFile: opts.tlsCertFile, keyFile: opts.tlsPrivateKeyFile }
  let kubeconfig = ''
  let caPem = ''
  if (httpsPort > 0) {
    if (!opts.tlsCertFile) {
      const pki = ensurePki(dataDir, [opts.bindAddress])
      tls = { certFile: pki.certFile, keyFile: pki.keyFile }
      caPem = pki.caCertPem
      const host = opts.bindAddress === '0.0.0.0' || opts.bindAddress === '::' ? '127.0.0.1' : opts.bindAddress
      kubeconfig = writeAdminKubeconfig(dataDir, `https://${host.includes(':') ? `[${host}]` : host}:${httpsPort}`, pki.caCertPem, adminToken)
    }
  }

  const counters = new SharedArrayBuffer(8 * counterSlots(opts.shards))
  const seats = new SharedArrayBuffer(4 * SEAT_SLOTS)
  const rejected = new SharedArrayBuffer(4)
  const state = new SharedArrayBuffer(4 * STATE_SLOTS)
  const slots = heartbeatSlots(opts.shards)
  const heartbeats = new SharedArrayBuffer(8 * slots.size)
  // Bumped by a shard before it acknowledges an RBAC (or node-graph) write: front-end decision caches are stamped with it.
  const authzVersions = new SharedArrayBuffer(8 * authzVersionSlots(opts.shards))

  async function connect(pool: Piscina, name: string): Promise<MessagePort> {
    const ch = new MessageChannel()
    await pool.run({ op: 'attach', port: ch.port2, name }, { transferList: [ch.port2] })
    return ch.port1
  }

  // Actors: one thread each, kept forever; each gets one port pair per front-end (and one for the main thread).
  const rbacPrefixes = RBAC_TYPES.map(([g, r]) => typePrefixOf(g, r))
  const graphPrefixes = GRAPH_TYPES.map(([g, r]) => typePrefixOf(g, r))
  // The secondary indexes each shard keeps, for the types placed on it.
  const registry = new Registry()
  const indexesOf = (i: number): Record<string, string[]> => Object.fromEntries(registry.all
    .filter((d) => d.indexedFields && shardOf(d.group, d.resource, opts.shards) === i)
    .map((d) => [typePrefixOf(d.group, d.resource), d.indexedFields!]))
  await Promise.all(shardPools.map((p, i) => p.run({
    op: 'init', shard: i, shards: opts.shards, dataDir, counters, heartbeats, heartbeatSlot: slots.shard(i), watchHistoryMs: opts.watchHistory, watchHistoryCount: 100_000, compress: opts.storageCompression, logLevel: opts.logLevel,
    authz: { versions: authzVersions, rbacSlot: rbacVersionSlot(i), graphSlot: graphVersionSlot(opts.shards, i), rbacPrefixes, graphPrefixes },
    indexes: indexesOf(i),
  })))
  // The authz actor indexes RBAC objects (and the node graph) from the shards' environments and their watch events.
  const authzShardPorts = await Promise.all(shardPools.map((p) => connect(p, 'authz')))
  await authzPool.run({
    op: 'init', modes: opts.authorizationMode, chain: authzChain, configFile: opts.authorizationConfig || undefined, versions: authzVersions, shards: opts.shards, tokenWebhook, abacPolicies,
    logLevel: opts.logLevel, heartbeats, heartbeatSlot: slots.authz, dataDir, shardPorts: authzShardPorts,
  }, { transferList: authzShardPorts })
  await flowPool.run({ op: 'init', seats, rejected, logLevel: opts.logLevel, heartbeats, heartbeatSlot: slots.flow, apf: opts.enablePriorityAndFairness, serverCL: opts.maxRequestsInflight + opts.maxMutatingRequestsInflight, seatHoldMs: opts.priorityAndFairnessSeatHold })
  if (opts.enablePriorityAndFairness) {
    // The flow-control actor reads FlowSchemas and priority levels from the shards' environments and their watch events.
    const flowShardPorts = await Promise.all(shardPools.map((p) => connect(p, 'flow-control')))
    await flowPool.run({ op: 'source', dataDir, ports: flowShardPorts }, { transferList: flowShardPorts })
  }

  // The allocation maps of service cluster IPs and node ports, filled from the stored services before anything serves.
  const serviceAllocation: ServiceAllocationData = {
    ipRange: serviceRanges.ip.cidr, portRange: serviceRanges.ports.text, ...allocationBuffers(serviceRanges.ip, serviceRanges.ports),
  }
  const filled = fillAllocationMaps(serviceAllocation, storedServices(dataDir, shardOf('', 'services', opts.shards)))
  log.info({ services: filled.services, serviceClusterIpRange: serviceRanges.ip.cidr, serviceNodePortRange: serviceRanges.ports.text }, 'service cluster IPs and node ports loaded')
  if (filled.conflicts.length > 0) log.warn({ held: filled.conflicts }, 'service addresses or node ports held by more than one service (or the first address, reserved for default/kubernetes)')
  if (filled.outside.length > 0) log.warn({ outside: filled.outside }, 'services hold addresses or node ports outside the configured ranges')

  const tokenList = [...tokens.entries()]
  const frontends: Worker[] = []
  const listening: Promise<void>[] = []
  for (let i = 0; i < opts.frontends; i++) {
    const shardPorts = await Promise.all(shardPools.map((p) => connect(p, `frontend-${i}`)))
    const authzPort = await connect(authzPool, `frontend-${i}`)
    const flowPort = await connect(flowPool, `frontend-${i}`)
    const data: FrontendData = { index: i, options: opts, counters, seats, rejected, state, heartbeats, shardPorts, authzPort, authzVersions, flowPort, tokens: tokenList, serviceAccounts, serviceAllocation, httpPort, httpsPort, tls, jwt, certAuth }
    const w = new Worker(new URL('src/server/frontend.js', distRoot), { workerData: data, transferList: [...shardPorts, authzPort, flowPort], resourceLimits: { maxYoungGenerationSizeMb: FRONTEND_YOUNG_GENERATION_MB } })
    frontends.push(w)
    listening.push(new Promise((resolve, reject) => {
      const onMsg = (m: { type: string; message?: string }) => {
        if (m.type === 'listening') { w.off('message', onMsg); resolve() }
        if (m.type === 'failed') reject(new Error(m.message))
      }
      w.on('message', onMsg)
      w.once('error', reject)
    }))
    w.on('error', (err) => log.error({ err, frontend: i }, 'front-end thread failed'))
  }
  await Promise.all(listening)

  // The main thread's own pipeline (same stages) for bootstrap objects and controllers.
  const mainShardPorts = await Promise.all(shardPools.map((p) => connect(p, 'main')))
  const mainAuthz = await connect(authzPool, 'main')
  const client = new InternalClient({ options: opts, counters, seats, rejected, state, heartbeats, shardPorts: mainShardPorts, authzPort: mainAuthz, authzVersions, tokens: tokenList, serviceAccounts, serviceAllocation, loopbackToken }, log)
  await client.bootstrapNamespaces(['default', 'orch-system', 'orch-public', 'orch-node-lease'])
  // The built-in PriorityClasses (system-node-critical, system-cluster-critical), before the server is ready.
  await ensureSystemPriorityClasses(client, log.child({ hook: 'scheduling/bootstrap-system-priority-classes' }))
  // Client CA and front-proxy settings for extension API servers (headers as given on the command line).
  if (certAuth) {
    await publishAuthenticationInfo(client, authenticationInfoData(certAuth, {
      username: opts.requestheaderUsernameHeaders ?? [], uid: opts.requestheaderUidHeaders ?? [], group: opts.requestheaderGroupHeaders ?? [],
      extra: opts.requestheaderExtraHeadersPrefix ?? [], allowed: opts.requestheaderAllowedNames ?? [],
    }), log.child({ hook: 'start-cluster-authentication-info-controller' }))
  }
  // APF: the mandatory and suggested configuration objects are in place (and in force) before the server is ready.
  const apf = opts.enablePriorityAndFairness ? new ApfController(client, new FlowClient(await connect(flowPool, 'main')), log.child({ controller: 'apf-config' })) : null
  await apf?.start()
  Atomics.store(new Int32Array(state), STATE_BOOTSTRAPPED, 1)
  // The default roles and bindings (auto-reconciled on every start while RBAC is on), before the server reports ready.
  if (opts.authorizationMode.includes('RBAC')) await reconcileRbacDefaults(client, log.child({ hook: 'rbac/bootstrap-roles' }))
  const apiService = { clusterIP: ipv4String(serviceRanges.ip.base), port: httpsPort || httpPort, address: opts.advertiseAddress || advertiseAddress(opts.bindAddress) }
  if (apiService.address === undefined) log.warn({ bindAddress: opts.bindAddress }, 'no address to advertise (the bind address is loopback and no other interface has an IPv4 address): default/kubernetes gets no endpoints; set --advertise-address')
  const controllers: Controllers = await startControllers(client, log, { signingKey: saKeys.signing, caPem, apiService, controllers: opts.controllers })
  Atomics.store(new Int32Array(state), STATE_RBAC_BOOTSTRAPPED, 1)
  controllers.startBackground()

  let closing: Promise<void> | null = null
  const server: Server = {
    httpPort, httpsPort, kubeconfig,
    close() {
      closing ??= (async () => {
        Atomics.store(new Int32Array(state), STATE_SHUTTING_DOWN, 1)
        if (opts.shutdownDelayDuration > 0) await new Promise((r) => setTimeout(r, opts.shutdownDelayDuration))
        controllers.stop()
        apf?.stop()
        await Promise.all(frontends.map((w) => new Promise<void>((resolve) => {
          const t = setTimeout(resolve, 2000)
          w.on('message', (m: { type: string }) => { if (m.type === 'closed') { clearTimeout(t); resolve() } })
          w.postMessage({ type: 'close' })
        })))
        client.close()
      })()
      return closing
    },
  }
  return server
}

