// Black-box: the pod spec checks beyond names and enums (upstream ValidatePodSpec): volume mounts, env and envFrom,
// probes and lifecycle handlers, container ports, pod and container security contexts, affinity, and the pod's own
// fields (hostNetwork ports, nodeSelector, dnsConfig, activeDeadlineSeconds, hostname, subdomain, tolerations,
// priorityClassName), on Pods and on a Deployment's template; and that a pod using all of them is stored and still
// takes status updates.
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'
import { expectRefused, inv, printed, req, forb, dup, notFound, unsupported, type Cause } from '../helpers/refused.js'

type Obj = Record<string, any>
const PODS = '/api/v1/namespaces/default/pods'
const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments'
const MERGE = { 'content-type': 'application/merge-patch+json' }

const LABEL = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
const SUBDOMAIN = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
const NAME_PART = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
const LABEL_VALUE = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
const ENV_NAME = "a valid environment variable name must consist only of printable ASCII characters other than '='"
const CONFIG_KEY = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
const PORT_RANGE = 'must be between 1 and 65535, inclusive'
const ID_RANGE = 'must be between 0 and 2147483647, inclusive'
const ONE_HANDLER = 'may not specify more than 1 handler type'
const INIT_ONLY = 'may not be set for init containers without restartPolicy=Always'
const SYSCTL = 'must have at most 253 characters and match regex ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$'
const UNDERSCORE_SUBDOMAIN = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\\._?[a-z0-9]([-_a-z0-9]*[a-z0-9])?)*')"
const P = 'spec.containers[0]'

let s: TestServer
t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

const pod = (name: string, spec: Obj): Obj => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec })
const app = (extra: Obj = {}): Obj => ({ name: 'app', image: 'nginx:1.27', ...extra })

t.test('volume mounts: a volume of the pod, a unique mount path, relative sub-paths', async (t) => {
  await expectRefused(t, s, PODS, pod('mounts', {
    volumes: [{ name: 'data', emptyDir: {} }, { name: 'Bad', emptyDir: {} }, { name: 'img', image: { reference: 'busybox:1' } }],
    containers: [app({
      volumeMounts: [
        { name: 'data', mountPath: '/data' },
        { name: 'missing', mountPath: '/data' },
        { name: 'Bad', mountPath: '' },
        { name: 'data', mountPath: '/a', subPath: '/abs' },
        { name: 'data', mountPath: '/b', subPath: 'x/../y' },
        { name: 'data', mountPath: '/c', subPath: 'x', subPathExpr: '$(POD)' },
        { name: '', mountPath: '/d' },
        { name: 'data', mountPath: '/e', mountPropagation: 'Bidirectional' },
        { name: 'data', mountPath: '/f', mountPropagation: 'Sideways' },
        { name: 'data', mountPath: '/g', recursiveReadOnly: 'Enabled' },
        { name: 'img', mountPath: '/h', subPath: 'x' },
      ],
    })],
  }), 'Pod', [
    inv('spec.volumes[1].name', 'Bad', LABEL),
    notFound(`${P}.volumeMounts[1].name`, 'missing'),
    inv(`${P}.volumeMounts[1].mountPath`, '/data', 'must be unique'),
    // A volume with errors of its own cannot be mounted either.
    notFound(`${P}.volumeMounts[2].name`, 'Bad'),
    req(`${P}.volumeMounts[2].mountPath`),
    // upstream reports sub-path problems at the list's path, not the mount's.
    inv(`${P}.volumeMounts.subPath`, '/abs', 'must be a relative path'),
    inv(`${P}.volumeMounts.subPath`, 'x/../y', "must not contain '..'"),
    inv(`${P}.volumeMounts[5].subPathExpr`, '$(POD)', 'subPathExpr and subPath are mutually exclusive'),
    req(`${P}.volumeMounts[6].name`),
    notFound(`${P}.volumeMounts[6].name`, ''),
    forb(`${P}.volumeMounts.mountPropagation`, 'Bidirectional mount propagation is available only to privileged containers'),
    unsupported(`${P}.volumeMounts.mountPropagation`, 'Sideways', ['Bidirectional', 'HostToContainer', 'None']),
    forb(`${P}.volumeMounts.recursiveReadOnly`, 'may only be specified when readOnly is true'),
    inv(`${P}.volumeMounts[10].subPath`, 'x', 'not allowed in image volume sources'),
  ])
})

