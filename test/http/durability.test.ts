// Black-box: acknowledged writes survive SIGKILL, and resourceVersions keep growing across crashes.
import t from 'tap'
import { rmSync } from 'node:fs'
import { startServer, type TestServer } from '../helpers/server.js'

const CLIENTS = 64
const CYCLES = 3
const NS = 'default'
const base = `/api/v1/namespaces/${NS}/configmaps`

/** name -> resourceVersion of every create that was answered 201 */
const acked = new Map<string, string>()

/** Every configmap in the namespace, name -> resourceVersion, read through paged lists. */
async function listAll(s: TestServer): Promise<{ items: Map<string, string>; listRv: number }> {
  const items = new Map<string, string>()
  let cont = ''
  let listRv = 0
  for (;;) {
    const r = await s.request('GET', `${base}?limit=5000${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`)
    if (r.status !== 200) throw new Error(`list: ${r.status} ${r.text}`)
    if (!listRv) listRv = Number(r.json.metadata.resourceVersion)
    for (const it of r.json.items) items.set(it.metadata.name, it.metadata.resourceVersion)
    cont = r.json.metadata.continue ?? ''
    if (!cont) return { items, listRv }
  }
}

/** Runs CLIENTS loops creating configmaps until the server dies; returns counts. */
async function load(s: TestServer, prefix: string, stop: { dead: boolean }): Promise<{ ok: number; other: Map<number, number>; errors: number }> {
  const other = new Map<number, number>()
  let ok = 0
  let errors = 0
  await Promise.all(Array.from({ length: CLIENTS }, async (_, c) => {
    for (let i = 0; !stop.dead; i++) {
      const name = `${prefix}-c${c}-${i}`
      try {
        const r = await s.request('POST', base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { client: String(c), seq: String(i) } })
        if (r.status === 201) {
          if (r.json?.metadata?.name !== name) throw new Error(`201 for ${name} carried ${r.text}`)
          acked.set(name, r.json.metadata.resourceVersion)
          ok++
        } else {
          other.set(r.status, (other.get(r.status) ?? 0) + 1)
        }
      } catch (err) {
        // The server is gone (or going): this create is unacknowledged; stop this client.
        if (err instanceof Error && err.message.startsWith('201 for')) throw err
        errors++
        return
      }
    }
  }))
  return { ok, other, errors }
}

t.test('acknowledged creates survive SIGKILL; resourceVersions keep growing', async (t) => {
  let s = await startServer({ keepDataDir: true })
  const dataDir = s.dataDir
  t.teardown(async () => { await s.stop(); rmSync(dataDir, { recursive: true, force: true }) })

  for (let cycle = 1; cycle <= CYCLES; cycle++) {
    await t.test(`crash cycle ${cycle}`, async (t) => {
      const stop = { dead: false }
      const killAfter = 1500 + Math.floor(Math.random() * 1000)
      const running = load(s, `d${cycle}`, stop)
      await new Promise((r) => setTimeout(r, killAfter))
      await s.kill()
      stop.dead = true
      const res = await running
      t.ok(res.ok > 0, `cycle ${cycle}: ${res.ok} creates acknowledged before SIGKILL at ${killAfter} ms (other statuses: ${JSON.stringify([...res.other])}, dropped: ${res.errors})`)
      const rvs = [...acked.values()].map(Number)
      const maxAcked = Math.max(...rvs)
      t.equal(new Set(rvs).size, rvs.length, 'every acknowledged create got its own resourceVersion')

      s = await startServer({ dataDir, keepDataDir: true })
      const { items, listRv } = await listAll(s)
      let missing = 0
      let changed = 0
      const examples: string[] = []
      for (const [name, rv] of acked) {
        const got = items.get(name)
        if (got === undefined) { missing++; if (examples.length < 5) examples.push(`${name} missing`) } else if (got !== rv) { changed++; if (examples.length < 5) examples.push(`${name}: ${rv} -> ${got}`) }
      }
      t.equal(missing, 0, `no acknowledged object lost (${acked.size} acknowledged so far) ${examples.join('; ')}`)
      t.equal(changed, 0, 'every acknowledged object has its acknowledged resourceVersion')
      t.ok(listRv >= maxAcked, `list resourceVersion ${listRv} >= highest acknowledged ${maxAcked}`)

      // Point reads of a sample agree with the list.
      const names = [...acked.keys()]
      for (let i = 0; i < 50; i++) {
        const n = names[Math.floor(Math.random() * names.length)]
        const g = await s.request('GET', `${base}/${n}`)
        if (g.status !== 200 || g.json?.metadata?.resourceVersion !== acked.get(n)) {
          t.fail(`GET ${n}: ${g.status} rv ${g.json?.metadata?.resourceVersion}, acknowledged ${acked.get(n)}`)
          break
        }
      }

      // New writes are ordered after everything the crashed server ever handed out or stored.
      const maxStored = Math.max(...[...items.values()].map(Number))
      const floor = Math.max(maxAcked, maxStored)
      const fresh: number[] = []
      await Promise.all(Array.from({ length: 16 }, async (_, i) => {
        const r = await s.request('POST', base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `after-${cycle}-${i}` } })
        if (r.status === 201) { fresh.push(Number(r.json.metadata.resourceVersion)); acked.set(`after-${cycle}-${i}`, r.json.metadata.resourceVersion) } else t.fail(`create after restart: ${r.status} ${r.text}`)
      }))
      t.equal(fresh.length, 16)
      const below = fresh.filter((rv) => !(rv > floor))
      t.same(below, [], `every new resourceVersion is > ${floor} (highest acknowledged ${maxAcked}, highest stored ${maxStored}); new: ${Math.min(...fresh)}..${Math.max(...fresh)}`)
      // An update of an old object also moves forward.
      const victim = names[0]
      const cur = await s.request('GET', `${base}/${victim}`)
      cur.json.data = { updated: String(cycle) }
      const u = await s.request('PUT', `${base}/${victim}`, cur.json)
      t.equal(u.status, 200)
      t.ok(Number(u.json?.metadata?.resourceVersion) > floor, 'update after restart gets a larger resourceVersion')
      acked.set(victim, u.json?.metadata?.resourceVersion)
    })
  }
})
