// Black-box: NetworkPolicy validation (upstream ValidateNetworkPolicySpec): selectors, ports, peers, ipBlock, policyTypes.
import t, { type Test } from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'

let s: TestServer
const NPS = '/apis/networking.orch.io/v1/namespaces/default/networkpolicies'

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

const np = (name: string, spec?: Record<string, unknown>) => ({
  apiVersion: 'networking.orch.io/v1', kind: 'NetworkPolicy', metadata: { name }, ...(spec === undefined ? {} : { spec }),
})

/** Creates a policy that must be refused with exactly these causes (field and message), and checks nothing was stored. */
async function refused(t: Test, name: string, spec: Record<string, unknown>, causes: Array<[string, string]>): Promise<void> {
  const r = await s.request('POST', NPS, np(name, spec))
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.kind, 'Status')
  t.equal(r.json?.reason, 'Invalid')
  t.equal(r.json?.code, 422)
  t.same({ ...r.json?.details, causes: undefined }, { name, group: 'networking.orch.io', kind: 'NetworkPolicy', causes: undefined })
  t.same(r.json?.details?.causes?.map((c: any) => `${c.field}: ${c.message}`), causes.map(([f, m]) => `${f}: ${m}`))
  const lines = causes.map(([f, m]) => `${f}: ${m}`)
  t.equal(r.json?.message, `NetworkPolicy.networking.orch.io "${name}" is invalid: ${lines.length === 1 ? lines[0] : `[${lines.join(', ')}]`}`)
  t.equal((await s.request('GET', `${NPS}/${name}`)).status, 404, 'nothing stored')
}

t.test('typical policies are accepted; a missing podSelector or spec comes back empty', async (t) => {
  const cases: Array<[string, Record<string, unknown> | undefined]> = [
    ['default-deny', { podSelector: {}, policyTypes: ['Ingress', 'Egress'] }],
    ['allow-from-namespace', { podSelector: { matchLabels: { app: 'web' } }, ingress: [{ from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'frontend' } }, podSelector: { matchExpressions: [{ key: 'role', operator: 'In', values: ['client'] }] } }], ports: [{ protocol: 'TCP', port: 8080 }, { port: 'https' }, { protocol: 'UDP', port: 32000, endPort: 32768 }] }] }],
    ['egress-cidr', { podSelector: { matchLabels: { app: 'api' } }, policyTypes: ['Egress'], egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16', '10.2.3.0/24'] } }, { ipBlock: { cidr: '2001:db8::/32', except: ['2001:db8:1::/48'] } }], ports: [{ port: 53, protocol: 'SCTP' }] }] }],
    ['no-pod-selector', { ingress: [{}] }],
    ['no-spec', undefined],
    // Upstream keeps the pre-1.33 CIDR reading while StrictIPCIDRValidation is off: host bits and leading zeros pass.
    ['sloppy-cidr', { podSelector: {}, ingress: [{ from: [{ ipBlock: { cidr: '192.168.1.7/24' } }, { ipBlock: { cidr: '010.0.0.0/8' } }] }] }],
  ]
  for (const [name, spec] of cases) {
    const r = await s.request('POST', NPS, np(name, spec))
    t.equal(r.status, 201, `${name}: ${r.text}`)
  }
  let r = await s.request('GET', `${NPS}/no-pod-selector`)
  t.same(r.json?.spec, { podSelector: {}, ingress: [{}], policyTypes: ['Ingress'] })
  t.match(r.text, /"podSelector":\{\}/)
  r = await s.request('GET', `${NPS}/no-spec`)
  t.same(r.json?.spec, { podSelector: {}, policyTypes: ['Ingress'] })
  r = await s.request('GET', `${NPS}/allow-from-namespace`)
  t.same(r.json?.spec?.ingress?.[0]?.ports?.[1], { port: 'https', protocol: 'TCP' }, 'protocol defaulted')
})

t.test('selectors are label selectors', async (t) => {
  await refused(t, 'bad-pod-selector', { podSelector: { matchLabels: { 'a b': 'x' }, matchExpressions: [{ key: 'k', operator: 'Has' }, { key: 'k', operator: 'In' }, { key: 'k', operator: 'Exists', values: ['v'] }, { key: 'k', operator: 'In', values: ['bad value'] }] } }, [
    ['spec.podSelector.matchLabels', 'Invalid value: "a b": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')'],
    ['spec.podSelector.matchExpressions[0].operator', 'Invalid value: "Has": not a valid selector operator'],
    ['spec.podSelector.matchExpressions[1].values', "Required value: must be specified when `operator` is 'In' or 'NotIn'"],
    ['spec.podSelector.matchExpressions[2].values', "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"],
    ['spec.podSelector.matchExpressions[3].values[0]', 'Invalid value: "bad value": a valid label must be an empty string or consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyValue\',  or \'my_value\',  or \'12345\', regex used for validation is \'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\')'],
  ])
  await refused(t, 'bad-peer-selector', { podSelector: {}, egress: [{ to: [{ namespaceSelector: { matchExpressions: [{ key: 'k', operator: 'NotIn', values: [] }] } }] }] }, [
    ['spec.egress[0].to[0].namespaceSelector.matchExpressions[0].values', "Required value: must be specified when `operator` is 'In' or 'NotIn'"],
  ])
})

