import t from 'tap'
import { fieldErrorBody, type FieldError } from '../../src/machinery/errors.js'
import type { Obj } from '../../src/registry/define.js'
import {
  mandatoryFlowSchemas, mandatoryPriorityLevels, suggestedFlowSchemas, suggestedPriorityLevels,
} from '../../src/registry/resources/flowcontrol.apiserver.orch.io/bootstrap.js'
import {
  defaultFlowSchema, defaultPriorityLevel, validateFlowSchema, validateNonResourceURLPath, validatePriorityLevel,
} from '../../src/registry/resources/flowcontrol.apiserver.orch.io/validation.js'

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T
/** Errors as `Type field: body` lines, which pins type, path and message at once. */
const lines = (errs: FieldError[]): string[] => errs.map((e) => `${e.type} ${e.field}: ${fieldErrorBody(e)}`)

const SUBDOMAIN = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
const LABEL = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
const VERBS = '"create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"'

const everyResource = (): Obj => ({ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true })
function fs(spec: Obj = {}, name = 'system-foo'): Obj {
  return {
    metadata: { name },
    spec: {
      matchingPrecedence: 50,
      priorityLevelConfiguration: { name: 'system-bar' },
      rules: [{ subjects: [{ kind: 'User', user: { name: 'noxu' } }], resourceRules: [everyResource()] }],
      ...spec,
    },
  }
}
/** A schema with one rule. */
const fsRule = (rule: Obj): Obj => fs({ rules: [rule] })
const user = { kind: 'User', user: { name: 'noxu' } }

function pl(spec: Obj, name = 'system-foo'): Obj { return { metadata: { name }, spec } }
const queuing = (q: Obj): Obj => pl({ type: 'Limited', limited: { nominalConcurrencyShares: 100, limitResponse: { type: 'Queue', queuing: { queues: 64, handSize: 8, queueLengthLimit: 50, ...q } } } })
const limited = (l: Obj): Obj => pl({ type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Reject' }, ...l } })

t.test('FlowSchema defaults', async (t) => {
  const a: Obj = { spec: {} }
  defaultFlowSchema(a)
  t.equal(a.spec.matchingPrecedence, 1000, 'unset becomes 1000')
  const b: Obj = { spec: { matchingPrecedence: 0 } }
  defaultFlowSchema(b)
  t.equal(b.spec.matchingPrecedence, 1000, 'zero is unset')
  const c: Obj = { spec: { matchingPrecedence: 7 } }
  defaultFlowSchema(c)
  t.equal(c.spec.matchingPrecedence, 7)
  defaultFlowSchema({})
  t.pass('no spec: nothing to do')
})

t.test('PriorityLevelConfiguration defaults', async (t) => {
  const l = pl({ type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: {} } } })
  defaultPriorityLevel(l)
  t.same(l.spec.limited, { nominalConcurrencyShares: 30, lendablePercent: 0, limitResponse: { type: 'Queue', queuing: { queues: 64, handSize: 8, queueLengthLimit: 50 } } })
  const zero = pl({ type: 'Limited', limited: { nominalConcurrencyShares: 0, lendablePercent: 5, limitResponse: { type: 'Queue', queuing: { queues: 0, handSize: 3, queueLengthLimit: 0 } } } })
  defaultPriorityLevel(zero)
  t.equal(zero.spec.limited.nominalConcurrencyShares, 0, 'an explicit 0 stays 0')
  t.equal(zero.spec.limited.lendablePercent, 5)
  t.same(zero.spec.limited.limitResponse.queuing, { queues: 64, handSize: 3, queueLengthLimit: 50 }, 'queuing zeros take the defaults')
  const nul = pl({ type: 'Limited', limited: { nominalConcurrencyShares: null, limitResponse: { type: 'Reject' } } })
  defaultPriorityLevel(nul)
  t.equal(nul.spec.limited.nominalConcurrencyShares, 30, 'null is unspecified')
  t.notOk('borrowingLimitPercent' in nul.spec.limited, 'borrowingLimitPercent has no default')
  const ex = pl({ type: 'Exempt', exempt: {} }, 'exempt')
  defaultPriorityLevel(ex)
  t.same(ex.spec.exempt, { nominalConcurrencyShares: 0, lendablePercent: 0 })
  const bare = pl({ type: 'Exempt' }, 'exempt')
  defaultPriorityLevel(bare)
  t.same(bare.spec, { type: 'Exempt' }, 'an absent exempt block is not invented')
})

