// The virtual resources: access reviews, SelfSubjectReview, TokenReview, and the TokenRequest sub-resource of service accounts
// (nothing is stored); the route to the pod sub-resources with handlers of their own (binding, eviction).
import {
  ApiError, badRequest, conflict, invalid, methodNotAllowed, notFound, resourceNotFound, fieldInvalid, fieldRequired, type FieldError,
} from '../machinery/errors.js'
import { decodeObject as decodeProtobuf } from '../machinery/codecs/protobuf.js'
import { objectKey, recordObject } from '../machinery/storage-format.js'
import { issueToken, type SigningKey, type BoundObjectRef, type ObjectRef } from '../auth/service-account.js'
import { admitNodeRestriction } from '../admission/node-restriction.js'
import { liveLookups } from '../admission/chain.js'
import { enabled as admissionPlugins } from '../admission/plugins.js'
import { nodeIdentity } from '../machinery/node-refs.js'
import type { Obj, ResolvedDefinition } from '../registry/define.js'
import type { Attributes } from '../../actors/authz/messages.js'
import { authzClient } from './authorize.js'
import { authenticateToken } from './authenticate.js'
import { rfc3339 } from './admission.js'
import { checkFields, decodeBody } from './decode.js'
import { bindPod } from './binding.js'
import { evictPod } from './eviction.js'
import { objectResponse } from './dispatch.js'
import type { Store } from './store.js'
import type { RequestContext, Response, UserInfo } from './context.js'

const AUTHN = 'authentication.orch.io'
const AUTHZ = 'authorization.orch.io'
const AUTHN_UPSTREAM = 'authentication.k8s.io'
const PROTOBUF = 'application/vnd.kubernetes.protobuf'

export interface TokenIssuance {
  key: SigningKey
  /** The first --service-account-issuer: what bound tokens carry as `iss`. */
  issuer: string
  apiAudiences: string[]
  /** --service-account-max-token-expiration in seconds (0: no limit). */
  maxExpirationSeconds: number
  /** Pod-bound tokens of exactly 3607 s with the API audiences get a year, with `warnafter` (upstream extend-expiration). */
  extendExpiration: boolean
}

let store: Store
let issuance: TokenIssuance | null = null
let aliases = true

export function configureReviews(s: Store, tokens: TokenIssuance | null, upstreamAliases: boolean): void {
  store = s
  issuance = tokens
  aliases = upstreamAliases
}

/** route()'s hook: the handler of a virtual resource or sub-resource, or null for everything else. */
export function virtualRoute(ctx: RequestContext, def: ResolvedDefinition): Promise<Response> | null {
  if (def.virtual) return review(ctx, def)
  if (def.group === '' && def.resource === 'serviceaccounts' && ctx.info.subresource === 'token') return tokenRequest(ctx)
  if (def.group === '' && def.resource === 'pods' && ctx.info.subresource === 'binding') return bindPod(ctx, def)
  if (def.group === '' && def.resource === 'pods' && ctx.info.subresource === 'eviction') return evictPod(ctx, def)
  return null
}

// ---------------------------------------------------------------- decoding

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** Whether the last decoded body named the upstream group (or came as protobuf, which only typed clients send). */
let sentUpstream = false

