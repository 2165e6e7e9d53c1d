// Black-box: quantities come back as upstream serialises them after decoding (`1000m` → `1`, 0.5 → `500m`, `1024Mi`
// → `1Gi`), texts upstream keeps as written stay so, and a quantity matching the grammar that does not parse is 400.
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'

let s: TestServer

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

t.test('ResourceQuota hard amounts are canonical', async (t) => {
  const r = await s.request('POST', '/api/v1/namespaces/default/resourcequotas', {
    apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' },
    spec: { hard: { cpu: 0.5, 'requests.cpu': '1000m', memory: '1024Mi', 'limits.memory': '1.5Gi', pods: '010', 'requests.memory': '128Mi', 'limits.cpu': 2 } },
  })
  t.equal(r.status, 201, r.text)
  t.same(r.json.spec.hard, { cpu: '500m', 'requests.cpu': '1', memory: '1Gi', 'limits.memory': '1536Mi', pods: '010', 'requests.memory': '128Mi', 'limits.cpu': '2' })
  const g = await s.request('GET', '/api/v1/namespaces/default/resourcequotas/q')
  t.same(g.json.spec.hard, r.json.spec.hard, 'stored so')
  // The quota is enforced: the pods of the next test would exceed it.
  t.equal((await s.request('DELETE', '/api/v1/namespaces/default/resourcequotas/q')).status, 200)
})

t.test('container resources are canonical; an unparseable quantity is 400 and nothing is stored', async (t) => {
  const pod = (name: string, limits: Record<string, unknown>) => ({
    apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'i', resources: { limits, requests: limits } }] },
  })
  let r = await s.request('POST', '/api/v1/namespaces/default/pods', pod('p1', { cpu: '1000m', memory: '2048Mi' }))
  t.equal(r.status, 201, r.text)
  t.same(r.json.spec.containers[0].resources.limits, { cpu: '1', memory: '2Gi' })
  r = await s.request('POST', '/api/v1/namespaces/default/pods', pod('p2', { cpu: '1.2.3' }))
  t.equal(r.status, 400, r.text)
  t.match(r.json?.message, /cannot be handled as a Pod: quantities must match the regular expression/)
  t.equal((await s.request('GET', '/api/v1/namespaces/default/pods/p2')).status, 404)
})
