// The bench options: one table of names, types, defaults and help; scenarios pick the ones they use and may change
// defaults; --smoke swaps in tiny sizes so that every measurement takes about half a second.
export type OptionType = 'int' | 'number' | 'string' | 'bool' | 'list'

export interface OptionSpec {
  type: OptionType
  default: unknown
  help: string
  /** the default under --smoke */
  smoke?: unknown
}

export const OPTIONS: Record<string, OptionSpec> = {
  duration: { type: 'number', default: 10, smoke: 0.5, help: 'seconds to measure' },
  warmup: { type: 'number', default: 2, smoke: 0.1, help: 'seconds of warm-up before measuring (not recorded)' },
  count: { type: 'int', default: 0, help: 'measure this many operations instead of a duration (0 = use --duration)' },
  connections: { type: 'int', default: 64, smoke: 4, help: 'concurrent HTTP/1.1 keep-alive connections, one request in flight each (and the etcd peer\'s concurrency)' },
  'object-size': { type: 'int', default: 1024, help: 'bytes of each ConfigMap (or Pod) as sent' },
  payload: { type: 'string', default: 'text', help: 'what pads objects to --object-size: text (a config file, compresses about 2x), random (base64 of random bytes, incompressible), x (one repeated letter)' },
  objects: { type: 'int', default: 1000, smoke: 200, help: 'objects stored before measuring' },
  'page-size': { type: 'int', default: 500, smoke: 50, help: 'list page size (limit)' },
  'full-lists': { type: 'int', default: 3, smoke: 1, help: 'full (unpaged) lists to time after the paged ones (encode: per media type)' },
  encodings: { type: 'list', default: ['json', 'protobuf', 'table', 'cbor'], help: 'encode: media types to list in: json, protobuf, table (kubectl\'s as=Table), cbor (the server gets gate CBORServingAndStorage)' },
  watchers: { type: 'int', default: 100, smoke: 5, help: 'long-lived watch streams' },
  'all-watchers': { type: 'int', default: 0, smoke: 1, help: 'watch-fanout --selector node: further watchers of all pods' },
  'writes-per-sec': { type: 'number', default: 100, smoke: 20, help: 'writes per second while watchers listen (paced, open loop)' },
  selector: { type: 'list', default: ['none', 'node'], help: 'watch-fanout variants: none = every watcher sees every write; node = pods with a per-node spec.nodeName field selector' },
  nodes: { type: 'int', default: 100, smoke: 5, help: 'simulated nodes' },
  'pods-per-node': { type: 'int', default: 10, smoke: 2, help: 'pods per simulated node' },
  'lease-interval': { type: 'number', default: 10, smoke: 0.5, help: 'seconds between lease renewals of one node' },
  'pod-update-interval': { type: 'number', default: 30, smoke: 0.5, help: 'seconds between status updates of one pod' },
  'pod-status-write': { type: 'string', default: 'patch', help: 'mixed: how a pod\'s status is written: patch (a strategic merge patch of the changed conditions with a metadata.uid precondition, as the kubelet\'s status manager sends it) or put (the whole pod to /status)' },
  repeat: { type: 'int', default: 3, smoke: 1, help: 'restarts to time' },
  parts: { type: 'list', default: ['fairness', 'cost'], help: 'apf-fairness: which parts to run (fairness = mouse beside the elephant, cost = GETs with APF on and off)' },
  peer: { type: 'list', default: [], help: 'also measure a peer in the same run: etcd (Debian etcd-server), uws-hello (bare uWS, the HTTP ceiling)' },
  'peer-conns': { type: 'int', default: 0, smoke: 2, help: 'gRPC connections to etcd, each its own HTTP/2 connection (0 = as many as --connections); the in-flight operations are --connections' },
  'loadgen-gc': { type: 'string', default: 'single', help: 'garbage collection of the load generator\'s own process: single (node --single-threaded-gc: no V8 helper threads bursting onto the server\'s cores) or parallel (V8\'s default)' },
  client: { type: 'string', default: 'raw', help: 'HTTP client of the load generator: raw (lean net.Socket client), undici, or wrk (GETs of get and apf-fairness only; Debian\'s wrk)' },
  port: { type: 'int', default: 0, help: 'plain HTTP port of the server started on 127.0.0.1 (0 = a free one)' },
  url: { type: 'string', default: '', help: 'target a running server (plain http on loopback) instead of starting one' },
  frontends: { type: 'int', default: 0, help: 'server --frontends (0 = the server\'s default)' },
  shards: { type: 'int', default: 0, help: 'server --shards (0 = the server\'s default)' },
  'log-level': { type: 'list', default: ['warn'], help: 'server --log-level; a list runs the measurement once per level (info writes one access line per request)' },
  'server-arg': { type: 'list', default: [], help: 'extra server flag, repeatable (--server-arg=--watch-history=1m)' },
  json: { type: 'string', default: '', help: 'write the report as JSON to this file' },
  html: { type: 'string', default: '', help: 'write a self-contained HTML page (latency distribution, throughput over time) to this file' },
  smoke: { type: 'bool', default: false, help: 'tiny sizes, about half a second per measurement (used by npm test)' },
  keep: { type: 'bool', default: false, help: 'keep the temporary directory (data dirs and server logs)' },
  progress: { type: 'bool', default: true, help: 'progress lines on stderr' },
}

