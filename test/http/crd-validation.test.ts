// Black-box: CustomResourceDefinition validation as upstream's — schemas (Go regular expressions, types, the root,
// $ref, defaults, items lists, counts, x-orch-validations that do not compile), structural schemas, list/map markers,
// names, versions, conversion, printer columns, scale paths, selectable fields; an update that breaks a CRD; and
// patterns in RE2 syntax JavaScript lacks, matched on the custom resources.
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'

type Test = import('tap').Test
let s: TestServer

const CRDS = '/apis/apiextensions.orch.io/v1/customresourcedefinitions'
const NAME = 'gadgets.val.example.com'
// One version (or all the same): upstream reports the schema where its v1 conversion moved it, the top level.
const P = 'spec.validation.openAPIV3Schema'

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

function crd(schema: Record<string, unknown>, version: Record<string, unknown> = {}, spec: Record<string, unknown> = {}): any {
  return {
    apiVersion: 'apiextensions.orch.io/v1', kind: 'CustomResourceDefinition',
    metadata: { name: NAME },
    spec: {
      group: 'val.example.com', scope: 'Namespaced',
      names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema }, ...version }],
      ...spec,
    },
  }
}

const obj = (props: Record<string, unknown>, more: Record<string, unknown> = {}) => ({ type: 'object', properties: props, ...more })

interface Cause { reason: string; field: string; message: string }

async function refused(t: Test, body: any, causes: Cause[], method = 'POST', path = CRDS): Promise<void> {
  const r = await s.request(method, path, body)
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.reason, 'Invalid')
  t.same(r.json?.details?.causes, causes)
  const name = body.metadata?.name ?? NAME
  const lines = causes.map((c) => `${c.field}: ${c.message}`)
  t.equal(r.json?.message, `CustomResourceDefinition.apiextensions.orch.io "${name}" is invalid: ${lines.length === 1 ? lines[0] : `[${lines.join(', ')}]`}`)
  if (method === 'POST') t.equal((await s.request('GET', `${CRDS}/${name}`)).status, 404, 'nothing was created')
}

t.test('schema: patterns must be Go (RE2) regular expressions', async (t) => {
  await refused(t, crd(obj({ foo: { type: 'string', pattern: '+' } })), [{
    reason: 'FieldValueInvalid', field: `${P}.properties[foo].pattern`,
    message: 'Invalid value: "+": must be a valid regular expression, but isn\'t: error parsing regexp: missing argument to repetition operator: `+`',
  }])
  await refused(t, crd(obj({ foo: { type: 'string', pattern: '^(?=a)b' } })), [{
    reason: 'FieldValueInvalid', field: `${P}.properties[foo].pattern`,
    message: 'Invalid value: "^(?=a)b": must be a valid regular expression, but isn\'t: error parsing regexp: invalid or unsupported Perl syntax: `(?=`',
  }])
  await refused(t, crd(obj({ foo: { type: 'string', pattern: '(a)\\1' } })), [{
    reason: 'FieldValueInvalid', field: `${P}.properties[foo].pattern`,
    message: 'Invalid value: "(a)\\\\1": must be a valid regular expression, but isn\'t: error parsing regexp: invalid escape sequence: `\\1`',
  }])
  await refused(t, crd(obj({ foo: { type: 'string', pattern: '[a-z' } })), [{
    reason: 'FieldValueInvalid', field: `${P}.properties[foo].pattern`,
    message: 'Invalid value: "[a-z": must be a valid regular expression, but isn\'t: error parsing regexp: missing closing ]: `[a-z`',
  }])
  await refused(t, crd(obj({ foo: { type: 'string', pattern: '[z-a' } })), [{
    reason: 'FieldValueInvalid', field: `${P}.properties[foo].pattern`,
    message: 'Invalid value: "[z-a": must be a valid regular expression, but isn\'t: error parsing regexp: invalid character class range: `z-a`',
  }])
})

