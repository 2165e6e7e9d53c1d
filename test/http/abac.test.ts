// Black-box: --authorization-mode=...,ABAC with --authorization-policy-file: allow and no opinion through kubectl
// auth can-i (access reviews) and real requests, both file forms, the authenticated/unauthenticated groups,
// non-resource paths, and the start-up errors of bad flags and bad files.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runKubectl } from '../helpers/kubectl.js'
import { startServer, runMain as runServerMain, type TestServer } from '../helpers/server.js'

const work = mkdtempSync(join(tmpdir(), 'orch-abac-'))
const home = mkdtempSync(join(work, 'home-'))
const tokens = join(work, 'tokens.csv')
writeFileSync(tokens, ['alice-token,alice,u1', 'bob-token,bob,u2', 'carol-token,carol,u3', 'dave-token,dave,u4', 'erin-token,erin,u5,"ops"'].join('\n') + '\n')
const v1 = (spec: Record<string, unknown>) => JSON.stringify({ apiVersion: 'abac.authorization.orch.io/v1beta1', kind: 'Policy', spec })
const policyFile = join(work, 'policy.jsonl')
writeFileSync(policyFile, [
  '# comments and blank lines are skipped',
  v1({ user: 'alice', namespace: '*', resource: '*', apiGroup: '*' }),
  v1({ user: 'bob', namespace: 'team', resource: 'pods', apiGroup: '', readonly: true }),
  '',
  // Every authenticated user reads every non-resource path; anonymous users read /version only.
  v1({ group: 'system:authenticated', readonly: true, nonResourcePath: '*' }),
  v1({ group: 'system:unauthenticated', readonly: true, nonResourcePath: '/version' }),
  v1({ user: 'carol', nonResourcePath: '/logs/*' }),
  // user "*": every authenticated user (upstream's v1beta1 conversion).
  v1({ user: '*', namespace: 'shared', resource: 'configmaps', apiGroup: '' }),
  v1({ group: 'ops', namespace: '*', resource: 'deployments', apiGroup: 'apps' }),
  // The unversioned form: no namespace and no resource is everything, in every API group, and every path.
  JSON.stringify({ user: 'dave' }),
].join('\n') + '\n')

let s: TestServer
t.before(async () => { s = await startServer({ secure: true, args: ['--token-auth-file', tokens, '--authorization-mode=RBAC,ABAC', '--authorization-policy-file', policyFile] }) })
t.teardown(async () => {
  await s?.stop()
  rmSync(work, { recursive: true, force: true })
})

async function canI(token: string, args: string[]): Promise<string> {
  const r = await runKubectl(s.kubeconfig, home, ['--token', token, 'auth', 'can-i', ...args])
  return `${r.stdout.trim()} (${r.code})`
}

t.test('kubectl auth can-i: what each policy allows, and no more', async (t) => {
  const cases: Array<[string, string[], boolean]> = [
    ['alice-token', ['delete', 'deployments.apps', '-n', 'any'], true],
    ['alice-token', ['create', 'clusterroles'], true],
    ['bob-token', ['list', 'pods', '-n', 'team'], true],
    ['bob-token', ['watch', 'pods', '-n', 'team'], true],
    ['bob-token', ['create', 'pods', '-n', 'team'], false],
    ['bob-token', ['get', 'pods', '-n', 'other'], false],
    ['bob-token', ['get', 'services', '-n', 'team'], false],
    ['bob-token', ['get', '/healthz'], true],
    ['bob-token', ['post', '/healthz'], false],
    ['carol-token', ['post', '/logs/kube'], true],
    ['carol-token', ['post', '/metrics'], false],
    ['carol-token', ['create', 'configmaps', '-n', 'shared'], true],
    ['carol-token', ['create', 'configmaps', '-n', 'other'], false],
    ['erin-token', ['patch', 'deployments.apps', '-n', 'x'], true],
    ['erin-token', ['patch', 'deployments.extensions', '-n', 'x'], false],
    ['dave-token', ['delete', 'secrets', '-n', 'any'], true],
    ['dave-token', ['create', 'widgets.example.com'], true],
    ['dave-token', ['post', '/anything'], true],
  ]
  for (const [token, args, allowed] of cases) {
    // A denial carries the reasons of the authorizers that had no opinion: RBAC gives none, ABAC upstream's.
    t.equal(await canI(token, args), allowed ? 'yes (0)' : 'no - No policy matched. (1)', `${token.replace('-token', '')}: ${args.join(' ')}`)
  }
})

