// Black-box: CRD conversion webhooks (objects stored in the storage version, other versions converted through a
// ConversionReview to a local https webhook: reads, lists, watches, writes; a failing webhook; answers refused), and
// x-orch-validations rules using the CEL format library and escaped property names on custom resources.
import t from 'tap'
import http from 'node:http'
import { networkInterfaces } from 'node:os'
import { startServer, type TestServer } from '../helpers/server.js'
import { startWebhookServer, type WebhookServer } from '../helpers/webhook-server.js'
import { waitFor } from '../helpers/wait.js'

let s: TestServer
let wh: WebhookServer
const CRDS = '/apis/apiextensions.orch.io/v1/customresourcedefinitions'

async function establish(crd: Record<string, unknown>, path: string): Promise<void> {
  const r = await s.request('POST', CRDS, crd)
  if (r.status !== 201) throw new Error(r.text)
  await waitFor(`${path} served`, async () => ((await s.request('GET', path)).status === 200 ? true : undefined))
}

t.before(async () => {
  s = await startServer()
  wh = await startWebhookServer()
})
t.teardown(async () => { await s?.stop(); await wh?.close() })

// ---- rules: the format library and escaped property names ----

const RULES = '/apis/rules.example.com/v1/namespaces/default/things'

t.test('rules: format.* and escaped property names', async (t) => {
  await establish({
    apiVersion: 'apiextensions.orch.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'things.rules.example.com' },
    spec: {
      group: 'rules.example.com', scope: 'Namespaced',
      names: { plural: 'things', singular: 'thing', kind: 'Thing' },
      versions: [{
        name: 'v1', served: true, storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  host: { type: 'string', 'x-orch-validations': [{ rule: '!format.dns1123Label().validate(self).hasValue()', messageExpression: '"bad host: " + format.dns1123Label().validate(self).value().join(", ")' }] },
                  when: { type: 'string', 'x-orch-validations': [{ rule: '!format.named("date").value().validate(self).hasValue()', message: 'not a date' }] },
                  id: { type: 'string', 'x-orch-validations': [{ rule: '!format.named("uuid").hasValue() || !format.named("uuid").value().validate(self).hasValue()', message: 'not a uuid' }] },
                  'dash-name': { type: 'integer' },
                  'a.b': { type: 'integer' },
                  'x/y': { type: 'integer' },
                  'if': { type: 'integer' },
                  'u__v': { type: 'integer' },
                },
                'x-orch-validations': [
                  { rule: '!has(self.dash__dash__name) || self.dash__dash__name < 10', message: 'dash-name too big' },
                  { rule: '!has(self.a__dot__b) || self.a__dot__b < 10', message: 'a.b too big' },
                  { rule: '!has(self.x__slash__y) || self.x__slash__y < 10', message: 'x/y too big' },
                  { rule: '!has(self.__if__) || self.__if__ < 10', message: 'if too big' },
                  { rule: '!has(self.u__underscores__v) || self.u__underscores__v < 10', message: 'u__v too big' },
                ],
              },
            },
          },
        },
      }],
    },
  }, RULES)
  const thing = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'rules.example.com/v1', kind: 'Thing', metadata: { name }, spec })
  const ok = await s.request('POST', RULES, thing('ok', { host: 'web-1', when: '2024-02-29', id: '0b6a1a5e-0f5b-4e7c-9d55-2c6e0f1d2a3b', 'dash-name': 1, 'a.b': 2, 'x/y': 3, if: 4, u__v: 5 }))
  t.equal(ok.status, 201, ok.text)
  const bad = await s.request('POST', RULES, thing('bad', { host: 'Web_1', when: '2023-02-29', id: 'nope', 'dash-name': 11, 'a.b': 12, 'x/y': 13, if: 14, u__v: 15 }))
  t.equal(bad.status, 422, bad.text)
  const causes = (bad.json?.details?.causes ?? []).map((c: any) => `${c.field}: ${c.message}`)
  t.ok(causes.some((c: string) => c.startsWith('spec.host: Invalid value: "string": bad host: a lowercase RFC 1123 label must consist of')), causes.join('\n'))
  t.ok(causes.includes('spec.when: Invalid value: "string": not a date'), causes.join('\n'))
  t.ok(causes.includes('spec.id: Invalid value: "string": not a uuid'), causes.join('\n'))
  for (const m of ['dash-name too big', 'a.b too big', 'x/y too big', 'if too big', 'u__v too big']) t.ok(causes.includes(`spec: Invalid value: "object": ${m}`), m)
  t.equal(causes.length, 8, causes.join('\n'))
})

