// The admission plugins by upstream name: which this server has, which run by default, and --enable-admission-plugins / --disable-admission-plugins.

/**
 * Every plugin name kube-apiserver registers, in its order (pkg/kubeapiserver/options/plugins.go AllOrderedPlugins).
 * A name outside this list is unknown, as upstream says at start.
 */
export const UPSTREAM_PLUGINS: readonly string[] = [
  'AlwaysAdmit', 'NamespaceAutoProvision', 'NamespaceLifecycle', 'NamespaceExists', 'LimitPodHardAntiAffinityTopology',
  'LimitRanger', 'ServiceAccount', 'NodeRestriction', 'TaintNodesByCondition', 'AlwaysPullImages', 'ImagePolicyWebhook',
  'PodSecurity', 'PodNodeSelector', 'Priority', 'DefaultTolerationSeconds', 'PodTolerationRestriction', 'EventRateLimit',
  'ExtendedResourceToleration', 'DefaultStorageClass', 'StorageObjectInUseProtection', 'OwnerReferencesPermissionEnforcement',
  'PersistentVolumeClaimResize', 'RuntimeClass', 'CertificateApproval', 'CertificateSigning', 'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction', 'DefaultIngressClass', 'DenyServiceExternalIPs', 'PodTopologyLabels',
  'MutatingAdmissionPolicy', 'MutatingAdmissionWebhook', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionWebhook',
  'ResourceQuota', 'AlwaysDeny',
]

/**
 * The plugins this server runs, in upstream's order, and whether each is on without flags. Upstream's default set
 * less what is not here; NodeRestriction is on by default too (upstream has it off, but every cluster that runs the
 * Node authorizer, as this server does by default, turns it on; this server always applied it).
 */
export const PLUGINS: ReadonlyArray<{ name: string; byDefault: boolean }> = [
  { name: 'NamespaceLifecycle', byDefault: true },
  { name: 'LimitRanger', byDefault: true },
  { name: 'ServiceAccount', byDefault: true },
  { name: 'NodeRestriction', byDefault: true },
  { name: 'PodSecurity', byDefault: true },
  { name: 'Priority', byDefault: true },
  { name: 'MutatingAdmissionWebhook', byDefault: true },
  { name: 'ValidatingAdmissionPolicy', byDefault: true },
  { name: 'ValidatingAdmissionWebhook', byDefault: true },
  { name: 'ResourceQuota', byDefault: true },
]

/** What runs, one flag per plugin: a request asks a property, never a set. */
export interface EnabledPlugins {
  namespaceLifecycle: boolean
  limitRanger: boolean
  serviceAccount: boolean
  nodeRestriction: boolean
  podSecurity: boolean
  priority: boolean
  mutatingAdmissionWebhook: boolean
  validatingAdmissionPolicy: boolean
  validatingAdmissionWebhook: boolean
  resourceQuota: boolean
}

/** The plugins of this thread (every one on until configured, as without flags but for none off). */
export const enabled: EnabledPlugins = {
  namespaceLifecycle: true, limitRanger: true, serviceAccount: true, nodeRestriction: true, priority: true, podSecurity: true,
  mutatingAdmissionWebhook: true, validatingAdmissionPolicy: true, validatingAdmissionWebhook: true, resourceQuota: true,
}

const FIELD: Record<string, keyof EnabledPlugins> = {
  NamespaceLifecycle: 'namespaceLifecycle', LimitRanger: 'limitRanger', ServiceAccount: 'serviceAccount',
  NodeRestriction: 'nodeRestriction', PodSecurity: 'podSecurity', Priority: 'priority', MutatingAdmissionWebhook: 'mutatingAdmissionWebhook',
  ValidatingAdmissionPolicy: 'validatingAdmissionPolicy', ValidatingAdmissionWebhook: 'validatingAdmissionWebhook',
  ResourceQuota: 'resourceQuota',
}

/** The names the two flags take, sorted as upstream's help lists them. */
export function registeredPluginNames(): string[] {
  return [...UPSTREAM_PLUGINS].sort()
}

/**
 * The checks of upstream's AdmissionOptions.Validate, with its texts (an unknown name in either flag, a name in both),
 * then ours: a plugin upstream has and this server does not cannot be turned on (it would silently not run). Returns
 * the errors, empty when the flags are fine.
 */
export function admissionPluginErrors(enable: readonly string[], disable: readonly string[]): string[] {
  const errs: string[] = []
  const known = new Set(UPSTREAM_PLUGINS)
  for (const n of enable) if (!known.has(n)) errs.push(`enable-admission-plugins plugin ${JSON.stringify(n)} is unknown`)
  for (const n of disable) if (!known.has(n)) errs.push(`disable-admission-plugins plugin ${JSON.stringify(n)} is unknown`)
  const off = new Set(disable)
  const both = [...new Set(enable)].filter((n) => off.has(n)).sort()
  if (both.length > 0) errs.push(`[${both.join(' ')}] in enable-admission-plugins and disable-admission-plugins overlapped`)
  const ours = new Set(PLUGINS.map((p) => p.name))
  for (const n of enable) if (known.has(n) && !ours.has(n)) errs.push(`enable-admission-plugins plugin ${JSON.stringify(n)} is not implemented by this server`)
  return errs
}

/** The plugins that run for these flags (upstream's enabledPluginNames: defaults, plus enabled, less disabled). */
export function enabledPluginNames(enable: readonly string[], disable: readonly string[]): string[] {
  const on = new Set(enable)
  const off = new Set(disable)
  return PLUGINS.filter((p) => !off.has(p.name) && (p.byDefault || on.has(p.name))).map((p) => p.name)
}

/** Sets this thread's plugins from the flags (already checked). */
export function configureAdmissionPlugins(enable: readonly string[] = [], disable: readonly string[] = []): void {
  const names = new Set(enabledPluginNames(enable, disable))
  for (const p of PLUGINS) enabled[FIELD[p.name]] = names.has(p.name)
}
