#!/usr/bin/env node
// Derives the protobuf codec's message table from the upstream field numbers.
//
//   node scripts/gen-protobuf.mjs [path/to/messages.json]      (default ../shared/reference/protobuf/messages.json)
//
// Reads (relative to the repository root) src/registry/schemas/resources.json (the served kinds) and
// src/registry/schemas/definitions.json (their JSON property names), and writes
// src/machinery/codecs/protobuf-messages.json:
//   kinds:           "<apiVersion as we serve it>/<Kind>" -> fully-qualified message name (served kinds, their lists,
//                    and the extra roots below)
//   anyVersionKinds: Kind -> message, for the meta kinds every group version carries (Status, DeleteOptions, WatchEvent)
//   messages:        every message reachable from those, each { special?, fields: [[number, jsonName, type, label, flags]] }
//                    type: a scalar (string, bytes, bool, int32, int64, double), a message name, or map<string,VALUE>;
//                    label: optional | repeated | map; flags: P (Go pointer: kept when present, zero included),
//                    A (no omitempty: kept when present, zero included), I (embedded struct inlined into the parent's
//                    JSON), "" (omitempty: a zero value is dropped).
// JSON names: the Go json tag where it differs from the proto name (table GO_FACTS), `x-kubernetes-*` -> `x-orch-*`,
// checked against definitions.json (the schema's spelling wins where they differ only in case); proto fields the
// schema lacks are kept and reported (the reference swagger has lost every property named `description`), and so
// are schema properties without a proto field.
// Output is deterministic (messages sorted by name, fields by number).
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const input = resolve(process.argv[2] ?? resolve(root, '../shared/reference/protobuf/messages.json'))
const outFile = resolve(root, 'src/machinery/codecs/protobuf-messages.json')

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1'
const RUNTIME = 'k8s.io.apimachinery.pkg.runtime'
const AX = 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1'

/** Roots besides the served kinds and their lists: [apiVersion as we serve it, kind, message]. */
const EXTRA_ROOTS = [
  ['v1', 'Status', `${META}.Status`],
  ['v1', 'DeleteOptions', `${META}.DeleteOptions`],
  ['meta.orch.io/v1', 'DeleteOptions', `${META}.DeleteOptions`],
  ['meta.orch.io/v1', 'WatchEvent', `${META}.WatchEvent`],
  [null, null, `${META}.ListMeta`],
  ['autoscaling/v1', 'Scale', 'k8s.io.api.autoscaling.v1.Scale'],
  // pods/eviction takes an Eviction of policy/v1, and of policy/v1beta1 as upstream still does (the same message).
  ['policy/v1', 'Eviction', 'k8s.io.api.policy.v1.Eviction'],
  ['policy/v1beta1', 'Eviction', 'k8s.io.api.policy.v1.Eviction'],
  ['authentication.orch.io/v1', 'SelfSubjectReview', 'k8s.io.api.authentication.v1.SelfSubjectReview'],
  ['authentication.orch.io/v1', 'TokenReview', 'k8s.io.api.authentication.v1.TokenReview'],
  ['authentication.orch.io/v1', 'TokenRequest', 'k8s.io.api.authentication.v1.TokenRequest'],
  ['authorization.orch.io/v1', 'SelfSubjectAccessReview', 'k8s.io.api.authorization.v1.SelfSubjectAccessReview'],
  ['authorization.orch.io/v1', 'SubjectAccessReview', 'k8s.io.api.authorization.v1.SubjectAccessReview'],
  ['authorization.orch.io/v1', 'LocalSubjectAccessReview', 'k8s.io.api.authorization.v1.LocalSubjectAccessReview'],
  ['authorization.orch.io/v1', 'SelfSubjectRulesReview', 'k8s.io.api.authorization.v1.SelfSubjectRulesReview'],
  [null, null, `${RUNTIME}.Unknown`],
]
const ANY_VERSION_KINDS = { DeleteOptions: `${META}.DeleteOptions`, Status: `${META}.Status`, WatchEvent: `${META}.WatchEvent` }

/** Messages whose JSON form is not an object of their fields (Go types with their own MarshalJSON). */
const SPECIAL = {
  [`${META}.Time`]: 'time',
  [`${META}.MicroTime`]: 'microtime',
  [`${META}.FieldsV1`]: 'fieldsv1',
  'k8s.io.apimachinery.pkg.api.resource.Quantity': 'quantity',
  'k8s.io.apimachinery.pkg.util.intstr.IntOrString': 'intorstring',
  [`${RUNTIME}.RawExtension`]: 'rawextension',
  [`${AX}.JSON`]: 'json',
  [`${AX}.JSONSchemaPropsOrArray`]: 'propsorarray',
  [`${AX}.JSONSchemaPropsOrBool`]: 'propsorbool',
  [`${AX}.JSONSchemaPropsOrStringArray`]: 'propsorstringarray',
  // Named string slices (type ExtraValue []string): a JSON array.
  'k8s.io.api.authentication.v1.ExtraValue': 'stringlist',
  'k8s.io.api.authentication.v1.AttestationValue': 'stringlist',
  'k8s.io.api.authorization.v1.ExtraValue': 'stringlist',
  'k8s.io.api.certificates.v1.ExtraValue': 'stringlist',
  [`${META}.Verbs`]: 'stringlist',
}

/** Group (as we serve it) -> upstream proto package prefix, where it is not `k8s.io.api.<first label>`. */
const PACKAGE_OF_GROUP = {
  '': 'k8s.io.api.core',
  'apiextensions.orch.io': 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions',
}
const packageOf = (group, version) => {
  const base = PACKAGE_OF_GROUP[group] ?? `k8s.io.api.${group.split('.')[0]}`
  return `${base}.${version}`
}

/**
 * What the .proto files do not say, read from the upstream Go types (kubernetes/api @ 10b39a39, apimachinery @
 * eed236ce, apiextensions-apiserver @ 1aa2717a: `types.go`, `types_jsonschema.go`), per message, for the fields
 * that are not plain omitempty: `field:FLAGS[=jsonName]` with P = pointer scalar (`*int32`), A = scalar without
 * omitempty, I = embedded struct inlined into the parent's JSON object; `=name` = JSON name other than the proto name.
 */
