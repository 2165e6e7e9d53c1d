// The ValidatingAdmissionPolicy plugin: policies and their bindings (read again only after one of them was written, each
// policy's CEL compiled once) matched against a write, then evaluated: Deny refuses, Warn warns, Audit records.
import { ApiError, forbidden, type GR } from '../machinery/errors.js'
import { celEvaluate, celProgram, celThrow, CelAuthorizer, CelPending, toCelValue, type CelAuthzAttributes, type CelDecision, type CelOutcome, type CelProgram } from '../machinery/cel.js'
import { labelSelectorOf, matchLabels, type LabelSelector } from '../machinery/selectors.js'
import { labelsOf, matches, matchOf, type Match, type MatchAttributes, type Matched } from './policy-matching.js'
import { objectKey, recordObject, recordRv, typePrefix } from '../machinery/storage-format.js'
import type { Obj, ResolvedDefinition } from '../registry/define.js'
import type { Registry } from '../registry/index.js'
import type { Store } from '../pipeline/store.js'
import type { RequestContext } from '../pipeline/context.js'
import type { AuthzClient } from '../../actors/authz/client.js'

export type PolicyOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT'

const GROUP = 'admissionregistration.orch.io'
const POLICIES = 'validatingadmissionpolicies'
const BINDINGS = 'validatingadmissionpolicybindings'
/** Writes of these are never matched by a policy (a policy could otherwise lock itself in). */
const POLICY_RESOURCES = new Set([POLICIES, BINDINGS, 'mutatingadmissionpolicies', 'mutatingadmissionpolicybindings'])
/** The longest message a messageExpression may give (upstream MaxEvaluatedMessageExpressionSizeBytes). */
const MAX_MESSAGE = 5 * 1024
/** Audit annotation values are cut to this (upstream maxAuditAnnotationValueLength). */
const MAX_ANNOTATION_VALUE = 10 * 1024
const VALIDATION_FAILURE_KEY = 'validation.policy.admission.orch.io/validation_failure'
const REASON_CODES: Record<string, number> = { Forbidden: 403, Unauthorized: 401, RequestEntityTooLarge: 413, Invalid: 422 }

let store: Store | undefined
let registry: Registry | undefined
let authz: AuthzClient | undefined

export function configurePolicyAdmission(s: Store, r: Registry, a: AuthzClient | undefined): void {
  store = s
  registry = r
  authz = a
  hooks = []
  hooksStamp = -1n
  compiled = new Map()
}

// ---- compiled policies and bindings ----

interface Validation { program: CelProgram; message: string; messageProgram: CelProgram | undefined; reason: string }

interface Policy {
  name: string
  rv: number
  ignore: boolean
  match: Match | undefined
  /** The params' type, or why it cannot be used (a policy-level configuration error). */
  paramKind: { def: ResolvedDefinition } | { error: string } | undefined
  conditions: Array<{ name: string; program: CelProgram }>
  variables: Array<{ name: string; program: CelProgram }>
  validations: Validation[]
  annotations: Array<{ key: string; program: CelProgram; expression: string }>
}

interface ParamRef { name: string; namespace: string; selector: LabelSelector | undefined; notFound: string }

interface Binding {
  name: string
  match: Match | undefined
  paramRef: ParamRef | undefined
  actions: string[]
}

interface Hook { policy: Policy; bindings: Binding[] }

/** The policies that have bindings, with them (by policy name), as of `hooksStamp` policy writes. */
let hooks: Hook[] = []
let hooksStamp = -1n
/** Compiled policies by name, each at the resourceVersion it was compiled from. */
let compiled = new Map<string, Policy>()

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])
const str = (v: unknown): string => (typeof v === 'string' ? v : '')

/** schema.GroupVersionKind's String(): `group/version, Kind=kind`. */
function gvkString(group: string, version: string, kind: string): string { return `${group}/${version}, Kind=${kind}` }