// ---- conversion webhooks ----

const G = 'conv.example.com'
const P1 = `/apis/${G}/v1/namespaces/default/paints`
const P2 = `/apis/${G}/v2/namespaces/default/paints`
const MERGE = { 'content-type': 'application/merge-patch+json' }

/** v1 has spec.color; v2 (the storage version) has spec.paint.color. */
function convert(o: any, desired: string): any {
  const spec = desired.endsWith('/v2') ? { paint: { color: o.spec?.color } } : { color: o.spec?.paint?.color }
  return { ...o, apiVersion: desired, spec }
}

/** The webhook as a correct one answers; `tweak` spoils the answer. */
function answerWith(tweak?: (response: any) => void): void {
  wh.answer = (req) => {
    const rq = req.body.request
    const response: any = { uid: rq.uid, result: { status: 'Success' }, convertedObjects: rq.objects.map((o: any) => convert(o, rq.desiredAPIVersion)) }
    tweak?.(response)
    return { status: 200, body: { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response } }
  }
}

const paintSchema = (spec: Record<string, unknown>) => ({ openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: spec } } } })

t.test('conversion webhook: the CRD', async () => {
  answerWith()
  await establish({
    apiVersion: 'apiextensions.orch.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `paints.${G}` },
    spec: {
      group: G, scope: 'Namespaced',
      names: { plural: 'paints', singular: 'paint', kind: 'Paint' },
      versions: [
        { name: 'v1', served: true, storage: false, additionalPrinterColumns: [{ name: 'Color', type: 'string', jsonPath: '.spec.color' }], schema: paintSchema({ color: { type: 'string', 'x-orch-validations': [{ rule: 'self != "forbidden"', message: 'forbidden color' }] } }) },
        { name: 'v2', served: true, storage: true, schema: paintSchema({ paint: { type: 'object', properties: { color: { type: 'string' } } } }) },
      ],
      conversion: {
        strategy: 'Webhook',
        webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: `${wh.url}/convert`, caBundle: Buffer.from(wh.caPem).toString('base64') } },
      },
    },
  }, P2)
})

t.test('conversion webhook: created in v1, stored as v2, read in v1', async (t) => {
  answerWith()
  wh.received.length = 0
  const c = await s.request('POST', P1, { apiVersion: `${G}/v1`, kind: 'Paint', metadata: { name: 'p1', labels: { a: 'b' } }, spec: { color: 'red' } })
  t.equal(c.status, 201, c.text)
  t.equal(c.json.apiVersion, `${G}/v1`)
  t.same(c.json.spec, { color: 'red' })
  // The body went to v2 through a review in the repo's group, and the answer back to v1.
  const first = wh.received[0]?.body
  t.equal(first?.apiVersion, 'apiextensions.orch.io/v1')
  t.equal(first?.kind, 'ConversionReview')
  t.equal(first?.request?.desiredAPIVersion, `${G}/v2`)
  t.match(first?.request?.uid, /^[0-9a-f-]{36}$/)
  t.equal(first?.request?.objects?.[0]?.spec?.color, 'red')
  // Stored as v2: a v2 read needs no webhook.
  wh.received.length = 0
  const v2 = await s.request('GET', `${P2}/p1`)
  t.equal(v2.status, 200, v2.text)
  t.equal(v2.json.apiVersion, `${G}/v2`)
  t.same(v2.json.spec, { paint: { color: 'red' } })
  t.equal(wh.received.length, 0, 'no review for the storage version')
  const v1 = await s.request('GET', `${P1}/p1`)
  t.equal(v1.status, 200, v1.text)
  t.equal(v1.json.apiVersion, `${G}/v1`)
  t.same(v1.json.spec, { color: 'red' })
  t.equal(v1.json.metadata.labels.a, 'b')
  t.equal(v1.json.metadata.uid, v2.json.metadata.uid)
})

