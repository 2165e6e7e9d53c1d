// Black-box: what upstream refuses in ResourceQuota, LimitRange and PodDisruptionBudget objects (causes exact), and
// what ordinary manifests and kubectl create send still being accepted.
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'

let s: TestServer
const NS = '/api/v1/namespaces/default'
const RQ = `${NS}/resourcequotas`
const LR = `${NS}/limitranges`
const PDB = '/apis/policy/v1/namespaces/default/poddisruptionbudgets'
const MERGE = { 'content-type': 'application/merge-patch+json' }

// No disruption controller: the PodDisruptionBudget cases write status themselves.
t.before(async () => { s = await startServer({ args: ['--controllers=*,-disruption'] }) })
t.teardown(async () => { await s?.stop() })

type Cause = [field: string, message: string]

/** A 422 whose causes are exactly these (in order), whose message is built from them, and nothing stored. */
async function refused(t: import('tap').Test, path: string, body: any, kind: string, causes: Cause[]): Promise<void> {
  const name = body.metadata.name
  const r = await s.request('POST', path, body)
  t.equal(r.status, 422, r.text)
  const lines = [...new Set(causes.map(([f, m]) => `${f}: ${m}`))]
  t.equal(r.json?.message, `${kind} "${name}" is invalid: ${lines.length === 1 ? lines[0] : `[${lines.join(', ')}]`}`)
  t.same(r.json?.details?.causes?.map((c: any) => [c.field, c.message]), causes)
  t.equal((await s.request('GET', `${path}/${name}`)).status, 404, 'nothing was stored')
}


const quota = (name: string, spec: any) => ({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name }, spec })
const limits = (name: string, items: any[]) => ({ apiVersion: 'v1', kind: 'LimitRange', metadata: { name }, spec: { limits: items } })
const pdb = (name: string, spec: any) => ({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name }, spec })

t.test('ResourceQuota: accepted manifests', async (t) => {
  for (const [name, spec] of [
    ['compute', { hard: { 'requests.cpu': '1', 'requests.memory': '1Gi', 'limits.cpu': '2', 'limits.memory': '2Gi', 'requests.nvidia.com/gpu': 4 } }],
    // Quotas are enforced: a quota on quotas must leave room for the others this file creates in the namespace.
    ['objects', { hard: { configmaps: '10', persistentvolumeclaims: '4', pods: '4', replicationcontrollers: '20', secrets: '10', services: '10', 'services.loadbalancers': '2', 'services.nodeports': 0, resourcequotas: 100 } }],
    ['counts', { hard: { 'count/deployments.apps': '2', 'count/widgets.example.com': '5', 'gold.storageclass.storage.orch.io/requests.storage': '500Gi', 'gold.storageclass.storage.k8s.io/persistentvolumeclaims': '10', 'requests.storage': '1Ti', 'hugepages-2Mi': '1Gi', 'requests.ephemeral-storage': '2Gi' } }],
    // kubectl create quota best-effort --hard=pods=100 --scopes=BestEffort
    ['best-effort', { hard: { pods: '100' }, scopes: ['BestEffort'] }],
    ['terminating', { hard: { pods: '10', 'requests.cpu': '500m' }, scopes: ['Terminating', 'NotBestEffort'] }],
    ['priority', { hard: { pods: '10', cpu: '1000', memory: '200Gi' }, scopeSelector: { matchExpressions: [{ operator: 'In', scopeName: 'PriorityClass', values: ['high'] }] } }],
    ['cross-ns', { hard: { pods: '10' }, scopeSelector: { matchExpressions: [{ operator: 'Exists', scopeName: 'CrossNamespacePodAffinity' }] } }],
    ['no-priority', { hard: { pods: '10' }, scopeSelector: { matchExpressions: [{ operator: 'DoesNotExist', scopeName: 'PriorityClass' }] } }],
  ] as Array<[string, any]>) {
    const r = await s.request('POST', RQ, quota(name, spec))
    t.equal(r.status, 201, `${name}: ${r.text}`)
  }
})

