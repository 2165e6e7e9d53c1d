// Black-box: MutatingAdmissionWebhook and ValidatingAdmissionWebhook against a local https webhook server: the
// AdmissionReview sent, denials (message, code), allowing with warnings, JSONPatch mutation (stored, reinvoked with
// IfNeeded), failure policies when the webhook is down or slow, the caBundle, rules, namespace and object selectors,
// match conditions, dry run, DELETE, service references resolved through EndpointSlices, configuration changes taking
// effect at once, the exemption of the configurations themselves, and --disable-admission-plugins.
import t, { type Test } from 'tap'
import { networkInterfaces } from 'node:os'
import { startServer, freePort, type Reply, type TestServer } from '../helpers/server.js'
import { startWebhookServer, type Received, type WebhookServer, type Answer } from '../helpers/webhook-server.js'

type Obj = Record<string, any>

const G = 'admissionregistration.orch.io'
const VWC = `/apis/${G}/v1/validatingwebhookconfigurations`
const MWC = `/apis/${G}/v1/mutatingwebhookconfigurations`
const cms = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`
const cm = (name: string, data: Obj = {}, labels?: Obj) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...(labels ? { labels } : {}) }, data })

let s: TestServer
let hook: WebhookServer
/** Answers by path (the part before the query): each test sets its own. */
const routes = new Map<string, (r: Received) => Answer>()

t.before(async () => {
  // On every address: an EndpointSlice may not name a loopback address (see the service test).
  hook = await startWebhookServer({ dnsNames: ['hooks.webhook-ns.svc'], host: '0.0.0.0' })
  hook.answer = (r) => {
    const route = routes.get(r.path.split('?')[0])
    return route ? route(r) : { status: 404, body: { error: `no route ${r.path}` } }
  }
  s = await startServer()
  for (const ns of ['webhook-ns', 'labelled', 'plain']) {
    const r = await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: ns === 'labelled' ? { hooks: 'on' } : {} } })
    if (r.status !== 201) throw new Error(r.text)
  }
})
t.teardown(async () => { await s?.stop(); await hook?.close() })

const caBundle = () => Buffer.from(hook.caPem).toString('base64')

/** An AdmissionReview answer to a received review (same version, its uid). */
function reply(r: Received, response: Obj, opts: { apiVersion?: string } = {}): Answer {
  return { status: 200, body: { apiVersion: opts.apiVersion ?? r.body.apiVersion, kind: 'AdmissionReview', response: { uid: r.body.request.uid, ...response } } }
}
const allow = (r: Received): Answer => reply(r, { allowed: true })
const patchOf = (ops: unknown[]) => Buffer.from(JSON.stringify(ops)).toString('base64')

/** The reviews a path received since `from`. */
function calls(path: string, from = 0): Received[] {
  return hook.received.slice(from).filter((r) => r.path.split('?')[0] === path)
}

interface HookSpec { path: string; rules?: Obj[]; extra?: Obj; clientConfig?: Obj; name?: string }

const CM_RULE = (operations = ['CREATE', 'UPDATE']) => ({ apiGroups: [''], apiVersions: ['v1'], operations, resources: ['configmaps'] })

function webhook(h: HookSpec): Obj {
  return {
    name: h.name ?? `${h.path.slice(1)}.hooks.example.com`,
    clientConfig: h.clientConfig ?? { url: `${hook.url}${h.path}`, caBundle: caBundle() },
    rules: h.rules ?? [CM_RULE()],
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    ...(h.extra ?? {}),
  }
}

/** A configuration (validating unless `mutating`), removed when the test ends. */
async function configure(t: Test, name: string, hooks: HookSpec[], mutating = false): Promise<Obj> {
  const path = mutating ? MWC : VWC
  const r = await s.request('POST', path, { apiVersion: `${G}/v1`, kind: mutating ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration', metadata: { name }, webhooks: hooks.map(webhook) })
  t.equal(r.status, 201, r.status === 201 ? `configuration ${name}` : r.text)
  t.teardown(async () => { await s.request('DELETE', `${path}/${name}`) })
  return r.json
}

function warningsOf(r: Reply): string[] {
  const h = r.headers.warning
  if (h === undefined) return []
  return Array.isArray(h) ? h : h.split(/, (?=299 )/)
}

t.test('a validating webhook denies with its message and code, or allows with warnings; the review is upstream\'s', async (t) => {
  routes.set('/deny', (r) => r.body.request.object.data?.forbidden !== undefined
    ? reply(r, { allowed: false, status: { code: 403, reason: 'Forbidden', message: 'forbidden keys are not allowed' } })
    : reply(r, { allowed: true, warnings: ['looked at it', 'twice "quoted"'] }))
  await configure(t, 'deny', [{ path: '/deny' }])
  let r = await s.request('POST', cms('plain'), cm('bad', { forbidden: 'x' }))
  t.equal(r.status, 403, r.text)
  t.same(r.json, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: 'admission webhook "deny.hooks.example.com" denied the request: forbidden keys are not allowed', reason: 'Forbidden', code: 403,
  })
  r = await s.request('GET', `${cms('plain')}/bad`)
  t.equal(r.status, 404, 'not stored')

  const before = hook.received.length
  r = await s.request('POST', cms('plain'), cm('good', { fine: 'y' }))
  t.equal(r.status, 201, r.text)
  t.same(warningsOf(r), ['299 - "looked at it"', '299 - "twice \\"quoted\\""'])
  const [got] = calls('/deny', before)
  t.ok(got, 'called')
  t.match(got.path, /^\/deny\?timeout=10s$/, 'the timeout in the query')
  t.equal(got.headers['content-type'], 'application/json')
  const review = got.body
  t.equal(review.apiVersion, 'admission.orch.io/v1')
  t.equal(review.kind, 'AdmissionReview')
  const q = review.request
  t.match(q.uid, /^[0-9a-f-]{36}$/)
  t.same(Object.keys(q), ['uid', 'kind', 'resource', 'requestKind', 'requestResource', 'name', 'namespace', 'operation', 'userInfo', 'object', 'oldObject', 'dryRun', 'options'])
  t.same(q.kind, { group: '', version: 'v1', kind: 'ConfigMap' })
  t.same(q.resource, { group: '', version: 'v1', resource: 'configmaps' })
  t.same(q.requestKind, q.kind)
  t.same(q.requestResource, q.resource)
  t.equal(q.name, 'good')
  t.equal(q.namespace, 'plain')
  t.equal(q.operation, 'CREATE')
  t.equal(q.userInfo.username, 'orch-admin')
  t.ok(q.userInfo.groups.includes('system:masters'))
  t.same(q.object.data, { fine: 'y' })
  t.equal(q.object.metadata.uid, r.json.metadata.uid, 'validating webhooks see the object as stored')
  t.equal(q.oldObject, null)
  t.equal(q.dryRun, false)
  t.same(q.options, { kind: 'CreateOptions', apiVersion: 'meta.orch.io/v1' })

  // No status at all: upstream's 400 "without explanation".
  routes.set('/deny', (r) => reply(r, { allowed: false }))
  r = await s.request('POST', cms('plain'), cm('bare'))
  t.equal(r.status, 400, r.text)
  t.equal(r.json.message, 'admission webhook "deny.hooks.example.com" denied the request without explanation')
})

t.test('an update is sent with its old object; v1beta1 reviews are sent to webhooks that take only them', async (t) => {
  routes.set('/beta', (r) => ({ status: 200, body: { apiVersion: 'admission.orch.io/v1beta1', kind: 'AdmissionReview', response: { allowed: r.body.request.object.data?.v !== 'no' } } }))
  await configure(t, 'beta', [{ path: '/beta', extra: { admissionReviewVersions: ['v9', 'v1beta1', 'v1'] } }])
  let r = await s.request('POST', cms('plain'), cm('upd', { v: '1' }))
  t.equal(r.status, 201, r.text)
  const before = hook.received.length
  r = await s.request('PATCH', `${cms('plain')}/upd`, { data: { v: 'no' } }, { 'content-type': 'application/merge-patch+json' })
  t.equal(r.status, 400, r.text)
  t.equal(r.json.message, 'admission webhook "beta.hooks.example.com" denied the request without explanation')
  const [got] = calls('/beta', before)
  t.equal(got.body.apiVersion, 'admission.orch.io/v1beta1')
  t.equal(got.body.request.operation, 'UPDATE')
  t.equal(got.body.request.oldObject.data.v, '1')
  t.equal(got.body.request.object.data.v, 'no')
  t.same(got.body.request.options, { kind: 'UpdateOptions', apiVersion: 'meta.orch.io/v1' })
})

t.test('validating webhooks are called in parallel; answers in the admission.k8s.io spelling are taken, a wrong uid is not', async (t) => {
  routes.set('/par-a', (r) => ({ ...reply(r, { allowed: true }, { apiVersion: 'admission.k8s.io/v1' }), delayMs: 800 }))
  routes.set('/par-b', (r) => ({ ...reply(r, { allowed: true }), delayMs: 800 }))
  await configure(t, 'parallel', [{ path: '/par-a' }, { path: '/par-b' }])
  const t0 = Date.now()
  let r = await s.request('POST', cms('plain'), cm('parallel'))
  const took = Date.now() - t0
  t.equal(r.status, 201, r.text)
  t.ok(took >= 750 && took < 1500, `both answered within one delay (${took} ms)`)
  routes.set('/par-b', (rv) => ({ status: 200, body: { apiVersion: 'admission.orch.io/v1', kind: 'AdmissionReview', response: { uid: 'not-the-uid', allowed: true } } }))
  routes.set('/par-a', allow)
  r = await s.request('POST', cms('plain'), cm('wrong-uid'))
  t.equal(r.status, 500, r.text)
  t.match(r.json.message, /^Internal error occurred: failed calling webhook "par-b\.hooks\.example\.com": received invalid webhook response: expected response\.uid="[0-9a-f-]{36}", got "not-the-uid"$/)
})

t.test('a mutating webhook\'s JSONPatch is stored; IfNeeded webhooks are called again after a later change', async (t) => {
  routes.set('/label', (r) => {
    const labels = r.body.request.object.metadata.labels
    return reply(r, { allowed: true, patchType: 'JSONPatch', patch: patchOf(labels ? [{ op: 'add', path: '/metadata/labels/mutated', value: 'yes' }] : [{ op: 'add', path: '/metadata/labels', value: { mutated: 'yes' } }]) })
  })
  routes.set('/second', (r) => reply(r, { allowed: true, patchType: 'JSONPatch', patch: patchOf([{ op: 'add', path: '/data/second', value: 'added' }]) }))
  await configure(t, 'mutate', [
    { path: '/label', extra: { reinvocationPolicy: 'IfNeeded' } },
    { path: '/second' },
  ], true)
  const before = hook.received.length
  let r = await s.request('POST', cms('plain'), cm('mutated', { first: 'given' }))
  t.equal(r.status, 201, r.text)
  t.same(r.json.metadata.labels, { mutated: 'yes' })
  t.same(r.json.data, { first: 'given', second: 'added' })
  r = await s.request('GET', `${cms('plain')}/mutated`)
  t.same(r.json.metadata.labels, { mutated: 'yes' }, 'stored')
  t.equal(r.json.data.second, 'added')
  const first = calls('/label', before)
  t.equal(first.length, 2, 'the IfNeeded webhook was called again after the second one changed the object')
  t.notOk('uid' in first[0].body.request.object.metadata, 'a create is seen before its system fields are set')
  t.equal(first[1].body.request.object.data.second, 'added', 'the second call sees the later change')
  t.equal(calls('/second', before).length, 1, 'a webhook with reinvocationPolicy Never is called once')

  // A patch whose result is not of the kind is the server's error (upstream cannot decode it); one the kind's checks
  // refuse is refused as the object would be.
  routes.set('/second', (r) => reply(r, { allowed: true, patchType: 'JSONPatch', patch: patchOf([{ op: 'add', path: '/data/bad', value: 7 }]) }))
  r = await s.request('POST', cms('plain'), cm('broken'))
  t.equal(r.status, 500, r.text)
  t.match(r.json.message, /^Internal error occurred: ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number/)
  routes.set('/second', (r) => reply(r, { allowed: true, patchType: 'JSONPatch', patch: patchOf([{ op: 'add', path: '/data/bad key', value: 'x' }]) }))
  r = await s.request('POST', cms('plain'), cm('invalid'))
  t.equal(r.status, 422, r.text)
  t.match(r.json.message, /^ConfigMap "invalid" is invalid: data\[bad key\]/)
  // A patch that cannot be applied is the server's error.
  routes.set('/second', (r) => reply(r, { allowed: true, patchType: 'JSONPatch', patch: patchOf([{ op: 'replace', path: '/nope/deep', value: 1 }]) }))
  r = await s.request('POST', cms('plain'), cm('unapplied'))
  t.equal(r.status, 500, r.text)
  t.match(r.json.message, /^Internal error occurred: /)
  // A validating-style answer with a patch but no patchType is an invalid answer (failurePolicy Fail: 500).
  routes.set('/second', (r) => reply(r, { allowed: true, patch: patchOf([]) }))
  r = await s.request('POST', cms('plain'), cm('no-type'))
  t.equal(r.status, 500, r.text)
  t.equal(r.json.message, 'Internal error occurred: failed calling webhook "second.hooks.example.com": received invalid webhook response: webhook returned response.patch but not response.patchType')
})

t.test('failurePolicy: a webhook that is down fails the request (Fail) or is skipped (Ignore); a slow one times out', async (t) => {
  const down = await freePort()
  const url = `https://127.0.0.1:${down}/down`
  await configure(t, 'down', [{ path: '/down', name: 'down.hooks.example.com', clientConfig: { url, caBundle: caBundle() }, extra: { failurePolicy: 'Fail' } }])
  let r = await s.request('POST', cms('plain'), cm('while-down'))
  t.equal(r.status, 500, r.text)
  t.same(r.json, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: `Internal error occurred: failed calling webhook "down.hooks.example.com": failed to call webhook: Post "${url}?timeout=10s": dial tcp 127.0.0.1:${down}: connect: connection refused`,
    reason: 'InternalError',
    details: { causes: [{ message: `failed calling webhook "down.hooks.example.com": failed to call webhook: Post "${url}?timeout=10s": dial tcp 127.0.0.1:${down}: connect: connection refused` }] },
    code: 500,
  })
  r = await s.request('PUT', `${VWC}/down`, { apiVersion: `${G}/v1`, kind: 'ValidatingWebhookConfiguration', metadata: { name: 'down' }, webhooks: [webhook({ path: '/down', name: 'down.hooks.example.com', clientConfig: { url, caBundle: caBundle() }, extra: { failurePolicy: 'Ignore' } })] })
  t.equal(r.status, 200, r.text)
  r = await s.request('POST', cms('plain'), cm('ignored'))
  t.equal(r.status, 201, 'Ignore: the request goes on at once, the change of policy taking effect at once')

  routes.set('/slow', (rv) => ({ ...allow(rv), delayMs: 2500 }))
  await configure(t, 'slow', [{ path: '/slow', extra: { timeoutSeconds: 1 } }])
  const t0 = Date.now()
  r = await s.request('POST', cms('plain'), cm('too-slow'))
  const took = Date.now() - t0
  t.equal(r.status, 500, r.text)
  t.match(r.json.message, /^Internal error occurred: failed calling webhook "slow.hooks.example.com": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/slow\?timeout=1s": context deadline exceeded/)
  t.ok(took >= 900 && took < 2300, `timed out after about a second (${took} ms)`)
})

