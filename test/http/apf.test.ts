// Black-box tests of API Priority and Fairness over real HTTP: the bootstrap configuration (present, restored,
// defaulted, validated), the Dangling condition, classification headers, a Reject level under concurrent load, and
// the max-in-flight fallback.
import t, { type Test } from 'tap'
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type TestServer, type Reply } from '../helpers/server.js'
import { waitFor } from '../helpers/wait.js'

type Obj = Record<string, any>

const G = 'flowcontrol.apiserver.orch.io'
const FS = `/apis/${G}/v1/flowschemas`
const PL = `/apis/${G}/v1/prioritylevelconfigurations`
const ANNOTATION = 'apf.orch.io/autoupdate-spec'
const TOO_MANY = 'Too many requests, please try again later.'

const MANDATORY_FS = ['catch-all', 'exempt']
const SUGGESTED_FS = ['global-default', 'kube-controller-manager', 'kube-scheduler', 'kube-system-service-accounts', 'probes', 'service-accounts', 'system-leader-election', 'system-node-high', 'system-nodes']
const MANDATORY_PL = ['catch-all', 'exempt']
const SUGGESTED_PL = ['global-default', 'leader-election', 'node-high', 'system', 'workload-high', 'workload-low']

const tokensDir = mkdtempSync(join(tmpdir(), 'orch-apf-'))
const tokenFile = join(tokensDir, 'tokens.csv')
writeFileSync(tokenFile, 'slowpoke-token,slowpoke,slowpoke-uid\nalice-token,alice,alice-uid,"team-a"\ncarol-token,carol,carol-uid\ndave-token,dave,dave-uid\n')

let s: TestServer
const admin = (): Record<string, string> => ({ authorization: `Bearer ${s.adminToken}` })
const as = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })

t.before(async () => {
  s = await startServer({
    args: ['--token-auth-file', tokenFile, '--authorization-mode', 'AlwaysAllow', '--max-requests-inflight', '100', '--max-mutating-requests-inflight', '100'],
  })
})
t.teardown(async () => {
  await s?.stop()
  rmSync(tokensDir, { recursive: true, force: true })
})

async function get(path: string): Promise<Reply> { return s.request('GET', path, undefined, admin()) }
async function names(path: string): Promise<string[]> {
  const r = await get(path)
  return (r.json.items as Obj[]).map((o) => o.metadata.name).sort()
}
t.test('the mandatory and suggested objects exist after start, annotated for auto-update', async (t) => {
  t.same(await names(FS), [...MANDATORY_FS, ...SUGGESTED_FS].sort())
  t.same(await names(PL), [...MANDATORY_PL, ...SUGGESTED_PL].sort())
  const exempt = (await get(`${PL}/exempt`)).json
  t.same(exempt.spec, { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } })
  t.equal(exempt.metadata.annotations[ANNOTATION], 'true')
  const catchAll = (await get(`${FS}/catch-all`)).json
  t.equal(catchAll.spec.matchingPrecedence, 10000)
  t.same(catchAll.spec.distinguisherMethod, { type: 'ByUser' })
  t.equal(catchAll.metadata.annotations[ANNOTATION], 'true')
  const wl = (await get(`${PL}/workload-low`)).json
  t.same(wl.spec.limited, { nominalConcurrencyShares: 100, lendablePercent: 90, limitResponse: { type: 'Queue', queuing: { queues: 128, handSize: 6, queueLengthLimit: 50 } } })
})

