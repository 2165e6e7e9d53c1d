// Black-box: CustomResourceDefinitions served — names accepted and Established, the custom resources through kubectl
// v1.32 (apply, get with printer columns and short names, patch, delete, api-resources), the exact Status errors of
// schema violations and strategic merge patch, pruning and defaults, the status and scale sub-resources, a
// @kubernetes/client-node watch, and the CRD's deletion removing its custom resources.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { KubeConfig, Watch } from '@kubernetes/client-node'
import { startServer, type TestServer } from '../helpers/server.js'
import { runKubectl } from '../helpers/kubectl.js'

type Test = import('tap').Test
let s: TestServer
const home = mkdtempSync(join(tmpdir(), 'orch-crd-home-'))
const kubectl = (args: string[], stdin?: string) => runKubectl(s.kubeconfig, home, args, { stdin })

const CRDS = '/apis/apiextensions.orch.io/v1/customresourcedefinitions'
const CT = '/apis/stable.example.com/v1/namespaces/default/crontabs'
const MERGE = { 'content-type': 'application/merge-patch+json' }

t.before(async () => { s = await startServer({ secure: true }) })
t.teardown(async () => { await s?.stop(); rmSync(home, { recursive: true, force: true }) })

export function cronTabCrd(name = 'crontabs', group = 'stable.example.com', kind = 'CronTab'): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.orch.io/v1', kind: 'CustomResourceDefinition',
    metadata: { name: `${name}.${group}` },
    spec: {
      group, scope: 'Namespaced',
      names: { plural: name, singular: kind.toLowerCase(), kind, shortNames: ['ct'], categories: ['all'] },
      versions: [{
        name: 'v1', served: true, storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['cronSpec'],
                properties: {
                  cronSpec: { type: 'string', pattern: '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$' },
                  image: { type: 'string', maxLength: 20 },
                  replicas: { type: 'integer', minimum: 1, maximum: 10, default: 1 },
                  color: { type: 'string', enum: ['red', 'blue'] },
                  tags: { type: 'array', maxItems: 2, items: { type: 'string' } },
                  free: { type: 'object', 'x-orch-preserve-unknown-fields': true },
                },
              },
              status: { type: 'object', properties: { replicas: { type: 'integer' }, labelSelector: { type: 'string' }, phase: { type: 'string' } } },
            },
          },
        },
        subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.labelSelector' } },
        additionalPrinterColumns: [
          { name: 'Spec', type: 'string', jsonPath: '.spec.cronSpec' },
          { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          { name: 'Phase', type: 'string', jsonPath: '.status.phase', priority: 1 },
        ],
      }],
    },
  }
}

export async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v !== undefined) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

const cronTab = (name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name }, spec: { cronSpec: '* * * * */5', image: 'my-cron', ...spec } })

async function invalid(t: Test, body: unknown, message: string, causes: Array<{ reason: string; field: string }>): Promise<void> {
  const r = await s.request('POST', CT, body)
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.reason, 'Invalid')
  t.equal(r.json?.message, message)
  t.same(r.json?.details?.causes?.map((c: any) => ({ reason: c.reason, field: c.field })), causes)
  t.equal(r.json?.details?.group, 'stable.example.com')
  t.equal(r.json?.details?.kind, 'CronTab')
}

