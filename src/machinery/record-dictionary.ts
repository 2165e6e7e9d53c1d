// The preset dictionary of the lz4 compression of stored records (see objectsDbOptions): JSON that objects share.
//
// FROZEN: records on disk were compressed against exactly these bytes. Changing one character makes every stored
// compressed record unreadable; a better dictionary needs a format version and a migration, never an edit of this one.
// Strings used most often sit near the end (on a hash collision the later position is the one kept).

const PARTS = [
  // nodes, leases, events
  '{"kind":"Node","apiVersion":"v1","metadata":{"name":"","labels":{"beta.kubernetes.io/arch":"amd64","beta.kubernetes.io/os":"linux",',
  '"kubernetes.io/arch":"amd64","kubernetes.io/hostname":"","kubernetes.io/os":"linux","node-role.kubernetes.io/control-plane":"",',
  '"node.kubernetes.io/exclude-from-external-load-balancers":""},"annotations":{"node.alpha.kubernetes.io/ttl":"0",',
  '"volumes.kubernetes.io/controller-managed-attach-detach":"true"}},"spec":{"podCIDR":"10.244.0.0/24","podCIDRs":["10.244.0.0/24"],',
  '"providerID":"","taints":[{"key":"node-role.kubernetes.io/control-plane","effect":"NoSchedule"}],"unschedulable":false},',
  '"status":{"capacity":{"cpu":"","ephemeral-storage":"","hugepages-1Gi":"0","hugepages-2Mi":"0","memory":"","pods":"110"},',
  '"allocatable":{"cpu":"","ephemeral-storage":"","memory":"","pods":"110"},"conditions":[',
  '{"type":"MemoryPressure","status":"False","lastHeartbeatTime":"","lastTransitionTime":"","reason":"KubeletHasSufficientMemory",',
  '"message":"kubelet has sufficient memory available"},{"type":"DiskPressure","status":"False","reason":"KubeletHasNoDiskPressure",',
  '"message":"kubelet has no disk pressure"},{"type":"PIDPressure","status":"False","reason":"KubeletHasSufficientPID",',
  '"message":"kubelet has sufficient PID available"},{"type":"Ready","status":"True","reason":"KubeletReady",',
  '"message":"kubelet is posting ready status"}],"addresses":[{"type":"InternalIP","address":"10.0.0.1"},{"type":"Hostname","address":""}],',
  '"daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},"nodeInfo":{"machineID":"","systemUUID":"","bootID":"","kernelVersion":"6.1.0-amd64",',
  '"osImage":"Debian GNU/Linux 12 (bookworm)","containerRuntimeVersion":"containerd://2.0.0","kubeletVersion":"v1.36.0",',
  '"kubeProxyVersion":"v1.36.0","operatingSystem":"linux","architecture":"amd64"},"images":[{"names":["registry.k8s.io/pause:3.10"],"sizeBytes":0}]}}',
  '{"kind":"Lease","apiVersion":"coordination.orch.io/v1","metadata":{"name":"","namespace":"orch-node-lease","ownerReferences":[{"apiVersion":"v1","kind":"Node",',
  '"spec":{"holderIdentity":"","leaseDurationSeconds":40,"acquireTime":"","renewTime":"2026-01-01T00:00:00.000000Z","leaseTransitions":0}}',
  '{"kind":"Event","apiVersion":"v1","metadata":{"name":"","namespace":"default"},"involvedObject":{"kind":"Pod","namespace":"default","name":"","uid":"",',
  '"apiVersion":"v1","resourceVersion":"","fieldPath":"spec.containers{}"},"reason":"Scheduled","message":"Successfully assigned default/ to ",',
  '"source":{"component":"default-scheduler","host":""},"firstTimestamp":"","lastTimestamp":"","count":1,"type":"Normal","eventTime":null,',
  '"reportingComponent":"kubelet","reportingInstance":""},"reason":"Pulled","message":"Container image \\"\\" already present on machine"',
  '"reason":"Created","message":"Created container: ","reason":"Started","message":"Started container ","type":"Warning","reason":"BackOff"',
  // services, endpoints, secrets, service accounts
  '{"kind":"Service","apiVersion":"v1","metadata":{"name":"","namespace":"default"},"spec":{"ports":[{"name":"http","protocol":"TCP","port":80,"targetPort":8080}],',
  '"selector":{"app":""},"clusterIP":"10.96.0.1","clusterIPs":["10.96.0.1"],"type":"ClusterIP","sessionAffinity":"None","ipFamilies":["IPv4"],',
  '"ipFamilyPolicy":"SingleStack","internalTrafficPolicy":"Cluster"},"status":{"loadBalancer":{}}}',
  '{"kind":"EndpointSlice","apiVersion":"discovery.orch.io/v1","addressType":"IPv4","endpoints":[{"addresses":["10.244.0.2"],"conditions":{"ready":true,',
  '"serving":true,"terminating":false},"nodeName":"","targetRef":{"kind":"Pod","namespace":"default","name":"","uid":""}}],"ports":[{"name":"","port":8080,"protocol":"TCP"}]}',
  '{"kind":"Secret","apiVersion":"v1","metadata":{"name":"","namespace":"default"},"type":"Opaque","data":{"tls.crt":"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t",',
  '"tls.key":"LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0t","ca.crt":"","token":"","namespace":""}}"type":"kubernetes.io/service-account-token","type":"kubernetes.io/tls"',
  '{"kind":"ServiceAccount","apiVersion":"v1","metadata":{"name":"default","namespace":"default"},"secrets":[{"name":""}],"automountServiceAccountToken":false}',
  // workloads
  '{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"annotations":{"deployment.kubernetes.io/revision":"1"}},"spec":{"replicas":1,',
  '"selector":{"matchLabels":{"app":""}},"template":{"metadata":{"creationTimestamp":null,"labels":{"app":""}},"spec":{}},"strategy":{"type":"RollingUpdate",',
  '"rollingUpdate":{"maxUnavailable":"25%","maxSurge":"25%"}},"revisionHistoryLimit":10,"progressDeadlineSeconds":600},"status":{"observedGeneration":1,',
  '"replicas":1,"updatedReplicas":1,"readyReplicas":1,"availableReplicas":1,"fullyLabeledReplicas":1,"conditions":[{"type":"Available","status":"True",',
  '"lastUpdateTime":"","lastTransitionTime":"","reason":"MinimumReplicasAvailable","message":"Deployment has minimum availability."},',
  '{"type":"Progressing","status":"True","reason":"NewReplicaSetAvailable","message":"ReplicaSet \\"\\" has successfully progressed."}]}}',
  '{"kind":"Pod","apiVersion":"v1","metadata":{"name":"","generateName":"","namespace":"default","uid":"","resourceVersion":"","creationTimestamp":"",',
  '"labels":{"app":"","pod-template-hash":"","controller-revision-hash":"","pod-template-generation":"1","job-name":"","batch.kubernetes.io/job-name":""},',
  '"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"","uid":"","controller":true,"blockOwnerDeletion":true}]},',
  '"spec":{"volumes":[{"name":"kube-api-access-","projected":{"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},',
  '{"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},{"downwardAPI":{"items":[{"path":"namespace",',
  '"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"}}]}}],"defaultMode":420}}],"containers":[{"name":"","image":"",',
  '"command":["/bin/sh","-c"],"args":[],"ports":[{"name":"http","containerPort":8080,"protocol":"TCP"}],"env":[{"name":"POD_NAME",',
  '"valueFrom":{"fieldRef":{"fieldPath":"metadata.name","apiVersion":"v1"}}},{"name":"POD_NAMESPACE","value":""}],',
  '"resources":{"limits":{"cpu":"500m","memory":"512Mi"},"requests":{"cpu":"100m","memory":"128Mi"}},"volumeMounts":[{"name":"kube-api-access-",',
  '"readOnly":true,"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}],"livenessProbe":{"httpGet":{"path":"/healthz","port":8080,',
  '"scheme":"HTTP"},"initialDelaySeconds":10,"timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,"failureThreshold":3},',
  '"readinessProbe":{"httpGet":{"path":"/readyz","port":8080,"scheme":"HTTP"}},"terminationMessagePath":"/dev/termination-log",',
  '"terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent","securityContext":{"runAsNonRoot":true,"allowPrivilegeEscalation":false}}],',
  '"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","serviceAccountName":"default","serviceAccount":"default",',
  '"nodeName":"","hostNetwork":false,"securityContext":{},"schedulerName":"default-scheduler","tolerations":[{"key":"node.kubernetes.io/not-ready",',
  '"operator":"Exists","effect":"NoExecute","tolerationSeconds":300},{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute",',
  '"tolerationSeconds":300}],"priority":0,"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority"},"status":{"phase":"Running","conditions":[',
  '{"type":"PodReadyToStartContainers","status":"True","lastProbeTime":null,"lastTransitionTime":""},{"type":"Initialized","status":"True",',
  '"lastProbeTime":null},{"type":"Ready","status":"True"},{"type":"ContainersReady","status":"True"},{"type":"PodScheduled","status":"True"}],',
  '"hostIP":"10.0.0.1","hostIPs":[{"ip":"10.0.0.1"}],"podIP":"10.244.0.2","podIPs":[{"ip":"10.244.0.2"}],"startTime":"","containerStatuses":[{"name":"",',
  '"state":{"running":{"startedAt":""}},"lastState":{},"ready":true,"restartCount":0,"image":"","imageID":"","containerID":"containerd://","started":true}],',
  '"qosClass":"Burstable"}}"qosClass":"BestEffort"',
  // managed fields
  '"f:spec":{"f:containers":{"k:{\\"name\\":\\"\\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{".":{},',
  '"k:{\\"containerPort\\":8080,\\"protocol\\":\\"TCP\\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}}},"f:resources":{".":{},',
  '"f:limits":{".":{},"f:cpu":{},"f:memory":{}},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}},"f:terminationMessagePath":{},',
  '"f:terminationMessagePolicy":{},"f:volumeMounts":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:nodeName":{},"f:restartPolicy":{},',
  '"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{},"f:replicas":{},"f:selector":{},"f:template":{},',
  '"f:status":{"f:conditions":{"k:{\\"type\\":\\"Ready\\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},',
  '"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:startTime":{}},"f:type":{},"f:spec":{"f:holderIdentity":{},',
  '"f:leaseDurationSeconds":{},"f:renewTime":{}}',
  '"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:generateName":{},',
  '"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\\"uid\\":\\"\\"}":{}}},',
  '"f:data":{".":{},"f:config.yaml":{},"f:payload":{}},"subresource":"status","manager":"kubectl-client-side-apply","manager":"kube-controller-manager",',
  '"manager":"kube-scheduler","manager":"kubelet","manager":"kubectl-create","manager":"unknown","operation":"Apply"',
  // the shape every object shares, last: most objects begin this way
  '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"","namespace":"default","uid":"00000000-0000-0000-0000-000000000000",',
  '"resourceVersion":"1","generation":1,"creationTimestamp":"2026-01-01T00:00:00Z","deletionTimestamp":"2026-01-01T00:00:00Z",',
  '"deletionGracePeriodSeconds":0,"labels":{"app":"","app.kubernetes.io/name":"","app.kubernetes.io/instance":"","app.kubernetes.io/version":"",',
  '"app.kubernetes.io/component":"","app.kubernetes.io/part-of":"","app.kubernetes.io/managed-by":"Helm","helm.sh/chart":""},',
  '"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\\"apiVersion\\":\\"v1\\",\\"kind\\":\\"ConfigMap\\",\\"metadata\\":{\\"annotations\\":{},',
  '\\"name\\":\\"\\",\\"namespace\\":\\"default\\"}}\\n","meta.helm.sh/release-name":"","meta.helm.sh/release-namespace":""},"finalizers":["kubernetes"],',
  '"managedFields":[{"manager":"kubectl","operation":"Update","apiVersion":"v1","time":"2026-01-01T00:00:00Z","fieldsType":"FieldsV1",',
  '"fieldsV1":{"f:data":{".":{},"f:payload":{}},"f:metadata":{"f:labels":{".":{},"f:app":{}}}}}]},"data":{"payload":"","config.yaml":""}}',
]

/** lmdb-js uses a dictionary's first multiple of 8 bytes: it is padded in front, where the least used strings are. */
function padded(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8')
  const out = Buffer.allocUnsafeSlow((bytes.length + 7) & ~7).fill(0x20)
  bytes.copy(out, out.length - bytes.length)
  return out
}

export const RECORD_DICTIONARY_1: Buffer = padded(PARTS.join(''))
