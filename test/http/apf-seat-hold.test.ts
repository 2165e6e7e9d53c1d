// Black-box tests of the seat hold of API Priority and Fairness (--priority-and-fairness-seat-hold): while other flows
// wait on a level, a seat freed by a flow that has nothing waiting and held no more than its fair share stays held
// for that flow for the hold's time; with 0 the freed seat goes to the waiting flows at once, as upstream does.
import t, { type Test } from 'tap'
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type TestServer, type Reply } from '../helpers/server.js'
import { waitFor } from '../helpers/wait.js'

const G = 'flowcontrol.apiserver.orch.io'
const FS = `/apis/${G}/v1/flowschemas`
const PL = `/apis/${G}/v1/prioritylevelconfigurations`
const DEBUG = '/debug/api_priority_and_fairness'
const QUICK = '/api/v1/namespaces/default/configmaps?limit=1'

const tokensDir = mkdtempSync(join(tmpdir(), 'orch-apf-hold-'))
const tokenFile = join(tokensDir, 'tokens.csv')
writeFileSync(tokenFile, 'erin-token,erin,erin-uid\nfrank-token,frank,frank-uid\n')
t.teardown(() => rmSync(tokensDir, { recursive: true, force: true }))

const as = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })

interface Tracked { done: Promise<Reply>; finished: () => boolean; at: () => number }
let order = 0
function track(p: Promise<Reply>): Tracked {
  let at = 0
  const done = p.then((r) => { at = ++order; return r })
  return { done, finished: () => at !== 0, at: () => at }
}

/**
 * A server whose level "pair" has 2 seats (ServerCL 4, half of all shares, nothing lent or borrowed) and 8 queues,
 * one flow per user (ByUser) for erin and frank.
 */
