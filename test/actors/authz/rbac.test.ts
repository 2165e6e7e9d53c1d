import t from 'tap'
import {
  RbacIndex, aggregate, checkBindingWrite, checkRoleWrite, compactString, covers, ruleAllows,
  type AuthorizeFn, type BindingObject, type PolicyRule, type RoleObject,
} from '../../../actors/authz/rbac.js'
import type { Attributes } from '../../../actors/authz/messages.js'
import type { Verdict } from '../../../actors/authz/webhook.js'
import { decide } from '../../../actors/authz/worker.js'
import { bootstrapPolicy } from '../../../src/auth/rbac-defaults.js'

const G = 'rbac.authorization.orch.io'

function res(user: string, groups: string[], verb: string, group: string, resource: string, namespace = '', name = '', subresource = ''): Attributes {
  return { user, groups, uid: '', verb, isResourceRequest: true, apiGroup: group, apiVersion: 'v1', namespace, resource, subresource, name, path: '' }
}
function nonres(user: string, groups: string[], verb: string, path: string): Attributes {
  return { user, groups, uid: '', verb, isResourceRequest: false, apiGroup: '', apiVersion: '', namespace: '', resource: '', subresource: '', name: '', path }
}

const role = (ns: string, name: string, rules: PolicyRule[]): RoleObject => ({ kind: 'Role', metadata: { name, namespace: ns }, rules })
const clusterRole = (name: string, rules: PolicyRule[], labels?: Record<string, string>): RoleObject => ({ kind: 'ClusterRole', metadata: { name, labels }, rules })
const rb = (ns: string, name: string, kind: 'Role' | 'ClusterRole', roleName: string, subjects: BindingObject['subjects']): BindingObject =>
  ({ kind: 'RoleBinding', metadata: { name, namespace: ns }, roleRef: { apiGroup: G, kind, name: roleName }, subjects })
const crb = (name: string, roleName: string, subjects: BindingObject['subjects']): BindingObject =>
  ({ kind: 'ClusterRoleBinding', metadata: { name }, roleRef: { apiGroup: G, kind: 'ClusterRole', name: roleName }, subjects })

/** The defaults (aggregated) plus a small cast of users. */
function cluster(): RbacIndex {
  const ix = new RbacIndex()
  const p = bootstrapPolicy()
  const crs = p.clusterRoles
  const changed = new Map(aggregate(crs).map((c) => [c.metadata.name, c]))
  for (const c of crs) ix.upsert(changed.get(c.metadata.name) ?? c)
  for (const o of [...p.clusterRoleBindings, ...p.roles, ...p.roleBindings]) ix.upsert(o)
  ix.upsert(rb('dev', 'alice-admin', 'ClusterRole', 'admin', [{ kind: 'User', apiGroup: G, name: 'alice' }]))
  ix.upsert(rb('dev', 'bob-view', 'ClusterRole', 'view', [{ kind: 'User', apiGroup: G, name: 'bob' }]))
  ix.upsert(crb('carol-edit', 'edit', [{ kind: 'User', apiGroup: G, name: 'carol' }]))
  ix.upsert(role('dev', 'pod-reader', [
    { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] },
    { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] },
    { verbs: ['get', 'update'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['cfg'] },
  ]))
  ix.upsert(rb('dev', 'dave-pods', 'Role', 'pod-reader', [{ kind: 'User', apiGroup: G, name: 'dave' }]))
  ix.upsert(role('dev', 'deployer', [
    { verbs: ['*'], apiGroups: ['apps'], resources: ['deployments'] },
    { verbs: ['get', 'update'], apiGroups: ['*'], resources: ['*/scale'] },
  ]))
  ix.upsert(rb('dev', 'builder-deployer', 'Role', 'deployer', [{ kind: 'ServiceAccount', name: 'builder' }]))
  ix.upsert(clusterRole('log-reader', [{ verbs: ['get'], nonResourceURLs: ['/logs/*', '/metrics'] }]))
  ix.upsert(crb('ops-logs', 'log-reader', [{ kind: 'Group', apiGroup: G, name: 'ops' }]))
  return ix
}

