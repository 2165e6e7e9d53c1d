// CertificateApproval, CertificateSigning and CertificateSubjectRestriction: who may approve or sign a
// CertificateSigningRequest is decided by the authorizers on the synthetic `signers` resource (named by the request's
// signerName, or its domain with `/*`), and a kube-apiserver-client request may not ask for the system:masters group.
import { forbidden, type ApiError } from '../machinery/errors.js'
import { parseCertificateRequest } from '../machinery/pem.js'
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

/** The subject's organizations (O) of the PEM CERTIFICATE REQUEST in `request` (its bytes, base64 in JSON). */
export function requestOrganizations(request: unknown): string[] {
  return parseCertificateRequest(Buffer.from(typeof request === 'string' ? request : '', 'base64')).organizations
}
