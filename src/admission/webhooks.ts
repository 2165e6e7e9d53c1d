// The MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins: the webhook configurations (read again only after
// one of them was written, each webhook's client and match conditions made once), matched against a request as the
// policies are (policy-matching.ts), then called with an AdmissionReview: mutating ones in order with their JSON patches
// applied (and reinvoked once if needed), validating ones in parallel.
import { randomUUID } from 'node:crypto'
import { ApiError, badRequest, forbidden, internal, notFound } from '../machinery/errors.js'
import { celEvaluate, celProgram, toCelValue, type CelProgram } from '../machinery/cel.js'
import { WebhookCallError, WebhookClient } from '../machinery/webhook-client.js'
import { apply as applyJsonPatch, PatchError } from '../machinery/patch/json-patch.js'
import { objectKey, recordObject, typePrefix } from '../machinery/storage-format.js'
import { fillZeroValues, type Obj, type ResolvedDefinition } from '../registry/define.js'
import type { Store } from '../pipeline/store.js'
import type { RequestContext } from '../pipeline/context.js'
import { matches, matchOf, type Match, type Matched } from './policy-matching.js'
import { attributesOf, authorizerOf, dryRunOf, namespaceOf, requestValue, type Attributes, type PolicyOperation, type RequestKind } from './validating-policy.js'

const GROUP = 'admissionregistration.orch.io'
const MUTATING = 'mutatingwebhookconfigurations'
const VALIDATING = 'validatingwebhookconfigurations'
/** Writes of these are never sent to a webhook (upstream IsExemptAdmissionConfigurationResource): no lock-out. */
const EXEMPT = new Set([MUTATING, VALIDATING, 'validatingadmissionpolicies', 'validatingadmissionpolicybindings', 'mutatingadmissionpolicies', 'mutatingadmissionpolicybindings'])
/** The group of the AdmissionReview sent (upstream `admission.k8s.io`); replies may use either spelling. */
const REVIEW_GROUP = 'admission.orch.io'
const REVIEW_GROUP_UPSTREAM = 'admission.k8s.io'
/** The label that ties an EndpointSlice to its Service (upstream `kubernetes.io/service-name`). */
const SERVICE_NAME_LABEL = 'orch.io/service-name'

let store: Store | undefined

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)
const str = (v: unknown): string => (typeof v === 'string' ? v : '')

export function configureWebhookAdmission(s: Store): void {
  store = s
  for (const c of clients.values()) c.close()
  clients = new Map()
  mutating = []
  validating = []
  stamp = -1n
}

// ---- compiled configurations ----

/** How a webhook is reached: a client (or why there is none), and the service it stands for, if any. */
interface Target {
  client: WebhookClient | undefined
  error: string
  service: { namespace: string; name: string; port: number; path: string } | undefined
  timeoutSeconds: number
}

interface Hook {
  name: string
  /** undefined: no rules, so the webhook matches nothing. */
  match: Match | undefined
  failClosed: boolean
  sideEffects: string
  /** The AdmissionReview version sent: the first of admissionReviewVersions this server speaks. */
  reviewVersion: 'v1' | 'v1beta1' | undefined
  ifNeeded: boolean
  conditions: Array<{ name: string; program: CelProgram }>
  target: Target
}

let mutating: Hook[] = []
let validating: Hook[] = []
/** The count of webhook configuration writes the hooks were read at. */
let stamp = -1n
/** Clients by what they are made of (URL or service, CA bundle, timeout): kept across reads while their webhook stays. */
let clients = new Map<string, WebhookClient>()

