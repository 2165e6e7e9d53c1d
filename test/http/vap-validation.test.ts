// Black-box: ValidatingAdmissionPolicy and its binding are validated as upstream does, CEL expressions compiled at write time.
import t, { type Test } from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'

let s: TestServer
const G = 'admissionregistration.orch.io'
const VAPS = `/apis/${G}/v1/validatingadmissionpolicies`
const BINDINGS = `/apis/${G}/v1/validatingadmissionpolicybindings`

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

const rules = [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] }]
const policy = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: `${G}/v1`, kind: 'ValidatingAdmissionPolicy', metadata: { name },
  spec: { matchConstraints: { resourceRules: rules }, validations: [{ expression: 'object.spec.replicas <= 5' }], ...spec },
})
const binding = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: `${G}/v1`, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name },
  spec: { policyName: 'replica-limit', validationActions: ['Deny'], ...spec },
})

/** Posts an object that must be refused with exactly these causes, in this order, and checks nothing was stored. */
async function refused(t: Test, base: string, kind: string, body: any, causes: Array<[string, string]>): Promise<void> {
  const name = body.metadata.name
  const r = await s.request('POST', base, body)
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.reason, 'Invalid')
  t.same({ ...r.json?.details, causes: undefined }, { name, group: G, kind, causes: undefined })
  t.same(r.json?.details?.causes?.map((c: any) => `${c.field}: ${c.message}`), causes.map(([f, m]) => `${f}: ${m}`))
  const lines = causes.map(([f, m]) => `${f}: ${m}`)
  t.equal(r.json?.message, `${kind}.${G} "${name}" is invalid: ${lines.length === 1 ? lines[0] : `[${lines.join(', ')}]`}`)
  t.equal((await s.request('GET', `${base}/${name}`)).status, 404, 'nothing stored')
}

const refusedPolicy = (t: Test, name: string, spec: Record<string, unknown>, causes: Array<[string, string]>) => refused(t, VAPS, 'ValidatingAdmissionPolicy', policy(name, spec), causes)
const refusedBinding = (t: Test, name: string, spec: Record<string, unknown>, causes: Array<[string, string]>) => refused(t, BINDINGS, 'ValidatingAdmissionPolicyBinding', binding(name, spec), causes)

t.test('typical policies and bindings are accepted', async (t) => {
  let r = await s.request('POST', VAPS, policy('replica-limit', {
    failurePolicy: 'Fail',
    validations: [{ expression: 'object.spec.replicas <= 5', message: 'at most 5 replicas', reason: 'Invalid' }],
  }))
  t.equal(r.status, 201, r.text)
  t.same(r.json?.spec?.matchConstraints, { resourceRules: rules.map((x) => ({ ...x, scope: '*' })), matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {} })
  r = await s.request('POST', VAPS, policy('rich', {
    paramKind: { apiVersion: 'rules.example.com/v1', kind: 'ReplicaLimit' },
    matchConditions: [{ name: 'exclude-leases', expression: 'request.resource.resource != "leases"' }, { name: 'example.com/not-kube-system', expression: 'namespaceObject == null || namespaceObject.metadata.name != "kube-system"' }],
    variables: [{ name: 'replicas', expression: 'object.spec.replicas' }, { name: 'limit', expression: 'params.maxReplicas' }],
    validations: [
      { expression: 'variables.replicas <= variables.limit', messageExpression: '"replicas must be at most " + string(variables.limit)', reason: 'Forbidden' },
      { expression: 'object.spec.template.spec.containers.all(c, c.image.startsWith("registry.example.com/"))', message: 'images from the registry only' },
      { expression: 'object.?metadata.labels.team.hasValue() || has(object.metadata.annotations)' },
      { expression: 'object.spec.replicas > 0\n  && object.spec.replicas < 100', message: 'between 1 and 99' },
      { expression: 'authorizer.group("apps").resource("deployments").namespace(object.metadata.namespace).check("scale").allowed()', reason: 'Unauthorized' },
    ],
    auditAnnotations: [{ key: 'high-replicas', valueExpression: '"replicas " + string(object.spec.replicas)' }, { key: 'none', valueExpression: 'null' }],
  }))
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', BINDINGS, binding('replica-limit-binding', { matchResources: { namespaceSelector: { matchLabels: { environment: 'test' } } } }))
  t.equal(r.status, 201, r.text)
  t.same(r.json?.spec?.matchResources, { namespaceSelector: { matchLabels: { environment: 'test' } }, objectSelector: {}, matchPolicy: 'Equivalent' })
  r = await s.request('POST', BINDINGS, binding('with-params', { policyName: 'rich', validationActions: ['Warn', 'Audit'], paramRef: { name: 'limits', namespace: 'default', parameterNotFoundAction: 'Deny' } }))
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', BINDINGS, binding('with-selector', { policyName: 'rich', paramRef: { selector: { matchLabels: { tier: 'a' } }, parameterNotFoundAction: 'Allow' } }))
  t.equal(r.status, 201, r.text)
})

