// The ResourceDefinition type: everything the server knows about one resource type, declared in one file.
import type { FieldError } from '../machinery/errors.js'
import { typeTree, type TypeNode } from '../machinery/patch/schema-walk.js'
import { loadDefinitions, type SchemaNode } from './schema.js'

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection'
export type Scope = 'Namespaced' | 'Cluster'

/** A JSON object as it travels through hooks: plain data, no classes. */
export type Obj = Record<string, any>

export interface TableColumn {
  name: string
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date'
  format?: string
  description?: string
  /** 0 = always shown, 1 = only with -o wide */
  priority?: number
  /**
   * A custom resource's printer column: a `date` column is announced as type `date` (not a string of format date), and
   * a cell the path finds nothing for is null (kubectl prints `<none>`), as upstream's table convertor makes them.
   */
  printerColumn?: boolean
  /** The cell value; `now` is the time of the request (hooks read the clock only through arguments). */
  cell: (o: Obj, now: number) => unknown
}

export interface Strategy {
  /** Defaulting, run during decode on create and update. */
  default?: (o: Obj) => void
  /** Reset fields the client may not set on create (e.g. status). */
  prepareForCreate?: (o: Obj, user?: { username: string; uid: string; groups: string[]; extra?: Record<string, string[]> }) => void
  /** Carry over fields the main resource may not change (e.g. status). */
  prepareForUpdate?: (o: Obj, old: Obj) => void
  validate?: (o: Obj) => FieldError[]
  validateUpdate?: (o: Obj, old: Obj) => FieldError[]
  /** Whether a PUT without metadata.resourceVersion is allowed (upstream AllowUnconditionalUpdate). */
  allowUnconditionalUpdate?: boolean
  /** Whether a DELETE answers with the final object instead of a Success Status (upstream ReturnDeletedObject). */
  returnDeletedObject?: boolean
  /**
   * What a delete without propagationPolicy or orphanDependents does to dependents (upstream's
   * DefaultGarbageCollectionPolicy): Background unless set; batch/v1 Jobs and v1 ReplicationControllers orphan them.
   * `warning`: the Warning a delete that relied on the default gets.
   */
  defaultGarbageCollection?: { policy: 'Orphan'; warning?: string }
  /** Name rule of metadata.name: DNS-1123 subdomain (default), label, or a path segment name. */
  nameRule?: 'subdomain' | 'label' | 'path'
  /** Whether metadata.generation is tracked (bumped when anything but metadata and status changes). */
  hasGeneration?: boolean
}

export interface SubresourceStrategy {
  /** For status: take everything but status from the old object. */
  prepareForUpdate?: (o: Obj, old: Obj) => void
  validateUpdate?: (o: Obj, old: Obj) => FieldError[]
  /** Paths the status endpoint resets besides spec (upstream's per-type reset fields): an applier never owns them. */
  resetPaths?: string[][]
}