t.test('the caBundle is what the webhook\'s certificate is checked against', async (t) => {
  const other = await startWebhookServer()
  t.teardown(() => other.close())
  await configure(t, 'wrong-ca', [{ path: '/deny', clientConfig: { url: `${hook.url}/deny`, caBundle: Buffer.from(other.caPem).toString('base64') } }])
  const r = await s.request('POST', cms('plain'), cm('wrong-ca'))
  t.equal(r.status, 500, r.text)
  t.match(r.json.message, /failed calling webhook "deny.hooks.example.com": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/deny\?timeout=10s": tls: failed to verify certificate/)
})

t.test('rules, namespaceSelector, objectSelector and match conditions decide which requests are sent', async (t) => {
  routes.set('/ns', allow)
  routes.set('/obj', allow)
  routes.set('/rule', allow)
  routes.set('/cel', allow)
  await configure(t, 'selectors', [
    { path: '/ns', extra: { namespaceSelector: { matchLabels: { hooks: 'on' } } } },
    { path: '/obj', extra: { objectSelector: { matchExpressions: [{ key: 'watched', operator: 'Exists' }] } } },
    { path: '/rule', rules: [{ apiGroups: ['apps'], apiVersions: ['*'], operations: ['*'], resources: ['deployments'] }, CM_RULE(['DELETE'])] },
    { path: '/cel', extra: { matchConditions: [{ name: 'prefixed', expression: "object.metadata.name.startsWith('cel-')" }] } },
  ])
  let before = hook.received.length
  let r = await s.request('POST', cms('plain'), cm('plain-one'))
  t.equal(r.status, 201, r.text)
  t.equal(calls('/ns', before).length, 0, 'namespace without the label: not called')
  t.equal(calls('/obj', before).length, 0, 'object without the label: not called')
  t.equal(calls('/rule', before).length, 0, 'a rule for other resources and operations: not called')
  t.equal(calls('/cel', before).length, 0, 'a false match condition: not called')
  before = hook.received.length
  r = await s.request('POST', cms('labelled'), cm('cel-one', {}, { watched: '' }))
  t.equal(r.status, 201, r.text)
  t.equal(calls('/ns', before).length, 1, 'namespace with the label: called')
  t.equal(calls('/obj', before).length, 1, 'object with the label: called')
  t.equal(calls('/rule', before).length, 0)
  t.equal(calls('/cel', before).length, 1, 'a true match condition: called')
  // The old object's labels count too: an update that removes the label is still sent.
  before = hook.received.length
  r = await s.request('PUT', `${cms('labelled')}/cel-one`, cm('cel-one', { x: 'y' }))
  t.equal(r.status, 200, r.text)
  t.equal(calls('/obj', before).length, 1, 'the old object had the label')

  // A match condition that fails to evaluate refuses the request (failurePolicy Fail), with upstream's Forbidden.
  await configure(t, 'cel-error', [{ path: '/cel', name: 'cel-error.hooks.example.com', extra: { matchConditions: [{ name: 'broken', expression: 'object.data.missing == "x"' }] } }])
  r = await s.request('POST', cms('plain'), cm('cel-broken', { present: 'y' }))
  t.equal(r.status, 403, r.text)
  t.match(r.json.message, /^configmaps "cel-broken" is forbidden: expression 'object\.data\.missing == "x"' resulted in error: no such key: missing/)
})

t.test('a namespace is matched by its own labels; a subresource rule (pods/status) matches only that subresource', async (t) => {
  routes.set('/namespaces', allow)
  routes.set('/status', (r) => reply(r, { allowed: true, patchType: 'JSONPatch', patch: patchOf([{ op: 'add', path: '/status/message', value: 'seen by the webhook' }]) }))
  await configure(t, 'namespaces', [{ path: '/namespaces', rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['namespaces'] }], extra: { namespaceSelector: { matchLabels: { hooks: 'on' } } } }])
  await configure(t, 'pod-status', [{ path: '/status', rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['pods/status'] }] }], true)
  let before = hook.received.length
  let r = await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns-unlabelled' } })
  t.equal(r.status, 201, r.text)
  t.equal(calls('/namespaces', before).length, 0)
  r = await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns-labelled', labels: { hooks: 'on' } } })
  t.equal(r.status, 201, r.text)
  t.equal(calls('/namespaces', before).length, 1, 'the labels of the namespace being created')
  t.teardown(async () => { await s.request('DELETE', '/api/v1/namespaces/ns-unlabelled'); await s.request('DELETE', '/api/v1/namespaces/ns-labelled') })

  before = hook.received.length
  r = await s.request('POST', '/api/v1/namespaces/labelled/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }] } })
  t.equal(r.status, 201, r.text)
  t.equal(calls('/status', before).length, 0, 'the pod itself is not pods/status')
  const pod = r.json
  pod.status = { ...pod.status, phase: 'Running' }
  r = await s.request('PUT', '/api/v1/namespaces/labelled/pods/p/status', pod)
  t.equal(r.status, 200, r.text)
  const [got] = calls('/status', before)
  t.equal(got?.body.request.subResource, 'status')
  t.equal(got?.body.request.requestSubResource, 'status')
  t.same(got?.body.request.resource, { group: '', version: 'v1', resource: 'pods' })
  t.equal(got?.body.request.oldObject.metadata.name, 'p')
  t.equal(r.json.status.message, 'seen by the webhook', 'the patch of a status update is stored')
  t.equal(r.json.status.phase, 'Running')
  r = await s.request('GET', '/api/v1/namespaces/labelled/pods/p')
  t.equal(r.json.status.message, 'seen by the webhook')
})

