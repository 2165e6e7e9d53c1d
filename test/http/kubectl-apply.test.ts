// Black-box: stock kubectl 1.32 over TLS — client-side and server-side apply, patch types, dry-run create,
// strict validation and scale (one server for the whole file).
import t from 'tap'
import { runKubectl } from '../helpers/kubectl.js'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type TestServer } from '../helpers/server.js'

let s: TestServer
const work = mkdtempSync(join(tmpdir(), 'orch-kapply-'))
const home = mkdtempSync(join(tmpdir(), 'orch-kapply-home-'))

const kubectl = (args: string[]) => runKubectl(s.kubeconfig, home, args)

function file(name: string, text: string): string {
  const p = join(work, name)
  writeFileSync(p, text)
  return p
}
function cmYaml(name: string, data: Record<string, string>): string {
  return ['apiVersion: v1', 'kind: ConfigMap', 'metadata:', `  name: ${name}`, 'data:', ...Object.entries(data).map(([k, v]) => `  ${k}: "${v}"`), ''].join('\n')
}
function depYaml(name: string, image: string, replicas: number, extra = ''): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  replicas: ${replicas}${extra}
  selector:
    matchLabels:
      app: ${name}
  template:
    metadata:
      labels:
        app: ${name}
    spec:
      containers:
      - name: app
        image: ${image}
        env:
        - name: A
          value: "1"
        - name: B
          value: "2"
