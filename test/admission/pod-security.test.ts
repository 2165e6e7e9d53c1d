import t from 'tap'
import {
  admitPodSecurity, BASELINE, evaluatePod, forbiddenDetail, LATEST, namespacePolicy, namespaceUpdateWarnings, podTemplateOf, PRIVILEGED,
  RESTRICTED, significantPodUpdate, validateNamespaceLabels, type LevelVersion,
} from '../../src/admission/pod-security.js'

const B: LevelVersion = { level: BASELINE, minor: LATEST }
const R: LevelVersion = { level: RESTRICTED, minor: LATEST }
const detail = (lv: LevelVersion, spec: Record<string, unknown>, meta?: Record<string, unknown>) => forbiddenDetail(evaluatePod(lv, meta, spec))
const c = (name: string, extra: Record<string, unknown> = {}) => ({ name, image: 'i', ...extra })
/** A container that passes every restricted container check. */
const good = (name: string, sc: Record<string, unknown> = {}) => c(name, { securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, ...sc } })
const goodPod = { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } }

t.test('namespace labels: none is null, ours and upstream\'s spelling, errors, warn following enforce', async (t) => {
  t.equal(namespacePolicy(undefined), null)
  t.equal(namespacePolicy({ app: 'x' }), null)
  t.equal(namespacePolicy({ 'pod-security.orch.io/enforce': 'privileged' }), null)
  let p = namespacePolicy({ 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/enforce-version': 'v1.22' })!
  t.same(p.enforce, { level: BASELINE, minor: 22 })
  t.same(p.warn, { level: BASELINE, minor: 22 }, 'warn follows a stricter enforce, with its version')
  t.same(p.audit, { level: PRIVILEGED, minor: LATEST })
  p = namespacePolicy({ 'pod-security.orch.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.orch.io/warn': 'baseline' })!
  t.equal(p.enforce.level, RESTRICTED, 'ours wins over upstream\'s spelling')
  t.equal(p.warn.level, BASELINE, 'a warn label of its own stands')
  p = namespacePolicy({ 'pod-security.orch.io/enforce': 'strict', 'pod-security.orch.io/warn': 'nope', 'pod-security.orch.io/audit-version': '1.2' })!
  t.equal(p.enforce.level, RESTRICTED, 'a bad enforce level fails closed')
  t.equal(p.warn.level, PRIVILEGED, 'a bad warn level fails open')
  t.same(p.errors.map((e) => [e.field, e.value, e.detail]), [
    ['metadata.labels[pod-security.orch.io/enforce]', 'strict', 'must be one of privileged, baseline, restricted'],
    ['metadata.labels[pod-security.orch.io/audit-version]', '1.2', 'must be "latest" or "v1.x"'],
    ['metadata.labels[pod-security.orch.io/warn]', 'nope', 'must be one of privileged, baseline, restricted'],
  ])
  t.equal(namespacePolicy({ 'pod-security.orch.io/warn-version': 'v1.01' })!.errors.length, 1, 'v1.01 is not a version')
})

t.test('baseline checks, with upstream\'s texts', async (t) => {
  t.equal(detail(B, { containers: [c('a')] }), '')
  t.equal(detail(B, { hostNetwork: true, hostIPC: true, containers: [c('a')] }), 'host namespaces (hostNetwork=true, hostIPC=true)')
  t.equal(detail(B, { initContainers: [c('i', { securityContext: { privileged: true } })], containers: [c('a', { securityContext: { privileged: true } })] }),
    'privileged (containers "i", "a" must not set securityContext.privileged=true)')
  t.equal(detail(B, { containers: [c('a', { securityContext: { capabilities: { add: ['SYS_ADMIN', 'CHOWN', 'NET_RAW'] } } })] }),
    'non-default capabilities (container "a" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add)')
  t.equal(detail(B, { volumes: [{ name: 'h', hostPath: { path: '/' } }, { name: 'e', emptyDir: {} }], containers: [c('a')] }), 'hostPath volumes (volume "h")')
  t.equal(detail(B, { containers: [c('a', { ports: [{ containerPort: 80, hostPort: 8080 }, { containerPort: 9, hostPort: 443 }] }), c('b', { ports: [{ hostPort: 8080 }] })] }),
    'hostPort (containers "a", "b" use hostPorts 443, 8080)')
  t.equal(detail(B, { containers: [c('a', { securityContext: { appArmorProfile: { type: 'Unconfined' } } })] }, { annotations: { 'container.apparmor.security.beta.kubernetes.io/a': 'unconfined' } }),
    'forbidden AppArmor profiles (container "a" and annotation must not set AppArmor profile type to "Unconfined", "container.apparmor.security.beta.kubernetes.io/a=\\"unconfined\\"")',
    'upstream quotes each value, the annotation pair too')
  t.equal(detail(B, { securityContext: { seLinuxOptions: { type: 'spc_t', user: 'u' } }, containers: [c('a', { securityContext: { seLinuxOptions: { role: 'r', type: 'container_t' } } })] }),
    'seLinuxOptions (pod and container "a" set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set; role may not be set)')
  t.equal(detail(B, { containers: [c('a', { securityContext: { procMount: 'Unmasked' } })] }), 'procMount (container "a" must not set securityContext.procMount to "Unmasked")')
  t.equal(detail(B, { securityContext: { seccompProfile: { type: 'Unconfined' } }, containers: [c('a')] }), 'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")')
  t.equal(detail(B, { securityContext: { sysctls: [{ name: 'kernel.shm_rmid_forced', value: '1' }, { name: 'kernel.msgmax', value: '1' }, { name: 'net.core.somaxconn', value: '1' }] }, containers: [c('a')] }),
    'forbidden sysctls (kernel.msgmax, net.core.somaxconn)')
  t.equal(detail(B, { containers: [c('a', { securityContext: { windowsOptions: { hostProcess: true } } })] }), 'hostProcess (container "a" must not set securityContext.windowsOptions.hostProcess=true)')
  const probes = { containers: [c('b', { livenessProbe: { httpGet: { host: '10.0.0.1', port: 80 } } }), c('a', { lifecycle: { preStop: { tcpSocket: { host: 'evil', port: 1 } } }, readinessProbe: { tcpSocket: { port: 2 } } })] }
  t.equal(detail(B, probes), 'probe or lifecycle host (containers "a", "b" use probe or lifecycle hosts "10.0.0.1", "evil")')
  t.equal(detail({ level: BASELINE, minor: 33 }, probes), '', 'hosts in probes are refused from v1.34')
  // Several at once, in upstream's order (check ids sorted).
  t.equal(detail(B, { hostPID: true, containers: [c('a', { securityContext: { privileged: true, capabilities: { add: ['NET_ADMIN'] } } })] }),
    'non-default capabilities (container "a" must not include "NET_ADMIN" in securityContext.capabilities.add), host namespaces (hostPID=true), privileged (container "a" must not set securityContext.privileged=true)')
})

t.test('restricted checks, with upstream\'s texts', async (t) => {
  t.equal(detail(R, { securityContext: goodPod, containers: [good('a', { capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } })] }), '', 'a compliant pod')
  t.equal(detail(R, { containers: [c('a')] }),
    'allowPrivilegeEscalation != false (container "a" must set securityContext.allowPrivilegeEscalation=false), ' +
    'unrestricted capabilities (container "a" must set securityContext.capabilities.drop=["ALL"]), ' +
    'runAsNonRoot != true (pod or container "a" must set securityContext.runAsNonRoot=true), ' +
    'seccompProfile (pod or container "a" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")')
  t.equal(detail(R, { securityContext: goodPod, containers: [good('a', { capabilities: { drop: ['ALL'], add: ['SYS_TIME', 'CHOWN'] } })] }),
    'unrestricted capabilities (container "a" must not include "CHOWN", "SYS_TIME" in securityContext.capabilities.add)', 'capabilities_restricted replaces capabilities_baseline')
  t.equal(detail(R, { securityContext: goodPod, volumes: [{ name: 'h', hostPath: {} }, { name: 'n', nfs: {} }, { name: 'x' }, { name: 'ok', secret: {} }], containers: [good('a')] }),
    'restricted volume types (volumes "h", "n", "x" use restricted volume types "hostPath", "nfs", "unknown")', 'restrictedVolumes replaces hostPathVolumes')
  t.equal(detail(R, { securityContext: { ...goodPod, runAsNonRoot: false }, containers: [good('a', { runAsNonRoot: false }), good('b')] }),
    'runAsNonRoot != true (pod and container "a" must not set securityContext.runAsNonRoot=false)')
  t.equal(detail(R, { securityContext: { seccompProfile: { type: 'RuntimeDefault' } }, containers: [good('a', { runAsNonRoot: true }), good('b')] }),
    'runAsNonRoot != true (pod or container "b" must set securityContext.runAsNonRoot=true)')
  t.equal(detail(R, { securityContext: { ...goodPod, runAsUser: 0 }, containers: [good('a', { runAsUser: 0 }), good('b', { runAsUser: 1000 })] }),
    'runAsUser=0 (pod and container "a" must not set runAsUser=0)')
  t.equal(detail(R, { securityContext: { runAsNonRoot: true }, containers: [good('a', { seccompProfile: { type: 'Localhost' } }), good('b')] }),
    'seccompProfile (pod or container "b" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")')
  t.equal(detail(R, { securityContext: { runAsNonRoot: true, seccompProfile: { type: 'Unconfined' } }, containers: [good('a')] }),
    'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")', 'seccompProfile_restricted replaces seccompProfile_baseline')
  const windows = { os: { name: 'windows' }, securityContext: { runAsNonRoot: true }, containers: [c('a')] }
  t.equal(detail(R, windows), '', 'from v1.25 a Windows pod needs no allowPrivilegeEscalation, capabilities or seccomp')
  t.equal(detail({ level: RESTRICTED, minor: 24 }, windows).split(', ').map((x) => x.split(' (')[0]).join('|'), 'allowPrivilegeEscalation != false|unrestricted capabilities|seccompProfile')
  t.equal(detail(R, { securityContext: goodPod, ephemeralContainers: [c('dbg')], containers: [good('a')] }).startsWith('allowPrivilegeEscalation != false (container "dbg"'), true, 'ephemeral containers are checked')
})

t.test('versions: the checks of the version asked for', async (t) => {
  const spec = { securityContext: { runAsNonRoot: true, runAsUser: 0 }, containers: [c('a', { securityContext: { allowPrivilegeEscalation: false } })] }
  t.equal(detail({ level: RESTRICTED, minor: 18 }, spec), '', 'v1.18: no seccomp, capabilities or runAsUser check')
  t.equal(detail({ level: RESTRICTED, minor: 22 }, spec),
    'unrestricted capabilities (container "a" must set securityContext.capabilities.drop=["ALL"]), seccompProfile (pod or container "a" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")')
  t.match(detail({ level: RESTRICTED, minor: 23 }, spec), /runAsUser=0 \(pod must not set runAsUser=0\)/)
  t.equal(detail({ level: RESTRICTED, minor: 21 }, { securityContext: { runAsNonRoot: true }, containers: [c('a', { securityContext: { allowPrivilegeEscalation: false, capabilities: { add: ['NET_RAW'] } } })] }),
    'non-default capabilities (container "a" must not include "NET_RAW" in securityContext.capabilities.add), seccompProfile (pod or container "a" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    'v1.21: baseline\'s capabilities check stands at restricted')
  t.equal(detail({ level: RESTRICTED, minor: 7 }, { securityContext: { runAsNonRoot: true }, containers: [c('a')] }), '', 'v1.7: no allowPrivilegeEscalation check')
  const ann = { annotations: { 'seccomp.security.alpha.kubernetes.io/pod': 'unconfined', 'container.seccomp.security.alpha.kubernetes.io/a': 'runtime/default' } }
  t.equal(detail({ level: BASELINE, minor: 18 }, { containers: [c('a')] }, ann), 'seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined")')
  t.equal(detail(B, { containers: [c('a')] }, ann), '', 'annotations are not looked at from v1.19')
  t.equal(detail({ level: BASELINE, minor: 40 }, { hostPID: true, containers: [c('a')] }), 'host namespaces (hostPID=true)', 'a future version is the newest')
})

t.test('pod templates of workload resources', async (t) => {
  const spec = { containers: [c('a')] }
  const tpl = { metadata: { labels: { a: 'b' } }, spec }
  t.same(podTemplateOf('apps', 'deployments', { spec: { template: tpl } })?.spec, spec)
  t.same(podTemplateOf('batch', 'cronjobs', { spec: { jobTemplate: { spec: { template: tpl } } } })?.meta, { labels: { a: 'b' } })
  t.same(podTemplateOf('', 'podtemplates', { template: tpl })?.spec, spec)
  t.same(podTemplateOf('', 'replicationcontrollers', { spec: { template: tpl } })?.spec, spec)
  t.equal(podTemplateOf('', 'replicationcontrollers', { spec: {} }), undefined, 'no template, nothing to check')
  t.equal(podTemplateOf('', 'configmaps', { spec: { template: tpl } }), undefined)
})

t.test('admission: enforce on pods only, warn on both, insignificant updates skipped', async (t) => {
  const p = namespacePolicy({ 'pod-security.orch.io/enforce': 'baseline', 'pod-security.orch.io/warn': 'restricted', 'pod-security.orch.io/warn-version': 'v1.25' })!
  const priv = { metadata: { name: 'x' }, spec: { containers: [c('a', { securityContext: { privileged: true } })] } }
  const out = admitPodSecurity(p, '', 'pods', '', 'CREATE', 'x', priv, undefined)!
  t.equal(out.error?.message, 'pods "x" is forbidden: violates PodSecurity "baseline:latest": privileged (container "a" must not set securityContext.privileged=true)')
  t.equal((out.error as any).code, 403)
  const plain = { metadata: { name: 'y' }, spec: { containers: [c('a')] } }
  t.match(admitPodSecurity(p, '', 'pods', '', 'CREATE', 'y', plain, undefined)!.warnings, [/^would violate PodSecurity "restricted:v1.25": allowPrivilegeEscalation != false/])
  t.equal(admitPodSecurity(p, '', 'pods', 'status', 'UPDATE', 'x', priv, priv), undefined, 'a status write is not checked')
  const relabeled = { ...priv, metadata: { name: 'x', labels: { a: 'b' } } }
  t.equal(admitPodSecurity(p, '', 'pods', '', 'UPDATE', 'x', relabeled, priv), undefined, 'a metadata-only update is not checked')
  const dep = { spec: { template: { spec: priv.spec } } }
  const w = admitPodSecurity(p, 'apps', 'deployments', '', 'CREATE', 'd', dep, undefined)!
  t.equal(w.error, undefined, 'no enforce for workloads')
  t.match(w.warnings, [/^would violate PodSecurity "restricted:v1.25": privileged \(container "a"/])
  t.equal(admitPodSecurity(p, 'apps', 'deployments', 'scale', 'UPDATE', 'd', dep, dep), undefined)
  t.equal(admitPodSecurity(p, '', 'pods', '', 'DELETE', 'x', priv, priv), undefined)
})

t.test('significant pod updates (upstream\'s list)', async (t) => {
  const pod = (image: string, extra: Record<string, unknown> = {}) => ({ metadata: { annotations: {} }, spec: { containers: [c('a', { image })], ...extra } })
  t.equal(significantPodUpdate(pod('i'), pod('i')), false)
  t.equal(significantPodUpdate(pod('j'), pod('i')), true, 'image')
  t.equal(significantPodUpdate(pod('i', { ephemeralContainers: [c('dbg')] }), pod('i')), true, 'an ephemeral container added')
  t.equal(significantPodUpdate(pod('i', { initContainers: [c('x')] }), pod('i')), true, 'containers added')
  const annotated = { ...pod('i'), metadata: { annotations: { 'seccomp.security.alpha.kubernetes.io/pod': 'unconfined' } } }
  t.equal(significantPodUpdate(annotated, pod('i')), true, 'seccomp annotation')
})

t.test('namespace labels: validation and warnings of existing pods', async (t) => {
  const ns = (labels: Record<string, string>) => ({ metadata: { name: 'n', labels } })
  const err = validateNamespaceLabels('n', 'CREATE', ns({ 'pod-security.kubernetes.io/enforce-version': 'v2.0' }), undefined) as any
  t.equal(err.code, 422)
  t.equal(err.message, 'Namespace "n" is invalid: metadata.labels[pod-security.kubernetes.io/enforce-version]: Invalid value: "v2.0": must be "latest" or "v1.x"')
  t.equal(validateNamespaceLabels('n', 'UPDATE', ns({ 'pod-security.orch.io/enforce': 'x', a: 'b' }), ns({ 'pod-security.orch.io/enforce': 'x' })), undefined, 'the same errors as before stand')
  const pods = [
    { metadata: { name: 'b' }, spec: { hostPID: true, containers: [c('a')] } },
    { metadata: { name: 'a' }, spec: { hostPID: true, containers: [c('a')] } },
    { metadata: { name: 'c' }, spec: { hostPID: true, containers: [c('a')] } },
    { metadata: { name: 'z' }, spec: { containers: [c('a', { securityContext: { privileged: true } })] } },
    { metadata: { name: 'ok' }, spec: { containers: [c('a')] } },
  ]
  t.same(namespaceUpdateWarnings('n', ns({ 'pod-security.orch.io/enforce': 'baseline' }), ns({}), () => pods), [
    'existing pods in namespace "n" violate the new PodSecurity enforce level "baseline:latest"',
    'a (and 2 other pods): host namespaces',
    'z: privileged',
  ])
  t.same(namespaceUpdateWarnings('n', ns({ 'pod-security.orch.io/enforce': 'baseline' }), ns({}), () => pods, 2), [
    'new PodSecurity enforce level only checked against the first 2 of 5 existing pods',
    'existing pods in namespace "n" violate the new PodSecurity enforce level "baseline:latest"',
    'a (and 1 other pod): host namespaces',
  ])
  let listed = false
  t.same(namespaceUpdateWarnings('n', ns({ 'pod-security.orch.io/enforce': 'baseline' }), ns({ 'pod-security.orch.io/enforce': 'restricted' }), () => { listed = true; return pods }), [], 'a relaxed level checks nothing')
  t.equal(listed, false)
})