t.test('every FlowSchema carries a Dangling condition', async (t) => {
  const gd = await waitFor('the Dangling condition of global-default', async () => {
    const o = (await get(`${FS}/global-default`)).json
    return o.status?.conditions?.find((c: Obj) => c.type === 'Dangling')
  })
  t.equal(gd.status, 'False')
  t.equal(gd.reason, 'Found')
  t.equal(gd.message, 'This FlowSchema references the PriorityLevelConfiguration object named "global-default" and it exists')
  t.match(gd.lastTransitionTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
})

t.test('deleted mandatory and suggested objects come back; user changes of a suggested one are stomped', async (t) => {
  const before = (await get(`${FS}/exempt`)).json.metadata.uid
  for (const p of [`${FS}/exempt`, `${PL}/catch-all`, `${FS}/global-default`]) {
    const r = await s.request('DELETE', p, undefined, admin())
    t.equal(r.status, 200, `delete ${p}`)
  }
  for (const p of [`${FS}/exempt`, `${PL}/catch-all`, `${FS}/global-default`]) {
    const o = await waitFor(`${p} to be recreated`, async () => { const r = await get(p); return r.status === 200 ? r.json : undefined })
    t.equal(o.metadata.annotations[ANNOTATION], 'true', `${p} annotated`)
  }
  t.not((await get(`${FS}/exempt`)).json.metadata.uid, before, 'a new object')
  // A suggested level changed by a user while still annotated true is put back.
  const sys = (await get(`${PL}/system`)).json
  sys.spec.limited.nominalConcurrencyShares = 7
  t.equal((await s.request('PUT', `${PL}/system`, sys, admin())).status, 200)
  await waitFor('system to be stomped back', async () => ((await get(`${PL}/system`)).json.spec.limited.nominalConcurrencyShares === 30 ? true : undefined))
  // Annotated false, it is left alone.
  const sys2 = (await get(`${PL}/system`)).json
  sys2.metadata.annotations[ANNOTATION] = 'false'
  sys2.spec.limited.nominalConcurrencyShares = 8
  t.equal((await s.request('PUT', `${PL}/system`, sys2, admin())).status, 200)
  await new Promise((r) => setTimeout(r, 1000))
  t.equal((await get(`${PL}/system`)).json.spec.limited.nominalConcurrencyShares, 8, 'annotated false: kept')
})

t.test('defaults on create', async (t) => {
  const r = await s.request('POST', PL, { apiVersion: `${G}/v1`, kind: 'PriorityLevelConfiguration', metadata: { name: 'defaults' }, spec: { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: {} } } } }, admin())
  t.equal(r.status, 201)
  t.same(r.json.spec, { type: 'Limited', limited: { nominalConcurrencyShares: 30, lendablePercent: 0, limitResponse: { type: 'Queue', queuing: { queues: 64, handSize: 8, queueLengthLimit: 50 } } } })
  const f = await s.request('POST', FS, { apiVersion: `${G}/v1`, kind: 'FlowSchema', metadata: { name: 'defaults' }, spec: { priorityLevelConfiguration: { name: 'defaults' } }, status: { conditions: [{ type: 'Dangling', status: 'True' }] } }, admin())
  t.equal(f.status, 201)
  t.equal(f.json.spec.matchingPrecedence, 1000)
  t.same(f.json.status, {}, 'status is not taken from a create: it starts as the empty status upstream prints')
})

function invalidStatus(kind: string, name: string, causes: Obj[]): Obj {
  const message = `${kind}.${G} "${name}" is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join(', ')}`
  return {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: causes.length === 1 ? message : `${kind}.${G} "${name}" is invalid: [${causes.map((c) => `${c.field}: ${c.message}`).join(', ')}]`,
    reason: 'Invalid', details: { name, group: G, kind, causes }, code: 422,
  }
}

t.test('validation errors are 422 with one cause per problem', async (t) => {
  const fs = await s.request('POST', FS, {
    apiVersion: `${G}/v1`, kind: 'FlowSchema', metadata: { name: 'bad-fs' },
    spec: {
      matchingPrecedence: 1, priorityLevelConfiguration: { name: 'global-default' }, distinguisherMethod: { type: 'ByGroup' },
      rules: [{ subjects: [], resourceRules: [{ verbs: ['get', '*'], apiGroups: [''], resources: ['pods'], namespaces: [] }] }],
    },
  }, admin())
  t.equal(fs.status, 422)
  t.equal(fs.json.reason, 'Invalid')
  t.equal(fs.json.code, 422)
  t.same(fs.json.details.causes.map((c: Obj) => c.field).sort(), [
    'spec.distinguisherMethod.type', 'spec.matchingPrecedence', 'spec.rules[0].resourceRules[0].namespaces',
    'spec.rules[0].resourceRules[0].verbs', 'spec.rules[0].subjects',
  ])
  t.ok(fs.json.details.causes.some((c: Obj) => c.reason === 'FieldValueNotSupported' && c.message.startsWith('Unsupported value: "ByGroup"') || c.field === 'spec.distinguisherMethod.type'))

  const pl = await s.request('POST', PL, {
    apiVersion: `${G}/v1`, kind: 'PriorityLevelConfiguration', metadata: { name: 'bad-pl' },
    spec: { type: 'Limited', limited: { nominalConcurrencyShares: 5, lendablePercent: 101, limitResponse: { type: 'Queue', queuing: { queues: 10, handSize: 20, queueLengthLimit: 5 } } } },
  }, admin())
  t.same(pl.json, invalidStatus('PriorityLevelConfiguration', 'bad-pl', [
    { reason: 'FieldValueInvalid', message: 'Invalid value: 20: should not be greater than queues (10)', field: 'spec.limited.limitResponse.queuing.handSize' },
    { reason: 'FieldValueInvalid', message: 'Invalid value: 101: must be between 0 and 100, inclusive', field: 'spec.limited.lendablePercent' },
  ]))

  const ex = await s.request('POST', PL, { apiVersion: `${G}/v1`, kind: 'PriorityLevelConfiguration', metadata: { name: 'not-exempt' }, spec: { type: 'Exempt', exempt: {} } }, admin())
  t.equal(ex.status, 422)
  t.same(ex.json.details.causes, [{ reason: 'FieldValueInvalid', message: "Invalid value: \"Exempt\": type must be 'Exempt' if and only if name is 'exempt'", field: 'spec.type' }])

  // The mandatory objects' specs are fixed.
  const ca = (await get(`${FS}/catch-all`)).json
  ca.spec.matchingPrecedence = 9999
  const up = await s.request('PUT', `${FS}/catch-all`, ca, admin())
  t.equal(up.status, 422)
  t.equal(up.json.details.causes[0].field, 'spec')
  t.equal((await get(`${FS}/bad-fs`)).status, 404, 'nothing was stored')
})

