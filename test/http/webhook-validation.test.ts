// Black-box: Validating/MutatingWebhookConfiguration validation (upstream admissionregistration v1 rules).
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'
import { expectRefused } from '../helpers/refused.js'

let s: TestServer
const G = 'admissionregistration.orch.io'
const VWC = `/apis/${G}/v1/validatingwebhookconfigurations`
const MWC = `/apis/${G}/v1/mutatingwebhookconfigurations`

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

type Obj = Record<string, any>
const hook = (extra: Obj = {}) => ({
  name: 'webhook.cert-manager.io',
  clientConfig: { service: { name: 'cert-manager-webhook', namespace: 'cert-manager', path: '/validate' } },
  rules: [{ apiGroups: ['cert-manager.io', 'acme.cert-manager.io'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['*/*'] }],
  admissionReviewVersions: ['v1'], sideEffects: 'None', timeoutSeconds: 30, failurePolicy: 'Fail', matchPolicy: 'Equivalent',
  ...extra,
})
const config = (kind: string, name: string, webhooks: Obj[]) => ({ apiVersion: `${G}/v1`, kind, metadata: { name }, webhooks })
const vwc = (name: string, ...hooks: Obj[]) => config('ValidatingWebhookConfiguration', name, hooks)
const VK = `ValidatingWebhookConfiguration.${G}`
const P = 'webhooks[0]'

t.test('cert-manager-like configurations are created', async (t) => {
  let r = await s.request('POST', VWC, vwc('cert-manager-webhook', hook()))
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', MWC, config('MutatingWebhookConfiguration', 'cert-manager-webhook', [hook({ name: 'webhook.cert-manager.io', reinvocationPolicy: 'IfNeeded', clientConfig: { url: 'https://hooks.example.com:8443/mutate' } })]))
  t.equal(r.status, 201, r.text)
  t.equal(r.json.webhooks[0].reinvocationPolicy, 'IfNeeded')
})

t.test('names: fully qualified and unique', async (t) => {
  await expectRefused(t, s, VWC, vwc('short', hook({ name: 'webhook.io' })), VK, [{ field: `${P}.name`, reason: 'FieldValueInvalid', message: 'Invalid value: "webhook.io": should be a domain with at least three segments separated by dots' }])
  await expectRefused(t, s, VWC, vwc('dup', hook(), hook()), VK, [{ field: 'webhooks[1].name', reason: 'FieldValueDuplicate', message: 'Duplicate value: "webhook.cert-manager.io"' }])
})

t.test('sideEffects and admissionReviewVersions are required in v1', async (t) => {
  const h = hook()
  delete (h as any).sideEffects
  delete (h as any).admissionReviewVersions
  await expectRefused(t, s, VWC, vwc('bare', h), VK, [
    { field: `${P}.sideEffects`, reason: 'FieldValueRequired', message: 'Required value: must specify one of None, NoneOnDryRun' },
    { field: `${P}.admissionReviewVersions`, reason: 'FieldValueRequired', message: 'Required value: must specify one of v1, v1beta1' },
  ])
  await expectRefused(t, s, VWC, vwc('some', hook({ sideEffects: 'Some', admissionReviewVersions: ['v2'] })), VK, [
    { field: `${P}.sideEffects`, reason: 'FieldValueNotSupported', message: 'Unsupported value: "Some": supported values: "None", "NoneOnDryRun"' },
    { field: `${P}.admissionReviewVersions`, reason: 'FieldValueInvalid', message: 'Invalid value: []string{"v2"}: must include at least one of v1, v1beta1' },
  ])
})

t.test('clientConfig', async (t) => {
  await expectRefused(t, s, VWC, vwc('both', hook({ clientConfig: { url: 'https://a.example.com', service: { name: 's', namespace: 'n' } } })), VK, [{ field: `${P}.clientConfig`, reason: 'FieldValueRequired', message: 'Required value: exactly one of url or service is required' }])
  await expectRefused(t, s, VWC, vwc('http', hook({ clientConfig: { url: 'http://a.example.com/x?y=1#z' } })), VK, [
    { field: `${P}.clientConfig.url`, reason: 'FieldValueInvalid', message: 'Invalid value: "http": \'https\' is the only allowed URL scheme; desired format: https://host[/path]' },
    { field: `${P}.clientConfig.url`, reason: 'FieldValueInvalid', message: 'Invalid value: "z": fragments are not permitted in the URL' },
    { field: `${P}.clientConfig.url`, reason: 'FieldValueInvalid', message: 'Invalid value: "y=1": query parameters are not permitted in the URL' },
  ])
  await expectRefused(t, s, VWC, vwc('svc-path', hook({ clientConfig: { service: { name: 's', namespace: 'n', path: 'validate', port: 0 } } })), VK, [
    { field: `${P}.clientConfig.service.port`, reason: 'FieldValueInvalid', message: 'Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive' },
    { field: `${P}.clientConfig.service.path`, reason: 'FieldValueInvalid', message: 'Invalid value: "validate": must start with a \'/\'' },
  ])
})

t.test('policies, timeout and rules', async (t) => {
  await expectRefused(t, s, VWC, vwc('enums', hook({ failurePolicy: 'Retry', matchPolicy: 'Fuzzy', timeoutSeconds: 31 })), VK, [
    { field: `${P}.failurePolicy`, reason: 'FieldValueNotSupported', message: 'Unsupported value: "Retry": supported values: "Fail", "Ignore"' },
    { field: `${P}.matchPolicy`, reason: 'FieldValueNotSupported', message: 'Unsupported value: "Fuzzy": supported values: "Equivalent", "Exact"' },
    { field: `${P}.timeoutSeconds`, reason: 'FieldValueInvalid', message: 'Invalid value: 31: the timeout value must be between 1 and 30 seconds' },
  ])
  await expectRefused(t, s, VWC, vwc('rules', hook({ rules: [{ apiGroups: ['*', 'apps'], apiVersions: ['v1'], operations: ['PATCH'], resources: ['*', 'pods'], scope: 'Global' }] })), VK, [
    { field: `${P}.rules[0].operations[0]`, reason: 'FieldValueNotSupported', message: 'Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"' },
    { field: `${P}.rules[0].apiGroups`, reason: 'FieldValueInvalid', message: 'Invalid value: []string{"*", "apps"}: if \'*\' is present, must not specify other API groups' },
    { field: `${P}.rules[0].resources`, reason: 'FieldValueInvalid', message: 'Invalid value: []string{"*", "pods"}: if \'*\' is present, must not specify other resources without subresources' },
    { field: `${P}.rules[0].scope`, reason: 'FieldValueNotSupported', message: 'Unsupported value: "Global": supported values: "*", "Cluster", "Namespaced"' },
  ])
  const MK = `MutatingWebhookConfiguration.${G}`
  await expectRefused(t, s, MWC, config('MutatingWebhookConfiguration', 'reinvoke', [hook({ reinvocationPolicy: 'Always' })]), MK, [
    { field: `${P}.reinvocationPolicy`, reason: 'FieldValueNotSupported', message: 'Unsupported value: "Always": supported values: "IfNeeded", "Never"' },
  ])
})

t.test('matchConditions: qualified unique names, expressions that compile to a bool; selectors', async (t) => {
  const conds = (...c: Obj[]) => hook({ matchConditions: c })
  await expectRefused(t, s, VWC, vwc('conds', conds(
    { name: 'Bad Name', expression: 'a b' },
    { name: 'Bad Name', expression: '  ' },
    { name: '', expression: 'params.x' },
    { name: 'not-bool', expression: 'object.metadata.name' },
  )), VK, [
    { field: `${P}.matchConditions[0].expression`, reason: 'FieldValueInvalid', message: 'Invalid value: "a b": compilation failed: ERROR: <input>:1:3: Syntax error: Unexpected character: \'b\'\n | a b\n | ..^' },
    { field: `${P}.matchConditions[0].name`, reason: 'FieldValueInvalid', message: 'Invalid value: "Bad Name": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')' },
    { field: `${P}.matchConditions[1].expression`, reason: 'FieldValueRequired', message: 'Required value' },
    { field: `${P}.matchConditions[1].name`, reason: 'FieldValueInvalid', message: 'Invalid value: "Bad Name": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')' },
    { field: `${P}.matchConditions[1].name`, reason: 'FieldValueDuplicate', message: 'Duplicate value: "Bad Name"' },
    { field: `${P}.matchConditions[2].expression`, reason: 'FieldValueInvalid', message: 'Invalid value: "params.x": compilation failed: ERROR: <input>:1:1: undeclared reference to \'params\' (in container \'\')\n | params.x\n | ^' },
    { field: `${P}.matchConditions[2].name`, reason: 'FieldValueRequired', message: 'Required value' },
    { field: `${P}.matchConditions[3].expression`, reason: 'FieldValueInvalid', message: 'Invalid value: "object.metadata.name": must evaluate to bool' },
  ])
  await expectRefused(t, s, VWC, vwc('selectors', hook({ namespaceSelector: { matchExpressions: [{ key: 'a', operator: 'Near' }] } })), VK, [
    { field: `${P}.namespaceSelector.matchExpressions[0].operator`, reason: 'FieldValueInvalid', message: 'Invalid value: "Near": not a valid selector operator' },
  ])
  // Conditions that use what a webhook sees are fine.
  const ok = await s.request('POST', VWC, vwc('good-conds', conds(
    { name: 'exclude-leases', expression: 'request.resource.resource != "leases"' },
    { name: 'example.com/has-object', expression: 'object != null && authorizer.group("").resource("pods").check("get").allowed()' },
  )))
  t.equal(ok.status, 201, ok.text)
})
