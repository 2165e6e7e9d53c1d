import t from 'tap'
import {
  AUTO_UPDATE_ANNOTATION, digestConfig, goRound, mandatoryFlowSchemas, mandatoryPriorityLevels, suggestedFlowSchemas,
  suggestedPriorityLevels, type FlowConfig,
} from '../../../actors/flow-control/config.js'
import { classify, matchesNonResourceRule, type RequestDigest, type RequestInfoLike } from '../../../actors/flow-control/classify.js'
import {
  ZERO_SEAT_DEMAND, adjustBorrowing, computeConcurrencyAllocation, computeConcurrencyLimits, serverConcurrencyLimit,
  updateSeatDemandStats, type BorrowingInput,
} from '../../../actors/flow-control/concurrency.js'
import {
  danglingCondition, parseGoBool, planConfigProducer, reviseIfNeeded, shouldUpdateSpec, statusConditions,
} from '../../../actors/flow-control/producer.js'
import { flowHash } from '../../../actors/flow-control/dealer.js'
import type { Obj } from '../../../src/registry/define.js'

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T
const allFS = (): Obj[] => clone([...mandatoryFlowSchemas, ...suggestedFlowSchemas])
const allPL = (): Obj[] => clone([...mandatoryPriorityLevels, ...suggestedPriorityLevels])
const withUID = (list: Obj[]): Obj[] => list.map((o) => ({ ...o, metadata: { ...o.metadata, uid: `uid-${o.metadata.name}` } }))
const defaults = (): FlowConfig => digestConfig(withUID(allFS()), withUID(allPL()))

function resource(verb: string, resource: string, namespace = '', group = '', subresource = ''): RequestInfoLike {
  const path = `/${group === '' ? 'api/v1' : `apis/${group}/v1`}${namespace ? `/namespaces/${namespace}` : ''}/${resource}${subresource ? `/x/${subresource}` : ''}`
  return { isResourceRequest: true, verb, group, namespace, resource, subresource, path }
}
const nonResource = (verb: string, path: string): RequestInfoLike => ({ isResourceRequest: false, verb, group: '', namespace: '', resource: '', subresource: '', path })
const who = (username: string, ...groups: string[]) => ({ username, groups })
const authed = (username: string, ...groups: string[]) => who(username, ...groups, 'system:authenticated')
const digest = (user: RequestDigest['user'], info: RequestInfoLike): RequestDigest => ({ user, info })
const fsName = (cfg: FlowConfig | Obj[], d: RequestDigest): string => classify(cfg as FlowConfig, d).flowSchema.metadata.name

function flowSchema(name: string, pl: string, precedence: number, rule: Obj, distinguisher?: string): Obj {
  const spec: Obj = { priorityLevelConfiguration: { name: pl }, matchingPrecedence: precedence, rules: [rule] }
  if (distinguisher) spec.distinguisherMethod = { type: distinguisher }
  return { metadata: { name, uid: `uid-${name}` }, spec }
}
const userRule = (user: string, resourceRule: Obj): Obj => ({ subjects: [{ kind: 'User', user: { name: user } }], resourceRules: [resourceRule] })

t.test('the bootstrap objects carry the auto-update annotation and the rebranded names', async (t) => {
  for (const o of [...mandatoryFlowSchemas, ...suggestedFlowSchemas, ...mandatoryPriorityLevels, ...suggestedPriorityLevels]) {
    t.equal(o.metadata.annotations[AUTO_UPDATE_ANNOTATION], 'true', o.metadata.name)
    t.equal(o.apiVersion, 'flowcontrol.apiserver.orch.io/v1')
  }
  t.equal(AUTO_UPDATE_ANNOTATION, 'apf.orch.io/autoupdate-spec')
  const text = JSON.stringify([...suggestedFlowSchemas])
  t.notOk(text.includes('k8s.io') || text.includes('"kube-system"'), 'no upstream group or namespace names')
  t.ok(text.includes('coordination.orch.io') && text.includes('orch-system'))
  t.ok(Object.isFrozen(mandatoryFlowSchemas[0].spec), 'shared constants are frozen')
})