const GO_FACTS = {
  'k8s.io.api.admissionregistration.v1.AuditAnnotation': 'key:A valueExpression:A',
  'k8s.io.api.admissionregistration.v1.ExpressionWarning': 'fieldRef:A warning:A',
  'k8s.io.api.admissionregistration.v1.MatchCondition': 'name:A expression:A',
  'k8s.io.api.admissionregistration.v1.MatchResources': 'matchPolicy:P',
  'k8s.io.api.admissionregistration.v1.MutatingWebhook': 'name:A failurePolicy:P matchPolicy:P sideEffects:P timeoutSeconds:P reinvocationPolicy:P',
  'k8s.io.api.admissionregistration.v1.MutatingWebhookConfiguration': 'Webhooks:=webhooks',
  'k8s.io.api.admissionregistration.v1.NamedRuleWithOperations': 'ruleWithOperations:I',
  'k8s.io.api.admissionregistration.v1.ParamRef': 'parameterNotFoundAction:P',
  'k8s.io.api.admissionregistration.v1.Rule': 'scope:P',
  'k8s.io.api.admissionregistration.v1.RuleWithOperations': 'rule:I',
  'k8s.io.api.admissionregistration.v1.ServiceReference': 'namespace:A name:A path:P port:P',
  'k8s.io.api.admissionregistration.v1.ValidatingAdmissionPolicySpec': 'failurePolicy:P',
  'k8s.io.api.admissionregistration.v1.ValidatingWebhook': 'name:A failurePolicy:P matchPolicy:P sideEffects:P timeoutSeconds:P',
  'k8s.io.api.admissionregistration.v1.ValidatingWebhookConfiguration': 'Webhooks:=webhooks',
  'k8s.io.api.admissionregistration.v1.Validation': 'Expression:A=expression reason:P',
  'k8s.io.api.admissionregistration.v1.Variable': 'Name:A=name Expression:A=expression',
  'k8s.io.api.admissionregistration.v1.WebhookClientConfig': 'url:P',
  'k8s.io.api.apps.v1.ControllerRevision': 'revision:A',
  'k8s.io.api.apps.v1.DaemonSetCondition': 'type:A status:A',
  'k8s.io.api.apps.v1.DaemonSetSpec': 'revisionHistoryLimit:P',
  'k8s.io.api.apps.v1.DaemonSetStatus': 'currentNumberScheduled:A numberMisscheduled:A desiredNumberScheduled:A numberReady:A collisionCount:P',
  'k8s.io.api.apps.v1.DeploymentCondition': 'type:A status:A',
  'k8s.io.api.apps.v1.DeploymentSpec': 'replicas:P revisionHistoryLimit:P progressDeadlineSeconds:P',
  'k8s.io.api.apps.v1.DeploymentStatus': 'terminatingReplicas:P collisionCount:P',
  'k8s.io.api.apps.v1.ReplicaSetCondition': 'type:A status:A',
  'k8s.io.api.apps.v1.ReplicaSetSpec': 'replicas:P',
  'k8s.io.api.apps.v1.ReplicaSetStatus': 'replicas:A terminatingReplicas:P',
  'k8s.io.api.apps.v1.RollingUpdateStatefulSetStrategy': 'partition:P',
  'k8s.io.api.apps.v1.StatefulSetCondition': 'type:A status:A',
  'k8s.io.api.apps.v1.StatefulSetOrdinals': 'start:A',
  'k8s.io.api.apps.v1.StatefulSetSpec': 'replicas:P serviceName:A revisionHistoryLimit:P',
  'k8s.io.api.apps.v1.StatefulSetStatus': 'replicas:A collisionCount:P availableReplicas:A',
  'k8s.io.api.authentication.v1.BoundObjectReference': 'uID:=uid',
  'k8s.io.api.authentication.v1.TokenRequestSpec': 'expirationSeconds:P',
  'k8s.io.api.authentication.v1.TokenRequestStatus': 'token:A',
  'k8s.io.api.authorization.v1.SubjectAccessReviewStatus': 'allowed:A',
  'k8s.io.api.authorization.v1.SubjectRulesReviewStatus': 'incomplete:A',
  'k8s.io.api.autoscaling.v1.CrossVersionObjectReference': 'kind:A name:A',
  'k8s.io.api.autoscaling.v1.HorizontalPodAutoscalerSpec': 'minReplicas:P maxReplicas:A targetCPUUtilizationPercentage:P',
  'k8s.io.api.autoscaling.v1.HorizontalPodAutoscalerStatus': 'observedGeneration:P currentReplicas:A desiredReplicas:A currentCPUUtilizationPercentage:P',
  'k8s.io.api.autoscaling.v1.ScaleStatus': 'replicas:A',
  'k8s.io.api.autoscaling.v2.ContainerResourceMetricSource': 'name:A container:A',
  'k8s.io.api.autoscaling.v2.ContainerResourceMetricStatus': 'name:A container:A',
  'k8s.io.api.autoscaling.v2.CrossVersionObjectReference': 'kind:A name:A',
  'k8s.io.api.autoscaling.v2.HPAScalingPolicy': 'type:A value:A periodSeconds:A',
  'k8s.io.api.autoscaling.v2.HPAScalingRules': 'stabilizationWindowSeconds:P selectPolicy:P',
  'k8s.io.api.autoscaling.v2.HorizontalPodAutoscalerCondition': 'type:A status:A observedGeneration:P',
  'k8s.io.api.autoscaling.v2.HorizontalPodAutoscalerSpec': 'minReplicas:P maxReplicas:A',
  'k8s.io.api.autoscaling.v2.HorizontalPodAutoscalerStatus': 'observedGeneration:P desiredReplicas:A',
  'k8s.io.api.autoscaling.v2.MetricIdentifier': 'name:A',
  'k8s.io.api.autoscaling.v2.MetricSpec': 'type:A',
  'k8s.io.api.autoscaling.v2.MetricStatus': 'type:A',
  'k8s.io.api.autoscaling.v2.MetricTarget': 'type:A averageUtilization:P',
  'k8s.io.api.autoscaling.v2.MetricValueStatus': 'averageUtilization:P',
  'k8s.io.api.autoscaling.v2.ResourceMetricSource': 'name:A',
  'k8s.io.api.autoscaling.v2.ResourceMetricStatus': 'name:A',
  'k8s.io.api.batch.v1.CronJobSpec': 'schedule:A timeZone:P startingDeadlineSeconds:P suspend:P successfulJobsHistoryLimit:P failedJobsHistoryLimit:P',
  'k8s.io.api.batch.v1.JobCondition': 'type:A status:A',
  'k8s.io.api.batch.v1.JobSpec': 'parallelism:P completions:P activeDeadlineSeconds:P backoffLimit:P backoffLimitPerIndex:P maxFailedIndexes:P manualSelector:P ttlSecondsAfterFinished:P completionMode:P suspend:P podReplacementPolicy:P managedBy:P',
  'k8s.io.api.batch.v1.JobStatus': 'terminating:P failedIndexes:P ready:P',
  'k8s.io.api.batch.v1.PodFailurePolicyOnExitCodesRequirement': 'containerName:P operator:A',
  'k8s.io.api.batch.v1.PodFailurePolicyOnPodConditionsPattern': 'type:A status:A',
  'k8s.io.api.batch.v1.PodFailurePolicyRule': 'action:A',
  'k8s.io.api.batch.v1.SuccessPolicyRule': 'succeededIndexes:P succeededCount:P',
  'k8s.io.api.certificates.v1.CertificateSigningRequestCondition': 'type:A status:A',
  'k8s.io.api.certificates.v1.CertificateSigningRequestSpec': 'request:A signerName:A expirationSeconds:P',
  'k8s.io.api.coordination.v1.LeaseSpec': 'holderIdentity:P leaseDurationSeconds:P leaseTransitions:P strategy:P preferredHolder:P',
  'k8s.io.api.core.v1.AWSElasticBlockStoreVolumeSource': 'volumeID:A',
  'k8s.io.api.core.v1.AppArmorProfile': 'type:A localhostProfile:P',
  'k8s.io.api.core.v1.AttachedVolume': 'name:A devicePath:A',
  'k8s.io.api.core.v1.AzureDiskVolumeSource': 'diskName:A diskURI:A cachingMode:P fsType:P readOnly:P kind:P',
  'k8s.io.api.core.v1.AzureFilePersistentVolumeSource': 'secretName:A shareName:A secretNamespace:P',
  'k8s.io.api.core.v1.AzureFileVolumeSource': 'secretName:A shareName:A',
  'k8s.io.api.core.v1.CSIPersistentVolumeSource': 'driver:A volumeHandle:A',
  'k8s.io.api.core.v1.CSIVolumeSource': 'driver:A readOnly:P fsType:P',
  'k8s.io.api.core.v1.CinderPersistentVolumeSource': 'volumeID:A',
  'k8s.io.api.core.v1.CinderVolumeSource': 'volumeID:A',
  'k8s.io.api.core.v1.ClientIPConfig': 'timeoutSeconds:P',
  'k8s.io.api.core.v1.ClusterTrustBundleProjection': 'name:P signerName:P optional:P path:A user:P',
  'k8s.io.api.core.v1.ConfigMap': 'immutable:P',
  'k8s.io.api.core.v1.ConfigMapEnvSource': 'localObjectReference:I optional:P',
  'k8s.io.api.core.v1.ConfigMapKeySelector': 'localObjectReference:I key:A optional:P',
  'k8s.io.api.core.v1.ConfigMapNodeConfigSource': 'namespace:A name:A kubeletConfigKey:A',
  'k8s.io.api.core.v1.ConfigMapProjection': 'localObjectReference:I optional:P',
  'k8s.io.api.core.v1.ConfigMapVolumeSource': 'localObjectReference:I defaultMode:P optional:P defaultUser:P',
  'k8s.io.api.core.v1.Container': 'name:A restartPolicy:P',
  'k8s.io.api.core.v1.ContainerExtendedResourceRequest': 'containerName:A resourceName:A requestName:A',
  'k8s.io.api.core.v1.ContainerPort': 'containerPort:A',
  'k8s.io.api.core.v1.ContainerResizePolicy': 'resourceName:A restartPolicy:A',
  'k8s.io.api.core.v1.ContainerStateTerminated': 'exitCode:A',
  'k8s.io.api.core.v1.ContainerStatus': 'name:A ready:A restartCount:A image:A imageID:A started:P stopSignal:P',
  'k8s.io.api.core.v1.DaemonEndpoint': 'Port:A',
  'k8s.io.api.core.v1.DownwardAPIVolumeFile': 'path:A mode:P user:P',
  'k8s.io.api.core.v1.DownwardAPIVolumeSource': 'defaultMode:P defaultUser:P',
  'k8s.io.api.core.v1.EmptyDirVolumeSource': 'mode:P',
  'k8s.io.api.core.v1.EndpointAddress': 'ip:A nodeName:P',
  'k8s.io.api.core.v1.EndpointPort': 'port:A appProtocol:P',
  'k8s.io.api.core.v1.EnvVar': 'name:A',
  'k8s.io.api.core.v1.EphemeralContainer': 'ephemeralContainerCommon:I',
  'k8s.io.api.core.v1.EphemeralContainerCommon': 'name:A restartPolicy:P',
  'k8s.io.api.core.v1.Event': 'reportingComponent:A reportingInstance:A',
  'k8s.io.api.core.v1.EvictionResponder': 'name:A priority:P',
  'k8s.io.api.core.v1.FCVolumeSource': 'lun:P',
  'k8s.io.api.core.v1.FileKeySelector': 'volumeName:A path:A key:A optional:P',
  'k8s.io.api.core.v1.FlexPersistentVolumeSource': 'driver:A',
  'k8s.io.api.core.v1.FlexVolumeSource': 'driver:A',
  'k8s.io.api.core.v1.GCEPersistentDiskVolumeSource': 'pdName:A',
  'k8s.io.api.core.v1.GRPCAction': 'port:A service:P mode:P',
  'k8s.io.api.core.v1.GitRepoVolumeSource': 'repository:A',
  'k8s.io.api.core.v1.GlusterfsPersistentVolumeSource': 'endpoints:A path:A endpointsNamespace:P',
  'k8s.io.api.core.v1.GlusterfsVolumeSource': 'endpoints:A path:A',
  'k8s.io.api.core.v1.HTTPGetAction': 'protocol:P',
  'k8s.io.api.core.v1.HTTPHeader': 'name:A value:A',
  'k8s.io.api.core.v1.HostAlias': 'ip:A',
  'k8s.io.api.core.v1.HostIP': 'ip:A',
  'k8s.io.api.core.v1.HostPathVolumeSource': 'path:A type:P',
  'k8s.io.api.core.v1.ISCSIPersistentVolumeSource': 'targetPortal:A iqn:A lun:A initiatorName:P',
  'k8s.io.api.core.v1.ISCSIVolumeSource': 'targetPortal:A iqn:A lun:A initiatorName:P',
  'k8s.io.api.core.v1.KeyToPath': 'key:A path:A mode:P user:P',
  'k8s.io.api.core.v1.Lifecycle': 'stopSignal:P',
  'k8s.io.api.core.v1.LimitRangeItem': 'type:A',
  'k8s.io.api.core.v1.LinuxContainerUser': 'uid:A gid:A',
  'k8s.io.api.core.v1.LoadBalancerIngress': 'ipMode:P',
  'k8s.io.api.core.v1.LocalVolumeSource': 'path:A fsType:P',
  'k8s.io.api.core.v1.ModifyVolumeStatus': 'status:A',
  'k8s.io.api.core.v1.NFSVolumeSource': 'server:A path:A',
  'k8s.io.api.core.v1.NamespaceCondition': 'type:A status:A',
  'k8s.io.api.core.v1.NodeAddress': 'type:A address:A',
  'k8s.io.api.core.v1.NodeAllocatableMappedResources': 'name:A',
  'k8s.io.api.core.v1.NodeAllocatableOverheadResources': 'name:A',
  'k8s.io.api.core.v1.NodeAllocatableResourceClaimStatus': 'resourceClaimName:A',
  'k8s.io.api.core.v1.NodeCondition': 'type:A status:A',
  'k8s.io.api.core.v1.NodeFeatures': 'supplementalGroupsPolicy:P',
  'k8s.io.api.core.v1.NodeRuntimeHandler': 'name:A',
  'k8s.io.api.core.v1.NodeRuntimeHandlerFeatures': 'recursiveReadOnlyMounts:P userNamespaces:P',
  'k8s.io.api.core.v1.NodeSelectorRequirement': 'key:A operator:A',
  'k8s.io.api.core.v1.NodeSwapStatus': 'capacity:P',
  'k8s.io.api.core.v1.NodeSystemInfo': 'machineID:A systemUUID:A bootID:A kernelVersion:A osImage:A containerRuntimeVersion:A kubeletVersion:A kubeProxyVersion:A operatingSystem:A architecture:A',
  'k8s.io.api.core.v1.ObjectFieldSelector': 'fieldPath:A',
  'k8s.io.api.core.v1.PersistentVolumeClaimCondition': 'type:A status:A',
  'k8s.io.api.core.v1.PersistentVolumeClaimSpec': 'storageClassName:P volumeMode:P volumeAttributesClassName:P',
  'k8s.io.api.core.v1.PersistentVolumeClaimStatus': 'currentVolumeAttributesClassName:P',
  'k8s.io.api.core.v1.PersistentVolumeClaimVolumeSource': 'claimName:A',
  'k8s.io.api.core.v1.PersistentVolumeSpec': 'persistentVolumeSource:I volumeMode:P volumeAttributesClassName:P',
  'k8s.io.api.core.v1.PhotonPersistentDiskVolumeSource': 'pdID:A',
  'k8s.io.api.core.v1.PodAffinityTerm': 'topologyKey:A',
  'k8s.io.api.core.v1.PodCertificateProjection': 'maxExpirationSeconds:P user:P',
  'k8s.io.api.core.v1.PodCondition': 'type:A status:A',
  'k8s.io.api.core.v1.PodDNSConfigOption': 'value:P',
  'k8s.io.api.core.v1.PodExtendedResourceClaimStatus': 'resourceClaimName:A',
  'k8s.io.api.core.v1.PodIP': 'ip:A',
  'k8s.io.api.core.v1.PodOS': 'name:A',
  'k8s.io.api.core.v1.PodReadinessGate': 'conditionType:A',
  'k8s.io.api.core.v1.PodResourceClaim': 'name:A resourceClaimName:P resourceClaimTemplateName:P',
  'k8s.io.api.core.v1.PodResourceClaimStatus': 'name:A resourceClaimName:P',
  'k8s.io.api.core.v1.PodSchedulingGate': 'name:A',
  'k8s.io.api.core.v1.PodSchedulingGroup': 'podGroupName:P',
  'k8s.io.api.core.v1.PodSecurityContext': 'runAsUser:P runAsGroup:P runAsNonRoot:P supplementalGroupsPolicy:P fsGroup:P fsGroupChangePolicy:P seLinuxChangePolicy:P',
  'k8s.io.api.core.v1.PodSpec': 'terminationGracePeriodSeconds:P activeDeadlineSeconds:P automountServiceAccountToken:P shareProcessNamespace:P priority:P runtimeClassName:P enableServiceLinks:P preemptionPolicy:P setHostnameAsFQDN:P hostUsers:P hostnameOverride:P',
  'k8s.io.api.core.v1.PodVolumeHealth': 'name:A',
  'k8s.io.api.core.v1.PortStatus': 'port:A protocol:A error:P',
  'k8s.io.api.core.v1.PortworxVolumeSource': 'volumeID:A',
  'k8s.io.api.core.v1.PreferredSchedulingTerm': 'weight:A',
  'k8s.io.api.core.v1.Probe': 'handler:I terminationGracePeriodSeconds:P',
  'k8s.io.api.core.v1.ProjectedVolumeSource': 'defaultMode:P defaultUser:P',
  'k8s.io.api.core.v1.QuobyteVolumeSource': 'registry:A volume:A',
  'k8s.io.api.core.v1.RBDPersistentVolumeSource': 'image:A',
  'k8s.io.api.core.v1.RBDVolumeSource': 'image:A',
  'k8s.io.api.core.v1.ReplicationControllerCondition': 'type:A status:A',
  'k8s.io.api.core.v1.ReplicationControllerSpec': 'replicas:P',
  'k8s.io.api.core.v1.ReplicationControllerStatus': 'replicas:A',
  'k8s.io.api.core.v1.ResourceClaim': 'name:A',
  'k8s.io.api.core.v1.ResourceFieldSelector': 'resource:A',
  'k8s.io.api.core.v1.ResourceHealth': 'resourceID:A message:P',
  'k8s.io.api.core.v1.ResourceStatus': 'name:A',
  'k8s.io.api.core.v1.ScaleIOPersistentVolumeSource': 'gateway:A system:A',
  'k8s.io.api.core.v1.ScaleIOVolumeSource': 'gateway:A system:A',
  'k8s.io.api.core.v1.ScopedResourceSelectorRequirement': 'scopeName:A operator:A',
  'k8s.io.api.core.v1.SeccompProfile': 'type:A localhostProfile:P',
  'k8s.io.api.core.v1.Secret': 'immutable:P',
  'k8s.io.api.core.v1.SecretEnvSource': 'localObjectReference:I optional:P',
  'k8s.io.api.core.v1.SecretKeySelector': 'localObjectReference:I key:A optional:P',
  'k8s.io.api.core.v1.SecretProjection': 'localObjectReference:I optional:P',
  'k8s.io.api.core.v1.SecretVolumeSource': 'defaultMode:P optional:P defaultUser:P',
  'k8s.io.api.core.v1.SecurityContext': 'privileged:P runAsUser:P runAsGroup:P runAsNonRoot:P readOnlyRootFilesystem:P allowPrivilegeEscalation:P procMount:P',
  'k8s.io.api.core.v1.ServiceAccount': 'automountServiceAccountToken:P',
  'k8s.io.api.core.v1.ServiceAccountTokenProjection': 'expirationSeconds:P path:A user:P',
  'k8s.io.api.core.v1.ServicePort': 'appProtocol:P port:A',
  'k8s.io.api.core.v1.ServiceSpec': 'ipFamilyPolicy:P allocateLoadBalancerNodePorts:P loadBalancerClass:P internalTrafficPolicy:P trafficDistribution:P',
  'k8s.io.api.core.v1.SleepAction': 'seconds:A',
  'k8s.io.api.core.v1.Sysctl': 'name:A value:A',
  'k8s.io.api.core.v1.Taint': 'key:A effect:A',
  'k8s.io.api.core.v1.Toleration': 'tolerationSeconds:P',
  'k8s.io.api.core.v1.TopologySelectorLabelRequirement': 'key:A',
  'k8s.io.api.core.v1.TopologySpreadConstraint': 'maxSkew:A topologyKey:A whenUnsatisfiable:A minDomains:P nodeAffinityPolicy:P nodeTaintsPolicy:P',
  'k8s.io.api.core.v1.TypedLocalObjectReference': 'apiGroup:P kind:A name:A',
  'k8s.io.api.core.v1.TypedObjectReference': 'apiGroup:P kind:A name:A namespace:P',
  'k8s.io.api.core.v1.Volume': 'name:A volumeSource:I',
  'k8s.io.api.core.v1.VolumeDevice': 'name:A devicePath:A',
  'k8s.io.api.core.v1.VolumeHealthCondition': 'status:A reason:A',
  'k8s.io.api.core.v1.VolumeMount': 'name:A recursiveReadOnly:P mountPath:A mountPropagation:P',
  'k8s.io.api.core.v1.VolumeMountStatus': 'name:A mountPath:A recursiveReadOnly:P',
  'k8s.io.api.core.v1.VsphereVirtualDiskVolumeSource': 'volumePath:A',
  'k8s.io.api.core.v1.WeightedPodAffinityTerm': 'weight:A',
  'k8s.io.api.core.v1.WindowsSecurityContextOptions': 'gmsaCredentialSpecName:P gmsaCredentialSpec:P runAsUserName:P hostProcess:P',
  'k8s.io.api.discovery.v1.Endpoint': 'hostname:P nodeName:P zone:P',
  'k8s.io.api.discovery.v1.EndpointConditions': 'ready:P serving:P terminating:P',
  'k8s.io.api.discovery.v1.EndpointPort': 'name:P protocol:P port:P appProtocol:P',
  'k8s.io.api.discovery.v1.EndpointSlice': 'addressType:A',
  'k8s.io.api.discovery.v1.ForNode': 'name:A',
  'k8s.io.api.discovery.v1.ForZone': 'name:A',
  'k8s.io.api.events.v1.EventSeries': 'count:A',
  'k8s.io.api.flowcontrol.v1.ExemptPriorityLevelConfiguration': 'nominalConcurrencyShares:P lendablePercent:P',
  'k8s.io.api.flowcontrol.v1.FlowDistinguisherMethod': 'type:A',
  'k8s.io.api.flowcontrol.v1.FlowSchemaSpec': 'matchingPrecedence:A',
  'k8s.io.api.flowcontrol.v1.GroupSubject': 'name:A',
  'k8s.io.api.flowcontrol.v1.LimitResponse': 'type:A',
  'k8s.io.api.flowcontrol.v1.LimitedPriorityLevelConfiguration': 'nominalConcurrencyShares:P lendablePercent:P borrowingLimitPercent:P',
  'k8s.io.api.flowcontrol.v1.PriorityLevelConfigurationReference': 'name:A',
  'k8s.io.api.flowcontrol.v1.PriorityLevelConfigurationSpec': 'type:A',
  'k8s.io.api.flowcontrol.v1.QueuingConfiguration': 'queues:A handSize:A queueLengthLimit:A',
  'k8s.io.api.flowcontrol.v1.ServiceAccountSubject': 'namespace:A name:A',
  'k8s.io.api.flowcontrol.v1.Subject': 'kind:A',
  'k8s.io.api.flowcontrol.v1.UserSubject': 'name:A',
  'k8s.io.api.networking.v1.HTTPIngressPath': 'pathType:P',
  'k8s.io.api.networking.v1.IPBlock': 'cidr:A',
  'k8s.io.api.networking.v1.IngressClassParametersReference': 'aPIGroup:P=apiGroup kind:A name:A scope:P namespace:P',
  'k8s.io.api.networking.v1.IngressPortStatus': 'port:A protocol:A error:P',
  'k8s.io.api.networking.v1.IngressRule': 'ingressRuleValue:I',
  'k8s.io.api.networking.v1.IngressServiceBackend': 'name:A',
  'k8s.io.api.networking.v1.IngressSpec': 'ingressClassName:P',
  'k8s.io.api.networking.v1.NetworkPolicyPort': 'protocol:P endPort:P',
  'k8s.io.api.node.v1.RuntimeClass': 'handler:A',
  'k8s.io.api.policy.v1.PodDisruptionBudgetSpec': 'unhealthyPodEvictionPolicy:P',
  'k8s.io.api.policy.v1.PodDisruptionBudgetStatus': 'disruptionsAllowed:A currentHealthy:A desiredHealthy:A expectedPods:A',
  'k8s.io.api.rbac.v1.RoleRef': 'apiGroup:A kind:A name:A',
  'k8s.io.api.rbac.v1.Subject': 'kind:A name:A',
  'k8s.io.api.scheduling.v1.PriorityClass': 'value:A preemptionPolicy:P',
  'k8s.io.api.storage.v1.CSIDriverSpec': 'attachRequired:P podInfoOnMount:P storageCapacity:P fsGroupPolicy:P requiresRepublish:P seLinuxMount:P nodeAllocatableUpdatePeriodSeconds:P serviceAccountTokenInSecrets:P preventPodSchedulingIfMissing:P',
  'k8s.io.api.storage.v1.CSINodeDriver': 'name:A nodeID:A',
  'k8s.io.api.storage.v1.CSIStorageCapacity': 'storageClassName:A',
  'k8s.io.api.storage.v1.StorageClass': 'provisioner:A reclaimPolicy:P allowVolumeExpansion:P volumeBindingMode:P',
  'k8s.io.api.storage.v1.StorageHealth': 'name:A',
  'k8s.io.api.storage.v1.StorageHealthCondition': 'status:A reason:A accessMode:P volumeMode:P',
  'k8s.io.api.storage.v1.TokenRequest': 'audience:A expirationSeconds:P',
  'k8s.io.api.storage.v1.VolumeAttachmentSource': 'persistentVolumeName:P',
  'k8s.io.api.storage.v1.VolumeAttachmentSpec': 'attacher:A nodeName:A',
  'k8s.io.api.storage.v1.VolumeAttachmentStatus': 'attached:A',
  'k8s.io.api.storage.v1.VolumeError': 'errorCode:P',
  'k8s.io.api.storage.v1.VolumeNodeResources': 'count:P',
  'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceColumnDefinition': 'name:A type:A jsonPath:A',
  'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceConversion': 'strategy:A',
  'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionCondition': 'type:A status:A',
  'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionNames': 'plural:A kind:A',
  'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec': 'group:A scope:A',
  'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionVersion': 'name:A served:A storage:A deprecationWarning:P',
  'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresourceScale': 'specReplicasPath:A statusReplicasPath:A labelSelectorPath:P',
  'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps': 'schema:=$schema ref:P=$ref maximum:P minimum:P maxLength:P minLength:P maxItems:P minItems:P multipleOf:P maxProperties:P minProperties:P xKubernetesPreserveUnknownFields:P=x-kubernetes-preserve-unknown-fields xKubernetesEmbeddedResource:=x-kubernetes-embedded-resource xKubernetesIntOrString:=x-kubernetes-int-or-string xKubernetesListMapKeys:=x-kubernetes-list-map-keys xKubernetesListType:P=x-kubernetes-list-type xKubernetesMapType:P=x-kubernetes-map-type xKubernetesValidations:=x-kubernetes-validations',
  'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.SelectableField': 'jsonPath:A',
  'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.ServiceReference': 'namespace:A name:A path:P port:P',
  'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.ValidationRule': 'rule:A reason:P optionalOldSelf:P',
  'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.WebhookClientConfig': 'url:P',
  'k8s.io.apimachinery.pkg.apis.meta.v1.Condition': 'type:A status:A reason:A message:A',
  'k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions': 'gracePeriodSeconds:P orphanDependents:P propagationPolicy:P ignoreStoreReadErrorWithClusterBreakingPotential:P',
  'k8s.io.apimachinery.pkg.apis.meta.v1.FieldSelectorRequirement': 'key:A operator:A',
  'k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement': 'key:A operator:A',
  'k8s.io.apimachinery.pkg.apis.meta.v1.ListMeta': 'remainingItemCount:P',
  'k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta': 'deletionGracePeriodSeconds:P',
  'k8s.io.apimachinery.pkg.apis.meta.v1.OwnerReference': 'apiVersion:A kind:A name:A uid:A controller:P blockOwnerDeletion:P',
  'k8s.io.apimachinery.pkg.apis.meta.v1.Preconditions': 'uid:P resourceVersion:P',
  'k8s.io.apimachinery.pkg.apis.meta.v1.ShardInfo': 'selector:A',
  'k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent': 'type:A',
}

