// Parse a request path and method into RequestInfo (verb, group, version, namespace, resource, subresource, name).

export interface RequestInfo {
  isResourceRequest: boolean
  path: string
  /** API verb: get, list, watch, create, update, patch, delete, deletecollection; or the lower-case HTTP method for non-resource paths. */
  verb: string
  apiPrefix: '' | 'api' | 'apis'
  group: string
  version: string
  namespace: string
  resource: string
  subresource: string
  name: string
  /** Path segments after the version, for 404 decisions. */
  parts: string[]
}

/**
 * A boolean query option as upstream decodes one (watch, allowWatchBookmarks, sendInitialEvents): absent is false;
 * `0` and `false` in any case (`False` from Python's str(False)) are false; anything else, an empty value too, is true.
 */
export function queryFlag(v: string | null | undefined): boolean {
  if (v === null || v === undefined) return false
  if (v === '0') return false
  return v.length !== 5 || v.toLowerCase() !== 'false'
}

/**
 * Parsed paths by method, as parsed with no `watch` query parameter (the only part of the query a parse reads). Each
 * request gets its own copy: the pipeline rewrites an alias path's group in place. Bounded: cleared when full.
 */
const parsed = new Map<string, Map<string, RequestInfo>>()
let parsedCount = 0
const PARSED_LIMIT = 8192

/** parseRequestInfo through the cache of parsed paths (a request with a `watch` parameter is parsed as it comes). */
export function requestInfoOf(method: string, path: string, query: URLSearchParams): RequestInfo {
  if (query.size !== 0 && query.has('watch')) return parseRequestInfo(method, path, query)
  let byPath = parsed.get(method)
  const hit = byPath?.get(path)
  if (hit !== undefined) return copyInfo(hit)
  const info = parseRequestInfo(method, path, query)
  if (parsedCount >= PARSED_LIMIT) { parsed.clear(); parsedCount = 0; byPath = undefined }
  if (byPath === undefined) { byPath = new Map(); parsed.set(method, byPath) }
  // Frozen: a write to the shared segments would reach every later request of the path.
  Object.freeze(info.parts)
  byPath.set(path, copyInfo(info))
  parsedCount++
  return info
}

/** A copy with the same shape as parseRequestInfo's (the segments after the version are shared: nothing writes to them). */
function copyInfo(i: RequestInfo): RequestInfo {
  return {
    isResourceRequest: i.isResourceRequest, path: i.path, verb: i.verb, apiPrefix: i.apiPrefix, group: i.group, version: i.version,
    namespace: i.namespace, resource: i.resource, subresource: i.subresource, name: i.name, parts: i.parts,
  }
}

/** Mirrors upstream's RequestInfoFactory: /api/v1/..., /apis/<group>/<version>/..., optional namespaces/<ns>/. */
export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const info: RequestInfo = {
    isResourceRequest: false, path, verb: method.toLowerCase(), apiPrefix: '', group: '', version: '',
    namespace: '', resource: '', subresource: '', name: '', parts: [],
  }
  // One split; empty segments (a leading slash, doubled or trailing slashes) are dropped only when there are any
  // besides the leading one.
  let segs = path.split('/')
  if (segs[0] === '') segs.shift()
  if (segs.includes('')) segs = segs.filter((s) => s.length > 0)
  if (path.includes('%')) for (let i = 0; i < segs.length; i++) { try { segs[i] = decodeURIComponent(segs[i]) } catch { /* kept as sent */ } }
  if (segs.length === 0) return info
  let rest: string[]
  if (segs[0] === 'api') {
    info.apiPrefix = 'api'
    if (segs.length < 2) return info
    info.version = segs[1]
    rest = segs.length === 2 ? [] : segs.slice(2)
  } else if (segs[0] === 'apis') {
    info.apiPrefix = 'apis'
    if (segs.length < 3) { info.group = segs[1] ?? ''; return info }
    info.group = segs[1]
    info.version = segs[2]
    rest = segs.slice(3)
  } else {
    return info
  }
  info.parts = rest
  if (rest.length === 0) return info
  info.isResourceRequest = true
  switch (method) {
    case 'POST': info.verb = 'create'; break
    case 'GET': case 'HEAD': info.verb = 'get'; break
    case 'PUT': info.verb = 'update'; break
    case 'PATCH': info.verb = 'patch'; break
    case 'DELETE': info.verb = 'delete'; break
    default: info.verb = ''
  }
  // Deprecated /watch/ prefix.
  if (rest[0] === 'watch') { info.verb = 'watch'; rest = rest.slice(1) }
  if (rest[0] === 'namespaces') {
    if (rest.length > 1) {
      info.namespace = rest[1]
      if (rest.length > 2) rest = rest.slice(2)
      else { info.resource = 'namespaces'; info.name = rest[1]; info.namespace = ''; rest = [] }
    } else {
      info.resource = 'namespaces'
      rest = []
    }
  }
  if (rest.length > 0) {
    info.resource = rest[0]
    if (rest.length > 1) info.name = rest[1]
    if (rest.length > 2) info.subresource = rest[2]
    if (rest.length > 3) info.subresource = rest.slice(2).join('/')
  } else if (info.resource === 'namespaces' && info.name !== '') {
    // /api/v1/namespaces/<name>: a namespace itself; namespace field stays empty for cluster scope.
  }
  // Namespace status/finalize: /api/v1/namespaces/<name>/status is parsed by the branch above as namespace=<name>, resource=status.
  if (info.namespace !== '' && (info.resource === 'status' || info.resource === 'finalize') && rest.length === 1) {
    info.subresource = info.resource
    info.name = info.namespace
    info.namespace = ''
    info.resource = 'namespaces'
  }
  if (info.name === '' && info.verb === 'get') info.verb = queryFlag(query.get('watch')) ? 'watch' : 'list'
  else if (info.verb === 'get' && queryFlag(query.get('watch'))) info.verb = 'watch'
  if (info.name === '' && info.verb === 'delete') info.verb = 'deletecollection'
  return info
}
