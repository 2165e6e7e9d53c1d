// Child processes of a run (the server under test, etcd, uws-hello) are started by a worker thread, so that the load
// generator can yield the CPU to them on a shared machine (--loadgen-nice).
//
// Why: on the 2-core machine the load generator's main thread takes 30-40 % of a CPU beside the server, and the
// scheduler shares the cores fairly between them. On Linux a nice value belongs to one thread and a child process
// inherits it from the thread that forks it: the main thread lowers its own priority, the spawner thread keeps the
// bench's, and every process it starts keeps it too. A load generator that gets the CPU last reads its answers later
// if anything, so the latencies it reports can only grow with this, never shrink.
import { setPriority } from 'node:os'
import { Worker } from 'node:worker_threads'

export interface SpawnRequest {
  id: number
  cmd: string
  args: string[]
  /** stdout and stderr appended to this file */
  logFile?: string
  /** without a log file: stdout is dropped, stderr inherited or dropped */
  stderr?: 'inherit' | 'ignore'
}

export type SpawnNotice = { id: number; pid: number } | { id: number; error: string } | { id: number; exit: number | null }

/** A child process started by the spawner thread. */
export interface Spawned {
  readonly pid: number
  /** the exit code (null when a signal ended it) */
  readonly exited: Promise<number | null>
  running(): boolean
  kill(signal: NodeJS.Signals): void
}

let worker: Worker | undefined
let online: Promise<void> | undefined
let nextId = 1
/** spawns in flight and children running: while any, the spawner thread keeps the run alive */
let holds = 0

function hold(): void { if (holds++ === 0) worker!.ref() }
function release(): void { if (--holds === 0) worker!.unref() }
const waiting = new Map<number, { pid?: number; started: (pid: number) => void; failed: (e: Error) => void; exit: (code: number | null) => void }>()

/** Starts the spawner thread (once); children started before the main thread lowers its priority keep the bench's. */
export function startSpawner(): Promise<void> {
  if (online === undefined) {
    const w = new Worker(new URL('./spawner-worker.js', import.meta.url))
    worker = w
    // The thread keeps the run alive only while a spawn is in flight or a child it started is running.
    w.unref()
    w.on('message', (n: SpawnNotice) => {
      const h = waiting.get(n.id)
      if (h === undefined) return
      if ('pid' in n) { h.pid = n.pid; h.started(n.pid) }
      else if ('error' in n) { waiting.delete(n.id); h.failed(new Error(n.error)) }
      else { waiting.delete(n.id); h.exit(n.exit) }
    })
    // The thread failing ends the spawns in flight; children already running are no longer watched (killAll still
    // reaches them by pid).
    w.on('error', (err) => {
      const hs = [...waiting.values()]
      waiting.clear()
      for (const h of hs) if (h.pid === undefined) h.failed(err); else h.exit(null)
    })
    online = new Promise((resolve) => w.once('online', () => resolve()))
  }
  return online
}

/** Starts a process from the spawner thread; resolves once it has a pid. */
export async function spawnChild(cmd: string, args: string[], out: { logFile?: string; stderr?: 'inherit' | 'ignore' } = {}): Promise<Spawned> {
  await startSpawner()
  const w = worker!
  const id = nextId++
  let running = true
  let exit!: (code: number | null) => void
  const exited = new Promise<number | null>((resolve) => { exit = resolve })
  hold()
  const pid = await new Promise<number>((started, failed) => {
    waiting.set(id, {
      started,
      failed: (e) => { release(); failed(e) },
      exit: (code) => {
        running = false
        release()
        exit(code)
      },
    })
    w.postMessage({ id, cmd, args, ...out } satisfies SpawnRequest)
  })
  return {
    pid, exited,
    running: () => running,
    kill(signal) {
      if (!running) return
      try { process.kill(pid, signal) } catch { /* already gone */ }
    },
  }
}

/**
 * Lowers the CPU priority of the calling thread (the load generator's main thread) to `nice`, after the spawner has
 * started so that the processes it starts later keep the bench's priority. 0 leaves everything as it is. Returns
 * what was done, for the report's notes.
 */
export async function yieldCpu(nice: number): Promise<string | undefined> {
  await startSpawner()
  if (nice <= 0) return undefined
  try {
    setPriority(Math.min(19, nice))
    return `the load generator's main thread ran at nice ${Math.min(19, nice)}; the server and peers at the bench's own priority (--loadgen-nice)`
  } catch (err) {
    return `--loadgen-nice ${nice}: could not lower the load generator's priority (${err instanceof Error ? err.message : String(err)})`
  }
}