t.test('deployments/scale: webhooks see the Scale; a mutating webhook\'s replicas are written', async (t) => {
  routes.set('/scale', (r) => reply(r, { allowed: true, patchType: 'JSONPatch', patch: patchOf([{ op: 'replace', path: '/spec/replicas', value: Math.min(r.body.request.object.spec.replicas, 3) }]) }))
  routes.set('/scale-check', allow)
  const rules = [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['deployments/scale'] }]
  await configure(t, 'scale', [{ path: '/scale', rules }], true)
  await configure(t, 'scale-check', [{ path: '/scale-check', rules }])
  const labels = { app: 'scaled' }
  let r = await s.request('POST', '/apis/apps/v1/namespaces/plain/deployments', {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'scaled' },
    spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
  })
  t.equal(r.status, 201, r.text)
  const before = hook.received.length
  r = await s.request('PUT', '/apis/apps/v1/namespaces/plain/deployments/scaled/scale', { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'scaled', namespace: 'plain' }, spec: { replicas: 5 } })
  t.equal(r.status, 200, r.text)
  t.equal(r.json.spec.replicas, 3, 'the webhook\'s replicas')
  const [got] = calls('/scale', before)
  t.same(got?.body.request.kind, { group: 'autoscaling', version: 'v1', kind: 'Scale' })
  t.same(got?.body.request.resource, { group: 'apps', version: 'v1', resource: 'deployments' })
  t.equal(got?.body.request.subResource, 'scale')
  t.equal(got?.body.request.object.kind, 'Scale')
  t.equal(got?.body.request.object.spec.replicas, 5)
  t.equal(got?.body.request.oldObject.spec.replicas, 1)
  t.equal(calls('/scale-check', before)[0]?.body.request.object.spec.replicas, 3, 'validating webhooks see the mutated Scale')
  r = await s.request('GET', '/apis/apps/v1/namespaces/plain/deployments/scaled')
  t.equal(r.json.spec.replicas, 3, 'stored')
})

