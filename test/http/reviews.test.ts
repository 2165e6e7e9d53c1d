// Black-box access reviews and the other virtual resources: SelfSubjectAccessReview, SubjectAccessReview,
// LocalSubjectAccessReview, SelfSubjectRulesReview, SelfSubjectReview; their discovery, alias paths and bodies.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type TestServer, type Reply } from '../helpers/server.js'
import { encodeObject } from '../../src/machinery/codecs/protobuf.js'

type Obj = Record<string, any>

const work = mkdtempSync(join(tmpdir(), 'orch-reviews-'))
const tokenFile = join(work, 'tokens.csv')
writeFileSync(tokenFile, 'alice-token,alice,u-alice,dev\nbob-token,bob,u-bob\n')

let s: TestServer
t.before(async () => {
  s = await startServer({ args: ['--token-auth-file', tokenFile] })
  await s.request('POST', '/api/v1/namespaces', { metadata: { name: 'ns-a' } })
  const G = 'rbac.authorization.orch.io'
  await s.request('POST', `/apis/${G}/v1/namespaces/ns-a/rolebindings`, { metadata: { name: 'alice-edit' }, roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'edit' }, subjects: [{ kind: 'User', apiGroup: G, name: 'alice' }] })
})
t.teardown(async () => {
  await s?.stop()
  rmSync(work, { recursive: true, force: true })
})

const AZ = '/apis/authorization.orch.io/v1'
const review = (kind: string, spec: Obj, extra: Obj = {}) => ({ apiVersion: 'authorization.orch.io/v1', kind, spec, ...extra })
const ssar = (token: string | null, spec: Obj): Promise<Reply> => s.requestAs(token, 'POST', `${AZ}/selfsubjectaccessreviews`, review('SelfSubjectAccessReview', spec))

t.test('SelfSubjectAccessReview: resource and non-resource questions', async (t) => {
  const yes = await ssar('alice-token', { resourceAttributes: { namespace: 'ns-a', verb: 'create', resource: 'pods' } })
  t.equal(yes.status, 201)
  t.equal(yes.json.kind, 'SelfSubjectAccessReview')
  t.equal(yes.json.apiVersion, 'authorization.orch.io/v1')
  t.equal(yes.json.status.allowed, true)
  t.equal(yes.json.status.reason, 'RBAC: allowed by RoleBinding "alice-edit/ns-a" of ClusterRole "edit" to User "alice"')
  t.same(yes.json.spec, { resourceAttributes: { namespace: 'ns-a', verb: 'create', resource: 'pods' } }, 'the spec is echoed')
  const no = await ssar('alice-token', { resourceAttributes: { namespace: 'default', verb: 'create', resource: 'pods' } })
  t.same(no.json.status, { allowed: false })
  const sub = await ssar('alice-token', { resourceAttributes: { namespace: 'ns-a', verb: 'get', resource: 'pods', subresource: 'log' } })
  t.equal(sub.json.status.allowed, true, 'pods/log via view')
  const named = await ssar('alice-token', { resourceAttributes: { verb: 'get', resource: 'nodes', name: 'n1' } })
  t.equal(named.json.status.allowed, false)
  const nr = await ssar('alice-token', { nonResourceAttributes: { path: '/apis/apps', verb: 'get' } })
  t.same(nr.json.status, { allowed: true, reason: 'RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole "system:discovery" to Group "system:authenticated"' })
  const metrics = await ssar('alice-token', { nonResourceAttributes: { path: '/metrics', verb: 'get' } })
  t.equal(metrics.json.status.allowed, false)
  const admin = await ssar(s.adminToken, { resourceAttributes: { verb: 'delete', resource: 'nodes' } })
  t.equal(admin.json.status.allowed, true, 'system:masters')
})