t.test('kubectl apply of a CRD: names accepted, Established, the type discovered', async (t) => {
  const yaml = JSON.stringify(cronTabCrd())
  const a = await kubectl(['apply', '-f', '-'], yaml)
  t.equal(a.code, 0, a.stderr)
  t.match(a.stdout, /customresourcedefinition.apiextensions.orch.io\/crontabs.stable.example.com created/)
  const crd = await waitFor('Established', async () => {
    const r = await s.request('GET', `${CRDS}/crontabs.stable.example.com`)
    return r.json?.status?.conditions?.some((c: any) => c.type === 'Established' && c.status === 'True') ? r.json : undefined
  })
  const cond = (type: string) => crd.status.conditions.find((c: any) => c.type === type)
  t.match(cond('NamesAccepted'), { status: 'True', reason: 'NoConflicts', message: 'no conflicts found' })
  t.match(cond('Established'), { status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' })
  t.same(crd.status.acceptedNames, { plural: 'crontabs', singular: 'crontab', shortNames: ['ct'], kind: 'CronTab', listKind: 'CronTabList', categories: ['all'] })
  t.same(crd.status.storedVersions, ['v1'])

  const g = await s.request('GET', '/apis/stable.example.com')
  t.equal(g.status, 200, g.text)
  t.same(g.json.versions, [{ groupVersion: 'stable.example.com/v1', version: 'v1' }])
  const rl = await s.request('GET', '/apis/stable.example.com/v1')
  t.equal(rl.status, 200, rl.text)
  const main = rl.json.resources.find((r: any) => r.name === 'crontabs')
  t.match(main, { name: 'crontabs', singularName: 'crontab', namespaced: true, kind: 'CronTab', shortNames: ['ct'], categories: ['all'] })
  t.same(main.verbs, ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'])
  t.ok(rl.json.resources.some((r: any) => r.name === 'crontabs/status'))
  t.match(rl.json.resources.find((r: any) => r.name === 'crontabs/scale'), { group: 'autoscaling', version: 'v1', kind: 'Scale' })
  const apis = await s.request('GET', '/apis')
  t.ok(apis.json.groups.some((x: any) => x.name === 'stable.example.com'))

  const ar = await kubectl(['api-resources', '--api-group', 'stable.example.com'])
  t.equal(ar.code, 0, ar.stderr)
  t.match(ar.stdout, /crontabs\s+ct\s+stable\.example\.com\/v1\s+true\s+CronTab/)
})

t.test('kubectl: apply, get with printer columns and the short name, patch, delete', async (t) => {
  const a = await kubectl(['apply', '-f', '-'], JSON.stringify(cronTab('my-new-cron-object')))
  t.equal(a.code, 0, a.stderr)
  t.match(a.stdout, /crontab.stable.example.com\/my-new-cron-object created/)
  let g = await kubectl(['get', 'crontabs'])
  t.equal(g.code, 0, g.stderr)
  t.match(g.stdout, /^NAME\s+SPEC\s+REPLICAS\s+AGE\n/)
  t.match(g.stdout, /my-new-cron-object\s+\* \* \* \* \*\/5\s+1\s+\d+s/)
  // -o wide adds the priority-1 column; nothing at its path is a null cell (kubectl prints it empty).
  g = await kubectl(['get', 'crontabs', '-o', 'wide'])
  t.equal(g.code, 0, g.stderr)
  t.match(g.stdout, /^NAME\s+SPEC\s+REPLICAS\s+AGE\s+PHASE\n/)
  t.match(g.stdout, /my-new-cron-object\s+\* \* \* \* \*\/5\s+1\s+\d+s\s*\n/)
  const tbl = await s.request('GET', CT, undefined, { accept: 'application/json;as=Table;g=meta.k8s.io;v=v1' })
  t.same(tbl.json.columnDefinitions.map((c: any) => [c.name, c.type, c.format, c.priority]), [['Name', 'string', 'name', 0], ['Spec', 'string', '', 0], ['Replicas', 'integer', '', 0], ['Age', 'date', '', 0], ['Phase', 'string', '', 1]])
  t.equal(tbl.json.columnDefinitions[1].description, 'Custom resource definition column (in JSONPath format): .spec.cronSpec')
  t.same(tbl.json.rows[0].cells.slice(0, 3), ['my-new-cron-object', '* * * * */5', 1])
  t.equal(tbl.json.rows[0].cells[4], null)
  g = await kubectl(['get', 'ct', 'my-new-cron-object', '-o', 'jsonpath={.spec.replicas}'])
  t.equal(g.code, 0, g.stderr)
  t.equal(g.stdout, '1', 'the default was filled')
  const p = await kubectl(['patch', 'crontab', 'my-new-cron-object', '--type', 'merge', '-p', '{"spec":{"replicas":3}}'])
  t.equal(p.code, 0, p.stderr)
  t.match(p.stdout, /crontab.stable.example.com\/my-new-cron-object patched/)
  g = await kubectl(['get', 'ct'])
  t.match(g.stdout, /my-new-cron-object\s+\* \* \* \* \*\/5\s+3\s+/)
  // A second apply changes through a merge patch (no strategic merge for custom resources).
  const a2 = await kubectl(['apply', '-f', '-'], JSON.stringify(cronTab('my-new-cron-object', { image: 'other' })))
  t.equal(a2.code, 0, a2.stderr)
  t.match(a2.stdout, /configured/)
  const sp = await kubectl(['patch', 'crontab', 'my-new-cron-object', '--type', 'strategic', '-p', '{"spec":{"replicas":4}}'])
  t.not(sp.code, 0)
  t.match(sp.stderr, /the body of the request was in an unknown format - accepted media types include: application\/json-patch\+json, application\/merge-patch\+json, application\/apply-patch\+yaml/)
  const d = await kubectl(['delete', 'ct', 'my-new-cron-object'])
  t.equal(d.code, 0, d.stderr)
  t.match(d.stdout, /crontab.stable.example.com "my-new-cron-object" deleted/)
  t.equal((await s.request('GET', `${CT}/my-new-cron-object`)).status, 404)
})

t.test('schema violations: 422 with upstream texts and field paths', async (t) => {
  await invalid(t, cronTab('bad-type', { image: 3 }),
    'CronTab.stable.example.com "bad-type" is invalid: spec.image: Invalid value: "integer": spec.image in body must be of type string: "integer"',
    [{ reason: 'FieldValueTypeInvalid', field: 'spec.image' }])
  // The replicas of the scale sub-resource are checked again by its own rule (upstream's ValidateScaleSpec).
  await invalid(t, cronTab('bad-replicas', { replicas: 'three' }),
    'CronTab.stable.example.com "bad-replicas" is invalid: [spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string", .spec.replicas: Invalid value: 0: .spec.replicas accessor error: three is of the type string, expected int64]',
    [{ reason: 'FieldValueTypeInvalid', field: 'spec.replicas' }, { reason: 'FieldValueInvalid', field: '.spec.replicas' }])
  await invalid(t, { apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'no-spec' }, spec: { image: 'x' } },
    'CronTab.stable.example.com "no-spec" is invalid: spec.cronSpec: Required value',
    [{ reason: 'FieldValueRequired', field: 'spec.cronSpec' }])
  await invalid(t, cronTab('bad-enum', { color: 'green' }),
    'CronTab.stable.example.com "bad-enum" is invalid: spec.color: Unsupported value: "green": supported values: "red", "blue"',
    [{ reason: 'FieldValueNotSupported', field: 'spec.color' }])
  await invalid(t, cronTab('bad-pattern', { cronSpec: 'often' }),
    'CronTab.stable.example.com "bad-pattern" is invalid: spec.cronSpec: Invalid value: "often": spec.cronSpec in body should match \'^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$\'',
    [{ reason: 'FieldValueInvalid', field: 'spec.cronSpec' }])
  await invalid(t, cronTab('too-many', { replicas: 11 }),
    'CronTab.stable.example.com "too-many" is invalid: spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10',
    [{ reason: 'FieldValueInvalid', field: 'spec.replicas' }])
  await invalid(t, cronTab('too-few', { replicas: 0 }),
    'CronTab.stable.example.com "too-few" is invalid: spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1',
    [{ reason: 'FieldValueInvalid', field: 'spec.replicas' }])
  await invalid(t, cronTab('too-long', { image: 'x'.repeat(21) }),
    'CronTab.stable.example.com "too-long" is invalid: spec.image: Too long: may not be more than 20 bytes',
    [{ reason: 'FieldValueTooLong', field: 'spec.image' }])
  await invalid(t, cronTab('many-tags', { tags: ['a', 'b', 'c'] }),
    'CronTab.stable.example.com "many-tags" is invalid: spec.tags: Too many: 3: must have at most 2 items',
    [{ reason: 'FieldValueTooMany', field: 'spec.tags' }])
  await invalid(t, cronTab('Bad_Name'),
    'CronTab.stable.example.com "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')',
    [{ reason: 'FieldValueInvalid', field: 'metadata.name' }])
  await invalid(t, { ...cronTab('Two_Errors', { color: 'green' }), metadata: { name: 'Two_Errors' } },
    'CronTab.stable.example.com "Two_Errors" is invalid: [metadata.name: Invalid value: "Two_Errors": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\'), spec.color: Unsupported value: "green": supported values: "red", "blue"]',
    [{ reason: 'FieldValueInvalid', field: 'metadata.name' }, { reason: 'FieldValueNotSupported', field: 'spec.color' }])
  // Another kind in the body: upstream's ValidateTypeMeta.
  await invalid(t, { ...cronTab('other-kind'), kind: 'CronJob' },
    'CronTab.stable.example.com "other-kind" is invalid: kind: Invalid value: "CronJob": must be CronTab',
    [{ reason: 'FieldValueInvalid', field: 'kind' }])
  for (const n of ['bad-type', 'no-spec', 'bad-enum', 'too-many', 'other-kind']) t.equal((await s.request('GET', `${CT}/${n}`)).status, 404)
})

t.test('unknown fields are pruned (warned about), defaults filled, preserve-unknown-fields kept', async (t) => {
  const r = await s.request('POST', CT, { ...cronTab('pruned', { extra: 1, free: { anything: { goes: true } } }), junk: 'x' })
  t.equal(r.status, 201, r.text)
  t.equal(r.json.spec.extra, undefined)
  t.equal(r.json.junk, undefined)
  t.same(r.json.spec.free, { anything: { goes: true } })
  t.equal(r.json.spec.replicas, 1)
  const warn = ([] as string[]).concat(r.headers['warning'] as string | string[] ?? []).join('\n')
  t.match(warn, /unknown field \\"spec\.extra\\"/)
  t.match(warn, /unknown field \\"junk\\"/)
  const strict = await s.request('POST', `${CT}?fieldValidation=Strict`, { ...cronTab('strict', { extra: 1 }) })
  t.equal(strict.status, 400, strict.text)
  t.equal(strict.json.message, 'CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: unknown field "spec.extra"')
  const got = await s.request('GET', `${CT}/pruned`)
  t.equal(got.json.spec.extra, undefined)
  t.equal(got.json.metadata.generation, 1)
})

t.test('strategic merge patch: 415 with the accepted types; protobuf is not served', async (t) => {
  const r = await s.request('PATCH', `${CT}/pruned`, { spec: { replicas: 2 } }, { 'content-type': 'application/strategic-merge-patch+json' })
  t.equal(r.status, 415, r.text)
  t.same(r.json, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    reason: 'UnsupportedMediaType', code: 415,
  })
  const pb = await s.request('GET', `${CT}/pruned`, undefined, { accept: 'application/vnd.kubernetes.protobuf' })
  t.equal(pb.status, 406, pb.text)
  const both = await s.request('GET', `${CT}/pruned`, undefined, { accept: 'application/vnd.kubernetes.protobuf, application/json' })
  t.equal(both.status, 200)
  t.match(String(both.headers['content-type']), /^application\/json/)
  t.equal(both.json.metadata.name, 'pruned')
  const list = await s.request('GET', CT, undefined, { accept: 'application/vnd.kubernetes.protobuf,application/json' })
  t.equal(list.status, 200)
  t.equal(list.json.kind, 'CronTabList')
  t.equal(list.json.apiVersion, 'stable.example.com/v1')
})