t.test('matching order: matchingPrecedence, then name', async (t) => {
  const cfg = defaults()
  t.same(cfg.flowSchemas.map((f) => f.metadata.name), [
    'exempt', 'probes', 'system-leader-election', 'system-node-high', 'system-nodes', 'kube-controller-manager',
    'kube-scheduler', 'kube-system-service-accounts', 'service-accounts', 'global-default', 'catch-all',
  ])
  t.same(cfg.dangling, [])
  t.same([...cfg.priorityLevels.keys()], ['exempt', 'catch-all', 'system', 'node-high', 'leader-election', 'workload-high', 'workload-low', 'global-default'])
})

t.test('classification of the default objects', async (t) => {
  const cfg = defaults()
  const masters = classify(cfg, digest(authed('admin', 'system:masters'), resource('delete', 'pods', 'default')))
  t.equal(masters.flowSchema.metadata.name, 'exempt')
  t.equal(masters.priorityLevel.name, 'exempt')
  t.equal(masters.priorityLevel.uid, 'uid-exempt')
  t.equal(masters.flowDistinguisher, '')
  t.equal(masters.hash, 0n, 'exempt levels do not shuffle-shard')

  const anon = who('system:anonymous', 'system:unauthenticated')
  t.equal(fsName(cfg, digest(anon, nonResource('get', '/healthz'))), 'probes')
  t.equal(fsName(cfg, digest(anon, nonResource('get', '/readyz'))), 'probes')
  t.equal(fsName(cfg, digest(anon, nonResource('get', '/healthz/etcd'))), 'probes', 'a rule path is also a prefix of its subpaths')
  t.equal(fsName(cfg, digest(anon, nonResource('get', '/healthzfoo'))), 'global-default')
  t.equal(fsName(cfg, digest(anon, nonResource('post', '/healthz'))), 'global-default', 'probes are get only')

  const kcm = authed('system:kube-controller-manager')
  const lease = classify(cfg, digest(kcm, resource('update', 'leases', 'orch-system', 'coordination.orch.io')))
  t.equal(lease.flowSchema.metadata.name, 'system-leader-election')
  t.equal(lease.priorityLevel.name, 'leader-election')
  t.equal(lease.flowDistinguisher, 'system:kube-controller-manager', 'ByUser')
  t.equal(lease.hash, flowHash('system-leader-election', 'system:kube-controller-manager'))
  t.equal(fsName(cfg, digest(kcm, resource('list', 'leases', 'orch-system', 'coordination.orch.io'))), 'kube-controller-manager', 'list is not a leader-election verb')
  t.equal(fsName(cfg, digest(kcm, resource('get', 'leases', '', 'coordination.orch.io'))), 'kube-controller-manager', 'leader election is not cluster scoped')

  const pods = classify(cfg, digest(kcm, resource('list', 'pods', 'team-a')))
  t.equal(pods.flowSchema.metadata.name, 'kube-controller-manager', 'same precedence as kube-scheduler; the name decides')
  t.equal(pods.flowDistinguisher, 'team-a', 'ByNamespace')
  t.equal(classify(cfg, digest(kcm, resource('list', 'nodes'))).flowDistinguisher, '', 'ByNamespace of a cluster-scoped request')
  t.equal(fsName(cfg, digest(authed('system:kube-scheduler'), resource('create', 'bindings', 'default'))), 'kube-scheduler')

  const node = authed('system:node:n1', 'system:nodes')
  t.equal(fsName(cfg, digest(node, resource('patch', 'nodes', '', '', 'status'))), 'system-node-high')
  t.equal(fsName(cfg, digest(node, resource('update', 'leases', 'orch-node-lease', 'coordination.orch.io'))), 'system-node-high')
  t.equal(fsName(cfg, digest(node, resource('get', 'pods', 'default'))), 'system-nodes')
  t.equal(fsName(cfg, digest(node, nonResource('get', '/version'))), 'system-nodes')
  t.equal(classify(cfg, digest(node, resource('get', 'pods', 'default'))).hash, flowHash('system-nodes', 'system:node:n1'))

  const systemSA = authed('system:serviceaccount:orch-system:job-controller', 'system:serviceaccounts', 'system:serviceaccounts:orch-system')
  t.equal(fsName(cfg, digest(systemSA, resource('get', 'pods', 'x'))), 'kube-system-service-accounts')
  t.equal(fsName(cfg, digest(systemSA, resource('get', 'leases', 'x', 'coordination.orch.io'))), 'system-leader-election')
  const otherSA = authed('system:serviceaccount:default:app', 'system:serviceaccounts')
  t.equal(fsName(cfg, digest(otherSA, resource('get', 'pods', 'default'))), 'service-accounts')
  const lookalike = authed('system:serviceaccount:orch-systemx:app')
  t.equal(fsName(cfg, digest(lookalike, resource('get', 'pods', 'default'))), 'global-default', "the namespace must be followed by ':'")

  const alice = classify(cfg, digest(authed('alice'), resource('get', 'configmaps', 'default')))
  t.equal(alice.flowSchema.metadata.name, 'global-default')
  t.equal(alice.flowDistinguisher, 'alice')
  t.equal(alice.hash, 0xf4de3bd42ccdf6b7n, 'the reference vector')

  const nobody = classify(cfg, digest(who('stranger'), resource('get', 'pods', 'default')))
  t.equal(nobody.flowSchema.metadata.name, 'catch-all', 'nothing matches: the catch-all fallback')
  t.equal(nobody.priorityLevel.kind, 'Reject')
  t.equal(nobody.flowDistinguisher, '', 'catch-all has no queues, so no distinguisher')
  t.equal(nobody.hash, 0n)
})

