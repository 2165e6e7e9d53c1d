// Start-up: a taken port, bad flags, the ready line, gzip and the compression gate.
import t from 'tap'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, runMain } from '../helpers/server.js'


t.test('a port already taken by a running server fails the start, naming the flag', async (t) => {
  const s = await startServer()
  t.teardown(() => s.stop())
  const dir = mkdtempSync(join(tmpdir(), 'orch-test-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const r = await runMain(['--port', String(s.port), '--secure-port', '0', '--data-dir', dir])
  t.equal(r.code, 2)
  t.match(r.out, new RegExp(`--port ${s.port}: cannot listen on 127\\.0\\.0\\.1:${s.port}: address already in use`))
  // The running server still answers alone.
  const v = await s.request('GET', '/version')
  t.equal(v.status, 200)
})

t.test('an unknown flag fails the start with a message naming it', async (t) => {
  const r = await runMain(['--no-such-flag'])
  t.equal(r.code, 2)
  t.match(r.out, /unknown flag: --no-such-flag/)
})

t.test('gzip for large lists, and the gate that turns it off', async (t) => {
  for (const enabled of [true, false]) {
    const s = await startServer({ args: enabled ? [] : ['--feature-gates', 'APIResponseCompression=false'] })
    const big = 'a'.repeat(4000)
    for (let i = 0; i < 40; i++) {
      const r = await s.request('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: `big-${i}` }, data: { v: big } })
      t.equal(r.status, 201)
    }
    const plain = await s.request('GET', '/api/v1/namespaces/default/configmaps')
    t.equal(plain.headers['content-encoding'], undefined, 'no gzip unless asked')
    const gz = await s.request('GET', '/api/v1/namespaces/default/configmaps', undefined, { 'accept-encoding': 'gzip' })
    t.equal(gz.headers['content-encoding'], enabled ? 'gzip' : undefined, `gate ${enabled ? 'on' : 'off'}`)
    const small = await s.request('GET', '/api/v1/namespaces/default/configmaps/big-0', undefined, { 'accept-encoding': 'gzip' })
    t.equal(small.headers['content-encoding'], undefined, 'small answers are not compressed')
    await s.stop()
  }
})

t.test('the ready line names the lmdb addon the server process has loaded', async (t) => {
  const s = await startServer()
  t.teardown(() => s.stop())
  const ready = s.logs.map((l) => { try { return JSON.parse(l) } catch { return undefined } }).find((o) => o?.msg?.startsWith('orch-apiserver ready on'))
  t.ok(ready, 'a ready line')
  t.ok(['built from source', 'prebuilt'].includes(ready.lmdbAddon), `lmdbAddon is ${ready.lmdbAddon}`)
  let maps: string
  try { maps = readFileSync(`/proc/${s.proc.pid}/maps`, 'utf8') } catch { t.skip('no /proc here', async () => {}); return }
  const loaded = maps.split('\n').map((l) => l.split(/\s+/)[5] ?? '').filter((p) => /lmdb.*\.node$/.test(p))
  t.ok(loaded.length > 0, `an lmdb addon is mapped: ${[...new Set(loaded)].join(', ')}`)
  const fromSource = loaded.some((p) => p.endsWith('/build/Release/lmdb.node'))
  t.equal(ready.lmdbAddon, fromSource ? 'built from source' : 'prebuilt', 'what the line says is what was loaded')
})
