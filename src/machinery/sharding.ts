// The one placement function: which shard owns a resource type (all of a type's objects live on one shard).
import { createHash } from 'node:crypto'

/** Types that carry most writes in a busy cluster get spread first; the rest hash by group/resource. */
const PINNED: Record<string, number> = { '/pods': 0, 'coordination.orch.io/leases': 1, '/events': 2, '/nodes': 3 }

export function shardOf(group: string, resource: string, shards: number): number {
  if (shards <= 1) return 0
  const id = `${group}/${resource}`
  const pinned = PINNED[id]
  if (pinned !== undefined) return pinned % shards
  const h = createHash('sha256').update(id).digest()
  return h.readUInt32BE(0) % shards
}
