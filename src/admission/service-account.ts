// The ServiceAccount admission plugin: a new pod runs as an account that exists (`default` unless it names one), gets the account's image pull secrets and, unless automount is off, the projected API token volume mounted in every container; mirror pods may reference no account and no secret.
import { forbidden, type ApiError } from '../machinery/errors.js'
import { MIRROR_POD_ANNOTATION } from '../machinery/node-refs.js'
import { objectKey, recordObject } from '../machinery/storage-format.js'
import type { Obj } from '../registry/define.js'
import type { Store } from '../pipeline/store.js'
import { ROOT_CA_CONFIGMAP } from '../machinery/node-refs.js'

export const DEFAULT_ACCOUNT = 'default'
/** upstream's kubernetes.io/enforce-mountable-secrets, in this brand. */
export const ENFORCE_MOUNTABLE_SECRETS_ANNOTATION = 'orch.io/enforce-mountable-secrets'
/** The prefix of the token volume's name (upstream ServiceAccountVolumeName, and a dash). */
export const TOKEN_VOLUME_PREFIX = 'kube-api-access-'
/** upstream's /var/run/secrets/kubernetes.io/serviceaccount, in this brand. */
export const TOKEN_MOUNT_PATH = '/var/run/secrets/orch.io/serviceaccount'
/** upstream WarnOnlyBoundTokenExpirationSeconds: an hour and 7 seconds, which marks tokens the kubelet mounted. */
export const TOKEN_EXPIRATION_SECONDS = 3607

const PODS = { group: '', resource: 'pods' }

/** What the plugin needs of a ServiceAccount. */
export interface AccountView {
  automount: boolean | undefined
  imagePullSecrets: string[]
  /** names of spec.secrets, the secrets pods may mount when mountable secrets are enforced */
  secrets: string[]
  enforceMountableSecrets: boolean
}

/** A lookup of an account by namespace and name: null when there is none. */
export type AccountLookup = (namespace: string, name: string) => AccountView | null

function isObj(v: unknown): v is Obj { return v !== null && typeof v === 'object' && !Array.isArray(v) }
function list(v: unknown): Obj[] { return Array.isArray(v) ? v.filter(isObj) : [] }
function str(v: unknown): string { return typeof v === 'string' ? v : '' }

/** strconv.ParseBool's true spellings; anything else (or an error) is false, as upstream reads the annotation. */
function parseBoolTrue(v: unknown): boolean {
  return v === '1' || v === 't' || v === 'T' || v === 'true' || v === 'TRUE' || v === 'True'
}

export function accountView(sa: Obj): AccountView {
  const ann = sa.metadata?.annotations
  return {
    automount: typeof sa.automountServiceAccountToken === 'boolean' ? sa.automountServiceAccountToken : undefined,
    imagePullSecrets: list(sa.imagePullSecrets).map((r) => str(r.name)),
    secrets: list(sa.secrets).map((r) => str(r.name)),
    enforceMountableSecrets: isObj(ann) && parseBoolTrue(ann[ENFORCE_MOUNTABLE_SECRETS_ANNOTATION]),
  }
}

// ---- the accounts as looked up, kept while no ServiceAccount write is acknowledged ----

let store: Store | undefined
/** Accounts (or their absence) by namespace/name, each with the count of ServiceAccount writes it was read at. */
const accounts = new Map<string, { stamp: bigint; view: AccountView | null }>()
const ACCOUNTS_LIMIT = 10_000

export function configureServiceAccountLookups(s: Store): void {
  store = s
  accounts.clear()
}

/**
 * The account, read from the store only when a ServiceAccount write was acknowledged since it was last read (a pod
 * create in a quiet cluster reads no record).
 */
export const lookupAccount: AccountLookup = (namespace, name) => {
  if (store === undefined) return null
  const key = `${namespace}/${name}`
  const stamp = store.serviceAccountWrites()
  const cached = accounts.get(key)
  if (cached !== undefined && cached.stamp === stamp) return cached.view
  // A snapshot taken after the count was read holds every write it counts.
  const rec = store.getNewest(store.shardFor('', 'serviceaccounts'), objectKey('', 'serviceaccounts', namespace, name))
  const view = rec ? accountView(JSON.parse(recordObject(rec).toString('utf8')) as Obj) : null
  if (accounts.size >= ACCOUNTS_LIMIT) accounts.clear()
  accounts.set(key, { stamp, view })
  return view
}