/** The stored type a paramKind names (an upstream `*.k8s.io` group is read as ours), or the configuration error. */
function paramKindOf(v: unknown): Policy['paramKind'] {
  if (!isObj(v)) return undefined
  const apiVersion = str(v.apiVersion)
  const kind = str(v.kind)
  const slash = apiVersion.indexOf('/')
  const group = slash < 0 ? '' : apiVersion.slice(0, slash)
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1)
  let def = registry?.byKind(group, version, kind)
  if (def === undefined && group.endsWith('.k8s.io')) def = registry?.byKind(`${group.slice(0, -'.k8s.io'.length)}.orch.io`, version, kind)
  if (def === undefined || !registry!.all.includes(def)) return { error: `failed to find resource referenced by paramKind: '${gvkString(group, version, kind)}'` }
  return { def }
}

function compilePolicy(o: Obj, rv: number): Policy {
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map((x) => (isObj(x) ? x : {})) : [])
  return {
    name: str(o.metadata?.name),
    rv,
    ignore: spec.failurePolicy === 'Ignore',
    match: matchOf(spec.matchConstraints),
    paramKind: paramKindOf(spec.paramKind),
    conditions: list(spec.matchConditions).map((c) => ({ name: str(c.name), program: celProgram(str(c.expression)) })),
    variables: list(spec.variables).map((c) => ({ name: str(c.name), program: celProgram(str(c.expression)) })),
    validations: list(spec.validations).map((c) => ({
      program: celProgram(str(c.expression)),
      message: str(c.message),
      messageProgram: str(c.messageExpression) !== '' ? celProgram(str(c.messageExpression)) : undefined,
      reason: str(c.reason),
    })),
    annotations: list(spec.auditAnnotations).map((c) => ({ key: str(c.key), program: celProgram(str(c.valueExpression)), expression: str(c.valueExpression) })),
  }
}

function bindingOf(o: Obj): Binding {
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  const pr = spec.paramRef
  return {
    name: str(o.metadata?.name),
    match: matchOf(spec.matchResources),
    paramRef: isObj(pr) ? { name: str(pr.name), namespace: str(pr.namespace), selector: isObj(pr.selector) ? labelSelectorOf(pr.selector) : undefined, notFound: str(pr.parameterNotFoundAction) } : undefined,
    actions: strings(spec.validationActions),
  }
}

/** Reads every policy and binding again (after the count of their writes moved); policies unchanged keep their programs. */
function refresh(s: Store, stamp: bigint): void {
  const pShard = s.shardFor(GROUP, POLICIES)
  // A snapshot taken after the count was read holds every write it counts.
  s.snapshot(pShard)
  const policies = new Map<string, Policy>()
  for (const { value } of s.range(pShard, typePrefix(GROUP, POLICIES))) {
    const rv = recordRv(value)
    const o = JSON.parse(recordObject(value).toString('utf8')) as Obj
    const name = str(o.metadata?.name)
    const known = compiled.get(name)
    policies.set(name, known !== undefined && known.rv === rv ? known : compilePolicy(o, rv))
  }
  compiled = policies
  const bShard = s.shardFor(GROUP, BINDINGS)
  s.snapshot(bShard)
  const byPolicy = new Map<string, Binding[]>()
  for (const { value } of s.range(bShard, typePrefix(GROUP, BINDINGS))) {
    const o = JSON.parse(recordObject(value).toString('utf8')) as Obj
    const policyName = str(o.spec?.policyName)
    let list = byPolicy.get(policyName)
    if (list === undefined) { list = []; byPolicy.set(policyName, list) }
    list.push(bindingOf(o))
  }
  const next: Hook[] = []
  // A binding naming a policy that does not exist is ignored.
  for (const [name, policy] of policies) {
    const bindings = byPolicy.get(name)
    if (bindings !== undefined) next.push({ policy, bindings })
  }
  hooks = next
  hooksStamp = stamp
}