export interface ResourceDefinition {
  group: string
  version: string
  kind: string
  /** Lower-case plural, the URL segment. */
  resource: string
  singular: string
  scope: Scope
  verbs: Verb[]
  shortNames?: string[]
  categories?: string[]
  /** Supported sub-resources; status and scale are served generically. */
  subresources?: Array<'status' | 'scale'>
  /**
   * For scale: where the scale fields live. The selector at labelSelectorPath is a metav1.LabelSelector, or a label set
   * when `selectorIsSet` (a ReplicationController's spec.selector); either is answered in status.selector as its string.
   */
  scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string; selectorIsSet?: boolean }
  /** Name of the schema definition in the generated schema data (src/registry/schemas). */
  schemaRef: string
  strategy?: Strategy
  status?: SubresourceStrategy
  /** Pods only: the checks of an update through pods/ephemeralcontainers (which changes spec.ephemeralContainers only). */
  ephemeralContainers?: SubresourceStrategy
  /** CertificateSigningRequests only: the checks of an update through their approval sub-resource (status.conditions only). */
  approval?: SubresourceStrategy
  table?: TableColumn[]
  /** Field selector name → value extractor. metadata.name and metadata.namespace are always there. */
  fieldSelectors?: Record<string, (o: Obj) => string>
  /**
   * Field selectors the shard keeps a secondary index of (lists and initial watch events with an equality on one of
   * them read the index, not the whole collection), as upstream's watch cache indexes pods by spec.nodeName.
   */
  indexedFields?: string[]
  /**
   * A virtual resource: nothing is stored; its requests are answered by src/pipeline/reviews.ts (access reviews,
   * SelfSubjectReview, TokenReview). Usually `verbs: ['create']`.
   */
  virtual?: boolean
  /** Sub-resources served by a handler of their own (serviceaccounts/token), listed in discovery. */
  virtualSubresources?: VirtualSubresource[]
  /**
   * What upstream's JSON of this kind always carries, whether or not the client sent it: upstream decodes into Go
   * types whose value structs omitempty never drops and whose fields without omitempty are always written, and it
   * stores and answers what it encodes. A nested object is such a struct (`{}` at least), a string, number or boolean
   * the zero of such a field; in Go field order. Under `status`, what the status is filled with after each write.
   */
  zeroValues?: ZeroValues
  /** A type served for a CustomResourceDefinition (src/registry/custom.ts). */
  custom?: CustomInfo
  /**
   * Served over the objects of another definition (upstream's one resource in two groups or versions over one
   * storage: core v1 and events.orch.io/v1 Events, autoscaling v1 and v2 HorizontalPodAutoscalers). Nothing is stored
   * in this shape: requests run on the stored definition and are converted at their edges (src/pipeline/convert.ts).
   */
  sharedStorage?: SharedStorage
}

/** See ResourceDefinition.sharedStorage. */
export interface SharedStorage {
  /** The definition whose storage (keys, shard, watch ring, field attributes) these objects are in. */
  group: string
  resource: string
  /**
   * This shape to the stored one: a decoded (and defaulted) object of this definition in, an object of the stored
   * definition out (its apiVersion and kind are set by the caller). Also given partial objects (apply configurations).
   */
  toStored: (o: Obj) => Obj
  /** A stored object to this shape (apiVersion and kind set by the caller); must not change its argument. */
  fromStored: (o: Obj) => Obj
  /** Field selector names of this shape → the stored definition's (upstream's field label conversion). */
  fieldLabels?: Record<string, string>
  /**
   * Checks of a write through this type besides the stored type's own, on the stored shape: upstream validates the
   * internal object by the version of the request (events.orch.io/v1 Events are checked more strictly than core ones).
   */
  validate?: (o: Obj) => FieldError[]
  validateUpdate?: (o: Obj, old: Obj) => FieldError[]
}

/** What the pipeline needs of a custom resource type besides the common definition. */
export interface CustomInfo {
  /** metadata.name of the CRD. */
  crdName: string
  /** The version objects are stored in (conversion None: only apiVersion differs between versions). */
  storageVersion: string
  /** The structural schema as a type tree, apiVersion, kind and metadata (ObjectMeta) declared at its root. */
  tree: TypeNode
  /** The CRD is being deleted: no new objects. */
  terminating: boolean
  /** The version's openAPIV3Schema as written. */
  schema: SchemaNode
  /** The Warning every request of a deprecated version gets. */
  warning?: string
  /** The CRD's spec when its conversion strategy is Webhook (src/pipeline/crd-convert.ts converts other versions). */
  webhookSpec?: Record<string, any>
  /** With webhookSpec: the storage version's definition when that version is not served (not in the registry). */
  unservedStorage?: ResolvedDefinition
  /** One stored object's JSON with the schema's defaults filled in; only when the schema has defaults. */
  readDefaults?: (objectJson: string) => string
}

/** See ResourceDefinition.zeroValues. */
export interface ZeroValues { readonly [field: string]: ZeroValues | string | number | boolean }

/** ZeroValues as entries, listed once at load: a nested plan is an array, anything else the zero to write. */
export type ZeroPlan = ReadonlyArray<readonly [string, ZeroPlan | string | number | boolean]>