const AUTH = ['system:authenticated']
const SA_BUILDER = 'system:serviceaccount:dev:builder'
const SA_GROUPS = ['system:serviceaccounts', 'system:serviceaccounts:dev', 'system:authenticated']

t.test('authorization matrix', async (t) => {
  const ix = cluster()
  type Row = [string, string[], string, string, string, string, string, string, boolean]
  //           user  groups verb group resource subresource namespace name allowed
  const rows: Row[] = [
    ['alice', AUTH, 'get', '', 'pods', '', 'dev', 'p1', true],
    ['alice', AUTH, 'create', '', 'secrets', '', 'dev', '', true],
    ['alice', AUTH, 'create', G, 'rolebindings', '', 'dev', '', true],
    ['alice', AUTH, 'get', '', 'pods', '', 'prod', 'p1', false],
    ['alice', AUTH, 'create', '', 'resourcequotas', '', 'dev', '', false],
    ['alice', AUTH, 'delete', '', 'namespaces', '', 'dev', 'dev', false],
    ['alice', AUTH, 'list', '', 'nodes', '', '', '', false],
    ['alice', AUTH, 'create', DISC(), 'endpointslices', '', 'dev', '', false],
    ['bob', AUTH, 'list', '', 'pods', '', 'dev', '', true],
    ['bob', AUTH, 'get', '', 'pods', 'log', 'dev', 'p1', true],
    ['bob', AUTH, 'get', '', 'secrets', '', 'dev', 's', false],
    ['bob', AUTH, 'create', '', 'pods', 'exec', 'dev', 'p1', false],
    ['bob', AUTH, 'delete', '', 'pods', '', 'dev', 'p1', false],
    ['bob', AUTH, 'list', G, 'roles', '', 'dev', '', false],
    ['carol', AUTH, 'create', 'apps', 'deployments', '', 'prod', '', true],
    ['carol', AUTH, 'get', '', 'secrets', '', 'kube', 'x', true],
    ['carol', AUTH, 'create', '', 'pods', 'exec', 'anything', 'p', true],
    ['carol', AUTH, 'list', G, 'rolebindings', '', 'prod', '', false],
    ['carol', AUTH, 'list', '', 'pods', '', '', '', true],
    ['dave', AUTH, 'get', '', 'pods', '', 'dev', 'p', true],
    ['dave', AUTH, 'watch', '', 'pods', '', 'dev', '', false],
    ['dave', AUTH, 'get', '', 'pods', 'log', 'dev', 'p', true],
    ['dave', AUTH, 'get', '', 'pods', 'exec', 'dev', 'p', false],
    ['dave', AUTH, 'get', '', 'configmaps', '', 'dev', 'cfg', true],
    ['dave', AUTH, 'get', '', 'configmaps', '', 'dev', 'other', false],
    ['dave', AUTH, 'list', '', 'configmaps', '', 'dev', '', false],
    ['dave', AUTH, 'update', '', 'configmaps', '', 'dev', 'cfg', true],
    ['dave', AUTH, 'get', '', 'pods', '', 'prod', 'p', false],
    [SA_BUILDER, SA_GROUPS, 'patch', 'apps', 'deployments', '', 'dev', 'd', true],
    [SA_BUILDER, SA_GROUPS, 'update', 'apps', 'deployments', 'scale', 'dev', 'd', true],
    [SA_BUILDER, SA_GROUPS, 'update', 'apps', 'statefulsets', 'scale', 'dev', 's', true],
    [SA_BUILDER, SA_GROUPS, 'update', 'apps', 'statefulsets', '', 'dev', 's', false],
    [SA_BUILDER, SA_GROUPS, 'patch', 'apps', 'deployments', '', 'prod', 'd', false],
    ['system:serviceaccount:prod:builder', ['system:serviceaccounts'], 'patch', 'apps', 'deployments', '', 'dev', 'd', false],
    ['mallory', AUTH, 'get', '', 'pods', '', 'dev', 'p', false],
    ['mallory', AUTH, 'create', 'authorization.orch.io', 'selfsubjectaccessreviews', '', '', '', true],
    ['mallory', AUTH, 'create', 'authentication.orch.io', 'selfsubjectreviews', '', '', '', true],
    ['root', ['system:masters'], 'delete', '', 'nodes', '', '', 'n1', true],
    ['system:kube-scheduler', AUTH, 'create', '', 'pods', 'binding', 'dev', 'p', true],
    ['system:kube-scheduler', AUTH, 'update', COORD(), 'leases', '', 'orch-system', 'kube-scheduler', true],
    ['system:kube-scheduler', AUTH, 'update', COORD(), 'leases', '', 'orch-system', 'other', true], // leader-locking Role
    ['system:kube-scheduler', AUTH, 'update', COORD(), 'leases', '', 'dev', 'other', false],
    ['system:kube-scheduler', AUTH, 'update', COORD(), 'leases', '', 'dev', 'kube-scheduler', true],
    ['system:serviceaccount:orch-system:namespace-controller', ['system:serviceaccounts'], 'deletecollection', 'apps', 'deployments', '', 'x', '', true],
  ]
  for (const [user, groups, verb, group, resource, sub, ns, name, want] of rows) {
    const d = ix.authorize(res(user, groups, verb, group, resource, ns, name, sub))
    t.equal(d.decision, want ? 'allow' : 'noopinion', `${user} ${verb} ${group}/${resource}${sub ? '/' + sub : ''} ns=${ns} name=${name}`)
  }
  type NRow = [string, string[], string, string, boolean]
  const nrows: NRow[] = [
    ['system:anonymous', ['system:unauthenticated'], 'get', '/healthz', true],
    ['system:anonymous', ['system:unauthenticated'], 'get', '/version/', true],
    ['system:anonymous', ['system:unauthenticated'], 'get', '/api', false],
    ['mallory', AUTH, 'get', '/api', true],
    ['mallory', AUTH, 'get', '/apis/apps/v1', true],
    ['mallory', AUTH, 'post', '/api', false],
    ['mallory', AUTH, 'get', '/metrics', false],
    ['ops-person', ['ops'], 'get', '/logs/kubelet.log', true],
    ['ops-person', ['ops'], 'get', '/logs', false],
    ['ops-person', ['ops'], 'get', '/metrics', true],
    ['mon', ['system:monitoring'], 'get', '/readyz/etcd', true],
    ['root', ['system:masters'], 'delete', '/anything', true],
  ]
  for (const [user, groups, verb, path, want] of nrows) {
    t.equal(ix.authorize(nonres(user, groups, verb, path)).decision, want ? 'allow' : 'noopinion', `${user} ${verb} ${path}`)
  }
})