t.test('dry run: webhooks are told, nothing is stored', async (t) => {
  routes.set('/dry', allow)
  routes.set('/dry-mutate', (r) => reply(r, { allowed: true, patchType: 'JSONPatch', patch: patchOf([{ op: 'add', path: '/data/dry', value: 'seen' }]) }))
  await configure(t, 'dry', [{ path: '/dry' }, { path: '/dry-on', name: 'dry-on.hooks.example.com', extra: { sideEffects: 'NoneOnDryRun' } }])
  routes.set('/dry-on', allow)
  await configure(t, 'dry-mutate', [{ path: '/dry-mutate' }], true)
  const before = hook.received.length
  let r = await s.request('POST', `${cms('plain')}?dryRun=All`, cm('dry'))
  t.equal(r.status, 201, r.text)
  t.equal(r.json.data.dry, 'seen', 'the mutation is in the answer')
  t.equal(calls('/dry', before)[0]?.body.request.dryRun, true)
  t.same(calls('/dry', before)[0]?.body.request.options, { kind: 'CreateOptions', apiVersion: 'meta.orch.io/v1', dryRun: ['All'] })
  t.equal(calls('/dry-on', before)[0]?.body.request.dryRun, true, 'NoneOnDryRun is called with dryRun')
  t.equal(calls('/dry-mutate', before)[0]?.body.request.dryRun, true)
  r = await s.request('GET', `${cms('plain')}/dry`)
  t.equal(r.status, 404, 'not stored')
  // sideEffects other than None and NoneOnDryRun cannot be configured in v1 (so no webhook can refuse a dry run).
  r = await s.request('POST', VWC, { apiVersion: `${G}/v1`, kind: 'ValidatingWebhookConfiguration', metadata: { name: 'some' }, webhooks: [webhook({ path: '/dry', extra: { sideEffects: 'Some' } })] })
  t.equal(r.status, 422, r.text)
})