t.test('CEL expressions are compiled: syntax errors in cel-go layout', async (t) => {
  const expr = 'object.spec.replicas <='
  await refusedPolicy(t, 'syntax', { validations: [{ expression: expr }] }, [
    ['spec.validations[0].expression', `Invalid value: "object.spec.replicas <=": compilation failed: ERROR: <input>:1:24: Syntax error: Unexpected token: EOF\n | object.spec.replicas <=\n | .......................^`],
  ])
  await refusedPolicy(t, 'syntax-everywhere', {
    validations: [{ expression: 'true', messageExpression: '"a" +' }],
    auditAnnotations: [{ key: 'k', valueExpression: '  1 +* 2' }],
    matchConditions: [{ name: 'm', expression: 'a b' }],
    variables: [{ name: 'v', expression: '(1' }],
  }, [
    ['spec.matchConditions[0].expression', 'Invalid value: "a b": compilation failed: ERROR: <input>:1:3: Syntax error: Unexpected character: \'b\'\n | a b\n | ..^'],
    ['spec.variables[0].expression', 'Invalid value: "(1": compilation failed: ERROR: <input>:1:3: Syntax error: Expected RPAREN, got EOF\n | (1\n | ..^'],
    ['spec.validations[0].messageExpression', 'Invalid value: "\\"a\\" +": compilation failed: ERROR: <input>:1:6: Syntax error: Unexpected token: EOF\n | "a" +\n | .....^'],
    ['spec.auditAnnotations[0].valueExpression', 'Invalid value: "  1 +* 2": compilation failed: ERROR: <input>:1:4: Syntax error: Unexpected token: MULTIPLY\n | 1 +* 2\n | ...^'],
  ])
})

t.test('CEL: undeclared references and result types', async (t) => {
  await refusedPolicy(t, 'undeclared', {
    validations: [
      { expression: 'params.max > 1' },
      { expression: 'variables.x' },
      { expression: 'object.spec.items.all(i, i.size > limit)' },
      { expression: 'object.spec.replicas' },
      { expression: 'true', messageExpression: 'authorizer.group("")' },
      { expression: 'true', messageExpression: '1 + 2' },
    ],
    auditAnnotations: [{ key: 'k', valueExpression: 'object.spec.replicas > 1' }],
  }, [
    ['spec.validations[0].expression', 'Invalid value: "params.max > 1": compilation failed: ERROR: <input>:1:1: undeclared reference to \'params\' (in container \'\')\n | params.max > 1\n | ^'],
    ['spec.validations[1].expression', 'Invalid value: "variables.x": compilation failed: ERROR: <input>:1:1: undeclared reference to \'variables\' (in container \'\')\n | variables.x\n | ^'],
    ['spec.validations[2].expression', 'Invalid value: "object.spec.items.all(i, i.size > limit)": compilation failed: ERROR: <input>:1:35: undeclared reference to \'limit\' (in container \'\')\n | object.spec.items.all(i, i.size > limit)\n | ..................................^'],
    ['spec.validations[3].expression', 'Invalid value: "object.spec.replicas": must evaluate to bool'],
    ['spec.validations[4].messageExpression', 'Invalid value: "authorizer.group(\\"\\")": compilation failed: ERROR: <input>:1:1: undeclared reference to \'authorizer\' (in container \'\')\n | authorizer.group("")\n | ^'],
    ['spec.validations[5].messageExpression', 'Invalid value: "1 + 2": must evaluate to string'],
    ['spec.auditAnnotations[0].valueExpression', 'Invalid value: "object.spec.replicas > 1": must evaluate to one of [string null_type]'],
  ])
})

