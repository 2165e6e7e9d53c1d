// Black-box: Ingress and IngressClass validation (upstream ValidateIngressSpec, validateIngressClassSpec) — refused
// objects are 422 with upstream's causes and nothing is stored; ordinary manifests are still created.
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'

let s: TestServer
const ING = '/apis/networking.orch.io/v1/namespaces/default/ingresses'
const IC = '/apis/networking.orch.io/v1/ingressclasses'

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

type Obj = Record<string, any>
const backend = (extra: Obj = {}) => ({ service: { name: 'web', port: { number: 80 } }, ...extra })
const ingress = (name: string, spec: Obj) => ({ apiVersion: 'networking.orch.io/v1', kind: 'Ingress', metadata: { name }, spec })
const withPath = (name: string, p: Obj, host = 'shop.example.com') => ingress(name, { rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: backend(), ...p }] } }] })

/** POST is refused with exactly these causes, and a GET finds nothing. */
async function refused(t: import('tap').Test, base: string, body: Obj, causes: Array<{ field: string; reason: string; message: string }>, kind: string) {
  const r = await s.request('POST', base, body)
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.reason, 'Invalid')
  t.same(r.json?.details?.causes, causes)
  const lines = causes.map((c) => `${c.field}: ${c.message}`)
  t.equal(r.json?.message, `${kind} "${body.metadata.name}" is invalid: ${lines.length === 1 ? lines[0] : `[${lines.join(', ')}]`}`)
  t.equal((await s.request('GET', `${base}/${body.metadata.name}`)).status, 404, 'nothing stored')
}

const P = 'spec.rules[0].http.paths[0]'

t.test('an nginx-style Ingress, a default-backend one and a wildcard host are created', async (t) => {
  let r = await s.request('POST', ING, ingress('nginx', {
    ingressClassName: 'nginx',
    tls: [{ hosts: ['shop.example.com', '*.example.com'], secretName: 'shop-tls' }],
    rules: [
      { host: 'shop.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: backend() }, { path: '/api', pathType: 'Exact', backend: { service: { name: 'api', port: { name: 'http' } } } }] } },
      { host: '*.example.com', http: { paths: [{ pathType: 'ImplementationSpecific', backend: { resource: { apiGroup: 'storage.example.com', kind: 'Bucket', name: 'static' } } }] } },
    ],
  }))
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', ING, ingress('only-default', { defaultBackend: backend() }))
  t.equal(r.status, 201, r.text)
})

t.test('pathType', async (t) => {
  const body = withPath('no-type', {})
  delete body.spec.rules[0].http.paths[0].pathType
  await refused(t, ING, body, [{ field: `${P}.pathType`, reason: 'FieldValueRequired', message: 'Required value: pathType must be specified' }], 'Ingress.networking.orch.io')
  await refused(t, ING, withPath('bad-type', { pathType: 'Regex' }), [{ field: `${P}.pathType`, reason: 'FieldValueNotSupported', message: 'Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix"' }], 'Ingress.networking.orch.io')
})

t.test('paths: absolute, no dot segments or encoded slashes', async (t) => {
  await refused(t, ING, withPath('rel', { path: 'api' }), [{ field: `${P}.path`, reason: 'FieldValueInvalid', message: 'Invalid value: "api": must be an absolute path' }], 'Ingress.networking.orch.io')
  await refused(t, ING, withPath('seq', { path: '/a/../b/.', pathType: 'Exact' }), [
    { field: `${P}.path`, reason: 'FieldValueInvalid', message: 'Invalid value: "/a/../b/.": must not contain \'/../\'' },
    { field: `${P}.path`, reason: 'FieldValueInvalid', message: 'Invalid value: "/a/../b/.": cannot end with \'/.\'' },
  ], 'Ingress.networking.orch.io')
  await refused(t, ING, withPath('impl-rel', { path: 'x', pathType: 'ImplementationSpecific' }), [{ field: `${P}.path`, reason: 'FieldValueInvalid', message: 'Invalid value: "x": must be an absolute path' }], 'Ingress.networking.orch.io')
})

t.test('backends', async (t) => {
  const K = 'Ingress.networking.orch.io'
  await refused(t, ING, withPath('both', { backend: backend({ resource: { kind: 'Bucket', name: 'b' } }) }), [{ field: `${P}.backend`, reason: 'FieldValueInvalid', message: 'Invalid value: "": cannot set both resource and service backends' }], K)
  await refused(t, ING, withPath('neither', { backend: {} }), [{ field: `${P}.backend`, reason: 'FieldValueInvalid', message: 'Invalid value: "": resource or service backend is required' }], K)
  await refused(t, ING, withPath('two-ports', { backend: { service: { name: 'web', port: { name: 'http', number: 80 } } } }), [{ field: `${P}.backend`, reason: 'FieldValueInvalid', message: 'Invalid value: "": cannot set both port name & port number' }], K)
  await refused(t, ING, withPath('no-port', { backend: { service: { name: 'web', port: {} } } }), [{ field: `${P}.backend`, reason: 'FieldValueRequired', message: 'Required value: port name or number is required' }], K)
  await refused(t, ING, withPath('big-port', { backend: { service: { name: 'web', port: { number: 70000 } } } }), [{ field: `${P}.backend.service.port.number`, reason: 'FieldValueInvalid', message: 'Invalid value: 70000: must be between 1 and 65535, inclusive' }], K)
  await refused(t, ING, withPath('svc-name', { backend: { service: { name: '1web', port: { number: 80 } } } }), [{
    field: `${P}.backend.service.name`, reason: 'FieldValueInvalid',
    message: 'Invalid value: "1web": a DNS-1035 label must consist of lower case alphanumeric characters or \'-\', start with an alphabetic character, and end with an alphanumeric character (e.g. \'my-name\',  or \'abc-123\', regex used for validation is \'[a-z]([-a-z0-9]*[a-z0-9])?\')',
  }], K)
  await refused(t, ING, withPath('res-kind', { backend: { resource: { name: 'b' } } }), [{ field: `${P}.backend.resource.kind`, reason: 'FieldValueRequired', message: 'Required value' }], K)
})

t.test('hosts, tls, and an Ingress with neither rules nor a default backend', async (t) => {
  const K = 'Ingress.networking.orch.io'
  await refused(t, ING, withPath('ip-host', {}, '10.0.0.1'), [{ field: 'spec.rules[0].host', reason: 'FieldValueInvalid', message: 'Invalid value: "10.0.0.1": must be a DNS name, not an IP address' }], K)
  await refused(t, ING, withPath('wild', {}, 'foo.*.example.com'), [{
    field: 'spec.rules[0].host', reason: 'FieldValueInvalid',
    message: 'Invalid value: "foo.*.example.com": a wildcard DNS-1123 subdomain must start with \'*.\', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, \'-\' or \'.\' and end with an alphanumeric character (e.g. \'*.example.com\', regex used for validation is \'\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')',
  }], K)
  await refused(t, ING, ingress('upper-tls', { defaultBackend: backend(), tls: [{ hosts: ['Shop.example.com'] }] }), [{
    field: 'spec.tls[0].hosts[0]', reason: 'FieldValueInvalid',
    message: 'Invalid value: "Shop.example.com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')',
  }], K)
  await refused(t, ING, ingress('empty', {}), [{ field: 'spec', reason: 'FieldValueInvalid', message: 'Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified' }], K)
  await refused(t, ING, ingress('no-paths', { rules: [{ host: 'a.example.com', http: { paths: [] } }] }), [{ field: 'spec.rules[0].http.paths', reason: 'FieldValueRequired', message: 'Required value' }], K)
})