t.test('classify with raw arrays digests them (default priority levels)', async (t) => {
  t.equal(fsName(allFS(), digest(authed('alice'), resource('get', 'pods', 'a'))), 'global-default')
  const c = classify(allFS(), digest(authed('alice'), resource('get', 'pods', 'a')), allPL())
  t.equal(c.priorityLevel.name, 'global-default')
})

t.test('custom schemas: precedence, name tiebreak, subjects and rules', async (t) => {
  const rr = (o: Obj): Obj => ({ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true, ...o })
  const fss = [
    ...allFS(),
    flowSchema('zz-alice', 'workload-high', 50, userRule('alice', rr({}))),
    flowSchema('aa-alice', 'workload-low', 50, userRule('alice', rr({ verbs: ['list'] }))),
    flowSchema('star-user', 'system', 60, userRule('*', rr({ resources: ['secrets'] }))),
    flowSchema('group-star', 'system', 70, { subjects: [{ kind: 'Group', group: { name: '*' } }], resourceRules: [rr({ resources: ['events'] })] }),
    flowSchema('sub', 'system', 80, userRule('bob', rr({ resources: ['pods/log'] }))),
    flowSchema('mixed-star', 'system', 90, userRule('carol', rr({ verbs: ['*', 'get'] }))),
    flowSchema('ns-only', 'system', 95, userRule('dave', rr({ clusterScope: false, namespaces: ['*'] }))),
    flowSchema('ns-list', 'system', 96, userRule('erin', rr({ clusterScope: false, namespaces: ['a', 'b'] }))),
    flowSchema('core-only', 'system', 97, userRule('frank', rr({ apiGroups: [''] }))),
    flowSchema('sa-exact', 'system', 98, { subjects: [{ kind: 'ServiceAccount', serviceAccount: { namespace: 'ns1', name: 'robot' } }], resourceRules: [rr({})] }),
  ]
  const cfg = digestConfig(fss, allPL())
  t.equal(fsName(cfg, digest(authed('alice'), resource('list', 'pods', 'x'))), 'aa-alice', 'same precedence: name order')
  t.equal(fsName(cfg, digest(authed('alice'), resource('get', 'pods', 'x'))), 'zz-alice')
  t.equal(fsName(cfg, digest(authed('zed'), resource('get', 'secrets', 'x'))), 'star-user', "user '*' matches anyone")
  t.equal(fsName(cfg, digest(who('nogroups'), resource('get', 'events', 'x'))), 'group-star', "group '*' matches even without groups")
  t.equal(fsName(cfg, digest(authed('bob'), resource('get', 'pods', 'x', '', 'log'))), 'sub', 'resource/subresource joined')
  t.equal(fsName(cfg, digest(authed('bob'), resource('get', 'pods', 'x'))), 'global-default', 'pods/log does not match pods')
  t.equal(fsName(cfg, digest(authed('carol'), resource('list', 'pods', 'x'))), 'global-default', "'*' counts only as the sole entry")
  t.equal(fsName(cfg, digest(authed('carol'), resource('get', 'pods', 'x'))), 'mixed-star')
  t.equal(fsName(cfg, digest(authed('dave'), resource('get', 'pods', 'x'))), 'ns-only')
  t.equal(fsName(cfg, digest(authed('dave'), resource('get', 'nodes'))), 'global-default', "namespaces ['*'] does not match cluster-scoped requests")
  t.equal(fsName(cfg, digest(authed('erin'), resource('get', 'pods', 'b'))), 'ns-list')
  t.equal(fsName(cfg, digest(authed('erin'), resource('get', 'pods', 'c'))), 'global-default')
  t.equal(fsName(cfg, digest(authed('frank'), resource('get', 'pods', 'x'))), 'core-only')
  t.equal(fsName(cfg, digest(authed('frank'), resource('get', 'deployments', 'x', 'apps'))), 'global-default')
  t.equal(fsName(cfg, digest(authed('system:serviceaccount:ns1:robot'), resource('get', 'pods', 'x'))), 'sa-exact')
  t.equal(fsName(cfg, digest(authed('system:serviceaccount:ns1:robot2'), resource('get', 'pods', 'x'))), 'global-default')
  t.equal(fsName(cfg, digest(authed('alice'), nonResource('get', '/apis'))), 'global-default', 'resource-only rules do not match non-resource requests')
})