t.test('ResourceQuota: hard names and amounts', async (t) => {
  await refused(t, RQ, quota('q1', { hard: { foo: '1' } }), 'ResourceQuota', [
    ['spec.hard[foo]', 'Invalid value: "foo": must be a standard resource type or fully qualified'],
    ['spec.hard[foo]', 'Invalid value: "foo": must be a standard resource for quota'],
  ])
  await refused(t, RQ, quota('q2', { hard: { storage: '1Gi' } }), 'ResourceQuota', [
    ['spec.hard[storage]', 'Invalid value: "storage": must be a standard resource for quota'],
  ])
  await refused(t, RQ, quota('q3', { hard: { cpu: '-1', memory: '-500m' } }), 'ResourceQuota', [
    ['spec.hard[cpu]', 'Invalid value: "-1": must be greater than or equal to 0'],
    ['spec.hard[memory]', 'Invalid value: "-500m": must be greater than or equal to 0'],
  ])
  await refused(t, RQ, quota('q4', { hard: { pods: '1.5', 'count/deployments.apps': '500m', 'example.com/dongle': '0.5' } }), 'ResourceQuota', [
    ['spec.hard[count/deployments.apps]', 'Invalid value: "500m": must be an integer'],
    ['spec.hard[example.com/dongle]', 'Invalid value: "500m": must be an integer'],
    ['spec.hard[pods]', 'Invalid value: "1500m": must be an integer'],
  ])
  await refused(t, RQ, quota('q5', { hard: { services: '-1' } }), 'ResourceQuota', [
    ['spec.hard[services]', 'Invalid value: "-1": must be greater than or equal to 0'],
  ])
  await refused(t, RQ, quota('q6', { hard: { 'a/b/c': '1' } }), 'ResourceQuota', [
    ['spec.hard[a/b/c]', 'Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\') with an optional DNS subdomain prefix and \'/\' (e.g. \'example.com/MyName\')'],
  ])
})

t.test('ResourceQuota: scopes', async (t) => {
  await refused(t, RQ, quota('s1', { hard: { pods: '1' }, scopes: ['Sometimes'] }), 'ResourceQuota', [
    ['spec.scopes', 'Invalid value: ["Sometimes"]: unsupported scope'],
  ])
  await refused(t, RQ, quota('s2', { hard: { pods: '1', cpu: '1' }, scopes: ['BestEffort'] }), 'ResourceQuota', [
    ['spec.scopes', 'Invalid value: ["BestEffort"]: unsupported scope applied to resource'],
  ])
  await refused(t, RQ, quota('s3', { hard: { pods: '1' }, scopes: ['Terminating', 'NotTerminating'] }), 'ResourceQuota', [
    ['spec.scopes', 'Invalid value: ["Terminating","NotTerminating"]: conflicting scopes'],
  ])
  await refused(t, RQ, quota('s4', { hard: { pods: '1' }, scopes: ['BestEffort', 'NotBestEffort'] }), 'ResourceQuota', [
    ['spec.scopes', 'Invalid value: ["BestEffort","NotBestEffort"]: conflicting scopes'],
  ])
  await refused(t, RQ, quota('s5', { hard: { secrets: '1', 'requests.storage': '1Gi' }, scopes: ['Terminating'] }), 'ResourceQuota', [
    ['spec.scopes', 'Invalid value: ["Terminating"]: unsupported scope applied to resource'],
    ['spec.scopes', 'Invalid value: ["Terminating"]: unsupported scope applied to resource'],
  ])
})

