// pods/binding: how a scheduler assigns a pod to a node (upstream BindingREST). It sets spec.nodeName once, merges
// the binding's annotations and marks the pod PodScheduled; an ordinary update may not change spec.nodeName.
import { badRequest, conflict, invalid, methodNotAllowed, fieldNotSupported, fieldRequired, type FieldError } from '../machinery/errors.js'
import type { Obj, ResolvedDefinition } from '../registry/define.js'
import { rfc3339 } from './admission.js'
import { decodeBody } from './decode.js'
import { guaranteedUpdate } from './write.js'
import { admitPolicyOnly } from '../admission/chain.js'
import type { RequestContext, Response } from './context.js'

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)

export async function bindPod(ctx: RequestContext, def: ResolvedDefinition): Promise<Response> {
  const i = ctx.info
  if (i.verb !== 'create') throw methodNotAllowed(i.verb || ctx.method, { group: '', resource: 'pods/binding' })
  const b = ctx.body.length === 0 ? {} : decodeBody(ctx)
  if (!isObj(b)) throw badRequest('the body of a binding must be a Binding object')
  if (b.kind !== undefined && b.kind !== 'Binding') {
    throw badRequest(`${String(b.kind)} in version "v1" cannot be handled as a Binding: no kind "${String(b.kind)}" is registered for version "v1"`)
  }
  const meta: Obj = isObj(b.metadata) ? b.metadata : {}
  if ((meta.name ?? '') !== i.name) throw badRequest('name in URL does not match name in Binding object')
  const target: Obj = isObj(b.target) ? b.target : {}
  const errs: FieldError[] = []
  if (target.kind !== undefined && target.kind !== '' && target.kind !== 'Node') errs.push(fieldNotSupported('target.kind', target.kind, ['Node', '<empty>']))
  if (typeof target.name !== 'string' || target.name === '') errs.push(fieldRequired('target.name', ''))
  if (errs.length > 0) throw invalid('Binding', '', 'Binding', i.name, errs)
  const node: string = target.name
  // Admission sees the create of the Binding, as upstream's BindingREST hands it on.
  const admitted = admitPolicyOnly(ctx, def, 'CREATE', { group: '', version: 'v1', kind: 'Binding' }, { kind: 'Binding', apiVersion: 'v1', metadata: { ...meta, name: i.name, namespace: i.namespace }, target })
  if (admitted) await admitted
  const gr = { group: '', resource: 'pods/binding' }
  const annotations: Obj = isObj(meta.annotations) ? meta.annotations : {}
  await guaranteedUpdate(ctx, def, 'binding', i.name, 0, (pod) => {
    if (pod.metadata?.deletionTimestamp) throw conflict(gr, i.name, `pod ${i.name} is being deleted, cannot be assigned to a host`)
    if (typeof meta.uid === 'string' && meta.uid !== '' && meta.uid !== pod.metadata.uid) throw conflict(gr, i.name, `Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${pod.metadata.uid}`)
    const assigned = pod.spec?.nodeName
    if (typeof assigned === 'string' && assigned !== '') throw conflict(gr, i.name, `pod ${i.name} is already assigned to node ${JSON.stringify(assigned)}`)
    pod.spec = { ...(pod.spec ?? {}), nodeName: node }
    if (Object.keys(annotations).length > 0) pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}), ...annotations }
    const status: Obj = isObj(pod.status) ? pod.status : {}
    const conditions: Obj[] = Array.isArray(status.conditions) ? status.conditions.filter((c: Obj) => c?.type !== 'PodScheduled') : []
    const prev = Array.isArray(status.conditions) ? status.conditions.find((c: Obj) => c?.type === 'PodScheduled') : undefined
    conditions.push({ type: 'PodScheduled', status: 'True', lastTransitionTime: prev?.status === 'True' ? prev.lastTransitionTime : rfc3339(Date.now()) })
    pod.status = { ...status, conditions }
    return { object: pod, tracked: false }
  })
  return { status: 201, body: JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }), contentType: 'application/json', headers: ctx.responseHeaders }
}
