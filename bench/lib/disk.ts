// Bytes a directory takes on disk (allocated blocks, so sparse LMDB files count only what they use).
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

export function diskBytes(dir: string): number {
  let total = 0
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) total += diskBytes(p)
    else if (e.isFile()) total += statSync(p).blocks * 512
  }
  return total
}
