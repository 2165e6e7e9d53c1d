// The CBOR codec: JSON text → self-described CBOR (cbor-x) and back through the strict reader; the reader's rules.
import t from 'tap'
import { decode, encode, Tag } from 'cbor-x'
import { cborFromJson, cborFromParsedJson, cborJsonStats, cborList, CborListEncoder, cborWatchEvent, decodeCbor, CborError, SELF_DESCRIBED, type ByteFields } from '../../src/machinery/codecs/cbor.js'
import { byteFieldsOf } from '../../src/registry/byte-fields.js'

const hex = (h: string) => Buffer.from(h.replace(/\s+/g, ''), 'hex')

t.test('JSON → CBOR → strict reader gives the JSON value back, byte fields included', async (t) => {
  const docs = [
    { kind: 'Secret', apiVersion: 'v1', metadata: { name: 's', labels: { a: 'b' } }, data: { x: 'AAEC/w==', y: '', z: 'not base64!' }, type: 'Opaque' },
    { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c' }, data: { k: 'v' }, binaryData: { b: 'aGk=' } },
    { a: [1, -1, 0, 23, 24, 255, 256, 65535, 65536, 4294967295, 4294967296, -4294967296, -4294967297, 9007199254740991], f: [0.5, -1.25, 1e300, 3.141592653589793], b: [true, false, null], e: {}, l: [], u: 'ünï€😀', __proto__x: 1 },
    JSON.parse('{"__proto__":{"polluted":true},"k":1}'),
  ]
  for (const d of docs) {
    const json = JSON.stringify(d)
    const b = cborFromJson(json, byteFieldsOf)
    t.equal(b.subarray(0, 3).toString('hex'), 'd9d9f7', 'self-described')
    const back = decodeCbor(b)
    t.same(back, JSON.parse(json), `round trip of ${json.slice(0, 40)}`)
    t.equal(JSON.stringify(back), json, 'key order kept')
  }
  t.equal(({} as any).polluted, undefined, 'no prototype pollution')
})

t.test('byte fields: tag 22 around the raw bytes when the text is canonical base64; other strings stay text', async (t) => {
  const v = decode(cborFromJson(JSON.stringify({ kind: 'Secret', apiVersion: 'v1', metadata: {}, data: { x: 'AAEC', bad: 'AAE', nopad: 'aGk' } }), byteFieldsOf))
  t.ok(v.data.x instanceof Tag)
  t.equal(v.data.x.tag, 22)
  t.same([...v.data.x.value], [0, 1, 2])
  t.equal(v.data.bad, 'AAE', 'not canonical base64: text')
  t.equal(v.data.nopad, 'aGk')
  t.same(byteFieldsOf('v1', 'Secret'), [['data', '*']])
  t.same(byteFieldsOf('v1', 'ConfigMap'), [['binaryData', '*']])
  t.same(byteFieldsOf('certificates.k8s.io/v1', 'CertificateSigningRequest'), [['spec', 'request'], ['status', 'certificate']], 'upstream group spelling')
  t.same(byteFieldsOf('admissionregistration.orch.io/v1', 'ValidatingWebhookConfiguration'), [['webhooks', '*', 'clientConfig', 'caBundle']])
  t.equal(byteFieldsOf('v1', 'Pod'), undefined)
  t.equal(byteFieldsOf('nope/v1', 'Nope'), undefined)
})

t.test('integers beyond 32 bits are CBOR integers, not floats', async (t) => {
  const b = cborFromJson('{"a":4294967296,"b":-4294967297,"c":1.5,"d":"12345678901"}')
  t.ok(b.toString('hex').includes('1b0000000100000000'), 'uint64')
  t.ok(b.toString('hex').includes('3b0000000100000000'), 'negative int64')
  t.ok(b.toString('hex').includes('fb3ff8000000000000'), 'a float stays a float')
  t.ok(cborFromJson('{"a":1e300,"b":12345678901}').toString('hex').includes('fb7e37e43c8800759c'), 'an integral float beyond int64 stays a float')
  t.same(decodeCbor(b), { a: 4294967296, b: -4294967297, c: 1.5, d: '12345678901' })
})

t.test('lists and watch events: one data item each, the same shape as in JSON', async (t) => {
  const items = [JSON.stringify({ kind: 'Secret', apiVersion: 'v1', metadata: { name: 'a' }, data: { k: 'AA==' } }), Buffer.from('{"kind":"Secret","apiVersion":"v1","metadata":{"name":"b"}}')]
  const l = cborList('SecretList', 'v1', { resourceVersion: '5' }, items, byteFieldsOf)
  t.same(decodeCbor(l), { kind: 'SecretList', apiVersion: 'v1', metadata: { resourceVersion: '5' }, items: [JSON.parse(items[0] as string), JSON.parse(items[1].toString())] })
  const many = Array.from({ length: 300 }, (_, i) => `{"i":${i}}`)
  t.equal((decodeCbor(cborList('L', 'v1', {}, many)) as any).items.length, 300, 'array head beyond 255')
  const e = cborWatchEvent('ADDED', items[0] as string, byteFieldsOf)
  t.same(decodeCbor(e), { type: 'ADDED', object: JSON.parse(items[0] as string) })
  t.equal(decode(e).object.data.k.tag, 22)
  const noBytes: ByteFields = () => undefined
  t.equal(decode(cborWatchEvent('ADDED', items[0] as string, noBytes)).object.data.k, 'AA==')
})

// ---- lists transcoded from stored JSON text ----

/** What cborList wrote before it transcoded: every piece through JSON.parse, prepare and cbor-x. */
function parsedList(kind: string, apiVersion: string, meta: object, texts: string[], bytes?: ByteFields): Buffer {
  const one = (json: string, b?: ByteFields) => cborFromParsedJson(json, b).subarray(SELF_DESCRIBED.length)
  const n = texts.length
  const arrayHead = n < 24 ? Buffer.from([0x80 | n]) : n < 256 ? Buffer.from([0x98, n]) : Buffer.from([0x99, n >> 8, n & 0xff])
  return Buffer.concat([SELF_DESCRIBED, Buffer.from([0xa4]), one('"kind"'), one(JSON.stringify(kind)), one('"apiVersion"'), one(JSON.stringify(apiVersion)),
    one('"metadata"'), one(JSON.stringify(meta)), one('"items"'), arrayHead, ...texts.map((x) => one(x, bytes))])
}

type Equal = import('tap').Test

/** cborList of the texts gives the bytes of parsedList; `fast`: whether every item should be transcoded (not parsed). */
function sameAsParsed(t: Equal, texts: string[], fast: boolean | undefined, what: string, kind = 'List', apiVersion = 'v1'): void {
  const before = cborJsonStats.parsed
  const got = cborList(kind, apiVersion, { resourceVersion: '3' }, texts.map((x) => Buffer.from(x)), byteFieldsOf)
  t.equal(got.toString('hex'), parsedList(kind, apiVersion, { resourceVersion: '3' }, texts, byteFieldsOf).toString('hex'), `${what}: same bytes as from the parsed items`)
  if (fast !== undefined) t.equal(cborJsonStats.parsed === before, fast, `${what}: ${fast ? 'transcoded' : 'parsed'}`)
  // One object (GET, watch events): the same bytes as through JSON.parse.
  for (const x of texts) {
    t.equal(cborFromJson(x, byteFieldsOf).toString('hex'), cborFromParsedJson(x, byteFieldsOf).toString('hex'), `${what}: one object`)
    const ev = cborWatchEvent('MODIFIED', x, byteFieldsOf)
    t.equal(ev.subarray(ev.length - (cborFromParsedJson(x, byteFieldsOf).length - SELF_DESCRIBED.length)).toString('hex'), cborFromParsedJson(x, byteFieldsOf).subarray(SELF_DESCRIBED.length).toString('hex'), `${what}: a watch event`)
  }
}

t.test('lists from stored JSON: the bytes of the parsed items', async (t) => {
  const pod = {
    kind: 'Pod', apiVersion: 'v1',
    metadata: {
      name: 'p', namespace: 'default', uid: 'u', resourceVersion: '7', creationTimestamp: '2025-01-01T00:00:00Z', labels: { app: 'x' },
      managedFields: [{ manager: 'kubectl', operation: 'Update', apiVersion: 'v1', time: '2025-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { '.': {}, 'f:image': {} } } } } }],
    },
    spec: { containers: [{ name: 'app', image: 'nginx', ports: [{ containerPort: 80 }], resources: { limits: { cpu: '1' } } }], terminationGracePeriodSeconds: 30 },
    status: { phase: 'Pending' },
  }
  sameAsParsed(t, [JSON.stringify(pod)], true, 'a pod with managedFields')
  // Numbers at every head size, 64-bit integers (widened by prepare), floats, and integral floats beyond int64.
  const nums = [0, 1, 23, 24, 255, 256, 65535, 65536, 4294967295, 4294967296, -1, -24, -25, -256, -257, -65536, -65537, -2147483648, -2147483649,
    -4294967296, -4294967297, 9007199254740991, 9007199254740993, 2 ** 63 - 1024, 2 ** 63, -(2 ** 63), -(2 ** 63) - 4096, 1e21, 1.5, -0.5, 1e-7, 3.141592653589793]
  sameAsParsed(t, [JSON.stringify({ kind: 'X', apiVersion: 'v1', nums })], true, 'numbers')
  sameAsParsed(t, ['{"kind":"X","apiVersion":"v1","a":-0,"b":1.0,"c":1E3,"d":12345678901234567890123}'], true, 'number spellings JSON.stringify does not write')
  sameAsParsed(t, ['{"kind":"X","apiVersion":"v1","a":4294967296.0}'], false, 'an integral number beyond 32 bits with a fraction: parsed')
  sameAsParsed(t, ['{"kind":"X","apiVersion":"v1","a":5e9}'], false, 'an integral number beyond 32 bits with an exponent: parsed')
  // Strings and keys of every head size; escapes, UTF-8, lone surrogates (cbor-x writes them differently by length).
  const long = (n: number) => 'x'.repeat(n)
  sameAsParsed(t, [JSON.stringify({ kind: 'X', apiVersion: 'v1', s: ['', long(23), long(24), long(255), long(256), long(65536)], [long(30)]: 1, [long(300)]: 2 })], true, 'string and key lengths')
  sameAsParsed(t, [JSON.stringify({ kind: 'X', apiVersion: 'v1', e: 'a "q" \\ \n\t\b\f\r \u0001 \u001f /', k: { 'k:{"name":"x"}': {}, 'tab\there': 1 } })], true, 'escapes in values and keys')
  sameAsParsed(t, [JSON.stringify({ kind: 'X', apiVersion: 'v1', u: ['héllo', '✓', '🚀', 'é'.repeat(40), '\ud800', '\udc00x', '\ud800'.repeat(70), 'a\ud83dz'] })], true, 'UTF-8 and lone surrogates, short and long')
  sameAsParsed(t, [JSON.stringify({ kind: 'X', apiVersion: 'v1', 'é': 1 })], false, 'a non-ASCII key: parsed')
  sameAsParsed(t, ['{"kind":"X","apiVersion":"v1","\\u0061":1}'], false, 'a \\u escape in a key: parsed')
  // Containers of every head size.
  const wide = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`k${i}`, i]))
  sameAsParsed(t, [JSON.stringify({ kind: 'X', apiVersion: 'v1', m23: Object.fromEntries(Object.entries(wide).slice(0, 23)), m24: Object.fromEntries(Object.entries(wide).slice(0, 24)), wide, a: Array.from({ length: 300 }, (_, i) => i), e: [[], {}, [{}]], b: [true, false, null] })], true, 'maps and arrays')
  // Keys: integer-like keys come first in a parsed object; duplicates keep the last value at the first place.
  sameAsParsed(t, ['{"kind":"X","apiVersion":"v1","m":{"b":1,"10":2,"2":3}}'], false, 'integer-like keys: parsed')
  sameAsParsed(t, ['{"kind":"X","apiVersion":"v1","m":{"b":1,"01":2,"4294967295":3,"-1":4,"1.5":5}}'], true, 'keys that only look like integers')
  sameAsParsed(t, ['{"kind":"X","apiVersion":"v1","m":{"a":1,"b":2,"a":3}}'], false, 'a duplicate key: parsed')
  sameAsParsed(t, ['{"kind":"X","apiVersion":"v1","m":{"a":{"x":1},"b":{"x":2}}}'], true, 'equal keys in sibling objects are no duplicates')
  sameAsParsed(t, ['{"kind":"X","apiVersion":"v1","__proto__":{"p":1}}'], true, '__proto__')
  // Not the transcoder: whitespace, non-objects, apiVersion and kind after other members; malformed text fails as before.
  sameAsParsed(t, ['{"kind": "X", "apiVersion": "v1"}'], false, 'whitespace: parsed')
  sameAsParsed(t, ['[1,2]', '"s"', '7'], false, 'items that are no objects: parsed')
  sameAsParsed(t, ['{"metadata":{},"kind":"Secret","apiVersion":"v1","data":{"a":"AAAA"}}'], false, 'apiVersion and kind not first: parsed')
  t.throws(() => cborList('L', 'v1', {}, [Buffer.from('{"kind":"X",')]), SyntaxError, 'malformed JSON fails as JSON.parse fails')
})

