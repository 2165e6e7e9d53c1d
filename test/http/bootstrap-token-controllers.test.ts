// Black-box: --controllers turns on the bootstrap token controllers: the token cleaner deletes expired token secrets, the bootstrap signer signs cluster-info.
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'
import { eventually, created } from '../helpers/poll.js'
import { verifyDetachedSignature } from '../../src/auth/bootstrap-token.js'

const SECRETS = '/api/v1/namespaces/orch-system/secrets'
const CLUSTER_INFO = '/api/v1/namespaces/orch-public/configmaps/cluster-info'
const iso = (ms: number) => new Date(Date.now() + ms).toISOString().replace(/\.\d+Z$/, 'Z')

function token(id: string, data: Record<string, string>): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: `bootstrap-token-${id}` }, type: 'bootstrap.orch.io/token', stringData: { 'token-id': id, 'token-secret': `${id}${id}0123`.slice(0, 16), ...data } }
}

async function withServer(args: string[], fn: (s: TestServer) => Promise<void>): Promise<void> {
  const s = await startServer({ args })
  try { await fn(s) } finally { await s.stop() }
}

t.test('the token cleaner deletes expired tokens, and later ones when they expire', async (t) => {
  await withServer(['--controllers=*,tokencleaner'], async (s) => {
    await created(await s.request('POST', SECRETS, token('aaaaaa', { expiration: iso(-60_000) })), 'expired token')
    await created(await s.request('POST', SECRETS, token('bbbbbb', { expiration: iso(2_000) })), 'token expiring soon')
    await created(await s.request('POST', SECRETS, token('cccccc', {})), 'token without expiration')
    await created(await s.request('POST', SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'plain' }, stringData: { expiration: iso(-60_000) } }), 'other secret')
    t.ok(await eventually(async () => (await s.request('GET', `${SECRETS}/bootstrap-token-aaaaaa`)).status === 404, 5_000), 'the expired token is deleted')
    t.equal((await s.request('GET', `${SECRETS}/bootstrap-token-bbbbbb`)).status, 200, 'the other is kept while it is valid')
    t.ok(await eventually(async () => (await s.request('GET', `${SECRETS}/bootstrap-token-bbbbbb`)).status === 404, 8_000), 'and deleted once it expired')
    t.equal((await s.request('GET', `${SECRETS}/bootstrap-token-cccccc`)).status, 200, 'a token without expiration stays')
    t.equal((await s.request('GET', `${SECRETS}/plain`)).status, 200, 'other secrets are not looked at')
  })
})

t.test('without --controllers naming it, expired tokens stay (off by default, as upstream)', async (t) => {
  await withServer([], async (s) => {
    await created(await s.request('POST', SECRETS, token('dddddd', { expiration: iso(-60_000) })), 'expired token')
    await new Promise((r) => setTimeout(r, 1500))
    t.equal((await s.request('GET', `${SECRETS}/bootstrap-token-dddddd`)).status, 200)
  })
})

t.test('the bootstrap signer keeps one signature per signing token in cluster-info', async (t) => {
  await withServer(['--controllers=*,bootstrapsigner'], async (s) => {
    const kubeconfig = 'apiVersion: v1\nkind: Config\nclusters: []\n'
    await created(await s.request('POST', '/api/v1/namespaces/orch-public/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cluster-info' }, data: { kubeconfig, other: 'kept' } }), 'cluster-info')
    const signing = token('eeeeee', { 'usage-bootstrap-signing': 'true' })
    await created(await s.request('POST', SECRETS, signing), 'signing token')
    await created(await s.request('POST', SECRETS, token('ffffff', {})), 'token without signing usage')
    await created(await s.request('POST', SECRETS, token('gggggg', { 'usage-bootstrap-signing': 'true', expiration: iso(-60_000) })), 'expired signing token')
    const secret = (signing.stringData as Record<string, string>)['token-secret']
    t.ok(await eventually(async () => (await s.request('GET', CLUSTER_INFO)).json?.data?.['jws-kubeconfig-eeeeee'] !== undefined, 5_000), 'signed')
    const data = (await s.request('GET', CLUSTER_INFO)).json.data
    t.same(Object.keys(data).sort(), ['jws-kubeconfig-eeeeee', 'kubeconfig', 'other'], 'only the valid signing token signs; other keys stay')
    t.ok(verifyDetachedSignature(kubeconfig, data['jws-kubeconfig-eeeeee'], 'eeeeee', secret), 'the signature verifies with the token')
    // A forged signature is replaced; the token's deletion removes its signature.
    const p = await s.request('PATCH', CLUSTER_INFO, { data: { 'jws-kubeconfig-eeeeee': 'forged', 'jws-kubeconfig-zzzzzz': 'stale' } }, { 'content-type': 'application/merge-patch+json' })
    t.equal(p.status, 200, p.text)
    t.ok(await eventually(async () => {
      const d = (await s.request('GET', CLUSTER_INFO)).json.data
      return d['jws-kubeconfig-zzzzzz'] === undefined && d['jws-kubeconfig-eeeeee'] === data['jws-kubeconfig-eeeeee']
    }, 5_000), 'put back as it should be')
    t.equal((await s.request('DELETE', `${SECRETS}/bootstrap-token-eeeeee`)).status, 200)
    t.ok(await eventually(async () => (await s.request('GET', CLUSTER_INFO)).json.data['jws-kubeconfig-eeeeee'] === undefined, 5_000), 'the deleted token no longer signs')
  })
})