/** A JSON, YAML or protobuf body of the kind (typed clients send protobuf); either spelling of the group is accepted. */
function decodeKind(ctx: RequestContext, group: string, kind: string): Obj {
  sentUpstream = false
  const apiVersion = `${group}/v1`
  const ct = (ctx.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase()
  let v: unknown
  if (ct === PROTOBUF) {
    try { v = decodeProtobuf(ctx.body, { apiVersion, kind }) } catch (err) { throw badRequest(`the body of the request could not be decoded: ${(err as Error).message}`) }
    sentUpstream = true
  } else {
    v = ctx.body.length === 0 ? {} : decodeBody(ctx)
  }
  if (!isObj(v)) throw badRequest(`couldn't get version/kind; json parse error: the body is not a JSON object`)
  const upstream = group.replace(/\.orch\.io$/, '.k8s.io')
  if (v.apiVersion !== undefined && v.apiVersion !== apiVersion && v.apiVersion !== `${upstream}/v1`) {
    throw badRequest(`the API version in the data (${v.apiVersion}) does not match the expected API version (${apiVersion})`)
  }
  if (v.kind !== undefined && v.kind !== kind) {
    throw badRequest(`${v.kind} in version "v1" cannot be handled as a ${kind}: no kind "${v.kind}" is registered for version "${apiVersion}"`)
  }
  if (v.apiVersion === `${upstream}/v1`) sentUpstream = true
  // Unknown fields are dropped and reported as for any other kind (fieldValidation: Warn by default, Strict refuses).
  if (ctx.def?.kind === kind) checkFields(ctx, ctx.def, v)
  if (v.metadata === undefined || v.metadata === null) v.metadata = {}
  if (!isObj(v.metadata)) throw badRequest('metadata must be an object')
  v.apiVersion = apiVersion
  v.kind = kind
  return v
}

/** 201 with the answered object, in the negotiated form (through an alias path, in the alias spelling). */
function created(ctx: RequestContext, o: Obj): Response { return objectResponse(ctx, 201, JSON.stringify(o)) }

function userInfoOf(u: UserInfo): Obj {
  const out: Obj = {}
  if (u.username) out.username = u.username
  if (u.uid) out.uid = u.uid
  if (u.groups.length > 0) out.groups = [...u.groups]
  if (u.extra && Object.keys(u.extra).length > 0) out.extra = u.extra
  return out
}

/** metadata holding nothing but (null) timestamps (and, where allowed, the namespace) counts as empty. */
function metadataErrors(m: Obj, allowNamespace: boolean): FieldError[] {
  const keys = Object.keys(m).filter((k) => !(k === 'creationTimestamp' && m[k] === null) && !(allowNamespace && k === 'namespace'))
  return keys.length === 0 ? [] : [fieldInvalid('metadata', m, 'must be empty')]
}

// ---------------------------------------------------------------- reviews

async function review(ctx: RequestContext, def: ResolvedDefinition): Promise<Response> {
  // Each review lives at its own scope only: cluster-scoped ones have no namespaced path, LocalSubjectAccessReview no
  // cluster-wide one (upstream registers no such routes: 404).
  if ((def.scope === 'Cluster') !== (ctx.info.namespace === '')) throw resourceNotFound()
  if (ctx.info.verb !== 'create') throw methodNotAllowed(ctx.info.verb || ctx.method, { group: def.group, resource: def.resource })
  if (ctx.info.name !== '') throw methodNotAllowed()
  switch (def.resource) {
    case 'selfsubjectreviews': return selfSubjectReview(ctx)
    case 'tokenreviews': return tokenReview(ctx)
    case 'selfsubjectaccessreviews': case 'subjectaccessreviews': case 'localsubjectaccessreviews': return accessReview(ctx, def)
    case 'selfsubjectrulesreviews': return rulesReview(ctx)
    default: throw methodNotAllowed()
  }
}

function selfSubjectReview(ctx: RequestContext): Response {
  const o = decodeKind(ctx, AUTHN, 'SelfSubjectReview')
  return created(ctx, {
    kind: 'SelfSubjectReview', apiVersion: o.apiVersion,
    metadata: { ...o.metadata, creationTimestamp: rfc3339(Date.now()) },
    status: { userInfo: userInfoOf(ctx.user!) },
  })
}

async function tokenReview(ctx: RequestContext): Promise<Response> {
  const o = decodeKind(ctx, AUTHN, 'TokenReview')
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  if (typeof spec.token !== 'string' || spec.token === '') throw badRequest('token is required for TokenReview in authentication')
  const audiences: string[] | undefined = Array.isArray(spec.audiences) && spec.audiences.length > 0 ? spec.audiences.map(String) : undefined
  const r = await authenticateToken(spec.token, audiences)
  const status: Obj = {}
  if (r.ok) {
    status.authenticated = true
    status.user = userInfoOf(r.user)
    if (r.audiences.length > 0) status.audiences = r.audiences
  } else {
    status.user = {}
    status.error = r.error
  }
  return created(ctx, { kind: 'TokenReview', apiVersion: o.apiVersion, metadata: { ...o.metadata, creationTimestamp: rfc3339(Date.now()) }, spec, status })
}

function str(v: unknown): string { return typeof v === 'string' ? v : '' }

function attributesFromSpec(spec: Obj, user: UserInfo): Attributes {
  const base = { user: user.username, groups: user.groups, uid: user.uid, ...(user.extra ? { extra: user.extra } : {}) }
  const ra = spec.resourceAttributes
  if (isObj(ra)) {
    const a: Attributes = {
      ...base, verb: str(ra.verb), isResourceRequest: true, apiGroup: str(ra.group), apiVersion: str(ra.version),
      namespace: str(ra.namespace), resource: str(ra.resource), subresource: str(ra.subresource), name: str(ra.name), path: '',
    }
    const fs = isObj(ra.fieldSelector) ? ra.fieldSelector.rawSelector : undefined
    if (typeof fs === 'string' && fs !== '') a.fieldSelector = fs
    return a
  }
  const na: Obj = isObj(spec.nonResourceAttributes) ? spec.nonResourceAttributes : {}
  return {
    ...base, verb: str(na.verb), isResourceRequest: false, apiGroup: '', apiVersion: '', namespace: '', resource: '', subresource: '', name: '', path: str(na.path),
  }
}

/** ValidateSubjectAccessReviewSpec and friends. */
function specErrors(spec: Obj, kind: string): FieldError[] {
  const errs: FieldError[] = []
  const hasRA = isObj(spec.resourceAttributes)
  const hasNA = isObj(spec.nonResourceAttributes)
  if (hasRA && hasNA) errs.push(fieldInvalid('spec.nonResourceAttributes', spec.nonResourceAttributes, 'cannot be specified in combination with resourceAttributes'))
  if (!hasRA && !hasNA) errs.push(fieldInvalid('spec.resourceAttributes', null, 'exactly one of nonResourceAttributes or resourceAttributes must be specified'))
  if (kind !== 'SelfSubjectAccessReview') {
    const groups = Array.isArray(spec.groups) ? spec.groups : []
    if (str(spec.user) === '' && groups.length === 0) errs.push(fieldInvalid('spec.user', str(spec.user), 'at least one of user or group must be specified'))
  }
  return errs
}

async function accessReview(ctx: RequestContext, def: ResolvedDefinition): Promise<Response> {
  const kind = def.kind
  const o = decodeKind(ctx, AUTHZ, kind)
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  o.spec = spec
  const local = kind === 'LocalSubjectAccessReview'
  if (local) {
    // The object takes the namespace of the request (a different one is refused first); its spec must name it too.
    const ns = ctx.info.namespace
    if (o.metadata.namespace !== undefined && o.metadata.namespace !== '' && o.metadata.namespace !== ns) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request')
    }
    o.metadata.namespace = ns
  }
  const errs = [...metadataErrors(o.metadata, local), ...specErrors(spec, kind)]
  if (local) {
    if (isObj(spec.resourceAttributes) && str(spec.resourceAttributes.namespace) !== o.metadata.namespace) {
      errs.push(fieldInvalid('spec.resourceAttributes.namespace', str(spec.resourceAttributes.namespace), 'must match metadata.namespace'))
    }
    if (isObj(spec.nonResourceAttributes)) errs.push(fieldInvalid('spec.nonResourceAttributes', spec.nonResourceAttributes, 'disallowed on this kind of request'))
  }
  if (errs.length > 0) throw invalid(`${kind}.${AUTHZ}`, AUTHZ, kind, str(o.metadata.name), errs)
  let user: UserInfo
  if (kind === 'SelfSubjectAccessReview') {
    user = ctx.user!
  } else {
    const extra = isObj(spec.extra) ? Object.fromEntries(Object.entries(spec.extra).map(([k, v]) => [k, Array.isArray(v) ? v.map(String) : []])) : undefined
    user = { username: str(spec.user), uid: str(spec.uid), groups: Array.isArray(spec.groups) ? spec.groups.map(String) : [], ...(extra ? { extra } : {}) }
  }
  const d = await authzClient().authorize(attributesFromSpec(spec, user))
  const status: Obj = { allowed: d.decision === 'allow' }
  if (d.decision === 'deny') status.denied = true
  if (d.reason) status.reason = d.reason
  if (d.failure) status.evaluationError = d.failure
  return created(ctx, { kind, apiVersion: o.apiVersion, metadata: o.metadata, spec, status })
}

