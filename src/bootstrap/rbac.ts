// Start-up reconciliation of the default RBAC policy (upstream post-start hook rbac/bootstrap-roles) through the in-process client.
import type { Logger } from 'pino'
import { bootstrapObjects } from '../auth/rbac-defaults.js'
import { reconcile } from '../auth/rbac-reconcile.js'
import type { RbacObject } from '../../actors/authz/rbac.js'
import type { InternalClient } from '../server/internal-client.js'
import type { Obj } from '../registry/define.js'

const GROUP = 'rbac.authorization.orch.io'
const RESOURCE: Record<string, string> = { ClusterRole: 'clusterroles', ClusterRoleBinding: 'clusterrolebindings', Role: 'roles', RoleBinding: 'rolebindings' }
const ATTEMPTS = 10

function collectionPath(o: RbacObject): string {
  const ns = o.metadata.namespace ? `/namespaces/${o.metadata.namespace}` : ''
  return `/apis/${GROUP}/v1${ns}/${RESOURCE[o.kind]}`
}

export interface ReconcileSummary { created: number; updated: number; recreated: number; protected: number; unchanged: number }

/**
 * Every default object: created when absent; otherwise missing rules, subjects, labels and annotations are added
 * (objects annotated `rbac.authorization.orch.io/autoupdate: "false"` are left alone); a binding whose roleRef
 * differs is deleted and created again. Conflicts are retried; anything else fails the start.
 */
export async function reconcileRbacDefaults(client: InternalClient, log: Logger): Promise<ReconcileSummary> {
  const sum: ReconcileSummary = { created: 0, updated: 0, recreated: 0, protected: 0, unchanged: 0 }
  await Promise.all(bootstrapObjects().map(async (wanted) => {
    const coll = collectionPath(wanted)
    const path = `${coll}/${encodeURIComponent(wanted.metadata.name)}`
    for (let attempt = 0; ; attempt++) {
      if (attempt >= ATTEMPTS) throw new Error(`reconciling ${wanted.kind} ${wanted.metadata.name}: too many conflicts`)
      const cur = await client.request('GET', path)
      if (cur.status !== 200 && cur.status !== 404) throw new Error(`reading ${wanted.kind} ${wanted.metadata.name}: ${cur.status} ${cur.body.message}`)
      const existing = cur.status === 200 ? cur.body as unknown as RbacObject : undefined
      const r = reconcile(existing, wanted)
      if (r.protected) {
        sum.protected++
        if (r.missingRules.length > 0 || r.missingSubjects.length > 0) {
          log.warn({ kind: wanted.kind, name: wanted.metadata.name, missingRules: r.missingRules.length, missingSubjects: r.missingSubjects.length }, 'default RBAC object has autoupdate "false" and lacks default permissions; left as it is')
        }
        return
      }
      let res
      switch (r.operation) {
        case 'none': sum.unchanged++; return
        case 'create':
          res = await client.request('POST', coll, r.object as unknown as Obj)
          if (res.status === 201) { sum.created++; return }
          break
        case 'update':
          res = await client.request('PUT', path, r.object as unknown as Obj)
          if (res.status === 200) { sum.updated++; return }
          break
        case 'recreate': {
          const uid = (existing?.metadata as Obj | undefined)?.uid
          res = await client.request('DELETE', path, { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid } })
          if (res.status >= 300 && res.status !== 404) break
          const obj = { ...(r.object as unknown as Obj) }
          obj.metadata = { ...obj.metadata }
          delete obj.metadata.resourceVersion
          delete obj.metadata.uid
          res = await client.request('POST', coll, obj)
          if (res.status === 201) { sum.recreated++; return }
          break
        }
      }
      if (res.status !== 409 && res.status !== 404) throw new Error(`reconciling ${wanted.kind} ${wanted.metadata.name}: ${res.status} ${res.body.message}`)
    }
  }))
  log.info(sum, 'default RBAC policy reconciled')
  return sum
}
