// Black-box: the garbage collector's start-up scan reads the stored attributes of every object (raw reads, plain and
// lz4-compressed records): a dependent whose owner disappeared while the server was down is collected after the
// restart, and one whose owner still exists is kept.
import t from 'tap'
import { open } from 'lmdb'
import { join } from 'node:path'
import { readdirSync, rmSync } from 'node:fs'
import { startServer, type TestServer } from '../helpers/server.js'
import { envOptions, objectsDbOptions } from '../../src/machinery/storage-format.js'

const NS = 'gcs'
const CM = `/api/v1/namespaces/${NS}/configmaps`
// big enough to be compressed with --storage-compression
const pad = 'owner reference test line\n'.repeat(80)

async function create(s: TestServer, name: string, owner?: { name: string; uid: string }): Promise<string> {
  const metadata: Record<string, unknown> = { name }
  if (owner) metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'ConfigMap', name: owner.name, uid: owner.uid }]
  const r = await s.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata, data: { pad } })
  if (r.status !== 201) throw new Error(`create ${name}: ${r.status} ${r.text}`)
  return r.json.metadata.uid as string
}

/** Removes a stored object behind the server's back (the server is stopped): as if it went away while down. */
function removeStored(dataDir: string, key: string): boolean {
  let removed = false
  for (const d of readdirSync(dataDir).filter((n) => n.startsWith('shard-'))) {
    const root = open(envOptions(join(dataDir, d)))
    try {
      const objects = root.openDB<Buffer, string>('objects', objectsDbOptions())
      if (objects.getBinary(key) !== undefined) removed = objects.removeSync(key) || removed
    } finally {
      root.close()
    }
  }
  return removed
}

for (const compression of [false, true]) {
  t.test(`start-up scan collects a dependent whose owner is gone${compression ? '' : ' (--storage-compression=false)'}`, async (t) => {
    const args = [`--storage-compression=${compression}`]
    let s = await startServer({ args, keepDataDir: true })
    const dataDir = s.dataDir
    t.teardown(async () => { await s.stop(); rmSync(dataDir, { recursive: true, force: true }) })
    const r = await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })
    t.equal(r.status, 201, 'namespace')
    const goneUid = await create(s, 'owner-gone')
    const keptUid = await create(s, 'owner-kept')
    await create(s, 'dep-orphaned', { name: 'owner-gone', uid: goneUid })
    await create(s, 'dep-owned', { name: 'owner-kept', uid: keptUid })
    await s.stop()
    t.ok(removeStored(dataDir, `/configmaps/${NS}/owner-gone`), 'the owner removed while the server is down')

    s = await startServer({ args, dataDir })
    let status = 0
    for (let i = 0; i < 100; i++) {
      status = (await s.request('GET', `${CM}/dep-orphaned`)).status
      if (status === 404) break
      await new Promise((res) => setTimeout(res, 100))
    }
    t.equal(status, 404, 'the dependent of the vanished owner is collected after the restart')
    t.equal((await s.request('GET', `${CM}/dep-owned`)).status, 200, 'the dependent of a live owner stays')
    t.equal((await s.request('GET', `${CM}/owner-kept`)).status, 200, 'its owner stays')
  })
}
