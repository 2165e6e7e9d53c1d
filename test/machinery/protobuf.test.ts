// The protobuf codec: every served kind round-trips, hand-built upstream bytes decode, and real kubectl 1.32 bodies decode.
import t from 'tap'
import { execFile } from 'node:child_process'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { decodeObject, encodeList, encodeListJson, encodeObject, encodeObjectJson, encodeWatchEvent, JsonListEncoder, jsonPathStats } from '../../src/machinery/codecs/protobuf.js'

type Obj = Record<string, any>

const resources = JSON.parse(readFileSync(new URL('../../src/registry/schemas/resources.json', import.meta.url), 'utf8')) as
  Array<{ group: string; version: string; kind: string; scope: string }>

const T0 = '2025-01-01T00:00:00Z'
const T1 = '2025-01-02T03:04:05Z'

function meta(name: string, namespace?: string, extra: Obj = {}): Obj {
  return {
    name,
    ...(namespace ? { namespace } : {}),
    uid: '6f1c2d3e-4b5a-4c6d-8e7f-901a2b3c4d5e',
    resourceVersion: '12345',
    generation: 3,
    creationTimestamp: T0,
    labels: { app: 'demo', 'app.kubernetes.io/part-of': 'shop' },
    annotations: { 'example.com/note': 'héllo wörld ✓ 🚀', 'example.com/empty': '' },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'demo-5c9d', uid: '0a1b2c3d-0000-4000-8000-00000000abcd', controller: true, blockOwnerDeletion: true }],
    finalizers: ['example.com/cleanup'],
    ...extra,
  }
}

const selector = { matchLabels: { app: 'demo' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['web', 'api'] }] }

function podSpec(): Obj {
  return {
    volumes: [
      { name: 'config', configMap: { name: 'demo-config', items: [{ key: 'app.yaml', path: 'app.yaml', mode: 0 }], defaultMode: 420, optional: false } },
      { name: 'cache', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } },
      { name: 'token', projected: { sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }], defaultMode: 420 } },
    ],
    initContainers: [{ name: 'init', image: 'busybox:1.36', command: ['sh', '-c', 'echo ready'], resources: {} }],
    containers: [{
      name: 'app',
      image: 'registry.example.com/app:1.2.3',
      args: ['--port=8080', '--verbose'],
      workingDir: '/srv',
      ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }, { containerPort: 9090, hostPort: 19090, protocol: 'UDP' }],
      envFrom: [{ configMapRef: { name: 'demo-env' } }, { prefix: 'S_', secretRef: { name: 'demo-secret', optional: true } }],
      env: [
        { name: 'LOG_LEVEL', value: 'info' },
        { name: 'EMPTY' },
        { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
        { name: 'CPU_LIMIT', valueFrom: { resourceFieldRef: { containerName: 'app', resource: 'limits.cpu', divisor: '1m' } } },
        { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'demo-secret', key: 'password' } } },
      ],
      resources: { limits: { cpu: '500m', memory: '256Mi', 'nvidia.com/gpu': '1' }, requests: { cpu: '100m', memory: '128Mi' } },
      volumeMounts: [{ name: 'config', readOnly: true, mountPath: '/etc/app' }, { name: 'cache', mountPath: '/cache', subPath: 'x' }],
      livenessProbe: { httpGet: { path: '/healthz', port: 'http', scheme: 'HTTP', httpHeaders: [{ name: 'X-Probe', value: '1' }] }, initialDelaySeconds: 5, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3, terminationGracePeriodSeconds: 0 },
      readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 5 },
      startupProbe: { exec: { command: ['cat', '/tmp/ready'] }, failureThreshold: 30 },
      lifecycle: { preStop: { sleep: { seconds: 5 } } },
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
      imagePullPolicy: 'IfNotPresent',
      securityContext: { runAsNonRoot: true, runAsUser: 1000, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } },
    }],
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 30,
    activeDeadlineSeconds: 0,
    dnsPolicy: 'ClusterFirst',
    nodeSelector: { 'kubernetes.io/os': 'linux' },
    serviceAccountName: 'demo',
    automountServiceAccountToken: false,
    securityContext: { fsGroup: 2000, runAsGroup: 3000, sysctls: [{ name: 'net.ipv4.ip_unprivileged_port_start', value: '0' }] },
    imagePullSecrets: [{ name: 'regcred' }],
    affinity: {
      nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] }] } },
      podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { labelSelector: selector, topologyKey: 'kubernetes.io/hostname' } }] },
    },
    schedulerName: 'default-scheduler',
    tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }, { operator: 'Exists' }],
    hostAliases: [{ ip: '10.0.0.1', hostnames: ['db.local'] }],
    priorityClassName: 'high',
    priority: 0,
    enableServiceLinks: false,
    preemptionPolicy: 'PreemptLowerPriority',
    topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: selector }],
  }
}

function podTemplate(): Obj {
  return { metadata: { labels: { app: 'demo' }, annotations: { 'example.com/rev': '7' } }, spec: podSpec() }
}

const crdSchema: Obj = {
  type: 'object',
  description: 'A widget.',
  required: ['spec'],
  properties: {
    apiVersion: { type: 'string' },
    spec: {
      type: 'object',
      required: ['size'],
      properties: {
        size: { type: 'integer', format: 'int32', minimum: 0, maximum: 100.5, exclusiveMaximum: true, default: 3, multipleOf: 1 },
        name: { type: 'string', minLength: 1, maxLength: 63, pattern: '^[a-z]+$', enum: ['small', 'large', null], nullable: true },
        port: { 'x-orch-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
        tags: { type: 'array', items: { type: 'string' }, maxItems: 10, minItems: 0, uniqueItems: true, 'x-orch-list-type': 'set' },
        tuple: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }] },
        labels: { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 20, 'x-orch-map-type': 'granular' },
        closed: { type: 'object', additionalProperties: false, dependencies: { a: ['b', 'c'], d: { required: ['e'] } } },
        open: { type: 'object', 'x-orch-preserve-unknown-fields': true, example: { any: ['thing', 1, true] } },
        embedded: { type: 'object', 'x-orch-embedded-resource': true, 'x-orch-preserve-unknown-fields': false },
        items: {
          type: 'array',
          'x-orch-list-type': 'map',
          'x-orch-list-map-keys': ['name'],
          items: { type: 'object', properties: { name: { type: 'string' } }, not: { required: ['forbidden'] }, oneOf: [{ required: ['name'] }], allOf: [{ type: 'object' }] },
        },
      },
      'x-orch-validations': [
        { rule: 'self.size <= 100', message: 'too big' },
        { rule: 'self.name != "x"', messageExpression: '"bad name " + self.name', reason: 'FieldValueInvalid', fieldPath: '.name', optionalOldSelf: true },
      ],
    },
    status: { type: 'object', 'x-orch-preserve-unknown-fields': true, externalDocs: { description: 'docs', url: 'https://example.com' } },
  },
}

