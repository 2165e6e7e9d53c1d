// Black-box: what every active namespace gets from the controllers: the ServiceAccount "default" and the ConfigMap orch-root-ca.crt with the cluster CA.
import t from 'tap'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type TestServer } from '../helpers/server.js'
import { eventually, created } from '../helpers/poll.js'
import { runKubectl } from '../helpers/kubectl.js'

let s: TestServer
let home: string
let caPem: string
const MERGE = { 'content-type': 'application/merge-patch+json' }
const sa = (ns: string) => `/api/v1/namespaces/${ns}/serviceaccounts/default`
const cm = (ns: string) => `/api/v1/namespaces/${ns}/configmaps/orch-root-ca.crt`

t.before(async () => {
  s = await startServer({ secure: true })
  home = mkdtempSync(join(tmpdir(), 'orch-nsdefaults-home-'))
  const kc = JSON.parse(readFileSync(s.kubeconfig, 'utf8'))
  caPem = Buffer.from(kc.clusters[0].cluster['certificate-authority-data'], 'base64').toString('utf8')
})
t.teardown(async () => { await s?.stop(); rmSync(home, { recursive: true, force: true }) })

const exists = (path: string) => async () => (await s.request('GET', path)).status === 200

t.test('the bootstrapped namespaces have a default account and the root CA', async (t) => {
  for (const ns of ['default', 'orch-system', 'orch-public', 'orch-node-lease']) {
    t.ok(await eventually(exists(sa(ns))), `${ns}: default service account`)
    t.ok(await eventually(exists(cm(ns))), `${ns}: root CA ConfigMap`)
  }
  const r = await s.request('GET', cm('default'))
  t.same(r.json.data, { 'ca.crt': caPem }, 'the ConfigMap holds exactly the CA of the admin kubeconfig')
  t.type(r.json.metadata.annotations?.['orch.io/description'], 'string')
})

t.test('a new namespace gets both; kubectl lists the account', async (t) => {
  await created(await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } }), 'namespace')
  t.ok(await eventually(exists(sa('team-a'))), 'default service account')
  t.ok(await eventually(exists(cm('team-a'))), 'root CA ConfigMap')
  const k = await runKubectl(s.kubeconfig, home, ['get', 'serviceaccounts', '-n', 'team-a', '-o', 'name'])
  t.equal(k.code, 0, k.stderr)
  t.equal(k.stdout.trim(), 'serviceaccount/default')
})

t.test('a deleted default account is made again', async (t) => {
  const before = await s.request('GET', sa('team-a'))
  t.equal(before.status, 200)
  t.equal((await s.request('DELETE', sa('team-a'))).status, 200)
  t.ok(await eventually(async () => {
    const r = await s.request('GET', sa('team-a'))
    return r.status === 200 && r.json.metadata.uid !== before.json.metadata.uid
  }), 'a new default account')
  // Other accounts are left alone.
  await created(await s.request('POST', '/api/v1/namespaces/team-a/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'builder' } }), 'account')
  t.equal((await s.request('DELETE', '/api/v1/namespaces/team-a/serviceaccounts/builder')).status, 200)
  await new Promise((r) => setTimeout(r, 300))
  t.equal((await s.request('GET', '/api/v1/namespaces/team-a/serviceaccounts/builder')).status, 404)
})

t.test('the root CA ConfigMap is put back when changed or deleted', async (t) => {
  const p = await s.request('PATCH', cm('team-a'), { data: { 'ca.crt': 'forged', extra: 'x' } }, MERGE)
  t.equal(p.status, 200, p.text)
  t.ok(await eventually(async () => {
    const r = await s.request('GET', cm('team-a'))
    return r.status === 200 && JSON.stringify(r.json.data) === JSON.stringify({ 'ca.crt': caPem })
  }), 'data restored')
  const before = await s.request('GET', cm('team-a'))
  t.equal((await s.request('DELETE', cm('team-a'))).status, 200)
  t.ok(await eventually(async () => {
    const r = await s.request('GET', cm('team-a'))
    return r.status === 200 && r.json.metadata.uid !== before.json.metadata.uid && r.json.data['ca.crt'] === caPem
  }), 'recreated')
})

t.test('a terminating namespace is emptied and goes, its defaults not made again', async (t) => {
  await created(await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-b' } }), 'namespace')
  t.ok(await eventually(exists(sa('team-b'))))
  t.ok(await eventually(exists(cm('team-b'))))
  t.equal((await s.request('DELETE', '/api/v1/namespaces/team-b')).status, 200)
  t.ok(await eventually(async () => (await s.request('GET', '/api/v1/namespaces/team-b')).status === 404, 20_000), 'the namespace is finalized and removed')
  t.equal((await s.request('GET', sa('team-b'))).status, 404)
  t.equal((await s.request('GET', cm('team-b'))).status, 404)
})

t.test('without a CA of its own the server publishes no root CA, but still makes default accounts', async (t) => {
  const plain = await startServer()
  try {
    t.ok(await eventually(async () => (await plain.request('GET', sa('default'))).status === 200), 'default service account')
    t.equal((await plain.request('GET', cm('default'))).status, 404)
  } finally {
    await plain.stop()
  }
})
