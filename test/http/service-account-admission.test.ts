// Black-box: the ServiceAccount admission plugin through the real server, with kubectl 1.32 and @kubernetes/client-node:
// the default account, the projected token volume and its mounts, automount, image pull secrets, missing accounts,
// mirror pods, mountable secrets, ephemeral containers and updates.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { KubeConfig, CoreV1Api } from '@kubernetes/client-node'
import { runKubectl } from '../helpers/kubectl.js'
import { startServer, type TestServer } from '../helpers/server.js'

const work = mkdtempSync(join(tmpdir(), 'orch-sa-admission-'))
const home = mkdtempSync(join(work, 'home-'))
let s: TestServer
t.before(async () => { s = await startServer({ secure: true }) })
t.teardown(async () => {
  await s?.stop()
  rmSync(work, { recursive: true, force: true })
})

const MOUNT_PATH = '/var/run/secrets/orch.io/serviceaccount'
const VOLUME_NAME = /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/
/** The projected source upstream's TokenVolumeSource builds, with this brand's root CA ConfigMap. */
const TOKEN_SOURCE = {
  sources: [
    { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
    { configMap: { name: 'orch-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
    { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
  ],
  defaultMode: 420,
}
const MERGE = { 'content-type': 'application/merge-patch+json' }

const pod = (name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, ...metadata }, spec: { containers: [{ name: 'c', image: 'busybox:1' }], ...spec },
})
const pods = (ns: string) => `/api/v1/namespaces/${ns}/pods`

async function namespace(name: string): Promise<void> {
  const r = await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } })
  if (r.status !== 201) throw new Error(r.text)
}

async function account(ns: string, body: Record<string, unknown>): Promise<void> {
  const r = await s.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', ...body })
  if (r.status !== 201) throw new Error(r.text)
}

/** The whole Status of a refusal by the plugin. */
function forbiddenStatus(name: string, message: string) {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `pods "${name}" is forbidden: ${message}`, reason: 'Forbidden', details: { name, kind: 'pods' }, code: 403 }
}

t.test('kubectl: a pod in a namespace made just before gets the default account and the token volume in every container', async (t) => {
  // The pod is created right after its namespace, before the controller can have made the default account: as
  // upstream, admission waits for it.
  let r = await runKubectl(s.kubeconfig, home, ['create', 'namespace', 'sa-fresh'])
  t.equal(r.code, 0, r.stderr)
  const manifest = JSON.stringify({
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'sa-fresh' },
    spec: {
      initContainers: [{ name: 'init', image: 'busybox:1' }],
      containers: [
        { name: 'app', image: 'nginx:1' },
        // Something mounted at the path already: that container is left alone.
        { name: 'own', image: 'nginx:1', volumeMounts: [{ name: 'mine', mountPath: MOUNT_PATH }] },
      ],
      volumes: [{ name: 'mine', emptyDir: {} }],
    },
  })
  r = await runKubectl(s.kubeconfig, home, ['apply', '-f', '-'], { stdin: manifest })
  t.equal(r.code, 0, r.stderr)
  t.equal(r.stdout.trim(), 'pod/web created')
  r = await runKubectl(s.kubeconfig, home, ['get', 'pod', 'web', '-n', 'sa-fresh', '-o', 'json', '--show-managed-fields'])
  t.equal(r.code, 0, r.stderr)
  const p = JSON.parse(r.stdout)
  t.equal(p.spec.serviceAccountName, 'default')
  t.equal(p.spec.serviceAccount, 'default', 'the deprecated alias mirrors it')
  t.equal(p.spec.volumes.length, 2)
  t.same(p.spec.volumes[0], { name: 'mine', emptyDir: {} })
  const vol = p.spec.volumes[1]
  t.match(vol.name, VOLUME_NAME)
  t.strictSame(vol, { name: vol.name, projected: TOKEN_SOURCE })
  const mount = { name: vol.name, readOnly: true, mountPath: MOUNT_PATH }
  t.strictSame(p.spec.initContainers[0].volumeMounts, [mount])
  t.strictSame(p.spec.containers[0].volumeMounts, [mount])
  t.strictSame(p.spec.containers[1].volumeMounts, [{ name: 'mine', mountPath: MOUNT_PATH }], 'a container with its own mount there is untouched')
  t.notOk(p.spec.automountServiceAccountToken, 'automount is not written into the pod')
  t.notOk(p.spec.imagePullSecrets, 'no pull secrets when the account has none')
  // The fields the plugin set belong to no manager (kubectl's client-side apply owns only what it sent).
  t.same(p.metadata.managedFields.map((m: any) => m.manager), ['kubectl-client-side-apply'])
  const owned = JSON.stringify(p.metadata.managedFields[0].fieldsV1)
  t.equal(owned.includes('f:serviceAccountName'), false, 'serviceAccountName owned by nobody')
  t.equal(owned.includes('kube-api-access'), false, 'the token volume owned by nobody')
  const fields = p.metadata.managedFields[0].fieldsV1['f:spec']
  t.notOk(fields['f:containers']['k:{"name":"app"}']['f:volumeMounts'], 'the mounts it added owned by nobody')
  t.notOk(fields['f:initContainers']['k:{"name":"init"}']['f:volumeMounts'])
})