const samples: Record<string, Obj> = {
  'v1/ConfigMap': {
    apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('demo-config', 'default'),
    data: { 'app.yaml': 'port: 8080\nname: démo\n', empty: '' },
    binaryData: { 'blob.bin': 'AAEC/w==', 'empty.bin': '' },
    immutable: false,
  },
  'v1/Endpoints': {
    apiVersion: 'v1', kind: 'Endpoints', metadata: meta('demo', 'default'),
    subsets: [{
      addresses: [{ ip: '10.244.0.5', nodeName: 'node-1', targetRef: { kind: 'Pod', namespace: 'default', name: 'demo-1', uid: 'u1' } }],
      notReadyAddresses: [{ ip: '10.244.0.6', hostname: 'demo-2' }],
      ports: [{ name: 'http', port: 8080, protocol: 'TCP', appProtocol: 'http' }],
    }],
  },
  'v1/Event': {
    apiVersion: 'v1', kind: 'Event', metadata: meta('demo.17f2', 'default'),
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'demo-1', uid: 'u1', apiVersion: 'v1', resourceVersion: '99', fieldPath: 'spec.containers{app}' },
    reason: 'BackOff', message: 'Back-off restarting failed container', source: { component: 'kubelet', host: 'node-1' },
    firstTimestamp: T0, lastTimestamp: T1, count: 12, type: 'Warning', eventTime: '2025-01-01T00:00:00.123456Z',
    series: { count: 3, lastObservedTime: '2025-01-02T03:04:05.000007Z' }, action: 'Pulling',
    reportingComponent: 'kubelet', reportingInstance: 'node-1',
  },
  'v1/LimitRange': {
    apiVersion: 'v1', kind: 'LimitRange', metadata: meta('limits', 'default'),
    spec: { limits: [{ type: 'Container', max: { cpu: '2', memory: '1Gi' }, min: { cpu: '10m' }, default: { cpu: '500m' }, defaultRequest: { cpu: '100m' }, maxLimitRequestRatio: { cpu: '10' } }] },
  },
  'v1/Namespace': {
    apiVersion: 'v1', kind: 'Namespace', metadata: meta('team-a', undefined, { deletionTimestamp: T1, deletionGracePeriodSeconds: 0 }),
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Terminating', conditions: [{ type: 'NamespaceDeletionContentFailure', status: 'False', lastTransitionTime: T1, reason: 'ContentDeleted', message: 'All content successfully deleted' }] },
  },
  'v1/Node': {
    apiVersion: 'v1', kind: 'Node', metadata: meta('node-1'),
    spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24', 'fd00::/64'], providerID: 'aws:///eu-west-1a/i-0abc', unschedulable: true, taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', timeAdded: T1 }] },
    status: {
      capacity: { cpu: '8', memory: '32Gi', pods: '110', 'ephemeral-storage': '100Gi', 'hugepages-2Mi': '0' },
      allocatable: { cpu: '7800m', memory: '31Gi', pods: '110' },
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: T1, lastTransitionTime: T0, reason: 'KubeletReady', message: 'kubelet is posting ready status' }],
      addresses: [{ type: 'InternalIP', address: '10.0.0.12' }, { type: 'Hostname', address: 'node-1' }],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: 'm', systemUUID: 's', bootID: 'b', kernelVersion: '6.1.0', osImage: 'Debian GNU/Linux 12', containerRuntimeVersion: 'containerd://1.7.0',
        kubeletVersion: 'v1.32.0', kubeProxyVersion: '', operatingSystem: 'linux', architecture: 'amd64',
      },
      images: [{ names: ['registry.example.com/app@sha256:abc', 'registry.example.com/app:1.2.3'], sizeBytes: 123456789012 }],
      volumesInUse: ['kubernetes.io/csi/ebs^vol-1'],
      volumesAttached: [{ name: 'kubernetes.io/csi/ebs^vol-1', devicePath: '' }],
    },
  },
  'v1/PersistentVolumeClaim': {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: meta('data', 'default'),
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' }, limits: { storage: '20Gi' } }, storageClassName: '', volumeMode: 'Filesystem', selector, dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'snap' } },
    status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '10Gi' }, conditions: [{ type: 'Resizing', status: 'True', lastProbeTime: T1 }] },
  },
  'v1/PersistentVolume': {
    apiVersion: 'v1', kind: 'PersistentVolume', metadata: meta('pv-1'),
    spec: {
      capacity: { storage: '10Gi' },
      csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-1', fsType: 'ext4', volumeAttributes: { type: 'gp3' }, nodeStageSecretRef: { name: 's', namespace: 'kube-system' } },
      accessModes: ['ReadWriteOnce'],
      claimRef: { kind: 'PersistentVolumeClaim', namespace: 'default', name: 'data', uid: 'u2' },
      persistentVolumeReclaimPolicy: 'Delete', storageClassName: 'gp3', mountOptions: ['noatime'], volumeMode: 'Block',
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['eu-west-1a'] }] }] } },
    },
    status: { phase: 'Bound', lastPhaseTransitionTime: T1 },
  },
  'v1/Pod': {
    apiVersion: 'v1', kind: 'Pod',
    metadata: meta('demo-5c9d-abcde', 'default', {
      generateName: 'demo-5c9d-',
      managedFields: [{ manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'v1', time: T0, fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } } },
        { manager: 'kubelet', operation: 'Update', apiVersion: 'v1', time: T1, fieldsType: 'FieldsV1', fieldsV1: { 'f:status': {} }, subresource: 'status' }],
    }),
    spec: { ...podSpec(), nodeName: 'node-1', hostname: 'demo', subdomain: 'demo-svc' },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: T1 }, { type: 'PodScheduled', status: 'True', lastProbeTime: T0, lastTransitionTime: T0 }],
      hostIP: '10.0.0.12', hostIPs: [{ ip: '10.0.0.12' }], podIP: '10.244.1.7', podIPs: [{ ip: '10.244.1.7' }, { ip: 'fd00::7' }],
      startTime: T0,
      containerStatuses: [{
        name: 'app', state: { running: { startedAt: T1 } }, lastState: { terminated: { exitCode: 0, reason: 'Completed', startedAt: T0, finishedAt: T1, containerID: 'containerd://old' } },
        ready: false, restartCount: 0, image: 'registry.example.com/app:1.2.3', imageID: 'registry.example.com/app@sha256:0123', containerID: 'containerd://0123', started: false,
        allocatedResources: { cpu: '100m' },
      }],
      initContainerStatuses: [{ name: 'init', state: { terminated: { exitCode: 137, signal: 9, reason: 'OOMKilled', startedAt: T0, finishedAt: T0 } }, ready: true, restartCount: 2, image: 'busybox:1.36', imageID: 'docker.io/library/busybox@sha256:1' }],
      qosClass: 'Burstable',
    },
  },
  'v1/PodTemplate': { apiVersion: 'v1', kind: 'PodTemplate', metadata: meta('tmpl', 'default'), template: podTemplate() },
  'v1/ReplicationController': {
    apiVersion: 'v1', kind: 'ReplicationController', metadata: meta('rc', 'default'),
    spec: { replicas: 0, minReadySeconds: 10, selector: { app: 'demo' }, template: podTemplate() },
    status: { replicas: 0, fullyLabeledReplicas: 1, readyReplicas: 1, availableReplicas: 1, observedGeneration: 3, conditions: [{ type: 'ReplicaFailure', status: 'True', lastTransitionTime: T0, reason: 'FailedCreate', message: 'quota' }] },
  },
  'v1/ResourceQuota': {
    apiVersion: 'v1', kind: 'ResourceQuota', metadata: meta('quota', 'default'),
    spec: { hard: { pods: '10', 'requests.cpu': '4', 'limits.memory': '8Gi' }, scopes: ['NotTerminating'], scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] } },
    status: { hard: { pods: '10' }, used: { pods: '3' } },
  },
  'v1/Secret': {
    apiVersion: 'v1', kind: 'Secret', metadata: meta('demo-secret', 'default'),
    data: { password: 'czNjcjN0', 'tls.key': 'AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJiouMjY6PkJGSk5SVlpeYmZqbnJ2en6ChoqOkpaanqKmqq6ytrq+wsbKztLW2t7i5uru8vb6/wMHCw8TFxsfIycrLzM3Oz9DR0tPU1dbX2Nna29zd3t/g4eLj5OXm5+jp6uvs7e7v8PHy8/T19vf4+fr7/P3+/w==', empty: '' },
    stringData: { note: 'plain' },
    type: 'Opaque',
    immutable: true,
  },
  'v1/ServiceAccount': {
    apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta('demo', 'default'),
    secrets: [{ name: 'demo-token' }], imagePullSecrets: [{ name: 'regcred' }], automountServiceAccountToken: false,
  },
  'v1/Service': {
    apiVersion: 'v1', kind: 'Service', metadata: meta('demo', 'default'),
    spec: {
      ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 'http', nodePort: 30080 }, { name: 'metrics', protocol: 'TCP', port: 9090, targetPort: 9090, appProtocol: 'http' }],
      selector: { app: 'demo' }, clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'], type: 'LoadBalancer', sessionAffinity: 'ClientIP',
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } }, externalTrafficPolicy: 'Local', healthCheckNodePort: 32000,
      ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', allocateLoadBalancerNodePorts: false, internalTrafficPolicy: 'Cluster',
    },
    status: { loadBalancer: { ingress: [{ ip: '203.0.113.10', ipMode: 'VIP', ports: [{ port: 80, protocol: 'TCP' }] }] }, conditions: [{ type: 'Ready', status: 'True', observedGeneration: 3, lastTransitionTime: T0, reason: 'Ok', message: 'ok' }] },
  },
  'admissionregistration.orch.io/v1/MutatingWebhookConfiguration': {
    apiVersion: 'admissionregistration.orch.io/v1', kind: 'MutatingWebhookConfiguration', metadata: meta('inject'),
    webhooks: [{
      name: 'inject.example.com',
      clientConfig: { service: { namespace: 'system', name: 'webhook', path: '/mutate', port: 8443 }, caBundle: 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t' },
      rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }],
      failurePolicy: 'Fail', matchPolicy: 'Equivalent', namespaceSelector: selector, objectSelector: {}, sideEffects: 'None', timeoutSeconds: 5,
      admissionReviewVersions: ['v1'], reinvocationPolicy: 'IfNeeded', matchConditions: [{ name: 'not-system', expression: "!request.userInfo.username.startsWith('system:')" }],
    }],
  },
  'admissionregistration.orch.io/v1/ValidatingAdmissionPolicy': {
    apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: meta('replicas-limit'),
    spec: {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'], resourceNames: ['a'] }], excludeResourceRules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/status'] }], matchPolicy: 'Exact' },
      validations: [{ expression: 'object.spec.replicas <= 5', message: 'too many', reason: 'Invalid', messageExpression: "'replicas: ' + string(object.spec.replicas)" }],
      failurePolicy: 'Fail',
      auditAnnotations: [{ key: 'replicas', valueExpression: 'string(object.spec.replicas)' }],
      matchConditions: [{ name: 'm', expression: 'true' }],
      variables: [{ name: 'r', expression: 'object.spec.replicas' }],
    },
    status: { observedGeneration: 3, typeChecking: { expressionWarnings: [{ fieldRef: 'spec.validations[0].expression', warning: 'w' }] }, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: T0, reason: 'Ok', message: '' }] },
  },
  'admissionregistration.orch.io/v1/ValidatingAdmissionPolicyBinding': {
    apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: meta('replicas-limit-binding'),
    spec: { policyName: 'replicas-limit', paramRef: { name: 'limits', namespace: 'default', parameterNotFoundAction: 'Deny' }, matchResources: { namespaceSelector: selector }, validationActions: ['Deny', 'Audit'] },
  },
  'admissionregistration.orch.io/v1/ValidatingWebhookConfiguration': {
    apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: meta('validate'),
    webhooks: [{ name: 'validate.example.com', clientConfig: { url: 'https://hooks.example.com/validate' }, rules: [{ operations: ['DELETE'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }], failurePolicy: 'Ignore', sideEffects: 'NoneOnDryRun', timeoutSeconds: 30, admissionReviewVersions: ['v1', 'v1beta1'] }],
  },
  'apiextensions.orch.io/v1/CustomResourceDefinition': {
    apiVersion: 'apiextensions.orch.io/v1', kind: 'CustomResourceDefinition', metadata: meta('widgets.example.com'),
    spec: {
      group: 'example.com',
      names: { plural: 'widgets', singular: 'widget', shortNames: ['wd'], kind: 'Widget', listKind: 'WidgetList', categories: ['all'] },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: crdSchema },
          subresources: { status: {}, scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.size', labelSelectorPath: '.status.selector' } },
          additionalPrinterColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }, { name: 'Age', type: 'date', format: 'date', description: 'age', jsonPath: '.metadata.creationTimestamp', priority: 1 }],
          selectableFields: [{ jsonPath: '.spec.name' }],
        },
        { name: 'v1beta1', served: false, storage: false, deprecated: true, deprecationWarning: 'use v1', schema: { openAPIV3Schema: { type: 'object', 'x-orch-preserve-unknown-fields': true } } },
      ],
      conversion: { strategy: 'Webhook', webhook: { clientConfig: { service: { namespace: 'system', name: 'conv', path: '/convert', port: 443 }, caBundle: 'AAEC' }, conversionReviewVersions: ['v1'] } },
      preserveUnknownFields: true,
    },
    status: {
      conditions: [{ type: 'Established', status: 'True', lastTransitionTime: T0, reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }],
      acceptedNames: { plural: 'widgets', kind: 'Widget' },
      storedVersions: ['v1'],
    },
  },
  'apps/v1/ControllerRevision': {
    apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: meta('demo-7d9f', 'default'),
    data: { spec: { template: { metadata: { labels: { app: 'demo' } }, spec: { containers: [{ name: 'app', image: 'x' }] } } }, $patch: 'replace', n: 1.5, ok: false, none: null },
    revision: 0,
  },
  'apps/v1/DaemonSet': {
    apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: meta('agent', 'kube-system'),
    spec: { selector, template: podTemplate(), updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '10%', maxSurge: 0 } }, minReadySeconds: 5, revisionHistoryLimit: 10 },
    status: { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 3, numberReady: 2, observedGeneration: 3, updatedNumberScheduled: 1, numberAvailable: 2, numberUnavailable: 1, collisionCount: 0, conditions: [{ type: 'Progressing', status: 'True', lastTransitionTime: T0 }] },
  },
  'apps/v1/Deployment': {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta('demo', 'default'),
    spec: {
      replicas: 0, selector, template: podTemplate(),
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: 1 } },
      minReadySeconds: 5, revisionHistoryLimit: 0, paused: true, progressDeadlineSeconds: 600,
    },
    status: {
      observedGeneration: 3, replicas: 2, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1, unavailableReplicas: 1, terminatingReplicas: 0, collisionCount: 0,
      conditions: [{ type: 'Available', status: 'False', lastUpdateTime: T1, lastTransitionTime: T0, reason: 'MinimumReplicasUnavailable', message: 'Deployment does not have minimum availability.' }],
    },
  },
  'apps/v1/ReplicaSet': {
    apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: meta('demo-5c9d', 'default'),
    spec: { replicas: 3, minReadySeconds: 5, selector, template: podTemplate() },
    status: { replicas: 0, fullyLabeledReplicas: 3, readyReplicas: 3, availableReplicas: 3, observedGeneration: 3 },
  },
  'apps/v1/StatefulSet': {
    apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: meta('db', 'default'),
    spec: {
      replicas: 3, selector, template: podTemplate(), serviceName: 'db',
      volumeClaimTemplates: [{ metadata: { name: 'data', labels: { app: 'db' } }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      podManagementPolicy: 'Parallel', updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0, maxUnavailable: 1 } },
      revisionHistoryLimit: 10, minReadySeconds: 30, persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' }, ordinals: { start: 0 },
    },
    status: { observedGeneration: 3, replicas: 3, readyReplicas: 3, currentReplicas: 3, updatedReplicas: 3, currentRevision: 'db-1', updateRevision: 'db-1', collisionCount: 0, availableReplicas: 3 },
  },
  'autoscaling/v1/HorizontalPodAutoscaler': {
    apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { ...meta('demo', 'default'), annotations: { 'autoscaling.alpha.orch.io/metrics': '[{"type":"Pods","pods":{"metricName":"rps","targetAverageValue":"100"}}]' } },
    spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'demo' }, minReplicas: 1, maxReplicas: 10, targetCPUUtilizationPercentage: 0 },
    status: { observedGeneration: 3, lastScaleTime: T1, currentReplicas: 0, desiredReplicas: 0, currentCPUUtilizationPercentage: 75 },
  },
  'autoscaling/v2/HorizontalPodAutoscaler': {
    apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: meta('demo', 'default'),
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'demo' }, minReplicas: 1, maxReplicas: 10,
      metrics: [
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 0 } } },
        { type: 'Pods', pods: { metric: { name: 'rps', selector }, target: { type: 'AverageValue', averageValue: '100' } } },
        { type: 'External', external: { metric: { name: 'queue' }, target: { type: 'Value', value: '30' } } },
      ],
      behavior: { scaleDown: { stabilizationWindowSeconds: 300, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 10, periodSeconds: 60 }] }, scaleUp: { stabilizationWindowSeconds: 0 } },
    },
    status: {
      observedGeneration: 3, lastScaleTime: T1, currentReplicas: 2, desiredReplicas: 0,
      currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageValue: '150m', averageUtilization: 75 } } }],
      conditions: [{ type: 'AbleToScale', status: 'True', lastTransitionTime: T0, reason: 'ReadyForNewScale', message: 'ok' }],
    },
  },
  'batch/v1/CronJob': {
    apiVersion: 'batch/v1', kind: 'CronJob', metadata: meta('nightly', 'default'),
    spec: {
      schedule: '0 3 * * *', timeZone: 'Europe/Paris', startingDeadlineSeconds: 120, concurrencyPolicy: 'Forbid', suspend: false,
      jobTemplate: { metadata: { labels: { job: 'nightly' } }, spec: { backoffLimit: 0, template: { spec: { containers: [{ name: 'job', image: 'busybox', command: ['true'] }], restartPolicy: 'OnFailure' } } } },
      successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1,
    },
    status: { active: [{ kind: 'Job', namespace: 'default', name: 'nightly-1', uid: 'u3', apiVersion: 'batch/v1', resourceVersion: '5' }], lastScheduleTime: T0, lastSuccessfulTime: T1 },
  },
  'batch/v1/Job': {
    apiVersion: 'batch/v1', kind: 'Job', metadata: meta('migrate', 'default'),
    spec: {
      parallelism: 2, completions: 4, activeDeadlineSeconds: 600, backoffLimit: 6, selector, manualSelector: true,
      template: { ...podTemplate(), spec: { ...podSpec(), restartPolicy: 'Never' } },
      ttlSecondsAfterFinished: 0, completionMode: 'Indexed', suspend: false, backoffLimitPerIndex: 1, maxFailedIndexes: 2, podReplacementPolicy: 'Failed', managedBy: 'kubernetes.io/job-controller',
      podFailurePolicy: { rules: [{ action: 'FailJob', onExitCodes: { containerName: 'app', operator: 'In', values: [42, 0, -1] } }, { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }] },
      successPolicy: { rules: [{ succeededIndexes: '0-2', succeededCount: 1 }] },
    },
    status: {
      conditions: [{ type: 'Complete', status: 'True', lastProbeTime: T1, lastTransitionTime: T1 }],
      startTime: T0, completionTime: T1, active: 1, succeeded: 4, failed: 1, completedIndexes: '0-3', failedIndexes: '', ready: 0, terminating: 0,
      uncountedTerminatedPods: { succeeded: ['u4'], failed: ['u5'] },
    },
  },
  'certificates.orch.io/v1/CertificateSigningRequest': {
    apiVersion: 'certificates.orch.io/v1', kind: 'CertificateSigningRequest', metadata: meta('csr-1'),
    spec: {
      request: 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K', signerName: 'kubernetes.io/kube-apiserver-client', expirationSeconds: 86400,
      usages: ['client auth', 'digital signature'], username: 'alice', uid: 'u5', groups: ['system:authenticated'], extra: { scopes: ['a', 'b'], none: [] },
    },
    status: { conditions: [{ type: 'Approved', status: 'True', reason: 'AutoApproved', message: 'ok', lastUpdateTime: T0, lastTransitionTime: T0 }], certificate: 'AAEC' },
  },
  'coordination.orch.io/v1/Lease': {
    apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: meta('kube-scheduler', 'kube-system'),
    spec: { holderIdentity: 'node-1_abc', leaseDurationSeconds: 15, acquireTime: '2025-01-01T00:00:00.000000Z', renewTime: '2025-01-02T03:04:05.123456Z', leaseTransitions: 0, strategy: 'OldestEmulationVersion', preferredHolder: '' },
  },
  'discovery.orch.io/v1/EndpointSlice': {
    apiVersion: 'discovery.orch.io/v1', kind: 'EndpointSlice', metadata: meta('demo-abc', 'default'),
    addressType: 'IPv4',
    endpoints: [{
      addresses: ['10.244.1.7'], conditions: { ready: false, serving: true, terminating: false }, hostname: 'demo-1', nodeName: 'node-1', zone: 'a',
      targetRef: { kind: 'Pod', namespace: 'default', name: 'demo-1', uid: 'u1' }, hints: { forZones: [{ name: 'a' }], forNodes: [{ name: 'node-1' }] },
    }],
    ports: [{ name: '', port: 0, protocol: 'TCP', appProtocol: 'http' }],
  },
  'events.orch.io/v1/Event': {
    apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: meta('demo.17f3', 'default'),
    eventTime: '2025-01-01T00:00:00.000001Z', series: { count: 0, lastObservedTime: '2025-01-02T03:04:05.999999Z' },
    reportingController: 'example.com/controller', reportingInstance: 'controller-0', action: 'Reconcile', reason: 'Synced',
    regarding: { kind: 'Deployment', namespace: 'default', name: 'demo', apiVersion: 'apps/v1' }, related: { kind: 'Pod', name: 'demo-1' },
    note: 'synced ✓', type: 'Normal', deprecatedSource: { component: 'c' }, deprecatedFirstTimestamp: T0, deprecatedLastTimestamp: T1, deprecatedCount: 2,
  },
  'flowcontrol.apiserver.orch.io/v1/FlowSchema': {
    apiVersion: 'flowcontrol.apiserver.orch.io/v1', kind: 'FlowSchema', metadata: meta('workload'),
    spec: {
      priorityLevelConfiguration: { name: 'workload-low' }, matchingPrecedence: 0, distinguisherMethod: { type: 'ByUser' },
      rules: [{
        subjects: [{ kind: 'ServiceAccount', serviceAccount: { namespace: '*', name: '*' } }, { kind: 'Group', group: { name: 'system:authenticated' } }, { kind: 'User', user: { name: 'alice' } }],
        resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
        nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/livez'] }],
      }],
    },
    status: { conditions: [{ type: 'Dangling', status: 'False', lastTransitionTime: T0, reason: 'Found', message: 'ok' }] },
  },
  'flowcontrol.apiserver.orch.io/v1/PriorityLevelConfiguration': {
    apiVersion: 'flowcontrol.apiserver.orch.io/v1', kind: 'PriorityLevelConfiguration', metadata: meta('workload-low'),
    spec: { type: 'Limited', limited: { nominalConcurrencyShares: 0, lendablePercent: 90, borrowingLimitPercent: 0, limitResponse: { type: 'Queue', queuing: { queues: 128, handSize: 6, queueLengthLimit: 50 } } } },
    status: { conditions: [{ type: 'ConcurrencyShared', status: 'True', lastTransitionTime: T0 }] },
  },
  'networking.orch.io/v1/IngressClass': {
    apiVersion: 'networking.orch.io/v1', kind: 'IngressClass', metadata: meta('nginx', undefined, { annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } }),
    spec: { controller: 'k8s.io/ingress-nginx', parameters: { apiGroup: 'k8s.example.com', kind: 'IngressParameters', name: 'p', scope: 'Namespace', namespace: 'ingress' } },
  },
  'networking.orch.io/v1/Ingress': {
    apiVersion: 'networking.orch.io/v1', kind: 'Ingress', metadata: meta('web', 'default'),
    spec: {
      ingressClassName: 'nginx',
      defaultBackend: { resource: { apiGroup: 'k8s.example.com', kind: 'StorageBucket', name: 'static' } },
      tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }],
      rules: [{ host: 'shop.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }, { path: '/api', pathType: 'Exact', backend: { service: { name: 'api', port: { name: 'http' } } } }] } }, { http: {} }],
    },
    status: { loadBalancer: { ingress: [{ ip: '203.0.113.10', hostname: 'lb.example.com', ports: [{ port: 443, protocol: 'TCP', error: 'x' }] }] } },
  },
  'networking.orch.io/v1/NetworkPolicy': {
    apiVersion: 'networking.orch.io/v1', kind: 'NetworkPolicy', metadata: meta('deny-all', 'default'),
    spec: {
      podSelector: {},
      ingress: [{ from: [{ podSelector: selector, namespaceSelector: { matchLabels: { team: 'a' } } }, { ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } }], ports: [{ protocol: 'TCP', port: 8080, endPort: 8090 }, { port: 'http' }] }],
      egress: [{ to: [{ ipBlock: { cidr: '0.0.0.0/0' } }], ports: [{ protocol: 'UDP', port: 53 }] }],
      policyTypes: ['Ingress', 'Egress'],
    },
  },
  'node.orch.io/v1/RuntimeClass': {
    apiVersion: 'node.orch.io/v1', kind: 'RuntimeClass', metadata: meta('gvisor'),
    handler: 'runsc', overhead: { podFixed: { cpu: '250m', memory: '120Mi' } },
    scheduling: { nodeSelector: { 'runtime/gvisor': 'true' }, tolerations: [{ key: 'runtime', operator: 'Equal', value: 'gvisor', effect: 'NoSchedule' }] },
  },
  'policy/v1/PodDisruptionBudget': {
    apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: meta('demo', 'default'),
    spec: { minAvailable: '50%', selector, unhealthyPodEvictionPolicy: 'AlwaysAllow' },
    status: {
      observedGeneration: 3, disruptedPods: { 'demo-1': T1 }, disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2, expectedPods: 3,
      conditions: [{ type: 'DisruptionAllowed', status: 'False', observedGeneration: 3, lastTransitionTime: T0, reason: 'InsufficientPods', message: '' }],
    },
  },
  'rbac.authorization.orch.io/v1/ClusterRoleBinding': {
    apiVersion: 'rbac.authorization.orch.io/v1', kind: 'ClusterRoleBinding', metadata: meta('admins'),
    subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'admins' }, { kind: 'ServiceAccount', name: 'ci', namespace: 'ci' }],
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
  },
  'rbac.authorization.orch.io/v1/ClusterRole': {
    apiVersion: 'rbac.authorization.orch.io/v1', kind: 'ClusterRole', metadata: meta('monitoring'),
    rules: [{ verbs: ['get', 'list', 'watch'], apiGroups: ['', 'apps'], resources: ['pods', 'deployments/scale'], resourceNames: ['a'] }, { verbs: ['get'], nonResourceURLs: ['/metrics'] }],
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'rbac.example.com/aggregate-to-monitoring': 'true' } }] },
  },
  'rbac.authorization.orch.io/v1/RoleBinding': {
    apiVersion: 'rbac.authorization.orch.io/v1', kind: 'RoleBinding', metadata: meta('read', 'default'),
    subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }],
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read' },
  },
  'rbac.authorization.orch.io/v1/Role': {
    apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', metadata: meta('read', 'default'),
    rules: [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'] }],
  },
  'scheduling.orch.io/v1/PriorityClass': {
    apiVersion: 'scheduling.orch.io/v1', kind: 'PriorityClass', metadata: meta('low'),
    value: -10, globalDefault: true, description: 'best effort', preemptionPolicy: 'Never',
  },
  'storage.orch.io/v1/CSIDriver': {
    apiVersion: 'storage.orch.io/v1', kind: 'CSIDriver', metadata: meta('ebs.csi.aws.com'),
    spec: {
      attachRequired: false, podInfoOnMount: true, volumeLifecycleModes: ['Persistent', 'Ephemeral'], storageCapacity: false, fsGroupPolicy: 'File',
      tokenRequests: [{ audience: 'sts.amazonaws.com', expirationSeconds: 3600 }, { audience: '' }], requiresRepublish: false, seLinuxMount: true, nodeAllocatableUpdatePeriodSeconds: 60,
    },
  },
  'storage.orch.io/v1/CSINode': {
    apiVersion: 'storage.orch.io/v1', kind: 'CSINode', metadata: meta('node-1'),
    spec: { drivers: [{ name: 'ebs.csi.aws.com', nodeID: 'i-0abc', topologyKeys: ['topology.ebs.csi.aws.com/zone'], allocatable: { count: 0 } }] },
  },
  'storage.orch.io/v1/CSIStorageCapacity': {
    apiVersion: 'storage.orch.io/v1', kind: 'CSIStorageCapacity', metadata: meta('cap-1', 'kube-system'),
    nodeTopology: selector, storageClassName: 'gp3', capacity: '1Ti', maximumVolumeSize: '16Ti',
  },
  'storage.orch.io/v1/StorageClass': {
    apiVersion: 'storage.orch.io/v1', kind: 'StorageClass', metadata: meta('gp3'),
    provisioner: 'ebs.csi.aws.com', parameters: { type: 'gp3', iops: '3000' }, reclaimPolicy: 'Retain', mountOptions: ['debug'],
    allowVolumeExpansion: false, volumeBindingMode: 'WaitForFirstConsumer',
    allowedTopologies: [{ matchLabelExpressions: [{ key: 'topology.ebs.csi.aws.com/zone', values: ['eu-west-1a'] }] }],
  },
  'storage.orch.io/v1/VolumeAttachment': {
    apiVersion: 'storage.orch.io/v1', kind: 'VolumeAttachment', metadata: meta('csi-123'),
    spec: { attacher: 'ebs.csi.aws.com', nodeName: 'node-1', source: { persistentVolumeName: 'pv-1', inlineVolumeSpec: { csi: { driver: 'd', volumeHandle: 'h' }, accessModes: ['ReadWriteOnce'] } } },
    status: { attached: false, attachmentMetadata: { devicePath: '/dev/xvdba' }, attachError: { time: T0, message: 'timeout', errorCode: 0 }, detachError: { time: T1, message: 'busy' } },
  },
}

