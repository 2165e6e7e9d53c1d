// Which native addon of lmdb-js this process loads: the one `npm ci` built from source (scripts/build-lmdb.mjs),
// which node-gyp-build picks first, or the prebuilt binary lmdb ships (slower reads). Logged at start and in bench reports.
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

export type LmdbAddon = 'built from source' | 'prebuilt'

export function lmdbAddon(): LmdbAddon {
  try {
    // lmdb's exports leave out its package.json: its entry point is dist/index.cjs (scripts/build-lmdb.mjs likewise).
    const dir = join(dirname(createRequire(import.meta.url).resolve('lmdb')), '..')
    return existsSync(join(dir, 'build', 'Release', 'lmdb.node')) ? 'built from source' : 'prebuilt'
  } catch {
    return 'prebuilt'
  }
}