t.test('a FlowSchema whose level does not exist is Dangling until the level appears', async (t) => {
  const f = await s.request('POST', FS, { apiVersion: `${G}/v1`, kind: 'FlowSchema', metadata: { name: 'orphan' }, spec: { matchingPrecedence: 600, priorityLevelConfiguration: { name: 'later' }, rules: [] } }, admin())
  t.equal(f.status, 201)
  const cond = async (status: string) => {
    const o = (await get(`${FS}/orphan`)).json
    const c = o.status?.conditions?.find((x: Obj) => x.type === 'Dangling')
    return c?.status === status ? c : undefined
  }
  const d = await waitFor('Dangling True', () => cond('True'))
  t.equal(d.reason, 'NotFound')
  t.equal(d.message, 'This FlowSchema references the PriorityLevelConfiguration object named "later" but there is no such object')
  const p = await s.request('POST', PL, { apiVersion: `${G}/v1`, kind: 'PriorityLevelConfiguration', metadata: { name: 'later' }, spec: { type: 'Limited', limited: { limitResponse: { type: 'Reject' } } } }, admin())
  t.equal(p.status, 201)
  const found = await waitFor('Dangling False', () => cond('False'))
  t.equal(found.reason, 'Found')
})

t.test('classified responses carry the UIDs of the FlowSchema and the priority level', async (t) => {
  const uid = async (path: string) => (await get(path)).json.metadata.uid as string
  const anon = await s.requestAs(null, 'GET', '/api/v1/namespaces/default/configmaps')
  t.equal(anon.headers['x-orch-pf-flowschema-uid'], await uid(`${FS}/global-default`), 'anonymous: global-default')
  t.equal(anon.headers['x-orch-pf-prioritylevel-uid'], await uid(`${PL}/global-default`))
  const masters = await s.request('GET', '/api/v1/namespaces', undefined, admin())
  t.equal(masters.headers['x-orch-pf-flowschema-uid'], await uid(`${FS}/exempt`), 'system:masters: exempt')
  t.equal(masters.headers['x-orch-pf-prioritylevel-uid'], await uid(`${PL}/exempt`))
  const probe = await s.requestAs(null, 'GET', '/readyz')
  t.equal(probe.status, 200)
  t.equal(probe.headers['x-orch-pf-flowschema-uid'], await uid(`${FS}/probes`), 'health probes: probes')
  const err = await s.request('GET', '/api/v1/namespaces/default/configmaps/none', undefined, as('alice-token'))
  t.equal(err.status, 404)
  t.equal(err.headers['x-orch-pf-flowschema-uid'], await uid(`${FS}/global-default`), 'error answers too')
  // The raw bytes: each header on its own line, once (the two are written as one prepared block), on a watch too.
  for (const path of ['/api/v1/namespaces/default/configmaps/none', '/api/v1/namespaces/default/configmaps?watch=1']) {
    const w = rawRequest(path, 'alice-token')
    await w.started
    await new Promise((r) => setTimeout(r, 100))
    w.socket.destroy()
    const head = (await w.answered).split('\r\n\r\n')[0].split('\r\n')
    t.same(head.filter((l) => /^x-orch-pf-/i.test(l)), [
      `X-Orch-PF-FlowSchema-UID: ${await uid(`${FS}/global-default`)}`,
      `X-Orch-PF-PriorityLevel-UID: ${await uid(`${PL}/global-default`)}`,
    ], `${path}: both headers, each on its line`)
  }
})

