// The bench's open-loop generator times each operation from when it was due: a generator that falls behind counts
// its own lateness against the result instead of hiding it (coordinated omission).
import t from 'tap'
import { paced } from '../../bench/lib/load.js'
import { Progress } from '../../bench/lib/progress.js'

t.test('an open-loop run counts the generator\'s own lateness', async (t) => {
  // 200 operations a second for 0.6 s, each answered at once; 100 ms in, the generator's event loop is blocked for
  // 150 ms, so the ~30 operations due meanwhile start late, together.
  const block = setTimeout(() => { const end = performance.now() + 150; while (performance.now() < end) { /* busy */ } }, 100)
  const r = await paced({ label: 'late', rate: 200, durationMs: 600, maxInFlight: 1000, op: async () => 'ok', progress: new Progress(false) })
  clearTimeout(block)
  t.equal(r.errors, 0)
  t.ok(r.ops >= 100, `ran ${r.ops} operations`)
  t.ok(r.latency.max >= 100, `an operation due when the loop blocked waited for it: max ${r.latency.max} ms`)
  // timed from when each was due, not from the start of the run (which would put the median near 300 ms)
  t.ok(r.latency.p50 < 100, `most operations were on time: p50 ${r.latency.p50} ms`)
})
