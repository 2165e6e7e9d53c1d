// Unit: CEL evaluation for admission policies — values as upstream decodes them, cel-go's error texts, the authorizer
// library (synchronous when the decision is at hand, later when it is not), and the list and string functions added.
import t from 'tap'
import { celEvaluate, celProgram, toCelValue, CelAuthorizer, CelPending, type CelAuthzAttributes, type CelOutcome } from '../../src/machinery/cel.js'

const act = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  object: toCelValue({ metadata: { name: 'x' }, spec: { replicas: 3, ratio: 0.5, list: [3, 1, 2], names: ['b', 'a'], s: 'hello' } }),
  oldObject: null, request: {}, params: null, namespaceObject: null, authorizer: null, variables: {}, ...extra,
})

function sync(expr: string, a = act()): CelOutcome {
  const r = celEvaluate(celProgram(expr), a)
  if (r instanceof Promise) throw new Error(`${expr} did not answer at once`)
  return r
}
const value = (expr: string, a = act()): unknown => { const r = sync(expr, a); if (!r.ok) throw new Error(r.error); return r.value }

t.test('integral JSON numbers are int, others double', async (t) => {
  t.equal(value('object.spec.replicas + 1 == 4'), true)
  t.equal(value('object.spec.replicas <= 5'), true)
  t.equal(value('object.spec.ratio * 2.0'), 1)
  t.same(toCelValue({ a: [1, 1.5, { b: 2 }], c: null }), { a: [1n, 1.5, { b: 2n }], c: null })
})

t.test('errors are worded as cel-go words them, inside upstream\'s expression message', async (t) => {
  t.same(sync('object.spec.missing == 1'), { ok: false, error: "expression 'object.spec.missing == 1' resulted in error: no such key: missing", detail: 'no such key: missing' })
  t.same(sync('params.metadata.name'), { ok: false, error: "expression 'params.metadata.name' resulted in error: no such key: metadata", detail: 'no such key: metadata' })
  t.equal((sync('object.spec.list[7] == 1') as { detail: string }).detail, 'index out of bounds: 7')
  const bad = sync('object.spec.')
  t.equal(bad.ok, false)
  t.match((bad as { error: string }).error, /^compilation error: compilation failed: ERROR: <input>:1:13: Syntax error: /)
})

t.test('lists and strings libraries', async (t) => {
  t.equal(value('object.spec.list.isSorted()'), false)
  t.equal(value('[1, 2, 2].isSorted()'), true)
  t.equal(value('object.spec.list.sum()'), 6n)
  t.equal(value('object.spec.list.min()'), 1n)
  t.equal(value('object.spec.names.max()'), 'b')
  t.equal(value('object.spec.list.indexOf(2)'), 2n)
  t.equal(value('[1, 2, 1].lastIndexOf(1)'), 2n)
  t.equal(value('object.spec.s.charAt(1)'), 'e')
  t.equal(value("object.spec.s.replace('l', 'L')"), 'heLLo')
  t.equal(value("object.spec.s.replace('l', 'L', 1)"), 'heLlo')
  t.equal(value('object.spec.s.reverse()'), 'olleh')
  t.equal(value("'abc123def456'.find('[0-9]+')"), '123')
  t.same(value("'abc123def456'.findAll('[0-9]+')"), ['123', '456'])
  t.equal((sync('[].min()') as { detail: string }).detail, 'min(list) argument must not be empty')
})

t.test('the authorizer: cached decisions at once, others later; requestResource; serviceAccount', async (t) => {
  const seen: CelAuthzAttributes[] = []
  const authz = new CelAuthorizer({ user: 'alice', groups: ['team'], uid: 'u1' }, (a) => {
    seen.push(a)
    if (a.verb === 'watch') return new Promise((resolve) => setTimeout(() => resolve({ allowed: true, reason: 'later', error: '' }), 5))
    return { allowed: a.verb === 'get', reason: `${a.user} ${a.verb}`, error: '' }
  }, { group: 'apps', resource: 'deployments', subresource: 'scale', namespace: 'ns', name: 'd' })
  const a = act({ authorizer: authz })
  t.equal(value("authorizer.group('').resource('pods').namespace('ns').name('p').subresource('log').check('get').allowed()", a), true)
  t.match(seen.at(-1), { user: 'alice', groups: ['team'], isResourceRequest: true, apiGroup: '', apiVersion: '*', resource: 'pods', subresource: 'log', namespace: 'ns', name: 'p', verb: 'get' })
  t.equal(value("authorizer.requestResource.check('update').reason()", a), 'alice update')
  t.match(seen.at(-1), { apiGroup: 'apps', resource: 'deployments', subresource: 'scale', namespace: 'ns', name: 'd', verb: 'update' })
  t.equal(value("authorizer.path('/healthz').check('get').allowed()", a), true)
  t.match(seen.at(-1), { isResourceRequest: false, path: '/healthz' })
  t.equal(value("authorizer.serviceAccount('kube-system', 'robot').group('').resource('secrets').check('list').reason()", a), 'system:serviceaccount:kube-system:robot list')
  t.same(seen.at(-1)?.groups, ['system:serviceaccounts', 'system:serviceaccounts:kube-system'])
  t.equal((sync("authorizer.group('').resource(' ').check('get').allowed()", a) as { detail: string }).detail, 'resource must not be empty')
  const later = celEvaluate(celProgram("authorizer.group('').resource('pods').check('watch').reason()"), a)
  t.ok(later instanceof Promise, 'an undecided check answers later')
  t.same(await later, { ok: true, value: 'later' })
})

t.test('an evaluation that meets something pending runs again once it settles', async (t) => {
  let ready = false
  const variables = {}
  Object.defineProperty(variables, 'v', { enumerable: true, get() { if (ready) return 5n; throw new CelPending(new Promise<void>((resolve) => setTimeout(() => { ready = true; resolve() }, 5))) } })
  const r = celEvaluate(celProgram('[1, 2].all(x, variables.v > x)'), act({ variables }))
  t.ok(r instanceof Promise)
  t.same(await r, { ok: true, value: true })
})
