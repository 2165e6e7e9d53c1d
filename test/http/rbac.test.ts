// Black-box authorization: an RBAC matrix (users x verbs x resources x namespaces), resource names, sub-resources and
// non-resource paths, escalation prevention (escalate, bind, aggregationRule), immutable roleRef, revocation on the next
// request, the defaults (labels, aggregation, restart reconciliation, autoupdate "false"), the Node authorizer with
// NodeRestriction, and the AlwaysAllow / AlwaysDeny modes.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type TestServer, type Reply } from '../helpers/server.js'

type Obj = Record<string, any>

const work = mkdtempSync(join(tmpdir(), 'orch-rbac-'))
const tokenFile = join(work, 'tokens.csv')
writeFileSync(tokenFile, [
  'alice-token,alice,u-alice',
  'bob-token,bob,u-bob',
  'carol-token,carol,u-carol',
  'dave-token,dave,u-dave,ops',
  'erin-token,erin,u-erin',
  'node1-token,system:node:n1,u-n1,system:nodes',
  'node2-token,system:node:n2,u-n2,system:nodes',
  '',
].join('\n'))
const dataDir = join(work, 'data')
const ARGS = ['--token-auth-file', tokenFile]

let s: TestServer
t.before(async () => { s = await startServer({ dataDir, args: ARGS }) })
t.teardown(async () => {
  await s?.stop()
  rmSync(work, { recursive: true, force: true })
})

const RBAC = '/apis/rbac.authorization.orch.io/v1'
const G = 'rbac.authorization.orch.io'
const TOKENS: Record<string, string | null> = {
  admin: '', alice: 'alice-token', bob: 'bob-token', carol: 'carol-token', dave: 'dave-token', erin: 'erin-token', anonymous: null,
}
const USERNAMES: Record<string, string> = { anonymous: 'system:anonymous' }
const as = (user: string) => (method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply> =>
  user === 'admin' ? s.request(method, path, body, headers) : s.requestAs(TOKENS[user], method, path, body, headers)

async function must(r: Promise<Reply>, status: number, what: string): Promise<Reply> {
  const x = await r
  if (x.status !== status) throw new Error(`${what}: ${x.status} ${x.text}`)
  return x
}

const ref = (kind: string, name: string) => ({ apiGroup: G, kind, name })
const user = (name: string) => ({ kind: 'User', apiGroup: G, name })
const group = (name: string) => ({ kind: 'Group', apiGroup: G, name })

async function role(ns: string, name: string, rules: Obj[]): Promise<void> {
  await must(s.request('POST', `${RBAC}/namespaces/${ns}/roles`, { metadata: { name }, rules }), 201, `role ${name}`)
}
async function binding(ns: string, name: string, roleRef: Obj, subjects: Obj[]): Promise<void> {
  await must(s.request('POST', `${RBAC}/namespaces/${ns}/rolebindings`, { metadata: { name }, roleRef, subjects }), 201, `rolebinding ${name}`)
}
async function clusterRole(name: string, rules: Obj[], extra: Obj = {}): Promise<void> {
  await must(s.request('POST', `${RBAC}/clusterroles`, { metadata: { name, ...(extra.metadata ?? {}) }, rules, ...(extra.aggregationRule ? { aggregationRule: extra.aggregationRule } : {}) }), 201, `clusterrole ${name}`)
}
async function clusterBinding(name: string, roleName: string, subjects: Obj[]): Promise<void> {
  await must(s.request('POST', `${RBAC}/clusterrolebindings`, { metadata: { name }, roleRef: ref('ClusterRole', roleName), subjects }), 201, `clusterrolebinding ${name}`)
}

async function poll<T>(fn: () => Promise<T | undefined>, ms = 10_000): Promise<T | undefined> {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v !== undefined || Date.now() > end) return v
    await new Promise((r) => setTimeout(r, 50))
  }
}

t.test('setup: namespaces and bindings', async () => {
  for (const ns of ['ns-a', 'ns-b', 'ns-c']) await must(s.request('POST', '/api/v1/namespaces', { metadata: { name: ns } }), 201, ns)
  await binding('ns-a', 'alice-edit', ref('ClusterRole', 'edit'), [user('alice')])
  await binding('ns-a', 'bob-view', ref('ClusterRole', 'view'), [user('bob')])
  await binding('ns-b', 'bob-admin', ref('ClusterRole', 'admin'), [user('bob')])
  await clusterRole('pod-reader', [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] }])
  await clusterBinding('carol-pod-reader', 'pod-reader', [user('carol')])
  await role('ns-b', 'cm-x-reader', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'], resourceNames: ['cm-x'] }])
  await binding('ns-b', 'carol-cm-x', ref('Role', 'cm-x-reader'), [user('carol')])
  await role('ns-a', 'secret-creator', [{ apiGroups: [''], resources: ['secrets'], verbs: ['create', 'get'] }])
  await binding('ns-a', 'ops-secrets', ref('Role', 'secret-creator'), [group('ops')])
})