t.test('ResourceQuota: scopeSelector', async (t) => {
  const sel = (...exprs: any[]) => ({ matchExpressions: exprs })
  await refused(t, RQ, quota('x1', { hard: { pods: '1' }, scopeSelector: sel({ scopeName: 'PriorityClass', operator: 'In' }) }), 'ResourceQuota', [
    ['spec.scopeSelector.matchExpressions.values', 'Required value: must be at least one value when `operator` is \'In\' or \'NotIn\' for scope selector'],
  ])
  await refused(t, RQ, quota('x2', { hard: { pods: '1' }, scopeSelector: sel({ scopeName: 'PriorityClass', operator: 'Exists', values: ['a'] }) }), 'ResourceQuota', [
    ['spec.scopeSelector.matchExpressions.values', 'Invalid value: ["a"]: must be no value when `operator` is \'Exist\' or \'DoesNotExist\' for scope selector'],
  ])
  await refused(t, RQ, quota('x3', { hard: { pods: '1' }, scopeSelector: sel({ scopeName: 'PriorityClass', operator: 'Gt', values: ['1'] }) }), 'ResourceQuota', [
    ['spec.scopeSelector.matchExpressions.operator', 'Invalid value: "Gt": not a valid selector operator'],
  ])
  await refused(t, RQ, quota('x4', { hard: { pods: '1' }, scopeSelector: sel({ scopeName: 'Bogus', operator: 'Exists' }) }), 'ResourceQuota', [
    ['spec.scopeSelector.matchExpressions.scopeName', 'Invalid value: "Bogus": unsupported scope'],
  ])
  await refused(t, RQ, quota('x5', { hard: { pods: '1' }, scopeSelector: sel({ scopeName: 'BestEffort', operator: 'In', values: ['x'] }) }), 'ResourceQuota', [
    ['spec.scopeSelector.matchExpressions.operator', 'Invalid value: "In": must be \'Exists\' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity'],
  ])
  await refused(t, RQ, quota('x6', { hard: { memory: '1Gi' }, scopeSelector: sel({ scopeName: 'BestEffort', operator: 'Exists' }) }), 'ResourceQuota', [
    ['spec.scopeSelector.matchExpressions', 'Invalid value: {"MatchExpressions":[{"ScopeName":"BestEffort","Operator":"Exists","Values":null}]}: unsupported scope applied to resource'],
  ])
  await refused(t, RQ, quota('x7', { hard: { pods: '1' }, scopeSelector: sel({ scopeName: 'Terminating', operator: 'Exists' }, { scopeName: 'NotTerminating', operator: 'Exists' }) }), 'ResourceQuota', [
    ['spec.scopeSelector.matchExpressions', 'Invalid value: null: conflicting scopes'],
  ])
})

t.test('ResourceQuota: scopes are immutable; status names and amounts', async (t) => {
  let r = await s.request('POST', RQ, quota('u1', { hard: { pods: '5' }, scopes: ['NotTerminating'] }))
  t.equal(r.status, 201, r.text)
  r = await s.request('PATCH', `${RQ}/u1`, { spec: { scopes: ['Terminating'] } }, MERGE)
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.message, 'ResourceQuota "u1" is invalid: spec.scopes: Invalid value: ["Terminating"]: field is immutable')
  r = await s.request('PATCH', `${RQ}/u1`, { spec: { hard: { pods: '-1' } } }, MERGE)
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.details?.causes?.[0]?.field, 'spec.hard[pods]')
  r = await s.request('PATCH', `${RQ}/u1`, { spec: { hard: { pods: '7' } } }, MERGE)
  t.equal(r.status, 200, r.text)

  r = await s.request('PATCH', `${RQ}/u1/status`, { status: { hard: { pods: '7' }, used: { pods: '-1', foo: '1' } } }, MERGE)
  t.equal(r.status, 422, r.text)
  t.same(r.json?.details?.causes?.map((c: any) => [c.field, c.message]), [
    ['status.used[foo]', 'Invalid value: "foo": must be a standard resource type or fully qualified'],
    ['status.used[foo]', 'Invalid value: "foo": must be a standard resource for quota'],
    ['status.used[pods]', 'Invalid value: "-1": must be greater than or equal to 0'],
  ])
  r = await s.request('PATCH', `${RQ}/u1/status`, { status: { hard: { pods: '2.5' } } }, MERGE)
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.message, 'ResourceQuota "u1" is invalid: status.hard[pods]: Invalid value: "2500m": must be an integer')
  r = await s.request('PATCH', `${RQ}/u1/status`, { status: { hard: { pods: '7' }, used: { pods: '3' } } }, MERGE)
  t.equal(r.status, 200, r.text)
  t.same((await s.request('GET', `${RQ}/u1`)).json.status, { hard: { pods: '7' }, used: { pods: '3' } })
})

t.test('LimitRange: accepted manifests', async (t) => {
  const r = await s.request('POST', LR, limits('ok', [
    { type: 'Container', default: { cpu: '500m', memory: '512Mi' }, defaultRequest: { cpu: '250m', memory: '256Mi' }, max: { cpu: '2', memory: '1Gi' }, min: { cpu: '100m', memory: '128Mi' }, maxLimitRequestRatio: { cpu: '4' } },
    { type: 'Pod', max: { cpu: '4', memory: '4Gi' } },
    { type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '10Gi' } },
  ]))
  t.equal(r.status, 201, r.text)
  const neg = await s.request('POST', LR, limits('negative', [{ type: 'Container', min: { cpu: '-1' } }]))
  t.equal(neg.status, 201, `upstream does not check signs here: ${neg.text}`)
})

