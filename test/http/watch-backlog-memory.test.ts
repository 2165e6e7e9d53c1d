// Black-box: watches whose start-up state (a resumed watch's backlog, or the initial events) is far larger than what a
// socket takes at once.
// - Every event arrives without a later write to push it out. uWS keeps what the socket did not take, but does not send
//   it on by itself once a response has a writable handler: the tail of the start-up state waited for the watch's next
//   event, on a quiet type for as long as the watch lasted.
// - The backlog is not kept while the watch stays open. Found by the kubelet-shape fan-out benchmark: 10k watchers that
//   each resumed a few dozen events behind kept about 55 KB each, and the front-end's heap grew to 650 MB. Here 30 open
//   watches each resume 40 events of 150 KB behind (6 MB each, under the 8 MB a slow watcher may have unsent before it
//   is cut off); the server's resident memory may not grow by anything like 30 x 6 MB while they stay open.
import t, { type Test } from 'tap'
import http from 'node:http'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { startServer, type TestServer } from '../helpers/server.js'

const EVENTS = 40
const WATCHERS = 30
const VALUE_BYTES = 150 * 1024

function rssMB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) / 1024 : NaN
}

/** A watch that counts ADDED events and stays open; resolves once `n` arrived, with the request to close later. */
function openWatch(s: TestServer, path: string, n: number, ms = 60_000): Promise<http.ClientRequest> {
  return new Promise((resolve, reject) => {
    let seen = 0
    let tail = ''
    const timer = setTimeout(() => { req.destroy(); reject(new Error(`watch saw ${seen} of ${n} events in ${ms / 1000} s`)) }, ms)
    const req = http.get(s.url + path, { agent: false, headers: { authorization: `Bearer ${s.adminToken}` } }, (res) => {
      if (res.statusCode !== 200) { clearTimeout(timer); reject(new Error(`watch: ${res.statusCode}`)); res.resume(); return }
      res.setEncoding('utf8')
      // A reader that starts late (as a busy client does): the server's first writes fill the socket, and uWS keeps
      // the rest until the socket drains.
      res.pause()
      setTimeout(() => res.resume(), 300)
      res.on('data', (c: string) => {
        // only the start of each line is looked at: the objects are large
        const text = tail + c
        let from = 0
        let nl: number
        while ((nl = text.indexOf('\n', from)) >= 0) {
          // (a JSON stream starts with white space)
          let at = from
          while (text[at] === ' ') at++
          if (text.startsWith('{"type":"ADDED"', at)) seen++
          from = nl + 1
        }
        tail = text.slice(from, from + 64)
        if (seen === n) { clearTimeout(timer); resolve(req) }
      })
    })
    req.on('error', (err) => { clearTimeout(timer); reject(err) })
  })
}

