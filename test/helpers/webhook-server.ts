// Test helper: an https webhook server of the test's own (a CA and a serving certificate for 127.0.0.1 made here with
// node-forge) that records every body it receives and answers as the test decides; plus its kubeconfig file.
import https from 'node:https'
import type { TLSSocket } from 'node:tls'
import crypto from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import forge from 'node-forge'

/** `clientCN`: the common name of the client certificate the caller presented. */
export interface Received { path: string; headers: Record<string, string | string[] | undefined>; body: any; clientCN?: string }
/** What the server answers: a status and a JSON body, after `delayMs`; `destroy` drops the connection. */
export interface Answer { status?: number; body?: unknown; delayMs?: number; destroy?: boolean }

export interface WebhookServer {
  url: string
  port: number
  caPem: string
  received: Received[]
  /** how the next requests are answered */
  answer: (req: Received) => Answer
  /** a kubeconfig for it (in `dir`), with a client certificate made by the same CA */
  kubeconfig(dir: string, name: string, opts?: { token?: string; path?: string; caData?: boolean }): string
  close(): Promise<void>
}

function serial(): string {
  const b = crypto.randomBytes(16)
  b[0] = (b[0]! & 0x7f) | 1
  return b.toString('hex')
}

function issue(cn: string, caCert: forge.pki.Certificate | undefined, caKey: forge.pki.rsa.PrivateKey | undefined, server: boolean, dnsNames: string[] = []): { cert: string; key: string; certObj: forge.pki.Certificate; keyObj: forge.pki.rsa.PrivateKey } {
  const keys = forge.pki.rsa.generateKeyPair(2048)
  const cert = forge.pki.createCertificate()
  cert.publicKey = keys.publicKey
  cert.serialNumber = serial()
  cert.validity.notBefore = new Date(Date.now() - 3600_000)
  cert.validity.notAfter = new Date(Date.now() + 86400_000)
  cert.setSubject([{ name: 'commonName', value: cn }])
  cert.setIssuer(caCert ? caCert.subject.attributes : [{ name: 'commonName', value: cn }])
  const ext: any[] = caCert
    ? [{ name: 'basicConstraints', cA: false }, { name: 'keyUsage', digitalSignature: true, keyEncipherment: true }, { name: 'extKeyUsage', serverAuth: server, clientAuth: !server }]
    : [{ name: 'basicConstraints', cA: true, critical: true }, { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true }]
  if (server) ext.push({ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }, { type: 2, value: 'localhost' }, ...dnsNames.map((value) => ({ type: 2, value }))] })
  cert.setExtensions(ext)
  cert.sign(caKey ?? keys.privateKey, forge.md.sha256.create())
  return { cert: forge.pki.certificateToPem(cert), key: forge.pki.privateKeyToPem(keys.privateKey), certObj: cert, keyObj: keys.privateKey }
}

/**
 * `dnsNames`: more names the serving certificate is good for (a Service's `<name>.<namespace>.svc`); `host`: the
 * address to listen on (default 127.0.0.1; `url` names 127.0.0.1 either way).
 */
export async function startWebhookServer(opts: { dnsNames?: string[]; host?: string } = {}): Promise<WebhookServer> {
  const ca = issue('webhook-test-ca', undefined, undefined, false)
  const serving = issue('webhook', ca.certObj, ca.keyObj, true, opts.dnsNames)
  const client = issue('orch-apiserver', ca.certObj, ca.keyObj, false)
  const received: Received[] = []
  const srv: WebhookServer = {
    url: '', port: 0, caPem: ca.cert, received,
    answer: () => ({ status: 500, body: { error: 'no answer set' } }),
    kubeconfig(dir, name, opts = {}) {
      const caFile = join(dir, `${name}-ca.crt`)
      const certFile = join(dir, `${name}-client.crt`)
      const keyFile = join(dir, `${name}-client.key`)
      writeFileSync(caFile, ca.cert)
      writeFileSync(certFile, client.cert)
      writeFileSync(keyFile, client.key)
      const caLine = opts.caData ? `certificate-authority-data: ${Buffer.from(ca.cert).toString('base64')}` : `certificate-authority: ${caFile}`
      const user = opts.token ? `token: ${opts.token}` : `client-certificate: ${certFile}\n      client-key: ${keyFile}`
      const file = join(dir, `${name}.kubeconfig`)
      writeFileSync(file, `apiVersion: v1
kind: Config
clusters:
- name: hook
  cluster:
    server: ${srv.url}${opts.path ?? '/review'}
    ${caLine}
users:
- name: apiserver
  user:
      ${user}
contexts:
- name: webhook
  context:
    cluster: hook
    user: apiserver
current-context: webhook
`)
      return file
    },
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
  const server = https.createServer({ key: serving.key, cert: serving.cert, ca: ca.cert, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      let body: any
      try { body = JSON.parse(Buffer.concat(chunks).toString('utf8')) } catch { body = Buffer.concat(chunks).toString('utf8') }
      const peer = (req.socket as TLSSocket).getPeerCertificate?.()
      const r: Received = { path: req.url ?? '', headers: req.headers, body, clientCN: peer?.subject?.CN as string | undefined }
      received.push(r)
      const a = srv.answer(r)
      const send = () => {
        if (a.destroy) { req.socket.destroy(); return }
        const text = typeof a.body === 'string' ? a.body : JSON.stringify(a.body ?? {})
        res.writeHead(a.status ?? 200, { 'content-type': 'application/json' })
        res.end(text)
      }
      if (a.delayMs) setTimeout(send, a.delayMs)
      else send()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, opts.host ?? '127.0.0.1', () => resolve()))
  srv.port = (server.address() as AddressInfo).port
  srv.url = `https://127.0.0.1:${srv.port}`
  return srv
}