t.test('status sub-resource: main writes ignore status, status writes ignore the rest', async (t) => {
  let r = await s.request('POST', CT, { ...cronTab('split'), status: { phase: 'Set' } })
  t.equal(r.status, 201, r.text)
  t.equal(r.json.status, undefined, 'status dropped on create')
  const rv = r.json.metadata.resourceVersion
  r = await s.request('PUT', `${CT}/split/status`, { ...cronTab('split', { replicas: 7 }), metadata: { name: 'split', resourceVersion: rv }, status: { phase: 'Running', replicas: 2 } })
  t.equal(r.status, 200, r.text)
  t.same(r.json.status, { phase: 'Running', replicas: 2 })
  t.equal(r.json.spec.replicas, 1, 'spec unchanged by the status write')
  t.equal(r.json.metadata.generation, 1)
  r = await s.request('PATCH', `${CT}/split`, { spec: { replicas: 5 }, status: { phase: 'Ignored' } }, MERGE)
  t.equal(r.status, 200, r.text)
  t.equal(r.json.spec.replicas, 5)
  t.equal(r.json.status.phase, 'Running', 'status unchanged by the main write')
  t.equal(r.json.metadata.generation, 2)
  r = await s.request('PATCH', `${CT}/split/status`, { status: { replicas: 'x' } }, MERGE)
  t.equal(r.status, 422, r.text)
  // Checked against the status schema alone: the path is under status, the text names it from there.
  t.equal(r.json.message, 'CronTab.stable.example.com "split" is invalid: [status.replicas: Invalid value: "string": replicas in body must be of type integer: "string", .status.replicas: Invalid value: 0: .status.replicas accessor error: x is of the type string, expected int64]')
  // An update without a resourceVersion is refused (upstream's custom resources allow no unconditional update).
  r = await s.request('PUT', `${CT}/split`, cronTab('split'))
  t.equal(r.status, 422, r.text)
  t.equal(r.json.message, 'CronTab.stable.example.com "split" is invalid: metadata.resourceVersion: Invalid value: "0x0": must be specified for an update')
})

