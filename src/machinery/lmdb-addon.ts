// Which native addon of lmdb-js this process loads: the one `npm ci` built from source (scripts/build-lmdb.mjs),
// which node-gyp-build picks first, or the prebuilt binary lmdb ships (slower reads). Logged at start and in bench reports.
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

export type LmdbAddon = 'built from source' | 'prebuilt'

export function lmdbAddon(): LmdbAddon {
  try {
    // lmdb's exports do not include its package.json: go up from its entry point (node_modules/lmdb/dist/index.cjs).
    let dir = dirname(createRequire(import.meta.url).resolve('lmdb'))
    while (!existsSync(join(dir, 'package.json'))) {
      const up = dirname(dir)
      if (up === dir) return 'prebuilt'
      dir = up
    }
    return existsSync(join(dir, 'build', 'Release', 'lmdb.node')) ? 'built from source' : 'prebuilt'
  } catch {
    return 'prebuilt'
  }
}