// ---------------------------------------------------------------- the matrix

type Verb = 'get' | 'list' | 'create' | 'delete'
interface Res { group: string; resource: string; body: (name: string) => Obj }
const RESOURCES: Res[] = [
  { group: '', resource: 'pods', body: (name) => ({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'registry.example/app:1' }] } }) },
  { group: '', resource: 'configmaps', body: (name) => ({ metadata: { name }, data: { k: 'v' } }) },
  { group: '', resource: 'secrets', body: (name) => ({ metadata: { name }, data: { k: 'dg==' } }) },
  { group: G, resource: 'roles', body: (name) => ({ metadata: { name }, rules: [] }) },
]
const VERBS: Verb[] = ['get', 'list', 'create', 'delete']
const ALL = new Set(VERBS)
const READ = new Set<Verb>(['get', 'list'])

/** What each user may do, per namespace and resource (anything not listed is denied). */
const GRANTS: Record<string, Record<string, Record<string, Set<Verb>>>> = {
  admin: { 'ns-a': { pods: ALL, configmaps: ALL, secrets: ALL, roles: ALL }, 'ns-b': { pods: ALL, configmaps: ALL, secrets: ALL, roles: ALL } },
  alice: { 'ns-a': { pods: ALL, configmaps: ALL, secrets: ALL } },
  bob: { 'ns-a': { pods: READ, configmaps: READ }, 'ns-b': { pods: ALL, configmaps: ALL, secrets: ALL, roles: ALL } },
  carol: { 'ns-a': { pods: READ }, 'ns-b': { pods: READ } },
  dave: { 'ns-a': { secrets: new Set<Verb>(['get', 'create']) } },
  erin: {},
  anonymous: {},
}

function requestFor(r: Res, ns: string, verb: Verb): [string, string, unknown] {
  const base = r.group === '' ? `/api/v1/namespaces/${ns}/${r.resource}` : `/apis/${r.group}/v1/namespaces/${ns}/${r.resource}`
  switch (verb) {
    case 'get': return ['GET', `${base}/nx`, undefined]
    case 'list': return ['GET', base, undefined]
    case 'create': return ['POST', `${base}?dryRun=All`, r.body('matrix-obj')]
    case 'delete': return ['DELETE', `${base}/nx`, undefined]
  }
}

function denial(userName: string, r: Res, ns: string, verb: Verb): string {
  const gr = r.group === '' ? r.resource : `${r.resource}.${r.group}`
  const subject = verb === 'get' || verb === 'delete' ? `${gr} "nx"` : gr
  return `${subject} is forbidden: User "${userName}" cannot ${verb} resource "${r.resource}" in API group "${r.group}" in the namespace "${ns}"`
}

const OK_STATUS: Record<Verb, number> = { get: 404, list: 200, create: 201, delete: 404 }

t.test('RBAC matrix: users x verbs x resources x namespaces', async (t) => {
  let cells = 0
  for (const [who, grants] of Object.entries(GRANTS)) {
    const call = as(who)
    for (const ns of ['ns-a', 'ns-b']) {
      for (const r of RESOURCES) {
        for (const verb of VERBS) {
          const allowed = grants[ns]?.[r.resource]?.has(verb) ?? false
          const [method, path, body] = requestFor(r, ns, verb)
          const res = await call(method, path, body)
          cells++
          if (allowed) {
            t.equal(res.status, OK_STATUS[verb], `${who} may ${verb} ${r.resource} in ${ns} (${res.status === 403 ? res.json?.message : res.status})`)
          } else {
            t.equal(res.status, 403, `${who} may not ${verb} ${r.resource} in ${ns}`)
            t.equal(res.json?.message, denial(USERNAMES[who] ?? who, r, ns, verb), `${who} ${verb} ${r.resource} ${ns}: message`)
            t.equal(res.json?.reason, 'Forbidden')
          }
        }
      }
    }
    // Cluster scope: only the admin reads nodes.
    const nodes = await call('GET', '/api/v1/nodes')
    if (who === 'admin') t.equal(nodes.status, 200)
    else t.equal(nodes.json?.message, `nodes is forbidden: User "${USERNAMES[who] ?? who}" cannot list resource "nodes" in API group "" at the cluster scope`, `${who} list nodes`)
  }
  t.comment(`${cells} matrix cells`)
})