t.test('schema: types, the root, $ref, items lists, counts', async (t) => {
  await refused(t, crd(obj({ foo: { type: 'banana' } })), [{
    reason: 'FieldValueNotSupported', field: `${P}.properties[foo].type`,
    message: 'Unsupported value: "banana": supported values: "array", "boolean", "integer", "number", "object", "string"',
  }])
  await refused(t, crd({ type: 'string' }), [{ reason: 'FieldValueInvalid', field: `${P}.type`, message: 'Invalid value: "string": must be object at the root' }])
  await refused(t, crd(obj({ foo: { type: 'string' } }, { $ref: '#/definitions/foo' })), [{ reason: 'FieldValueForbidden', field: `${P}.$ref`, message: 'Forbidden: $ref is not supported' }])
  await refused(t, crd(obj({ slice: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }] } })), [{
    reason: 'FieldValueForbidden', field: `${P}.properties[slice].items`, message: 'Forbidden: items must be a schema object and not an array',
  }])
  await refused(t, crd(obj({ foo: { type: 'string', maxLength: -1 } })), [{
    reason: 'FieldValueInvalid', field: `${P}.properties[foo].maxLength`, message: 'Invalid value: -1: must be greater than or equal to 0',
  }])
  await refused(t, crd(obj({ foo: { type: 'null' } })), [
    { reason: 'FieldValueNotSupported', field: `${P}.properties[foo].type`, message: 'Unsupported value: "null": supported values: "array", "boolean", "integer", "number", "object", "string"' },
    { reason: 'FieldValueForbidden', field: `${P}.properties[foo].type`, message: 'Forbidden: type cannot be set to null, use nullable as an alternative' },
  ])
  await refused(t, crd(obj({ tags: { type: 'array', uniqueItems: true, items: { type: 'string' } } })), [{
    reason: 'FieldValueForbidden', field: `${P}.properties[tags].uniqueItems`, message: 'Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
  }])
  await refused(t, crd(obj({ foo: { type: 'string' } }, { nullable: true })), [{ reason: 'FieldValueForbidden', field: `${P}.nullable`, message: 'Forbidden: nullable cannot be true at the root' }])
})

t.test('schema: defaults must have the type, pass the schema, and be pruned', async (t) => {
  await refused(t, crd(obj({ foo: { type: 'string', default: 5 } })), [{
    reason: 'FieldValueTypeInvalid', field: `${P}.properties[foo].default`, message: 'Invalid value: "integer":  in body must be of type string: "integer"',
  }])
  await refused(t, crd(obj({ foo: { type: 'string', maxLength: 3, default: 'abcdef' } })), [{
    reason: 'FieldValueTooLong', field: `${P}.properties[foo].default`, message: 'Too long: may not be more than 3 bytes',
  }])
  await refused(t, crd(obj({ o: { type: 'object', properties: { a: { type: 'string' } }, default: { a: 'x', b: 'y' } } })), [{
    reason: 'FieldValueInvalid', field: `${P}.properties[o].default`, message: 'Invalid value: map[string]interface {}{"a":"x", "b":"y"}: must not have unknown fields',
  }])
  await refused(t, crd(obj({ metadata: { type: 'object', default: { name: 'x' } } })), [{
    reason: 'FieldValueForbidden', field: `${P}.properties[metadata].default`, message: 'Forbidden: must not be set in top-level metadata',
  }])
})