t.test('policy fields: required, enums, names, keys', async (t) => {
  await refusedPolicy(t, 'empty', { matchConstraints: undefined, validations: [] }, [
    ['spec.matchConstraints', 'Required value'],
    ['spec.validations', 'Required value: validations or auditAnnotations must contain at least one item'],
    ['spec.auditAnnotations', 'Required value: validations or auditAnnotations must contain at least one item'],
  ])
  await refusedPolicy(t, 'enums', {
    failurePolicy: 'Sometimes',
    matchConstraints: { matchPolicy: 'Fuzzy', resourceRules: [] },
    validations: [{ expression: ' ', message: 'a\nb', reason: 'Teapot' }, { expression: 'true', message: '  ', messageExpression: ' ' }, { expression: 'true &&\n true' }],
  }, [
    ['spec.failurePolicy', 'Unsupported value: "Sometimes": supported values: "Fail", "Ignore"'],
    ['spec.matchConstraints.matchPolicy', 'Unsupported value: "Fuzzy": supported values: "Equivalent", "Exact"'],
    ['spec.matchConstraints.resourceRules', 'Required value'],
    ['spec.validations[0].expression', 'Required value: expression is not specified'],
    ['spec.validations[0].message', 'Invalid value: "a\\nb": message must not contain line breaks'],
    ['spec.validations[0].reason', 'Unsupported value: "Teapot": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge", "Unauthorized"'],
    ['spec.validations[1].messageExpression', 'Invalid value: " ": must be non-empty if specified'],
    ['spec.validations[1].message', 'Invalid value: "  ": message must be non-empty if specified'],
    ['spec.validations[2].message', 'Required value: message must be specified if expression contains line breaks'],
  ])
  await refusedPolicy(t, 'rules', {
    matchConstraints: { resourceRules: [
      { apiGroups: ['*', 'apps'], apiVersions: ['v1', ''], operations: ['*', 'PATCH'], resources: ['*', 'pods'], scope: 'Everywhere', resourceNames: ['a/b', 'x', 'x'] },
      { apiGroups: [], apiVersions: ['*', 'v1'], operations: [], resources: ['*/*', 'pods/*', 'pods/log'] },
    ] },
  }, [
    ['spec.matchConstraints.resourceRules[0].resourceNames[0]', 'Invalid value: "a/b": may not contain \'/\''],
    ['spec.matchConstraints.resourceRules[0].resourceNames[2]', 'Duplicate value: "x"'],
    ['spec.matchConstraints.resourceRules[0].operations', 'Invalid value: []admissionregistration.OperationType{"*", "PATCH"}: if \'*\' is present, must not specify other operations'],
    ['spec.matchConstraints.resourceRules[0].operations[1]', 'Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"'],
    ['spec.matchConstraints.resourceRules[0].apiGroups', 'Invalid value: []string{"*", "apps"}: if \'*\' is present, must not specify other API groups'],
    ['spec.matchConstraints.resourceRules[0].apiVersions[1]', 'Required value'],
    ['spec.matchConstraints.resourceRules[0].resources', 'Invalid value: []string{"*", "pods"}: if \'*\' is present, must not specify other resources without subresources'],
    ['spec.matchConstraints.resourceRules[0].scope', 'Unsupported value: "Everywhere": supported values: "*", "Cluster", "Namespaced"'],
    ['spec.matchConstraints.resourceRules[1].operations', 'Required value'],
    ['spec.matchConstraints.resourceRules[1].apiGroups', 'Required value'],
    ['spec.matchConstraints.resourceRules[1].apiVersions', 'Invalid value: []string{"*", "v1"}: if \'*\' is present, must not specify other API versions'],
    ['spec.matchConstraints.resourceRules[1].resources[1]', 'Invalid value: "pods/*": if \'*/*\' is present, must not specify pods/*'],
    ['spec.matchConstraints.resourceRules[1].resources[2]', 'Invalid value: "pods/log": if \'pods/*\' is present, must not specify pods/log'],
    ['spec.matchConstraints.resourceRules[1].resources', 'Invalid value: []string{"*/*", "pods/*", "pods/log"}: if \'*/*\' is present, must not specify other resources'],
  ])
  const many = Array.from({ length: 65 }, (_, i) => ({ name: `c${i}`, expression: 'true' }))
  await refusedPolicy(t, 'conditions', { matchConditions: [...many.slice(0, 63), { name: 'c1', expression: 'true' }, { name: 'bad name', expression: ' ' }] }, [
    ['spec.matchConditions', 'Too many: 65: must have at most 64 items'],
    ['spec.matchConditions[63].name', 'Duplicate value: "c1"'],
    ['spec.matchConditions[64].expression', 'Required value'],
    ['spec.matchConditions[64].name', 'Invalid value: "bad name": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')'],
  ])
  await refusedPolicy(t, 'variables', { variables: [{ name: 'in', expression: '1' }, { name: '', expression: '' }, { name: 'a-b', expression: '1' }, { name: 'x', expression: '1' }, { name: 'x', expression: '2' }] }, [
    ['spec.variables[0].name', 'Invalid value: "in": name is not a valid CEL identifier'],
    ['spec.variables[1].name', 'Required value: name is not specified'],
    ['spec.variables[1].expression', 'Required value: expression is not specified'],
    ['spec.variables[2].name', 'Invalid value: "a-b": name is not a valid CEL identifier'],
    ['spec.variables[4].name', 'Duplicate value: "x"'],
  ])
  await refusedPolicy(t, 'audit', { validations: [], auditAnnotations: [{ key: 'a b', valueExpression: '"x"' }, { key: 'ok', valueExpression: '' }, { key: 'ok', valueExpression: `"${'x'.repeat(5200)}"` }] }, [
    ['spec.auditAnnotations[0].key', 'Invalid value: "audit/a b": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')'],
    ['spec.auditAnnotations[1].valueExpression', 'Required value: valueExpression is not specified'],
    ['spec.auditAnnotations[2].valueExpression', 'Required value: must not exceed 5120 bytes in length'],
    ['spec.auditAnnotations[2].key', 'Duplicate value: "ok"'],
  ])
  const annotations = Array.from({ length: 21 }, (_, i) => ({ key: `k${i}`, valueExpression: '"v"' }))
  const r = await s.request('POST', VAPS, policy('too-many-annotations', { auditAnnotations: annotations }))
  t.equal(r.status, 422, r.text)
  t.same(r.json?.details?.causes, [{ reason: 'FieldValueInvalid', field: 'spec.auditAnnotations', message: `Invalid value: []admissionregistration.AuditAnnotation{${annotations.map((a) => `admissionregistration.AuditAnnotation{Key:"${a.key}", ValueExpression:"\\"v\\""}`).join(', ')}}: must not have more than 20 auditAnnotations` }])
  await refusedPolicy(t, 'param-kind', { paramKind: { apiVersion: 'a/b/c', kind: 'My_Kind' } }, [
    ['spec.paramKind.apiVersion', 'Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c'],
    ['spec.paramKind.kind', 'Invalid value: "My_Kind": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or \'-\', start with an alphabetic character, and end with an alphanumeric character (e.g. \'my-name\',  or \'abc-123\', regex used for validation is \'[a-z]([-a-z0-9]*[a-z0-9])?\')'],
  ])
  await refusedPolicy(t, 'param-kind-2', { paramKind: { apiVersion: 'Example.com/1v' } }, [
    ['spec.paramKind.apiVersion', 'Invalid value: "Example.com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')'],
    ['spec.paramKind.apiVersion', 'Invalid value: "1v": a DNS-1035 label must consist of lower case alphanumeric characters or \'-\', start with an alphabetic character, and end with an alphanumeric character (e.g. \'my-name\',  or \'abc-123\', regex used for validation is \'[a-z]([-a-z0-9]*[a-z0-9])?\')'],
    ['spec.paramKind.kind', 'Required value'],
  ])
})