/** Pod creates waiting for their namespace's default account, and when each stops waiting. */
const waiters: Array<{ namespace: string; deadline: number; done: () => void }> = []
let poller: ReturnType<typeof setInterval> | undefined
let polledAt = -1n
const POLL_MS = 10

function poll(): void {
  const now = Date.now()
  const stamp = store!.serviceAccountWrites()
  const moved = stamp !== polledAt
  polledAt = stamp
  for (let i = waiters.length - 1; i >= 0; i--) {
    const w = waiters[i]
    if ((moved && lookupAccount(w.namespace, DEFAULT_ACCOUNT) !== null) || now >= w.deadline) {
      waiters.splice(i, 1)
      w.done()
    }
  }
  if (waiters.length === 0 && poller !== undefined) {
    clearInterval(poller)
    poller = undefined
  }
}

/**
 * The account a pod create will look up, when it is its namespace's `default` and that does not exist yet: a promise
 * that settles once it does, or after as long as upstream keeps asking (it retries the default account's lookup ten
 * times, 100-200 ms apart, because the service-account controller makes it just after the namespace). Undefined when
 * there is nothing to wait for: the only cost of a create whose account is known.
 */
export function defaultAccountWait(namespace: string, pod: Obj): Promise<void> | undefined {
  if (store === undefined || !isObj(pod.spec)) return undefined
  const ann = pod.metadata?.annotations
  if (isObj(ann) && Object.prototype.hasOwnProperty.call(ann, MIRROR_POD_ANNOTATION)) return undefined
  const name = str(pod.spec.serviceAccountName) || str(pod.spec.serviceAccount) || DEFAULT_ACCOUNT
  if (name !== DEFAULT_ACCOUNT || lookupAccount(namespace, DEFAULT_ACCOUNT) !== null) return undefined
  return new Promise<void>((resolve) => {
    waiters.push({ namespace, deadline: Date.now() + 9 * (100 + Math.floor(Math.random() * 100)), done: resolve })
    if (poller === undefined) {
      polledAt = store!.serviceAccountWrites()
      poller = setInterval(poll, POLL_MS)
      poller.unref?.()
    }
  })
}

// ---- the plugin ----

const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789'

/** upstream's SimpleNameGenerator: the prefix and 5 random characters. */
function generatedVolumeName(): string {
  let s = TOKEN_VOLUME_PREFIX
  for (let i = 0; i < 5; i++) s += NAME_ALPHABET[Math.floor(Math.random() * NAME_ALPHABET.length)]
  return s
}

