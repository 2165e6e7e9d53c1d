// Unit: the CRD strategy's update ratcheting (a rule the stored CRD already broke is not required of an update, as
// upstream's require* options), which no request can set up (an invalid CRD cannot be stored through the API); and
// Go (RE2) pattern parsing and matching.
import t from 'tap'
import { fieldErrorBody, type FieldError } from '../../src/machinery/errors.js'
import crds from '../../src/registry/resources/apiextensions.orch.io/customresourcedefinitions.js'
import { re2Problem, re2RegExp } from '../../src/machinery/re2.js'
import { nonStructuralMessage } from '../../src/registry/crd-schema.js'

const lines = (errs: FieldError[]): string[] => errs.map((e) => `${e.field}: ${fieldErrorBody(e)}`)
const P = 'spec.validation.openAPIV3Schema'

function crd(schema: Record<string, unknown>): any {
  return {
    apiVersion: 'apiextensions.orch.io/v1', kind: 'CustomResourceDefinition',
    metadata: { name: 'gadgets.val.example.com' },
    spec: {
      group: 'val.example.com', scope: 'Namespaced',
      names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
      conversion: { strategy: 'None' },
    },
    status: { storedVersions: ['v1'] },
  }
}

const validate = (o: any) => lines(crds.strategy!.validate!(o))
const validateUpdate = (o: any, old: any) => lines(crds.strategy!.validateUpdate!(o, old))

t.test('a non-structural stored schema is not required to become structural on update', async (t) => {
  const old = crd({ type: 'object', properties: { a: {} } })
  t.same(validate(old), [`${P}.properties[a].type: Required value: must not be empty for specified object fields`])
  const next = structuredClone(old)
  next.spec.versions[0].schema.openAPIV3Schema.properties.b = { type: 'string' }
  t.same(validateUpdate(next, old), [])
  // Once structural, it is held to it.
  const fixed = crd({ type: 'object', properties: { a: { type: 'string' } } })
  t.same(validateUpdate(old, fixed), [`${P}.properties[a].type: Required value: must not be empty for specified object fields`])
})

t.test('invalid property types, non-atomic set items and map keys without defaults ratchet', async (t) => {
  const old = crd({
    type: 'object',
    properties: {
      a: { type: 'banana' },
      s: { type: 'array', 'x-orch-list-type': 'set', items: { type: 'object', properties: { x: { type: 'string' } } } },
      m: { type: 'array', 'x-orch-list-type': 'map', 'x-orch-list-map-keys': ['k'], items: { type: 'object', properties: { k: { type: 'string' } } } },
    },
  })
  t.same(validate(old), [
    `${P}.properties[a].type: Unsupported value: "banana": supported values: "array", "boolean", "integer", "number", "object", "string"`,
    `${P}.properties[s].items.x-orch-map-type: Invalid value: null: must be atomic as item of a list with x-orch-list-type=set`,
    `${P}.properties[m].items.properties[k].default: Required value: this property is in x-orch-list-map-keys, so it must have a default or be a required property`,
  ])
  const next = structuredClone(old)
  next.metadata.labels = { x: 'y' }
  t.same(validateUpdate(next, old), [])
})

t.test('rules the stored CRD already had are not compiled again; new ones are', async (t) => {
  const old = crd({ type: 'object', properties: { spec: { type: 'object', properties: { n: { type: 'integer' } }, 'x-orch-validations': [{ rule: 'self.n >' }] } } })
  t.equal(validate(old).length, 1)
  const next = structuredClone(old)
  t.same(validateUpdate(next, old), [])
  next.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-orch-validations'].push({ rule: 'self.n <' })
  t.match(validateUpdate(next, old), [/x-orch-validations\[1\]\.rule: Invalid value: .*compilation failed/])
})

t.test('immutable fields and stored versions on update', async (t) => {
  const old = crd({ type: 'object' })
  old.status.conditions = [{ type: 'Established', status: 'True' }]
  const next = structuredClone(old)
  next.spec.scope = 'Cluster'
  next.spec.names.kind = 'Gizmo'
  next.spec.names.listKind = 'GizmoList'
  next.spec.versions[0].name = 'v2'
  t.same(validateUpdate(next, old), [
    'spec.scope: Invalid value: "Cluster": field is immutable',
    'spec.names.kind: Invalid value: "Gizmo": field is immutable',
    'status.storedVersions[0]: Invalid value: "v1": missing from spec.versions; v1 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v1 and removes v1 from status.storedVersions',
  ])
})