t.test('SelfSubjectAccessReview validation', async (t) => {
  const none = await ssar('alice-token', {})
  t.equal(none.status, 422)
  t.equal(none.json.message, 'SelfSubjectAccessReview.authorization.orch.io "" is invalid: spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified')
  const both = await ssar('alice-token', { resourceAttributes: { verb: 'get', resource: 'pods' }, nonResourceAttributes: { path: '/x', verb: 'get' } })
  t.equal(both.status, 422)
  t.match(both.json.message, /spec\.nonResourceAttributes: Invalid value: .*: cannot be specified in combination with resourceAttributes$/)
  const named = await s.requestAs('alice-token', 'POST', `${AZ}/selfsubjectaccessreviews`, review('SelfSubjectAccessReview', { resourceAttributes: { verb: 'get', resource: 'pods' } }, { metadata: { name: 'x' } }))
  t.equal(named.status, 422)
  t.match(named.json.message, /metadata: Invalid value: .*: must be empty/)
  const wrong = await s.requestAs('alice-token', 'POST', `${AZ}/selfsubjectaccessreviews`, { apiVersion: 'v1', kind: 'SelfSubjectAccessReview', spec: {} })
  t.equal(wrong.status, 400)
  t.equal((await s.requestAs(null, 'POST', `${AZ}/selfsubjectaccessreviews`, review('SelfSubjectAccessReview', { resourceAttributes: { verb: 'get', resource: 'pods' } }))).status, 403, 'anonymous may not ask')
})

t.test('SubjectAccessReview: about another user (needs permission to ask)', async (t) => {
  const sar = (token: string | null, spec: Obj) => s.requestAs(token, 'POST', `${AZ}/subjectaccessreviews`, review('SubjectAccessReview', spec))
  const r = await sar(s.adminToken, { user: 'alice', groups: ['dev'], resourceAttributes: { namespace: 'ns-a', verb: 'delete', resource: 'secrets' } })
  t.equal(r.status, 201)
  t.equal(r.json.status.allowed, true)
  const b = await sar(s.adminToken, { user: 'bob', resourceAttributes: { namespace: 'ns-a', verb: 'get', resource: 'pods' } })
  t.same(b.json.status, { allowed: false })
  const g = await sar(s.adminToken, { groups: ['system:masters'], resourceAttributes: { verb: 'delete', resource: 'nodes' } })
  t.equal(g.json.status.allowed, true, 'a group alone')
  const sa = await sar(s.adminToken, { user: 'system:serviceaccount:ns-a:x', groups: ['system:serviceaccounts'], nonResourceAttributes: { path: '/.well-known/openid-configuration', verb: 'get' } })
  t.equal(sa.json.status.allowed, true, 'service-account issuer discovery')
  const empty = await sar(s.adminToken, { resourceAttributes: { verb: 'get', resource: 'pods' } })
  t.equal(empty.status, 422)
  t.equal(empty.json.message, 'SubjectAccessReview.authorization.orch.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified')
  const denied = await sar('alice-token', { user: 'bob', resourceAttributes: { verb: 'get', resource: 'pods' } })
  t.equal(denied.status, 403)
  t.equal(denied.json.message, 'subjectaccessreviews.authorization.orch.io is forbidden: User "alice" cannot create resource "subjectaccessreviews" in API group "authorization.orch.io" at the cluster scope')
})

