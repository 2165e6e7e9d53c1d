// Child processes started by a run (servers, etcd, uws-hello): killed when the bench exits, however it exits.
import type { Spawned } from './spawner.js'

const children = new Set<Spawned>()

export function track(proc: Spawned): void {
  children.add(proc)
  void proc.exited.then(() => children.delete(proc))
}

/** Synchronous, so that it can run in an 'exit' handler. */
export function killAll(): void {
  for (const p of children) p.kill('SIGKILL')
  children.clear()
}
