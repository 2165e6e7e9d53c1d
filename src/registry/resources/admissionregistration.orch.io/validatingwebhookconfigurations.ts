// ValidatingWebhookConfiguration (admissionregistration.orch.io/v1, cluster-scoped).
// Also exports the defaulting shared by the admission registration types.
import { defineResource, ALL_VERBS } from '../../define.js'
import type { Obj } from '../../define.js'
import { ageColumn, nameColumn } from '../_printers.js'

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** SetDefaults_Rule on each rule: scope `*`. */
export function defaultRules(rules: unknown): void {
  if (!Array.isArray(rules)) return
  for (const r of rules) if (isObj(r) && (r.scope === undefined || r.scope === null)) r.scope = '*'
}

/** SetDefaults_MatchResources. */
export function defaultMatchResources(m: unknown): void {
  if (!isObj(m)) return
  m.matchPolicy ??= 'Equivalent'
  m.namespaceSelector ??= {}
  m.objectSelector ??= {}
  defaultRules(m.resourceRules)
  defaultRules(m.excludeResourceRules)
}

/** SetDefaults_ValidatingWebhook / SetDefaults_MutatingWebhook (the shared part) and SetDefaults_ServiceReference. */
export function defaultWebhooks(o: Obj, mutating: boolean): void {
  if (!Array.isArray(o.webhooks)) return
  for (const w of o.webhooks) {
    if (!isObj(w)) continue
    w.failurePolicy ??= 'Fail'
    w.matchPolicy ??= 'Equivalent'
    w.namespaceSelector ??= {}
    w.objectSelector ??= {}
    w.timeoutSeconds ??= 10
    if (mutating) w.reinvocationPolicy ??= 'Never'
    defaultRules(w.rules)
    if (isObj(w.clientConfig) && isObj(w.clientConfig.service)) w.clientConfig.service.port ??= 443
  }
}

export default defineResource({
  group: 'admissionregistration.orch.io', version: 'v1', kind: 'ValidatingWebhookConfiguration', resource: 'validatingwebhookconfigurations', singular: 'validatingwebhookconfiguration', scope: 'Cluster',
  verbs: ALL_VERBS,
  categories: ['api-extensions'],
  schemaRef: 'io.orch.api.admissionregistration.v1.ValidatingWebhookConfiguration',
  strategy: { default: (o) => defaultWebhooks(o, false), allowUnconditionalUpdate: true, nameRule: 'subdomain', hasGeneration: true },
  table: [
    nameColumn(),
    { name: 'Webhooks', type: 'integer', description: 'How many webhooks the configuration registers.', cell: (o) => (Array.isArray(o.webhooks) ? o.webhooks.length : 0) },
    ageColumn(),
  ],
})