const apiVersionOf = (r: { group: string; version: string }): string => (r.group === '' ? r.version : `${r.group}/${r.version}`)

t.test('every served kind has a sample and round-trips', async (t) => {
  for (const r of resources) {
    const key = `${apiVersionOf(r)}/${r.kind}`
    const sample = samples[key]
    if (!sample) { t.fail(`no sample for ${key}`); continue }
    t.equal(sample.apiVersion, apiVersionOf(r), `${key}: apiVersion`)
    const body = encodeObject(sample)
    t.same([...body.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00], `${key}: magic`)
    t.strictSame(decodeObject(body), sample, `${key}: encode -> decode gives the object back`)
    t.strictSame(decodeObject(body, { apiVersion: sample.apiVersion, kind: r.kind }), sample, `${key}: with the expected kind`)
    // The list of it, as our JSON lists carry it (items with apiVersion and kind).
    const list = { apiVersion: sample.apiVersion, kind: `${r.kind}List`, metadata: { resourceVersion: '12346', continue: 'eyJ2IjoxfQ', remainingItemCount: 0 }, items: [sample, sample] }
    t.strictSame(decodeObject(encodeObject(list)), list, `${key}: its list round-trips`)
  }
  t.equal(Object.keys(samples).length, resources.length, 'no sample for a kind that is not served')
})