t.test('resource names, the metadata.name field selector, sub-resources, non-resource paths', async (t) => {
  const carol = as('carol')
  t.equal((await carol('GET', '/api/v1/namespaces/ns-b/configmaps/cm-x')).status, 404, 'the named configmap (allowed, absent)')
  const other = await carol('GET', '/api/v1/namespaces/ns-b/configmaps/cm-y')
  t.equal(other.status, 403)
  t.equal(other.json.message, 'configmaps "cm-y" is forbidden: User "carol" cannot get resource "configmaps" in API group "" in the namespace "ns-b"')
  t.equal((await carol('GET', '/api/v1/namespaces/ns-b/configmaps')).status, 403, 'a list has no name: name-restricted rules do not match')
  t.equal((await carol('GET', '/api/v1/namespaces/ns-b/configmaps?fieldSelector=metadata.name%3Dcm-x')).status, 200, 'unless narrowed to the name by a field selector')
  t.equal((await carol('GET', '/api/v1/namespaces/ns-b/configmaps?fieldSelector=metadata.name%3Dcm-y')).status, 403)

  // view holds pods/status reads; edit holds no pods/status writes.
  t.equal((await as('bob')('GET', '/api/v1/namespaces/ns-a/pods/nx/status')).status, 404)
  const st = await as('alice')('PUT', '/api/v1/namespaces/ns-a/pods/nx/status', { metadata: { name: 'nx' } })
  t.equal(st.status, 403)
  t.equal(st.json.message, 'pods "nx" is forbidden: User "alice" cannot update resource "pods/status" in API group "" in the namespace "ns-a"')
  t.same(st.json.details, { name: 'nx', kind: 'pods' })

  // Non-resource paths: discovery for authenticated users, the public info for everyone.
  t.equal((await as('erin')('GET', '/api')).status, 200)
  t.equal((await as('erin')('GET', '/apis/apps/v1')).status, 200)
  t.equal((await as('erin')('GET', '/version')).status, 200)
  const metrics = await as('erin')('GET', '/metrics')
  t.equal(metrics.status, 403)
  t.equal(metrics.json.message, 'forbidden: User "erin" cannot get path "/metrics"')
  t.equal((await as('anonymous')('GET', '/healthz')).status, 200)
  t.equal((await as('anonymous')('GET', '/openapi/v3')).status, 403)
})

// ---------------------------------------------------------------- escalation

const ESC = (userName: string, lines: string[]) => `user "${userName}" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`

t.test('escalation: roles may grant only what the writer holds, unless it may escalate', async (t) => {
  const bob = as('bob')
  const ok = await bob('POST', `${RBAC}/namespaces/ns-b/roles`, { metadata: { name: 'held' }, rules: [{ apiGroups: [''], resources: ['pods', 'secrets'], verbs: ['get', 'create'] }] })
  t.equal(ok.status, 201, 'a role within what admin holds in ns-b')
  const esc = await bob('POST', `${RBAC}/namespaces/ns-b/roles`, { metadata: { name: 'esc' }, rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list'] }, { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get'] }] })
  t.equal(esc.status, 403)
  t.same(esc.json, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: `roles.${G} "esc" is forbidden: ${ESC('bob', ['{APIGroups:[""], Resources:["nodes"], Verbs:["get" "list"]}'])}`,
    reason: 'Forbidden', details: { name: 'esc', group: G, kind: 'roles' }, code: 403,
  })
  // Updating a held role to more than bob holds is an escalation too.
  const cur = await bob('GET', `${RBAC}/namespaces/ns-b/roles/held`)
  const up = await bob('PUT', `${RBAC}/namespaces/ns-b/roles/held`, { ...cur.json, rules: [...cur.json.rules, { apiGroups: [''], resources: ['nodes'], verbs: ['get'] }] })
  t.equal(up.status, 403)
  t.equal(up.json.message, `roles.${G} "held" is forbidden: ${ESC('bob', ['{APIGroups:[""], Resources:["nodes"], Verbs:["get"]}'])}`)
  // Another namespace: bob holds only view in ns-a and may not write roles there at all.
  const na = await bob('POST', `${RBAC}/namespaces/ns-a/roles`, { metadata: { name: 'x' }, rules: [] })
  t.equal(na.status, 403)
  t.equal(na.json.message, `roles.${G} is forbidden: User "bob" cannot create resource "roles" in API group "${G}" in the namespace "ns-a"`)

  // With `escalate` on roles in ns-b the same role is allowed.
  await role('ns-b', 'escalator', [{ apiGroups: [G], resources: ['roles'], verbs: ['escalate'] }])
  await binding('ns-b', 'bob-escalate', ref('Role', 'escalator'), [user('bob')])
  const now = await bob('POST', `${RBAC}/namespaces/ns-b/roles`, { metadata: { name: 'esc' }, rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list'] }] })
  t.equal(now.status, 201, 'escalate allows it')
})

