// Every served resource type, one import per file, sorted by import path.
import type { ResourceDefinition } from '../define.js'
import admissionregistration_mutatingwebhookconfigurations from './admissionregistration.orch.io/mutatingwebhookconfigurations.js'
import admissionregistration_validatingadmissionpolicies from './admissionregistration.orch.io/validatingadmissionpolicies.js'
import admissionregistration_validatingadmissionpolicybindings from './admissionregistration.orch.io/validatingadmissionpolicybindings.js'
import admissionregistration_validatingwebhookconfigurations from './admissionregistration.orch.io/validatingwebhookconfigurations.js'
import apiextensions_customresourcedefinitions from './apiextensions.orch.io/customresourcedefinitions.js'
import authentication_selfsubjectreviews from './authentication.orch.io/selfsubjectreviews.js'
import authentication_tokenreviews from './authentication.orch.io/tokenreviews.js'
import authorization_localsubjectaccessreviews from './authorization.orch.io/localsubjectaccessreviews.js'
import authorization_selfsubjectaccessreviews from './authorization.orch.io/selfsubjectaccessreviews.js'
import authorization_selfsubjectrulesreviews from './authorization.orch.io/selfsubjectrulesreviews.js'
import authorization_subjectaccessreviews from './authorization.orch.io/subjectaccessreviews.js'
import apps_controllerrevisions from './apps/controllerrevisions.js'
import apps_daemonsets from './apps/daemonsets.js'
import apps_deployments from './apps/deployments.js'
import apps_replicasets from './apps/replicasets.js'
import apps_statefulsets from './apps/statefulsets.js'
import autoscaling_horizontalpodautoscalers from './autoscaling/horizontalpodautoscalers.js'
import autoscaling_horizontalpodautoscalers_v1 from './autoscaling/horizontalpodautoscalers-v1.js'
import batch_cronjobs from './batch/cronjobs.js'
import batch_jobs from './batch/jobs.js'
import certificates_certificatesigningrequests from './certificates.orch.io/certificatesigningrequests.js'
import coordination_leases from './coordination.orch.io/leases.js'
import core_configmaps from './core/configmaps.js'
import core_endpoints from './core/endpoints.js'
import core_events from './core/events.js'
import core_limitranges from './core/limitranges.js'
import core_namespaces from './core/namespaces.js'
import core_nodes from './core/nodes.js'
import core_persistentvolumeclaims from './core/persistentvolumeclaims.js'
import core_persistentvolumes from './core/persistentvolumes.js'
import core_pods from './core/pods.js'
import core_podtemplates from './core/podtemplates.js'
import core_replicationcontrollers from './core/replicationcontrollers.js'
import core_resourcequotas from './core/resourcequotas.js'
import core_secrets from './core/secrets.js'
import core_serviceaccounts from './core/serviceaccounts.js'
import core_services from './core/services.js'
import discovery_endpointslices from './discovery.orch.io/endpointslices.js'
import events_events from './events.orch.io/events.js'
import flowcontrol_flowschemas from './flowcontrol.apiserver.orch.io/flowschemas.js'
import flowcontrol_prioritylevelconfigurations from './flowcontrol.apiserver.orch.io/prioritylevelconfigurations.js'
import networking_ingressclasses from './networking.orch.io/ingressclasses.js'
import networking_ingresses from './networking.orch.io/ingresses.js'
import networking_networkpolicies from './networking.orch.io/networkpolicies.js'
import node_runtimeclasses from './node.orch.io/runtimeclasses.js'
import policy_poddisruptionbudgets from './policy/poddisruptionbudgets.js'
import rbac_clusterrolebindings from './rbac.authorization.orch.io/clusterrolebindings.js'
import rbac_clusterroles from './rbac.authorization.orch.io/clusterroles.js'
import rbac_rolebindings from './rbac.authorization.orch.io/rolebindings.js'
import rbac_roles from './rbac.authorization.orch.io/roles.js'
import scheduling_priorityclasses from './scheduling.orch.io/priorityclasses.js'
import storage_csidrivers from './storage.orch.io/csidrivers.js'
import storage_csinodes from './storage.orch.io/csinodes.js'
import storage_csistoragecapacities from './storage.orch.io/csistoragecapacities.js'
import storage_storageclasses from './storage.orch.io/storageclasses.js'
import storage_volumeattachments from './storage.orch.io/volumeattachments.js'

export const resources: ResourceDefinition[] = [
  admissionregistration_mutatingwebhookconfigurations,
  admissionregistration_validatingadmissionpolicies,
  admissionregistration_validatingadmissionpolicybindings,
  admissionregistration_validatingwebhookconfigurations,
  apiextensions_customresourcedefinitions,
  apps_controllerrevisions,
  apps_daemonsets,
  apps_deployments,
  apps_replicasets,
  apps_statefulsets,
  autoscaling_horizontalpodautoscalers,
  autoscaling_horizontalpodautoscalers_v1,
  batch_cronjobs,
  batch_jobs,
  certificates_certificatesigningrequests,
  coordination_leases,
  core_configmaps,
  core_endpoints,
  core_events,
  core_limitranges,
  core_namespaces,
  core_nodes,
  core_persistentvolumeclaims,
  core_persistentvolumes,
  core_pods,
  core_podtemplates,
  core_replicationcontrollers,
  core_resourcequotas,
  core_secrets,
  core_serviceaccounts,
  core_services,
  discovery_endpointslices,
  events_events,
  flowcontrol_flowschemas,
  flowcontrol_prioritylevelconfigurations,
  networking_ingressclasses,
  networking_ingresses,
  networking_networkpolicies,
  node_runtimeclasses,
  policy_poddisruptionbudgets,
  rbac_clusterrolebindings,
  rbac_clusterroles,
  rbac_rolebindings,
  rbac_roles,
  scheduling_priorityclasses,
  storage_csidrivers,
  storage_csinodes,
  storage_csistoragecapacities,
  storage_storageclasses,
  storage_volumeattachments,
]

/** Virtual types: served and discovered, never stored (answered by src/pipeline/reviews.ts). */
export const virtualResources: ResourceDefinition[] = [
  authentication_selfsubjectreviews,
  authentication_tokenreviews,
  authorization_localsubjectaccessreviews,
  authorization_selfsubjectaccessreviews,
  authorization_selfsubjectrulesreviews,
  authorization_subjectaccessreviews,
]
