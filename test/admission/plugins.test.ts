import t from 'tap'
import { admissionPluginErrors, configureAdmissionPlugins, enabled, enabledPluginNames, registeredPluginNames } from '../../src/admission/plugins.js'

t.test('the plugins that run: defaults, less those turned off', async (t) => {
  const all = [
    'NamespaceLifecycle', 'LimitRanger', 'ServiceAccount', 'NodeRestriction', 'TaintNodesByCondition', 'PodSecurity', 'Priority', 'DefaultTolerationSeconds',
    'DefaultStorageClass', 'StorageObjectInUseProtection', 'PersistentVolumeClaimResize', 'RuntimeClass', 'CertificateApproval', 'CertificateSigning',
    'CertificateSubjectRestriction', 'DefaultIngressClass', 'MutatingAdmissionWebhook', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionWebhook', 'ResourceQuota',
  ]
  t.same(enabledPluginNames([], []), all)
  t.same(enabledPluginNames(['ServiceAccount'], ['LimitRanger', 'AlwaysPullImages']), all.filter((n) => n !== 'LimitRanger'))
  // Those off by default run when named, in upstream's order.
  t.same(enabledPluginNames(['AlwaysDeny', 'AlwaysPullImages'], all), ['AlwaysPullImages', 'AlwaysDeny'])
  configureAdmissionPlugins([], ['ServiceAccount', 'ResourceQuota'])
  t.same({ ...enabled }, {
    namespaceLifecycle: true, limitRanger: true, serviceAccount: false, nodeRestriction: true, podSecurity: true, priority: true,
    mutatingAdmissionWebhook: true, validatingAdmissionPolicy: true, validatingAdmissionWebhook: true, resourceQuota: false,
    taintNodesByCondition: true, defaultTolerationSeconds: true, defaultStorageClass: true, storageObjectInUseProtection: true, persistentVolumeClaimResize: true,
    runtimeClass: true, certificateApproval: true, certificateSigning: true, certificateSubjectRestriction: true, defaultIngressClass: true,
    alwaysAdmit: false, namespaceAutoProvision: false, namespaceExists: false, alwaysPullImages: false, podNodeSelector: false, podTolerationRestriction: false, alwaysDeny: false,
  })
  configureAdmissionPlugins(['PodNodeSelector'])
  t.equal(enabled.serviceAccount, true)
  t.equal(enabled.podNodeSelector, true)
  configureAdmissionPlugins()
  t.equal(enabled.podNodeSelector, false)
})

t.test("the flags' errors, as upstream words them", async (t) => {
  t.same(admissionPluginErrors(['NodeRestriction'], ['PodSecurity', 'AlwaysAdmit']), [])
  t.same(admissionPluginErrors(['X', 'Priority'], ['Priority', 'Y']), [
    'enable-admission-plugins plugin "X" is unknown',
    'disable-admission-plugins plugin "Y" is unknown',
    '[Priority] in enable-admission-plugins and disable-admission-plugins overlapped',
  ])
  t.same(admissionPluginErrors(['ImagePolicyWebhook'], []), ['enable-admission-plugins plugin "ImagePolicyWebhook" is not implemented by this server'])
  const names = registeredPluginNames()
  t.same(names, [...names].sort(), 'sorted, as upstream lists them')
  t.equal(names.length, 36)
})
