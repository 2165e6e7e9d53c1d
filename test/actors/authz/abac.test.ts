import t from 'tap'
import { abacAuthorize, abacRules, parsePolicyFile, PolicyFileError } from '../../../actors/authz/abac.js'
import type { Attributes } from '../../../actors/authz/messages.js'

const AUTH = ['system:authenticated']

function res(user: string, groups: string[], verb: string, apiGroup: string, resource: string, namespace = ''): Attributes {
  return { user, groups, uid: '', verb, isResourceRequest: true, apiGroup, apiVersion: 'v1', namespace, resource, subresource: '', name: '', path: '' }
}
function path(user: string, groups: string[], verb: string, p: string): Attributes {
  return { user, groups, uid: '', verb, isResourceRequest: false, apiGroup: '', apiVersion: '', namespace: '', resource: '', subresource: '', name: '', path: p }
}
const v1 = (spec: Record<string, unknown>) => JSON.stringify({ apiVersion: 'abac.authorization.orch.io/v1beta1', kind: 'Policy', spec })

t.test('v1beta1: exact fields, * wildcards, readonly, and user or group * as every authenticated user', async (t) => {
  const pl = parsePolicyFile('f', [
    v1({ user: 'bob', namespace: 'team', resource: 'pods', apiGroup: '', readonly: true }),
    v1({ user: '*', namespace: '*', resource: 'configmaps', apiGroup: '' }),
    v1({ group: 'system:unauthenticated', readonly: true, nonResourcePath: '/version' }),
    v1({ user: 'carol', nonResourcePath: '/logs/*' }),
  ].join('\n'))
  const allowed = (a: Attributes) => abacAuthorize(pl, a).decision === 'allow'
  t.ok(allowed(res('bob', AUTH, 'list', '', 'pods', 'team')))
  t.notOk(allowed(res('bob', AUTH, 'create', '', 'pods', 'team')), 'readonly')
  t.notOk(allowed(res('bob', AUTH, 'get', 'apps', 'pods', 'team')), 'another API group')
  t.notOk(allowed(res('bob', AUTH, 'get', '', 'pods', '')), 'a namespace is not every namespace')
  t.ok(allowed(res('anyone', AUTH, 'delete', '', 'configmaps', 'x')))
  t.notOk(allowed(res('system:anonymous', ['system:unauthenticated'], 'get', '', 'configmaps', 'x')), '* is authenticated users only')
  t.ok(allowed(path('system:anonymous', ['system:unauthenticated'], 'get', '/version')))
  t.notOk(allowed(path('system:anonymous', ['system:unauthenticated'], 'get', '/version/x')))
  t.ok(allowed(path('carol', AUTH, 'post', '/logs/a/b')), 'trailing * is a prefix')
  t.ok(allowed(path('carol', AUTH, 'post', '/logs/')))
  t.notOk(allowed(path('carol', AUTH, 'post', '/log')))
  t.notOk(allowed(res('carol', AUTH, 'get', '', 'pods', 'x')), 'a non-resource policy matches no resource request')
  t.same(abacAuthorize(pl, res('x', [], 'get', '', 'pods', 'x')), { decision: 'noopinion', reason: 'No policy matched.' })
})

t.test('the unversioned form, converted as upstream converts it', async (t) => {
  const pl = parsePolicyFile('f', ['{"user":"dave"}', '{"readonly":true}', '{"group":"ops","namespace":"prod"}'].join('\n'))
  t.same(pl[0], { user: 'dave', group: '', readonly: false, apiGroup: '*', resource: '*', namespace: '*', nonResourcePath: '*' })
  t.same(pl[1], { user: '', group: 'system:authenticated', readonly: true, apiGroup: '*', resource: '*', namespace: '*', nonResourcePath: '*' })
  t.same(pl[2], { user: '', group: 'ops', readonly: false, apiGroup: '*', resource: '*', namespace: 'prod', nonResourcePath: '' })
  t.equal(abacAuthorize(pl, res('eve', AUTH, 'get', 'apps', 'deployments', 'x')).decision, 'allow', 'no subject: every authenticated user reads')
  t.equal(abacAuthorize(pl, res('eve', AUTH, 'create', 'apps', 'deployments', 'x')).decision, 'noopinion')
  t.equal(abacAuthorize(pl, res('eve', ['ops', ...AUTH], 'create', 'apps', 'deployments', 'prod')).decision, 'allow')
})

t.test('bad lines name the file, the line and the line\'s text; comments and blank lines are skipped', async (t) => {
  t.same(parsePolicyFile('f', '# only a comment\n\n   \n'), [])
  let caught: unknown
  try { parsePolicyFile('/p.jsonl', `${v1({ user: 'a' })}\n{"user":\n`) } catch (err) { caught = err }
  t.ok(caught instanceof PolicyFileError)
  t.match((caught as Error).message, /^error reading policy file \/p\.jsonl, line 2: \{"user":: /)
  try { parsePolicyFile('/p', '{"apiVersion":"abac.authorization.orch.io/v1beta1","kind":"Other"}') } catch (err) {
    t.equal((err as Error).message, 'error reading policy file /p, line 1: {"apiVersion":"abac.authorization.orch.io/v1beta1","kind":"Other"}: no kind "Other" is registered for version "abac.authorization.orch.io/v1beta1"')
  }
  t.throws(() => parsePolicyFile('/p', '[1]'))
})

t.test('rules: per policy matching the subject and namespace, readonly as get/list/watch', async (t) => {
  const pl = parsePolicyFile('f', [v1({ user: 'bob', namespace: 'team', resource: 'pods', apiGroup: '', readonly: true }), v1({ user: 'bob', namespace: '*', nonResourcePath: '/x' })].join('\n'))
  t.same(abacRules(pl, 'bob', AUTH, 'team'), {
    resourceRules: [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['/x'] }],
  })
  t.same(abacRules(pl, 'bob', AUTH, 'other'), { resourceRules: [], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['/x'] }] })
})