// ---- lists from stored JSON text (the JSON path) ----

/** A list body from items' JSON text, and whether every item took the JSON path (not the parse fallback). */
function fromJson(apiVersion: string, kind: string, meta: Obj, texts: string[]): { body: Buffer; fast: boolean } {
  const before = jsonPathStats.parsed
  const body = encodeListJson(apiVersion, kind, meta, texts.map((s) => Buffer.from(s)))
  return { body, fast: jsonPathStats.parsed === before }
}

/** encodeListJson must write what encodeObject writes for the parsed list. */
type Equal = import('tap').Test

function sameAsParsed(t: Equal, apiVersion: string, kind: string, texts: string[], fast: boolean | undefined, what: string): void {
  const meta = { resourceVersion: '9', continue: 'c', remainingItemCount: 2 }
  const expected = encodeObject({ apiVersion, kind, metadata: meta, items: texts.map((s) => JSON.parse(s)) })
  const got = fromJson(apiVersion, kind, meta, texts)
  t.equal(got.body.toString('hex'), expected.toString('hex'), `${what}: same bytes as from the parsed items`)
  if (fast !== undefined) t.equal(got.fast, fast, `${what}: ${fast ? 'JSON path' : 'parsed'}`)
  // One object (GET, watch events): the same bytes as encodeObject of the parsed object (which gives the type here).
  for (const x of texts) {
    let parsed: unknown
    try { parsed = JSON.parse(x) } catch { continue }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed) || x.trim() === '{}') continue
    // The item with its type first, as stored objects have it (the item's own apiVersion and kind follow).
    const typed = `{"apiVersion":${JSON.stringify(apiVersion)},"kind":${JSON.stringify(kind.slice(0, -'List'.length))},${x.trimStart().slice(1)}`
    let want: string
    try { want = encodeObject(JSON.parse(typed)).toString('hex') } catch (e) { want = String(e) }
    let gotOne: string
    try { gotOne = encodeObjectJson(Buffer.from(typed)).toString('hex') } catch (e) { gotOne = String(e) }
    t.equal(gotOne, want, `${what}: one object`)
  }
}