/** Options every scenario takes. */
export const COMMON = ['payload', 'duration', 'warmup', 'count', 'port', 'url', 'frontends', 'shards', 'log-level', 'server-arg', 'client', 'loadgen-gc', 'json', 'html', 'smoke', 'keep', 'progress']

export class BenchOptionsError extends Error {}

export interface ResolvedOptions {
  values: Record<string, unknown>
  isDefault: Record<string, boolean>
}

function parseValue(name: string, spec: OptionSpec, raw: string): unknown {
  switch (spec.type) {
    case 'int': {
      if (!/^\d+$/.test(raw)) throw new BenchOptionsError(`--${name}: "${raw}" is not a whole number`)
      return Number(raw)
    }
    case 'number': {
      const n = Number(raw)
      if (raw === '' || !Number.isFinite(n) || n < 0) throw new BenchOptionsError(`--${name}: "${raw}" is not a number`)
      return n
    }
    case 'bool': {
      if (raw === 'true' || raw === '1' || raw === '') return true
      if (raw === 'false' || raw === '0') return false
      throw new BenchOptionsError(`--${name}: "${raw}" is not true or false`)
    }
    case 'list':
      return raw.split(',').map((s) => s.trim()).filter(Boolean)
    case 'string':
      return raw
  }
}

/**
 * Parses `--name value`, `--name=value`, `--flag`, `--no-flag`. `names` are the options this scenario takes,
 * `defaults` and `smokeDefaults` its own defaults.
 */
export function resolve(argv: string[], names: string[], defaults: Record<string, unknown> = {}, smokeDefaults: Record<string, unknown> = {}): ResolvedOptions {
  const given: Record<string, unknown> = {}
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (!arg.startsWith('--')) throw new BenchOptionsError(`unexpected argument "${arg}"`)
    let name = arg.slice(2)
    let raw: string | undefined
    const eq = name.indexOf('=')
    if (eq >= 0) { raw = name.slice(eq + 1); name = name.slice(0, eq) }
    let negate = false
    if (!OPTIONS[name] && name.startsWith('no-') && OPTIONS[name.slice(3)]?.type === 'bool') { negate = true; name = name.slice(3) }
    const spec = OPTIONS[name]
    if (!spec || !names.includes(name)) throw new BenchOptionsError(`unknown option --${name}; this scenario takes: ${names.map((n) => `--${n}`).join(' ')}`)
    if (raw === undefined) {
      if (spec.type === 'bool') raw = negate ? 'false' : 'true'
      else if (i + 1 < argv.length) raw = argv[++i]
      else throw new BenchOptionsError(`--${name} needs a value`)
    }
    const v = parseValue(name, spec, raw)
    if (name === 'server-arg') given[name] = [...((given[name] as string[]) ?? []), raw]
    else given[name] = v
  }
  const smoke = (given.smoke as boolean | undefined) ?? false
  const values: Record<string, unknown> = {}
  const isDefault: Record<string, boolean> = {}
  for (const n of names) {
    const spec = OPTIONS[n]
    if (n in given) { values[n] = given[n]; isDefault[n] = false; continue }
    isDefault[n] = true
    if (smoke && n in smokeDefaults) values[n] = smokeDefaults[n]
    else if (smoke && spec.smoke !== undefined) values[n] = spec.smoke
    else if (n in defaults) values[n] = defaults[n]
    else values[n] = spec.default
  }
  const client = values.client as string
  if (client !== 'raw' && client !== 'undici' && client !== 'wrk') throw new BenchOptionsError(`--client: "${client}" is not raw, undici or wrk`)
  const gc = values['loadgen-gc'] as string
  if (gc !== 'single' && gc !== 'parallel') throw new BenchOptionsError(`--loadgen-gc: "${gc}" is not single or parallel`)
  for (const p of (values.peer as string[] | undefined) ?? []) {
    if (p !== 'etcd' && p !== 'uws-hello') throw new BenchOptionsError(`--peer: "${p}" is not etcd or uws-hello`)
  }
  if ((values.connections as number | undefined) === 0) throw new BenchOptionsError('--connections must be at least 1')
  return { values, isDefault }
}

export function help(names: string[], defaults: Record<string, unknown> = {}): string {
  return names.map((n) => {
    const d = n in defaults ? defaults[n] : OPTIONS[n].default
    return `  --${n} (default ${JSON.stringify(d)})\n      ${OPTIONS[n].help}`
  }).join('\n')
}
