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

/**
 * scrubDecoded (one walk on the update and create paths) against what it replaces: dropNulls, then pruneUnknown, and
 * countValueKeys of the value before either; on random pod-shaped values with nulls and unknown fields at every level
 * (struct fields, map values, list items, a preserve-unknown-fields part).
 */
t.test('scrubDecoded does what dropNulls, pruneUnknown and the key count do', async (t) => {
  const { rng } = await import('../helpers/rng.js')
  const { scrubDecoded, pruneUnknown, countValueKeys } = await import('../../src/machinery/field-validation.js')
  const { dropNulls, loadDefinitions } = await import('../../src/registry/schema.js')
  const { typeTree } = await import('../../src/machinery/patch/schema-walk.js')
  const defs = loadDefinitions()
  const trees = [typeTree(defs, 'io.orch.api.core.v1.Pod'), typeTree(defs, 'io.orch.api.apps.v1.Deployment')]
  const r = rng(11)
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)]
  const names = ['metadata', 'spec', 'status', 'labels', 'annotations', 'containers', 'name', 'image', 'env', 'value', 'template',
    'conditions', 'type', 'nodeName', 'bogus', '', 'x.y', '__proto__', 'ports', 'containerPort', 'selector', 'matchLabels', 'resources', 'limits']
  const value = (depth: number): unknown => {
    const k = r()
    if (depth > 5 || k < 0.3) return pick([null, 'a', 1, true, '', 0])
    if (k < 0.5) return Array.from({ length: Math.floor(r() * 3) }, () => value(depth + 1))
    const o: Record<string, unknown> = {}
    for (let i = Math.floor(r() * 5); i > 0; i--) {
      const name = pick(names)
      Object.defineProperty(o, name, { value: value(depth + 1), enumerable: true, writable: true, configurable: true })
    }
    return o
  }
  for (let i = 0; i < 3000; i++) {
    const tree = pick(trees)
    const v = { metadata: value(1), spec: value(1), status: value(2), extra: value(3) }
    const text = JSON.stringify(v)
    const a = JSON.parse(text) as Record<string, unknown>
    const b = JSON.parse(text) as Record<string, unknown>
    const count = countValueKeys(a)
    dropNulls(a)
    const unknownA = pruneUnknown(a, tree)
    const unknownB: string[] = []
    const countB = scrubDecoded(b, tree, unknownB)
    if (JSON.stringify(b) !== JSON.stringify(a) || unknownB.join('|') !== unknownA.join('|') || countB !== count) {
      t.fail(`case ${i}: ${text}`)
      return
    }
  }
  t.pass('3000 random values')
})
