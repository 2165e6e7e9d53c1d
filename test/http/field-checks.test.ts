// Black-box: field checks a typo in a manifest meets (upstream decoding and core/apps validation): quantities and
// int32 ranges that do not decode (400), enumerations, ports, replicas and resource requests (422).
import t, { type Test as Tap } from 'tap'
import { startServer, type Reply, type TestServer } from '../helpers/server.js'

let s: TestServer
const NS = '/api/v1/namespaces/default'
const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments'
const MERGE = { 'content-type': 'application/merge-patch+json' }

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

const pod = (name: string, container: Record<string, unknown>, spec: Record<string, unknown> = {}) =>
  ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'i', ...container }], ...spec } })
const deploy = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
  spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'i' }] } }, ...spec },
})
const causes = (r: Reply): string[] => (r.json?.details?.causes ?? []).map((c: any) => `${c.field}: ${c.message}`)
/** Each wanted `field: message` is among the answer's causes. */
function hasCauses(t: Tap, r: Reply, wants: string[]): void {
  const got = causes(r)
  for (const want of wants) t.ok(got.includes(want), want)
}

t.test('a quantity that does not parse and an int32 out of range are 400, as upstream fails to decode them', async (t) => {
  let r = await s.request('POST', `${NS}/pods`, pod('q1', { resources: { limits: { cpu: 'lots' } } }))
  t.equal(r.status, 400, r.text)
  t.equal(r.json?.message, "Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
  r = await s.request('POST', DEPLOYS, deploy('big', { replicas: 99999999999 }))
  t.equal(r.status, 400, r.text)
  t.match(r.json?.message, /^Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number 99999999999 into Go struct field/)
  r = await s.request('POST', `${NS}/pods`, pod('q2', { resources: { limits: { cpu: '500m', memory: 1.5 }, requests: { cpu: 0.25 } } }))
  t.equal(r.status, 201, `quantities as strings and numbers decode: ${r.text}`)
})

t.test('enumerations, ports and resource requests are 422 with upstream causes', async (t) => {
  let r = await s.request('POST', `${NS}/pods`, pod('e1', { imagePullPolicy: 'Sometimes', ports: [{ containerPort: 70000, protocol: 'QUIC' }], resources: { requests: { memory: '-5Mi', cpu: '2' }, limits: { cpu: '1' } } }, { restartPolicy: 'Sometimes' }))
  t.equal(r.status, 422, r.text)
  hasCauses(t, r, [
    'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"',
    'spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
    'spec.containers[0].ports[0].protocol: Unsupported value: "QUIC": supported values: "SCTP", "TCP", "UDP"',
    'spec.containers[0].resources.requests[memory]: Invalid value: "-5Mi": must be greater than or equal to 0',
    'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1',
    'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
  ])

  r = await s.request('POST', `${NS}/services`, { apiVersion: 'v1', kind: 'Service', metadata: { name: 's1' }, spec: { type: 'Bogus', ports: [{ port: 80 }] } })
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.message, 'Service "s1" is invalid: spec.type: Unsupported value: "Bogus": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"')

  r = await s.request('POST', DEPLOYS, deploy('d1', { replicas: -3, strategy: { type: 'Nope' } }))
  t.equal(r.status, 422, r.text)
  t.ok(causes(r).includes('spec.replicas: Invalid value: -3: must be greater than or equal to 0'), causes(r).join('\n'))
  t.ok(causes(r).includes('spec.strategy.type: Unsupported value: "Nope": supported values: "Recreate", "RollingUpdate"'), causes(r).join('\n'))
})

t.test('updates are checked too, and a refused one changes nothing', async (t) => {
  let r = await s.request('POST', DEPLOYS, deploy('d2', { replicas: 2 }))
  t.equal(r.status, 201, r.text)
  r = await s.request('PATCH', `${DEPLOYS}/d2`, { spec: { replicas: -1 } }, MERGE)
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.message, 'Deployment.apps "d2" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0')
  r = await s.request('PATCH', `${DEPLOYS}/d2`, { spec: { strategy: { type: 'Recreate' } } }, MERGE)
  t.equal(r.status, 422, 'Recreate with the rollingUpdate still there')
  t.equal(r.json?.message, "Deployment.apps \"d2\" is invalid: spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'")
  r = await s.request('PATCH', `${DEPLOYS}/d2`, { spec: { strategy: { type: 'Recreate', rollingUpdate: null } } }, MERGE)
  t.equal(r.status, 200, r.text)
  t.equal((await s.request('GET', `${DEPLOYS}/d2`)).json.spec.replicas, 2)
})

t.test('volumes: exactly one source each, unique names', async (t) => {
  let r = await s.request('POST', `${NS}/pods`, pod('v1', {}, { volumes: [{ name: 'a' }, { name: 'b', emptyDir: {}, hostPath: { path: '/x' }, secret: { secretName: 's' } }, { name: 'b', emptyDir: {} }, { name: 'c', emptyDir: {} }, { name: 'c', emptyDir: {} }] }))
  t.equal(r.status, 422, r.text)
  hasCauses(t, r, [
    'spec.volumes[0]: Required value: must specify a volume type',
    'spec.volumes[1].emptyDir: Forbidden: may not specify more than 1 volume type',
    'spec.volumes[1].secret: Forbidden: may not specify more than 1 volume type',
    'spec.volumes[4].name: Duplicate value: "c"',
  ])
  // As upstream, a volume with errors does not count for the duplicate check of the later ones.
  t.notOk(causes(r).includes('spec.volumes[2].name: Duplicate value: "b"'))
  // the strategic merge patch that switches a volume's type without $retainKeys leaves two sources: refused
  r = await s.request('POST', DEPLOYS, deploy('vol', { template: { metadata: { labels: { app: 'vol' } }, spec: { containers: [{ name: 'c', image: 'i' }], volumes: [{ name: 'v', configMap: { name: 'cm' } }] } } }))
  t.equal(r.status, 201, r.text)
  r = await s.request('PATCH', `${DEPLOYS}/vol`, { spec: { template: { spec: { volumes: [{ name: 'v', secret: { secretName: 's' } }] } } } }, { 'content-type': 'application/strategic-merge-patch+json' })
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.message, 'Deployment.apps "vol" is invalid: spec.template.spec.volumes[0].configMap: Forbidden: may not specify more than 1 volume type')
})
