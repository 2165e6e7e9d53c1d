// Start-up publication of the client-certificate and front-proxy settings in ConfigMap orch-system/extension-apiserver-authentication (upstream's cluster authentication trust), for extension API servers.
import type { Logger } from 'pino'
import type { InternalClient } from '../server/internal-client.js'
import type { CertAuthnData } from '../auth/x509.js'

export const AUTHENTICATION_CONFIGMAP = 'extension-apiserver-authentication'
const PATH = '/api/v1/namespaces/orch-system/configmaps'

/**
 * The keys upstream writes: `client-ca-file` (PEM) when client certificates are on; with a request-header CA,
 * `requestheader-client-ca-file` (PEM) and the header names and allowed names as JSON string arrays.
 */
export function authenticationInfoData(d: CertAuthnData, headers: { username: string[]; uid: string[]; group: string[]; extra: string[]; allowed: string[] }): Record<string, string> {
  const data: Record<string, string> = {}
  if (d.clientCA) data['client-ca-file'] = d.clientCA.pem
  if (d.requestHeader) {
    data['requestheader-username-headers'] = JSON.stringify(headers.username)
    data['requestheader-uid-headers'] = JSON.stringify(headers.uid)
    data['requestheader-group-headers'] = JSON.stringify(headers.group)
    data['requestheader-extra-headers-prefix'] = JSON.stringify(headers.extra)
    data['requestheader-client-ca-file'] = d.requestHeader.pem
    data['requestheader-allowed-names'] = JSON.stringify(headers.allowed)
  }
  return data
}

/** Creates or rewrites the ConfigMap with this server's settings (keys it does not own are kept). A failure fails the start. */
export async function publishAuthenticationInfo(client: InternalClient, data: Record<string, string>, log: Logger): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const cur = await client.request('GET', `${PATH}/${AUTHENTICATION_CONFIGMAP}`)
    if (cur.status === 404) {
      const r = await client.request('POST', PATH, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: AUTHENTICATION_CONFIGMAP, namespace: 'orch-system' }, data })
      if (r.status === 409) continue
      if (r.status !== 201) throw new Error(`creating ConfigMap orch-system/${AUTHENTICATION_CONFIGMAP}: ${r.status} ${r.body.message}`)
      log.info('published the client certificate settings in orch-system/' + AUTHENTICATION_CONFIGMAP)
      return
    }
    if (cur.status !== 200) throw new Error(`reading ConfigMap orch-system/${AUTHENTICATION_CONFIGMAP}: ${cur.status} ${cur.body.message}`)
    const old = (cur.body.data ?? {}) as Record<string, string>
    if (Object.entries(data).every(([k, v]) => old[k] === v)) return
    const r = await client.request('PUT', `${PATH}/${AUTHENTICATION_CONFIGMAP}`, { ...cur.body, data: { ...old, ...data } })
    if (r.status === 409) continue
    if (r.status !== 200) throw new Error(`updating ConfigMap orch-system/${AUTHENTICATION_CONFIGMAP}: ${r.status} ${r.body.message}`)
    return
  }
  throw new Error(`ConfigMap orch-system/${AUTHENTICATION_CONFIGMAP}: conflicts on every attempt`)
}