/**
 * The apiextensions v1 package is not part of messages.json: its generated.proto
 * (kubernetes/apiextensions-apiserver @ 1aa2717a552ee6ca1e2a18f1f8ffccde981db923, pkg/apis/apiextensions/v1,
 * Apache-2.0), field lines only.
 */
const APIEXTENSIONS_PROTO = `
message ConversionRequest {
  optional string uid = 1;
  optional string desiredAPIVersion = 2;
  repeated .k8s.io.apimachinery.pkg.runtime.RawExtension objects = 3;
}
message ConversionResponse {
  optional string uid = 1;
  repeated .k8s.io.apimachinery.pkg.runtime.RawExtension convertedObjects = 2;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Status result = 3;
}
message ConversionReview {
  optional ConversionRequest request = 1;
  optional ConversionResponse response = 2;
}
message CustomResourceColumnDefinition {
  optional string name = 1;
  optional string type = 2;
  optional string format = 3;
  optional string description = 4;
  optional int32 priority = 5;
  optional string jsonPath = 6;
}
message CustomResourceConversion {
  optional string strategy = 1;
  optional WebhookConversion webhook = 2;
}
message CustomResourceDefinition {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional CustomResourceDefinitionSpec spec = 2;
  optional CustomResourceDefinitionStatus status = 3;
}
message CustomResourceDefinitionCondition {
  optional string type = 1;
  optional string status = 2;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastTransitionTime = 3;
  optional string reason = 4;
  optional string message = 5;
  optional int64 observedGeneration = 6;
}
message CustomResourceDefinitionList {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ListMeta metadata = 1;
  repeated CustomResourceDefinition items = 2;
}
message CustomResourceDefinitionNames {
  optional string plural = 1;
  optional string singular = 2;
  repeated string shortNames = 3;
  optional string kind = 4;
  optional string listKind = 5;
  repeated string categories = 6;
}
message CustomResourceDefinitionSpec {
  optional string group = 1;
  optional CustomResourceDefinitionNames names = 3;
  optional string scope = 4;
  repeated CustomResourceDefinitionVersion versions = 7;
  optional CustomResourceConversion conversion = 9;
  optional bool preserveUnknownFields = 10;
}
message CustomResourceDefinitionStatus {
  repeated CustomResourceDefinitionCondition conditions = 1;
  optional CustomResourceDefinitionNames acceptedNames = 2;
  repeated string storedVersions = 3;
  optional int64 observedGeneration = 4;
}
message CustomResourceDefinitionVersion {
  optional string name = 1;
  optional bool served = 2;
  optional bool storage = 3;
  optional bool deprecated = 7;
  optional string deprecationWarning = 8;
  optional CustomResourceValidation schema = 4;
  optional CustomResourceSubresources subresources = 5;
  repeated CustomResourceColumnDefinition additionalPrinterColumns = 6;
  repeated SelectableField selectableFields = 9;
}
message CustomResourceSubresourceScale {
  optional string specReplicasPath = 1;
  optional string statusReplicasPath = 2;
  optional string labelSelectorPath = 3;
}
message CustomResourceSubresourceStatus {
}
message CustomResourceSubresources {
  optional CustomResourceSubresourceStatus status = 1;
  optional CustomResourceSubresourceScale scale = 2;
}
message CustomResourceValidation {
  optional JSONSchemaProps openAPIV3Schema = 1;
}
message ExternalDocumentation {
  optional string description = 1;
  optional string url = 2;
}
message JSON {
  optional bytes raw = 1;
}
message JSONSchemaProps {
  optional string id = 1;
  optional string schema = 2;
  optional string ref = 3;
  optional string description = 4;
  optional string type = 5;
  optional string format = 6;
  optional string title = 7;
  optional JSON default = 8;
  optional double maximum = 9;
  optional bool exclusiveMaximum = 10;
  optional double minimum = 11;
  optional bool exclusiveMinimum = 12;
  optional int64 maxLength = 13;
  optional int64 minLength = 14;
  optional string pattern = 15;
  optional int64 maxItems = 16;
  optional int64 minItems = 17;
  optional bool uniqueItems = 18;
  optional double multipleOf = 19;
  repeated JSON enum = 20;
  optional int64 maxProperties = 21;
  optional int64 minProperties = 22;
  repeated string required = 23;
  optional JSONSchemaPropsOrArray items = 24;
  repeated JSONSchemaProps allOf = 25;
  repeated JSONSchemaProps oneOf = 26;
  repeated JSONSchemaProps anyOf = 27;
  optional JSONSchemaProps not = 28;
  map<string, JSONSchemaProps> properties = 29;
  optional JSONSchemaPropsOrBool additionalProperties = 30;
  map<string, JSONSchemaProps> patternProperties = 31;
  map<string, JSONSchemaPropsOrStringArray> dependencies = 32;
  optional JSONSchemaPropsOrBool additionalItems = 33;
  map<string, JSONSchemaProps> definitions = 34;
  optional ExternalDocumentation externalDocs = 35;
  optional JSON example = 36;
  optional bool nullable = 37;
  optional bool xKubernetesPreserveUnknownFields = 38;
  optional bool xKubernetesEmbeddedResource = 39;
  optional bool xKubernetesIntOrString = 40;
  repeated string xKubernetesListMapKeys = 41;
  optional string xKubernetesListType = 42;
  optional string xKubernetesMapType = 43;
  repeated ValidationRule xKubernetesValidations = 44;
}
message JSONSchemaPropsOrArray {
  optional JSONSchemaProps schema = 1;
  repeated JSONSchemaProps jSONSchemas = 2;
}
message JSONSchemaPropsOrBool {
  optional bool allows = 1;
  optional JSONSchemaProps schema = 2;
}
message JSONSchemaPropsOrStringArray {
  optional JSONSchemaProps schema = 1;
  repeated string property = 2;
}
message SelectableField {
  optional string jsonPath = 1;
}
message ServiceReference {
  optional string namespace = 1;
  optional string name = 2;
  optional string path = 3;
  optional int32 port = 4;
}
message ValidationRule {
  optional string rule = 1;
  optional string message = 2;
  optional string messageExpression = 3;
  optional string reason = 4;
  optional string fieldPath = 5;
  optional bool optionalOldSelf = 6;
}
message WebhookClientConfig {
  optional string url = 3;
  optional ServiceReference service = 1;
  optional bytes caBundle = 2;
}
message WebhookConversion {
  optional WebhookClientConfig clientConfig = 2;
  repeated string conversionReviewVersions = 3;
}
`