t.test('escalation: bindings may reference only roles whose permissions the writer holds, unless it may bind', async (t) => {
  const bob = as('bob')
  const view = await bob('POST', `${RBAC}/namespaces/ns-b/rolebindings`, { metadata: { name: 'erin-view' }, roleRef: ref('ClusterRole', 'view'), subjects: [user('erin')] })
  t.equal(view.status, 201, 'bob holds everything of view in ns-b')
  const ca = await bob('POST', `${RBAC}/namespaces/ns-b/rolebindings`, { metadata: { name: 'erin-ca' }, roleRef: ref('ClusterRole', 'cluster-admin'), subjects: [user('erin')] })
  t.equal(ca.status, 403)
  t.equal(ca.json.message, `rolebindings.${G} "erin-ca" is forbidden: ${ESC('bob', ['{APIGroups:["*"], Resources:["*"], Verbs:["*"]}', '{NonResourceURLs:["*"], Verbs:["*"]}'])}`)
  t.same(ca.json.details, { name: 'erin-ca', group: G, kind: 'rolebindings' })
  const crb = await bob('POST', `${RBAC}/clusterrolebindings`, { metadata: { name: 'bob-self' }, roleRef: ref('ClusterRole', 'view'), subjects: [user('bob')] })
  t.equal(crb.status, 403, 'bob may not write cluster bindings at all')
  // Escalation through a binding to a role bob cannot read is caught too.
  const missing = await bob('POST', `${RBAC}/namespaces/ns-b/rolebindings`, { metadata: { name: 'ghost' }, roleRef: ref('Role', 'no-such-role'), subjects: [user('erin')] })
  t.equal(missing.status, 403)
  t.equal(missing.json.message, `rolebindings.${G} "ghost" is forbidden: role.${G} "no-such-role" not found`)

  // `bind` on clusterroles/cluster-admin in ns-b lets bob bind it there (and nothing else).
  await role('ns-b', 'binder', [{ apiGroups: [G], resources: ['clusterroles'], verbs: ['bind'], resourceNames: ['cluster-admin'] }])
  await binding('ns-b', 'bob-binder', ref('Role', 'binder'), [user('bob')])
  const now = await bob('POST', `${RBAC}/namespaces/ns-b/rolebindings`, { metadata: { name: 'erin-ca' }, roleRef: ref('ClusterRole', 'cluster-admin'), subjects: [user('erin')] })
  t.equal(now.status, 201, 'bind allows it')
  t.equal((await as('erin')('GET', '/api/v1/namespaces/ns-b/secrets')).status, 200, 'erin is admin of ns-b now')
  t.equal((await as('erin')('GET', '/api/v1/namespaces/ns-a/secrets')).status, 403, 'and only of ns-b')
})

t.test('escalation: a ClusterRole aggregationRule needs cluster-admin powers', async (t) => {
  await clusterRole('cr-writer', [{ apiGroups: [G], resources: ['clusterroles'], verbs: ['create', 'update', 'get'] }])
  await clusterBinding('dave-cr-writer', 'cr-writer', [user('dave')])
  const dave = as('dave')
  const plain = await dave('POST', `${RBAC}/clusterroles`, { metadata: { name: 'dave-own' }, rules: [{ apiGroups: [G], resources: ['clusterroles'], verbs: ['get'] }] })
  t.equal(plain.status, 201, 'within what dave holds')
  const more = await dave('POST', `${RBAC}/clusterroles`, { metadata: { name: 'dave-more' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] })
  t.equal(more.status, 403, 'a namespaced grant does not count at the cluster scope')
  t.equal(more.json.message, `clusterroles.${G} "dave-more" is forbidden: user "dave" (groups=["ops" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`)
  const agg = await dave('POST', `${RBAC}/clusterroles`, { metadata: { name: 'dave-agg' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { x: 'y' } }] }, rules: [] })
  t.equal(agg.status, 403)
  t.equal(agg.json.message, `clusterroles.${G} "dave-agg" is forbidden: must have cluster-admin privileges to use the aggregationRule`)
})

t.test('roleRef is immutable', async (t) => {
  const cur = await s.request('GET', `${RBAC}/namespaces/ns-a/rolebindings/bob-view`)
  const r = await s.request('PUT', `${RBAC}/namespaces/ns-a/rolebindings/bob-view`, { ...cur.json, roleRef: ref('ClusterRole', 'edit') })
  t.equal(r.status, 422)
  t.equal(r.json.reason, 'Invalid')
  t.match(r.json.message, /^RoleBinding\.rbac\.authorization\.orch\.io "bob-view" is invalid: roleRef: Invalid value: .*: cannot change roleRef$/)
  const subjectsOnly = await s.request('PUT', `${RBAC}/namespaces/ns-a/rolebindings/bob-view`, { ...cur.json, subjects: [user('bob'), user('carol')] })
  t.equal(subjectsOnly.status, 200, 'subjects may change')
})

// ---------------------------------------------------------------- caches

