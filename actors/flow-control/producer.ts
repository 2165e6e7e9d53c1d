// The APF config producer (creating, restoring and auto-updating the mandatory and suggested objects) and the
// FlowSchema status the config controller keeps (the Dangling condition).
import type { Obj } from '../../src/registry/define.js'
import {
  AUTO_UPDATE_ANNOTATION, PRIORITY_LEVEL_NAME_EXEMPT,
  cloneJSON, mandatoryFlowSchemas, mandatoryPriorityLevels, suggestedFlowSchemas, suggestedPriorityLevels,
} from '../../src/registry/resources/flowcontrol.apiserver.orch.io/bootstrap.js'
import { specEqualish } from '../../src/registry/resources/flowcontrol.apiserver.orch.io/validation.js'
import { isFlowConfig, isObj, str, type FlowConfig } from './config.js'

// ---------------------------------------------------------------- config producer (auto-update annotation)

/** Go strconv.ParseBool. */
export function parseGoBool(v: unknown): boolean | undefined {
  switch (v) {
    case '1': case 't': case 'T': case 'true': case 'TRUE': case 'True': return true
    case '0': case 'f': case 'F': case 'false': case 'FALSE': case 'False': return false
    default: return undefined
  }
}

function annotationOf(o: Obj): string | undefined {
  const a = o.metadata?.annotations
  return isObj(a) && typeof a[AUTO_UPDATE_ANNOTATION] === 'string' ? a[AUTO_UPDATE_ANNOTATION] : undefined
}

/** The annotation if it parses; otherwise auto-update only objects the operator has not changed (generation 1). */
export function shouldUpdateSpec(o: Obj): boolean {
  const parsed = parseGoBool(annotationOf(o))
  if (parsed !== undefined) return parsed
  return o.metadata?.generation === 1
}

function bootstrapSpecEqualish(kind: 'FlowSchema' | 'PriorityLevelConfiguration', bootstrap: Obj, actual: Obj): boolean {
  if (kind === 'PriorityLevelConfiguration' && bootstrap.metadata.name === PRIORITY_LEVEL_NAME_EXEMPT) {
    // Operators may tune the exempt level's nominalConcurrencyShares and lendablePercent.
    if (!isObj(actual.spec?.exempt)) return false
    const expected = cloneJSON(bootstrap.spec) as Obj
    expected.exempt.nominalConcurrencyShares = actual.spec.exempt.nominalConcurrencyShares
    expected.exempt.lendablePercent = actual.spec.exempt.lendablePercent
    return specEqualish(expected, actual.spec)
  }
  return specEqualish(bootstrap.spec, actual.spec)
}

/**
 * Upstream ensurer ReviseIfNeeded: the updated object when the spec must be stomped back to the bootstrap value
 * and/or the auto-update annotation must be (re)written; undefined when nothing is to be done.
 */
export function reviseIfNeeded(kind: 'FlowSchema' | 'PriorityLevelConfiguration', current: Obj, bootstrap: Obj, mandatory: boolean): Obj | undefined {
  const autoUpdate = mandatory || shouldUpdateSpec(current)
  const updateAnnotation = parseGoBool(annotationOf(current)) !== autoUpdate
  const specChanged = autoUpdate && !bootstrapSpecEqualish(kind, bootstrap, current)
  if (!updateAnnotation && !specChanged) return undefined
  const revised = cloneJSON(current)
  if (specChanged) revised.spec = cloneJSON(bootstrap.spec)
  if (updateAnnotation) {
    revised.metadata ??= {}
    revised.metadata.annotations = { ...(isObj(revised.metadata.annotations) ? revised.metadata.annotations : {}), [AUTO_UPDATE_ANNOTATION]: String(autoUpdate) }
  }
  return revised
}

export interface ProducerPlan {
  /** Bootstrap objects to create (with apiVersion and kind). */
  create: Obj[]
  /** Existing objects revised (spec and/or annotation), to be written with an update. */
  update: Obj[]
  /** Auto-updated objects that are no longer bootstrap objects. */
  delete: Array<{ kind: 'FlowSchema' | 'PriorityLevelConfiguration'; name: string }>
}

/**
 * One pass of the config producer: ensure suggested objects (levels, then schemas), ensure mandatory ones, then
 * delete auto-updated objects that are no longer bootstrap objects (schemas, then levels).
 */