t.test('RE2: what Go refuses, in its words; what it accepts matches as in Go', async (t) => {
  const refused: Array<[string, string]> = [
    ['+', 'missing argument to repetition operator: `+`'],
    ['(abc', 'missing closing ): `(abc`'],
    ['abc)', 'unexpected ): `abc)`'],
    ['[a', 'missing closing ]: `[a`'],
    ['[z-a]', 'invalid character class range: `z-a`'],
    ['\\q', 'invalid escape sequence: `\\q`'],
    ['a**', 'invalid nested repetition operator: `**`'],
    ['(?=x)', 'invalid or unsupported Perl syntax: `(?=`'],
    ['(?<!x)', 'invalid or unsupported Perl syntax: `(?<`'],
    ['(a)\\1', 'invalid escape sequence: `\\1`'],
    ['a{1001}', 'invalid repeat count: `{1001}`'],
    ['x{2,1}', 'invalid repeat count: `{2,1}`'],
    ['[[:foo:]]', 'invalid character class range: `[:foo:]`'],
    ['\\', 'trailing backslash at end of expression: ``'],
    ['(?P<>x)', 'invalid named capture: `(?P<>`'],
    ['\\p{Foo}', 'invalid character class range: `\\p{Foo}`'],
  ]
  for (const [p, why] of refused) t.equal(re2Problem(p), `error parsing regexp: ${why}`, p)
  const matches: Array<[string, string, boolean]> = [
    ['(?i)abc', 'xABCx', true], ['^a$', 'a\n', false], ['(?m)^a$', 'b\na\nc', true], ['[[:alpha:]]+$', 'ab1', false], ['^[[:alpha:]]+$', 'ab', true],
    ['(?i:a)B', 'AB', true], ['(?i:a)B', 'Ab', false], ['a.c', 'a\nc', false], ['(?s)a.c', 'a\nc', true], ['\\Qa.b\\E', 'axb', false],
    ['\\p{Greek}', 'α', true], ['a{,3}', 'a{,3}', true], ['x\\z', 'x', true], ['\\Ax', 'yx', false], ['^*a', 'a', true], ['\\s', '\u000b', false],
    ['[^\\d]', '5', false], ['(?P<n>a)\\x{62}', 'ab', true], ['\\!', '!', true],
  ]
  for (const [p, s, want] of matches) {
    t.equal(re2Problem(p), undefined, p)
    t.equal(re2RegExp(p).test(s), want, `${p} ~ ${JSON.stringify(s)}`)
  }
  // A pattern Go refuses matches nothing (and never throws) on the custom-resource side.
  t.equal(re2RegExp('(?=x)').test('x'), false)
})

t.test('the NonStructuralSchema condition message of a stored non-structural CRD (v1 paths)', async (t) => {
  const spec = crd({ type: 'object', properties: { a: {} }, not: { properties: { b: {} } } }).spec
  spec.versions.push({ name: 'v2', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object', properties: { c: { type: 'string' } } } } })
  t.equal(nonStructuralMessage(spec), '[spec.versions[0].schema.openAPIV3Schema.properties[a].type: Required value: must not be empty for specified object fields, spec.versions[0].schema.openAPIV3Schema.properties[b]: Required value: because it is defined in spec.versions[0].schema.openAPIV3Schema.not.properties[b]]')
  t.equal(nonStructuralMessage(crd({ type: 'object', properties: { a: { type: 'string' } } }).spec), undefined)
})

t.test('an update that leaves the spec as stored is not judged on it (a CRD stored before a check existed)', async (t) => {
  const old = crd({ type: 'object', properties: { a: { type: 'string' } } })
  old.spec.versions[0].additionalPrinterColumns = [{ name: 'A', type: 'text', jsonPath: '.a' }]
  t.same(validate(old), ['spec.additionalPrinterColumns[0].type: Invalid value: "text": must be one of boolean,date,integer,number,string'])
  const labelled = structuredClone(old)
  labelled.metadata.labels = { x: 'y' }
  labelled.metadata.finalizers = []
  t.same(validateUpdate(labelled, old), [])
  const changed = structuredClone(old)
  changed.spec.versions[0].additionalPrinterColumns[0].name = 'B'
  t.same(validateUpdate(changed, old), ['spec.additionalPrinterColumns[0].type: Invalid value: "text": must be one of boolean,date,integer,number,string'])
})

t.test('conversion review versions this server does not speak ratchet', async (t) => {
  const old = crd({ type: 'object', properties: { a: { type: 'string' } } })
  old.spec.conversion = { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://conv.example.com/x' }, conversionReviewVersions: ['v9'] } }
  t.same(validate(old), ['spec.conversion.conversionReviewVersions: Invalid value: []string{"v9"}: must include at least one of v1, v1beta1'])
  const next = structuredClone(old)
  next.spec.versions[0].schema.openAPIV3Schema.properties.b = { type: 'string' }
  t.same(validateUpdate(next, old), [])
})