function parseProto(text) {
  const messages = {}
  let cur = null
  for (const line of text.split('\n')) {
    const s = line.trim()
    let m
    if ((m = /^message (\w+) \{$/.exec(s))) { cur = messages[m[1]] = []; continue }
    if (s === '}') { cur = null; continue }
    if (!s) continue
    if (cur && (m = /^(optional|repeated) (\S+) (\w+) = (\d+);$/.exec(s))) {
      cur.push({ label: m[1], name: m[3], number: Number(m[4]), type: m[2] })
    } else if (cur && (m = /^map<(\w+), ?(\S+)> (\w+) = (\d+);$/.exec(s))) {
      cur.push({ label: 'map', name: m[3], number: Number(m[4]), type: `map<${m[1]},${m[2]}>` })
    } else {
      throw new Error(`APIEXTENSIONS_PROTO: cannot read "${s}"`)
    }
  }
  return messages
}

const SCALARS = new Set(['string', 'bytes', 'bool', 'int32', 'int64', 'double'])
const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0)
const renameKey = (k) => (k.startsWith('x-kubernetes-') ? 'x-orch-' + k.slice('x-kubernetes-'.length) : k)
const defNameOf = (fq) =>
  fq.startsWith('k8s.io.apiextensions_apiserver.') ? 'io.orch.apiextensions-apiserver.' + fq.slice('k8s.io.apiextensions_apiserver.'.length)
    : fq.startsWith('k8s.io.') ? 'io.orch.' + fq.slice('k8s.io.'.length) : fq