async function rulesReview(ctx: RequestContext): Promise<Response> {
  const o = decodeKind(ctx, AUTHZ, 'SelfSubjectRulesReview')
  const spec: Obj = isObj(o.spec) ? o.spec : {}
  o.spec = spec
  const ns = str(spec.namespace)
  if (ns === '') throw badRequest('no namespace on request')
  const u = ctx.user!
  const r = await authzClient().rules(u.username, u.groups, ns)
  const status: Obj = { resourceRules: r.resourceRules, nonResourceRules: r.nonResourceRules, incomplete: r.incomplete }
  if (r.evaluationError) status.evaluationError = r.evaluationError
  return created(ctx, { kind: 'SelfSubjectRulesReview', apiVersion: o.apiVersion, metadata: o.metadata, spec, status })
}

// ---------------------------------------------------------------- serviceaccounts/<name>/token

function readLive(resource: string, namespace: string, name: string): Obj | undefined {
  const rec = store.getFresh(store.shardFor('', resource), objectKey('', resource, namespace, name))
  return rec ? JSON.parse(recordObject(rec).toString('utf8')) as Obj : undefined
}

const BOUND_KINDS: Record<string, { resource: string; namespaced: boolean }> = {
  Pod: { resource: 'pods', namespaced: true },
  Secret: { resource: 'secrets', namespaced: true },
  Node: { resource: 'nodes', namespaced: false },
}
const MIN_EXPIRATION = 600
const MAX_EXPIRATION = 2 ** 32
const DEFAULT_EXPIRATION = 3600
const WARN_AFTER = 3607
const EXTENDED_EXPIRATION = 365 * 24 * 3600