t.test('env: names, one value source, and what each source needs', async (t) => {
  await expectRefused(t, s, PODS, pod('env', {
    containers: [app({
      env: [
        { name: '', value: 'x' },
        { name: 'A=B', value: 'x' },
        { name: 'BOTH', value: 'v', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'NONE', valueFrom: {} },
        { name: 'TWO', valueFrom: { configMapKeyRef: { name: 'cm', key: 'k' }, secretKeyRef: { name: 's', key: 'k' } } },
        { name: 'FR', valueFrom: { fieldRef: { fieldPath: 'spec.restartPolicy' } } },
        { name: 'FR2', valueFrom: { fieldRef: { fieldPath: 'status.bogus' } } },
        { name: 'FR3', valueFrom: { fieldRef: { apiVersion: 'v2', fieldPath: 'metadata.name' } } },
        { name: 'FR4', valueFrom: { fieldRef: { fieldPath: "metadata.labels['Bad Key']" } } },
        { name: 'RF', valueFrom: { resourceFieldRef: { resource: 'limits.gpu' } } },
        { name: 'CM', valueFrom: { configMapKeyRef: { name: '', key: '' } } },
        { name: 'SK', valueFrom: { secretKeyRef: { name: 's', key: 'a/b' } } },
        // The relaxed rule: any printable ASCII but '=' (a digit first, dots and spaces too).
        { name: '1 weird.name', value: 'ok' },
      ],
      envFrom: [
        { prefix: 'P=', configMapRef: { name: 'cm' } },
        { prefix: 'Q_' },
        { configMapRef: { name: 'Bad' }, secretRef: { name: 's' } },
        { secretRef: { name: '' } },
      ],
    })],
  }), 'Pod', [
    req(`${P}.env[0].name`),
    inv(`${P}.env[1].name`, 'A=B', ENV_NAME),
    inv(`${P}.env[2].valueFrom`, '', 'may not be specified when `value` is not empty'),
    inv(`${P}.env[3].valueFrom`, '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'),
    inv(`${P}.env[4].valueFrom`, '', 'may not have more than one field specified at a time'),
    unsupported(`${P}.env[5].valueFrom.fieldRef.fieldPath`, 'spec.restartPolicy', ['metadata.name', 'metadata.namespace', 'metadata.uid', 'spec.nodeName', 'spec.serviceAccountName', 'status.hostIP', 'status.hostIPs', 'status.podIP', 'status.podIPs']),
    inv(`${P}.env[6].valueFrom.fieldRef.fieldPath`, 'status.bogus', 'error converting fieldPath: field label not supported: status.bogus'),
    inv(`${P}.env[7].valueFrom.fieldRef.fieldPath`, 'metadata.name', 'error converting fieldPath: unsupported pod version: v2'),
    inv(`${P}.env[8].valueFrom.fieldRef`, 'Bad Key', NAME_PART),
    unsupported(`${P}.env[9].valueFrom.resourceFieldRef.resource`, 'limits.gpu', ['limits.cpu', 'limits.ephemeral-storage', 'limits.memory', 'requests.cpu', 'requests.ephemeral-storage', 'requests.memory']),
    inv(`${P}.env[10].valueFrom.configMapKeyRef.name`, '', SUBDOMAIN),
    req(`${P}.env[10].valueFrom.configMapKeyRef.key`),
    inv(`${P}.env[11].valueFrom.secretKeyRef.key`, 'a/b', CONFIG_KEY),
    inv(`${P}.envFrom[0].prefix`, 'P=', ENV_NAME),
    // upstream reports the source count at the list, not the entry.
    inv(`${P}.envFrom`, '', 'must specify one of: `configMapRef` or `secretRef`'),
    inv(`${P}.envFrom[2].configMapRef.name`, 'Bad', SUBDOMAIN),
    inv(`${P}.envFrom`, '', 'may not have more than one field specified at a time'),
    req(`${P}.envFrom[3].secretRef.name`),
  ])
})

