// Test helper: starts the real server (dist/src/main.js) in its own process on random loopback ports with a temp data dir.
// The tests run compiled, from dist/test (npm test builds them with tsconfig.test.json).
import { spawn, type ChildProcess } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import net from 'node:net'
import { fileURLToPath } from 'node:url'
import { createHash } from 'node:crypto'
import { Agent, request as undiciRequest } from 'undici'
import { plainNode } from './tap-env.js'

/** The checkout: this file runs as dist/test/helpers/server.js. */
export const root = fileURLToPath(new URL('../../../', import.meta.url))
export const mainJs = join(root, 'dist/src/main.js')

/** Runs the server's main with `args` until it exits (killed after `timeoutMs`): its exit code and its output, stdout and stderr together. */
export function runMain(args: string[], timeoutMs = 20_000): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const p = spawn(...plainNode([mainJs, ...args]), { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    p.stdout!.on('data', (d) => { out += d })
    p.stderr!.on('data', (d) => { out += d })
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs)
    p.on('exit', (code) => { clearTimeout(timer); resolve({ code, out }) })
  })
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.once('error', reject)
    s.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => {
      const p = (s.address() as net.AddressInfo).port
      s.close(() => resolve(p))
    })
  })
}

export interface Reply { status: number; headers: Record<string, string | string[] | undefined>; text: string; json: any }

export interface TestServer {
  port: number
  securePort: number
  dataDir: string
  url: string
  httpsUrl: string
  kubeconfig: string
  adminToken: string
  proc: ChildProcess
  /** the log lines printed so far */
  logs: string[]
  /**
   * A request as the admin (`adminToken`, in system:masters) unless `headers` carries its own `authorization` (an empty
   * one sends none) or `opts.token` says otherwise (`null`: no credentials, anonymous).
   */
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>, opts?: RequestOptions): Promise<Reply>
  /** The same request with another bearer token, or none (`null`). */
  requestAs(token: string | null, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>
  /** SIGTERM and wait */
  stop(): Promise<void>
  /** SIGKILL and wait */
  kill(): Promise<void>
}

export interface RequestOptions {
  /** the bearer token to send; `null` sends none; default the admin token */
  token?: string | null
}

/** Headers with `Authorization: Bearer <token>` added unless the caller set one (an empty value removes it). */
export function withToken(headers: Record<string, string> | undefined, token: string | null): Record<string, string> {
  const h: Record<string, string> = { ...(headers ?? {}) }
  const own = Object.keys(h).find((k) => k.toLowerCase() === 'authorization')
  if (own !== undefined) {
    if (h[own] === '') delete h[own]
    return h
  }
  if (token !== null) h.authorization = `Bearer ${token}`
  return h
}

export interface StartOptions {
  args?: string[]; dataDir?: string; keepDataDir?: boolean; secure?: boolean
  /** plain-HTTP port to use (e.g. the port of a previous run, for a restart on the same address); random when unset */
  port?: number
  /** environment variables added to this process's for the server (the test-only ORCH_TEST_* ones) */
  env?: Record<string, string>
}

export async function startServer(opts: StartOptions = {}): Promise<TestServer> {
  // A probed free port can be taken by another process's outgoing connection before the server binds it (the
  // ephemeral range is shared); such a start fails naming the port, and is retried on fresh ports.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts)
    } catch (err) {
      const taken = err instanceof Error && err.message.includes('address already in use')
      if (!taken || opts.port !== undefined || attempt >= 4) throw err
    }
  }
}

// Key material an earlier server of this checkout's suite generated (its service-account signing key; its CA and
// serving certificate), copied into each data dir this helper creates: three RSA-2048 key pairs are a third of a
// fresh start's CPU, and the suite starts about 170 servers. The server reuses what it finds in its data dir (and
// re-issues a serving certificate that does not fit), as on any restart. A test that passes its own dataDir gets none.
const keyCache = join(tmpdir(), `orch-test-keys-${createHash('sha256').update(root).digest('hex').slice(0, 12)}`)
const KEY_GROUPS = [['sa.key'], ['pki/ca.crt', 'pki/ca.key', 'pki/apiserver.crt', 'pki/apiserver.key']]