t.test('DELETE is sent with the old object; a denial keeps the object', async (t) => {
  let r = await s.request('POST', cms('plain'), cm('keep-me', { k: 'v' }))
  t.equal(r.status, 201, r.text)
  routes.set('/on-delete', (rv) => reply(rv, { allowed: false, status: { code: 422, reason: 'Invalid', message: 'this one stays' } }))
  await configure(t, 'on-delete', [{ path: '/on-delete', rules: [CM_RULE(['DELETE'])] }])
  const before = hook.received.length
  r = await s.request('DELETE', `${cms('plain')}/keep-me`)
  t.equal(r.status, 422, r.text)
  t.equal(r.json.message, 'admission webhook "on-delete.hooks.example.com" denied the request: this one stays')
  const [got] = calls('/on-delete', before)
  t.equal(got.body.request.operation, 'DELETE')
  t.equal(got.body.request.name, 'keep-me')
  t.equal(got.body.request.object, null)
  t.same(got.body.request.oldObject.data, { k: 'v' })
  t.equal(got.body.request.options.kind, 'DeleteOptions')
  r = await s.request('GET', `${cms('plain')}/keep-me`)
  t.equal(r.status, 200, 'still there')
  // A dry run named in the DeleteOptions of the body (as kubectl sends it) is a dry run for the webhooks too.
  const dryFrom = hook.received.length
  r = await s.request('DELETE', `${cms('plain')}/keep-me`, { kind: 'DeleteOptions', apiVersion: 'v1', dryRun: ['All'], propagationPolicy: 'Background' })
  t.equal(r.status, 422, r.text)
  const [dry] = calls('/on-delete', dryFrom)
  t.equal(dry?.body.request.dryRun, true)
  t.same(dry?.body.request.options, { kind: 'DeleteOptions', apiVersion: 'meta.orch.io/v1', propagationPolicy: 'Background', dryRun: ['All'] })
  // A mutating webhook may look at a delete but not patch it.
  routes.set('/on-delete', allow)
  routes.set('/mutate-delete', (rv) => reply(rv, { allowed: true, patchType: 'JSONPatch', patch: patchOf([{ op: 'add', path: '/data/x', value: 'y' }]) }))
  await configure(t, 'mutate-delete', [{ path: '/mutate-delete', rules: [CM_RULE(['DELETE'])] }], true)
  r = await s.request('DELETE', `${cms('plain')}/keep-me`)
  t.equal(r.status, 500, r.text)
  t.equal(r.json.message, 'Internal error occurred: admission webhook "mutate-delete.hooks.example.com" attempted to modify the object, which is not supported for this operation')
  routes.set('/mutate-delete', allow)
  r = await s.request('DELETE', `${cms('plain')}/keep-me`)
  t.equal(r.status, 200, r.text)
})