t.test('LimitRange: types and names', async (t) => {
  await refused(t, LR, limits('l1', [{ type: 'Node', max: { cpu: '1' } }]), 'LimitRange', [
    ['spec.limits[0].type', 'Invalid value: "Node": must be a standard limit type or fully qualified'],
  ])
  await refused(t, LR, limits('l2', [{ max: { cpu: '1' } }]), 'LimitRange', [
    ['spec.limits[0].type', 'Invalid value: "": name part must be non-empty'],
    ['spec.limits[0].type', 'Invalid value: "": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')'],
  ])
  await refused(t, LR, limits('l3', [{ type: 'Container', max: { cpu: '1' } }, { type: 'Container', max: { cpu: '2' } }]), 'LimitRange', [
    ['spec.limits[1].type', 'Duplicate value: "Container"'],
  ])
  // A Container item's max is defaulted into default and defaultRequest first (upstream SetDefaults_LimitRangeItem), so
  // the names are refused there too.
  await refused(t, LR, limits('l4', [{ type: 'Container', max: { 'requests.cpu': '1', storage: '1Gi' } }]), 'LimitRange', [
    ['spec.limits[0].max[requests.cpu]', 'Invalid value: "requests.cpu": must be a standard resource for containers'],
    ['spec.limits[0].max[storage]', 'Invalid value: "storage": must be a standard resource for containers'],
    ['spec.limits[0].default[requests.cpu]', 'Invalid value: "requests.cpu": must be a standard resource for containers'],
    ['spec.limits[0].default[storage]', 'Invalid value: "storage": must be a standard resource for containers'],
    ['spec.limits[0].defaultRequest[requests.cpu]', 'Invalid value: "requests.cpu": must be a standard resource for containers'],
    ['spec.limits[0].defaultRequest[storage]', 'Invalid value: "storage": must be a standard resource for containers'],
  ])
  await refused(t, LR, limits('l5', [{ type: 'Pod', default: { cpu: '1' }, defaultRequest: { cpu: '1' } }]), 'LimitRange', [
    ['spec.limits[0].default', 'Forbidden: may not be specified when `type` is \'Pod\''],
    ['spec.limits[0].defaultRequest', 'Forbidden: may not be specified when `type` is \'Pod\''],
  ])
  await refused(t, LR, limits('l6', [{ type: 'PersistentVolumeClaim', max: { 'requests.storage': '1Gi' } }]), 'LimitRange', [
    ['spec.limits[0].limits', 'Required value: either minimum or maximum storage value is required, but neither was provided'],
  ])
})

