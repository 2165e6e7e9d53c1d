// writeResponse: the bytes a uWS response puts on the wire (status line, headers, body) whatever path writes them,
// with the packed header blocks kept apart by content type, status and the identity of their prepared pairs.
import t from 'tap'
import type { HttpResponse } from 'uWebSockets.js'
import { writeResponse } from '../../src/server/respond.js'
import type { Response, ResponseHeader } from '../../src/pipeline/context.js'

/** A response that writes what uWS would (name, ": ", value, CRLF per header), and counts its corks and calls. */
function fakeRes() {
  const out: string[] = []
  const f = {
    corks: 0, calls: 0, ended: false,
    wire: () => out.join(''),
    cork(cb: () => void) { f.corks++; cb(); return f },
    writeStatus(s: string | Buffer) { f.calls++; out.push(`HTTP/1.1 ${s.toString()}\r\n`); return f },
    writeHeader(k: string | Buffer, v: string | Buffer) { f.calls++; out.push(`${k.toString()}: ${v.toString()}\r\n`); return f },
    end(body: string | Buffer) { f.calls++; f.ended = true; out.push(`\r\n${body.toString()}`); return f },
    endWithoutBody() { f.calls++; f.ended = true; out.push('\r\n'); return f },
  }
  return f
}

const pair = (k: string, v: string): ResponseHeader => [Buffer.from(k), Buffer.from(v)]

/** The expected bytes, built from the parts. */
function wire(status: string, contentType: string, headers: Array<[string, string]>, body: string, noCache = true): string {
  const lines = [`HTTP/1.1 ${status}`, `Content-Type: ${contentType}`]
  if (noCache) lines.push('Cache-Control: no-cache, private')
  for (const [k, v] of headers) lines.push(`${k}: ${v}`)
  return lines.join('\r\n') + '\r\n\r\n' + body
}

function write(r: Response, head = false, corked = false) {
  const res = fakeRes()
  writeResponse(res as unknown as HttpResponse, r, head, corked)
  return res
}

const a1 = pair('X-Orch-PF-FlowSchema-UID', 'aaaa')
const a2 = pair('X-Orch-PF-PriorityLevel-UID', 'bbbb')
const b1 = pair('X-Orch-PF-FlowSchema-UID', 'cccc')
const b2 = pair('X-Orch-PF-PriorityLevel-UID', 'dddd')
const J = 'application/json'

t.test('prepared pairs: each list of pairs gets its own header block, in any order', async (t) => {
  const seq: Array<[number, string, string, ResponseHeader[], Array<[string, string]>]> = [
    [200, '200 OK', J, [a1, a2], [['X-Orch-PF-FlowSchema-UID', 'aaaa'], ['X-Orch-PF-PriorityLevel-UID', 'bbbb']]],
    [200, '200 OK', J, [b1, b2], [['X-Orch-PF-FlowSchema-UID', 'cccc'], ['X-Orch-PF-PriorityLevel-UID', 'dddd']]],
    [200, '200 OK', J, [a1, b2], [['X-Orch-PF-FlowSchema-UID', 'aaaa'], ['X-Orch-PF-PriorityLevel-UID', 'dddd']]],
    [404, '404 Not Found', J, [a1, a2], [['X-Orch-PF-FlowSchema-UID', 'aaaa'], ['X-Orch-PF-PriorityLevel-UID', 'bbbb']]],
    [200, '200 OK', 'application/yaml', [a1, a2], [['X-Orch-PF-FlowSchema-UID', 'aaaa'], ['X-Orch-PF-PriorityLevel-UID', 'bbbb']]],
    [200, '200 OK', J, [a1], [['X-Orch-PF-FlowSchema-UID', 'aaaa']]],
    [200, '200 OK', J, [], []],
    [200, '200 OK', J, [a2, a1], [['X-Orch-PF-PriorityLevel-UID', 'bbbb'], ['X-Orch-PF-FlowSchema-UID', 'aaaa']]],
    // A fresh list of the same pairs (each request makes its own list).
    [200, '200 OK', J, [b1, b2], [['X-Orch-PF-FlowSchema-UID', 'cccc'], ['X-Orch-PF-PriorityLevel-UID', 'dddd']]],
    [200, '200 OK', J, [a1, a2], [['X-Orch-PF-FlowSchema-UID', 'aaaa'], ['X-Orch-PF-PriorityLevel-UID', 'bbbb']]],
  ]
  for (let round = 0; round < 2; round++) {
    for (const [status, line, ct, headers, want] of seq) {
      const body = `{"n":${status}}`
      const res = write({ status, body, contentType: ct, headers: [...headers] }, false, round === 1)
      t.equal(res.wire(), wire(line, ct, want, body), `${line} ${ct} ${want.map((h) => h[1]).join(',')} (round ${round})`)
      t.ok(res.ended)
    }
  }
})

t.test('another pair of the same name is not the pair already seen', async (t) => {
  const p = pair('X-A', 'one')
  const q = pair('X-A', 'two')
  t.equal(write({ status: 200, body: '', contentType: J, headers: [p] }).wire(), wire('200 OK', J, [['X-A', 'one']], ''))
  t.equal(write({ status: 200, body: '', contentType: J, headers: [q] }).wire(), wire('200 OK', J, [['X-A', 'two']], ''))
})

t.test('text headers, Cache-Control and HEAD take the header-by-header path, with the same bytes', async (t) => {
  const body = Buffer.from('{"kind":"X"}')
  t.equal(write({ status: 200, body, contentType: J, headers: [a1, ['Warning', '299 - "w"']] }).wire(),
    wire('200 OK', J, [['X-Orch-PF-FlowSchema-UID', 'aaaa'], ['Warning', '299 - "w"']], '{"kind":"X"}'))
  t.equal(write({ status: 200, body, contentType: J, headers: [['Cache-Control', 'public, immutable'], a2] }).wire(),
    wire('200 OK', J, [['Cache-Control', 'public, immutable'], ['X-Orch-PF-PriorityLevel-UID', 'bbbb']], '{"kind":"X"}', false))
  const head = write({ status: 200, body, contentType: J, headers: [a1, a2] }, true)
  t.equal(head.wire(), wire('200 OK', J, [['X-Orch-PF-FlowSchema-UID', 'aaaa'], ['X-Orch-PF-PriorityLevel-UID', 'bbbb'], ['Content-Length', String(body.length)]], ''))
})

t.test('corked: written as it is; otherwise in one cork; a packed answer is two writes', async (t) => {
  const r = (): Response => ({ status: 200, body: 'x', contentType: J, headers: [a1, a2] })
  const corked = write(r(), false, true)
  t.equal(corked.corks, 0)
  t.equal(corked.calls, 2)
  const loose = write(r(), false, false)
  t.equal(loose.corks, 1)
  t.equal(loose.wire(), corked.wire())
  const text = write({ status: 200, body: 'x', contentType: J, headers: [['Etag', '"1"']] }, false, true)
  t.equal(text.corks, 0)
  t.equal(text.wire(), wire('200 OK', J, [['Etag', '"1"']], 'x'))
})

t.test('many lists of pairs (the bound clears the blocks): each answer still has its own', async (t) => {
  let wrong = 0
  const pairs = Array.from({ length: 1500 }, (_, i) => pair('X-N', String(i)))
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < pairs.length; i++) {
      const got = write({ status: 200, body: '', contentType: J, headers: [pairs[i]] }, false, true).wire()
      if (got !== wire('200 OK', J, [['X-N', String(i)]], '')) wrong++
    }
  }
  t.equal(wrong, 0)
})