t.test('probes and lifecycle handlers: one handler, counts not negative, liveness and startup succeed once', async (t) => {
  await expectRefused(t, s, PODS, pod('probes', {
    containers: [
      app({
        livenessProbe: { exec: { command: ['true'] }, httpGet: { port: 'http' }, initialDelaySeconds: -1, successThreshold: 2 },
        readinessProbe: { tcpSocket: { port: 0 }, periodSeconds: -5, terminationGracePeriodSeconds: 10 },
        startupProbe: { failureThreshold: 3 },
        restartPolicy: 'Always',
      }),
      {
        name: 'web', image: 'nginx:1.27',
        livenessProbe: { httpGet: { port: 'web_port', scheme: 'FTP', httpHeaders: [{ name: 'X Bad', value: '1' }] }, terminationGracePeriodSeconds: 0 },
        readinessProbe: { grpc: { port: 70000 } },
        startupProbe: { exec: {} },
        lifecycle: { postStart: {}, preStop: { sleep: { seconds: 60 } } },
      },
    ],
    initContainers: [
      { name: 'init', image: 'busybox:1', livenessProbe: { exec: { command: ['true'] } }, lifecycle: { preStop: { exec: { command: ['true'] } } } },
      { name: 'side', image: 'busybox:1', restartPolicy: 'OnFailure' },
    ],
  }), 'Pod', [
    forb(`${P}.livenessProbe.httpGet`, ONE_HANDLER),
    inv(`${P}.livenessProbe.initialDelaySeconds`, -1, 'must be greater than or equal to 0'),
    inv(`${P}.livenessProbe.successThreshold`, 2, 'must be 1'),
    inv(`${P}.readinessProbe.tcpSocket.port`, 0, PORT_RANGE),
    inv(`${P}.readinessProbe.periodSeconds`, -5, 'must be greater than or equal to 0'),
    inv(`${P}.readinessProbe.terminationGracePeriodSeconds`, 10, 'must not be set for readinessProbes'),
    req(`${P}.startupProbe`, 'must specify a handler type'),
    forb(`${P}.restartPolicy`, 'may not be set for non-init containers'),
    req('spec.containers[1].lifecycle.postStart', 'must specify a handler type'),
    inv('spec.containers[1].lifecycle.preStop.sleep', 60, 'must be non-negative and less than terminationGracePeriodSeconds (30)'),
    inv('spec.containers[1].livenessProbe.httpGet.port', 'web_port', 'must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)'),
    unsupported('spec.containers[1].livenessProbe.httpGet.scheme', 'FTP', ['HTTP', 'HTTPS']),
    inv('spec.containers[1].livenessProbe.httpGet.httpHeaders', 'X Bad', "a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')"),
    inv('spec.containers[1].livenessProbe.terminationGracePeriodSeconds', 0, 'must be greater than 0'),
    inv('spec.containers[1].readinessProbe.grpc.port', 70000, PORT_RANGE),
    req('spec.containers[1].startupProbe.exec.command'),
    forb('spec.initContainers[0].lifecycle', INIT_ONLY),
    forb('spec.initContainers[0].livenessProbe', INIT_ONLY),
    unsupported('spec.initContainers[1].restartPolicy', 'OnFailure', ['Always']),
  ])
})

t.test('container ports: IANA service names, unique, containerPort required, host ports not claimed twice', async (t) => {
  await expectRefused(t, s, PODS, pod('ports', {
    containers: [
      app({
        ports: [
          { name: 'http', containerPort: 80, hostPort: 8080 },
          { name: 'http', containerPort: 81 },
          { name: 'Web_1', containerPort: 82 },
          { name: '1234' },
          { name: 'a-very-long-port-name', containerPort: 83 },
        ],
      }),
      { name: 'other', image: 'nginx:1.27', ports: [{ containerPort: 90, hostPort: 8080 }, { containerPort: 91, hostPort: 8080, protocol: 'UDP' }] },
    ],
  }), 'Pod', [
    dup(`${P}.ports[1].name`, 'http'),
    inv(`${P}.ports[2].name`, 'Web_1', 'must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)'),
    inv(`${P}.ports[3].name`, '1234', 'must contain at least one letter (a-z)'),
    req(`${P}.ports[3].containerPort`),
    inv(`${P}.ports[4].name`, 'a-very-long-port-name', 'must be no more than 15 characters'),
    // Host ports are unique per protocol and host IP across the pod's containers.
    dup('spec.containers[1].ports[0].hostPort', 'TCP//8080'),
  ])
})