/** The projected volume source of the token (upstream TokenVolumeSource, with this brand's root CA ConfigMap). */
export function tokenVolumeSource(): Obj {
  return {
    sources: [
      { serviceAccountToken: { expirationSeconds: TOKEN_EXPIRATION_SECONDS, path: 'token' } },
      { configMap: { name: ROOT_CA_CONFIGMAP, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
    ],
    // Set explicitly, as upstream does (its default, 0644).
    defaultMode: 420,
  }
}

function isMirrorPod(pod: Obj): boolean {
  const ann = pod.metadata?.annotations
  return isObj(ann) && Object.prototype.hasOwnProperty.call(ann, MIRROR_POD_ANNOTATION)
}

/** Whether the pod names a secret anywhere (upstream VisitPodSecretNames over all containers). */
function referencesSecrets(spec: Obj): boolean {
  if (list(spec.imagePullSecrets).length > 0) return true
  for (const c of [...list(spec.initContainers), ...list(spec.containers), ...list(spec.ephemeralContainers)]) {
    for (const e of list(c.envFrom)) if (isObj(e.secretRef)) return true
    for (const e of list(c.env)) if (isObj(e.valueFrom) && isObj(e.valueFrom.secretKeyRef)) return true
  }
  for (const v of list(spec.volumes)) {
    if (isObj(v.secret)) return true
    if (isObj(v.azureFile) && str(v.azureFile.secretName) !== '') return true
    if (isObj(v.projected) && list(v.projected.sources).some((s) => isObj(s.secret))) return true
    for (const k of ['cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'iscsi', 'storageos']) {
      if (isObj(v[k]) && isObj(v[k].secretRef) && str(v[k].secretRef.name) !== '') return true
    }
    if (isObj(v.csi) && isObj(v.csi.nodePublishSecretRef) && str(v.csi.nodePublishSecretRef.name) !== '') return true
  }
  return false
}

/** A mirror pod's refusal, or undefined (upstream's Validate for mirror pods). */
function mirrorPodError(spec: Obj, subject: string): ApiError | undefined {
  if (str(spec.serviceAccountName) !== '') return forbidden(PODS, subject, 'a mirror pod may not reference service accounts')
  if (referencesSecrets(spec)) return forbidden(PODS, subject, 'a mirror pod may not reference secrets')
  for (const v of list(spec.volumes)) {
    if (isObj(v.projected) && list(v.projected.sources).some((s) => isObj(s.serviceAccountToken))) {
      return forbidden(PODS, subject, 'a mirror pod may not use ServiceAccountToken volume projections')
    }
  }
  return undefined
}

function lookupError(namespace: string, name: string, subject: string): ApiError {
  return forbidden(PODS, subject, `error looking up service account ${namespace}/${name}: serviceaccount ${JSON.stringify(name)} not found`)
}

/** Mounts the token volume into every container and init container that has nothing mounted at the path yet. */
function mountToken(spec: Obj): void {
  const volumes: unknown[] | undefined = Array.isArray(spec.volumes) ? spec.volumes : undefined
  let volumeName = ''
  for (const v of volumes ?? []) {
    if (isObj(v) && typeof v.name === 'string' && v.name.startsWith(TOKEN_VOLUME_PREFIX)) { volumeName = v.name; break }
  }
  const hasVolume = volumeName !== ''
  if (!hasVolume) volumeName = generatedVolumeName()
  let needsVolume = false
  for (const key of ['initContainers', 'containers']) {
    for (const c of list(spec[key])) {
      const mounts: unknown[] | undefined = Array.isArray(c.volumeMounts) ? c.volumeMounts : undefined
      if (mounts !== undefined && mounts.some((m) => isObj(m) && m.mountPath === TOKEN_MOUNT_PATH)) continue
      const mount = { name: volumeName, readOnly: true, mountPath: TOKEN_MOUNT_PATH }
      if (mounts !== undefined) mounts.push(mount)
      else c.volumeMounts = [mount]
      needsVolume = true
    }
  }
  if (!hasVolume && needsVolume) {
    const volume = { name: volumeName, projected: tokenVolumeSource() }
    if (volumes !== undefined) volumes.push(volume)
    else spec.volumes = [volume]
  }
}

/**
 * The mutating half, on pod create: refuses a mirror pod that references an account or secrets; otherwise defaults
 * the account to `default`, refuses an account that does not exist, mounts the token unless the pod (first) or the
 * account says not to, and gives a pod without image pull secrets the account's. `subject` is the name a refusal
 * names. Returns the error to answer, or undefined.
 */
export function admitPodServiceAccount(namespace: string, subject: string, pod: Obj, lookup: AccountLookup): ApiError | undefined {
  const spec = pod.spec
  if (!isObj(spec)) return undefined
  if (isMirrorPod(pod)) return mirrorPodError(spec, subject)
  if (str(spec.serviceAccountName) === '') spec.serviceAccountName = DEFAULT_ACCOUNT
  // The deprecated alias mirrors the name, as the v1 form always prints it.
  spec.serviceAccount = spec.serviceAccountName
  const name: string = spec.serviceAccountName
  const sa = lookup(namespace, name)
  if (sa === null) return lookupError(namespace, name, subject)
  const automount = typeof spec.automountServiceAccountToken === 'boolean' ? spec.automountServiceAccountToken : sa.automount ?? true
  if (automount) mountToken(spec)
  if (list(spec.imagePullSecrets).length === 0 && sa.imagePullSecrets.length > 0) spec.imagePullSecrets = sa.imagePullSecrets.map((n) => ({ name: n }))
  return undefined
}

/** The secrets of the pod the account does not list, as upstream's limitSecretReferences words the first. */
function secretReferenceError(spec: Obj, saName: string, sa: AccountView): string | undefined {
  const mountable = new Set(sa.secrets)
  for (const v of list(spec.volumes)) {
    if (!isObj(v.secret)) continue
    const n = str(v.secret.secretName)
    if (!mountable.has(n)) return `volume with secret.secretName="${n}" is not allowed because service account ${saName} does not reference that secret`
  }
  for (const [key, what] of [['initContainers', 'init container'], ['containers', 'container']]) {
    for (const c of list(spec[key])) {
      const err = containerSecretError(c, what, saName, mountable)
      if (err !== undefined) return err
    }
  }
  const pull = new Set(sa.imagePullSecrets)
  const refs = list(spec.imagePullSecrets)
  for (let i = 0; i < refs.length; i++) {
    const n = str(refs[i].name)
    if (!pull.has(n)) return `imagePullSecrets[${i}].name="${n}" is not allowed because service account ${saName} does not reference that imagePullSecret`
  }
  return undefined
}

function containerSecretError(c: Obj, what: string, saName: string, mountable: Set<string>): string | undefined {
  for (const e of list(c.env)) {
    const ref = isObj(e.valueFrom) ? e.valueFrom.secretKeyRef : undefined
    if (isObj(ref) && !mountable.has(str(ref.name))) {
      return `${what} ${str(c.name)} with envVar ${str(e.name)} referencing secret.secretName="${str(ref.name)}" is not allowed because service account ${saName} does not reference that secret`
    }
  }
  for (const e of list(c.envFrom)) {
    if (isObj(e.secretRef) && !mountable.has(str(e.secretRef.name))) {
      return `${what} ${str(c.name)} with envFrom referencing secret.secretName="${str(e.secretRef.name)}" is not allowed because service account ${saName} does not reference that secret`
    }
  }
  return undefined
}

/**
 * The validating half, on pod create (after the pod's own validation): the account must be named and exist, and when
 * it enforces mountable secrets (annotation orch.io/enforce-mountable-secrets), the pod may use only the secrets and
 * image pull secrets it lists. Mirror pods were judged by the mutating half.
 */
export function validatePodServiceAccount(namespace: string, subject: string, pod: Obj, lookup: AccountLookup): ApiError | undefined {
  const spec = pod.spec
  if (!isObj(spec) || isMirrorPod(pod)) return undefined
  const name = str(spec.serviceAccountName)
  if (name === '') return forbidden(PODS, subject, `no service account specified for pod ${namespace}/${str(pod.metadata?.name)}`)
  const sa = lookup(namespace, name)
  if (sa === null) return lookupError(namespace, name, subject)
  if (!sa.enforceMountableSecrets) return undefined
  const err = secretReferenceError(spec, name, sa)
  return err === undefined ? undefined : forbidden(PODS, subject, err)
}

/**
 * pods/ephemeralcontainers updates: the pod's account must be named and exist, and when it enforces mountable secrets
 * the ephemeral containers may use only the secrets it lists. (Upstream answers a refused secret with its bare error,
 * which becomes a 500; here it is the Forbidden its other refusals are.)
 */
export function validateEphemeralServiceAccount(namespace: string, subject: string, pod: Obj, lookup: AccountLookup): ApiError | undefined {
  const spec = pod.spec
  if (!isObj(spec)) return undefined
  const name = str(spec.serviceAccountName)
  if (name === '') return forbidden(PODS, subject, `no service account specified for pod ${namespace}/${str(pod.metadata?.name)}`)
  const sa = lookup(namespace, name)
  if (sa === null) return lookupError(namespace, name, subject)
  if (!sa.enforceMountableSecrets) return undefined
  const mountable = new Set(sa.secrets)
  for (const c of list(spec.ephemeralContainers)) {
    const err = containerSecretError(c, 'ephemeral container', name, mountable)
    if (err !== undefined) return forbidden(PODS, subject, err)
  }
  return undefined
}