t.test('a service reference is resolved through the Service\'s EndpointSlices; the server name is <service>.<namespace>.svc', async (t) => {
  routes.set('/svc', (r) => reply(r, { allowed: r.body.request.object.metadata.name !== 'via-service-denied', status: { message: 'by the service', code: 409 } }))
  const svcConfig = { service: { namespace: 'webhook-ns', name: 'hooks', port: 443, path: '/svc' }, caBundle: caBundle() }
  await configure(t, 'by-service', [{ path: '/svc', clientConfig: svcConfig, extra: { namespaceSelector: { matchLabels: { hooks: 'on' } } } }])
  // No Service yet: the call fails as upstream's resolver says.
  let r = await s.request('POST', cms('labelled'), cm('via-service'))
  t.equal(r.status, 500, r.text)
  t.equal(r.json.message, 'Internal error occurred: failed calling webhook "svc.hooks.example.com": failed to call webhook: Post "https://hooks.webhook-ns.svc:443/svc?timeout=10s": services "hooks" not found')
  r = await s.request('POST', '/api/v1/namespaces/webhook-ns/services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'hooks' }, spec: { ports: [{ name: 'https', port: 443, targetPort: hook.port }] } })
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', cms('labelled'), cm('via-service'))
  t.equal(r.status, 500, r.text)
  t.match(r.json.message, /no endpoints available for service "hooks"$/)
  // Endpoints when the Service has no EndpointSlice. Neither may name a loopback address (upstream's validation), so
  // this needs an address of the host's own.
  const external = Object.values(networkInterfaces()).flat().find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address
  if (external === undefined) { t.skip('no non-loopback IPv4 address on this host for Endpoints', async () => {}); return }
  const endpoints = (port: number) => ({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'hooks' }, subsets: [{ addresses: [{ ip: external }], ports: [{ name: 'https', port }] }] })
  r = await s.request('POST', '/api/v1/namespaces/webhook-ns/endpoints', endpoints(hook.port))
  t.equal(r.status, 201, r.text)
  let before = hook.received.length
  r = await s.request('POST', cms('labelled'), cm('via-service'))
  t.equal(r.status, 201, r.text)
  t.equal(calls('/svc', before).length, 1)
  r = await s.request('POST', cms('labelled'), cm('via-service-denied'))
  t.equal(r.status, 409, r.text)
  t.equal(r.json.message, 'admission webhook "svc.hooks.example.com" denied the request: by the service')

  // EndpointSlices come first.
  r = await s.request('POST', '/apis/discovery.orch.io/v1/namespaces/webhook-ns/endpointslices', {
    apiVersion: 'discovery.orch.io/v1', kind: 'EndpointSlice', metadata: { name: 'hooks-1', labels: { 'orch.io/service-name': 'hooks' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['10.255.255.1'], conditions: { ready: false } }, { addresses: [external], conditions: { ready: true } }],
    ports: [{ name: 'https', port: hook.port, protocol: 'TCP' }],
  })
  t.equal(r.status, 201, r.text)
  // The Endpoints now name a port where nothing listens: the call goes to the slice's ready endpoint all the same.
  const dead = await freePort()
  r = await s.request('GET', '/api/v1/namespaces/webhook-ns/endpoints/hooks')
  r = await s.request('PUT', '/api/v1/namespaces/webhook-ns/endpoints/hooks', { ...endpoints(dead), metadata: { name: 'hooks', resourceVersion: r.json.metadata.resourceVersion } })
  t.equal(r.status, 200, r.text)
  before = hook.received.length
  for (let i = 0; i < 4; i++) {
    r = await s.request('POST', cms('labelled'), cm(`via-slice-${i}`))
    t.equal(r.status, 201, r.text)
  }
  t.equal(calls('/svc', before).length, 4, 'never the endpoint that is not ready')
})

