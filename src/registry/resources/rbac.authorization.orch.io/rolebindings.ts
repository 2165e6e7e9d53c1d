// RoleBinding (rbac.authorization.orch.io/v1). Also exports the binding defaulting and validation.
import { isDeepStrictEqual } from 'node:util'
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj, TableColumn } from '../../define.js'
import { fieldInvalid, fieldNotSupported, fieldRequired } from '../../../machinery/errors.js'
import type { FieldError } from '../../../machinery/errors.js'
import { ageColumn, nameColumn } from '../_printers.js'
import { dns1123Subdomain } from '../../../machinery/validation.js'

export const RBAC_GROUP = 'rbac.authorization.orch.io'

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** path.IsValidPathSegmentName: the messages of ValidateRBACName. */
export function pathSegmentNameErrors(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`]
  const errs: string[] = []
  for (const c of ['/', '%']) if (name.includes(c)) errs.push(`may not contain '${c}'`)
  return errs
}

/** The upstream spelling of the group, which typed clients (kubectl create rolebinding) put into roleRef and subjects. */
const UPSTREAM_RBAC_GROUP = 'rbac.authorization.k8s.io'

/** SetDefaults_RoleBinding / SetDefaults_ClusterRoleBinding / SetDefaults_Subject; the upstream group spelling is read as ours. */
export function defaultBinding(o: Obj): void {
  if (isObj(o.roleRef) && (o.roleRef.apiGroup === undefined || o.roleRef.apiGroup === '' || o.roleRef.apiGroup === UPSTREAM_RBAC_GROUP)) o.roleRef.apiGroup = RBAC_GROUP
  if (Array.isArray(o.subjects)) {
    for (const s of o.subjects) {
      if (isObj(s) && s.apiGroup === UPSTREAM_RBAC_GROUP) s.apiGroup = RBAC_GROUP
      if (!isObj(s) || (s.apiGroup !== undefined && s.apiGroup !== '')) continue
      // A ServiceAccount subject has no group: the empty value is left out, as upstream's omitempty does.
      if (s.kind === 'ServiceAccount') delete s.apiGroup
      else if (s.kind === 'User' || s.kind === 'Group') s.apiGroup = RBAC_GROUP
    }
  }
}

/** ValidateRoleBinding / ValidateClusterRoleBinding: roleRef and subjects. */
export function validateBinding(o: Obj, roleKinds: string[], namespaced: boolean): FieldError[] {
  const errs: FieldError[] = []
  const ref: Obj = isObj(o.roleRef) ? o.roleRef : {}
  if (ref.apiGroup !== RBAC_GROUP) errs.push(fieldNotSupported('roleRef.apiGroup', ref.apiGroup ?? '', [RBAC_GROUP]))
  if (!roleKinds.includes(ref.kind)) errs.push(fieldNotSupported('roleRef.kind', ref.kind ?? '', roleKinds))
  if (typeof ref.name !== 'string' || ref.name === '') errs.push(fieldRequired('roleRef.name'))
  else for (const msg of pathSegmentNameErrors(ref.name)) errs.push(fieldInvalid('roleRef.name', ref.name, msg))
  const subjects: unknown[] = Array.isArray(o.subjects) ? o.subjects : []
  subjects.forEach((x, i) => {
    const s: Obj = isObj(x) ? x : {}
    const p = `subjects[${i}]`
    const named = typeof s.name === 'string' && s.name !== ''
    if (!named) errs.push(fieldRequired(`${p}.name`))
    switch (s.kind) {
      case 'ServiceAccount':
        if (named) for (const msg of dns1123Subdomain(s.name)) errs.push(fieldInvalid(`${p}.name`, s.name, msg))
        if (s.apiGroup !== undefined && s.apiGroup !== '') errs.push(fieldNotSupported(`${p}.apiGroup`, s.apiGroup, ['']))
        if (!namespaced && (typeof s.namespace !== 'string' || s.namespace === '')) errs.push(fieldRequired(`${p}.namespace`))
        break
      case 'User':
      case 'Group':
        if (!named) errs.push(fieldInvalid(`${p}.name`, s.name ?? '', `${s.kind === 'User' ? 'user' : 'group'} name cannot be empty`))
        if (s.apiGroup !== RBAC_GROUP) errs.push(fieldNotSupported(`${p}.apiGroup`, s.apiGroup ?? '', [RBAC_GROUP]))
        break
      default:
        errs.push(fieldNotSupported(`${p}.kind`, s.kind ?? '', ['ServiceAccount', 'User', 'Group']))
    }
  })
  return errs
}

/** The rules of a Role or ClusterRole (upstream ValidatePolicyRule); namespaced rules cannot name non-resource URLs. */
export function validateRules(o: Obj, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = []
  const n = (v: unknown) => (Array.isArray(v) ? v.length : 0)
  const rules: unknown[] = Array.isArray(o.rules) ? o.rules : []
  rules.forEach((x, i) => {
    const r: Obj = isObj(x) ? x : {}
    const p = `rules[${i}]`
    if (n(r.verbs) === 0) errs.push(fieldRequired(`${p}.verbs`, 'verbs must contain at least one value'))
    if (n(r.nonResourceURLs) > 0) {
      if (namespaced) errs.push(fieldInvalid(`${p}.nonResourceURLs`, r.nonResourceURLs, 'namespaced rules cannot apply to non-resource URLs'))
      if (n(r.apiGroups) > 0 || n(r.resources) > 0 || n(r.resourceNames) > 0) {
        errs.push(fieldInvalid(`${p}.nonResourceURLs`, r.nonResourceURLs, 'rules cannot apply to both regular resources and non-resource URLs'))
      }
      return
    }
    if (n(r.apiGroups) === 0) errs.push(fieldRequired(`${p}.apiGroups`, 'resource rules must supply at least one api group'))
    if (n(r.resources) === 0) errs.push(fieldRequired(`${p}.resources`, 'resource rules must supply at least one resource'))
  })
  if (!namespaced && isObj(o.aggregationRule) && n(o.aggregationRule.clusterRoleSelectors) === 0) {
    errs.push(fieldRequired('aggregationRule.clusterRoleSelectors', 'at least one clusterRoleSelector required if aggregationRule is non-nil'))
  }
  return errs
}

/** roleRef may not change after creation. */
export function validateRoleRefUnchanged(o: Obj, old: Obj): FieldError[] {
  return isDeepStrictEqual(o.roleRef, old.roleRef) ? [] : [fieldInvalid('roleRef', o.roleRef ?? null, 'cannot change roleRef')]
}

function subjectsOf(o: Obj, kind: string): string {
  const subjects: Obj[] = Array.isArray(o.subjects) ? o.subjects : []
  return subjects.filter((s) => s?.kind === kind).map((s) => (kind === 'ServiceAccount' ? `${s.namespace ?? ''}:${s.name ?? ''}` : s.name ?? '')).join(', ')
}

/** upstream printRoleBinding / printClusterRoleBinding columns. */
export function bindingColumns(): TableColumn[] {
  return [
    nameColumn(),
    { name: 'Role', type: 'string', description: 'RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace.', cell: (o) => `${o.roleRef?.kind ?? ''}/${o.roleRef?.name ?? ''}` },
    ageColumn(),
    { name: 'Users', type: 'string', priority: 1, description: 'Users in the roleBinding', cell: (o) => subjectsOf(o, 'User') },
    { name: 'Groups', type: 'string', priority: 1, description: 'Groups in the roleBinding', cell: (o) => subjectsOf(o, 'Group') },
    { name: 'ServiceAccounts', type: 'string', priority: 1, description: 'ServiceAccounts in the roleBinding', cell: (o) => subjectsOf(o, 'ServiceAccount') },
  ]
}

export default defineResource({
  group: RBAC_GROUP, version: 'v1', kind: 'RoleBinding', resource: 'rolebindings', singular: 'rolebinding', scope: 'Namespaced',
  verbs: ALL_VERBS,
  schemaRef: 'io.orch.api.rbac.v1.RoleBinding',
  // roleRef is a value struct upstream, its fields without omitempty.
  zeroValues: { roleRef: { apiGroup: '', kind: '', name: '' } },
  strategy: {
    default: defaultBinding,
    validate: (o) => validateBinding(o, ['Role', 'ClusterRole'], true),
    validateUpdate: (o, old) => [...validateBinding(o, ['Role', 'ClusterRole'], true), ...validateRoleRefUnchanged(o, old)],
    allowUnconditionalUpdate: true,
    nameRule: 'path',
  },
  table: bindingColumns(),
})
