// The legacy token controller: a Secret of type orch.io/service-account-token naming a ServiceAccount gets a signed legacy token, the CA and the namespace.
import type { Logger } from 'pino'
import { objectKey, recordObject, typePrefix } from '../machinery/storage-format.js'
import type { Obj } from '../registry/define.js'
import type { InternalClient } from '../server/internal-client.js'
import { issueLegacyToken, type SigningKey } from '../auth/service-account.js'
import { WorkQueue } from './queue.js'

export const SERVICE_ACCOUNT_TOKEN_TYPE = 'orch.io/service-account-token'
export const SERVICE_ACCOUNT_NAME_ANNOTATION = 'orch.io/service-account.name'
export const SERVICE_ACCOUNT_UID_ANNOTATION = 'orch.io/service-account.uid'

export class ServiceAccountTokens {
  #client: InternalClient
  #log: Logger
  #key: SigningKey
  #caPem: string
  #queue: WorkQueue
  #unlisten: (() => void) | null = null
  #unlistenAccounts: (() => void) | null = null

  constructor(client: InternalClient, log: Logger, key: SigningKey, caPem: string) {
    this.#client = client
    this.#log = log
    this.#key = key
    this.#caPem = caPem
    this.#queue = new WorkQueue((k) => this.#sync(k), (err, k) => log.error({ err, secret: k }, 'token secret sync failed'), 1000)
  }

  async start(): Promise<void> {
    const { registry, store } = this.#client.pipeline
    const def = registry.byGroupResource('', 'secrets')!
    this.#unlisten = await this.#client.listen(def, (events) => {
      for (const [type, key, , rec] of events) if (type !== 'DELETED' && this.#wants(rec)) this.#queue.add(key)
    })
    // An account that goes takes its token secrets with it: each of its namespace's token secrets is looked at again.
    const saDef = registry.byGroupResource('', 'serviceaccounts')!
    this.#unlistenAccounts = await this.#client.listen(saDef, (events) => {
      for (const [type, key] of events) if (type === 'DELETED') this.#requeueNamespace(key.slice(typePrefix('', 'serviceaccounts').length).split('/')[0])
    }, { attrsOnly: true })
    const shard = store.shardFor('', 'secrets')
    store.snapshot(shard)
    for (const { key, value } of store.range(shard, typePrefix('', 'secrets'))) if (this.#wants(value)) this.#queue.add(key)
  }

  stop(): void { this.#queue.stop(); this.#unlisten?.(); this.#unlistenAccounts?.() }

  #requeueNamespace(ns: string): void {
    const { store } = this.#client.pipeline
    for (const { key, value } of store.range(store.shardFor('', 'secrets'), typePrefix('', 'secrets', ns))) if (this.#wants(value)) this.#queue.add(key)
  }

  /** Deletes a token secret whose account is gone (upstream's tokens controller does), unless it changed meanwhile. */
  async #deleteSecret(secret: Obj, key: string): Promise<boolean> {
    const def = this.#client.pipeline.registry.byGroupResource('', 'secrets')!
    const r = await this.#client.request('DELETE', this.#client.path(def, secret.metadata.namespace, secret.metadata.name), { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: secret.metadata.uid } })
    if (r.status >= 300 && r.status !== 404 && r.status !== 409) { this.#log.warn({ secret: key, status: r.status }, 'could not delete the token secret of a deleted service account'); return false }
    if (r.status < 300) this.#log.info({ secret: key }, 'token secret of a deleted service account deleted')
    return true
  }

  /** A cheap pre-check on the bytes: only token secrets are parsed. */
  #wants(rec: Uint8Array): boolean {
    return recordObject(rec).includes(SERVICE_ACCOUNT_TOKEN_TYPE)
  }

  async #sync(key: string): Promise<boolean> {
    const { registry, store } = this.#client.pipeline
    const rec = store.getFresh(store.shardFor('', 'secrets'), key)
    if (!rec) return true
    const secret = JSON.parse(recordObject(rec).toString('utf8')) as Obj
    if (secret.type !== SERVICE_ACCOUNT_TOKEN_TYPE || secret.metadata?.deletionTimestamp) return true
    const ns: string = secret.metadata.namespace
    const saName: string | undefined = secret.metadata.annotations?.[SERVICE_ACCOUNT_NAME_ANNOTATION]
    if (!saName) return true
    const saRec = store.getFresh(store.shardFor('', 'serviceaccounts'), objectKey('', 'serviceaccounts', ns, saName))
    // The account is gone (or is another of the same name): its token secret goes too.
    if (!saRec) return this.#deleteSecret(secret, key)
    const sa = JSON.parse(recordObject(saRec).toString('utf8')) as Obj
    const uid: string = sa.metadata.uid
    const wantUid = secret.metadata.annotations?.[SERVICE_ACCOUNT_UID_ANNOTATION]
    if (wantUid !== undefined && wantUid !== uid) return this.#deleteSecret(secret, key)
    if (secret.data?.token && wantUid === uid) return true
    const token = await issueLegacyToken({ key: this.#key, namespace: ns, serviceAccountName: saName, serviceAccountUID: uid, secretName: secret.metadata.name })
    secret.metadata.annotations = { ...(secret.metadata.annotations ?? {}), [SERVICE_ACCOUNT_UID_ANNOTATION]: uid }
    secret.data = {
      ...(secret.data ?? {}),
      token: Buffer.from(token).toString('base64'),
      namespace: Buffer.from(ns).toString('base64'),
      ...(this.#caPem ? { 'ca.crt': Buffer.from(this.#caPem).toString('base64') } : {}),
    }
    const def = registry.byGroupResource('', 'secrets')!
    const r = await this.#client.request('PUT', this.#client.path(def, ns, secret.metadata.name), secret)
    if (r.status === 409) return false
    if (r.status >= 300 && r.status !== 404) { this.#log.warn({ secret: key, status: r.status, message: r.body.message }, 'could not populate token secret'); return true }
    this.#log.info({ secret: key, serviceAccount: saName }, 'legacy service-account token issued')
    return true
  }
}