function targetOf(w: Obj, timeoutSeconds: number, next: Map<string, WebhookClient>): Target {
  const cc: Obj = isObj(w.clientConfig) ? w.clientConfig : {}
  const caText = str(cc.caBundle)
  const ca = caText === '' ? undefined : Buffer.from(caText, 'base64')
  const svc = isObj(cc.service) ? cc.service : undefined
  const service = svc === undefined ? undefined : {
    namespace: str(svc.namespace), name: str(svc.name), port: typeof svc.port === 'number' ? svc.port : 443, path: str(svc.path),
  }
  const url = service !== undefined ? `https://${service.name}.${service.namespace}.svc:${service.port}${service.path || '/'}` : str(cc.url)
  const key = JSON.stringify([url, caText, timeoutSeconds])
  let client = next.get(key) ?? clients.get(key)
  let error = ''
  if (client === undefined) {
    try {
      const u = new URL(url)
      client = new WebhookClient({ url: u, ca: ca !== undefined && ca.length > 0 ? ca : undefined, insecure: false, serverName: service !== undefined ? `${service.name}.${service.namespace}.svc` : undefined }, timeoutSeconds * 1000)
    } catch (err) {
      error = url === '' ? 'webhook configuration must have either service or URL' : `Unparsable URL: ${(err as Error).message}`
    }
  }
  if (client !== undefined) next.set(key, client)
  return { client, error, service, timeoutSeconds }
}

function hookOf(w: Obj, next: Map<string, WebhookClient>): Hook {
  const rules = Array.isArray(w.rules) && w.rules.length > 0 ? w.rules : undefined
  const versions = Array.isArray(w.admissionReviewVersions) ? w.admissionReviewVersions : []
  const timeoutSeconds = typeof w.timeoutSeconds === 'number' && w.timeoutSeconds > 0 ? w.timeoutSeconds : 10
  return {
    name: str(w.name),
    match: rules === undefined ? undefined : matchOf({ resourceRules: rules, namespaceSelector: w.namespaceSelector, objectSelector: w.objectSelector, matchPolicy: w.matchPolicy }),
    failClosed: w.failurePolicy !== 'Ignore',
    sideEffects: str(w.sideEffects),
    reviewVersion: versions.find((v: unknown): v is 'v1' | 'v1beta1' => v === 'v1' || v === 'v1beta1'),
    ifNeeded: w.reinvocationPolicy === 'IfNeeded',
    conditions: (Array.isArray(w.matchConditions) ? w.matchConditions : []).map((c: unknown) => {
      const o: Obj = isObj(c) ? c : {}
      return { name: str(o.name), program: celProgram(str(o.expression)) }
    }),
    target: targetOf(w, timeoutSeconds, next),
  }
}

/** Every webhook of the configurations of one type, configurations in name order (as upstream sorts them). */
function readHooks(s: Store, resource: string, next: Map<string, WebhookClient>): Hook[] {
  const shard = s.shardFor(GROUP, resource)
  // A snapshot taken after the count was read holds every write it counts.
  s.snapshot(shard)
  const out: Hook[] = []
  for (const { value } of s.range(shard, typePrefix(GROUP, resource))) {
    const o = JSON.parse(recordObject(value).toString('utf8')) as Obj
    for (const w of Array.isArray(o.webhooks) ? o.webhooks : []) if (isObj(w)) out.push(hookOf(w, next))
  }
  return out
}

function refresh(s: Store, at: bigint): void {
  const next = new Map<string, WebhookClient>()
  mutating = readHooks(s, MUTATING, next)
  validating = readHooks(s, VALIDATING, next)
  for (const [key, c] of clients) if (!next.has(key)) c.close()
  clients = next
  stamp = at
}

/** Whether any mutating webhook is configured: one comparison of the count of configuration writes while it stands. */
export function mutatingWebhooksExist(): boolean {
  const s = store
  if (s === undefined) return false
  const at = s.webhookConfigWrites()
  if (at !== stamp) refresh(s, at)
  return mutating.length > 0
}

/** Whether any validating webhook is configured (as mutatingWebhooksExist). */
export function validatingWebhooksExist(): boolean {
  const s = store
  if (s === undefined) return false
  const at = s.webhookConfigWrites()
  if (at !== stamp) refresh(s, at)
  return validating.length > 0
}

