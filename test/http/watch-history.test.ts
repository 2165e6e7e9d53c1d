// Black-box: a watch resumed from a resourceVersion replays the shard's history with the object bytes of each event's
// own version: an ADDED of an object modified since, a MODIFIED of an object deleted since, a MODIFIED that is still
// the stored version, a DELETED with the final state, and versions replaced several times (the ring keeps no copy of
// a version that is still the stored one and must not serve the stored bytes for an older event). With records stored
// plain and lz4-compressed, and through a second front-end.
import t from 'tap'
import http from 'node:http'
import { startServer, type TestServer, type Reply } from '../helpers/server.js'

type Obj = Record<string, any>

interface Seen { type: string; rv: string; name: string; data: Record<string, string> | undefined }

/** The events of a watch from `path`, read until `n` arrived (or `ms` passed): type, resourceVersion, name and data. */
function watchEvents(s: TestServer, path: string, n: number, ms = 10_000): Promise<Seen[]> {
  return new Promise((resolve, reject) => {
    const out: Seen[] = []
    let buf = ''
    const timer = setTimeout(() => { req.destroy(); resolve(out) }, ms)
    const req = http.get(s.url + path, { agent: false, headers: { accept: 'application/json', authorization: `Bearer ${s.adminToken}` } }, (res) => {
      if (res.statusCode !== 200) { clearTimeout(timer); reject(new Error(`watch ${path}: ${res.statusCode}`)); res.resume(); return }
      res.setEncoding('utf8')
      res.on('data', (c: string) => {
        buf += c
        let nl: number
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl)
          buf = buf.slice(nl + 1)
          if (line.trim() === '') continue
          const ev = JSON.parse(line) as { type: string; object: Obj }
          if (ev.type === 'BOOKMARK') continue
          out.push({ type: ev.type, rv: ev.object.metadata.resourceVersion, name: ev.object.metadata.name, data: ev.object.data })
          if (out.length >= n) { clearTimeout(timer); req.destroy(); resolve(out) }
        }
      })
    })
    req.on('error', (err) => { if (out.length < n) { clearTimeout(timer); reject(err) } })
  })
}

async function ok(r: Reply, what: string, status = [200, 201]): Promise<Reply> {
  if (!status.includes(r.status)) throw new Error(`${what}: ${r.status} ${r.text.slice(0, 300)}`)
  return r
}

for (const compression of [false, true]) {
  t.test(`resumed watch replays each version's own bytes${compression ? '' : ' (--storage-compression=false)'}`, async (t) => {
    const s = await startServer({ args: ['--frontends', '2', '--watch-history', '5m', `--storage-compression=${compression}`] })
    t.teardown(() => s.stop())
    const ns = 'wh'
    const base = `/api/v1/namespaces/${ns}/configmaps`
    await ok(await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }), 'namespace')
    // big enough to be compressed with --storage-compression (records of 1 KB or more)
    const pad = (tag: string) => `${tag} `.repeat(200)
    const cm = (name: string, v: string): Obj => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v, pad: pad(v) } })
    const start = (await ok(await s.request('GET', `${base}?limit=1`), 'list')).json.metadata.resourceVersion as string

    /** What each event must carry: type, name, data.v, and the resourceVersion the write answered. */
    const want: Array<{ type: string; name: string; v: string; rv: string }> = []
    const create = async (name: string, v: string) => {
      const r = await ok(await s.request('POST', base, cm(name, v)), `create ${name}`)
      want.push({ type: 'ADDED', name, v, rv: r.json.metadata.resourceVersion })
    }
    const update = async (name: string, v: string) => {
      const r = await ok(await s.request('PATCH', `${base}/${name}`, { data: { v, pad: pad(v) } }, { 'content-type': 'application/merge-patch+json' }), `patch ${name}`)
      want.push({ type: 'MODIFIED', name, v, rv: r.json.metadata.resourceVersion })
    }
    const remove = async (name: string) => {
      await ok(await s.request('DELETE', `${base}/${name}`), `delete ${name}`)
      // the final state: the last stored data, at the deletion's own resourceVersion (checked by order below)
      const last = [...want].reverse().find((w) => w.name === name)!
      want.push({ type: 'DELETED', name, v: last.v, rv: '' })
    }

    await create('a', 'a1') // ADDED, modified since
    await create('b', 'b1') // ADDED, modified since, then deleted
    await create('c', 'c1') // ADDED, modified since
    await create('d', 'd1') // ADDED, still the stored version
    await update('b', 'b2') // MODIFIED, deleted since
    await update('c', 'c2') // MODIFIED, still the stored version
    await update('a', 'a2')
    await update('a', 'a3')
    await update('a', 'a4') // MODIFIED three times in a row, the last one still stored
    await remove('b') // DELETED with b2's data
    await create('b', 'b3') // the same name again, still stored

    // from the start, from the middle, through both front-ends (requests alternate between them)
    for (const [from, label] of [[start, 'from the start'], [want[4].rv, 'from after the fifth write']] as const) {
      const expect = want.filter((w) => from === start || Number(w.rv === '' ? Infinity : w.rv) > Number(from))
      for (let attempt = 0; attempt < 2; attempt++) {
        const got = await watchEvents(s, `${base}?watch=1&resourceVersion=${from}`, expect.length)
        t.equal(got.length, expect.length, `${label} (${attempt}): every event`)
        for (let i = 0; i < expect.length; i++) {
          const e = expect[i]
          const g = got[i]
          if (!g) break
          t.same({ type: g.type, name: g.name, v: g.data?.v, pad: g.data?.pad === pad(e.v) }, { type: e.type, name: e.name, v: e.v, pad: true }, `${label} (${attempt}): event ${i} ${e.type} ${e.name} carries ${e.v}`)
          if (e.rv !== '') t.equal(g.rv, e.rv, `${label} (${attempt}): event ${i} has its own resourceVersion`)
        }
        t.ok(got.every((g, i) => Number(g.rv) > Number(i === 0 ? from : got[i - 1].rv)), `${label} (${attempt}): versions increase`)
      }
    }

    // Writes after the resumed watches: the ring completes the events of replaced versions also when they were
    // served from the stored bytes before (a backlog in between must not leave an event without its record).
    await update('d', 'd2')
    await update('c', 'c3')
    const all = await watchEvents(s, `${base}?watch=1&resourceVersion=${start}`, want.length + 2)
    const byRv = new Map(all.map((g) => [g.rv, g]))
    t.equal(byRv.get(want[3].rv)?.data?.v, 'd1', 'the ADDED of d, served stored before, now replaced: d1')
    t.equal(byRv.get(want[5].rv)?.data?.v, 'c2', 'the MODIFIED of c, served stored before, now replaced: c2')
    t.same(all.slice(-2).map((g) => g.data?.v), ['d2', 'c3'], 'the new versions')
  })
}
