// Black-box: records are stored lz4-compressed, and gets, lists and watches answer the bytes that were written, also
// from a data dir whose records were written plain (the format before compression) and after a restart on it.
import t from 'tap'
import { open } from 'lmdb'
import { join } from 'node:path'
import { readdirSync, rmSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { startServer, type TestServer } from '../helpers/server.js'
import { objectsDbOptions } from '../../src/machinery/storage-format.js'

const NS = 'default'
const CM = `/api/v1/namespaces/${NS}/configmaps`

const configText = Array.from({ length: 60 }, (_, i) => `server.worker_${i % 7}.timeout_ms = ${(i * 7919) % 10000}\n# keep ${i}`).join('\n')
const objects: Array<[string, Record<string, string>]> = [
  ['tiny', { a: '1' }],
  ['config', { 'app.properties': configText }],
  ['random', { blob: randomBytes(6000).toString('base64') }],
  ['runs', { pad: 'x'.repeat(100_000) }],
  ['escapes', { s: 'é漢字 "quoted" \\ back\tslash\n'.repeat(40), e: '\u0000\u001f\u2028' }],
  ['big', { blob: randomBytes(450_000).toString('base64'), text: configText.repeat(20) }],
]

/** The object bytes of each watch event of a finished stream (`{"type":..,"object":<bytes>}` per line). */
function watchObjects(body: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const line of body.split('\n')) {
    if (!line) continue
    const at = line.indexOf('"object":')
    const obj = line.slice(at + 9, -1)
    out.set(JSON.parse(obj).metadata.name, obj)
  }
  return out
}

async function answers(s: TestServer, fromRv: string): Promise<{ gets: Map<string, string>; list: string; watched: Map<string, string> }> {
  const gets = new Map<string, string>()
  for (const [name] of objects) {
    const r = await s.request('GET', `${CM}/${name}`)
    if (r.status !== 200) throw new Error(`get ${name}: ${r.status} ${r.text.slice(0, 200)}`)
    gets.set(name, r.text)
  }
  const l = await s.request('GET', `${CM}?labelSelector=test%3Dstored`)
  const w = await s.request('GET', `${CM}?watch=1&labelSelector=test%3Dstored&resourceVersion=${fromRv}&timeoutSeconds=1`)
  return { gets, list: l.text, watched: watchObjects(w.text) }
}

/** Records of every shard's objects database: [key, stored length, first byte, decoded length]. */
async function stored(dataDir: string): Promise<Array<[string, number, number, number]>> {
  const out: Array<[string, number, number, number]> = []
  for (const d of readdirSync(dataDir).filter((n) => n.startsWith('shard-'))) {
    const env = open({ path: join(dataDir, d), maxDbs: 4, readOnly: true })
    const raw = env.openDB<Buffer, string>('objects', { encoding: 'binary' })
    const decoded = env.openDB<Buffer, string>('objects', objectsDbOptions())
    for (const { key, value } of raw.getRange({})) out.push([key as string, value.length, value[0], decoded.getBinary(key as string)!.length])
    await env.close()
  }
  return out
}