t.test('lists from stored JSON: byte fields as tag 22, as prepare tags them', async (t) => {
  sameAsParsed(t, [JSON.stringify({ kind: 'Secret', apiVersion: 'v1', metadata: { name: 's', annotations: { a: 'AAAA' } }, data: { ok: 'AAEC/w==', empty: '', bad: 'AAE', nopad: 'aGk', big: Buffer.alloc(70000, 7).toString('base64') }, type: 'Opaque' })], true, 'Secret data', 'SecretList')
  sameAsParsed(t, [JSON.stringify({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c' }, data: { k: 'AAAA' }, binaryData: { b: 'aGk=' } })], true, 'ConfigMap binaryData, not data', 'ConfigMapList')
  sameAsParsed(t, [JSON.stringify({ apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'w' }, webhooks: [{ name: 'a', clientConfig: { caBundle: 'Y2E=' } }, { name: 'b', clientConfig: { url: 'https://x' } }] })], true, 'paths through arrays', 'ValidatingWebhookConfigurationList', 'admissionregistration.orch.io/v1')
  sameAsParsed(t, [JSON.stringify({ kind: 'Secret', apiVersion: 'v1', data: ['AAAA'], stringData: { a: 'AAAA' } })], true, 'a byte path that meets an array or another field')
  sameAsParsed(t, ['{"kind":"Secret","apiVersion":7,"data":{"a":"AAAA"}}'], false, 'an apiVersion that is no string: parsed')
})

t.test('lists from stored JSON in slices: other encodes may run in between', async (t) => {
  const texts = Array.from({ length: 40 }, (_, i) => JSON.stringify({ kind: 'Secret', apiVersion: 'v1', metadata: { name: `s-${i}` }, data: { v: Buffer.alloc(i).toString('base64') } }))
  const whole = cborList('SecretList', 'v1', { resourceVersion: '1' }, texts, byteFieldsOf)
  const enc = new CborListEncoder('SecretList', 'v1', { resourceVersion: '1' }, texts.length, byteFieldsOf)
  for (let i = 0; i < texts.length; i += 6) {
    enc.add(texts, i, Math.min(texts.length, i + 6))
    cborList('L', 'v1', {}, ['{"kind":"X","apiVersion":"v1","a":"b"}'])
    cborFromJson('{"x":1}')
  }
  t.equal(enc.finish().toString('hex'), whole.toString('hex'))
  const short = new CborListEncoder('L', 'v1', {}, 2)
  short.add(['{}'])
  t.throws(() => short.finish(), /fewer list items/)
  t.throws(() => short.add(['{}', '{}']), /more list items/)
})

t.test('the strict reader: what other encoders write is read', async (t) => {
  t.same(decodeCbor(encode({ a: 1, b: [1.5, 'x', null, true], c: { d: -7 } })), { a: 1, b: [1.5, 'x', null, true], c: { d: -7 } }, 'cbor-x output')
  t.equal(decodeCbor(hex('f93e00')), 1.5, 'half float')
  t.equal(decodeCbor(hex('f90001')), 2 ** -24, 'subnormal half float')
  t.equal(decodeCbor(hex('fa3fc00000')), 1.5, 'float32')
  t.equal(decodeCbor(hex('3903e7')), -1000)
  t.equal(decodeCbor(hex('1b001fffffffffffff')), 9007199254740991)
  t.same(decodeCbor(hex('a1 4161 4162')), { a: 'b' }, 'byte-string keys and values as UTF-8 text')
  t.same(decodeCbor(hex('d9d9f7 d9d9f7 a0')), {}, 'tag 55799 (even twice)')
  t.equal(decodeCbor(hex('d6 43 000102')), 'AAEC', 'tag 22: base64')
  t.equal(decodeCbor(hex('d5 43 fbff00')), '-_8A', 'tag 21: base64url')
  t.equal(decodeCbor(hex('d7 43 000102')), '000102', 'tag 23: base16')
  t.equal(decodeCbor(hex('c0 74 323031332d30332d32315432303a30343a30305a')), '2013-03-21T20:04:00Z', 'tag 0: the date text')
  t.same(decodeCbor(hex('9f 01 9f ff 5f 4161 4162 ff ff')), [1, [], 'ab'], 'indefinite arrays and chunked byte strings')
  t.same(decodeCbor(hex('bf 6161 01 ff')), { a: 1 })
})

t.test('the strict reader: what it refuses, with the offending byte', async (t) => {
  const bad: Array<[string, RegExp]> = [
    ['a2 6161 01 6161 02', /^duplicate map key "a" at byte 4$/],
    ['bf 6161 01 4161 02 ff', /^duplicate map key "a" at byte 4$/],
    ['a1 f6 01', /^map keys must be text strings, found a simple value or float at byte 1$/],
    ['a1 a0 01', /^map keys must be text strings, found a map at byte 1$/],
    ['a1 c0 6161 01', /found a tag/],
    ['62 c328', /^invalid UTF-8 in a string at byte 0$/],
    ['42 c328', /invalid UTF-8/],
    ['7f 6161 4162 ff', /chunk of an indefinite-length text string must be a definite-length text string/],
    ['1f', /indefinite length is not allowed for an unsigned integer/],
    ['c2 41 01', /^unsupported tag 2 at byte 0$/],
    ['d6 6161', /tag 22 must enclose a byte string/],
    ['c0 01', /tag 0 \(date\/time\) must enclose a text string/],
    ['f7', /undefined/],
    ['f0', /unsupported simple value 16/],
    ['f8 ff', /unsupported simple value 255/],
    ['fb 7ff8000000000000', /NaN/],
    ['fb fff0000000000000', /infinite/],
    ['ff', /unexpected break/],
    ['a0 00', /^unexpected data after the data item at byte 1$/],
    ['', /empty body/],
    ['5a ffffffff 00', /unexpected end of data/],
    ['9a ffffffff', /array length beyond the end of data/],
    ['ba ffffffff', /map length beyond the end of data/],
    ['81'.repeat(65) + '00', /nesting deeper than 64/],
  ]
  for (const [h, re] of bad) {
    let err: unknown
    try { decodeCbor(hex(h)) } catch (e) { err = e }
    t.ok(err instanceof CborError, `${h}: a CborError`)
    t.match((err as Error)?.message, re, h)
  }
  t.doesNotThrow(() => decodeCbor(hex('81'.repeat(64) + '00')), 'nesting of 64 is fine')
})