export function planConfigProducer(flowSchemas: readonly Obj[], priorityLevels: readonly Obj[]): ProducerPlan {
  const plan: ProducerPlan = { create: [], update: [], delete: [] }
  const byName = (list: readonly Obj[]): Map<string, Obj> => new Map(list.map((o) => [str(o.metadata?.name), o]))
  const fsByName = byName(flowSchemas)
  const plByName = byName(priorityLevels)
  const ensure = (kind: 'FlowSchema' | 'PriorityLevelConfiguration', existing: Map<string, Obj>, bootstrap: readonly Obj[], mandatory: boolean): void => {
    for (const b of bootstrap) {
      const current = existing.get(b.metadata.name)
      if (current === undefined) { plan.create.push(cloneJSON(b)); continue }
      const revised = reviseIfNeeded(kind, current, b, mandatory)
      if (revised !== undefined) plan.update.push(revised)
    }
  }
  ensure('PriorityLevelConfiguration', plByName, suggestedPriorityLevels, false)
  ensure('FlowSchema', fsByName, suggestedFlowSchemas, false)
  ensure('PriorityLevelConfiguration', plByName, mandatoryPriorityLevels, true)
  ensure('FlowSchema', fsByName, mandatoryFlowSchemas, true)
  const unwanted = (kind: 'FlowSchema' | 'PriorityLevelConfiguration', list: readonly Obj[], bootstrap: readonly Obj[]): void => {
    const names = new Set(bootstrap.map((b) => b.metadata.name as string))
    for (const o of list) {
      const name = str(o.metadata?.name)
      if (names.has(name)) continue
      if (parseGoBool(annotationOf(o)) === true) plan.delete.push({ kind, name })
    }
  }
  unwanted('FlowSchema', flowSchemas, [...suggestedFlowSchemas, ...mandatoryFlowSchemas])
  unwanted('PriorityLevelConfiguration', priorityLevels, [...suggestedPriorityLevels, ...mandatoryPriorityLevels])
  return plan
}

// ---------------------------------------------------------------- FlowSchema status

export interface Condition { type: string; status: string; lastTransitionTime?: string; reason?: string; message?: string }

function plNameSet(pls: readonly Obj[] | ReadonlySet<string> | FlowConfig): ReadonlySet<string> {
  if (isFlowConfig(pls)) return new Set([...pls.priorityLevels.values()].filter((l) => !l.imagined).map((l) => l.name))
  if (Array.isArray(pls)) return new Set((pls as readonly Obj[]).map((p) => str(p.metadata?.name)))
  return pls as ReadonlySet<string>
}

function rfc3339(now: string | Date | undefined): string {
  const d = now === undefined ? new Date() : typeof now === 'string' ? new Date(now) : now
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z')
}

/**
 * The Dangling condition the config consumer keeps on a FlowSchema, and whether it differs from the one the
 * object carries (status, reason or message). lastTransitionTime is `now` for a change, else the old value.
 */
export function danglingCondition(fs: Obj, pls: readonly Obj[] | ReadonlySet<string> | FlowConfig, now?: string | Date): { condition: Condition; changed: boolean } {
  const plName = str(fs.spec?.priorityLevelConfiguration?.name)
  const dangling = !plNameSet(pls).has(plName)
  const status = dangling ? 'True' : 'False'
  const reason = dangling ? 'NotFound' : 'Found'
  const message = dangling
    ? `This FlowSchema references the PriorityLevelConfiguration object named ${JSON.stringify(plName)} but there is no such object`
    : `This FlowSchema references the PriorityLevelConfiguration object named ${JSON.stringify(plName)} and it exists`
  const old = (Array.isArray(fs.status?.conditions) ? fs.status.conditions as Obj[] : []).find((c) => isObj(c) && c.type === 'Dangling')
  if (old !== undefined && old.status === status && old.reason === reason && old.message === message) {
    return { condition: { type: 'Dangling', status, lastTransitionTime: old.lastTransitionTime, reason, message }, changed: false }
  }
  return { condition: { type: 'Dangling', status, lastTransitionTime: rfc3339(now), reason, message }, changed: true }
}

/** The FlowSchema's status.conditions with the Dangling condition brought up to date (others kept). */
export function statusConditions(fs: Obj, pls: readonly Obj[] | ReadonlySet<string> | FlowConfig, now?: string | Date): { conditions: Condition[]; changed: boolean } {
  const { condition, changed } = danglingCondition(fs, pls, now)
  const existing = Array.isArray(fs.status?.conditions) ? (fs.status.conditions as Obj[]).filter(isObj) : []
  const conditions: Condition[] = []
  let placed = false
  for (const c of existing) {
    if (c.type === 'Dangling') { if (!placed) { conditions.push(condition); placed = true } continue }
    conditions.push(c as Condition)
  }
  if (!placed) conditions.push(condition)
  return { conditions, changed }
}
