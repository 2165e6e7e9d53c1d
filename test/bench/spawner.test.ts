// The bench's spawner: with --loadgen-nice the load generator's main thread yields the CPU, while the processes the
// bench starts (the server under test, its peers) keep the bench's own priority. Linux gives nice values per thread
// and a child inherits the value of the thread that forks it, which is what this checks. Runs the built module
// (dist/), whose worker thread is a .js file next to it.
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { spawnChild, yieldCpu } from '../../dist/bench/lib/spawner.js'

/** The nice value of a task from its stat line (the 19th field; the command name may hold spaces). */
const niceOf = (stat: string): number => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])

t.test('children keep the bench priority after the load generator yields', { skip: process.platform !== 'linux' && 'nice values per thread are Linux' }, async (t) => {
  const before = niceOf(readFileSync('/proc/thread-self/stat', 'utf8'))
  t.equal(await yieldCpu(0), undefined, '0 changes nothing')
  t.equal(niceOf(readFileSync('/proc/thread-self/stat', 'utf8')), before)

  const note = await yieldCpu(before + 7)
  t.match(note, /nice/)
  t.equal(niceOf(readFileSync('/proc/thread-self/stat', 'utf8')), Math.min(19, before + 7), 'the calling thread yields')

  const dir = mkdtempSync(join(tmpdir(), 'orch-spawner-'))
  const log = join(dir, 'child.log')
  const child = await spawnChild('sh', ['-c', 'cat /proc/self/stat; echo err >&2'], { logFile: log })
  t.ok(child.pid > 0)
  t.equal(await child.exited, 0)
  t.equal(child.running(), false)
  const out = readFileSync(log, 'utf8')
  t.equal(niceOf(out.split('\n')[0]), before, 'the child runs at the bench priority')
  t.match(out, /\nerr\n$/, 'stdout and stderr go to the log file')
})

t.test('kill ends a child; a missing command fails', async (t) => {
  const child = await spawnChild('sleep', ['60'])
  t.equal(child.running(), true)
  child.kill('SIGKILL')
  t.equal(await child.exited, null, 'ended by a signal')
  child.kill('SIGKILL') // nothing left to kill: no throw
  await t.rejects(spawnChild('/nonexistent/orch-no-such-command', []), /ENOENT/)
})