function DISC(): string { return 'discovery.orch.io' }
function COORD(): string { return 'coordination.orch.io' }

t.test('rule matching corner cases', async (t) => {
  const a = (verb: string, resource: string, sub = '', name = '', group = ''): Attributes => res('u', [], verb, group, resource, 'ns', name, sub)
  t.ok(ruleAllows(a('get', 'pods', 'log'), { verbs: ['get'], apiGroups: [''], resources: ['*'] }), '* covers subresources')
  t.notOk(ruleAllows(a('get', 'pods', 'log'), { verbs: ['get'], apiGroups: [''], resources: ['pods'] }), 'pods does not cover pods/log')
  t.notOk(ruleAllows(a('get', 'pods'), { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }), 'pods/log does not cover pods')
  t.notOk(ruleAllows(a('get', 'pods', 'log'), { verbs: ['get'], apiGroups: [''], resources: ['pods/*'] }), 'pods/* is not a wildcard')
  t.ok(ruleAllows(a('get', 'pods', '*'), { verbs: ['get'], apiGroups: [''], resources: ['pods/*'] }), 'pods/* matches a subresource named *')
  t.ok(ruleAllows(a('get', 'deployments', 'scale', '', 'apps'), { verbs: ['get'], apiGroups: ['*'], resources: ['*/scale'] }))
  t.notOk(ruleAllows(a('get', 'deployments', 'status', '', 'apps'), { verbs: ['get'], apiGroups: ['*'], resources: ['*/scale'] }))
  t.notOk(ruleAllows(a('get', 'deployments', '', '', 'apps'), { verbs: ['get'], apiGroups: [''], resources: ['deployments'] }), 'group must match')
  t.ok(ruleAllows(a('escalate', 'roles', '', 'r', G), { verbs: ['*'], apiGroups: [G], resources: ['roles'] }))
  const named: PolicyRule = { verbs: ['*'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }
  t.notOk(ruleAllows(a('create', 'configmaps'), named), 'create without a name never matches resourceNames')
  t.notOk(ruleAllows(a('list', 'configmaps'), named))
  t.notOk(ruleAllows(a('deletecollection', 'configmaps'), named))
  t.ok(ruleAllows(a('list', 'configmaps', '', 'a'), named), 'list with metadata.name field selector has a name')
  const u = (path: string, verb = 'get'): Attributes => nonres('u', [], verb, path)
  t.ok(ruleAllows(u('/apis/foo'), { verbs: ['get'], nonResourceURLs: ['/apis/*'] }))
  t.notOk(ruleAllows(u('/apis'), { verbs: ['get'], nonResourceURLs: ['/apis/*'] }))
  t.ok(ruleAllows(u('/x/y'), { verbs: ['*'], nonResourceURLs: ['*'] }))
  t.ok(ruleAllows(u('/healthzfoo'), { verbs: ['get'], nonResourceURLs: ['/healthz*'] }))
  t.notOk(ruleAllows(u('/healthz', 'post'), { verbs: ['get'], nonResourceURLs: ['/healthz'] }))
  t.notOk(ruleAllows(u('/healthz'), { verbs: ['get'], apiGroups: ['*'], resources: ['*'] }), 'resource rules never match paths')
})

t.test('subjects and scoping', async (t) => {
  const ix = new RbacIndex()
  ix.upsert(clusterRole('reader', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]))
  // A RoleBinding to a ClusterRole only grants in its namespace.
  ix.upsert(rb('a', 'r', 'ClusterRole', 'reader', [{ kind: 'ServiceAccount', name: 'sa1', namespace: 'b' }, { kind: 'Group', name: 'g' }]))
  t.equal(ix.authorize(res('system:serviceaccount:b:sa1', [], 'get', '', 'pods', 'a', 'x')).decision, 'allow')
  t.equal(ix.authorize(res('system:serviceaccount:b:sa1', [], 'get', '', 'pods', 'b', 'x')).decision, 'noopinion')
  t.equal(ix.authorize(res('system:serviceaccount:b:sa1', [], 'list', '', 'pods', '', '')).decision, 'noopinion')
  t.equal(ix.authorize(res('someone', ['g'], 'get', '', 'pods', 'a', 'x')).decision, 'allow')
  t.equal(ix.authorize(res('g', [], 'get', '', 'pods', 'a', 'x')).decision, 'noopinion', 'a group subject is not a user')
  // A ClusterRoleBinding's ServiceAccount subject without a namespace never matches.
  ix.upsert(crb('c', 'reader', [{ kind: 'ServiceAccount', name: 'sa2' }]))
  t.equal(ix.authorize(res('system:serviceaccount::sa2', [], 'get', '', 'pods', 'z', 'x')).decision, 'noopinion')
  // Reasons.
  const d = ix.authorize(res('system:serviceaccount:b:sa1', [], 'get', '', 'pods', 'a', 'x'))
  t.equal(d.reason, 'RBAC: allowed by RoleBinding "r/a" of ClusterRole "reader" to ServiceAccount "sa1/b"')
  ix.upsert(crb('everyone', 'reader', [{ kind: 'Group', apiGroup: G, name: 'system:authenticated' }]))
  t.equal(ix.authorize(res('x', ['system:authenticated'], 'get', '', 'pods', 'q', 'p')).reason,
    'RBAC: allowed by ClusterRoleBinding "everyone" of ClusterRole "reader" to Group "system:authenticated"')
  // Missing roles are reported but do not fail others.
  ix.upsert(crb('dangling', 'missing', [{ kind: 'User', name: 'eve' }]))
  ix.upsert(rb('q', 'dangling2', 'Role', 'nope', [{ kind: 'User', name: 'eve' }]))
  const e = ix.authorize(res('eve', [], 'get', '', 'secrets', 'q', 's'))
  t.same(e, { decision: 'noopinion', reason: `RBAC: [clusterrole.${G} "missing" not found, role.${G} "nope" not found]` })
  t.equal(ix.authorize(res('nobody', [], 'get', '', 'secrets', 'q', 's')).reason, '', 'no opinion, no reason')
  // Removal.
  t.ok(ix.remove('ClusterRoleBinding', '', 'everyone'))
  t.equal(ix.authorize(res('x', ['system:authenticated'], 'get', '', 'pods', 'q', 'p')).decision, 'noopinion')
  t.notOk(ix.remove('ClusterRoleBinding', '', 'everyone'))
  // Replacing a binding drops its old subjects from the index.
  ix.upsert(rb('a', 'r', 'ClusterRole', 'reader', [{ kind: 'User', name: 'new' }]))
  t.equal(ix.authorize(res('someone', ['g'], 'get', '', 'pods', 'a', 'x')).decision, 'noopinion')
  t.equal(ix.authorize(res('new', [], 'get', '', 'pods', 'a', 'x')).decision, 'allow')
  const gen = ix.generation
  ix.upsert(clusterRole('reader', [{ verbs: ['list'], apiGroups: [''], resources: ['pods'] }]))
  t.ok(ix.generation > gen)
  t.equal(ix.authorize(res('new', [], 'get', '', 'pods', 'a', 'x')).decision, 'noopinion', 'role edits take effect')
})

