// The authorize stage: the attributes record, a cached or fresh decision from the authz actor, 403 unless allowed.
import { forbidden } from '../machinery/errors.js'
import type { AuthzClient } from '../../actors/authz/client.js'
import type { Attributes } from '../../actors/authz/messages.js'
import type { RequestContext } from './context.js'

let client: AuthzClient

export function configureAuthorization(c: AuthzClient): void { client = c }

export function attributesOf(ctx: RequestContext): Attributes {
  const i = ctx.info
  const u = ctx.user!
  return {
    user: u.username, groups: u.groups, uid: u.uid,
    verb: i.isResourceRequest ? i.verb : ctx.method === 'HEAD' ? 'get' : ctx.method.toLowerCase(),
    isResourceRequest: i.isResourceRequest,
    apiGroup: i.group, apiVersion: i.version, namespace: i.namespace, resource: i.resource, subresource: i.subresource, name: i.name,
    path: i.path,
  }
}

function denyMessage(a: Attributes): string {
  if (!a.isResourceRequest) return `User "${a.user}" cannot ${a.verb} path "${a.path}"`
  const res = a.subresource ? `${a.resource}/${a.subresource}` : a.resource
  const where = a.namespace ? `in the namespace "${a.namespace}"` : 'at the cluster scope'
  return `User "${a.user}" cannot ${a.verb} resource "${res}" in API group "${a.apiGroup}" ${where}`
}

export async function authorize(ctx: RequestContext): Promise<void> {
  const a = attributesOf(ctx)
  const d = await client.authorize(a)
  if (d.decision === 'allow') return
  const why = denyMessage(a) + (d.reason ? `: ${d.reason}` : '')
  if (!a.isResourceRequest) throw forbidden(undefined, '', why)
  throw forbidden({ group: a.apiGroup, resource: a.resource }, a.name, why)
}


/** A further check of the same request under another verb (server-side apply that creates needs `create`). */
export async function authorizeVerb(ctx: RequestContext, verb: string): Promise<void> {
  const saved = ctx.info
  ctx.info = { ...saved, verb }
  try { await authorize(ctx) } finally { ctx.info = saved }
}
