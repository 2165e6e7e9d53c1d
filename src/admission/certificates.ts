// CertificateApproval, CertificateSigning and CertificateSubjectRestriction: who may approve or sign a
// CertificateSigningRequest is decided by the authorizers on the synthetic `signers` resource (named by the request's
// signerName, or its domain with `/*`), and a kube-apiserver-client request may not ask for the system:masters group.
import { forbidden, type ApiError } from '../machinery/errors.js'
import type { Obj } from '../registry/define.js'
import type { UserInfo } from '../pipeline/context.js'
import type { Attributes } from '../../actors/authz/messages.js'
import type { AuthzDecision } from '../../actors/authz/client.js'

export const CERTIFICATES_GROUP = 'certificates.orch.io'
const CSRS = { group: CERTIFICATES_GROUP, resource: 'certificatesigningrequests' }
/** upstream's kubernetes.io/kube-apiserver-client, in this brand. */
const KUBE_APISERVER_CLIENT_SIGNER = 'orch.io/kube-apiserver-client'

export type Authorize = (a: Attributes) => AuthzDecision | Promise<AuthzDecision>

function signerAttributes(u: UserInfo, verb: string, name: string): Attributes {
  return {
    user: u.username, groups: u.groups, uid: u.uid, ...(u.extra ? { extra: u.extra } : {}),
    verb, isResourceRequest: true, apiGroup: CERTIFICATES_GROUP, apiVersion: '*', namespace: '', resource: 'signers', subresource: '', name, path: '',
  }
}

/** Whether `u` may `verb` the signer, by its name or by its domain (`example.com/*`); an authorizer's error is a no. */
export async function authorizedForSigner(authorize: Authorize, u: UserInfo, verb: string, signerName: string): Promise<boolean> {
  if ((await authorize(signerAttributes(u, verb, signerName))).decision === 'allow') return true
  const domain = signerName.split('/')[0]
  return (await authorize(signerAttributes(u, verb, `${domain}/*`))).decision === 'allow'
}

const signerOf = (csr: Obj): string => (typeof csr.spec?.signerName === 'string' ? csr.spec.signerName : '')

/** CertificateApproval: an update of certificatesigningrequests/approval needs `approve` on the (stored) request's signer. */
export async function checkApproval(authorize: Authorize, u: UserInfo, name: string, old: Obj): Promise<void> {
  const signer = signerOf(old)
  if (!await authorizedForSigner(authorize, u, 'approve', signer)) {
    throw forbidden(CSRS, name, `user not permitted to approve requests with signerName ${JSON.stringify(signer)}`)
  }
}

/** Whether a status update changes what signing changes: the certificate or the conditions. */
export function signingChanged(o: Obj, old: Obj): boolean {
  return JSON.stringify(o.status?.certificate ?? null) !== JSON.stringify(old.status?.certificate ?? null) ||
    JSON.stringify(o.status?.conditions ?? []) !== JSON.stringify(old.status?.conditions ?? [])
}

/** CertificateSigning: a status update that changes the certificate or the conditions needs `sign` on the signer. */
export async function checkSigning(authorize: Authorize, u: UserInfo, name: string, old: Obj): Promise<void> {
  const signer = signerOf(old)
  if (!await authorizedForSigner(authorize, u, 'sign', signer)) {
    throw forbidden(CSRS, name, `user not permitted to sign requests with signerName ${JSON.stringify(signer)}`)
  }
}

/** CertificateSubjectRestriction: a new kube-apiserver-client request may not ask for the system:masters group. */
export function checkSubject(name: string, csr: Obj): ApiError | undefined {
  if (signerOf(csr) !== KUBE_APISERVER_CLIENT_SIGNER) return undefined
  let orgs: string[]
  try {
    orgs = requestOrganizations(csr.spec?.request)
  } catch (err) {
    return forbidden(CSRS, name, `failed to parse CSR: ${(err as Error).message}`)
  }
  if (orgs.includes('system:masters')) return forbidden(CSRS, name, `use of ${KUBE_APISERVER_CLIENT_SIGNER} signer with system:masters group is not allowed`)
  return undefined
}

// ---- the subject of a PKCS#10 request ----

/** One DER element: its tag, and where its contents start and end. */
interface Der { tag: number; start: number; end: number }

function readDer(b: Buffer, at: number, limit: number): Der {
  if (at + 2 > limit) throw new Error('x509: malformed certificate request')
  const tag = b[at]
  let len = b[at + 1]
  let start = at + 2
  if (len & 0x80) {
    const n = len & 0x7f
    if (n === 0 || n > 4 || start + n > limit) throw new Error('x509: malformed certificate request')
    len = 0
    for (let i = 0; i < n; i++) len = len * 256 + b[start + i]
    start += n
  }
  const end = start + len
  if (end > limit) throw new Error('x509: malformed certificate request')
  return { tag, start, end }
}

const SEQUENCE = 0x30
const SET = 0x31
const INTEGER = 0x02
const OID = 0x06
/** 2.5.4.10, organizationName. */
const ORGANIZATION = Buffer.from([0x55, 0x04, 0x0a])

/** The subject's organizations (O) of the PEM CERTIFICATE REQUEST in `request` (its bytes, base64 in JSON). */
export function requestOrganizations(request: unknown): string[] {
  const pem = Buffer.from(typeof request === 'string' ? request : '', 'base64').toString('latin1')
  const m = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/.exec(pem)
  if (m === null || m[1] !== 'CERTIFICATE REQUEST') throw new Error('PEM block type must be CERTIFICATE REQUEST')
  const der = Buffer.from(m[2].replace(/[^A-Za-z0-9+/=]/g, ''), 'base64')
  const outer = readDer(der, 0, der.length)
  if (outer.tag !== SEQUENCE) throw new Error('x509: malformed certificate request')
  const info = readDer(der, outer.start, outer.end)
  if (info.tag !== SEQUENCE) throw new Error('x509: malformed certificate request')
  const version = readDer(der, info.start, info.end)
  if (version.tag !== INTEGER) throw new Error('x509: malformed certificate request')
  const subject = readDer(der, version.end, info.end)
  if (subject.tag !== SEQUENCE) throw new Error('x509: malformed certificate request')
  const orgs: string[] = []
  for (let at = subject.start; at < subject.end;) {
    const rdn = readDer(der, at, subject.end)
    if (rdn.tag !== SET) throw new Error('x509: malformed certificate request')
    for (let a = rdn.start; a < rdn.end;) {
      const atv = readDer(der, a, rdn.end)
      const type = readDer(der, atv.start, atv.end)
      if (type.tag !== OID) throw new Error('x509: malformed certificate request')
      if (der.subarray(type.start, type.end).equals(ORGANIZATION)) {
        const v = readDer(der, type.end, atv.end)
        orgs.push(der.toString(v.tag === 0x0c ? 'utf8' : 'latin1', v.start, v.end))
      }
      a = atv.end
    }
    at = rdn.end
  }
  return orgs
}