/** A sub-resource answered by its own handler, as discovery lists it. */
export interface VirtualSubresource { name: string; group: string; version: string; kind: string; verbs: Verb[] }

export interface ResolvedDefinition extends ResourceDefinition {
  /** `v1` or `<group>/<version>`. */
  apiVersion: string
  /** `configmaps` or `deployments.apps`: the GroupResource string of error messages. */
  groupResource: string
  /** `ConfigMap` or `Deployment.apps`: the GroupKind string of Invalid messages. */
  groupKind: string
  listKind: string
  strategy: Strategy
  /** zeroValues but status, filled in after defaulting on create and on a main-resource update. */
  zeroSpec?: ZeroPlan
  /** zeroValues' status (as `[['status', plan]]`), filled in after every write's status is settled. */
  zeroStatus?: ZeroPlan
  /** With sharedStorage: the definition the objects are stored by (linked by the registry). */
  stored?: ResolvedDefinition
}

export function defineResource(def: ResourceDefinition): ResourceDefinition {
  return def
}

function zeroPlan(z: ZeroValues): ZeroPlan {
  return Object.entries(z).map(([k, v]) => [k, typeof v === 'object' ? zeroPlan(v) : v] as const)
}

export function resolveDefinition(def: ResourceDefinition): ResolvedDefinition {
  const { status, ...rest } = def.zeroValues ?? {}
  return {
    ...def,
    zeroSpec: Object.keys(rest).length > 0 ? zeroPlan(rest) : undefined,
    zeroStatus: typeof status === 'object' ? zeroPlan({ status }) : undefined,
    apiVersion: def.group === '' ? def.version : `${def.group}/${def.version}`,
    groupResource: def.group === '' ? def.resource : `${def.resource}.${def.group}`,
    groupKind: def.group === '' ? def.kind : `${def.kind}.${def.group}`,
    listKind: `${def.kind}List`,
    strategy: def.strategy ?? {},
    stored: undefined,
  }
}

/**
 * Writes the zeros of `plan` that `o` lacks (absent or null, as upstream decodes a null into a zero): a few property
 * checks when they are all there already, so it runs on every write.
 */
export function fillZeroValues(o: Obj, plan: ZeroPlan): void {
  for (let i = 0; i < plan.length; i++) {
    const k = plan[i][0]
    const z = plan[i][1]
    const v = o[k]
    if (typeof z !== 'object') {
      if (v === undefined || v === null) o[k] = z
    } else if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      if (z.length > 0) fillZeroValues(v, z)
    } else {
      const n: Obj = {}
      o[k] = n
      if (z.length > 0) fillZeroValues(n, z)
    }
  }
}

/** The type tree of a definition: the generated schema data's, or a custom resource's own. */
export function treeOf(def: ResourceDefinition): TypeNode {
  return def.custom !== undefined ? def.custom.tree : typeTree(loadDefinitions(), def.schemaRef)
}

/** All verbs of an ordinary read-write type. */
export const ALL_VERBS: Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']

/** Hooks shared by types whose status is written through the status sub-resource. */
export const statusSplit = {
  strategy: {
    prepareForCreate: (o: Obj) => { delete o.status },
    prepareForUpdate: (o: Obj, old: Obj) => { if (old.status === undefined) delete o.status; else o.status = old.status },
  },
  status: {
    prepareForUpdate: (o: Obj, old: Obj) => {
      for (const k of Object.keys(o)) if (k !== 'status' && k !== 'metadata' && k !== 'apiVersion' && k !== 'kind') delete o[k]
      for (const k of Object.keys(old)) if (k !== 'status' && k !== 'metadata' && k !== 'apiVersion' && k !== 'kind') o[k] = old[k]
    },
  },
}

/** The strategy of a spec/status type whose spec changes bump metadata.generation (workloads, jobs, policies). */
export function generationStrategy(hooks: Strategy): Strategy {
  return { ...statusSplit.strategy, allowUnconditionalUpdate: true, nameRule: 'subdomain', hasGeneration: true, ...hooks }
}
