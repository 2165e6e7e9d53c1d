// Black-box: a stock @kubernetes/client-node informer (makeInformer + ListWatch) against the plain-HTTP port keeps
// exactly the server's state through create/update/delete bursts and a server restart (SIGTERM, then a new process
// on the same data dir and port), with no missed, duplicated or out-of-order state.
import t from 'tap'
import { rmSync } from 'node:fs'
import { KubeConfig, CoreV1Api, makeInformer, type KubernetesObject, type V1ConfigMap } from '@kubernetes/client-node'
import { freePort, startServer, type TestServer, type Reply } from '../helpers/server.js'

type Obj = Record<string, any>

let s: TestServer
let port = 0
let dataDir = ''
t.before(async () => {
  port = await freePort()
  s = await startServer({ port, keepDataDir: true })
  dataDir = s.dataDir
})
t.teardown(async () => { await s?.stop(); if (dataDir) rmSync(dataDir, { recursive: true, force: true }) })

const NS = 'inf'
const NS2 = 'inf2'
const base = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function ns(name: string): Promise<void> {
  const r = await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } })
  if (r.status !== 201 && r.status !== 409) throw new Error(`namespace ${name}: ${r.status} ${r.text}`)
}

async function createCm(ns: string, name: string, labels: Record<string, string> = {}): Promise<Reply> {
  const r = await s.request('POST', base(ns), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data: { v: '0' } })
  if (r.status !== 201) throw new Error(`create ${name}: ${r.status} ${r.text}`)
  return r
}

async function update(ns: string, name: string, fn: (o: Obj) => void): Promise<Reply> {
  for (let i = 0; i < 10; i++) {
    const g = await s.request('GET', `${base(ns)}/${name}`)
    if (g.status !== 200) throw new Error(`get ${name}: ${g.status}`)
    fn(g.json)
    const r = await s.request('PUT', `${base(ns)}/${name}`, g.json)
    if (r.status === 200) return r
    if (r.status !== 409) throw new Error(`update ${name}: ${r.status} ${r.text}`)
  }
  throw new Error(`update ${name}: conflicts`)
}

async function remove(ns: string, name: string): Promise<void> {
  const r = await s.request('DELETE', `${base(ns)}/${name}`)
  if (r.status !== 200) throw new Error(`delete ${name}: ${r.status} ${r.text}`)
}

/** Runs fns with at most n in flight. */
async function pool(n: number, fns: Array<() => Promise<unknown>>): Promise<void> {
  let i = 0
  await Promise.all(Array.from({ length: n }, async () => { while (i < fns.length) await fns[i++]() }))
}

/** namespace/name -> resourceVersion of what the server lists now */
async function serverState(path: string): Promise<Map<string, string>> {
  const r = await s.request('GET', path)
  if (r.status !== 200) throw new Error(`list: ${r.status}`)
  return new Map(r.json.items.map((i: Obj) => [`${i.metadata.namespace}/${i.metadata.name}`, i.metadata.resourceVersion]))
}

/** A client-node informer plus a model built only from its add/update/delete callbacks, and bookkeeping of anomalies. */
class Tracked {
  readonly informer
  readonly model = new Map<string, { rv: number; uid: string }>()
  readonly anomalies: string[] = []
  counts = { add: 0, update: 0, delete: 0, connect: 0, error: 0 }
  lastConnectAt = 0
  lastErrorAt = 0
  #stopped = false
  #restartTimer: NodeJS.Timeout | undefined

  constructor(kc: KubeConfig, path: string, list: () => Promise<any>, labelSelector?: string) {
    this.informer = makeInformer<V1ConfigMap>(kc, path, list, labelSelector)
    const key = (o: KubernetesObject) => `${o.metadata?.namespace}/${o.metadata?.name}`
    this.informer.on('add', (o) => {
      this.counts.add++
      const k = key(o)
      if (this.model.has(k)) this.anomalies.push(`add of ${k} already present (rv ${this.model.get(k)!.rv} → ${o.metadata?.resourceVersion})`)
      this.model.set(k, { rv: Number(o.metadata?.resourceVersion), uid: String(o.metadata?.uid) })
    })
    this.informer.on('update', (o) => {
      this.counts.update++
      const k = key(o)
      const prev = this.model.get(k)
      const rv = Number(o.metadata?.resourceVersion)
      if (!prev) this.anomalies.push(`update of unknown ${k}`)
      else if (rv <= prev.rv) this.anomalies.push(`update of ${k} goes back or repeats: ${prev.rv} → ${rv}`)
      this.model.set(k, { rv, uid: String(o.metadata?.uid) })
    })
    this.informer.on('delete', (o) => {
      this.counts.delete++
      const k = key(o)
      if (!this.model.has(k)) this.anomalies.push(`delete of unknown ${k}`)
      this.model.delete(k)
    })
    this.informer.on('connect', () => { this.counts.connect++; this.lastConnectAt = Date.now() })
    // client-node stops on errors (e.g. the server is down); restart it, as applications do.
    this.informer.on('error', () => {
      this.counts.error++
      this.lastErrorAt = Date.now()
      if (this.#stopped || this.#restartTimer) return
      this.#restartTimer = setTimeout(() => {
        this.#restartTimer = undefined
        if (!this.#stopped) this.informer.start().catch(() => { /* reported through 'error' */ })
      }, 250)
    })
  }

