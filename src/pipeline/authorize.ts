// The authorize stage: the attributes record, a cached or fresh decision from the authz actor, 403 unless allowed.
import { forbidden, internal, type ApiError } from '../machinery/errors.js'
import { parseFieldSelector } from '../machinery/selectors.js'
import type { AuthzClient, AuthzDecision } from '../../actors/authz/client.js'
import type { Attributes } from '../../actors/authz/messages.js'
import type { RequestContext } from './context.js'

let client: AuthzClient

export function configureAuthorization(c: AuthzClient): void { client = c }
export function authzClient(): AuthzClient { return client }

/** The name a list or watch is narrowed to by `fieldSelector=metadata.name=<x>` (upstream requestInfo). */
function selectedName(fs: string | null): string {
  if (!fs || !fs.includes('metadata.name')) return ''
  try {
    for (const r of parseFieldSelector(fs)) if (r.field === 'metadata.name' && r.op === 'eq') return r.value
  } catch { /* the list handler answers the bad selector */ }
  return ''
}

export function attributesOf(ctx: RequestContext): Attributes {
  const i = ctx.info
  const u = ctx.user!
  const a: Attributes = {
    user: u.username, groups: u.groups, uid: u.uid,
    verb: i.isResourceRequest ? i.verb : ctx.method === 'HEAD' ? 'get' : ctx.method.toLowerCase(),
    isResourceRequest: i.isResourceRequest,
    apiGroup: i.group, apiVersion: i.version, namespace: i.namespace, resource: i.resource, subresource: i.subresource, name: i.name,
    path: i.path,
  }
  if (u.extra) a.extra = u.extra
  if (i.verb === 'list' || i.verb === 'watch' || i.verb === 'deletecollection') {
    const fs = ctx.query.get('fieldSelector')
    if (fs) {
      a.fieldSelector = fs
      if (a.name === '' && i.verb !== 'deletecollection') a.name = selectedName(fs)
    }
    if (client.webhooks) {
      const ls = ctx.query.get('labelSelector')
      if (ls) a.labelSelector = ls
    }
  }
  return a
}

/** The text after `is forbidden: ` (upstream responsewriters.forbiddenMessage). */
export function denyMessage(a: Attributes): string {
  if (!a.isResourceRequest) return `User "${a.user}" cannot ${a.verb} path "${a.path}"`
  const res = a.subresource ? `${a.resource}/${a.subresource}` : a.resource
  const where = a.namespace ? `in the namespace "${a.namespace}"` : 'at the cluster scope'
  return `User "${a.user}" cannot ${a.verb} resource "${res}" in API group "${a.apiGroup}" ${where}`
}

/** The 403 of a denied request; `&`, `<` and `>` of the attributes part are HTML-escaped as upstream does. */
export function forbiddenFor(a: Attributes, reason: string): ApiError {
  const why = escapeHtml(denyMessage(a)) + (reason ? `: ${reason}` : '')
  if (!a.isResourceRequest) return forbidden(undefined, '', why)
  return forbidden({ group: a.apiGroup, resource: a.resource }, a.name, why)
}

function escapeHtml(s: string): string {
  return /[&<>]/.test(s) ? s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;') : s
}

/** Synchronous when the decision is cached (the common case); a promise only when the actor is asked. */
export function authorize(ctx: RequestContext): void | Promise<void> {
  const a = attributesOf(ctx)
  const d = client.authorize(a)
  if (d instanceof Promise) return d.then((r) => decided(a, r))
  decided(a, d)
}

function decided(a: Attributes, d: AuthzDecision): void {
  if (d.decision === 'allow') return
  // An authorizer's error without an allow is a 500 (upstream's authorization filter), not a 403.
  if (d.failure) throw internal(d.failure)
  throw forbiddenFor(a, d.reason)
}

/** A further check of the same request under another verb (server-side apply that creates needs `create`). */
export async function authorizeVerb(ctx: RequestContext, verb: string): Promise<void> {
  const saved = ctx.info
  ctx.info = { ...saved, verb }
  try { await authorize(ctx) } finally { ctx.info = saved }
}