t.test('conversion webhook: a list in v1 is converted in one review', async (t) => {
  answerWith()
  const c = await s.request('POST', P2, { apiVersion: `${G}/v2`, kind: 'Paint', metadata: { name: 'p2' }, spec: { paint: { color: 'green' } } })
  t.equal(c.status, 201, c.text)
  wh.received.length = 0
  const l = await s.request('GET', P1)
  t.equal(l.status, 200, l.text)
  t.equal(l.json.apiVersion, `${G}/v1`)
  t.same(l.json.items.map((i: any) => [i.apiVersion, i.metadata.name, i.spec.color]), [[`${G}/v1`, 'p1', 'red'], [`${G}/v1`, 'p2', 'green']])
  t.equal(wh.received.length, 1, 'one review')
  t.equal(wh.received[0]?.body?.request?.objects?.length, 2)
  // kubectl get: a Table of v1's columns over the converted objects.
  const TABLE = { accept: 'application/json;as=Table;v=v1;g=meta.orch.io,application/json' }
  const tl = await s.request('GET', P1, undefined, TABLE)
  t.equal(tl.status, 200, tl.text)
  t.equal(tl.json.kind, 'Table')
  t.same(tl.json.columnDefinitions.map((c: any) => c.name), ['Name', 'Color'])
  t.same(tl.json.rows.map((row: any) => row.cells.slice(0, 2)), [['p1', 'red'], ['p2', 'green']])
  const tg = await s.request('GET', `${P1}/p2`, undefined, TABLE)
  t.equal(tg.status, 200, tg.text)
  t.same(tg.json.rows.map((row: any) => row.cells.slice(0, 2)), [['p2', 'green']])
})

t.test('conversion webhook: patch and update in v1', async (t) => {
  answerWith()
  const p = await s.request('PATCH', `${P1}/p1`, { spec: { color: 'blue' } }, MERGE)
  t.equal(p.status, 200, p.text)
  t.same(p.json.spec, { color: 'blue' })
  t.same((await s.request('GET', `${P2}/p1`)).json.spec, { paint: { color: 'blue' } })
  const cur = (await s.request('GET', `${P1}/p1`)).json
  cur.spec.color = 'black'
  const u = await s.request('PUT', `${P1}/p1`, cur)
  t.equal(u.status, 200, u.text)
  t.equal(u.json.apiVersion, `${G}/v1`)
  t.same(u.json.spec, { color: 'black' })
  t.same((await s.request('GET', `${P2}/p1`)).json.spec, { paint: { color: 'black' } })
  // Checked against the schema of the version written (v1's rule; v2 has none).
  const bad = await s.request('PATCH', `${P1}/p1`, { spec: { color: 'forbidden' } }, MERGE)
  t.equal(bad.status, 422, bad.text)
  t.same(bad.json?.details?.causes, [{ reason: 'FieldValueInvalid', field: 'spec.color', message: 'Invalid value: "string": forbidden color' }])
  const badCreate = await s.request('POST', P1, { apiVersion: `${G}/v1`, kind: 'Paint', metadata: { name: 'pbad' }, spec: { color: 'forbidden' } })
  t.equal(badCreate.status, 422, badCreate.text)
  t.equal(badCreate.json?.message, 'Paint.conv.example.com "pbad" is invalid: spec.color: Invalid value: "string": forbidden color')
  const apply = await s.request('PATCH', `${P1}/p1?fieldManager=x`, { apiVersion: `${G}/v1`, kind: 'Paint', metadata: { name: 'p1' }, spec: { color: 'x' } }, { 'content-type': 'application/apply-patch+yaml' })
  t.equal(apply.status, 415, apply.text)
  t.match(apply.json?.message, /server-side apply of paints.conv.example.com in version v1 is not supported by this server/)
})

