// The etcd peer: Debian's etcd-server started on loopback with a temp data dir, and a lean gRPC KV client
// (@grpc/grpc-js with hand-written protobuf for the four messages used, no proto loading on the hot path).
//
// Install with: apt-get install etcd-server   (the bench never installs anything itself)
import { spawn, type ChildProcess } from 'node:child_process'
import { accessSync, constants, mkdirSync, openSync, closeSync } from 'node:fs'
import { join, delimiter } from 'node:path'
import * as grpc from '@grpc/grpc-js'
import { freePort, probe } from './server.js'
import { ProcSampler } from './proc.js'
import { track } from './children.js'

export const ETCD_INSTALL_HINT = 'etcd is not installed: install it with `apt-get install etcd-server` (Debian), or put an etcd binary on PATH'

/** Path of an etcd binary on PATH (or /usr/bin/etcd), or undefined. */
export function findEtcd(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/local/bin']
  for (const d of dirs) {
    if (!d) continue
    const p = join(d, 'etcd')
    try { accessSync(p, constants.X_OK); return p } catch { /* next */ }
  }
  return undefined
}

export interface EtcdServer {
  endpoint: string
  pid: number
  sampler: ProcSampler
  version: string
  stop(): Promise<void>
}

export async function startEtcd(tmp: string): Promise<EtcdServer> {
  const bin = findEtcd()
  if (!bin) throw new Error(ETCD_INSTALL_HINT)
  const clientPort = await freePort()
  const peerPort = await freePort()
  const dataDir = join(tmp, `etcd-${clientPort}`)
  mkdirSync(dataDir, { recursive: true })
  const fd = openSync(join(tmp, `etcd-${clientPort}.log`), 'a')
  const client = `http://127.0.0.1:${clientPort}`
  const peer = `http://127.0.0.1:${peerPort}`
  const proc: ChildProcess = spawn(bin, [
    '--name', 'bench', '--data-dir', dataDir,
    '--listen-client-urls', client, '--advertise-client-urls', client,
    '--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer,
    '--initial-cluster', `bench=${peer}`, '--initial-cluster-state', 'new',
    '--listen-metrics-urls', '', '--quota-backend-bytes', String(8 * 1024 * 1024 * 1024),
    '--logger', 'zap', '--log-level', 'warn',
  ], { stdio: ['ignore', fd, fd] })
  track(proc)
  closeSync(fd)
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
  let gone = false
  void exited.then(() => { gone = true })
  const deadline = Date.now() + 30_000
  while ((await probe(client, '/health', 500)) !== 200) {
    if (gone) throw new Error(`etcd exited before it was ready (log in ${tmp})`)
    if (Date.now() > deadline) { proc.kill('SIGKILL'); throw new Error('etcd not healthy after 30 s') }
    await new Promise((r) => setTimeout(r, 20))
  }
  const version = await new Promise<string>((resolve) => {
    const p = spawn(bin, ['--version'])
    let out = ''
    p.stdout.on('data', (d) => { out += d })
    p.on('close', () => resolve(/etcd Version: (\S+)/.exec(out)?.[1] ?? 'unknown'))
  })
  return {
    endpoint: `127.0.0.1:${clientPort}`, pid: proc.pid!, sampler: new ProcSampler(proc.pid!), version,
    async stop() {
      if (!gone) proc.kill('SIGTERM')
      const t = setTimeout(() => proc.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(t)
    },
  }
}

// --- protobuf, just what etcdserverpb.KV Put and Range need ---

function varint(n: number, out: number[]): void {
  while (n > 127) { out.push((n % 128) | 128); n = Math.floor(n / 128) }
  out.push(n)
}

function bytesField(field: number, b: Buffer, out: Buffer[]): void {
  const h: number[] = []
  varint((field << 3) | 2, h)
  varint(b.length, h)
  out.push(Buffer.from(h), b)
}

function intField(field: number, v: number, out: Buffer[]): void {
  const h: number[] = []
  varint(field << 3, h)
  varint(v, h)
  out.push(Buffer.from(h))
}

function readVarint(b: Buffer, pos: number): [number, number] {
  let n = 0
  let mul = 1
  for (;;) {
    const c = b[pos++]
    n += (c & 127) * mul
    if (c < 128) return [n, pos]
    mul *= 128
  }
}

export interface RangeResult {
  count: number
  more: boolean
  revision: number
  lastKey: Buffer | undefined
  bytes: number
}

/** Walks a RangeResponse: header.revision, number of kvs, the last kv's key, more. */
function decodeRange(b: Buffer): RangeResult {
  const r: RangeResult = { count: 0, more: false, revision: 0, lastKey: undefined, bytes: b.length }
  let pos = 0
  while (pos < b.length) {
    let tag: number
    ;[tag, pos] = readVarint(b, pos)
    const field = tag >>> 3
    const wt = tag & 7
    if (wt === 0) {
      let v: number
      ;[v, pos] = readVarint(b, pos)
      if (field === 3) r.more = v !== 0
    } else if (wt === 2) {
      let len: number
      ;[len, pos] = readVarint(b, pos)
      const sub = b.subarray(pos, pos + len)
      pos += len
      if (field === 1) r.revision = headerRevision(sub)
      else if (field === 2) { r.count++; r.lastKey = kvKey(sub) }
    } else {
      throw new Error(`unexpected wire type ${wt} in RangeResponse`)
    }
  }
  return r
}

function headerRevision(b: Buffer): number {
  let pos = 0
  while (pos < b.length) {
    let tag: number
    ;[tag, pos] = readVarint(b, pos)
    let v: number
    ;[v, pos] = readVarint(b, pos)
    if ((tag >>> 3) === 3) return v
  }
  return 0
}

/** KeyValue.key is field 1, which etcd writes first. */
function kvKey(b: Buffer): Buffer | undefined {
  const [tag, p] = readVarint(b, 0)
  if (tag !== ((1 << 3) | 2)) return undefined
  const [len, start] = readVarint(b, p)
  return b.subarray(start, start + len)
}

/** Where upstream keeps ConfigMaps of the default namespace; the peer uses the same keys. */
export const ETCD_PREFIX = '/registry/configmaps/default/'

const ident = (b: Buffer) => b

/** One gRPC channel (one HTTP/2 connection) to etcd. */
export class EtcdClient {
  private readonly client: grpc.Client

  constructor(endpoint: string) {
    // a local subchannel pool gives each client its own connection
    // a full range of 100k objects is ~120 MB: no cap on what a response may hold (grpc-js's default is 4 MiB)
    this.client = new grpc.Client(endpoint, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1, 'grpc.max_receive_message_length': -1 })
  }

  private call(method: string, req: Buffer): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(method, ident, ident, req, (err, res) => (err ? reject(err) : resolve(res!)))
    })
  }

  async put(key: Buffer, value: Buffer): Promise<void> {
    const parts: Buffer[] = []
    bytesField(1, key, parts)
    bytesField(2, value, parts)
    await this.call('/etcdserverpb.KV/Put', Buffer.concat(parts))
  }

  /** A range; limit 0 = no limit; revision 0 = the latest; serializable false = a linearizable read, as upstream lists. */
  async range(key: Buffer, rangeEnd?: Buffer, limit = 0, revision = 0): Promise<RangeResult> {
    const parts: Buffer[] = []
    bytesField(1, key, parts)
    if (rangeEnd) bytesField(2, rangeEnd, parts)
    if (limit) intField(3, limit, parts)
    if (revision) intField(4, revision, parts)
    return decodeRange(await this.call('/etcdserverpb.KV/Range', Buffer.concat(parts)))
  }

  close(): void {
    this.client.close()
  }
}

/** The end of the range of all keys with this prefix (etcd's prefix convention). */
export function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix)
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) { end[i]++; return end.subarray(0, i + 1) }
  }
  return Buffer.from([0])
}