t.test('security contexts of the pod and of containers', async (t) => {
  await expectRefused(t, s, PODS, pod('security', {
    securityContext: {
      runAsUser: -1, fsGroup: 2147483648, supplementalGroups: [1, -2],
      sysctls: [{ name: 'net.core.somaxconn', value: '1' }, { name: 'Bad_Name', value: '1' }, { name: 'net.core.somaxconn', value: '2' }, { name: '', value: 'x' }],
      fsGroupChangePolicy: 'Sometimes', seccompProfile: { type: 'Localhost' }, appArmorProfile: { type: 'Bogus' },
    },
    containers: [app({
      securityContext: {
        runAsUser: -5, runAsGroup: 4294967296, procMount: 'Unmasked',
        allowPrivilegeEscalation: false, privileged: true, capabilities: { add: ['CAP_SYS_ADMIN'] },
        seccompProfile: { type: 'RuntimeDefault', localhostProfile: 'x.json' }, appArmorProfile: { type: 'Localhost' },
      },
    }), { name: 'b', image: 'busybox:1', securityContext: { seccompProfile: { type: 'Sometimes' }, appArmorProfile: { type: 'Unconfined', localhostProfile: 'p' } } }],
  }), 'Pod', [
    inv(`${P}.securityContext.runAsUser`, -5, ID_RANGE),
    inv(`${P}.securityContext.runAsGroup`, 4294967296, ID_RANGE),
    inv(`${P}.securityContext.procMount`, 'Unmasked', '`hostUsers` must be false to use `Unmasked`'),
    printed(`${P}.securityContext.seccompProfile.localhostProfile`, 'core.SeccompProfile{Type:"RuntimeDefault", LocalhostProfile:(*string)(0xc000000000)}', 'can only be set when seccomp type is Localhost'),
    printed(`${P}.securityContext`, SC_PRINTED, 'cannot set `allowPrivilegeEscalation` to false and `privileged` to true'),
    printed(`${P}.securityContext`, SC_PRINTED, 'cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN'),
    req(`${P}.securityContext.appArmorProfile.localhostProfile`, 'must be set when AppArmor type is Localhost'),
    unsupported('spec.containers[1].securityContext.seccompProfile.type', 'Sometimes', ['Localhost', 'RuntimeDefault', 'Unconfined']),
    inv('spec.containers[1].securityContext.appArmorProfile.localhostProfile', 'p', 'can only be set when AppArmor type is Localhost'),
    inv('spec.securityContext.fsGroup', 2147483648, ID_RANGE),
    inv('spec.securityContext.runAsUser', -1, ID_RANGE),
    inv('spec.securityContext.supplementalGroups[1]', -2, ID_RANGE),
    inv('spec.securityContext.sysctls[1].name', 'Bad_Name', SYSCTL),
    dup('spec.securityContext.sysctls[2].name', 'net.core.somaxconn'),
    req('spec.securityContext.sysctls[3].name'),
    unsupported('spec.securityContext.fsGroupChangePolicy', 'Sometimes', ['Always', 'OnRootMismatch']),
    req('spec.securityContext.seccompProfile.localhostProfile', 'must be set when seccomp type is Localhost'),
    unsupported('spec.securityContext.appArmorProfile.type', 'Bogus', ['Localhost', 'RuntimeDefault', 'Unconfined']),
  ])
  // Namespaced sysctls of a namespace shared with the host; a host port that is not the container port.
  await expectRefused(t, s, PODS, pod('host-net', {
    hostNetwork: true, hostIPC: true,
    securityContext: { sysctls: [{ name: 'net.ipv4.ip_forward', value: '1' }, { name: 'kernel.shmmax', value: '1' }, { name: 'kernel/sem', value: '1' }] },
    containers: [app({ ports: [{ containerPort: 80, hostPort: 81 }, { containerPort: 90 }] })],
  }), 'Pod', [
    inv('spec.containers[0].ports[0].hostPort', 81, 'must match `containerPort` when `hostNetwork` is true'),
    inv('spec.securityContext.sysctls[0].name', 'net.ipv4.ip_forward', "may not be specified when 'hostNetwork' is true"),
    inv('spec.securityContext.sysctls[1].name', 'kernel.shmmax', "may not be specified when 'hostIPC' is true"),
    inv('spec.securityContext.sysctls[2].name', 'kernel/sem', "may not be specified when 'hostIPC' is true"),
  ])
})