const source = JSON.parse(readFileSync(input, 'utf8'))
const packages = { ...source.packages }
if (!packages[AX]) packages[AX] = { file: 'k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1/generated.proto', messages: parseProto(APIEXTENSIONS_PROTO) }
const served = JSON.parse(readFileSync(resolve(root, 'src/registry/schemas/resources.json'), 'utf8'))
const definitions = JSON.parse(readFileSync(resolve(root, 'src/registry/schemas/definitions.json'), 'utf8')).definitions

const problems = []
const lookup = (fq) => {
  const dot = fq.lastIndexOf('.')
  return packages[fq.slice(0, dot)]?.messages?.[fq.slice(dot + 1)]
}
/** A field type as written in a .proto file -> scalar or fully-qualified message name (undefined: unknown). */
const resolveType = (t, pkg) => {
  if (SCALARS.has(t)) return t
  const fq = t.startsWith('.') ? t.slice(1) : t.startsWith('k8s.io.') ? t : `${pkg}.${t}`
  return lookup(fq) ? fq : undefined
}

const kinds = {}
const roots = []
for (const r of served) {
  const apiVersion = r.group === '' ? r.version : `${r.group}/${r.version}`
  const pkg = packageOf(r.group, r.version)
  for (const kind of [r.kind, `${r.kind}List`]) {
    const fq = `${pkg}.${kind}`
    if (!lookup(fq)) { problems.push(`no message ${fq} for ${apiVersion} ${kind}`); continue }
    kinds[`${apiVersion}/${kind}`] = fq
    roots.push(fq)
  }
}
for (const [apiVersion, kind, fq] of EXTRA_ROOTS) {
  if (!lookup(fq)) { problems.push(`no message ${fq}`); continue }
  if (apiVersion) kinds[`${apiVersion}/${kind}`] = fq
  roots.push(fq)
}

