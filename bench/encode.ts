// encode: the cost of answering one full LIST in each media type. --objects Pods of a realistic shape (a Deployment's
// pod: two containers with env, probes, resources, mounts; projected token volume; tolerations; owner reference) are
// stored once, then --full-lists unpaged lists are timed per --encodings entry (json, protobuf, table = kubectl's
// `as=Table` Accept, cbor = application/cbor, which needs gate CBORServingAndStorage: the server is started with it).
// Each media type gets one unmeasured list first (warm-up). Each row: list time (request to last byte on loopback),
// bytes, objects/s, server CPU over its lists; ratios against JSON.
import { type Ctx, type Scenario, type ScenarioResult, closeAll, seed } from './lib/context.js'
import type { HttpConnection } from './lib/http.js'
import { newHistogram, recordNs, summarize, distribution } from './lib/hist.js'
import { PODS, seqName } from './lib/objects.js'
import { ratio, type Ratio, type Row } from './lib/report.js'

const PREFIX = 'encp-'
const DIGITS = 8

interface Encoding {
  accept: string
  /** how the answer starts (a check that the server answered in this form, not a fallback) */
  magic: Buffer
  /** occurrences of an object's name per object in the answer (Table: the name cell and the row's metadata) */
  namesPerObject: number
}

const ENCODINGS: Record<string, Encoding> = {
  json: { accept: 'application/json', magic: Buffer.from('{'), namesPerObject: 1 },
  protobuf: { accept: 'application/vnd.kubernetes.protobuf', magic: Buffer.from('k8s\0', 'latin1'), namesPerObject: 1 },
  table: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json', magic: Buffer.from('{"kind":"Table"'), namesPerObject: 2 },
  cbor: { accept: 'application/cbor', magic: Buffer.from([0xd9, 0xd9, 0xf7]), namesPerObject: 1 },
}

const APPS = 50
const HASH = '7c9f8d6b5f'

/**
 * The ReplicaSets the pods name as their owners: without them the server's garbage collector (rightly) deletes the
 * pods while they are being listed. Returns their uids by app index.
 */
async function createOwners(c: HttpConnection): Promise<string[]> {
  const uids: string[] = []
  for (let k = 0; k < APPS; k++) {
    const app = `web-${k}`
    const body = JSON.stringify({
      apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: `${app}-${HASH}`, namespace: 'default' },
      spec: { replicas: 0, selector: { matchLabels: { app, 'pod-template-hash': HASH } }, template: { metadata: { labels: { app, 'pod-template-hash': HASH } }, spec: { containers: [{ name: 'app', image: 'registry.local/app:1' }] } } },
    })
    const r = await c.request('POST', '/apis/apps/v1/namespaces/default/replicasets', body)
    const uid = JSON.parse(r.body.toString()).metadata?.uid
    if (r.status !== 201 || typeof uid !== 'string') throw new Error(`ReplicaSet ${app}: ${r.status} ${r.body.toString().slice(0, 200)}`)
    uids.push(uid)
  }
  return uids
}

/**
 * A pod as a ReplicaSet creates it (no status: the server sets none on create): about 4.8 KB as sent, about 9.9 KB as
 * stored and listed in JSON (uid, versions, timestamps and about 5 KB of managedFields).
 */
