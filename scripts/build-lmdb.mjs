// Builds lmdb-js's native addon from its source with the machine's compiler (postinstall of `npm ci`). The prebuilt
// binary lmdb 3.5.6 ships reads a range 1.5-1.9x slower on this project's machines (0.56-0.70 vs 0.40 µs per plain
// 1.5 KB record, 1.5-1.7 vs 1.0 µs per compressed one: its lz4 helpers are not inlined), which is most of a list
// page's cost. node-gyp-build loads build/Release before the prebuilt one, so a build that fails or does not load is
// removed and the prebuilt stays in use. ORCH_LMDB_PREBUILT=1 skips the build.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

const say = (msg) => process.stderr.write(`build-lmdb: ${msg}\n`)

if (process.env.ORCH_LMDB_PREBUILT === '1') {
  say('ORCH_LMDB_PREBUILT=1: keeping the prebuilt binary')
  process.exit(0)
}

const require = createRequire(import.meta.url)
let lmdbDir
try {
  // lmdb's exports leave out its package.json: its entry point is dist/index.cjs.
  lmdbDir = join(dirname(require.resolve('lmdb')), '..')
  if (JSON.parse(readFileSync(join(lmdbDir, 'package.json'), 'utf8')).name !== 'lmdb') throw new Error('unexpected layout')
} catch {
  say('lmdb is not installed (or not laid out as 3.x is); nothing to build')
  process.exit(0)
}
const buildDir = join(lmdbDir, 'build')

/** Opens a store with the addon node-gyp-build picks and reads back a compressed record. */
function loads() {
  const dir = mkdtempSync(join(tmpdir(), 'orch-lmdb-check-'))
  const check = `
    const { open } = require('lmdb')
    const db = open({ path: ${JSON.stringify(dir)}, compression: { threshold: 10 } })
    const value = 'x'.repeat(2000)
    db.putSync('k', value)
    if (db.get('k') !== value) process.exit(2)
    db.close()`
  const r = spawnSync(process.execPath, ['-e', check], { cwd: dirname(lmdbDir), stdio: 'pipe' })
  rmSync(dir, { recursive: true, force: true })
  return r.status === 0
}

const started = Date.now()
const npm = process.env.npm_execpath
const args = npm ? [process.execPath, npm, 'rebuild', 'lmdb'] : ['npm', 'rebuild', 'lmdb']
const r = spawnSync(args[0], args.slice(1), {
  cwd: dirname(dirname(lmdbDir)),
  env: { ...process.env, npm_config_build_from_source: 'true' },
  stdio: ['ignore', 'pipe', 'pipe'],
})
const built = r.status === 0 && existsSync(join(buildDir, 'Release', 'lmdb.node'))
if (built && loads()) {
  say(`built lmdb's native addon from source in ${((Date.now() - started) / 1000).toFixed(0)} s`)
} else {
  if (!built) say(`the build failed (exit ${r.status}): ${String(r.stderr).trim().split('\n').slice(-5).join(' | ')}`)
  else say('the addon built from source did not load')
  rmSync(buildDir, { recursive: true, force: true })
  say(loads() ? 'keeping the prebuilt binary (reads are slower)' : 'warning: lmdb does not load at all')
}