t.test('a token volume already in the pod is reused; a pod whose containers all mount the path gets no volume', async (t) => {
  await namespace('sa-reuse')
  let r = await s.request('POST', pods('sa-reuse'), pod('reuse', {
    volumes: [{ name: 'kube-api-access-abcde', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } }],
  }))
  t.equal(r.status, 201, r.text)
  t.equal(r.json.spec.volumes.length, 1)
  t.equal(r.json.spec.volumes[0].name, 'kube-api-access-abcde')
  t.same(r.json.spec.containers[0].volumeMounts, [{ name: 'kube-api-access-abcde', readOnly: true, mountPath: MOUNT_PATH }])
  r = await s.request('POST', pods('sa-reuse'), pod('all-mounted', {
    containers: [{ name: 'c', image: 'i', volumeMounts: [{ name: 'x', mountPath: MOUNT_PATH }] }],
    volumes: [{ name: 'x', emptyDir: {} }],
  }))
  t.equal(r.status, 201, r.text)
  t.same(r.json.spec.volumes, [{ name: 'x', emptyDir: {} }])
})

t.test('automountServiceAccountToken: the pod wins, then the account', async (t) => {
  await namespace('sa-auto')
  await account('sa-auto', { metadata: { name: 'quiet' }, automountServiceAccountToken: false })
  const cases: Array<[string, Record<string, unknown>, boolean]> = [
    ['pod-off', { automountServiceAccountToken: false }, false],
    ['sa-off', { serviceAccountName: 'quiet' }, false],
    ['pod-on-sa-off', { serviceAccountName: 'quiet', automountServiceAccountToken: true }, true],
    ['both-default', {}, true],
  ]
  for (const [name, spec, mounted] of cases) {
    const r = await s.request('POST', pods('sa-auto'), pod(name, spec))
    t.equal(r.status, 201, r.text)
    const vols = (r.json.spec.volumes ?? []).filter((v: any) => VOLUME_NAME.test(v.name))
    t.equal(vols.length, mounted ? 1 : 0, `${name}: volume`)
    t.equal((r.json.spec.containers[0].volumeMounts ?? []).length, mounted ? 1 : 0, `${name}: mount`)
  }
})

t.test("the account's image pull secrets go to a pod that names none", async (t) => {
  await namespace('sa-pull')
  await account('sa-pull', { metadata: { name: 'puller' }, imagePullSecrets: [{ name: 'reg-a' }, { name: 'reg-b' }] })
  let r = await s.request('POST', pods('sa-pull'), pod('gets', { serviceAccountName: 'puller' }))
  t.equal(r.status, 201, r.text)
  t.same(r.json.spec.imagePullSecrets, [{ name: 'reg-a' }, { name: 'reg-b' }])
  r = await s.request('POST', pods('sa-pull'), pod('keeps', { serviceAccountName: 'puller', imagePullSecrets: [{ name: 'own' }] }))
  t.equal(r.status, 201, r.text)
  t.same(r.json.spec.imagePullSecrets, [{ name: 'own' }])
})

