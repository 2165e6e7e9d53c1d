// Black-box: --enable-admission-plugins / --disable-admission-plugins: upstream's start-up errors, --help, and what
// turning a plugin off changes.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, runMain as runServerMain, type TestServer } from '../helpers/server.js'

/** The server's main with `args`; port 1 is never bound: every run here stops at its flags. */
async function runMain(args: string[]): Promise<{ code: number | null; out: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'orch-plugins-'))
  try { return await runServerMain(['--port', '1', '--secure-port', '0', '--data-dir', dir, ...args]) } finally { rmSync(dir, { recursive: true, force: true }) }
}


// Two at a time: the runs that stop at their flags beside the servers' start-ups.
t.jobs = 2

// A kubelet's token (node-a), for the NodeRestriction test.
const tokenDir = mkdtempSync(join(tmpdir(), 'orch-plugins-nr-'))
t.teardown(() => rmSync(tokenDir, { recursive: true, force: true }))
const tokens = join(tokenDir, 'tokens.csv')
writeFileSync(tokens, 'node-a-token,system:node:node-a,u-a,"system:nodes"\n')

// One server with the default plugins (and the kubelet's token, which changes no admission) for the tests of the
// defaults, started by the first that needs it.
let defaults: Promise<TestServer> | undefined
const defaultServer = (): Promise<TestServer> => (defaults ??= startServer({ args: ['--token-auth-file', tokens] }))
t.teardown(async () => { if (defaults) await (await defaults).stop() })

const pod = (name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'i' }], ...spec } })

t.test('bad flag combinations refuse the start with upstream\'s texts', async (t) => {
  const cases: Array<[string[], string]> = [
    [['--enable-admission-plugins=Foo'], 'orch-apiserver: enable-admission-plugins plugin "Foo" is unknown\n'],
    [['--disable-admission-plugins', 'ServiceAccount,Bar'], 'orch-apiserver: disable-admission-plugins plugin "Bar" is unknown\n'],
    [['--enable-admission-plugins=NodeRestriction,ServiceAccount', '--disable-admission-plugins=ServiceAccount,NodeRestriction'],
      'orch-apiserver: [NodeRestriction ServiceAccount] in enable-admission-plugins and disable-admission-plugins overlapped\n'],
    // Several errors at once, as upstream's aggregate prints them.
    [['--enable-admission-plugins=Foo', '--disable-admission-plugins=Foo'],
      'orch-apiserver: [enable-admission-plugins plugin "Foo" is unknown, disable-admission-plugins plugin "Foo" is unknown, [Foo] in enable-admission-plugins and disable-admission-plugins overlapped]\n'],
    // A plugin upstream has and this server does not may not be turned on (it would not run).
    [['--enable-admission-plugins=ImagePolicyWebhook'], 'orch-apiserver: enable-admission-plugins plugin "ImagePolicyWebhook" is not implemented by this server\n'],
  ]
  // Each run stops at its flags: two at a time, then the checks in order.
  const results: Array<{ code: number | null; out: string }> = []
  let next = 0
  await Promise.all(Array.from({ length: 2 }, async () => { for (let i = next++; i < cases.length; i = next++) results[i] = await runMain(cases[i][0]) }))
  for (const [i, [args, text]] of cases.entries()) {
    const r = results[i]
    t.equal(r.code, 2, args.join(' '))
    t.equal(r.out, text, args.join(' '))
  }
})

t.test('--help names every plugin the flags take', async (t) => {
  const r = await runMain(['--help'])
  t.equal(r.code, 0)
  t.match(r.out, /--enable-admission-plugins list\n.*admission plugins to run in addition to those on by default/)
  t.match(r.out, /--disable-admission-plugins list\n/)
  for (const name of ['NamespaceLifecycle', 'LimitRanger', 'ServiceAccount', 'NodeRestriction', 'Priority', 'ValidatingAdmissionPolicy', 'ResourceQuota', 'AlwaysPullImages', 'PodSecurity']) {
    t.match(r.out, new RegExp(`Comma-delimited list of admission plugins: [^\\n]*\\b${name}\\b`), name)
  }
})