t.test('lists from stored JSON: every served kind, the same bytes as from parsed objects, on the JSON path', async (t) => {
  for (const r of resources) {
    const key = `${apiVersionOf(r)}/${r.kind}`
    const sample = samples[key]
    if (!sample) continue
    const managed = { ...sample, metadata: { ...sample.metadata, managedFields: [{ manager: 'kubectl', operation: 'Apply', apiVersion: sample.apiVersion, time: T1, fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'k:{"name":"x"}': { '.': {}, 'f:n': {} } } } }] } }
    sameAsParsed(t, sample.apiVersion, `${r.kind}List`, [JSON.stringify(sample), JSON.stringify(managed)], true, key)
    const before = jsonPathStats.parsed
    t.equal(encodeObjectJson(JSON.stringify(managed)).toString('hex'), encodeObject(managed).toString('hex'), `${key}: one object`)
    t.equal(jsonPathStats.parsed, before, `${key}: one object on the JSON path`)
  }
  // Objects whose apiVersion and kind do not come first, or are missing: parsed, with encodeObject's errors.
  const cm = { metadata: { name: 'x' }, apiVersion: 'v1', kind: 'ConfigMap', data: { a: 'b' } }
  t.equal(encodeObjectJson(JSON.stringify(cm)).toString('hex'), encodeObject(cm).toString('hex'), 'type after other members')
  t.throws(() => encodeObjectJson('{"metadata":{}}'), /no apiVersion or kind/)
  t.throws(() => encodeObjectJson('{"apiVersion":"v1","kind":"Nope"}'), /no protobuf message for v1 Nope/)
  t.throws(() => encodeObjectJson('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":2}}'), /ObjectMeta\.name: expected a string/)
})

t.test('lists from stored JSON: values the JSON path hands to the parser, or handles by the rules of encMessage', async (t) => {
  const cm = (extra: Obj, meta: Obj = {}): Obj => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns', ...meta }, ...extra })
  const list = (texts: string[], fast: boolean | undefined, what: string) => sameAsParsed(t, 'v1', 'ConfigMapList', texts, fast, what)
  // Strings: escapes, non-ASCII, lone surrogates (U+FFFD on the wire), long values, empty values.
  list([JSON.stringify(cm({ data: { q: 'a "quoted" \\ back\nslash\ttab\u0001', u: 'héllo ✓ 🚀', lone: '\ud800x\udc00', long: 'é'.repeat(300), e: '' } }))], true, 'escapes and UTF-8')
  list([JSON.stringify(cm({}, { labels: { 'z': '1', 'a': '2', 'é': '3', '10': 'x', '9': 'y', '🚀': 'r', '\uffff': 'f' } }))], true, 'map keys sorted as strings (integer-like keys included)')
  list([JSON.stringify(cm({}, { annotations: { '__proto__': 'p', ok: 'k' } }))], true, '__proto__ map key')
  list(['{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"x":null,"y":"1"}}}'], true, 'a null map value: the key alone')
  list(['{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","finalizers":["a",null,"b"]}}'], true, 'null in a repeated string field')
  list(['{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","generation":null,"labels":null},"data":null}'], true, 'null fields are left out')
  // Keys: escaped keys, duplicate keys, unknown fields of any shape.
  list(['{"apiVersion":"v1","kind":"ConfigMap","metadata":{"n\\u0061me":"a"}}'], false, 'escaped key: parsed')
  list(['{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","name":"b"}}'], false, 'duplicate field: parsed (the last value wins)')
  list(['{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"x":"1","x":"2"}}}'], false, 'duplicate map key: parsed')
  list(['{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","unknown":{"deep":[1,2.5e-3,{"x":[true,false,null]}],"s":"\\u00e9"}},"extra":[]}'], true, 'unknown fields skipped')
  // Numbers: forms JSON.parse reads as integers, and Quantity/IntOrString from numbers.
  const pod = (spec: string) => `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","generation":1.0e1,"deletionGracePeriodSeconds":-0},"spec":${spec}}`
  sameAsParsed(t, 'v1', 'PodList', [pod('{"containers":[{"name":"c","resources":{"limits":{"cpu":2,"memory":"1Gi"}},"ports":[{"containerPort":80.0}],"livenessProbe":{"httpGet":{"port":8080},"periodSeconds":-3,"terminationGracePeriodSeconds":9007199254740993}}],"priority":-2147483648}')], true, 'integers written as decimals, negatives, quantities and IntOrString from numbers')
  sameAsParsed(t, 'v1', 'PodList', [pod('{"containers":[{"name":"c","livenessProbe":{"httpGet":{"port":"http"},"exec":{"command":["a"]}},"readinessProbe":{}}],"volumes":[{"name":"v","configMap":{"name":"c","items":[{"key":"k","path":"p"}]},"secret":{"secretName":"s"}}]}')], true, 'inlined structs (Probe, Volume) in field order')
  sameAsParsed(t, 'v1', 'PodList', [pod('{"volumes":[{"name":"v","name":"w"}]}')], false, 'duplicate key in a message with inlined structs: parsed')
  // Raw JSON values (FieldsV1, RawExtension): copied when canonical, else JSON.stringify(JSON.parse()).
  const mf = (fields: string) => `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","managedFields":[{"manager":"m","fieldsType":"FieldsV1","fieldsV1":${fields},"time":"2025-01-01T00:00:00Z"}]}}`
  list([mf('{"f:data":{".":{},"f:a":{}},"k:{\\"port\\":80}":{}}')], true, 'canonical FieldsV1 copied')
  list([mf('{"f:data":{"\\u0041":{},"\\/":{},"é":{}},"x":[1.50,1E2,-0,10000000000000000000000]}')], true, 'non-canonical FieldsV1 re-stringified')
  list([mf('{"2":{},"1":{},"f:a":{}}')], true, 'integer-like keys in FieldsV1 (reordered by JSON.parse)')
  list([mf('[]'), mf('"text"'), mf('7')], true, 'FieldsV1 of other JSON types')
  // Times: MicroTime with fractions and offsets.
  sameAsParsed(t, 'events.orch.io/v1', 'EventList', [JSON.stringify({ apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { name: 'e', namespace: 'ns', creationTimestamp: '2025-01-01T01:02:03+02:00' }, eventTime: '2025-01-01T00:00:00.123456Z', series: { count: 2, lastObservedTime: '2025-01-01T00:00:01.5+01:00' }, reportingController: 'x', reportingInstance: 'y', action: 'a', reason: 'r' })], true, 'Time and MicroTime forms')
  // Not the JSON path: whitespace, non-objects; their errors are encMessage's.
  list(['{ "apiVersion": "v1", "kind": "ConfigMap", "metadata": { "name": "a" } }'], false, 'whitespace: parsed')
  t.throws(() => encodeListJson('v1', 'ConfigMapList', {}, [Buffer.from('{"metadata":{"name":1}}')]), /ObjectMeta\.name: expected a string/, 'a wrong type fails as encMessage fails')
  t.throws(() => encodeListJson('v1', 'ConfigMapList', {}, [Buffer.from('[1]')]), /expected an object/)
  t.throws(() => encodeListJson('v1', 'ConfigMapList', {}, [Buffer.from('{"metadata":{"name":"a"}')]), SyntaxError, 'malformed JSON fails as JSON.parse fails')
  t.throws(() => encodeListJson('v1', 'ConfigMapList', {}, [Buffer.from('{"metadata":{"name":"a"}} x')]), SyntaxError)
  t.throws(() => encodeListJson('v1', 'ConfigMap', {}, []), /not a list/)
  // After a failed item the writer is usable again.
  list([JSON.stringify(cm({ data: { a: 'b' } }))], true, 'after errors')
})