  start(): Promise<void> { return this.informer.start() }
  async stop(): Promise<void> { this.#stopped = true; clearTimeout(this.#restartTimer); await this.informer.stop() }

  /** namespace/name -> resourceVersion from the informer's cache */
  cache(): Map<string, string> {
    return new Map(this.informer.list().map((o) => [`${o.metadata?.namespace}/${o.metadata?.name}`, String(o.metadata?.resourceVersion)]))
  }
  modelState(): Map<string, string> { return new Map([...this.model].map(([k, v]) => [k, String(v.rv)])) }
}

const sorted = (m: Map<string, string>) => [...m].sort((a, b) => (a[0] < b[0] ? -1 : 1))

/** Waits until the informer's cache and its callback model equal the server's list; returns whether they did. */
async function converge(tr: Tracked, listPath: string, ms = 15_000): Promise<{ ok: boolean; server: Map<string, string> }> {
  const end = Date.now() + ms
  let server = await serverState(listPath)
  for (;;) {
    const same = JSON.stringify(sorted(tr.cache())) === JSON.stringify(sorted(server)) && JSON.stringify(sorted(tr.modelState())) === JSON.stringify(sorted(server))
    if (same) return { ok: true, server }
    if (Date.now() > end) return { ok: false, server }
    await sleep(100)
    server = await serverState(listPath)
  }
}

function diff(a: Map<string, string>, b: Map<string, string>): string {
  const out: string[] = []
  for (const [k, v] of a) if (b.get(k) !== v) out.push(`${k}: informer ${v} server ${b.get(k)}`)
  for (const [k, v] of b) if (!a.has(k)) out.push(`${k}: informer - server ${v}`)
  return out.slice(0, 10).join('; ')
}

/** A burst: creates, then updates (some twice) and deletes, interleaved, with concurrency. */
async function burst(prefix: string, n: number, labelOf: (i: number) => Record<string, string>): Promise<void> {
  await pool(16, Array.from({ length: n }, (_, i) => () => createCm(i % 3 === 0 ? NS2 : NS, `${prefix}-${i}`, labelOf(i))))
  const ops: Array<() => Promise<unknown>> = []
  for (let i = 0; i < n; i++) {
    const nsOf = i % 3 === 0 ? NS2 : NS
    const name = `${prefix}-${i}`
    if (i % 5 === 4) ops.push(() => remove(nsOf, name))
    else {
      ops.push(() => update(nsOf, name, (o) => { o.data.v = '1' }))
      // Flip the label of every other object: it leaves or enters the selector informer's set.
      if (i % 2 === 0) ops.push(() => update(nsOf, name, (o) => { o.metadata.labels = { ...(o.metadata.labels ?? {}), sel: o.metadata.labels?.sel === 'yes' ? 'no' : 'yes' } }))
    }
  }
  await pool(16, ops)
}

t.test('informers keep exactly the server state through bursts and a restart', async (t) => {
  await ns(NS)
  await ns(NS2)
  for (let i = 0; i < 10; i++) await createCm(NS, `pre-${i}`, { sel: i % 2 ? 'yes' : 'no' })

  const kc = new KubeConfig()
  kc.loadFromOptions({
    clusters: [{ name: 'orch', server: s.url, skipTLSVerify: true }],
    users: [{ name: 'admin', token: s.adminToken }],
    contexts: [{ name: 'orch', cluster: 'orch', user: 'admin' }],
    currentContext: 'orch',
  })
  const api = kc.makeApiClient(CoreV1Api)
  const nsInf = new Tracked(kc, base(NS), () => api.listNamespacedConfigMap({ namespace: NS }))
  const selInf = new Tracked(kc, '/api/v1/configmaps', () => api.listConfigMapForAllNamespaces({ labelSelector: 'sel=yes' }), 'sel=yes')
  t.teardown(async () => { await nsInf.stop(); await selInf.stop() })
  await nsInf.start()
  await selInf.start()
  const nsList = base(NS)
  const selList = '/api/v1/configmaps?labelSelector=sel%3Dyes'

  let c = await converge(nsInf, nsList)
  t.ok(c.ok, `initial sync of the namespace informer (${diff(nsInf.cache(), c.server)})`)
  t.equal(nsInf.cache().size, 10)
  c = await converge(selInf, selList)
  t.ok(c.ok, `initial sync of the selector informer (${diff(selInf.cache(), c.server)})`)
  t.equal(selInf.cache().size, 5)

  await burst('b1', 120, (i) => ({ sel: i % 4 < 2 ? 'yes' : 'no' }))
  c = await converge(nsInf, nsList)
  t.ok(c.ok, `namespace informer equals the server after burst 1 (${diff(nsInf.cache(), c.server)})`)
  t.ok(c.server.size > 60, `(${c.server.size} objects)`)
  c = await converge(selInf, selList)
  t.ok(c.ok, `selector informer equals the server after burst 1 (${diff(selInf.cache(), c.server)})`)
  t.same(nsInf.anomalies, [], 'namespace informer: no duplicate, unknown or backwards callbacks')
  t.same(selInf.anomalies, [], 'selector informer: no duplicate, unknown or backwards callbacks')
  t.ok(selInf.counts.delete > 0 && selInf.counts.add > 0, `the selector informer saw objects enter and leave its set (${JSON.stringify(selInf.counts)})`)

  // Restart: SIGTERM (the streams end), a new process on the same data dir and port.
  const before = { ns: { ...nsInf.counts }, sel: { ...selInf.counts } }
  await s.stop()
  await sleep(1000)
  t.ok(nsInf.counts.error > before.ns.error, 'the informer noticed the server was gone')
  s = await startServer({ dataDir, keepDataDir: true, port })
  t.equal(s.url, `http://127.0.0.1:${port}`, 'same address')
  // Let the informers reconnect (they retry every 250 ms): a connect after their last error, and no error for 1.5 s.
  const reconnected = async (tr: Tracked) => {
    const end = Date.now() + 15_000
    while (Date.now() < end) {
      if (tr.lastConnectAt > tr.lastErrorAt && Date.now() - tr.lastErrorAt > 1500) return true
      await sleep(100)
    }
    return false
  }
  t.ok(await reconnected(nsInf), 'namespace informer reconnected and stays connected')
  t.ok(await reconnected(selInf), 'selector informer reconnected and stays connected')
  c = await converge(nsInf, nsList)
  t.ok(c.ok, `namespace informer equals the server after the restart (${diff(nsInf.cache(), c.server)})`)
  c = await converge(selInf, selList)
  t.ok(c.ok, `selector informer equals the server after the restart (${diff(selInf.cache(), c.server)})`)
  const churn = (now: typeof before.ns, was: typeof before.ns) => now.add + now.update + now.delete - was.add - was.update - was.delete
  t.equal(churn(nsInf.counts, before.ns), 0, 'nothing changed while the server was down: no add/update/delete callbacks across the restart')
  t.equal(churn(selInf.counts, before.sel), 0, 'selector informer: none either')

  // The watch is live again: a probe and a second burst.
  await createCm(NS, 'probe')
  c = await converge(nsInf, nsList, 10_000)
  t.ok(c.ok && nsInf.cache().has(`${NS}/probe`), 'a create after the restart reaches the informer')
  await burst('b2', 90, (i) => ({ sel: i % 3 === 1 ? 'yes' : 'no' }))
  // And changes to objects from before the restart.
  await pool(8, [...Array.from({ length: 10 }, (_, i) => () => (i % 3 === 0 ? remove(NS, `pre-${i}`) : update(NS, `pre-${i}`, (o) => { o.data.v = 'post-restart'; o.metadata.labels = { sel: 'yes' } })))])
  c = await converge(nsInf, nsList)
  t.ok(c.ok, `namespace informer equals the server after burst 2 (${diff(nsInf.cache(), c.server)})`)
  c = await converge(selInf, selList)
  t.ok(c.ok, `selector informer equals the server after burst 2 (${diff(selInf.cache(), c.server)})`)
  t.same(nsInf.anomalies, [], 'namespace informer: no duplicate, unknown or backwards callbacks overall')
  t.same(selInf.anomalies, [], 'selector informer: no duplicate, unknown or backwards callbacks overall')
  const pre1 = nsInf.informer.get('pre-1', NS) as V1ConfigMap | undefined
  t.equal(pre1?.data?.v, 'post-restart', 'the cached object carries the newest content')
  t.comment(`namespace informer callbacks ${JSON.stringify(nsInf.counts)}; selector informer ${JSON.stringify(selInf.counts)}`)
})
