// Test helper: a small OpenID Connect provider over https (its own CA, made here with node-forge) serving discovery and
// a JWKS that tests can rotate, and signing ID tokens with jose.
import https from 'node:https'
import type { AddressInfo } from 'node:net'
import forge from 'node-forge'
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload, type KeyLike } from 'jose'

export interface SigningKey { kid: string; alg: string; privateKey: KeyLike; publicJwk: Record<string, unknown> }

export interface OidcProvider {
  issuer: string
  port: number
  caPem: string
  /** keys published in the JWKS */
  keys: SigningKey[]
  /** requests served, by path */
  hits: Record<string, number>
  /** what discovery answers as `issuer` (default: the issuer) */
  discoveredIssuer: string | undefined
  /** more paths and their bodies (a distributed claim's JWT) */
  documents: Record<string, string>
  /** the Authorization header of each request, by path */
  authorization: Record<string, string | undefined>
  newKey(kid: string, alg?: string): Promise<SigningKey>
  sign(claims: JWTPayload, key?: SigningKey, header?: Record<string, unknown>): Promise<string>
  close(): Promise<void>
}

/** A CA and a serving certificate for 127.0.0.1 and localhost. */
export function makeTlsMaterial(): { caPem: string; certPem: string; keyPem: string } {
  const caKeys = forge.pki.rsa.generateKeyPair(2048)
  const ca = forge.pki.createCertificate()
  ca.publicKey = caKeys.publicKey
  ca.serialNumber = '01'
  ca.validity.notBefore = new Date(Date.now() - 3600_000)
  ca.validity.notAfter = new Date(Date.now() + 24 * 3600_000)
  const caName = [{ name: 'commonName', value: 'test-oidc-ca' }]
  ca.setSubject(caName)
  ca.setIssuer(caName)
  ca.setExtensions([{ name: 'basicConstraints', cA: true, critical: true }, { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true }])
  ca.sign(caKeys.privateKey, forge.md.sha256.create())
  const keys = forge.pki.rsa.generateKeyPair(2048)
  const cert = forge.pki.createCertificate()
  cert.publicKey = keys.publicKey
  cert.serialNumber = '02'
  cert.validity.notBefore = new Date(Date.now() - 3600_000)
  cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000)
  cert.setSubject([{ name: 'commonName', value: 'test-oidc' }])
  cert.setIssuer(caName)
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }, { type: 2, value: 'localhost' }] },
  ])
  cert.sign(caKeys.privateKey, forge.md.sha256.create())
  return { caPem: forge.pki.certificateToPem(ca), certPem: forge.pki.certificateToPem(cert), keyPem: forge.pki.privateKeyToPem(keys.privateKey) }
}

export async function makeKey(kid: string, alg = 'RS256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }
  return { kid, alg, privateKey, publicJwk }
}

/** Starts the provider on `port` (0: any); the issuer is https://127.0.0.1:<port>. */
export async function startOidcProvider(opts: { port?: number; tls?: ReturnType<typeof makeTlsMaterial> } = {}): Promise<OidcProvider> {
  const tls = opts.tls ?? makeTlsMaterial()
  const first = await makeKey('key-1')
  const p: OidcProvider = {
    issuer: '', port: 0, caPem: tls.caPem, keys: [first], hits: {}, discoveredIssuer: undefined, documents: {}, authorization: {},
    async newKey(kid, alg = 'RS256') { return makeKey(kid, alg) },
    async sign(claims, key = p.keys[0], header = {}) {
      return new SignJWT(claims).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT', ...header }).sign(key.privateKey)
    },
    close: async () => {},
  }
  const server = https.createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    const path = (req.url ?? '').split('?')[0]
    p.hits[path] = (p.hits[path] ?? 0) + 1
    p.authorization[path] = req.headers.authorization
    res.setHeader('content-type', 'application/json')
    if (path === '/.well-known/openid-configuration') {
      res.end(JSON.stringify({ issuer: p.discoveredIssuer ?? p.issuer, jwks_uri: `${p.issuer}/keys`, id_token_signing_alg_values_supported: ['RS256', 'ES256'] }))
    } else if (p.documents[path] !== undefined) {
      res.setHeader('content-type', 'application/jwt')
      res.end(p.documents[path])
    } else if (path === '/keys') {
      res.end(JSON.stringify({ keys: p.keys.map((k) => k.publicJwk) }))
    } else {
      res.statusCode = 404
      res.end('{}')
    }
  })
  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(opts.port ?? 0, '127.0.0.1', () => resolve()) })
  p.port = (server.address() as AddressInfo).port
  p.issuer = `https://127.0.0.1:${p.port}`
  p.close = () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) })
  return p
}
