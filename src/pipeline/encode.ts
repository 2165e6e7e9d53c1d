// The encode stage: choose the response media type from Accept, and write objects, lists and Status in it.
import { stringify as yamlStringify } from 'yaml'
import { notAcceptable } from '../machinery/errors.js'

export type MediaType = 'json' | 'yaml'

export const SERVED_MEDIA_TYPES = ['application/json', 'application/yaml']

interface AcceptEntry { type: string; sub: string; params: Record<string, string>; q: number }

export function parseAccept(accept: string): AcceptEntry[] {
  const out: AcceptEntry[] = []
  for (const part of accept.split(',')) {
    const [mt, ...ps] = part.split(';').map((s) => s.trim())
    if (!mt) continue
    const [type, sub = ''] = mt.toLowerCase().split('/')
    const params: Record<string, string> = {}
    let q = 1
    for (const p of ps) {
      const eq = p.indexOf('=')
      if (eq < 0) continue
      const k = p.slice(0, eq).trim().toLowerCase()
      const v = p.slice(eq + 1).trim().replace(/^"|"$/g, '')
      if (k === 'q') q = Number(v)
      else params[k] = v
    }
    if (!(q > 0)) continue
    out.push({ type, sub, params, q })
  }
  return out.sort((a, b) => b.q - a.q)
}

/** The response form for an Accept header; 406 when none of the entries is served. */
export function negotiate(accept: string | undefined): MediaType {
  if (accept === undefined || accept.trim() === '') return 'json'
  for (const e of parseAccept(accept)) {
    // Table, discovery and other `as=` forms are not served yet: the client's plain fallback follows.
    if (e.params.as !== undefined) continue
    if (e.type === '*' && (e.sub === '*' || e.sub === '')) return 'json'
    if (e.type !== 'application') continue
    if (e.sub === 'json' || e.sub === '*') return 'json'
    if (e.sub === 'yaml') return 'yaml'
  }
  throw notAcceptable(SERVED_MEDIA_TYPES)
}

export function contentTypeOf(mt: MediaType): string {
  return mt === 'yaml' ? 'application/yaml' : 'application/json'
}

/** Bytes of stored JSON in the negotiated form; JSON stays as it is unless pretty output is asked for. */
export function encodeJsonBytes(json: Buffer | string, mt: MediaType, pretty: boolean): Buffer | string {
  if (mt === 'json') {
    if (!pretty) return json
    return JSON.stringify(JSON.parse(json.toString()), null, 2) + '\n'
  }
  return yamlStringify(JSON.parse(json.toString()))
}

export function encodeValue(value: unknown, mt: MediaType, pretty: boolean): string {
  if (mt === 'yaml') return yamlStringify(value)
  return pretty ? JSON.stringify(value, null, 2) + '\n' : JSON.stringify(value)
}