t.test('non-resource URL matching', async (t) => {
  const rule = (urls: string[]) => ({ verbs: ['get'], nonResourceURLs: urls })
  t.ok(matchesNonResourceRule(nonResource('get', '/anything'), rule(['*'])))
  t.ok(matchesNonResourceRule(nonResource('get', '/metrics'), rule(['/metrics'])))
  t.ok(matchesNonResourceRule(nonResource('get', '/apis/apps/v1'), rule(['/apis/*'])))
  t.ok(matchesNonResourceRule(nonResource('get', '/apis/'), rule(['/apis/*'])))
  t.notOk(matchesNonResourceRule(nonResource('get', '/apis'), rule(['/apis/*'])))
  t.ok(matchesNonResourceRule(nonResource('get', '/healthz/etcd'), rule(['/healthz'])))
  t.notOk(matchesNonResourceRule(nonResource('get', '/metricsx'), rule(['/metrics'])))
  t.notOk(matchesNonResourceRule(nonResource('put', '/metrics'), rule(['/metrics'])))
})

t.test('distinguishers: ByUser, ByNamespace, none, and only for Queue levels with several queues', async (t) => {
  const everything = { subjects: [{ kind: 'Group', group: { name: 'system:authenticated' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }] }
  const pls = [...allPL(), { metadata: { name: 'one-queue' }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 5, lendablePercent: 0, limitResponse: { type: 'Queue', queuing: { queues: 1, handSize: 1, queueLengthLimit: 5 } } } } }]
  const d = digest(authed('alice'), resource('get', 'pods', 'ns1'))
  const check = (distinguisher: string | undefined, pl: string) => classify(digestConfig([...allFS(), flowSchema('t', pl, 5, everything, distinguisher)], pls), d)
  t.equal(check('ByUser', 'global-default').flowDistinguisher, 'alice')
  t.equal(check('ByNamespace', 'global-default').flowDistinguisher, 'ns1')
  const none = check(undefined, 'global-default')
  t.equal(none.flowDistinguisher, '', 'no distinguisherMethod: one flow for the whole schema')
  t.equal(none.hash, flowHash('t', ''), 'but the hash is still computed')
  const single = check('ByUser', 'one-queue')
  t.equal(single.flowDistinguisher, '')
  t.equal(single.hash, 0n)
  t.equal(check('ByUser', 'catch-all').hash, 0n, 'Reject level')
})

