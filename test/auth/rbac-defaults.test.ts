import t from 'tap'
import {
  bootstrapPolicy, bootstrapObjects, nodeRules,
  AUTOUPDATE_ANNOTATION, BOOTSTRAPPING_LABEL,
} from '../../src/auth/rbac-defaults.js'
import { reconcile, coversMissing } from '../../src/auth/rbac-reconcile.js'
import { covers, type BindingObject, type RoleObject } from '../../actors/authz/rbac.js'
import { nodeRules as authorizerNodeRules } from '../../actors/authz/node.js'

const G = 'rbac.authorization.orch.io'

t.test('default objects', async (t) => {
  const objs = bootstrapObjects()
  const seen = new Set<string>()
  for (const o of objs) {
    t.equal(o.apiVersion, `${G}/v1`)
    t.equal(o.metadata.labels?.[BOOTSTRAPPING_LABEL], 'rbac-defaults', `${o.kind} ${o.metadata.name} label`)
    t.equal(o.metadata.annotations?.[AUTOUPDATE_ANNOTATION], 'true', `${o.kind} ${o.metadata.name} annotation`)
    const k = `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`
    t.notOk(seen.has(k), `unique ${k}`)
    seen.add(k)
    t.notOk(JSON.stringify(o).includes('k8s.io'), `${k} carries no k8s.io`)
    t.notOk(JSON.stringify(o).includes('kubernetes.io'), `${k} carries no kubernetes.io`)
    t.notOk(JSON.stringify(o).includes('kube-system'), `${k} carries no kube-system`)
  }
  const p = bootstrapPolicy()
  const names = new Set(p.clusterRoles.map((c) => c.metadata.name))
  for (const n of ['cluster-admin', 'admin', 'edit', 'view', 'system:basic-user', 'system:discovery', 'system:public-info-viewer', 'system:monitoring',
    'system:node', 'system:node-proxier', 'system:kube-scheduler', 'system:kube-controller-manager', 'system:auth-delegator', 'system:node-bootstrapper',
    'system:controller:namespace-controller', 'system:controller:clusterrole-aggregation-controller', 'system:certificates.orch.io:kube-apiserver-client-approver']) {
    t.ok(names.has(n), n)
  }
  for (const b of p.clusterRoleBindings) t.ok(names.has(b.roleRef.name), `binding ${b.metadata.name} → ${b.roleRef.name}`)
  for (const b of p.roleBindings) {
    t.ok(p.roles.some((r) => r.metadata.name === b.roleRef.name && r.metadata.namespace === b.metadata.namespace), `rolebinding ${b.metadata.namespace}/${b.metadata.name}`)
  }
  const crb = (n: string) => p.clusterRoleBindings.find((b) => b.metadata.name === n)!
  t.same(crb('cluster-admin').subjects, [{ kind: 'Group', apiGroup: G, name: 'system:masters' }])
  t.same(crb('system:public-info-viewer').subjects!.map((s) => s.name), ['system:authenticated', 'system:unauthenticated'])
  t.same(crb('system:discovery').subjects!.map((s) => s.name), ['system:authenticated'], 'discovery needs authentication')
  t.same(crb('system:basic-user').subjects!.map((s) => s.name), ['system:authenticated'])
  t.equal(crb('system:node').subjects, undefined, 'system:node binds nobody')
  t.same(crb('system:controller:job-controller').subjects, [{ kind: 'ServiceAccount', name: 'job-controller', namespace: 'orch-system' }])
  t.same(crb('system:kube-dns').subjects, [{ kind: 'ServiceAccount', name: 'kube-dns', namespace: 'orch-system' }])
  const agg = (n: string) => p.clusterRoles.find((c) => c.metadata.name === n)!
  t.same(agg('admin').aggregationRule, { clusterRoleSelectors: [{ matchLabels: { 'rbac.authorization.orch.io/aggregate-to-admin': 'true' } }] })
  t.equal(agg('edit').metadata.labels?.['rbac.authorization.orch.io/aggregate-to-admin'], 'true')
  t.equal(agg('view').metadata.labels?.['rbac.authorization.orch.io/aggregate-to-edit'], 'true')
  t.same(p.namespaces, ['orch-system', 'orch-public'])
  t.same(new Set([...p.roles, ...p.roleBindings].map((o) => o.metadata.namespace)), new Set(['orch-system', 'orch-public']))
  t.same(agg('system:node').rules, authorizerNodeRules(), 'system:node = the Node authorizer static rules')
  t.same(nodeRules(), authorizerNodeRules())
  // fresh copies
  bootstrapPolicy().clusterRoles[0].metadata.name = 'mutated'
  t.equal(bootstrapPolicy().clusterRoles[0].metadata.name, 'admin')
})