// ---- matching ----

/** A failure to reach the webhook or to read its answer (upstream ErrCallingWebhook): the failure policy decides. */
class CallFailure extends Error {
  constructor(hook: string, reason: string) { super(`failed calling webhook "${hook}": ${reason}`) }
}

/** upstream ShouldCallHook up to the match conditions: the namespace and object selectors, then the rules. */
function matchOfHook(h: Hook, a: Attributes): Matched | undefined {
  if (h.match === undefined) return undefined
  const r = matches(h.match, a, () => namespaceOf(a))
  if (r.matched === undefined) return undefined
  // The namespace a selector had to read does not exist: upstream answers its NotFound.
  if (r.error !== undefined) throw notFound({ group: '', resource: 'namespaces' }, a.namespace)
  return r.matched
}

/** The match conditions (CEL over object, oldObject, request, authorizer): false skips; errors follow the failure policy. */
async function conditionsHold(h: Hook, a: Attributes, m: Matched): Promise<boolean> {
  if (h.conditions.length === 0) return true
  const act: Record<string, unknown> = {
    object: a.object === undefined ? null : toCelValue(a.object),
    oldObject: a.oldObject === undefined ? null : toCelValue(a.oldObject),
    request: requestValue(a, m),
    authorizer: authorizerOf(a),
  }
  const errors: string[] = []
  for (const c of h.conditions) {
    const r0 = celEvaluate(c.program, act)
    const r = r0 instanceof Promise ? await r0 : r0
    if (!r.ok) errors.push(r.error)
    else if (r.value === false) return false
    else if (r.value !== true) errors.push(`expression '${c.program.expression}' resulted in a non-boolean value`)
  }
  if (errors.length === 0) return true
  if (!h.failClosed) return false
  throw forbidden({ group: a.def.group, resource: a.resource }, a.name, errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`)
}

// ---- calling ----

function gvkText(apiVersion: unknown, kind: unknown): string {
  const av = str(apiVersion)
  const slash = av.indexOf('/')
  return `${slash < 0 ? '' : av.slice(0, slash)}/${slash < 0 ? av : av.slice(slash + 1)}, Kind=${str(kind)}`
}

/** The AdmissionReview of one call, in upstream's field order. */
function reviewOf(version: string, uid: string, a: Attributes, m: Matched): Obj {
  const u = a.ctx.user
  const userInfo: Obj = {}
  if (u !== undefined && u.username !== '') userInfo.username = u.username
  if (u !== undefined && u.uid !== '') userInfo.uid = u.uid
  if (u !== undefined && u.groups.length > 0) userInfo.groups = u.groups
  if (u?.extra !== undefined && Object.keys(u.extra).length > 0) userInfo.extra = u.extra
  const request: Obj = {
    uid,
    kind: { group: m.kind.group, version: m.kind.version, kind: m.kind.kind },
    resource: { group: m.group, version: m.version, resource: m.resource },
  }
  if (a.subresource !== '') request.subResource = a.subresource
  request.requestKind = { group: a.kind.group, version: a.kind.version, kind: a.kind.kind }
  request.requestResource = { group: a.group, version: a.version, resource: a.resource }
  if (a.subresource !== '') request.requestSubResource = a.subresource
  if (a.name !== '') request.name = a.name
  if (a.namespace !== '') request.namespace = a.namespace
  request.operation = a.operation
  request.userInfo = userInfo
  request.object = a.object ?? null
  request.oldObject = a.oldObject ?? null
  request.dryRun = dryRun(a)
  request.options = a.options
  return { kind: 'AdmissionReview', apiVersion: `${REVIEW_GROUP}/${version}`, request }
}

/** Whether the request is a dry run: by its query, or by the options of its body (a delete's). */
function dryRun(a: Attributes): boolean {
  return dryRunOf(a.ctx) || (Array.isArray(a.options?.dryRun) && a.options.dryRun.includes('All'))
}

/** upstream ResolveEndpoint: a ready endpoint of the Service's port, from its EndpointSlices (else its Endpoints). */
export function resolveService(svc: NonNullable<Target['service']>): { host: string; port: number } {
  const s = store!
  const read = (group: string, resource: string): Obj | undefined => {
    const rec = s.getFresh(s.shardFor(group, resource), objectKey(group, resource, svc.namespace, svc.name))
    return rec ? JSON.parse(recordObject(rec).toString('utf8')) as Obj : undefined
  }
  const service = read('', 'services')
  if (service === undefined) throw new Error(`services "${svc.name}" not found`)
  const spec: Obj = isObj(service.spec) ? service.spec : {}
  const type = str(spec.type) || 'ClusterIP'
  if (type === 'ExternalName') return { host: str(spec.externalName), port: svc.port }
  if (type !== 'ClusterIP' && type !== 'NodePort' && type !== 'LoadBalancer') throw new Error(`unsupported service type "${type}"`)
  const svcPort = (Array.isArray(spec.ports) ? spec.ports : []).find((p: Obj) => isObj(p) && p.port === svc.port)
  if (svcPort === undefined) throw new Error(`no service port ${svc.port} found for service "${svc.name}"`)
  const portName = str(svcPort.name)
  const found: Array<{ host: string; port: number }> = []
  const shard = s.shardFor('discovery.orch.io', 'endpointslices')
  s.snapshot(shard)
  for (const { value } of s.range(shard, typePrefix('discovery.orch.io', 'endpointslices', svc.namespace))) {
    const slice = JSON.parse(recordObject(value).toString('utf8')) as Obj
    if (slice.metadata?.labels?.[SERVICE_NAME_LABEL] !== svc.name) continue
    for (const p of Array.isArray(slice.ports) ? slice.ports : []) {
      if (!isObj(p) || str(p.name) !== portName || typeof p.port !== 'number') continue
      for (const ep of Array.isArray(slice.endpoints) ? slice.endpoints : []) {
        if (!isObj(ep) || ep.conditions?.ready === false || !Array.isArray(ep.addresses) || typeof ep.addresses[0] !== 'string') continue
        found.push({ host: ep.addresses[0], port: p.port })
      }
    }
  }
  if (found.length === 0) {
    const eps = read('', 'endpoints')
    for (const subset of Array.isArray(eps?.subsets) ? eps!.subsets : []) {
      if (!isObj(subset)) continue
      const p = (Array.isArray(subset.ports) ? subset.ports : []).find((x: Obj) => isObj(x) && str(x.name) === portName && typeof x.port === 'number')
      if (p === undefined) continue
      for (const ad of Array.isArray(subset.addresses) ? subset.addresses : []) if (isObj(ad) && typeof ad.ip === 'string') found.push({ host: ad.ip, port: p.port })
    }
  }
  if (found.length === 0) throw new Error(`no endpoints available for service "${svc.name}"`)
  return found[Math.floor(Math.random() * found.length)]
}

interface Verdict { allowed: boolean; patch: unknown[] | undefined; result: Obj | undefined }

/**
 * One call (upstream callHook / callAttrMutatingHook up to the patch): refuses a dry run the webhook cannot take,
 * posts the review, checks the answer. Rejects with a CallFailure for what the failure policy decides, with an
 * ApiError otherwise.
 */
async function call(h: Hook, a: Attributes, m: Matched, mutatingHook: boolean): Promise<Verdict> {
  if (dryRun(a) && h.sideEffects !== 'None' && h.sideEffects !== 'NoneOnDryRun') {
    throw badRequest(`admission webhook "${h.name}" does not support dry run`)
  }
  if (h.reviewVersion === undefined) throw new CallFailure(h.name, 'could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)')
  const t = h.target
  if (t.client === undefined) throw new CallFailure(h.name, `could not get REST client: ${t.error}`)
  const uid = randomUUID()
  const review = reviewOf(h.reviewVersion, uid, a, m)
  let at: { url: string; shown: string } | undefined
  if (t.service !== undefined) {
    const path = `${t.service.path || '/'}?timeout=${t.timeoutSeconds}s`
    const shown = `https://${t.service.name}.${t.service.namespace}.svc:${t.service.port}${path}`
    let ep: { host: string; port: number }
    try {
      ep = resolveService(t.service)
    } catch (err) {
      throw new CallFailure(h.name, `failed to call webhook: Post "${shown}": ${(err as Error).message}`)
    }
    at = { url: `https://${ep.host.includes(':') ? `[${ep.host}]` : ep.host}:${ep.port}${path}`, shown }
  }
  let body: Obj
  try {
    body = (await t.client.postOnce(review, at)).body
  } catch (err) {
    if (err instanceof WebhookCallError) throw new CallFailure(h.name, `failed to call webhook: ${err.message}`)
    throw err
  }
  let v: Verdict
  try {
    v = verify(h.reviewVersion, uid, mutatingHook, body, a)
  } catch (err) {
    if (err instanceof InvalidReply) throw new CallFailure(h.name, `received invalid webhook response: ${err.message}`)
    throw new CallFailure(h.name, (err as Error).message)
  }
  return v
}