t.test('dangling schemas are ignored; missing mandatory objects are imagined', async (t) => {
  const fss = [...allFS(), flowSchema('orphan', 'no-such-level', 5, userRule('alice', { verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }))]
  const cfg = digestConfig(fss, allPL())
  t.same(cfg.dangling.map((f) => f.metadata.name), ['orphan'])
  t.equal(fsName(cfg, digest(authed('alice'), resource('get', 'pods', 'x'))), 'global-default')

  const onlySuggested = digestConfig(clone([...suggestedFlowSchemas]), clone([...suggestedPriorityLevels]))
  const names = onlySuggested.flowSchemas.map((f) => f.metadata.name)
  t.equal(names[0], 'exempt', 'mandatory exempt prepended')
  t.equal(names[names.length - 1], 'catch-all', 'mandatory catch-all appended')
  t.same(onlySuggested.dangling.map((f) => f.metadata.name), ['probes'], 'probes points at the exempt level, which is not an object yet')
  t.equal(onlySuggested.priorityLevels.get('exempt')?.imagined, true)
  t.equal(onlySuggested.priorityLevels.get('exempt')?.uid, '', 'imagined objects have empty UIDs')
  t.equal(onlySuggested.priorityLevels.get('catch-all')?.imagined, true)
  const masters = classify(onlySuggested, digest(authed('root', 'system:masters'), resource('get', 'pods', 'x')))
  t.equal(masters.flowSchema.metadata.name, 'exempt')
  t.equal(masters.flowSchema.metadata.uid, undefined)

  const nothing = digestConfig([], [])
  t.same(nothing.flowSchemas.map((f) => f.metadata.name), ['exempt', 'catch-all'], 'at startup only the imagined mandatory objects exist')
  t.equal(classify(nothing, digest(authed('alice'), resource('get', 'pods', 'x'))).priorityLevel.name, 'catch-all')

  const broken = digestConfig(allFS(), [...allPL(), { metadata: { name: 'bad' }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Queue', queuing: { queues: 4, handSize: 8, queueLengthLimit: 1 } } } } }])
  t.same(broken.brokenPriorityLevels.map((b) => b.name), ['bad'])
  t.notOk(broken.priorityLevels.has('bad'))
})

t.test('Dangling status condition', async (t) => {
  const fs = flowSchema('orphan', 'gone', 5, {})
  const now = '2025-01-02T03:04:05Z'
  const d = danglingCondition(fs, allPL(), now)
  t.same(d, {
    condition: { type: 'Dangling', status: 'True', lastTransitionTime: now, reason: 'NotFound', message: 'This FlowSchema references the PriorityLevelConfiguration object named "gone" but there is no such object' },
    changed: true,
  })
  const ok = flowSchema('fine', 'system', 5, {})
  const s = statusConditions(ok, allPL(), new Date(now))
  t.same(s.conditions, [{ type: 'Dangling', status: 'False', lastTransitionTime: now, reason: 'Found', message: 'This FlowSchema references the PriorityLevelConfiguration object named "system" and it exists' }])
  t.equal(s.changed, true)
  ok.status = { conditions: [{ type: 'Other', status: 'True' }, { ...s.conditions[0], lastTransitionTime: '2020-01-01T00:00:00Z' }] }
  const again = statusConditions(ok, new Set(['system']), '2030-01-01T00:00:00Z')
  t.equal(again.changed, false)
  t.same(again.conditions.map((c) => c.type), ['Other', 'Dangling'], 'other conditions are kept in place')
  t.equal(again.conditions[1].lastTransitionTime, '2020-01-01T00:00:00Z', 'an unchanged condition keeps its transition time')
  t.equal(danglingCondition(ok, defaults(), now).condition.status, 'False', 'a digest works as the level set')
  t.equal(danglingCondition(flowSchema('x', 'exempt', 5, {}), digestConfig([], []), now).condition.status, 'True', 'imagined levels do not count as objects')
})

t.test('concurrency limits of the default objects at ServerCL 600', async (t) => {
  t.equal(serverConcurrencyLimit(), 600)
  t.equal(serverConcurrencyLimit(400, 200), 600)
  t.equal(serverConcurrencyLimit(100, 50), 150)
  const plan = computeConcurrencyLimits(defaults(), 600)
  t.equal(plan.shareSum, 245)
  t.equal(plan.nominalCLSum, 602, 'ceil makes the sum exceed ServerCL slightly')
  const table: Record<string, [number, number, number, number, number]> = {
    // nominal, lendable, min, initial, maxSeats
    'exempt': [0, 0, 0, 0, 0],
    'catch-all': [13, 0, 13, 13, 0],
    'system': [74, 24, 50, 62, 12],
    'node-high': [98, 25, 73, 86, 15],
    'leader-election': [25, 0, 25, 25, 4],
    'workload-high': [98, 49, 49, 74, 15],
    'workload-low': [245, 221, 24, 135, 37],
    'global-default': [49, 25, 24, 37, 8],
  }
  for (const [name, [nominal, lendable, min, initial, maxSeats]] of Object.entries(table)) {
    const l = plan.levels.get(name)
    t.ok(l, name)
    if (l === undefined) continue
    t.same([l.nominalCL, l.lendableCL, l.minCL, l.initialCL, l.maxSeats], [nominal, lendable, min, initial, maxSeats], name)
    t.equal(l.borrowingCL, 600, `${name}: unlimited borrowing is ServerCL`)
    t.equal(l.maxCL, nominal + 600)
  }
  const limited = computeConcurrencyLimits([...allPL(), { metadata: { name: 'capped' }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 30, lendablePercent: 10, borrowingLimitPercent: 50, limitResponse: { type: 'Reject' } } } }], 600)
  const capped = limited.levels.get('capped')
  t.equal(limited.shareSum, 275)
  t.equal(capped?.nominalCL, Math.ceil(600 * 30 / 275))
  t.equal(capped?.borrowingCL, goRound(66 * 0.5))
  t.equal(capped?.lendableCL, goRound(66 * 0.1))
  t.equal(goRound(2.5), 3)
  t.equal(goRound(-2.5), -3, 'half away from zero')
  const zeroShares = computeConcurrencyLimits([{ metadata: { name: 'z' }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 0, limitResponse: { type: 'Reject' } } } }], 600)
  t.equal(zeroShares.levels.get('z')?.nominalCL, 0, 'no shares at all: nothing to hand out')
})