t.test('LimitRange: min <= defaultRequest <= default <= max, and ratios', async (t) => {
  // default and defaultRequest are defaulted from max (1000m) before validation.
  await refused(t, LR, limits('o1', [{ type: 'Container', min: { cpu: '2' }, max: { cpu: '1000m' } }]), 'LimitRange', [
    ['spec.limits[0].min[cpu]', 'Invalid value: "2": min value 2 is greater than max value 1'],
    ['spec.limits[0].defaultRequest[cpu]', 'Invalid value: "1": min value 2 is greater than default request value 1'],
    ['spec.limits[0].default[cpu]', 'Invalid value: "2": min value 2 is greater than default value 1'],
  ])
  await refused(t, LR, limits('o2', [{ type: 'Container', min: { memory: '1Gi' }, defaultRequest: { memory: '512Mi' }, default: { memory: '2Gi' }, max: { memory: '1536Mi' } }]), 'LimitRange', [
    ['spec.limits[0].defaultRequest[memory]', 'Invalid value: "512Mi": min value 1Gi is greater than default request value 512Mi'],
    ['spec.limits[0].default[memory]', 'Invalid value: "1536Mi": default value 2Gi is greater than max value 1536Mi'],
  ])
  await refused(t, LR, limits('o3', [{ type: 'Container', defaultRequest: { cpu: '2' }, default: { cpu: '1' }, max: { cpu: '1500m' } }]), 'LimitRange', [
    ['spec.limits[0].defaultRequest[cpu]', 'Invalid value: "2": default request value 2 is greater than max value 1500m'],
    ['spec.limits[0].defaultRequest[cpu]', 'Invalid value: "2": default request value 2 is greater than default limit value 1'],
  ])
  // defaultRequest is defaulted from default.
  await refused(t, LR, limits('o4', [{ type: 'Container', min: { cpu: '2' }, default: { cpu: '1' } }]), 'LimitRange', [
    ['spec.limits[0].defaultRequest[cpu]', 'Invalid value: "1": min value 2 is greater than default request value 1'],
    ['spec.limits[0].default[cpu]', 'Invalid value: "2": min value 2 is greater than default value 1'],
  ])
  await refused(t, LR, limits('o5', [{ type: 'Container', maxLimitRequestRatio: { cpu: '500m' } }]), 'LimitRange', [
    ['spec.limits[0].maxLimitRequestRatio[cpu]', 'Invalid value: "500m": ratio 500m is less than 1'],
  ])
  await refused(t, LR, limits('o6', [{ type: 'Container', min: { cpu: '100m' }, max: { cpu: '300m' }, maxLimitRequestRatio: { cpu: '4' } }]), 'LimitRange', [
    ['spec.limits[0].maxLimitRequestRatio[cpu]', 'Invalid value: "4": ratio 4 is greater than max/min = 3.000000'],
  ])
  await refused(t, LR, limits('o7', [{ type: 'Container', default: { 'example.com/gpu': '2' }, defaultRequest: { 'example.com/gpu': '1' } }]), 'LimitRange', [
    ['spec.limits[0].defaultRequest[example.com/gpu]', 'Invalid value: "1": default value 2 must equal to defaultRequest value 1 in example.com/gpu'],
  ])
})

t.test('PodDisruptionBudget: accepted manifests', async (t) => {
  for (const [name, spec] of [
    // kubectl create pdb my-pdb --selector=app=rails --min-available=1
    ['kubectl-min', { minAvailable: 1, selector: { matchLabels: { app: 'rails' } } }],
    ['kubectl-pct', { minAvailable: '50%', selector: { matchLabels: { app: 'nginx' } } }],
    ['max-zero', { maxUnavailable: 0, selector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['web', 'api'] }, { key: 'canary', operator: 'DoesNotExist' }] } }],
    ['all', { minAvailable: '100%', selector: {}, unhealthyPodEvictionPolicy: 'AlwaysAllow' }],
    ['if-healthy', { maxUnavailable: '0%', selector: { matchLabels: { app: 'db' } }, unhealthyPodEvictionPolicy: 'IfHealthyBudget' }],
  ] as Array<[string, any]>) {
    const r = await s.request('POST', PDB, { ...pdb(name, spec), status: { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 } })
    t.equal(r.status, 201, `${name}: ${r.text}`)
  }
})

t.test('PodDisruptionBudget: spec', async (t) => {
  await refused(t, PDB, pdb('p1', { minAvailable: 1, maxUnavailable: '10%', selector: { matchLabels: { app: 'a' } } }), 'PodDisruptionBudget.policy', [
    ['spec', 'Invalid value: {"MinAvailable":1,"Selector":{"matchLabels":{"app":"a"}},"MaxUnavailable":"10%","UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set'],
  ])
  await refused(t, PDB, pdb('p2', { minAvailable: -1 }), 'PodDisruptionBudget.policy', [
    ['spec.minAvailable', 'Invalid value: -1: must be greater than or equal to 0'],
  ])
  await refused(t, PDB, pdb('p3', { maxUnavailable: '5' }), 'PodDisruptionBudget.policy', [
    ['spec.maxUnavailable', 'Invalid value: "5": a valid percent string must be a numeric string followed by an ending \'%\' (e.g. \'1%\',  or \'93%\', regex used for validation is \'[0-9]+%\')'],
  ])
  await refused(t, PDB, pdb('p4', { minAvailable: '101%' }), 'PodDisruptionBudget.policy', [
    ['spec.minAvailable', 'Invalid value: "101%": must not be greater than 100%'],
  ])
  await refused(t, PDB, pdb('p5', { minAvailable: 1, unhealthyPodEvictionPolicy: 'Never' }), 'PodDisruptionBudget.policy', [
    ['spec.unhealthyPodEvictionPolicy', 'Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget"'],
  ])
  await refused(t, PDB, pdb('p6', { minAvailable: 1, selector: { matchLabels: { 'bad key': 'v' }, matchExpressions: [{ key: 'k', operator: 'In' }, { key: 'k', operator: 'Exists', values: ['x'] }, { key: 'k', operator: 'Near', values: ['-bad-'] }] } }), 'PodDisruptionBudget.policy', [
    ['spec.selector.matchLabels', 'Invalid value: "bad key": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')'],
    ['spec.selector.matchExpressions[0].values', 'Required value: must be specified when `operator` is \'In\' or \'NotIn\''],
    ['spec.selector.matchExpressions[1].values', 'Forbidden: may not be specified when `operator` is \'Exists\' or \'DoesNotExist\''],
    ['spec.selector.matchExpressions[2].operator', 'Invalid value: "Near": not a valid selector operator'],
    ['spec.selector.matchExpressions[2].values[0]', 'Invalid value: "-bad-": a valid label must be an empty string or consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyValue\',  or \'my_value\',  or \'12345\', regex used for validation is \'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\')'],
  ])
})

