// The thread that starts the bench's child processes (see spawner.ts): it keeps the CPU priority the bench started
// with, which Linux gives per thread and a child inherits from the thread that forks it.
import { spawn, type StdioOptions } from 'node:child_process'
import { closeSync, openSync } from 'node:fs'
import { parentPort } from 'node:worker_threads'
import type { SpawnNotice, SpawnRequest } from './spawner.js'

const port = parentPort
if (port === null) throw new Error('spawner-worker.js runs as a worker thread')

port.on('message', (r: SpawnRequest) => {
  const post = (n: SpawnNotice): void => port.postMessage(n)
  let fd: number | undefined
  try {
    if (r.logFile !== undefined) fd = openSync(r.logFile, 'a')
    const stdio: StdioOptions = fd !== undefined ? ['ignore', fd, fd] : ['ignore', 'ignore', r.stderr ?? 'ignore']
    const p = spawn(r.cmd, r.args, { stdio })
    // A command that cannot start (ENOENT) has no pid and reports an error instead of an exit.
    p.once('error', (err) => { if (p.pid === undefined) post({ id: r.id, error: err.message }) })
    p.once('exit', (code) => post({ id: r.id, exit: code }))
    if (p.pid !== undefined) post({ id: r.id, pid: p.pid })
  } catch (err) {
    post({ id: r.id, error: err instanceof Error ? err.message : String(err) })
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
})