t.test('borrowing adjustment', async (t) => {
  const plan = computeConcurrencyLimits(defaults(), 600)
  const obs = (max: number, avg = max) => ({ duration: 10, average: avg, deviation: 0, min: 0, max })
  const inputs = (hw: Record<string, number>): BorrowingInput[] => [...plan.levels.values()].map((l) => ({
    name: l.name, exempt: l.kind === 'Exempt', nominalCL: l.nominalCL, minCL: l.minCL, maxCL: l.maxCL,
    currentCL: l.initialCL, stats: ZERO_SEAT_DEMAND, observation: obs(hw[l.name] ?? 0),
  }))
  const cls = (r: ReturnType<typeof adjustBorrowing>) => Object.fromEntries(r.levels.map((l) => [l.name, l.currentCL]))

  const idle = adjustBorrowing(inputs({}), plan.nominalCLSum)
  t.equal(idle.fairFrac, 602 / 258, 'no demand: everyone scaled up from minCL by one proportion')
  t.same(cls(idle), { 'exempt': 0, 'catch-all': 30, 'system': 117, 'node-high': 170, 'leader-election': 58, 'workload-high': 114, 'workload-low': 56, 'global-default': 56 })

  const busyExempt = adjustBorrowing(inputs({ exempt: 500 }), plan.nominalCLSum)
  t.same(cls(busyExempt), { 'exempt': 500, 'catch-all': 13, 'system': 50, 'node-high': 73, 'leader-election': 25, 'workload-high': 49, 'workload-low': 24, 'global-default': 24 }, 'remaining ≤ Σ minCL: everyone at minCL')
  t.equal(busyExempt.fairFrac, 0)

  const nominal = Object.fromEntries([...plan.levels.values()].map((l) => [l.name, l.nominalCL]))
  const squeezed = adjustBorrowing(inputs({ ...nominal, exempt: 300 }), plan.nominalCLSum)
  t.same(cls(squeezed), { 'exempt': 300, 'catch-all': 13, 'system': 53, 'node-high': 76, 'leader-election': 25, 'workload-high': 55, 'workload-low': 52, 'global-default': 27 }, 'remaining between Σ minCL and Σ lower bounds: shared proportionally')

  const busyLow = adjustBorrowing(inputs({ 'workload-low': 400 }), plan.nominalCLSum)
  const c = cls(busyLow)
  t.equal(c['workload-low'], 368, 'a busy level borrows beyond its nominal 245')
  t.equal(busyLow.fairFrac, 0.92)
  t.equal(Object.values(c).reduce((a, b) => a + b, 0), 602)
  for (const l of busyLow.levels) t.ok(l.currentCL >= l.lowerBound - 0.5, `${l.name} at or above its lower bound`)
  const wl = busyLow.levels.find((l) => l.name === 'workload-low')
  t.same([wl?.lowerBound, wl?.upperBound, wl?.target, wl?.stats.highWatermark, wl?.stats.smoothed], [245, 845, 400, 400, 400])
})

