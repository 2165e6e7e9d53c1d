// Adds lock entries for optional platform packages the registry here does not serve (msgpackr-extract's darwin,
// linux-arm and win32 builds; every cbor-extract build), so `npm ci` accepts the lock. Run it after any `npm install`
// that rewrites the lock.
import { readFileSync, writeFileSync } from 'node:fs'

const file = new URL('../package-lock.json', import.meta.url)
const lock = JSON.parse(readFileSync(file, 'utf8'))
const PLATFORMS = {
  'darwin-arm64': ['darwin', 'arm64'], 'darwin-x64': ['darwin', 'x64'], 'linux-arm': ['linux', 'arm'],
  'linux-arm64': ['linux', 'arm64'], 'linux-x64': ['linux', 'x64'], 'win32-x64': ['win32', 'x64'],
}
/** parent package → the scope of its platform builds; each build named in its optionalDependencies gets a stub when absent. */
const PARENTS = { 'msgpackr-extract': '@msgpackr-extract', 'cbor-extract': '@cbor-extract' }
let added = 0
for (const [parent, scope] of Object.entries(PARENTS)) {
  const entry = lock.packages[`node_modules/${parent}`]
  if (!entry) continue
  for (const name of Object.keys(entry.optionalDependencies ?? {})) {
    if (!name.startsWith(`${scope}/${parent}-`)) continue
    const platform = PLATFORMS[name.slice(scope.length + parent.length + 2)]
    const key = `node_modules/${name}`
    if (!platform || lock.packages[key]) continue
    lock.packages[key] = { version: entry.optionalDependencies[name], cpu: [platform[1]], license: 'MIT', optional: true, os: [platform[0]] }
    added++
  }
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)))
writeFileSync(file, JSON.stringify(lock, null, 2) + '\n')
process.stdout.write(`${added} stub entries added\n`)