function seedKeys(dataDir: string): void {
  for (const group of KEY_GROUPS) {
    if (!group.every((f) => existsSync(join(keyCache, f)))) continue
    for (const f of group) {
      mkdirSync(join(dataDir, f, '..'), { recursive: true, mode: 0o700 })
      copyFileSync(join(keyCache, f), join(dataDir, f))
    }
  }
}

/** Keeps the keys of a server's data dir for later starts (each file written whole, then renamed into place). */
function keepKeys(dataDir: string): void {
  for (const group of KEY_GROUPS) {
    if (group.every((f) => existsSync(join(keyCache, f))) || !group.every((f) => existsSync(join(dataDir, f)))) continue
    for (const f of group) {
      const to = join(keyCache, f)
      mkdirSync(join(to, '..'), { recursive: true, mode: 0o700 })
      const tmp = `${to}.${process.pid}.tmp`
      copyFileSync(join(dataDir, f), tmp)
      renameSync(tmp, to)
    }
  }
}

async function startOnce(opts: StartOptions): Promise<TestServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'orch-test-'))
  if (!opts.dataDir) seedKeys(dataDir)
  const port = opts.port ?? await freePort()
  const securePort = opts.secure ? await freePort() : 0
  const args = [mainJs, '--port', String(port), '--secure-port', String(securePort), '--data-dir', dataDir, '--log-level', 'info', ...(opts.args ?? [])]
  const proc = spawn(...plainNode(args), { stdio: ['ignore', 'pipe', 'pipe'], env: opts.env ? { ...process.env, ...opts.env } : undefined })
  const logs: string[] = []
  let buf = ''
  const ready = new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      buf += d.toString()
      let nl: number
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl)
        buf = buf.slice(nl + 1)
        logs.push(line)
        if (logs.length > 5000) logs.splice(0, 1000)
        if (line.includes('orch-apiserver ready')) resolve()
      }
    }
    proc.stdout!.on('data', onData)
    proc.stderr!.on('data', (d: Buffer) => logs.push(d.toString()))
    proc.once('exit', (code) => reject(new Error(`server exited with ${code} before ready:\n${logs.join('\n')}`)))
  })
  // Generous: the shared test machine is often loaded (a start takes ~3 s idle).
  const timer = setTimeout(() => proc.kill('SIGKILL'), 60000)
  try {
    await ready
  } catch (err) {
    if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true })
    throw err
  } finally {
    clearTimeout(timer)
  }
  const adminToken = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim()
  if (!opts.dataDir) keepKeys(dataDir)
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
  const url = `http://127.0.0.1:${port}`
  const s: TestServer = {
    port, securePort, dataDir, url, httpsUrl: securePort ? `https://127.0.0.1:${securePort}` : '',
    kubeconfig: securePort ? join(dataDir, 'admin.kubeconfig') : '', adminToken, proc, logs,
    request: (method, path, body, headers, o) => httpRequest(url, method, path, body, withToken(headers, o?.token === undefined ? adminToken : o.token)),
    requestAs: (token, method, path, body, headers) => httpRequest(url, method, path, body, withToken(headers, token)),
    async stop() {
      if (proc.exitCode === null) proc.kill('SIGTERM')
      const t = setTimeout(() => proc.kill('SIGKILL'), 10000)
      await exited
      clearTimeout(t)
      if (!opts.keepDataDir && !opts.dataDir) rmSync(dataDir, { recursive: true, force: true })
    },
    async kill() {
      if (proc.exitCode === null) proc.kill('SIGKILL')
      await exited
    },
  }
  return s
}

const agent = new Agent({ connections: 128, pipelining: 1, keepAliveTimeout: 10_000 })

export async function httpRequest(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const h: Record<string, string> = { ...headers }
  let payload: string | Buffer | undefined
  if (body !== undefined) {
    payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body)
    if (!Object.keys(h).some((k) => k.toLowerCase() === 'content-type')) h['content-type'] = 'application/json'
  }
  const r = await undiciRequest(base + path, { method: method as 'GET', headers: h, body: payload, dispatcher: agent })
  const text = await r.body.text()
  let json: any
  try { json = JSON.parse(text) } catch { json = undefined }
  return { status: r.statusCode, headers: r.headers as Reply['headers'], text, json }
}