t.test('one identity alternating between requests of different FlowSchemas is classified by each request', async (t) => {
  // The front-end remembers each identity's last classification: every attribute a rule looks at must still count.
  const fs = await s.request('POST', FS, {
    apiVersion: `${G}/v1`, kind: 'FlowSchema', metadata: { name: 'dave-secrets' },
    spec: {
      matchingPrecedence: 600, priorityLevelConfiguration: { name: 'workload-low' },
      rules: [{
        subjects: [{ kind: 'User', user: { name: 'dave' } }],
        resourceRules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['secrets', 'pods/status'], namespaces: ['team-a'] }],
        nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/version'] }],
      }],
    },
  }, admin())
  t.equal(fs.status, 201)
  const mine = fs.json.metadata.uid as string
  const global = (await get(`${FS}/global-default`)).json.metadata.uid as string
  const schemaOf = async (method: string, path: string) => (await s.request(method, path, undefined, as('dave-token'))).headers['x-orch-pf-flowschema-uid']
  await waitFor('dave-secrets to be in force', async () => (await schemaOf('GET', '/api/v1/namespaces/team-a/secrets')) === mine ? true : undefined)
  const cases: Array<[string, string, string, string]> = [
    ['GET', '/api/v1/namespaces/team-a/secrets', mine, 'the rule'],
    ['GET', '/api/v1/namespaces/team-b/secrets', global, 'another namespace'],
    ['GET', '/api/v1/namespaces/team-a/secrets', mine, 'back'],
    ['GET', '/api/v1/namespaces/team-a/configmaps', global, 'another resource'],
    ['GET', '/api/v1/namespaces/team-a/secrets/x', mine, 'get by name'],
    ['DELETE', '/api/v1/namespaces/team-a/secrets/x', global, 'another verb'],
    ['GET', '/api/v1/namespaces/team-a/pods/p/status', mine, 'a subresource in the rule'],
    ['GET', '/api/v1/namespaces/team-a/pods/p', global, 'its resource without the subresource'],
    ['GET', '/apis/apps/v1/namespaces/team-a/secrets', global, 'another API group'],
    ['GET', '/version', mine, 'a non-resource URL in the rule'],
    ['GET', '/healthz', (await get(`${FS}/probes`)).json.metadata.uid as string, 'another non-resource URL'],
    ['GET', '/version', mine, 'back'],
    ['GET', '/api/v1/namespaces/team-a/secrets', mine, 'a resource request after a non-resource one'],
  ]
  for (const [method, path, want, what] of cases) t.equal(await schemaOf(method, path), want, `${method} ${path}: ${what}`)
  t.equal((await s.request('DELETE', `${FS}/dave-secrets`, undefined, admin())).status, 200)
})

