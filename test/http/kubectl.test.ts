// Black-box: stock kubectl 1.32 against the TLS port with the admin kubeconfig, and a restart that keeps data and credentials.
import t from 'tap'
import { spawn } from 'node:child_process'
import { runKubectl, type KubectlOptions, type KubectlRun } from '../helpers/kubectl.js'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { startServer, type TestServer } from '../helpers/server.js'

let s: TestServer
const work = mkdtempSync(join(tmpdir(), 'orch-kubectl-'))
const homes: string[] = []

function freshHome(): string {
  const h = mkdtempSync(join(tmpdir(), 'orch-kubectl-home-'))
  homes.push(h)
  return h
}

let home = ''

function kubectl(args: string[], opts: KubectlOptions = {}): Promise<KubectlRun> {
  return runKubectl(s.kubeconfig, home, args, opts)
}

function cmYaml(name: string, data: Record<string, string>): string {
  return ['apiVersion: v1', 'kind: ConfigMap', 'metadata:', `  name: ${name}`, 'data:', ...Object.entries(data).map(([k, v]) => `  ${k}: "${v}"`), ''].join('\n')
}

const cmPath = (name: string) => `/api/v1/namespaces/default/configmaps/${name}`

t.before(async () => {
  s = await startServer({ secure: true, keepDataDir: true })
  home = freshHome()
})
t.teardown(async () => {
  await s?.stop()
  if (s) rmSync(s.dataDir, { recursive: true, force: true })
  rmSync(work, { recursive: true, force: true })
  for (const h of homes) rmSync(h, { recursive: true, force: true })
})

t.test('admin kubeconfig points at the TLS port', async (t) => {
  const kc = JSON.parse(readFileSync(s.kubeconfig, 'utf8'))
  t.equal(kc['current-context'], 'orch')
  t.equal(kc.clusters?.[0]?.cluster?.server, s.httpsUrl)
  t.equal(kc.users?.[0]?.user?.token, s.adminToken)
})

t.test('kubectl get namespaces', async (t) => {
  const r = await kubectl(['get', 'namespaces'])
  t.equal(r.code, 0, `exit 0 (stderr: ${r.stderr})`)
  const lines = r.stdout.trim().split('\n')
  t.match(lines[0], /^NAME\s+/, 'header row')
  const names = lines.slice(1).map((l) => l.split(/\s+/)[0]).sort()
  t.same(names, ['default', 'orch-node-lease', 'orch-public', 'orch-system'])
})

t.test('kubectl create -f, get -o yaml, apply -f (new), delete', async (t) => {
  const f1 = join(work, 'cm-created.yaml')
  writeFileSync(f1, cmYaml('kc-created', { a: '1', b: 'two' }))
  const c = await kubectl(['create', '-f', f1])
  t.equal(c.code, 0, `create exit 0 (stderr: ${c.stderr})`)
  t.equal(c.stdout.trim(), 'configmap/kc-created created')
  const live = await s.request('GET', cmPath('kc-created'))
  t.equal(live.status, 200)
  t.same(live.json?.data, { a: '1', b: 'two' })

  const g = await kubectl(['get', 'cm', 'kc-created', '-o', 'yaml'])
  t.equal(g.code, 0, `get -o yaml exit 0 (stderr: ${g.stderr})`)
  const y = parseYaml(g.stdout)
  t.equal(y.apiVersion, 'v1')
  t.equal(y.kind, 'ConfigMap')
  t.equal(y.metadata?.name, 'kc-created')
  t.equal(y.metadata?.namespace, 'default')
  t.equal(y.metadata?.uid, live.json.metadata.uid)
  t.equal(y.metadata?.resourceVersion, live.json.metadata.resourceVersion)
  t.same(y.data, { a: '1', b: 'two' })
  t.equal(y.metadata?.managedFields, undefined, 'kubectl strips managedFields')

  const miss = await kubectl(['get', 'cm', 'kc-missing', '-o', 'yaml'])
  t.equal(miss.code, 1)
  t.equal(miss.stderr.trim(), 'Error from server (NotFound): configmaps "kc-missing" not found')

  const dup = await kubectl(['create', '-f', f1])
  t.equal(dup.code, 1, 'creating it again fails')
  t.equal(dup.stderr.trim(), `Error from server (AlreadyExists): error when creating "${f1}": configmaps "kc-created" already exists`)

  // apply of a new object, default validation (no --validate flag).
  const f2 = join(work, 'cm-applied.yaml')
  writeFileSync(f2, cmYaml('kc-applied', { k: 'v' }))
  const a = await kubectl(['apply', '-f', f2])
  t.equal(a.code, 0, `apply exit 0 (stderr: ${a.stderr})`)
  t.equal(a.stdout.trim(), 'configmap/kc-applied created')
  t.equal(a.stderr.trim(), '', 'no warnings')
  const applied = await s.request('GET', cmPath('kc-applied'))
  t.equal(applied.status, 200)
  t.same(applied.json?.data, { k: 'v' })
  const lac = applied.json?.metadata?.annotations?.['kubectl.kubernetes.io/last-applied-configuration']
  t.type(lac, 'string', 'last-applied annotation stored')
  t.same(JSON.parse(lac ?? '{}'), { apiVersion: 'v1', data: { k: 'v' }, kind: 'ConfigMap', metadata: { annotations: {}, name: 'kc-applied', namespace: 'default' } })

  const a2 = await kubectl(['apply', '-f', f2])
  t.equal(a2.code, 0)
  t.equal(a2.stdout.trim(), 'configmap/kc-applied unchanged')

  const d = await kubectl(['delete', 'cm', 'kc-created'])
  t.equal(d.code, 0, `delete exit 0 (stderr: ${d.stderr})`)
  t.equal(d.stdout.trim(), 'configmap "kc-created" deleted')
  t.equal((await s.request('GET', cmPath('kc-created'))).status, 404, 'gone')
  const d2 = await kubectl(['delete', 'cm', 'kc-created'])
  t.equal(d2.code, 1)
  t.equal(d2.stderr.trim(), 'Error from server (NotFound): configmaps "kc-created" not found')
})