/**
 * Whether any policy is bound: the cost of a write when none is, one comparison of the count of policy writes (the
 * policies and bindings are read again only after it moved).
 */
export function policiesBound(): boolean {
  const s = store
  if (s === undefined) return false
  const stamp = s.admissionPolicyWrites()
  if (stamp !== hooksStamp) refresh(s, stamp)
  return hooks.length > 0
}

// ---- one request ----

/** The admission attributes of the request, and what its evaluations share (computed once, on first use). */
export interface Attributes extends MatchAttributes {
  ctx: RequestContext
  def: ResolvedDefinition
  operation: PolicyOperation
  kind: RequestKind
  options: Obj | null
  celObject: unknown
  celOldObject: unknown
  /** The request's namespace as stored: undefined until read, null when there is none. */
  namespaceObj: Obj | null | undefined
  /** The `namespaceObject` variable, once made. */
  namespaceVar: unknown
  authorizer: CelAuthorizer | undefined
}

export function namespaceOf(a: Attributes): Obj | null {
  if (a.namespaceObj !== undefined) return a.namespaceObj
  const s = store!
  const rec = a.namespace === '' ? undefined : s.getFresh(s.shardFor('', 'namespaces'), objectKey('', 'namespaces', '', a.namespace))
  a.namespaceObj = rec ? JSON.parse(recordObject(rec).toString('utf8')) as Obj : null
  return a.namespaceObj
}

function gvk(group: string, version: string, kind: string): Obj { return { group, version, kind } }
function gvr(group: string, version: string, resource: string): Obj { return { group, version, resource } }

/** The `request` variable (an AdmissionRequest as upstream builds it for CEL: no object, no oldObject, no uid). */
export function requestValue(a: Attributes, m: Matched): Obj {
  const u = a.ctx.user
  const userInfo: Obj = {}
  if (u !== undefined) {
    if (u.username !== '') userInfo.username = u.username
    if (u.uid !== '') userInfo.uid = u.uid
    if (u.groups.length > 0) userInfo.groups = [...u.groups]
    if (u.extra !== undefined && Object.keys(u.extra).length > 0) userInfo.extra = structuredClone(u.extra)
  }
  const r: Obj = {
    uid: '',
    kind: gvk(m.kind.group, m.kind.version, m.kind.kind),
    resource: gvr(m.group, m.version, m.resource),
  }
  if (a.subresource !== '') r.subResource = a.subresource
  r.requestKind = gvk(a.kind.group, a.kind.version, a.kind.kind)
  r.requestResource = gvr(a.group, a.version, a.resource)
  if (a.subresource !== '') r.requestSubResource = a.subresource
  if (a.name !== '') r.name = a.name
  if (a.namespace !== '') r.namespace = a.namespace
  r.operation = a.operation
  r.userInfo = userInfo
  r.dryRun = dryRunOf(a.ctx)
  r.options = a.options === null ? null : toCelValue(a.options)
  return r
}

export function dryRunOf(ctx: RequestContext): boolean {
  return ctx.query.getAll('dryRun').includes('All')
}

/** The operation options as upstream hands them to admission (CreateOptions, UpdateOptions, DeleteOptions). */
function optionsOf(ctx: RequestContext, operation: PolicyOperation): Obj | null {
  const kind = operation === 'CREATE' ? 'CreateOptions' : operation === 'UPDATE' ? 'UpdateOptions' : operation === 'DELETE' ? 'DeleteOptions' : ''
  if (kind === '') return null
  const o: Obj = { kind, apiVersion: 'meta.orch.io/v1' }
  const dry = ctx.query.getAll('dryRun')
  if (dry.length > 0) o.dryRun = dry
  const fm = ctx.query.get('fieldManager')
  if (fm !== null && fm !== '' && operation !== 'DELETE') o.fieldManager = fm
  return o
}

