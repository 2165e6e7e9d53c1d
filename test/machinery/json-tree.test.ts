// JSON value trees: cloneJson copies like structuredClone (own `__proto__` keys included), and sameJsonText agrees
// with comparing JSON.stringify texts whenever it gives an answer.
import t from 'tap'
import { cloneJson, sameJsonText } from '../../src/machinery/json-tree.js'
import { rng } from '../helpers/rng.js'

const LEAVES: unknown[] = ['', 'a', 'b', '"', '\ud800', 0, -0, 1, 1.5, NaN, Infinity, true, false, null, undefined, new Date(0), () => 1, { toJSON: () => 'a' }, { toJSON: () => undefined }]
const KEYS = ['a', 'b', 'c', '1', '__proto__', 'toJSON']

function value(r: () => number, depth: number, weird: boolean): unknown {
  const k = Math.floor(r() * (depth > 3 ? 2 : 4))
  if (k === 0) return weird ? LEAVES[Math.floor(r() * LEAVES.length)] : LEAVES[Math.floor(r() * 14)]
  if (k === 1) return ['a', 'b', 1, null][Math.floor(r() * 4)]
  if (k === 2) return Array.from({ length: Math.floor(r() * 3) }, () => value(r, depth + 1, weird))
  const o: Record<string, unknown> = {}
  for (let i = Math.floor(r() * 4); i > 0; i--) {
    const key = KEYS[Math.floor(r() * (weird ? KEYS.length : 4))]
    Object.defineProperty(o, key, { value: value(r, depth + 1, weird), enumerable: true, writable: true, configurable: true })
  }
  return o
}

/** A variant of v: usually equal, sometimes one member or leaf changed, reordered, added or removed. */
function mutate(r: () => number, v: unknown, weird: boolean): unknown {
  const c = r()
  if (c < 0.1) return value(r, 2, weird)
  if (Array.isArray(v)) return v.map((x) => (r() < 0.3 ? mutate(r, x, weird) : x))
  if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    const keys = Object.keys(v)
    if (c < 0.2) keys.reverse()
    const out: Record<string, unknown> = {}
    for (const k of keys) {
      if (r() < 0.05) continue
      Object.defineProperty(out, k, { value: r() < 0.3 ? mutate(r, (v as Record<string, unknown>)[k], weird) : (v as Record<string, unknown>)[k], enumerable: true, writable: true, configurable: true })
    }
    if (r() < 0.05) out.extra = weird && r() < 0.5 ? undefined : 'x'
    return out
  }
  return v
}

t.test('sameJsonText agrees with JSON.stringify', async (t) => {
  const r = rng(11)
  let wrong = 0
  let answered = 0
  let unsure = 0
  for (let i = 0; i < 20000; i++) {
    const weird = i % 4 === 0
    const a = value(r, 0, weird)
    const b = mutate(r, a, weird)
    const got = sameJsonText(a, b)
    if (got === undefined) { unsure++; continue }
    answered++
    if (got !== (JSON.stringify(a) === JSON.stringify(b))) {
      wrong++
      if (wrong < 5) t.fail(`${JSON.stringify(a)} vs ${JSON.stringify(b)}: said ${got}`)
    }
  }
  t.equal(wrong, 0)
  t.ok(answered > 15000, `answered ${answered}, unsure ${unsure}`)
})

t.test('sameJsonText cases', async (t) => {
  t.equal(sameJsonText({ a: 1, b: 'x' }, { a: 1, b: 'x' }), true)
  t.equal(sameJsonText({ a: 1, b: 'x' }, { b: 'x', a: 1 }), false, 'key order prints')
  t.equal(sameJsonText({ a: 0 }, { a: -0 }), true)
  t.equal(sameJsonText({ a: 1, u: undefined }, { a: 1 }), undefined, 'an undefined member is left out')
  t.equal(sameJsonText([1, undefined], [1, null]), undefined)
  t.equal(sameJsonText({ d: new Date(0) }, { d: '1970-01-01T00:00:00.000Z' }), undefined)
  t.equal(sameJsonText({ a: 'x'.repeat(5000) }, { a: 'x'.repeat(4999) + 'y' }), false)
  t.equal(sameJsonText([1, 2], [1, 2, 3]), false)
  const shared = { d: new Date(0), u: undefined, n: [1, undefined] }
  t.equal(sameJsonText({ a: 1, s: shared }, { a: 1, s: shared }), true, 'a shared value prints the same, whatever it holds')
  t.equal(sameJsonText({ a: 1, s: shared }, { a: 2, s: shared }), false)
})

t.test('cloneJson copies like structuredClone', async (t) => {
  const r = rng(5)
  for (let i = 0; i < 2000; i++) {
    const v = value(r, 0, false)
    const c = cloneJson(v)
    t.equal(JSON.stringify(c), JSON.stringify(v))
    t.same(c, structuredClone(v))
    if (v !== null && typeof v === 'object') t.not(c, v)
  }
  const withProto = JSON.parse('{"data":{"__proto__":"x","a":["b",{"c":1}]}}')
  const c = cloneJson(withProto)
  t.equal(JSON.stringify(c), JSON.stringify(withProto))
  t.ok(Object.prototype.hasOwnProperty.call(c.data, '__proto__'), 'an own __proto__ key stays an own key')
  t.equal(Object.getPrototypeOf(c.data), Object.prototype)
  c.data.a[1].c = 2
  t.equal(withProto.data.a[1].c, 1, 'nested objects are copies')
})
