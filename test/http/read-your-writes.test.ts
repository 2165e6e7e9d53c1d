// Black-box: a GET after an acknowledged write sees that write (or a newer one), under concurrent writers and readers.
import t from 'tap'
import { startServer } from '../helpers/server.js'

t.test('every GET right after an acknowledged PUT returns that version or a newer one', async (t) => {
  const s = await startServer()
  t.teardown(() => s.stop())
  const base = '/api/v1/namespaces/default/configmaps'
  const WRITERS = 12
  const ROUNDS = 40
  for (let w = 0; w < WRITERS; w++) {
    const r = await s.request('POST', base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `ryw-${w}` }, data: { n: '0' } })
    t.equal(r.status, 201)
  }
  let stale = 0
  let checks = 0
  let stop = false
  // Readers keep the front-end's read snapshot busy between the writes.
  const readers = Promise.all(Array.from({ length: 4 }, async (_, k) => {
    while (!stop) await s.request('GET', `${base}/ryw-${k % WRITERS}`)
  }))
  await Promise.all(Array.from({ length: WRITERS }, async (_, w) => {
    const path = `${base}/ryw-${w}`
    let o = (await s.request('GET', path)).json
    for (let i = 1; i <= ROUNDS; i++) {
      o.data.n = String(i)
      const put = await s.request('PUT', path, o)
      if (put.status !== 200) throw new Error(`put: ${put.status} ${put.text}`)
      const got = await s.request('GET', path)
      checks++
      if (Number(got.json.metadata.resourceVersion) < Number(put.json.metadata.resourceVersion) || got.json.data.n !== String(i)) stale++
      o = put.json
    }
  }))
  stop = true
  await readers
  t.equal(checks, WRITERS * ROUNDS)
  t.equal(stale, 0, `no GET after an acknowledged PUT was stale (${checks} checks)`)
})
