// PEM blocks and the two X.509 shapes a CertificateSigningRequest carries: its PKCS#10 request (parsed, its signature
// checked) and the issued certificate chain. Go's encoding/pem is the model: a block is found anywhere in the text,
// text around blocks is ignored, and a block that does not decode is skipped.
import { X509Certificate, createPublicKey, verify } from 'node:crypto'

export interface PemBlock {
  type: string
  /** Whether the block carries RFC 1421 headers (`Name: value` lines before a blank line). */
  headers: boolean
  bytes: Buffer
}

const BLOCK = /-----BEGIN ([^\r\n-]*)-----\r?\n([\s\S]*?)-----END ([^\r\n-]*)-----/g
const BASE64_BODY = /^[A-Za-z0-9+/=\s]*$/

/** The well-formed blocks of `text`, in order. */
export function pemBlocks(text: string): PemBlock[] {
  const out: PemBlock[] = []
  BLOCK.lastIndex = 0
  for (let m = BLOCK.exec(text); m !== null; m = BLOCK.exec(text)) {
    if (m[1] !== m[3]) continue
    let body = m[2]
    let headers = false
    const firstLine = body.slice(0, body.indexOf('\n') + 1)
    if (firstLine.includes(':')) {
      // Headers run to the first blank line.
      const blank = /\r?\n\r?\n/.exec(body)
      if (blank === null) continue
      headers = true
      body = body.slice(blank.index + blank[0].length)
    }
    if (!BASE64_BODY.test(body)) continue
    out.push({ type: m[1], headers, bytes: Buffer.from(body.replace(/\s/g, ''), 'base64') })
  }
  return out
}

// ---- DER

/** One DER element: its tag, where it starts, where its contents start, and where it ends. */
interface Der { tag: number; at: number; start: number; end: number }

function readDer(b: Buffer, at: number, limit: number, what: string): Der {
  if (at + 2 > limit) throw new Error(`x509: malformed ${what}`)
  const tag = b[at]
  let len = b[at + 1]
  let start = at + 2
  if (len & 0x80) {
    const n = len & 0x7f
    if (n === 0 || n > 4 || start + n > limit) throw new Error(`x509: malformed ${what}`)
    len = 0
    for (let i = 0; i < n; i++) len = len * 256 + b[start + i]
    start += n
  }
  const end = start + len
  if (end > limit) throw new Error(`x509: malformed ${what}`)
  return { tag, at, start, end }
}

/** The element at `at` (within `limit`), which must carry `tag`. */
function readTagged(b: Buffer, at: number, limit: number, tag: number, what: string): Der {
  const d = readDer(b, at, limit, what)
  if (d.tag !== tag) throw new Error(`x509: malformed ${what}`)
  return d
}

const SEQUENCE = 0x30
const SET = 0x31
const INTEGER = 0x02
const BIT_STRING = 0x03
const OID = 0x06
/** 2.5.4.10, organizationName. */
const ORGANIZATION = Buffer.from([0x55, 0x04, 0x0a])

/** Signature algorithms by OID (dotted): the digest crypto.verify takes (null: the key's own, as Ed25519). */
const SIGNATURE_ALGORITHMS: Record<string, string | null> = {
  '1.2.840.113549.1.1.5': 'sha1',
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
  '1.2.840.10045.4.1': 'sha1',
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
  '1.3.101.112': null,
}

function oidText(b: Buffer): string {
  const parts: number[] = [Math.floor(b[0] / 40), b[0] % 40]
  let v = 0
  for (let i = 1; i < b.length; i++) {
    v = v * 128 + (b[i] & 0x7f)
    if ((b[i] & 0x80) === 0) { parts.push(v); v = 0 }
  }
  return parts.join('.')
}

/** A PKCS#10 request: its subject's organizations, and whether its signature verifies with its own key. */
export interface CertificateRequest {
  organizations: string[]
  checkSignature(): void
}