t.test('webhook configurations are never sent to webhooks; other cluster-scoped writes are', async (t) => {
  routes.set('/deny-all', (r) => reply(r, { allowed: false, status: { code: 403, message: 'nothing labelled passes' } }))
  await configure(t, 'deny-all', [{ path: '/deny-all', rules: [{ apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*/*'] }], extra: { objectSelector: { matchLabels: { deny: 'all' } } } }])
  let r = await s.request('POST', MWC, { apiVersion: `${G}/v1`, kind: 'MutatingWebhookConfiguration', metadata: { name: 'exempt', labels: { deny: 'all' } }, webhooks: [] })
  t.equal(r.status, 201, r.text)
  r = await s.request('DELETE', `${MWC}/exempt`)
  t.equal(r.status, 200, r.text)
  r = await s.request('POST', '/apis/rbac.authorization.orch.io/v1/clusterroles', { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'ClusterRole', metadata: { name: 'denied', labels: { deny: 'all' } }, rules: [] })
  t.equal(r.status, 403, r.text)
  t.equal(r.json.message, 'admission webhook "deny-all.hooks.example.com" denied the request: nothing labelled passes')
})

t.test('a rule in the upstream spelling of a group matches ours (matchPolicy Equivalent), not with Exact', async (t) => {
  routes.set('/equivalent', allow)
  routes.set('/exact', allow)
  const rules = [{ apiGroups: ['rbac.authorization.k8s.io'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['roles'] }]
  await configure(t, 'equivalence', [{ path: '/equivalent', rules }, { path: '/exact', rules, extra: { matchPolicy: 'Exact' } }])
  const before = hook.received.length
  const r = await s.request('POST', '/apis/rbac.authorization.orch.io/v1/namespaces/plain/roles', { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', metadata: { name: 'r' }, rules: [] })
  t.equal(r.status, 201, r.text)
  const [got] = calls('/equivalent', before)
  t.ok(got, 'Equivalent: called')
  t.same(got?.body.request.resource, { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles' })
  t.same(got?.body.request.requestResource, { group: 'rbac.authorization.orch.io', version: 'v1', resource: 'roles' })
  t.equal(calls('/exact', before).length, 0, 'Exact: not called')
})

t.test('a configuration takes effect at once when created, changed and deleted', async (t) => {
  routes.set('/toggle', (r) => reply(r, { allowed: false, status: { code: 403, message: 'toggled' } }))
  let r = await s.request('POST', cms('plain'), cm('toggle-0'))
  t.equal(r.status, 201)
  await configure(t, 'toggle', [{ path: '/toggle', rules: [CM_RULE(['CREATE'])] }])
  r = await s.request('POST', cms('plain'), cm('toggle-1'))
  t.equal(r.status, 403, 'created: in force for the next request')
  r = await s.request('GET', `${VWC}/toggle`)
  const changed = r.json
  changed.webhooks[0].rules = [CM_RULE(['DELETE'])]
  r = await s.request('PUT', `${VWC}/toggle`, changed)
  t.equal(r.status, 200, r.text)
  r = await s.request('POST', cms('plain'), cm('toggle-2'))
  t.equal(r.status, 201, 'changed: creates no longer match')
  r = await s.request('DELETE', `${cms('plain')}/toggle-2`)
  t.equal(r.status, 403, 'changed: deletes do')
  r = await s.request('DELETE', `${VWC}/toggle`)
  t.equal(r.status, 200)
  r = await s.request('DELETE', `${cms('plain')}/toggle-2`)
  t.equal(r.status, 200, 'deleted: nothing is called')
})

t.test('--disable-admission-plugins=MutatingAdmissionWebhook,ValidatingAdmissionWebhook: configurations are stored, never called', async (t) => {
  const off = await startServer({ args: ['--disable-admission-plugins=MutatingAdmissionWebhook,ValidatingAdmissionWebhook'] })
  t.teardown(() => off.stop())
  routes.set('/off', (r) => reply(r, { allowed: false }))
  for (const [path, kind] of [[VWC, 'ValidatingWebhookConfiguration'], [MWC, 'MutatingWebhookConfiguration']]) {
    const r = await off.request('POST', path, { apiVersion: `${G}/v1`, kind, metadata: { name: 'off' }, webhooks: [webhook({ path: '/off' })] })
    t.equal(r.status, 201, r.text)
  }
  const before = hook.received.length
  const r = await off.request('POST', cms('default'), cm('free'))
  t.equal(r.status, 201, r.text)
  t.equal(calls('/off', before).length, 0)
})