async function pairLevel(t: Test, hold: string): Promise<{ s: TestServer; requests: () => Promise<Array<Record<string, string>>> }> {
  const s = await startServer({
    args: ['--token-auth-file', tokenFile, '--authorization-mode', 'AlwaysAllow', '--max-requests-inflight', '2', '--max-mutating-requests-inflight', '2', `--priority-and-fairness-seat-hold=${hold}`],
  })
  t.teardown(() => s.stop())
  const admin = { authorization: `Bearer ${s.adminToken}` }
  const pl = await s.request('POST', PL, {
    apiVersion: `${G}/v1`, kind: 'PriorityLevelConfiguration', metadata: { name: 'pair' },
    spec: { type: 'Limited', limited: { nominalConcurrencyShares: 245, lendablePercent: 0, borrowingLimitPercent: 0, limitResponse: { type: 'Queue', queuing: { queues: 8, handSize: 2, queueLengthLimit: 50 } } } },
  }, admin)
  t.equal(pl.status, 201)
  const fs = await s.request('POST', FS, {
    apiVersion: `${G}/v1`, kind: 'FlowSchema', metadata: { name: 'pair' },
    spec: {
      matchingPrecedence: 100, priorityLevelConfiguration: { name: 'pair' }, distinguisherMethod: { type: 'ByUser' },
      rules: [{ subjects: [{ kind: 'User', user: { name: 'erin' } }, { kind: 'User', user: { name: 'frank' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }] }],
    },
  }, admin)
  t.equal(fs.status, 201)
  for (const user of ['erin', 'frank']) {
    await waitFor(`${user} to be classified by pair`, async () => {
      const r = await s.request('GET', QUICK, undefined, as(`${user}-token`))
      return r.headers['x-orch-pf-prioritylevel-uid'] === pl.json.metadata.uid ? true : undefined
    })
  }
  // The FlowSchema's status is written once; from then on only the test writes (the holders wait for its writes).
  await waitFor('the Dangling condition of pair', async () => ((await s.request('GET', `${FS}/pair`, undefined, admin)).json.status?.conditions?.length ? true : undefined))
  const requests = async (): Promise<Array<Record<string, string>>> => {
    const r = await s.request('GET', `${DEBUG}/dump_requests?includeRequestDetails=1`, undefined, admin)
    const [head, ...rows] = r.text.split('\n').filter((l) => l !== '').map((l) => l.split(',').map((c) => c.trim()))
    return rows.map((cells) => Object.fromEntries(head.map((h, i) => [h, cells[i]]))).filter((row) => row.PriorityLevelName === 'pair')
  }
  return { s, requests }
}

/**
 * A read at the resourceVersion the next write will take holds its seat until that write. frank's A1 and A2 take
 * both seats at once; erin's quick E and then frank's B1-B3 (reads at the second write's version) wait. The first
 * write ends A1 and A2; the actor dispatches E (it arrived first) and one of frank's Bs. E ends at once, a request the
 * actor dispatched, while frank still has two waiting. Returns frank's Bs and the write that ends them.
 */
async function fillAndRelease(t: Test, s: TestServer, requests: () => Promise<Array<Record<string, string>>>): Promise<{ e: Tracked; bs: Tracked[]; releaseBs: () => Promise<void> }> {
  const admin = { authorization: `Bearer ${s.adminToken}` }
  const write = async () => {
    const r = await s.request('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'w-' } }, admin)
    if (r.status !== 201) throw new Error(`write: ${r.status}`)
    return Number(r.json.metadata.resourceVersion)
  }
  const rv = await write()
  const at = (n: number) => `/api/v1/namespaces/default/podtemplates/none?resourceVersion=${n}`
  const as1 = [track(s.request('GET', at(rv + 1), undefined, as('frank-token'))), track(s.request('GET', at(rv + 1), undefined, as('frank-token')))]
  await waitFor('both seats taken', async () => ((await requests()).filter((r) => r.RequestIndexInQueue === '-1').length === 2 ? true : undefined))
  const e = track(s.request('GET', QUICK, undefined, as('erin-token')))
  await waitFor('E to wait for a seat', async () => ((await requests()).some((r) => r.UserName === 'erin' && r.RequestIndexInQueue !== '-1') ? true : undefined))
  const bs = [1, 2, 3].map(() => track(s.request('GET', at(rv + 2), undefined, as('frank-token'))))
  await waitFor('B1-B3 to wait for a seat', async () => ((await franks(requests)).waiting === 3 ? true : undefined))
  await write()
  for (const a of as1) t.equal((await a.done).status, 404, "frank's A ended with the first write")
  t.equal((await e.done).status, 200, "erin's E ran")
  await waitFor("one of frank's Bs to execute", async () => ((await franks(requests)).executing >= 1 ? true : undefined))
  t.notOk(bs.some((b) => b.finished()), "frank's Bs wait for the second write")
  return { e, bs, releaseBs: async () => { await write() } }
}

async function franks(requests: () => Promise<Array<Record<string, string>>>): Promise<{ executing: number; waiting: number }> {
  const rows = (await requests()).filter((r) => r.UserName === 'frank')
  return { executing: rows.filter((r) => r.RequestIndexInQueue === '-1').length, waiting: rows.filter((r) => r.RequestIndexInQueue !== '-1').length }
}

t.test('with a seat hold, the seat erin freed waits for erin while frank waits; erin asking again takes it at once', async (t) => {
  const { s, requests } = await pairLevel(t, '1m')
  const { bs, releaseBs } = await fillAndRelease(t, s, requests)
  await new Promise((r) => setTimeout(r, 300))
  t.same(await franks(requests), { executing: 1, waiting: 2 }, "frank's waiting requests did not get the seat E freed: it is held for erin")
  const d = track(s.request('GET', QUICK, undefined, as('erin-token')))
  t.equal((await d.done).status, 200, "erin's next request was served")
  t.same(await franks(requests), { executing: 1, waiting: 2 }, "ahead of frank's waiting ones, and the seat is held for erin again")
  await releaseBs()
  for (const b of bs) {
    t.equal((await b.done).status, 404)
    t.ok(d.at() < b.at(), 'erin was answered before each of them')
  }
  const metrics = (await s.request('GET', '/metrics', undefined, { authorization: `Bearer ${s.adminToken}` })).text
  t.match(metrics, /^apiserver_flowcontrol_seat_holds_total\{outcome="used",priority_level="pair"\} [1-9]\d*$/m, "/metrics counts the hold erin used")
})

t.test('without a seat hold (0), the seat erin freed goes to frank at once', async (t) => {
  const { s, requests } = await pairLevel(t, '0')
  const { bs, releaseBs } = await fillAndRelease(t, s, requests)
  await waitFor("two of frank's to execute", async () => ((await franks(requests)).executing === 2 ? true : undefined))
  t.same(await franks(requests), { executing: 2, waiting: 1 }, "frank's next waiting request took the seat E freed")
  await releaseBs()
  for (const b of bs) t.equal((await b.done).status, 404)
})