t.test('updates are validated too', async (t) => {
  let r = await s.request('POST', ING, withPath('upd', {}))
  t.equal(r.status, 201, r.text)
  r = await s.request('PATCH', `${ING}/upd`, { spec: { rules: [{ host: 'shop.example.com', http: { paths: [{ path: 'x', pathType: 'Exact', backend: backend() }] } }] } }, { 'content-type': 'application/merge-patch+json' })
  t.equal(r.status, 422, r.text)
  t.equal((await s.request('GET', `${ING}/upd`)).json.spec.rules[0].http.paths[0].path, '/')
})

t.test('IngressClass: controller, parameters, immutability', async (t) => {
  const K = 'IngressClass.networking.orch.io'
  const ic = (name: string, spec: Obj) => ({ apiVersion: 'networking.orch.io/v1', kind: 'IngressClass', metadata: { name }, spec })
  let r = await s.request('POST', IC, ic('nginx', { controller: 'k8s.io/ingress-nginx', parameters: { apiGroup: 'k8s.example.com', kind: 'IngressParameters', name: 'lb', scope: 'Namespace', namespace: 'infra' } }))
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', IC, ic('plain', { controller: 'example.com/plain', parameters: { kind: 'ConfigMap', name: 'cfg' } }))
  t.equal(r.status, 201, r.text)
  t.equal(r.json.spec.parameters.scope, 'Cluster', 'scope defaults to Cluster')
  await refused(t, IC, ic('no-domain', { controller: 'nginx' }), [{ field: 'spec.controller', reason: 'FieldValueInvalid', message: 'Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")' }], K)
  await refused(t, IC, ic('no-ctrl', {}), [{ field: 'spec.controller', reason: 'FieldValueRequired', message: 'Required value' }], K)
  await refused(t, IC, ic('ns-missing', { controller: 'example.com/c', parameters: { kind: 'K', name: 'n', scope: 'Namespace' } }), [{ field: 'spec.parameters.namespace', reason: 'FieldValueRequired', message: "Required value: `parameters.scope` is set to 'Namespace'" }], K)
  await refused(t, IC, ic('ns-cluster', { controller: 'example.com/c', parameters: { kind: 'K', name: 'n', scope: 'Cluster', namespace: 'x' } }), [{ field: 'spec.parameters.namespace', reason: 'FieldValueForbidden', message: "Forbidden: `parameters.scope` is set to 'Cluster'" }], K)
  await refused(t, IC, ic('bad-scope', { controller: 'example.com/c', parameters: { kind: 'K', name: 'n', scope: 'Global' } }), [{ field: 'spec.parameters.scope', reason: 'FieldValueNotSupported', message: 'Unsupported value: "Global": supported values: "Cluster", "Namespace"' }], K)
  r = await s.request('PATCH', `${IC}/plain`, { spec: { controller: 'example.com/other' } }, { 'content-type': 'application/merge-patch+json' })
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.message, 'IngressClass.networking.orch.io "plain" is invalid: spec.controller: Invalid value: "example.com/other": field is immutable')
})
