// Black-box: what a Job keeps once created (upstream ValidateJobSpecUpdate): template, completions, selector, modes.
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'

let s: TestServer
const JOBS = '/apis/batch/v1/namespaces/default/jobs'
const MERGE = { 'content-type': 'application/merge-patch+json' }

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

const job = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'batch/v1', kind: 'Job', metadata: { name },
  spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'i' }] } }, ...spec },
})

t.test('template and completions are immutable; parallelism and suspend are not', async (t) => {
  let r = await s.request('POST', JOBS, job('j1', { completions: 2 }))
  t.equal(r.status, 201, r.text)
  r = await s.request('PATCH', `${JOBS}/j1`, { spec: { completions: 5 } }, MERGE)
  t.equal(r.status, 422, r.text)
  t.match(r.json?.message, /^Job\.batch "j1" is invalid: spec\.completions: Invalid value: 5: field is immutable$/)
  r = await s.request('PATCH', `${JOBS}/j1`, { spec: { template: { spec: { containers: [{ name: 'c', image: 'other' }] } } } }, MERGE)
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.details?.causes?.[0]?.field, 'spec.template')
  r = await s.request('PATCH', `${JOBS}/j1`, { spec: { parallelism: 3, suspend: true, activeDeadlineSeconds: 60 } }, MERGE)
  t.equal(r.status, 200, r.text)
  r = await s.request('PATCH', `${JOBS}/j1`, { spec: { selector: { matchLabels: { x: 'y' } } } }, MERGE)
  t.equal(r.status, 422, 'the selector')
  t.equal((await s.request('GET', `${JOBS}/j1`)).json.spec.completions, 2, 'nothing refused was stored')
})

t.test('a suspended job that never started may change its scheduling directives; an Indexed job may scale', async (t) => {
  let r = await s.request('POST', JOBS, job('j2', { suspend: true }))
  t.equal(r.status, 201, r.text)
  r = await s.request('PATCH', `${JOBS}/j2`, { spec: { template: { metadata: { labels: { team: 'a' } }, spec: { nodeSelector: { zone: 'a' } } } } }, MERGE)
  t.equal(r.status, 200, r.text)
  r = await s.request('PATCH', `${JOBS}/j2`, { spec: { template: { spec: { containers: [{ name: 'c', image: 'other' }] } } } }, MERGE)
  t.equal(r.status, 422, 'not the containers')
  r = await s.request('POST', JOBS, job('j3', { completionMode: 'Indexed', completions: 2, parallelism: 2 }))
  t.equal(r.status, 201, r.text)
  r = await s.request('PATCH', `${JOBS}/j3`, { spec: { completions: 4, parallelism: 4 } }, MERGE)
  t.equal(r.status, 200, `elastic indexed job: ${r.text}`)
  r = await s.request('PATCH', `${JOBS}/j3`, { spec: { completions: 5 } }, MERGE)
  t.equal(r.status, 422, 'completions alone')
})
