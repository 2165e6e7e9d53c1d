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
  { name: 'AlwaysAdmit', byDefault: false },
  { name: 'NamespaceAutoProvision', byDefault: false },
  { name: 'NamespaceLifecycle', byDefault: true },
  { name: 'NamespaceExists', byDefault: false },
  { name: 'LimitRanger', byDefault: true },
  { name: 'ServiceAccount', byDefault: true },
  { name: 'NodeRestriction', byDefault: true },
  { name: 'TaintNodesByCondition', byDefault: true },
  { name: 'AlwaysPullImages', byDefault: false },
  { name: 'PodSecurity', byDefault: true },
  { name: 'PodNodeSelector', byDefault: false },
  { name: 'Priority', byDefault: true },
  { name: 'DefaultTolerationSeconds', byDefault: true },
  { name: 'PodTolerationRestriction', byDefault: false },
  { name: 'DefaultStorageClass', byDefault: true },
  { name: 'StorageObjectInUseProtection', byDefault: true },
  { name: 'PersistentVolumeClaimResize', byDefault: true },
  { name: 'RuntimeClass', byDefault: true },
  { name: 'CertificateApproval', byDefault: true },
  { name: 'CertificateSigning', byDefault: true },
  { name: 'CertificateSubjectRestriction', byDefault: true },
  { name: 'DefaultIngressClass', byDefault: true },
  { name: 'MutatingAdmissionWebhook', byDefault: true },
  { name: 'ValidatingAdmissionPolicy', byDefault: true },
  { name: 'ValidatingAdmissionWebhook', byDefault: true },
  { name: 'ResourceQuota', byDefault: true },
  { name: 'AlwaysDeny', byDefault: false },
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
  taintNodesByCondition: boolean
  defaultTolerationSeconds: boolean
  defaultStorageClass: boolean
  storageObjectInUseProtection: boolean
  persistentVolumeClaimResize: boolean
  runtimeClass: boolean
  certificateApproval: boolean
  certificateSigning: boolean
  certificateSubjectRestriction: boolean
  defaultIngressClass: boolean
  alwaysAdmit: boolean
  namespaceAutoProvision: boolean
  namespaceExists: boolean
  alwaysPullImages: boolean
  podNodeSelector: boolean
  podTolerationRestriction: boolean
  alwaysDeny: boolean
}

/** The plugins of this thread (every one on until configured, as without flags but for none off). */
export const enabled: EnabledPlugins = {
  namespaceLifecycle: true, limitRanger: true, serviceAccount: true, nodeRestriction: true, priority: true, podSecurity: true,
  mutatingAdmissionWebhook: true, validatingAdmissionPolicy: true, validatingAdmissionWebhook: true, resourceQuota: true,
  taintNodesByCondition: true, defaultTolerationSeconds: true, defaultStorageClass: true, storageObjectInUseProtection: true,
  persistentVolumeClaimResize: true, runtimeClass: true, certificateApproval: true, certificateSigning: true,
  certificateSubjectRestriction: true, defaultIngressClass: true,
  alwaysAdmit: false, namespaceAutoProvision: false, namespaceExists: false, alwaysPullImages: false, podNodeSelector: false, podTolerationRestriction: false, alwaysDeny: false,
}

const FIELD: Record<string, keyof EnabledPlugins> = {
  NamespaceLifecycle: 'namespaceLifecycle', LimitRanger: 'limitRanger', ServiceAccount: 'serviceAccount',
  NodeRestriction: 'nodeRestriction', PodSecurity: 'podSecurity', Priority: 'priority', MutatingAdmissionWebhook: 'mutatingAdmissionWebhook',
  ValidatingAdmissionPolicy: 'validatingAdmissionPolicy', ValidatingAdmissionWebhook: 'validatingAdmissionWebhook',
  ResourceQuota: 'resourceQuota',
  TaintNodesByCondition: 'taintNodesByCondition', DefaultTolerationSeconds: 'defaultTolerationSeconds',
  DefaultStorageClass: 'defaultStorageClass', StorageObjectInUseProtection: 'storageObjectInUseProtection',
  PersistentVolumeClaimResize: 'persistentVolumeClaimResize', RuntimeClass: 'runtimeClass', CertificateApproval: 'certificateApproval',
  CertificateSigning: 'certificateSigning', CertificateSubjectRestriction: 'certificateSubjectRestriction', DefaultIngressClass: 'defaultIngressClass',
  AlwaysAdmit: 'alwaysAdmit', NamespaceAutoProvision: 'namespaceAutoProvision', NamespaceExists: 'namespaceExists', AlwaysPullImages: 'alwaysPullImages', PodNodeSelector: 'podNodeSelector',
  PodTolerationRestriction: 'podTolerationRestriction', AlwaysDeny: 'alwaysDeny',
}

/** The plugins on without flags, in order (as --help names them). */
export function defaultPluginNames(): string[] {
  return PLUGINS.filter((p) => p.byDefault).map((p) => p.name)
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