t.test('coversMissing agrees with the authorizer Covers', async (t) => {
  const owner = [{ verbs: ['get', 'list'], apiGroups: ['', 'apps'], resources: ['pods', '*/status'] }, { verbs: ['get'], nonResourceURLs: ['/x/*'] }]
  const wanted = [
    { verbs: ['get', 'watch'], apiGroups: [''], resources: ['pods', 'pods/status', 'pods/log'], resourceNames: ['a'] },
    { verbs: ['get'], nonResourceURLs: ['/x/y', '/z'] },
  ]
  t.same(coversMissing(owner, wanted), covers(owner, wanted).missing)
  t.equal(coversMissing(owner, wanted).length, 5)
})

const role = (rules: RoleObject['rules'], extra: Partial<RoleObject['metadata']> = {}): RoleObject =>
  ({ apiVersion: `${G}/v1`, kind: 'ClusterRole', metadata: { name: 'r', ...extra }, rules })

t.test('reconcile roles', async (t) => {
  const wanted = bootstrapPolicy().clusterRoles.find((c) => c.metadata.name === 'system:basic-user')!
  const created = reconcile(undefined, wanted)
  t.equal(created.operation, 'create')
  t.same(created.object, wanted)
  t.not(created.object, wanted, 'a copy')

  t.equal(reconcile(structuredClone(wanted), wanted).operation, 'none', 'up to date')

  // A user removed a permission and added one: the missing one comes back (as atoms), the extra stays.
  const edited = structuredClone(wanted)
  edited.rules = [{ verbs: ['create'], apiGroups: ['authorization.orch.io'], resources: ['selfsubjectaccessreviews'] }, { verbs: ['get'], apiGroups: [''], resources: ['pods'] }]
  edited.metadata.labels = { mine: 'yes', [BOOTSTRAPPING_LABEL]: 'custom' }
  const r = reconcile(edited, wanted)
  t.equal(r.operation, 'update')
  t.equal(r.protected, false)
  t.same(r.missingRules, [
    { verbs: ['create'], apiGroups: ['authorization.orch.io'], resources: ['selfsubjectrulesreviews'] },
    { verbs: ['create'], apiGroups: ['authentication.orch.io'], resources: ['selfsubjectreviews'] },
  ])
  const out = r.object as RoleObject
  t.same(out.rules!.slice(0, 2), edited.rules, 'existing rules kept in place')
  t.equal(out.rules!.length, 4)
  t.same(out.metadata.labels, { mine: 'yes', [BOOTSTRAPPING_LABEL]: 'custom' }, 'existing label values win')
  t.equal(out.metadata.annotations?.[AUTOUPDATE_ANNOTATION], 'true', 'missing annotation added')
  t.same(reconcile(out, wanted).operation, 'none', 'idempotent')

  // A broader existing rule covers the default: nothing to add.
  const broad = role([{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], { labels: wanted.metadata.labels, annotations: wanted.metadata.annotations })
  t.equal(reconcile(broad, { ...wanted, metadata: { ...wanted.metadata, name: 'r' } }).operation, 'none')

  // autoupdate "false": protected, never modified, missing rules reported.
  const prot = structuredClone(edited)
  prot.metadata.annotations = { [AUTOUPDATE_ANNOTATION]: 'false' }
  const p = reconcile(prot, wanted)
  t.equal(p.operation, 'none')
  t.equal(p.protected, true)
  t.equal(p.object, prot, 'the stored object, untouched')
  t.equal(p.missingRules.length, 2)
  t.same(prot.metadata.annotations, { [AUTOUPDATE_ANNOTATION]: 'false' })

  // autoupdate "true" (or anything but "false") reconciles.
  const notProt = structuredClone(edited)
  notProt.metadata.annotations = { [AUTOUPDATE_ANNOTATION]: 'FALSE' }
  t.equal(reconcile(notProt, wanted).operation, 'update')
})

t.test('reconcile aggregated roles', async (t) => {
  const admin = bootstrapPolicy().clusterRoles.find((c) => c.metadata.name === 'admin')!
  // Aggregated rules on the stored object are not "extra" and not touched.
  const stored = structuredClone(admin)
  stored.rules = [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]
  t.equal(reconcile(stored, admin).operation, 'none')
  // A missing selector is added, an extra one kept.
  const noSel = structuredClone(admin)
  noSel.aggregationRule = { clusterRoleSelectors: [{ matchLabels: { custom: 'true' } }] }
  const r = reconcile(noSel, admin)
  t.equal(r.operation, 'update')
  t.same((r.object as RoleObject).aggregationRule!.clusterRoleSelectors, [{ matchLabels: { custom: 'true' } }, { matchLabels: { 'rbac.authorization.orch.io/aggregate-to-admin': 'true' } }])
  // An aggregation rule the default does not have is removed.
  const basic = bootstrapPolicy().clusterRoles.find((c) => c.metadata.name === 'system:basic-user')!
  const withAgg = { ...structuredClone(basic), aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'b' } }] } }
  const r2 = reconcile(withAgg, basic)
  t.equal(r2.operation, 'update')
  t.equal((r2.object as RoleObject).aggregationRule, undefined)
})