t.test('schema: x-orch-validations rules must compile and be well formed', async (t) => {
  await refused(t, crd(obj({ spec: { type: 'object', properties: { a: { type: 'integer' } }, 'x-orch-validations': [{ rule: 'self.a ==' }] } })), [{
    reason: 'FieldValueInvalid', field: `${P}.properties[spec].x-orch-validations[0].rule`,
    message: 'Invalid value: apiextensions.ValidationRule{Rule:"self.a ==", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:10: Syntax error: Unexpected token: EOF\n | self.a ==\n | .........^',
  }])
  await refused(t, crd(obj({ spec: { type: 'object', properties: { a: { type: 'integer' } }, 'x-orch-validations': [{ rule: 'object.a > 1' }] } })), [{
    reason: 'FieldValueInvalid', field: `${P}.properties[spec].x-orch-validations[0].rule`,
    message: 'Invalid value: apiextensions.ValidationRule{Rule:"object.a > 1", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:1: undeclared reference to \'object\' (in container \'\')\n | object.a > 1\n | ^',
  }])
  // self is typed by the schema: a field it does not declare is refused, as upstream's typed compile does.
  await refused(t, crd(obj({ spec: { type: 'object', properties: { a: { type: 'integer' }, o: obj({ x: { type: 'string' } }) }, 'x-orch-validations': [{ rule: 'self.a > 0 && self.o.y == "z"' }] } })), [{
    reason: 'FieldValueInvalid', field: `${P}.properties[spec].x-orch-validations[0].rule`,
    message: 'Invalid value: apiextensions.ValidationRule{Rule:"self.a > 0 && self.o.y == \\"z\\"", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:21: undefined field \'y\'\n | self.a > 0 && self.o.y == "z"\n | ....................^',
  }])
  await refused(t, crd(obj({ spec: obj({ a: { type: 'integer' } }) }, { 'x-orch-validations': [{ rule: "self.metadata.labels['x'] == 'y'" }] })), [{
    reason: 'FieldValueInvalid', field: `${P}.x-orch-validations[0].rule`,
    message: 'Invalid value: apiextensions.ValidationRule{Rule:"self.metadata.labels[\'x\'] == \'y\'", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:14: undefined field \'labels\'\n | self.metadata.labels[\'x\'] == \'y\'\n | .............^',
  }])
  await refused(t, crd(obj({ spec: { type: 'object', properties: { a: { type: 'integer' } }, 'x-orch-validations': [{ rule: 'self.a + 1', messageExpression: '1 + 1' }] } })), [
    {
      reason: 'FieldValueInvalid', field: `${P}.properties[spec].x-orch-validations[0].rule`,
      message: 'Invalid value: apiextensions.ValidationRule{Rule:"self.a + 1", Message:"", MessageExpression:"1 + 1", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: cel expression must evaluate to a bool',
    },
    {
      reason: 'FieldValueInvalid', field: `${P}.properties[spec].x-orch-validations[0].messageExpression`,
      message: 'Invalid value: apiextensions.ValidationRule{Rule:"self.a + 1", Message:"", MessageExpression:"1 + 1", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: messageExpression must evaluate to a string',
    },
  ])
  await refused(t, crd(obj({ spec: { type: 'object', properties: { a: { type: 'integer' } }, 'x-orch-validations': [{ rule: '', reason: 'Nope' }] } })), [
    { reason: 'FieldValueRequired', field: `${P}.properties[spec].x-orch-validations[0].rule`, message: 'Required value: rule is not specified' },
    { reason: 'FieldValueNotSupported', field: `${P}.properties[spec].x-orch-validations[0].reason`, message: 'Unsupported value: "Nope": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"' },
  ])
  await refused(t, crd(obj({ spec: { type: 'object', properties: { a: { type: 'integer' } }, 'x-orch-validations': [{ rule: 'self.a > 0', fieldPath: '.b' }] } })), [{
    reason: 'FieldValueInvalid', field: `${P}.properties[spec].x-orch-validations[0].fieldPath`, message: 'Invalid value: ".b": must be a valid path',
  }])
  await refused(t, crd(obj({ l: { type: 'array', items: { type: 'integer', 'x-orch-validations': [{ rule: 'self >= oldSelf' }] } } })), [{
    reason: 'FieldValueInvalid', field: `${P}.properties[l].items.x-orch-validations[0].rule`,
    message: `Invalid value: "self >= oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within ${P}.properties[l]`,
  }])
})

