// Black-box: lists and watches of pods by spec.nodeName read the shard's secondary index; answers equal a filtered scan,
// across namespaces, pages, moves between values, deletes, restarts and a data dir whose index was never built.
import t from 'tap'
import { open } from 'lmdb'
import { join } from 'node:path'
import { rmSync } from 'node:fs'
import { startServer, type TestServer } from '../helpers/server.js'

const pod = (name: string, node?: string, labels?: Record<string, string>) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, ...(labels ? { labels } : {}) },
  spec: { ...(node !== undefined ? { nodeName: node } : {}), containers: [{ name: 'c', image: 'registry.example/app:1' }] },
})

const NAMESPACES = ['fi-a', 'fi-b', 'fi-c']
const NODES = ['fi-n0', 'fi-n1', 'fi-n2', 'fi-n3']

/** name → node ('' when unscheduled) of every pod created, by namespace. */
const made = new Map<string, { ns: string; node: string }>()

async function seed(s: TestServer): Promise<void> {
  for (const ns of NAMESPACES) {
    const r = await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })
    if (r.status !== 201) throw new Error(`namespace: ${r.status} ${r.text}`)
  }
  for (let i = 0; i < 60; i++) {
    const ns = NAMESPACES[i % 3]
    const node = i % 7 === 6 ? '' : NODES[i % 4]
    const name = `p-${String(i).padStart(3, '0')}`
    const r = await s.request('POST', `/api/v1/namespaces/${ns}/pods`, pod(name, node || undefined, { parity: String(i % 2) }))
    if (r.status !== 201) throw new Error(`pod: ${r.status} ${r.text}`)
    made.set(`${ns}/${name}`, { ns, node })
  }
}

/** Every item of a list, walking its pages; the names in the order answered. */
async function listAll(s: TestServer, path: string, limit = 0): Promise<string[]> {
  const out: string[] = []
  let cont = ''
  for (;;) {
    const q = [limit ? `limit=${limit}` : '', cont ? `continue=${encodeURIComponent(cont)}` : ''].filter(Boolean).join('&')
    const r = await s.request('GET', path + (q ? (path.includes('?') ? '&' : '?') + q : ''))
    if (r.status !== 200) throw new Error(`list ${path}: ${r.status} ${r.text}`)
    for (const it of r.json.items) out.push(`${it.metadata.namespace}/${it.metadata.name}`)
    cont = r.json.metadata.continue ?? ''
    if (!cont) return out
  }
}

const sel = (s: string) => `fieldSelector=${encodeURIComponent(s)}`
const expected = (keep: (ns: string, node: string) => boolean) => [...made].filter(([, v]) => keep(v.ns, v.node)).map(([k]) => k).sort()

type Same = { same: (a: unknown, b: unknown, m: string) => unknown }

async function checkLists(t: Same, s: TestServer, when: string): Promise<void> {
  for (const node of [...NODES, '', 'fi-none']) {
    t.same(await listAll(s, `/api/v1/pods?${sel(`spec.nodeName=${node}`)}`), expected((_, n) => n === node), `${when}: all namespaces, spec.nodeName=${node}`)
    t.same(await listAll(s, `/api/v1/pods?${sel(`spec.nodeName=${node}`)}`, 4), expected((_, n) => n === node), `${when}: pages of 4, spec.nodeName=${node}`)
    t.same(await listAll(s, `/api/v1/namespaces/fi-b/pods?${sel(`spec.nodeName=${node}`)}`, 3), expected((ns, n) => ns === 'fi-b' && n === node), `${when}: namespace fi-b, pages of 3, spec.nodeName=${node}`)
  }
  t.same(await listAll(s, `/api/v1/pods?${sel('spec.nodeName=fi-n1')}&labelSelector=parity%3D1`), [...made].filter(([k, v]) => v.node === 'fi-n1' && Number(k.slice(-3)) % 2 === 1).map(([k]) => k).sort(), `${when}: the index with a label selector`)
  t.same(await listAll(s, `/api/v1/pods?${sel('spec.nodeName=fi-n2,status.phase!=Failed')}`), expected((_, n) => n === 'fi-n2'), `${when}: the index with another field requirement`)
}

t.test('lists by spec.nodeName equal a filtered scan, through writes, restarts and an index rebuild', async (t) => {
  let s = await startServer({ keepDataDir: true })
  try {
    await seed(s)
    await checkLists(t, s, 'after creates')

    // Deletes leave the index; a pod created with no node and then bound moves from '' to its node.
    for (const k of ['fi-a/p-000', 'fi-b/p-013', 'fi-c/p-026']) {
      const [ns, name] = k.split('/')
      const r = await s.request('DELETE', `/api/v1/namespaces/${ns}/pods/${name}?gracePeriodSeconds=0`)
      t.equal(r.status, 200, `delete ${k}`)
      made.delete(k)
    }
    const bind = await s.request('POST', '/api/v1/namespaces/fi-a/pods/p-006/binding', { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p-006' }, target: { kind: 'Node', name: 'fi-n3' } })
    if (bind.status === 201) made.set('fi-a/p-006', { ns: 'fi-a', node: 'fi-n3' })
    else {
      // Without the binding sub-resource the move is a delete and a re-create with the node set.
      t.equal((await s.request('DELETE', '/api/v1/namespaces/fi-a/pods/p-006?gracePeriodSeconds=0')).status, 200)
      t.equal((await s.request('POST', '/api/v1/namespaces/fi-a/pods', pod('p-006', 'fi-n3', { parity: '0' }))).status, 201)
      made.set('fi-a/p-006', { ns: 'fi-a', node: 'fi-n3' })
    }
    await checkLists(t, s, 'after deletes and a move')

    const port = s.port
    await s.stop()
    s = await startServer({ dataDir: s.dataDir, port })
    await checkLists(t, s, 'after a restart')
    await s.stop()

    // A data dir written before the index existed: drop the index and the record of what it was built for.
    const env = open({ path: join(s.dataDir, 'shard-0'), maxDbs: 4 })
    const index = env.openDB<Buffer, string>('index', { encoding: 'binary' })
    const meta = env.openDB<unknown, string>('meta', { encoding: 'msgpack' })
    let dropped = 0
    await env.transaction(() => {
      for (const { key } of index.getRange({})) { index.remove(key as string); dropped++ }
      meta.remove('index-spec')
    })
    await env.close()
    t.ok(dropped >= 50, `the index had entries (${dropped}) and is now empty`)
    s = await startServer({ dataDir: s.dataDir, port })
    t.ok(s.logs.some((l) => l.includes('secondary indexes built')), 'the shard rebuilt its index at start')
    await checkLists(t, s, 'after a rebuild')
  } finally {
    await s.stop()
    rmSync(s.dataDir, { recursive: true, force: true })
  }
})

t.test('a watch of one node starts from the index and gets only its pods', async (t) => {
  const s = await startServer()
  t.teardown(() => s.stop())
  await seed(s)
  const r = await s.request('GET', `/api/v1/pods?watch=1&timeoutSeconds=1&${sel('spec.nodeName=fi-n2')}`)
  t.equal(r.status, 200)
  const names = r.text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l)).map((e) => `${e.type}:${e.object.metadata.namespace}/${e.object.metadata.name}`)
  t.same(names.sort(), expected((_, n) => n === 'fi-n2').map((k) => `ADDED:${k}`), 'synthetic ADDED for exactly the pods on fi-n2')
})