t.test('real requests: allowed ones answer, the rest are 403 with the reason of no policy', async (t) => {
  let r = await s.requestAs('bob-token', 'GET', '/api/v1/namespaces/team/pods')
  t.equal(r.status, 200, r.text)
  r = await s.requestAs('bob-token', 'POST', '/api/v1/namespaces/team/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }] } })
  t.equal(r.status, 403)
  t.equal(r.json.reason, 'Forbidden')
  t.match(r.json.message, /^pods is forbidden: User "bob" cannot create resource "pods" in API group "" in the namespace "team"/)
  // Anonymous: /version by the unauthenticated group's policy, nothing else.
  r = await s.requestAs(null, 'GET', '/version')
  t.equal(r.status, 200, r.text)
  r = await s.requestAs(null, 'GET', '/api/v1/namespaces/shared/configmaps')
  t.equal(r.status, 403, 'user "*" is the authenticated users only')
  r = await s.requestAs('erin-token', 'GET', '/api/v1/namespaces/shared/configmaps')
  t.equal(r.status, 200, r.text)
})

t.test('kubectl auth can-i --list: the rules of the policies (SelfSubjectRulesReview)', async (t) => {
  const r = await runKubectl(s.kubeconfig, home, ['--token', 'bob-token', 'auth', 'can-i', '--list', '-n', 'team'])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /\npods\s+\[\]\s+\[\]\s+\[get list watch\]/)
  // As upstream's RulesFor, a policy's rules are listed only in its namespace: the non-resource policy has none.
  t.notMatch(r.stdout, /\[\*\]/, 'the non-resource policy without a namespace is not listed')
  t.notMatch(r.stdout, /deployments/, 'erin\'s group policy is not bob\'s')
})


/** The server's main with `args`; port 1 is never bound: every run here stops before it listens. */
function runMain(args: string[]): Promise<{ code: number | null; out: string }> {
  return runServerMain(['--port', '1', '--secure-port', '0', '--data-dir', mkdtempSync(join(work, 'data-')), ...args])
}

t.test('bad flags and bad policy files refuse the start', async (t) => {
  let r = await runMain(['--authorization-mode=RBAC,ABAC'])
  t.equal(r.code, 2)
  t.equal(r.out, "orch-apiserver: authorization-mode ABAC's authorization policy file not passed\n")
  r = await runMain(['--authorization-policy-file', policyFile])
  t.equal(r.code, 2)
  t.equal(r.out, 'orch-apiserver: cannot specify --authorization-policy-file without mode ABAC\n')
  const bad = join(work, 'bad.jsonl')
  writeFileSync(bad, `${v1({ user: 'a', nonResourcePath: '*' })}\n{"user": "b",\n`)
  r = await runMain(['--authorization-mode=ABAC', '--authorization-policy-file', bad])
  t.equal(r.code, 2)
  t.match(r.out, `error reading policy file ${bad}, line 2: {"user": "b",: `)
  writeFileSync(bad, `${JSON.stringify({ apiVersion: 'abac.authorization.orch.io/v1beta1', kind: 'Role', spec: {} })}\n`)
  r = await runMain(['--authorization-mode=ABAC', '--authorization-policy-file', bad])
  t.equal(r.code, 2)
  t.match(r.out, `line 1: `)
  t.match(r.out, 'no kind "Role" is registered for version "abac.authorization.orch.io/v1beta1"')
  r = await runMain(['--authorization-mode=ABAC', '--authorization-policy-file', join(work, 'missing.jsonl')])
  t.equal(r.code, 2)
  t.match(r.out, `error reading policy file ${join(work, 'missing.jsonl')}: `)
})