/** The `namespaceObject` variable: the namespace with the metadata upstream keeps for it; null for cluster-scoped requests. */
function namespaceValue(a: Attributes): unknown {
  if (a.namespaceVar === undefined) a.namespaceVar = namespaceVariable(a)
  return a.namespaceVar
}

function namespaceVariable(a: Attributes): unknown {
  // The namespace of a Namespace request is the namespace itself: it gets none.
  if (a.namespace === '' || (a.group === '' && a.resource === 'namespaces')) return null
  const ns = namespaceOf(a)
  if (ns === null) return null
  const m: Obj = isObj(ns.metadata) ? ns.metadata : {}
  const meta: Obj = {}
  for (const k of ['name', 'generateName', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'finalizers']) {
    if (m[k] !== undefined) meta[k] = m[k]
  }
  const v: Obj = { metadata: meta }
  if (ns.spec !== undefined) v.spec = ns.spec
  if (ns.status !== undefined) v.status = ns.status
  return toCelValue(v)
}

export function authorizerOf(a: Attributes): CelAuthorizer {
  if (a.authorizer !== undefined) return a.authorizer
  const u = a.ctx.user
  const who = { user: u?.username ?? '', groups: u?.groups ?? [], uid: u?.uid ?? '', extra: u?.extra }
  a.authorizer = new CelAuthorizer(who, authorize, { group: a.group, resource: a.resource, subresource: a.subresource, namespace: a.namespace, name: a.name })
  return a.authorizer
}

function authorize(attrs: CelAuthzAttributes): CelDecision | Promise<CelDecision> {
  const c = authz
  if (c === undefined) return { allowed: false, reason: '', error: 'no authorizer is configured' }
  const d = c.authorize(attrs)
  if (d instanceof Promise) return d.then((x) => ({ allowed: x.decision === 'allow', reason: x.reason, error: '' }))
  return { allowed: d.decision === 'allow', reason: d.reason, error: '' }
}

/** The params of a binding (upstream CollectParams): `[null]` without paramKind or paramRef; or the configuration error. */
function collectParams(p: Policy, b: Binding, a: Attributes): { params: unknown[] } | { error: string } {
  const pk = p.paramKind
  if (pk === undefined || b.paramRef === undefined) return { params: [null] }
  // A paramKind that names no type was reported for the policy already.
  if ('error' in pk) return { error: pk.error }
  const ref = b.paramRef
  const def = pk.def
  const s = store!
  const shard = s.shardFor(def.group, def.resource)
  let namespace = ''
  if (def.scope === 'Namespaced') {
    namespace = ref.namespace !== '' ? ref.namespace : a.namespace
    if (namespace === '') return { error: 'cannot use namespaced paramRef in policy binding that matches cluster-scoped resources' }
  } else if (ref.namespace !== '') {
    return { error: 'paramRef.namespace must not be provided for a cluster-scoped `paramKind`' }
  }
  const params: unknown[] = []
  if (ref.name !== '') {
    const rec = s.getFresh(shard, objectKey(def.group, def.resource, namespace, ref.name))
    if (rec) params.push(toCelValue(JSON.parse(recordObject(rec).toString('utf8'))))
  } else if (ref.selector !== undefined) {
    s.snapshot(shard)
    for (const { value } of s.range(shard, typePrefix(def.group, def.resource, namespace))) {
      const o = JSON.parse(recordObject(value).toString('utf8')) as Obj
      if (matchLabels(ref.selector, labelsOf(o) ?? {})) params.push(toCelValue(o))
    }
  } else {
    return { error: 'one of name or selector must be provided' }
  }
  if (params.length === 0 && ref.notFound === 'Deny') return { error: 'no params found for policy binding with `Deny` parameterNotFoundAction' }
  return { params }
}

/** A refusal or failure of one evaluation (upstream PolicyDecision with action deny). */
interface Decision { message: string; reason: string; policy: string; binding: string | undefined }

