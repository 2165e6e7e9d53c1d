// Request bodies of a given size: ConfigMaps (and the bytes the server stores for them), Pods, Nodes, Leases.

/**
 * What pads an object to its size (--payload): `text` (the default) is a config file as ConfigMaps hold them, lines of
 * keys, words, numbers, addresses and ids drawn from a fixed seed (lz4 halves it, as it does real ones); `random` is
 * base64 of pseudo-random bytes (incompressible: the worst case for a compressing store); `x` repeats one letter (the
 * payload of the first sessions, which compresses absurdly well and flatters any compression).
 */
export type Payload = 'text' | 'random' | 'x'
export const PAYLOADS: Payload[] = ['text', 'random', 'x']
let payload: Payload = 'text'
export function setPayload(p: string): void {
  if (!(PAYLOADS as string[]).includes(p)) throw new Error(`--payload: one of ${PAYLOADS.join(', ')}`)
  payload = p as Payload
}

/** xorshift32 from a fixed seed: the same payload in every run. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1
  return () => {
    x ^= x << 13; x >>>= 0
    x ^= x >>> 17
    x ^= x << 5; x >>>= 0
    return x
  }
}

const WORDS = ('server worker upstream backend timeout retries cache ttl log level rotate keep hourly daily max min pool size ' +
  'connections queue buffer flush interval listen port host path api auth token issuer audience region zone replica ' +
  'shard index enabled disabled true false primary secondary metrics tracing sample rate endpoint health check grace ' +
  'drain limit burst window feature flag alpha beta stable payment orders users catalog search gateway').split(' ')

/** A pad whose JSON string form (without the quotes) is exactly `len` characters. */
export function padding(len: number, kind: Payload = payload): string {
  if (kind === 'x') return 'x'.repeat(len)
  const next = rng(0x9e3779b9)
  if (kind === 'random') {
    const bytes = Buffer.alloc(Math.ceil((len * 3) / 4) + 3)
    for (let i = 0; i < bytes.length; i++) bytes[i] = next() & 0xff
    return bytes.toString('base64').slice(0, len)
  }
  const pick = () => WORDS[next() % WORDS.length]
  const num = () => String(next() % 100000)
  const lines: Array<() => string> = [
    () => `${pick()}.${pick()}_${next() % 16} = ${num()}`,
    () => `${pick()}.${pick()} = ${pick()}-${pick()} ${(next() >>> 0).toString(16)}`,
    () => `# ${pick()} ${pick()} ${pick()}; ${pick()} ${num()}`,
    () => `${pick()}.${pick()}.url = https://${pick()}-${next() % 10}.${pick()}.svc:${1024 + (next() % 60000)}/${pick()}/v${next() % 4}`,
    () => `${pick()}.id = ${(next() >>> 0).toString(16)}${(next() >>> 0).toString(16)}-${(next() >>> 0).toString(36)}`,
    () => `${pick()}.${pick()} = ${next() % 2 ? 'true' : 'false'}`,
  ]
  let out = ''
  // '\n' takes two characters in JSON
  while (out.length + 200 < len) out += lines[next() % lines.length]() + '\n'
  let escaped = JSON.stringify(out).length - 2
  while (escaped < len) { const w = pick() + ' '; out += w.slice(0, len - escaped); escaped = JSON.stringify(out).length - 2 }
  return out
}

/** Builds `{prefix}{name}{suffix}` bodies whose length is `size` bytes for names of `nameLen` characters. */
export class SizedBody {
  private readonly prefix: string
  private readonly suffix: string

  constructor(make: (name: string, pad: string) => object, size: number, nameLen: number) {
    const marker = '@@NAME@@'
    const probe = JSON.stringify(make(marker, ''))
    const padLen = Math.max(0, size - (probe.length - marker.length + nameLen))
    const full = JSON.stringify(make(marker, padding(padLen)))
    const at = full.indexOf(marker)
    this.prefix = full.slice(0, at)
    this.suffix = full.slice(at + marker.length)
  }

  body(name: string): string {
    return this.prefix + name + this.suffix
  }
}

export const CONFIGMAPS = '/api/v1/namespaces/default/configmaps'
export const PODS = '/api/v1/namespaces/default/pods'

/** A ConfigMap as a client creates it. */
export function configMapBody(size: number, nameLen: number): SizedBody {
  return new SizedBody((name, pad) => ({
    apiVersion: 'v1', kind: 'ConfigMap',
    metadata: { name, labels: { app: 'bench' } },
    data: { payload: pad },
  }), size, nameLen)
}

/**
 * What the server stores (and etcd is given) for such a ConfigMap: the same object with the server-set metadata,
 * `total` bytes long when the scenario has seen what the server really stores (its answer to a create or get),
 * otherwise an estimate.
 */
export function storedConfigMapBody(size: number, nameLen: number, total?: number): SizedBody {
  const base = configMapBody(size, nameLen).body('n'.repeat(nameLen)).length
  return new SizedBody((name, pad) => ({
    kind: 'ConfigMap', apiVersion: 'v1',
    metadata: {
      name, namespace: 'default', uid: '0f4c2a8e-6a3d-4c1e-9b5f-2d7e8a1c3b4f', resourceVersion: '1234567',
      creationTimestamp: '2026-01-01T00:00:00Z', labels: { app: 'bench' },
    },
    data: { payload: pad },
  }), total ?? base + 120, nameLen)
}

/** A Pod bound to a node, padded with an annotation to about `size` bytes. */
export function podBody(size: number, nameLen: number, nodeName: string): SizedBody {
  return new SizedBody((name, pad) => ({
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, labels: { app: 'bench' }, annotations: { pad } },
    spec: { nodeName, containers: [{ name: 'c', image: 'registry.local/bench:1' }] },
  }), size, nameLen)
}

export function nodeBody(name: string): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name } } })
}

export const LEASE_NS = 'orch-node-lease'
export const LEASES = `/apis/coordination.orch.io/v1/namespaces/${LEASE_NS}/leases`

export function leaseBody(node: string, renewTime: Date): string {
  return JSON.stringify({
    apiVersion: 'coordination.orch.io/v1', kind: 'Lease',
    metadata: { name: node },
    spec: { holderIdentity: node, leaseDurationSeconds: 40, renewTime: microTime(renewTime) },
  })
}

/** metav1.MicroTime: RFC 3339 with 6 fractional digits. */
export function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z')
}

/** Fixed-length names: `prefix` + zero-padded sequence number. */
export function seqName(prefix: string, i: number, digits = 8): string {
  return prefix + String(i).padStart(digits, '0')
}

/** The value of the first `"key":"..."` in a JSON text (no escapes expected), without parsing it all. */
export function firstString(text: string, key: string, from = 0): string | undefined {
  const k = `"${key}":"`
  const at = text.indexOf(k, from)
  if (at < 0) return undefined
  const start = at + k.length
  const end = text.indexOf('"', start)
  return end < 0 ? undefined : text.slice(start, end)
}