t.test('conversion webhook: a watch in v1 sees converted events', async (t) => {
  answerWith()
  const list = await s.request('GET', P1)
  const ctrl = new AbortController()
  const res = await fetch(`${s.url}${P1}?watch=1&resourceVersion=${list.json.metadata.resourceVersion}`, { headers: { authorization: `Bearer ${s.adminToken}` }, signal: ctrl.signal })
  const reader = res.body!.getReader()
  await s.request('POST', P2, { apiVersion: `${G}/v2`, kind: 'Paint', metadata: { name: 'p3' }, spec: { paint: { color: 'white' } } })
  await s.request('PATCH', `${P2}/p3`, { spec: { paint: { color: 'grey' } } }, MERGE)
  let text = ''
  const dec = new TextDecoder()
  while (text.split('\n').length < 3) {
    const { value, done } = await reader.read()
    if (done) break
    text += dec.decode(value)
  }
  ctrl.abort()
  const evs = text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l))
  t.same(evs.map((e: any) => [e.type, e.object.apiVersion, e.object.metadata.name, e.object.spec.color]), [['ADDED', `${G}/v1`, 'p3', 'white'], ['MODIFIED', `${G}/v1`, 'p3', 'grey']])
})

t.test('conversion webhook: a Table watch in v1 with initial events and bookmarks', async (t) => {
  answerWith()
  wh.received.length = 0
  const ctrl = new AbortController()
  const res = await fetch(`${s.url}${P1}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`, {
    headers: { authorization: `Bearer ${s.adminToken}`, accept: 'application/json;as=Table;v=v1;g=meta.orch.io,application/json' }, signal: ctrl.signal,
  })
  t.equal(res.status, 200)
  const reader = res.body!.getReader()
  let text = ''
  const dec = new TextDecoder()
  while (!text.includes('"BOOKMARK"') || !text.endsWith('\n')) {
    const { value, done } = await reader.read()
    if (done) break
    text += dec.decode(value)
  }
  ctrl.abort()
  const evs = text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l))
  const added = evs.filter((e: any) => e.type === 'ADDED')
  t.same(added.map((e: any) => [e.object.kind, e.object.rows[0].cells.slice(0, 2)]), [['Table', ['p1', 'black']], ['Table', ['p2', 'green']], ['Table', ['p3', 'grey']]])
  t.same(added[0].object.columnDefinitions.map((c: any) => c.name), ['Name', 'Color'])
  const bm = evs.find((e: any) => e.type === 'BOOKMARK')
  t.equal(bm?.object?.apiVersion, `${G}/v1`)
  t.equal(bm?.object?.kind, 'Paint')
  t.ok(wh.received.every((r) => r.body.request.objects.every((o: any) => o.metadata?.uid)), 'no bookmark sent to the webhook')
})

t.test('conversion webhook: failures are 500 InternalError', async (t) => {
  wh.answer = () => ({ status: 500, body: { error: 'boom' } })
  let r = await s.request('GET', `${P1}/p1`)
  t.equal(r.status, 500, r.text)
  t.equal(r.json?.reason, 'InternalError')
  t.match(r.json?.message, /^Internal error occurred: conversion webhook for conv\.example\.com\/v2, Kind=Paint failed: /)
  r = await s.request('POST', P1, { apiVersion: `${G}/v1`, kind: 'Paint', metadata: { name: 'never' }, spec: { color: 'red' } })
  t.equal(r.status, 500, r.text)
  t.match(r.json?.message, /^Internal error occurred: conversion webhook for conv\.example\.com\/v1, Kind=Paint failed: /)
  answerWith()
  t.equal((await s.request('GET', `${P2}/never`)).status, 404, 'nothing stored')
  // A failed conversion reported by the webhook.
  answerWith((resp) => { resp.result = { status: 'Failure', message: 'cannot paint' }; resp.convertedObjects = [] })
  r = await s.request('GET', `${P1}/p1`)
  t.equal(r.status, 500)
  t.equal(r.json?.message, 'Internal error occurred: conversion webhook for conv.example.com/v2, Kind=Paint failed: cannot paint')
})