t.test('LocalSubjectAccessReview: namespaced, the attributes must name the same namespace', async (t) => {
  const lsar = (token: string, ns: string, spec: Obj, extra: Obj = {}) => s.requestAs(token, 'POST', `${AZ}/namespaces/${ns}/localsubjectaccessreviews`, review('LocalSubjectAccessReview', spec, extra))
  const r = await lsar(s.adminToken, 'ns-a', { user: 'alice', resourceAttributes: { namespace: 'ns-a', verb: 'list', resource: 'configmaps' } })
  t.equal(r.status, 201)
  t.equal(r.json.status.allowed, true)
  t.equal(r.json.metadata.namespace, 'ns-a')
  const other = await lsar(s.adminToken, 'ns-a', { user: 'alice', resourceAttributes: { namespace: 'default', verb: 'list', resource: 'configmaps' } })
  t.equal(other.status, 422, 'validation compares the spec with metadata.namespace (taken from the path)')
  t.equal(other.json.message, 'LocalSubjectAccessReview.authorization.orch.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "default": must match metadata.namespace')
  const nonRes = await lsar(s.adminToken, 'ns-a', { user: 'alice', nonResourceAttributes: { path: '/x', verb: 'get' } })
  t.equal(nonRes.status, 422)
  t.match(nonRes.json.message, /^LocalSubjectAccessReview\.authorization\.orch\.io "" is invalid: spec\.nonResourceAttributes: Invalid value: .*: disallowed on this kind of request$/, 'that one error only')
  // Each review at its own scope only: no cluster-wide LocalSubjectAccessReview, no namespaced cluster-scoped reviews.
  const wide = await s.request('POST', `${AZ}/localsubjectaccessreviews`, review('LocalSubjectAccessReview', { user: 'alice', resourceAttributes: { verb: 'get', resource: 'pods' } }))
  t.equal(wide.status, 404, 'LocalSubjectAccessReview at cluster scope')
  for (const [g, res, kind] of [[AZ, 'subjectaccessreviews', 'SubjectAccessReview'], [AZ, 'selfsubjectrulesreviews', 'SelfSubjectRulesReview'], ['/apis/authentication.orch.io/v1', 'tokenreviews', 'TokenReview'], ['/apis/authentication.orch.io/v1', 'selfsubjectreviews', 'SelfSubjectReview']]) {
    const r = await s.request('POST', `${g}/namespaces/ns-a/${res}`, { kind, spec: { user: 'alice', token: 'x', namespace: 'ns-a', resourceAttributes: { verb: 'get', resource: 'pods' } } })
    t.equal(r.status, 404, `${res} under a namespace`)
  }
  // admin (via the alice-edit binding? no: edit) - alice holds edit, which lacks localsubjectaccessreviews; admin has it.
  const byAlice = await lsar('alice-token', 'ns-a', { user: 'bob', resourceAttributes: { namespace: 'ns-a', verb: 'get', resource: 'pods' } })
  t.equal(byAlice.status, 403, 'edit may not create local access reviews (admin may)')
})

t.test('SelfSubjectRulesReview: what the user may do in a namespace', async (t) => {
  const rr = (token: string, ns: string) => s.requestAs(token, 'POST', `${AZ}/selfsubjectrulesreviews`, review('SelfSubjectRulesReview', { namespace: ns }))
  const r = await rr('alice-token', 'ns-a')
  t.equal(r.status, 201)
  t.equal(r.json.status.incomplete, false)
  const rules: Obj[] = r.json.status.resourceRules
  t.ok(rules.some((x) => x.resources?.includes('pods') && x.verbs.includes('create')), 'edit rules in ns-a')
  t.ok(rules.some((x) => x.resources?.includes('selfsubjectaccessreviews')), 'system:basic-user rules')
  t.ok(r.json.status.nonResourceRules.some((x: Obj) => x.nonResourceURLs?.includes('/version')), 'public info rules')
  const elsewhere = await rr('alice-token', 'default')
  t.notOk(elsewhere.json.status.resourceRules.some((x: Obj) => x.resources?.includes('pods')), 'nothing of edit in default')
  const admin = await rr(s.adminToken, 'default')
  t.same(admin.json.status.resourceRules, [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }])
  t.same(admin.json.status.nonResourceRules, [{ verbs: ['*'], nonResourceURLs: ['*'] }])
  const noNs = await s.requestAs('alice-token', 'POST', `${AZ}/selfsubjectrulesreviews`, review('SelfSubjectRulesReview', {}))
  t.equal(noNs.status, 400)
  // A binding to a role that does not exist: incomplete, with the evaluation error.
  const G = 'rbac.authorization.orch.io'
  await s.request('POST', `/apis/${G}/v1/namespaces/ns-a/rolebindings`, { metadata: { name: 'dangling' }, roleRef: { apiGroup: G, kind: 'Role', name: 'missing' }, subjects: [{ kind: 'User', apiGroup: G, name: 'alice' }] })
  const inc = await rr('alice-token', 'ns-a')
  t.equal(inc.json.status.incomplete, true)
  t.equal(inc.json.status.evaluationError, `role.${G} "missing" not found`)
})

