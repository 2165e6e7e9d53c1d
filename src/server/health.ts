// /livez, /readyz, /healthz and their per-check paths: real checks over shared state, upstream's text format.

/** Int32 slots of the shared state array. */
export const STATE_SHUTTING_DOWN = 0
export const STATE_BOOTSTRAPPED = 1
/** The default RBAC policy is reconciled and the aggregated roles are filled. */
export const STATE_RBAC_BOOTSTRAPPED = 2
export const STATE_SLOTS = 3

/** Float64 slots of the heartbeat array: one per actor, written by the actor every 100 ms. */
export function heartbeatSlots(shards: number): { authz: number; flow: number; shard: (i: number) => number; size: number } {
  return { authz: 0, flow: 1, shard: (i) => 2 + i, size: 2 + shards }
}

export interface HealthCheck { name: string; run: () => string | null /* null = ok, else the reason */ ; livez: boolean; readyz: boolean; /** during the livez grace period this check counts as passing on /livez */ startup?: boolean }

export interface HealthResult { status: number; body: string }

function runCheck(c: HealthCheck, graceActive: boolean, endpoint: 'livez' | 'readyz' | 'healthz'): string | null {
  if (endpoint === 'livez' && graceActive && c.startup) return null
  try { return c.run() } catch (err) { return err instanceof Error ? err.message : String(err) }
}

/** The aggregate endpoint: `ok`, or the per-check lines with `[-]` for failures (reasons withheld) and 500. */
export function healthAggregate(endpoint: 'livez' | 'readyz' | 'healthz', checks: HealthCheck[], query: URLSearchParams, graceActive: boolean): HealthResult {
  const applicable = checks.filter((c) => endpoint === 'healthz' ? c.livez && c.readyz : endpoint === 'livez' ? c.livez : c.readyz)
  const excluded = new Set(query.getAll('exclude'))
  const verbose = query.has('verbose')
  const lines: string[] = []
  let failed = false
  for (const c of applicable) {
    if (excluded.has(c.name)) { lines.push(`[+]${c.name} excluded: ok`); excluded.delete(c.name); continue }
    const err = runCheck(c, graceActive, endpoint)
    if (err === null) lines.push(`[+]${c.name} ok`)
    else { failed = true; lines.push(`[-]${c.name} failed: reason withheld`) }
  }
  if (failed) {
    return { status: 500, body: `${lines.join('\n')}\n${endpoint} check failed\n` }
  }
  if (!verbose) return { status: 200, body: 'ok' }
  const warn = [...excluded].map((n) => `warn: some health checks cannot be excluded: no matches for "${n}"`)
  return { status: 200, body: `${lines.join('\n')}\n${warn.length ? warn.join('\n') + '\n' : ''}${endpoint} check passed\n` }
}

/** One check by name: `ok`, or 500 with the reason; 404 for an unknown name. */
export function healthSingle(endpoint: 'livez' | 'readyz' | 'healthz', name: string, checks: HealthCheck[], graceActive: boolean): HealthResult | null {
  const c = checks.find((x) => x.name === name && (endpoint === 'healthz' ? x.livez && x.readyz : endpoint === 'livez' ? x.livez : x.readyz))
  if (!c) return null
  const err = runCheck(c, graceActive, endpoint)
  if (err === null) return { status: 200, body: 'ok' }
  return { status: 500, body: `internal server error: ${err}\n` }
}