t.test('the bootstrap objects are valid', async (t) => {
  for (const o of [...mandatoryFlowSchemas, ...suggestedFlowSchemas]) t.same(validateFlowSchema(clone(o)), [], o.metadata.name)
  for (const o of [...mandatoryPriorityLevels, ...suggestedPriorityLevels]) t.same(validatePriorityLevel(clone(o)), [], o.metadata.name)
  t.same(validateFlowSchema(fs()), [])
})

t.test('FlowSchema matchingPrecedence', async (t) => {
  t.same(lines(validateFlowSchema(fs({ matchingPrecedence: 0 }))), ['FieldValueInvalid spec.matchingPrecedence: Invalid value: 0: must be a positive value'])
  t.same(lines(validateFlowSchema(fs({ matchingPrecedence: -3 }))), ['FieldValueInvalid spec.matchingPrecedence: Invalid value: -3: must be a positive value'])
  t.same(lines(validateFlowSchema(fs({ matchingPrecedence: 10001 }))), ['FieldValueInvalid spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000'])
  t.same(validateFlowSchema(fs({ matchingPrecedence: 10000 })), [])
  t.same(validateFlowSchema(fs({ matchingPrecedence: 2 })), [])
  t.same(lines(validateFlowSchema(fs({ matchingPrecedence: 1 }, 'fred'))), ["FieldValueInvalid spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1"])
})

t.test('FlowSchema distinguisherMethod and priority level reference', async (t) => {
  t.same(validateFlowSchema(fs({ distinguisherMethod: { type: 'ByUser' } })), [])
  t.same(validateFlowSchema(fs({ distinguisherMethod: { type: 'ByNamespace' } })), [])
  t.same(validateFlowSchema(fs({ distinguisherMethod: null })), [], 'null is unset')
  const bad = validateFlowSchema(fs({ distinguisherMethod: { type: 'ByFoo' } }))
  t.same(bad.map((e) => [e.type, e.field, e.supported]), [['FieldValueNotSupported', 'spec.distinguisherMethod.type', ['ByNamespace', 'ByUser']]])
  t.equal(fieldErrorBody(bad[0]), 'Unsupported value: {"type":"ByFoo"}: supported values: "ByNamespace", "ByUser"')
  t.same(validateFlowSchema(fs({ distinguisherMethod: {} })).map((e) => e.field), ['spec.distinguisherMethod.type'], 'type is required inside distinguisherMethod')
  t.same(lines(validateFlowSchema(fs({ priorityLevelConfiguration: {} }))), ['FieldValueRequired spec.priorityLevelConfiguration.name: Required value: must reference a priority level'])
  t.same(lines(validateFlowSchema(fs({ priorityLevelConfiguration: undefined }))), ['FieldValueRequired spec.priorityLevelConfiguration.name: Required value: must reference a priority level'])
  t.same(lines(validateFlowSchema(fs({ priorityLevelConfiguration: { name: 'Bad_Name' } }))), [`FieldValueInvalid spec.priorityLevelConfiguration.name: Invalid value: "Bad_Name": ${SUBDOMAIN}`])
  t.same(validateFlowSchema(fs({ rules: [] })), [], 'an empty rule list is valid (matches nothing)')
})

t.test('FlowSchema rules need subjects and at least one rule list', async (t) => {
  t.same(lines(validateFlowSchema(fsRule({ subjects: [user] }))), ['FieldValueRequired spec.rules[0]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty'])
  t.same(lines(validateFlowSchema(fsRule({ subjects: [], resourceRules: [everyResource()] }))), ['FieldValueRequired spec.rules[0].subjects: Required value: subjects must contain at least one value'])
  t.same(lines(validateFlowSchema(fs({ rules: [{ subjects: [user], resourceRules: [everyResource()] }, { resourceRules: [everyResource()] }] }))), ['FieldValueRequired spec.rules[1].subjects: Required value: subjects must contain at least one value'])
  t.same(validateFlowSchema(fsRule({ subjects: [user], resourceRules: [everyResource()], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['/apis/*'] }] })), [])
})