`
}
const cmPath = (n: string) => `/api/v1/namespaces/default/configmaps/${n}`
const depPath = (n: string) => `/apis/apps/v1/namespaces/default/deployments/${n}`
async function get(path: string): Promise<any> {
  const r = await s.request('GET', path)
  return r.status === 200 ? r.json : { status: r.status }
}

t.before(async () => { s = await startServer({ secure: true }) })
t.teardown(async () => {
  await s?.stop()
  rmSync(work, { recursive: true, force: true })
  rmSync(home, { recursive: true, force: true })
})

t.test('client-side apply: created, configured, unchanged (three-way merge)', async (t) => {
  const f = file('dep1.yaml', depYaml('csa', 'nginx:1', 1))
  let r = await kubectl(['apply', '-f', f])
  t.equal(r.code, 0, r.stderr)
  t.equal(r.stdout.trim(), 'deployment.apps/csa created')
  let d = await get(depPath('csa'))
  t.ok(d.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'], 'last-applied annotation stored')

  // someone else adds a label out of band; the manifest changes image and drops env B
  // (an out-of-band list item would make kubectl send $setElementOrder on every apply: always "configured" upstream too)
  const p = await s.request('PATCH', depPath('csa'), JSON.stringify({ metadata: { labels: { other: 'x' } } }),
    { 'content-type': 'application/strategic-merge-patch+json' })
  t.equal(p.status, 200, p.text)
  const f2 = file('dep2.yaml', depYaml('csa', 'nginx:2', 2).replace('        - name: B\n          value: "2"\n', ''))
  r = await kubectl(['apply', '-f', f2])
  t.equal(r.code, 0, r.stderr)
  t.equal(r.stdout.trim(), 'deployment.apps/csa configured')
  d = await get(depPath('csa'))
  t.equal(d.spec.replicas, 2)
  const c = d.spec.template.spec.containers[0]
  t.equal(c.image, 'nginx:2')
  t.same((c.env ?? []).map((e: any) => e.name), ['A'], 'B deleted (was applied)')
  t.equal(d.metadata.labels?.other, 'x', 'out-of-band label kept (not ours)')
  t.match(d.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'], /nginx:2/)
  t.ok((d.metadata.managedFields ?? []).some((e: any) => e.manager === 'kubectl-client-side-apply' && e.operation === 'Update'), 'kubectl-client-side-apply Update entry')

  r = await kubectl(['apply', '-f', f2])
  t.equal(r.code, 0, r.stderr)
  t.equal(r.stdout.trim(), 'deployment.apps/csa unchanged')

  // a ConfigMap too
  const cf = file('cm1.yaml', cmYaml('csa-cm', { a: '1', b: '2' }))
  r = await kubectl(['apply', '-f', cf])
  t.equal(r.stdout.trim(), 'configmap/csa-cm created', r.stderr)
  writeFileSync(cf, cmYaml('csa-cm', { a: '1', c: '3' }))
  r = await kubectl(['apply', '-f', cf])
  t.equal(r.stdout.trim(), 'configmap/csa-cm configured', r.stderr)
  t.same((await get(cmPath('csa-cm'))).data, { a: '1', c: '3' })
  r = await kubectl(['apply', '-f', cf])
  t.equal(r.stdout.trim(), 'configmap/csa-cm unchanged', r.stderr)
})

t.test('server-side apply from two managers: conflict, then --force-conflicts', async (t) => {
  const f1 = file('ssa1.yaml', cmYaml('ssa', { x: '1', w: '2' }))
  let r = await kubectl(['apply', '--server-side', '--field-manager', 'alice', '-f', f1])
  t.equal(r.code, 0, r.stderr)
  t.equal(r.stdout.trim(), 'configmap/ssa serverside-applied')
  let o = await get(cmPath('ssa'))
  const alice = (o.metadata.managedFields ?? []).find((e: any) => e.manager === 'alice')
  t.equal(alice?.operation, 'Apply')
  t.same(alice?.fieldsV1, { 'f:data': { 'f:w': {}, 'f:x': {} } })

  const f2 = file('ssa2.yaml', cmYaml('ssa', { x: '9' }))
  r = await kubectl(['apply', '--server-side', '--field-manager', 'bob', '-f', f2])
  t.not(r.code, 0, 'conflict fails')
  t.match(r.stderr, /conflict/)
  t.match(r.stderr, /Apply failed with 1 conflict: conflict with "alice": \.data\.x/)
  t.match(r.stderr, /--force-conflicts/, 'kubectl advice')
  t.equal((await get(cmPath('ssa'))).data.x, '1', 'unchanged')

  r = await kubectl(['apply', '--server-side', '--field-manager', 'bob', '--force-conflicts', '-f', f2])
  t.equal(r.code, 0, r.stderr)
  t.equal(r.stdout.trim(), 'configmap/ssa serverside-applied')
  o = await get(cmPath('ssa'))
  t.same(o.data, { w: '2', x: '9' })
  const mf = Object.fromEntries((o.metadata.managedFields ?? []).map((e: any) => [e.manager, e]))
  t.same(mf.alice?.fieldsV1, { 'f:data': { 'f:w': {} } })
  t.same(mf.bob?.fieldsV1, { 'f:data': { 'f:x': {} } })
  t.equal(mf.bob?.operation, 'Apply')

  // default manager "kubectl"
  const f3 = file('ssa3.yaml', cmYaml('ssa-default', { k: 'v' }))
  r = await kubectl(['apply', '--server-side', '-f', f3])
  t.equal(r.code, 0, r.stderr)
  t.ok(((await get(cmPath('ssa-default'))).metadata.managedFields ?? []).some((e: any) => e.manager === 'kubectl' && e.operation === 'Apply'))
})

t.test('kubectl patch --type=json|merge|strategic', async (t) => {
  let r = await kubectl(['create', '-f', file('patch-dep.yaml', depYaml('kp', 'nginx:1', 1))])
  t.equal(r.code, 0, r.stderr)
  r = await kubectl(['patch', 'deployment', 'kp', '--type=strategic', '-p',
    JSON.stringify({ spec: { template: { spec: { containers: [{ name: 'app', image: 'nginx:3', env: [{ name: 'B', $patch: 'delete' }, { name: 'D', value: '4' }] }] } } } })])
  t.equal(r.code, 0, r.stderr)
  t.equal(r.stdout.trim(), 'deployment.apps/kp patched')
  let d = await get(depPath('kp'))
  t.equal(d.spec.template.spec.containers[0].image, 'nginx:3')
  t.same(d.spec.template.spec.containers[0].env.map((e: any) => e.name).sort(), ['A', 'D'])
  t.ok((d.metadata.managedFields ?? []).some((e: any) => e.manager === 'kubectl-patch' && e.operation === 'Update'), 'kubectl-patch manager')

  r = await kubectl(['patch', 'deployment', 'kp', '--type=merge', '-p', JSON.stringify({ metadata: { labels: { m: 'x' } }, spec: { replicas: 3 } })])
  t.equal(r.code, 0, r.stderr)
  d = await get(depPath('kp'))
  t.equal(d.spec.replicas, 3)
  t.equal(d.metadata.labels?.m, 'x')

  r = await kubectl(['patch', 'deployment', 'kp', '--type=json', '-p', JSON.stringify([{ op: 'replace', path: '/spec/replicas', value: 5 }, { op: 'remove', path: '/metadata/labels/m' }])])
  t.equal(r.code, 0, r.stderr)
  d = await get(depPath('kp'))
  t.equal(d.spec.replicas, 5)
  t.equal(d.metadata.labels?.m, undefined)

  r = await kubectl(['patch', 'deployment', 'kp', '--type=json', '-p', JSON.stringify([{ op: 'test', path: '/spec/replicas', value: 99 }, { op: 'replace', path: '/spec/replicas', value: 6 }])])
  t.not(r.code, 0, 'failing test op fails')
  t.equal((await get(depPath('kp'))).spec.replicas, 5)

  r = await kubectl(['patch', 'configmap', 'no-such', '--type=merge', '-p', '{"data":{"a":"1"}}'])
  t.not(r.code, 0)
  t.match(r.stderr, /NotFound|not found/)

  // unchanged patch
  r = await kubectl(['patch', 'deployment', 'kp', '--type=merge', '-p', '{"spec":{"replicas":5}}'])
  t.equal(r.code, 0, r.stderr)
  t.equal(r.stdout.trim(), 'deployment.apps/kp patched (no change)')
})

t.test('kubectl create --dry-run=server stores nothing', async (t) => {
  const f = file('dry.yaml', cmYaml('dry-cm', { a: '1' }))
  let r = await kubectl(['create', '--dry-run=server', '-f', f])
  t.equal(r.code, 0, r.stderr)
  t.equal(r.stdout.trim(), 'configmap/dry-cm created (server dry run)')
  t.equal((await get(cmPath('dry-cm'))).status, 404)
  r = await kubectl(['create', '--dry-run=server', '-f', f, '-o', 'json'])
  t.equal(r.code, 0, r.stderr)
  const o = JSON.parse(r.stdout)
  t.equal(o.metadata?.name, 'dry-cm')
  t.ok(o.metadata?.uid, 'server filled uid')
  t.equal((await get(cmPath('dry-cm'))).status, 404)
  r = await kubectl(['apply', '--server-side', '--dry-run=server', '-f', f])
  t.equal(r.code, 0, r.stderr)
  t.equal((await get(cmPath('dry-cm'))).status, 404, 'server-side apply dry run stores nothing')
})

t.test('kubectl apply --validate=strict with an unknown field', async (t) => {
  const f = file('strict.yaml', depYaml('strict-dep', 'nginx:1', 1, '\n  bogusField: 1'))
  let r = await kubectl(['apply', '--validate=strict', '-f', f])
  t.not(r.code, 0, 'fails')
  t.match(r.stderr, /bogusField/, `names the field: ${r.stderr}`)
  t.equal((await get(depPath('strict-dep'))).status, 404, 'not created')
  r = await kubectl(['apply', '--server-side', '--validate=strict', '-f', f])
  t.not(r.code, 0, 'server-side strict fails')
  t.match(r.stderr, /bogusField/)
  t.equal((await get(depPath('strict-dep'))).status, 404, 'not created')
  r = await kubectl(['apply', '--validate=warn', '-f', f])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stderr, /unknown field "spec\.bogusField"/, 'warning printed')
  t.equal((await get(depPath('strict-dep'))).spec?.bogusField, undefined)
})

t.test('kubectl scale deployment', async (t) => {
  let r = await kubectl(['scale', 'deployment', 'kp', '--replicas=4'])
  t.equal(r.code, 0, r.stderr)
  t.equal(r.stdout.trim(), 'deployment.apps/kp scaled')
  t.equal((await get(depPath('kp'))).spec.replicas, 4)
  r = await kubectl(['scale', 'deployment', 'kp', '--replicas=2', '--current-replicas=3'])
  t.not(r.code, 0, 'precondition mismatch fails')
  t.equal((await get(depPath('kp'))).spec.replicas, 4)
  r = await kubectl(['scale', 'deployment', 'kp', '--replicas=2', '--current-replicas=4'])
  t.equal(r.code, 0, r.stderr)
  t.equal((await get(depPath('kp'))).spec.replicas, 2)
})

t.test('kubectl apply (strict validation) accepts the description fields of CRD schemas and PriorityClasses', async (t) => {
  const crd = `apiVersion: apiextensions.orch.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size, description: the size}
    schema:
      openAPIV3Schema:
        description: A widget.
        type: object
        externalDocs: {description: more, url: "https://example.com"}
        properties:
          spec:
            description: What the widget should be.
            type: object
            properties:
              size: {type: integer, description: How big.}
