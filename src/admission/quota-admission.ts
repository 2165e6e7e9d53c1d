// The ResourceQuota admission plugin's evaluation: writes of one namespace are checked in batches against its quotas, and admitted only once the quotas' new usage is stored (conditional on the version read, retried on conflicts).
import { conflict, type ApiError } from '../machinery/errors.js'
import { resourceMap } from './resource-lists.js'
import { checkRequest, usageChanged, type QuotaRequest, type QuotaState } from './resource-quota.js'

type Obj = Record<string, any>

/** What the evaluation needs of storage. */
export interface QuotaStore {
  /** The quotas of a namespace, read fresh, in name order. */
  read(namespace: string): QuotaState[]
  /**
   * Stores `next` (the quota with its new status.used) if the quota is still at `rv`: resolves true when stored, false
   * when it changed or went away meanwhile.
   */
  writeStatus(old: Obj, next: Obj, rv: number): Promise<boolean>
}

interface Waiter {
  req: QuotaRequest
  dryRun: boolean
  /** undefined while undecided (upstream's default deny), null when admitted */
  result: ApiError | null | undefined
  done: (err: ApiError | null) => void
}

/**
 * Conditional status writes tried per batch before the undecided writes are refused with the conflict: upstream tries
 * 4 times against its informer's cache; the reads here are fresh, and several front-ends may race for one quota.
 */
const ATTEMPTS = 10

const queued = new Map<string, Waiter[]>()
const running = new Set<string>()

/**
 * Checks one write against the quotas of its namespace; resolves when it is admitted (its usage is stored in every
 * quota it counts for), rejects with the refusal. Writes of one namespace are checked one batch at a time on this
 * thread, as upstream's per-namespace work queue does: a batch costs one read of the quotas and one write per changed
 * quota.
 */
export function evaluateQuota(store: QuotaStore, namespace: string, req: QuotaRequest, dryRun: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const w: Waiter = { req, dryRun, result: undefined, done: (err) => (err ? reject(err) : resolve()) }
    let list = queued.get(namespace)
    if (list === undefined) { list = []; queued.set(namespace, list) }
    list.push(w)
    if (!running.has(namespace)) void drain(store, namespace)
  })
}

async function drain(store: QuotaStore, namespace: string): Promise<void> {
  running.add(namespace)
  try {
    for (;;) {
      const batch = queued.get(namespace)
      if (batch === undefined || batch.length === 0) break
      queued.delete(namespace)
      try {
        await checkBatch(store, namespace, batch)
      } catch (err) {
        // A failure of storage: every undecided write of the batch is refused with it.
        for (const w of batch) if (w.result === undefined) w.result = err as ApiError
      }
      for (const w of batch) w.done(w.result ?? null)
    }
  } finally {
    running.delete(namespace)
  }
}

async function checkBatch(store: QuotaStore, namespace: string, batch: Waiter[]): Promise<void> {
  let quotas = store.read(namespace)
  if (quotas.length === 0) {
    for (const w of batch) w.result = null
    return
  }
  for (let attempt = 1; ; attempt++) {
    const failed = await checkQuotas(store, quotas, batch)
    if (failed.length === 0) {
      for (const w of batch) if (w.result === undefined) w.result = null
      return
    }
    if (attempt >= ATTEMPTS) {
      const err = conflict({ group: '', resource: 'resourcequotas' }, failed[failed.length - 1])
      for (const w of batch) if (w.result === undefined) w.result = err
      return
    }
    // The quotas whose write lost a race, as they are now; those deleted meanwhile drop out. The writes still
    // undecided are checked again against these only: what they use of the others is stored.
    const names = new Set(failed)
    quotas = store.read(namespace).filter((q) => names.has(q.name))
  }
}

/**
 * One pass of upstream's checkQuotas: each undecided write is checked against the running quotas (refused, admitted
 * when it changes none, or left undecided), then each changed quota is written. Returns the names of the quotas whose
 * write failed.
 */
async function checkQuotas(store: QuotaStore, original: readonly QuotaState[], batch: Waiter[]): Promise<string[]> {
  let quotas = original
  const now = Date.now()
  for (const w of batch) {
    if (w.result !== undefined) continue
    const next = checkRequest(quotas, w.req, now)
    if (!Array.isArray(next)) { w.result = next as ApiError; continue }
    if (w.dryRun || !usageChanged(quotas, next)) { w.result = null; continue }
    quotas = next
  }
  const writes: Array<Promise<boolean>> = []
  const names: string[] = []
  for (let i = 0; i < quotas.length; i++) {
    const q = quotas[i]
    if (q === original[i] || !usageChanged([original[i]], [q])) continue
    const next = { ...q.object, status: { ...(q.object.status ?? {}), used: resourceMap(q.used) } }
    writes.push(store.writeStatus(q.object, next, q.rv))
    names.push(q.name)
  }
  const stored = await Promise.all(writes)
  return names.filter((_, i) => !stored[i])
}
