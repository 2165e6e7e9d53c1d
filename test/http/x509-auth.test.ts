// Black-box: client certificates (--client-ca-file) and the authenticating proxy (--requestheader-*) on the node:http2
// front-end of the secure port, with stock kubectl 1.32 (kubeconfigs with client-certificate-data) and raw TLS clients.
import t from 'tap'
import { spawn } from 'node:child_process'
import https from 'node:https'
import http2 from 'node:http2'
import { gunzipSync } from 'node:zlib'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { KubeConfig, CoreV1Api, makeInformer, type V1ConfigMap } from '@kubernetes/client-node'
import { runKubectl } from '../helpers/kubectl.js'
import { startServer, mainJs, freePort, type TestServer } from '../helpers/server.js'
import { plainNode } from '../helpers/tap-env.js'
import { issue, makeCa, fingerprint, certKubeconfig, serverCa, type Issued } from '../helpers/certs.js'

const work = mkdtempSync(join(tmpdir(), 'orch-x509-'))
const home = mkdtempSync(join(work, 'home-'))
const CRED = 'authentication.orch.io/credential-id'

const clientCa = makeCa('client-ca')
const proxyCa = makeCa('front-proxy-ca')
const otherCa = makeCa('other-ca')
const clientCaFile = join(work, 'client-ca.pem')
const proxyCaFile = join(work, 'proxy-ca.pem')
writeFileSync(clientCaFile, clientCa.certPem)
writeFileSync(proxyCaFile, proxyCa.certPem)

const alice = issue(clientCa, { cn: 'alice', orgs: ['dev', 'qa'] })
const node1 = issue(clientCa, { cn: 'system:node:n1', orgs: ['system:nodes'] })
const proxy = issue(proxyCa, { cn: 'front-proxy' })
const strayProxy = issue(proxyCa, { cn: 'stray-proxy' })

let s: TestServer
let ca: string
t.before(async () => {
  s = await startServer({
    secure: true,
    args: [
      // Two front-ends: the first serves the secure port (node:http2), both serve the plain port.
      '--frontends', '2',
      '--client-ca-file', clientCaFile,
      '--requestheader-client-ca-file', proxyCaFile, '--requestheader-allowed-names', 'front-proxy',
      '--requestheader-username-headers', 'X-Remote-User', '--requestheader-group-headers', 'X-Remote-Group',
      '--requestheader-extra-headers-prefix', 'X-Remote-Extra-', '--requestheader-uid-headers', 'X-Remote-Uid',
    ],
  })
  ca = serverCa(s.dataDir)
})
t.teardown(async () => {
  await s?.stop()
  rmSync(work, { recursive: true, force: true })
})

function kubeconfigFor(name: string, user: { cert?: Issued; chain?: string; token?: string }): string {
  return certKubeconfig(work, name, s.httpsUrl, s.dataDir, { certPem: user.cert ? user.cert.certPem + (user.chain ?? '') : undefined, keyPem: user.cert?.keyPem, token: user.token })
}

function kubectlAs(kubeconfig: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runKubectl(kubeconfig, home, args)
}

interface TlsReply { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer; text: string; json: any }

/** One HTTP/1.1 request over TLS with an optional client certificate. */
function h1(method: string, path: string, o: { cert?: Issued; chain?: string; headers?: Record<string, string | string[]>; body?: string | Buffer } = {}): Promise<TlsReply> {
  // A keep-alive agent of its own (its own certificate): with `Connection: close` the server would close the connection
  // after answering a body it does not read (a 413) while the client is still sending it.
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1 })
  return new Promise<TlsReply>((resolve, reject) => {
    const req = https.request({
      host: '127.0.0.1', port: s.securePort, method, path, ca, servername: 'localhost', agent,
      cert: o.cert ? o.cert.certPem + (o.chain ?? '') : undefined, key: o.cert?.keyPem,
      headers: { ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}), ...(o.headers ?? {}) },
    }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const body = Buffer.concat(chunks)
        const text = body.toString()
        let json: any
        try { json = JSON.parse(text) } catch { json = undefined }
        resolve({ status: res.statusCode!, headers: res.headers, body, text, json })
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(o.body)
  }).finally(() => agent.destroy())
}