t.test('a user routed to a one-seat Reject level gets 429 under concurrent load; system:masters never does', async (t) => {
  // ServerCL = 200 and the shares sum to 246 with this level: NominalCL = ceil(200 * 1 / 246) = 1, no lending, no borrowing.
  const pl = await s.request('POST', PL, {
    apiVersion: `${G}/v1`, kind: 'PriorityLevelConfiguration', metadata: { name: 'one-seat' },
    spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, lendablePercent: 0, borrowingLimitPercent: 0, limitResponse: { type: 'Reject' } } },
  }, admin())
  t.equal(pl.status, 201)
  const fs = await s.request('POST', FS, {
    apiVersion: `${G}/v1`, kind: 'FlowSchema', metadata: { name: 'slowpoke' },
    spec: {
      matchingPrecedence: 500, priorityLevelConfiguration: { name: 'one-seat' },
      rules: [{ subjects: [{ kind: 'User', user: { name: 'slowpoke' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }] }],
    },
  }, admin())
  t.equal(fs.status, 201)
  await waitFor('slowpoke to be classified by its FlowSchema', async () => {
    const r = await s.request('GET', '/api/v1/namespaces/default/configmaps', undefined, as('slowpoke-token'))
    return r.headers['x-orch-pf-flowschema-uid'] === fs.json.metadata.uid ? true : undefined
  })
  const cm = (owner: string, i: number) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${owner}-${i}-${Math.random().toString(36).slice(2, 8)}` }, data: { v: 'x'.repeat(2000) } })
  let throttled: Reply | undefined
  let mastersRejected = 0
  let mastersDone = 0
  for (let round = 0; round < 5 && throttled === undefined; round++) {
    const slow = Array.from({ length: 40 }, (_, i) => s.request('POST', '/api/v1/namespaces/default/configmaps', cm('slow', i), as('slowpoke-token')))
    const masters = Array.from({ length: 40 }, (_, i) => s.request('POST', '/api/v1/namespaces/default/configmaps', cm('admin', i), admin()))
    const [sr, mr] = await Promise.all([Promise.all(slow), Promise.all(masters)])
    throttled = sr.find((r) => r.status === 429)
    for (const r of sr) t.ok(r.status === 201 || r.status === 429, `slowpoke: ${r.status}`)
    for (const r of mr) { mastersDone++; if (r.status !== 201) mastersRejected++ }
  }
  t.ok(throttled, 'slowpoke got a 429')
  if (throttled) {
    t.equal(throttled.text, `${TOO_MANY}\n`, 'plain text, as Go http.Error writes it')
    t.equal(throttled.headers['x-content-type-options'], 'nosniff')
    t.match(String(throttled.headers['content-type']), /^text\/plain/)
    t.match(String(throttled.headers['retry-after']), /^\d+$/)
    t.equal(throttled.headers['x-orch-pf-flowschema-uid'], fs.json.metadata.uid, 'a rejection is classified too')
    t.equal(throttled.headers['x-orch-pf-prioritylevel-uid'], pl.json.metadata.uid)
  }
  t.equal(mastersRejected, 0, `system:masters: all ${mastersDone} created`)
})

t.test('a one-seat Queue level queues concurrent requests instead of rejecting them, and rejects past its queue length', async (t) => {
  const mk = async (name: string, queueLengthLimit: number, user: string, precedence: number) => {
    const pl = await s.request('POST', PL, {
      apiVersion: `${G}/v1`, kind: 'PriorityLevelConfiguration', metadata: { name },
      spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, lendablePercent: 0, borrowingLimitPercent: 0, limitResponse: { type: 'Queue', queuing: { queues: 4, handSize: 2, queueLengthLimit } } } },
    }, admin())
    t.equal(pl.status, 201)
    const fs = await s.request('POST', FS, {
      apiVersion: `${G}/v1`, kind: 'FlowSchema', metadata: { name },
      spec: {
        matchingPrecedence: precedence, priorityLevelConfiguration: { name }, distinguisherMethod: { type: 'ByNamespace' },
        rules: [{ subjects: [{ kind: 'User', user: { name: user } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }] }],
      },
    }, admin())
    t.equal(fs.status, 201)
    await waitFor(`${user} to be classified by ${name}`, async () => {
      const r = await s.request('GET', '/api/v1/namespaces/default/configmaps?limit=1', undefined, as(`${user}-token`))
      return r.headers['x-orch-pf-prioritylevel-uid'] === pl.json.metadata.uid ? true : undefined
    })
  }
  await mk('one-queue', 200, 'alice', 400)
  const body = (i: number) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `q-${i}-${Math.random().toString(36).slice(2, 8)}` }, data: { v: 'x'.repeat(2000) } })
  const rs = await Promise.all(Array.from({ length: 60 }, (_, i) => s.request('POST', '/api/v1/namespaces/default/configmaps', body(i), as('alice-token'))))
  t.same([...new Set(rs.map((r) => r.status))], [201], 'every queued request was served')

  // queueLengthLimit 1 with the one seat busy: most of a burst has no room to wait.
  await mk('short-queue', 1, 'slowpoke', 300)
  let throttled: Reply | undefined
  for (let round = 0; round < 5 && throttled === undefined; round++) {
    const burst = await Promise.all(Array.from({ length: 40 }, (_, i) => s.request('POST', '/api/v1/namespaces/default/configmaps', body(i), as('slowpoke-token'))))
    for (const r of burst) t.ok(r.status === 201 || r.status === 429, `short queue: ${r.status}`)
    throttled = burst.find((r) => r.status === 429)
  }
  t.ok(throttled, 'a request found its queues full')
  if (throttled) t.match(String(throttled.headers['retry-after']), /^\d+$/)
})

const DEBUG = '/debug/api_priority_and_fairness'

/** A dump as rows of trimmed cells keyed by the header's column names. */
async function dump(what: string, query = ''): Promise<Array<Record<string, string>>> {
  const r = await get(`${DEBUG}/dump_${what}${query}`)
  if (r.status !== 200) throw new Error(`dump_${what}: ${r.status} ${r.text}`)
  const [head, ...rows] = r.text.split('\n').filter((l) => l !== '').map((l) => l.split(',').map((c) => c.trim()))
  return rows.map((cells) => Object.fromEntries(head.map((h, i) => [h, cells[i]])))
}

/** A request on its own socket, to be cut off client-side (destroy) while the server still holds it. */
function rawRequest(path: string, token: string): { socket: net.Socket; answered: Promise<string>; started: Promise<void> } {
  const socket = net.connect(s.port, '127.0.0.1')
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n\r\n`)
  let text = ''
  const started = new Promise<void>((resolve) => socket.once('data', () => resolve()))
  socket.on('data', (d) => { text += d.toString() })
  const answered = new Promise<string>((resolve) => { socket.on('close', () => resolve(text)); socket.on('error', () => undefined) })
  return { socket, answered, started }
}

