// The bootstrap token controllers (off by default, as upstream's): the token cleaner deletes expired token secrets; the bootstrap signer keeps one detached JWS per signing token in the cluster-info ConfigMap.
import type { Logger } from 'pino'
import { recordObject, typePrefix } from '../machinery/storage-format.js'
import type { Obj } from '../registry/define.js'
import type { InternalClient } from '../server/internal-client.js'
import {
  BOOTSTRAP_TOKEN_NAMESPACE, BOOTSTRAP_TOKEN_SECRET_TYPE, CLUSTER_INFO_KUBECONFIG_KEY, CLUSTER_INFO_NAME, CLUSTER_INFO_NAMESPACE,
  CLUSTER_INFO_SIGNATURE_PREFIX, KEY_EXPIRATION, computeDetachedSignature, hasExpired, secretData, signingTokenOf,
} from '../auth/bootstrap-token.js'
import { QueueController } from './queue.js'

const SECRETS_PREFIX = typePrefix('', 'secrets', BOOTSTRAP_TOKEN_NAMESPACE)
/** The longest wait for a token's expiry before it is looked at again (timers of longer waits are re-armed). */
const MAX_WAIT_MS = 24 * 3600 * 1000

/** A token secret of the bootstrap namespace, parsed; undefined for any other secret (only the bytes are looked at first). */
function tokenSecret(rec: Uint8Array): Obj | undefined {
  const json = recordObject(rec)
  if (!json.includes(BOOTSTRAP_TOKEN_SECRET_TYPE)) return undefined
  const o = JSON.parse(json.toString('utf8')) as Obj
  return o.type === BOOTSTRAP_TOKEN_SECRET_TYPE ? o : undefined
}

/** Deletes bootstrap token secrets once their `expiration` has passed (upstream's tokencleaner). Keys: secret names. */
export class TokenCleaner extends QueueController {
  constructor(client: InternalClient, log: Logger) {
    super(client, log, 'secret', 1000)
  }

  protected work(name: string): Promise<boolean> { return this.#sync(name) }

  async start(): Promise<void> {
    const { registry, store } = this.client.pipeline
    this.unlisten.push(await this.client.listen(registry.byGroupResource('', 'secrets')!, (events) => {
      for (const [type, key] of events) if (type !== 'DELETED' && key.startsWith(SECRETS_PREFIX)) this.queue.add(key.slice(SECRETS_PREFIX.length))
    }, { attrsOnly: true }))
    const shard = store.shardFor('', 'secrets')
    store.snapshot(shard)
    for (const { key } of store.range(shard, SECRETS_PREFIX)) this.queue.add(key.slice(SECRETS_PREFIX.length))
  }

  async #sync(name: string): Promise<boolean> {
    const def = this.client.pipeline.registry.byGroupResource('', 'secrets')!
    const { store } = this.client.pipeline
    const rec = store.getFresh(store.shardFor('', 'secrets'), `${SECRETS_PREFIX}${name}`)
    const secret = rec ? tokenSecret(rec) : undefined
    if (!secret || secret.metadata?.deletionTimestamp) return true
    if (!hasExpired(secret)) {
      const at = Date.parse(secretData(secret, KEY_EXPIRATION))
      // Looked at again when it expires (a token without a readable expiration never does).
      if (Number.isFinite(at)) this.queue.addAfter(name, Math.min(MAX_WAIT_MS, Math.max(0, at - Date.now()) + 10))
      return true
    }
    const r = await this.client.request('DELETE', this.client.path(def, BOOTSTRAP_TOKEN_NAMESPACE, name), { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: secret.metadata.uid } })
    if (r.status < 300 || r.status === 404 || r.status === 409) {
      if (r.status < 300) this.log.info({ secret: `${BOOTSTRAP_TOKEN_NAMESPACE}/${name}` }, 'deleted an expired bootstrap token')
      return true
    }
    this.log.warn({ secret: `${BOOTSTRAP_TOKEN_NAMESPACE}/${name}`, status: r.status, message: r.body.message }, 'could not delete an expired bootstrap token')
    return false
  }
}

/**
 * Keeps the cluster-info ConfigMap's `jws-kubeconfig-<token id>` keys: one detached signature of its kubeconfig per
 * valid signing token, none for any other (upstream's bootstrapsigner). A cluster-info without a kubeconfig is left alone.
 */
export class BootstrapSigner extends QueueController {
  constructor(client: InternalClient, log: Logger) {
    super(client, log, 'configmap', 1000)
  }

  protected work(): Promise<boolean> { return this.#sync() }

  async start(): Promise<void> {
    const { registry } = this.client.pipeline
    const clusterInfoKey = `${typePrefix('', 'configmaps', CLUSTER_INFO_NAMESPACE)}${CLUSTER_INFO_NAME}`
    this.unlisten.push(await this.client.listen(registry.byGroupResource('', 'configmaps')!, (events) => {
      for (const [, key] of events) if (key === clusterInfoKey) this.queue.add(CLUSTER_INFO_NAME)
    }, { attrsOnly: true }))
    this.unlisten.push(await this.client.listen(registry.byGroupResource('', 'secrets')!, (events) => {
      for (const [, key] of events) if (key.startsWith(SECRETS_PREFIX)) this.queue.add(CLUSTER_INFO_NAME)
    }, { attrsOnly: true }))
    this.queue.add(CLUSTER_INFO_NAME)
  }

  async #sync(): Promise<boolean> {
    const { registry, store } = this.client.pipeline
    const def = registry.byGroupResource('', 'configmaps')!
    const cur = await this.client.request('GET', this.client.path(def, CLUSTER_INFO_NAMESPACE, CLUSTER_INFO_NAME))
    if (cur.status !== 200) return true
    const cm = cur.body
    const data: Record<string, string> = cm.data ?? {}
    const content = data[CLUSTER_INFO_KUBECONFIG_KEY]
    if (content === undefined) return true
    // The signatures wanted now; a token that expires is looked at again then.
    const wanted: Record<string, string> = {}
    const shard = store.shardFor('', 'secrets')
    store.snapshot(shard)
    let nextExpiry = Infinity
    for (const { value } of store.range(shard, SECRETS_PREFIX)) {
      const secret = tokenSecret(value)
      const token = secret && signingTokenOf(secret)
      if (!token) continue
      wanted[`${CLUSTER_INFO_SIGNATURE_PREFIX}${token.id}`] = computeDetachedSignature(content, token.id, token.secret)
      const at = Date.parse(secretData(secret, KEY_EXPIRATION))
      if (Number.isFinite(at)) nextExpiry = Math.min(nextExpiry, at)
    }
    if (nextExpiry !== Infinity) this.queue.addAfter(CLUSTER_INFO_NAME, Math.min(MAX_WAIT_MS, Math.max(0, nextExpiry - Date.now()) + 10))
    const have = Object.entries(data).filter(([k]) => k.startsWith(CLUSTER_INFO_SIGNATURE_PREFIX))
    const same = have.length === Object.keys(wanted).length && have.every(([k, v]) => wanted[k] === v)
    if (same) return true
    const next: Record<string, string> = {}
    for (const [k, v] of Object.entries(data)) if (!k.startsWith(CLUSTER_INFO_SIGNATURE_PREFIX)) next[k] = v
    cm.data = { ...next, ...wanted }
    const r = await this.client.request('PUT', this.client.path(def, CLUSTER_INFO_NAMESPACE, CLUSTER_INFO_NAME), cm)
    if (r.status === 409) return false
    if (r.status >= 300 && r.status !== 404) { this.log.warn({ status: r.status, message: r.body.message }, 'could not sign cluster-info'); return false }
    return true
  }
}
