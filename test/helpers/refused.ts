// Test helper: a create that must be refused with exactly the given causes (422 Invalid), leaving nothing stored.
import type { TestServer } from './server.js'

export interface Cause { field: string; reason: string; message: string }

// The causes of upstream's field errors, as a Status carries them (value printed as Go's %q, or as given).
export const inv = (field: string, value: string | number, detail: string): Cause => ({ field, reason: 'FieldValueInvalid', message: `Invalid value: ${typeof value === 'string' ? JSON.stringify(value) : value}: ${detail}` })
export const printed = (field: string, value: string, detail: string): Cause => ({ field, reason: 'FieldValueInvalid', message: `Invalid value: ${value}: ${detail}` })
export const req = (field: string, detail = ''): Cause => ({ field, reason: 'FieldValueRequired', message: detail === '' ? 'Required value' : `Required value: ${detail}` })
export const forb = (field: string, detail: string): Cause => ({ field, reason: 'FieldValueForbidden', message: `Forbidden: ${detail}` })
export const dup = (field: string, value: string): Cause => ({ field, reason: 'FieldValueDuplicate', message: `Duplicate value: ${JSON.stringify(value)}` })
export const notFound = (field: string, value: string): Cause => ({ field, reason: 'FieldValueNotFound', message: `Not found: ${JSON.stringify(value)}` })
export const unsupported = (field: string, value: string, supported: string[]): Cause => ({
  field, reason: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${supported.map((x) => JSON.stringify(x)).join(', ')}`,
})

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