/**
 * A level of one seat and one queue of length 1 for `user` alone: while the seat is busy, a second waiting request
 * would be refused (queue-full). Returns once the user is classified there and the FlowSchema's status is written
 * (from then on only the test writes).
 */
async function oneSeatLevel(t: Test, name: string, user: string, precedence: number): Promise<void> {
  const pl = await s.request('POST', PL, {
    apiVersion: `${G}/v1`, kind: 'PriorityLevelConfiguration', metadata: { name },
    spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, lendablePercent: 0, borrowingLimitPercent: 0, limitResponse: { type: 'Queue', queuing: { queues: 1, handSize: 1, queueLengthLimit: 1 } } } },
  }, admin())
  t.equal(pl.status, 201)
  const fs = await s.request('POST', FS, {
    apiVersion: `${G}/v1`, kind: 'FlowSchema', metadata: { name },
    spec: {
      matchingPrecedence: precedence, priorityLevelConfiguration: { name },
      rules: [{ subjects: [{ kind: 'User', user: { name: user } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }] }],
    },
  }, admin())
  t.equal(fs.status, 201)
  await waitFor(`${user} to be classified by ${name}`, async () => {
    const r = await s.request('GET', '/api/v1/namespaces/default/configmaps?limit=1', undefined, as(`${user}-token`))
    return r.headers['x-orch-pf-prioritylevel-uid'] === pl.json.metadata.uid ? true : undefined
  })
  await waitFor(`the Dangling condition of ${name}`, async () => ((await get(`${FS}/${name}`)).json.status?.conditions?.length ? true : undefined))
}

/**
 * A request that holds its seat until the next write anywhere (or 3 s, then 504): a read at the next
 * resourceVersion, which no write has taken yet. Resolves once the write happened... or answers 404 (no such object).
 */