t.test('a revoked permission is denied on the next request; a granted one allowed at once', async (t) => {
  await role('ns-c', 'cm-reader', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }])
  const erin = as('erin')
  const get = () => erin('GET', '/api/v1/namespaces/ns-c/configmaps/probe')
  t.equal((await get()).status, 403, 'nothing granted yet')
  for (let round = 0; round < 5; round++) {
    await binding('ns-c', 'erin-cm', ref('Role', 'cm-reader'), [user('erin')])
    t.equal((await get()).status, 404, `round ${round}: allowed right after the binding was created`)
    t.equal((await get()).status, 404, `round ${round}: allowed again (a cached decision)`)
    await must(s.request('DELETE', `${RBAC}/namespaces/ns-c/rolebindings/erin-cm`), 200, 'delete binding')
    t.equal((await get()).status, 403, `round ${round}: denied on the very next request after the binding was deleted`)
  }
  // Editing the role (not the binding) takes effect at once too.
  await binding('ns-c', 'erin-cm', ref('Role', 'cm-reader'), [user('erin')])
  t.equal((await get()).status, 404)
  const cur = await s.request('GET', `${RBAC}/namespaces/ns-c/roles/cm-reader`)
  await must(s.request('PUT', `${RBAC}/namespaces/ns-c/roles/cm-reader`, { ...cur.json, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }] }), 200, 'narrow role')
  t.equal((await get()).status, 403, 'a narrowed role denies on the next request')
  // Many readers in flight while the grant goes away: nothing after the acknowledged delete is allowed.
  await must(s.request('PUT', `${RBAC}/namespaces/ns-c/roles/cm-reader`, { ...(await s.request('GET', `${RBAC}/namespaces/ns-c/roles/cm-reader`)).json, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] }), 200, 'widen again')
  t.equal((await get()).status, 404)
  const background = Array.from({ length: 50 }, () => get())
  await must(s.request('DELETE', `${RBAC}/namespaces/ns-c/rolebindings/erin-cm`), 200, 'delete binding')
  const after = await Promise.all(Array.from({ length: 50 }, () => get()))
  await Promise.all(background)
  t.same(after.map((r) => r.status).filter((x) => x !== 403), [], 'every request sent after the delete was acknowledged is denied')
})

// ---------------------------------------------------------------- defaults and aggregation

t.test('the default roles and bindings exist, labelled and annotated', async (t) => {
  for (const name of ['cluster-admin', 'admin', 'edit', 'view', 'system:basic-user', 'system:discovery', 'system:public-info-viewer', 'system:monitoring', 'system:node', 'system:controller:namespace-controller']) {
    const r = await s.request('GET', `${RBAC}/clusterroles/${name}`)
    t.equal(r.status, 200, `clusterrole ${name}`)
    t.equal(r.json?.metadata?.labels?.['orch.io/bootstrapping'], 'rbac-defaults', `${name} label`)
    t.equal(r.json?.metadata?.annotations?.['rbac.authorization.orch.io/autoupdate'], 'true', `${name} annotation`)
  }
  for (const name of ['cluster-admin', 'system:basic-user', 'system:discovery', 'system:public-info-viewer', 'system:monitoring']) {
    const r = await s.request('GET', `${RBAC}/clusterrolebindings/${name}`)
    t.equal(r.status, 200, `clusterrolebinding ${name}`)
    t.equal(r.json?.metadata?.labels?.['orch.io/bootstrapping'], 'rbac-defaults')
  }
  const ca = await s.request('GET', `${RBAC}/clusterrolebindings/cluster-admin`)
  t.same(ca.json.subjects, [group('system:masters')])
  const piv = await s.request('GET', `${RBAC}/clusterrolebindings/system:public-info-viewer`)
  t.same(piv.json.subjects.map((x: Obj) => x.name).sort(), ['system:authenticated', 'system:unauthenticated'])
  const reader = await s.request('GET', `${RBAC}/namespaces/orch-system/roles/extension-apiserver-authentication-reader`)
  t.equal(reader.status, 200, 'namespaced defaults too')
  const labelled = await s.request('GET', `${RBAC}/clusterroles?labelSelector=orch.io%2Fbootstrapping%3Drbac-defaults`)
  t.ok(labelled.json.items.length >= 50, `${labelled.json.items.length} default ClusterRoles`)
  // admin, edit and view are aggregated (admin takes edit takes view).
  const admin = await s.request('GET', `${RBAC}/clusterroles/admin`)
  const rules = JSON.stringify(admin.json.rules)
  t.match(rules, /"localsubjectaccessreviews"/, 'admin has its own rules')
  t.match(rules, /"deployments\/scale"/, 'and edit\'s')
  t.match(rules, /"pods\/log"/, 'and view\'s')
})

