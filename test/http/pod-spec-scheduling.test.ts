// Black-box: the pod spec checks of where a pod runs and as whom (upstream ValidatePodSpec): topologySpreadConstraints,
// schedulingGates, hostAliases, containers' volumeDevices, and the serviceAccountName, nodeName and runtimeClassName
// formats; on Pods, a Deployment's template and a PodTemplate; and that a pod using all of them is stored.
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'
import { expectRefused, inv, req, forb, dup, notFound, unsupported, type Cause } from '../helpers/refused.js'

type Obj = Record<string, any>
const PODS = '/api/v1/namespaces/default/pods'
const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments'
const TEMPLATES = '/api/v1/namespaces/default/podtemplates'
const RCS = '/apis/node.orch.io/v1/runtimeclasses'

const SUBDOMAIN = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
const NAME_PART = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
const IP_ADDRESS = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'
const NOT_POSITIVE = 'must be greater than zero'
const BOTH_KEYS = 'exists in both matchLabelKeys and labelSelector'
const NOT_BLOCK = 'can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode'
const ACTIONS = ['DoNotSchedule', 'ScheduleAnyway']
const POLICIES = ['Honor', 'Ignore']
const TSC = 'spec.topologySpreadConstraints'
const P = 'spec.containers[0]'

let s: TestServer
t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

const pod = (name: string, spec: Obj, labels: Obj = { app: 'web' }): Obj => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec })
const app = (extra: Obj = {}): Obj => ({ name: 'app', image: 'nginx:1.27', ...extra })
const spread = (extra: Obj): Obj => ({ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'web' } }, ...extra })

t.test('topologySpreadConstraints: maxSkew, topologyKey, whenUnsatisfiable, repeated pairs, minDomains, node policies, labelSelector', async (t) => {
  await expectRefused(t, s, PODS, pod('spread', {
    containers: [app()],
    topologySpreadConstraints: [
      { maxSkew: 0, whenUnsatisfiable: 'Sometimes', labelSelector: { matchLabels: { app: 'web' } } },
      spread({ topologyKey: 'zone', minDomains: 0, nodeAffinityPolicy: 'Sometimes', nodeTaintsPolicy: 'Honor' }),
      spread({ topologyKey: 'host', whenUnsatisfiable: 'ScheduleAnyway', minDomains: 2, nodeTaintsPolicy: 'Never' }),
      spread({ maxSkew: 2, topologyKey: 'zone', labelSelector: { matchExpressions: [{ key: 'app', operator: 'In' }], matchLabels: { 'bad key': 'web' } } }),
      // maxSkew left out is 0, as Go holds it.
      { topologyKey: 'rack', whenUnsatisfiable: 'DoNotSchedule' },
    ],
  }), 'Pod', [
    inv(`${TSC}[0].maxSkew`, 0, NOT_POSITIVE),
    req(`${TSC}[0].topologyKey`, 'can not be empty'),
    unsupported(`${TSC}[0].whenUnsatisfiable`, 'Sometimes', ACTIONS),
    // A pair a later constraint repeats is reported at the earlier one.
    dup(`${TSC}[1].{topologyKey, whenUnsatisfiable}`, '{zone, DoNotSchedule}'),
    inv(`${TSC}[1].minDomains`, 0, NOT_POSITIVE),
    unsupported(`${TSC}[1].nodeAffinityPolicy`, 'Sometimes', POLICIES),
    inv(`${TSC}[2].minDomains`, 2, 'can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway'),
    unsupported(`${TSC}[2].nodeTaintsPolicy`, 'Never', POLICIES),
    inv(`${TSC}[3].labelSelector.matchLabels`, 'bad key', NAME_PART),
    req(`${TSC}[3].labelSelector.matchExpressions[0].values`, "must be specified when `operator` is 'In' or 'NotIn'"),
    inv(`${TSC}[4].maxSkew`, 0, NOT_POSITIVE),
  ])
})