t.test('seat demand smoothing', async (t) => {
  const s = updateSeatDemandStats({ avg: 0, stdDev: 0, highWatermark: 0, smoothed: 100 }, { duration: 10, average: 10, deviation: 2, min: 0, max: 20.4 })
  t.equal(s.highWatermark, 20)
  t.equal(s.avg, 10)
  t.equal(s.stdDev, 2)
  t.equal(s.smoothed, 0.977 * 100 + 0.023 * 12)
  const up = updateSeatDemandStats(s, { duration: 10, average: 200, deviation: 0, min: 0, max: 200 })
  t.equal(up.smoothed, 200, 'never below the new envelope')
  const empty = updateSeatDemandStats(s, { duration: 0, average: NaN, deviation: NaN, min: 0, max: 3 })
  t.same(empty, { ...s, highWatermark: 3 }, 'nothing integrated: only the watermark moves')
  const nanDev = updateSeatDemandStats(ZERO_SEAT_DEMAND, { duration: 1, average: 4, deviation: NaN, min: 4, max: 4 })
  t.equal(nanDev.stdDev, 0)
})

t.test('computeConcurrencyAllocation', async (t) => {
  t.same(computeConcurrencyAllocation(6, [{ target: 1, lowerBound: 0, upperBound: 10 }, { target: 1, lowerBound: 0, upperBound: 1 }]), { allocs: [5, 1], fairProp: 5 })
  t.same(computeConcurrencyAllocation(10, [{ target: 2, lowerBound: 0, upperBound: 100 }, { target: 3, lowerBound: 0, upperBound: 100 }]), { allocs: [4, 6], fairProp: 2 })
  t.same(computeConcurrencyAllocation(4, [{ target: 2, lowerBound: 2, upperBound: 3 }, { target: 2, lowerBound: 2, upperBound: 3 }]), { allocs: [2, 2], fairProp: 1 }, 'no wiggle room from below')
  t.same(computeConcurrencyAllocation(0, [{ target: 1, lowerBound: 0, upperBound: 1 }]), { allocs: [0], fairProp: 0 })
  t.match(computeConcurrencyAllocation(1, [{ target: 2, lowerBound: 2, upperBound: 3 }]), /lower bounds sum to 2/)
  t.match(computeConcurrencyAllocation(9, [{ target: 2, lowerBound: 2, upperBound: 3 }]), /upper bounds sum to 3/)
  t.match(computeConcurrencyAllocation(1, [{ target: 1, lowerBound: 2, upperBound: 3 }]), /below its lower bound/)
  t.match(computeConcurrencyAllocation(-1, []), /negative/)
})

t.test('auto-update annotation logic', async (t) => {
  t.equal(parseGoBool('true'), true)
  t.equal(parseGoBool('T'), true)
  t.equal(parseGoBool('1'), true)
  t.equal(parseGoBool('False'), false)
  t.equal(parseGoBool('yes'), undefined)
  t.equal(parseGoBool(undefined), undefined)
  const obj = (annotation: string | undefined, generation: number) => ({ metadata: { name: 'x', generation, annotations: annotation === undefined ? {} : { [AUTO_UPDATE_ANNOTATION]: annotation } } })
  t.equal(shouldUpdateSpec(obj('true', 5)), true)
  t.equal(shouldUpdateSpec(obj('false', 1)), false)
  t.equal(shouldUpdateSpec(obj(undefined, 1)), true, 'missing annotation, unchanged by the operator')
  t.equal(shouldUpdateSpec(obj('maybe', 2)), false, 'unparseable annotation and edited')
})