t.test('structural schemas: every node typed, metadata, junctors, additionalProperties', async (t) => {
  await refused(t, crd(obj({ a: {}, b: { type: 'object', properties: { c: {} } } })), [
    { reason: 'FieldValueRequired', field: `${P}.properties[a].type`, message: 'Required value: must not be empty for specified object fields' },
    { reason: 'FieldValueRequired', field: `${P}.properties[b].properties[c].type`, message: 'Required value: must not be empty for specified object fields' },
  ])
  await refused(t, crd({ properties: { a: { type: 'string' } } }), [{ reason: 'FieldValueRequired', field: `${P}.type`, message: 'Required value: must not be empty at the root' }])
  await refused(t, crd(obj({ list: { type: 'array' } })), [{ reason: 'FieldValueRequired', field: `${P}.properties[list].items`, message: 'Required value: must be specified' }])
  await refused(t, crd(obj({ metadata: { type: 'object', properties: { labels: { type: 'object' } } } })), [{
    reason: 'FieldValueForbidden', field: `${P}.properties[metadata]`, message: 'Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified',
  }])
  await refused(t, crd(obj({ a: { type: 'string' } }, { not: { properties: { b: {} } }, anyOf: [{ properties: { a: { type: 'string' } } }] })), [
    { reason: 'FieldValueForbidden', field: `${P}.anyOf[0].properties[a].type`, message: 'Forbidden: must be empty to be structural' },
    { reason: 'FieldValueRequired', field: `${P}.properties[b]`, message: `Required value: because it is defined in ${P}.not.properties[b]` },
  ])
  await refused(t, crd(obj({ m: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } } })), [{
    reason: 'FieldValueForbidden', field: `${P}.properties[m].additionalProperties`, message: 'Forbidden: additionalProperties and properties are mutual exclusive',
  }])
  await refused(t, crd(obj({ a: { type: 'string' } }, { additionalProperties: false })), [
    { reason: 'FieldValueForbidden', field: `${P}.additionalProperties`, message: 'Forbidden: must not be used at the root' },
    { reason: 'FieldValueForbidden', field: `${P}.additionalProperties`, message: 'Forbidden: additionalProperties and properties are mutual exclusive' },
  ])
  await refused(t, crd(obj({ n: { 'x-orch-int-or-string': true, 'x-orch-preserve-unknown-fields': true } })), [{
    reason: 'FieldValueInvalid', field: `${P}.properties[n].x-orch-preserve-unknown-fields`, message: 'Invalid value: true: must be false if x-orch-int-or-string is true',
  }])
  await refused(t, crd(obj({ e: { type: 'object', 'x-orch-embedded-resource': true } })), [{
    reason: 'FieldValueRequired', field: `${P}.properties[e].properties`, message: 'Required value: must not be empty if x-orch-embedded-resource is true without x-orch-preserve-unknown-fields',
  }])
})

t.test('list and map markers', async (t) => {
  const mapList = (items: Record<string, unknown>, more: Record<string, unknown> = {}) => crd(obj({ l: { type: 'array', 'x-orch-list-type': 'map', 'x-orch-list-map-keys': ['k'], items, ...more } }))
  await refused(t, mapList({ type: 'object', properties: { k: { type: 'string' } } }), [{
    reason: 'FieldValueRequired', field: `${P}.properties[l].items.properties[k].default`,
    message: 'Required value: this property is in x-orch-list-map-keys, so it must have a default or be a required property',
  }])
  await refused(t, mapList({ type: 'object', required: ['x'], properties: { x: { type: 'string' } } }), [{
    reason: 'FieldValueInvalid', field: `${P}.properties[l].x-orch-list-map-keys`, message: 'Invalid value: []string{"k"}: entries must all be names of item properties',
  }])
  await refused(t, mapList({ type: 'string' }), [{
    reason: 'FieldValueInvalid', field: `${P}.properties[l].items.type`, message: 'Invalid value: "string": must be object if parent array\'s x-orch-list-type is map',
  }])
  await refused(t, crd(obj({ l: { type: 'array', 'x-orch-list-type': 'bag', items: { type: 'string' } } })), [{
    reason: 'FieldValueNotSupported', field: `${P}.properties[l].x-orch-list-type`, message: 'Unsupported value: "bag": supported values: "atomic", "set", "map"',
  }])
  await refused(t, crd(obj({ l: { type: 'array', 'x-orch-list-map-keys': ['k'], items: { type: 'object', required: ['k'], properties: { k: { type: 'string' } } } } })), [{
    reason: 'FieldValueRequired', field: `${P}.properties[l].x-orch-list-type`, message: 'Required value: must be map if x-orch-list-map-keys is non-empty',
  }])
  await refused(t, crd(obj({ m: { type: 'string', 'x-orch-map-type': 'atomic' } })), [{
    reason: 'FieldValueInvalid', field: `${P}.properties[m].type`, message: 'Invalid value: "string": must be object if x-orch-map-type is specified',
  }])
  await refused(t, crd(obj({ s: { type: 'array', 'x-orch-list-type': 'set', items: { type: 'object', properties: { a: { type: 'string' } } } } })), [{
    reason: 'FieldValueInvalid', field: `${P}.properties[s].items.x-orch-map-type`, message: 'Invalid value: null: must be atomic as item of a list with x-orch-list-type=set',
  }])
})