function invalidTokenRequest(name: string, errs: FieldError[]): ApiError {
  return invalid(`TokenRequest.${AUTHN}`, AUTHN, 'TokenRequest', name, errs)
}

async function tokenRequest(ctx: RequestContext): Promise<Response> {
  const i = ctx.info
  if (i.verb !== 'create') throw methodNotAllowed(i.verb || ctx.method, { group: '', resource: 'serviceaccounts/token' })
  if (i.name === '' || i.namespace === '') throw notFound({ group: '', resource: 'serviceaccounts' }, i.name)
  if (!issuance) throw methodNotAllowed('create', { group: '', resource: 'serviceaccounts/token' })
  const tr = decodeKind(ctx, AUTHN, 'TokenRequest')
  const upstreamSpelling = sentUpstream
  const name = i.name
  const ns = i.namespace
  if (tr.metadata.name !== undefined && tr.metadata.name !== '' && tr.metadata.name !== name) {
    // The token endpoint's own check (upstream's TokenREST): a 422 on metadata.name, named after the account.
    throw invalid(`TokenRequest.${AUTHN}`, AUTHN, 'TokenRequest', name, [fieldInvalid('metadata.name', tr.metadata.name, 'must match the service account name if specified')])
  }
  if (tr.metadata.namespace !== undefined && tr.metadata.namespace !== '' && tr.metadata.namespace !== ns) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request')
  }
  const spec: Obj = isObj(tr.spec) ? { ...tr.spec } : {}
  const errs: FieldError[] = []
  if (spec.expirationSeconds === undefined || spec.expirationSeconds === null) spec.expirationSeconds = DEFAULT_EXPIRATION
  const exp = Number(spec.expirationSeconds)
  if (!Number.isInteger(exp)) errs.push(fieldInvalid('spec.expirationSeconds', spec.expirationSeconds, 'must be an integer'))
  else if (exp < MIN_EXPIRATION) errs.push(fieldInvalid('spec.expirationSeconds', exp, 'may not specify a duration less than 10 minutes'))
  else if (exp > MAX_EXPIRATION) errs.push(fieldInvalid('spec.expirationSeconds', exp, 'may not specify a duration larger than 2^32 seconds'))
  const ref = spec.boundObjectRef
  if (ref !== undefined && ref !== null && !isObj(ref)) errs.push(fieldInvalid('spec.boundObjectRef', ref, 'must be an object'))
  if (isObj(ref) && str(ref.name) === '') errs.push(fieldRequired('spec.boundObjectRef.name'))
  if (errs.length > 0) throw invalidTokenRequest(name, errs)
  if (!Array.isArray(spec.audiences) || spec.audiences.length === 0) spec.audiences = [...issuance.apiAudiences]
  const audiences = (spec.audiences as unknown[]).map(String)

  const sa = readLive('serviceaccounts', ns, name)
  if (!sa) throw notFound({ group: '', resource: 'serviceaccounts' }, name)

  let bound: BoundObjectRef | undefined
  let node: ObjectRef | undefined
  if (isObj(ref)) {
    const kind = str(ref.kind)
    const k = BOUND_KINDS[kind]
    const apiVersion = str(ref.apiVersion)
    if (!k || (apiVersion !== '' && apiVersion !== 'v1')) throw badRequest(`cannot bind token for object of kind ${JSON.stringify(kind)} (apiVersion ${JSON.stringify(apiVersion)}): only v1 Pod, Secret and Node are supported`)
    const target = readLive(k.resource, k.namespaced ? ns : '', str(ref.name))
    if (!target) throw notFound({ group: '', resource: k.resource }, str(ref.name))
    const uid = str(target.metadata?.uid)
    if (str(ref.uid) !== '' && str(ref.uid) !== uid) {
      throw conflict({ group: '', resource: kind }, str(ref.name), `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`)
    }
    if (kind === 'Pod') {
      const podSa = str(target.spec?.serviceAccountName) || 'default'
      if (podSa !== name) throw badRequest(`cannot bind token for serviceaccount ${JSON.stringify(name)} to pod running with different serviceaccount name.`)
      const nodeName = str(target.spec?.nodeName)
      if (nodeName !== '') {
        const n = readLive('nodes', '', nodeName)
        node = { name: nodeName, uid: str(n?.metadata?.uid) }
      }
    }
    bound = { kind, name: str(ref.name), uid, apiVersion: 'v1' }
    spec.boundObjectRef = { ...ref, kind, apiVersion: 'v1', name: str(ref.name), uid }
  }

  const u = ctx.user!
  if (admissionPlugins.nodeRestriction && nodeIdentity(u.username, u.groups).isNode) {
    const err = admitNodeRestriction({
      user: u.username, groups: u.groups, operation: 'CREATE', group: '', resource: 'serviceaccounts', subresource: 'token',
      namespace: ns, name, object: { ...tr, spec },
    }, liveLookups)
    if (err) throw err
  }

  // The requested lifetime (shortened to the maximum) is what the answer reports; an extended token lives longer.
  let requested = exp
  if (issuance.maxExpirationSeconds > 0 && requested > issuance.maxExpirationSeconds) {
    requested = issuance.maxExpirationSeconds
    ctx.responseHeaders.push(['Warning', `299 - "requested expiration of ${exp} seconds shortened to ${requested} seconds"`])
  }
  let lifetime = requested
  let warnAfter: number | undefined
  if (issuance.extendExpiration && bound?.kind === 'Pod' && requested === WARN_AFTER &&
    audiences.length === issuance.apiAudiences.length && audiences.every((a) => issuance!.apiAudiences.includes(a))) {
    lifetime = Math.max(lifetime, EXTENDED_EXPIRATION)
    warnAfter = WARN_AFTER
  }
  const now = Date.now()
  const issued = await issueToken({
    key: issuance.key, issuer: issuance.issuer, namespace: ns, name, uid: str(sa.metadata?.uid), audiences,
    expirationSeconds: lifetime, boundObjectRef: bound, node, warnAfterSeconds: warnAfter, now,
  })
  // Typed clients (kubectl create token: protobuf, upstream group) decode the answer by its apiVersion.
  const apiVersion = aliases && upstreamSpelling ? `${AUTHN_UPSTREAM}/v1` : `${AUTHN}/v1`
  return created(ctx, {
    kind: 'TokenRequest', apiVersion,
    metadata: { name, namespace: ns, creationTimestamp: rfc3339(now) },
    spec: { ...spec, expirationSeconds: requested },
    status: { token: issued.token, expirationTimestamp: rfc3339(now + requested * 1000) },
  })
}
