// Adds lock entries for optional platform packages the registry here does not serve (msgpackr-extract's darwin,
// linux-arm and win32 builds), so `npm ci` accepts the lock. Run it after any `npm install` that rewrites the lock.
import { readFileSync, writeFileSync } from 'node:fs'

const file = new URL('../package-lock.json', import.meta.url)
const lock = JSON.parse(readFileSync(file, 'utf8'))
const stubs = { 'darwin-arm64': ['darwin', 'arm64'], 'darwin-x64': ['darwin', 'x64'], 'linux-arm': ['linux', 'arm'], 'win32-x64': ['win32', 'x64'] }
const extract = lock.packages['node_modules/msgpackr-extract']
let added = 0
if (extract) {
  for (const [name, [os, cpu]] of Object.entries(stubs)) {
    const key = `node_modules/@msgpackr-extract/msgpackr-extract-${name}`
    if (!lock.packages[key]) {
      lock.packages[key] = { version: extract.version, cpu: [cpu], license: 'MIT', optional: true, os: [os] }
      added++
    }
  }
  lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)))
}
writeFileSync(file, JSON.stringify(lock, null, 2) + '\n')
process.stdout.write(`${added} stub entries added\n`)
