import t from 'tap'
import { compileFlowSchema, matchesFlowSchema, type RequestDigest } from '../../../actors/flow-control/classify.js'
import { QueueSet, type FlowRequest } from '../../../actors/flow-control/fair-queuing.js'
import type { Clock } from '../../../actors/flow-control/measures.js'
import { RetryAfterTracker } from '../../../actors/flow-control/retry-after.js'
import { mandatoryFlowSchemas, suggestedFlowSchemas } from '../../../src/registry/resources/flowcontrol.apiserver.orch.io/bootstrap.js'

type Obj = Record<string, any>

t.test('a compiled FlowSchema answers as matchesFlowSchema does', async (t) => {
  const custom: Obj[] = [
    { metadata: { name: 'lit-star' }, spec: { rules: [{ subjects: [{ kind: 'User', user: { name: 'a' } }], resourceRules: [{ verbs: ['get', '*'], apiGroups: ['*', ''], resources: ['pods', '*'], namespaces: ['*', 'x'] }] }] } },
    { metadata: { name: 'sub' }, spec: { rules: [{ subjects: [{ kind: 'ServiceAccount', serviceAccount: { namespace: 'ns1', name: '*' } }, { kind: 'ServiceAccount', serviceAccount: { namespace: 'ns2', name: 'sa' } }], resourceRules: [{ verbs: ['*'], apiGroups: [''], resources: ['nodes/status', 'pods'], namespaces: ['x'], clusterScope: true }] }] } },
    { metadata: { name: 'nonres' }, spec: { rules: [{ subjects: [{ kind: 'Group', group: { name: 'g' } }, { kind: 'User', user: { name: '*' } }], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/apis/*', '/x'] }] }] } },
    { metadata: { name: 'empty' }, spec: { rules: [] } },
    { metadata: { name: 'norules' }, spec: {} },
  ]
  const schemas = [...mandatoryFlowSchemas, ...suggestedFlowSchemas, ...custom]
  const users = [
    { username: 'a', groups: ['system:authenticated'] },
    { username: 'b', groups: ['g'] },
    { username: 'system:anonymous', groups: ['system:unauthenticated'] },
    { username: 'admin', groups: ['system:masters', 'system:authenticated'] },
    { username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] },
    { username: 'system:serviceaccount:ns1:any', groups: ['system:serviceaccounts', 'system:authenticated'] },
    { username: 'system:serviceaccount:ns2:sa', groups: [] },
    { username: 'system:serviceaccount:orch-system:x', groups: ['system:serviceaccounts'] },
    { username: 'system:kube-scheduler', groups: [] },
  ]
  const res = (verb: string, group: string, resource: string, subresource: string, namespace: string) => ({ isResourceRequest: true, verb, group, resource, subresource, namespace, path: '' })
  const infos = [
    res('get', '', 'pods', '', 'x'), res('list', '', 'pods', '', ''), res('get', '', 'nodes', 'status', ''), res('update', '', 'nodes', 'status', 'x'),
    res('create', 'coordination.orch.io', 'leases', '', 'orch-node-lease'), res('get', 'coordination.orch.io', 'leases', '', ''), res('watch', 'apps', 'deployments', '', 'y'),
    res('get', '', '*', '', '*'), res('delete', '*', 'pods', '', 'x'),
    ...['/healthz', '/healthz/etcd', '/readyz', '/livez', '/apis', '/apis/x', '/x', '/xy', '/x/y', '/version'].flatMap((path) => ['get', 'post'].map((verb) => ({ isResourceRequest: false, verb, group: '', resource: '', subresource: '', namespace: '', path }))),
  ]
  let checked = 0
  for (const fs of schemas) {
    const m = compileFlowSchema(fs)
    for (const user of users) {
      for (const info of infos) {
        const d: RequestDigest = { info, user }
        const want = matchesFlowSchema(fs, d)
        if (m(d) !== want) t.fail(`${fs.metadata.name} ${user.username} ${JSON.stringify(info)}: want ${want}`)
        checked++
      }
    }
  }
  t.ok(checked > 3000, `${checked} cases agree`)
})

t.test('Retry-After grows with sustained drops and shrinks when they stop (upstream dropped requests tracker)', async (t) => {
  const r = new RetryAfterTracker()
  t.equal(r.value, 1)
  const at = (s: number) => s * 1000 + 500
  r.recordDrop(at(100))
  t.equal(r.value, 1, 'one drop: 1')
  r.recordDrop(at(100)); r.recordDrop(at(100))
  t.equal(r.value, 1, 'the same second changes nothing')
  r.recordDrop(at(101))
  t.equal(r.value, 2, '4 drops within 1 s of a new second: doubled')
  for (let i = 0; i < 10; i++) r.recordDrop(at(102))
  t.equal(r.value, 2, 'no increase within retryAfter seconds of the last one')
  r.recordDrop(at(103))
  t.equal(r.value, 4)
  r.recordDrop(at(200))
  t.equal(r.value, 3, 'drops dried up: decrement on the next drop')
  for (let i = 0; i < 40; i++) { for (let k = 0; k < 200; k++) r.recordDrop(at(300 + i)) }
  t.equal(r.value, 32, 'capped at 32')
})

class ManualClock implements Clock {
  t = 1000
  now(): number { return this.t }
  setTimer(): unknown { return 0 }
  clearTimer(): void {}
}

t.test('a queue set with shared seats counts the seats taken outside it', async (t) => {
  const shared = { n: 0 }
  const clock = new ManualClock()
  const qs = new QueueSet({ name: 'pl', kind: 'Queue', concurrencyLimit: 2, queues: 4, handSize: 2, queueLengthLimit: 10 }, { clock, sharedSeats: { inUse: () => shared.n, take: (k) => { shared.n += k }, give: (k) => { shared.n -= k } } })
  shared.n = 2 // two fast-path requests hold the level's seats
  const decisions: string[] = []
  const a: FlowRequest = { flowSchema: 'fs', hash: 1 }
  t.equal(qs.submit(a, (d) => decisions.push(`a ${d}`)), 'queued', 'no free seat: queued')
  t.equal(qs.waitingRequests, 1)
  qs.dispatch()
  t.same(decisions, [], 'still no seat')
  shared.n = 1 // a fast-path request finished outside
  qs.dispatch()
  t.same(decisions, ['a dispatched'])
  t.equal(shared.n, 2, 'the dispatch took its seat in the shared counter')
  t.equal(qs.waitingRequests, 0)
  const b: FlowRequest = { flowSchema: 'fs', hash: 2 }
  t.equal(qs.submit(b), 'queued')
  qs.finish(a)
  t.equal(qs.statusOf(b)?.state, 'executing', 'finishing a gave its seat back in the shared counter and dispatched the next waiter')
  t.equal(shared.n, 2)
})