const factsOf = (fq) => {
  const out = new Map()
  for (const tok of (GO_FACTS[fq] ?? '').split(' ').filter(Boolean)) {
    const m = /^(\w+):([PAI]*)(?:=(.*))?$/.exec(tok)
    if (!m) throw new Error(`GO_FACTS ${fq}: bad entry ${tok}`)
    out.set(m[1], { flags: m[2], json: m[3] })
  }
  return out
}

const messages = {}
const queue = [...roots]
while (queue.length > 0) {
  const fq = queue.pop()
  if (fq in messages) continue
  const pkg = fq.slice(0, fq.lastIndexOf('.'))
  const special = SPECIAL[fq]
  const def = definitions[defNameOf(fq)]
  const props = !special && def?.properties ? def.properties : undefined
  const facts = factsOf(fq)
  const fields = []
  const covered = new Set(['apiVersion', 'kind'])
  for (const f of lookup(fq)) {
    let type = f.type
    let deps
    if (f.label === 'map') {
      const m = /^map<(\w+),(.+)>$/.exec(type)
      const value = m && resolveType(m[2], pkg)
      if (!m || m[1] !== 'string' || !value) { problems.push(`${fq}.${f.name}: unsupported ${type}, left out`); continue }
      type = `map<string,${value}>`
      deps = value
    } else {
      type = resolveType(type, pkg)
      if (!type) { problems.push(`${fq}.${f.name}: unknown type ${f.type}, left out`); continue }
      deps = type
    }
    const fact = facts.get(f.name)
    const flags = fact?.flags ?? ''
    let json = renameKey(fact?.json ?? f.name)
    if (props && !flags.includes('I')) {
      if (!(json in props)) {
        const loose = Object.keys(props).find((p) => p.toLowerCase() === json.toLowerCase())
        if (loose === undefined) problems.push(`${fq}.${f.name}: not in ${defNameOf(fq)} (kept as "${json}")`)
        else json = loose
      }
      covered.add(json)
    }
    if (!SCALARS.has(deps)) queue.push(deps)
    fields.push([f.number, flags.includes('I') ? '' : json, type, f.label, flags])
  }
  if (props) {
    for (const p of Object.keys(props)) if (!covered.has(p) && !fields.some((x) => x[4].includes('I'))) problems.push(`${defNameOf(fq)}.${p}: no protobuf field`)
  }
  fields.sort((a, b) => a[0] - b[0])
  messages[fq] = special ? { special, fields } : { fields }
}

