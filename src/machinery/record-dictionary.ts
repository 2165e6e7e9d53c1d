// The preset dictionary of the lz4 compression of stored records (see objectsDbOptions): JSON that objects share.
//
// FROZEN: records on disk were compressed against exactly these bytes. Changing one character makes every stored
// compressed record unreadable; a better dictionary needs a format version and a migration, never an edit of this one.
// Strings used most often sit near the end (on a hash collision the later position is the one kept). It is small on
// purpose: lmdb-js loads the dictionary into lz4's hash table for every value it compresses (~1 us per KB).

const PARTS = [
  // pods, the most numerous objects of a cluster
  '"spec":{"volumes":[{"name":"kube-api-access-","projected":{"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},',
  '{"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},{"downwardAPI":{"items":[{"path":"namespace",',
  '"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"}}]}}],"defaultMode":420}}],"containers":[{"name":"","image":"",',
  '"ports":[{"containerPort":8080,"protocol":"TCP"}],"resources":{"limits":{"cpu":"","memory":""},"requests":{"cpu":"100m","memory":"128Mi"}},',
  '"volumeMounts":[{"name":"","readOnly":true,"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}],"terminationMessagePath":"/dev/termination-log",',
  '"terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,',
  '"dnsPolicy":"ClusterFirst","serviceAccountName":"default","nodeName":"","securityContext":{},"schedulerName":"default-scheduler",',
  '"tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],"enableServiceLinks":true},',
  '"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":""}],"hostIP":"10.0.0.1",',
  '"podIP":"10.244.0.2","startTime":"","containerStatuses":[{"name":"","state":{"running":{"startedAt":""}},"lastState":{},"ready":true,',
  '"restartCount":0,"image":"","imageID":"","containerID":"containerd://","started":true}],"qosClass":"Burstable"}}',
  // managed fields
  '"f:spec":{"f:containers":{"k:{\\"name\\":\\"\\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{},',
  '"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},',
  '"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}},"f:status":{"f:conditions":{},"f:phase":{}},',
  '"manager":"kube-controller-manager","manager":"kubelet","operation":"Apply","subresource":"status",',
  // the shape every object shares, last: most objects begin this way
  '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"","generateName":"","namespace":"default","uid":"","resourceVersion":"",',
  '"generation":1,"creationTimestamp":"2026-01-01T00:00:00Z","deletionTimestamp":"","labels":{"app":"","app.kubernetes.io/name":"",',
  '"app.kubernetes.io/instance":"","pod-template-hash":""},"annotations":{},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet",',
  '"name":"","uid":"","controller":true,"blockOwnerDeletion":true}],"finalizers":[],"managedFields":[{"manager":"kubectl","operation":"Update",',
  '"apiVersion":"v1","time":"2026-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:payload":{}},',
  '"f:metadata":{"f:labels":{".":{},"f:app":{}},"f:ownerReferences":{".":{},"k:{\\"uid\\":\\"\\"}":{}}}}}]},"data":{"payload":""}}',
]

/** lmdb-js uses a dictionary's first multiple of 8 bytes: it is padded in front, where the least used strings are. */
function padded(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8')
  const out = Buffer.allocUnsafeSlow((bytes.length + 7) & ~7).fill(0x20)
  bytes.copy(out, out.length - bytes.length)
  return out
}

export const RECORD_DICTIONARY_1: Buffer = padded(PARTS.join(''))
