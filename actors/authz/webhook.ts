// The Webhook authorizer: matchConditions (CEL over the v1 SubjectAccessReview spec), a decision cache with the
// authorized and unauthorized TTLs, the SubjectAccessReview POSTed to the webhook, and the failure policy.
import { WebhookClient, checkReplyKind, loadWebhookKubeconfig } from '../../src/machinery/webhook-client.js'
import { celEvaluate, celProgram, toCelValue, type CelProgram } from '../../src/machinery/cel.js'
import { parseFieldSelector, parseLabelSelector } from '../../src/machinery/selectors.js'
import type { Attributes, Decision } from './messages.js'
import type { WebhookSpec } from './config.js'

/** One authorizer's answer: its decision and reason, the error it met, and how long (ms) the answer may be kept. */
export interface Verdict { decision: Decision; reason: string; failure?: string; ttl?: number }

const GROUP = 'authorization.orch.io'
const CACHE_LIMIT = 8192
/** Upstream shouldCache: requester-controlled attributes this long are not cached. */
const MAX_CACHED_ATTRIBUTES = 10_000

type Obj = Record<string, any>
interface Cached { status: Obj; expires: number }

/** The requirements upstream sends for a field selector (= and == as In, != as NotIn); none when it does not parse. */
function fieldRequirements(fs: string): Obj[] {
  try {
    return parseFieldSelector(fs).map((r) => ({ key: r.field, operator: r.op === 'eq' ? 'In' : 'NotIn', values: [r.value] }))
  } catch { return [] }
}

/** The requirements upstream sends for a label selector (sorted by key; Gt and Lt are left out). */
function labelRequirements(ls: string): Obj[] {
  let parsed
  try { parsed = parseLabelSelector(ls) } catch { return [] }
  const out: Obj[] = []
  for (const r of [...parsed].sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0))) {
    switch (r.op) {
      case 'eq': out.push({ key: r.key, operator: 'In', values: [r.value] }); break
      case 'neq': out.push({ key: r.key, operator: 'NotIn', values: [r.value] }); break
      case 'in': out.push({ key: r.key, operator: 'In', values: [...r.values].sort() }); break
      case 'notin': out.push({ key: r.key, operator: 'NotIn', values: [...r.values].sort() }); break
      case 'exists': out.push({ key: r.key, operator: 'Exists' }); break
      case 'notexists': out.push({ key: r.key, operator: 'DoesNotExist' }); break
    }
  }
  return out
}

/** The v1 SubjectAccessReview spec of a request, with Go's omitempty (and its field order). */
export function sarSpec(a: Attributes): Obj {
  const spec: Obj = {}
  if (a.isResourceRequest) {
    const ra: Obj = {}
    if (a.namespace) ra.namespace = a.namespace
    if (a.verb) ra.verb = a.verb
    if (a.apiGroup) ra.group = a.apiGroup
    if (a.apiVersion) ra.version = a.apiVersion
    if (a.resource) ra.resource = a.resource
    if (a.subresource) ra.subresource = a.subresource
    if (a.name) ra.name = a.name
    if (a.fieldSelector) {
      const reqs = fieldRequirements(a.fieldSelector)
      if (reqs.length > 0) ra.fieldSelector = { requirements: reqs }
    }
    if (a.labelSelector) {
      const reqs = labelRequirements(a.labelSelector)
      if (reqs.length > 0) ra.labelSelector = { requirements: reqs }
    }
    spec.resourceAttributes = ra
  } else {
    const na: Obj = {}
    if (a.path) na.path = a.path
    if (a.verb) na.verb = a.verb
    spec.nonResourceAttributes = na
  }
  if (a.user) spec.user = a.user
  if (a.groups.length > 0) spec.groups = a.groups
  if (a.extra && Object.keys(a.extra).length > 0) spec.extra = a.extra
  if (a.uid) spec.uid = a.uid
  return spec
}

/** v1beta1 names the groups `group`. */
function v1beta1Spec(spec: Obj): Obj {
  const out: Obj = {}
  for (const [k, v] of Object.entries(spec)) out[k === 'groups' ? 'group' : k] = v
  return out
}

function attributeSize(a: Attributes): number {
  return a.namespace.length + a.verb.length + a.apiGroup.length + a.apiVersion.length + a.resource.length + a.subresource.length + a.name.length + a.path.length
}

export class WebhookAuthorizer {
  readonly name: string
  readonly #spec: WebhookSpec
  readonly #client: WebhookClient
  readonly #conditions: CelProgram[]
  readonly #cache = new Map<string, Cached>()
  readonly #inflight = new Map<string, Promise<Obj>>()