/**
 * The first PEM block of `pem` as a PKCS#10 certificate request (upstream's ParseCSR): an Error with upstream's text
 * when the block is missing, of another type, or malformed.
 */
export function parseCertificateRequest(pem: Buffer): CertificateRequest {
  const block = pemBlocks(pem.toString('latin1'))[0]
  if (block === undefined || block.type !== 'CERTIFICATE REQUEST') throw new Error('PEM block type must be CERTIFICATE REQUEST')
  const der = block.bytes
  const what = 'certificate request'
  const outer = readTagged(der, 0, der.length, SEQUENCE, what)
  if (outer.end !== der.length) throw new Error(`x509: malformed ${what}`)
  const info = readTagged(der, outer.start, outer.end, SEQUENCE, what)
  const version = readTagged(der, info.start, info.end, INTEGER, what)
  const subject = readTagged(der, version.end, info.end, SEQUENCE, what)
  const spki = readTagged(der, subject.end, info.end, SEQUENCE, what)
  const algorithm = readTagged(der, info.end, outer.end, SEQUENCE, what)
  const algorithmOid = readTagged(der, algorithm.start, algorithm.end, OID, what)
  const signature = readTagged(der, algorithm.end, outer.end, BIT_STRING, what)
  if (signature.end - signature.start < 1) throw new Error(`x509: malformed ${what}`)

  const organizations: string[] = []
  for (let at = subject.start; at < subject.end;) {
    const rdn = readTagged(der, at, subject.end, SET, what)
    for (let a = rdn.start; a < rdn.end;) {
      const atv = readDer(der, a, rdn.end, what)
      const type = readTagged(der, atv.start, atv.end, OID, what)
      if (der.subarray(type.start, type.end).equals(ORGANIZATION)) {
        const v = readDer(der, type.end, atv.end, what)
        organizations.push(der.toString(v.tag === 0x0c ? 'utf8' : 'latin1', v.start, v.end))
      }
      a = atv.end
    }
    at = rdn.end
  }

  let key: ReturnType<typeof createPublicKey>
  try {
    key = createPublicKey({ key: der.subarray(spki.at, spki.end), format: 'der', type: 'spki' })
  } catch {
    throw new Error('x509: unsupported public key')
  }
  const oid = oidText(der.subarray(algorithmOid.start, algorithmOid.end))
  return {
    organizations,
    checkSignature(): void {
      if (!(oid in SIGNATURE_ALGORITHMS)) throw new Error('x509: cannot verify signature: algorithm unimplemented')
      // The BIT STRING's first byte counts its unused bits; signatures are whole bytes.
      const sig = der.subarray(signature.start + 1, signature.end)
      let ok = false
      try { ok = verify(SIGNATURE_ALGORITHMS[oid], der.subarray(info.at, info.end), key, sig) } catch { ok = false }
      if (!ok) throw new Error(key.asymmetricKeyType === 'rsa' ? 'crypto/rsa: verification error' : `x509: ${(key.asymmetricKeyType ?? '').toUpperCase()} verification failure`)
    },
  }
}

/**
 * Upstream's check of status.certificate: one or more CERTIFICATE blocks without headers, each an X.509 certificate;
 * text around them is allowed. Undefined when valid (or empty), else the reason.
 */
export function certificateChainError(pem: Buffer): string | undefined {
  if (pem.length === 0) return undefined
  let blocks = 0
  for (const b of pemBlocks(pem.toString('latin1'))) {
    if (b.type !== 'CERTIFICATE') return `only CERTIFICATE PEM blocks are allowed, found ${JSON.stringify(b.type)}`
    if (b.headers) return 'no PEM block headers are permitted'
    blocks++
    try { new X509Certificate(b.bytes) } catch { return 'x509: malformed certificate' }
  }
  if (blocks === 0) return 'must contain at least one CERTIFICATE PEM block'
  return undefined
}