t.test('lists from stored JSON in slices: other encodes may run in between', async (t) => {
  const texts = Array.from({ length: 50 }, (_, i) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'ns' }, data: { v: 'x'.repeat(i * 10) } }))
  const meta = { resourceVersion: '5' }
  const whole = encodeListJson('v1', 'ConfigMapList', meta, texts)
  const enc = new JsonListEncoder('v1', 'ConfigMapList', meta)
  for (let i = 0; i < texts.length; i += 7) {
    enc.add(texts, i, Math.min(texts.length, i + 7))
    encodeObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'between' }, data: { k: 'AAAA' } })
    encodeListJson('v1', 'PodList', {}, ['{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}'])
  }
  t.equal(enc.finish().toString('hex'), whole.toString('hex'))
  t.strictSame(decodeObject(whole), { apiVersion: 'v1', kind: 'ConfigMapList', metadata: meta, items: texts.map((s) => JSON.parse(s)) })
})

// ---- hand-built upstream bytes ----

function varint(v: number): number[] {
  const out: number[] = []
  while (v > 127) { out.push((v & 127) | 128); v = Math.floor(v / 128) }
  out.push(v)
  return out
}
const tag = (no: number, wire: number): number[] => varint(no * 8 + wire)
const bytes = (no: number, content: number[]): number[] => [...tag(no, 2), ...varint(content.length), ...content]
const str = (no: number, s: string): number[] => bytes(no, [...Buffer.from(s, 'utf8')])
const int = (no: number, v: number): number[] => [...tag(no, 0), ...varint(v)]
const envelope = (apiVersion: string, kind: string, raw: number[]): Buffer =>
  Buffer.from([0x6b, 0x38, 0x73, 0x00, ...bytes(1, [...str(1, apiVersion), ...str(2, kind)]), ...bytes(2, raw), ...str(3, ''), ...str(4, '')])

t.test('a ConfigMap as upstream (gogo) writes it decodes by the upstream field numbers', async (t) => {
  // ObjectMeta: name 1, generateName 2, namespace 3, selfLink 4, uid 5, resourceVersion 6, generation 7,
  // creationTimestamp 8 (Time: seconds 1), labels 11, annotations 12 (map entries: key 1, value 2), finalizers 14.
  // ConfigMap: metadata 1, data 2, binaryData 3, immutable 4. gogo writes every non-pointer field, empty or not.
  const metadata = [
    ...str(1, 'golden'), ...str(2, ''), ...str(3, 'ns'), ...str(4, ''), ...str(5, 'uid-1'), ...str(6, '42'), ...int(7, 0),
    ...bytes(8, int(1, 1735689600)),
    ...bytes(11, [...str(1, 'a'), ...str(2, '1')]), ...bytes(11, [...str(1, 'b'), ...str(2, '')]),
    ...bytes(12, [...str(1, 'note'), ...str(2, 'é')]),
    ...str(14, 'f1'),
  ]
  const raw = [
    ...bytes(1, metadata),
    ...bytes(2, [...str(1, 'k'), ...str(2, 'v')]), ...bytes(2, [...str(1, 'j'), ...str(2, 'w')]),
    ...bytes(3, [...str(1, 'bin'), ...bytes(2, [0, 1, 2, 255])]),
    ...int(4, 1),
  ]
  const expected = {
    apiVersion: 'v1', kind: 'ConfigMap',
    metadata: { name: 'golden', namespace: 'ns', uid: 'uid-1', resourceVersion: '42', creationTimestamp: '2025-01-01T00:00:00Z', labels: { a: '1', b: '' }, annotations: { note: 'é' }, finalizers: ['f1'] },
    data: { k: 'v', j: 'w' },
    binaryData: { bin: 'AAEC/w==' },
    immutable: true,
  }
  t.strictSame(decodeObject(envelope('v1', 'ConfigMap', raw)), expected)

  // Our encoding of the same object, fields in key order (here: number order) and nothing empty written.
  const ours = [
    ...bytes(1, [...str(1, 'golden'), ...str(3, 'ns'), ...str(5, 'uid-1'), ...str(6, '42'), ...bytes(8, int(1, 1735689600)),
      ...bytes(11, [...str(1, 'a'), ...str(2, '1')]), ...bytes(11, [...str(1, 'b'), ...str(2, '')]), ...bytes(12, [...str(1, 'note'), ...str(2, 'é')]), ...str(14, 'f1')]),
    ...bytes(2, [...str(1, 'j'), ...str(2, 'w')]), ...bytes(2, [...str(1, 'k'), ...str(2, 'v')]), // map entries sorted by key
    ...bytes(3, [...str(1, 'bin'), ...bytes(2, [0, 1, 2, 255])]),
    ...int(4, 1),
  ]
  const want = Buffer.from([0x6b, 0x38, 0x73, 0x00, ...bytes(1, [...str(1, 'v1'), ...str(2, 'ConfigMap')]), ...bytes(2, ours)])
  t.same(encodeObject(expected).toString('hex'), want.toString('hex'), 'byte-exact encoding')
})