  readonly #report: (failure: string) => void

  /** `report`: where a failed call is logged (upstream logs every one). */
  constructor(name: string, spec: WebhookSpec, report: (failure: string) => void = () => {}) {
    this.name = name
    this.#report = report
    this.#spec = spec
    this.#client = new WebhookClient(loadWebhookKubeconfig(spec.kubeConfigFile), spec.timeoutMs)
    // Compiled once, here; evaluated per request.
    this.#conditions = spec.matchConditions.map((e) => celProgram(e))
  }

  close(): void { this.#client.close() }

  #onError(failure: string): Verdict {
    return { decision: this.#spec.failurePolicy === 'Deny' ? 'deny' : 'noopinion', reason: '', failure, ttl: 0 }
  }

  /** Every condition TRUE: call; one FALSE: skip; an error (and no FALSE): the failure policy. */
  #match(spec: Obj): boolean | string {
    if (this.#conditions.length === 0) return true
    const activation = { request: toCelValue(spec) }
    const errors: string[] = []
    for (const p of this.#conditions) {
      const r = celEvaluate(p, activation)
      if (r instanceof Promise) { errors.push(`cel evaluation error: expression '${p.expression}' could not be evaluated synchronously`); continue }
      if (!r.ok) { errors.push(`cel evaluation error: ${r.error}`); continue }
      if (typeof r.value !== 'boolean') { errors.push(`cel evaluation error: expression '${p.expression}' eval result type should be bool but got ${typeof r.value}`); continue }
      if (!r.value) return false
    }
    return errors.length === 0 ? true : errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`
  }

  /** A synchronous answer when no call is needed (cached, or skipped by its conditions); else the call's. */
  authorize(a: Attributes): Verdict | Promise<Verdict> {
    const spec = sarSpec(a)
    const m = this.#match(spec)
    if (m === false) return { decision: 'noopinion', reason: '' }
    if (typeof m === 'string') return this.#onError(m)
    const key = JSON.stringify(spec)
    const hit = this.#cache.get(key)
    if (hit) {
      const left = hit.expires - Date.now()
      if (left > 0) return this.#verdict(hit.status, left)
      this.#cache.delete(key)
    }
    return this.#ask(key, spec, attributeSize(a) < MAX_CACHED_ATTRIBUTES)
  }

  async #ask(key: string, spec: Obj, cacheable: boolean): Promise<Verdict> {
    let p = this.#inflight.get(key)
    if (p === undefined) {
      p = this.#call(spec).finally(() => this.#inflight.delete(key))
      this.#inflight.set(key, p)
    }
    let status: Obj
    try { status = await p } catch (err) {
      this.#report((err as Error).message)
      return this.#onError((err as Error).message)
    }
    const ttl = status.allowed === true ? this.#spec.authorizedTtlMs : this.#spec.unauthorizedTtlMs
    if (cacheable && ttl > 0 && !this.#cache.has(key)) {
      if (this.#cache.size >= CACHE_LIMIT) {
        const oldest = this.#cache.keys().next().value
        if (oldest !== undefined) this.#cache.delete(oldest)
      }
      this.#cache.set(key, { status, expires: Date.now() + ttl })
    }
    return this.#verdict(status, cacheable ? ttl : 0)
  }

  async #call(spec: Obj): Promise<Obj> {
    const v = this.#spec.version
    const body = { kind: 'SubjectAccessReview', apiVersion: `${GROUP}/${v}`, metadata: { creationTimestamp: null }, spec: v === 'v1beta1' ? v1beta1Spec(spec) : spec, status: { allowed: false } }
    const reply = (await this.#client.post(body)).body
    const bad = checkReplyKind(reply, GROUP, v, 'SubjectAccessReview')
    if (bad) throw new Error(bad)
    const st = (reply.status ?? {}) as Obj
    return { allowed: st.allowed === true, denied: st.denied === true, reason: typeof st.reason === 'string' ? st.reason : '', evaluationError: typeof st.evaluationError === 'string' ? st.evaluationError : '' }
  }

  #verdict(st: Obj, ttl: number): Verdict {
    if (st.denied && st.allowed) return { decision: 'deny', reason: st.reason, failure: 'webhook subject access review returned both allow and deny response', ttl: 0 }
    if (st.denied) return { decision: 'deny', reason: st.reason, ttl }
    if (st.allowed) return { decision: 'allow', reason: st.reason, ttl }
    return { decision: 'noopinion', reason: st.reason, ttl }
  }
}
