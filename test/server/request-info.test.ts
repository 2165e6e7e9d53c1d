// parseRequestInfo over the path shapes clients send: the fields upstream's RequestInfoFactory gives them.
import t from 'tap'
import { parseRequestInfo } from '../../src/server/request-info.js'

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