t.test('scale sub-resource', async (t) => {
  await s.request('PATCH', `${CT}/split/status`, { status: { replicas: 4, labelSelector: 'app=cron' } }, MERGE)
  let r = await s.request('GET', `${CT}/split/scale`)
  t.equal(r.status, 200, r.text)
  t.match(r.json, { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: { name: 'split', namespace: 'default' }, spec: { replicas: 5 }, status: { replicas: 4, selector: 'app=cron' } })
  r = await s.request('PATCH', `${CT}/split/scale`, { spec: { replicas: 8 } }, MERGE)
  t.equal(r.status, 200, r.text)
  t.equal(r.json.spec.replicas, 8)
  r = await s.request('GET', `${CT}/split`)
  t.equal(r.json.spec.replicas, 8)
  const k = await kubectl(['scale', 'crontab', 'split', '--replicas', '2'])
  t.equal(k.code, 0, k.stderr)
  r = await s.request('GET', `${CT}/split`)
  t.equal(r.json.spec.replicas, 2)
})

t.test('a client-node watch sees ADDED, MODIFIED and DELETED', async (t) => {
  const kc = new KubeConfig()
  kc.loadFromOptions({
    clusters: [{ name: 'orch', server: s.url, skipTLSVerify: true }],
    users: [{ name: 'admin', token: s.adminToken }],
    contexts: [{ name: 'orch', cluster: 'orch', user: 'admin' }],
    currentContext: 'orch',
  })
  const seen: string[] = []
  const w = new Watch(kc)
  const req = await w.watch(CT, { resourceVersion: (await s.request('GET', CT)).json.metadata.resourceVersion }, (type: string, obj: any) => { seen.push(`${type} ${obj.metadata.name}`) }, () => {})
  await s.request('POST', CT, cronTab('watched'))
  await s.request('PATCH', `${CT}/watched`, { spec: { replicas: 2 } }, MERGE)
  await s.request('DELETE', `${CT}/watched`)
  await waitFor('three events', async () => (seen.length >= 3 ? true : undefined))
  req.abort()
  t.same(seen, ['ADDED watched', 'MODIFIED watched', 'DELETED watched'])
})

