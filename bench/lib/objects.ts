// Request bodies of a given size: ConfigMaps (and the bytes the server stores for them), Pods, Nodes, Leases.

/** Builds `{prefix}{name}{suffix}` bodies whose length is `size` bytes for names of `nameLen` characters. */
export class SizedBody {
  private readonly prefix: string
  private readonly suffix: string

  constructor(make: (name: string, pad: string) => object, size: number, nameLen: number) {
    const marker = '@@NAME@@'
    const probe = JSON.stringify(make(marker, ''))
    const padLen = Math.max(0, size - (probe.length - marker.length + nameLen))
    const full = JSON.stringify(make(marker, 'x'.repeat(padLen)))
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
