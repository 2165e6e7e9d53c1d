// Black-box tests of /livez, /readyz, /healthz and their per-check paths (spec 1, Health endpoints), over real HTTP.
import t from 'tap'
import { startServer, httpRequest, type TestServer } from '../helpers/server.js'

let s: TestServer

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

const lines = (body: string) => body.split('\n').filter((l) => l !== '')

t.test('the aggregate endpoints answer 200 ok', async (t) => {
  for (const ep of ['/livez', '/readyz', '/healthz']) {
    const r = await s.request('GET', ep)
    t.equal(r.status, 200, `${ep} status`)
    t.equal(r.text, 'ok', `${ep} body`)
    t.match(String(r.headers['content-type']), /^text\/plain/, `${ep} content type`)
  }
})

t.test('a trailing slash is the same endpoint', async (t) => {
  const r = await s.request('GET', '/livez/')
  t.equal(r.status, 200)
  t.equal(r.text, 'ok')
})

t.test('?verbose lists one [+]<check> ok line per check and ends with "<endpoint> check passed"', async (t) => {
  for (const ep of ['livez', 'readyz', 'healthz']) {
    const r = await s.request('GET', `/${ep}?verbose`)
    t.equal(r.status, 200, `${ep} status`)
    const ls = lines(r.text)
    t.ok(r.text.endsWith('\n'), `${ep} body ends with a newline`)
    t.equal(ls[ls.length - 1], `${ep} check passed`, `${ep} last line`)
    const checks = ls.slice(0, -1)
    t.ok(checks.length >= 4, `${ep} has several checks`)
    for (const l of checks) t.match(l, /^\[\+\][a-z0-9/._-]+ ok$/, `${ep} line "${l}"`)
    t.ok(checks.includes('[+]ping ok'), `${ep} has ping`)
    t.ok(checks.includes('[+]log ok'), `${ep} has log`)
    t.ok(checks.some((l) => l.startsWith('[+]poststarthook/')), `${ep} has poststarthook entries`)
    // No duplicate check names.
    t.equal(new Set(checks).size, checks.length, `${ep} has no duplicate lines`)
  }
})

t.test('verbose=true and verbose=1 are verbose too', async (t) => {
  for (const q of ['verbose=true', 'verbose=1']) {
    const r = await s.request('GET', `/livez?${q}`)
    t.equal(r.status, 200)
    t.equal(lines(r.text).at(-1), 'livez check passed', q)
  }
})

t.test('the checks the spec names are present (ping, log, autoregister-completion; shutdown on readiness)', async (t) => {
  const ready = lines((await s.request('GET', '/readyz?verbose')).text)
  const live = lines((await s.request('GET', '/livez?verbose')).text)
  for (const c of ['ping', 'log', 'autoregister-completion']) {
    t.ok(live.includes(`[+]${c} ok`), `livez has ${c}`)
    t.ok(ready.includes(`[+]${c} ok`), `readyz has ${c}`)
  }
})

t.test('readiness has the shutdown check and liveness does not', async (t) => {
  const names = (ls: string[]) => ls.slice(0, -1).map((l) => l.replace(/^\[\+\]/, '').replace(/ ok$/, ''))
  const ready = lines((await s.request('GET', '/readyz?verbose')).text)
  const live = lines((await s.request('GET', '/livez?verbose')).text)
  t.ok(ready.includes('[+]shutdown ok'), 'readyz lists [+]shutdown ok')
  t.notOk(live.some((l) => l.includes('shutdown')), 'livez has no shutdown line')
  const one = await s.request('GET', '/readyz/shutdown')
  t.equal(one.status, 200)
  t.equal(one.text, 'ok')
  const none = await s.request('GET', '/livez/shutdown')
  t.equal(none.status, 404, '/livez/shutdown is not a check')
  // /healthz has the checks common to both (upstream adds shutdown to readiness only).
  const health = lines((await s.request('GET', '/healthz?verbose')).text)
  t.notOk(health.some((l) => l.includes('shutdown')), 'healthz has no shutdown line')
  t.equal((await s.request('GET', '/healthz/shutdown')).status, 404, '/healthz/shutdown is not a check')
  t.same(names(health).sort(), names(live).sort(), 'healthz lists the liveness checks')
  // Every liveness check is also a readiness check, readiness has exactly one more (shutdown).
  t.same(names(ready).filter((n) => n !== 'shutdown').sort(), names(live).sort())
})