t.test('shared shapes: Time, MicroTime, Quantity, IntOrString, pointers, negatives', async (t) => {
  // Deployment: spec 2 { replicas 1 (pointer), strategy 4 { rollingUpdate 2 { maxUnavailable 1, maxSurge 2 } } }
  const intOrStr = (v: number | string): number[] => (typeof v === 'number' ? [...int(1, 0), ...int(2, v), ...str(3, '')] : [...int(1, 1), ...int(2, 0), ...str(3, v)])
  const raw = [
    ...bytes(1, [...str(1, 'd'), ...bytes(8, [])]), // empty Time: no creationTimestamp
    ...bytes(2, [...int(1, 0), ...int(7, 0), ...bytes(4, [...str(1, 'RollingUpdate'), ...bytes(2, [...bytes(1, intOrStr('25%')), ...bytes(2, intOrStr(0))])])]),
  ]
  t.strictSame(decodeObject(envelope('apps/v1', 'Deployment', raw)), {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' },
    spec: { replicas: 0, strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: 0 } } },
  }, 'pointer zero kept, omitempty zero (paused=false) dropped, IntOrString both ways')

  // Lease (coordination.k8s.io on the wire): spec 2 { holderIdentity 1, acquireTime 3 (MicroTime: seconds 1, nanos 2) }
  const lease = [...bytes(2, [...str(1, 'me'), ...bytes(3, [...int(1, 1735689600), ...int(2, 123456789)])])]
  t.strictSame(decodeObject(envelope('coordination.k8s.io/v1', 'Lease', lease)), {
    apiVersion: 'coordination.orch.io/v1', kind: 'Lease', spec: { holderIdentity: 'me', acquireTime: '2025-01-01T00:00:00.123456Z' },
  }, 'MicroTime keeps microseconds; the upstream group name maps to ours')

  // PriorityClass value -10 is a ten-byte varint.
  const pc = [...bytes(1, str(1, 'p')), ...tag(2, 0), 0xf6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
  t.strictSame(decodeObject(envelope('scheduling.k8s.io/v1', 'PriorityClass', pc)), { apiVersion: 'scheduling.orch.io/v1', kind: 'PriorityClass', metadata: { name: 'p' }, value: -10 })
  t.same([...encodeObject({ apiVersion: 'scheduling.orch.io/v1', kind: 'PriorityClass', value: -10 }).subarray(-11)], [0x10, 0xf6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])

  // Node capacity: map<string, Quantity{string 1}>; status 3 { capacity 1 }
  const node = [...bytes(3, [...bytes(1, [...str(1, 'cpu'), ...bytes(2, str(1, '4'))]), ...bytes(1, [...str(1, 'memory'), ...bytes(2, str(1, '16Gi'))])])]
  t.strictSame(decodeObject(envelope('v1', 'Node', node)), { apiVersion: 'v1', kind: 'Node', status: { capacity: { cpu: '4', memory: '16Gi' } } })

  // Times before 1970 and far ahead.
  for (const ts of ['1969-12-31T23:59:59Z', '0001-01-01T00:00:00Z', '2999-12-31T23:59:59Z', '2024-02-29T12:00:00Z']) {
    const o = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', creationTimestamp: ts } }
    t.strictSame(decodeObject(encodeObject(o)), o, ts)
  }
  const offset = decodeObject(encodeObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { creationTimestamp: '2025-01-01T02:00:00.9+02:00' } }))
  t.equal(offset.metadata.creationTimestamp, '2025-01-01T00:00:00Z', 'offsets normalised to UTC, fractions dropped (Time is whole seconds)')
})

t.test('envelope, typeMeta and errors', async (t) => {
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { a: 'b' } }
  const body = encodeObject(cm)
  t.same([...body.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00])
  t.throws(() => decodeObject(body.subarray(4)), /magic/)
  t.throws(() => decodeObject(Buffer.from('{"kind":"ConfigMap"}')), /magic/)
  t.throws(() => decodeObject(body.subarray(0, body.length - 3)), /malformed/, 'truncated')
  t.throws(() => decodeObject(Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x12, 0x02, 0x0a, 0x00]), undefined), /no protobuf message/, 'no typeMeta, no expected kind')
  t.strictSame(decodeObject(Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x12, 0x02, 0x0a, 0x00]), { apiVersion: 'v1', kind: 'ConfigMap' }), { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} }, 'typeMeta from the expected kind')
  t.throws(() => decodeObject(body, { apiVersion: 'v1', kind: 'Secret' }), /expected a Secret/)
  t.throws(() => decodeObject(encodeObject({ ...cm, apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role' }), { apiVersion: 'rbac.authorization.orch.io/v2', kind: 'Role' }), /expected rbac/)
  t.throws(() => encodeObject({ apiVersion: 'example.com/v1', kind: 'Widget' }), /no protobuf message for example.com\/v1 Widget/)
  t.throws(() => encodeObject({ kind: 'ConfigMap' }), /no apiVersion/)
  t.throws(() => encodeObject({ ...cm, data: { a: 1 } }), /ConfigMap.data: expected a string/)
  t.throws(() => encodeObject({ apiVersion: 'apps/v1', kind: 'Deployment', spec: { replicas: '3' } }), /replicas: expected an integer/)
  t.throws(() => encodeObject({ ...cm, metadata: { creationTimestamp: 'yesterday' } }), /RFC 3339/)
  // A wrong wire type for a known field.
  t.throws(() => decodeObject(envelope('v1', 'ConfigMap', int(1, 5))), /wire type 0, expected 2/)
  // Unknown fields are skipped, as upstream does.
  t.strictSame(decodeObject(envelope('v1', 'ConfigMap', [...str(99, 'future'), ...int(98, 7), ...bytes(2, [...str(1, 'a'), ...str(2, 'b')])])), { apiVersion: 'v1', kind: 'ConfigMap', data: { a: 'b' } })
  t.throws(() => decodeObject(Buffer.from([0x6b, 0x38, 0x73, 0x00, ...bytes(1, [...str(1, 'v1'), ...str(2, 'ConfigMap')]), ...str(3, 'gzip'), ...bytes(2, [])])), /content encoding/)
})

t.test('upstream-spelled apiVersions are read as ours and written as given', async (t) => {
  const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'r', namespace: 'default' }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }] }
  const body = encodeObject(role)
  t.ok(body.includes(Buffer.from('rbac.authorization.k8s.io/v1')), 'the envelope carries the apiVersion the object has')
  t.strictSame(decodeObject(body), { ...role, apiVersion: 'rbac.authorization.orch.io/v1' })
  t.strictSame(decodeObject(body, { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role' }).apiVersion, 'rbac.authorization.orch.io/v1')
  const ssr = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', status: { userInfo: { username: 'alice', uid: 'u', groups: ['g'], extra: { scopes: ['a'] } } } }
  t.strictSame(decodeObject(encodeObject(ssr)), { ...ssr, apiVersion: 'authentication.orch.io/v1' })
  const sar = {
    apiVersion: 'authorization.orch.io/v1', kind: 'SelfSubjectAccessReview',
    spec: { resourceAttributes: { namespace: 'default', verb: 'get', resource: 'pods', fieldSelector: { rawSelector: 'a=b' } } },
    status: { allowed: false, reason: 'no' },
  }
  t.strictSame(decodeObject(encodeObject(sar)), sar, 'allowed: false is kept (no omitempty upstream)')
  const tr = { apiVersion: 'authentication.orch.io/v1', kind: 'TokenRequest', metadata: { name: 'default', namespace: 'default' }, spec: { audiences: ['api'], expirationSeconds: 3600, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p', uid: 'u' } }, status: { token: 'x.y.z', expirationTimestamp: T1 } }
  t.strictSame(decodeObject(encodeObject(tr)), tr)
  const scale = { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'demo', namespace: 'default' }, spec: { replicas: 3 }, status: { replicas: 0, selector: 'app=demo' } }
  t.strictSame(decodeObject(encodeObject(scale)), scale)
})

t.test('List and Status', async (t) => {
  const list = {
    apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '77' },
    items: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns' }, data: { x: '1' } }, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b', namespace: 'ns' } }],
  }
  const body = encodeObject(list)
  t.ok(body.includes(Buffer.from('ConfigMapList')))
  t.strictSame(decodeObject(body), list)
  t.strictSame(decodeObject(encodeObject({ apiVersion: 'v1', kind: 'PodList', metadata: {}, items: [] })), { apiVersion: 'v1', kind: 'PodList', metadata: {}, items: [] }, 'an empty list keeps items: []')
  const stored = list.items.map((i) => JSON.stringify(i))
  function* parsed(): Generator<Obj> { for (const s of stored) yield JSON.parse(s) }
  t.equal(encodeList('v1', 'ConfigMapList', list.metadata, parsed()).toString('hex'), body.toString('hex'), 'encodeList writes the same bytes item by item')
  t.throws(() => encodeList('v1', 'ConfigMap', {}, []), /not a list/)

  const status = {
    apiVersion: 'v1', kind: 'Status', metadata: {}, status: 'Failure', message: 'configmaps "x" not found', reason: 'NotFound',
    details: { name: 'x', kind: 'configmaps', causes: [{ reason: 'FieldValueInvalid', message: 'bad', field: 'data' }], retryAfterSeconds: 1 }, code: 404,
  }
  const sb = encodeObject(status)
  // Status: metadata 1, status 2, message 3, reason 4, details 5, code 6
  t.ok(sb.includes(Buffer.from([0x30, 0x94, 0x03])), 'code 404 as field 6')
  t.strictSame(decodeObject(sb), status)
  t.strictSame(decodeObject(encodeObject({ ...status, apiVersion: 'meta.k8s.io/v1' })).kind, 'Status', 'Status under any apiVersion')
  const del = { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, propagationPolicy: 'Foreground', preconditions: { uid: 'u', resourceVersion: '1' }, dryRun: ['All'] }
  t.strictSame(decodeObject(encodeObject(del)), del)
})

t.test('watch frames', async (t) => {
  const obj = encodeObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } })
  const frame = encodeWatchEvent('ADDED', obj)
  t.equal(frame.readUInt32BE(0), frame.length - 4, 'big-endian length prefix')
  // WatchEvent: type 1, object 2 (RawExtension: raw 1)
  t.same([...frame.subarray(4, 11)], [0x0a, 0x05, ...Buffer.from('ADDED')])
  const rawExt = [0x0a, ...varint(obj.length), ...obj]
  t.same(frame.subarray(11).toString('hex'), Buffer.from([0x12, ...varint(rawExt.length), ...rawExt]).toString('hex'))
  const big = encodeObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { a: 'x'.repeat(300000) } })
  const bigFrame = encodeWatchEvent('MODIFIED', big)
  t.equal(bigFrame.readUInt32BE(0), bigFrame.length - 4)
  t.equal(decodeObject(bigFrame.subarray(bigFrame.length - big.length)).data.a.length, 300000)
})

