// Child processes started by a run (servers, etcd, uws-hello): killed when the bench exits, however it exits.
import type { ChildProcess } from 'node:child_process'

const children = new Set<ChildProcess>()

export function track(proc: ChildProcess): void {
  children.add(proc)
  proc.once('exit', () => children.delete(proc))
}

export function killAll(): void {
  for (const p of children) {
    try { p.kill('SIGKILL') } catch { /* already gone */ }
  }
  children.clear()
}