t.test('SelfSubjectReview through the upstream alias path, JSON and protobuf bodies', async (t) => {
  const alias = await s.requestAs('alice-token', 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' })
  t.equal(alias.status, 201)
  t.equal(alias.json.apiVersion, 'authentication.k8s.io/v1', 'the alias spelling comes back')
  t.same(alias.json.status.userInfo, { username: 'alice', uid: 'u-alice', groups: ['dev', 'system:authenticated'] })
  const pb = encodeObject({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', metadata: {} })
  const r = await s.requestAs('alice-token', 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', pb, { 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/json' })
  t.equal(r.status, 201, 'a protobuf body (what typed clients send)')
  t.equal(r.json.status.userInfo.username, 'alice')
  const sar = await s.requestAs('alice-token', 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { namespace: 'ns-a', verb: 'get', resource: 'pods' } } })
  t.equal(sar.json.apiVersion, 'authorization.k8s.io/v1')
  t.equal(sar.json.status.allowed, true)
  const yaml = await s.requestAs('alice-token', 'POST', '/apis/authentication.orch.io/v1/selfsubjectreviews', 'apiVersion: authentication.orch.io/v1\nkind: SelfSubjectReview\n', { 'content-type': 'application/yaml' })
  t.equal(yaml.status, 201, 'a YAML body')
})

t.test('the virtual resources are create-only, discovered, and store nothing', async (t) => {
  const get = await s.request('GET', `${AZ}/selfsubjectaccessreviews`)
  t.equal(get.status, 405)
  t.equal(get.json.message, 'list is not supported on resources of kind "selfsubjectaccessreviews.authorization.orch.io"')
  const put = await s.request('PUT', '/apis/authentication.orch.io/v1/selfsubjectreviews/x', {})
  t.equal(put.status, 405)
  const apis = await s.request('GET', '/apis')
  const names = apis.json.groups.map((g: Obj) => g.name)
  t.ok(names.includes('authentication.orch.io') && names.includes('authorization.orch.io'), 'both groups are listed')
  const az = await s.request('GET', AZ)
  t.same(az.json.resources.map((r: Obj) => [r.name, r.namespaced, r.kind, r.verbs]), [
    ['localsubjectaccessreviews', true, 'LocalSubjectAccessReview', ['create']],
    ['selfsubjectaccessreviews', false, 'SelfSubjectAccessReview', ['create']],
    ['selfsubjectrulesreviews', false, 'SelfSubjectRulesReview', ['create']],
    ['subjectaccessreviews', false, 'SubjectAccessReview', ['create']],
  ])
  const an = await s.request('GET', '/apis/authentication.orch.io/v1')
  t.same(an.json.resources.map((r: Obj) => r.name), ['selfsubjectreviews', 'tokenreviews'])
  const core = await s.request('GET', '/api/v1')
  const token = core.json.resources.find((r: Obj) => r.name === 'serviceaccounts/token')
  t.same(token, { name: 'serviceaccounts/token', singularName: '', namespaced: true, group: 'authentication.orch.io', version: 'v1', kind: 'TokenRequest', verbs: ['create'] })
})

t.test('unknown fields of a review are dropped with a warning, or refused with fieldValidation=Strict', async (t) => {
  const body = { apiVersion: 'authorization.orch.io/v1', kind: 'SelfSubjectAccessReview', spec: { user: 'someone', groups: ['system:masters'], resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'ns-a' } } }
  const r = await s.requestAs('alice-token', 'POST', `${AZ}/selfsubjectaccessreviews`, body)
  t.equal(r.status, 201, r.text)
  t.equal(r.json.spec.user, undefined, 'spec.user is no field of a SelfSubjectAccessReview: dropped')
  t.equal(r.json.spec.groups, undefined)
  t.same(r.headers['warning'], ['299 - "unknown field \\"spec.user\\""', '299 - "unknown field \\"spec.groups\\""'], 'one warning per dropped field')
  const strict = await s.requestAs('alice-token', 'POST', `${AZ}/selfsubjectaccessreviews?fieldValidation=Strict`, body)
  t.equal(strict.status, 400, strict.text)
  t.equal(strict.json?.message, 'SelfSubjectAccessReview in version "v1" cannot be handled as a SelfSubjectAccessReview: strict decoding error: unknown field "spec.user", unknown field "spec.groups"')
})
