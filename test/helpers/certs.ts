// Test helper: certificate authorities and client certificates made with node-forge (RSA keys from node:crypto), and kubeconfigs that use them.
import crypto from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import forge from 'node-forge'

export interface Issued { certPem: string; keyPem: string; cert: forge.pki.Certificate; key: forge.pki.rsa.PrivateKey }

let serial = 1

function keyPair(): { pub: forge.pki.rsa.PublicKey; priv: forge.pki.rsa.PrivateKey; privPem: string } {
  const kp = crypto.generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } })
  return { pub: forge.pki.publicKeyFromPem(kp.publicKey), priv: forge.pki.privateKeyFromPem(kp.privateKey), privPem: kp.privateKey }
}

const HOUR = 3600_000

export interface CertOptions {
  cn?: string
  orgs?: string[]
  /** extra subject attributes by OID (the UID element) */
  oids?: Array<[string, string]>
  /** extended key usages: client (default), server, or none (no EKU extension) */
  eku?: 'client' | 'server' | 'none'
  notBefore?: Date
  notAfter?: Date
  /** a CA certificate (an intermediate when `issuer` is given) */
  ca?: boolean
}

/** A certificate signed by `issuer` (self-signed when absent). */
export function issue(issuer: Issued | null, o: CertOptions = {}): Issued {
  const k = keyPair()
  const c = forge.pki.createCertificate()
  c.publicKey = k.pub
  c.serialNumber = (serial++).toString(16).padStart(4, '0')
  c.validity.notBefore = o.notBefore ?? new Date(Date.now() - HOUR)
  c.validity.notAfter = o.notAfter ?? new Date(Date.now() + 24 * HOUR)
  const subject: forge.pki.CertificateField[] = []
  for (const org of o.orgs ?? []) subject.push({ shortName: 'O', value: org })
  if (o.cn !== undefined) subject.push({ shortName: 'CN', value: o.cn })
  for (const [type, value] of o.oids ?? []) subject.push({ type, value } as forge.pki.CertificateField)
  c.setSubject(subject)
  c.setIssuer(issuer ? issuer.cert.subject.attributes : subject)
  const ext: any[] = []
  if (o.ca) {
    ext.push({ name: 'basicConstraints', cA: true, critical: true }, { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true })
  } else {
    ext.push({ name: 'basicConstraints', cA: false, critical: true }, { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true })
    if (o.eku !== 'none') ext.push({ name: 'extKeyUsage', clientAuth: o.eku !== 'server', serverAuth: o.eku === 'server' })
  }
  ext.push({ name: 'subjectKeyIdentifier' })
  c.setExtensions(ext)
  c.sign(issuer ? issuer.key : k.priv, forge.md.sha256.create())
  return { certPem: forge.pki.certificateToPem(c), keyPem: k.privPem, cert: c, key: k.priv }
}

export function makeCa(cn: string): Issued { return issue(null, { cn, ca: true }) }

/** The hex SHA-256 of a certificate's DER: upstream's credential id is `X509SHA256=<this>`. */
export function fingerprint(certPem: string): string {
  return crypto.createHash('sha256').update(new crypto.X509Certificate(certPem).raw).digest('hex')
}

/**
 * A kubeconfig for the test server's https URL with a client certificate (`certPem` may hold intermediates after the
 * leaf) and, optionally, a bearer token; the server CA comes from the admin kubeconfig in the data dir.
 */
export function certKubeconfig(dir: string, name: string, httpsUrl: string, dataDir: string, user: { certPem?: string; keyPem?: string; token?: string }): string {
  const admin = JSON.parse(readFileSync(join(dataDir, 'admin.kubeconfig'), 'utf8'))
  const u: Record<string, string> = {}
  if (user.certPem) u['client-certificate-data'] = Buffer.from(user.certPem).toString('base64')
  if (user.keyPem) u['client-key-data'] = Buffer.from(user.keyPem).toString('base64')
  if (user.token) u.token = user.token
  const cfg = {
    apiVersion: 'v1', kind: 'Config',
    clusters: [{ name: 'orch', cluster: { server: httpsUrl, 'certificate-authority-data': admin.clusters[0].cluster['certificate-authority-data'] } }],
    users: [{ name, user: u }],
    contexts: [{ name: 'c', context: { cluster: 'orch', user: name, namespace: 'default' } }],
    'current-context': 'c',
  }
  const file = join(dir, `${name}.kubeconfig`)
  writeFileSync(file, JSON.stringify(cfg, null, 2))
  return file
}

/** The server's CA (PEM), for TLS clients in tests. */
export function serverCa(dataDir: string): string {
  const admin = JSON.parse(readFileSync(join(dataDir, 'admin.kubeconfig'), 'utf8'))
  return Buffer.from(admin.clusters[0].cluster['certificate-authority-data'], 'base64').toString('utf8')
}
