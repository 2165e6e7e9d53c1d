// parseRequestInfo over the path shapes clients send: the fields upstream's RequestInfoFactory gives them; requestInfoOf, its cache, gives the same.
import t from 'tap'
import { parseRequestInfo, requestInfoOf, type RequestInfo } from '../../src/server/request-info.js'

const cases: Array<[string, string, Record<string, unknown>]> = [
  ["GET", "/", {"isResourceRequest":false,"verb":"get","apiPrefix":"","group":"","version":"","namespace":"","resource":"","subresource":"","name":"","parts":[]}],
  ["GET", "/api", {"isResourceRequest":false,"verb":"get","apiPrefix":"api","group":"","version":"","namespace":"","resource":"","subresource":"","name":"","parts":[]}],
  ["GET", "/api/v1", {"isResourceRequest":false,"verb":"get","apiPrefix":"api","group":"","version":"v1","namespace":"","resource":"","subresource":"","name":"","parts":[]}],
  ["GET", "/api/v1/", {"isResourceRequest":false,"verb":"get","apiPrefix":"api","group":"","version":"v1","namespace":"","resource":"","subresource":"","name":"","parts":[]}],
  ["GET", "/apis", {"isResourceRequest":false,"verb":"get","apiPrefix":"apis","group":"","version":"","namespace":"","resource":"","subresource":"","name":"","parts":[]}],
  ["GET", "/apis/apps", {"isResourceRequest":false,"verb":"get","apiPrefix":"apis","group":"apps","version":"","namespace":"","resource":"","subresource":"","name":"","parts":[]}],
  ["GET", "/apis/apps/v1", {"isResourceRequest":false,"verb":"get","apiPrefix":"apis","group":"apps","version":"v1","namespace":"","resource":"","subresource":"","name":"","parts":[]}],
  ["GET", "/api/v1/namespaces", {"isResourceRequest":true,"verb":"list","apiPrefix":"api","group":"","version":"v1","namespace":"","resource":"namespaces","subresource":"","name":"","parts":["namespaces"]}],
  ["GET", "/api/v1/namespaces/default", {"isResourceRequest":true,"verb":"get","apiPrefix":"api","group":"","version":"v1","namespace":"","resource":"namespaces","subresource":"","name":"default","parts":["namespaces","default"]}],
  ["GET", "/api/v1/namespaces/default/pods", {"isResourceRequest":true,"verb":"list","apiPrefix":"api","group":"","version":"v1","namespace":"default","resource":"pods","subresource":"","name":"","parts":["namespaces","default","pods"]}],
  ["GET", "/api/v1/namespaces/default/pods/p1", {"isResourceRequest":true,"verb":"get","apiPrefix":"api","group":"","version":"v1","namespace":"default","resource":"pods","subresource":"","name":"p1","parts":["namespaces","default","pods","p1"]}],
  ["PUT", "/api/v1/namespaces/default/pods/p1/status", {"isResourceRequest":true,"verb":"update","apiPrefix":"api","group":"","version":"v1","namespace":"default","resource":"pods","subresource":"status","name":"p1","parts":["namespaces","default","pods","p1","status"]}],
  ["GET", "/api/v1/namespaces/ns1/status", {"isResourceRequest":true,"verb":"get","apiPrefix":"api","group":"","version":"v1","namespace":"","resource":"namespaces","subresource":"status","name":"ns1","parts":["namespaces","ns1","status"]}],
  ["PUT", "/api/v1/namespaces/ns1/finalize", {"isResourceRequest":true,"verb":"update","apiPrefix":"api","group":"","version":"v1","namespace":"","resource":"namespaces","subresource":"finalize","name":"ns1","parts":["namespaces","ns1","finalize"]}],
  ["GET", "/api/v1/watch/namespaces/default/pods", {"isResourceRequest":true,"verb":"watch","apiPrefix":"api","group":"","version":"v1","namespace":"default","resource":"pods","subresource":"","name":"","parts":["watch","namespaces","default","pods"]}],
  ["GET", "/api/v1//namespaces//default/pods/", {"isResourceRequest":true,"verb":"list","apiPrefix":"api","group":"","version":"v1","namespace":"default","resource":"pods","subresource":"","name":"","parts":["namespaces","default","pods"]}],
  ["DELETE", "/apis/apps/v1/namespaces/x/deployments", {"isResourceRequest":true,"verb":"deletecollection","apiPrefix":"apis","group":"apps","version":"v1","namespace":"x","resource":"deployments","subresource":"","name":"","parts":["namespaces","x","deployments"]}],
  ["POST", "/apis/apps/v1/namespaces/x/deployments", {"isResourceRequest":true,"verb":"create","apiPrefix":"apis","group":"apps","version":"v1","namespace":"x","resource":"deployments","subresource":"","name":"","parts":["namespaces","x","deployments"]}],
  ["PATCH", "/apis/apps/v1/namespaces/x/deployments/d/scale", {"isResourceRequest":true,"verb":"patch","apiPrefix":"apis","group":"apps","version":"v1","namespace":"x","resource":"deployments","subresource":"scale","name":"d","parts":["namespaces","x","deployments","d","scale"]}],
  ["GET", "/api/v1/namespaces/default/pods/p%2F1", {"isResourceRequest":true,"verb":"get","apiPrefix":"api","group":"","version":"v1","namespace":"default","resource":"pods","subresource":"","name":"p/1","parts":["namespaces","default","pods","p/1"]}],
  ["GET", "/api/v1/nodes/n1/proxy/a/b", {"isResourceRequest":true,"verb":"get","apiPrefix":"api","group":"","version":"v1","namespace":"","resource":"nodes","subresource":"proxy/a/b","name":"n1","parts":["nodes","n1","proxy","a","b"]}],
  ["GET", "/healthz", {"isResourceRequest":false,"verb":"get","apiPrefix":"","group":"","version":"","namespace":"","resource":"","subresource":"","name":"","parts":[]}],
  ["GET", "/readyz/ping", {"isResourceRequest":false,"verb":"get","apiPrefix":"","group":"","version":"","namespace":"","resource":"","subresource":"","name":"","parts":[]}],
  ["OPTIONS", "/api/v1/pods", {"isResourceRequest":true,"verb":"","apiPrefix":"api","group":"","version":"v1","namespace":"","resource":"pods","subresource":"","name":"","parts":["pods"]}],
  ["GET", "/api/v1/pods?watch=1", {"isResourceRequest":true,"verb":"watch","apiPrefix":"api","group":"","version":"v1","namespace":"","resource":"pods","subresource":"","name":"","parts":["pods"]}],
  ["GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/admin", {"isResourceRequest":true,"verb":"get","apiPrefix":"apis","group":"rbac.authorization.k8s.io","version":"v1","namespace":"","resource":"clusterroles","subresource":"","name":"admin","parts":["clusterroles","admin"]}],
]