t.test('the status sub-resource restricts the root', async (t) => {
  await refused(t, crd({ type: 'object', properties: { a: { type: 'string' } }, 'x-orch-map-type': 'atomic' }, { subresources: { status: {} } }), [{
    reason: 'FieldValueInvalid', field: `${P}`,
    message: 'Invalid value: apiextensions.JSONSchemaProps{...}: only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled',
  }])
})

t.test('versions whose schemas differ are reported each at its own path', async (t) => {
  const body = crd(obj({ a: { type: 'string' } }))
  body.spec.versions.push({ name: 'v2', served: true, storage: false, schema: { openAPIV3Schema: obj({ a: { type: 'string', pattern: '\\' } }) }, additionalPrinterColumns: [{ name: 'A', type: 'text', jsonPath: '.a' }] })
  await refused(t, body, [
    { reason: 'FieldValueInvalid', field: 'spec.versions[1].schema.openAPIV3Schema.properties[a].pattern', message: 'Invalid value: "\\\\": must be a valid regular expression, but isn\'t: error parsing regexp: trailing backslash at end of expression: ``' },
    { reason: 'FieldValueInvalid', field: 'spec.versions[1].additionalPrinterColumns[0].type', message: 'Invalid value: "text": must be one of boolean,date,integer,number,string' },
  ])
})

