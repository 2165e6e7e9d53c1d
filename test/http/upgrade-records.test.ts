// Black-box: objects stored by an earlier build lack what this build adds on every write (a container's
// `resources: {}`, the serviceAccount alias). An update of such an object compares it as upstream's decoding from
// storage would hand it over — defaulted — so an unchanged Job template is not refused as "changed".
import t from 'tap'
import { open } from 'lmdb'
import { join } from 'node:path'
import { readdirSync, rmSync } from 'node:fs'
import { startServer } from '../helpers/server.js'
import { encodeRecord, objectKey, objectsDbOptions, recordAttrs, recordObject, recordRv } from '../../src/machinery/storage-format.js'

const JOBS = '/apis/batch/v1/namespaces/default/jobs'
const MERGE = { 'content-type': 'application/merge-patch+json' }

/** Rewrites one stored object in place with `edit` applied to its JSON (keeping its version and attributes). */
async function rewrite(dataDir: string, key: string, edit: (o: any) => void): Promise<boolean> {
  let done = false
  for (const d of readdirSync(dataDir).filter((n) => n.startsWith('shard-'))) {
    const env = open({ path: join(dataDir, d), maxDbs: 4 })
    const db = env.openDB<Buffer, string>('objects', objectsDbOptions())
    const rec = db.getBinary(key)
    if (rec) {
      const o = JSON.parse(recordObject(rec).toString('utf8'))
      edit(o)
      await db.put(key, encodeRecord(recordRv(rec), JSON.stringify(recordAttrs(rec)), JSON.stringify(o)))
      done = true
    }
    await env.close()
  }
  return done
}

t.test('a Job stored without the fields this build adds can still be labelled and suspended', async (t) => {
  let s = await startServer({ keepDataDir: true })
  const dataDir = s.dataDir
  t.teardown(async () => { await s.stop(); rmSync(dataDir, { recursive: true, force: true }) })
  let r = await s.request('POST', JOBS, {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'old' },
    spec: { template: { spec: { serviceAccountName: 'runner', restartPolicy: 'Never', containers: [{ name: 'c', image: 'i' }] } } },
  })
  t.equal(r.status, 201, r.text)
  t.same(r.json.spec.template.spec.containers[0].resources, {}, 'this build stores resources {}')
  t.equal(r.json.spec.template.spec.serviceAccount, 'runner', 'and the alias')
  await s.stop()

  const stripped = await rewrite(dataDir, objectKey('batch', 'jobs', 'default', 'old'), (o) => {
    delete o.spec.template.spec.serviceAccount
    for (const c of o.spec.template.spec.containers) delete c.resources
  })
  t.ok(stripped, 'the record was rewritten as an earlier build stored it')

  s = await startServer({ dataDir, keepDataDir: true })
  const before = await s.request('GET', `${JOBS}/old`)
  t.notOk(before.json.spec.template.spec.containers[0].resources, 'it reads back as stored')
  r = await s.request('PATCH', `${JOBS}/old`, { metadata: { labels: { team: 'a' } } }, MERGE)
  t.equal(r.status, 200, `a label change is not a template change: ${r.text}`)
  r = await s.request('PATCH', `${JOBS}/old`, { spec: { suspend: true } }, MERGE)
  t.equal(r.status, 200, `nor is suspending it: ${r.text}`)
  r = await s.request('PATCH', `${JOBS}/old`, { spec: { template: { spec: { containers: [{ name: 'c', image: 'other' }] } } } }, MERGE)
  t.equal(r.status, 422, 'a real template change is still refused')
})