t.test('topologySpreadConstraints: matchLabelKeys need a labelSelector, are label keys, and are not keys of the selector', async (t) => {
  await expectRefused(t, s, PODS, pod('label-keys', {
    containers: [app()],
    topologySpreadConstraints: [
      { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule', matchLabelKeys: ['pod-template-hash', 'Bad Key'] },
      spread({ labelSelector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, matchLabelKeys: ['app', 'tier', 'version'] }),
    ],
  }), 'Pod', [
    forb(`${TSC}[0].matchLabelKeys`, 'must not be specified when labelSelector is not set'),
    inv(`${TSC}[0].matchLabelKeys[1]`, 'Bad Key', NAME_PART),
    inv(`${TSC}[1].matchLabelKeys[0]`, 'app', BOTH_KEYS),
    inv(`${TSC}[1].matchLabelKeys[1]`, 'tier', BOTH_KEYS),
  ])
})

t.test('schedulingGates: qualified names, none twice; a new pod with gates names no node', async (t) => {
  await expectRefused(t, s, PODS, pod('gates', {
    containers: [app()],
    schedulingGates: [{ name: 'example.com/quota' }, { name: 'Bad Gate' }, { name: 'example.com/quota' }, {}, { name: '-x/y' }],
  }), 'Pod', [
    // upstream reports a gate at the entry, not at its name.
    inv('spec.schedulingGates[1]', 'Bad Gate', NAME_PART),
    dup('spec.schedulingGates[2]', 'example.com/quota'),
    inv('spec.schedulingGates[3]', '', 'name part must be non-empty'),
    inv('spec.schedulingGates[3]', '', NAME_PART),
    inv('spec.schedulingGates[4]', '-x/y', `prefix part ${SUBDOMAIN}`),
  ])
  await expectRefused(t, s, PODS, pod('gated-node', { containers: [app()], nodeName: 'node-1', schedulingGates: [{ name: 'example.com/quota' }] }), 'Pod', [
    forb('spec.nodeName', 'cannot be set until all schedulingGates have been cleared'),
  ])
})

t.test('hostAliases: a readable IP (a legacy field: leading zeros, IPv4-mapped and non-canonical forms accepted), subdomain hostnames', async (t) => {
  await expectRefused(t, s, PODS, pod('aliases', {
    containers: [app()],
    hostAliases: [
      { ip: '10.0.0.1', hostnames: ['db.local', 'Bad_Host'] },
      { ip: 'not-an-ip', hostnames: ['a'] },
      { ip: '010.0.0.1' },
      { ip: '::ffff:10.0.0.1' },
      { ip: '2001:DB8::1' },
      { hostnames: ['x'] },
    ],
  }), 'Pod', [
    inv('spec.hostAliases[0].hostnames[1]', 'Bad_Host', SUBDOMAIN),
    inv('spec.hostAliases[1].ip', 'not-an-ip', IP_ADDRESS),
    // [2]-[4]: read by Go's ParseIP, accepted as written while StrictIPCIDRValidation is off.
    inv('spec.hostAliases[5].ip', '', IP_ADDRESS),
  ])
})

t.test('volumeDevices: a claim-backed volume of the pod, unique names and paths, none shared with volumeMounts', async (t) => {
  await expectRefused(t, s, PODS, pod('devices', {
    volumes: [
      { name: 'data', persistentVolumeClaim: { claimName: 'data' } },
      { name: 'logs', persistentVolumeClaim: { claimName: 'logs' } },
      { name: 'scratch', emptyDir: {} },
      { name: 'cache', emptyDir: {} },
      { name: 'eph', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } } },
    ],
    containers: [app({
      volumeMounts: [{ name: 'logs', mountPath: '/logs' }, { name: 'cache', mountPath: '/data' }],
      volumeDevices: [
        { name: 'eph', devicePath: '/dev/eph' },
        { name: 'scratch', devicePath: '/dev/scratch' },
        { name: 'missing', devicePath: '/dev/eph' },
        { name: 'eph', devicePath: '/dev/../x' },
        { name: '', devicePath: '' },
        { name: 'logs', devicePath: '/data' },
      ],
    })],
  }), 'Pod', [
    // The mount side of the overlap (checked before the devices).
    inv(`${P}.volumeMounts[0].name`, 'logs', 'must not already exist in volumeDevices'),
    inv(`${P}.volumeMounts[1].mountPath`, '/data', 'must not already exist as a path in volumeDevices'),
    inv(`${P}.volumeDevices[1].name`, 'scratch', NOT_BLOCK),
    notFound(`${P}.volumeDevices[2].name`, 'missing'),
    inv(`${P}.volumeDevices[2].devicePath`, '/dev/eph', 'must be unique'),
    inv(`${P}.volumeDevices[3].name`, 'eph', 'must be unique'),
    inv(`${P}.volumeDevices[3].devicePath`, '/dev/../x', "can not contain backsteps ('..')"),
    req(`${P}.volumeDevices[4].name`),
    notFound(`${P}.volumeDevices[4].name`, ''),
    req(`${P}.volumeDevices[4].devicePath`),
    inv(`${P}.volumeDevices[5].name`, 'logs', 'must not already exist in volumeMounts'),
    inv(`${P}.volumeDevices[5].devicePath`, '/data', 'must not already exist as a path in volumeMounts'),
  ])
})

t.test('nodeName is a subdomain name', async (t) => {
  await expectRefused(t, s, PODS, pod('node-name', { containers: [app()], nodeName: 'Node_1' }), 'Pod', [inv('spec.nodeName', 'Node_1', SUBDOMAIN)])
})

const deploy = (name: string, spec: Obj): Obj => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
  spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec } },
})