t.test('names, versions, scope', async (t) => {
  const good = obj({ a: { type: 'string' } })
  const names = (n: Record<string, unknown>) => crd(good, {}, { names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList', ...n } })
  await refused(t, names({ categories: ['All_Things'] }), [{
    reason: 'FieldValueInvalid', field: 'spec.names.categories[0]',
    message: 'Invalid value: "All_Things": a DNS-1035 label must consist of lower case alphanumeric characters or \'-\', start with an alphabetic character, and end with an alphanumeric character (e.g. \'my-name\',  or \'abc-123\', regex used for validation is \'[a-z]([-a-z0-9]*[a-z0-9])?\')',
  }])
  await refused(t, names({ shortNames: ['GD'] }), [{
    reason: 'FieldValueInvalid', field: 'spec.names.shortNames[0]',
    message: 'Invalid value: "GD": a DNS-1035 label must consist of lower case alphanumeric characters or \'-\', start with an alphabetic character, and end with an alphanumeric character (e.g. \'my-name\',  or \'abc-123\', regex used for validation is \'[a-z]([-a-z0-9]*[a-z0-9])?\')',
  }])
  const mismatched = crd(good)
  mismatched.metadata.name = 'widgets.val.example.com'
  await refused(t, mismatched, [{ reason: 'FieldValueInvalid', field: 'metadata.name', message: 'Invalid value: "widgets.val.example.com": must be spec.names.plural+"."+spec.group' }])
  const versions = crd(good)
  versions.spec.versions = [versions.spec.versions[0], { ...versions.spec.versions[0], name: 'V2', storage: false }]
  await refused(t, versions, [{
    reason: 'FieldValueInvalid', field: 'spec.versions[1].name',
    message: 'Invalid value: "V2": a DNS-1035 label must consist of lower case alphanumeric characters or \'-\', start with an alphabetic character, and end with an alphanumeric character (e.g. \'my-name\',  or \'abc-123\', regex used for validation is \'[a-z]([-a-z0-9]*[a-z0-9])?\')',
  }])
  const deprecated = crd(good, { deprecationWarning: 'old' })
  await refused(t, deprecated, [{ reason: 'FieldValueInvalid', field: 'spec.versions[0].deprecationWarning', message: 'Invalid value: "old": can only be set for deprecated versions' }])
})

t.test('conversion, printer columns, scale paths, selectable fields', async (t) => {
  const good = obj({ spec: obj({ replicas: { type: 'integer' }, color: { type: 'string' }, list: { type: 'array', items: { type: 'string' } } }), status: obj({ replicas: { type: 'integer' } }) })
  await refused(t, crd(good, {}, { conversion: { strategy: 'Webhook' } }), [
    { reason: 'FieldValueRequired', field: 'spec.conversion.webhookClientConfig', message: 'Required value: required when strategy is set to Webhook' },
    { reason: 'FieldValueRequired', field: 'spec.conversion.conversionReviewVersions', message: 'Required value' },
  ])
  await refused(t, crd(good, {}, { conversion: { strategy: 'Webhook', webhook: { clientConfig: { url: 'http://example.com/convert' }, conversionReviewVersions: ['v2'] } } }), [
    { reason: 'FieldValueInvalid', field: 'spec.conversion.webhookClientConfig.url', message: 'Invalid value: "http": \'https\' is the only allowed URL scheme; desired format: https://host[/path]' },
    { reason: 'FieldValueInvalid', field: 'spec.conversion.conversionReviewVersions', message: 'Invalid value: []string{"v2"}: must include at least one of v1, v1beta1' },
  ])
  await refused(t, crd(good, {}, { conversion: { strategy: 'Magic' } }), [{ reason: 'FieldValueNotSupported', field: 'spec.conversion.strategy', message: 'Unsupported value: "Magic": supported values: "None", "Webhook"' }])
  await refused(t, crd(good, { additionalPrinterColumns: [{ name: 'R', type: 'float', jsonPath: 'spec.replicas' }, { name: 'C', type: 'string', format: 'rgb', jsonPath: '.spec.color' }] }), [
    { reason: 'FieldValueInvalid', field: 'spec.additionalPrinterColumns[0].type', message: 'Invalid value: "float": must be one of boolean,date,integer,number,string' },
    { reason: 'FieldValueInvalid', field: 'spec.additionalPrinterColumns[0].JSONPath', message: 'Invalid value: "spec.replicas": must be a simple json path starting with .' },
    { reason: 'FieldValueInvalid', field: 'spec.additionalPrinterColumns[1].format', message: 'Invalid value: "rgb": must be one of byte,date,date-time,double,float,int32,int64,password' },
  ])
  await refused(t, crd(good, { subresources: { status: {}, scale: { specReplicasPath: '.status.replicas', statusReplicasPath: '' } } }), [
    { reason: 'FieldValueInvalid', field: 'spec.subresources.scale.specReplicasPath', message: 'Invalid value: ".status.replicas": should be a json path under .spec' },
    { reason: 'FieldValueRequired', field: 'spec.subresources.scale.statusReplicasPath', message: 'Required value' },
  ])
  await refused(t, crd(good, { selectableFields: [{ jsonPath: '.spec.list' }, { jsonPath: '.spec.nope' }, { jsonPath: '.spec.color' }, { jsonPath: '.spec.color' }] }), [
    { reason: 'FieldValueInvalid', field: 'spec.selectableFields[0].jsonPath', message: 'Invalid value: ".spec.list": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.' },
    { reason: 'FieldValueInvalid', field: 'spec.selectableFields[1].jsonPath', message: 'Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field' },
    { reason: 'FieldValueDuplicate', field: 'spec.selectableFields[3].jsonPath', message: 'Duplicate value: ".spec.color"' },
  ])
})

t.test('malformed schema values are a client error, never a 500', async (t) => {
  const odd: Array<Record<string, unknown>> = [
    { type: ['string', 'null'] }, { properties: 5 }, { type: 'object', properties: { a: { type: 'array', items: 'x' } } },
    { type: 'object', properties: { a: { type: 'object', 'x-orch-validations': 'self > 1' } } }, { type: 'object', properties: { a: { type: 'string', pattern: 5 } } },
    { type: 'object', properties: { a: { type: 'array', 'x-orch-list-map-keys': 'k', items: { type: 'object' } } } }, { type: 'object', required: 'a' },
    { type: 'object', properties: { a: { type: 'string', enum: 'x' } } }, { type: 'object', allOf: { type: 'string' } },
  ]
  for (const schema of odd) {
    const r = await s.request('POST', CRDS, crd(schema))
    t.ok(r.status === 400 || r.status === 422, `${JSON.stringify(schema)}: ${r.status} ${r.text.slice(0, 300)}`)
    if (r.status === 201) await s.request('DELETE', `${CRDS}/${NAME}`)
  }
})

t.test('a valid CRD is created; an update that breaks it is refused, one that keeps it valid is taken', async (t) => {
  const body = crd(obj({
    spec: obj({
      code: { type: 'string', pattern: '^[a-z]+$', default: 'abc' },
      items: { type: 'array', 'x-orch-list-type': 'map', 'x-orch-list-map-keys': ['name'], items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, v: { 'x-orch-int-or-string': true } } } },
      meta: { type: 'object', 'x-orch-embedded-resource': true, 'x-orch-preserve-unknown-fields': true },
      n: { type: 'integer', 'x-orch-validations': [{ rule: 'self >= 0', message: 'must not be negative' }] },
      host: { type: 'string', 'x-orch-validations': [{ rule: '!format.dns1123Label().validate(self).hasValue()', message: 'must be a DNS label' }] },
    }, { 'x-orch-validations': [{ rule: 'self.n <= 10 || !has(self.code)', messageExpression: "'n is ' + string(self.n)" }] }),
    metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 20 } } },
  }), { subresources: { status: {} }, additionalPrinterColumns: [{ name: 'Code', type: 'string', jsonPath: '.spec.code' }] })
  const c = await s.request('POST', CRDS, body)
  t.equal(c.status, 201, c.text)
  // The controller writes the status meanwhile: each update starts from a fresh read (and retries a conflict).
  const fresh = async () => (await s.request('GET', `${CRDS}/${NAME}`)).json
  const broken = await fresh()
  broken.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.code.pattern = '(?!x)'
  await refused(t, broken, [{
    reason: 'FieldValueInvalid', field: `${P}.properties[spec].properties[code].pattern`,
    message: 'Invalid value: "(?!x)": must be a valid regular expression, but isn\'t: error parsing regexp: invalid or unsupported Perl syntax: `(?!`',
  }], 'PUT', `${CRDS}/${NAME}`)
  const renamed = await fresh()
  renamed.spec.group = 'other.example.com'
  const r = await s.request('PUT', `${CRDS}/${NAME}`, renamed)
  t.equal(r.status, 422, r.text)
  t.ok(r.json.details.causes.some((x: any) => x.field === 'spec.group' && x.message === 'Invalid value: "other.example.com": field is immutable'), r.text)
  let u
  for (let i = 0; i < 5; i++) {
    const fine = await fresh()
    fine.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.code.pattern = '^[a-z0-9]+$'
    u = await s.request('PUT', `${CRDS}/${NAME}`, fine)
    if (u.status !== 409) break
  }
  t.equal(u!.status, 200, u!.text)
  t.equal((await s.request('DELETE', `${CRDS}/${NAME}`)).status, 200)
  await waitGone(`${CRDS}/${NAME}`)
})