t.test('a pod whose account does not exist is refused with upstream\'s text (kubectl shows it)', async (t) => {
  await namespace('sa-missing')
  let r = await s.request('POST', pods('sa-missing'), pod('lost', { serviceAccountName: 'nope' }))
  t.equal(r.status, 403)
  t.strictSame(r.json, forbiddenStatus('lost', 'error looking up service account sa-missing/nope: serviceaccount "nope" not found'))
  // A generated name is not made yet when admission refuses: the generateName is named, as upstream's events show.
  r = await s.request('POST', pods('sa-missing'), pod('', { serviceAccountName: 'nope' }, { name: undefined, generateName: 'web-7c5d-' }))
  t.equal(r.status, 403)
  t.strictSame(r.json, forbiddenStatus('web-7c5d-', 'error looking up service account sa-missing/nope: serviceaccount "nope" not found'))
  // Through the deprecated alias too.
  r = await s.request('POST', pods('sa-missing'), pod('alias', { serviceAccount: 'gone' }))
  t.equal(r.status, 403)
  t.equal(r.json.message, 'pods "alias" is forbidden: error looking up service account sa-missing/gone: serviceaccount "gone" not found')
  t.equal((await s.request('GET', `${pods('sa-missing')}/lost`)).status, 404, 'nothing stored')
  // Dry run refuses the same way.
  r = await s.request('POST', `${pods('sa-missing')}?dryRun=All`, pod('dry', { serviceAccountName: 'nope' }))
  t.equal(r.status, 403)
  const k = await runKubectl(s.kubeconfig, home, ['run', 'kc', '-n', 'sa-missing', '--image=nginx:1', '--overrides', JSON.stringify({ spec: { serviceAccountName: 'nope' } })])
  t.not(k.code, 0)
  t.match(k.stderr, 'Error from server (Forbidden): pods "kc" is forbidden: error looking up service account sa-missing/nope: serviceaccount "nope" not found')
  // Once the account exists, the same pod is admitted at once.
  await account('sa-missing', { metadata: { name: 'nope' } })
  r = await s.request('POST', pods('sa-missing'), pod('lost', { serviceAccountName: 'nope' }))
  t.equal(r.status, 201, r.text)
  t.equal(r.json.spec.serviceAccountName, 'nope')
})

t.test('a deleted default account is waited for (the controller makes it again), a deleted other one is not', async (t) => {
  await namespace('sa-deleted')
  await account('sa-deleted', { metadata: { name: 'other' } })
  let r = await s.request('DELETE', '/api/v1/namespaces/sa-deleted/serviceaccounts/other')
  t.equal(r.status, 200, r.text)
  r = await s.request('POST', pods('sa-deleted'), pod('p1', { serviceAccountName: 'other' }))
  t.equal(r.status, 403)
  // Wait until the controller made the default account, then delete it: the next pod waits for it again.
  for (let i = 0; i < 100 && (await s.request('GET', '/api/v1/namespaces/sa-deleted/serviceaccounts/default')).status !== 200; i++) await new Promise((res) => setTimeout(res, 50))
  r = await s.request('DELETE', '/api/v1/namespaces/sa-deleted/serviceaccounts/default')
  t.equal(r.status, 200, r.text)
  r = await s.request('POST', pods('sa-deleted'), pod('p2'))
  t.equal(r.status, 201, r.text)
  t.equal(r.json.spec.serviceAccountName, 'default')
})

