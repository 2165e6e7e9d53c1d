// Test helper: a create that must be refused with exactly the given causes (422 Invalid), leaving nothing stored.
import type { TestServer } from './server.js'

export interface Cause { field: string; reason: string; message: string }

type Asserts = import('tap').Test

/** POST `body` to `base`; expects a 422 whose causes and message are exactly these, and a 404 for the name. */
export async function expectRefused(t: Asserts, s: TestServer, base: string, body: Record<string, any>, groupKind: string, causes: Cause[]): Promise<void> {
  const r = await s.request('POST', base, body)
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.reason, 'Invalid')
  t.same(r.json?.details?.causes, causes)
  const lines = [...new Set(causes.map((c) => `${c.field}: ${c.message}`))]
  t.equal(r.json?.message, `${groupKind} "${body.metadata.name}" is invalid: ${lines.length === 1 ? lines[0] : `[${lines.join(', ')}]`}`)
  t.equal((await s.request('GET', `${base}/${body.metadata.name}`)).status, 404, 'nothing stored')
}