t.test('?exclude=ping&verbose shows [+]ping excluded: ok and still passes', async (t) => {
  for (const ep of ['livez', 'readyz']) {
    const r = await s.request('GET', `/${ep}?exclude=ping&verbose`)
    t.equal(r.status, 200)
    const ls = lines(r.text)
    t.ok(ls.includes('[+]ping excluded: ok'), `${ep} ping excluded`)
    t.notOk(ls.includes('[+]ping ok'), `${ep} has no plain ping line`)
    t.equal(ls.at(-1), `${ep} check passed`)
  }
  // Parameter order does not matter; without verbose the body is just ok.
  const r2 = await s.request('GET', '/readyz?verbose&exclude=ping')
  t.ok(lines(r2.text).includes('[+]ping excluded: ok'))
  const r3 = await s.request('GET', '/readyz?exclude=ping')
  t.equal(r3.status, 200)
  t.equal(r3.text, 'ok')
})

t.test('exclude of two checks', async (t) => {
  const r = await s.request('GET', '/readyz?verbose&exclude=ping&exclude=shutdown')
  t.equal(r.status, 200)
  const ls = lines(r.text)
  t.ok(ls.includes('[+]ping excluded: ok'))
  t.ok(ls.includes('[+]shutdown excluded: ok'))
})

t.test('one check by path', async (t) => {
  for (const ep of ['livez', 'readyz', 'healthz']) {
    const r = await s.request('GET', `/${ep}/ping`)
    t.equal(r.status, 200, `/${ep}/ping`)
    t.equal(r.text, 'ok', `/${ep}/ping body`)
  }
  const log = await s.request('GET', '/livez/log')
  t.equal(log.status, 200)
  t.equal(log.text, 'ok')
  // A check whose name has a slash.
  const ready = lines((await s.request('GET', '/readyz?verbose')).text)
  const hook = ready.find((l) => l.startsWith('[+]poststarthook/'))!.replace(/^\[\+\]/, '').replace(/ ok$/, '')
  const h = await s.request('GET', `/readyz/${hook}`)
  t.equal(h.status, 200, `/readyz/${hook}`)
  t.equal(h.text, 'ok')
})

t.test('an unknown check path is 404', async (t) => {
  for (const p of ['/livez/nope', '/readyz/nope', '/healthz/nope', '/livez/ping/extra']) {
    const r = await s.request('GET', p)
    t.equal(r.status, 404, p)
    t.equal(r.text.trim(), '404 page not found', `${p} body`)
  }
})

t.test('/readyz fails during --shutdown-delay-duration, /livez stays ok, then the server stops', async (t) => {
  const d = await startServer({ args: ['--shutdown-delay-duration', '3s'] })
  t.teardown(() => d.stop())
  const before = await d.request('GET', '/readyz')
  t.equal(before.status, 200)
  t.equal(before.text, 'ok')
  const exited = new Promise<void>((resolve) => d.proc.once('exit', () => resolve()))
  const t0 = Date.now()
  d.proc.kill('SIGTERM')
  let failure: { status: number; text: string } | undefined
  let failedAt = 0
  let liveDuring: { status: number; text: string } | undefined
  let verboseDuring: { status: number; text: string } | undefined
  let lastOk = 0
  while (Date.now() - t0 < 8000) {
    let r
    try { r = await httpRequest(d.url, 'GET', '/readyz') } catch { break } // stopped accepting
    if (r.status !== 200 && !failure) {
      failure = { status: r.status, text: r.text }
      failedAt = Date.now()
      try {
        liveDuring = await httpRequest(d.url, 'GET', '/livez')
        verboseDuring = await httpRequest(d.url, 'GET', '/readyz?verbose')
      } catch { /* closed meanwhile */ }
    }
    if (r.status === 200) lastOk = Date.now()
    await new Promise((res) => setTimeout(res, 50))
  }
  await exited
  const stoppedAfter = Date.now() - t0
  t.ok(failure, '/readyz failed before the server stopped accepting')
  if (!failure) return
  t.ok(failure.status === 500 || failure.status === 503, `status ${failure.status} is 500 or 503`)
  const ls = lines(failure.text)
  t.ok(ls.includes('[-]shutdown failed: reason withheld'), 'failure line for shutdown')
  t.equal(ls.at(-1), 'readyz check failed')
  t.ok(ls.includes('[+]ping ok'), 'the other checks still pass')
  t.ok(failedAt - t0 < 1500, 'readiness fails promptly after SIGTERM')
  t.ok(lastOk === 0 || lastOk < failedAt, 'no 200 after the first failure')
  t.ok(stoppedAfter >= 2500, `the listeners stay open for about the delay (${stoppedAfter} ms)`)
  if (liveDuring) {
    t.equal(liveDuring.status, 200, '/livez stays 200 during the delay')
    t.equal(liveDuring.text, 'ok')
  }
  if (verboseDuring) {
    t.not(verboseDuring.status, 200)
    t.ok(lines(verboseDuring.text).includes('[-]shutdown failed: reason withheld'))
  }
})
