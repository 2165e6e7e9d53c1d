// Duplicate-key detection of JSON bodies: the cheap count of `"…":` in the text against the keys of the parsed value
// must see through escaped quotes and backslashes, whitespace before the colon, and long values.
import t from 'tap'
import { hasDuplicateKeys, duplicateKeys } from '../../src/machinery/field-validation.js'

function dup(text: string): boolean { return hasDuplicateKeys(text, JSON.parse(text)) }

t.test('no duplicates', async (t) => {
  for (const [i, text] of [
    '{}', '[]', '"a"', '{"a":1}', '{"a":{"b":[{"c":"d"},{"c":"e"}]}}',
    '{"a\\"b":1,"c":"x\\"y:"}', '{"a\\\\":"b\\\\","c":"\\\\\\"","d":":"}', '{"a" : 1, "b"\n:\t"\\":"}',
    JSON.stringify({ metadata: { name: 'x' }, data: { payload: 'x'.repeat(5000), q: '"quoted": \\' } }),
    JSON.stringify({ k: '\u2028é🚀', 'é🚀': ['"', '\\', '\\"'] }, null, 2),
  ].entries()) t.equal(dup(text), false, `case ${i}`)
})

t.test('duplicates', async (t) => {
  for (const [i, text] of [
    '{"a":1,"a":2}', '{"a":{"b":1,"b":1}}', '{"x\\"":1,"x\\"":2}', '{"p":"\\\\","p" : "v"}',
    `{"data":{"payload":"${'x'.repeat(3000)}"},"data":{}}`, '[{"a":"\\"","a":"\\\\"}]',
  ].entries()) t.equal(dup(text), true, `case ${i}`)
  t.same(duplicateKeys('{"metadata":{"name":"a","name":"b"}}'), ['metadata.name'])
})

/** Random JSON texts with quotes, backslashes and colons inside strings, compact and indented. */
t.test('random texts agree with a full key scan', async (t) => {
  let seed = 7
  const r = (): number => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x80000000 }
  const chars = ['a', '"', '\\', ':', ' ', '\n', '{', 'é', '\u2028']
  const str = (): string => Array.from({ length: Math.floor(r() * 6) }, () => chars[Math.floor(r() * chars.length)]).join('')
  const value = (d: number): unknown => {
    const k = Math.floor(r() * (d > 3 ? 3 : 5))
    if (k === 0) return str()
    if (k === 1) return Math.floor(r() * 100)
    if (k === 2) return null
    if (k === 3) { const o: Record<string, unknown> = {}; for (let i = Math.floor(r() * 4); i > 0; i--) o[str()] = value(d + 1); return o }
    return Array.from({ length: Math.floor(r() * 3) }, () => value(d + 1))
  }
  let wrong = 0
  for (let i = 0; i < 3000; i++) {
    const text = JSON.stringify({ [str()]: value(0), k: value(0) }, null, i % 3)
    if (dup(text)) wrong++
    // The same text with its first key repeated at the end has a duplicate.
    const first = Object.keys(JSON.parse(text))[0]
    const withDup = `${text.slice(0, text.lastIndexOf('}'))},${JSON.stringify(first)}:1}`
    if (!dup(withDup)) wrong++
  }
  t.equal(wrong, 0)
})