t.test('large values: lengths of several bytes', async (t) => {
  const o = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'n'.repeat(200), annotations: { a: 'é'.repeat(70000) } }, data: { big: 'z'.repeat(3_000_000) } }
  t.strictSame(decodeObject(encodeObject(o)), o)
})

// ---- real kubectl bodies ----

interface Recorded { method: string; url: string; contentType: string | undefined; body: Buffer }

const discovery: Record<string, unknown> = {
  '/version': { major: '1', minor: '32', gitVersion: 'v1.32.0', platform: 'linux/amd64' },
  '/api': { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1' }] },
  '/apis': {
    kind: 'APIGroupList', apiVersion: 'v1',
    groups: [{ name: 'rbac.authorization.k8s.io', versions: [{ groupVersion: 'rbac.authorization.k8s.io/v1', version: 'v1' }], preferredVersion: { groupVersion: 'rbac.authorization.k8s.io/v1', version: 'v1' } }],
  },
  '/api/v1': {
    kind: 'APIResourceList', groupVersion: 'v1',
    resources: [
      { name: 'configmaps', singularName: 'configmap', namespaced: true, kind: 'ConfigMap', verbs: ['create', 'get', 'list'] },
      { name: 'pods', singularName: 'pod', namespaced: true, kind: 'Pod', verbs: ['create', 'get', 'list'] },
      { name: 'secrets', singularName: 'secret', namespaced: true, kind: 'Secret', verbs: ['create', 'get', 'list'] },
    ],
  },
  '/apis/rbac.authorization.k8s.io/v1': {
    kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'rbac.authorization.k8s.io/v1',
    resources: [{ name: 'roles', singularName: 'role', namespaced: true, kind: 'Role', verbs: ['create', 'get', 'list'] }],
  },
}

async function kubectlBody(args: string[], answerWith?: Obj): Promise<{ run: { code: number; stdout: string; stderr: string }; posts: Recorded[] }> {
  const posts: Recorded[] = []
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0]
      if (req.method === 'GET' && path in discovery) {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify(discovery[path]))
        return
      }
      if (req.method === 'POST') {
        const body = Buffer.concat(chunks)
        posts.push({ method: req.method, url: req.url ?? '', contentType: req.headers['content-type'], body })
        if (answerWith) {
          // Our protobuf encoding, for kubectl's (Go's) decoder to read.
          res.writeHead(201, { 'content-type': 'application/vnd.kubernetes.protobuf' })
          res.end(encodeObject(answerWith))
          return
        }
        // Answer the object back (JSON is fine for a protobuf-preferring client), in the upstream group spelling.
        let answer: Obj
        try {
          const o = decodeObject(body)
          answer = { ...o, apiVersion: o.apiVersion.replace('.orch.io/', '.k8s.io/'), metadata: { ...o.metadata, namespace: 'default', uid: 'u', resourceVersion: '1', creationTimestamp: T0 } }
        } catch (err) {
          res.writeHead(415, { 'content-type': 'application/json' })
          res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Status', status: 'Failure', message: String(err), reason: 'UnsupportedMediaType', code: 415 }))
          return
        }
        res.writeHead(201, { 'content-type': 'application/json' })
        res.end(JSON.stringify(answer))
        return
      }
      res.writeHead(404, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404 }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  const home = mkdtempSync(join(tmpdir(), 'orch-pb-kubectl-'))
  try {
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile('kubectl', ['--server', `http://127.0.0.1:${port}`, '--insecure-skip-tls-verify', ...args], {
        env: { ...process.env, HOME: home, KUBECONFIG: '' }, timeout: 60_000, maxBuffer: 16 << 20,
      }, (err, stdout, stderr) => resolve({ code: err ? (typeof (err as any).code === 'number' ? (err as any).code : -1) : 0, stdout: String(stdout), stderr: String(stderr) }))
    })
    return { run, posts }
  } finally {
    server.close()
    rmSync(home, { recursive: true, force: true })
  }
}

const haveKubectl = await new Promise<boolean>((resolve) => execFile('kubectl', ['version', '--client'], (err) => resolve(!err)))

t.test('kubectl create sends protobuf bodies that decode', { skip: haveKubectl ? false : 'kubectl not installed' }, async (t) => {
  const cases: Array<{ args: string[]; path: string; want: Obj }> = [
    {
      args: ['create', 'configmap', 'x', '--from-literal=a=b'],
      path: '/api/v1/namespaces/default/configmaps',
      want: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { a: 'b' } },
    },
    {
      args: ['create', 'secret', 'generic', 's', '--from-literal=a=b'],
      path: '/api/v1/namespaces/default/secrets',
      want: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { a: 'Yg==' } },
    },
    {
      args: ['create', 'role', 'r', '--verb=get', '--resource=pods'],
      path: '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles',
      want: { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', metadata: { name: 'r' }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }] },
    },
  ]
  for (const c of cases) {
    const { run, posts } = await kubectlBody(c.args)
    t.equal(run.code, 0, `kubectl ${c.args.join(' ')} succeeds: ${run.stderr}`)
    t.equal(posts.length, 1, 'one POST')
    const post = posts[0]
    if (!post) continue
    t.equal(post.url.split('?')[0], c.path)
    t.equal(post.contentType, 'application/vnd.kubernetes.protobuf')
    t.same([...post.body.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00], 'envelope magic')
    // Without --namespace, kubectl leaves metadata.namespace empty (gogo writes it as ""): the URL carries it.
    t.strictSame(decodeObject(post.body), c.want, `decoded body of kubectl ${c.args.slice(0, 2).join(' ')}`)
    t.strictSame(decodeObject(post.body, { apiVersion: c.want.apiVersion, kind: c.want.kind }), c.want)
  }
})

/** Every leaf of `want` is in `got` with the same value (Go's JSON adds empty structs and nulls of its own). */
function missingFrom(want: unknown, got: unknown, path = ''): string[] {
  if (Array.isArray(want)) {
    if (!Array.isArray(got) || got.length !== want.length) return [`${path}: ${JSON.stringify(got)} is not an array of ${want.length}`]
    return want.flatMap((w, i) => missingFrom(w, got[i], `${path}[${i}]`))
  }
  if (want !== null && typeof want === 'object') {
    if (got === null || typeof got !== 'object') return [`${path}: ${JSON.stringify(got)} is not an object`]
    return Object.entries(want).flatMap(([k, w]) => missingFrom(w, (got as Obj)[k], `${path}.${k}`))
  }
  return want === got ? [] : [`${path}: want ${JSON.stringify(want)}, got ${JSON.stringify(got)}`]
}

const toUpstream = (o: Obj): Obj => ({ ...o, apiVersion: (o.apiVersion as string).replace('.orch.io/', '.k8s.io/') })

t.test('kubectl (Go) reads our protobuf encoding of the samples', { skip: haveKubectl ? false : 'kubectl not installed' }, async (t) => {
  // Typed create commands decode the server's answer with client-go's protobuf decoder and print it with -o json.
  const cases: Array<[string, string[]]> = [
    ['v1/ConfigMap', ['create', 'configmap', 'x']],
    ['v1/Secret', ['create', 'secret', 'generic', 's']],
    ['v1/Namespace', ['create', 'namespace', 'n']],
    ['v1/ServiceAccount', ['create', 'serviceaccount', 'sa']],
    ['v1/Service', ['create', 'service', 'clusterip', 'svc', '--tcp=80:8080']],
    ['v1/ResourceQuota', ['create', 'quota', 'q', '--hard=pods=1']],
    ['apps/v1/Deployment', ['create', 'deployment', 'd', '--image=nginx']],
    ['batch/v1/Job', ['create', 'job', 'j', '--image=busybox']],
    ['batch/v1/CronJob', ['create', 'cronjob', 'c', '--image=busybox', '--schedule=* * * * *']],
    ['policy/v1/PodDisruptionBudget', ['create', 'pdb', 'p', '--selector=app=x', '--min-available=1']],
    ['scheduling.orch.io/v1/PriorityClass', ['create', 'priorityclass', 'pc', '--value=10']],
    ['networking.orch.io/v1/Ingress', ['create', 'ingress', 'i', '--rule=foo.com/bar=svc:80']],
    ['rbac.authorization.orch.io/v1/ClusterRoleBinding', ['create', 'clusterrolebinding', 'crb', '--clusterrole=x', '--user=u']],
    ['rbac.authorization.orch.io/v1/RoleBinding', ['create', 'rolebinding', 'rb', '--role=x', '--user=u']],
  ]
  // Fields newer than kubectl 1.32's types: client-go skips them as unknown protobuf fields.
  const newerThanKubectl: Record<string, string[]> = { 'apps/v1/Deployment': ['status.terminatingReplicas'] }
  for (const [key, args] of cases) {
    const sample = toUpstream(samples[key])
    const { run } = await kubectlBody([...args, '-o', 'json'], sample)
    t.equal(run.code, 0, `kubectl ${args.slice(0, 2).join(' ')}: ${run.stderr}`)
    if (run.code !== 0) continue
    const want = structuredClone(sample)
    for (const path of newerThanKubectl[key] ?? []) {
      const parts = path.split('.')
      delete parts.slice(0, -1).reduce((o: Obj, k) => o[k], want)[parts[parts.length - 1]]
    }
    t.strictSame(missingFrom(want, JSON.parse(run.stdout)), [], `${key}: client-go decodes every field we wrote`)
  }
})