t.test('conversion webhook: wrong answers are refused', async (t) => {
  answerWith((resp) => { resp.uid = 'not-the-uid' })
  let r = await s.request('GET', `${P1}/p1`)
  t.equal(r.status, 500, r.text)
  t.match(r.json?.message, /failed: expected response\.uid="[0-9a-f-]{36}", got "not-the-uid"$/)
  answerWith((resp) => { resp.convertedObjects = resp.convertedObjects.slice(1) })
  r = await s.request('GET', P1)
  t.equal(r.status, 500, r.text)
  t.match(r.json?.message, /failed: returned 2 objects, expected 3$/)
  answerWith((resp) => { resp.convertedObjects[0].metadata = { ...resp.convertedObjects[0].metadata, name: 'other' } })
  r = await s.request('GET', `${P1}/p1`)
  t.equal(r.status, 500, r.text)
  t.match(r.json?.message, /failed: invalid converted object at index 0: expected metadata\.name="p1", got "other"$/)
  answerWith((resp) => { resp.convertedObjects[0].apiVersion = `${G}/v3` })
  r = await s.request('GET', `${P1}/p1`)
  t.equal(r.status, 500, r.text)
  t.match(r.json?.message, /invalid apiVersion "conv\.example\.com\/v3", expected "conv\.example\.com\/v1"$/)
  // Metadata other than labels and annotations is the original's; labels may change.
  answerWith((resp) => { const m = resp.convertedObjects[0].metadata; m.labels = { c: 'd' }; m.generation = 99; m.finalizers = ['x/y'] })
  r = await s.request('GET', `${P1}/p1`)
  t.equal(r.status, 200, r.text)
  t.same(r.json.metadata.labels, { c: 'd' })
  t.not(r.json.metadata.generation, 99)
  t.notOk(r.json.metadata.finalizers)
  answerWith()
})