/** A server with EVENTS large ConfigMaps in namespace `big`, and the resourceVersion before the first. */
async function seeded(t: Test): Promise<{ s: TestServer; base: string; from: string }> {
  const s = await startServer({ args: ['--watch-history', '5m'] })
  t.teardown(() => s.stop())
  const ns = 'big'
  t.equal((await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status, 201)
  const base = `/api/v1/namespaces/${ns}/configmaps`
  const from = (await s.request('GET', `${base}?limit=1`)).json.metadata.resourceVersion as string
  let created = 0
  for (let i = 0; i < EVENTS; i++) {
    // incompressible, so stored compression does not shrink what the backlog carries
    const v = randomBytes(VALUE_BYTES * 3 / 4).toString('base64')
    const r = await s.request('POST', base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` }, data: { v } })
    if (r.status === 201) created++
  }
  t.equal(created, EVENTS, 'created')
  return { s, base, from }
}

t.test('a start-up state larger than the socket takes arrives in full with no later write', async (t) => {
  const { s, base, from } = await seeded(t)
  const paths: Record<string, string> = {
    'resumed from an older resourceVersion': `${base}?watch=1&resourceVersion=${from}`,
    'initial events of a watch without a resourceVersion': `${base}?watch=1`,
    'sendInitialEvents (watch-list), with bookmarks': `${base}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
  }
  for (const [what, path] of Object.entries(paths)) {
    // the watch is given 20 s, far more than 6 MB over loopback needs; nothing is written meanwhile
    const req = await openWatch(s, path, EVENTS, 20_000).catch((err: Error) => err)
    t.notOk(req instanceof Error, `${what}: ${req instanceof Error ? req.message : 'all events'}`)
    if (!(req instanceof Error)) req.destroy()
  }
})

t.test('a resumed watch does not keep its backlog while it stays open', async (t) => {
  const { s, base, from } = await seeded(t)
  // the code paths of a watch are warmed up (and their memory taken) by one watch before the baseline
  ;(await openWatch(s, `${base}?watch=1&resourceVersion=${from}`, EVENTS)).destroy()
  await new Promise((r) => setTimeout(r, 1000))
  const before = rssMB(s.proc.pid!)
  const open: http.ClientRequest[] = []
  for (let i = 0; i < WATCHERS; i++) open.push(await openWatch(s, `${base}?watch=1&resourceVersion=${from}`, EVENTS))
  t.teardown(() => { for (const r of open) r.destroy() })
  // some work after the last backlog, so that garbage of the last few is collected
  for (let i = 0; i < 200; i++) await s.request('GET', `${base}/cm-${i % EVENTS}`)
  await new Promise((r) => setTimeout(r, 1000))
  const grown = rssMB(s.proc.pid!) - before
  const kept = (WATCHERS * EVENTS * VALUE_BYTES) / (1024 * 1024)
  t.ok(grown < kept / 3, `resident memory grew ${grown.toFixed(0)} MB with ${WATCHERS} open watches that were sent ${kept.toFixed(0)} MB of backlog`)
})

t.test('a watch read late gets every one of many small events, with its framing intact', async (t) => {
  // Events that arrive while the client is not reading fill the socket; the server writes several per send (corked).
  // A corked send that outgrew uWS's cork buffer on a full socket lost its last frame's bytes (the client's HTTP
  // parser failed on the broken chunk framing), and the tail waited for a later event.
  const s = await startServer()
  t.teardown(() => s.stop())
  const N = 4000
  t.equal((await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'late' } })).status, 201)
  const base = '/api/v1/namespaces/late/configmaps'
  const rv = (await s.request('GET', `${base}?limit=1`)).json.metadata.resourceVersion as string
  let seen = 0
  let failure = ''
  let tail = ''
  let res: http.IncomingMessage | undefined
  const req = http.get(`${s.url}${base}?watch=1&resourceVersion=${rv}`, { agent: false, headers: { authorization: `Bearer ${s.adminToken}` } }, (r) => {
    res = r
    r.setEncoding('utf8')
    r.pause()
    r.on('data', (c: string) => {
      const text = tail + c
      let from = 0
      let nl: number
      while ((nl = text.indexOf('\n', from)) >= 0) { seen++; from = nl + 1 }
      tail = text.slice(from, from + 64)
    })
  })
  req.on('error', (err) => { failure = err.message })
  t.teardown(() => req.destroy())
  while (res === undefined && failure === '') await new Promise((r) => setTimeout(r, 20))
  const pad = 'x'.repeat(1000)
  let created = 0
  for (let i = 0; i < N; i += 32) {
    const batch = await Promise.all(Array.from({ length: Math.min(32, N - i) }, (_, j) =>
      s.request('POST', base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c-${i + j}` }, data: { pad } })))
    created += batch.filter((r) => r.status === 201).length
  }
  t.equal(created, N, 'created')
  res?.resume()
  for (let k = 0; k < 200 && seen < N && failure === ''; k++) await new Promise((r) => setTimeout(r, 50))
  t.equal(failure, '', 'the stream parses')
  t.equal(seen, N, 'every event arrived with no later write')
})