t.test('the aggregation controller keeps aggregated roles up to date', async (t) => {
  await clusterRole('widget-viewer', [{ apiGroups: ['acme.io'], resources: ['widgets'], verbs: ['get', 'list'] }], { metadata: { labels: { 'rbac.authorization.orch.io/aggregate-to-view': 'true' } } })
  const has = (name: string) => poll(async () => {
    const r = await s.request('GET', `${RBAC}/clusterroles/${name}`)
    return JSON.stringify(r.json.rules).includes('"widgets"') ? r.json : undefined
  })
  t.ok(await has('view'), 'view took the labelled role\'s rules')
  t.ok(await has('edit'), 'edit took them through view')
  t.ok(await has('admin'), 'admin took them through edit')
  const ssar = await as('bob')('POST', '/apis/authorization.orch.io/v1/selfsubjectaccessreviews', { kind: 'SelfSubjectAccessReview', apiVersion: 'authorization.orch.io/v1', spec: { resourceAttributes: { namespace: 'ns-a', verb: 'list', group: 'acme.io', resource: 'widgets' } } })
  t.equal(ssar.json.status.allowed, true, 'bob (view in ns-a) may list widgets now')
  // Aggregated rules belong to the controller: an edit is undone.
  const view = await s.request('GET', `${RBAC}/clusterroles/view`)
  await must(s.request('PUT', `${RBAC}/clusterroles/view`, { ...view.json, rules: [] }), 200, 'clear view')
  t.ok(await has('view'), 'the controller restored view\'s rules')
  await must(s.request('DELETE', `${RBAC}/clusterroles/widget-viewer`), 200, 'delete')
  t.ok(await poll(async () => {
    const r = await s.request('GET', `${RBAC}/clusterroles/view`)
    return JSON.stringify(r.json.rules).includes('"widgets"') ? undefined : true
  }), 'and removes them when the labelled role is gone')
})

// ---------------------------------------------------------------- the Node authorizer and NodeRestriction

const n1 = (method: string, path: string, body?: unknown) => s.requestAs('node1-token', method, path, body)
const n2 = (method: string, path: string, body?: unknown) => s.requestAs('node2-token', method, path, body)
const podOn = (name: string, node: string, extra: Obj = {}) => ({
  metadata: { name }, spec: { nodeName: node, containers: [{ name: 'c', image: 'registry.example/app:1', ...(extra.container ?? {}) }], ...(extra.spec ?? {}) },
})

t.test('Node authorizer: a node reaches only what pods bound to it reference', async (t) => {
  for (const n of ['n1', 'n2']) await must(s.request('POST', '/api/v1/nodes', { metadata: { name: n } }), 201, `node ${n}`)
  await must(s.request('POST', '/api/v1/namespaces/ns-a/serviceaccounts', { metadata: { name: 'sa1' } }), 201, 'sa1')
  for (const x of ['s1', 's2']) await must(s.request('POST', '/api/v1/namespaces/ns-a/secrets', { metadata: { name: x }, data: { k: 'dg==' } }), 201, x)
  await must(s.request('POST', '/api/v1/namespaces/ns-a/configmaps', { metadata: { name: 'c1' }, data: { k: 'v' } }), 201, 'c1')
  await must(s.request('POST', '/api/v1/namespaces/ns-a/pods', podOn('p1', 'n1', {
    container: { envFrom: [{ configMapRef: { name: 'c1' } }] },
    spec: { serviceAccountName: 'sa1', volumes: [{ name: 'v', secret: { secretName: 's1' } }] },
  })), 201, 'p1')
  await must(s.request('POST', '/api/v1/namespaces/ns-a/pods', podOn('p2', 'n2')), 201, 'p2')

  t.equal((await n1('GET', '/api/v1/namespaces/ns-a/secrets/s1')).status, 200, 'n1 reads the secret its pod mounts')
  t.equal((await n1('GET', '/api/v1/namespaces/ns-a/configmaps/c1')).status, 200, 'and the configmap')
  t.equal((await n1('GET', '/api/v1/namespaces/ns-a/pods/p1')).status, 200, 'and its pod')
  const s2 = await n1('GET', '/api/v1/namespaces/ns-a/secrets/s2')
  t.equal(s2.status, 403)
  t.equal(s2.json.message, 'secrets "s2" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "ns-a": no relationship found between node \'n1\' and this object')
  t.equal((await n2('GET', '/api/v1/namespaces/ns-a/secrets/s1')).status, 403, 'n2 does not reach p1\'s secret')
  const list = await n1('GET', '/api/v1/namespaces/ns-a/secrets')
  t.equal(list.status, 403, 'no lists of secrets')
  t.equal((await n1('GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dn1')).status, 200, 'pods of its own node')
  const allPods = await n1('GET', '/api/v1/pods')
  t.equal(allPods.status, 403)
  t.equal(allPods.json.message, 'pods is forbidden: User "system:node:n1" cannot list resource "pods" in API group "" at the cluster scope: can only list/watch pods with spec.nodeName field selector')
  t.equal((await n1('GET', '/api/v1/nodes/n1')).status, 200, 'its own node')
  const other = await n1('GET', '/api/v1/nodes/n2')
  t.equal(other.status, 403)
  t.match(other.json.message, /: node 'n1' cannot read 'n2', only its own Node object$/)
  t.equal((await n1('GET', '/api/v1/namespaces/ns-a/services')).status, 200, 'the static node rules (services)')

  // The graph follows the pods at once.
  await must(s.request('POST', '/api/v1/namespaces/ns-a/pods', podOn('p3', 'n1', { spec: { volumes: [{ name: 'v', secret: { secretName: 's2' } }] } })), 201, 'p3')
  t.equal((await n1('GET', '/api/v1/namespaces/ns-a/secrets/s2')).status, 200, 'reachable right after the pod was bound')
  await must(s.request('DELETE', '/api/v1/namespaces/ns-a/pods/p3?gracePeriodSeconds=0'), 200, 'delete p3')
  t.equal((await n1('GET', '/api/v1/namespaces/ns-a/secrets/s2')).status, 403, 'unreachable right after the pod was deleted')
})