/** What the bindings' actions made of the request: the refusals in order, and the audit annotations recorded. */
interface Outcome { denied: Decision[]; audit: Array<[string, string]> }

/** One evaluation's variables: each evaluated on first use, at most once, seeing only the variables before it. */
function variablesFor(p: Policy, base: Record<string, unknown>): Record<string, unknown> {
  const n = p.variables.length
  if (n === 0) return {}
  const done: Array<CelOutcome | undefined> = new Array(n)
  const views: Array<Record<string, unknown> | undefined> = new Array(n + 1)
  const view = (k: number): Record<string, unknown> => {
    let v = views[k]
    if (v !== undefined) return v
    v = {}
    for (let i = 0; i < k; i++) {
      const variable = p.variables[i]
      Object.defineProperty(v, variable.name, {
        enumerable: true,
        get(): unknown {
          let out = done[i]
          if (out === undefined) {
            const r = celEvaluate(variable.program, { ...base, variables: view(i) })
            // Its own evaluation waits for the authorizer: the expression using it is run again once that is done.
            if (r instanceof Promise) throw new CelPending(r.then((x) => { done[i] = x }))
            done[i] = out = r
          }
          if (out.ok) return out.value
          if (variable.program.run === undefined) celThrow(`composited variable "${variable.name}" fails to compile: ${variable.program.error ?? ''}`)
          return celThrow(out.detail)
        },
      })
    }
    views[k] = v
    return v
  }
  return view(n)
}

type Step = Generator<Promise<CelOutcome>, CelOutcome, CelOutcome>

/** Evaluates a program; a generator step so that an evaluation that waits makes the whole dispatch wait. */
function* run(p: CelProgram, act: Record<string, unknown>): Step {
  const r = celEvaluate(p, act)
  return r instanceof Promise ? yield r : r
}

/** utilerrors.NewAggregate's text. */
function aggregate(msgs: string[]): string { return msgs.length === 1 ? msgs[0] : `[${msgs.join(', ')}]` }

function celTypeName(v: unknown): string {
  if (typeof v === 'bigint') return 'int'
  if (typeof v === 'number') return 'double'
  if (typeof v === 'boolean') return 'bool'
  if (Array.isArray(v)) return 'list'
  if (v instanceof Uint8Array) return 'bytes'
  return 'map'
}

/**
 * One (policy, binding, param) evaluation, as upstream's validator: match conditions, then every validation (and the
 * message of those that fail), then the audit annotations.
 */