t.test('rulesFor', async (t) => {
  const ix = cluster()
  const { rules, errors } = ix.rulesFor('dave', AUTH, 'dev')
  t.same(errors, [])
  t.ok(rules.some((r) => r.resourceNames?.includes('cfg')))
  t.ok(rules.some((r) => r.resources?.includes('selfsubjectreviews')), 'cluster-wide defaults are included')
  t.notOk(ix.rulesFor('dave', AUTH, '').rules.some((r) => r.resourceNames?.includes('cfg')), 'namespace "" means cluster bindings only')
})

t.test('worker chain: system:masters bypass and RBAC in the chain', async (t) => {
  const ix = cluster()
  const chain = [(a: Attributes) => ix.authorize(a)]
  t.equal((decide(chain, res('anyone', ['system:masters'], 'delete', '', 'nodes', '', 'n')) as Verdict).decision, 'allow')
  t.equal((decide(chain, res('bob', AUTH, 'delete', '', 'pods', 'dev', 'p')) as Verdict).decision, 'noopinion')
})

t.test('escalation prevention', async (t) => {
  const ix = cluster()
  const authz: AuthorizeFn = (a) => decide([(x: Attributes) => ix.authorize(x)], a) as Verdict
  const bob = { name: 'bob', groups: AUTH }
  const alice = { name: 'alice', groups: AUTH }

  // bob (view in dev) may create a Role holding only what he has …
  t.equal(checkRoleWrite(ix, authz, bob, role('dev', 'r1', [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }])), undefined)
  // … but not secrets, and the 403 lists the missing rules compacted.
  const e1 = checkRoleWrite(ix, authz, bob, role('dev', 'r2', [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['secrets', 'pods'] }]))
  t.ok(e1)
  t.equal(e1!.code, 403)
  t.equal(e1!.message, 'roles.rbac.authorization.orch.io "r2" is forbidden: user "bob" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}')
  t.same(e1!.details, { name: 'r2', group: G, kind: 'roles' })
  // Not in another namespace.
  t.ok(checkRoleWrite(ix, authz, bob, role('prod', 'r3', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }])))
  // A wildcard is not covered by a list of specifics.
  t.ok(checkRoleWrite(ix, authz, alice, role('dev', 'r4', [{ verbs: ['*'], apiGroups: [''], resources: ['pods'] }])))
  t.ok(checkRoleWrite(ix, authz, alice, role('dev', 'r5', [{ verbs: ['get'], apiGroups: ['*'], resources: ['pods'] }])))
  t.equal(checkRoleWrite(ix, authz, alice, role('dev', 'r6', [{ verbs: ['get'], apiGroups: [''], resources: ['pods', 'secrets', 'pods/log'] }])), undefined)
  // A ClusterRole is checked against cluster-wide rules only: alice's namespace admin does not count.
  const e2 = checkRoleWrite(ix, authz, alice, clusterRole('cr1', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]))
  t.match(e2?.message, /^clusterroles\.rbac\.authorization\.orch\.io "cr1" is forbidden: user "alice"/)
  // Name-restricted rules: holding a named rule does not cover an unrestricted one.
  const dave = { name: 'dave', groups: AUTH }
  t.equal(checkRoleWrite(ix, authz, dave, role('dev', 'r7', [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['cfg'] }])), undefined)
  const e3 = checkRoleWrite(ix, authz, dave, role('dev', 'r8', [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'] }]))
  t.match(e3?.message, /\{APIGroups:\[""\], Resources:\["configmaps"\], Verbs:\["get"\]\}$/)
  const e4 = checkRoleWrite(ix, authz, dave, role('dev', 'r9', [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['cfg', 'x'] }]))
  t.match(e4?.message, /ResourceNames:\["x"\]/)
  // Non-resource rules.
  const ops = { name: 'o', groups: ['ops'] }
  t.equal(checkRoleWrite(ix, authz, ops, clusterRole('cr2', [{ verbs: ['get'], nonResourceURLs: ['/logs/a', '/logs/*'] }])), undefined)
  t.match(checkRoleWrite(ix, authz, ops, clusterRole('cr3', [{ verbs: ['get'], nonResourceURLs: ['/*'] }]))?.message, /NonResourceURLs:\["\/\*"\]/)
  // system:masters always passes.
  t.equal(checkRoleWrite(ix, authz, { name: 'root', groups: ['system:masters'] }, clusterRole('cr4', [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }])), undefined)

  // `escalate` on roles lifts the check.
  ix.upsert(role('dev', 'escalator', [{ verbs: ['escalate'], apiGroups: [G], resources: ['roles'] }]))
  ix.upsert(rb('dev', 'esc', 'Role', 'escalator', [{ kind: 'User', name: 'erin' }]))
  const erin = { name: 'erin', groups: AUTH }
  t.equal(checkRoleWrite(ix, authz, erin, role('dev', 'big', [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }])), undefined)
  t.ok(checkRoleWrite(ix, authz, erin, role('prod', 'big', [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }])), 'escalate is per namespace')

  // aggregationRule needs full authority, even with no rules.
  const carol = { name: 'carol', groups: AUTH }
  const agg: RoleObject = { kind: 'ClusterRole', metadata: { name: 'agg' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { x: 'y' } }] }, rules: [] }
  const e5 = checkRoleWrite(ix, authz, carol, agg)
  t.equal(e5?.message, 'clusterroles.rbac.authorization.orch.io "agg" is forbidden: must have cluster-admin privileges to use the aggregationRule')
  // Updating a role that had one needs it too.
  t.ok(checkRoleWrite(ix, authz, carol, clusterRole('agg', []), agg))
  // Updates only touching GC fields skip the check.
  const old = role('dev', 'r2', [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }])
  const gcOnly = { ...old, metadata: { ...old.metadata, finalizers: ['f'], ownerReferences: [{ name: 'o' }] } }
  t.equal(checkRoleWrite(ix, authz, bob, gcOnly, old), undefined)
  t.ok(checkRoleWrite(ix, authz, bob, { ...gcOnly, metadata: { ...gcOnly.metadata, labels: { a: 'b' } } }, old))

  // Bindings: alice may bind admin (she holds it in dev), not cluster-admin; not at cluster scope.
  t.equal(checkBindingWrite(ix, authz, alice, rb('dev', 'b1', 'ClusterRole', 'admin', [{ kind: 'User', name: 'zed' }])), undefined)
  t.equal(checkBindingWrite(ix, authz, alice, rb('dev', 'b2', 'ClusterRole', 'view', [{ kind: 'User', name: 'zed' }])), undefined)
  const e6 = checkBindingWrite(ix, authz, alice, rb('dev', 'b3', 'ClusterRole', 'cluster-admin', [{ kind: 'User', name: 'zed' }]))
  t.match(e6?.message, /^rolebindings\.rbac\.authorization\.orch\.io "b3" is forbidden: user "alice" .*attempting to grant RBAC permissions not currently held:\n\{APIGroups:\["\*"\], Resources:\["\*"\], Verbs:\["\*"\]\}\n\{NonResourceURLs:\["\*"\], Verbs:\["\*"\]\}$/s)
  t.ok(checkBindingWrite(ix, authz, alice, crb('b4', 'view', [{ kind: 'User', name: 'zed' }])), 'cluster binding needs cluster-wide rules')
  t.ok(checkBindingWrite(ix, authz, bob, rb('dev', 'b5', 'ClusterRole', 'edit', [{ kind: 'User', name: 'bob' }])), 'bob cannot make himself an editor')
  t.equal(checkBindingWrite(ix, authz, bob, rb('dev', 'b6', 'ClusterRole', 'view', [{ kind: 'User', name: 'bob2' }])), undefined)
  t.equal(checkBindingWrite(ix, authz, alice, rb('dev', 'b7', 'Role', 'missing', []))?.message,
    `rolebindings.rbac.authorization.orch.io "b7" is forbidden: role.${G} "missing" not found`)
  // `bind` on the named role lifts the check, in the binding's namespace only.
  ix.upsert(role('dev', 'binder', [{ verbs: ['bind'], apiGroups: [G], resources: ['clusterroles'], resourceNames: ['cluster-admin'] }]))
  ix.upsert(rb('dev', 'binder', 'Role', 'binder', [{ kind: 'User', name: 'bea' }]))
  const bea = { name: 'bea', groups: AUTH }
  t.equal(checkBindingWrite(ix, authz, bea, rb('dev', 'b8', 'ClusterRole', 'cluster-admin', [{ kind: 'User', name: 'bea' }])), undefined)
  t.ok(checkBindingWrite(ix, authz, bea, rb('dev', 'b9', 'ClusterRole', 'admin', [{ kind: 'User', name: 'bea' }])), 'bind is per role name')
  t.ok(checkBindingWrite(ix, authz, bea, rb('prod', 'b10', 'ClusterRole', 'cluster-admin', [{ kind: 'User', name: 'bea' }])))
  t.equal(checkBindingWrite(ix, authz, { name: 'root', groups: ['system:masters'] }, crb('b11', 'cluster-admin', [])), undefined)
})