t.test('mirror pods: no account, no secrets, no token projection; otherwise left as they are', async (t) => {
  await namespace('sa-mirror')
  const mirror = { annotations: { 'orch.io/config.mirror': 'hash' } }
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['m-sa', { serviceAccountName: 'default' }, 'a mirror pod may not reference service accounts'],
    ['m-vol', { volumes: [{ name: 's', secret: { secretName: 'top' } }] }, 'a mirror pod may not reference secrets'],
    ['m-env', { containers: [{ name: 'c', image: 'i', env: [{ name: 'E', valueFrom: { secretKeyRef: { name: 'top', key: 'k' } } }] }] }, 'a mirror pod may not reference secrets'],
    ['m-pull', { imagePullSecrets: [{ name: 'reg' }] }, 'a mirror pod may not reference secrets'],
    ['m-proj', { volumes: [{ name: 'tok', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } }] }, 'a mirror pod may not use ServiceAccountToken volume projections'],
  ]
  for (const [name, spec, message] of cases) {
    const r = await s.request('POST', pods('sa-mirror'), pod(name, spec, mirror))
    t.equal(r.status, 403, `${name}: ${r.text}`)
    t.strictSame(r.json, forbiddenStatus(name, message), name)
  }
  const r = await s.request('POST', pods('sa-mirror'), pod('m-ok', {}, mirror))
  t.equal(r.status, 201, r.text)
  t.notOk(r.json.spec.serviceAccountName, 'no account given to a mirror pod')
  t.notOk(r.json.spec.volumes, 'no token volume')
  t.notOk(r.json.spec.containers[0].volumeMounts)
})

t.test('an account that enforces mountable secrets limits the secrets its pods use', async (t) => {
  await namespace('sa-enforce')
  await account('sa-enforce', {
    metadata: { name: 'strict', annotations: { 'orch.io/enforce-mountable-secrets': 'true' } },
    secrets: [{ name: 'ok' }], imagePullSecrets: [{ name: 'reg' }],
  })
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['e-vol', { volumes: [{ name: 'v', secret: { secretName: 'nope' } }] }, 'volume with secret.secretName="nope" is not allowed because service account strict does not reference that secret'],
    ['e-env', { containers: [{ name: 'app', image: 'i', env: [{ name: 'PW', valueFrom: { secretKeyRef: { name: 'nope', key: 'k' } } }] }] }, 'container app with envVar PW referencing secret.secretName="nope" is not allowed because service account strict does not reference that secret'],
    ['e-init', { initContainers: [{ name: 'setup', image: 'i', envFrom: [{ secretRef: { name: 'nope' } }] }] }, 'init container setup with envFrom referencing secret.secretName="nope" is not allowed because service account strict does not reference that secret'],
    ['e-pull', { imagePullSecrets: [{ name: 'other' }] }, 'imagePullSecrets[0].name="other" is not allowed because service account strict does not reference that imagePullSecret'],
  ]
  for (const [name, spec, message] of cases) {
    const r = await s.request('POST', pods('sa-enforce'), pod(name, { serviceAccountName: 'strict', ...spec }))
    t.equal(r.status, 403, `${name}: ${r.text}`)
    t.strictSame(r.json, forbiddenStatus(name, message), name)
  }
  const r = await s.request('POST', pods('sa-enforce'), pod('e-ok', { serviceAccountName: 'strict', volumes: [{ name: 'v', secret: { secretName: 'ok' } }] }))
  t.equal(r.status, 201, r.text)
  t.same(r.json.spec.imagePullSecrets, [{ name: 'reg' }])
})