`
  let r = await kubectl(['apply', '-f', file('crd.yaml', crd)])
  t.equal(r.code, 0, r.stderr)
  const got = await get('/apis/apiextensions.orch.io/v1/customresourcedefinitions/widgets.example.com')
  const v = got.spec.versions[0]
  t.equal(v.schema.openAPIV3Schema.description, 'A widget.', 'descriptions are kept')
  t.equal(v.schema.openAPIV3Schema.properties.spec.properties.size.description, 'How big.')
  t.equal(v.schema.openAPIV3Schema.externalDocs.description, 'more')
  t.equal(v.additionalPrinterColumns[0].description, 'the size')
  r = await kubectl(['apply', '-f', file('pc.yaml', 'apiVersion: scheduling.orch.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\ndescription: For the important ones.\n')])
  t.equal(r.code, 0, r.stderr)
  t.equal((await get('/apis/scheduling.orch.io/v1/priorityclasses/high')).description, 'For the important ones.')
})

t.test('a Job created by client-side apply can move to server-side apply and be applied again: the fields the server generates (selector, template labels) belong to no manager', async (t) => {
  const job = `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: busybox
`
  const f = file('job.yaml', job)
  let r = await kubectl(['apply', '-f', f])
  t.equal(r.code, 0, r.stderr)
  const created = await get('/apis/batch/v1/namespaces/default/jobs/migrate')
  const owned = JSON.stringify(created.metadata.managedFields)
  t.ok(created.spec.selector?.matchLabels?.['batch.orch.io/controller-uid'], 'the selector was generated')
  t.notMatch(owned, /f:selector/, 'the generated selector is owned by nobody')
  t.notMatch(owned, /controller-uid/, 'the generated template labels are owned by nobody')
  t.match(owned, /f:backoffLimit/, 'defaulted fields belong to the creator, as upstream')
  r = await kubectl(['apply', '--server-side', '-f', f])
  t.equal(r.code, 0, r.stderr)
  t.notMatch(r.stderr, /failed to re-apply/, 'the migration re-applied without error')
  r = await kubectl(['apply', '--server-side', '-f', f])
  t.equal(r.code, 0, `a second server-side apply works: ${r.stderr}`)
  const after = await get('/apis/batch/v1/namespaces/default/jobs/migrate')
  t.same(after.spec.selector, created.spec.selector, 'the selector is kept')
})
