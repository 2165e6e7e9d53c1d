import t from 'tap'
import { GO_ZERO_TIME, goDuration, rfc3339Nano, tabwrite } from '../../src/machinery/tabwriter.js'

t.test('tabwrite aligns tab-terminated cells as Go text/tabwriter (minwidth 8, padding 1, spaces)', async (t) => {
  t.equal(tabwrite('a,\tb,\tc\nlonger-than-8,\tb,\tc\n'), 'a,             b,      c\nlonger-than-8, b,      c\n')
  t.equal(tabwrite('aaa\tb\tc\na\tbbbbbbbbbb\tc\nz\n'), 'aaa     b          c\na       bbbbbbbbbb c\nz\n', 'a line without tabs ends the column blocks')
  t.equal(tabwrite('x\ty\nlong cell here\n'), 'x       y\nlong cell here\n', 'the last cell of a line is never padded')
  t.equal(tabwrite('h1,\th2\n'), 'h1,     h2\n', 'a header alone')
  t.equal(tabwrite('µµ\tx\nab\tx\n'), 'µµ      x\nab      x\n', 'width counts characters, not bytes')
  t.equal(tabwrite('a\tb\nc\td\te\n'), 'a       b\nc       d       e\n', 'a deeper column is a block of its own')
})

t.test('goDuration prints as Go time.Duration.String', async (t) => {
  const cases: Array<[number, string]> = [
    [0, '0s'], [1, '1ns'], [999, '999ns'], [1_000, '1µs'], [2_500, '2.5µs'], [5e6, '5ms'], [1.5e6, '1.5ms'], [1_234_567, '1.234567ms'],
    [1e9, '1s'], [2.25e9, '2.25s'], [60e9, '1m0s'], [90e9, '1m30s'], [3600e9, '1h0m0s'], [3723.5e9, '1h2m3.5s'], [-5e6, '-5ms'],
  ]
  for (const [ns, want] of cases) t.equal(goDuration(ns), want, `${ns} ns`)
})

t.test('rfc3339Nano prints UTC with the fraction trimmed', async (t) => {
  t.equal(rfc3339Nano(Date.UTC(2024, 0, 2, 3, 4, 5)), '2024-01-02T03:04:05Z')
  t.equal(rfc3339Nano(Date.UTC(2024, 0, 2, 3, 4, 5, 678) + 0.25), '2024-01-02T03:04:05.67825Z')
  t.equal(rfc3339Nano(Date.UTC(2024, 0, 2, 3, 4, 5, 100)), '2024-01-02T03:04:05.1Z')
  t.equal(GO_ZERO_TIME, '0001-01-01T00:00:00Z')
})
