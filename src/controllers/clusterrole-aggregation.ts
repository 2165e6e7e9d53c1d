// The ClusterRole aggregation controller: the rules of every ClusterRole with an aggregationRule are the union of the ClusterRoles its selectors match.
import type { Logger } from 'pino'
import { recordObject, typePrefix } from '../machinery/storage-format.js'
import type { Obj } from '../registry/define.js'
import type { InternalClient } from '../server/internal-client.js'
import { aggregatedRules, semanticEqual, type RoleObject } from '../../actors/authz/rbac.js'
import { QueueController } from './queue.js'

const GROUP = 'rbac.authorization.orch.io'

export class ClusterRoleAggregation extends QueueController {

  constructor(client: InternalClient, log: Logger) {
    super(client, log, 'clusterrole', 500)
  }

  protected work(key: string): Promise<boolean> { return this.#sync(key) }

  /** Subscribes, then brings every aggregated ClusterRole up to date once before it resolves. */
  async start(): Promise<void> {
    const def = this.client.pipeline.registry.byGroupResource(GROUP, 'clusterroles')!
    // To a fixed point first (an aggregated role may feed another: admin takes edit, which takes view).
    for (let round = 0; round < 20; round++) {
      let changed = false
      for (const cr of this.#all()) if (cr.aggregationRule && await this.#syncOnce(cr.metadata.name) !== 'unchanged') changed = true
      if (!changed) break
    }
    // Then any change of any ClusterRole may change what an aggregated one should hold: all of them are looked at again.
    const requeue = () => { for (const cr of this.#all()) if (cr.aggregationRule) this.queue.add(cr.metadata.name) }
    this.unlisten.push(await this.client.listen(def, requeue, { attrsOnly: true }))
    requeue()
  }


  #all(): RoleObject[] {
    const { store } = this.client.pipeline
    const shard = store.shardFor(GROUP, 'clusterroles')
    store.snapshot(shard)
    const out: RoleObject[] = []
    for (const { value } of store.range(shard, typePrefix(GROUP, 'clusterroles', ''))) out.push(JSON.parse(recordObject(value).toString('utf8')) as RoleObject)
    return out
  }

  async #sync(name: string): Promise<boolean> {
    const r = await this.#syncOnce(name)
    return r !== 'conflict'
  }

  async #syncOnce(name: string): Promise<'updated' | 'unchanged' | 'conflict'> {
    const all = this.#all()
    const cr = all.find((c) => c.metadata.name === name)
    if (!cr || !cr.aggregationRule) return 'unchanged'
    const rules = aggregatedRules(cr, all)
    if (semanticEqual(rules, cr.rules)) return 'unchanged'
    const def = this.client.pipeline.registry.byGroupResource(GROUP, 'clusterroles')!
    const body: Obj = { ...cr, rules }
    const res = await this.client.request('PUT', this.client.path(def, '', name), body, { fieldManager: 'clusterrole-aggregation-controller' })
    if (res.status === 409) return 'conflict'
    if (res.status >= 300) { this.log.warn({ clusterrole: name, status: res.status, message: res.body.message }, 'could not write aggregated rules'); return 'unchanged' }
    this.log.info({ clusterrole: name, rules: rules.length }, 'aggregated rules updated')
    return 'updated'
  }
}
