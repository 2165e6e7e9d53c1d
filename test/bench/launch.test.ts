// The bench's server launcher: a port it picked that another process takes before the server binds it is not a failed
// run; the start is tried again on another port.
import t from 'tap'
import net from 'node:net'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort, launchServer } from '../../bench/lib/server.js'

t.test('a picked port taken before the server binds it: started again on a fresh port', async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), 'orch-launch-'))
  const thief = net.createServer((c) => c.destroy())
  await new Promise<void>((resolve) => thief.listen({ host: '127.0.0.1', port: 0 }, () => resolve()))
  const taken = (thief.address() as net.AddressInfo).port
  const picked: number[] = []
  const srv = await launchServer({
    port: 0, tmp, logLevel: 'warn',
    pickPort: async () => { const p = picked.length === 0 ? taken : await freePort(); picked.push(p); return p },
  })
  try {
    t.equal(picked[0], taken, 'the first pick was the taken port')
    t.equal(picked.length, 2, 'one more try')
    t.equal(srv.url, `http://127.0.0.1:${picked[1]}`, 'the server runs on the second port')
  } finally {
    await srv.stop()
    await new Promise<void>((resolve) => thief.close(() => resolve()))
    rmSync(tmp, { recursive: true, force: true })
  }
})
