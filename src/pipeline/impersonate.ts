// The impersonation stage: Impersonate-User/-Group/-Uid/-Extra-<key> headers, each checked with the `impersonate` verb for the real user.
import { badRequest } from '../machinery/errors.js'
import { splitServiceAccountUsername, serviceAccountGroups } from '../auth/service-account.js'
import type { Attributes } from '../../actors/authz/messages.js'
import { authzClient, forbiddenFor } from './authorize.js'
import type { RequestContext, UserInfo } from './context.js'

const PREFIX = 'impersonate-'
const EXTRA_PREFIX = 'impersonate-extra-'
const AUTHN_GROUP = 'authentication.orch.io'

/** Repeated header lines arrive joined with commas. */
function values(v: string | undefined): string[] {
  if (v === undefined) return []
  return v.split(',').map((s) => s.trim()).filter((s) => s !== '')
}

function decodeKey(k: string): string {
  try { return decodeURIComponent(k).toLowerCase() } catch { return k.toLowerCase() }
}

/** Costs one scan of the header names when there is nothing to impersonate. */
export function impersonate(ctx: RequestContext): void | Promise<void> {
  for (const k in ctx.headers) if (k.startsWith(PREFIX)) return impersonateAs(ctx)
}

async function impersonateAs(ctx: RequestContext): Promise<void> {
  const h = ctx.headers
  const user = h['impersonate-user']
  const groups = values(h['impersonate-group'])
  const uid = h['impersonate-uid']
  const extra: Record<string, string[]> = {}
  for (const k of Object.keys(h).sort()) if (k.startsWith(EXTRA_PREFIX)) extra[decodeKey(k.slice(EXTRA_PREFIX.length))] = values(h[k])
  const wanted: string[] = []
  if (groups.length > 0) wanted.push('groups')
  if (uid !== undefined) wanted.push('uid')
  if (Object.keys(extra).length > 0) wanted.push('extra')
  if (user === undefined || user === '') {
    if (wanted.length > 0) throw badRequest(`requested [${wanted.join(' ')}] without impersonating a user`)
    return
  }
  const real = ctx.user!
  const check = async (over: Partial<Attributes>): Promise<void> => {
    const a: Attributes = {
      user: real.username, groups: real.groups, uid: real.uid, verb: 'impersonate', isResourceRequest: true,
      apiGroup: '', apiVersion: '', namespace: '', resource: '', subresource: '', name: '', path: ctx.info.path, ...over,
    }
    if (real.extra) a.extra = real.extra
    const d = await authzClient().authorize(a)
    if (d.decision !== 'allow') throw forbiddenFor(a, d.reason)
  }
  const sa = splitServiceAccountUsername(user)
  if (sa) await check({ resource: 'serviceaccounts', apiVersion: 'v1', namespace: sa.namespace, name: sa.name })
  else await check({ resource: 'users', apiVersion: 'v1', name: user })
  for (const g of groups) await check({ resource: 'groups', apiVersion: 'v1', name: g })
  for (const [k, vs] of Object.entries(extra)) for (const v of vs) await check({ apiGroup: AUTHN_GROUP, apiVersion: 'v1', resource: 'userextras', subresource: k, name: v })
  if (uid !== undefined) await check({ apiGroup: AUTHN_GROUP, apiVersion: 'v1', resource: 'uids', name: uid })

  let gs = [...groups]
  if (sa && gs.length === 0) gs = serviceAccountGroups(sa.namespace)
  if (user === 'system:anonymous') {
    if (!gs.includes('system:unauthenticated')) gs.push('system:unauthenticated')
  } else if (!gs.includes('system:authenticated') && !gs.includes('system:unauthenticated')) {
    gs.push('system:authenticated')
  }
  const u: UserInfo = { username: user, uid: uid ?? '', groups: gs }
  if (Object.keys(extra).length > 0) u.extra = extra
  ctx.user = u
}