t.test('conversion webhook: a service reference (Endpoints), review version v1beta1', async (t) => {
  // Endpoints may not name a loopback address (upstream's validation): the hook listens on an address of the host's own.
  const external = Object.values(networkInterfaces()).flat().find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address
  if (external === undefined) { t.skip('no non-loopback IPv4 address on this host for Endpoints', async () => {}); return }
  const hook = await startWebhookServer({ dnsNames: ['conv.hooks-ns.svc'], host: '0.0.0.0' })
  t.teardown(() => hook.close())
  hook.answer = (req) => {
    const rq = req.body.request
    return { status: 200, body: { apiVersion: 'apiextensions.orch.io/v1beta1', kind: 'ConversionReview', response: { uid: rq.uid, result: { status: 'Success' }, convertedObjects: rq.objects.map((o: any) => convert(o, rq.desiredAPIVersion)) } } }
  }
  const T1 = `/apis/${G}/v1/namespaces/default/tints`
  const T2 = `/apis/${G}/v2/namespaces/default/tints`
  await establish({
    apiVersion: 'apiextensions.orch.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `tints.${G}` },
    spec: {
      group: G, scope: 'Namespaced',
      names: { plural: 'tints', singular: 'tint', kind: 'Tint' },
      versions: [
        { name: 'v1', served: true, storage: false, schema: paintSchema({ color: { type: 'string' } }) },
        { name: 'v2', served: true, storage: true, schema: paintSchema({ paint: { type: 'object', properties: { color: { type: 'string' } } } }) },
      ],
      conversion: {
        strategy: 'Webhook',
        webhook: { conversionReviewVersions: ['v9', 'v1beta1', 'v1'], clientConfig: { service: { namespace: 'hooks-ns', name: 'conv', port: 443, path: '/tints' }, caBundle: Buffer.from(hook.caPem).toString('base64') } },
      },
    },
  }, T2)
  let r = await s.request('POST', T2, { apiVersion: `${G}/v2`, kind: 'Tint', metadata: { name: 't1' }, spec: { paint: { color: 'teal' } } })
  t.equal(r.status, 201, r.text)
  r = await s.request('GET', `${T1}/t1`)
  t.equal(r.status, 500, r.text)
  t.equal(r.json?.message, `Internal error occurred: conversion webhook for ${G}/v2, Kind=Tint failed: Post "https://conv.hooks-ns.svc:443/tints?timeout=30s": services "conv" not found`)
  r = await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'hooks-ns' } })
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', '/api/v1/namespaces/hooks-ns/services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'conv' }, spec: { ports: [{ name: 'https', port: 443, targetPort: hook.port }] } })
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', '/api/v1/namespaces/hooks-ns/endpoints', { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'conv' }, subsets: [{ addresses: [{ ip: external }], ports: [{ name: 'https', port: hook.port }] }] })
  t.equal(r.status, 201, r.text)
  r = await s.request('GET', `${T1}/t1`)
  t.equal(r.status, 200, r.text)
  t.same(r.json.spec, { color: 'teal' })
  const last = hook.received[hook.received.length - 1]
  t.equal(last?.path, '/tints?timeout=30s')
  t.equal(last?.body?.apiVersion, 'apiextensions.orch.io/v1beta1')
  // Answers in another form than JSON are refused rather than sent unconverted.
  r = await s.request('GET', `${T1}/t1`, undefined, { accept: 'application/yaml' })
  t.equal(r.status, 406, r.text)
  t.match(r.text, /is not supported by this server/)
})

t.test('conversion webhook: a storage version that is not served', async (t) => {
  answerWith()
  const H1 = `/apis/${G}/v1/namespaces/default/hues`
  await establish({
    apiVersion: 'apiextensions.orch.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `hues.${G}` },
    spec: {
      group: G, scope: 'Namespaced',
      names: { plural: 'hues', singular: 'hue', kind: 'Hue' },
      versions: [
        { name: 'v1', served: true, storage: false, schema: paintSchema({ color: { type: 'string' } }) },
        { name: 'v2', served: false, storage: true, schema: paintSchema({ paint: { type: 'object', properties: { color: { type: 'string' } } } }) },
      ],
      conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: `${wh.url}/convert`, caBundle: Buffer.from(wh.caPem).toString('base64') } } },
    },
  }, H1)
  wh.received.length = 0
  let r = await s.request('POST', H1, { apiVersion: `${G}/v1`, kind: 'Hue', metadata: { name: 'h1' }, spec: { color: 'cyan' } })
  t.equal(r.status, 201, r.text)
  t.same(r.json.spec, { color: 'cyan' })
  t.equal(wh.received[0]?.body?.request?.desiredAPIVersion, `${G}/v2`)
  t.same(wh.received[0]?.body?.request?.objects?.[0]?.spec, { color: 'cyan' })
  t.same(wh.received[1]?.body?.request?.objects?.[0]?.spec, { paint: { color: 'cyan' } }, 'stored as v2')
  r = await s.request('GET', `${H1}/h1`)
  t.equal(r.status, 200, r.text)
  t.equal(r.json.apiVersion, `${G}/v1`)
  t.same(r.json.spec, { color: 'cyan' })
})

t.test('conversion webhook: a delete in v1 never answers the storage version', async (t) => {
  answerWith()
  const r = await s.request('DELETE', `${P1}/p3`)
  t.equal(r.status, 200, r.text)
  t.not(r.json.apiVersion, `${G}/v2`)
  t.equal((await s.request('GET', `${P2}/p3`)).status, 404)
})