t.test('stored records', async (t) => {
  let s = await startServer({ keepDataDir: true, args: ['--storage-compression'] })
  const dataDir = s.dataDir
  t.teardown(async () => { await s.stop(); rmSync(dataDir, { recursive: true, force: true }) })

  const before = (await s.request('GET', CM)).json.metadata.resourceVersion as string
  for (const [name, data] of objects) {
    const r = await s.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { test: 'stored' } }, data })
    t.equal(r.status, 201, `create ${name}`)
  }
  const first = await answers(s, before)
  for (const [name, data] of objects) {
    const got = JSON.parse(first.gets.get(name)!)
    t.same(got.data, data, `${name}: the data read back is the data written`)
    t.equal(first.watched.get(name), first.gets.get(name), `${name}: the watch event carries the bytes a get answers`)
  }
  const listed = JSON.parse(first.list).items as Array<{ metadata: { name: string } }>
  t.same(listed.map((o) => o.metadata.name).sort(), objects.map(([n]) => n).sort(), 'the list has every object')
  for (const [name] of objects) t.ok(first.list.includes(first.gets.get(name)!), `${name}: the list carries the bytes a get answers`)
  await s.stop()

  // On disk: records are compressed (lmdb-js marks them with 254/255), the smallest stored plain.
  const recs = await stored(dataDir)
  const rec = (name: string) => recs.find(([k]) => k === `/configmaps/${NS}/${name}`)!
  t.ok(rec('config')[2] >= 254 && rec('config')[1] < rec('config')[3] * 0.7, `a config file is stored compressed (${rec('config')[1]} of ${rec('config')[3]} bytes)`)
  t.ok(rec('runs')[1] < 2000, `a run of one letter is stored in a few bytes (${rec('runs')[1]})`)
  t.ok(rec('big')[2] >= 254, 'a record of half a MB is stored compressed')
  t.ok(recs.filter(([, , , dec]) => dec < 1024).every(([, len, first, dec]) => len === dec && first === 0), 'records under the threshold are stored plain')

  // The format before compression: every record rewritten plain, as the server wrote them until now.
  let rewritten = 0
  for (const d of readdirSync(dataDir).filter((n) => n.startsWith('shard-'))) {
    const env = open({ path: join(dataDir, d), maxDbs: 4 })
    const raw = env.openDB<Buffer, string>('objects', { encoding: 'binary' })
    const decoded = env.openDB<Buffer, string>('objects', objectsDbOptions())
    const all = [...decoded.getRange({})].map(({ key, value }) => [key as string, Buffer.from(value as Buffer)] as const)
    env.transactionSync(() => { for (const [k, v] of all) { raw.put(k, v); rewritten++ } })
    await env.close()
  }
  const plain = await stored(dataDir)
  t.ok(rewritten > objects.length && plain.every(([, len, first, dec]) => len === dec && first < 250), `every record (${rewritten}) is now stored plain`)

  s = await startServer({ dataDir, keepDataDir: true, args: ['--storage-compression'] })
  const again = await answers(s, before)
  for (const [name] of objects) t.equal(again.gets.get(name), first.gets.get(name), `${name}: a get of the plain record answers the same bytes`)
  t.equal(again.list.replace(/"resourceVersion":"\d+"/, ''), first.list.replace(/"resourceVersion":"\d+"/, ''), 'a list of plain records answers the same items')

  // A write on the old data dir stores the new version compressed, and reads it back.
  const cur = JSON.parse(again.gets.get('config')!)
  cur.data['extra'] = configText
  const u = await s.request('PUT', `${CM}/config`, cur)
  t.equal(u.status, 200, 'update of a plain record')
  const g = await s.request('GET', `${CM}/config`)
  t.equal(g.text, u.text, 'the updated object reads back as answered')
  await s.stop()
  const after = await stored(dataDir)
  const cfg = after.find(([k]) => k === `/configmaps/${NS}/config`)!
  t.ok(cfg[2] >= 254 && cfg[1] < cfg[3], 'the new version is stored compressed')
  const old = after.find(([k]) => k === `/configmaps/${NS}/random`)!
  t.equal(old[2], 0, 'records not written since stay plain')
  // With --storage-compression=false: the compressed record reads as it was written, and a new write is stored plain.
  s = await startServer({ dataDir, keepDataDir: true, args: ['--storage-compression=false'] })
  const last = await s.request('GET', `${CM}/random`)
  t.equal(last.text, first.gets.get('random'), 'and still read as written after another restart')
  const gc = await s.request('GET', `${CM}/config`)
  t.equal(gc.text, g.text, 'a compressed record reads back with compression off')
  const cur2 = JSON.parse(gc.text)
  cur2.data['more'] = configText
  const u2 = await s.request('PUT', `${CM}/config`, cur2)
  t.equal(u2.status, 200, 'update with compression off')
  t.equal((await s.request('GET', `${CM}/config`)).text, u2.text, 'reads back as answered')
  await s.stop()
  const plainAgain = (await stored(dataDir)).find(([k]) => k === `/configmaps/${NS}/config`)!
  t.ok(plainAgain[1] === plainAgain[3] && plainAgain[2] < 250, 'a write with compression off is stored plain')
})