t.test('config producer plan', async (t) => {
  const empty = planConfigProducer([], [])
  t.same(empty.create.map((o) => `${o.kind}/${o.metadata.name}`), [
    ...suggestedPriorityLevels.map((o) => `PriorityLevelConfiguration/${o.metadata.name}`),
    ...suggestedFlowSchemas.map((o) => `FlowSchema/${o.metadata.name}`),
    ...mandatoryPriorityLevels.map((o) => `PriorityLevelConfiguration/${o.metadata.name}`),
    ...mandatoryFlowSchemas.map((o) => `FlowSchema/${o.metadata.name}`),
  ], 'suggested levels, suggested schemas, mandatory levels, mandatory schemas')
  t.same(empty.update, [])
  t.same(empty.delete, [])
  t.notOk(Object.isFrozen(empty.create[0]), 'created objects are copies')

  const stored = (list: Obj[]): Obj[] => list.map((o) => ({ ...o, metadata: { ...o.metadata, generation: 3, uid: 'u' } }))
  t.same(planConfigProducer(stored(allFS()), stored(allPL())), { create: [], update: [], delete: [] }, 'all present and current: nothing to do')

  const fss = stored(allFS())
  const pls = stored(allPL())
  const find = (list: Obj[], name: string) => list.find((o) => o.metadata.name === name) as Obj
  // suggested, annotation false: left alone
  find(fss, 'global-default').metadata.annotations[AUTO_UPDATE_ANNOTATION] = 'false'
  find(fss, 'global-default').spec.matchingPrecedence = 9800
  // suggested, no annotation, generation 1: spec restored and annotation true
  delete find(pls, 'system').metadata.annotations
  find(pls, 'system').metadata.generation = 1
  find(pls, 'system').spec.limited.nominalConcurrencyShares = 99
  // suggested, no annotation, edited (generation 3): annotation false, spec kept
  delete find(pls, 'workload-low').metadata.annotations
  find(pls, 'workload-low').spec.limited.lendablePercent = 10
  // mandatory, annotation false and edited: stomped back, annotation true
  find(pls, 'catch-all').metadata.annotations[AUTO_UPDATE_ANNOTATION] = 'false'
  find(pls, 'catch-all').spec.limited.nominalConcurrencyShares = 50
  // mandatory exempt level: operators may tune spec.exempt
  find(pls, 'exempt').spec.exempt = { nominalConcurrencyShares: 10, lendablePercent: 20 }
  // unwanted objects
  fss.push({ metadata: { name: 'old-suggested', annotations: { [AUTO_UPDATE_ANNOTATION]: 'true' } }, spec: {} })
  fss.push({ metadata: { name: 'user-owned' }, spec: {} })
  fss.push({ metadata: { name: 'opted-out', annotations: { [AUTO_UPDATE_ANNOTATION]: 'false' } }, spec: {} })
  pls.push({ metadata: { name: 'old-level', annotations: { [AUTO_UPDATE_ANNOTATION]: 'True' } }, spec: {} })
  // a missing suggested object is recreated
  fss.splice(fss.findIndex((o) => o.metadata.name === 'probes'), 1)

  const plan = planConfigProducer(fss, pls)
  t.same(plan.create.map((o) => o.metadata.name), ['probes'])
  t.same(plan.update.map((o) => o.metadata.name), ['system', 'workload-low', 'catch-all'])
  const [system, low, catchAll] = plan.update
  t.equal(system.spec.limited.nominalConcurrencyShares, 30)
  t.equal(system.metadata.annotations[AUTO_UPDATE_ANNOTATION], 'true')
  t.equal(low.spec.limited.lendablePercent, 10, 'edited suggested object keeps its spec')
  t.equal(low.metadata.annotations[AUTO_UPDATE_ANNOTATION], 'false')
  t.equal(catchAll.spec.limited.nominalConcurrencyShares, 5)
  t.equal(catchAll.metadata.annotations[AUTO_UPDATE_ANNOTATION], 'true')
  t.equal(catchAll.metadata.uid, 'u', 'the rest of the object is kept')
  t.same(plan.delete, [{ kind: 'FlowSchema', name: 'old-suggested' }, { kind: 'PriorityLevelConfiguration', name: 'old-level' }])

  const exemptChanged = clone(find(pls, 'exempt'))
  exemptChanged.spec.type = 'Exempt'
  delete exemptChanged.spec.exempt
  t.ok(reviseIfNeeded('PriorityLevelConfiguration', exemptChanged, mandatoryPriorityLevels[0], true), 'exempt level without spec.exempt is restored')
})
