// The strict JSON scanner under the encoders' JSON paths: it accepts exactly the whitespace-free texts JSON.parse
// accepts, and calls text canonical only when JSON.stringify(JSON.parse(text)) gives it back.
import t from 'tap'
import { REJECT, scanNumber, scanString, skipValue, numberValue, stringValue, stringFlags } from '../../src/machinery/codecs/json-scan.js'
import { rng } from '../helpers/rng.js'

const STRINGS = ['', 'a', 'f:name', 'k:{"name":"x"}', 'é', '🚀', '\n\t"\\', '\u0001', '\ud800', '/', '\u2028', 'x'.repeat(70)]
const NUMBERS = [0, 1, -1, 1.5, -0.25, 1e21, 1e-7, 123456789012345, 2 ** 53, 2 ** 64, 5e-324, -1e300]

function value(r: () => number, depth: number): unknown {
  const k = Math.floor(r() * (depth > 4 ? 4 : 7))
  switch (k) {
    case 0: return STRINGS[Math.floor(r() * STRINGS.length)]
    case 1: return NUMBERS[Math.floor(r() * NUMBERS.length)]
    case 2: return [true, false, null][Math.floor(r() * 3)]
    case 3: return {}
    case 4: case 5: {
      const o: Record<string, unknown> = {}
      const n = Math.floor(r() * 5)
      for (let i = 0; i < n; i++) o[`${STRINGS[Math.floor(r() * STRINGS.length)]}${i}`] = value(r, depth + 1)
      return o
    }
    default: return Array.from({ length: Math.floor(r() * 4) }, () => value(r, depth + 1))
  }
}

const parses = (s: string): boolean => { try { JSON.parse(s); return true } catch { return false } }
/** Printable ASCII for assertion messages (TAP readers split lines on U+2028). */
const shown = (s: string): string => s.slice(0, 50).replace(/[^\x20-\x7e]/g, '?')

t.test('skipValue accepts what JSON.parse accepts (no whitespace), and finds the end', async (t) => {
  const r = rng(42)
  let mutants = 0
  for (let n = 0; n < 400; n++) {
    const text = JSON.stringify(value(r, 0))
    const b = Buffer.from(text)
    t.equal(skipValue(b, 0), b.length, `valid: ${shown(text)}`)
    t.equal(skipValue(Buffer.from(`[${text},1]`), 1), b.length + 1, 'the end of a value inside more text')
    // Mutations: drop, double or replace one byte.
    for (let m = 0; m < 6; m++) {
      const at = Math.floor(r() * text.length)
      const ch = '{}[]",:\\0-.eEtfnu1 x'[Math.floor(r() * 20)]
      const variants = [text.slice(0, at) + text.slice(at + 1), text.slice(0, at) + text[at] + text.slice(at), text.slice(0, at) + ch + text.slice(at + 1)]
      for (const v of variants) {
        if (/\s/.test(v.replace(/"(?:[^"\\]|\\.)*"/g, '""'))) continue // whitespace outside strings: the scanner refuses it on purpose
        const vb = Buffer.from(v)
        const end = skipValue(vb, 0)
        const ok = end === vb.length
        if (ok !== parses(v)) t.fail(`mutant ${shown(JSON.stringify(v))}: scanner ${ok}, JSON.parse ${parses(v)}`)
        mutants++
      }
    }
  }
  t.ok(mutants > 1000, `${mutants} mutants agree with JSON.parse`)
  for (const bad of ['', ' 1', '{"a":1 }', '[1, 2]', '{"a" :1}', '01', '1.', '.5', '-', '1e', '+1', 'tru', 'nul', '"\\x"', '"\\u12"', '"a', '{"a":1,}', '[1,]', '{,}', '"\t"']) {
    t.not(skipValue(Buffer.from(bad), 0), bad.length, `refused: ${JSON.stringify(bad)}`)
  }
  t.equal(skipValue(Buffer.from('['.repeat(1100) + ']'.repeat(1100)), 0), REJECT, 'nesting beyond 1000: left to JSON.parse')
  t.equal(skipValue(Buffer.from('['.repeat(900) + ']'.repeat(900)), 0), 1800, 'deep nesting within the limit')
})

t.test('canonical: exactly JSON.stringify(JSON.parse(text)) (keys starting with a digit aside)', async (t) => {
  const r = rng(7)
  for (let n = 0; n < 300; n++) {
    const text = JSON.stringify(value(r, 0))
    const canonical = skipValue(Buffer.from(text), 0, true) !== REJECT
    const ascii = !/[^\x00-\x7f]/.test(text) && !text.includes('\\u') && !text.includes('\\/')
    t.equal(canonical, ascii && !/[{,]"\d/.test(text), shown(text))
  }
  for (const odd of ['{"a":1.0}', '{"a":-0}', '{"a":1E3}', '{"a":"\\/"}', '{"a":"\\u0041"}', '{"1":{}}', '[100000000000000000000000]', '"é"']) {
    t.equal(skipValue(Buffer.from(odd), 0, true), REJECT, `not canonical: ${odd}`)
    t.not(skipValue(Buffer.from(odd), 0), REJECT, `but JSON: ${odd}`)
  }
  for (const ok of ['{"a":1.5,"b":[1e+21,-2,"x\\"y\\\\z\\n"],"c":{}}', '{"f:a":{".":{}}}', '123456789012345', '1.7976931348623157e+308']) {
    t.equal(skipValue(Buffer.from(ok), 0, true), ok.length, `canonical: ${ok}`)
  }
})

t.test('strings and numbers: values as JSON.parse reads them', async (t) => {
  for (const s of STRINGS) {
    const text = JSON.stringify(s)
    const b = Buffer.from(text)
    t.equal(scanString(b, 0), b.length)
    t.equal(stringValue(b, 0, b.length, stringFlags), s, shown(text))
  }
  for (const text of ['0', '-0', '7', '-12', '123456789012345', '1234567890123456789', '1.5', '-2.5e-3', '1E400', '9007199254740993']) {
    const b = Buffer.from(text)
    t.equal(scanNumber(b, 0), b.length)
    t.ok(Object.is(numberValue(b, 0, b.length), JSON.parse(text)), text)
  }
})
