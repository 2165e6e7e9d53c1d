// Black-box: ValidatingAdmissionPolicy enforcement. Matching (rules, subresources, names, excludes, selectors, scope,
// the binding's narrowing, matchPolicy), match conditions, variables, the request/params/namespaceObject/authorizer
// variables, messages and reasons, params by name and selector, failure policies, Deny/Warn/Audit, dry run, and kubectl.
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type Reply, type TestServer } from '../helpers/server.js'
import { runKubectl } from '../helpers/kubectl.js'

type Obj = Record<string, any>

const work = mkdtempSync(join(tmpdir(), 'orch-vap-'))
const tokenFile = join(work, 'tokens.csv')
writeFileSync(tokenFile, ['alice-token,alice,u-alice,team-a', ''].join('\n'))

let s: TestServer
const G = 'admissionregistration.orch.io'
const VAPS = `/apis/${G}/v1/validatingadmissionpolicies`
const BINDINGS = `/apis/${G}/v1/validatingadmissionpolicybindings`
const cms = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`
const MERGE = { 'content-type': 'application/merge-patch+json' }

t.before(async () => { s = await startServer({ secure: true, args: ['--token-auth-file', tokenFile] }) })
t.teardown(async () => { await s?.stop(); rmSync(work, { recursive: true, force: true }) })

const rule = (resources: string[], operations = ['*'], groups = [''], extra: Obj = {}) => ({ apiGroups: groups, apiVersions: ['*'], operations, resources, ...extra })
const CM_RULES = [rule(['configmaps'])]

/** A policy and its binding, removed again when the test ends. */
async function bind(t: Test, name: string, spec: Obj, bindingSpec: Obj = {}): Promise<void> {
  let r = await s.request('POST', VAPS, { apiVersion: `${G}/v1`, kind: 'ValidatingAdmissionPolicy', metadata: { name }, spec: { matchConstraints: { resourceRules: CM_RULES }, ...spec } })
  t.equal(r.status, 201, r.status === 201 ? `policy ${name}` : r.text)
  r = await s.request('POST', BINDINGS, { apiVersion: `${G}/v1`, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: `${name}-binding` }, spec: { policyName: name, validationActions: ['Deny'], ...bindingSpec } })
  t.equal(r.status, 201, r.status === 201 ? `binding ${name}-binding` : r.text)
  t.teardown(async () => {
    await s.request('DELETE', `${BINDINGS}/${name}-binding`)
    await s.request('DELETE', `${VAPS}/${name}`)
  })
}

const cm = (name: string, data: Obj = {}, labels?: Obj) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...(labels ? { labels } : {}) }, data })

/** The whole Status of a refusal: upstream's admission Forbidden with the validation's reason and code. */
function refused(t: Test, r: Reply, o: { code?: number; reason?: string; resource: string; group?: string; name: string; text: string }): void {
  const gr = o.group ? `${o.resource}.${o.group}` : o.resource
  const details: Obj = { name: o.name }
  if (o.group) details.group = o.group
  details.kind = o.resource
  details.causes = [{ message: o.text }]
  t.same(r.json, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: `${gr} "${o.name}" is forbidden: ${o.text}`, reason: o.reason ?? 'Invalid', details, code: o.code ?? 422,
  }, r.text)
  t.equal(r.status, o.code ?? 422)
}

/** The Warning headers of a reply, one per warning. */
function warningsOf(r: Reply): string[] {
  const h = r.headers.warning
  if (h === undefined) return []
  return Array.isArray(h) ? h : h.split(/, (?=299 )/)
}

async function namespace(name: string, labels: Obj = {}): Promise<void> {
  const r = await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } })
  if (r.status !== 201) throw new Error(r.text)
}

t.test('a bound policy refuses a create with upstream status, reason and message; unbound or unknown it refuses nothing', async (t) => {
  const spec = { validations: [{ expression: "!has(object.data) || !('forbidden' in object.data)" }] }
  let r = await s.request('POST', VAPS, { apiVersion: `${G}/v1`, kind: 'ValidatingAdmissionPolicy', metadata: { name: 'lonely' }, spec: { matchConstraints: { resourceRules: CM_RULES }, ...spec } })
  t.equal(r.status, 201, r.text)
  t.teardown(async () => { await s.request('DELETE', `${VAPS}/lonely`) })
  r = await s.request('POST', BINDINGS, { apiVersion: `${G}/v1`, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'orphan' }, spec: { policyName: 'no-such-policy', validationActions: ['Deny'] } })
  t.equal(r.status, 201, r.text)
  t.teardown(async () => { await s.request('DELETE', `${BINDINGS}/orphan`) })
  r = await s.request('POST', cms('default'), cm('free', { forbidden: 'x' }))
  t.equal(r.status, 201, 'a policy without a binding and a binding without its policy refuse nothing')

  await bind(t, 'no-forbidden-key', spec)
  r = await s.request('POST', cms('default'), cm('c1', { forbidden: 'x' }))
  refused(t, r, { resource: 'configmaps', name: 'c1', text: "ValidatingAdmissionPolicy 'no-forbidden-key' with binding 'no-forbidden-key-binding' denied request: failed expression: !has(object.data) || !('forbidden' in object.data)" })
  t.equal((await s.request('GET', `${cms('default')}/c1`)).status, 404, 'not stored')
  r = await s.request('POST', cms('default'), cm('c1', { fine: 'x' }))
  t.equal(r.status, 201, r.text)
  r = await s.request('PATCH', `${cms('default')}/c1`, { data: { forbidden: 'y' } }, MERGE)
  t.equal(r.status, 422, 'an update (patch) is refused too')
  t.match(r.json?.message, /denied request: failed expression/)
  r = await s.request('POST', cms('default'), { ...cm('', { forbidden: 'x' }), metadata: { generateName: 'gen-' } })
  t.equal(r.status, 422)
  t.match(r.json?.message, /^configmaps "gen-[a-z0-9]{5}" is forbidden: /, 'a generated name is the name of the request')

  // The binding goes: the next write is no longer refused (no waiting: the count of policy writes moved).
  t.equal((await s.request('DELETE', `${BINDINGS}/no-forbidden-key-binding`)).status, 200)
  r = await s.request('POST', cms('default'), cm('c2', { forbidden: 'x' }))
  t.equal(r.status, 201, r.text)
})

t.test('message, messageExpression and reason', async (t) => {
  await bind(t, 'messages', {
    validations: [
      { expression: "object.metadata.name != 'm-forbidden'", message: ' names may not be m-forbidden ', reason: 'Forbidden' },
      { expression: "object.metadata.name != 'm-unauthorized'", messageExpression: "'name ' + object.metadata.name + ' is not allowed'", reason: 'Unauthorized' },
      { expression: "object.metadata.name != 'm-large'", reason: 'RequestEntityTooLarge', message: 'too large' },
      // A messageExpression that fails, or gives a multi-line text, falls back to the message.
      { expression: "object.metadata.name != 'm-fallback'", messageExpression: 'string(object.data.missing)', message: 'static text' },
      { expression: "object.metadata.name != 'm-lines'", messageExpression: "'two\\nlines'" },
    ],
  })
  const text = (m: string) => `ValidatingAdmissionPolicy 'messages' with binding 'messages-binding' denied request: ${m}`
  refused(t, await s.request('POST', cms('default'), cm('m-forbidden')), { code: 403, reason: 'Forbidden', resource: 'configmaps', name: 'm-forbidden', text: text('names may not be m-forbidden') })
  refused(t, await s.request('POST', cms('default'), cm('m-unauthorized')), { code: 401, reason: 'Unauthorized', resource: 'configmaps', name: 'm-unauthorized', text: text('name m-unauthorized is not allowed') })
  refused(t, await s.request('POST', cms('default'), cm('m-large')), { code: 413, reason: 'RequestEntityTooLarge', resource: 'configmaps', name: 'm-large', text: text('too large') })
  refused(t, await s.request('POST', cms('default'), cm('m-fallback')), { resource: 'configmaps', name: 'm-fallback', text: text('static text') })
  refused(t, await s.request('POST', cms('default'), cm('m-lines')), { resource: 'configmaps', name: 'm-lines', text: text("failed expression: object.metadata.name != 'm-lines'") })
})

t.test('the first refusal decides: validations in order, policies by name', async (t) => {
  await bind(t, 'order-b', { validations: [{ expression: 'false', message: 'b says no', reason: 'Forbidden' }] })
  await bind(t, 'order-a', { validations: [{ expression: 'true' }, { expression: 'false', message: 'a says no' }, { expression: 'false', message: 'a again' }] })
  const r = await s.request('POST', cms('default'), cm('ordered'))
  t.equal(r.status, 422)
  t.equal(r.json?.message, `configmaps "ordered" is forbidden: ValidatingAdmissionPolicy 'order-a' with binding 'order-a-binding' denied request: a says no`)
})

t.test('matching: operations, subresources, resource names, excludes, scope', async (t) => {
  await namespace('match-ns')
  await bind(t, 'updates-only', { matchConstraints: { resourceRules: [rule(['configmaps'], ['UPDATE'])] }, validations: [{ expression: 'false', message: 'no updates' }] })
  let r = await s.request('POST', cms('match-ns'), cm('u1'))
  t.equal(r.status, 201, 'a create does not match an UPDATE rule')
  r = await s.request('PATCH', `${cms('match-ns')}/u1`, { data: { a: 'b' } }, MERGE)
  t.equal(r.status, 422, r.text)
  t.equal((await s.request('DELETE', `${cms('match-ns')}/u1`)).status, 200, 'nor a delete')
  await s.request('DELETE', `${BINDINGS}/updates-only-binding`)

  await bind(t, 'named', {
    matchConstraints: {
      resourceRules: [rule(['configmaps'], ['CREATE'], [''], { resourceNames: ['guarded'] })],
      excludeResourceRules: [rule(['configmaps'], ['*'], [''], { resourceNames: ['guarded'], scope: 'Cluster' })],
    },
    validations: [{ expression: 'false', message: 'guarded name' }],
  })
  t.equal((await s.request('POST', cms('match-ns'), cm('other'))).status, 201, 'another name does not match')
  r = await s.request('POST', cms('match-ns'), cm('guarded'))
  t.equal(r.status, 422, 'the named one does (the exclude rule is for cluster scope only)')
  await s.request('DELETE', `${BINDINGS}/named-binding`)

  await bind(t, 'excluded', {
    matchConstraints: { resourceRules: [rule(['configmaps'])], excludeResourceRules: [rule(['configmaps'], ['*'], [''], { resourceNames: ['skip-me'] })] },
    validations: [{ expression: 'false', message: 'not excluded' }],
  })
  t.equal((await s.request('POST', cms('match-ns'), cm('skip-me'))).status, 201, 'an excluded name is not matched')
  t.equal((await s.request('POST', cms('match-ns'), cm('caught'))).status, 422)
  await s.request('DELETE', `${BINDINGS}/excluded-binding`)

  await bind(t, 'cluster-scope', { matchConstraints: { resourceRules: [rule(['*'], ['CREATE'], ['', 'rbac.authorization.orch.io'], { scope: 'Cluster' })] }, validations: [{ expression: "!object.metadata.name.startsWith('scoped-')", message: 'cluster scope' }] })
  t.equal((await s.request('POST', cms('match-ns'), cm('scoped-cm'))).status, 201, 'a namespaced object is not in cluster scope')
  r = await s.request('POST', '/apis/rbac.authorization.orch.io/v1/clusterroles', { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'ClusterRole', metadata: { name: 'scoped-role' } })
  refused(t, r, { resource: 'clusterroles', group: 'rbac.authorization.orch.io', name: 'scoped-role', text: "ValidatingAdmissionPolicy 'cluster-scope' with binding 'cluster-scope-binding' denied request: cluster scope" })
  r = await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'scoped-ns' } })
  t.equal(r.status, 422, 'a namespace is cluster-scoped')
})

t.test('subresources: a rule for pods does not match pods/status, one for pods/status or */* does', async (t) => {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'sub-pod' }, spec: { containers: [{ name: 'c', image: 'i' }] } }
  let r = await s.request('POST', '/api/v1/namespaces/default/pods', pod)
  t.equal(r.status, 201, r.text)
  const statusUpdate = () => s.request('PATCH', '/api/v1/namespaces/default/pods/sub-pod/status', { status: { message: `m${Date.now()}` } }, MERGE)
  await bind(t, 'pods-main', { matchConstraints: { resourceRules: [rule(['pods'], ['UPDATE'])] }, validations: [{ expression: 'false', message: 'main resource only' }] })
  r = await statusUpdate()
  t.equal(r.status, 200, 'pods does not cover pods/status')
  await s.request('DELETE', `${BINDINGS}/pods-main-binding`)
  await bind(t, 'pods-status', {
    matchConstraints: { resourceRules: [rule(['pods/status'], ['UPDATE'])] },
    validations: [{ expression: "request.subResource == 'status' && request.requestSubResource == 'status' && request.resource.resource == 'pods' && request.kind.kind == 'Pod' && object.status.message.startsWith('ok')", messageExpression: "'status refused: ' + object.status.message.substring(0, 1)" }],
  })
  r = await statusUpdate()
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.message, `pods "sub-pod" is forbidden: ValidatingAdmissionPolicy 'pods-status' with binding 'pods-status-binding' denied request: status refused: m`)
  r = await s.request('PATCH', '/api/v1/namespaces/default/pods/sub-pod/status', { status: { message: 'ok then' } }, MERGE)
  t.equal(r.status, 200, r.text)
  r = await s.request('PATCH', '/api/v1/namespaces/default/pods/sub-pod', { metadata: { labels: { a: 'b' } } }, MERGE)
  t.equal(r.status, 200, 'pods/status does not cover pods')
  await s.request('DELETE', `${BINDINGS}/pods-status-binding`)
  await bind(t, 'all-subresources', { matchConstraints: { resourceRules: [rule(['*/*'], ['UPDATE'])] }, validations: [{ expression: "!has(request.subResource) || request.subResource != 'status'", message: 'no status writes' }] })
  t.equal((await statusUpdate()).status, 422, '*/* covers pods/status')
})

t.test('namespaceSelector, objectSelector, and the binding narrowing the policy', async (t) => {
  await namespace('sel-prod', { env: 'prod' })
  await namespace('sel-dev', { env: 'dev' })
  await bind(t, 'prod-only', { validations: [{ expression: "has(object.metadata.labels) && 'owner' in object.metadata.labels", message: 'an owner label is required' }] }, { matchResources: { namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] } } })
  t.equal((await s.request('POST', cms('sel-dev'), cm('x'))).status, 201, 'the binding matches prod namespaces only')
  const r = await s.request('POST', cms('sel-prod'), cm('x'))
  refused(t, r, { resource: 'configmaps', name: 'x', text: "ValidatingAdmissionPolicy 'prod-only' with binding 'prod-only-binding' denied request: an owner label is required" })
  t.equal((await s.request('POST', cms('sel-prod'), cm('y', {}, { owner: 'me' }))).status, 201)
  await s.request('DELETE', `${BINDINGS}/prod-only-binding`)

  await bind(t, 'tagged', { matchConstraints: { resourceRules: CM_RULES, objectSelector: { matchLabels: { checked: 'yes' } } }, validations: [{ expression: "object == null || object.data.size() > 0", message: 'checked ones need data' }] })
  t.equal((await s.request('POST', cms('sel-dev'), cm('plain'))).status, 201, 'unlabelled objects are not selected')
  t.equal((await s.request('POST', cms('sel-dev'), cm('tagged', {}, { checked: 'yes' }))).status, 422)
  t.equal((await s.request('POST', cms('sel-dev'), cm('tagged', { a: '1' }, { checked: 'yes' }))).status, 201)
  // The old object's labels select too: removing the label in an update that empties the data is still checked.
  const u = await s.request('PUT', `${cms('sel-dev')}/tagged`, cm('tagged', {}))
  t.equal(u.status, 422, 'the old object is selected')
})

t.test('matchPolicy: Equivalent (the default) also matches the upstream spelling of a group, Exact does not', async (t) => {
  const role = (name: string) => ({ apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', metadata: { name }, rules: [] })
  await bind(t, 'upstream-group', { matchConstraints: { resourceRules: [rule(['roles'], ['CREATE'], ['rbac.authorization.k8s.io'])] }, validations: [{ expression: "!(request.resource.group == 'rbac.authorization.k8s.io' && request.requestResource.group == 'rbac.authorization.orch.io' && request.kind.group == 'rbac.authorization.k8s.io')", message: 'equivalent' }] })
  let r = await s.request('POST', '/apis/rbac.authorization.orch.io/v1/namespaces/default/roles', role('eq-role'))
  t.equal(r.status, 422, r.text)
  t.match(r.json?.message, /denied request: equivalent$/)
  await s.request('DELETE', `${BINDINGS}/upstream-group-binding`)
  await bind(t, 'upstream-exact', { matchConstraints: { matchPolicy: 'Exact', resourceRules: [rule(['roles'], ['CREATE'], ['rbac.authorization.k8s.io'])] }, validations: [{ expression: 'false' }] })
  r = await s.request('POST', '/apis/rbac.authorization.orch.io/v1/namespaces/default/roles', role('exact-role'))
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles', { ...role('alias-role'), apiVersion: 'rbac.authorization.k8s.io/v1' })
  t.equal(r.status, 422, 'a request through the upstream alias path is of that group')
  t.match(r.json?.message, /^roles\.rbac\.authorization\.orch\.io "alias-role" is forbidden: ValidatingAdmissionPolicy 'upstream-exact' /)
})

t.test('policies never match policies or bindings', async (t) => {
  await bind(t, 'catch-all', { matchConstraints: { resourceRules: [{ apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*'] }] }, validations: [{ expression: "object == null || request.namespace != 'default' || !object.metadata.name.startsWith('ca-')", message: 'caught' }] })
  t.equal((await s.request('POST', cms('default'), cm('ca-x'))).status, 422, 'the catch-all policy is active')
  const r = await s.request('PATCH', `${VAPS}/catch-all`, { spec: { failurePolicy: 'Ignore' } }, MERGE)
  t.equal(r.status, 200, r.text)
  t.equal((await s.request('PATCH', `${BINDINGS}/catch-all-binding`, { spec: { validationActions: ['Warn'] } }, MERGE)).status, 200)
  const w = await s.request('POST', cms('default'), cm('ca-y'))
  t.equal(w.status, 201, 'the binding now only warns')
  t.match(String(w.headers.warning), /Validation failed for ValidatingAdmissionPolicy 'catch-all' with binding 'catch-all-binding': caught/)
})

t.test('matchConditions: a false one skips the policy; an error follows failurePolicy', async (t) => {
  await bind(t, 'conditioned', {
    matchConditions: [
      { name: 'not-exempt', expression: "!has(object.metadata.labels) || !('exempt' in object.metadata.labels)" },
      { name: 'needs-key', expression: "object.data.probe == 'yes'" },
    ],
    validations: [{ expression: 'false', message: 'conditions held' }],
  })
  t.equal((await s.request('POST', cms('default'), cm('mc1', { probe: 'yes' }, { exempt: 'true' }))).status, 201, 'a false condition skips the policy')
  t.equal((await s.request('POST', cms('default'), cm('mc2', { probe: 'no' }))).status, 201, 'the second is false')
  let r = await s.request('POST', cms('default'), cm('mc3', { probe: 'yes' }))
  t.match(r.json?.message, /denied request: conditions held$/, 'all true: evaluated')
  r = await s.request('POST', cms('default'), cm('mc4', { other: 'x' }))
  refused(t, r, { resource: 'configmaps', name: 'mc4', text: "ValidatingAdmissionPolicy 'conditioned' with binding 'conditioned-binding' denied request: expression 'object.data.probe == 'yes'' resulted in error: no such key: probe" })
  t.equal((await s.request('POST', cms('default'), cm('mc5', { other: 'x' }, { exempt: 'y' }))).status, 201, 'a false condition wins over an error')
  t.equal((await s.request('PATCH', `${VAPS}/conditioned`, { spec: { failurePolicy: 'Ignore' } }, MERGE)).status, 200)
  t.equal((await s.request('POST', cms('default'), cm('mc6', { other: 'x' }))).status, 201, 'with Ignore an error skips the policy')
})

t.test('failurePolicy: runtime errors refuse with Fail and are ignored with Ignore; false validations refuse either way', async (t) => {
  await bind(t, 'fragile', { failurePolicy: 'Fail', validations: [{ expression: "object.data.required == 'x'" }] })
  let r = await s.request('POST', cms('default'), cm('f1'))
  refused(t, r, { resource: 'configmaps', name: 'f1', text: "ValidatingAdmissionPolicy 'fragile' with binding 'fragile-binding' denied request: expression 'object.data.required == 'x'' resulted in error: no such key: required" })
  t.equal((await s.request('PATCH', `${VAPS}/fragile`, { spec: { failurePolicy: 'Ignore' } }, MERGE)).status, 200)
  t.equal((await s.request('POST', cms('default'), cm('f1'))).status, 201, 'Ignore: the error lets it through')
  r = await s.request('POST', cms('default'), cm('f2', { required: 'y' }))
  t.equal(r.status, 422, 'a false validation refuses whatever the failure policy')
})

t.test('variables: evaluated lazily, in order, each at most once; their errors are the errors of what uses them', async (t) => {
  await bind(t, 'composed', {
    variables: [
      { name: 'size', expression: 'object.data.size()' },
      { name: 'limit', expression: 'variables.size > 2 ? 2 : 5' },
      { name: 'broken', expression: 'object.data.nothere' },
    ],
    validations: [
      { expression: 'variables.size <= variables.limit', messageExpression: "'too many keys: ' + string(variables.size)" },
      { expression: "!('check' in object.data) || variables.broken == 'x'" },
    ],
  })
  t.equal((await s.request('POST', cms('default'), cm('v1', { a: '1', b: '2' }))).status, 201, 'the unused broken variable is never evaluated')
  let r = await s.request('POST', cms('default'), cm('v2', { a: '1', b: '2', c: '3' }))
  t.match(r.json?.message, /denied request: too many keys: 3$/)
  r = await s.request('POST', cms('default'), cm('v3', { check: '1' }))
  t.match(r.json?.message, /denied request: expression '!\('check' in object\.data\) \|\| variables\.broken == 'x'' resulted in error: no such key: nothere$/)
})

t.test('the request variable, oldObject, and deletes', async (t) => {
  await namespace('req-ns')
  await bind(t, 'requests', {
    matchConstraints: { resourceRules: CM_RULES, namespaceSelector: { matchLabels: { 'orch.io/metadata.name': 'req-ns' } } },
    validations: [
      { expression: "request.operation != 'CREATE' || (oldObject == null && request.name == object.metadata.name && request.namespace == 'req-ns' && request.kind.group == '' && request.kind.version == 'v1' && request.kind.kind == 'ConfigMap' && request.resource.resource == 'configmaps' && !has(request.subResource) && request.userInfo.username == 'orch-admin' && 'system:masters' in request.userInfo.groups && request.dryRun == false && request.options.kind == 'CreateOptions')", message: 'create' },
      { expression: "request.operation != 'UPDATE' || (oldObject.data.v == '1' && object.data.v == '2' && request.options.kind == 'UpdateOptions')", message: 'update' },
      { expression: "request.operation != 'DELETE' || (object == null && oldObject.data.v != 'keep' && request.name == oldObject.metadata.name)", message: 'delete' },
    ],
  })
  let r = await s.request('POST', cms('req-ns'), cm('rq', { v: '1' }))
  t.equal(r.status, 201, r.text)
  r = await s.request('PATCH', `${cms('req-ns')}/rq`, { data: { v: '2' } }, MERGE)
  t.equal(r.status, 200, r.text)
  r = await s.request('PATCH', `${cms('req-ns')}/rq`, { data: { v: '3' } }, MERGE)
  t.match(r.json?.message, /denied request: update$/)
  t.equal((await s.request('PATCH', `${cms('req-ns')}/rq`, { data: { v: 'keep' } }, { ...MERGE })).status, 422, 'UPDATE from 2 to keep refused')
  t.equal((await s.request('DELETE', `${cms('req-ns')}/rq`)).status, 200, 'delete allowed: object null, oldObject set')
  r = await s.request('POST', cms('req-ns'), cm('kept', { v: 'keep' }))
  t.equal(r.status, 201)
  r = await s.request('DELETE', `${cms('req-ns')}/kept`)
  refused(t, r, { resource: 'configmaps', name: 'kept', text: "ValidatingAdmissionPolicy 'requests' with binding 'requests-binding' denied request: delete" })
  r = await s.request('DELETE', cms('req-ns'))
  t.equal(r.status, 422, 'a deletecollection runs the policy for each object')
  t.equal(r.json?.message, `configmaps "Unknown" is forbidden: ValidatingAdmissionPolicy 'requests' with binding 'requests-binding' denied request: delete`, 'without a request name upstream says Unknown')
  t.equal((await s.request('GET', `${cms('req-ns')}/kept`)).status, 200, 'still there')
})

t.test('dry run is evaluated too, and says so', async (t) => {
  await bind(t, 'dry', { validations: [{ expression: "object.metadata.name != 'dry-bad'", message: 'bad' }, { expression: "!request.dryRun || object.metadata.name != 'dry-flag'", message: 'seen as dry run' }] })
  let r = await s.request('POST', `${cms('default')}?dryRun=All`, cm('dry-bad'))
  t.equal(r.status, 422, 'a dry run is refused as the write would be')
  r = await s.request('POST', `${cms('default')}?dryRun=All`, cm('dry-flag'))
  t.match(r.json?.message, /seen as dry run$/)
  t.equal((await s.request('POST', cms('default'), cm('dry-flag'))).status, 201, 'the same write without dry run')
})

t.test('namespaceObject: the namespace of the request, null for cluster-scoped objects', async (t) => {
  await namespace('nso', { tier: 'gold' })
  await bind(t, 'ns-object', {
    matchConstraints: { resourceRules: [rule(['configmaps', 'namespaces'], ['CREATE'])] },
    validations: [{ expression: "namespaceObject == null ? object.metadata.name != 'nso-reject' : (namespaceObject.metadata.labels.tier == 'gold' && namespaceObject.metadata.name == request.namespace)", message: 'namespace check' }],
  })
  t.equal((await s.request('POST', cms('nso'), cm('in-gold'))).status, 201)
  t.equal((await s.request('POST', cms('default'), cm('in-default'))).status, 422, 'default has no tier label')
  t.equal((await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'nso-ok' } })).status, 201, 'a namespace gets null')
  const r = await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'nso-reject' } })
  refused(t, r, { resource: 'namespaces', name: 'nso-reject', text: "ValidatingAdmissionPolicy 'ns-object' with binding 'ns-object-binding' denied request: namespace check" })
})

t.test('params: by name, by selector (all must pass), the namespace they are read from, not found', async (t) => {
  await namespace('par-ns')
  const params = (name: string, ns: string, data: Obj, labels: Obj = {}) => s.request('POST', cms(ns), { ...cm(name, data, labels) })
  t.equal((await params('limits', 'par-ns', { max: '2' })).status, 201)
  t.equal((await params('limits', 'default', { max: '1' })).status, 201)
  const spec = {
    paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
    matchConstraints: { resourceRules: [rule(['secrets'], ['CREATE'])] },
    validations: [{ expression: 'size(object.data) <= int(params.data.max)', messageExpression: "'at most ' + params.data.max + ' keys (' + params.metadata.name + ')'" }],
  }
  const secret = (name: string, n: number) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, data: Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'eA=='])) })
  const secrets = (ns: string) => `/api/v1/namespaces/${ns}/secrets`
  await bind(t, 'by-name', spec, { paramRef: { name: 'limits', parameterNotFoundAction: 'Deny' } })
  t.equal((await s.request('POST', secrets('par-ns'), secret('two', 2))).status, 201, 'params from the request namespace')
  let r = await s.request('POST', secrets('default'), secret('two', 2))
  t.match(r.json?.message, /denied request: at most 1 keys \(limits\)$/, 'each namespace its own params')
  await namespace('par-none')
  r = await s.request('POST', secrets('par-none'), secret('one', 1))
  refused(t, r, { resource: 'secrets', name: 'one', text: "ValidatingAdmissionPolicy 'by-name' with binding 'by-name-binding' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction" })
  t.equal((await s.request('PATCH', `${BINDINGS}/by-name-binding`, { spec: { paramRef: { parameterNotFoundAction: 'Allow' } } }, MERGE)).status, 200)
  t.equal((await s.request('POST', secrets('par-none'), secret('one', 1))).status, 201, 'Allow: no params, nothing to evaluate')
  t.equal((await s.request('PATCH', `${BINDINGS}/by-name-binding`, { spec: { paramRef: { namespace: 'par-ns', parameterNotFoundAction: 'Deny' } } }, MERGE)).status, 200)
  t.equal((await s.request('POST', secrets('par-none'), secret('two', 2))).status, 201, 'paramRef.namespace names where they are read')
  t.equal((await s.request('PATCH', `${VAPS}/by-name`, { spec: { failurePolicy: 'Ignore' } }, MERGE)).status, 200)
  t.equal((await s.request('PATCH', `${BINDINGS}/by-name-binding`, { spec: { paramRef: { name: 'nothing-here' } } }, MERGE)).status, 200)
  t.equal((await s.request('POST', secrets('par-none'), secret('three', 3))).status, 201, 'Deny with failurePolicy Ignore lets it through')
  await s.request('DELETE', `${BINDINGS}/by-name-binding`)

  // By selector: every selected param is evaluated and all must pass.
  t.equal((await params('sel-a', 'par-ns', { max: '3' }, { role: 'limit' })).status, 201)
  t.equal((await params('sel-b', 'par-ns', { max: '1' }, { role: 'limit' })).status, 201)
  await bind(t, 'by-selector', spec, { paramRef: { selector: { matchLabels: { role: 'limit' } }, parameterNotFoundAction: 'Deny' } })
  r = await s.request('POST', secrets('par-ns'), secret('sel-two', 2))
  t.match(r.json?.message, /denied request: at most 1 keys \(sel-b\)$/)
  t.equal((await s.request('POST', secrets('par-ns'), secret('sel-one', 1))).status, 201)
  r = await s.request('POST', secrets('par-none'), secret('sel-one', 1))
  t.match(r.json?.message, /failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction$/, 'none selected in that namespace')
})

t.test('params misconfigured: unknown paramKind, namespace on a cluster-scoped kind, namespaced params for a cluster-scoped request', async (t) => {
  await bind(t, 'unknown-kind', { paramKind: { apiVersion: 'rules.example.com/v1', kind: 'ReplicaLimit' }, validations: [{ expression: 'true' }] }, { paramRef: { name: 'x', parameterNotFoundAction: 'Allow' } })
  let r = await s.request('POST', cms('default'), cm('uk'))
  refused(t, r, { resource: 'configmaps', name: 'uk', text: "ValidatingAdmissionPolicy 'unknown-kind' denied request: failed to configure policy: failed to find resource referenced by paramKind: 'rules.example.com/v1, Kind=ReplicaLimit'" })
  t.equal((await s.request('PATCH', `${VAPS}/unknown-kind`, { spec: { failurePolicy: 'Ignore' } }, MERGE)).status, 200)
  t.equal((await s.request('POST', cms('default'), cm('uk'))).status, 201, 'Ignore')
  await s.request('DELETE', `${BINDINGS}/unknown-kind-binding`)

  await bind(t, 'cluster-params', { paramKind: { apiVersion: 'scheduling.orch.io/v1', kind: 'PriorityClass' }, validations: [{ expression: 'params.value > 0' }] }, { paramRef: { name: 'system-node-critical', namespace: 'default', parameterNotFoundAction: 'Deny' } })
  r = await s.request('POST', cms('default'), cm('cp'))
  t.match(r.json?.message, /with binding 'cluster-params-binding' denied request: failed to configure binding: paramRef\.namespace must not be provided for a cluster-scoped `paramKind`$/)
  t.equal((await s.request('PATCH', `${BINDINGS}/cluster-params-binding`, { spec: { paramRef: { namespace: null } } }, MERGE)).status, 200)
  t.equal((await s.request('POST', cms('default'), cm('cp'))).status, 201, 'a cluster-scoped param by name')
  await s.request('DELETE', `${BINDINGS}/cluster-params-binding`)

  await bind(t, 'ns-params', { matchConstraints: { resourceRules: [rule(['namespaces'], ['CREATE'])] }, paramKind: { apiVersion: 'v1', kind: 'ConfigMap' }, validations: [{ expression: 'true' }] }, { paramRef: { name: 'x', parameterNotFoundAction: 'Allow' } })
  r = await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'np-x' } })
  t.match(r.json?.message, /denied request: failed to configure binding: cannot use namespaced paramRef in policy binding that matches cluster-scoped resources$/)
})

t.test('validationActions: Warn warns and admits, Audit admits, Deny with Audit refuses', async (t) => {
  await bind(t, 'warned', { validations: [{ expression: "object.metadata.name != 'w-bad'", message: 'a "quoted" \\ warning' }, { expression: "object.metadata.name != 'w-bad'" }] }, { validationActions: ['Warn'] })
  let r = await s.request('POST', cms('default'), cm('w-bad'))
  t.equal(r.status, 201, 'Warn admits')
  t.same(warningsOf(r), [
    `299 - "Validation failed for ValidatingAdmissionPolicy 'warned' with binding 'warned-binding': a \\"quoted\\" \\\\ warning"`,
    `299 - "Validation failed for ValidatingAdmissionPolicy 'warned' with binding 'warned-binding': failed expression: object.metadata.name != 'w-bad'"`,
  ])
  t.equal((await s.request('DELETE', `${cms('default')}/w-bad`)).status, 200)
  await s.request('DELETE', `${BINDINGS}/warned-binding`)

  await bind(t, 'audited', { validations: [{ expression: "object.metadata.name != 'a-bad'" }] }, { validationActions: ['Audit'] })
  r = await s.request('POST', cms('default'), cm('a-bad'))
  t.equal(r.status, 201, 'Audit admits')
  t.equal(r.headers.warning, undefined, 'and does not warn')
  t.equal((await s.request('DELETE', `${cms('default')}/a-bad`)).status, 200)
  t.equal((await s.request('PATCH', `${BINDINGS}/audited-binding`, { spec: { validationActions: ['Deny', 'Audit'] } }, MERGE)).status, 200)
  t.equal((await s.request('POST', cms('default'), cm('a-bad'))).status, 422, 'Deny with Audit refuses')
  // Warn with a runtime error under Fail: the error is a failed validation, so it only warns.
  t.equal((await s.request('PATCH', `${BINDINGS}/audited-binding`, { spec: { validationActions: ['Warn'] } }, MERGE)).status, 200)
  t.equal((await s.request('PATCH', `${VAPS}/audited`, { spec: { validations: [{ expression: "object.data.nope == 'x'" }] } }, MERGE)).status, 200)
  r = await s.request('POST', cms('default'), cm('a-err'))
  t.equal(r.status, 201, r.text)
  t.match(String(r.headers.warning), /: expression 'object\.data\.nope == 'x'' resulted in error: no such key: nope"$/)
})

t.test('audit annotations: a failing valueExpression refuses under Fail whatever the actions', async (t) => {
  await bind(t, 'annotated', {
    validations: [{ expression: 'true' }],
    auditAnnotations: [{ key: 'name', valueExpression: "string(object.metadata.name.startsWith('aa-err') ? object.data.missing : object.metadata.name)" }],
  }, { validationActions: ['Audit'] })
  t.equal((await s.request('POST', cms('default'), cm('aa-fine'))).status, 201)
  const r = await s.request('POST', cms('default'), cm('aa-err'))
  refused(t, r, { resource: 'configmaps', name: 'aa-err', text: "ValidatingAdmissionPolicy 'annotated' with binding 'annotated-binding' denied request: expression 'string(object.metadata.name.startsWith('aa-err') ? object.data.missing : object.metadata.name)' resulted in error: no such key: missing" })
  t.equal((await s.request('PATCH', `${VAPS}/annotated`, { spec: { failurePolicy: 'Ignore' } }, MERGE)).status, 200)
  t.equal((await s.request('POST', cms('default'), cm('aa-err'))).status, 201, 'with Ignore the annotation is left out')
})

t.test('the authorizer variable checks as the requesting user', async (t) => {
  let r = await s.request('POST', '/apis/rbac.authorization.orch.io/v1/namespaces/default/roles', { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', metadata: { name: 'cm-writer' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'get'] }] })
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', '/apis/rbac.authorization.orch.io/v1/namespaces/default/rolebindings', { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'RoleBinding', metadata: { name: 'alice-cm' }, roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'Role', name: 'cm-writer' }, subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.orch.io' }] })
  t.equal(r.status, 201, r.text)
  await bind(t, 'authz', {
    validations: [
      { expression: "!object.metadata.name.startsWith('az-') || authorizer.group('').resource('secrets').namespace('default').check('list').allowed()", message: 'secret listers only', reason: 'Forbidden' },
      { expression: "authorizer.requestResource.check('get').allowed() && authorizer.requestResource.check('delete').reason() == authorizer.requestResource.check('delete').reason()", message: 'request resource' },
      { expression: "!object.metadata.name.startsWith('az-sa') || !authorizer.serviceAccount('default', 'default').group('').resource('configmaps').check('create').allowed()", message: 'service account' },
    ],
  })
  t.equal((await s.request('POST', cms('default'), cm('az-admin'))).status, 201, 'the admin may list secrets')
  r = await s.requestAs('alice-token', 'POST', cms('default'), cm('az-alice'))
  refused(t, r, { code: 403, reason: 'Forbidden', resource: 'configmaps', name: 'az-alice', text: "ValidatingAdmissionPolicy 'authz' with binding 'authz-binding' denied request: secret listers only" })
  t.equal((await s.requestAs('alice-token', 'POST', cms('default'), cm('alice-ok'))).status, 201, 'alice may get configmaps (requestResource)')
  t.equal((await s.request('POST', cms('default'), cm('az-sa'))).status, 201, 'the default service account may not create configmaps')
})

t.test('a policy edited takes effect on the next write; its programs are compiled anew', async (t) => {
  await bind(t, 'edited', { validations: [{ expression: "object.metadata.name != 'ed-1'" }] })
  t.equal((await s.request('POST', cms('default'), cm('ed-1'))).status, 422)
  t.equal((await s.request('PATCH', `${VAPS}/edited`, { spec: { validations: [{ expression: "object.metadata.name != 'ed-2'" }] } }, MERGE)).status, 200)
  t.equal((await s.request('POST', cms('default'), cm('ed-1'))).status, 201)
  t.equal((await s.request('POST', cms('default'), cm('ed-2'))).status, 422)
})

t.test('deployments: numbers are ints; the scale sub-resource is admitted with Scale objects', async (t) => {
  const deploy = (name: string, replicas: number) => ({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
  })
  await bind(t, 'replica-limit', {
    matchConstraints: { resourceRules: [rule(['deployments', 'deployments/scale'], ['CREATE', 'UPDATE'], ['apps'])] },
    validations: [
      { expression: 'object.spec.replicas <= 5', messageExpression: "'replicas ' + string(object.spec.replicas) + ' (' + request.kind.kind + ')'" },
      { expression: "!has(request.subResource) || (request.subResource == 'scale' && request.kind.group == 'autoscaling' && request.kind.version == 'v1' && request.resource.group == 'apps' && oldObject.spec.replicas + 1 >= object.spec.replicas)", message: 'one step at a time' },
    ],
  })
  let r = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', deploy('big', 10))
  refused(t, r, { resource: 'deployments', group: 'apps', name: 'big', text: "ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-binding' denied request: replicas 10 (Deployment)" })
  t.equal((await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', deploy('small', 1))).status, 201)
  const scale = '/apis/apps/v1/namespaces/default/deployments/small/scale'
  t.equal((await s.request('PATCH', scale, { spec: { replicas: 2 } }, MERGE)).status, 200, 'one step up')
  r = await s.request('PATCH', scale, { spec: { replicas: 4 } }, MERGE)
  t.match(r.json?.message, /^deployments\.apps "small" is forbidden: .* denied request: one step at a time$/)
  r = await s.request('PUT', scale, { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'small', namespace: 'default' }, spec: { replicas: 9 } })
  t.match(r.json?.message, /denied request: replicas 9 \(Scale\)$/)
  t.equal((await s.request('GET', '/apis/apps/v1/namespaces/default/deployments/small')).json?.spec?.replicas, 2, 'unchanged')
})

t.test('connect (pods/exec with its options) and pods/binding (the Binding) are admitted too', async (t) => {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'conn-pod' }, spec: { containers: [{ name: 'c', image: 'i' }] } }
  t.equal((await s.request('POST', '/api/v1/namespaces/default/pods', pod)).status, 201)
  await bind(t, 'no-rm', {
    matchConstraints: { resourceRules: [rule(['pods/exec', 'pods/binding'], ['CONNECT', 'CREATE'])] },
    validations: [
      { expression: "request.operation != 'CONNECT' || (request.kind.kind == 'PodExecOptions' && oldObject == null && object.command[0] != 'rm')", message: 'no rm' },
      { expression: "request.operation != 'CREATE' || (request.kind.kind == 'Binding' && object.target.name != 'bad-node')", message: 'not that node' },
    ],
  })
  let r = await s.request('POST', '/api/v1/namespaces/default/pods/conn-pod/exec?command=rm&command=-rf&stdout=true')
  refused(t, r, { resource: 'pods', name: 'conn-pod', text: "ValidatingAdmissionPolicy 'no-rm' with binding 'no-rm-binding' denied request: no rm" })
  r = await s.request('POST', '/api/v1/namespaces/default/pods/conn-pod/exec?command=ls&stdout=true')
  t.equal(r.status, 400, 'admitted; the pod has no node')
  r = await s.request('POST', '/api/v1/namespaces/default/pods/conn-pod/binding', { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'conn-pod' }, target: { kind: 'Node', name: 'bad-node' } })
  refused(t, r, { resource: 'pods', name: 'conn-pod', text: "ValidatingAdmissionPolicy 'no-rm' with binding 'no-rm-binding' denied request: not that node" })
  r = await s.request('POST', '/api/v1/namespaces/default/pods/conn-pod/binding', { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'conn-pod' }, target: { kind: 'Node', name: 'good-node' } })
  t.equal(r.status, 201, r.text)
})

t.test('kubectl prints the refusal and the warning', async (t) => {
  const home = mkdtempSync(join(work, 'home-'))
  await bind(t, 'kubectl-deny', { validations: [{ expression: "object.metadata.name != 'kc-denied'", message: 'kubectl may not create this' }] })
  await bind(t, 'kubectl-warn', { validations: [{ expression: "object.metadata.name != 'kc-warned'", message: 'think again' }] }, { validationActions: ['Warn'] })
  let r = await runKubectl(s.kubeconfig, home, ['create', 'configmap', 'kc-denied', '-n', 'default'])
  t.not(r.code, 0)
  t.equal(r.stderr.trim(), `error: failed to create configmap: configmaps "kc-denied" is forbidden: ValidatingAdmissionPolicy 'kubectl-deny' with binding 'kubectl-deny-binding' denied request: kubectl may not create this`)
  const f = join(work, 'kc.yaml')
  writeFileSync(f, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kc-denied\n  namespace: default\n')
  r = await runKubectl(s.kubeconfig, home, ['create', '-f', f])
  t.not(r.code, 0)
  // kubectl prints an Invalid status from its causes, as it does against upstream.
  t.equal(r.stderr.trim(), `The configmaps "kc-denied" is invalid: : ValidatingAdmissionPolicy 'kubectl-deny' with binding 'kubectl-deny-binding' denied request: kubectl may not create this`)
  r = await runKubectl(s.kubeconfig, home, ['create', 'configmap', 'kc-warned', '-n', 'default'])
  t.equal(r.code, 0, r.stderr)
  t.equal(r.stderr.trim(), `Warning: Validation failed for ValidatingAdmissionPolicy 'kubectl-warn' with binding 'kubectl-warn-binding': think again`)
  t.match(r.stdout, /configmap\/kc-warned created/)
})
