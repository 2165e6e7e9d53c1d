// Black-box: list and watch options as upstream decodes them — boolean flags (watch=False is a list, as Python's
// str(False) sends it), the watch options' validation, and the selectable fields of services and cluster-scoped kinds.
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'

let s: TestServer
const CMS = '/api/v1/namespaces/default/configmaps'

t.before(async () => {
  s = await startServer()
  for (const name of ['a', 'b']) {
    const r = await s.request('POST', CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } })
    if (r.status !== 201) throw new Error(r.text)
  }
})
t.teardown(async () => { await s?.stop() })

t.test('watch=False, watch=FALSE and watch=0 are lists; watch=1, watch=True and an empty watch= are watches', async (t) => {
  for (const v of ['False', 'FALSE', 'false', '0']) {
    const r = await s.request('GET', `${CMS}?watch=${v}&timeoutSeconds=1`)
    t.equal(r.status, 200, r.text)
    t.equal(r.json?.kind, 'ConfigMapList', `watch=${v} lists`)
  }
  for (const v of ['1', 'True', 'true', '']) {
    const r = await s.request('GET', `${CMS}?watch=${v}&timeoutSeconds=1`)
    t.equal(r.status, 200, r.text)
    t.match(r.text.trim().split('\n')[0], /^\s*\{"type":"ADDED"/, `watch=${v} watches`)
  }
})

t.test('allowWatchBookmarks=False asks for no bookmarks; sendInitialEvents=True is on', async (t) => {
  let r = await s.request('GET', `${CMS}?watch=1&sendInitialEvents=True&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=False&timeoutSeconds=1`)
  t.equal(r.status, 200, r.text)
  const types = r.text.trim().split('\n').map((l) => JSON.parse(l).type)
  t.same(types, ['ADDED', 'ADDED'], 'the initial events and no bookmark')
  r = await s.request('GET', `${CMS}?watch=1&sendInitialEvents=True&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=True&timeoutSeconds=1`)
  const lines = r.text.trim().split('\n').map((l) => JSON.parse(l))
  t.equal(lines[2]?.type, 'BOOKMARK', 'the initial events end with a bookmark')
})

t.test('watch options are refused as upstream validates them, every error at once', async (t) => {
  let r = await s.request('GET', `${CMS}?watch=true&sendInitialEvents=true`)
  t.equal(r.status, 422, r.text)
  t.equal(r.json.message, 'ListOptions.meta.orch.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan')
  t.same(r.json.details.causes.map((c: any) => c.field), ['resourceVersionMatch'])
  r = await s.request('GET', `${CMS}?watch=true&sendInitialEvents=true&resourceVersionMatch=Exact`)
  t.equal(r.status, 422, r.text)
  t.equal(r.json.message, 'ListOptions.meta.orch.io "" is invalid: [resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]')
  r = await s.request('GET', `${CMS}?watch=true&resourceVersion=0&resourceVersionMatch=Exact`)
  t.equal(r.status, 422, r.text)
  t.equal(r.json.message, 'ListOptions.meta.orch.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]')
})

t.test('services select on spec.type and spec.clusterIP', async (t) => {
  const SVCS = '/api/v1/namespaces/default/services'
  let r = await s.request('POST', SVCS, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'plain' }, spec: { ports: [{ port: 80 }] } })
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', SVCS, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'headless' }, spec: { clusterIP: 'None', ports: [{ port: 80 }] } })
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', SVCS, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext' }, spec: { type: 'ExternalName', externalName: 'example.com' } })
  t.equal(r.status, 201, r.text)
  const names = async (sel: string) => {
    const l = await s.request('GET', `${SVCS}?fieldSelector=${encodeURIComponent(sel)}`)
    t.equal(l.status, 200, l.text)
    return (l.json.items ?? []).map((i: any) => i.metadata.name).sort()
  }
  t.same(await names('spec.type=ExternalName'), ['ext'])
  // default/kubernetes is the API server's own Service.
  t.same(await names('spec.type=ClusterIP'), ['headless', 'kubernetes', 'plain'])
  t.same(await names('spec.clusterIP=None'), ['headless'])
  t.same(await names('spec.clusterIP!=None,spec.type=ClusterIP'), ['kubernetes', 'plain'])
  t.same(await names('spec.clusterIP=10.0.0.1'), ['kubernetes'])
})

t.test('nodes and namespaces know no metadata.namespace field; kinds without fields of their own do', async (t) => {
  for (const path of ['/api/v1/nodes', '/api/v1/namespaces']) {
    const r = await s.request('GET', `${path}?fieldSelector=metadata.namespace%3D`)
    t.equal(r.status, 400, `${path}: ${r.text}`)
    t.equal(r.json?.message, 'field label not supported: metadata.namespace')
  }
  const r = await s.request('GET', '/apis/rbac.authorization.orch.io/v1/clusterroles?fieldSelector=metadata.namespace%3D&limit=1')
  t.equal(r.status, 200, r.text)
})