t.test('FlowSchema subjects', async (t) => {
  const subject = (s: Obj) => lines(validateFlowSchema(fsRule({ subjects: [s], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }] })))
  const p = 'spec.rules[0].subjects[0]'
  t.same(subject({ kind: 'Robot' }), [`FieldValueNotSupported ${p}.kind: Unsupported value: "Robot": supported values: "Group", "ServiceAccount", "User"`])
  t.same(subject({}), [`FieldValueNotSupported ${p}.kind: Unsupported value: "": supported values: "Group", "ServiceAccount", "User"`])
  t.same(subject({ kind: 'ServiceAccount', user: { name: 'fred' }, group: { name: 'fred' } }), [
    `FieldValueRequired ${p}.serviceAccount: Required value: serviceAccount is required when subject kind is 'ServiceAccount'`,
    `FieldValueForbidden ${p}.user: Forbidden: user is forbidden when subject kind is not 'User'`,
    `FieldValueForbidden ${p}.group: Forbidden: group is forbidden when subject kind is not 'Group'`,
  ])
  t.same(subject({ kind: 'User', group: { name: 'fred' }, serviceAccount: { namespace: 's', name: 'n' } }), [
    `FieldValueRequired ${p}.user: Required value: user is required when subject kind is 'User'`,
    `FieldValueForbidden ${p}.serviceAccount: Forbidden: serviceAccount is forbidden when subject kind is not 'ServiceAccount'`,
    `FieldValueForbidden ${p}.group: Forbidden: group is forbidden when subject kind is not 'Group'`,
  ])
  t.same(subject({ kind: 'Group', user: { name: 'fred' }, serviceAccount: { namespace: 's', name: 'n' } }), [
    `FieldValueRequired ${p}.group: Required value: group is required when subject kind is 'Group'`,
    `FieldValueForbidden ${p}.serviceAccount: Forbidden: serviceAccount is forbidden when subject kind is not 'ServiceAccount'`,
    `FieldValueForbidden ${p}.user: Forbidden: user is forbidden when subject kind is not 'User'`,
  ])
  t.same(subject({ kind: 'User', user: { name: '' } }), [`FieldValueRequired ${p}.user.name: Required value`])
  t.same(subject({ kind: 'User', user: {} }), [`FieldValueRequired ${p}.user.name: Required value`])
  t.same(subject({ kind: 'Group', group: { name: '' } }), [`FieldValueRequired ${p}.group.name: Required value`])
  t.same(subject({ kind: 'User', user: { name: '*' } }), [])
  t.same(subject({ kind: 'Group', group: { name: 'system:authenticated' } }), [])
  t.same(subject({ kind: 'ServiceAccount', serviceAccount: { namespace: 'orch-system', name: '*' } }), [], "'*' is any service account")
  t.same(subject({ kind: 'ServiceAccount', serviceAccount: { namespace: 'ns', name: 'robot' } }), [])
  t.same(subject({ kind: 'ServiceAccount', serviceAccount: { name: 'robot' } }), [`FieldValueRequired ${p}.serviceAccount.namespace: Required value: must specify namespace for service account`])
  t.same(subject({ kind: 'ServiceAccount', serviceAccount: { namespace: 'ns', name: '' } }), [`FieldValueRequired ${p}.serviceAccount.name: Required value`])
  t.same(subject({ kind: 'ServiceAccount', serviceAccount: { namespace: 'ns', name: 'Bad_Name' } }), [`FieldValueInvalid ${p}.serviceAccount.name: Invalid value: "Bad_Name": ${SUBDOMAIN}`])
  t.same(subject({ kind: 'ServiceAccount', serviceAccount: { namespace: 'Bad.NS', name: 'robot' } }), [`FieldValueInvalid ${p}.serviceAccount.namespace: Invalid value: "Bad.NS": ${LABEL}`])
})