t.test('names conflicting with another CRD of the group are not accepted', async (t) => {
  const r = await s.request('POST', CRDS, cronTabCrd('crontabs2', 'stable.example.com', 'CronTab'))
  t.equal(r.status, 201, r.text)
  const crd = await waitFor('NamesAccepted', async () => {
    const g = await s.request('GET', `${CRDS}/crontabs2.stable.example.com`)
    return g.json?.status?.conditions?.some((c: any) => c.type === 'NamesAccepted') ? g.json : undefined
  })
  const cond = (type: string) => crd.status.conditions.find((c: any) => c.type === type)
  // Kind and list kind both conflict: as upstream, the last check's reason stands.
  t.match(cond('NamesAccepted'), { status: 'False', reason: 'ListKindConflict', message: '"CronTabList" is already in use' })
  t.match(cond('Established'), { status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' })
  t.equal((await s.request('GET', '/apis/stable.example.com/v1/namespaces/default/crontabs2')).status, 404)
  t.equal((await s.request('DELETE', `${CRDS}/crontabs2.stable.example.com`)).status, 200)
})

t.test('deleting the CRD deletes its custom resources, then the CRD; the path is gone', async (t) => {
  t.equal((await s.request('POST', CT, cronTab('doomed'))).status, 201)
  const r = await s.request('DELETE', `${CRDS}/crontabs.stable.example.com`)
  t.equal(r.status, 200, r.text)
  t.equal(r.json.kind, 'CustomResourceDefinition')
  t.ok(r.json.metadata.deletionTimestamp)
  t.same(r.json.metadata.finalizers, ['customresourcecleanup.apiextensions.orch.io'])
  t.match(r.json.status.conditions.find((c: any) => c.type === 'Terminating'), { status: 'True', reason: 'InstanceDeletionPending', message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon' })
  await waitFor('CRD gone', async () => ((await s.request('GET', `${CRDS}/crontabs.stable.example.com`)).status === 404 ? true : undefined))
  t.equal((await s.request('GET', `${CT}/doomed`)).status, 404)
  const g = await s.request('GET', '/apis/stable.example.com/v1')
  t.equal(g.status, 404)
  // Created again, it starts empty.
  t.equal((await s.request('POST', CRDS, cronTabCrd())).status, 201)
  await waitFor('served again', async () => ((await s.request('GET', CT)).status === 200 ? true : undefined))
  t.same((await s.request('GET', CT)).json.items, [])
})

t.test('a server with two front-ends serves the custom resources from both', async (t) => {
  const s2 = await startServer({ args: ['--frontends', '2'] })
  t.teardown(() => s2.stop())
  t.equal((await s2.request('POST', CRDS, cronTabCrd())).status, 201)
  await waitFor('served', async () => ((await s2.request('GET', CT)).status === 200 ? true : undefined))
  t.equal((await s2.request('POST', CT, cronTab('both'))).status, 201)
  // Each request on a new connection: SO_REUSEPORT spreads them over both front-ends.
  let ok = 0
  for (let i = 0; i < 20; i++) {
    const r = await s2.request('GET', `${CT}/both`, undefined, { connection: 'close' })
    if (r.status === 200 && r.json.spec.replicas === 1) ok++
  }
  t.equal(ok, 20)
})

t.test('CRD validation: group, scope, names, versions and schemas', async (t) => {
  const base = cronTabCrd('things', 'valid.example.com', 'Thing') as any
  const withSpec = (spec: Record<string, unknown>) => ({ ...base, spec: { ...base.spec, ...spec } })
  const bad = async (body: unknown, message: string) => {
    const r = await s.request('POST', CRDS, body)
    t.equal(r.status, 422, r.text)
    t.equal(r.json?.reason, 'Invalid')
    t.equal(r.json?.message, message)
  }
  await bad(withSpec({ scope: 'Galaxy' }), 'CustomResourceDefinition.apiextensions.orch.io "things.valid.example.com" is invalid: spec.scope: Unsupported value: "Galaxy": supported values: "Cluster", "Namespaced"')
  await bad({ ...withSpec({ group: 'nodots' }), metadata: { name: 'things.nodots' } }, 'CustomResourceDefinition.apiextensions.orch.io "things.nodots" is invalid: spec.group: Invalid value: "nodots": should be a domain with at least one dot')
  await bad(withSpec({ names: { plural: 'things', singular: 'thing', kind: 'Thing', listKind: 'Thing' } }), 'CustomResourceDefinition.apiextensions.orch.io "things.valid.example.com" is invalid: spec.names.listKind: Invalid value: "Thing": kind and listKind may not be the same')
  await bad(withSpec({ versions: [{ name: 'v1', served: true, storage: true }] }), 'CustomResourceDefinition.apiextensions.orch.io "things.valid.example.com" is invalid: spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required')
  const r = await s.request('POST', CRDS, withSpec({ versions: [{ name: 'v1', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object' } } }] }))
  t.equal(r.status, 422, r.text)
  t.match(r.json?.message, /^CustomResourceDefinition\.apiextensions\.orch\.io "things\.valid\.example\.com" is invalid: spec\.versions: Invalid value: .*: must have exactly one version marked as storage version$/)
  t.equal((await s.request('GET', `${CRDS}/things.valid.example.com`)).status, 404)
})