t.test('an update is validated too', async (t) => {
  const r = await s.request('PATCH', `${VAPS}/replica-limit`, { spec: { validations: [{ expression: 'object.spec.replicas <' }] } }, { 'content-type': 'application/merge-patch+json' })
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.details?.causes?.[0]?.field, 'spec.validations[0].expression')
  t.match(r.json?.details?.causes?.[0]?.message, /^Invalid value: "object\.spec\.replicas <": compilation failed: ERROR: <input>:1:23: Syntax error: /)
  t.equal((await s.request('GET', `${VAPS}/replica-limit`)).json?.spec?.validations?.[0]?.expression, 'object.spec.replicas <= 5')
})

t.test('bindings: policyName, paramRef, validationActions, match resources', async (t) => {
  await refusedBinding(t, 'b-empty', { policyName: '', validationActions: [] }, [
    ['spec.policyName', 'Required value'],
    ['spec.validationActions', 'Required value: at least one validation action is required'],
  ])
  await refusedBinding(t, 'b-actions', { policyName: 'Bad_Name', validationActions: ['Deny', 'Warn', 'Deny', 'Log'] }, [
    ['spec.policyName', 'Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')'],
    ['spec.validationActions[2]', 'Duplicate value: "Deny"'],
    ['spec.validationActions[3]', 'Unsupported value: "Log": supported values: "Audit", "Deny", "Warn"'],
    ['spec.validationActions', 'Invalid value: []admissionregistration.ValidationAction{"Deny", "Warn", "Deny", "Log"}: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)'],
  ])
  await refusedBinding(t, 'b-param-both', { paramRef: { name: 'p', selector: {}, parameterNotFoundAction: 'Maybe' } }, [
    ['spec.paramRef.name', 'Forbidden: name and selector are mutually exclusive'],
    ['spec.paramRef.selector', 'Forbidden: name and selector are mutually exclusive'],
    ['spec.paramRef.parameterNotFoundAction', 'Unsupported value: "Maybe": supported values: "Deny", "Allow"'],
  ])
  await refusedBinding(t, 'b-param-none', { paramRef: { namespace: 'default', selector: null } }, [
    ['spec.paramRef', 'Required value: one of name or selector must be specified'],
    ['spec.paramRef.parameterNotFoundAction', 'Required value'],
  ])
  await refusedBinding(t, 'b-match', { matchResources: { matchPolicy: 'Loose', objectSelector: { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }, excludeResourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['DELETE'], resources: [] }] } }, [
    ['spec.matchResouces.matchPolicy', 'Unsupported value: "Loose": supported values: "Equivalent", "Exact"'],
    ['spec.matchResouces.objectSelector.matchExpressions[0].values', "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"],
    ['spec.matchResouces.excludeResourceRules[0].resources', 'Required value'],
  ])
})

