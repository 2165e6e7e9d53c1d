// Black-box: CRD conversion webhooks (objects stored in the storage version, other versions converted through a
// ConversionReview to a local https webhook: reads, lists, watches, writes; a failing webhook; answers refused), and
// x-orch-validations rules using the CEL format library and escaped property names on custom resources.
import t from 'tap'
import http from 'node:http'
import { startServer, type TestServer } from '../helpers/server.js'
import { startWebhookServer, type WebhookServer } from '../helpers/webhook-server.js'

let s: TestServer
let wh: WebhookServer
const CRDS = '/apis/apiextensions.orch.io/v1/customresourcedefinitions'

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v !== undefined) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

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