t.test('reconcile bindings', async (t) => {
  const wanted = bootstrapPolicy().clusterRoleBindings.find((b) => b.metadata.name === 'system:public-info-viewer')!
  t.equal(reconcile(undefined, wanted).operation, 'create')
  t.equal(reconcile(structuredClone(wanted), wanted).operation, 'none')
  // Subjects stored without apiGroup (as clients often send them) are the same subjects.
  const noGroup = structuredClone(wanted)
  noGroup.subjects = noGroup.subjects!.map((s) => ({ kind: s.kind, name: s.name }))
  t.equal(reconcile(noGroup, wanted).operation, 'none')
  // A missing subject is added back; extra subjects stay.
  const trimmed = structuredClone(wanted)
  trimmed.subjects = [{ kind: 'Group', apiGroup: G, name: 'system:authenticated' }, { kind: 'User', apiGroup: G, name: 'extra' }]
  const r = reconcile(trimmed, wanted)
  t.equal(r.operation, 'update')
  t.same(r.missingSubjects, [{ kind: 'Group', apiGroup: G, name: 'system:unauthenticated' }])
  t.same((r.object as BindingObject).subjects!.map((s) => s.name), ['system:authenticated', 'extra', 'system:unauthenticated'])
  // All subjects removed by a user: protected binding stays empty.
  const prot = structuredClone(wanted)
  prot.subjects = []
  prot.metadata.annotations = { [AUTOUPDATE_ANNOTATION]: 'false' }
  const p = reconcile(prot, wanted)
  t.same([p.operation, p.protected, p.missingSubjects.length], ['none', true, 2])
  t.same(p.object, prot)
  // A different roleRef: recreate with the default.
  const moved = structuredClone(wanted)
  moved.roleRef = { apiGroup: G, kind: 'ClusterRole', name: 'cluster-admin' }
  const m = reconcile(moved, wanted)
  t.equal(m.operation, 'recreate')
  t.same(m.object, wanted)
  // … unless protected.
  moved.metadata.annotations = { [AUTOUPDATE_ANNOTATION]: 'false' }
  t.same([reconcile(moved, wanted).operation, reconcile(moved, wanted).protected], ['none', true])
  // Namespaced binding: subjects with namespaces compare by namespace.
  const rb = bootstrapPolicy().roleBindings.find((b) => b.metadata.name === 'system::leader-locking-kube-scheduler')!
  const otherNs = structuredClone(rb)
  otherNs.subjects = otherNs.subjects!.map((s) => (s.kind === 'ServiceAccount' ? { ...s, namespace: 'elsewhere' } : s))
  const r3 = reconcile(otherNs, rb)
  t.equal(r3.operation, 'update')
  t.same(r3.missingSubjects, [{ kind: 'ServiceAccount', name: 'kube-scheduler', namespace: 'orch-system' }])
})