class InvalidReply extends Error {}

/** upstream VerifyAdmissionResponse, then the patch decoded; adds the answer's warnings to the response. */
function verify(version: string, uid: string, mutatingHook: boolean, body: Obj, a: Attributes): Verdict {
  const r = body.response
  if (!isObj(r)) throw new InvalidReply('webhook response was absent')
  let patchText: string | undefined
  let patchType = ''
  if (version === 'v1') {
    if (r.uid !== uid) throw new InvalidReply(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(str(r.uid))}`)
    if ((body.apiVersion !== `${REVIEW_GROUP}/v1` && body.apiVersion !== `${REVIEW_GROUP_UPSTREAM}/v1`) || body.kind !== 'AdmissionReview') {
      throw new InvalidReply(`expected webhook response of ${REVIEW_GROUP}/v1, Kind=AdmissionReview, got ${gvkText(body.apiVersion, body.kind)}`)
    }
    const hasPatch = typeof r.patch === 'string' && r.patch !== ''
    const hasType = r.patchType !== undefined && r.patchType !== null
    if (mutatingHook) {
      if (hasPatch && !hasType) throw new InvalidReply('webhook returned response.patch but not response.patchType')
      if (!hasPatch && hasType) throw new InvalidReply('webhook returned response.patchType but not response.patch')
      if (hasType && str(r.patchType) === '') throw new InvalidReply(`webhook returned invalid response.patchType of ${JSON.stringify(str(r.patchType))}`)
      if (hasPatch) { patchText = r.patch; patchType = str(r.patchType) }
    } else {
      if (hasPatch) throw new InvalidReply('validating webhook may not return response.patch')
      if (hasType) throw new InvalidReply('validating webhook may not return response.patchType')
    }
  } else if (mutatingHook && typeof r.patch === 'string' && r.patch !== '') {
    patchText = r.patch
    patchType = 'JSONPatch'
  }
  if (Array.isArray(r.warnings)) for (const w of r.warnings) if (typeof w === 'string' && w !== '') a.ctx.addWarning(w)
  const allowed = r.allowed === true
  let patch: unknown[] | undefined
  if (allowed && patchText !== undefined) {
    let decoded: unknown
    try {
      decoded = JSON.parse(Buffer.from(patchText, 'base64').toString('utf8'))
    } catch (err) {
      throw new Error(`received undecodable patch in webhook response: ${(err as Error).message}`)
    }
    if (!Array.isArray(decoded)) throw new Error('received undecodable patch in webhook response: json: cannot unmarshal object into Go value of type jsonpatch.Patch')
    if (patchType !== 'JSONPatch') throw new Error(`unsupported patch type ${JSON.stringify(patchType)}`)
    patch = decoded
  }
  return { allowed, patch, result: isObj(r.status) ? r.status : undefined }
}

/** upstream ToStatusErr: the webhook's Status, its message prefixed with who denied, its code at least 400. */
function denial(name: string, result: Obj | undefined): ApiError {
  const s: Obj = result ?? {}
  const by = `admission webhook "${name}" denied the request`
  const message = str(s.message) !== '' ? `${by}: ${s.message}` : str(s.reason) !== '' ? `${by}: ${s.reason}` : `${by} without explanation`
  const code = typeof s.code === 'number' && Number.isInteger(s.code) && s.code >= 400 && s.code <= 599 ? s.code : 400
  return new ApiError(code, str(s.reason), message, isObj(s.details) ? s.details : undefined)
}

/** What a failed call does: nothing under failurePolicy Ignore (logged), else a 500 naming it (upstream NewInternalError). */
function failed(h: Hook, a: Attributes, err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err
  if (!(err instanceof CallFailure)) {
    a.ctx.log.error({ webhook: h.name, err }, 'admission webhook dispatch failed')
    return internal(err)
  }
  if (!h.failClosed) {
    a.ctx.log.warn({ webhook: h.name, err: err.message }, 'Failed calling webhook, failing open')
    return undefined
  }
  a.ctx.log.warn({ webhook: h.name, err: err.message }, 'Failed calling webhook, failing closed')
  return internal(err)
}

function sameJson(x: unknown, y: unknown): boolean {
  if (x === y) return true
  if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null || Array.isArray(x) !== Array.isArray(y)) return false
  if (Array.isArray(x)) {
    const ya = y as unknown[]
    if (x.length !== ya.length) return false
    for (let i = 0; i < x.length; i++) if (!sameJson(x[i], ya[i])) return false
    return true
  }
  const xo = x as Obj
  const yo = y as Obj
  const xk = Object.keys(xo)
  if (xk.length !== Object.keys(yo).length) return false
  for (const k of xk) if (!Object.prototype.hasOwnProperty.call(yo, k) || !sameJson(xo[k], yo[k])) return false
  return true
}

// ---- the plugins ----

function exempt(def: ResolvedDefinition): boolean {
  return def.group === GROUP && EXEMPT.has(def.resource)
}

/**
 * MutatingAdmissionWebhook: every matching webhook in order, each patch applied to `object` in place (and defaulted, as
 * upstream decodes it), the webhooks with reinvocationPolicy IfNeeded called once more when a later one changed the
 * object. Undefined when no webhook matches the request's rules and selectors (nothing to wait for); else resolves
 * to whether the object changed. `kind`: the kind of `object` when it is not the resource's (a Scale). Call only when
 * mutatingWebhooksExist().
 */
export function admitMutatingWebhooks(ctx: RequestContext, def: ResolvedDefinition, operation: PolicyOperation, object: Obj | undefined, oldObject: Obj | undefined, options?: Obj, kind?: RequestKind): Promise<boolean> | undefined {
  if (exempt(def)) return undefined
  const a = attributesOf(ctx, def, operation, object, oldObject, kind, options)
  const hooks = mutating
  const first: Array<Matched | undefined> = hooks.map((h) => matchOfHook(h, a))
  if (!first.some((m) => m !== undefined)) return undefined
  return dispatchMutating(a, hooks, first)
}

async function dispatchMutating(a: Attributes, hooks: Hook[], first: Array<Matched | undefined>): Promise<boolean> {
  let changedAny = false
  /** Reinvocable webhooks called since the object last changed, and those to call again. */
  let previous = new Set<number>()
  const again = new Set<number>()
  for (let round = 0; round < 2; round++) {
    if (round === 1 && again.size === 0) break
    for (let i = 0; i < hooks.length; i++) {
      const h = hooks[i]
      if (round === 1 && !again.has(i)) continue
      // Once a webhook changed the object, the selectors are matched against the object as it is now.
      const m = round === 0 && !changedAny ? first[i] : matchOfHook(h, a)
      if (m === undefined || !(await conditionsHold(h, a, m))) continue
      let changed = false
      try {
        changed = await mutateWith(h, a, m)
      } catch (err) {
        const e = failed(h, a, err)
        if (e !== undefined) throw e
      }
      if (changed) {
        changedAny = true
        for (const j of previous) again.add(j)
        previous = new Set()
      }
      if (h.ifNeeded) previous.add(i)
    }
  }
  return changedAny
}

/** One mutating call: a denial throws; an allowed answer's patch is applied. Whether the object changed. */
async function mutateWith(h: Hook, a: Attributes, m: Matched): Promise<boolean> {
  const v = await call(h, a, m, true)
  if (!v.allowed) throw denial(h.name, v.result)
  if (v.patch === undefined || v.patch.length === 0) return false
  const o = a.object
  if (o === undefined) throw internal(`admission webhook "${h.name}" attempted to modify the object, which is not supported for this operation`)
  let next: Obj
  try {
    next = applyJsonPatch(o, v.patch) as Obj
  } catch (err) {
    throw internal(err instanceof PatchError ? err.detail : err)
  }
  if (!isObj(next)) throw internal(`admission webhook "${h.name}" patched the object into a ${Array.isArray(next) ? 'list' : typeof next}`)
  if (!isObj(next.metadata)) next.metadata = {}
  // As upstream decodes the patched object: into the kind of the request, defaulted (an object of the resource's kind).
  next.apiVersion = o.apiVersion
  next.kind = o.kind
  if (a.kind.kind === a.def.kind) {
    a.def.strategy.default?.(next)
    if (a.def.zeroSpec !== undefined) fillZeroValues(next, a.def.zeroSpec)
  }
  if (sameJson(o, next)) return false
  for (const k of Object.keys(o)) delete o[k]
  Object.assign(o, next)
  return true
}

/**
 * ValidatingAdmissionWebhook: every matching webhook called at once; the first refusal (in webhook order) is the
 * answer. Undefined when no webhook matches. Call only when validatingWebhooksExist(). `kind` and `options` as for
 * the policies (requests whose object is not of the resource's kind).
 */
export function admitValidatingWebhooks(ctx: RequestContext, def: ResolvedDefinition, operation: PolicyOperation, object: Obj | undefined, oldObject: Obj | undefined, kind?: RequestKind, options?: Obj | null): Promise<void> | undefined {
  if (exempt(def)) return undefined
  const a = attributesOf(ctx, def, operation, object, oldObject, kind, options)
  const hooks = validating
  const first: Array<Matched | undefined> = hooks.map((h) => matchOfHook(h, a))
  if (!first.some((m) => m !== undefined)) return undefined
  return dispatchValidating(a, hooks, first)
}

async function dispatchValidating(a: Attributes, hooks: Hook[], first: Array<Matched | undefined>): Promise<void> {
  const called: Array<Promise<ApiError | undefined>> = []
  for (let i = 0; i < hooks.length; i++) {
    const m = first[i]
    if (m === undefined || !(await conditionsHold(hooks[i], a, m))) continue
    called.push(validateWith(hooks[i], a, m))
  }
  const outcomes = await Promise.all(called)
  for (const e of outcomes) if (e !== undefined) throw e
}

async function validateWith(h: Hook, a: Attributes, m: Matched): Promise<ApiError | undefined> {
  try {
    const v = await call(h, a, m, false)
    return v.allowed ? undefined : denial(h.name, v.result)
  } catch (err) {
    return failed(h, a, err)
  }
}
