// Black-box: the data of ConfigMaps and Secrets (key rules, `immutable`, Secret types, `stringData`) through kubectl 1.32
// and raw HTTP, as upstream's core validation answers.
import t from 'tap'
import { runKubectl } from '../helpers/kubectl.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type TestServer } from '../helpers/server.js'

let s: TestServer
const home = mkdtempSync(join(tmpdir(), 'orch-config-data-home-'))
const NS = '/api/v1/namespaces/default'

const kubectl = (args: string[], stdin?: string) => runKubectl(s.kubeconfig, home, args, { stdin })

t.before(async () => { s = await startServer({ secure: true }) })
t.teardown(async () => {
  await s?.stop()
  rmSync(home, { recursive: true, force: true })
})

t.test('kubectl apply of a Secret with stringData stores it base64 in data and never stores stringData', async (t) => {
  const yaml = ['apiVersion: v1', 'kind: Secret', 'metadata:', '  name: sd', 'data:', '  keep: a2VlcA==', '  both: b2xk', 'stringData:', '  plain: hello world', '  both: new', ''].join('\n')
  const r = await kubectl(['apply', '-f', '-'], yaml)
  t.equal(r.code, 0, r.stderr)
  const got = await s.request('GET', `${NS}/secrets/sd`)
  t.equal(got.status, 200)
  t.same(got.json.data, { keep: 'a2VlcA==', both: Buffer.from('new').toString('base64'), plain: Buffer.from('hello world').toString('base64') }, 'stringData wins over data for the same key')
  t.equal(got.json.stringData, undefined, 'stringData is not stored')
  t.equal(got.json.type, 'Opaque')
  // and on update (PUT)
  const put = await s.request('PUT', `${NS}/secrets/sd`, { ...got.json, stringData: { keep: 'changed' } })
  t.equal(put.status, 200, put.text)
  t.equal(put.json.data.keep, Buffer.from('changed').toString('base64'))
  t.equal(put.json.stringData, undefined)
})

t.test('an immutable ConfigMap or Secret refuses changes to its data and to immutable; its type cannot change', async (t) => {
  let r = await kubectl(['create', 'configmap', 'imm', '--from-literal=a=b'])
  t.equal(r.code, 0, r.stderr)
  r = await kubectl(['patch', 'configmap', 'imm', '-p', '{"immutable":true}'])
  t.equal(r.code, 0, r.stderr)
  r = await kubectl(['patch', 'configmap', 'imm', '-p', '{"data":{"a":"c"}}'])
  t.not(r.code, 0, 'data change refused')
  t.match(r.stderr, 'data: Forbidden: field is immutable when `immutable` is set')
  let h = await s.request('PATCH', `${NS}/configmaps/imm`, { immutable: false }, { 'content-type': 'application/merge-patch+json' })
  t.equal(h.status, 422, h.text)
  t.equal(h.json?.message, 'ConfigMap "imm" is invalid: immutable: Forbidden: field is immutable when `immutable` is set')
  h = await s.request('PATCH', `${NS}/configmaps/imm`, { metadata: { labels: { x: 'y' } } }, { 'content-type': 'application/merge-patch+json' })
  t.equal(h.status, 200, 'metadata may still change')
  t.equal((await s.request('GET', `${NS}/configmaps/imm`)).json.data.a, 'b', 'data unchanged')
  const del = await kubectl(['delete', 'configmap', 'imm'])
  t.equal(del.code, 0, 'and it can be deleted')

  r = await kubectl(['create', 'secret', 'generic', 'simm', '--from-literal=a=b'])
  t.equal(r.code, 0, r.stderr)
  h = await s.request('PATCH', `${NS}/secrets/simm`, { type: 'Other' }, { 'content-type': 'application/merge-patch+json' })
  t.equal(h.status, 422, h.text)
  t.equal(h.json?.message, 'Secret "simm" is invalid: type: Invalid value: "Other": field is immutable')
  h = await s.request('PATCH', `${NS}/secrets/simm`, { immutable: true }, { 'content-type': 'application/merge-patch+json' })
  t.equal(h.status, 200, h.text)
  h = await s.request('PATCH', `${NS}/secrets/simm`, { stringData: { a: 'z' } }, { 'content-type': 'application/merge-patch+json' })
  t.equal(h.status, 422, h.text)
  t.equal(h.json?.details?.causes?.[0]?.field, 'data')
})

t.test('data keys must be config keys; a key may not be in both data and binaryData', async (t) => {
  let r = await s.request('POST', `${NS}/configmaps`, { metadata: { name: 'badkey' }, data: { 'a b': '1', '..x': '2' } })
  t.equal(r.status, 422, r.text)
  const fields = (r.json?.details?.causes ?? []).map((c: any) => `${c.field}: ${c.message}`)
  t.ok(fields.includes("data[a b]: Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"), fields.join('\n'))
  t.ok(fields.includes("data[..x]: Invalid value: \"..x\": must not start with '..'"), fields.join('\n'))
  r = await s.request('POST', `${NS}/configmaps`, { metadata: { name: 'dup' }, data: { k: '1' }, binaryData: { k: 'MQ==' } })
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.message, 'ConfigMap "dup" is invalid: data[k]: Invalid value: "k": duplicate of key present in binaryData')
  r = await s.request('POST', `${NS}/secrets`, { metadata: { name: 'badkey' }, data: { 'a/b': 'MQ==' } })
  t.equal(r.status, 422, r.text)
  t.equal((await s.request('GET', `${NS}/configmaps/badkey`)).status, 404, 'nothing stored')
})

t.test('secrets of the well-known types need their keys', async (t) => {
  let r = await s.request('POST', `${NS}/secrets`, { metadata: { name: 'tls1' }, type: 'kubernetes.io/tls', data: { 'tls.crt': 'YQ==' } })
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.message, 'Secret "tls1" is invalid: data[tls.key]: Required value')
  r = await s.request('POST', `${NS}/secrets`, { metadata: { name: 'dcj' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': Buffer.from('not json').toString('base64') } })
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.details?.causes?.[0]?.field, 'data[.dockerconfigjson]')
  r = await s.request('POST', `${NS}/secrets`, { metadata: { name: 'ba' }, type: 'kubernetes.io/basic-auth', data: {} })
  t.equal(r.status, 422, r.text)
  r = await s.request('POST', `${NS}/secrets`, { metadata: { name: 'sat' }, type: 'orch.io/service-account-token' })
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.message, 'Secret "sat" is invalid: metadata.annotations[orch.io/service-account.name]: Required value')
  const dockerConfig = await kubectl(['create', 'secret', 'docker-registry', 'reg', '--docker-server=r.example.com', '--docker-username=u', '--docker-password=p'])
  t.equal(dockerConfig.code, 0, `kubectl create secret docker-registry: ${dockerConfig.stderr}`)
  const ok = await s.request('POST', `${NS}/secrets`, { metadata: { name: 'tls2' }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': 'c', 'tls.key': 'k' } })
  t.equal(ok.status, 201, `stringData counts for the required keys: ${ok.text}`)
})