function* evaluate(p: Policy, b: Binding, param: unknown, a: Attributes, m: Matched, out: Outcome, annotations: Map<string, string[]>): Generator<Promise<CelOutcome>, void, CelOutcome> {
  const base: Record<string, unknown> = {
    object: a.celObject, oldObject: a.celOldObject, request: requestValue(a, m), params: param ?? null,
    namespaceObject: namespaceValue(a), authorizer: authorizerOf(a),
  }
  const act: Record<string, unknown> = { ...base, variables: variablesFor(p, base) }
  const failed: Decision[] = []
  if (p.conditions.length > 0) {
    const errors: string[] = []
    for (const c of p.conditions) {
      const r = yield* run(c.program, act)
      if (!r.ok) errors.push(r.error)
      else if (r.value === false) return
    }
    if (errors.length > 0) {
      if (!p.ignore) enforce(b, { message: aggregate(errors), reason: '', policy: p.name, binding: b.name }, 0, a, out)
      return
    }
  }
  for (let i = 0; i < p.validations.length; i++) {
    const v = p.validations[i]
    const r = yield* run(v.program, act)
    if (!r.ok) {
      if (!p.ignore) enforce(b, { message: r.error, reason: '', policy: p.name, binding: b.name }, i, a, out)
      continue
    }
    if (r.value === true) continue
    let message = ''
    if (v.messageProgram !== undefined) {
      const mr = yield* run(v.messageProgram, { ...act, authorizer: null })
      if (mr.ok && typeof mr.value === 'string') {
        message = mr.value.trim()
        if (Buffer.byteLength(message) > MAX_MESSAGE || message.includes('\n')) message = ''
      }
    }
    if (message === '' && v.message !== '') message = v.message.trim()
    if (message === '') message = `failed expression: ${v.program.expression.trim()}`
    enforce(b, { message, reason: v.reason === '' ? 'Invalid' : v.reason, policy: p.name, binding: b.name }, i, a, out)
  }
  for (const an of p.annotations) {
    // As upstream, audit annotations are evaluated without the authorizer.
    const r = yield* run(an.program, { ...act, authorizer: null })
    if (!r.ok) {
      if (!p.ignore) failed.push({ message: r.error, reason: '', policy: p.name, binding: b.name })
      continue
    }
    if (r.value === null) continue
    if (typeof r.value !== 'string') {
      failed.push({ message: `valueExpression '${an.expression}' resulted in unsupported return type: ${celTypeName(r.value)}. Return type must be either string or null.`, reason: '', policy: p.name, binding: b.name })
      continue
    }
    let value = r.value.trim()
    if (value === '') continue
    if (value.length > MAX_ANNOTATION_VALUE) value = value.slice(0, MAX_ANNOTATION_VALUE)
    const values = annotations.get(an.key) ?? []
    if (!values.includes(value)) values.push(value)
    annotations.set(an.key, values)
  }
  // An audit annotation that failed refuses the request whatever the binding's actions.
  out.denied.push(...failed)
}

/** What a binding's validationActions do with one failed validation. */
function enforce(b: Binding, d: Decision, index: number, a: Attributes, out: Outcome): void {
  for (const action of b.actions) {
    if (action === 'Deny') out.denied.push(d)
    else if (action === 'Warn') a.ctx.addWarning(`Validation failed for ValidatingAdmissionPolicy '${d.policy}' with binding '${b.name}': ${d.message}`)
    else if (action === 'Audit') {
      out.audit.push([VALIDATION_FAILURE_KEY, JSON.stringify([{ message: d.message, policy: d.policy, binding: b.name, expressionIndex: index, validationActions: b.actions }])])
    }
  }
}

function* dispatch(a: Attributes): Generator<Promise<CelOutcome>, void, CelOutcome> {
  const out: Outcome = { denied: [], audit: [] }
  for (const { policy: p, bindings } of hooks) {
    if (p.match === undefined) continue
    const pm = matches(p.match, a, () => namespaceOf(a))
    if (pm.matched === undefined) continue
    if (p.paramKind !== undefined && 'error' in p.paramKind) {
      if (!p.ignore) out.denied.push({ message: `failed to configure policy: ${p.paramKind.error}`, reason: '', policy: p.name, binding: undefined })
      continue
    }
    const annotations = new Map<string, string[]>()
    for (const b of bindings) {
      if (b.match !== undefined) {
        const bm = matches(b.match, a, () => namespaceOf(a))
        if (bm.error !== undefined) {
          if (!p.ignore) out.denied.push({ message: `failed to configure binding: ${bm.error}`, reason: '', policy: p.name, binding: b.name })
          continue
        }
        if (bm.matched === undefined) continue
      }
      const params = collectParams(p, b, a)
      if ('error' in params) {
        if (!p.ignore) out.denied.push({ message: `failed to configure binding: ${params.error}`, reason: '', policy: p.name, binding: b.name })
        continue
      }
      if (a.celObject === undefined) {
        a.celObject = a.object === undefined ? null : toCelValue(a.object)
        a.celOldObject = a.oldObject === undefined ? null : toCelValue(a.oldObject)
      }
      for (const param of params.params) yield* evaluate(p, b, param, a, pm.matched, out, annotations)
    }
    for (const [key, values] of annotations) out.audit.push([`${p.name}/${key}`, values.join(', ')])
  }
  if (out.audit.length > 0 && a.ctx.logs('debug')) a.ctx.log.debug({ auditAnnotations: Object.fromEntries(out.audit) }, 'admission policy audit annotations')
  if (out.denied.length > 0) throw refusal(a, out.denied[0])
}