t.test('ports: number or IANA name, protocol, endPort', async (t) => {
  await refused(t, 'bad-ports', {
    podSelector: {},
    ingress: [{ ports: [
      { port: 0 }, { port: 70000 }, { port: 'HTTP' }, { port: 'a--b' }, { port: 'abcdefghijklmnop' }, { port: '80' },
      { protocol: 'ICMP', port: 80 }, { port: 443, endPort: 80 }, { port: 'http', endPort: 90 }, { endPort: 90 }, { port: 1000, endPort: 70000 },
    ] }],
  }, [
    ['spec.ingress[0].ports[0].port', 'Invalid value: 0: must be between 1 and 65535, inclusive'],
    ['spec.ingress[0].ports[1].port', 'Invalid value: 70000: must be between 1 and 65535, inclusive'],
    ['spec.ingress[0].ports[2].port', 'Invalid value: "HTTP": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)'],
    ['spec.ingress[0].ports[2].port', 'Invalid value: "HTTP": must contain at least one letter (a-z)'],
    ['spec.ingress[0].ports[3].port', 'Invalid value: "a--b": must not contain consecutive hyphens'],
    ['spec.ingress[0].ports[4].port', 'Invalid value: "abcdefghijklmnop": must be no more than 15 characters'],
    ['spec.ingress[0].ports[5].port', 'Invalid value: "80": must contain at least one letter (a-z)'],
    ['spec.ingress[0].ports[6].protocol', 'Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"'],
    ['spec.ingress[0].ports[7].endPort', 'Invalid value: 80: must be greater than or equal to `port`'],
    ['spec.ingress[0].ports[8].endPort', 'Invalid value: 90: may not be specified when `port` is non-numeric'],
    ['spec.ingress[0].ports[9].endPort', 'Invalid value: 90: may not be specified when `port` is not specified'],
    ['spec.ingress[0].ports[10].endPort', 'Invalid value: 70000: must be between 1 and 65535, inclusive'],
  ])
})

t.test('peers: one kind each, ipBlock alone, CIDRs and excepts strictly inside', async (t) => {
  await refused(t, 'bad-peers', {
    podSelector: {},
    ingress: [{ from: [
      {}, { ipBlock: { cidr: '10.0.0.0/8' }, podSelector: {} }, { ipBlock: { cidr: '' } }, { ipBlock: { cidr: '10.0.0.0/33' } }, { ipBlock: { cidr: '10.0.0.0' } },
    ] }],
    egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/16', except: ['10.0.0.0/16', '10.1.0.0/24', '10.0.0.0/8', 'nope', '10.0.1.0/24'] } }, { ipBlock: { cidr: '::/0', except: ['10.0.0.0/8'] } }] }],
  }, [
    ['spec.ingress[0].from[0]', 'Required value: must specify a peer'],
    ['spec.ingress[0].from[1]', 'Forbidden: may not specify both ipBlock and another peer'],
    ['spec.ingress[0].from[2].ipBlock.cidr', 'Required value'],
    ['spec.ingress[0].from[3].ipBlock.cidr', 'Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'],
    ['spec.ingress[0].from[4].ipBlock.cidr', 'Invalid value: "10.0.0.0": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'],
    ['spec.egress[0].to[0].ipBlock.except[0]', 'Invalid value: "10.0.0.0/16": must be a strict subset of `cidr`'],
    ['spec.egress[0].to[0].ipBlock.except[1]', 'Invalid value: "10.1.0.0/24": must be a strict subset of `cidr`'],
    ['spec.egress[0].to[0].ipBlock.except[2]', 'Invalid value: "10.0.0.0/8": must be a strict subset of `cidr`'],
    ['spec.egress[0].to[0].ipBlock.except[3]', 'Invalid value: "nope": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'],
    ['spec.egress[0].to[1].ipBlock.except[0]', 'Invalid value: "10.0.0.0/8": must be a strict subset of `cidr`'],
  ])
})

t.test('policyTypes: Ingress or Egress, at most two', async (t) => {
  await refused(t, 'bad-types', { podSelector: {}, policyTypes: ['Ingress', 'Sideways'] }, [
    ['spec.policyTypes[1]', 'Unsupported value: "Sideways": supported values: "Ingress", "Egress"'],
  ])
  await refused(t, 'many-types', { podSelector: {}, policyTypes: ['Ingress', 'Egress', 'Sideways'] }, [
    ['spec.policyTypes', 'Invalid value: []networking.PolicyType{"Ingress", "Egress", "Sideways"}: may not specify more than two policyTypes'],
  ])
  // Upstream does not refuse a repeated type.
  const r = await s.request('POST', NPS, np('twice', { podSelector: {}, policyTypes: ['Egress', 'Egress'] }))
  t.equal(r.status, 201, r.text)
})

t.test('updates are validated; nothing refused is stored', async (t) => {
  const r = await s.request('PATCH', `${NPS}/default-deny`, { spec: { ingress: [{ ports: [{ port: 'http', endPort: 9 }] }] } }, { 'content-type': 'application/merge-patch+json' })
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.message, 'NetworkPolicy.networking.orch.io "default-deny" is invalid: spec.ingress[0].ports[0].endPort: Invalid value: 9: may not be specified when `port` is non-numeric')
  t.equal((await s.request('GET', `${NPS}/default-deny`)).json?.spec?.ingress, undefined)
})
