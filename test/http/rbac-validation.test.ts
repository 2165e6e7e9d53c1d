// Black-box: what Roles, ClusterRoles and bindings must hold to be stored (upstream's RBAC validation).
import t from 'tap'
import { startServer, type Reply, type TestServer } from '../helpers/server.js'

let s: TestServer
const RBAC = '/apis/rbac.authorization.orch.io/v1'
const G = 'rbac.authorization.orch.io'

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

const causes = (r: Reply): string[] => (r.json?.details?.causes ?? []).map((c: any) => `${c.field}: ${c.message}`)

t.test('rules: verbs, api groups and resources are required; non-resource URLs only in cluster roles, alone', async (t) => {
  let r = await s.request('POST', `${RBAC}/namespaces/default/roles`, {
    metadata: { name: 'bad' },
    rules: [{ resources: ['pods'], verbs: ['get'] }, { nonResourceURLs: ['/x'], verbs: ['get'] }, { apiGroups: [''], resources: ['pods'], verbs: [] }],
  })
  t.equal(r.status, 422, r.text)
  t.same(causes(r).map((c) => c.replace(/Invalid value: .*?: /, 'Invalid value: ...: ')), [
    'rules[0].apiGroups: Required value: resource rules must supply at least one api group',
    'rules[1].nonResourceURLs: Invalid value: ...: namespaced rules cannot apply to non-resource URLs',
    'rules[2].verbs: Required value: verbs must contain at least one value',
  ])
  r = await s.request('POST', `${RBAC}/clusterroles`, { metadata: { name: 'bad' }, rules: [{ nonResourceURLs: ['/x'], resources: ['pods'], verbs: ['get'] }, { verbs: ['get'] }] })
  t.equal(r.status, 422, r.text)
  t.ok(causes(r).some((c) => c.startsWith('rules[0].nonResourceURLs') && c.endsWith('rules cannot apply to both regular resources and non-resource URLs')), causes(r).join('\n'))
  t.ok(causes(r).includes('rules[1].resources: Required value: resource rules must supply at least one resource'), causes(r).join('\n'))
  r = await s.request('POST', `${RBAC}/clusterroles`, { metadata: { name: 'agg' }, aggregationRule: {} })
  t.equal(r.status, 422, 'an aggregation rule without selectors')
  r = await s.request('POST', `${RBAC}/clusterroles`, { metadata: { name: 'ok' }, rules: [{ nonResourceURLs: ['/healthz'], verbs: ['get'] }, { apiGroups: [''], resources: ['pods'], verbs: ['list'] }] })
  t.equal(r.status, 201, r.text)
})

t.test('subjects: a service account name is a DNS subdomain, user and group names are not empty; no empty apiGroup stored', async (t) => {
  let r = await s.request('POST', `${RBAC}/namespaces/default/rolebindings`, {
    metadata: { name: 'bad' }, roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'view' },
    subjects: [{ kind: 'ServiceAccount', name: 'Bad_Name' }, { kind: 'User', apiGroup: G, name: '' }],
  })
  t.equal(r.status, 422, r.text)
  t.ok(causes(r).some((c) => c.startsWith('subjects[0].name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain')), causes(r).join('\n'))
  t.ok(causes(r).includes('subjects[1].name: Invalid value: "": user name cannot be empty'), causes(r).join('\n'))
  r = await s.request('POST', `${RBAC}/namespaces/default/rolebindings`, {
    metadata: { name: 'sa' }, roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'ServiceAccount', name: 'bot', apiGroup: '' }],
  })
  t.equal(r.status, 201, r.text)
  t.notOk('apiGroup' in r.json.subjects[0], 'a service account subject carries no apiGroup')
})