t.test('FlowSchema resource rules', async (t) => {
  const rr = (o: Obj) => lines(validateFlowSchema(fsRule({ subjects: [user], resourceRules: [{ ...everyResource(), ...o }] })))
  const p = 'spec.rules[0].resourceRules[0]'
  t.same(rr({ verbs: [] }), [`FieldValueRequired ${p}.verbs: Required value: verbs must contain at least one value`])
  t.same(rr({ verbs: undefined }), [`FieldValueRequired ${p}.verbs: Required value: verbs must contain at least one value`])
  t.same(rr({ verbs: ['*', 'create'], apiGroups: ['*', 'tak'], resources: ['*', 'tok'] }), [
    `FieldValueInvalid ${p}.verbs: Invalid value: ["*","create"]: if '*' is present, must not specify other verbs`,
    `FieldValueInvalid ${p}.apiGroups: Invalid value: ["*","tak"]: if '*' is present, must not specify other api groups`,
    `FieldValueInvalid ${p}.resources: Invalid value: ["*","tok"]: if '*' is present, must not specify other resources`,
  ])
  t.same(rr({ verbs: ['get', 'fly'] }), [`FieldValueNotSupported ${p}.verbs: Unsupported value: ["get","fly"]: supported values: ${VERBS}`])
  t.same(rr({ verbs: ['get', 'list', 'watch', 'proxy', 'deletecollection'] }), [])
  t.same(rr({ apiGroups: [] }), [`FieldValueRequired ${p}.apiGroups: Required value: resource rules must supply at least one api group`])
  t.same(rr({ resources: [] }), [`FieldValueRequired ${p}.resources: Required value: resource rules must supply at least one resource`])
  t.same(rr({ apiGroups: [''], resources: ['nodes', 'nodes/status'] }), [], 'core group and sub-resources')
  t.same(rr({ namespaces: [], clusterScope: false }), [`FieldValueRequired ${p}.namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace`])
  t.same(rr({ namespaces: undefined, clusterScope: undefined }), [`FieldValueRequired ${p}.namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace`])
  t.same(rr({ namespaces: [], clusterScope: true }), [], 'namespaces may be empty with clusterScope')
  t.same(rr({ namespaces: ['*', 'a'] }), [`FieldValueInvalid ${p}.namespaces: Invalid value: ["*","a"]: if '*' is present, must not specify other namespaces`])
  t.same(rr({ namespaces: ['a', 'Bad_NS'] }), [`FieldValueInvalid ${p}.namespaces[1]: Invalid value: "Bad_NS": each member of this list must be '*' or a DNS-1123 label; ${LABEL}`])
  t.same(rr({ namespaces: ['kube-public', 'default'], clusterScope: false }), [])
  const second = lines(validateFlowSchema(fs({ rules: [{ subjects: [user], resourceRules: [everyResource(), { ...everyResource(), verbs: [] }] }] })))
  t.same(second, ['FieldValueRequired spec.rules[0].resourceRules[1].verbs: Required value: verbs must contain at least one value'])
})