async function seatHolder(user: string, path = '/api/v1/namespaces/default/podtemplates/none'): Promise<{ done: Promise<Reply>; finished: () => boolean }> {
  const cm = await s.request('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'rv-' } }, admin())
  if (cm.status !== 201) throw new Error(`anchor write: ${cm.status}`)
  let finished = false
  const done = s.request('GET', `${path}?resourceVersion=${Number(cm.json.metadata.resourceVersion) + 1}`, undefined, as(`${user}-token`)).then((r) => { finished = true; return r })
  return { done, finished: () => finished }
}

/** The write a seat holder waits for. */
async function releaseHolder(): Promise<void> {
  const r = await s.request('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'release-' } }, admin())
  if (r.status !== 201) throw new Error(`release write: ${r.status}`)
}

t.test('a queued request whose client disconnects is withdrawn from its queue', async (t) => {
  await oneSeatLevel(t, 'withdraw', 'carol', 200)
  const level = async () => (await dump('priority_levels')).find((r) => r.PriorityLevelName === 'withdraw') as Record<string, string>
  const carols = async () => (await dump('requests', '?includeRequestDetails=1')).filter((r) => r.PriorityLevelName === 'withdraw')
  // A: holds the one seat.
  const aPath = '/api/v1/namespaces/default/podtemplates/none'
  const holder = await seatHolder('carol', aPath)
  const a = holder.done
  const executing = await waitFor('A to execute', async () => (await carols()).find((r) => r.APIPath === aPath))
  t.match(executing, { FlowSchemaName: 'withdraw', QueueIndex: '-1', RequestIndexInQueue: '-1', InitialSeats: '1', UserName: 'carol', Verb: 'get', Namespace: 'default', Name: 'none', APIVersion: 'v1', Resource: 'podtemplates' }, 'A took the seat itself')
  // B: queued behind A; then its client goes away.
  const b = rawRequest('/api/v1/namespaces/default/configmaps?limit=1', 'carol-token')
  const waiting = await waitFor('B to wait in the queue', async () => (await carols()).find((r) => r.RequestIndexInQueue === '0'))
  t.match(waiting, { QueueIndex: '0', Verb: 'list', Resource: 'configmaps', StartTime: '0001-01-01T00:00:00Z' }, 'B waits at the head of queue 0')
  t.match((await dump('queues')).find((r) => r.PriorityLevelName === 'withdraw'), { Index: '0', PendingRequests: '1', InitialSeatsSum: '1', MaxSeatsSum: '1' })
  t.match(await level(), { WaitingRequests: '1', ExecutingRequests: '1', IsIdle: 'false', CancelledRequests: '0' })
  b.socket.destroy()
  await b.answered
  await waitFor('B to be withdrawn', async () => ((await level()).WaitingRequests === '0' ? true : undefined))
  t.match(await level(), { WaitingRequests: '0', ExecutingRequests: '1', CancelledRequests: '1', TimedoutRequests: '0' }, 'B left its queue as cancelled')
  t.same((await carols()).map((r) => r.APIPath), [aPath], 'only A is left')
  // C: finds room in the queue only because B left it.
  const c = s.request('GET', '/api/v1/namespaces/default/configmaps?limit=1', undefined, as('carol-token')).then((r) => ({ r, aDoneBefore: holder.finished() }))
  await waitFor('C to wait in the queue', async () => ((await level()).WaitingRequests === '1' ? true : undefined))
  t.notOk(holder.finished(), 'A still holds the seat')
  // Release A: the write it waits for.
  await releaseHolder()
  const [ar, { r: cr, aDoneBefore }] = await Promise.all([a, c])
  t.equal(ar.status, 404, 'A held its seat until the write released it (not the 3 s limit)')
  t.equal(cr.status, 200, `the request after the withdrawn one was queued and served (not refused as queue-full): ${cr.text.slice(0, 80)}`)
  t.ok(aDoneBefore, 'and it ran once A had finished')
  await waitFor('the level to be idle', async () => ((await level()).IsIdle === 'true' ? true : undefined))
  t.match(await level(), { CancelledRequests: '1', RejectedRequests: '1' })
})

t.test('a write whose events reach ten or more watchers gets final seats for the fan-out (upstream work estimate)', async (t) => {
  await oneSeatLevel(t, 'fanout', 'dave', 210)
  // 15 watches of every namespace, 10 of "default", 5 of "other": a write in "default" may reach 25 of them.
  const watches = [
    ...Array.from({ length: 15 }, () => rawRequest('/api/v1/configmaps?watch=1', s.adminToken)),
    ...Array.from({ length: 10 }, () => rawRequest('/api/v1/namespaces/default/configmaps?watch=1', s.adminToken)),
    ...Array.from({ length: 5 }, () => rawRequest('/api/v1/namespaces/other/configmaps?watch=1', s.adminToken)),
  ]
  t.teardown(() => { for (const w of watches) w.socket.destroy() })
  await Promise.all(watches.map((w) => w.started))
  const daves = async () => (await dump('requests')).filter((r) => r.PriorityLevelName === 'fanout')
  // The counts reach the front-ends with their next report: a queued write shows its estimate in dump_requests.
  let row: Record<string, string> | undefined
  // Attempts until the counts have arrived (each front-end reports every second; ten quick attempts could all
  // finish before the first report, which made this test fail now and then).
  const until = Date.now() + 10_000
  while (Date.now() < until) {
    const holder = await seatHolder('dave')
    // Executing, not queued: the last round's write may still hold the seat for its 15 ms of final seats, and a write
    // sent while the holder waits finds the one-place queue full (429).
    await waitFor('the holder to execute', async () => {
      const rows = await daves()
      return rows.length === 1 && rows[0].RequestIndexInQueue === '-1' ? true : undefined
    })
    const write = s.request('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'fan-' } }, as('dave-token'))
    row = await waitFor('the write to wait', async () => (await daves()).find((r) => r.RequestIndexInQueue === '0'))
    t.notOk(holder.finished(), 'the holder still holds the seat')
    await releaseHolder()
    t.equal((await holder.done).status, 404)
    t.equal((await write).status, 201)
    if (row.AdditionalLatency === '15ms') break
  }
  // ceil(25 / 10) = 3 seats for 5 ms each; the level's max seats per request is 1, so 1 seat for 15 ms (same work).
  t.match(row, { InitialSeats: '1', FinalSeats: '1', AdditionalLatency: '15ms' })
  // The final seats go back after their latency: the level serves again (a leaked seat would leave this one waiting
  // out its 15 s queue limit and answer 429).
  t.equal((await s.request('GET', '/api/v1/namespaces/default/configmaps?limit=1', undefined, as('dave-token'))).status, 200, 'the seats came back')
  t.match((await dump('priority_levels')).find((r) => r.PriorityLevelName === 'fanout'), { WaitingRequests: '0', TimedoutRequests: '0' })
})

t.test('the debug dumps: upstream columns, text tables', async (t) => {
  const raw = await get(`${DEBUG}/dump_priority_levels`)
  t.equal(raw.status, 200)
  t.match(String(raw.headers['content-type']), /^text\/plain/)
  const lines = raw.text.split('\n')
  t.match(lines[0], /^PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, ExecutingRequests, DispatchedRequests, RejectedRequests, TimedoutRequests, CancelledRequests$/)
  t.equal(lines[lines.length - 1], '', 'every line ends with a newline')
  // Columns are aligned: every row has its cells at the header's offsets.
  const offsets = (l: string) => [...l.matchAll(/, +/g)].map((m) => (m.index as number) + m[0].length)
  for (const l of lines.slice(1, -1)) t.same(offsets(l), offsets(lines[0]), `aligned: ${l.split(',')[0]}`)
  const pls = await dump('priority_levels')
  t.same(pls.map((r) => r.PriorityLevelName), [...pls.map((r) => r.PriorityLevelName)].sort(), 'levels in name order')
  t.ok(pls.some((r) => r.PriorityLevelName === 'exempt' && Number(r.ExecutingRequests) >= 1), 'the dump itself executes on exempt')
  const queues = await dump('queues')
  t.equal(queues.filter((r) => r.PriorityLevelName === 'global-default').length, 128, 'one row per queue of a Queue level')
  t.notOk(queues.some((r) => r.PriorityLevelName === 'exempt' || r.PriorityLevelName === 'catch-all'), 'levels without queues have no rows')
  t.match(queues[0], { NextDispatchR: /^\d+\.\d{8}ss$/, TotalWorkSum: /^\d+\.\d{8}ss$/ })
  const plain = (await get(`${DEBUG}/dump_requests`)).text.split('\n')[0]
  t.match(plain, /^PriorityLevelName, FlowSchemaName, QueueIndex, RequestIndexInQueue, FlowDistingsher, ArriveTime, +InitialSeats, FinalSeats, AdditionalLatency, StartTime *$/)
  const own = (await dump('requests', '?includeRequestDetails=1')).find((r) => r.APIPath === `${DEBUG}/dump_requests`)
  t.match(own, { PriorityLevelName: 'exempt', FlowSchemaName: 'exempt', QueueIndex: '-1', RequestIndexInQueue: '-1', InitialSeats: '1', FinalSeats: '0', AdditionalLatency: '0s', Verb: 'get', UserName: /./ })
  t.match(own?.ArriveTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/)
})

t.test('--enable-priority-and-fairness=false falls back to max-in-flight', async (t) => {
  const off = await startServer({ args: ['--enable-priority-and-fairness=false', '--token-auth-file', tokenFile, '--authorization-mode', 'AlwaysAllow', '--max-mutating-requests-inflight', '1'] })
  t.teardown(() => off.stop())
  const r = await off.requestAs(null, 'GET', '/api/v1/namespaces/default/configmaps')
  t.equal(r.status, 200)
  t.equal(r.headers['x-orch-pf-flowschema-uid'], undefined, 'no classification headers')
  const list = await off.request('GET', FS, undefined, { authorization: `Bearer ${off.adminToken}` })
  t.same(list.json.items, [], 'no configuration objects are made')
  t.equal((await off.request('GET', `${DEBUG}/dump_priority_levels`, undefined, { authorization: `Bearer ${off.adminToken}` })).status, 404, 'no APF debug endpoints')
  let throttled: Reply | undefined
  for (let round = 0; round < 5 && throttled === undefined; round++) {
    const rs = await Promise.all(Array.from({ length: 30 }, (_, i) => off.request('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `m-${round}-${i}` } }, as('slowpoke-token'))))
    throttled = rs.find((x) => x.status === 429)
  }
  t.ok(throttled, 'a mutating request over the limit got 429')
  if (throttled) {
    t.equal(throttled.headers['retry-after'], '1')
    t.equal(throttled.text, `${TOO_MANY}\n`)
  }
})

t.test('the debug endpoints are non-resource URLs under RBAC: system:masters may, others get 403', async (t) => {
  const rbac = await startServer({ args: ['--token-auth-file', tokenFile] })
  t.teardown(() => rbac.stop())
  for (const what of ['priority_levels', 'queues', 'requests']) {
    const path = `${DEBUG}/dump_${what}`
    const ok = await rbac.request('GET', path)
    t.equal(ok.status, 200, `${what}: system:masters`)
    t.match(ok.text, /^PriorityLevelName, /)
    const no = await rbac.requestAs('alice-token', 'GET', path)
    t.equal(no.status, 403, `${what}: alice`)
    t.same(no.json, {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: `forbidden: User "alice" cannot get path "${path}"`, reason: 'Forbidden', details: {}, code: 403,
    })
  }
})