export function realisticPod(name: string, i: number, ownerUids?: string[]): string {
  const app = `web-${i % APPS}`
  const hash = HASH
  const container = (cname: string, image: string, port: number) => ({
    name: cname, image, imagePullPolicy: 'IfNotPresent',
    args: ['--config=/etc/app/config.yaml', `--port=${port}`, '--log-level=info'],
    ports: [{ name: 'http', containerPort: port, protocol: 'TCP' }, { name: 'metrics', containerPort: port + 1000, protocol: 'TCP' }],
    env: [
      { name: 'APP_NAME', value: app },
      { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } },
      { name: 'POD_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
      { name: 'GOMAXPROCS', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1' } } },
      { name: 'FEATURES', value: 'alpha,beta,gamma' },
    ],
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '512Mi' } },
    livenessProbe: { httpGet: { path: '/healthz', port, scheme: 'HTTP' }, initialDelaySeconds: 10, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
    readinessProbe: { httpGet: { path: '/readyz', port, scheme: 'HTTP' }, periodSeconds: 5, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
    volumeMounts: [
      { name: 'config', mountPath: '/etc/app', readOnly: true },
      { name: 'data', mountPath: '/var/lib/app' },
      { name: 'kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
    ],
    terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File',
    securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } },
  })
  return JSON.stringify({
    apiVersion: 'v1', kind: 'Pod',
    metadata: {
      name, namespace: 'default', generateName: `${app}-${hash}-`,
      labels: { app, 'pod-template-hash': hash, tier: 'frontend', 'app.kubernetes.io/part-of': 'shop' },
      annotations: { 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9080', 'kubectl.kubernetes.io/restartedAt': '2026-01-01T00:00:00Z' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `${app}-${hash}`, uid: ownerUids?.[i % APPS] ?? '6c1b9c8e-2f4a-4d1e-9a7b-3e5f8c2d1a0b', controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      containers: [container('app', `registry.local/shop/${app}:1.4.2`, 8080), container('proxy', 'registry.local/mesh/proxy:2.1.0', 15001)],
      volumes: [
        { name: 'config', configMap: { name: `${app}-config`, defaultMode: 420 } },
        { name: 'data', emptyDir: {} },
        {
          name: 'kube-api-access',
          projected: {
            defaultMode: 420,
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
              { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
            ],
          },
        },
      ],
      restartPolicy: 'Always', terminationGracePeriodSeconds: 30, dnsPolicy: 'ClusterFirst', serviceAccountName: 'default',
      nodeName: `node-${i % 500}`, schedulerName: 'default-scheduler', priority: 0, enableServiceLinks: true, preemptionPolicy: 'PreemptLowerPriority',
      securityContext: { fsGroup: 2000, seccompProfile: { type: 'RuntimeDefault' } },
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
    },
  })
}

function count(buf: Buffer, what: Buffer): number {
  let n = 0
  for (let at = buf.indexOf(what); at >= 0; at = buf.indexOf(what, at + what.length)) n++
  return n
}

export const encode: Scenario = {
  name: 'encode',
  summary: 'full LIST of --objects Pods per media type (--encodings json,protobuf,table,cbor): time, bytes, objects/s',
  options: ['objects', 'full-lists', 'encodings', 'connections'],
  defaults: { objects: 150_000, connections: 32 },
  smokeDefaults: { objects: 20, 'full-lists': 1, connections: 4 },
  async run(ctx: Ctx): Promise<ScenarioResult> {
    const N = ctx.int('objects')
    const lists = Math.max(1, ctx.int('full-lists'))
    const encodings = ctx.list('encodings')
    for (const e of encodings) if (!ENCODINGS[e]) throw new Error(`--encodings: "${e}" is not one of ${Object.keys(ENCODINGS).join(', ')}`)
    const rows: Row[] = []
    const ratios: Ratio[] = []
    const gates = encodings.includes('cbor') && !ctx.remote ? ['--feature-gates=CBORServingAndStorage=true'] : []
    const srv = await ctx.startServer(undefined, undefined, gates)
    try {
      if (!ctx.remote) {
        const seeders = ctx.connections(srv.url, ctx.int('connections'))
        const owners = await createOwners(seeders[0])
        await seed(ctx, seeders, PODS, N, (i) => realisticPod(seqName(PREFIX, i, DIGITS), i, owners))
        closeAll(seeders)
      }
      const [c] = ctx.connections(srv.url, 1)
      // One JSON list tells the stored size.
      const warm = await c.request('GET', PODS)
      const stored = count(warm.body, Buffer.from(`"name":"${PREFIX}`))
      if (stored > 0) ctx.notes.push(`pods: ${stored}, JSON bytes per pod in a list ${Math.round(warm.body.length / stored)}`)
      let jsonRow: Row | undefined
      for (const e of encodings) {
        const row = await timeLists(ctx, c, srv.sampler, e, ENCODINGS[e], lists, ctx.remote ? stored : N)
        rows.push(row)
        if (e === 'json') jsonRow = row
        else if (jsonRow?.latency && row.latency && row.errors === 0) {
          ratios.push(ratio(`${e} list time vs JSON list time`, row.latency.p50, jsonRow.latency.p50, undefined, true))
          ratios.push(ratio(`${e} bytes vs JSON bytes`, Number(row.details?.bytes ?? 0), Number(jsonRow.details?.bytes ?? 0), undefined, true))
        }
      }
      c.close()
    } finally {
      await srv.stop()
    }
    return { rows, ratios }
  },
}

async function timeLists(ctx: Ctx, c: HttpConnection, sampler: { start(): void; stop(): import('./lib/proc.js').ProcStats } | undefined, name: string, enc: Encoding, lists: number, expected: number): Promise<Row> {
  const h = newHistogram()
  let bytes = 0
  let objects = -1
  let errors = 0
  const problems: string[] = []
  ctx.progress.note(`[encode] ${lists} full list(s) as ${name}`)
  await c.request('GET', PODS, undefined, { accept: enc.accept })
  sampler?.start()
  const t0 = performance.now()
  for (let i = 0; i < lists; i++) {
    const s = performance.now()
    const res = await c.request('GET', PODS, undefined, { accept: enc.accept })
    recordNs(h, (performance.now() - s) * 1e6)
    if (res.status !== 200) { errors++; problems.push(`status ${res.status}: ${res.body.toString().slice(0, 200)}`); continue }
    if (!res.body.subarray(0, enc.magic.length).equals(enc.magic)) { errors++; problems.push(`not ${name}: starts with ${res.body.subarray(0, 16).toString('hex')}`); continue }
    bytes = res.body.length
    if (objects < 0) objects = Math.round(count(res.body, Buffer.from(PREFIX)) / enc.namesPerObject)
  }
  const secs = (performance.now() - t0) / 1000
  const server = sampler?.stop()
  if (objects !== expected && errors === 0) { errors++; problems.push(`${objects} objects in the answer, ${expected} expected`) }
  for (const p of problems.slice(0, 3)) ctx.notes.push(`${name}: ${p}`)
  const lat = summarize(h)
  const meanS = h.count > 0 ? h.mean / 1e9 : 0
  return {
    target: 'orch', name: `full LIST as ${name} (${objects} pods, ${(bytes / 1024 / 1024).toFixed(1)} MiB)`, unit: 'objects/s',
    ops: h.count, seconds: Math.round(secs * 1000) / 1000, rate: meanS > 0 ? Math.round(Math.max(0, objects) / meanS) : 0,
    latency: lat, errors, server, distribution: distribution(h),
    details: { accept: enc.accept, bytes, bytesPerObject: objects > 0 ? Math.round(bytes / objects) : 0, meanListMs: Math.round(meanS * 1000 * 10) / 10, listsPerSec: secs > 0 ? Math.round((h.count / secs) * 100) / 100 : 0 },
  }
}