// Inline fields: the schema properties of the embedding message are spread over the embedded ones; check them together.
for (const [fq, m] of Object.entries(messages)) {
  const inl = m.fields.filter((f) => f[4].includes('I'))
  if (inl.length === 0) continue
  const props = definitions[defNameOf(fq)]?.properties
  if (!props) continue
  const names = new Set(['apiVersion', 'kind'])
  const collect = (msg) => { for (const f of messages[msg].fields) { if (f[4].includes('I')) collect(f[2]); else names.add(f[1]) } }
  collect(fq)
  for (const p of Object.keys(props)) if (!names.has(p)) problems.push(`${defNameOf(fq)}.${p}: no protobuf field`)
}

/** One message per line group, one field per line: stable and readable diffs. */
function serialize() {
  const lines = ['{']
  lines.push(` "source": ${JSON.stringify(`${source.source}; apiextensions v1 from kubernetes/apiextensions-apiserver @ 1aa2717a552ee6ca1e2a18f1f8ffccde981db923 (scripts/gen-protobuf.mjs)`)},`)
  const kindKeys = Object.keys(kinds).sort(cmp)
  lines.push(' "kinds": {')
  kindKeys.forEach((k, i) => lines.push(`  ${JSON.stringify(k)}: ${JSON.stringify(kinds[k])}${i < kindKeys.length - 1 ? ',' : ''}`))
  lines.push(' },')
  lines.push(` "anyVersionKinds": ${JSON.stringify(ANY_VERSION_KINDS)},`)
  lines.push(' "messages": {')
  const names = Object.keys(messages).sort(cmp)
  names.forEach((n, i) => {
    const m = messages[n]
    const head = m.special ? `"special": ${JSON.stringify(m.special)}, ` : ''
    lines.push(`  ${JSON.stringify(n)}: {${head}"fields": [`)
    m.fields.forEach((f, j) => lines.push(`   ${JSON.stringify(f)}${j < m.fields.length - 1 ? ',' : ''}`))
    lines.push(`  ]}${i < names.length - 1 ? ',' : ''}`)
  })
  lines.push(' }')
  lines.push('}')
  return lines.join('\n') + '\n'
}

mkdirSync(dirname(outFile), { recursive: true })
writeFileSync(outFile, serialize())
for (const p of problems.sort(cmp)) console.error(`gen-protobuf: ${p}`)
console.log(`gen-protobuf: ${Object.keys(kinds).length} kinds, ${Object.keys(messages).length} messages -> ${outFile}`)