t.test('NodeRestriction: a node writes only its own objects', async (t) => {
  const mine = await n1('GET', '/api/v1/nodes/n1')
  const up = await n1('PUT', '/api/v1/nodes/n1', { ...mine.json, metadata: { ...mine.json.metadata, labels: { 'orch.io/hostname': 'n1' } } })
  t.equal(up.status, 200, 'a kubelet label on its own node')
  const bad = await n1('PUT', '/api/v1/nodes/n1', { ...up.json, metadata: { ...up.json.metadata, labels: { ...up.json.metadata.labels, 'node-restriction.orch.io/pool': 'x' } } })
  t.equal(bad.status, 403)
  t.equal(bad.json.message, 'nodes "n1" is forbidden: is not allowed to modify labels: node-restriction.orch.io/pool')
  const theirs = await s.request('GET', '/api/v1/nodes/n2')
  const other = await n1('PUT', '/api/v1/nodes/n2', theirs.json)
  t.equal(other.status, 403)
  t.equal(other.json.message, 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"')

  const plain = await n1('POST', '/api/v1/namespaces/ns-a/pods', podOn('x', 'n1'))
  t.equal(plain.status, 403)
  t.equal(plain.json.message, 'pods "x" is forbidden: pod does not have "orch.io/config.mirror" annotation, node "n1" can only create mirror pods')
  const del = await n1('DELETE', '/api/v1/namespaces/ns-a/pods/p2')
  t.equal(del.status, 403)
  // upstream admission.NewForbidden names the object from the request body: a delete has none.
  t.equal(del.json.message, 'pods "Unknown" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself')

  const p1 = await n1('GET', '/api/v1/namespaces/ns-a/pods/p1')
  t.equal((await n1('PUT', '/api/v1/namespaces/ns-a/pods/p1/status', { ...p1.json, status: { phase: 'Running' } })).status, 200, 'status of its own pod')
  const p2 = await s.request('GET', '/api/v1/namespaces/ns-a/pods/p2')
  const st2 = await n1('PUT', '/api/v1/namespaces/ns-a/pods/p2/status', { ...p2.json, status: { phase: 'Running' } })
  t.equal(st2.status, 403)
  t.equal(st2.json.message, 'pods "p2" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself')

  const lease = (name: string) => ({ metadata: { name }, spec: { holderIdentity: name } })
  t.equal((await n1('POST', '/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases', lease('n1'))).status, 201, 'its own lease')
  const l2 = await n1('POST', '/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases', lease('n2'))
  t.equal(l2.status, 403)
  t.equal(l2.json.message, 'leases.coordination.orch.io "n2" is forbidden: can only access node lease with the same name as the requesting node')

  const tok = await n1('POST', '/api/v1/namespaces/ns-a/serviceaccounts/sa1/token', { spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p1', uid: p1.json.metadata.uid } } })
  t.equal(tok.status, 201, 'a token for the account of its pod, bound to the pod')
  const unbound = await n1('POST', '/api/v1/namespaces/ns-a/serviceaccounts/sa1/token', { spec: {} })
  t.equal(unbound.status, 403)
  t.equal(unbound.json.message, 'serviceaccounts "Unknown" is forbidden: node requested token not bound to a pod')
  const otherSa = await n2('POST', '/api/v1/namespaces/ns-a/serviceaccounts/sa1/token', { spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p1', uid: p1.json.metadata.uid } } })
  t.equal(otherSa.status, 403, 'n2 has no pod running as sa1')
})

// ---------------------------------------------------------------- restart: reconciliation

t.test('restart: missing defaults come back, autoupdate "false" is honoured, extra permissions stay', async (t) => {
  await must(s.request('DELETE', `${RBAC}/clusterroles/system:discovery`), 200, 'delete role')
  await must(s.request('DELETE', `${RBAC}/clusterrolebindings/system:basic-user`), 200, 'delete binding')
  // A default binding pointing at another role is recreated with the default roleRef.
  await must(s.request('DELETE', `${RBAC}/clusterrolebindings/system:monitoring`), 200, 'delete monitoring binding')
  await clusterBinding('system:monitoring', 'view', [group('system:monitoring'), user('extra-watcher')])
  // Rules taken away from a default role come back; extra ones stay.
  const mon = await s.request('GET', `${RBAC}/clusterroles/system:monitoring`)
  await must(s.request('PUT', `${RBAC}/clusterroles/system:monitoring`, { ...mon.json, rules: [{ nonResourceURLs: ['/custom'], verbs: ['get'] }] }), 200, 'narrow monitoring')
  // A subject taken away from a default binding comes back; extra ones stay.
  const bu = await s.request('GET', `${RBAC}/clusterrolebindings/system:public-info-viewer`)
  await must(s.request('PUT', `${RBAC}/clusterrolebindings/system:public-info-viewer`, { ...bu.json, subjects: [group('system:authenticated'), user('someone')] }), 200, 'narrow piv binding')
  // Protected: autoupdate "false" keeps the emptied role empty.
  const piv = await s.request('GET', `${RBAC}/clusterroles/system:public-info-viewer`)
  await must(s.request('PUT', `${RBAC}/clusterroles/system:public-info-viewer`, { ...piv.json, metadata: { ...piv.json.metadata, annotations: { 'rbac.authorization.orch.io/autoupdate': 'false' } }, rules: [] }), 200, 'protect piv')

  await s.stop()
  s = await startServer({ dataDir, args: ARGS })

  t.equal((await s.request('GET', `${RBAC}/clusterroles/system:discovery`)).status, 200, 'the deleted role is back')
  const basic = await s.request('GET', `${RBAC}/clusterrolebindings/system:basic-user`)
  t.equal(basic.status, 200, 'the deleted binding is back')
  t.same(basic.json.subjects, [group('system:authenticated')])
  t.equal(basic.json.metadata.labels['orch.io/bootstrapping'], 'rbac-defaults')
  const monB = await s.request('GET', `${RBAC}/clusterrolebindings/system:monitoring`)
  t.same(monB.json.roleRef, ref('ClusterRole', 'system:monitoring'), 'a changed roleRef: the binding was recreated')
  const monR = await s.request('GET', `${RBAC}/clusterroles/system:monitoring`)
  const urls = monR.json.rules.flatMap((r: Obj) => r.nonResourceURLs ?? [])
  t.ok(urls.includes('/custom'), 'the extra rule stays')
  t.ok(urls.includes('/metrics'), 'the default rules are back')
  const pivB = await s.request('GET', `${RBAC}/clusterrolebindings/system:public-info-viewer`)
  t.same(pivB.json.subjects.map((x: Obj) => x.name).sort(), ['someone', 'system:authenticated', 'system:unauthenticated'], 'missing subject added, extra kept')
  const pivR = await s.request('GET', `${RBAC}/clusterroles/system:public-info-viewer`)
  t.same(pivR.json.rules ?? [], [], 'autoupdate "false": left alone')
  t.equal(pivR.json.metadata.annotations['rbac.authorization.orch.io/autoupdate'], 'false')
  t.equal((await s.requestAs(null, 'GET', '/version')).status, 403, 'so anonymous may no longer read /version')
  t.ok(s.logs.some((l) => l.includes('autoupdate') && l.includes('system:public-info-viewer')), 'a warning names the protected role')
  // Bindings made before the restart still hold.
  t.equal((await as('alice')('GET', '/api/v1/namespaces/ns-a/pods')).status, 200, 'alice is still edit in ns-a')
})

// ---------------------------------------------------------------- other modes

t.test('--authorization-mode AlwaysAllow and AlwaysDeny', async (t) => {
  const allow = await startServer({ args: ['--authorization-mode', 'AlwaysAllow', ...ARGS] })
  t.teardown(() => allow.stop())
  t.equal((await allow.requestAs(null, 'GET', '/api/v1/namespaces')).status, 200, 'AlwaysAllow: even anonymous')
  t.equal((await allow.requestAs('erin-token', 'DELETE', '/api/v1/namespaces/default/configmaps/nx')).status, 404)
  const deny = await startServer({ args: ['--authorization-mode', 'AlwaysDeny', ...ARGS] })
  t.teardown(() => deny.stop())
  const r = await deny.requestAs('alice-token', 'GET', '/api/v1/namespaces/default/pods')
  t.equal(r.status, 403)
  t.equal(r.json.message, 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default": Everything is forbidden.')
  t.equal((await deny.request('GET', '/api/v1/namespaces/default/pods')).status, 200, 'system:masters bypasses every authorizer')
  const chain = await startServer({ args: ['--authorization-mode', 'AlwaysDeny,AlwaysAllow', ...ARGS] })
  t.teardown(() => chain.stop())
  t.equal((await chain.requestAs('alice-token', 'GET', '/api/v1/namespaces/default/pods')).status, 200, 'AlwaysDeny has no opinion: the next authorizer decides')
})