/** One HTTP/2 request over TLS (kubectl speaks h2 too; this checks the answer's shape directly). */
function h2(method: string, path: string, o: { cert?: Issued; headers?: Record<string, string>; body?: string } = {}): Promise<TlsReply> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(s.httpsUrl, { ca, servername: 'localhost', cert: o.cert?.certPem, key: o.cert?.keyPem })
    session.on('error', reject)
    const req = session.request({ ':method': method, ':path': path, ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}), ...(o.headers ?? {}) })
    const chunks: Buffer[] = []
    let headers: Record<string, any> = {}
    req.on('response', (h) => { headers = h })
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      session.close()
      const body = Buffer.concat(chunks)
      const text = body.toString()
      let json: any
      try { json = JSON.parse(text) } catch { json = undefined }
      resolve({ status: Number(headers[':status']), headers, body, text, json })
    })
    req.on('error', reject)
    req.end(o.body)
  })
}

const REVIEW = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' })
const UNAUTHORIZED = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 }

t.test('kubectl auth whoami with a client certificate: CN, every O, system:authenticated, the credential id', async (t) => {
  const kc = kubeconfigFor('alice', { cert: alice })
  const r = await kubectlAs(kc, ['auth', 'whoami', '-o', 'json'])
  t.equal(r.code, 0, r.stderr)
  const o = JSON.parse(r.stdout)
  t.same(o.status.userInfo, { username: 'alice', groups: ['dev', 'qa', 'system:authenticated'], extra: { [CRED]: [`X509SHA256=${fingerprint(alice.certPem)}`] } })
  const table = await kubectlAs(kc, ['auth', 'whoami'])
  t.match(table.stdout, /Username\s+alice/)
  t.match(table.stdout, new RegExp(`Extra: ${CRED.replace(/\./g, '\\.')}\\s+\\[X509SHA256=${fingerprint(alice.certPem)}\\]`))
})