t.test('FlowSchema non-resource rules', async (t) => {
  const nr = (o: Obj) => lines(validateFlowSchema(fsRule({ subjects: [user], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'], ...o }] })))
  const p = 'spec.rules[0].nonResourceRules[0]'
  t.same(nr({}), [])
  t.same(nr({ verbs: [] }), [`FieldValueRequired ${p}.verbs: Required value: verbs must contain at least one value`])
  t.same(nr({ verbs: ['*', 'get'] }), [`FieldValueInvalid ${p}.verbs: Invalid value: ["*","get"]: if '*' is present, must not specify other verbs`])
  t.same(nr({ verbs: ['post'] }), [`FieldValueNotSupported ${p}.verbs: Unsupported value: ["post"]: supported values: ${VERBS}`], 'upstream checks non-resource verbs against the API verbs too')
  t.same(nr({ nonResourceURLs: [] }), [`FieldValueRequired ${p}.nonResourceURLs: Required value: nonResourceURLs must contain at least one value`])
  t.same(nr({ nonResourceURLs: ['*', '/apis'] }), [`FieldValueInvalid ${p}.nonResourceURLs: Invalid value: ["*","/apis"]: if '*' is present, must not specify other non-resource URLs`])
  t.same(nr({ nonResourceURLs: ['*'] }), [])
  t.same(nr({ nonResourceURLs: ['/ok', 'healthz', '/a b', '/a//b', '/health*', '/*/*', '/healthz/*/foo', ''] }), [
    `FieldValueInvalid ${p}.nonResourceURLs[1]: Invalid value: "healthz": must start with slash`,
    `FieldValueInvalid ${p}.nonResourceURLs[2]: Invalid value: "/a b": must not contain white-space`,
    `FieldValueInvalid ${p}.nonResourceURLs[3]: Invalid value: "/a//b": must not contain double slash`,
    `FieldValueInvalid ${p}.nonResourceURLs[4]: Invalid value: "/health*": wildcard can only do suffix matching`,
    `FieldValueInvalid ${p}.nonResourceURLs[5]: Invalid value: "/*/*": wildcard can only do suffix matching`,
    `FieldValueInvalid ${p}.nonResourceURLs[6]: Invalid value: "/healthz/*/foo": wildcard can only do suffix matching`,
    `FieldValueInvalid ${p}.nonResourceURLs[7]: Invalid value: "": must not be empty`,
  ])
  for (const ok of ['/', '/apis/', '/healthz/*', '/foo']) t.equal(validateNonResourceURLPath(ok, 'x'), undefined, ok)
  t.ok(validateNonResourceURLPath('//', 'x'))
  t.ok(validateNonResourceURLPath('/////', 'x'))
})

t.test('mandatory FlowSchemas must keep their fixed spec', async (t) => {
  const exempt = clone(mandatoryFlowSchemas[0])
  t.same(validateFlowSchema(exempt), [])
  exempt.spec.rules[0].nonResourceRules[0].nonResourceURLs = ['/']
  t.same(lines(validateFlowSchema(exempt)).map((l) => l.replace(/Invalid value: .*: spec/, 'Invalid value: …: spec')), ["FieldValueInvalid spec: Invalid value: …: spec of 'exempt' must equal the fixed value"])
  const catchAll = clone(mandatoryFlowSchemas[1])
  catchAll.spec.distinguisherMethod = { type: 'ByNamespace' }
  t.same(validateFlowSchema(catchAll).map((e) => [e.type, e.field, e.detail]), [['FieldValueInvalid', 'spec', "spec of 'catch-all' must equal the fixed value"]])
  // Semantic equality: key order, empty lists and false booleans do not count as changes.
  const reordered = clone(mandatoryFlowSchemas[1])
  reordered.spec = { rules: reordered.spec.rules.map((r: Obj) => ({ nonResourceRules: r.nonResourceRules, resourceRules: r.resourceRules, subjects: r.subjects })), distinguisherMethod: { type: 'ByUser' }, matchingPrecedence: 10000, priorityLevelConfiguration: { name: 'catch-all' } }
  reordered.spec.rules[0].subjects[0].user = null
  t.same(validateFlowSchema(reordered), [])
  const exemptNoScope = clone(mandatoryFlowSchemas[0])
  exemptNoScope.spec.rules[0].resourceRules[0].clusterScope = false
  t.equal(validateFlowSchema(exemptNoScope).length, 1, 'clusterScope false is a change')
})

t.test('FlowSchema status conditions', async (t) => {
  const withStatus = (conditions: Obj[]) => ({ ...fs(), status: { conditions } })
  t.same(validateFlowSchema(withStatus([{ type: 'Dangling', status: 'False' }])), [])
  t.same(lines(validateFlowSchema(withStatus([{ type: '1' }, { type: '1' }]))), ['FieldValueDuplicate status.conditions[1].type: Duplicate value: "1"'])
  t.same(lines(validateFlowSchema(withStatus([{ type: '' }]))), ['FieldValueRequired status.conditions[0].type: Required value: must not be empty'])
})

t.test('PriorityLevelConfiguration type', async (t) => {
  t.same(validatePriorityLevel(pl({ type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } }, 'exempt')), [])
  t.same(lines(validatePriorityLevel(pl({}))), ['FieldValueNotSupported spec.type: Unsupported value: "": supported values: "Exempt", "Limited"'])
  t.same(lines(validatePriorityLevel(pl({ type: 'Sometimes' }))), ['FieldValueNotSupported spec.type: Unsupported value: "Sometimes": supported values: "Exempt", "Limited"'])
  t.same(lines(validatePriorityLevel(pl({ type: 'Exempt' }, 'not-exempt'))), ["FieldValueInvalid spec.type: Invalid value: \"Exempt\": type must be 'Exempt' if and only if name is 'exempt'"])
  const badExempt = validatePriorityLevel({ metadata: { name: 'exempt' }, spec: limited({ nominalConcurrencyShares: 42 }).spec })
  t.same(badExempt.map((e) => [e.type, e.field, e.detail]), [
    ['FieldValueInvalid', 'spec.type', "type must be 'Exempt' if and only if name is 'exempt'"],
    ['FieldValueInvalid', 'spec', "spec of 'exempt' except the 'spec.exempt' field must equal the fixed value"],
  ])
  t.same(lines(validatePriorityLevel(pl({ type: 'Exempt', limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Reject' } } }, 'exempt'))).slice(0, 1), ['FieldValueForbidden spec.limited: Forbidden: must be nil if the type is not Limited'])
  t.same(lines(validatePriorityLevel(pl({ type: 'Limited', exempt: {} }))), [
    'FieldValueForbidden spec.exempt: Forbidden: must be nil if the type is Limited',
    'FieldValueRequired spec.limited: Required value: must not be empty when type is Limited',
  ])
  t.same(lines(validatePriorityLevel(pl({ type: 'Limited' }))), ['FieldValueRequired spec.limited: Required value: must not be empty when type is Limited'])
})

t.test('PriorityLevelConfiguration shares and percentages', async (t) => {
  t.same(validatePriorityLevel(limited({ nominalConcurrencyShares: 0 })), [], 'v1 allows an explicit 0')
  t.same(lines(validatePriorityLevel(limited({ nominalConcurrencyShares: -1 }))), ['FieldValueInvalid spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer'])
  for (const ok of [0, 100]) t.same(validatePriorityLevel(limited({ lendablePercent: ok })), [], `lendablePercent ${ok}`)
  t.same(lines(validatePriorityLevel(limited({ lendablePercent: 101 }))), ['FieldValueInvalid spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive'])
  t.same(lines(validatePriorityLevel(limited({ lendablePercent: -1 }))), ['FieldValueInvalid spec.limited.lendablePercent: Invalid value: -1: must be between 0 and 100, inclusive'])
  for (const ok of [0, 1, 100, 250]) t.same(validatePriorityLevel(limited({ borrowingLimitPercent: ok })), [], `borrowingLimitPercent ${ok}`)
  t.same(lines(validatePriorityLevel(limited({ borrowingLimitPercent: -1 }))), ['FieldValueInvalid spec.limited.borrowingLimitPercent: Invalid value: -1: if specified, must be a non-negative integer'])
  t.same(lines(validatePriorityLevel(pl({ type: 'Exempt', exempt: { nominalConcurrencyShares: -1, lendablePercent: 101 } }, 'exempt'))), [
    'FieldValueInvalid spec.exempt.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer',
    'FieldValueInvalid spec.exempt.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive',
  ])
  t.same(lines(validatePriorityLevel(pl({ type: 'Exempt', exempt: { nominalConcurrencyShares: -1, lendablePercent: -1 } }, 'exempt'))), [
    'FieldValueInvalid spec.exempt.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer',
    'FieldValueInvalid spec.exempt.lendablePercent: Invalid value: -1: must be between 0 and 100, inclusive',
  ])
})

t.test('PriorityLevelConfiguration limit response', async (t) => {
  t.same(lines(validatePriorityLevel(pl({ type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Drop' } } }))), ['FieldValueNotSupported spec.limited.limitResponse.type: Unsupported value: "Drop": supported values: "Queue", "Reject"'])
  t.same(lines(validatePriorityLevel(pl({ type: 'Limited', limited: { nominalConcurrencyShares: 1 } }))), ['FieldValueNotSupported spec.limited.limitResponse.type: Unsupported value: "": supported values: "Queue", "Reject"'])
  t.same(lines(validatePriorityLevel(pl({ type: 'Limited', limited: { nominalConcurrencyShares: 100, limitResponse: { type: 'Reject', queuing: { queues: 512, handSize: 4, queueLengthLimit: 100 } } } }))), ['FieldValueForbidden spec.limited.limitResponse.queuing: Forbidden: must be nil if limited.limitResponse.type is not Limited'])
  t.same(lines(validatePriorityLevel(pl({ type: 'Limited', limited: { nominalConcurrencyShares: 100, limitResponse: { type: 'Queue' } } }))), ['FieldValueRequired spec.limited.limitResponse.queuing: Required value: must not be empty if limited.limitResponse.type is Limited'])
})

t.test('PriorityLevelConfiguration queuing', async (t) => {
  const q = 'spec.limited.limitResponse.queuing'
  t.same(validatePriorityLevel(queuing({ queues: 512, handSize: 4, queueLengthLimit: 100 })), [])
  t.same(validatePriorityLevel(queuing({ queues: 10_000_000, handSize: 2 })), [], 'queues = 10^7, handSize 2')
  t.same(validatePriorityLevel(queuing({ queues: 1, handSize: 1 })), [], 'one queue disables shuffle sharding')
  t.same(lines(validatePriorityLevel(queuing({ queueLengthLimit: 0 }))), [`FieldValueInvalid ${q}.queueLengthLimit: Invalid value: 0: must be positive`])
  t.same(lines(validatePriorityLevel(queuing({ queues: 0 }))), [`FieldValueInvalid ${q}.queues: Invalid value: 0: must be positive`, `FieldValueInvalid ${q}.handSize: Invalid value: 8: should not be greater than queues (0)`])
  t.same(lines(validatePriorityLevel(queuing({ handSize: 0 }))), [`FieldValueInvalid ${q}.handSize: Invalid value: 0: must be positive`])
  t.same(lines(validatePriorityLevel(queuing({ queues: 7, handSize: 8 }))), [`FieldValueInvalid ${q}.handSize: Invalid value: 8: should not be greater than queues (7)`])
  t.same(validatePriorityLevel(queuing({ queues: 8, handSize: 8 })), [], 'handSize may equal queues')
  t.same(lines(validatePriorityLevel(queuing({ queues: 512, handSize: 8 }))), [`FieldValueInvalid ${q}.handSize: Invalid value: 8: required entropy bits of deckSize 512 and handSize 8 should not be greater than 60`])
  t.same(lines(validatePriorityLevel(queuing({ queues: 128, handSize: 10 }))), [`FieldValueInvalid ${q}.handSize: Invalid value: 10: required entropy bits of deckSize 128 and handSize 10 should not be greater than 60`])
  t.same(lines(validatePriorityLevel(queuing({ queues: 2147483647, handSize: 3 }))), [
    `FieldValueInvalid ${q}.queues: Invalid value: 2147483647: must not be greater than 10000000`,
    `FieldValueInvalid ${q}.handSize: Invalid value: 3: required entropy bits of deckSize 2147483647 and handSize 3 should not be greater than 60`,
  ])
  t.same(lines(validatePriorityLevel(queuing({ queues: 10_000_001, handSize: 1 }))), [`FieldValueInvalid ${q}.queues: Invalid value: 10000001: must not be greater than 10000000`])
})

t.test('mandatory priority levels', async (t) => {
  const catchAll = clone(mandatoryPriorityLevels[1])
  t.same(validatePriorityLevel(catchAll), [])
  catchAll.spec.limited.nominalConcurrencyShares = 42
  t.same(validatePriorityLevel(catchAll).map((e) => [e.type, e.field, e.detail]), [['FieldValueInvalid', 'spec', "spec of 'catch-all' must equal the fixed value"]])
  const lendable = clone(mandatoryPriorityLevels[1])
  lendable.spec.limited.borrowingLimitPercent = 0
  t.equal(validatePriorityLevel(lendable).length, 1, 'adding borrowingLimitPercent changes the spec')
  const exempt = clone(mandatoryPriorityLevels[0])
  exempt.spec.exempt = { nominalConcurrencyShares: 10, lendablePercent: 10 }
  t.same(validatePriorityLevel(exempt), [], 'operators may change spec.exempt of the exempt level')
  t.same(validatePriorityLevel(pl({ type: 'Exempt' }, 'exempt')), [], 'spec.exempt may be left out')
  const repurposed = pl({ type: 'Limited', exempt: {}, limited: { nominalConcurrencyShares: 42, limitResponse: { type: 'Reject' } } }, 'exempt')
  t.same(validatePriorityLevel(repurposed).map((e) => [e.type, e.field, e.detail]), [
    ['FieldValueInvalid', 'spec.type', "type must be 'Exempt' if and only if name is 'exempt'"],
    ['FieldValueForbidden', 'spec.exempt', 'must be nil if the type is Limited'],
    ['FieldValueInvalid', 'spec', "spec of 'exempt' except the 'spec.exempt' field must equal the fixed value"],
  ])
  const extra = pl({ type: 'Exempt', exempt: {}, limited: { nominalConcurrencyShares: 42, limitResponse: { type: 'Reject' } } }, 'exempt')
  t.same(validatePriorityLevel(extra).map((e) => [e.type, e.field]), [['FieldValueForbidden', 'spec.limited'], ['FieldValueInvalid', 'spec']])
})

t.test('PriorityLevelConfiguration status conditions', async (t) => {
  const withStatus = (conditions: Obj[]) => ({ ...limited({}), status: { conditions } })
  t.same(lines(validatePriorityLevel(withStatus([{ type: 'A' }, { type: 'A' }]))), ['FieldValueDuplicate status.conditions[1].type: Duplicate value: "A"'])
  t.same(lines(validatePriorityLevel(withStatus([{ status: 'True' }]))), ['FieldValueRequired status.conditions[0].type: Required value: must not be empty'])
})