t.test('variables: each sees only the variables before it, and is declared with the type it compiles to', async (t) => {
  await refusedPolicy(t, 'var-order', {
    matchConstraints: { resourceRules: rules },
    variables: [
      { name: 'a', expression: 'variables.b + 1' },
      { name: 'b', expression: '1' },
      { name: 'e', expression: 'variables.e' },
    ],
    validations: [{ expression: 'variables.b > 0' }],
  }, [
    ['spec.variables[0].expression', 'Invalid value: "variables.b + 1": compilation failed: ERROR: <input>:1:10: undefined field \'b\'\n | variables.b + 1\n | .........^'],
    ['spec.variables[2].expression', 'Invalid value: "variables.e": compilation failed: ERROR: <input>:1:10: undefined field \'e\'\n | variables.e\n | .........^'],
  ])
  // A variable's result type carries: a bool variable is a condition, a string one a message.
  const r = await s.request('POST', VAPS, policy('var-types', {
    matchConstraints: { resourceRules: rules },
    variables: [{ name: 'greeting', expression: "'hello'" }, { name: 'never', expression: '1 == 2' }, { name: 'shout', expression: "variables.greeting + '!'" }],
    validations: [{ expression: 'variables.never', messageExpression: 'variables.shout' }],
  }))
  t.equal(r.status, 201, r.text)
})