t.test('the UID element of the subject is the user UID; a chain through an intermediate the client sends verifies', async (t) => {
  const withUid = issue(clientCa, { cn: 'carol', oids: [['1.3.6.1.4.1.57683.2', 'u-carol']] })
  const r = await h1('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { cert: withUid, body: REVIEW })
  t.equal(r.status, 201, r.text)
  t.same(r.json.status.userInfo, { username: 'carol', uid: 'u-carol', groups: ['system:authenticated'], extra: { [CRED]: [`X509SHA256=${fingerprint(withUid.certPem)}`] } })
  const inter = issue(clientCa, { cn: 'client-intermediate', ca: true })
  const dave = issue(inter, { cn: 'dave', orgs: ['ops'] })
  const viaInter = await h1('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { cert: dave, chain: inter.certPem, body: REVIEW })
  t.equal(viaInter.status, 201, viaInter.text)
  t.equal(viaInter.json.status.userInfo.username, 'dave')
  // Without the intermediate the chain does not reach the CA: 401.
  const noInter = await h1('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { cert: dave, body: REVIEW })
  t.equal(noInter.status, 401)
  // New connections that resume the TLS session (the peer reports only the leaf then) keep the chain.
  const agent = new https.Agent({ keepAlive: false })
  t.teardown(() => agent.destroy())
  for (let i = 0; i < 3; i++) {
    const r = await new Promise<{ status: number; reused: boolean; user: string }>((resolve, reject) => {
      const req = https.request({ host: '127.0.0.1', port: s.securePort, method: 'POST', path: '/apis/authentication.k8s.io/v1/selfsubjectreviews', ca, servername: 'localhost', agent, cert: dave.certPem + inter.certPem, key: dave.keyPem, headers: { 'content-type': 'application/json' } }, (res) => {
        let b = ''
        res.on('data', (c) => { b += c })
        res.on('end', () => resolve({ status: res.statusCode!, reused: (res.socket as import('node:tls').TLSSocket).isSessionReused(), user: JSON.parse(b).status?.userInfo?.username }))
      })
      req.on('error', reject)
      req.end(REVIEW)
    })
    t.same({ status: r.status, user: r.user }, { status: 201, user: 'dave' }, `connection ${i}`)
    if (i > 0) t.ok(r.reused, `connection ${i} resumed the TLS session`)
  }
})

t.test('RBAC applies to the certificate user: forbidden before a binding, allowed after', async (t) => {
  const kc = kubeconfigFor('alice', { cert: alice })
  const before = await kubectlAs(kc, ['get', 'configmaps', '-n', 'default'])
  t.not(before.code, 0)
  t.match(before.stderr, 'configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "default"')
  const rb = await s.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'alice-view' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
  })
  t.equal(rb.status, 201, rb.text)
  let after = await kubectlAs(kc, ['get', 'configmaps', '-n', 'default', '-o', 'name'])
  for (let i = 0; i < 50 && after.code !== 0; i++) {
    await new Promise((r) => setTimeout(r, 100))
    after = await kubectlAs(kc, ['get', 'configmaps', '-n', 'default', '-o', 'name'])
  }
  t.equal(after.code, 0, after.stderr)
  // A group of the certificate (O) is a subject too.
  const group = await kubectlAs(kc, ['auth', 'can-i', 'list', 'secrets', '-n', 'default'])
  t.equal(group.stdout.trim(), 'no')
  await s.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'qa-edit' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'qa' }],
  })
  let g = await kubectlAs(kc, ['auth', 'can-i', 'list', 'secrets', '-n', 'default'])
  for (let i = 0; i < 50 && g.stdout.trim() !== 'yes'; i++) {
    await new Promise((r) => setTimeout(r, 100))
    g = await kubectlAs(kc, ['auth', 'can-i', 'list', 'secrets', '-n', 'default'])
  }
  t.equal(g.stdout.trim(), 'yes')
})

