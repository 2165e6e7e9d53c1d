// Test helper: PKCS#10 certificate requests as spec.request of a CertificateSigningRequest wants them (PEM, base64).
import { createSign, generateKeyPairSync } from 'node:crypto'
import forge from 'node-forge'

function der(tag: number, body: Buffer): Buffer {
  const n = body.length
  const len = n < 128 ? Buffer.from([n]) : n < 256 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff])
  return Buffer.concat([Buffer.from([tag]), len, body])
}
const seq = (...parts: Buffer[]) => der(0x30, Buffer.concat(parts))
const set = (...parts: Buffer[]) => der(0x31, Buffer.concat(parts))
const utf8 = (s: string) => der(0x0c, Buffer.from(s, 'utf8'))
const O = Buffer.from([0x06, 0x03, 0x55, 0x04, 0x0a])
const CN = Buffer.from([0x06, 0x03, 0x55, 0x04, 0x03])
const ECDSA_SHA256 = seq(Buffer.from([0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02]))

const pem = (type: string, der: Buffer) => `-----BEGIN ${type}-----\n${der.toString('base64').replace(/(.{64})/g, '$1\n')}\n-----END ${type}-----\n`

/** A CSR for CN=`cn` and the organizations `orgs`, signed with a P-256 key (DER-encoded by hand). `badSignature`: one flipped bit. */
export function csrRequest(cn: string, orgs: string[] = [], badSignature = false): string {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  const subject = seq(...orgs.map((o) => set(seq(O, utf8(o)))), set(seq(CN, utf8(cn))))
  const info = seq(der(0x02, Buffer.from([0])), subject, publicKey.export({ type: 'spki', format: 'der' }), der(0xa0, Buffer.alloc(0)))
  const sig = createSign('sha256').update(info).sign(privateKey)
  if (badSignature) sig[sig.length - 1] ^= 1
  const csr = seq(info, ECDSA_SHA256, der(0x03, Buffer.concat([Buffer.from([0]), sig])))
  return Buffer.from(pem('CERTIFICATE REQUEST', csr)).toString('base64')
}

/** A CSR for CN=`cn` signed with an RSA-2048 key (sha256WithRSAEncryption, made by node-forge). */
export function rsaCsrRequest(cn: string): string {
  const keys = forge.pki.rsa.generateKeyPair(2048)
  const csr = forge.pki.createCertificationRequest()
  csr.publicKey = keys.publicKey
  csr.setSubject([{ name: 'commonName', value: cn }])
  csr.sign(keys.privateKey, forge.md.sha256.create())
  return Buffer.from(forge.pki.certificationRequestToPem(csr)).toString('base64')
}