t.test('PodDisruptionBudget: updates and status', async (t) => {
  let r = await s.request('POST', PDB, pdb('st', { minAvailable: 2, selector: { matchLabels: { app: 'st' } } }))
  t.equal(r.status, 201, r.text)
  r = await s.request('PATCH', `${PDB}/st`, { spec: { maxUnavailable: 1 } }, MERGE)
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.details?.causes?.[0]?.field, 'spec')
  r = await s.request('PATCH', `${PDB}/st`, { spec: { minAvailable: '30%' } }, MERGE)
  t.equal(r.status, 200, r.text)

  r = await s.request('PATCH', `${PDB}/st/status`, { status: { disruptionsAllowed: -1, currentHealthy: -2, desiredHealthy: 0, expectedPods: 0 } }, MERGE)
  t.equal(r.status, 422, r.text)
  t.same(r.json?.details?.causes?.map((c: any) => [c.field, c.message]), [
    ['status.disruptionsAllowed', 'Invalid value: -1: must be greater than or equal to 0'],
    ['status.currentHealthy', 'Invalid value: -2: must be greater than or equal to 0'],
  ])
  r = await s.request('PATCH', `${PDB}/st/status`, { status: { conditions: [
    { type: 'DisruptionAllowed', status: 'Maybe', reason: 'Sufficient Pods', message: '', lastTransitionTime: '2024-01-01T00:00:00Z' },
    { type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods', message: '', lastTransitionTime: '2024-01-01T00:00:00Z', observedGeneration: -1 },
    { status: 'True', message: '' },
  ] } }, MERGE)
  t.equal(r.status, 422, r.text)
  t.same(r.json?.details?.causes?.map((c: any) => [c.field, c.message]), [
    ['status.conditions[0].status', 'Unsupported value: "Maybe": supported values: "False", "True", "Unknown"'],
    ['status.conditions[0].reason', 'Invalid value: "Sufficient Pods": a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or \'_,:\', and must end with an alphanumeric character or \'_\' (e.g. \'my_name\',  or \'MY_NAME\',  or \'MyName\',  or \'ReasonA,ReasonB\',  or \'ReasonA:ReasonB\', regex used for validation is \'[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?\')'],
    ['status.conditions[1]', 'Duplicate value: "DisruptionAllowed"'],
    ['status.conditions[1].observedGeneration', 'Invalid value: -1: must be greater than or equal to zero'],
    ['status.conditions[2].type', 'Required value: is required'],
    ['status.conditions[2].lastTransitionTime', 'Required value'],
    ['status.conditions[2].reason', 'Required value'],
  ])
  r = await s.request('PATCH', `${PDB}/st/status`, { status: { disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2, expectedPods: 3, conditions: [
    { type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods', message: '', lastTransitionTime: '2024-01-01T00:00:00Z', observedGeneration: 2 },
  ] } }, MERGE)
  t.equal(r.status, 200, r.text)
  t.equal((await s.request('GET', `${PDB}/st`)).json.status.disruptionsAllowed, 1)
})