/** upstream's refusal: admission.NewForbidden for the request, its reason and code those of the failed validation. */
function refusal(a: Attributes, d: Decision): ApiError {
  const text = d.binding === undefined
    ? `ValidatingAdmissionPolicy '${d.policy}' denied request: ${d.message}`
    : `ValidatingAdmissionPolicy '${d.policy}' with binding '${d.binding}' denied request: ${d.message}`
  let name = a.name
  if (name === '') name = str(a.object?.metadata?.name) || str(a.object?.metadata?.generateName) || 'Unknown'
  const gr: GR = { group: a.def.group, resource: a.resource }
  const f = forbidden(gr, name, text)
  const reason = d.reason === '' ? 'Invalid' : d.reason
  return new ApiError(REASON_CODES[reason] ?? 422, reason, f.message, { ...f.details, causes: [{ message: text }] })
}

/** Runs the dispatch: synchronously to the end unless an evaluation waits (an authorizer check not cached). */
function drive(g: Generator<Promise<CelOutcome>, void, CelOutcome>, input?: CelOutcome): void | Promise<void> {
  const step = input === undefined ? g.next() : g.next(input)
  if (step.done) return
  return step.value.then((r) => drive(g, r))
}

/** The kind of a request whose object is not of the resource's kind (a connect's options, a Scale, a Binding). */
export interface RequestKind { group: string; version: string; kind: string }

/**
 * The plugin: every bound policy that matches the request is evaluated with each of its matching bindings (and each of
 * their params). Throws (or rejects with) the refusal. `object` is absent on delete, `oldObject` on create and
 * connect; `kind` is the kind of those objects when they are not of the resource's kind, `options` the operation's
 * options when not the ones of the operation. Call only when policiesBound().
 */
export function admitPolicies(ctx: RequestContext, def: ResolvedDefinition, operation: PolicyOperation, object: Obj | undefined, oldObject: Obj | undefined, kind?: RequestKind, options?: Obj | null): void | Promise<void> {
  if (def.group === GROUP && POLICY_RESOURCES.has(def.resource)) return
  return drive(dispatch(attributesOf(ctx, def, operation, object, oldObject, kind, options)))
}

/**
 * The admission attributes of a request, as the policies and the webhooks see it: `kind` is the kind of its objects
 * when they are not of the resource's kind, `options` the operation's options when not the ones of the operation.
 */
export function attributesOf(ctx: RequestContext, def: ResolvedDefinition, operation: PolicyOperation, object: Obj | undefined, oldObject: Obj | undefined, kind?: RequestKind, options?: Obj | null): Attributes {
  const i = ctx.info
  let name = i.name
  if (name === '' && operation === 'CREATE') name = str(object?.metadata?.name)
  let namespace = def.scope === 'Namespaced' ? i.namespace : ''
  if (def.group === '' && def.resource === 'namespaces' && operation !== 'CREATE') namespace = name
  // A request through an upstream alias path (`rbac.authorization.k8s.io`) is of that group, as upstream would see it.
  const group = ctx.aliasGroup ?? def.group
  return {
    ctx, def, operation, group, version: def.version, resource: def.resource, subresource: i.subresource.split('/')[0],
    kind: kind ?? { group, version: def.version, kind: def.kind },
    namespace, name, object, oldObject, options: options === undefined ? optionsOf(ctx, operation) : options,
    celObject: undefined, celOldObject: undefined, namespaceObj: undefined, namespaceVar: undefined, authorizer: undefined,
  }
}