t.test("in a Deployment's template and a PodTemplate, with the template's paths", async (t) => {
  const T = 'spec.template.spec'
  // A Pod naming a bad account or runtime class is refused by admission first (the account and class are looked up);
  // a template is only validated.
  await expectRefused(t, s, DEPLOYS, deploy('bad-template', {
    containers: [app({ volumeDevices: [{ name: 'disk', devicePath: '/dev/xvda' }] })],
    schedulingGates: [{ name: 'a' }, { name: 'a' }],
    topologySpreadConstraints: [spread({ whenUnsatisfiable: 'Never' }), spread({ maxSkew: -1, topologyKey: 'kubernetes.io/hostname' })],
    serviceAccountName: 'Bad_Account',
    nodeName: 'node_1',
    hostAliases: [{ ip: '1.2.3', hostnames: ['ok'] }],
    runtimeClassName: '',
  }), 'Deployment.apps', [
    notFound(`${T}.containers[0].volumeDevices[0].name`, 'disk'),
    dup(`${T}.schedulingGates[1]`, 'a'),
    unsupported(`${T}.topologySpreadConstraints[0].whenUnsatisfiable`, 'Never', ACTIONS),
    inv(`${T}.topologySpreadConstraints[1].maxSkew`, -1, NOT_POSITIVE),
    inv(`${T}.serviceAccountName`, 'Bad_Account', SUBDOMAIN),
    inv(`${T}.nodeName`, 'node_1', SUBDOMAIN),
    inv(`${T}.hostAliases[0].ip`, '1.2.3', IP_ADDRESS),
    // Given, even empty, it must be a name.
    inv(`${T}.runtimeClassName`, '', SUBDOMAIN),
  ])
  // A template may name a node and keep its gates: only a new Pod may not.
  await expectRefused(t, s, TEMPLATES, {
    apiVersion: 'v1', kind: 'PodTemplate', metadata: { name: 'bad-tpl' },
    template: { spec: { containers: [app()], nodeName: 'node-1', schedulingGates: [{ name: 'ok' }], topologySpreadConstraints: [spread({ matchLabelKeys: ['app'] })] } },
  }, 'PodTemplate', [inv('template.spec.topologySpreadConstraints[0].matchLabelKeys[0]', 'app', BOTH_KEYS)])
})

const goodSpec = (): Obj => ({
  serviceAccountName: 'default',
  nodeName: 'node-1.example.com',
  runtimeClassName: 'gvisor',
  topologySpreadConstraints: [
    spread({ minDomains: 2, nodeAffinityPolicy: 'Honor', nodeTaintsPolicy: 'Ignore', matchLabelKeys: ['pod-template-hash', 'example.com/version'] }),
    // The same key with another action is another kind of constraint.
    spread({ maxSkew: 3, whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchExpressions: [{ key: 'app', operator: 'Exists' }] } }),
    // upstream does not check the key's form, only that it is given.
    spread({ topologyKey: 'Rack Name' }),
  ],
  hostAliases: [{ ip: '10.1.2.3', hostnames: ['db', 'db.internal.example'] }, { ip: '2001:db8::10', hostnames: ['v6.example'] }, { ip: '10.1.2.4' }],
  volumes: [
    { name: 'block', persistentVolumeClaim: { claimName: 'block-claim' } },
    { name: 'eph', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], volumeMode: 'Block', resources: { requests: { storage: '1Gi' } } } } } },
    { name: 'data', emptyDir: {} },
  ],
  containers: [app({
    volumeMounts: [{ name: 'data', mountPath: '/data' }],
    volumeDevices: [{ name: 'block', devicePath: '/dev/xvda' }, { name: 'eph', devicePath: '/dev/xvdb' }],
  })],
})

t.test('a pod and a Deployment with all these fields set are stored', async (t) => {
  const rc = await s.request('POST', RCS, { apiVersion: 'node.orch.io/v1', kind: 'RuntimeClass', metadata: { name: 'gvisor' }, handler: 'runsc' })
  t.equal(rc.status, 201, rc.text)
  const r = await s.request('POST', PODS, pod('good', goodSpec()))
  t.equal(r.status, 201, r.text)
  t.same(r.json.spec.topologySpreadConstraints, goodSpec().topologySpreadConstraints)
  t.same(r.json.spec.hostAliases, goodSpec().hostAliases)
  t.same(r.json.spec.containers[0].volumeDevices, goodSpec().containers[0].volumeDevices)
  // Gates and a template's node are for Deployments; a pod with gates and no node is fine too.
  const gated = await s.request('POST', PODS, pod('gated', { containers: [app()], schedulingGates: [{ name: 'example.com/quota' }, { name: 'wait' }] }))
  t.equal(gated.status, 201, gated.text)
  const d = await s.request('POST', DEPLOYS, deploy('good', { ...goodSpec(), schedulingGates: [{ name: 'example.com/quota' }] }))
  t.equal(d.status, 201, d.text)
})