t.test('a node certificate (system:node:n1 in system:nodes): its own node, not another node (Node authorizer, NodeRestriction)', async (t) => {
  for (const n of ['n1', 'n2']) {
    const r = await s.request('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: n } })
    t.equal(r.status, 201, r.text)
  }
  const kc = kubeconfigFor('node1', { cert: node1 })
  const own = await kubectlAs(kc, ['get', 'node', 'n1', '-o', 'name'])
  t.equal(own.code, 0, own.stderr)
  t.equal(own.stdout.trim(), 'node/n1')
  const other = await kubectlAs(kc, ['get', 'node', 'n2'])
  t.not(other.code, 0)
  t.match(other.stderr, 'nodes "n2" is forbidden: User "system:node:n1" cannot get resource "nodes" in API group "" at the cluster scope')
  const label = await kubectlAs(kc, ['label', 'node', 'n1', 'orch.example/x=1'])
  t.equal(label.code, 0, label.stderr)
  const otherLabel = await kubectlAs(kc, ['label', 'node', 'n2', 'orch.example/x=1'])
  t.not(otherLabel.code, 0)
  t.match(otherLabel.stderr, /node "n1" is not allowed to modify node "n2"|forbidden/)
  const r = await h1('PATCH', '/api/v1/nodes/n2', { cert: node1, headers: { 'content-type': 'application/merge-patch+json' }, body: '{"metadata":{"labels":{"a":"b"}}}' })
  t.equal(r.status, 403)
  t.equal(r.json.message, 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"')
})

t.test('certificates that do not verify are refused as upstream refuses them: 401, no anonymous fallback', async (t) => {
  const stranger = issue(otherCa, { cn: 'mallory', orgs: ['system:masters'] })
  const kc = kubeconfigFor('mallory', { cert: stranger })
  const k = await kubectlAs(kc, ['auth', 'whoami'])
  t.not(k.code, 0)
  t.match(k.stderr, 'error: You must be logged in to the server (Unauthorized)')
  const cases: Array<[string, Issued]> = [
    ['unknown CA', stranger],
    ['expired', issue(clientCa, { cn: 'old', notBefore: new Date(Date.now() - 48 * 3600_000), notAfter: new Date(Date.now() - 3600_000) })],
    ['not yet valid', issue(clientCa, { cn: 'early', notBefore: new Date(Date.now() + 3600_000), notAfter: new Date(Date.now() + 48 * 3600_000) })],
    ['server-auth only', issue(clientCa, { cn: 'server-only', eku: 'server' })],
  ]
  for (const [what, cert] of cases) {
    // Public paths too: anonymous would be allowed /version, a failed certificate is not.
    const r = await h1('GET', '/version', { cert })
    t.equal(r.status, 401, what)
    t.same(r.json, UNAUTHORIZED, what)
    const r2 = await h2('GET', '/version', { cert })
    t.equal(r2.status, 401, `${what} (h2)`)
  }
  // No EKU extension at all allows any use (Go's rule).
  const noEku = await h1('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { cert: issue(clientCa, { cn: 'any-use', eku: 'none' }), body: REVIEW })
  t.equal(noEku.status, 201, noEku.text)
  t.equal(noEku.json.status.userInfo.username, 'any-use')
  // An empty CN authenticates nothing (no error from the x509 authenticator); with a request-header CA configured, as
  // here, that CA's verification of the same certificate fails, which is an error: 401 (the unit test covers the rest).
  const noCn = await h1('GET', '/version', { cert: issue(clientCa, { orgs: ['x'] }) })
  t.equal(noCn.status, 401)
  // A failed certificate plus a good bearer token: the token's user (the union goes on past the error).
  const both = await h1('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { cert: stranger, headers: { authorization: `Bearer ${s.adminToken}` }, body: REVIEW })
  t.equal(both.status, 201, both.text)
  t.equal(both.json.status.userInfo.username, 'orch-admin')
})

t.test('without a certificate: bearer tokens and anonymous as before; a good certificate wins over a token', async (t) => {
  const admin = await kubectlAs(s.kubeconfig, ['auth', 'whoami', '-o', 'json'])
  t.equal(admin.code, 0, admin.stderr)
  t.equal(JSON.parse(admin.stdout).status.userInfo.username, 'orch-admin')
  const anon = await h2('GET', '/version')
  t.equal(anon.status, 200)
  const anonReview = await h1('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { body: REVIEW })
  t.equal(anonReview.status, 403)
  const bad = await h1('GET', '/version', { headers: { authorization: 'Bearer nope' } })
  t.equal(bad.status, 401)
  const both = await kubectlAs(kubeconfigFor('alice-token', { cert: alice, token: s.adminToken }), ['auth', 'whoami', '-o', 'json'])
  t.equal(both.code, 0, both.stderr)
  t.equal(JSON.parse(both.stdout).status.userInfo.username, 'alice', 'the x509 authenticator runs before bearer tokens')
})

t.test('HTTP/2: an unauthenticated client (anonymous or 401) cannot keep its connection; an authenticated one can', async (t) => {
  /** Two requests on one session; whether the server closed the session after the first. */
  const twice = async (cert: Issued | undefined, headers: Record<string, string>): Promise<{ statuses: number[]; closedByServer: boolean }> => {
    const session = http2.connect(s.httpsUrl, { ca, servername: 'localhost', cert: cert?.certPem, key: cert?.keyPem })
    session.on('error', () => undefined)
    let goaway = false
    session.on('goaway', () => { goaway = true })
    const one = (): Promise<number> => new Promise((resolve) => {
      const req = session.request({ ':path': '/version', ...headers })
      req.on('response', (h) => { req.resume(); req.on('end', () => resolve(Number(h[':status']))) })
      req.on('error', () => resolve(-1))
    })
    const statuses = [await one()]
    await new Promise((r) => setTimeout(r, 200))
    if (!goaway && !session.closed) statuses.push(await one())
    session.destroy()
    return { statuses, closedByServer: goaway }
  }
  t.same(await twice(undefined, {}), { statuses: [200], closedByServer: true }, 'anonymous')
  t.same(await twice(undefined, { authorization: 'Bearer nope' }), { statuses: [401], closedByServer: true }, 'a bad token')
  t.same(await twice(undefined, { authorization: `Bearer ${s.adminToken}` }), { statuses: [200, 200], closedByServer: false }, 'a token')
  t.same(await twice(alice, {}), { statuses: [200, 200], closedByServer: false }, 'a client certificate')
})

t.test('authenticating proxy: a proxy certificate plus headers authenticates as the header user', async (t) => {
  const r = await h1('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    cert: proxy, body: REVIEW,
    headers: { 'X-Remote-User': 'bob', 'X-Remote-Group': ['g1', 'g, 2'], 'X-Remote-Uid': 'u-bob', 'X-Remote-Extra-Acme.com%2Fproject': ['p1', 'p2'], 'X-Remote-Extra-Scopes': 'read' },
  })
  t.equal(r.status, 201, r.text)
  t.same(r.json.status.userInfo, { username: 'bob', uid: 'u-bob', groups: ['g1', 'g, 2', 'system:authenticated'], extra: { 'acme.com/project': ['p1', 'p2'], scopes: ['read'] } })
  // The same over HTTP/2, and RBAC for the header user.
  const h = await h2('GET', '/api/v1/namespaces/default/configmaps', { cert: proxy, headers: { 'x-remote-user': 'bob' } })
  t.equal(h.status, 403)
  t.equal(h.json.message, 'configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "default"')
  const admin = await h2('GET', '/api/v1/namespaces/default/configmaps', { cert: proxy, headers: { 'x-remote-user': 'orch-admin', 'x-remote-group': 'system:masters' } })
  t.equal(admin.status, 200)
  // A proxy certificate without a user header authenticates nothing, and is no client certificate: 401.
  const noUser = await h1('GET', '/version', { cert: proxy })
  t.equal(noUser.status, 401)
})

t.test('authenticating proxy: without the proxy certificate, or with a CN not allowed, the headers are ignored', async (t) => {
  const headers = { 'x-remote-user': 'orch-admin', 'x-remote-group': 'system:masters' }
  // No certificate: anonymous (a plain request may not assert an identity).
  const none = await h1('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { headers, body: REVIEW })
  t.equal(none.status, 403)
  t.match(none.json.message, /^selfsubjectreviews\.authentication\.\S+ is forbidden: User "system:anonymous" cannot create resource "selfsubjectreviews"/)
  // A client certificate (client CA): its own user, not the headers'.
  const client = await h1('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { cert: alice, headers, body: REVIEW })
  t.equal(client.status, 201)
  t.equal(client.json.status.userInfo.username, 'alice')
  // A certificate of the proxy CA whose CN is not allowed: the headers do nothing, the certificate fails: 401.
  const stray = await h1('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { cert: strayProxy, headers, body: REVIEW })
  t.equal(stray.status, 401)
  t.same(stray.json, UNAUTHORIZED)
  // ... unless a bearer token authenticates the request.
  const token = await h1('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { cert: strayProxy, headers: { ...headers, authorization: `Bearer ${s.adminToken}`, 'x-remote-user': 'eve' }, body: REVIEW })
  t.equal(token.status, 201)
  t.equal(token.json.status.userInfo.username, 'orch-admin')
  // The bare plain-HTTP port never reads the headers.
  const plain = await s.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', JSON.parse(REVIEW), { ...headers, authorization: '' })
  t.equal(plain.status, 403)
})

t.test('the node front-end serves the whole pipeline: watch, large streamed lists with gzip, HEAD, 413, h2 and h1', async (t) => {
  const admin = { cert: proxy, headers: { 'x-remote-user': 'orch-admin', 'x-remote-group': 'system:masters' } }
  const r = await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'big' } })
  t.equal(r.status, 201)
  const value = 'x'.repeat(20_000)
  for (let i = 0; i < 40; i++) {
    const c = await s.request('POST', '/api/v1/namespaces/big/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` }, data: { v: value } })
    t.equal(c.status, 201)
  }
  // Over 800 KB of JSON: streamed in chunks, gzip-compressed when asked.
  const list = await h1('GET', '/api/v1/namespaces/big/configmaps', admin)
  t.equal(list.status, 200)
  const ours = (items: Array<{ metadata: { name: string } }>): number => items.filter((i) => i.metadata.name.startsWith('cm-')).length
  t.equal(ours(list.json.items), 40)
  const gz = await h1('GET', '/api/v1/namespaces/big/configmaps', { ...admin, headers: { ...admin.headers, 'accept-encoding': 'gzip' } })
  t.equal(gz.headers['content-encoding'], 'gzip')
  t.equal(ours(JSON.parse(gunzipSync(gz.body).toString()).items), 40)
  const list2 = await h2('GET', '/api/v1/namespaces/big/configmaps', admin)
  t.equal(ours(list2.json.items), 40)
  const kc = kubeconfigFor('alice-big', { cert: alice })
  await s.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/big/rolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'alice-view' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
  })
  let kl = await kubectlAs(kc, ['get', 'configmaps', '-n', 'big', '-o', 'name', '--chunk-size', '7'])
  for (let i = 0; i < 50 && kl.code !== 0; i++) {
    await new Promise((res) => setTimeout(res, 100))
    kl = await kubectlAs(kc, ['get', 'configmaps', '-n', 'big', '-o', 'name', '--chunk-size', '7'])
  }
  t.equal(kl.code, 0, kl.stderr)
  t.equal(kl.stdout.trim().split('\n').filter((l) => l.startsWith('configmap/cm-')).length, 40)
  // A get's head (written packed, as one status value, by the front-end): the same headers over HTTP/1.1 and HTTP/2.
  for (const [proto, send] of [['h1', h1], ['h2', h2]] as const) {
    for (const path of ['/api/v1/namespaces/big/configmaps/cm-1', '/api/v1/namespaces/big/configmaps/none']) {
      const g = await send('GET', path, admin)
      t.equal(g.status, path.endsWith('none') ? 404 : 200, `${proto} ${path}`)
      t.equal(g.headers['content-type'], 'application/json', `${proto} ${path}: content-type`)
      t.equal(g.headers['cache-control'], 'no-cache, private', `${proto} ${path}: cache-control`)
      t.match(g.headers['x-orch-pf-flowschema-uid'], /^[0-9a-f-]{36}$/, `${proto} ${path}: flow schema`)
      t.match(g.headers['x-orch-pf-prioritylevel-uid'], /^[0-9a-f-]{36}$/, `${proto} ${path}: priority level`)
    }
  }
  // HEAD (of a non-resource path; resources answer it 405 as upstream): the length of the body, none sent.
  const get = await h1('GET', '/openapi/v2', admin)
  const head = await h1('HEAD', '/openapi/v2', admin)
  t.equal(head.status, 200)
  t.equal(head.body.length, 0)
  t.equal(Number(head.headers['content-length']), get.body.length)
  // A body over the limit: 413.
  const huge = await h1('POST', '/api/v1/namespaces/big/configmaps', { ...admin, body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'huge' }, data: { v: 'y'.repeat(4 * 1024 * 1024) } }) })
  t.equal(huge.status, 413)
  t.equal(huge.json.reason, 'RequestEntityTooLarge')
  const huge2 = await h2('POST', '/api/v1/namespaces/big/configmaps', { ...admin, body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'huge' }, data: { v: 'y'.repeat(4 * 1024 * 1024) } }) })
  t.equal(huge2.status, 413)
  t.equal(huge2.json.message, 'Request entity too large: limit is 3145728')
  const after = await h2('POST', '/api/v1/namespaces/big/configmaps', { ...admin, body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'small' } }) })
  t.equal(after.status, 201, after.text)

  // A raw watch over HTTP/1.1 (chunked) that ends by its timeout, with the objects as JSON lines.
  const w1 = await h1('GET', '/api/v1/namespaces/big/configmaps?watch=1&timeoutSeconds=2&fieldSelector=metadata.name%3Dcm-3', admin)
  t.equal(w1.status, 200)
  const frames = w1.text.trim().split('\n').map((l) => JSON.parse(l))
  t.same(frames.map((f) => [f.type, f.object.metadata.name]), [['ADDED', 'cm-3']])
  // A client that goes away in the middle of an HTTP/2 watch: the server drops the watcher and goes on.
  await new Promise<void>((resolve, reject) => {
    const session = http2.connect(s.httpsUrl, { ca, servername: 'localhost', cert: proxy.certPem, key: proxy.keyPem })
    session.on('error', () => undefined)
    const req = session.request({ ':path': '/api/v1/namespaces/big/configmaps?watch=1', 'x-remote-user': 'orch-admin', 'x-remote-group': 'system:masters' })
    req.on('error', () => undefined)
    req.once('data', () => { session.destroy(); resolve() })
    setTimeout(() => reject(new Error('no watch event')), 10_000)
  })
  for (let i = 0; i < 3; i++) t.equal((await s.request('POST', '/api/v1/namespaces/big/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `after-abort-${i}` } })).status, 201)
  t.equal((await h2('GET', '/api/v1/namespaces/big/configmaps/after-abort-2', admin)).status, 200)
  t.same(s.logs.filter((l) => /"level":(50|60)/.test(l)), [], 'no errors logged')

  // kubectl get -w with the client certificate: events arrive over the node front-end.
  const proc = spawn('kubectl', ['--kubeconfig', kc, 'get', 'configmaps', '-n', 'big', '-w', '--output-watch-events'], { env: { ...process.env, HOME: home, KUBECONFIG: '' } })
  let out = ''
  proc.stdout.on('data', (d: Buffer) => { out += d.toString() })
  let errOut = ''
  proc.stderr.on('data', (d: Buffer) => { errOut += d.toString() })
  try {
    const until = async (re: RegExp): Promise<boolean> => {
      for (let i = 0; i < 200; i++) { if (re.test(out)) return true; await new Promise((res) => setTimeout(res, 50)) }
      return false
    }
    t.ok(await until(/ADDED\s+cm-39\s/), `initial state listed: ${out} ${errOut}`)
    await s.request('POST', '/api/v1/namespaces/big/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'watched' } })
    t.ok(await until(/ADDED\s+watched\s/), 'a new object arrives')
    await s.request('DELETE', '/api/v1/namespaces/big/configmaps/watched')
    t.ok(await until(/DELETED\s+watched\s/), 'its deletion arrives')
  } finally {
    proc.kill('SIGTERM')
  }
})

t.test('a @kubernetes/client-node informer with a client certificate (list, then watch over the node front-end)', async (t) => {
  const ns = 'informed'
  t.equal((await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status, 201)
  for (let i = 0; i < 3; i++) await s.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `pre-${i}` } })
  const ops = issue(clientCa, { cn: 'ops-bot', orgs: ['system:masters'] })
  const kc = new KubeConfig()
  kc.loadFromFile(kubeconfigFor('ops-bot', { cert: ops }))
  const api = kc.makeApiClient(CoreV1Api)
  const informer = makeInformer<V1ConfigMap>(kc, `/api/v1/namespaces/${ns}/configmaps`, () => api.listNamespacedConfigMap({ namespace: ns }))
  const errors: unknown[] = []
  informer.on('error', (err) => { errors.push(err) })
  await informer.start()
  t.teardown(() => informer.stop())
  const names = (): string[] => informer.list().map((o) => o.metadata!.name!).filter((n) => n !== 'orch-root-ca.crt').sort()
  const until = async (want: string[]): Promise<boolean> => {
    for (let i = 0; i < 200; i++) { if (JSON.stringify(names()) === JSON.stringify(want)) return true; await new Promise((r) => setTimeout(r, 50)) }
    return false
  }
  t.ok(await until(['pre-0', 'pre-1', 'pre-2']), `listed: ${names()}`)
  await s.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'later' } })
  await s.request('DELETE', `/api/v1/namespaces/${ns}/configmaps/pre-1`)
  t.ok(await until(['later', 'pre-0', 'pre-2']), `watched: ${names()}`)
  t.same(errors, [])
})