t.test('ephemeral containers: the account must exist, and enforces its mountable secrets', async (t) => {
  await namespace('sa-eph')
  await account('sa-eph', { metadata: { name: 'strict', annotations: { 'orch.io/enforce-mountable-secrets': 'true' } }, secrets: [{ name: 'ok' }] })
  let r = await s.request('POST', pods('sa-eph'), pod('target', { serviceAccountName: 'strict' }))
  t.equal(r.status, 201, r.text)
  const eph = (secret: string) => ({ spec: { ephemeralContainers: [{ name: 'debug', image: 'busybox:1', envFrom: [{ secretRef: { name: secret } }] }] } })
  r = await s.request('PATCH', `${pods('sa-eph')}/target/ephemeralcontainers`, eph('nope'), MERGE)
  t.equal(r.status, 403, r.text)
  t.strictSame(r.json, forbiddenStatus('target', 'ephemeral container debug with envFrom referencing secret.secretName="nope" is not allowed because service account strict does not reference that secret'))
  r = await s.request('PATCH', `${pods('sa-eph')}/target/ephemeralcontainers`, eph('ok'), MERGE)
  t.equal(r.status, 200, r.text)
  t.equal(r.json.spec.ephemeralContainers[0].name, 'debug')
  t.notOk(r.json.spec.ephemeralContainers[0].volumeMounts, 'ephemeral containers get no token mount')
  // The account deleted: adding an ephemeral container is refused.
  r = await s.request('DELETE', '/api/v1/namespaces/sa-eph/serviceaccounts/strict')
  t.equal(r.status, 200, r.text)
  r = await s.request('PATCH', `${pods('sa-eph')}/target/ephemeralcontainers`, { spec: { ephemeralContainers: [{ name: 'debug', image: 'busybox:1', envFrom: [{ secretRef: { name: 'ok' } }] }, { name: 'd2', image: 'busybox:1' }] } }, MERGE)
  t.equal(r.status, 403, r.text)
  t.strictSame(r.json, forbiddenStatus('target', 'error looking up service account sa-eph/strict: serviceaccount "strict" not found'))
})

t.test("an update may not change the pod's account (pod validation), and is not admitted again", async (t) => {
  await namespace('sa-update')
  await account('sa-update', { metadata: { name: 'other' } })
  let r = await s.request('POST', pods('sa-update'), pod('u'))
  t.equal(r.status, 201, r.text)
  r = await s.request('PATCH', `${pods('sa-update')}/u`, { spec: { serviceAccountName: 'other' } }, MERGE)
  t.equal(r.status, 422, r.text)
  t.equal(r.json.reason, 'Invalid')
  t.equal(r.json.details.causes[0].field, 'spec')
  t.match(r.json.message, 'pod updates may not change fields other than')
  // An allowed update keeps the volume and mounts, and adds no second ones.
  r = await s.request('PATCH', `${pods('sa-update')}/u`, { metadata: { labels: { a: 'b' } } }, MERGE)
  t.equal(r.status, 200, r.text)
  t.equal(r.json.spec.volumes.length, 1)
  t.equal(r.json.spec.containers[0].volumeMounts.length, 1)
})

t.test('@kubernetes/client-node reads the pod typed: the projected sources decode field by field', async (t) => {
  await namespace('sa-client')
  const kc = new KubeConfig()
  kc.loadFromOptions({
    clusters: [{ name: 'orch', server: s.url, skipTLSVerify: true }],
    users: [{ name: 'admin', token: s.adminToken }],
    contexts: [{ name: 'orch', cluster: 'orch', user: 'admin' }],
    currentContext: 'orch',
  })
  const api = kc.makeApiClient(CoreV1Api)
  const created = await api.createNamespacedPod({ namespace: 'sa-client', body: { metadata: { name: 'typed' }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] } } })
  t.equal(created.spec?.serviceAccountName, 'default')
  const got = await api.readNamespacedPod({ namespace: 'sa-client', name: 'typed' })
  const vol = got.spec!.volumes![0]
  t.match(vol.name, VOLUME_NAME)
  const proj = vol.projected!
  t.equal(proj.defaultMode, 420)
  t.equal(proj.sources!.length, 3)
  t.equal(proj.sources![0].serviceAccountToken!.expirationSeconds, 3607)
  t.equal(proj.sources![0].serviceAccountToken!.path, 'token')
  t.equal(proj.sources![1].configMap!.name, 'orch-root-ca.crt')
  t.same(proj.sources![1].configMap!.items, [{ key: 'ca.crt', path: 'ca.crt' }])
  t.equal(proj.sources![2].downwardAPI!.items![0].path, 'namespace')
  t.same(proj.sources![2].downwardAPI!.items![0].fieldRef, { apiVersion: 'v1', fieldPath: 'metadata.namespace' })
  const mount = got.spec!.containers[0].volumeMounts![0]
  t.same({ name: mount.name, readOnly: mount.readOnly, mountPath: mount.mountPath }, { name: vol.name, readOnly: true, mountPath: MOUNT_PATH })
})