const SC_PRINTED = 'core.SecurityContext{Capabilities:(*core.Capabilities)(0xc000000000), Privileged:(*bool)(0xc000000000), SELinuxOptions:(*core.SELinuxOptions)(nil), WindowsOptions:(*core.WindowsSecurityContextOptions)(nil), RunAsUser:(*int64)(0xc000000000), RunAsGroup:(*int64)(0xc000000000), RunAsNonRoot:(*bool)(nil), ReadOnlyRootFilesystem:(*bool)(nil), AllowPrivilegeEscalation:(*bool)(0xc000000000), ProcMount:(*core.ProcMountType)(0xc000000000), SeccompProfile:(*core.SeccompProfile)(0xc000000000), AppArmorProfile:(*core.AppArmorProfile)(0xc000000000)}'

t.test('affinity: node selector terms, pod affinity terms, weights', async (t) => {
  const NA = 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]'
  await expectRefused(t, s, PODS, pod('affinity', {
    containers: [app()],
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{
            matchExpressions: [
              { key: 'zone', operator: 'In', values: [] },
              { key: 'disk', operator: 'Exists', values: ['ssd'] },
              { key: 'Bad Key', operator: 'Near' },
              { key: 'cpu', operator: 'Gt', values: ['1', '2'] },
              { key: 'tier', operator: 'In', values: ['not valid!'] },
            ],
            matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a', 'b'] }, { key: 'spec.nodeName', operator: 'Exists' }],
          }],
        },
        // A preferred term may hold any label value.
        preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 0, preference: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['not valid!'] }] } }],
      },
      podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'web' } }, namespaces: ['Bad'], topologyKey: '' }] },
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 101, podAffinityTerm: { labelSelector: { matchExpressions: [{ key: 'app', operator: 'In' }] }, topologyKey: 'kubernetes.io/hostname' } }],
      },
    },
  }), 'Pod', [
    req(`${NA}.matchExpressions[0].values`, "must be specified when `operator` is 'In' or 'NotIn'"),
    forb(`${NA}.matchExpressions[1].values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
    inv(`${NA}.matchExpressions[2].operator`, 'Near', 'not a valid selector operator'),
    inv(`${NA}.matchExpressions[2].key`, 'Bad Key', NAME_PART),
    req(`${NA}.matchExpressions[3].values`, "must be specified single value when `operator` is 'Lt' or 'Gt'"),
    inv(`${NA}.matchExpressions[4].values[0]`, 'not valid!', LABEL_VALUE),
    req(`${NA}.matchFields[0].values`, "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"),
    inv(`${NA}.matchFields[1].operator`, 'Exists', 'not a valid selector operator'),
    inv(`${NA}.matchFields[1].key`, 'spec.nodeName', 'not a valid field selector key'),
    inv('spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight', 0, 'must be in the range 1-100'),
    // upstream names a bad entry of `namespaces` by the field `namespace`.
    inv('spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespace', 'Bad', LABEL),
    req('spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey', 'can not be empty'),
    inv('spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey', '', 'name part must be non-empty'),
    inv('spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey', '', NAME_PART),
    inv('spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight', 101, 'must be in the range 1-100'),
    req('spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelector.matchExpressions[0].values', "must be specified when `operator` is 'In' or 'NotIn'"),
  ])
  await expectRefused(t, s, PODS, pod('no-terms', {
    containers: [app()],
    affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } } },
  }), 'Pod', [req('spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms', 'must have at least one node selector term')])
})

t.test('dnsConfig: nameservers with dnsPolicy None, at most 3, readable IPs (leading zeros accepted, as upstream with StrictIPCIDRValidation off); search domains', async (t) => {
  await expectRefused(t, s, PODS, pod('dns-none', { containers: [app()], dnsPolicy: 'None' }), 'Pod', [
    req('spec.dnsConfig', 'must provide `dnsConfig` when `dnsPolicy` is None'),
  ])
  await expectRefused(t, s, PODS, pod('dns-empty', { containers: [app()], dnsPolicy: 'None', dnsConfig: { searches: ['example.com'] } }), 'Pod', [
    req('spec.dnsConfig.nameservers', 'must provide at least one DNS nameserver when `dnsPolicy` is None'),
  ])
  const searches = Array.from({ length: 33 }, (_, i) => `s${i}.example.com`)
  searches[1] = 'Bad_Domain.com.'
  await expectRefused(t, s, PODS, pod('dns-many', {
    containers: [app()],
    dnsConfig: { nameservers: ['1.1.1.1', '8.8.8.8', '9.9.9.9', '010.0.0.1', 'nameserver'], searches, options: [{ name: '' }] },
  }), 'Pod', [
    printed('spec.dnsConfig.nameservers', '[]string{"1.1.1.1", "8.8.8.8", "9.9.9.9", "010.0.0.1", "nameserver"}', 'must not have more than 3 nameservers'),
    // A legacy field: an address with leading zeros is read as Go's ParseIP reads it (StrictIPCIDRValidation is off).
    inv('spec.dnsConfig.nameservers[4]', 'nameserver', 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'),
    printed('spec.dnsConfig.searches', `[]string{${searches.map((x) => JSON.stringify(x)).join(', ')}}`, 'must not have more than 32 search paths'),
    inv('spec.dnsConfig.searches[1]', 'Bad_Domain.com', UNDERSCORE_SUBDOMAIN),
    req('spec.dnsConfig.options[0]', 'must not be empty'),
  ])
})

const deploy = (name: string, spec: Obj): Obj => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
  spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec } },
})

t.test("pod-level fields, in a Deployment's template", async (t) => {
  const T = 'spec.template.spec'
  await expectRefused(t, s, DEPLOYS, deploy('bad-template', {
    hostNetwork: true,
    containers: [app({ ports: [{ containerPort: 80, hostPort: 81 }, { containerPort: 90 }], volumeMounts: [{ name: 'nope', mountPath: '/x' }], env: [{ name: 'A=B' }] })],
    nodeSelector: { 'bad key': 'v', zone: 'not valid!' },
    dnsPolicy: 'None',
    activeDeadlineSeconds: 0,
    hostname: 'Web',
    subdomain: 'my_sub',
    tolerations: [{ key: '', operator: 'Equal', value: 'x' }],
    priorityClassName: 'High_Priority',
  }), 'Deployment.apps', [
    inv(`${T}.containers[0].env[0].name`, 'A=B', ENV_NAME),
    notFound(`${T}.containers[0].volumeMounts[0].name`, 'nope'),
    // A template may leave the host port to defaulting; a different one is refused.
    inv(`${T}.containers[0].ports[0].hostPort`, 81, 'must match `containerPort` when `hostNetwork` is true'),
    inv(`${T}.nodeSelector`, 'bad key', NAME_PART),
    inv(`${T}.nodeSelector`, 'not valid!', LABEL_VALUE),
    req(`${T}.dnsConfig`, 'must provide `dnsConfig` when `dnsPolicy` is None'),
    inv(`${T}.activeDeadlineSeconds`, 0, 'must be between 1 and 2147483647, inclusive'),
    inv(`${T}.hostname`, 'Web', LABEL),
    inv(`${T}.subdomain`, 'my_sub', LABEL),
    inv(`${T}.tolerations[0].operator`, 'Equal', 'operator must be Exists when `key` is empty, which means "match all values and all keys"'),
    inv(`${T}.priorityClassName`, 'High_Priority', SUBDOMAIN),
  ])
  // In a template, an unset host port is fine with hostNetwork (defaulting fills it in the pod).
  const ok = await s.request('POST', DEPLOYS, deploy('host-net', { hostNetwork: true, priorityClassName: 'system-node-critical', containers: [app({ ports: [{ containerPort: 80 }] })] }))
  t.equal(ok.status, 201, ok.text)
})

const goodSpec = (): Obj => ({
  volumes: [{ name: 'data', emptyDir: {} }, { name: 'cfg', configMap: { name: 'cfg' } }],
  initContainers: [{
    name: 'sidecar', image: 'busybox:1', restartPolicy: 'Always',
    readinessProbe: { exec: { command: ['true'] } }, lifecycle: { preStop: { sleep: { seconds: 0 } } },
  }],
  containers: [app({
    ports: [{ name: 'http', containerPort: 8080 }, { name: 'metrics', containerPort: 9090 }],
    env: [
      { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'TEAM', valueFrom: { fieldRef: { fieldPath: "metadata.labels['team']" } } },
      { name: 'HOST', valueFrom: { fieldRef: { fieldPath: 'spec.host' } } },
      { name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } },
      { name: 'KEY', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'key.name' } } },
      { name: 'my.dotted-name', value: 'x' },
    ],
    // A name is checked as a prefix: a trailing '-' is fine.
    envFrom: [{ prefix: 'CFG_', configMapRef: { name: 'cfg-' } }, { secretRef: { name: 'creds', optional: true } }],
    volumeMounts: [
      { name: 'data', mountPath: '/data', subPath: 'app', mountPropagation: 'HostToContainer' },
      { name: 'cfg', mountPath: '/etc/cfg', readOnly: true, recursiveReadOnly: 'IfPossible' },
    ],
    // A zero success threshold is defaulted to 1, as upstream does for every zero count.
    livenessProbe: { httpGet: { port: 'http', path: '', httpHeaders: [{ name: 'X-Probe', value: '1' }] }, successThreshold: 0, periodSeconds: 0 },
    readinessProbe: { tcpSocket: { port: 8080 } },
    startupProbe: { grpc: { port: 9090 }, terminationGracePeriodSeconds: 5 },
    lifecycle: { postStart: { exec: { command: ['true'] } }, preStop: { httpGet: { port: 8080 } } },
    // runAsNonRoot with runAsUser 0 is left to the kubelet, as upstream does.
    securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true, runAsUser: 0, seccompProfile: { type: 'Localhost', localhostProfile: 'profiles/app.json' }, appArmorProfile: { type: 'RuntimeDefault' } },
  })],
  securityContext: { runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000, supplementalGroups: [4000], sysctls: [{ name: 'kernel.shm_rmid_forced', value: '0' }, { name: 'net.ipv4.ip_local_port_range', value: '1024 65535' }], fsGroupChangePolicy: 'OnRootMismatch', seccompProfile: { type: 'RuntimeDefault' } },
  affinity: {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }, { key: 'cpus', operator: 'Gt', values: ['2'] }], matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['node-1'] }] }] },
      preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, preference: { matchExpressions: [{ key: 'zone', operator: 'Exists' }] } }],
    },
    podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'db' } }, namespaces: ['default'], topologyKey: 'topology.kubernetes.io/zone' }] },
    podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, podAffinityTerm: { labelSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] }, topologyKey: 'kubernetes.io/hostname' } }] },
  },
  dnsPolicy: 'None',
  dnsConfig: { nameservers: ['10.0.0.10', '2001:db8::1'], searches: ['svc.cluster.local', '_srv.example.com.', '.'], options: [{ name: 'ndots', value: '2' }] },
  nodeSelector: { 'kubernetes.io/os': 'linux', disk: '' },
  activeDeadlineSeconds: 600,
  hostname: 'web-0',
  subdomain: 'web',
  tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'web', effect: 'NoSchedule' }, { operator: 'Exists' }],
})

t.test('a pod with all these fields set is stored, and still takes status and metadata updates', async (t) => {
  const r = await s.request('POST', PODS, pod('good', goodSpec()))
  t.equal(r.status, 201, r.text)
  const c = r.json.spec.containers[0]
  t.equal(c.livenessProbe.successThreshold, 1, 'a zero count is defaulted')
  t.equal(c.livenessProbe.periodSeconds, 10)
  t.equal(c.livenessProbe.httpGet.path, '/', 'an empty path is defaulted')
  t.equal(c.lifecycle.preStop.httpGet.scheme, 'HTTP', "a lifecycle handler's httpGet is defaulted too")
  const st = await s.request('GET', `${PODS}/good/status`)
  const put = await s.request('PUT', `${PODS}/good/status`, { ...st.json, status: { ...st.json.status, phase: 'Running', podIP: '10.1.2.3', podIPs: [{ ip: '10.1.2.3' }] } })
  t.equal(put.status, 200, put.text)
  t.equal(put.json.status.phase, 'Running')
  const patch = await s.request('PATCH', `${PODS}/good`, { metadata: { labels: { team: 'web' } } }, MERGE)
  t.equal(patch.status, 200, patch.text)
  const d = await s.request('POST', DEPLOYS, deploy('good', goodSpec()))
  t.equal(d.status, 201, d.text)
})