t.test('--help names the plugins on by default and the toleration-seconds flags', async (t) => {
  const r = await runMain(['--help'])
  t.equal(r.code, 0)
  t.match(r.out, 'in addition to those on by default (NamespaceLifecycle, LimitRanger, ServiceAccount, NodeRestriction, TaintNodesByCondition, PodSecurity, Priority, DefaultTolerationSeconds, DefaultStorageClass, StorageObjectInUseProtection, PersistentVolumeClaimResize, RuntimeClass, CertificateApproval, CertificateSigning, CertificateSubjectRestriction, DefaultIngressClass, MutatingAdmissionWebhook, ValidatingAdmissionPolicy, ValidatingAdmissionWebhook, ResourceQuota)')
  t.match(r.out, /--default-not-ready-toleration-seconds int\n/)
  t.match(r.out, /--default-unreachable-toleration-seconds int\n/)
  const bad = await runMain(['--default-not-ready-toleration-seconds', 'soon'])
  t.equal(bad.code, 2)
  t.match(bad.out, 'default-not-ready-toleration-seconds')
  const missing = await runMain(['--enable-admission-plugins=ImagePolicyWebhook'])
  t.equal(missing.out, 'orch-apiserver: enable-admission-plugins plugin "ImagePolicyWebhook" is not implemented by this server\n')
})

t.test('--disable-admission-plugins=ServiceAccount,NamespaceLifecycle,Priority: pods as given, content in missing namespaces', async (t) => {
  // A plugin upstream has and this server does not may be named among those turned off (it is off anyway).
  const s = await startServer({ args: ['--disable-admission-plugins=ServiceAccount,NamespaceLifecycle,Priority,ImagePolicyWebhook', '--enable-admission-plugins', 'ResourceQuota'] })
  t.teardown(() => s.stop())
  let r = await s.request('POST', '/api/v1/namespaces/default/pods', pod('plain'))
  t.equal(r.status, 201, r.text)
  t.notOk(r.json.spec.serviceAccountName, 'no account')
  t.notOk(r.json.spec.serviceAccount)
  t.notOk(r.json.spec.volumes, 'no token volume')
  t.notOk(r.json.spec.containers[0].volumeMounts)
  t.notOk(r.json.spec.priority, 'Priority off: no priority computed')
  r = await s.request('POST', '/api/v1/namespaces/default/pods', pod('any-account', { serviceAccountName: 'nope' }))
  t.equal(r.status, 201, 'an account that does not exist is not looked up')
  // NamespaceLifecycle off: as upstream, a create in a namespace that does not exist is stored, and the protected
  // namespaces may be deleted.
  r = await s.request('POST', '/api/v1/namespaces/nowhere/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } })
  t.equal(r.status, 201, r.text)
  r = await s.request('DELETE', '/api/v1/namespaces/orch-public')
  t.equal(r.status, 200, r.text)
})

t.test('on by default: the same requests are admitted by the plugins', async (t) => {
  const s = await defaultServer()
  let r = await s.request('POST', '/api/v1/namespaces/default/pods', pod('plain'))
  t.equal(r.status, 201, r.text)
  t.equal(r.json.spec.serviceAccountName, 'default')
  t.equal(r.json.spec.priority, 0)
  r = await s.request('POST', '/api/v1/namespaces/nowhere/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } })
  t.equal(r.status, 404, r.text)
  t.equal(r.json.message, 'namespaces "nowhere" not found')
  r = await s.request('DELETE', '/api/v1/namespaces/orch-public')
  t.equal(r.status, 403, r.text)
  t.equal(r.json.message, 'namespaces "orch-public" is forbidden: this namespace may not be deleted')
})

t.test('--disable-admission-plugins=NodeRestriction: a kubelet may write pods of other nodes (Node authorization still limits it)', async (t) => {
  // Plugin on (the server of the defaults) and off (a server of its own); the checks in order.
  const answers = await Promise.all([false, true].map(async (off) => {
    const s = off ? await startServer({ args: ['--token-auth-file', tokens, '--disable-admission-plugins=NodeRestriction'] }) : await defaultServer()
    try {
      // A mirror pod of another node: NodeRestriction refuses it, Node authorization allows pod creates.
      return await s.requestAs('node-a-token', 'POST', '/api/v1/namespaces/default/pods', {
        apiVersion: 'v1', kind: 'Pod', metadata: { name: 'mirror', annotations: { 'orch.io/config.mirror': 'x' } },
        spec: { nodeName: 'node-b', containers: [{ name: 'c', image: 'i' }] },
      })
    } finally {
      if (off) await s.stop()
    }
  }))
  for (const [i, off] of [false, true].entries()) {
    const r = answers[i]
    if (off) t.equal(r.status, 201, `NodeRestriction off: ${r.text}`)
    else {
      t.equal(r.status, 403, r.text)
      t.match(r.json.message, 'node "node-a" can only create pods with spec.nodeName set to itself')
    }
  }
})