t.test('the settings are published in orch-system/extension-apiserver-authentication for extension API servers', async (t) => {
  const r = await s.request('GET', '/api/v1/namespaces/orch-system/configmaps/extension-apiserver-authentication')
  t.equal(r.status, 200, r.text)
  t.same(r.json.data, {
    'client-ca-file': clientCa.certPem,
    'requestheader-client-ca-file': proxyCa.certPem,
    'requestheader-allowed-names': '["front-proxy"]',
    'requestheader-username-headers': '["X-Remote-User"]',
    'requestheader-uid-headers': '["X-Remote-Uid"]',
    'requestheader-group-headers': '["X-Remote-Group"]',
    'requestheader-extra-headers-prefix': '["X-Remote-Extra-"]',
  })
})

t.test('bad flag values: the server exits at start naming the flag', async (t) => {
  const badPem = join(work, 'bad.pem')
  writeFileSync(badPem, '-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n')
  const noCerts = join(work, 'key-only.pem')
  writeFileSync(noCerts, clientCa.keyPem)
  const run = async (args: string[]): Promise<{ code: number | null; stderr: string }> => {
    const dir = mkdtempSync(join(work, 'bad-'))
    const p = spawn(...plainNode([mainJs, '--port', String(await freePort()), '--secure-port', String(await freePort()), '--data-dir', dir, ...args]), { stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    p.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
    const timer = setTimeout(() => p.kill('SIGKILL'), 30_000)
    const code = await new Promise<number | null>((resolve) => p.once('exit', (c) => resolve(c)))
    clearTimeout(timer)
    return { code, stderr }
  }
  const missing = await run(['--client-ca-file', join(work, 'nope.pem')])
  t.equal(missing.code, 2)
  t.match(missing.stderr, `orch-apiserver: --client-ca-file: open ${join(work, 'nope.pem')}: no such file or directory`)
  const none = await run(['--client-ca-file', noCerts])
  t.equal(none.code, 2)
  t.match(none.stderr, `orch-apiserver: --client-ca-file: error loading CA bundle for "client-ca-bundle::${noCerts}": data does not contain any valid RSA or ECDSA certificates`)
  const bad = await run(['--requestheader-client-ca-file', badPem])
  t.equal(bad.code, 2)
  t.match(bad.stderr, `orch-apiserver: --requestheader-client-ca-file: error loading CA bundle for "request-header::${badPem}"`)
  const noTls = await run(['--client-ca-file', clientCaFile, '--secure-port', '0'])
  t.equal(noTls.code, 2)
  t.match(noTls.stderr, 'flag --client-ca-file needs the secure port')
})