t.test('kubectl api-resources', async (t) => {
  const r = await kubectl(['api-resources'])
  t.equal(r.code, 0, `exit 0 (stderr: ${r.stderr})`)
  t.equal(r.stderr, '', 'every group-version loads')
  const lines = r.stdout.split('\n')
  t.match(lines[0], /^NAME\s+SHORTNAMES\s+APIVERSION\s+NAMESPACED\s+KIND\s*$/)
  const row = (name: string) => lines.find((l) => l.split(/\s+/)[0] === name)?.trim().split(/\s+/)
  t.same(row('configmaps'), ['configmaps', 'cm', 'v1', 'true', 'ConfigMap'])
  t.same(row('deployments'), ['deployments', 'deploy', 'apps/v1', 'true', 'Deployment'])
  t.same(row('namespaces'), ['namespaces', 'ns', 'v1', 'false', 'Namespace'])
  t.same(row('roles'), ['roles', 'rbac.authorization.orch.io/v1', 'true', 'Role'])
})

t.test('kubectl explain', async (t) => {
  const c = await kubectl(['explain', 'configmap.data'])
  t.equal(c.code, 0, `exit 0 (stderr: ${c.stderr})`)
  t.match(c.stdout, /^KIND:\s+ConfigMap\nVERSION:\s+v1\n/)
  t.match(c.stdout, /\nFIELD: data <map\[string\]string>\n/)
  const d = await kubectl(['explain', 'deployment.spec.replicas'])
  t.equal(d.code, 0, `exit 0 (stderr: ${d.stderr})`)
  t.match(d.stdout, /^GROUP:\s+apps\nKIND:\s+Deployment\nVERSION:\s+v1\n/)
  t.match(d.stdout, /\nFIELD: replicas <integer>\n/)
  // The v3 schemas of IntOrString and Quantity say what they decode from, so explain names them as upstream does.
  const port = await kubectl(['explain', 'service.spec.ports.targetPort'])
  t.match(port.stdout, /\nFIELD: targetPort <IntOrString>\n/, 'targetPort is an IntOrString')
  const limits = await kubectl(['explain', 'pod.spec.containers.resources.limits'])
  t.match(limits.stdout, /\nFIELD: limits <map\[string\]Quantity>\n/, 'limits is a map of Quantity')
  const bad = await kubectl(['explain', 'configmap.nosuchfield'])
  t.not(bad.code, 0, 'an unknown field fails')
  t.match(bad.stderr, /field "nosuchfield" does not exist/)
})

