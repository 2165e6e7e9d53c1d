// Black-box: the PodSecurity admission plugin through the real server (namespace labels, enforce, warn, workloads).
import t from 'tap'
import { startServer, type Reply, type TestServer } from '../helpers/server.js'

const pod = (name: string, spec: Record<string, unknown> = {}, container: Record<string, unknown> = {}) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'i', ...container }], ...spec },
})
const compliant = (name: string) => pod(name, { securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } } },
  { securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } })
const privileged = (name: string) => pod(name, {}, { securityContext: { privileged: true } })

function warnings(r: Reply): string[] {
  const h = r.headers['warning']
  return h === undefined ? [] : Array.isArray(h) ? h : [h]
}

async function namespace(s: TestServer, name: string, labels: Record<string, string>): Promise<void> {
  const r = await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } })
  if (r.status !== 201) throw new Error(r.text)
}

const RESTRICTED_PRIVILEGED = 'violates PodSecurity "restricted:latest": privileged (container "c" must not set securityContext.privileged=true), ' +
  'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ' +
  'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ' +
  'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ' +
  'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")'

t.test('PodSecurity on by default', async (t) => {
  const s = await startServer()
  t.teardown(() => s.stop())

  t.test('enforce=restricted refuses a privileged pod with upstream\'s message and admits a compliant one', async (t) => {
    await namespace(s, 'restricted', { 'pod-security.orch.io/enforce': 'restricted' })
    let r = await s.request('POST', '/api/v1/namespaces/restricted/pods', privileged('priv'))
    t.equal(r.status, 403, r.text)
    t.equal(r.json.reason, 'Forbidden')
    t.equal(r.json.message, `pods "priv" is forbidden: ${RESTRICTED_PRIVILEGED}`)
    t.same(r.json.details, { name: 'priv', kind: 'pods' })
    r = await s.request('POST', '/api/v1/namespaces/restricted/pods', compliant('ok'))
    t.equal(r.status, 201, r.status === 201 ? 'created' : r.text)
    t.same(warnings(r), [], 'no warning for a pod that passes')
    // A spec-unchanged update (labels only) is not checked again; neither is a status write.
    r = await s.request('PATCH', '/api/v1/namespaces/restricted/pods/ok', { metadata: { labels: { a: 'b' } } }, { 'content-type': 'application/merge-patch+json' })
    t.equal(r.status, 200, r.status === 200 ? 'ok' : r.text)
  })

  t.test('enforce=baseline refuses host namespaces and privileged containers, admits what restricted would refuse', async (t) => {
    await namespace(s, 'baseline', { 'pod-security.orch.io/enforce': 'baseline', 'pod-security.orch.io/enforce-version': 'v1.30' })
    let r = await s.request('POST', '/api/v1/namespaces/baseline/pods', pod('hostnet', { hostNetwork: true, hostPID: true }))
    t.equal(r.status, 403, r.text)
    t.equal(r.json.message, 'pods "hostnet" is forbidden: violates PodSecurity "baseline:v1.30": host namespaces (hostNetwork=true, hostPID=true)')
    r = await s.request('POST', '/api/v1/namespaces/baseline/pods', privileged('priv'))
    t.equal(r.status, 403, r.text)
    t.equal(r.json.message, 'pods "priv" is forbidden: violates PodSecurity "baseline:v1.30": privileged (container "c" must not set securityContext.privileged=true)')
    r = await s.request('POST', '/api/v1/namespaces/baseline/pods', pod('plain', {}, { securityContext: { runAsUser: 0 } }))
    t.equal(r.status, 201, r.status === 201 ? 'created' : r.text)
  })

  t.test('warn=restricted admits with a Warning header of upstream\'s text', async (t) => {
    await namespace(s, 'warned', { 'pod-security.orch.io/warn': 'restricted' })
    const r = await s.request('POST', '/api/v1/namespaces/warned/pods', privileged('priv'))
    t.equal(r.status, 201, r.status === 201 ? 'created' : r.text)
    t.same(warnings(r), [`299 - "would violate ${RESTRICTED_PRIVILEGED.slice('violates '.length).replace(/"/g, '\\"')}"`])
  })

  t.test('a Deployment in an enforce=restricted namespace is admitted, with warnings (enforce is for pods only)', async (t) => {
    await namespace(s, 'deploys', { 'pod-security.orch.io/enforce': 'restricted' })
    const d = {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' },
      spec: { selector: { matchLabels: { app: 'd' } }, template: { metadata: { labels: { app: 'd' } }, spec: { hostNetwork: true, containers: [{ name: 'web', image: 'i' }] } } },
    }
    const r = await s.request('POST', '/apis/apps/v1/namespaces/deploys/deployments', d)
    t.equal(r.status, 201, r.status === 201 ? 'created' : r.text)
    const w = warnings(r)
    t.equal(w.length, 1)
    t.match(w[0], /^299 - "would violate PodSecurity \\"restricted:latest\\": host namespaces \(hostNetwork=true\), allowPrivilegeEscalation != false \(container \\"web\\" must set/)
  })

  t.test('a CronJob\'s pod template is warned about', async (t) => {
    await namespace(s, 'cron', { 'pod-security.orch.io/warn': 'baseline', 'pod-security.orch.io/warn-version': 'v1.29' })
    const cj = {
      apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'cj' },
      spec: { schedule: '* * * * *', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', hostIPC: true, containers: [{ name: 'j', image: 'i' }] } } } } },
    }
    const r = await s.request('POST', '/apis/batch/v1/namespaces/cron/cronjobs', cj)
    t.equal(r.status, 201, r.status === 201 ? 'created' : r.text)
    t.same(warnings(r), ['299 - "would violate PodSecurity \\"baseline:v1.29\\": host namespaces (hostIPC=true)"'])
  })

  t.test('the upstream label spelling works too', async (t) => {
    await namespace(s, 'upstream-labels', { 'pod-security.kubernetes.io/enforce': 'baseline' })
    const r = await s.request('POST', '/api/v1/namespaces/upstream-labels/pods', privileged('priv'))
    t.equal(r.status, 403, r.text)
    t.match(r.json.message, /violates PodSecurity "baseline:latest": privileged/)
  })

  t.test('a namespace without labels admits everything, without warnings', async (t) => {
    await namespace(s, 'open', {})
    const r = await s.request('POST', '/api/v1/namespaces/open/pods', pod('all', { hostNetwork: true, hostPID: true, hostIPC: true }, { securityContext: { privileged: true } }))
    t.equal(r.status, 201, r.status === 201 ? 'created' : r.text)
    t.same(warnings(r), [])
  })

  t.test('bad labels are refused on namespace create (422)', async (t) => {
    const r = await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bad', labels: { 'pod-security.orch.io/enforce': 'strict' } } })
    t.equal(r.status, 422, r.text)
    t.match(r.json.message, /metadata\.labels\[pod-security\.orch\.io\/enforce\]: Invalid value: "strict": must be one of privileged, baseline, restricted/)
  })

  t.test('labels take effect at once on a namespace update, which warns of existing pods the new level refuses', async (t) => {
    await namespace(s, 'later', {})
    let r = await s.request('POST', '/api/v1/namespaces/later/pods', privileged('p1'))
    t.equal(r.status, 201, r.status === 201 ? 'created' : r.text)
    r = await s.request('POST', '/api/v1/namespaces/later/pods', privileged('p2'))
    t.equal(r.status, 201, r.status === 201 ? 'created' : r.text)
    r = await s.request('PATCH', '/api/v1/namespaces/later', { metadata: { labels: { 'pod-security.orch.io/enforce': 'baseline' } } }, { 'content-type': 'application/merge-patch+json' })
    t.equal(r.status, 200, r.status === 200 ? 'ok' : r.text)
    t.same(warnings(r), [
      '299 - "existing pods in namespace \\"later\\" violate the new PodSecurity enforce level \\"baseline:latest\\""',
      '299 - "p1 (and 1 other pod): privileged"',
    ])
    r = await s.request('POST', '/api/v1/namespaces/later/pods', privileged('p3'))
    t.equal(r.status, 403, r.text)
    // An existing pod's metadata may still change (not a significant update); an image change is checked.
    r = await s.request('PATCH', '/api/v1/namespaces/later/pods/p1', { metadata: { labels: { x: 'y' } } }, { 'content-type': 'application/merge-patch+json' })
    t.equal(r.status, 200, r.status === 200 ? 'ok' : r.text)
    r = await s.request('PATCH', '/api/v1/namespaces/later/pods/p1', { spec: { containers: [{ name: 'c', image: 'other' }] } }, { 'content-type': 'application/strategic-merge-patch+json' })
    t.equal(r.status, 403, r.text)
    t.match(r.json.message, /^pods "p1" is forbidden: violates PodSecurity "baseline:latest": privileged/)
  })
})

t.test('--disable-admission-plugins=PodSecurity turns it off', async (t) => {
  const s = await startServer({ args: ['--disable-admission-plugins=PodSecurity'] })
  t.teardown(() => s.stop())
  await namespace(s, 'restricted', { 'pod-security.orch.io/enforce': 'restricted', 'pod-security.orch.io/warn': 'restricted' })
  const r = await s.request('POST', '/api/v1/namespaces/restricted/pods', privileged('priv'))
  t.equal(r.status, 201, r.status === 201 ? 'created' : r.text)
  t.same(warnings(r), [])
})