async function waitGone(path: string): Promise<void> {
  const end = Date.now() + 10_000
  while ((await s.request('GET', path)).status !== 404) {
    if (Date.now() > end) throw new Error(`${path} was not deleted`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

t.test('custom resources: RE2 syntax JavaScript lacks is matched as Go matches it', async (t) => {
  const body = crd(obj({
    spec: obj({
      word: { type: 'string', pattern: '(?i)^hello\\z' },
      letters: { type: 'string', pattern: '^[[:alpha:]]+$' },
      named: { type: 'string', pattern: '^(?P<first>a+)b$' },
    }),
  }))
  body.metadata.name = 'patterns.val.example.com'
  body.spec.names = { plural: 'patterns', singular: 'pattern', kind: 'Pattern', listKind: 'PatternList' }
  const c = await s.request('POST', CRDS, body)
  t.equal(c.status, 201, c.text)
  const CR = '/apis/val.example.com/v1/namespaces/default/patterns'
  const end = Date.now() + 10_000
  while ((await s.request('GET', CR)).status !== 200) {
    if (Date.now() > end) throw new Error('the type was not served')
    await new Promise((r) => setTimeout(r, 100))
  }
  const cr = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'val.example.com/v1', kind: 'Pattern', metadata: { name }, spec })
  let r = await s.request('POST', CR, cr('ok', { word: 'HeLLo', letters: 'abcXYZ', named: 'aaab' }))
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', CR, cr('bad', { word: 'hello!', letters: 'abc1', named: 'b' }))
  t.equal(r.status, 422, r.text)
  t.same(r.json.details.causes, [
    { reason: 'FieldValueInvalid', message: 'Invalid value: "hello!": spec.word in body should match \'(?i)^hello\\z\'', field: 'spec.word' },
    { reason: 'FieldValueInvalid', message: 'Invalid value: "abc1": spec.letters in body should match \'^[[:alpha:]]+$\'', field: 'spec.letters' },
    { reason: 'FieldValueInvalid', message: 'Invalid value: "b": spec.named in body should match \'^(?P<first>a+)b$\'', field: 'spec.named' },
  ])
})
