// Starts the uws-hello peer (uws-hello-server.js) in its own process and waits until it answers.
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort, probe } from './server.js'
import { ProcSampler } from './proc.js'
import { track } from './children.js'

const script = fileURLToPath(new URL('./uws-hello-server.js', import.meta.url))

export interface HelloServer {
  url: string
  pid: number
  sampler: ProcSampler
  stop(): Promise<void>
}

/** `body` is what every request gets back (the scenario passes the same bytes the API server returns). */
export async function startUwsHello(tmp: string, body: Buffer): Promise<HelloServer> {
  const port = await freePort()
  const bodyFile = join(tmp, `uws-hello-${port}.json`)
  writeFileSync(bodyFile, body)
  const proc = spawn(process.execPath, [script, String(port), bodyFile], { stdio: ['ignore', 'ignore', 'inherit'] })
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
  let gone = false
  void exited.then(() => { gone = true })
  track(proc)
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 10_000
  while ((await probe(url, '/', 500)) !== 200) {
    if (gone) throw new Error('uws-hello exited before it listened')
    if (Date.now() > deadline) { proc.kill('SIGKILL'); throw new Error('uws-hello did not answer within 10 s') }
    await new Promise((r) => setTimeout(r, 10))
  }
  return {
    url, pid: proc.pid!, sampler: new ProcSampler(proc.pid!),
    async stop() {
      if (!gone) proc.kill('SIGKILL')
      await exited
    },
  }
}
