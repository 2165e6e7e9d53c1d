// Messages between front-ends and the authz actor.

/** The attributes upstream's authorizers see (authorizer.Attributes). */
export interface Attributes {
  user: string
  groups: string[]
  uid: string
  verb: string
  isResourceRequest: boolean
  apiGroup: string
  apiVersion: string
  namespace: string
  resource: string
  subresource: string
  name: string
  path: string
}

export type Decision = 'allow' | 'deny' | 'noopinion'

export interface AuthorizeRequest { id: number; op: 'authorize'; attrs: Attributes }
export interface PingRequest { id: number; op: 'ping' }
export type AuthzRequest = AuthorizeRequest | PingRequest

export interface AuthzReply { id: number; decision: Decision; reason: string; /** the decision is the same for every request of this user (cacheable broadly) */ generation: number }