t.test('kubectl get cm -w prints a row for an object created after it started', async (t) => {
  const child = spawn('kubectl', ['--kubeconfig', s.kubeconfig, 'get', 'cm', '-w'], { env: { ...process.env, HOME: home, KUBECONFIG: '' }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (d: Buffer) => { out += d.toString() })
  child.stderr.on('data', (d: Buffer) => { err += d.toString() })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const waitFor = async (re: RegExp, ms: number) => {
    const deadline = Date.now() + ms
    while (!re.test(out) && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 50))
    return re.test(out)
  }
  try {
    t.ok(await waitFor(/^kc-applied\s/m, 15_000), `initial list printed (stdout: ${out} stderr: ${err})`)
    t.notOk(/watched-1/.test(out))
    // Let the watch request get under way after the list, then create.
    await new Promise((r) => setTimeout(r, 500))
    const c = await s.request('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'watched-1' }, data: { x: 'y' } })
    t.equal(c.status, 201)
    t.ok(await waitFor(/^watched-1\s/m, 10_000), `row for the new object printed (stdout: ${out} stderr: ${err})`)
    t.equal(child.exitCode, null, 'still watching')
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM')
    await exited
  }
})

t.test('kubectl logs deploy/x with no pod gives up after --pod-running-timeout (its protobuf watch gets its headers)', async (t) => {
  const d = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'nopods' }, spec: { selector: { matchLabels: { app: 'nopods' } }, template: { metadata: { labels: { app: 'nopods' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } } }
  t.equal((await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', d)).status, 201)
  const started = Date.now()
  // kubectl lists the Deployment's pods, then watches for one (typed client: protobuf with JSON, no bookmarks) until the
  // timeout. Before, that watch's headers never came and kubectl waited until it was killed.
  const r = await kubectl(['logs', 'deploy/nopods', '--pod-running-timeout=2s'], { timeoutMs: 15_000 })
  t.equal(r.code, 1, `exit 1, not killed (stderr: ${r.stderr})`)
  t.match(r.stderr, /timed out waiting for the condition/)
  t.ok(Date.now() - started < 12_000, 'it returned on its own timeout')
})

t.test('restart keeps data, certificates and the admin token; kubectl works again', async (t) => {
  const files = ['pki/ca.crt', 'pki/ca.key', 'pki/apiserver.crt', 'pki/apiserver.key', 'admin-token']
  const before = new Map(files.map((f) => [f, readFileSync(join(s.dataDir, f), 'utf8')]))
  const applied = (await s.request('GET', cmPath('kc-applied'))).json
  const watched = (await s.request('GET', cmPath('watched-1'))).json
  const oldToken = s.adminToken
  const dataDir = s.dataDir
  await s.stop()

  s = await startServer({ dataDir, keepDataDir: true, secure: true })
  home = freshHome()
  for (const f of files) t.equal(readFileSync(join(dataDir, f), 'utf8'), before.get(f), `${f} unchanged`)
  t.equal(s.adminToken, oldToken, 'admin token unchanged')
  const kc = JSON.parse(readFileSync(s.kubeconfig, 'utf8'))
  t.equal(kc.clusters?.[0]?.cluster?.server, s.httpsUrl, 'kubeconfig points at the new port')
  t.equal(Buffer.from(kc.clusters?.[0]?.cluster?.['certificate-authority-data'] ?? '', 'base64').toString('utf8'), before.get('pki/ca.crt'), 'kubeconfig carries the same CA')
  t.equal(kc.users?.[0]?.user?.token, oldToken, 'kubeconfig carries the same token')

  const a = await s.request('GET', cmPath('kc-applied'))
  t.equal(a.status, 200, 'data kept')
  t.same(a.json, applied, 'kc-applied identical after restart')
  const w = await s.request('GET', cmPath('watched-1'))
  t.same(w.json, watched, 'watched-1 identical after restart')
  t.equal((await s.request('GET', cmPath('kc-created'))).status, 404, 'deleted object stays deleted')

  const g = await kubectl(['get', 'cm', 'kc-applied', '-o', 'yaml'])
  t.equal(g.code, 0, `kubectl works after restart (stderr: ${g.stderr})`)
  const y = parseYaml(g.stdout)
  t.equal(y.metadata?.uid, applied.metadata.uid)
  t.same(y.data, { k: 'v' })
  const ns = await kubectl(['get', 'namespaces'])
  t.equal(ns.code, 0)
  t.equal(ns.stdout.trim().split('\n').length, 5, 'header + 4 namespaces')
  const f3 = join(work, 'cm-after.yaml')
  writeFileSync(f3, cmYaml('kc-after', { z: '1' }))
  const c = await kubectl(['create', '-f', f3])
  t.equal(c.code, 0, `create after restart (stderr: ${c.stderr})`)
  t.equal(c.stdout.trim(), 'configmap/kc-after created')
  const after = await s.request('GET', cmPath('kc-after'))
  t.ok(Number(after.json?.metadata?.resourceVersion) > Number(watched.metadata.resourceVersion), 'resourceVersion continues upward after restart')
})