t.test('covers and compact strings', async (t) => {
  t.same(covers([{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], [{ verbs: ['get'], apiGroups: ['x'], resources: ['y/z'], resourceNames: ['n'] }]).covered, true)
  t.same(covers([{ verbs: ['get'], apiGroups: [''], resources: ['*/status'] }], [{ verbs: ['get'], apiGroups: [''], resources: ['pods/status'] }]).covered, true)
  t.same(covers([{ verbs: ['get'], apiGroups: [''], resources: ['*/status'] }], [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]).covered, false)
  t.same(covers([], []).covered, true)
  t.equal(compactString({ verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['a'] }), '{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["a"], Verbs:["get"]}')
})

t.test('aggregation', async (t) => {
  const p = bootstrapPolicy()
  const changed = aggregate(p.clusterRoles)
  t.same(changed.map((c) => c.metadata.name), ['admin', 'edit', 'view'])
  const by = new Map(changed.map((c) => [c.metadata.name, c]))
  const view = by.get('view')!.rules!
  const edit = by.get('edit')!.rules!
  const admin = by.get('admin')!.rules!
  const src = p.clusterRoles.find((c) => c.metadata.name === 'system:aggregate-to-view')!.rules!
  t.same(view, src, 'view = aggregate-to-view')
  t.ok(covers(edit, view).covered, 'edit ⊇ view')
  t.ok(covers(admin, edit).covered, 'admin ⊇ edit')
  t.notOk(covers(view, edit).covered)
  t.ok(admin.some((r) => r.resources?.includes('rolebindings')))
  t.notOk(edit.some((r) => r.resources?.includes('rolebindings')))
  t.same(edit.filter((r, i) => edit.findIndex((x) => JSON.stringify(x) === JSON.stringify(r)) !== i), [], 'no duplicate rules')
  // inputs untouched
  t.same(p.clusterRoles.find((c) => c.metadata.name === 'admin')!.rules, [])
  // A fixed point: a second run changes nothing.
  const settled = p.clusterRoles.map((c) => by.get(c.metadata.name) ?? c)
  t.same(aggregate(settled), [])
  // A new role labelled aggregate-to-view flows into view, edit and admin.
  const extra = clusterRole('crd-viewer', [{ verbs: ['get'], apiGroups: ['example.com'], resources: ['widgets'] }], { 'rbac.authorization.orch.io/aggregate-to-view': 'true' })
  const again = aggregate([...settled, extra])
  t.same(again.map((c) => c.metadata.name), ['admin', 'edit', 'view'])
  for (const c of again) t.ok(c.rules!.some((r) => r.resources?.includes('widgets')), c.metadata.name)
  // matchExpressions selectors, several selectors, the role itself skipped.
  const a: RoleObject = { kind: 'ClusterRole', metadata: { name: 'a', labels: { tier: 'x' } }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['own'] }],
    aggregationRule: { clusterRoleSelectors: [{ matchExpressions: [{ key: 'tier', operator: 'In', values: ['x', 'y'] }] }, { matchLabels: { extra: 'true' } }] } }
  const b = clusterRole('b', [{ verbs: ['get'], apiGroups: [''], resources: ['b'] }], { tier: 'y' })
  const c = clusterRole('c', [{ verbs: ['get'], apiGroups: [''], resources: ['c'] }, { verbs: ['get'], apiGroups: [''], resources: ['b'] }], { extra: 'true' })
  const d = clusterRole('d', [{ verbs: ['get'], apiGroups: [''], resources: ['d'] }], { tier: 'z' })
  const out = aggregate([d, c, b, a])
  t.same(out.map((x) => x.rules), [[{ verbs: ['get'], apiGroups: [''], resources: ['b'] }, { verbs: ['get'], apiGroups: [''], resources: ['c'] }]], 'user rules of an aggregated role are replaced; order by selector then name; no duplicates')
})