for (const [method, url, want] of cases) {
  const [path, q = ''] = url.split('?')
  const got = parseRequestInfo(method, path, new URLSearchParams(q))
  t.same({ ...got, path: undefined }, { ...want, path: undefined }, `${method} ${url}`)
}

const split = (url: string): [string, URLSearchParams] => {
  const [path, q = ''] = url.split('?')
  return [path, new URLSearchParams(q)]
}

t.test('requestInfoOf: each path and method gets its own parse, first time and cached, in any order', async (t) => {
  for (const order of [cases, [...cases].reverse(), cases]) {
    for (const [method, url] of order) {
      const [path, q] = split(url)
      t.same(requestInfoOf(method, path, q), parseRequestInfo(method, path, q), `${method} ${url}`)
    }
  }
  // The same path under other methods, after it was cached under GET.
  for (const method of ['GET', 'DELETE', 'POST', 'GET', 'PUT', 'PATCH', 'HEAD', 'DELETE']) {
    const path = '/apis/apps/v1/namespaces/x/deployments'
    t.same(requestInfoOf(method, path, new URLSearchParams()), parseRequestInfo(method, path, new URLSearchParams()), `${method} ${path}`)
  }
})

t.test('requestInfoOf: the watch parameter is read on every request, never cached', async (t) => {
  const path = '/api/v1/namespaces/w/pods'
  const verbs = ['watch=1', '', 'watch=false', 'watch=true&limit=1', 'limit=1', 'watch', 'watch=0', 'watch=1'].map((q) => requestInfoOf('GET', path, new URLSearchParams(q)).verb)
  t.same(verbs, ['watch', 'list', 'list', 'watch', 'list', 'watch', 'list', 'watch'])
  const named = '/api/v1/namespaces/w/pods/p'
  t.same(['watch=1', '', 'watch=1'].map((q) => requestInfoOf('GET', named, new URLSearchParams(q)).verb), ['watch', 'get', 'watch'])
})

t.test('requestInfoOf: a request may rewrite its info without reaching the next one of the same path', async (t) => {
  const path = '/apis/rbac.authorization.k8s.io/v1/clusterroles/admin'
  const first = requestInfoOf('GET', path, new URLSearchParams())
  first.group = 'rbac.authorization.orch.io'
  first.verb = 'x'
  const second = requestInfoOf('GET', path, new URLSearchParams())
  t.equal(second.group, 'rbac.authorization.k8s.io')
  t.equal(second.verb, 'get')
  t.not(second, first)
  second.name = 'other'
  t.equal(requestInfoOf('GET', path, new URLSearchParams()).name, 'admin')
  // The path's segments are shared between requests: frozen, so a write fails instead of reaching the others.
  t.throws(() => (second.parts as string[]).push('x'))
  t.same(requestInfoOf('GET', path, new URLSearchParams()).parts, ['clusterroles', 'admin'])
})

t.test('requestInfoOf: still right once the cache was cleared for being full', async (t) => {
  const infos: Array<[string, RequestInfo]> = []
  for (let i = 0; i < 20000; i++) {
    const path = `/api/v1/namespaces/n${i % 7}/configmaps/c${i}`
    infos.push([path, requestInfoOf('GET', path, new URLSearchParams())])
  }
  let wrong = 0
  for (let i = infos.length - 1; i >= 0; i -= 13) {
    const [path, was] = infos[i]
    const now = requestInfoOf('GET', path, new URLSearchParams())
    if (now.name !== `c${i}` || now.namespace !== `n${i % 7}` || was.name !== now.name) wrong++
  }
  t.equal(wrong, 0)
})
